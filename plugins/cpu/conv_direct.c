/*
 * plugins/cpu/conv_direct.c - conv2d's direct path (see conv.c).
 *
 * Where the output has many pixels for its weights, the convolution runs
 * without im2col, from the prepared input q as it is.  A tile of the
 * output is two "halves", runs of DHALF pixels of an output row (the last
 * of a row may be short: its other pixels are computed and dropped; the
 * two halves may lie in different rows and images), by nb output channels
 * (32 with AVX-512, 8 with AVX2, 4 otherwise): step p = (c, kh, kw) adds
 * each of the tile's input values, read at q + off[p] (a run of DHALF
 * floats per half), broadcast, times nb weights.  Tiles of 14 pixels fit
 * ResNet's outputs (7, 14, 28, 56 and 112 wide) exactly, and blocks of 32
 * channels its channel counts, where the implicit GEMM's panels of 32
 * positions leave parts unused at 7x7 and 14x14 and its packing of the
 * input's windows costs a tenth of a layer with 64 output channels.
 *
 * A work item is (group, block of tiles, block of channels).  For each
 * block of DKC steps it packs its channels' weights, transposed (pack_w),
 * then runs its tiles over them; the sums stay in a buffer, pixel-major,
 * until the last block, and go from there, transposed, into the output
 * with the bias.  The weights are thus read once per block of tiles, and
 * the input once per block of channels.
 *
 * The sums run in float32 in step order, in blocks of DKC steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

void cpu_conv_direct_chunks(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    int64_t t0 = ch * j->per, t1 = t0 + j->per < j->items ? t0 + j->per : j->items;
    float *wbuf = j->scratch + ch * j->chunk_floats;
    for (int64_t t = t0; t < t1; t++) dconv_item(j, t, wbuf, wbuf + DKC * j->nb);
  }
}

/* Sizes the work items: (group, block of tiles, block of channels). */
void cpu_conv_plan_direct(conv_job *j, int64_t threads) {
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
  while (!cpu_conv_balanced(j->G * j->nob * j->tblocks, threads) && j->tblocks < j->tiles) j->tblocks++;
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
bool cpu_conv_prefer_direct(const conv_job *d, const conv_job *gm) {
  double G = (double)d->G, K = (double)d->K, nr = gm->uk.nr, mr = gm->uk.mr;
  double dch = (double)(d->nob * d->nb);
  double direct = G * dch * (double)(d->tiles * 2 * DHALF) * K +
                  16 * G * dch * K * (double)d->tblocks + 16 * G * (double)d->Og * (double)d->cols;
  double gemm = G * (double)gm->mpanels * mr * ceil((double)gm->cols / nr) * nr * K +
                5 * G * K * (double)gm->cols * (double)gm->mblocks;
  return direct < gemm;
}
