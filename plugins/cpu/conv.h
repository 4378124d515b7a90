/*
 * plugins/cpu/conv.h - what conv.c (conv2d, its input and its implicit
 * GEMM) and conv_direct.c (its direct path) share.
 */
#ifndef BP_PLUGINS_CPU_CONV_H
#define BP_PLUGINS_CPU_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

#define DHALF 7 /* output pixels per run of the direct path's tiles (two runs a tile) */

/* A micro-kernel of the direct path: see DEFINE_DKERNEL in conv_direct.c. */
typedef void (*dkernel_fn)(int64_t kc, const float *a0, int64_t d2, const int64_t *off,
                           const float *w, float *acc, bool accumulate);

typedef struct conv_job {
  const float *x;             /* input element (0, 0, 0, 0) */
  int64_t xn, xc, xh, xw;     /* its strides, in elements (xn 0 unbatched) */
  const float *q;             /* the input as the paths read it: see prepare_plane */
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
  /* the direct path (conv_direct.c) */
  dkernel_fn dk;
  int64_t nb, nob;            /* channels per block, blocks per group */
  int64_t *off;               /* [K]: step p's offset in a group's channels of q */
  int64_t hpr, halves, tiles; /* halves per output row, halves, tiles */
  int64_t tpb, tblocks;       /* tiles per block, blocks */
} conv_job;

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

/* Whether n items share evenly enough among the threads: a multiple of
 * them, or so many that the last round matters little. */
static inline bool cpu_conv_balanced(int64_t n, int64_t threads) {
  return n % threads == 0 || n >= 8 * threads;
}

/* The direct path (conv_direct.c): sizes its work items (the job's input
 * planned, its GEMM plan not needed); estimates whether it beats the GEMM
 * planned in gm; runs chunks [begin, end) of its items (ctx: the job,
 * with q, off and scratch set). */
void cpu_conv_plan_direct(conv_job *j, int64_t threads);
bool cpu_conv_prefer_direct(const conv_job *d, const conv_job *gm);
void cpu_conv_direct_chunks(void *ctx, int64_t begin, int64_t end);

#endif /* BP_PLUGINS_CPU_CONV_H */
