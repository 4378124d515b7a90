/*
 * plugins/cpu/conv.c - conv2d (op set 2) for float32, as an implicit GEMM
 * (the host's composite serves the other dtypes).
 *
 * For batch entry n and group g the convolution is one GEMM,
 *
 *   out[n, g Og + o, :] (Og x OH OW) = W_g (Og x K) * X_ng (K x OH OW),
 *
 * with K = Cg KH KW and X_ng the im2col matrix: row (c, kh, kw), column
 * (oh, ow) holds input[n, g Cg + c, oh sh - ph + kh dh, ow sw - pw + kw dw],
 * or 0 in the padding.  X_ng is never built: each work item packs the
 * block of it that it multiplies (KC rows by at most NCB columns, in
 * panels of the micro-kernel's NR columns) straight from the input,
 * whatever its strides, and runs matmul.c's micro-kernel over it, which
 * reads the weights' rows as they are (see wpanel).  The output,
 * contiguous, is the GEMM's C: rows of OH OW elements.
 *
 * Work items are (n, g, column block, row block), sized so that they
 * share evenly among the threads (plan_items).  Each thread's pack buffer
 * is allocated before the pool runs (a pool thread never allocates: see
 * attention.c).
 *
 * The sums run in float32 in the micro-kernel's order (blocks of KC along
 * K), within matmul's tolerance for the op; the bias is added last.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define KC 256      /* rows of X per packed block */
#define NCB 256     /* columns of X per work item (a multiple of NR) */
#define MB_MAX 256  /* rows of W per work item at most */

/* A direct kernel: see DEFINE_DKERNEL. */
typedef void (*dkernel_fn)(int64_t kc, const float *a0, int64_t d2, const int64_t *off,
                           const float *w, float *acc, bool accumulate);

typedef struct conv_job {
  const float *x;             /* input element (0, 0, 0, 0) */
  int64_t xn, xc, xh, xw;     /* its strides, in elements (xn 0 unbatched) */
  const float *q;             /* the input as pack_x reads it: see prepare */
  int64_t qn, qc, qp, qh;     /* q's strides: image, channel, phase, row */
  int64_t Hq, Wq;             /* rows and columns of a prepared plane */
  int64_t nry, nrx;           /* row and column phases prepared */
  int64_t *ry, *rx;           /* those phases */
  int64_t *tap;               /* per (kh, kw): its offset in a channel of q */
  const float *bias;          /* [O] contiguous, or NULL */
  float *out;                 /* [N, O, OH, OW] contiguous */
  bp_device dev;              /* its device, for buffers */
  const float *w;             /* [O, K] contiguous */
  float *tail;                /* the last panels' rows, or NULL: see wpanel */
  float *scratch;             /* chunk_floats per chunk */
  int64_t N, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
  int64_t G, Cg, Og, K, nkb, mpanels;
  int64_t cols;               /* N OH OW: the batch is folded into the columns */
  int64_t ncb, colblocks;     /* columns per column block (<= NCB), blocks */
  int64_t mblocks, mrows;     /* row blocks, W rows per row block */
  int64_t items, per;
  int64_t chunk_floats;       /* scratch per chunk */
  cpu_ukernel uk;
  /* the direct path (see dconv_item) */
  dkernel_fn dk;
  int64_t nb, nob;            /* channels per block, blocks per group */
  int64_t *off;               /* [K]: step p's offset in a group's channels of q */
  int64_t hpr, halves, tiles; /* halves per output row, halves, tiles */
  int64_t tpb, tblocks;       /* tiles per block, blocks */
} conv_job;

/* A chunk's scratch: the packed block and its runs. */
typedef struct col_run {
  int64_t col, off, len, dst;
} col_run;
#define RUNS_MAX (2 * NCB + 2)
#define CHUNK_FLOATS (KC * NCB + (int64_t)(RUNS_MAX * sizeof(col_run) / sizeof(float)))

/* ---- Weights ------------------------------------------------------------ */

/* Panel q (mr rows) of group g's weights from K step p0, read as rows of
 * K elements by the micro-kernel: the weights themselves, except a last
 * panel of fewer than mr rows, which is copied with zero rows below it
 * (tail) because the micro-kernel reads all mr.  No packing: the weights
 * are read once per column block, and packing them cost more than that
 * where the output is small (ResNet's 7 x 7 layers). */
static const float *wpanel(const conv_job *j, int64_t g, int64_t q, int64_t p0) {
  int mr = j->uk.mr;
  if ((q + 1) * mr > j->Og) return j->tail + g * mr * j->K + p0;
  return j->w + (g * j->Og + q * mr) * j->K + p0;
}

/* ---- Input -------------------------------------------------------------- */

/*
 * The packer reads X_ng's row (c, kh, kw) over an output row as one run of
 * contiguous floats.  The input itself is read so where the convolution
 * has stride 1, no padding and contiguous rows; otherwise `prepare` first
 * copies each input plane into `q`, padded with zeros and split into
 * phases: plane (ry, rx) of channel c holds, at row a and column b, the
 * padded input at row a sh + ry and column b sw + rx.  Tap (kh, kw) reads
 * phase ((kh dh) % sh, (kw dw) % sw) from row (kh dh) / sh and column
 * (kw dw) / sw on, for every output row oh at a = oh + that row.  Only
 * the phases some tap reads are made.
 */
static CPU_CLONES void prepare_plane(const conv_job *j, int64_t n, int64_t c, float *dst) {
  const float *src = j->x + n * j->xn + c * j->xc;
  int64_t sw = j->sw, xs = j->sw * j->xw, Wq = j->Wq;
  for (int64_t iy = 0; iy < j->nry; iy++)
    for (int64_t ix = 0; ix < j->nrx; ix++) {
      int64_t ry = j->ry[iy], rx = j->rx[ix];
      float *d = dst + (iy * j->nrx + ix) * j->qp;
      /* columns [lo, hi) read iw = b sw + rx - pw inside [0, W) */
      int64_t lo = j->pw > rx ? (j->pw - rx + sw - 1) / sw : 0;
      int64_t hi = j->W + j->pw - rx > 0 ? (j->W + j->pw - rx + sw - 1) / sw : 0;
      if (lo > Wq) lo = Wq;
      if (hi > Wq) hi = Wq;
      if (hi < lo) hi = lo;
      for (int64_t a = 0; a < j->Hq; a++, d += Wq) {
        int64_t ih = a * j->sh + ry - j->ph;
        if (ih < 0 || ih >= j->H) {
          memset(d, 0, (size_t)Wq * sizeof *d);
          continue;
        }
        const float *s = src + ih * j->xh + (lo * sw + rx - j->pw) * j->xw;
        for (int64_t b = 0; b < lo; b++) d[b] = 0;
        if (xs == 1) /* constant strides, so that the loops vectorise */
          for (int64_t b = lo; b < hi; b++) d[b] = s[b - lo];
        else if (xs == 2)
          for (int64_t b = lo; b < hi; b++) d[b] = s[(b - lo) * 2];
        else
          for (int64_t b = lo; b < hi; b++) d[b] = s[(b - lo) * xs];
        for (int64_t b = hi; b < Wq; b++) d[b] = 0;
      }
    }
}

static void prepare_planes(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  int64_t C = j->G * j->Cg;
  for (int64_t i = begin; i < end; i++)
    prepare_plane(j, i / C, i % C, (float *)j->q + i / C * j->qn + i % C * j->qc);
}

/* The runs of columns [j0, j0 + ncols): pieces of output rows that do not
 * cross a panel, each at column col of the block and offset off of an
 * image's channel in q. */
static int64_t plan_runs(const conv_job *j, int64_t j0, int64_t ncols, col_run *r) {
  int64_t ohw = j->OH * j->OW, n = j0 / ohw, oh = j0 % ohw / j->OW, ow = j0 % j->OW, cnt = 0;
  int64_t nr = j->uk.nr;
  for (int64_t col = 0; col < ncols; cnt++) {
    int64_t len = j->OW - ow < ncols - col ? j->OW - ow : ncols - col;
    if (len > nr - col % nr) len = nr - col % nr;
    r[cnt] = (col_run){col, n * j->qn + oh * j->qh + ow, len, 0};
    col += len;
    ow += len;
    if (ow == j->OW) {
      ow = 0;
      if (++oh == j->OH) oh = 0, n++;
    }
  }
  return cnt;
}

/* Copies n <= 32 floats, in as few moves as the CPU allows: two of 16
 * (overlapping) from 16 on, two of 8 from 8, and so on. */
typedef float pack_v16 __attribute__((vector_size(64)));
typedef float pack_v8 __attribute__((vector_size(32)));
typedef float pack_v4 __attribute__((vector_size(16)));
#define PACK_MOVE(T, d, s)      \
  do {                          \
    T v_;                       \
    memcpy(&v_, (s), sizeof v_); \
    memcpy((d), &v_, sizeof v_); \
  } while (0)
static inline void copy_short(float *d, const float *s, int64_t n) {
  if (n >= 16) {
    PACK_MOVE(pack_v16, d, s);
    if (n > 16) PACK_MOVE(pack_v16, d + n - 16, s + n - 16);
  } else if (n >= 8) {
    PACK_MOVE(pack_v8, d, s);
    PACK_MOVE(pack_v8, d + n - 8, s + n - 8);
  } else if (n >= 4) {
    PACK_MOVE(pack_v4, d, s);
    PACK_MOVE(pack_v4, d + n - 4, s + n - 4);
  } else {
    for (int64_t t = 0; t < n; t++) d[t] = s[t];
  }
}

/* Packs rows [p0, p0 + kc) of the block's columns (their runs) into panels
 * of nr columns: value (p, c) at dst[(c / nr) kc nr + (p - p0) nr + c % nr],
 * columns past ncols zero. */
static CPU_CLONES void pack_x(const conv_job *j, int64_t g, int64_t p0, int64_t kc, col_run *runs,
                              int64_t nruns, int64_t ncols, float *dst) {
  int64_t nr = j->uk.nr, khw = j->KH * j->KW, npan = (ncols + nr - 1) / nr;
  int64_t zc = ncols % nr ? nr - ncols % nr : 0;
  float *zd = dst + (npan - 1) * kc * nr + ncols % nr;
  static const float zeros[32];
  for (int64_t r = 0; r < nruns; r++) runs[r].dst = runs[r].col / nr * kc * nr + runs[r].col % nr;
  for (int64_t p = p0; p < p0 + kc; p++, dst += nr, zd += nr) {
    const float *s = j->q + (g * j->Cg + p / khw) * j->qc + j->tap[p % khw];
    for (int64_t r = 0; r < nruns; r++) copy_short(dst + runs[r].dst, s + runs[r].off, runs[r].len);
    if (zc) copy_short(zd, zeros, zc);
  }
}

/* ---- The work items ----------------------------------------------------- */

/* Writes (or, when acc, adds) an m x n tile (rows of nr) at block column
 * jc of the output rows from o, where the tile's columns cross from one
 * image into the next. */
static void put_tile(const conv_job *j, const float *tile, int nr, int64_t o, int64_t jc,
                     int64_t m, int64_t n, bool acc) {
  int64_t ohw = j->OH * j->OW, O = j->G * j->Og;
  for (int64_t t = 0; t < n;) {
    int64_t img = (jc + t) / ohw, pix = (jc + t) % ohw, len = ohw - pix < n - t ? ohw - pix : n - t;
    for (int64_t i = 0; i < m; i++) {
      float *d = j->out + (img * O + o + i) * ohw + pix;
      const float *s = tile + i * nr + t;
      for (int64_t x = 0; x < len; x++) d[x] = acc ? d[x] + s[x] : s[x];
    }
    t += len;
  }
}

/* Item t: (g, column block, row block), the row block fastest. */
static void conv_item(const conv_job *j, int64_t t, float *bpack, col_run *runs) {
  int64_t mb = t % j->mblocks, rest = t / j->mblocks, cb = rest % j->colblocks, g = rest / j->colblocks;
  int64_t ohw = j->OH * j->OW, O = j->G * j->Og;
  int64_t j0 = cb * j->ncb, ncols = j->cols - j0 < j->ncb ? j->cols - j0 : j->ncb;
  int64_t i0 = mb * j->mrows, mrows = j->Og - i0 < j->mrows ? j->Og - i0 : j->mrows;
  int mr = j->uk.mr, nr = j->uk.nr;
  float tile[8 * 32];
  int64_t nruns = plan_runs(j, j0, ncols, runs);
  for (int64_t kb = 0; kb < j->nkb; kb++) {
    int64_t p0 = kb * KC, kc = j->K - p0 < KC ? j->K - p0 : KC;
    pack_x(j, g, p0, kc, runs, nruns, ncols, bpack);
    for (int64_t ir = 0; ir < mrows; ir += mr) {
      const float *a = wpanel(j, g, (i0 + ir) / mr, p0);
      int64_t m = mrows - ir < mr ? mrows - ir : mr, o = g * j->Og + i0 + ir;
      for (int64_t jr = 0; jr < ncols; jr += nr) {
        int64_t n = ncols - jr < nr ? ncols - jr : nr, jc = j0 + jr, pix = jc % ohw;
        if (pix + n <= ohw) {
          float *c = j->out + (jc / ohw * O + o) * ohw + pix;
          j->uk.fn(kc, a, j->K, bpack + jr * kc, c, ohw, m, n, kb > 0);
        } else {
          j->uk.fn(kc, a, j->K, bpack + jr * kc, tile, nr, m, n, false);
          put_tile(j, tile, nr, o, jc, m, n, kb > 0);
        }
      }
    }
  }
  if (j->bias)
    for (int64_t r = 0; r < nruns; r++) {
      int64_t jc = j0 + runs[r].col, img = jc / ohw, pix = jc % ohw;
      for (int64_t i = 0; i < mrows; i++) {
        float b = j->bias[g * j->Og + i0 + i], *ci = j->out + (img * O + g * j->Og + i0 + i) * ohw + pix;
        for (int64_t x = 0; x < runs[r].len; x++) ci[x] += b;
      }
    }
}

/* Chunks [begin, end) of the items, each with its scratch. */
static void conv_chunks(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    float *bpack = j->scratch + ch * j->chunk_floats;
    int64_t t0 = ch * j->per, t1 = t0 + j->per < j->items ? t0 + j->per : j->items;
    for (int64_t t = t0; t < t1; t++)
      conv_item(j, t, bpack, (col_run *)(bpack + KC * NCB));
  }
}

/* ---- The direct path ---------------------------------------------------- */

/*
 * Where the output has many pixels for its weights, the convolution runs
 * without im2col, from q as it is.  A tile of the output is two "halves",
 * runs of DHALF pixels of an output row (the last of a row may be short:
 * its other pixels are computed and dropped; the two halves may lie in
 * different rows and images), by nb output channels: step p = (c, kh, kw)
 * adds each of the tile's input values at q + off[p] (a run of DHALF
 * floats per half), broadcast, times nb weights.  The weights are packed
 * once per call, transposed (pack_w); each tile's sums go to a buffer of
 * 2 DHALF rows of nb and from there, transposed, into the output.  Tiles
 * of 14 pixels fit ResNet's outputs (7, 14, 28, 56 and 112 wide) exactly,
 * and nb (32 with AVX-512) its channel counts.
 */
#define DHALF 7
#define DKC 256     /* steps per block of the sums */
#define DBYTES (512 << 10) /* a work item's sums and input per block of steps */

/* The micro-kernel of the direct path: a tile over kc steps; the halves
 * start at a0 and a0 + d2; acc gets (or, when accumulate, adds) the sums,
 * pixel-major.  nb = NV VLEN. */
#define DEFINE_DKERNEL(name, VT, VLEN, NV, ATTR)                                              \
  static ATTR void name(int64_t kc, const float *a0, int64_t d2, const int64_t *off,         \
                        const float *w, float *acc, bool accumulate) {                       \
    VT s[2 * DHALF][NV];                                                                     \
    _Pragma("GCC unroll 16") for (int i = 0; i < 2 * DHALF; i++)                             \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) s[i][v] = (VT){0};              \
    for (int64_t p = 0; p < kc; p++) {                                                       \
      const float *a = a0 + off[p], *b = a + d2;                                             \
      VT wv[NV];                                                                             \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                   \
          memcpy(&wv[v], w + (p * NV + v) * VLEN, sizeof wv[v]);                             \
      _Pragma("GCC unroll 16") for (int i = 0; i < 2 * DHALF; i++) {                         \
        float x = i < DHALF ? a[i] : b[i - DHALF];                                           \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) s[i][v] += x * wv[v];           \
      }                                                                                      \
    }                                                                                        \
    _Pragma("GCC unroll 16") for (int i = 0; i < 2 * DHALF; i++)                             \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                               \
      float *d = acc + (i * NV + v) * VLEN;                                                  \
      VT cur = s[i][v];                                                                      \
      if (accumulate) {                                                                      \
        VT old;                                                                              \
        memcpy(&old, d, sizeof old);                                                         \
        cur += old;                                                                          \
      }                                                                                      \
      memcpy(d, &cur, sizeof cur);                                                           \
    }                                                                                        \
  }

/* As matmul.c: the micro-kernels want a*b + c contracted into FMA. */
#if defined(__GNUC__) && !defined(__clang__)
#define DK_CONTRACT optimize("fp-contract=fast")
#else
#define DK_CONTRACT
#endif
#if defined(__x86_64__) && defined(__GNUC__)
DEFINE_DKERNEL(dconv_avx512, pack_v16, 16, 2, __attribute__((target("avx512f"), DK_CONTRACT)))
DEFINE_DKERNEL(dconv_avx2, pack_v8, 8, 1, __attribute__((target("avx2,fma"), DK_CONTRACT)))
#endif
DEFINE_DKERNEL(dconv_base, pack_v4, 4, 1, __attribute__((DK_CONTRACT)))

/* The direct kernel for the micro-kernels' level, and its nb. */
static dkernel_fn pick_dkernel(int64_t *nb) {
#if defined(__x86_64__) && defined(__GNUC__)
  int level = cpu_gemm_level();
  *nb = level == 2 ? 32 : level == 1 ? 8 : 4;
  return level == 2 ? dconv_avx512 : level == 1 ? dconv_avx2 : dconv_base;
#else
  *nb = 4;
  return dconv_base;
#endif
}

/* Writes value (p, o) of rows [o0, o1) by steps [p0, p1) of src (rows of
 * K) at d[p nb + o]. */
static CPU_CLONES void pack_w_part(const float *src, int64_t K, float *d, int64_t nb, int64_t o0,
                                   int64_t o1, int64_t p0, int64_t p1) {
  for (int64_t q = p0; q < p1; q += 64) {
    int64_t qe = p1 - q < 64 ? p1 : q + 64;
    for (int64_t o = o0; o < o1; o++)
      for (int64_t p = q; p < qe; p++) d[p * nb + o] = src[o * K + p];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define UNPACK_LO64(a, b) \
  _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
#define UNPACK_HI64(a, b) \
  _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
/* Transposes 16 rows of 16 floats (rows ls apart) into dst (rows ld
 * apart), in registers. */
__attribute__((target("avx512f"))) static void transpose16(const float *src, int64_t ls,
                                                           float *dst, int64_t ld) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * ls);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = UNPACK_LO64(t[i], t[i + 2]);
    r[i + 1] = UNPACK_HI64(t[i], t[i + 2]);
    r[i + 2] = UNPACK_LO64(t[i + 1], t[i + 3]);
    r[i + 3] = UNPACK_HI64(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; i++) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ld, r[i]);
}
#endif

/* Packs steps [p0, p0 + kc) of channel block ob of group g's weights:
 * value (p, o) at d[(p - p0) nb + o], channels past Og zero.  With
 * AVX-512, 16 x 16 squares at a time. */
static void pack_w(const conv_job *j, int64_t g, int64_t ob, int64_t p0, int64_t kc, float *d) {
  int64_t nb = j->nb, K = j->K, o0 = ob * nb, cnt = j->Og - o0 < nb ? j->Og - o0 : nb;
  const float *src = j->w + (g * j->Og + o0) * K + p0;
  int64_t osq = 0, psq = 0; /* rows and steps done in squares */
#if defined(__x86_64__) && defined(__GNUC__)
  if (j->dk == dconv_avx512) {
    osq = cnt / 16 * 16, psq = kc / 16 * 16;
    for (int64_t p = 0; p < psq; p += 16)
      for (int64_t o = 0; o < osq; o += 16) transpose16(src + o * K + p, K, d + p * nb + o, nb);
  }
#endif
  pack_w_part(src, K, d, nb, 0, osq, psq, kc);
  pack_w_part(src, K, d, nb, osq, cnt, 0, kc);
  for (int64_t p = 0; p < kc; p++)
    for (int64_t o = cnt; o < nb; o++) d[p * nb + o] = 0;
}

/* Where half h starts: its image, output row and column. */
static void half_at(const conv_job *j, int64_t h, int64_t *n, int64_t *oh, int64_t *ow) {
  int64_t r = h / j->hpr;
  *n = r / j->OH, *oh = r % j->OH, *ow = h % j->hpr * DHALF;
}

static int64_t half_off(const conv_job *j, int64_t h) {
  int64_t n, oh, ow;
  half_at(j, h, &n, &oh, &ow);
  return n * j->qn + oh * j->qh + ow;
}

/* Writes the sums of the tile of halves h0 and h0 + 1 (acc, pixel-major,
 * rows of nb), plus the bias, to output channels [o0, o0 + cnt).  (A
 * transposing store through 16 x 16 squares was slower.) */
static void store_tile(const conv_job *j, const float *acc, int64_t h0, int64_t o0, int64_t cnt) {
  int64_t nb = j->nb, ohw = j->OH * j->OW, O = j->G * j->Og;
  for (int64_t k = 0; k < 2 && h0 + k < j->halves; k++) {
    int64_t n, oh, ow;
    half_at(j, h0 + k, &n, &oh, &ow);
    int64_t len = j->OW - ow < DHALF ? j->OW - ow : DHALF;
    float *dst = j->out + (n * O + o0) * ohw + oh * j->OW + ow;
    for (int64_t o = 0; o < cnt; o++) {
      float b = j->bias ? j->bias[o0 + o] : 0.0f, *d = dst + o * ohw;
      for (int64_t i = 0; i < len; i++) d[i] = acc[(k * DHALF + i) * nb + o] + b;
    }
  }
}

/* Item t: (g, tile block, channel block), the channel block fastest (the
 * next item reads the same input, likely still in the cache).  Per
 * block of DKC steps it packs its weights into wbuf, then runs its tiles
 * over them; acc holds its tiles' sums. */
static void dconv_item(const conv_job *j, int64_t t, float *wbuf, float *acc) {
  int64_t ob = t % j->nob, rest = t / j->nob, tb = rest % j->tblocks, g = rest / j->tblocks;
  int64_t nb = j->nb, t0 = tb * j->tpb, t1 = j->tiles - t0 < j->tpb ? j->tiles : t0 + j->tpb;
  const float *qg = j->q + g * j->Cg * j->qc;
  for (int64_t p0 = 0; p0 < j->K; p0 += DKC) {
    int64_t kc = j->K - p0 < DKC ? j->K - p0 : DKC;
    pack_w(j, g, ob, p0, kc, wbuf);
    /* the next block's weights (rows of the block's channels) are fetched
     * into the cache a few lines per tile, while this block runs */
    int64_t nkc = j->K - p0 - kc < DKC ? j->K - p0 - kc : DKC, lpr = (nkc + 15) / 16;
    int64_t rows = j->Og - ob * nb < nb ? j->Og - ob * nb : nb, lines = nkc > 0 ? rows * lpr : 0;
    int64_t step = (lines + (t1 - t0) - 1) / (t1 - t0), li = 0;
    const float *next = j->w + (g * j->Og + ob * nb) * j->K + p0 + kc;
    for (int64_t tt = t0; tt < t1; tt++) {
      for (int64_t e = li + step; li < lines && li < e; li++)
        __builtin_prefetch(next + li / lpr * j->K + li % lpr * 16, 0, 2);
      int64_t a0 = half_off(j, 2 * tt), a1 = 2 * tt + 1 < j->halves ? half_off(j, 2 * tt + 1) : a0;
      j->dk(kc, qg + a0, a1 - a0, j->off + p0, wbuf, acc + (tt - t0) * 2 * DHALF * nb, p0 > 0);
    }
  }
  int64_t o0 = g * j->Og + ob * nb, cnt = j->Og - ob * nb < nb ? j->Og - ob * nb : nb;
  for (int64_t tt = t0; tt < t1; tt++) store_tile(j, acc + (tt - t0) * 2 * DHALF * nb, 2 * tt, o0, cnt);
}

static void dconv_chunks(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    int64_t t0 = ch * j->per, t1 = t0 + j->per < j->items ? t0 + j->per : j->items;
    float *wbuf = j->scratch + ch * j->chunk_floats;
    for (int64_t t = t0; t < t1; t++) dconv_item(j, t, wbuf, wbuf + DKC * j->nb);
  }
}

/* ---- The kernel --------------------------------------------------------- */

/* Whether n items share evenly enough among the threads: a multiple of
 * them, or so many that the last round matters little. */
static bool balanced(int64_t n, int64_t threads) {
  return n % threads == 0 || n >= 8 * threads;
}

/* Splits Og into more row blocks (of whole panels) until the items share
 * evenly or every block is one panel. */
static void split_rows(conv_job *j, int64_t threads) {
  int64_t outer = j->G * j->colblocks;
  while (!balanced(outer * j->mblocks, threads) && j->mblocks < j->mpanels) j->mblocks++;
}

/* Narrows the column blocks (in whole panels) until the items share
 * evenly or every block is one panel. */
static void split_columns(conv_job *j, int64_t threads) {
  int64_t nr = j->uk.nr, panels = (j->cols + nr - 1) / nr;
  for (int64_t c = j->colblocks;; c++) {
    int64_t per = (panels + c - 1) / c; /* panels per block */
    j->ncb = per * nr;
    j->colblocks = (j->cols + j->ncb - 1) / j->ncb;
    if (balanced(j->G * j->colblocks * j->mblocks, threads) || per == 1) break;
  }
}

/* Sizes the work items: column blocks of at most NCB columns and row
 * blocks of at most MB_MAX rows, then split further until they share
 * evenly among the threads.  A row block packs its own input block and a
 * column block reads all its rows' weights, so the split goes first along
 * the dimension whose other operand is smaller: rows where the weights
 * (Og x K) outweigh the input block (K x N OH OW), as in ResNet's last
 * layers, else columns. */
static void plan_items(conv_job *j, int64_t threads) {
  int64_t nr = j->uk.nr, panels = (j->cols + nr - 1) / nr;
  j->ncb = panels * nr < NCB ? panels * nr : NCB;
  j->colblocks = (j->cols + j->ncb - 1) / j->ncb;
  j->mblocks = (j->Og + MB_MAX - 1) / MB_MAX;
  if (j->Og >= j->cols) {
    split_rows(j, threads);
    split_columns(j, threads);
  } else {
    split_columns(j, threads);
    split_rows(j, threads);
  }
  j->mrows = (j->mpanels + j->mblocks - 1) / j->mblocks * j->uk.mr;
  j->mblocks = (j->Og + j->mrows - 1) / j->mrows;
  j->items = j->G * j->colblocks * j->mblocks;
}

/* Adds v to the list l of n values unless it holds it already. */
static void add_phase(int64_t *l, int64_t *n, int64_t v) {
  for (int64_t i = 0; i < *n; i++)
    if (l[i] == v) return;
  l[(*n)++] = v;
}

/* Sets up how pack_x reads the input (see prepare_plane): the phases, the
 * planes' sizes and strides, and the taps' offsets (ints: KH + KW + KH KW
 * of them).  Returns the floats that q needs (0: the input is read as it
 * is). */
static int64_t plan_input(conv_job *j, int64_t *ints, bool copy) {
  int64_t khw = j->KH * j->KW;
  j->ry = ints, j->rx = ints + j->KH, j->tap = ints + j->KH + j->KW;
  if (!copy && j->sh == 1 && j->sw == 1 && j->ph == 0 && j->pw == 0 && j->xw == 1) {
    j->q = j->x, j->qn = j->xn, j->qc = j->xc, j->qh = j->xh, j->qp = 0;
    for (int64_t k = 0; k < khw; k++) j->tap[k] = k / j->KW * j->dh * j->xh + k % j->KW * j->dw;
    return 0;
  }
  j->nry = j->nrx = 0;
  for (int64_t k = 0; k < j->KH; k++) add_phase(j->ry, &j->nry, k * j->dh % j->sh);
  for (int64_t k = 0; k < j->KW; k++) add_phase(j->rx, &j->nrx, k * j->dw % j->sw);
  /* the padded rows and columns that some output reads */
  int64_t hp = (j->OH - 1) * j->sh + (j->KH - 1) * j->dh + 1;
  int64_t wp = (j->OW - 1) * j->sw + (j->KW - 1) * j->dw + 1;
  j->Hq = (hp + j->sh - 1) / j->sh, j->Wq = (wp + j->sw - 1) / j->sw;
  j->qh = j->Wq, j->qp = j->Hq * j->Wq, j->qc = j->nry * j->nrx * j->qp;
  j->qn = j->G * j->Cg * j->qc;
  for (int64_t k = 0; k < khw; k++) {
    int64_t y = k / j->KW * j->dh, x = k % j->KW * j->dw, iy = 0, ix = 0;
    while (j->ry[iy] != y % j->sh) iy++;
    while (j->rx[ix] != x % j->sw) ix++;
    j->tap[k] = (iy * j->nrx + ix) * j->qp + y / j->sh * j->qh + x / j->sw;
  }
  /* the direct path reads up to DHALF - 1 floats past an output row */
  return j->N * j->qn + DHALF;
}

/* Sizes the direct path's work items: tiles in blocks of up to DTILES,
 * fewer until the items share evenly among the threads. */
static void plan_direct(conv_job *j, int64_t threads) {
  j->dk = pick_dkernel(&j->nb);
  j->nob = (j->Og + j->nb - 1) / j->nb;
  j->hpr = (j->OW + DHALF - 1) / DHALF;
  j->halves = j->N * j->OH * j->hpr;
  j->tiles = (j->halves + 1) / 2;
  /* Tiles per block: as many as keep a block's sums and the input it
   * reads per block of steps within DBYTES (that input is read again for
   * each channel block; the weights are packed again for each tile
   * block).  Rows of q per tile block, per channel and phase: the output
   * rows' and the kernel's reach below them. */
  int64_t khw = j->KH * j->KW, ch = (j->K < DKC ? j->K : DKC) / khw + 1;
  int64_t phases = (j->sh < j->KH ? j->sh : j->KH) * (j->sw < j->KW ? j->sw : j->KW);
  int64_t reach = (j->KH - 1) * j->dh / j->sh + 1, wq = j->OW + (j->KW - 1) * j->dw / j->sw + 1;
  for (j->tpb = j->tiles; j->tpb > 1; j->tpb -= (j->tpb + 7) / 8) {
    int64_t rows = j->tpb * 2 / j->hpr + reach;
    if ((rows * wq * phases * ch + j->tpb * 2 * DHALF * j->nb) * 4 <= DBYTES) break;
  }
  j->tblocks = (j->tiles + j->tpb - 1) / j->tpb;
  while (!balanced(j->G * j->nob * j->tblocks, threads) && j->tblocks < j->tiles) j->tblocks++;
  j->tpb = (j->tiles + j->tblocks - 1) / j->tblocks;
  j->tblocks = (j->tiles + j->tpb - 1) / j->tpb;
  j->items = j->G * j->nob * j->tblocks;
  j->chunk_floats = DKC * j->nb + j->tpb * 2 * DHALF * j->nb;
}

/* Whether the direct path should be the faster: the multiply-adds each
 * path does (with what its tiles or panels leave unused), plus its copies
 * counted as multiply-adds: about 16 (a cycle's) per float that the
 * direct path packs (its weights, read from memory and transposed) or
 * stores transposed, 5 per float that the GEMM packs.  Measured on
 * ResNet-18's layers, this picks the faster path where they differ by
 * more than a few percent. */
static bool prefer_direct(const conv_job *d, const conv_job *gm) {
  double G = (double)d->G, K = (double)d->K, nr = gm->uk.nr, mr = gm->uk.mr;
  double dch = (double)(d->nob * d->nb);
  double direct = G * dch * (double)(d->tiles * 2 * DHALF) * K +
                  16 * G * dch * K * (double)d->tblocks + 16 * G * (double)d->Og * (double)d->cols;
  double gemm = G * (double)gm->mpanels * mr * ceil((double)gm->cols / nr) * nr * K +
                5 * G * K * (double)gm->cols * (double)gm->mblocks;
  return direct < gemm;
}

/* BP_CONV_PATH: "gemm" or "direct" takes that path for every call (tests
 * run both); unset, prefer_direct decides.  Read once. */
enum { PATH_UNREAD, PATH_AUTO, PATH_GEMM, PATH_DIRECT };
static atomic_int conv_path;

static int chosen_path(void) {
  int p = atomic_load_explicit(&conv_path, memory_order_relaxed);
  if (p == PATH_UNREAD) {
    const char *env = getenv("BP_CONV_PATH");
    p = env && !strcmp(env, "gemm") ? PATH_GEMM : env && !strcmp(env, "direct") ? PATH_DIRECT : PATH_AUTO;
    atomic_store_explicit(&conv_path, p, memory_order_relaxed);
  }
  return p;
}

/* Plans and runs the convolution, the weights read (GEMM) or packed
 * (direct) from j->w. */
static bp_status conv_run(const bp_kernel_ctx *ctx, conv_job *j) {
  int64_t threads = cpu_num_threads();
  j->uk = cpu_gemm_ukernel_rows();
  j->nkb = (j->K + KC - 1) / KC;
  j->mpanels = (j->Og + j->uk.mr - 1) / j->uk.mr;
  j->cols = j->N * j->OH * j->OW;
  conv_job d = *j;
  j->chunk_floats = CHUNK_FLOATS;
  plan_items(j, threads);
  plan_direct(&d, threads);
  int path = chosen_path();
  bool direct = path == PATH_AUTO ? prefer_direct(&d, j) : path == PATH_DIRECT;
  if (direct) *j = d;
  /* Up to four chunks a thread, handed out as threads come free (see
   * attention.c); the items are sized to share evenly among them. */
  int64_t chunks = j->items < 4 * threads ? j->items : 4 * threads;
  j->per = (j->items + chunks - 1) / chunks;
  int64_t mr = j->uk.mr, rem = direct ? 0 : j->Og % mr, nints = j->KH + j->KW + j->KH * j->KW;
  int64_t *ints = malloc((size_t)(nints + (direct ? j->K : 0)) * sizeof *ints);
  int64_t qfloats = ints ? plan_input(j, ints, direct) : 0;
  int64_t wfloats = rem ? j->G * mr * j->K : 0;
  /* The buffers come from the host's allocator, which keeps large blocks
   * for reuse: from malloc, they went back to the system when freed, and
   * every call paid a page fault per 4 KiB to touch megabytes again. */
  int64_t floats = wfloats + qfloats + chunks * j->chunk_floats;
  bp_tensor *buf = NULL;
  if (ints && cpu_host->tensor_empty(j->dev, BP_FLOAT32, 1, &floats, &buf)) buf = NULL;
  float *mem = buf ? view_of(buf)->data : NULL;
  if (!mem) {
    free(ints);
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld pack buffers of %lld floats",
                   ctx->op_name, (long long)chunks, (long long)j->chunk_floats);
  }
  j->scratch = mem + wfloats + qfloats;
  if (direct) {
    j->off = ints + nints;
    for (int64_t p = 0; p < j->K; p++)
      j->off[p] = p / (j->KH * j->KW) * j->qc + j->tap[p % (j->KH * j->KW)];
  } else if (rem) {
    j->tail = mem;
    memset(j->tail, 0, (size_t)wfloats * sizeof(float));
    for (int64_t g = 0; g < j->G; g++)
      memcpy(j->tail + g * mr * j->K, j->w + (g * j->Og + j->Og - rem) * j->K,
             (size_t)(rem * j->K) * sizeof(float));
  }
  if (qfloats) {
    j->q = mem + wfloats;
    int64_t planes = j->N * j->G * j->Cg;
    cpu_parallel_for(planes, CPU_GRAIN / (j->qc + 1) + 1, prepare_planes, j);
  }
  cpu_parallel_items(chunks, direct ? dconv_chunks : conv_chunks, j);
  cpu_host->tensor_release(buf);
  free(ints);
  return BP_OK;
}

static bp_status conv2d_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out), *vx = view_of(args[0].u.tensor);
  if (vo->numel == 0) return BP_OK;
  conv_job j;
  memset(&j, 0, sizeof j);
  int32_t nd = vx->ndim; /* 4, or 3 unbatched */
  j.x = vx->data;
  j.N = nd == 4 ? vx->sizes[0] : 1;
  j.xn = nd == 4 ? vx->strides[0] : 0;
  j.xc = vx->strides[nd - 3], j.xh = vx->strides[nd - 2], j.xw = vx->strides[nd - 1];
  j.H = vx->sizes[nd - 2], j.W = vx->sizes[nd - 1];
  j.OH = vo->sizes[vo->ndim - 2], j.OW = vo->sizes[vo->ndim - 1];
  j.out = vo->data;
  j.dev = vo->device;
  const int64_t *lists[3][2];
  for (int a = 0; a < 3; a++) { /* stride, padding, dilation: one value or two */
    const bp_value *v = &args[3 + a];
    lists[a][0] = &v->u.ints[0];
    lists[a][1] = &v->u.ints[v->len - 1];
  }
  j.sh = *lists[0][0], j.sw = *lists[0][1], j.ph = *lists[1][0], j.pw = *lists[1][1];
  j.dh = *lists[2][0], j.dw = *lists[2][1];
  j.G = args[6].u.i;
  bp_tensor *w = NULL, *b = NULL;
  bp_status st = cpu_cast_to(args[1].u.tensor, BP_FLOAT32, &w); /* contiguous */
  if (!st && args[2].tag == BP_TAG_TENSOR) st = cpu_cast_to(args[2].u.tensor, BP_FLOAT32, &b);
  if (st) {
    cpu_host->tensor_release(w);
    return st;
  }
  const bp_tensor_view *vw = view_of(w);
  j.bias = b ? view_of(b)->data : NULL;
  j.Og = vw->sizes[0] / j.G, j.Cg = vw->sizes[1], j.KH = vw->sizes[2], j.KW = vw->sizes[3];
  j.K = j.Cg * j.KH * j.KW;
  if (j.K == 0) { /* no input channels: every sum is empty */
    int64_t ohw = j.OH * j.OW, o = vw->sizes[0];
    for (int64_t i = 0; i < vo->numel; i++) j.out[i] = j.bias ? j.bias[i / ohw % o] : 0.0f;
    cpu_host->tensor_release(w);
    cpu_host->tensor_release(b);
    return BP_OK;
  }
  j.w = vw->data;
  st = conv_run(ctx, &j);
  cpu_host->tensor_release(w);
  cpu_host->tensor_release(b);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(conv2d_kernel, conv2d_impl)

bp_status cpu_register_conv(bp_library *lib) {
  /* float32; the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "conv2d", conv2d_kernel, dtypes);
}
