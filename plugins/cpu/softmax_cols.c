/*
 * plugins/cpu/softmax_cols.c - softmax and log_softmax along a dimension
 * followed by contiguous ones (softmax(dim=0) of a matrix).  Its rows are
 * strided but neighbours in memory, so they are computed in blocks of
 * neighbouring columns, with the columns as the vector, and each block row
 * is a contiguous read: through a buffer, one exponential per element
 * (cpu_softmax_cols_buf), or, for columns too long for the buffer, reading
 * the block twice (cpu_softmax_cols).
 */
#include <math.h>
#include <stdlib.h>

#include "softmax.h"

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
  cpu_gather_f32(buf, p, j->isz, w, j->dt);
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
    if (!direct) cpu_scatter_f32(dst, j->isz, y, w, j->dt);
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
 * writes the result from the buffer, a block row at a time, through a tile
 * in L1 that is streamed out when the result is large (log_softmax only,
 * as for rows; see softmax.c).  Blocks of 64 columns (a buffer of 1 MiB
 * for 4096 float32 rows) went a third faster than blocks of 128 (2 MiB,
 * more than L2) on a 4096 x 4096 float32 matrix.  Blocks whose buffer
 * would exceed BUF_MAX (64 columns of more than 8192 float32 or 4096
 * float64 rows) are computed by softmax_block above instead.
 */
#define SUB 32       /* columns of a step of the second pass */
#define AHEAD 16     /* rows of a block prefetched ahead of the first and third passes */
#define SUMROWS 16   /* rows summed in float before the sum in double */

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
  /* Rows [l0, l1) of y (row l at y + (l - l0) * ys) = b * inv for softmax, \
   * or (b - m) - inv (inv the log-sum-exp) for log_softmax, over the whole  \
   * block of w columns; y's rows ahead are prefetched when `ahead`. */                     \
  static inline ALWAYS_INLINE void bout_body_##sfx(T *y, int64_t ys, const T *restrict b,  \
                                                   const T *restrict m, const T *restrict inv, \
                                                   int64_t len, int64_t l0, int64_t l1,      \
                                                   int64_t w, bool take_log, bool ahead) {   \
    for (int64_t l = l0; l < l1; l++) {                                                    \
      T *yr = y + (l - l0) * ys;                                                           \
      if (ahead && l + AHEAD < l1) prefetch_row_w(yr + AHEAD * ys, w * (int64_t)sizeof(T)); \
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
                                    int64_t l0, int64_t l1, int64_t w, bool take_log,       \
                                    bool ahead) {                                          \
    if (w == BUF_COLS)                                                                     \
      bout_body_##sfx(y, ys, b, m, inv, len, l0, l1, BUF_COLS, take_log, ahead);            \
    else                                                                                   \
      bout_body_##sfx(y, ys, b, m, inv, len, l0, l1, w, take_log, ahead);                   \
  }
DEFINE_COLS_BUF(float, f32, exp_f32)
DEFINE_COLS_BUF(double, f64, exp)

static CPU_CLONES void bmax_f32(float *restrict m, const float *b, int64_t len, int64_t w) {
  for (int64_t l = 0; l < len; l++)
    for (int64_t c = 0; c < w; c++) m[c] = b[l * w + c] > m[c] ? b[l * w + c] : m[c];
}

/* Workspace of one block: the max, the sums, the inverse sums (or
 * log-sum-exp), and a row of float16 or bfloat16 output as float. */
#define OUT_ROWS 16 /* rows of a tile of results streamed out */
typedef struct buf_space {
  double m[BUF_COLS], sum[BUF_COLS], inv[BUF_COLS];
  float y[BUF_COLS];
  _Alignas(64) double tile[OUT_ROWS * BUF_COLS];
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
        cpu_gather_f32(bf + c0 * len + l * sw, in + l * j->stride + c0 * sz, sz, sw, j->dt);
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
  if (j->stream && (f64 || j->dt == BP_FLOAT32)) {
    /* OUT_ROWS rows at a time into a tile in L1, streamed out from there. */
    for (int64_t l0 = 0; l0 < len; l0 += OUT_ROWS) {
      int64_t l1 = len - l0 < OUT_ROWS ? len : l0 + OUT_ROWS;
      if (f64)
        bout_f64(ws->tile, w, bd, ws->m, ws->inv, len, l0, l1, w, j->log, false);
      else
        bout_f32((float *)ws->tile, w, bf, mf, invf, len, l0, l1, w, j->log, false);
      cpu_stream_rows(out + l0 * ostride, ostride, ws->tile, w * sz, l1 - l0, (size_t)(w * sz));
    }
  } else if (f64) {
    bout_f64((double *)out, ostride / sz, bd, ws->m, ws->inv, len, 0, len, w, j->log, true);
  } else if (j->dt == BP_FLOAT32) {
    bout_f32((float *)out, ostride / sz, bf, mf, invf, len, 0, len, w, j->log, true);
  } else {
    for (int64_t l = 0; l < len; l++) {
      for (int64_t c0 = 0; c0 < w; c0 += SUB) {
        int64_t sw = w - c0 < SUB ? w - c0 : SUB;
        bout_f32(ws->y + c0, 0, bf + c0 * len, mf + c0, invf + c0, len, l, l + 1, sw, j->log,
                 false);
      }
      cpu_scatter_f32(out + l * ostride, sz, ws->y, w, j->dt);
    }
  }
}

/* Tasks t = outer * blocks + block, blocks of BUF_COLS columns. */
void cpu_softmax_cols_buf(void *ctx, int64_t begin, int64_t end) {
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
  if (j->stream) cpu_stream_end();
}

/* Tasks t = outer * blocks + block. */
void cpu_softmax_cols(void *ctx, int64_t begin, int64_t end) {
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
