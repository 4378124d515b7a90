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
 * The row kernels are plain loops over arrays that the compiler vectorises.
 * float32 softmax uses exp_f32 below, which is branch-free so that it
 * vectorises too; float64 uses the C library's exp.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu.h"

#define LANES 16
#define BLOCK 1024 /* elements summed in float lanes per double addition */

/* ------------------------------------------------------------------------ */
/* exp for float32, vectorisable                                            */
/* ------------------------------------------------------------------------ */

/* The ISO C mode the project builds in rounds a*b + c twice; the loops
 * that evaluate exp's polynomial are a third faster with FMA, which is no
 * less accurate, and GCC can allow it per function. */
#if defined(__GNUC__) && !defined(__clang__)
#define CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define CONTRACT
#endif

static inline float bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/*
 * e^x for x <= 0 (softmax's x - max), within about 1 ulp (Cephes' expf
 * polynomial): x = n ln2 + r with |r| <= ln2/2, e^x = 2^n e^r.  No
 * branches, so loops over it vectorise.  Results that would be subnormal
 * are 0; -inf gives 0 and NaN stays NaN.  (x > 0 is only ever NaN's
 * neighbour here: x - max is positive for no x.)
 */
static inline float exp_f32(float x) {
  const float shifter = 0x1.8p23f; /* adding it rounds to an integer */
  float xc = x < -87.0f ? -87.0f : x;
  float t = xc * 1.44269504088896341f + shifter;
  float n = t - shifter;
  uint32_t scale = (f32_to_bits(t) - f32_to_bits(shifter) + 127u) << 23; /* 2^n */
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = (p * r * r + r + 1.0f) * bits_to_f32(scale);
  return x < -87.33654f ? 0.0f : y;
}

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
        dst[i] = cpu_f16_to_f32(*(const uint16_t *)(src + i * stride));
      break;
    default:
      for (int64_t i = 0; i < n; i++)
        dst[i] = cpu_bf16_to_f32(*(const uint16_t *)(src + i * stride));
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
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = cpu_f32_to_f16(src[i]);
      break;
    default:
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = cpu_f32_to_bf16(src[i]);
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
          f[k * n + l] = cpu_f16_to_f32(*(const uint16_t *)(src[k] + l * st));
        break;
      default:
        for (int k = 0; k < w; k++)
          f[k * n + l] = cpu_bf16_to_f32(*(const uint16_t *)(src[k] + l * st));
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
        for (int k = 0; k < w; k++) *(uint16_t *)(dst[k] + l * st) = cpu_f32_to_f16(f[k * n + l]);
        break;
      default:
        for (int k = 0; k < w; k++) *(uint16_t *)(dst[k] + l * st) = cpu_f32_to_bf16(f[k * n + l]);
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

/* Columns of a softmax along a dimension with contiguous elements after it
 * computed together: each row of a block is then a contiguous read. */
#define COLS 512

/* Workspace of one column block: the running max, the sums, the inverse
 * sums (or log-sum-exp), and a row of input and of output converted to
 * the computing type. */
typedef struct cols_space {
  double m[COLS], inv[COLS], sum[COLS], x[COLS], y[COLS];
  float part[COLS]; /* float32 sums of up to FLUSH rows, added into sum */
} cols_space;

#define FLUSH 64

/* Row l of a block as the computing type: in place for float32 and
 * float64, else converted into buf. */
static const void *cols_row(const softmax_job *j, const char *p, int64_t w, void *buf) {
  if (j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64) return p;
  gather_f32(buf, p, j->isz, w, j->dt);
  return buf;
}

/* The three passes over one block of w columns: the max, the sum of
 * exponentials, the result (recomputed from the input, so float16 and
 * bfloat16 are rounded once). */
static void softmax_block(const softmax_job *j, const char *in, char *out, int64_t w,
                          cols_space *ws) {
  bool f64 = j->dt == BP_FLOAT64;
  int64_t ostride = j->inner * j->isz;
  float *mf = (float *)ws->m, *invf = (float *)ws->inv, *xf = (float *)ws->x;
  for (int64_t c = 0; c < w; c++) {
    if (f64)
      ws->m[c] = -INFINITY;
    else
      mf[c] = -INFINITY;
    ws->sum[c] = 0;
  }
  for (int64_t l = 0; l < j->len; l++) {
    const void *x = cols_row(j, in + l * j->stride, w, ws->x);
    if (f64)
      cols_max_f64(ws->m, x, w);
    else
      cols_max_f32(mf, x, w);
  }
  memset(ws->part, 0, sizeof ws->part);
  for (int64_t l = 0; l < j->len; l++) {
    const void *x = cols_row(j, in + l * j->stride, w, ws->x);
    if (f64) {
      cols_exp_sum_f64(ws->sum, x, ws->m, w);
      continue;
    }
    cols_exp_sum_f32(ws->part, x, mf, w);
    if ((l + 1) % FLUSH == 0 || l + 1 == j->len) {
      for (int64_t c = 0; c < w; c++) ws->sum[c] += ws->part[c];
      memset(ws->part, 0, (size_t)w * sizeof ws->part[0]);
    }
  }
  for (int64_t c = 0; c < w; c++) {
    double v = j->log ? log(ws->sum[c]) : 1.0 / ws->sum[c];
    if (f64)
      ws->inv[c] = v;
    else
      invf[c] = (float)v;
  }
  for (int64_t l = 0; l < j->len; l++) {
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
  bp_status st = cpu_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = cpu_host->tensor_view(out);
  if (a->numel == 0) return cpu_return(rets, out);
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
  if (j.inner > 1 && inner_contiguous(a, dim)) {
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
  return cpu_return(rets, out);
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
  if (contiguous) return;
  for (int32_t d = a->ndim - k; d < a->ndim; d++) {
    j->tsizes[j->ntrail] = a->sizes[d];
    j->tstrides[j->ntrail] = a->strides[d] * j->isz;
    j->ntrail++;
  }
}

static bp_status layer_norm_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  bp_status st = cpu_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  if (a->numel == 0) return cpu_return(rets, out);
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
    cpu_parallel_for(a->numel / j.n, j.n >= CPU_GRAIN ? 1 : CPU_GRAIN / j.n, norm_rows, &j);
    if (atomic_load(&j.failed))
      st = CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  }
  free(w_owned);
  free(b_owned);
  if (st) {
    cpu_host->tensor_release(out);
    return st;
  }
  return cpu_return(rets, out);
}

bp_status cpu_register_nn(bp_library *lib) {
  bp_status st = cpu_impl(lib, "softmax", softmax_kernel, (void *)0);
  if (!st) st = cpu_impl(lib, "log_softmax", softmax_kernel, (void *)1);
  if (!st) st = cpu_impl(lib, "layer_norm", layer_norm_kernel, NULL);
  return st;
}
