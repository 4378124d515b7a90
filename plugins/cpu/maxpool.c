/*
 * plugins/cpu/maxpool.c - max_pool2d (op set 2), float32 and float64.
 *
 * The host's composite takes amax over a strided view of each window,
 * which reduces runs of KW elements one at a time.  This kernel works an
 * output row at a time: the row starts at -inf, and each kernel position
 * (kh, kw) is folded into it with one pass over the outputs whose window
 * position lies inside the input, so the padding is never read and the
 * loop has no branch.  Positions are folded in the window's scan order
 * (row by row) with PyTorch's test, `v > m || v is NaN`: the first of
 * equal values (a -0.0 or a +0.0) is kept, a NaN propagates, and a window
 * that dilation leaves with padding alone gives -inf, as in PyTorch and
 * the composite.  Other dtypes run on the host's composite.
 */
#include <math.h>

#include "cpu.h"
#include "elementwise.h"

typedef struct pool_job {
  const char *x;         /* the input's element (0, 0, 0, 0) */
  char *out;             /* contiguous [planes, OH, OW] */
  int64_t C, H, W, OH, OW;
  int64_t xn, xc, xh, xw; /* input strides, in elements */
  int64_t k[2], s[2], p[2], d[2];
  int64_t kw0, kw1;      /* the kernel columns that reach the input */
} pool_job;

/* The kernel positions k in [0, K) whose input position start + k * d
 * lies in [0, n) for some start in [first, last]: [*lo, *hi], empty when
 * *lo > *hi.  A kernel far wider than the input (with padding up to half
 * of it) is then walked over the positions that reach the input only. */
static void kernel_range(int64_t first, int64_t last, int64_t d, int64_t n, int64_t K,
                         int64_t *lo, int64_t *hi) {
  *lo = last >= 0 ? 0 : (-last + d - 1) / d;
  *hi = n - 1 - first < 0 ? -1 : (n - 1 - first) / d;
  if (*hi > K - 1) *hi = K - 1;
}

/* The first and last output column whose window position kw lies inside
 * the input: o * s - p + kw * d in [0, W).  Returns false if none. */
static bool column_range(const pool_job *j, int64_t kw, int64_t *lo, int64_t *hi) {
  int64_t first = j->p[1] - kw * j->d[1];         /* o * s must reach this */
  int64_t last = j->W - 1 + j->p[1] - kw * j->d[1]; /* and not pass this */
  if (last < 0) return false;
  *lo = first <= 0 ? 0 : (first + j->s[1] - 1) / j->s[1];
  *hi = last / j->s[1];
  if (*hi > j->OW - 1) *hi = j->OW - 1;
  return *lo <= *hi;
}

#define MAXPOOL_ROW(T, NAME)                                                          \
  static CPU_CLONES void NAME(T *restrict row, const T *restrict src, int64_t step,   \
                              int64_t n) {                                            \
    for (int64_t o = 0; o < n; o++) {                                                 \
      T v = src[o * step], m = row[o];                                                \
      row[o] = (v > m || v != v) ? v : m;                                             \
    }                                                                                 \
  }
MAXPOOL_ROW(float, maxpool_fold_f32)
MAXPOOL_ROW(double, maxpool_fold_f64)

/* Output rows [begin, end) of all planes, as (plane, oh) pairs. */
#define MAXPOOL_ROWS(T, NAME, FOLD)                                                   \
  static void NAME(void *ctx, int64_t begin, int64_t end) {                           \
    const pool_job *j = ctx;                                                          \
    const T *x = (const T *)(const void *)j->x;                                       \
    T *out = (T *)(void *)j->out;                                                     \
    for (int64_t r = begin; r < end; r++) {                                           \
      int64_t plane = r / j->OH, oh = r % j->OH;                                      \
      const T *xp = x + plane / j->C * j->xn + plane % j->C * j->xc;                  \
      T *row = out + r * j->OW;                                                       \
      for (int64_t o = 0; o < j->OW; o++) row[o] = (T)-INFINITY;                      \
      int64_t top = oh * j->s[0] - j->p[0], kh0, kh1;                                 \
      kernel_range(top, top, j->d[0], j->H, j->k[0], &kh0, &kh1);                     \
      for (int64_t kh = kh0; kh <= kh1; kh++) {                                       \
        int64_t ih = top + kh * j->d[0];                                              \
        for (int64_t kw = j->kw0; kw <= j->kw1; kw++) {                               \
          int64_t lo, hi;                                                             \
          if (!column_range(j, kw, &lo, &hi)) continue;                               \
          int64_t iw = lo * j->s[1] - j->p[1] + kw * j->d[1];                         \
          FOLD(row + lo, xp + ih * j->xh + iw * j->xw, j->s[1] * j->xw, hi - lo + 1); \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
  }
MAXPOOL_ROWS(float, maxpool_rows_f32, maxpool_fold_f32)
MAXPOOL_ROWS(double, maxpool_rows_f64, maxpool_fold_f64)

static bp_status max_pool2d_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  (void)ctx;
  const bp_tensor_view *vo = view_of(out), *vx = view_of(args[0].u.tensor);
  if (vo->numel == 0) return BP_OK;
  pool_job j;
  memset(&j, 0, sizeof j);
  int32_t nd = vx->ndim; /* 4, or 3 unbatched */
  j.x = vx->data;
  j.out = vo->data;
  j.C = vx->sizes[nd - 3];
  j.H = vx->sizes[nd - 2], j.W = vx->sizes[nd - 1];
  j.xn = nd == 4 ? vx->strides[0] : 0;
  j.xc = vx->strides[nd - 3], j.xh = vx->strides[nd - 2], j.xw = vx->strides[nd - 1];
  j.OH = vo->sizes[vo->ndim - 2], j.OW = vo->sizes[vo->ndim - 1];
  /* kernel, stride ([]: the kernel), padding, dilation ([]: 1): two
   * values each (the host refuses a list of one, and an empty kernel or
   * padding) */
  for (int a = 0; a < 2; a++) {
    j.k[a] = args[1].u.ints[a];
    j.s[a] = args[2].len ? args[2].u.ints[a] : j.k[a];
    j.p[a] = args[3].u.ints[a];
    j.d[a] = args[4].len ? args[4].u.ints[a] : 1;
  }
  /* Output column o's window starts at o * s - p: columns 0 .. OW-1. */
  kernel_range(-j.p[1], (j.OW - 1) * j.s[1] - j.p[1], j.d[1], j.W, j.k[1], &j.kw0, &j.kw1);
  int64_t rows = vo->numel / j.OW;
  /* About 4096 window positions a chunk, so small pools stay inline. */
  int64_t kh_max = j.k[0] < j.H ? j.k[0] : j.H;
  double per_row = (double)j.OW * (double)kh_max * (double)(j.kw1 - j.kw0 + 1);
  int64_t grain = per_row >= 4096 ? 1 : per_row < 1 ? 4096 : (int64_t)(4096 / per_row);
  cpu_parallel_for(rows, grain, vx->dtype == BP_FLOAT64 ? maxpool_rows_f64 : maxpool_rows_f32,
                   &j);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(max_pool2d_kernel, max_pool2d_impl)

bp_status cpu_register_maxpool(bp_library *lib) {
  /* float32 and float64; the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "max_pool2d", max_pool2d_kernel, dtypes);
}
