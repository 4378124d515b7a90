/*
 * plugins/cpu/scan.c - cumsum (op set 2): inclusive prefix sums along a
 * dim.
 *
 * self is first converted to the result dtype (contiguous), as PyTorch
 * converts it for `dtype=`.  The result is then [outer, n, inner]: each
 * step along dim adds a row of `inner` elements to a row of accumulators,
 * so that the inner loop runs over contiguous memory and vectorises (a
 * float dim that is innermost is one run with one accumulator).  The work
 * items, an outer row times a block of columns, run on the pool.  Each
 * streams its block once, from the first row to the last, two rows per
 * pass over the accumulators: the rows of a block are runs of memory far
 * apart, and two streams in flight per thread read them faster than one
 * (four were slower).  Blocks are as wide as the threads allow, up to
 * SCAN_COLS columns, for the same reason.  Floats accumulate in double (as
 * PyTorch's CPU kernel does), integers in uint64 that wraps to the result
 * dtype, bool as "any so far"; two rows per pass add in the same order.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* acc[i] += x[i]; out[i] = acc[i], for one row of n elements, per storage
 * type; with `two`, then the same for the row `row` bytes further on in
 * both x and out (the accumulator stays in a register between them). */
#define ROW_F(tn, T, LD, ST)                                                                \
  CPU_CLONES static void row_##tn(double *acc, const void *xv, void *ov, int64_t n,         \
                                  size_t row, bool two) {                                   \
    const T *x = (const T *)xv;                                                             \
    T *o = (T *)ov;                                                                         \
    if (two) {                                                                              \
      const T *x1 = (const T *)(const void *)((const char *)xv + row);                      \
      T *o1 = (T *)(void *)((char *)ov + row);                                              \
      for (int64_t i = 0; i < n; i++) {                                                     \
        double a = acc[i] + (double)LD(x[i]);                                               \
        o[i] = ST(a);                                                                       \
        a += (double)LD(x1[i]);                                                             \
        o1[i] = ST(a);                                                                      \
        acc[i] = a;                                                                         \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      acc[i] += (double)LD(x[i]);                                                           \
      o[i] = ST(acc[i]);                                                                    \
    }                                                                                       \
  }
#define F32_ST(v) ((float)(v))
#define F64_ST(v) (v)
#define F16_ST(v) bp_aux_f64_to_f16(v)
#define BF16_ST(v) bp_aux_f64_to_bf16(v)
ROW_F(f32, float, ID, F32_ST)
ROW_F(f64, double, ID, F64_ST)
ROW_F(f16, uint16_t, bp_aux_f16_to_f32, F16_ST)
ROW_F(bf16, uint16_t, bp_aux_bf16_to_f32, BF16_ST)

#define ROW_I(tn, T)                                                                        \
  CPU_CLONES static void row_##tn(uint64_t *acc, const void *xv, void *ov, int64_t n,       \
                                  size_t row, bool two) {                                   \
    const T *x = (const T *)xv;                                                             \
    T *o = (T *)ov;                                                                         \
    if (two) {                                                                              \
      const T *x1 = (const T *)(const void *)((const char *)xv + row);                      \
      T *o1 = (T *)(void *)((char *)ov + row);                                              \
      for (int64_t i = 0; i < n; i++) {                                                     \
        uint64_t a = acc[i] + (uint64_t)(int64_t)x[i];                                      \
        o[i] = (T)a;                                                                        \
        a += (uint64_t)(int64_t)x1[i];                                                      \
        o1[i] = (T)a;                                                                       \
        acc[i] = a;                                                                         \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      acc[i] += (uint64_t)(int64_t)x[i];                                                    \
      o[i] = (T)acc[i];                                                                     \
    }                                                                                       \
  }
ROW_I(i8, int8_t)
ROW_I(i16, int16_t)
ROW_I(i32, int32_t)
ROW_I(i64, int64_t)
ROW_I(u8, uint8_t)

static void row_b8(uint64_t *acc, const void *xv, void *ov, int64_t n, size_t row, bool two) {
  for (int r = 0; r < 1 + two; r++) {
    const uint8_t *x = (const uint8_t *)xv + (r ? row : 0);
    uint8_t *o = (uint8_t *)ov + (r ? row : 0);
    for (int64_t i = 0; i < n; i++) {
      acc[i] |= x[i] != 0;
      o[i] = (uint8_t)acc[i];
    }
  }
}

/* A whole run of n contiguous elements (dim is the innermost): one
 * accumulator, carried along; with `two`, the next run too, the two
 * accumulators added in turn (two chains of dependent additions
 * instead of one). */
#define SCAN_F(tn, T, LD, ST)                                                               \
  static void scan_##tn(const void *xv, void *ov, int64_t n, bool two) {                    \
    const T *x = (const T *)xv;                                                             \
    T *o = (T *)ov;                                                                         \
    if (two) {                                                                              \
      double a0 = 0, a1 = 0;                                                                \
      for (int64_t i = 0; i < n; i++) {                                                     \
        a0 += (double)LD(x[i]);                                                             \
        a1 += (double)LD(x[n + i]);                                                         \
        o[i] = ST(a0);                                                                      \
        o[n + i] = ST(a1);                                                                  \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    double acc = 0;                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                       \
      acc += (double)LD(x[i]);                                                              \
      o[i] = ST(acc);                                                                       \
    }                                                                                       \
  }
SCAN_F(f32, float, ID, F32_ST)
SCAN_F(f64, double, ID, F64_ST)
SCAN_F(f16, uint16_t, bp_aux_f16_to_f32, F16_ST)
SCAN_F(bf16, uint16_t, bp_aux_bf16_to_f32, BF16_ST)

#define SCAN_I(tn, T)                                                                       \
  static void scan_##tn(const void *xv, void *ov, int64_t n, bool two) {                    \
    const T *x = (const T *)xv;                                                             \
    T *o = (T *)ov;                                                                         \
    if (two) {                                                                              \
      uint64_t a0 = 0, a1 = 0;                                                              \
      for (int64_t i = 0; i < n; i++) {                                                     \
        a0 += (uint64_t)(int64_t)x[i];                                                      \
        a1 += (uint64_t)(int64_t)x[n + i];                                                  \
        o[i] = (T)a0;                                                                       \
        o[n + i] = (T)a1;                                                                   \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    uint64_t acc = 0;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      acc += (uint64_t)(int64_t)x[i];                                                       \
      o[i] = (T)acc;                                                                        \
    }                                                                                       \
  }
SCAN_I(i8, int8_t)
SCAN_I(i16, int16_t)
SCAN_I(i32, int32_t)
SCAN_I(i64, int64_t)
SCAN_I(u8, uint8_t)

typedef void (*row_f_fn)(double *, const void *, void *, int64_t, size_t, bool);
typedef void (*row_i_fn)(uint64_t *, const void *, void *, int64_t, size_t, bool);
typedef void (*scan_fn)(const void *, void *, int64_t, bool);

/* One cumsum: [outer, n, inner] elements of `row` bytes per step. */
typedef struct scan_job {
  row_f_fn rf;
  row_i_fn ri;
  scan_fn sc;  /* for inner == 1 (none for bool) */
  const char *x;
  char *y;
  int64_t outer, n, inner, itemsize;
  int64_t cols; /* columns of inner per work item, at most */
} scan_job;

/* Columns of inner handled by one work item, at most, with their
 * accumulators on the stack (16 KiB of doubles); items that split inner
 * among the threads take a multiple of SCAN_MIN_COLS (whole cache lines
 * of any dtype). */
#define SCAN_COLS 2048
#define SCAN_MIN_COLS 64

static void scan_items(void *ctx, int64_t begin, int64_t end) {
  scan_job *j = ctx;
  int64_t blocks = (j->inner + j->cols - 1) / j->cols;
  size_t row = (size_t)(j->inner * j->itemsize);
  for (int64_t it = begin; it < end; it++) {
    int64_t o = it / blocks, c0 = it % blocks * j->cols;
    int64_t w = j->inner - c0 < j->cols ? j->inner - c0 : j->cols;
    const char *x = j->x + (size_t)(o * j->n) * row + (size_t)(c0 * j->itemsize);
    char *y = j->y + (size_t)(o * j->n) * row + (size_t)(c0 * j->itemsize);
    if (j->sc && j->inner == 1) {
      bool two = it + 1 < end; /* the next item is the next run */
      j->sc(x, y, j->n, two);
      it += two;
      continue;
    }
    union {
      double f[SCAN_COLS];
      uint64_t u[SCAN_COLS];
    } acc;
    memset(&acc, 0, (size_t)w * sizeof acc.f[0]); /* 0.0 and 0 alike */
    for (int64_t k = 0; k < j->n; k += 2, x += 2 * row, y += 2 * row) {
      bool two = k + 1 < j->n;
      if (j->rf) j->rf(acc.f, x, y, w, row, two);
      else j->ri(acc.u, x, y, w, row, two);
    }
  }
}

static bp_status cumsum_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out);
  if (vo->numel == 0) return BP_OK;
  int32_t dt = vo->dtype;
  row_f_fn rf = dt == BP_FLOAT32 ? row_f32 : dt == BP_FLOAT64 ? row_f64
              : dt == BP_FLOAT16 ? row_f16 : dt == BP_BFLOAT16 ? row_bf16 : NULL;
  row_i_fn ri = dt == BP_INT8 ? row_i8 : dt == BP_INT16 ? row_i16 : dt == BP_INT32 ? row_i32
              : dt == BP_INT64 ? row_i64 : dt == BP_UINT8 ? row_u8 : dt == BP_BOOL ? row_b8
              : NULL;
  if (!rf && !ri) return unsupported(ctx, 0, dt);
  bp_tensor *c = NULL;
  bp_status st = cpu_cast_to(args[0].u.tensor, dt, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  int32_t dim = 0;
  if (vc->ndim > 0) dim = (int32_t)(args[1].u.i < 0 ? args[1].u.i + vc->ndim : args[1].u.i);
  scan_job j = {rf, ri, NULL, vc->data, vo->data, 1, vc->ndim > 0 ? vc->sizes[dim] : 1, 1,
                vc->itemsize, SCAN_COLS};
  j.sc = dt == BP_FLOAT32 ? scan_f32 : dt == BP_FLOAT64 ? scan_f64 : dt == BP_FLOAT16 ? scan_f16
       : dt == BP_BFLOAT16 ? scan_bf16 : dt == BP_INT8 ? scan_i8 : dt == BP_INT16 ? scan_i16
       : dt == BP_INT32 ? scan_i32 : dt == BP_INT64 ? scan_i64 : dt == BP_UINT8 ? scan_u8 : NULL;
  for (int32_t d = 0; d < dim; d++) j.outer *= vc->sizes[d];
  for (int32_t d = dim + 1; d < vc->ndim; d++) j.inner *= vc->sizes[d];
  /* Work items: an outer row times a block of columns, the columns split
   * in as many parts as the outer rows leave threads without an item. */
  int64_t parts = (cpu_num_threads() + j.outer - 1) / j.outer;
  int64_t cols = (j.inner + parts - 1) / parts;
  cols = (cols + SCAN_MIN_COLS - 1) / SCAN_MIN_COLS * SCAN_MIN_COLS;
  j.cols = cols < SCAN_COLS ? cols : SCAN_COLS;
  int64_t items = j.outer * ((j.inner + j.cols - 1) / j.cols);
  int64_t per = j.n * (j.inner < j.cols ? j.inner : j.cols);
  cpu_parallel_for(items, per >= 65536 ? 1 : 65536 / (per > 0 ? per : 1), scan_items, &j);
  cpu_host->tensor_release(c);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(cumsum_kernel, cumsum_impl)

bp_status cpu_register_scan(bp_library *lib) {
  return CPU_IMPL_STRUCTURED(lib, "cumsum", cumsum_kernel, NULL);
}
