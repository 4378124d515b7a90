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

/* Takes a float64 chunk of r rows x[k] whose max per column is cm (a
 * scratch row, overwritten) into the running max m and the sums. */
static void fold_chunk_f64(double *m, double *cm, double *sum, const void *const *x, int r,
                           int64_t w) {
  rescale_f64(m, cm, sum, w);
  memcpy(cm, sum, (size_t)w * sizeof *sum); /* the sums before the chunk */
  for (int k = 0; k < r; k++) cols_exp_sum_f64(sum, x[k], m, w);
  /* A column that is all -inf or NaN so far summed e^(-inf - -inf), NaN,
   * for each -inf: those terms are 0 against any later finite max (an all
   * -inf column still comes out NaN in the second pass), while a NaN keeps
   * the column NaN. */
  for (int64_t c = 0; c < w; c++)
    if (m[c] == -INFINITY) sum[c] = cm[c] + masked_terms(x, r, c, true);
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
      fold_chunk_f64(ws->m, ws->cm, ws->sum, x, r, w);
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
 * Columns of a softmax through a buffer (softmax_block_buf), reading the
 * input from memory once.  The rows of a column block often lie a power of
 * two of bytes apart (16 KiB along dim 0 of a 4096 x 4096 float32 matrix),
 * so that they fall into a few sets of each cache and a block read in place
 * does not stay there until a second pass.  The first pass therefore copies
 * the block into a contiguous buffer (float32 for float16 and bfloat16), a
 * chunk of BCHUNK rows at a time, taking each row into the running max and
 * sum of e^(x - max) while it is in registers (chunk_f32; float64 takes the
 * chunk's max first, then its terms from L1, as softmax_block does).  Those
 * exponentials run while the next rows are on their way from memory, which
 * a separate pass over the buffer could not overlap.  The second pass
 * writes the result from the buffer (softmax computing each term again),
 * through a tile in L1 that is streamed out when the result is large.  On a
 * 4096 x 4096 float32 matrix on 2 threads of a Zen 4 this took 0.44 of the
 * triad's bandwidth (log_softmax 0.50), where reading the input twice in
 * memory order took 0.31 (0.35); bench/README.md has the figures.  Blocks
 * of 64 columns (a buffer of 1 MiB for 4096 float32 rows) stay in L2;
 * blocks whose buffer would exceed BUF_MAX (64 columns of more than 8192
 * float32 or 4096 float64 rows) are computed by softmax_block above
 * instead.
 */
#define BCHUNK 16  /* rows of a step of the first pass */
#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline))
#else
#define ALWAYS_INLINE
#endif
#define AHEAD 16   /* rows of a block prefetched ahead of each pass */
#define OUT_ROWS 16 /* rows of a tile of results streamed out */

static inline void prefetch_row_w(const void *p, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) __builtin_prefetch((const char *)p + i, 1);
}

/* r rows of x (xs elements apart) copied into b (w apart), and m = their
 * max per column. */
static CPU_CLONES void copy_max_f64(double *restrict m, double *restrict b,
                                    const double *restrict x, int64_t xs, int r, int64_t w) {
  for (int k = 0; k < r; k++)
    for (int64_t c = 0; c < w; c++) {
      double v = x[k * xs + c];
      b[k * w + c] = v;
      m[c] = v > m[c] ? v : m[c];
    }
}

/*
 * One chunk of r float rows in one function, so that a block's max and
 * sums stay in registers.  Row k of x (xs elements apart; x is b itself
 * when the rows were converted into the buffer already) is copied into b,
 * the row AHEAD of it is asked for, and each element v is taken into the
 * running max m and the chunk's sum of e^(x - m) in float, online: where v
 * is above m the sum is scaled by e^(m - v) and gains 1, else it gains
 * e^(v - m), one exponential e^-|v - m| either way.  Those exponentials run
 * while the rows ahead are on their way from memory; done in a pass of
 * their own after the chunk's copy, the whole first pass took twice as
 * long.  At the end of the chunk the block's sum in double, taken against
 * the max before the chunk, is scaled to the new max and gains the chunk's.
 *
 * Non-finite values need no branch.  An element equal to the max adds 1:
 * so does a -inf in a column that is all -inf so far (not e^NaN), and
 * whatever such a column has summed is scaled by e^-inf = 0 when a finite
 * max comes, or comes out NaN in the second pass (x - max is NaN there).
 * A NaN never becomes the max and makes its term NaN, and with it the sum.
 * A max of +inf makes the sum NaN at the end (see softmax_block_buf), as
 * e^(inf - inf) does in torch.
 */
static inline ALWAYS_INLINE void chunk_body_f32(float *restrict m, double *restrict sum,
                                                float *b, const float *x, int64_t xs,
                                                const char *ahead, int64_t ahead_stride,
                                                int r, int ahead_rows, int64_t w) {
  float m0[BUF_COLS], part[BUF_COLS];
  for (int64_t c = 0; c < w; c++) {
    m0[c] = m[c];
    part[c] = 0;
  }
  for (int k = 0; k < r; k++) {
    if (k < ahead_rows) prefetch_row(ahead + k * ahead_stride, w * 4);
    const float *xr = x + k * xs;
    float *br = b + k * w;
    for (int64_t c = 0; c < w; c++) {
      float v = xr[c];
      br[c] = v;
      float d = vm_select(v == m[c], 0.0f, v - m[c]);
      float e = exp_f32(-fabsf(d));
      int up = d > 0;
      part[c] = vm_select(up, part[c] * e + 1.0f, part[c] + e);
      m[c] = vm_select(up, v, m[c]);
    }
  }
  for (int64_t c = 0; c < w; c++) {
    float scale = vm_select(m[c] > m0[c], exp_f32(m0[c] - m[c]), 1.0f);
    sum[c] = sum[c] * (double)scale + (double)part[c];
  }
}

/* rows rows of softmax (or log_softmax, lse in inv) from b into y, both
 * w apart, for the second pass of softmax_block_buf. */
static inline ALWAYS_INLINE void out_body_f32(float *restrict y, const float *restrict b,
                                              const float *restrict m,
                                              const float *restrict inv, int64_t rows,
                                              int64_t w, bool take_log) {
  for (int64_t k = 0; k < rows; k++)
    for (int64_t c = 0; c < w; c++) {
      float v = b[k * w + c] - m[c];
      y[k * w + c] = take_log ? v - inv[c] : exp_f32(v) * inv[c];
    }
}

static CPU_CLONES CONTRACT void out_f32(float *restrict y, const float *restrict b,
                                        const float *restrict m, const float *restrict inv,
                                        int64_t rows, int64_t w, bool take_log) {
  if (w == BUF_COLS && rows == OUT_ROWS && !take_log)
    out_body_f32(y, b, m, inv, OUT_ROWS, BUF_COLS, false);
  else if (w == BUF_COLS && rows == OUT_ROWS)
    out_body_f32(y, b, m, inv, OUT_ROWS, BUF_COLS, true);
  else if (take_log)
    out_body_f32(y, b, m, inv, rows, w, true);
  else
    out_body_f32(y, b, m, inv, rows, w, false);
}

static CPU_CLONES CONTRACT void chunk_f32(float *restrict m, double *restrict sum, float *b,
                                          const float *x, int64_t xs, const char *ahead,
                                          int64_t ahead_stride, int r, int ahead_rows,
                                          int64_t w) {
  if (w == BUF_COLS && r == BCHUNK)
    chunk_body_f32(m, sum, b, x, xs, ahead, ahead_stride, BCHUNK, ahead_rows, BUF_COLS);
  else
    chunk_body_f32(m, sum, b, x, xs, ahead, ahead_stride, r, ahead_rows, w);
}

/* Workspace of one block: the running max, a chunk's max, the sums, the
 * inverse sums (or log-sum-exp), a chunk's float sums, a row of float16 or
 * bfloat16 output as float, and the tile streamed out. */
typedef struct buf_space {
  double m[BUF_COLS], cm[BUF_COLS], sum[BUF_COLS], inv[BUF_COLS];
  float part[BUF_COLS], y[BUF_COLS];
  _Alignas(64) double tile[OUT_ROWS * BUF_COLS];
} buf_space;

/* Row l of the result from row l of the buffer, into y. */
static void buf_out_row(const softmax_job *j, void *y, const void *b, const buf_space *ws,
                        int64_t w) {
  if (j->dt == BP_FLOAT64) {
    if (j->log)
      cols_log_softmax_f64(y, b, ws->m, ws->inv, w);
    else
      cols_softmax_f64(y, b, ws->m, ws->inv, w);
  } else if (j->log) {
    cols_log_softmax_f32(y, b, (const float *)ws->m, (const float *)ws->inv, w);
  } else {
    cols_softmax_f32(y, b, (const float *)ws->m, (const float *)ws->inv, w);
  }
}

/* The two passes over one block of w <= BUF_COLS columns, through buf. */
static void softmax_block_buf(const softmax_job *j, const char *in, char *out, int64_t w,
                              buf_space *ws, void *buf) {
  bool f64 = j->dt == BP_FLOAT64, direct = f64 || j->dt == BP_FLOAT32;
  int64_t len = j->len, sz = j->isz, ostride = j->inner * sz, rowbytes = w * sz;
  int64_t bsz = f64 ? 8 : 4; /* the buffer's element */
  float *mf = (float *)ws->m;
  for (int64_t c = 0; c < w; c++) {
    if (f64)
      ws->m[c] = -INFINITY;
    else
      mf[c] = -INFINITY;
    ws->sum[c] = 0;
  }
  for (int64_t l0 = 0; l0 < len; l0 += BCHUNK) {
    int r = (int)(len - l0 < BCHUNK ? len - l0 : BCHUNK);
    char *b = (char *)buf + l0 * w * bsz;
    const void *x[BCHUNK];
    for (int k = 0; k < r; k++) x[k] = b + k * w * bsz;
    const char *src = in + l0 * j->stride;
    if (f64) {
      for (int64_t l = l0 + AHEAD; l < l0 + AHEAD + r && l < len; l++)
        prefetch_row(in + l * j->stride, rowbytes);
      for (int64_t c = 0; c < w; c++) ws->cm[c] = -INFINITY;
      copy_max_f64(ws->cm, (double *)b, (const double *)src, j->stride / 8, r, w);
      fold_chunk_f64(ws->m, ws->cm, ws->sum, x, r, w);
      continue;
    }
    int ahead_rows = (int)(len - l0 - AHEAD < r ? len - l0 - AHEAD : r);
    if (j->dt == BP_FLOAT32) {
      chunk_f32(mf, ws->sum, (float *)b, (const float *)src, j->stride / 4,
                src + AHEAD * j->stride, j->stride, r, ahead_rows, w);
    } else {
      for (int k = 0; k < r; k++)
        cpu_gather_f32((float *)x[k], src + k * j->stride, sz, w, j->dt);
      chunk_f32(mf, ws->sum, (float *)b, (const float *)b, w, src + AHEAD * j->stride, j->stride,
                r, ahead_rows, w);
    }
  }
  /* A max of +inf: e^(inf - inf) is NaN (see chunk_body_f32). */
  if (!f64)
    for (int64_t c = 0; c < w; c++)
      if (mf[c] == INFINITY) ws->sum[c] = NAN;
  for (int64_t c = 0; c < w; c++) {
    double v = j->log ? log(ws->sum[c]) : 1.0 / ws->sum[c];
    if (f64)
      ws->inv[c] = v;
    else
      ((float *)ws->inv)[c] = (float)v;
  }
  const char *b = buf;
  if (j->stream && direct) {
    /* OUT_ROWS rows at a time into a tile in L1, streamed out from there. */
    for (int64_t l0 = 0; l0 < len; l0 += OUT_ROWS) {
      int64_t l1 = len - l0 < OUT_ROWS ? len : l0 + OUT_ROWS;
      if (f64)
        for (int64_t l = l0; l < l1; l++)
          buf_out_row(j, (char *)ws->tile + (l - l0) * rowbytes, b + l * w * bsz, ws, w);
      else
        out_f32((float *)ws->tile, (const float *)b + l0 * w, mf, (const float *)ws->inv,
                l1 - l0, w, j->log);
      cpu_stream_rows(out + l0 * ostride, ostride, ws->tile, rowbytes, l1 - l0, (size_t)rowbytes);
    }
    return;
  }
  for (int64_t l = 0; l < len; l++) {
    char *dst = out + l * ostride;
    if (l + AHEAD < len) prefetch_row_w(dst + AHEAD * ostride, rowbytes);
    buf_out_row(j, direct ? (void *)dst : ws->y, b + l * w * bsz, ws, w);
    if (!direct) cpu_scatter_f32(dst, sz, ws->y, w, j->dt);
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
