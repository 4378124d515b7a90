/*
 * plugins/cpu/iter.c - strided, broadcasting iteration over tensors.
 *
 * An iteration is planned once per call (cpu_iter_init).  Steps 1 to 3 are
 * bp_aux_iter_plan's, of <backplane/plugin_aux.h>, and the runs of
 * elements come from its bp_aux_iter_next; step 4 is the CPU's own:
 *
 *   1. each operand is broadcast to the shape, and dimensions of size 1 are
 *      dropped;
 *   2. the dimensions are ordered by stride, the output's first, as
 *      PyTorch's TensorIterator does, so that an output that is a
 *      transposed view, as fill_ or copy_ may write, is walked in memory
 *      order;
 *   3. neighbours that every operand steps through as one are merged, so the
 *      innermost run is as long as possible;
 *   4. if an input still steps a cache line or more per element along the
 *      innermost dimension (the transposed operand of add(a, b.T)), but
 *      less along another dimension, those two dimensions are walked in
 *      tiles of TILE x TILE elements.  Each such input is first copied,
 *      a tile at a time, into a small contiguous buffer (cpu_transpose):
 *      reading it along its own dense dimension touches every cache line
 *      once, and the loop then sees contiguous operands.  The next tile
 *      is prefetched, as its short runs far apart are a pattern the
 *      hardware prefetchers miss.
 *
 * Without step 4 a transposed operand costs a cache miss per element: an
 * add with one was 10 to 20 times slower than a contiguous one.  The order
 * in which elements are visited is therefore not row-major; the callers
 * (elementwise ops) compute each output element from the same position of
 * the inputs only, so the results do not depend on it.
 */
#include <stdlib.h>

#include "cpu.h"

/* Tile edge in elements: a float32 tile of one operand is 16 KiB, so the
 * buffers of three inputs stay in L1 and L2. */
#define TILE 64

/* An input that steps at least this many bytes per element along the
 * innermost dimension reads a cache line per element there. */
#define LINE 64

static int64_t iabs64(int64_t v) { return v < 0 ? -v : v; }

/* Picks the dimension to tile with the innermost one, and the inputs to
 * copy through buffers; leaves it->tile_dim at -1 when none helps. */
static void plan_tiles(cpu_iter *it) {
  it->tile_dim = -1;
  it->packed = 0;
  int nd = it->a.ndim;
  if (nd < 2) return;
  int best = -1, best_count = 0;
  for (int d = 0; d < nd - 1; d++) {
    int count = 0;
    for (int i = 1; i < it->a.nops; i++) {
      int64_t si = iabs64(it->a.strides[i][nd - 1]), sd = iabs64(it->a.strides[i][d]);
      if (si >= LINE && sd != 0 && sd < si) count++;
    }
    /* Prefer more inputs helped, then the innermost such dimension. */
    if (count > 0 && count >= best_count) {
      best = d;
      best_count = count;
    }
  }
  if (best < 0) return;
  it->tile_dim = best;
  for (int i = 1; i < it->a.nops; i++) {
    int64_t si = iabs64(it->a.strides[i][nd - 1]), sd = iabs64(it->a.strides[i][best]);
    if (si >= LINE && sd != 0 && sd < si) it->packed |= 1u << i;
  }
}

void cpu_iter_init(cpu_iter *it, int nops, const bp_tensor_view *const *views, int32_t ndim,
                   const int64_t *shape) {
  bp_aux_iter_plan(&it->a, nops, views, ndim, shape);
  plan_tiles(it);
}

typedef struct run_ctx {
  const cpu_iter *it;
  cpu_loop_fn loop;
  void *ctx;
  /* tiled runs: slices of `per` tiles, each with `bufsize` bytes of
   * buffers at bufs + slice * bufsize (NULL: the inputs read in place) */
  int64_t tiles, per;
  char *bufs;
  size_t bufsize;
} run_ctx;

/* Runs the elements [begin, end) in row-major order of the iteration.  A
 * single element (ndim 0) is called directly: on tiny tensors the runs'
 * bookkeeping would cost a tenth of the call. */
static void run_range(void *p, int64_t begin, int64_t end) {
  const run_ctx *rc = p;
  const bp_aux_iter *it = &rc->it->a;
  if (it->ndim == 0) {
    static const int64_t zeros[BP_AUX_ITER_MAX_OPS];
    char *ptrs[BP_AUX_ITER_MAX_OPS];
    memcpy(ptrs, it->data, sizeof ptrs);
    rc->loop(ptrs, zeros, 1, rc->ctx);
    return;
  }
  bp_aux_run r;
  for (bp_aux_iter_start(it, begin, end, &r); bp_aux_iter_next(it, &r);)
    rc->loop(r.ptrs, r.strides, r.n, rc->ctx);
}

/*
 * cpu_transpose for elements of 2, 4 or 8 bytes that are contiguous along
 * kk, with GCC's vector extensions (plain SSE2 code): blocks of 8 x 8, 4 x
 * 4 or 2 x 2 elements are read as 16-byte source rows and turned around in
 * registers, a few instructions per 16 bytes instead of a few per element.
 */
#if defined(__GNUC__) && !defined(__clang__)
typedef uint16_t v8u16 __attribute__((vector_size(16)));
typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef uint64_t v2u64 __attribute__((vector_size(16)));

/* One N x N block at (kk, ii): N 16-byte source rows (columns ii .. ii + N
 * - 1, from kk on) become N destination rows. */
static inline void block_4x4(uint32_t *dst, int64_t ds, const char *src, int64_t si, int64_t kk,
                             int64_t ii) {
  const char *s = src + ii * si + kk * 4;
  v4u32 r0, r1, r2, r3;
  memcpy(&r0, s, sizeof r0);
  memcpy(&r1, s + si, sizeof r1);
  memcpy(&r2, s + 2 * si, sizeof r2);
  memcpy(&r3, s + 3 * si, sizeof r3);
  v4u32 t0 = __builtin_shuffle(r0, r1, (v4u32){0, 4, 1, 5});
  v4u32 t1 = __builtin_shuffle(r0, r1, (v4u32){2, 6, 3, 7});
  v4u32 t2 = __builtin_shuffle(r2, r3, (v4u32){0, 4, 1, 5});
  v4u32 t3 = __builtin_shuffle(r2, r3, (v4u32){2, 6, 3, 7});
  v4u32 c0 = __builtin_shuffle(t0, t2, (v4u32){0, 1, 4, 5});
  v4u32 c1 = __builtin_shuffle(t0, t2, (v4u32){2, 3, 6, 7});
  v4u32 c2 = __builtin_shuffle(t1, t3, (v4u32){0, 1, 4, 5});
  v4u32 c3 = __builtin_shuffle(t1, t3, (v4u32){2, 3, 6, 7});
  memcpy(dst + kk * ds + ii, &c0, sizeof c0);
  memcpy(dst + (kk + 1) * ds + ii, &c1, sizeof c1);
  memcpy(dst + (kk + 2) * ds + ii, &c2, sizeof c2);
  memcpy(dst + (kk + 3) * ds + ii, &c3, sizeof c3);
}

/* 2-byte elements: pairs, then pairs of pairs, then halves interleaved. */
static inline void block_8x8(uint16_t *dst, int64_t ds, const char *src, int64_t si, int64_t kk,
                             int64_t ii) {
  const v8u16 lo16 = {0, 8, 1, 9, 2, 10, 3, 11}, hi16 = {4, 12, 5, 13, 6, 14, 7, 15};
  const v4u32 lo32 = {0, 4, 1, 5}, hi32 = {2, 6, 3, 7};
  const v2u64 lo64 = {0, 2}, hi64 = {1, 3};
  const char *s = src + ii * si + kk * 2;
  v8u16 r[8], a[8];
  v4u32 b[8];
  for (int c = 0; c < 8; c++) memcpy(&r[c], s + c * si, sizeof r[c]);
  for (int p = 0; p < 4; p++) {
    a[2 * p] = __builtin_shuffle(r[2 * p], r[2 * p + 1], lo16);
    a[2 * p + 1] = __builtin_shuffle(r[2 * p], r[2 * p + 1], hi16);
  }
  for (int h = 0; h < 2; h++) { /* columns 4h .. 4h + 3 */
    v4u32 x0 = (v4u32)a[4 * h], x1 = (v4u32)a[4 * h + 1], x2 = (v4u32)a[4 * h + 2],
          x3 = (v4u32)a[4 * h + 3];
    b[4 * h] = __builtin_shuffle(x0, x2, lo32);
    b[4 * h + 1] = __builtin_shuffle(x0, x2, hi32);
    b[4 * h + 2] = __builtin_shuffle(x1, x3, lo32);
    b[4 * h + 3] = __builtin_shuffle(x1, x3, hi32);
  }
  for (int q = 0; q < 4; q++) { /* destination rows 2q and 2q + 1 */
    v2u64 y0 = (v2u64)b[q], y1 = (v2u64)b[4 + q];
    v2u64 e = __builtin_shuffle(y0, y1, lo64), o = __builtin_shuffle(y0, y1, hi64);
    memcpy(dst + (kk + 2 * q) * ds + ii, &e, sizeof e);
    memcpy(dst + (kk + 2 * q + 1) * ds + ii, &o, sizeof o);
  }
}

static inline void block_2x2(uint64_t *dst, int64_t ds, const char *src, int64_t si, int64_t kk,
                             int64_t ii) {
  const char *s = src + ii * si + kk * 8;
  v2u64 r0, r1;
  memcpy(&r0, s, sizeof r0);
  memcpy(&r1, s + si, sizeof r1);
  v2u64 c0 = __builtin_shuffle(r0, r1, (v2u64){0, 2}), c1 = __builtin_shuffle(r0, r1, (v2u64){1, 3});
  memcpy(dst + kk * ds + ii, &c0, sizeof c0);
  memcpy(dst + (kk + 1) * ds + ii, &c1, sizeof c1);
}

/*
 * The blocks of a tk x ti transpose, then the elements left over at the
 * edges.  When the destination's rows are far apart (ds large), blocks go
 * along a destination row first, so that each of its cache lines is
 * written whole before the next; otherwise along a source column first,
 * for the same reason on the source side.
 */
#define BLOCKS(T, N, block)                                                                 \
  static void blocks_##N(char *buf, int64_t ds, const char *src, int64_t si, int64_t tk,     \
                         int64_t ti) {                                                      \
    T *dst = (T *)(void *)buf;                                                              \
    int64_t tkn = tk / N * N, tin = ti / N * N;                                             \
    if (ds <= ti) {                                                                         \
      for (int64_t ii = 0; ii < tin; ii += N)                                               \
        for (int64_t kk = 0; kk < tkn; kk += N) block(dst, ds, src, si, kk, ii);            \
    } else {                                                                                \
      for (int64_t kk = 0; kk < tkn; kk += N)                                               \
        for (int64_t ii = 0; ii < tin; ii += N) block(dst, ds, src, si, kk, ii);            \
    }                                                                                       \
    for (int64_t kk = tkn; kk < tk; kk++)                                                   \
      for (int64_t ii = 0; ii < ti; ii++)                                                   \
        memcpy(dst + kk * ds + ii, src + ii * si + kk * (int64_t)sizeof(T), sizeof(T));     \
    for (int64_t kk = 0; kk < tkn; kk++)                                                    \
      for (int64_t ii = tin; ii < ti; ii++)                                                 \
        memcpy(dst + kk * ds + ii, src + ii * si + kk * (int64_t)sizeof(T), sizeof(T));     \
  }
BLOCKS(uint16_t, 8, block_8x8)
BLOCKS(uint32_t, 4, block_4x4)
BLOCKS(uint64_t, 2, block_2x2)
#define HAVE_BLOCKS 1
#endif

/* See cpu.h.  Otherwise an element at a time, reading the source along kk
 * (usually its dense direction). */
void cpu_transpose(char *dst, int64_t ds, const char *src, int64_t sk, int64_t si, int64_t tk,
                   int64_t ti, int64_t w) {
#define PACK(T)                                                                             \
  for (int64_t ii = 0; ii < ti; ii++) {                                                     \
    const char *s = src + ii * si;                                                          \
    T *o = (T *)(void *)dst + ii;                                                           \
    for (int64_t kk = 0; kk < tk; kk++) o[kk * ds] = *(const T *)(const void *)(s + kk * sk); \
  }
#ifdef HAVE_BLOCKS
  if (sk == w && w == 2) {
    blocks_8(dst, ds, src, si, tk, ti);
    return;
  }
  if (sk == w && w == 4) {
    blocks_4(dst, ds, src, si, tk, ti);
    return;
  }
  if (sk == w && w == 8) {
    blocks_2(dst, ds, src, si, tk, ti);
    return;
  }
#endif
  switch (w) {
    case 1: PACK(uint8_t); break;
    case 2: PACK(uint16_t); break;
    case 4: PACK(uint32_t); break;
    default: PACK(uint64_t); break;
  }
#undef PACK
}

/*
 * Tile t of the iteration: t = (outer, i tile, k tile) with the k tile
 * fastest, where k is tile_dim, i the innermost dimension and outer runs
 * over the other dimensions in row-major order.  Walking k first continues
 * each column of a packed input from one tile to the next.  Sets the
 * tile's extent and each operand's first element.
 */
static void tile_at(const cpu_iter *it, int64_t t, int64_t *tk, int64_t *ti,
                    char *base[CPU_ITER_MAX_OPS]) {
  int nd = it->a.ndim, kd = it->tile_dim, id = nd - 1;
  int64_t nk = it->a.sizes[kd], ni = it->a.sizes[id];
  int64_t ktiles = (nk + TILE - 1) / TILE, itiles = (ni + TILE - 1) / TILE;
  int64_t k0 = t % ktiles * TILE, i0 = t / ktiles % itiles * TILE, outer = t / ktiles / itiles;
  *tk = nk - k0 < TILE ? nk - k0 : TILE;
  *ti = ni - i0 < TILE ? ni - i0 : TILE;
  for (int i = 0; i < it->a.nops; i++) {
    char *b = it->a.data[i] + k0 * it->a.strides[i][kd] + i0 * it->a.strides[i][id];
    int64_t o = outer;
    for (int d = nd - 2; d >= 0; d--) {
      if (d == kd) continue;
      b += o % it->a.sizes[d] * it->a.strides[i][d];
      o /= it->a.sizes[d];
    }
    base[i] = b;
  }
}

/* Asks for the cache lines of a tile ahead of its use: the pattern, short
 * runs far apart, is one that the hardware prefetchers miss. */
static void prefetch_tile(const cpu_iter *it, int64_t t) {
  int64_t tk, ti;
  char *base[CPU_ITER_MAX_OPS];
  tile_at(it, t, &tk, &ti, base);
  for (int i = 0; i < it->a.nops; i++) {
    int64_t sk = iabs64(it->a.strides[i][it->tile_dim]);
    int64_t si = iabs64(it->a.strides[i][it->a.ndim - 1]);
    /* Lines along the dense direction (step a), for each position along
     * the other (step b). */
    int64_t a = si, na = ti, b = sk, nb = tk;
    if (sk != 0 && (sk < si || si == 0)) {
      a = sk, na = tk, b = si, nb = ti;
    }
    if (b == 0) nb = 1;
    int64_t span = a == 0 ? 1 : na * a, step = a < LINE ? LINE : a;
    for (int64_t y = 0; y < nb; y++)
      for (int64_t x = 0; x < span; x += step) {
        if (i == 0)
          __builtin_prefetch(base[i] + y * b + x, 1);
        else
          __builtin_prefetch(base[i] + y * b + x);
      }
  }
}

/* The bytes of one slice's buffers (one per packed input, 16 KiB for
 * float32), and each input's offset in them. */
static size_t tile_buffers(const cpu_iter *it, size_t at[CPU_ITER_MAX_OPS]) {
  size_t total = 0;
  for (int i = 0; i < it->a.nops; i++) {
    at[i] = total;
    if (it->packed & (1u << i)) total += (size_t)(TILE * TILE * it->a.elsize[i]);
  }
  return total;
}

/* Tiles [begin, end) with the buffers bufs (NULL: the inputs are read in
 * place, the same results, slower). */
static void run_tile_range(const run_ctx *rc, int64_t begin, int64_t end, char *bufs) {
  const cpu_iter *it = rc->it;
  int nops = it->a.nops;
  size_t at[CPU_ITER_MAX_OPS];
  tile_buffers(it, at);
  unsigned packed = bufs ? it->packed : 0;
  if (begin < end) prefetch_tile(it, begin);
  for (int64_t t = begin; t < end; t++) {
    if (t + 1 < end) prefetch_tile(it, t + 1);
    int64_t tk, ti, sk[CPU_ITER_MAX_OPS], si[CPU_ITER_MAX_OPS];
    char *base[CPU_ITER_MAX_OPS];
    tile_at(it, t, &tk, &ti, base);
    for (int i = 0; i < nops; i++) {
      sk[i] = it->a.strides[i][it->tile_dim];
      si[i] = it->a.strides[i][it->a.ndim - 1];
      if (packed & (1u << i)) {
        char *buf = bufs + at[i];
        cpu_transpose(buf, ti, base[i], sk[i], si[i], tk, ti, it->a.elsize[i]);
        base[i] = buf;
        sk[i] = ti * it->a.elsize[i];
        si[i] = it->a.elsize[i];
      }
    }
    for (int64_t kk = 0; kk < tk; kk++) {
      char *ptrs[CPU_ITER_MAX_OPS];
      for (int i = 0; i < nops; i++) ptrs[i] = base[i] + kk * sk[i];
      rc->loop(ptrs, si, ti, rc->ctx);
    }
  }
}

/* Slices [begin, end), each with its buffers. */
static void run_slices(void *p, int64_t begin, int64_t end) {
  const run_ctx *rc = p;
  for (int64_t sl = begin; sl < end; sl++) {
    int64_t t0 = sl * rc->per, t1 = t0 + rc->per < rc->tiles ? t0 + rc->per : rc->tiles;
    run_tile_range(rc, t0, t1, rc->bufs ? rc->bufs + (size_t)sl * rc->bufsize : NULL);
  }
}

void cpu_iter_run(const cpu_iter *it, cpu_loop_fn loop, void *ctx) {
  if (it->a.numel == 0) return;
  run_ctx rc = {it, loop, ctx, 0, 0, NULL, 0};
  if (it->tile_dim >= 0) {
    int64_t nk = it->a.sizes[it->tile_dim], ni = it->a.sizes[it->a.ndim - 1];
    rc.tiles = it->a.numel / (nk * ni) * ((nk + TILE - 1) / TILE) * ((ni + TILE - 1) / TILE);
    /* Slices of at least the pool's grain, up to four a thread, handed
     * out as threads come free; their buffers are allocated here, as a
     * pool thread never allocates (see attention.c). */
    int64_t grain = CPU_GRAIN / (TILE * TILE), threads = cpu_num_threads();
    int64_t slices = rc.tiles / grain;
    if (slices > 4 * threads) slices = 4 * threads;
    if (slices < 1 || threads <= 1) slices = 1;
    rc.per = (rc.tiles + slices - 1) / slices;
    slices = (rc.tiles + rc.per - 1) / rc.per;
    size_t at[CPU_ITER_MAX_OPS];
    rc.bufsize = tile_buffers(it, at);
    rc.bufs = rc.bufsize ? malloc(rc.bufsize * (size_t)slices) : NULL;
    cpu_parallel_items(slices, run_slices, &rc);
    free(rc.bufs);
    return;
  }
  cpu_parallel_for(it->a.ndim == 0 ? 1 : it->a.numel, CPU_GRAIN, run_range, &rc);
}
