/*
 * plugins/cpu/layer_norm_cols.c - layer_norm of rows whose normalised
 * elements are strided but which are neighbours in memory (layer_norm of
 * a transposed matrix): the rows of a block are turned around into a
 * buffer and computed there as contiguous rows (the buffered path, below),
 * or, where that does not fit, computed together with the rows as the
 * vector.
 */
#include <math.h>
#include <stdlib.h>

#include "layer_norm.h"

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
  cpu_gather_f32(buf, p, j->isz, w, j->dt);
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
      cpu_scatter_f32((char *)ws->h, 2, yf, lt * w, j->dt);
      cpu_transpose(dst, ds, (const char *)ws->h, 2, w * 2, w, lt, 2);
    }
  }
}

/* Tasks t = (outer rows, block along vdim), the block fastest. */
static void norm_cols_tasks(void *ctx, int64_t begin, int64_t end) {
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

/*
 * The buffered path, for one normalised dimension (ntrail 1: the elements
 * of a row a constant stride apart), which covers a transposed matrix.  A
 * block of bw rows (bw such that the block fills a buffer of BUF_BYTES,
 * which stays in L2) is read from memory once and turned around into the
 * buffer, BUF_STEP positions at a time: their slices (each a run of bw
 * elements, one per row) are first copied one after another into a
 * staging area, a loop of plain loads whose misses overlap, then
 * cpu_transpose turns the staged tile around in L1 (turning the slices
 * around straight from memory left few misses in flight: twice as slow).
 * Each row of the block is then a contiguous row of the buffer, which
 * goes through the row kernel of contiguous rows (cpu_norm_row, the same
 * arithmetic as norm_rows) into its output row, itself contiguous,
 * streamed out when the result is large.  float16 and bfloat16 rows are
 * converted to float and back on the way.
 */
#define BUF_BYTES ((int64_t)512 << 10)
#define BUF_MIN 8   /* rows of a block, at least, else the path above */
#define BUF_STEP 64 /* positions turned around at a time */

typedef struct lb_job {
  norm_job *j;
  int64_t bw, blocks, tasks, per;
  char *bufs; /* per slice: the block, a row as float for half types, the staging */
  size_t bufsize;
} lb_job;

/* A block: its first element, its first row's index among the output's
 * rows and their step, and its width. */
typedef struct lb_block_at {
  const char *in;
  int64_t r0, rstep, w;
} lb_block_at;

static lb_block_at lb_at(const lb_job *lj, int64_t task) {
  const norm_job *j = lj->j;
  int32_t v = j->vdim;
  int64_t nv = j->lsizes[v];
  int64_t c0 = task % lj->blocks * lj->bw, o = task / lj->blocks;
  lb_block_at at = {j->in + c0 * j->lstrides[v], 0, 1, nv - c0 < lj->bw ? nv - c0 : lj->bw};
  int64_t mul = 1;
  for (int32_t d = j->nlead - 1; d >= 0; d--) {
    int64_t cd;
    if (d == v) {
      cd = c0;
      at.rstep = mul;
    } else {
      cd = o % j->lsizes[d];
      o /= j->lsizes[d];
      at.in += cd * j->lstrides[d];
    }
    at.r0 += cd * mul;
    mul *= j->lsizes[d];
  }
  return at;
}

/* k runs of m bytes, xs apart, one after another into st. */
static CPU_CLONES void lb_stage(char *restrict st, const char *x, int64_t xs, int64_t k,
                                int64_t m) {
  if (m % 64 == 0) {
    for (int64_t l = 0; l < k; l++)
      for (int64_t q = 0; q < m; q += 64) memcpy(st + l * m + q, x + l * xs + q, 64);
  } else {
    for (int64_t l = 0; l < k; l++) memcpy(st + l * m, x + l * xs, (size_t)m);
  }
}

/* Prefetches slices [l0, l1) of the block at `at` toward L2. */
static void lb_prefetch(const norm_job *j, const lb_block_at *at, int64_t l0, int64_t l1) {
  int64_t xs = j->tstrides[0], m = at->w * j->isz;
  for (int64_t l = l0; l < l1; l++)
    for (int64_t q = 0; q < m; q += 64) __builtin_prefetch(at->in + l * xs + q, 0, 1);
}

/* n rounded up to a multiple of 64. */
#define LB_UP64(n) (((n) + 63) / 64 * 64)

/* The block at `at` through b. */
static void lb_block(const norm_job *j, const lb_block_at *at, char *b, void *row, char *stage) {
  int64_t n = j->n, isz = j->isz, xs = j->tstrides[0], w = at->w;
  bool direct = j->dt == BP_FLOAT32 || j->dt == BP_FLOAT64;
  /* b[t][l] = element l of row t, the slices BUF_STEP positions ahead
   * prefetched as each step is turned around. */
  lb_prefetch(j, at, 0, BUF_STEP < n ? BUF_STEP : n);
  for (int64_t l0 = 0; l0 < n; l0 += BUF_STEP) {
    int64_t k = n - l0 < BUF_STEP ? n - l0 : BUF_STEP, la = l0 + BUF_STEP;
    lb_prefetch(j, at, la < n ? la : n, la + k < n ? la + k : n);
    lb_stage(stage, at->in + l0 * xs, xs, k, w * isz);
    cpu_transpose(b + l0 * isz, n, stage, isz, w * isz, w, k, isz);
  }
  for (int64_t t = 0; t < w; t++) {
    const char *x = b + t * n * isz;
    char *dst = j->out + (at->r0 + t * at->rstep) * n * isz;
    if (direct) {
      cpu_norm_row(j, x, j->stream ? NULL : dst, dst, NULL);
    } else {
      cpu_gather_f32(row, x, isz, n, j->dt);
      cpu_norm_row(j, row, row, NULL, NULL);
      cpu_scatter_f32(dst, isz, row, n, j->dt);
    }
  }
}

/* Tasks t = (outer rows, block along vdim), the block fastest, in slices
 * of lj->per tasks, each slice with its buffers. */
static void lb_slices(void *ctx, int64_t begin, int64_t end) {
  lb_job *lj = ctx;
  norm_job *j = lj->j;
  for (int64_t sl = begin; sl < end; sl++) {
    char *b = lj->bufs + (size_t)sl * lj->bufsize;
    /* (each part on a 64-byte boundary: a 16-bit block of odd length
     * would leave the float row misaligned) */
    char *row = b + LB_UP64((size_t)(lj->bw * j->n * j->isz));
    char *stage = row + LB_UP64((size_t)j->n * 4);
    int64_t t0 = sl * lj->per, t1 = t0 + lj->per < lj->tasks ? t0 + lj->per : lj->tasks;
    for (int64_t t = t0; t < t1; t++) {
      lb_block_at at = lb_at(lj, t);
      lb_block(j, &at, b, row, stage);
    }
  }
  if (j->stream) cpu_stream_end();
}

void cpu_norm_cols(norm_job *j, int64_t outer) {
  int64_t nv = j->lsizes[j->vdim];
  int64_t bw = BUF_BYTES / (j->n * j->isz);
  if (bw > NCOLS) bw = NCOLS;
  if (bw > nv) bw = nv;
  if (j->ntrail == 1 && bw >= (nv < BUF_MIN ? nv : BUF_MIN)) {
    lb_job lj = {j, bw, (nv + bw - 1) / bw, 0, 0, NULL, 0};
    lj.tasks = outer * lj.blocks;
    /* Slices of at least the pool's grain, two a thread, handed out as
     * threads come free; their buffers are allocated here, as a pool
     * thread never allocates (see attention.c). */
    int64_t threads = cpu_num_threads();
    int64_t slices = lj.tasks * j->n * bw / CPU_GRAIN;
    if (slices > 2 * threads) slices = 2 * threads;
    if (slices > lj.tasks) slices = lj.tasks;
    if (slices < 1 || threads <= 1) slices = 1;
    lj.per = (lj.tasks + slices - 1) / slices;
    slices = (lj.tasks + lj.per - 1) / lj.per;
    lj.bufsize = LB_UP64((size_t)(bw * j->n * j->isz)) + LB_UP64((size_t)j->n * 4) +
                 LB_UP64((size_t)(BUF_STEP * bw * j->isz));
    lj.bufs = aligned_alloc(64, lj.bufsize * (size_t)slices);
    if (!lj.bufs) {
      atomic_store(&j->failed, true);
      return;
    }
    cpu_parallel_items(slices, lb_slices, &lj);
    free(lj.bufs);
    return;
  }
  int64_t blocks = (nv + NCOLS - 1) / NCOLS;
  int64_t per = j->n * (nv < NCOLS ? nv : NCOLS);
  cpu_parallel_for(outer * blocks, per >= CPU_GRAIN ? 1 : CPU_GRAIN / per, norm_cols_tasks, j);
}
