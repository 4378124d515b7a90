/*
 * plugins/cpu/matmul.c - matmul, as torch.matmul.
 *
 * The meta function has sized the result; this file reduces every call to
 * GEMMs, C (m x n, row-major) = A (m x k) * B (k x n), where A and B may
 * have any strides:
 *
 *   - a 1-D first argument is one row, a 1-D second argument one column;
 *   - batch dimensions broadcast (a stride of 0 repeats a matrix), and when
 *     the second argument has no batch of its own and the first one's
 *     batch and rows lie in memory as one run of rows, the batch is folded
 *     into m: one large GEMM instead of many small ones.
 *
 * A float32 or float64 GEMM goes to CBLAS (cblas_sgemm / cblas_dgemm) when
 * a BLAS library could be loaded (blas.c) and, for a large GEMM, when it
 * was the faster of the two paths on this machine (use_blas).
 *
 * Otherwise, and always for float16 and bfloat16 (which it converts to
 * float32 as it packs them, and so accumulates in float32), a blocked
 * kernel here does the work: B is packed in panels of NR columns, A in
 * panels of MR rows, and a register-blocked micro-kernel multiplies one
 * MR x NR tile over a block of k.  The micro-kernel is compiled for
 * AVX-512, for AVX2+FMA and for baseline SIMD, each with the tile that fits
 * its registers, and chosen at run time.  Row blocks run in parallel;
 * matrix-vector products have their own loops.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu.h"

/* ------------------------------------------------------------------------ */
/* Micro-kernels                                                            */
/* ------------------------------------------------------------------------ */

/*
 * A micro-kernel multiplies an MR-row panel of packed A by an NR-column
 * panel of packed B over kc steps and writes (or, when accumulate, adds)
 * the m x n top-left part of the MR x NR tile into C.  Packed A holds MR
 * values per step, packed B NR values per step.  The "rows" kernels read
 * A as MR rows of lda elements instead (conv.c's weights, unpacked); the
 * others ignore lda.
 */
typedef cpu_ukernel_fn ukernel_fn;

typedef struct ukernel {
  ukernel_fn fn;
  int mr, nr;
} ukernel;

typedef float vf16 __attribute__((vector_size(64)));
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef double vd8 __attribute__((vector_size(64)));
typedef double vd4 __attribute__((vector_size(32)));
typedef double vd2 __attribute__((vector_size(16)));

/* The ISO C mode the project builds in turns off contraction of a*b + c
 * into FMA; the micro-kernels want it, and GCC can turn it back on per
 * function. */
#if defined(__GNUC__) && !defined(__clang__)
#define UK_CONTRACT optimize("fp-contract=fast")
#else
#define UK_CONTRACT
#endif

/*
 * Defines a micro-kernel with elements T, vectors VT of VLEN elements, an
 * MR x (NV * VLEN) tile held in MR * NV vector registers, compiled with
 * ATTR.  The loops are unrolled completely so the tile stays in registers.
 */
#define DEFINE_UKERNEL(name, T, VT, VLEN, MR, NV, ATTR, AIDX)                              \
  static ATTR void name(int64_t kc, const void *ap, int64_t lda, const void *bp, void *cp, \
                        int64_t ldc, int64_t m, int64_t n, bool accumulate) {              \
    (void)lda;                                                                             \
    const T *a = ap, *b = bp;                                                              \
    T *c = cp;                                                                             \
    VT acc[MR][NV];                                                                        \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                  \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = (VT){0};          \
    for (int64_t p = 0; p < kc; p++) {                                                     \
      VT bv[NV];                                                                           \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                 \
          memcpy(&bv[v], b + (p * NV + v) * VLEN, sizeof bv[v]);                           \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                              \
        T s = a[AIDX(MR)];                                                                 \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] += s * bv[v];       \
      }                                                                                    \
    }                                                                                      \
    if (m == MR && n == NV * VLEN) {                                                       \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                           \
        T *dst = c + i * ldc + v * VLEN;                                                   \
        VT cur = acc[i][v];                                                                \
        if (accumulate) {                                                                  \
          VT old;                                                                          \
          memcpy(&old, dst, sizeof old);                                                   \
          cur += old;                                                                      \
        }                                                                                  \
        memcpy(dst, &cur, sizeof cur);                                                     \
      }                                                                                    \
      return;                                                                              \
    }                                                                                      \
    T tile[MR][NV * VLEN];                                                                 \
    memcpy(tile, acc, sizeof tile);                                                        \
    for (int64_t i = 0; i < m; i++)                                                        \
      for (int64_t j = 0; j < n; j++)                                                      \
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i][j] : tile[i][j];            \
  }

#define PACKED(mr) p * (mr) + i /* A packed: mr values per step */
#define ROWS(mr) i * lda + p      /* A as rows */
#define AVX512 __attribute__((target("avx512f"), UK_CONTRACT))
#define AVX2 __attribute__((target("avx2,fma"), UK_CONTRACT))
#if defined(__x86_64__) && defined(__GNUC__)
DEFINE_UKERNEL(sgemm_avx512, float, vf16, 16, 8, 2, AVX512, PACKED)
DEFINE_UKERNEL(sgemm_avx2, float, vf8, 8, 6, 2, AVX2, PACKED)
DEFINE_UKERNEL(dgemm_avx512, double, vd8, 8, 8, 2, AVX512, PACKED)
DEFINE_UKERNEL(dgemm_avx2, double, vd4, 4, 6, 2, AVX2, PACKED)
DEFINE_UKERNEL(sgemm_rows_avx512, float, vf16, 16, 8, 2, AVX512, ROWS)
DEFINE_UKERNEL(sgemm_rows_avx2, float, vf8, 8, 6, 2, AVX2, ROWS)
#endif
DEFINE_UKERNEL(sgemm_base, float, vf4, 4, 4, 2, __attribute__((UK_CONTRACT)), PACKED)
DEFINE_UKERNEL(dgemm_base, double, vd2, 2, 4, 2, __attribute__((UK_CONTRACT)), PACKED)
DEFINE_UKERNEL(sgemm_rows_base, float, vf4, 4, 4, 2, __attribute__((UK_CONTRACT)), ROWS)
#undef PACKED
#undef ROWS
#undef AVX512
#undef AVX2

/* The widest micro-kernel the CPU runs, or the one BP_CPU_GEMM_ISA
 * ("avx2", "baseline") caps it to (tests run every kernel that way). */
static ukernel pick_ukernel(bool f64) {
#if defined(__x86_64__) && defined(__GNUC__)
  const char *cap = getenv("BP_CPU_GEMM_ISA");
  bool base = cap && strcmp(cap, "baseline") == 0, avx2 = base || (cap && !strcmp(cap, "avx2"));
  __builtin_cpu_init();
  if (!avx2 && __builtin_cpu_supports("avx512f"))
    return f64 ? (ukernel){dgemm_avx512, 8, 16} : (ukernel){sgemm_avx512, 8, 32};
  if (!base && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return f64 ? (ukernel){dgemm_avx2, 6, 8} : (ukernel){sgemm_avx2, 6, 16};
#endif
  return f64 ? (ukernel){dgemm_base, 4, 4} : (ukernel){sgemm_base, 4, 8};
}

int cpu_gemm_level(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  ukernel u = pick_ukernel(false);
  if (u.fn == sgemm_avx512) return 2;
  if (u.fn == sgemm_avx2) return 1;
#endif
  return 0;
}

cpu_ukernel cpu_gemm_ukernel_rows(void) {
  ukernel u = pick_ukernel(false);
#if defined(__x86_64__) && defined(__GNUC__)
  if (u.fn == sgemm_avx512) return (cpu_ukernel){sgemm_rows_avx512, u.mr, u.nr};
  if (u.fn == sgemm_avx2) return (cpu_ukernel){sgemm_rows_avx2, u.mr, u.nr};
#endif
  return (cpu_ukernel){sgemm_rows_base, u.mr, u.nr};
}

/* ------------------------------------------------------------------------ */
/* The blocked GEMM                                                         */
/* ------------------------------------------------------------------------ */

#define KC 256  /* the k block: a packed B panel (KC x NR) stays in L1 */
#define MC_PANELS 16 /* MR-row panels per block of A, which stays in L2 */
#define NC 4096 /* the n block: packed B (KC x NC) stays in L3 */

/* One GEMM: C = A B with A m x k and B k x n.  Float inputs (float32,
 * float16, bfloat16) compute in float, float64 in double. */
typedef struct gemm {
  int64_t m, n, k;
  const char *a, *b;              /* element (0, 0) */
  int64_t ars, acs, brs, bcs;     /* strides in bytes */
  int32_t dt;                     /* the dtype of a and b */
  bool f64;                       /* compute in double */
  char *c;                        /* float or double, row-major */
  int64_t ldc;                    /* elements */
} gemm;

static float load_float(int32_t dt, const char *p) {
  switch (dt) {
    case BP_FLOAT32: return *(const float *)p;
    case BP_FLOAT16: return bp_aux_f16_to_f32(*(const uint16_t *)p);
    default: return bp_aux_bf16_to_f32(*(const uint16_t *)p);
  }
}

/* Packs rows [i0, i0 + mc) by columns [p0, p0 + kc) of A into panels of
 * mr rows: value (i, p) of panel q at dst[q*mr*kc + p*mr + i], rows past m
 * zero. */
static CPU_CLONES void pack_a(const gemm *g, int mr, int64_t i0, int64_t mc, int64_t p0,
                              int64_t kc, void *dst) {
  for (int64_t q = 0; q * mr < mc; q++) {
    int64_t rows = mc - q * mr < mr ? mc - q * mr : mr;
    const char *src = g->a + (i0 + q * mr) * g->ars + p0 * g->acs;
    if (g->f64) {
      double *d = (double *)dst + q * mr * kc;
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < mr; i++)
          d[p * mr + i] = i < rows ? *(const double *)(src + i * g->ars + p * g->acs) : 0;
    } else if (g->dt == BP_FLOAT32) {
      float *d = (float *)dst + q * mr * kc;
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < mr; i++)
          d[p * mr + i] = i < rows ? *(const float *)(src + i * g->ars + p * g->acs) : 0;
    } else {
      float *d = (float *)dst + q * mr * kc;
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < mr; i++)
          d[p * mr + i] = i < rows ? load_float(g->dt, src + i * g->ars + p * g->acs) : 0;
    }
  }
}

/* Packs rows [p0, p0 + kc) by columns [j0, j0 + cols) of B, cols <= nr,
 * into one panel: value (p, j) at dst[p*nr + j], columns past cols zero. */
static CPU_CLONES void pack_b(const gemm *g, int nr, int64_t p0, int64_t kc, int64_t j0,
                              int64_t cols, void *dst) {
  const char *src = g->b + p0 * g->brs + j0 * g->bcs;
  if (g->f64) {
    double *d = dst;
    for (int64_t p = 0; p < kc; p++)
      for (int64_t j = 0; j < nr; j++)
        d[p * nr + j] = j < cols ? *(const double *)(src + p * g->brs + j * g->bcs) : 0;
  } else if (g->dt == BP_FLOAT32) {
    float *d = dst;
    for (int64_t p = 0; p < kc; p++)
      for (int64_t j = 0; j < nr; j++)
        d[p * nr + j] = j < cols ? *(const float *)(src + p * g->brs + j * g->bcs) : 0;
  } else {
    float *d = dst;
    for (int64_t p = 0; p < kc; p++)
      for (int64_t j = 0; j < nr; j++)
        d[p * nr + j] = j < cols ? load_float(g->dt, src + p * g->brs + j * g->bcs) : 0;
  }
}

/* The work of one (n block, k block) step, shared by the pool. */
typedef struct block_job {
  const gemm *g;
  ukernel uk;
  int64_t esz;          /* bytes per computed element */
  int64_t jc, nc, pc, kc;
  int64_t mc;           /* rows per block of A, a multiple of mr */
  char *bpack;
  atomic_bool failed;
} block_job;

static void pack_b_panels(void *ctx, int64_t begin, int64_t end) {
  block_job *j = ctx;
  for (int64_t q = begin; q < end; q++) {
    int64_t j0 = q * j->uk.nr, cols = j->nc - j0 < j->uk.nr ? j->nc - j0 : j->uk.nr;
    pack_b(j->g, j->uk.nr, j->pc, j->kc, j->jc + j0, cols, j->bpack + j0 * j->kc * j->esz);
  }
}

/* Multiplies the row blocks [begin, end) of A by the packed B block. */
static void multiply_blocks(void *ctx, int64_t begin, int64_t end) {
  block_job *j = ctx;
  const gemm *g = j->g;
  int mr = j->uk.mr, nr = j->uk.nr;
  char *apack = malloc((size_t)(j->mc * j->kc * j->esz));
  if (!apack) {
    atomic_store(&j->failed, true);
    return;
  }
  for (int64_t blk = begin; blk < end; blk++) {
    int64_t i0 = blk * j->mc, mc = g->m - i0 < j->mc ? g->m - i0 : j->mc;
    pack_a(g, mr, i0, mc, j->pc, j->kc, apack);
    for (int64_t jr = 0; jr < j->nc; jr += nr) {
      const char *bp = j->bpack + jr * j->kc * j->esz;
      for (int64_t ir = 0; ir < mc; ir += mr) {
        char *c = g->c + ((i0 + ir) * g->ldc + j->jc + jr) * j->esz;
        j->uk.fn(j->kc, apack + ir * j->kc * j->esz, 0, bp, c, g->ldc, mc - ir < mr ? mc - ir : mr,
                 j->nc - jr < nr ? j->nc - jr : nr, j->pc > 0);
      }
    }
  }
  free(apack);
}

/* The blocked GEMM; k > 0. */
static bp_status gemm_blocked(const gemm *g) {
  block_job j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.uk = pick_ukernel(g->f64);
  j.esz = g->f64 ? 8 : 4;
  atomic_init(&j.failed, false);
  int64_t mr = j.uk.mr, nr = j.uk.nr;
  /* Row blocks of about MC_PANELS panels, as many as a multiple of the
   * threads so that the pool's equal shares are equal work. */
  int64_t threads = cpu_num_threads(), panels = (g->m + mr - 1) / mr;
  int64_t nblocks = (panels + MC_PANELS - 1) / MC_PANELS;
  nblocks = (nblocks + threads - 1) / threads * threads;
  if (nblocks > panels) nblocks = panels;
  j.mc = (panels + nblocks - 1) / nblocks * mr;
  nblocks = (g->m + j.mc - 1) / j.mc;
  int64_t ncmax = g->n < NC ? (g->n + nr - 1) / nr * nr : NC;
  j.bpack = malloc((size_t)(ncmax * (g->k < KC ? g->k : KC) * j.esz));
  if (!j.bpack) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: matmul: out of memory");
  for (j.jc = 0; j.jc < g->n && !atomic_load(&j.failed); j.jc += NC) {
    j.nc = g->n - j.jc < NC ? g->n - j.jc : NC;
    for (j.pc = 0; j.pc < g->k && !atomic_load(&j.failed); j.pc += KC) {
      j.kc = g->k - j.pc < KC ? g->k - j.pc : KC;
      int64_t npanels = (j.nc + nr - 1) / nr;
      cpu_parallel_for(npanels, CPU_GRAIN / (j.kc * nr) + 1, pack_b_panels, &j);
      /* Blocks worth less than the pool's wake-up stay on this thread. */
      int64_t work = 2 * j.mc * j.kc * j.nc;
      cpu_parallel_for(nblocks, work >= (1 << 20) ? 1 : nblocks, multiply_blocks, &j);
    }
  }
  free(j.bpack);
  if (atomic_load(&j.failed)) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: matmul: out of memory");
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Matrix-vector products                                                   */
/* ------------------------------------------------------------------------ */

/* Products with one row or column are read once and bound by memory, so
 * float ones can accumulate in double at no cost in time; that keeps the
 * rounding error down where the terms cancel. */
#define LANES 32

static CPU_CLONES double dot_f32(const float *x, const float *y, int64_t n) {
  double acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) acc[j] += (double)x[i + j] * y[i + j];
  for (int j = 0; i < n; i++, j++) acc[j] += (double)x[i] * y[i];
  for (int w = LANES / 2; w > 0; w /= 2)
    for (int j = 0; j < w; j++) acc[j] += acc[j + w];
  return acc[0];
}

static CPU_CLONES double dot_f64(const double *x, const double *y, int64_t n) {
  double acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) acc[j] += x[i + j] * y[i + j];
  for (int j = 0; i < n; i++, j++) acc[j] += x[i] * y[i];
  for (int w = LANES / 2; w > 0; w /= 2)
    for (int j = 0; j < w; j++) acc[j] += acc[j + w];
  return acc[0];
}

static CPU_CLONES void axpy_f32(double *y, float a, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += (double)a * x[i];
}

static CPU_CLONES void axpy_f64(double *y, double a, const double *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

/* n elements of dtype dt at p (stride in bytes) as floats or doubles; the
 * data itself when it already is a contiguous array of that type. */
static const void *as_array(const gemm *g, const char *p, int64_t stride, int64_t n, void *buf) {
  if (g->f64) {
    if (stride == 8) return p;
    for (int64_t i = 0; i < n; i++) ((double *)buf)[i] = *(const double *)(p + i * stride);
  } else {
    if (g->dt == BP_FLOAT32 && stride == 4) return p;
    for (int64_t i = 0; i < n; i++) ((float *)buf)[i] = load_float(g->dt, p + i * stride);
  }
  return buf;
}

typedef struct gemv_job {
  const gemm *g;
  const void *vec; /* the vector operand as a contiguous array */
  atomic_bool failed;
} gemv_job;

/* n == 1: c[i] = row i of A . b, for rows [begin, end). */
static void gemv_rows(void *ctx, int64_t begin, int64_t end) {
  gemv_job *j = ctx;
  const gemm *g = j->g;
  void *buf = malloc((size_t)g->k * 8);
  if (!buf) {
    atomic_store(&j->failed, true);
    return;
  }
  for (int64_t i = begin; i < end; i++) {
    const void *row = as_array(g, g->a + i * g->ars, g->acs, g->k, buf);
    if (g->f64)
      ((double *)g->c)[i * g->ldc] = dot_f64(row, j->vec, g->k);
    else
      ((float *)g->c)[i * g->ldc] = (float)dot_f32(row, j->vec, g->k);
  }
  free(buf);
}

/* m == 1: c[j] = a . column j of B, for columns [begin, end): adds a[p]
 * times row p of B, row by row, so that B is read along its rows; float
 * sums are kept in double. */
static void gemv_cols(void *ctx, int64_t begin, int64_t end) {
  gemv_job *j = ctx;
  const gemm *g = j->g;
  int64_t w = end - begin;
  char *buf = malloc((size_t)w * 16);
  if (!buf) {
    atomic_store(&j->failed, true);
    return;
  }
  double *acc = g->f64 ? (double *)g->c + begin : (double *)(buf + w * 8);
  memset(acc, 0, (size_t)w * sizeof *acc);
  for (int64_t p = 0; p < g->k; p++) {
    const void *row = as_array(g, g->b + p * g->brs + begin * g->bcs, g->bcs, w, buf);
    if (g->f64)
      axpy_f64(acc, ((const double *)j->vec)[p], row, w);
    else
      axpy_f32(acc, ((const float *)j->vec)[p], row, w);
  }
  if (!g->f64)
    for (int64_t i = 0; i < w; i++) ((float *)g->c)[begin + i] = (float)acc[i];
  free(buf);
}

/* A product with m == 1 or n == 1; k > 0. */
static bp_status gemv(const gemm *g) {
  gemv_job j;
  j.g = g;
  atomic_init(&j.failed, false);
  bool rows = g->n == 1;
  void *vec = malloc((size_t)g->k * 8);
  if (!vec) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: matmul: out of memory");
  j.vec = rows ? as_array(g, g->b, g->brs, g->k, vec) : as_array(g, g->a, g->acs, g->k, vec);
  int64_t count = rows ? g->m : g->n;
  int64_t grain = g->k >= CPU_GRAIN ? 1 : CPU_GRAIN / g->k;
  /* Column ranges read whole rows of B: keep them a few cache lines wide. */
  if (!rows && grain < 256) grain = 256;
  cpu_parallel_for(count, grain, rows ? gemv_rows : gemv_cols, &j);
  free(vec);
  if (atomic_load(&j.failed)) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: matmul: out of memory");
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Through CBLAS                                                            */
/* ------------------------------------------------------------------------ */

/*
 * How a rows x cols operand with element strides rs, cs can be passed to
 * row-major CBLAS without a copy: as it is (cs 1, leading dimension rs),
 * or transposed (rs 1, leading dimension cs).  A stride that a size of 1
 * makes irrelevant is ignored.  False when neither fits.
 */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int *ld) {
  int64_t l;
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= (cols > 1 ? cols : 1))) {
    *trans = CBLAS_NO_TRANS;
    l = rows == 1 ? (cols > 1 ? cols : 1) : rs;
  } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= (rows > 1 ? rows : 1))) {
    *trans = CBLAS_TRANS;
    l = cols == 1 ? (rows > 1 ? rows : 1) : cs;
  } else {
    return false;
  }
  if (l > INT_MAX) return false;
  *ld = (int)l;
  return true;
}

typedef struct copy_job {
  const gemm *g;
  bool is_a;
  void *dst;
} copy_job;

static CPU_CLONES void copy_rows(void *ctx, int64_t begin, int64_t end) {
  const copy_job *j = ctx;
  const gemm *g = j->g;
  int64_t cols = j->is_a ? g->k : g->n;
  int64_t rs = j->is_a ? g->ars : g->brs, cs = j->is_a ? g->acs : g->bcs;
  const char *base = j->is_a ? g->a : g->b;
  for (int64_t r = begin; r < end; r++) {
    if (g->f64) {
      double *d = (double *)j->dst + r * cols;
      for (int64_t c = 0; c < cols; c++) d[c] = *(const double *)(base + r * rs + c * cs);
    } else {
      float *d = (float *)j->dst + r * cols;
      for (int64_t c = 0; c < cols; c++) d[c] = *(const float *)(base + r * rs + c * cs);
    }
  }
}

/* A contiguous row-major copy of A or B (float32 or float64). */
static void *copy_operand(const gemm *g, bool is_a) {
  int64_t rows = is_a ? g->m : g->k, cols = is_a ? g->k : g->n;
  void *dst = malloc((size_t)(rows * cols) * (g->f64 ? 8 : 4));
  if (!dst) return NULL;
  copy_job j = {g, is_a, dst};
  cpu_parallel_for(rows, cols >= CPU_GRAIN ? 1 : CPU_GRAIN / cols, copy_rows, &j);
  return dst;
}

/* Whether CBLAS can take this GEMM: float32 or float64, int sizes, and a
 * library. */
static bool blas_fits(const gemm *g) {
  if (!g->f64 && g->dt != BP_FLOAT32) return false;
  cpu_sgemm_fn s;
  cpu_dgemm_fn d;
  cpu_blas(&s, &d);
  if (g->f64 ? !d : !s) return false;
  return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->ldc <= INT_MAX;
}

static bp_status gemm_blas(const gemm *g) {
  cpu_sgemm_fn s;
  cpu_dgemm_fn d;
  cpu_blas(&s, &d);
  int64_t esz = g->f64 ? 8 : 4;
  int ta, tb, lda, ldb;
  const void *a = g->a, *b = g->b;
  void *a_copy = NULL, *b_copy = NULL;
  /* An operand CBLAS cannot read in place is copied, row-major. */
  if (!blas_layout(g->m, g->k, g->ars / esz, g->acs / esz, &ta, &lda)) {
    if (!(a_copy = copy_operand(g, true))) goto oom;
    a = a_copy;
    ta = CBLAS_NO_TRANS;
    lda = (int)(g->k > 1 ? g->k : 1);
  }
  if (!blas_layout(g->k, g->n, g->brs / esz, g->bcs / esz, &tb, &ldb)) {
    if (!(b_copy = copy_operand(g, false))) goto oom;
    b = b_copy;
    tb = CBLAS_NO_TRANS;
    ldb = (int)(g->n > 1 ? g->n : 1);
  }
  if (g->f64)
    d(CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k, 1.0, a, lda, b, ldb, 0.0,
               (double *)g->c, (int)g->ldc);
  else
    s(CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k, 1.0f, a, lda, b, ldb,
               0.0f, (float *)g->c, (int)g->ldc);
  free(a_copy);
  free(b_copy);
  return BP_OK;
oom:
  free(a_copy);
  return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: matmul: out of memory");
}

/* ------------------------------------------------------------------------ */
/* The kernel                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Which path is faster for large GEMMs, per compute type: the BLAS the
 * plugin loaded, or its own blocked kernel.  The BLAS is not always the
 * faster: OpenBLAS held to its Haswell kernels (OPENBLAS_CORETYPE=Haswell,
 * as some environments set it) ran at 203-207 GFLOP/s where the plugin's
 * kernel ran at 326-334 on an AVX-512 CPU (bench/README.md).  So the first
 * large GEMM of each compute type times both on a CAL_N-cube GEMM (best of
 * 3 each, about a millisecond in all) and the plugin's kernel serves every
 * GEMM of at least SMALL_FLOPS multiply-adds from then on if it was at
 * least 1.25x faster (else the BLAS does); smaller ones keep the BLAS,
 * whose call overhead was the lower.  BP_MATMUL_PATH=blas or
 * =portable decides instead.  0: not measured yet, 1: BLAS, 2: portable.
 */
#define CAL_N 384
#define SMALL_FLOPS ((int64_t)128 * 128 * 128)
static atomic_int large_path[2];

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int measure_paths(bool f64) {
  const char *env = getenv("BP_MATMUL_PATH");
  if (env && strcmp(env, "blas") == 0) return 1;
  if (env && strcmp(env, "portable") == 0) return 2;
  size_t esz = f64 ? 8 : 4, n = CAL_N;
  char *a = calloc(n * n, esz), *b = calloc(n * n, esz), *c = malloc(n * n * esz);
  int path = 1; /* the BLAS, unless the measurement says otherwise */
  if (a && b && c) {
    for (size_t i = 0; i < n * n; i++) {
      if (f64) ((double *)a)[i] = ((double *)b)[i] = (double)(i % 7) - 3;
      else ((float *)a)[i] = ((float *)b)[i] = (float)(i % 7) - 3;
    }
    gemm g = {(int64_t)n, (int64_t)n, (int64_t)n, a, b, (int64_t)(n * esz), (int64_t)esz,
              (int64_t)(n * esz), (int64_t)esz, f64 ? BP_FLOAT64 : BP_FLOAT32, f64, c,
              (int64_t)n};
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < 3; r++)
      for (int p = 0; p < 2; p++) {
        double t0 = seconds();
        bp_status st = p == 0 ? gemm_blas(&g) : gemm_blocked(&g);
        double dt = seconds() - t0;
        if (!st && dt < best[p]) best[p] = dt;
      }
    /* the plugin's kernel only when clearly faster: near a tie the
     * measurement at one size says little about the others */
    path = best[1] * 1.25 < best[0] ? 2 : 1;
  }
  free(a);
  free(b);
  free(c);
  return path;
}

/* Measured once per compute type; every thread waits for the one
 * measurement, so that all calls of the process take one path (calls
 * racing on their first GEMM must not see different paths). */
static pthread_once_t path_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static void measure_f32(void) { atomic_store(&large_path[0], measure_paths(false)); }
static void measure_f64(void) { atomic_store(&large_path[1], measure_paths(true)); }

/* Whether this GEMM goes to the BLAS. */
static bool use_blas(const gemm *g) {
  if (!blas_fits(g)) return false;
  if (g->m * g->n * g->k < SMALL_FLOPS) return true;
  pthread_once(&path_once[g->f64], g->f64 ? measure_f64 : measure_f32);
  return atomic_load_explicit(&large_path[g->f64], memory_order_relaxed) == 1;
}

/* One GEMM into c (float or double); k > 0. */
static bp_status gemm_run(const gemm *g) {
  if (use_blas(g)) return gemm_blas(g);
  if (g->m == 1 || g->n == 1) return gemv(g);
  return gemm_blocked(g);
}

/* The call: the GEMM of batch entry 0 and how the batch steps. */
typedef struct problem {
  gemm g;                    /* a and b of entry 0; c is set per entry */
  bool via_float;            /* float16/bfloat16: computed in a float buffer */
  int32_t out_dt;
  char *out;                 /* the result's data */
  int64_t out_step;          /* bytes between the results of two entries */
  int32_t nbatch;            /* batch dimensions (of size > 1) */
  int64_t bsizes[BP_MAX_NDIM], astrides[BP_MAX_NDIM], bstrides[BP_MAX_NDIM]; /* bytes */
  int64_t count;             /* entries */
  atomic_bool failed;        /* an entry run on the pool failed */
} problem;

/* Rounds n floats to float16 or bfloat16. */
static CPU_CLONES void store_half(uint16_t *dst, const float *src, int64_t n, int32_t dt) {
  if (dt == BP_FLOAT16)
    for (int64_t i = 0; i < n; i++) dst[i] = bp_aux_f32_to_f16(src[i]);
  else
    for (int64_t i = 0; i < n; i++) dst[i] = bp_aux_f32_to_bf16(src[i]);
}

/* Runs batch entry i; tmp holds m * n floats when via_float. */
static bp_status run_entry(const problem *pb, int64_t i, float *tmp) {
  gemm g = pb->g;
  char *out = pb->out + i * pb->out_step;
  for (int32_t d = pb->nbatch - 1; d >= 0; d--) {
    int64_t c = i % pb->bsizes[d];
    g.a += c * pb->astrides[d];
    g.b += c * pb->bstrides[d];
    i /= pb->bsizes[d];
  }
  g.c = pb->via_float ? (char *)tmp : out;
  bp_status st = gemm_run(&g);
  if (st || !pb->via_float) return st;
  store_half((uint16_t *)out, tmp, g.m * g.n, pb->out_dt);
  return BP_OK;
}

static void run_entries(void *ctx, int64_t begin, int64_t end) {
  problem *pb = ctx;
  float *tmp = NULL;
  if (pb->via_float && !(tmp = malloc((size_t)(pb->g.m * pb->g.n) * sizeof *tmp))) {
    atomic_store(&pb->failed, true);
    return;
  }
  for (int64_t i = begin; i < end; i++)
    if (run_entry(pb, i, tmp)) atomic_store(&pb->failed, true);
  free(tmp);
}

/* Fills in the problem from the arguments and the result. */
static void describe(problem *pb, const bp_tensor_view *a, const bp_tensor_view *b,
                     const bp_tensor_view *o) {
  gemm *g = &pb->g;
  int64_t isz = a->itemsize;
  g->dt = a->dtype;
  g->f64 = a->dtype == BP_FLOAT64;
  g->a = a->data;
  g->b = b->data;
  g->k = a->sizes[a->ndim - 1];
  g->acs = a->strides[a->ndim - 1] * isz;
  /* A vector is one row of A, or one column of B. */
  g->m = a->ndim >= 2 ? a->sizes[a->ndim - 2] : 1;
  g->ars = a->ndim >= 2 ? a->strides[a->ndim - 2] * isz : 0;
  g->n = b->ndim >= 2 ? b->sizes[b->ndim - 1] : 1;
  g->bcs = b->ndim >= 2 ? b->strides[b->ndim - 1] * isz : 0;
  g->brs = b->strides[b->ndim >= 2 ? b->ndim - 2 : 0] * isz;
  g->ldc = g->n;
  pb->out_dt = o->dtype;
  pb->out = o->data;
  pb->via_float = !g->f64 && g->dt != BP_FLOAT32;
  pb->out_step = g->m * g->n * o->itemsize;
  /* The batch: the result's leading dimensions, each argument's stride 0
   * where it has no such dimension or a size of 1. */
  int32_t na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
  int32_t nbatch = na > nb ? na : nb;
  pb->count = 1;
  for (int32_t d = 0; d < nbatch; d++) {
    if (o->sizes[d] == 1) continue;
    int32_t da = d - (nbatch - na), db = d - (nbatch - nb);
    int32_t n = pb->nbatch++;
    pb->bsizes[n] = o->sizes[d];
    pb->astrides[n] = da >= 0 && a->sizes[da] != 1 ? a->strides[da] * isz : 0;
    pb->bstrides[n] = db >= 0 && b->sizes[db] != 1 ? b->strides[db] * isz : 0;
    pb->count *= o->sizes[d];
  }
}

/* When B is the same for every entry and A's batch and rows step through
 * memory as one run of rows, the batch is one GEMM with more rows. */
static void fold_batch(problem *pb) {
  gemm *g = &pb->g;
  int32_t n = pb->nbatch;
  if (n == 0) return;
  for (int32_t d = 0; d < n; d++)
    if (pb->bstrides[d] != 0 || pb->astrides[d] == 0) return;
  /* The row stride of the merged rows: A's, or the innermost batch
   * stride when A has one row. */
  int64_t inner = g->m > 1 ? g->ars : pb->astrides[n - 1];
  int64_t size = g->m > 1 ? g->m : 1;
  for (int32_t d = n - 1; d >= 0; d--) {
    if (pb->astrides[d] != inner * size) return;
    inner = pb->astrides[d];
    size = pb->bsizes[d];
  }
  g->ars = g->m > 1 ? g->ars : pb->astrides[n - 1];
  g->m *= pb->count;
  pb->out_step = 0;
  pb->nbatch = 0;
  pb->count = 1;
}

static bp_status matmul_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *b = cpu_host->tensor_view(args[1].u.tensor);
  const bp_tensor_view *o = cpu_host->tensor_view(out);
  if (o->numel == 0) return BP_OK;
  if (a->sizes[a->ndim - 1] == 0) { /* an empty sum: zeros */
    memset(o->data, 0, (size_t)(o->numel * o->itemsize));
    return BP_OK;
  }
  problem pb;
  memset(&pb, 0, sizeof pb);
  describe(&pb, a, b, o);
  fold_batch(&pb);
  atomic_init(&pb.failed, false);
  /* Many entries, or small ones, spread over the pool one entry per task
   * (each then runs on one thread).  BLAS threads itself, and is called
   * from this thread only. */
  gemm probe = pb.g;
  double flops = 2.0 * (double)pb.g.m * (double)pb.g.n * (double)pb.g.k;
  bool spread = pb.count > 1 && !use_blas(&probe) &&
                (pb.count >= cpu_num_threads() || flops < (double)(1 << 22));
  if (spread) {
    int64_t grain = flops >= (double)(1 << 20) ? 1 : (int64_t)((double)(1 << 20) / flops) + 1;
    cpu_parallel_for(pb.count, grain, run_entries, &pb);
    if (atomic_load(&pb.failed))
      st = CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  } else {
    float *tmp = NULL;
    if (pb.via_float && !(tmp = malloc((size_t)(pb.g.m * pb.g.n) * sizeof *tmp)))
      st = CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
    for (int64_t i = 0; !st && i < pb.count; i++) st = run_entry(&pb, i, tmp);
    free(tmp);
  }
  return st;
}
BP_AUX_STRUCTURED_KERNEL(matmul_kernel, matmul_impl)

bp_status cpu_register_matmul(bp_library *lib) {
  return CPU_IMPL_STRUCTURED(lib, "matmul", matmul_kernel, NULL);
}
