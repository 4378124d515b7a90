/*
 * plugins/cpu/nn.c - softmax, log_softmax, layer_norm.
 *
 * Each op works row by row: a row is the elements along the softmax dim,
 * or the trailing normalized_shape elements of layer_norm.  Rows are
 * independent, so they are spread over the pool.  A row that is contiguous
 * in the input and of float32 or float64 is read in place; any other row
 * (strided, or float16/bfloat16, which compute in float32) is first
 * gathered into a buffer, computed there and written out converted.
 *
 * Rows that are strided but neighbours in memory are computed in blocks
 * instead, with the dimension along which they are neighbours as the
 * vector: softmax along a dimension followed by contiguous ones
 * (softmax_cols_buf, or softmax_cols for very long columns), and
 * layer_norm of a transposed input (norm_cols).  Each block row is then a
 * contiguous read.
 *
 * The row kernels are plain loops over arrays that the compiler vectorises.
 * float32 softmax uses vmath.h's exp, which is branch-free so that it
 * vectorises too; float64 uses the C library's exp.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu.h"
#include "vmath.h"

#define LANES 16
#define BLOCK 1024 /* elements summed in float lanes per double addition */

/* ------------------------------------------------------------------------ */
/* exp for float32, vectorisable                                            */
/* ------------------------------------------------------------------------ */

/* softmax's exponent x - max is never positive, so the cheaper form of
 * vmath.h's exp does (subnormal results are 0, within the tolerance). */
#define exp_f32 vm_exp_neg_f32

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

/*
 * Sum of x - c, or of (x - c)^2, over n <= BLOCK elements, in lanes, where
 * c is given as c + c_lo in two parts.  Summing deviations rather than
 * values keeps the error proportional to the deviations: for a row whose
 * values lie close together far from 0, a float sum of the values (or a
 * float mean) loses much of what tells them apart, while x - c is exact
 * there and c_lo corrects the rounding of c.
 */
#define DEFINE_SUM(name, T)                                                              \
  static CPU_CLONES T name(const T *x, int64_t n, bool squares, T c, T c_lo) {           \
    T acc[LANES] = {0};                                                                  \
    int64_t i = 0;                                                                       \
    if (squares) {                                                                       \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) {                                                \
          T d = (x[i + j] - c) - c_lo;                                                   \
          acc[j] += d * d;                                                               \
        }                                                                                \
      for (int j = 0; i < n; i++, j++) acc[j] += ((x[i] - c) - c_lo) * ((x[i] - c) - c_lo); \
    } else {                                                                             \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) acc[j] += x[i + j] - c;                          \
      for (int j = 0; i < n; i++, j++) acc[j] += x[i] - c;                               \
    }                                                                                    \
    for (int w = LANES / 2; w > 0; w /= 2)                                               \
      for (int j = 0; j < w; j++) acc[j] += acc[j + w];                                  \
    return acc[0];                                                                       \
  }

/* y = (x - mean) * rstd * w + b, with w and b each optional; the mean in
 * two parts as above. */
#define DEFINE_NORMALIZE(name, T)                                                        \
  static CPU_CLONES void name(T *y, const T *x, int64_t n, T mean, T mean_lo, T rstd,    \
                              const T *w, const T *b) {                                  \
    if (w && b)                                                                          \
      for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) - mean_lo) * rstd * w[i] + b[i]; \
    else if (w)                                                                          \
      for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) - mean_lo) * rstd * w[i];    \
    else if (b)                                                                          \
      for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) - mean_lo) * rstd + b[i];    \
    else                                                                                 \
      for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) - mean_lo) * rstd;           \
  }

DEFINE_ROW_MAX(row_max_f32, float)
DEFINE_ROW_MAX(row_max_f64, double)
DEFINE_EXP_MAP(exp_map_f32, float, exp_f32)
DEFINE_EXP_MAP(exp_map_f64, double, exp)
DEFINE_SCALE(scale_f32, float)
DEFINE_SCALE(scale_f64, double)
DEFINE_LOG_SUB(log_sub_f32, float)
DEFINE_LOG_SUB(log_sub_f64, double)
DEFINE_SUM(sum_f32, float)
DEFINE_SUM(sum_f64, double)
DEFINE_NORMALIZE(normalize_f32, float)
DEFINE_NORMALIZE(normalize_f64, double)

/*
 * Column kernels: softmax along a dimension that is not the innermost,
 * computed for a block of neighbouring columns at once, one row (a
 * contiguous slice x of the block) at a time.
 */
#define DEFINE_COLS(T, sfx, EXP)                                                         \
  static CPU_CLONES void cols_max_##sfx(T *m, const T *x, int64_t w) {                   \
    for (int64_t j = 0; j < w; j++) m[j] = x[j] > m[j] ? x[j] : m[j];                    \
  }                                                                                      \
  static CPU_CLONES CONTRACT void cols_exp_sum_##sfx(T *s, const T *x, const T *m,       \
                                                     int64_t w) {                        \
    for (int64_t j = 0; j < w; j++) s[j] += EXP(x[j] - m[j]);                            \
  }                                                                                      \
  static CPU_CLONES CONTRACT void cols_softmax_##sfx(T *y, const T *x, const T *m,       \
                                                     const T *inv, int64_t w) {          \
    for (int64_t j = 0; j < w; j++) y[j] = EXP(x[j] - m[j]) * inv[j];                    \
  }                                                                                      \
  static CPU_CLONES void cols_log_softmax_##sfx(T *y, const T *x, const T *m, const T *lse, \
                                                int64_t w) {                             \
    for (int64_t j = 0; j < w; j++) y[j] = (x[j] - m[j]) - lse[j];                       \
  }

DEFINE_COLS(float, f32, exp_f32)
DEFINE_COLS(double, f64, exp)

/* Sum of e^(x - m); y (which may be x) receives the terms when it is not
 * NULL.  Blocks are summed in lanes and added in double. */
static double exp_total_f32(float *y, const float *x, int64_t n, float m) {
  float tmp[BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t k = n - i < BLOCK ? n - i : BLOCK;
    float *e = y ? y + i : tmp;
    exp_map_f32(e, x + i, k, m);
    s += sum_f32(e, k, false, 0, 0);
  }
  return s;
}

static double exp_total_f64(double *y, const double *x, int64_t n, double m) {
  double tmp[BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK) {
    int64_t k = n - i < BLOCK ? n - i : BLOCK;
    double *e = y ? y + i : tmp;
    exp_map_f64(e, x + i, k, m);
    s += sum_f64(e, k, false, 0, 0);
  }
  return s;
}

static double total_f32(const float *x, int64_t n, bool squares, float c, float c_lo) {
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK)
    s += sum_f32(x + i, n - i < BLOCK ? n - i : BLOCK, squares, c, c_lo);
  return s;
}

static double total_f64(const double *x, int64_t n, bool squares, double c) {
  double s = 0;
  for (int64_t i = 0; i < n; i += BLOCK)
    s += sum_f64(x + i, n - i < BLOCK ? n - i : BLOCK, squares, c, 0);
  return s;
}

/* softmax or log_softmax of the row x into y (y may be x). */
static void softmax_row_f32(float *y, const float *x, int64_t n, bool take_log) {
  float m = row_max_f32(x, n);
  if (take_log) {
    float s = (float)log(exp_total_f32(NULL, x, n, m));
    log_sub_f32(y, x, n, m, s);
  } else {
    double s = exp_total_f32(y, x, n, m);
    scale_f32(y, y, n, (float)(1.0 / s));
  }
}

static void softmax_row_f64(double *y, const double *x, int64_t n, bool take_log) {
  double m = row_max_f64(x, n);
  if (take_log) {
    log_sub_f64(y, x, n, m, log(exp_total_f64(NULL, x, n, m)));
  } else {
    double s = exp_total_f64(y, x, n, m);
    scale_f64(y, y, n, 1.0 / s);
  }
}

/* ------------------------------------------------------------------------ */
/* Gathering and scattering rows                                            */
/* ------------------------------------------------------------------------ */

/* Reads n elements of dtype dt (stride in bytes) as floats. */
static CPU_CLONES void gather_f32(float *dst, const char *src, int64_t stride, int64_t n,
                                  int32_t dt) {
  switch (dt) {
    case BP_FLOAT32:
      for (int64_t i = 0; i < n; i++) dst[i] = *(const float *)(src + i * stride);
      break;
    case BP_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        dst[i] = bp_aux_f16_to_f32(*(const uint16_t *)(src + i * stride));
      break;
    default:
      for (int64_t i = 0; i < n; i++)
        dst[i] = bp_aux_bf16_to_f32(*(const uint16_t *)(src + i * stride));
      break;
  }
}

/* Writes n floats as dtype dt (stride in bytes), rounding to nearest even. */
static CPU_CLONES void scatter_f32(char *dst, int64_t stride, const float *src, int64_t n,
                                   int32_t dt) {
  switch (dt) {
    case BP_FLOAT32:
      for (int64_t i = 0; i < n; i++) *(float *)(dst + i * stride) = src[i];
      break;
    case BP_FLOAT16:
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = bp_aux_f32_to_f16(src[i]);
      break;
    default:
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = bp_aux_f32_to_bf16(src[i]);
      break;
  }
}

static void gather_f64(double *dst, const char *src, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = *(const double *)(src + i * stride);
}

static void scatter_f64(char *dst, int64_t stride, const double *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) *(double *)(dst + i * stride) = src[i];
}

/* ------------------------------------------------------------------------ */
/* softmax and log_softmax                                                  */
/* ------------------------------------------------------------------------ */

typedef struct softmax_job {
  bool log;
  int32_t dt;
  int64_t isz;
  const char *in;
  char *out;
  int32_t ndim;           /* the other dimensions, outermost first */
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM]; /* input, in bytes */
  int64_t len, stride;    /* the softmax dimension: length, input stride */
  int64_t inner;          /* elements after it, the output's stride along it */
  atomic_bool failed;
} softmax_job;

/* Rows of a strided softmax dimension gathered and computed together. */
#define ROWS 16

static const char *row_src(const softmax_job *j, int64_t r) {
  const char *src = j->in;
  for (int32_t d = j->ndim - 1; d >= 0; d--) {
    src += r % j->sizes[d] * j->strides[d];
    r /= j->sizes[d];
  }
  return src;
}

/* Row r is (outer o, inner i): its output starts at element o*len*inner + i
 * and steps by inner. */
static char *row_dst(const softmax_job *j, int64_t r) {
  return j->out + (r / j->inner * j->len * j->inner + r % j->inner) * j->isz;
}

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
      gather_f64(buf, src[0], st, n);
    else
      gather_f32(buf, src[0], st, n, j->dt);
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
      scatter_f64(dst[0], st, buf, n);
    else
      scatter_f32(dst[0], st, buf, n, j->dt);
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
        for (int k = 0; k < w; k++) *(uint16_t *)(dst[k] + l * st) = bp_aux_f32_to_f16(f[k * n + l]);
        break;
      default:
        for (int k = 0; k < w; k++) *(uint16_t *)(dst[k] + l * st) = bp_aux_f32_to_bf16(f[k * n + l]);
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
  for (int64_t r = begin; r < end; r += at_once) {
    if (direct) {
      if (f64)
        softmax_row_f64((double *)row_dst(j, r), (const double *)row_src(j, r), n, j->log);
      else
        softmax_row_f32((float *)row_dst(j, r), (const float *)row_src(j, r), n, j->log);
      continue;
    }
    int w = (int)(end - r < at_once ? end - r : at_once);
    gather_rows(j, r, w, buf);
    for (int k = 0; k < w; k++) {
      if (f64)
        softmax_row_f64((double *)buf + k * n, (double *)buf + k * n, n, j->log);
      else
        softmax_row_f32((float *)buf + k * n, (float *)buf + k * n, n, j->log);
    }
    scatter_rows(j, r, w, buf);
  }
  free(buf);
}

/*
 * Columns of a softmax along a dimension with contiguous elements after it
 * computed together, where they are too long for softmax_block_buf below
 * (which computes one exponential per element, not two): each row of a
 * block is then a contiguous read.  The block is read twice, not three
 * times: the first pass keeps a running max per column and rescales the
 * column's sum when the max grows (by e^(old - new), in double), reading
 * CHUNK rows from memory for their max and again from L1 for their
 * exponentials; the second pass writes the result.  A block of 128
 * columns (of 4096 float32 rows, 2 MiB) is still in the caches when the
 * second pass reads it again; 512 columns were not.
 */
#define COLS 128
#define CHUNK 8 /* rows of a block per step of the first pass */

/* Workspace of one column block: the running max, the sums, the inverse
 * sums (or log-sum-exp), a chunk's max, a chunk of input converted to the
 * computing type, and a row of output. */
typedef struct cols_space {
  double m[COLS], inv[COLS], sum[COLS], cm[COLS], y[COLS];
  double x[CHUNK * COLS];
  float part[COLS]; /* float32 sums of a chunk, added into sum */
} cols_space;

/* Row l of a block as the computing type: in place for float32 and
 * float64, else converted into buf. */
static const void *cols_row(const softmax_job *j, const char *p, int64_t w, void *buf) {
  if (j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64) return p;
  gather_f32(buf, p, j->isz, w, j->dt);
  return buf;
}

/* Rows of a block are short runs far apart, which the hardware
 * prefetchers follow poorly: the passes ask for rows this far ahead. */
#define AHEAD_CHUNKS 2 /* first pass */
#define AHEAD_ROWS 8   /* second pass */

static inline void prefetch_row(const char *p, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) __builtin_prefetch(p + i);
}

/* Takes a chunk's max cm into the running max m, scaling each sum whose
 * max grows: the terms added so far were e^(x - old max). */
#define DEFINE_RESCALE(name, T)                                                           \
  static void name(T *m, const T *cm, double *sum, int64_t w) {                          \
    for (int64_t c = 0; c < w; c++)                                                      \
      if (cm[c] > m[c]) {                                                                \
        if (sum[c] != 0) sum[c] *= exp((double)m[c] - (double)cm[c]);                    \
        m[c] = cm[c];                                                                    \
      }                                                                                  \
  }
DEFINE_RESCALE(rescale_f32, float)
DEFINE_RESCALE(rescale_f64, double)

/* The sum of a chunk's terms in column c while the column's max is -inf,
 * so that each of its r elements is -inf (a term of 0) or NaN (NaN). */
static double masked_terms(const void *const *x, int r, int64_t c, bool f64) {
  for (int k = 0; k < r; k++) {
    double v = f64 ? ((const double *)x[k])[c] : ((const float *)x[k])[c];
    if (v != v) return NAN;
  }
  return 0;
}

/* The two passes over one block of w columns: the max and the sum of
 * exponentials, then the result (recomputed from the input, so float16
 * and bfloat16 are rounded once). */
static void softmax_block(const softmax_job *j, const char *in, char *out, int64_t w,
                          cols_space *ws) {
  bool f64 = j->dt == BP_FLOAT64;
  int64_t ostride = j->inner * j->isz;
  float *mf = (float *)ws->m, *invf = (float *)ws->inv, *cmf = (float *)ws->cm;
  float *xf = (float *)ws->x;
  for (int64_t c = 0; c < w; c++) {
    if (f64)
      ws->m[c] = -INFINITY;
    else
      mf[c] = -INFINITY;
    ws->sum[c] = 0;
  }
  int64_t rowbytes = w * j->isz;
  for (int64_t l0 = 0; l0 < j->len; l0 += CHUNK) {
    int r = (int)(j->len - l0 < CHUNK ? j->len - l0 : CHUNK);
    for (int64_t l = l0 + AHEAD_CHUNKS * CHUNK; l < l0 + (AHEAD_CHUNKS + 1) * CHUNK && l < j->len;
         l++)
      prefetch_row(in + l * j->stride, rowbytes);
    const void *x[CHUNK];
    for (int k = 0; k < r; k++)
      x[k] = cols_row(j, in + (l0 + k) * j->stride, w, xf + k * w);
    if (f64) {
      for (int64_t c = 0; c < w; c++) ws->cm[c] = -INFINITY;
      for (int k = 0; k < r; k++) cols_max_f64(ws->cm, x[k], w);
      rescale_f64(ws->m, ws->cm, ws->sum, w);
      memcpy(ws->cm, ws->sum, (size_t)w * sizeof ws->sum[0]); /* the sums before the chunk */
      for (int k = 0; k < r; k++) cols_exp_sum_f64(ws->sum, x[k], ws->m, w);
      /* A column that is all -inf or NaN so far summed e^(-inf - -inf),
       * NaN, for each -inf: those terms are 0 against any later finite
       * max (an all -inf column still comes out NaN in the second pass),
       * while a NaN keeps the column NaN. */
      for (int64_t c = 0; c < w; c++)
        if (ws->m[c] == -INFINITY) ws->sum[c] = ws->cm[c] + masked_terms(x, r, c, true);
      continue;
    }
    for (int64_t c = 0; c < w; c++) cmf[c] = -INFINITY;
    for (int k = 0; k < r; k++) cols_max_f32(cmf, x[k], w);
    rescale_f32(mf, cmf, ws->sum, w);
    memset(ws->part, 0, (size_t)w * sizeof ws->part[0]);
    for (int k = 0; k < r; k++) cols_exp_sum_f32(ws->part, x[k], mf, w);
    /* (as above, for the columns that are all -inf or NaN so far) */
    for (int64_t c = 0; c < w; c++)
      ws->sum[c] += mf[c] == -INFINITY ? masked_terms(x, r, c, false) : ws->part[c];
  }
  for (int64_t c = 0; c < w; c++) {
    double v = j->log ? log(ws->sum[c]) : 1.0 / ws->sum[c];
    if (f64)
      ws->inv[c] = v;
    else
      invf[c] = (float)v;
  }
  for (int64_t l = 0; l < j->len; l++) {
    if (l + AHEAD_ROWS < j->len) prefetch_row(in + (l + AHEAD_ROWS) * j->stride, rowbytes);
    const void *x = cols_row(j, in + l * j->stride, w, xf);
    char *dst = out + l * ostride;
    bool direct = j->dt == BP_FLOAT32 || f64;
    void *y = direct ? (void *)dst : ws->y;
    if (f64 && j->log)
      cols_log_softmax_f64(y, x, ws->m, ws->inv, w);
    else if (f64)
      cols_softmax_f64(y, x, ws->m, ws->inv, w);
    else if (j->log)
      cols_log_softmax_f32(y, x, mf, invf, w);
    else
      cols_softmax_f32(y, x, mf, invf, w);
    if (!direct) scatter_f32(dst, j->isz, y, w, j->dt);
  }
}

/*
 * Columns of a softmax with one exponential per element (softmax_block_buf).
 * The rows of a column block often lie a power of two of bytes apart (16 KiB
 * along dim 0 of a 4096 x 4096 float32 matrix), so that they fall into a few
 * sets of each cache and a block does not stay there between two passes
 * over it.  The first pass therefore reads the block from memory once,
 * taking each column's max, and copies it into a contiguous buffer, SUB
 * columns after SUB columns (converted to float32 for float16 and
 * bfloat16).  The second pass replaces each element of the buffer by
 * e^(x - max) and sums each column (log_softmax only sums), SUB columns at a
 * time: 512 KiB for 4096 rows of float32, which stays in L2.  The third
 * writes the result from the buffer, a block row at a time.  Blocks whose
 * buffer would exceed BUF_MAX (128 columns of more than 8192 float32 or
 * 4096 float64 rows) are computed by softmax_block above instead.
 */
#define BUF_COLS 128 /* columns of a block */
#define SUB 32       /* columns of a step of the second pass */
#define AHEAD 16     /* rows of a block prefetched ahead of the first and third passes */
#define SUMROWS 16   /* rows summed in float before the sum in double */
#define BUF_MAX ((int64_t)4 << 20) /* bytes of a block's buffer, at most */

static inline void prefetch_row_w(const void *p, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) __builtin_prefetch((const char *)p + i, 1);
}

/* The three passes, for float (float32, float16, bfloat16) and double.  The
 * buffer b holds the block's columns [c0, c0 + SUB) at b + c0 * len, as
 * len rows of min(SUB, w - c0).  Each is also compiled for the usual width
 * as a constant (a whole block, or SUB columns), which GCC unrolls: 10%
 * faster on a block that stays in the caches. */
#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline))
#else
#define ALWAYS_INLINE
#endif
#define DEFINE_COLS_BUF(T, sfx, EXP)                                                      \
  /* m = max(m, each row of x), and the rows copied into b. */                            \
  static inline ALWAYS_INLINE void bmax_copy_body_##sfx(                                   \
      T *restrict m, T *restrict b, const T *x, int64_t xs, int64_t len, int64_t w) {       \
    for (int64_t l = 0; l < len; l++) {                                                    \
      const T *xr = x + l * xs;                                                            \
      if (l + AHEAD < len)                                                                 \
        prefetch_row((const char *)(xr + AHEAD * xs), w * (int64_t)sizeof(T));             \
      for (int64_t c0 = 0; c0 < w; c0 += SUB) {                                            \
        int64_t sw = w - c0 < SUB ? w - c0 : SUB;                                          \
        T *d = b + c0 * len + l * sw;                                                      \
        for (int64_t c = 0; c < sw; c++) {                                                 \
          T v = xr[c0 + c];                                                                \
          d[c] = v;                                                                        \
          m[c0 + c] = v > m[c0 + c] ? v : m[c0 + c];                                       \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  static CPU_CLONES void bmax_copy_##sfx(T *restrict m, T *restrict b, const T *x,         \
                                         int64_t xs, int64_t len, int64_t w) {             \
    if (w == BUF_COLS)                                                                     \
      bmax_copy_body_##sfx(m, b, x, xs, len, BUF_COLS);                                    \
    else                                                                                   \
      bmax_copy_body_##sfx(m, b, x, xs, len, w);                                           \
  }                                                                                        \
  /* s = the sums of e^(b - m) over len rows of w columns, and b replaced by     \
   * the terms when keep is set. */                                                       \
  static inline ALWAYS_INLINE void bexp_body_##sfx(T *b, double *restrict s,               \
                                                   const T *restrict m, int64_t len,       \
                                                   int64_t w, bool keep) {                 \
    T part[SUB];                                                                           \
    for (int64_t c = 0; c < w; c++) s[c] = 0;                                              \
    for (int64_t l0 = 0; l0 < len; l0 += SUMROWS) {                                        \
      int64_t r = len - l0 < SUMROWS ? len - l0 : SUMROWS;                                 \
      T *p = b + l0 * w;                                                                   \
      for (int64_t c = 0; c < w; c++) part[c] = 0;                                         \
      if (keep)                                                                            \
        for (int64_t l = 0; l < r; l++)                                                    \
          for (int64_t c = 0; c < w; c++) {                                                \
            T v = EXP(p[l * w + c] - m[c]);                                                \
            p[l * w + c] = v;                                                              \
            part[c] += v;                                                                  \
          }                                                                                \
      else                                                                                 \
        for (int64_t l = 0; l < r; l++)                                                    \
          for (int64_t c = 0; c < w; c++) part[c] += EXP(p[l * w + c] - m[c]);             \
      for (int64_t c = 0; c < w; c++) s[c] += part[c];                                     \
    }                                                                                      \
  }                                                                                        \
  static CPU_CLONES CONTRACT void bexp_##sfx(T *b, double *restrict s, const T *restrict m, \
                                             int64_t len, int64_t w, bool keep) {          \
    if (w == SUB)                                                                          \
      bexp_body_##sfx(b, s, m, len, SUB, keep);                                            \
    else                                                                                   \
      bexp_body_##sfx(b, s, m, len, w, keep);                                              \
  }                                                                                        \
  /* Rows of y (ys apart) = b * inv for softmax, or (b - m) - inv (inv the      \
   * log-sum-exp) for log_softmax, over the whole block of w columns. */                  \
  static inline ALWAYS_INLINE void bout_body_##sfx(T *y, int64_t ys, const T *restrict b,  \
                                                   const T *restrict m, const T *restrict inv, \
                                                   int64_t len, int64_t w, bool take_log) { \
    for (int64_t l = 0; l < len; l++) {                                                    \
      T *yr = y + l * ys;                                                                  \
      if (l + AHEAD < len) prefetch_row_w(yr + AHEAD * ys, w * (int64_t)sizeof(T));        \
      for (int64_t c0 = 0; c0 < w; c0 += SUB) {                                            \
        int64_t sw = w - c0 < SUB ? w - c0 : SUB;                                          \
        const T *br = b + c0 * len + l * sw;                                               \
        if (take_log)                                                                      \
          for (int64_t c = 0; c < sw; c++) yr[c0 + c] = (br[c] - m[c0 + c]) - inv[c0 + c]; \
        else                                                                               \
          for (int64_t c = 0; c < sw; c++) yr[c0 + c] = br[c] * inv[c0 + c];              \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  static CPU_CLONES void bout_##sfx(T *y, int64_t ys, const T *restrict b,                 \
                                    const T *restrict m, const T *restrict inv, int64_t len, \
                                    int64_t w, bool take_log) {                            \
    if (w == BUF_COLS)                                                                     \
      bout_body_##sfx(y, ys, b, m, inv, len, BUF_COLS, take_log);                          \
    else                                                                                   \
      bout_body_##sfx(y, ys, b, m, inv, len, w, take_log);                                 \
  }
DEFINE_COLS_BUF(float, f32, exp_f32)
DEFINE_COLS_BUF(double, f64, exp)

static CPU_CLONES void bmax_f32(float *restrict m, const float *b, int64_t len, int64_t w) {
  for (int64_t l = 0; l < len; l++)
    for (int64_t c = 0; c < w; c++) m[c] = b[l * w + c] > m[c] ? b[l * w + c] : m[c];
}

/* Workspace of one block: the max, the sums, the inverse sums (or
 * log-sum-exp), and a row of float16 or bfloat16 output as float. */
typedef struct buf_space {
  double m[BUF_COLS], sum[BUF_COLS], inv[BUF_COLS];
  float y[BUF_COLS];
} buf_space;

/* The three passes over one block of w <= BUF_COLS columns, through buf. */
static void softmax_block_buf(const softmax_job *j, const char *in, char *out, int64_t w,
                              buf_space *ws, void *buf) {
  bool f64 = j->dt == BP_FLOAT64;
  int64_t len = j->len, sz = j->isz, ostride = j->inner * sz;
  float *mf = (float *)ws->m, *invf = (float *)ws->inv, *bf = buf;
  double *bd = buf;
  for (int64_t c = 0; c < w; c++)
    if (f64)
      ws->m[c] = -INFINITY;
    else
      mf[c] = -INFINITY;
  if (f64) {
    bmax_copy_f64(ws->m, bd, (const double *)in, j->stride / sz, len, w);
  } else if (j->dt == BP_FLOAT32) {
    bmax_copy_f32(mf, bf, (const float *)in, j->stride / sz, len, w);
  } else {
    for (int64_t l = 0; l < len; l++) {
      if (l + AHEAD < len) prefetch_row(in + (l + AHEAD) * j->stride, w * sz);
      for (int64_t c0 = 0; c0 < w; c0 += SUB) {
        int64_t sw = w - c0 < SUB ? w - c0 : SUB;
        gather_f32(bf + c0 * len + l * sw, in + l * j->stride + c0 * sz, sz, sw, j->dt);
      }
    }
    for (int64_t c0 = 0; c0 < w; c0 += SUB)
      bmax_f32(mf + c0, bf + c0 * len, len, w - c0 < SUB ? w - c0 : SUB);
  }
  /* A column whose max is -inf (all -inf) sums e^(-inf - -inf), NaN, and
   * comes out NaN; a NaN anywhere in a column makes its sum NaN. */
  for (int64_t c0 = 0; c0 < w; c0 += SUB) {
    int64_t sw = w - c0 < SUB ? w - c0 : SUB;
    if (f64)
      bexp_f64(bd + c0 * len, ws->sum + c0, ws->m + c0, len, sw, !j->log);
    else
      bexp_f32(bf + c0 * len, ws->sum + c0, mf + c0, len, sw, !j->log);
  }
  for (int64_t c = 0; c < w; c++) {
    double v = j->log ? log(ws->sum[c]) : 1.0 / ws->sum[c];
    if (f64)
      ws->inv[c] = v;
    else
      invf[c] = (float)v;
  }
  if (f64) {
    bout_f64((double *)out, ostride / sz, bd, ws->m, ws->inv, len, w, j->log);
  } else if (j->dt == BP_FLOAT32) {
    bout_f32((float *)out, ostride / sz, bf, mf, invf, len, w, j->log);
  } else {
    for (int64_t l = 0; l < len; l++) {
      for (int64_t c0 = 0; c0 < w; c0 += SUB) {
        int64_t sw = w - c0 < SUB ? w - c0 : SUB;
        bout_f32(ws->y + c0, 0, bf + c0 * len + l * sw, mf + c0, invf + c0, 1, sw, j->log);
      }
      scatter_f32(out + l * ostride, sz, ws->y, w, j->dt);
    }
  }
}

/* Tasks t = outer * blocks + block, blocks of BUF_COLS columns. */
static void softmax_cols_buf(void *ctx, int64_t begin, int64_t end) {
  softmax_job *j = ctx;
  int64_t wmax = j->inner < BUF_COLS ? j->inner : BUF_COLS;
  buf_space *ws = malloc(sizeof *ws);
  void *buf = malloc((size_t)(j->len * wmax) * (j->dt == BP_FLOAT64 ? 8 : 4));
  if (!ws || !buf) {
    free(ws);
    free(buf);
    atomic_store(&j->failed, true);
    return;
  }
  int64_t blocks = (j->inner + BUF_COLS - 1) / BUF_COLS;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / blocks, c0 = t % blocks * BUF_COLS;
    int64_t w = j->inner - c0 < BUF_COLS ? j->inner - c0 : BUF_COLS;
    softmax_block_buf(j, row_src(j, o * j->inner) + c0 * j->isz,
                      row_dst(j, o * j->inner) + c0 * j->isz, w, ws, buf);
  }
  free(buf);
  free(ws);
}

/* Tasks t = outer * blocks + block. */
static void softmax_cols(void *ctx, int64_t begin, int64_t end) {
  softmax_job *j = ctx;
  cols_space *ws = malloc(sizeof *ws);
  if (!ws) {
    atomic_store(&j->failed, true);
    return;
  }
  int64_t blocks = (j->inner + COLS - 1) / COLS;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / blocks, c0 = t % blocks * COLS;
    int64_t w = j->inner - c0 < COLS ? j->inner - c0 : COLS;
    softmax_block(j, row_src(j, o * j->inner) + c0 * j->isz,
                  row_dst(j, o * j->inner) + c0 * j->isz, w, ws);
  }
  free(ws);
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

static bp_status softmax_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = cpu_host->tensor_view(out);
  if (a->numel == 0) return bp_aux_return_tensor(rets, out);
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
  int64_t rows = a->numel / j.len;
  int64_t csz = j.dt == BP_FLOAT64 ? 8 : 4;
  if (j.inner > 1 && inner_contiguous(a, dim) &&
      j.len * (j.inner < BUF_COLS ? j.inner : BUF_COLS) * csz <= BUF_MAX) {
    int64_t blocks = (j.inner + BUF_COLS - 1) / BUF_COLS;
    int64_t per = j.len * (j.inner < BUF_COLS ? j.inner : BUF_COLS);
    cpu_parallel_for(rows / j.inner * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per,
                     softmax_cols_buf, &j);
  } else if (j.inner > 1 && inner_contiguous(a, dim)) {
    int64_t blocks = (j.inner + COLS - 1) / COLS, per = j.len * (j.inner < COLS ? j.inner : COLS);
    cpu_parallel_for(rows / j.inner * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per, softmax_cols,
                     &j);
  } else {
    cpu_parallel_for(rows, j.len >= CPU_GRAIN ? 1 : CPU_GRAIN / j.len, softmax_rows, &j);
  }
  if (atomic_load(&j.failed)) {
    cpu_host->tensor_release(out);
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  }
  return bp_aux_return_tensor(rets, out);
}

/* ------------------------------------------------------------------------ */
/* layer_norm                                                               */
/* ------------------------------------------------------------------------ */

typedef struct norm_job {
  int32_t dt;
  int64_t isz;
  const char *in;
  char *out;
  int64_t n;         /* elements per row */
  double eps;
  int32_t nlead;     /* leading (row) dimensions */
  int64_t lsizes[BP_MAX_NDIM], lstrides[BP_MAX_NDIM]; /* bytes */
  int32_t ntrail;    /* trailing (normalised) dimensions; 0 when contiguous */
  int64_t tsizes[BP_MAX_NDIM], tstrides[BP_MAX_NDIM];
  const void *w, *b; /* contiguous float (or double for float64), or NULL */
  int32_t vdim;      /* a leading dimension of stride 1 (neighbouring rows), or -1 */
  atomic_bool failed;
} norm_job;

/* Copies a row whose trailing dimensions are strided into buf. */
static void gather_row(const norm_job *j, const char *src, void *buf) {
  int64_t inner = j->tsizes[j->ntrail - 1], istride = j->tstrides[j->ntrail - 1];
  int64_t coord[BP_MAX_NDIM] = {0};
  for (int64_t i = 0; i < j->n; i += inner) {
    const char *p = src;
    for (int32_t d = 0; d < j->ntrail - 1; d++) p += coord[d] * j->tstrides[d];
    if (j->dt == BP_FLOAT64)
      gather_f64((double *)buf + i, p, istride, inner);
    else
      gather_f32((float *)buf + i, p, istride, inner, j->dt);
    for (int32_t d = j->ntrail - 2; d >= 0; d--) {
      if (++coord[d] < j->tsizes[d]) break;
      coord[d] = 0;
    }
  }
}

static void norm_rows(void *ctx, int64_t begin, int64_t end) {
  norm_job *j = ctx;
  int64_t n = j->n;
  bool direct = j->ntrail == 0 && (j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64);
  void *buf = NULL;
  if (!direct && !(buf = malloc((size_t)n * 8))) {
    atomic_store(&j->failed, true);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const char *src = j->in;
    for (int64_t d = j->nlead - 1, rem = r; d >= 0; d--) {
      src += rem % j->lsizes[d] * j->lstrides[d];
      rem /= j->lsizes[d];
    }
    char *dst = j->out + r * n * j->isz;
    const void *x = src;
    if (!direct) {
      if (j->ntrail)
        gather_row(j, src, buf);
      else
        gather_f32(buf, src, j->isz, n, j->dt);
      x = buf;
    }
    /* Two passes: the mean (the first element plus the mean deviation
     * from it), then the variance about the mean, which stays accurate
     * where E[x^2] - mean^2 would cancel. */
    if (j->dt == BP_FLOAT64) {
      const double *xd = x;
      double mean = xd[0] + total_f64(x, n, false, xd[0]) / (double)n;
      double var = total_f64(x, n, true, mean) / (double)n;
      normalize_f64(direct ? (double *)dst : buf, x, n, mean, 0, 1.0 / sqrt(var + j->eps), j->w,
                    j->b);
      if (!direct) scatter_f64(dst, j->isz, buf, n);
    } else {
      const float *xf = x;
      double mean = xf[0] + total_f32(x, n, false, xf[0], 0) / (double)n;
      float hi = (float)mean, lo = (float)(mean - hi);
      double var = total_f32(x, n, true, hi, lo) / (double)n;
      float rstd = (float)(1.0 / sqrt(var + j->eps));
      normalize_f32(direct ? (float *)dst : buf, x, n, hi, lo, rstd, j->w, j->b);
      if (!direct) scatter_f32(dst, j->isz, buf, n, j->dt);
    }
  }
  free(buf);
}

/*
 * Rows whose normalised elements are strided but which are neighbours in
 * memory (layer_norm of a transposed matrix): a block of up to NCOLS rows
 * is computed together, each normalised position l giving a contiguous
 * slice of the block, one element per row, so every cache line read is
 * used whole.  The passes are those of norm_rows, with the same types: the
 * deviations from each row's first element, summed in float over up to
 * NFLUSH positions and then in double; the squared deviations from the
 * mean likewise; the result.  Output rows are contiguous, so the result
 * goes through a tile of NTILE positions x NCOLS rows that is written out
 * a row at a time.
 */
#define NCOLS 128
#define NTILE 32
#define NFLUSH 64

typedef struct ncols_space {
  double c[NCOLS], sum[NCOLS], mean[NCOLS], lo[NCOLS], rstd[NCOLS];
  double x[NCOLS];         /* a float16/bfloat16 slice converted to float */
  double y[NTILE * NCOLS]; /* a result tile, [position][row] */
  uint16_t h[NTILE * NCOLS]; /* the same as float16 or bfloat16 */
  float part[NCOLS];
} ncols_space;

#define DEFINE_LN_COLS(T, sfx)                                                           \
  static CPU_CLONES void ln_dev_##sfx(T *acc, const T *x, const T *c, int64_t w) {       \
    for (int64_t t = 0; t < w; t++) acc[t] += x[t] - c[t];                               \
  }                                                                                      \
  static CPU_CLONES void ln_sq_##sfx(T *acc, const T *x, const T *m, const T *lo,        \
                                     int64_t w) {                                        \
    for (int64_t t = 0; t < w; t++) {                                                    \
      T d = (x[t] - m[t]) - lo[t];                                                       \
      acc[t] += d * d;                                                                   \
    }                                                                                    \
  }                                                                                      \
  static CPU_CLONES void ln_norm_##sfx(T *y, const T *x, const T *m, const T *lo,        \
                                       const T *rstd, const T *wl, const T *bl, int64_t w) { \
    if (wl && bl)                                                                        \
      for (int64_t t = 0; t < w; t++) y[t] = ((x[t] - m[t]) - lo[t]) * rstd[t] * *wl + *bl; \
    else if (wl)                                                                         \
      for (int64_t t = 0; t < w; t++) y[t] = ((x[t] - m[t]) - lo[t]) * rstd[t] * *wl;    \
    else if (bl)                                                                         \
      for (int64_t t = 0; t < w; t++) y[t] = ((x[t] - m[t]) - lo[t]) * rstd[t] + *bl;    \
    else                                                                                 \
      for (int64_t t = 0; t < w; t++) y[t] = ((x[t] - m[t]) - lo[t]) * rstd[t];          \
  }
DEFINE_LN_COLS(float, f32)
DEFINE_LN_COLS(double, f64)

/* Moves coord (the normalised dimensions' coordinates) to the next
 * position and returns that position's byte offset, given the current. */
static inline int64_t ln_next(const norm_job *j, int64_t *coord, int64_t off) {
  for (int32_t d = j->ntrail - 1; d >= 0; d--) {
    off += j->tstrides[d];
    if (++coord[d] < j->tsizes[d]) return off;
    off -= coord[d] * j->tstrides[d];
    coord[d] = 0;
  }
  return off;
}

/* Slices are short runs far apart, which the hardware prefetchers follow
 * poorly: each pass asks for the slice LN_AHEAD positions ahead. */
#define LN_AHEAD 8

typedef struct ln_ahead {
  int64_t coord[BP_MAX_NDIM], off, l;
} ln_ahead;

static void ln_ahead_init(ln_ahead *ah, const norm_job *j) {
  memset(ah, 0, sizeof *ah);
  for (int k = 0; k < LN_AHEAD && ah->l < j->n; k++, ah->l++)
    ah->off = ln_next(j, ah->coord, ah->off);
}

/* Prefetches the slice ahead and moves on by one position. */
static void ln_ahead_step(ln_ahead *ah, const norm_job *j, const char *in, int64_t w) {
  if (ah->l >= j->n) return;
  const char *p = in + ah->off;
  for (int64_t b = 0; b < w * j->isz; b += 64) __builtin_prefetch(p + b);
  ah->off = ln_next(j, ah->coord, ah->off);
  ah->l++;
}

/* The slice of w rows at byte offset off of the block, as the computing
 * type: in place for float32 and float64, else converted into buf. */
static const void *ln_slice(const norm_job *j, const char *p, int64_t w, void *buf) {
  if (j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64) return p;
  gather_f32(buf, p, j->isz, w, j->dt);
  return buf;
}

/* One pass of sums over the block: deviations from c (squares: from mean
 * and lo), into sum. */
static void ln_pass(const norm_job *j, const char *in, int64_t w, bool squares,
                    ncols_space *ws) {
  bool f64 = j->dt == BP_FLOAT64;
  float *cf = (float *)ws->c, *mf = (float *)ws->mean, *lof = (float *)ws->lo;
  int64_t coord[BP_MAX_NDIM] = {0}, off = 0;
  int pending = 0; /* positions summed in part */
  ln_ahead ah;
  ln_ahead_init(&ah, j);
  for (int64_t t = 0; t < w; t++) ws->sum[t] = 0;
  memset(ws->part, 0, sizeof ws->part);
  for (int64_t l = 0; l < j->n; l++) {
    ln_ahead_step(&ah, j, in, w);
    const void *x = ln_slice(j, in + off, w, ws->x);
    if (f64) {
      if (squares)
        ln_sq_f64(ws->sum, x, ws->mean, ws->lo, w);
      else
        ln_dev_f64(ws->sum, x, ws->c, w);
    } else {
      if (squares)
        ln_sq_f32(ws->part, x, mf, lof, w);
      else
        ln_dev_f32(ws->part, x, cf, w);
      if (++pending == NFLUSH || l + 1 == j->n) {
        for (int64_t t = 0; t < w; t++) ws->sum[t] += ws->part[t];
        memset(ws->part, 0, (size_t)w * sizeof ws->part[0]);
        pending = 0;
      }
    }
    off = ln_next(j, coord, off);
  }
}

/* Rows r0, r0 + rstep, ... (w of them) starting at in. */
static void ln_block(const norm_job *j, const char *in, int64_t r0, int64_t rstep, int64_t w,
                     ncols_space *ws) {
  bool f64 = j->dt == BP_FLOAT64;
  float *cf = (float *)ws->c, *mf = (float *)ws->mean, *lof = (float *)ws->lo,
        *rf = (float *)ws->rstd, *yf = (float *)ws->y;
  double n = (double)j->n;
  const void *x0 = ln_slice(j, in, w, ws->x);
  if (f64)
    memcpy(ws->c, x0, (size_t)w * sizeof(double));
  else
    memcpy(cf, x0, (size_t)w * sizeof(float));
  ln_pass(j, in, w, false, ws);
  for (int64_t t = 0; t < w; t++) {
    if (f64) {
      ws->mean[t] = ws->c[t] + ws->sum[t] / n;
      ws->lo[t] = 0;
    } else {
      double mean = cf[t] + ws->sum[t] / n;
      mf[t] = (float)mean;
      lof[t] = (float)(mean - mf[t]);
    }
  }
  ln_pass(j, in, w, true, ws);
  for (int64_t t = 0; t < w; t++) {
    if (f64)
      ws->rstd[t] = 1.0 / sqrt(ws->sum[t] / n + j->eps);
    else
      rf[t] = (float)(1.0 / sqrt(ws->sum[t] / n + j->eps));
  }
  int64_t coord[BP_MAX_NDIM] = {0}, off = 0;
  ln_ahead ah;
  ln_ahead_init(&ah, j);
  for (int64_t l0 = 0; l0 < j->n; l0 += NTILE) {
    int64_t lt = j->n - l0 < NTILE ? j->n - l0 : NTILE;
    for (int64_t k = 0; k < lt; k++) {
      int64_t l = l0 + k;
      ln_ahead_step(&ah, j, in, w);
      const void *x = ln_slice(j, in + off, w, ws->x);
      if (f64)
        ln_norm_f64(ws->y + k * w, x, ws->mean, ws->lo, ws->rstd,
                    j->w ? (const double *)j->w + l : NULL, j->b ? (const double *)j->b + l : NULL,
                    w);
      else
        ln_norm_f32(yf + k * w, x, mf, lof, rf, j->w ? (const float *)j->w + l : NULL,
                    j->b ? (const float *)j->b + l : NULL, w);
      off = ln_next(j, coord, off);
    }
    /* Each row's part of the next tile, then the tile turned around into
     * the rows. */
    int64_t ds = rstep * j->n;
    char *dst = j->out + (r0 * j->n + l0) * j->isz;
    if (l0 + NTILE < j->n)
      for (int64_t t = 0; t < w; t++)
        for (int64_t b = 0; b < NTILE * j->isz; b += 64)
          __builtin_prefetch(dst + (t * ds + NTILE) * j->isz + b, 1);
    if (j->dt == BP_FLOAT32 || f64) {
      cpu_transpose(dst, ds, (const char *)ws->y, j->isz, w * j->isz, w, lt, j->isz);
    } else {
      scatter_f32((char *)ws->h, 2, yf, lt * w, j->dt);
      cpu_transpose(dst, ds, (const char *)ws->h, 2, w * 2, w, lt, 2);
    }
  }
}

/* Tasks t = (outer rows, block along vdim), the block fastest. */
static void norm_cols(void *ctx, int64_t begin, int64_t end) {
  norm_job *j = ctx;
  ncols_space *ws = malloc(sizeof *ws);
  if (!ws) {
    atomic_store(&j->failed, true);
    return;
  }
  int32_t v = j->vdim;
  int64_t nv = j->lsizes[v], blocks = (nv + NCOLS - 1) / NCOLS;
  for (int64_t t = begin; t < end; t++) {
    int64_t c0 = t % blocks * NCOLS, o = t / blocks, w = nv - c0 < NCOLS ? nv - c0 : NCOLS;
    /* The block's first row: its coordinates in the leading dimensions,
     * its input and its index among the output's rows. */
    const char *in = j->in + c0 * j->lstrides[v];
    int64_t r0 = 0, rstep = 1, mul = 1;
    for (int32_t d = j->nlead - 1; d >= 0; d--) {
      int64_t cd;
      if (d == v) {
        cd = c0;
        rstep = mul;
      } else {
        cd = o % j->lsizes[d];
        o /= j->lsizes[d];
        in += cd * j->lstrides[d];
      }
      r0 += cd * mul;
      mul *= j->lsizes[d];
    }
    ln_block(j, in, r0, rstep, w, ws);
  }
  free(ws);
}

/* A contiguous float (double for float64) copy of weight or bias, or the
 * tensor's own data when it already is one.  *owned is what to free. */
static bp_status param_data(const bp_value *v, int64_t n, const void **data, void **owned) {
  *data = NULL;
  *owned = NULL;
  if (v->tag == BP_TAG_NONE) return BP_OK;
  const bp_tensor_view *t = cpu_host->tensor_view(v->u.tensor);
  bool contiguous = t->numel <= 1 || (t->flags & BP_VIEW_CONTIGUOUS);
  if (contiguous && (t->dtype == BP_FLOAT32 || t->dtype == BP_FLOAT64)) {
    *data = t->data;
    return BP_OK;
  }
  char *copy = malloc((size_t)(n ? n : 1) * 8);
  if (!copy) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: layer_norm: out of memory");
  /* Walk the parameter's dimensions in row-major order. */
  int64_t coord[BP_MAX_NDIM] = {0};
  for (int64_t i = 0; i < n; i++) {
    const char *p = t->data;
    for (int32_t d = 0; d < t->ndim; d++) p += coord[d] * t->strides[d] * t->itemsize;
    if (t->dtype == BP_FLOAT64)
      ((double *)copy)[i] = *(const double *)p;
    else
      gather_f32((float *)copy + i, p, 0, 1, t->dtype);
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
      if (++coord[d] < t->sizes[d]) break;
      coord[d] = 0;
    }
  }
  *data = *owned = copy;
  return BP_OK;
}

/* Splits the input's dimensions into row dimensions and the k trailing
 * ones; the trailing ones are left empty (ntrail 0) when they are one
 * contiguous run. */
static void norm_layout(norm_job *j, const bp_tensor_view *a, int32_t k) {
  j->n = 1;
  for (int32_t d = 0; d < a->ndim - k; d++) {
    j->lsizes[j->nlead] = a->sizes[d];
    j->lstrides[j->nlead] = a->strides[d] * j->isz;
    j->nlead++;
  }
  bool contiguous = true;
  int64_t expect = 1;
  for (int32_t d = a->ndim - 1; d >= a->ndim - k; d--) {
    j->n *= a->sizes[d];
    if (a->sizes[d] != 1 && a->strides[d] != expect) contiguous = false;
    expect *= a->sizes[d];
  }
  j->vdim = -1;
  if (contiguous) return;
  for (int32_t d = a->ndim - k; d < a->ndim; d++) {
    j->tsizes[j->ntrail] = a->sizes[d];
    j->tstrides[j->ntrail] = a->strides[d] * j->isz;
    j->ntrail++;
  }
  /* Neighbouring rows that are neighbours in memory are computed in
   * blocks (norm_cols); the innermost such dimension is taken. */
  for (int32_t d = j->nlead - 1; d >= 0 && j->vdim < 0; d--)
    if (j->lsizes[d] > 1 && j->lstrides[d] == j->isz) j->vdim = d;
}

static bp_status layer_norm_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  if (a->numel == 0) return bp_aux_return_tensor(rets, out);
  norm_job j;
  memset(&j, 0, sizeof j);
  j.dt = a->dtype;
  j.isz = a->itemsize;
  j.in = a->data;
  j.out = cpu_host->tensor_view(out)->data;
  j.eps = args[4].u.f;
  norm_layout(&j, a, (int32_t)args[1].len);
  atomic_init(&j.failed, false);
  void *w_owned = NULL, *b_owned = NULL;
  st = param_data(&args[2], j.n, &j.w, &w_owned);
  if (!st) st = param_data(&args[3], j.n, &j.b, &b_owned);
  if (!st) {
    if (j.vdim >= 0) {
      int64_t nv = j.lsizes[j.vdim], blocks = (nv + NCOLS - 1) / NCOLS;
      int64_t per = j.n * (nv < NCOLS ? nv : NCOLS);
      cpu_parallel_for(a->numel / j.n / nv * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per,
                       norm_cols, &j);
    } else {
      cpu_parallel_for(a->numel / j.n, j.n >= CPU_GRAIN ? 1 : CPU_GRAIN / j.n, norm_rows, &j);
    }
    if (atomic_load(&j.failed))
      st = CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  }
  free(w_owned);
  free(b_owned);
  if (st) {
    cpu_host->tensor_release(out);
    return st;
  }
  return bp_aux_return_tensor(rets, out);
}

bp_status cpu_register_nn(bp_library *lib) {
  bp_status st = cpu_impl(lib, "softmax", softmax_kernel, (void *)0);
  if (!st) st = cpu_impl(lib, "log_softmax", softmax_kernel, (void *)1);
  if (!st) st = cpu_impl(lib, "layer_norm", layer_norm_kernel, NULL);
  return st;
}
