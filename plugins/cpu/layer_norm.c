/*
 * plugins/cpu/layer_norm.c - layer_norm.
 *
 * It works row by row: a row is the trailing normalized_shape elements.
 * Rows are independent, so they are spread over the pool.  A row that is
 * contiguous in the input and of float32 or float64 is read in place; any
 * other row (strided, or float16/bfloat16, which compute in float32) is
 * first gathered into a buffer (rows.c), computed there and written out
 * converted.  The next row is prefetched during a row's second pass, and
 * large results are streamed out (stream.c).  The rows of a transposed
 * input, strided but neighbours in memory, are computed in blocks instead
 * (layer_norm_cols.c).
 */
#include <math.h>
#include <stdlib.h>

#include "layer_norm.h"

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

DEFINE_NORMALIZE(normalize_f32, float)
DEFINE_NORMALIZE(normalize_f64, double)

/* ------------------------------------------------------------------------ */
/* layer_norm                                                               */
/* ------------------------------------------------------------------------ */


/* Copies a row whose trailing dimensions are strided into buf. */
static void gather_row(const norm_job *j, const char *src, void *buf) {
  int64_t inner = j->tsizes[j->ntrail - 1], istride = j->tstrides[j->ntrail - 1];
  int64_t coord[BP_MAX_NDIM] = {0};
  for (int64_t i = 0; i < j->n; i += inner) {
    const char *p = src;
    for (int32_t d = 0; d < j->ntrail - 1; d++) p += coord[d] * j->tstrides[d];
    if (j->dt == BP_FLOAT64)
      cpu_gather_f64((double *)buf + i, p, istride, inner);
    else
      cpu_gather_f32((float *)buf + i, p, istride, inner, j->dt);
    for (int32_t d = j->ntrail - 2; d >= 0; d--) {
      if (++coord[d] < j->tsizes[d]) break;
      coord[d] = 0;
    }
  }
}

/* A row normalised a stretch at a time into a buffer in L1 and streamed
 * out from there (see stream.c). */
#define STREAM_CHUNK 1024
static void norm_stream_f32(float *y, const float *x, int64_t n, float mean, float lo, float rstd,
                            const float *w, const float *b) {
  _Alignas(64) float buf[STREAM_CHUNK];
  for (int64_t i = 0; i < n; i += STREAM_CHUNK) {
    int64_t k = n - i < STREAM_CHUNK ? n - i : STREAM_CHUNK;
    normalize_f32(buf, x + i, k, mean, lo, rstd, w ? w + i : NULL, b ? b + i : NULL);
    cpu_stream_copy(y + i, buf, (size_t)k * sizeof *y);
  }
}

static void norm_stream_f64(double *y, const double *x, int64_t n, double mean, double rstd,
                            const double *w, const double *b) {
  _Alignas(64) double buf[STREAM_CHUNK];
  for (int64_t i = 0; i < n; i += STREAM_CHUNK) {
    int64_t k = n - i < STREAM_CHUNK ? n - i : STREAM_CHUNK;
    normalize_f64(buf, x + i, k, mean, 0, rstd, w ? w + i : NULL, b ? b + i : NULL);
    cpu_stream_copy(y + i, buf, (size_t)k * sizeof *y);
  }
}

/* The start of row r in the input. */
static const char *row_in(const norm_job *j, int64_t r) {
  const char *src = j->in;
  for (int64_t d = j->nlead - 1; d >= 0; d--) {
    src += r % j->lsizes[d] * j->lstrides[d];
    r /= j->lsizes[d];
  }
  return src;
}

void cpu_norm_row(const norm_job *j, const void *x, void *y, void *dst, const void *ahead) {
  int64_t n = j->n;
  /* Two passes: the mean (the first element plus the mean deviation from
   * it), then the variance about the mean, which stays accurate where
   * E[x^2] - mean^2 would cancel. */
  if (j->dt == BP_FLOAT64) {
    const double *xd = x;
    double mean = xd[0] + cpu_row_total_f64(x, n, false, xd[0], NULL) / (double)n;
    double var = cpu_row_total_f64(x, n, true, mean, ahead) / (double)n;
    double rstd = 1.0 / sqrt(var + j->eps);
    if (y)
      normalize_f64(y, x, n, mean, 0, rstd, j->w, j->b);
    else
      norm_stream_f64(dst, x, n, mean, rstd, j->w, j->b);
  } else {
    const float *xf = x;
    double mean = xf[0] + cpu_row_total_f32(x, n, false, xf[0], 0, NULL) / (double)n;
    float hi = (float)mean, lo = (float)(mean - hi);
    double var = cpu_row_total_f32(x, n, true, hi, lo, ahead) / (double)n;
    float rstd = (float)(1.0 / sqrt(var + j->eps));
    if (y)
      normalize_f32(y, x, n, hi, lo, rstd, j->w, j->b);
    else
      norm_stream_f32(dst, x, n, hi, lo, rstd, j->w, j->b);
  }
}

static void norm_rows(void *ctx, int64_t begin, int64_t end) {
  norm_job *j = ctx;
  int64_t n = j->n;
  bool direct = j->ntrail == 0 && (j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64);
  bool stream = direct && j->stream;
  void *buf = NULL;
  if (!direct && !(buf = malloc((size_t)n * 8))) {
    atomic_store(&j->failed, true);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const char *src = row_in(j, r);
    char *dst = j->out + r * n * j->isz;
    if (direct) {
      /* The next row is prefetched during the second pass: rows that
       * follow each other in memory then overlap. */
      const void *ahead = r + 1 < end ? row_in(j, r + 1) : NULL;
      cpu_norm_row(j, src, stream ? NULL : dst, dst, ahead);
      continue;
    }
    if (j->ntrail)
      gather_row(j, src, buf);
    else
      cpu_gather_f32(buf, src, j->isz, n, j->dt);
    cpu_norm_row(j, buf, buf, NULL, NULL);
    if (j->dt == BP_FLOAT64)
      cpu_scatter_f64(dst, j->isz, buf, n);
    else
      cpu_scatter_f32(dst, j->isz, buf, n, j->dt);
  }
  free(buf);
  if (stream) cpu_stream_end();
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
      cpu_gather_f32((float *)copy + i, p, 0, 1, t->dtype);
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

static bp_status layer_norm_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  if (a->numel == 0) return BP_OK;
  norm_job j;
  memset(&j, 0, sizeof j);
  j.dt = a->dtype;
  j.isz = a->itemsize;
  j.in = a->data;
  j.out = cpu_host->tensor_view(out)->data;
  j.eps = args[4].u.f;
  norm_layout(&j, a, (int32_t)args[1].len);
  j.stream = cpu_stream_wanted(a->numel * j.isz);
  atomic_init(&j.failed, false);
  void *w_owned = NULL, *b_owned = NULL;
  st = param_data(&args[2], j.n, &j.w, &w_owned);
  if (!st) st = param_data(&args[3], j.n, &j.b, &b_owned);
  if (!st) {
    if (j.vdim >= 0) {
      cpu_norm_cols(&j, a->numel / j.n / j.lsizes[j.vdim]);
    } else {
      cpu_parallel_for(a->numel / j.n, j.n >= CPU_GRAIN ? 1 : CPU_GRAIN / j.n, norm_rows, &j);
    }
    if (atomic_load(&j.failed))
      st = CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  }
  free(w_owned);
  free(b_owned);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(layer_norm_kernel, layer_norm_impl)
bp_status cpu_register_layer_norm(bp_library *lib) {
  return CPU_IMPL_STRUCTURED(lib, "layer_norm", layer_norm_kernel, NULL);
}
