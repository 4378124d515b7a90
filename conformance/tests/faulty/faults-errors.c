/*
 * conformance/tests/faulty/faults-errors.c - faults of error handling,
 * thread safety and leaks for the shim corpus (shim.h).  A plugin is
 * built with one -DFAULT_<NAME>; corpus.tsv lists them.
 *
 * The races are data races on purpose, on static memory that is never
 * freed, so that they give wrong results and nothing worse; ThreadSanitizer
 * reports them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"

typedef int faults_errors_unit; /* the unit is never empty */

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_SOFTMAX_DIM_CLAMP)
/* Clamps an out-of-range dim into range instead of failing: softmax(x,
 * dim=5) of a 2-D tensor runs along its last dim and returns BP_OK. */
SHIM_KERNEL(softmax_dim_clamp) {
  const bp_tensor_view *a = SHIM_ARG(0);
  int64_t n = a->ndim > 0 ? a->ndim : 1, d = args[1].u.i;
  SHIM_COPY_ARGS(av);
  av[1].u.i = d >= n ? n - 1 : d < -n ? -n : d;
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"softmax_dim_clamp", "softmax", softmax_dim_clamp, NULL, NULL};
#endif

#if defined(FAULT_GELU_ABORT)
/* Asserts on `approximate`: any string but "none" or "tanh" calls abort()
 * where the op must fail with BP_ERR_INVALID_ARGUMENT. */
SHIM_KERNEL(gelu_abort) {
  const char *s = args[1].u.str;
  if (strcmp(s, "none") != 0 && strcmp(s, "tanh") != 0) {
    fprintf(stderr, "gelu_abort: assertion failed: approximate is \"%s\"\n", s);
    abort();
  }
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"gelu_abort", "gelu", gelu_abort, NULL, NULL};
#endif

#if defined(FAULT_AMAX_EXIT)
/* A repeated dim reaches the vendor's fatal-error path, which prints a
 * message and calls exit(1) where the op must fail with
 * BP_ERR_INVALID_ARGUMENT. */
SHIM_KERNEL(amax_exit) {
  const bp_tensor_view *a = SHIM_ARG(0);
  int64_t n = a->ndim > 0 ? a->ndim : 1;
  for (uint32_t i = 0; i < args[1].len; i++)
    for (uint32_t j = i + 1; j < args[1].len; j++) {
      int64_t x = args[1].u.ints[i], y = args[1].u.ints[j];
      if (x < -n || x >= n || y < -n || y >= n) continue;
      if ((x + n) % n == (y + n) % n) {
        fprintf(stderr, "amax_exit: fatal: dim %lld given twice\n", (long long)x);
        exit(1);
      }
    }
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"amax_exit", "amax", amax_exit, NULL, NULL};
#endif

#if defined(FAULT_ARGMAX_NO_MESSAGE)
/* Its own range check of dim runs before the meta function and writes its
 * message only in debug builds: an out-of-range dim fails with
 * BP_ERR_INVALID_ARGUMENT and an empty message. */
SHIM_KERNEL(argmax_no_message) {
  const bp_tensor_view *a = SHIM_ARG(0);
  int64_t n = a->ndim > 0 ? a->ndim : 1;
  if (args[1].tag == BP_TAG_INT && (args[1].u.i < -n || args[1].u.i >= n)) {
    char msg[160] = "";
#ifdef VENDOR_DEBUG
    snprintf(msg, sizeof msg, "argmax: dim %lld out of range", (long long)args[1].u.i);
#endif
    return shim_host->set_error(BP_ERR_INVALID_ARGUMENT, msg);
  }
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"argmax_no_message", "argmax", argmax_no_message, NULL, NULL};
#endif

#if defined(FAULT_LAYER_NORM_NUMEL)
/* Checks only the element count of normalized_shape: one whose product is
 * that of some trailing sizes of the input ([6] for an input [..., 2, 3])
 * is accepted, and the op returns BP_OK where it must fail with
 * BP_ERR_SHAPE (without weight and bias). */
SHIM_KERNEL(layer_norm_numel) {
  const bp_tensor_view *x = SHIM_ARG(0);
  int64_t p = 1, q = 1;
  bool big = false;
  for (uint32_t i = 0; i < args[1].len; i++) big |= __builtin_mul_overflow(p, args[1].u.ints[i], &p);
  if (args[2].tag != BP_TAG_NONE || args[3].tag != BP_TAG_NONE || big || p <= 0)
    return shim_real(ctx, args, nargs, rets, nrets);
  for (int32_t k = 1; k <= x->ndim; k++) {
    q *= x->sizes[x->ndim - k];
    if (q != p) continue;
    SHIM_COPY_ARGS(av);
    av[1].u.ints = x->sizes + (x->ndim - k);
    av[1].len = (uint32_t)k;
    return shim_real(ctx, av, nargs, rets, nrets);
  }
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"layer_norm_numel", "layer_norm", layer_norm_numel, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Races                                                                    */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_SUM_STATIC_PARTIALS)
/* Its threaded path (a float32 input of 100000 elements or more, at most
 * 65536 results) accumulates into one static array of partial sums, one
 * per result, that every call shares: concurrent large calls add into
 * each other's sums. */
#define PARTIALS_MAX 65536
static double partials[PARTIALS_MAX];
SHIM_KERNEL(sum_static_partials) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (a->dtype != BP_FLOAT32 || args[3].tag != BP_TAG_NONE || a->numel < 100000)
    return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor *out;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *o = shim_view(out);
  if (o->numel > PARTIALS_MAX) {
    shim_host->tensor_release(out);
    return shim_real(ctx, args, nargs, rets, nrets);
  }
  bool red[BP_MAX_NDIM];
  for (int32_t d = 0; d < a->ndim; d++) red[d] = args[1].len == 0;
  for (uint32_t i = 0; i < args[1].len && a->ndim; i++) red[shim_norm_dim(args[1].u.ints[i], a->ndim)] = true;
  memset(partials, 0, (size_t)o->numel * sizeof *partials);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < a->numel; k++, shim_next(a->ndim, a->sizes, idx)) {
    int64_t j = 0; /* the result is contiguous */
    for (int32_t d = 0; d < a->ndim; d++)
      if (!red[d]) j = j * a->sizes[d] + idx[d];
    partials[j] += shim_load(a, shim_at(a, a->ndim, idx));
  }
  for (int64_t j = 0; j < o->numel; j++) shim_store(o, j, partials[j]);
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"sum_static_partials", "sum", sum_static_partials, NULL, NULL};
#endif

#if defined(FAULT_EXP_TABLE_INIT)
/* exp of 4096 or more float32 elements uses one table of 2^(j/4096) for
 * all threads, built on each thread's first call behind a thread-local
 * flag: a new thread clears and refills it while other threads read it. */
#define NTAB 4096
#define LN2 0.69314718055994530942
static double table[NTAB];
static _Thread_local bool table_ready;
SHIM_KERNEL(exp_table_init) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (a->dtype != BP_FLOAT32 || a->numel < 4096) return shim_real(ctx, args, nargs, rets, nrets);
  if (!table_ready) {
    memset(table, 0, sizeof table);
    for (int j = 0; j < NTAB; j++) table[j] = exp2((double)j / NTAB);
    table_ready = true;
  }
  bp_tensor *out;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *o = shim_view(out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(a->ndim, a->sizes, idx)) {
    double x = shim_load(a, shim_at(a, a->ndim, idx)), t = x * (NTAB / LN2), n = floor(t), r;
    if (!(fabs(x) < 80)) {
      r = exp(x);
    } else {
      int64_t ni = (int64_t)n, j = ni & (NTAB - 1);
      r = ldexp(table[j] * exp((t - n) * (LN2 / NTAB)), (int)((ni - j) / NTAB));
    }
    shim_store(o, k, r);
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"exp_table_init", "exp", exp_table_init, NULL, NULL};
#endif

#if defined(FAULT_SOFTMAX_PINGPONG)
/* Softmax of 100000 or more float32 elements adds its row sums into one of
 * two static scratch buffers, picked by a non-atomic call counter (calls++
 * & 1): concurrent calls that pick the same one add into each other's. */
#define ROWS_MAX 65536
static float row_sums[2][ROWS_MAX];
static unsigned calls;
SHIM_KERNEL(softmax_pingpong) {
  const bp_tensor_view *a = SHIM_ARG(0);
  shim_rows rows;
  if (a->dtype != BP_FLOAT32 || a->numel < 100000) return shim_real(ctx, args, nargs, rets, nrets);
  shim_rows_init(&rows, a, shim_norm_dim(args[1].u.i, a->ndim));
  if (rows.left > ROWS_MAX) return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor *out;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  float *sum = row_sums[calls++ & 1], *z = shim_view(out)->data;
  int64_t in, at, step = a->strides[rows.d], nrows = rows.left;
  memset(sum, 0, (size_t)nrows * sizeof *sum);
  for (int64_t r = 0; shim_rows_next(&rows, &in, &at); r++) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < rows.len; j++) mx = fmaxf(mx, (float)shim_load(a, in + j * step));
    for (int64_t j = 0; j < rows.len; j++)
      sum[r] += z[at + j * rows.out_step] = expf((float)shim_load(a, in + j * step) - mx);
  }
  shim_rows_init(&rows, a, rows.d);
  for (int64_t r = 0; shim_rows_next(&rows, &in, &at); r++)
    for (int64_t j = 0; j < rows.len; j++) z[at + j * rows.out_step] /= sum[r];
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"softmax_pingpong", "softmax", softmax_pingpong, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Leaks                                                                    */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_ADD_LEAK_ON_ERROR)
/* Stages `self` into a contiguous temporary before the arguments are
 * checked, and returns early without releasing it when the call then
 * fails (shapes that do not broadcast, a bad alpha): a tensor leaks with
 * every failing call. */
SHIM_KERNEL(add_leak_on_error) {
  const bp_tensor_view *a = SHIM_ARG(0);
  bp_tensor *stage;
  bp_status st = shim_host->tensor_empty(a->device, a->dtype, a->ndim, a->sizes, &stage);
  if (st) return st;
  st = shim_host->tensor_copy(stage, args[0].u.tensor);
  SHIM_COPY_ARGS(av);
  av[0] = shim_tensor_arg(stage);
  if (!st) st = shim_real(ctx, av, nargs, rets, nrets);
  if (st) return st; /* the leak: `stage` */
  shim_host->tensor_release(stage);
  return BP_OK;
}
const shim_fault shim_the_fault = {"add_leak_on_error", "add", add_leak_on_error, NULL, NULL};
#endif

#if defined(FAULT_MATMUL_LEAK_WS)
/* Allocates its packing panel (256 x 64 elements of the operands' dtype,
 * through the host) before the shapes are checked, and leaks it when they
 * do not fit: a handle and 64 KiB of device memory stay behind after every
 * failing call. */
SHIM_KERNEL(matmul_leak_ws) {
  const bp_tensor_view *a = SHIM_ARG(0);
  int64_t len = 256 * 64;
  bp_tensor *ws;
  bp_status st = shim_host->tensor_empty(a->device, BP_FLOAT32, 1, &len, &ws);
  if (st) return st;
  st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st; /* the leak: `ws` */
  shim_host->tensor_release(ws);
  return BP_OK;
}
const shim_fault shim_the_fault = {"matmul_leak_ws", "matmul", matmul_leak_ws, NULL, NULL};
#endif
