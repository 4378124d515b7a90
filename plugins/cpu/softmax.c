/*
 * plugins/cpu/softmax.c - softmax and log_softmax.
 *
 * Both work row by row: a row is the elements along the softmax dim.  Rows
 * are independent, so they are spread over the pool.  A row that is
 * contiguous in the input and of float32 or float64 is read in place; any
 * other row (strided, or float16/bfloat16, which compute in float32) is
 * first gathered into a buffer, computed there and written out converted.
 * Rows that are strided but neighbours in memory (softmax along a dimension
 * followed by contiguous ones) are computed in blocks of columns instead
 * (softmax_cols.c).
 *
 * The row kernels are plain loops over arrays that the compiler vectorises.
 * float32 uses vmath.h's exp, which is branch-free so that it vectorises
 * too; float64 uses the C library's exp.
 */
#include <math.h>
#include <stdlib.h>

#include "softmax.h"

#define LANES 16
#define BLOCK CPU_ROW_BLOCK
/* The longest float32 row (float64: half) streamed out through a buffer on
 * the stack. */
#define STREAM_ROW 8192

/* ------------------------------------------------------------------------ */
/* Row kernels                                                              */
/* ------------------------------------------------------------------------ */

/* Each is defined for float (float32, float16, bfloat16) and double. */

/* The largest element, ignoring NaN: a NaN in the row still makes the
 * softmax NaN, through its own exp. */
#define DEFINE_ROW_MAX(name, T)                                                          \
  static CPU_CLONES T name(const T *x, int64_t n) {                                      \
    T m[LANES];                                                                          \
    for (int j = 0; j < LANES; j++) m[j] = -INFINITY;                                    \
    int64_t i = 0;                                                                       \
    for (; i + LANES <= n; i += LANES)                                                   \
      for (int j = 0; j < LANES; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];          \
    for (int j = 0; i < n; i++, j++) m[j] = x[i] > m[j] ? x[i] : m[j];                    \
    T r = m[0];                                                                          \
    for (int j = 1; j < LANES; j++) r = m[j] > r ? m[j] : r;                             \
    return r;                                                                            \
  }

/* y = e^(x - m); y may be x.  (Kept apart from the sum, which the
 * compiler then keeps in registers.) */
#define DEFINE_EXP_MAP(name, T, EXP)                                                     \
  static CPU_CLONES CONTRACT void name(T *y, const T *x, int64_t n, T m) {               \
    for (int64_t i = 0; i < n; i++) y[i] = EXP(x[i] - m);                                \
  }

/* y = x * s */
#define DEFINE_SCALE(name, T)                                                            \
  static CPU_CLONES void name(T *y, const T *x, int64_t n, T s) {                        \
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;                                     \
  }

/* y = (x - m) - s; subtracting the maximum first keeps the result exact
 * where x is near it. */
#define DEFINE_LOG_SUB(name, T)                                                          \
  static CPU_CLONES void name(T *y, const T *x, int64_t n, T m, T s) {                   \
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - s;                               \
  }


DEFINE_ROW_MAX(row_max_f32, float)
DEFINE_ROW_MAX(row_max_f64, double)
DEFINE_EXP_MAP(exp_map_f32, float, exp_f32)
DEFINE_EXP_MAP(exp_map_f64, double, exp)
DEFINE_SCALE(scale_f32, float)
DEFINE_SCALE(scale_f64, double)
DEFINE_LOG_SUB(log_sub_f32, float)
DEFINE_LOG_SUB(log_sub_f64, double)


/* Sum of e^(x - m); y (which may be x) receives the terms when it is not
 * NULL.  Blocks are summed in lanes and added in double.  With ahead (the
 * next row), each block of it is prefetched as the block of x is computed,
 * so that reading the next row overlaps this one's exponentials. */
static double exp_total_f32(float *y, const float *x, int64_t n, float m, const float *ahead) {
  float tmp[BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t k = n - i < BLOCK ? n - i : BLOCK;
    float *e = y ? y + i : tmp;
    if (ahead) cpu_prefetch(ahead + i, k * (int64_t)sizeof *x);
    exp_map_f32(e, x + i, k, m);
    s += cpu_row_sum_f32(e, k, false, 0, 0);
  }
  return s;
}

static double exp_total_f64(double *y, const double *x, int64_t n, double m,
                            const double *ahead) {
  double tmp[BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t k = n - i < BLOCK ? n - i : BLOCK;
    double *e = y ? y + i : tmp;
    if (ahead) cpu_prefetch(ahead + i, k * (int64_t)sizeof *x);
    exp_map_f64(e, x + i, k, m);
    s += cpu_row_sum_f64(e, k, false, 0, 0);
  }
  return s;
}

/* softmax or log_softmax of the row x into y (y may be x).  With tmp (a
 * buffer of n elements, n <= STREAM_ROW), the result is computed there
 * and streamed out to y.  ahead: the next row (see exp_total_f32), or NULL. */
static void softmax_row_f32(float *y, const float *x, int64_t n, bool take_log, float *tmp,
                            const float *ahead) {
  float m = row_max_f32(x, n);
  float *r = tmp ? tmp : y;
  if (take_log) {
    float s = (float)log(exp_total_f32(NULL, x, n, m, ahead));
    log_sub_f32(r, x, n, m, s);
  } else {
    double s = exp_total_f32(r, x, n, m, ahead);
    scale_f32(r, r, n, (float)(1.0 / s));
  }
  if (tmp) cpu_stream_copy(y, tmp, (size_t)n * sizeof *y);
}

static void softmax_row_f64(double *y, const double *x, int64_t n, bool take_log, double *tmp,
                            const double *ahead) {
  double m = row_max_f64(x, n);
  double *r = tmp ? tmp : y;
  if (take_log) {
    log_sub_f64(r, x, n, m, log(exp_total_f64(NULL, x, n, m, ahead)));
  } else {
    double s = exp_total_f64(r, x, n, m, ahead);
    scale_f64(r, r, n, 1.0 / s);
  }
  if (tmp) cpu_stream_copy(y, tmp, (size_t)n * sizeof *y);
}
/* ------------------------------------------------------------------------ */
/* softmax and log_softmax                                                  */
/* ------------------------------------------------------------------------ */


/*
 * Copies rows [r0, r0 + w) into buf, one after another, as float (double
 * for float64).  The rows are read side by side, element l of each in
 * turn: rows that are neighbours in memory, as along dim 0 of a matrix,
 * are then read a cache line at a time rather than an element per line.
 */
static CPU_CLONES void gather_rows(const softmax_job *j, int64_t r0, int w, void *buf) {
  int64_t n = j->len, st = j->stride;
  const char *src[ROWS];
  for (int k = 0; k < w; k++) src[k] = row_src(j, r0 + k);
  if (w == 1) {
    if (j->dt == BP_FLOAT64)
      cpu_gather_f64(buf, src[0], st, n);
    else
      cpu_gather_f32(buf, src[0], st, n, j->dt);
    return;
  }
  float *f = buf;
  double *g = buf;
  for (int64_t l = 0; l < n; l++) {
    switch (j->dt) {
      case BP_FLOAT32:
        for (int k = 0; k < w; k++) f[k * n + l] = *(const float *)(src[k] + l * st);
        break;
      case BP_FLOAT64:
        for (int k = 0; k < w; k++) g[k * n + l] = *(const double *)(src[k] + l * st);
        break;
      case BP_FLOAT16:
        for (int k = 0; k < w; k++)
          f[k * n + l] = bp_aux_f16_to_f32(*(const uint16_t *)(src[k] + l * st));
        break;
      default:
        for (int k = 0; k < w; k++)
          f[k * n + l] = bp_aux_bf16_to_f32(*(const uint16_t *)(src[k] + l * st));
        break;
    }
  }
}

/* Writes the rows in buf to the output, the reverse of gather_rows. */
static CPU_CLONES void scatter_rows(const softmax_job *j, int64_t r0, int w,
                                    const void *buf) {
  int64_t n = j->len, st = j->inner * j->isz;
  char *dst[ROWS];
  for (int k = 0; k < w; k++) dst[k] = row_dst(j, r0 + k);
  if (w == 1) {
    if (j->dt == BP_FLOAT64)
      cpu_scatter_f64(dst[0], st, buf, n);
    else
      cpu_scatter_f32(dst[0], st, buf, n, j->dt);
    return;
  }
  const float *f = buf;
  const double *g = buf;
  for (int64_t l = 0; l < n; l++) {
    switch (j->dt) {
      case BP_FLOAT32:
        for (int k = 0; k < w; k++) *(float *)(dst[k] + l * st) = f[k * n + l];
        break;
      case BP_FLOAT64:
        for (int k = 0; k < w; k++) *(double *)(dst[k] + l * st) = g[k * n + l];
        break;
      case BP_FLOAT16:
        for (int k = 0; k < w; k++)
          *(uint16_t *)(dst[k] + l * st) = bp_aux_f32_to_f16(f[k * n + l]);
        break;
      default:
        for (int k = 0; k < w; k++)
          *(uint16_t *)(dst[k] + l * st) = bp_aux_f32_to_bf16(f[k * n + l]);
        break;
    }
  }
}

static void softmax_rows(void *ctx, int64_t begin, int64_t end) {
  softmax_job *j = ctx;
  int64_t n = j->len;
  bool f64 = j->dt == BP_FLOAT64, contiguous = j->stride == j->isz;
  /* float32 and float64 rows contiguous in both input and output are
   * computed in place; the others go through a buffer. */
  bool direct = contiguous && j->inner == 1 && (f64 || j->dt == BP_FLOAT32);
  int64_t at_once = contiguous ? 1 : ROWS;
  void *buf = NULL;
  if (!direct && !(buf = malloc((size_t)(n * at_once) * 8))) {
    atomic_store(&j->failed, true);
    return;
  }
  /* Rows streamed out are computed in tmp first (see stream.c). */
  _Alignas(64) char tmp[STREAM_ROW * 4];
  bool stream = direct && j->stream && n * j->isz <= (int64_t)sizeof tmp;
  for (int64_t r = begin; r < end; r += at_once) {
    if (direct) {
      const void *ahead = r + 1 < end ? row_src(j, r + 1) : NULL;
      if (f64)
        softmax_row_f64((double *)row_dst(j, r), (const double *)row_src(j, r), n, j->log,
                        stream ? (double *)tmp : NULL, ahead);
      else
        softmax_row_f32((float *)row_dst(j, r), (const float *)row_src(j, r), n, j->log,
                        stream ? (float *)tmp : NULL, ahead);
      continue;
    }
    int w = (int)(end - r < at_once ? end - r : at_once);
    gather_rows(j, r, w, buf);
    for (int k = 0; k < w; k++) {
      if (f64)
        softmax_row_f64((double *)buf + k * n, (double *)buf + k * n, n, j->log, NULL, NULL);
      else
        softmax_row_f32((float *)buf + k * n, (float *)buf + k * n, n, j->log, NULL, NULL);
    }
    scatter_rows(j, r, w, buf);
  }
  free(buf);
  if (stream) cpu_stream_end();
}

/* Whether the dimensions after dim are one contiguous run of the input. */
static bool inner_contiguous(const bp_tensor_view *a, int32_t dim) {
  int64_t expect = 1;
  for (int32_t d = a->ndim - 1; d > dim; d--) {
    if (a->sizes[d] != 1 && a->strides[d] != expect) return false;
    expect *= a->sizes[d];
  }
  return true;
}

static bp_status softmax_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = cpu_host->tensor_view(out);
  if (a->numel == 0) return BP_OK;
  softmax_job j;
  memset(&j, 0, sizeof j);
  j.log = (intptr_t)ctx->user_data != 0;
  j.dt = a->dtype;
  j.isz = a->itemsize;
  j.in = a->data;
  j.out = o->data;
  int64_t d_arg = args[1].u.i;
  int32_t dim = a->ndim == 0 ? -1 : (int32_t)(d_arg < 0 ? d_arg + a->ndim : d_arg);
  j.len = 1;
  j.stride = j.isz;
  j.inner = 1;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == dim) {
      j.len = a->sizes[d];
      j.stride = a->strides[d] * j.isz;
      continue;
    }
    if (d > dim) j.inner *= a->sizes[d];
    j.sizes[j.ndim] = a->sizes[d];
    j.strides[j.ndim] = a->strides[d] * j.isz;
    j.ndim++;
  }
  atomic_init(&j.failed, false);
  /* log_softmax streams its large results; softmax does not: its rows
   * went out slower so (0.5-0.7 against 0.7-0.8 of the triad's bandwidth,
   * 4096 x 4096 float32 on 2 threads of a Zen 4), while log_softmax's went
   * faster (0.57-0.62 against 0.43-0.52 on 1 thread). */
  j.stream = j.log && cpu_stream_wanted(o->numel * j.isz);
  int64_t rows = a->numel / j.len;
  int64_t csz = j.dt == BP_FLOAT64 ? 8 : 4;
  if (j.inner > 1 && inner_contiguous(a, dim) &&
      j.len * (j.inner < BUF_COLS ? j.inner : BUF_COLS) * csz <= BUF_MAX) {
    /* Columns stream both softmax and log_softmax: their result rows are
     * runs of at most BUF_COLS elements far apart, which a store that
     * reads each line first pays for (along dim 0 of 4096 x 4096 float32
     * on 2 threads of a Zen 4, medians of 4 runs: softmax 0.46 of the
     * triad's bandwidth streamed against 0.42 not, log_softmax 0.50
     * against 0.44). */
    j.stream = cpu_stream_wanted(o->numel * j.isz);
    int64_t blocks = (j.inner + BUF_COLS - 1) / BUF_COLS;
    int64_t per = j.len * (j.inner < BUF_COLS ? j.inner : BUF_COLS);
    cpu_parallel_for(rows / j.inner * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per,
                     cpu_softmax_cols_buf, &j);
  } else if (j.inner > 1 && inner_contiguous(a, dim)) {
    int64_t blocks = (j.inner + COLS - 1) / COLS, per = j.len * (j.inner < COLS ? j.inner : COLS);
    cpu_parallel_for(rows / j.inner * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per,
                     cpu_softmax_cols, &j);
  } else {
    cpu_parallel_for(rows, j.len >= CPU_GRAIN ? 1 : CPU_GRAIN / j.len, softmax_rows, &j);
  }
  if (atomic_load(&j.failed))
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(softmax_kernel, softmax_impl)

bp_status cpu_register_softmax(bp_library *lib) {
  bp_status st = CPU_IMPL_STRUCTURED(lib, "softmax", softmax_kernel, (void *)0);
  if (!st) st = CPU_IMPL_STRUCTURED(lib, "log_softmax", softmax_kernel, (void *)1);
  return st;
}
