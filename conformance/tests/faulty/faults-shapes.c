/*
 * conformance/tests/faulty/faults-shapes.c - faults of sizes, layouts,
 * broadcasting and reduction dims for the shim corpus (shim.h).  A plugin
 * is built with one -DFAULT_<NAME>; corpus.tsv lists them.
 */
#include <math.h>

#include "shim.h"

typedef int faults_shapes_unit; /* the unit is never empty */

/* ------------------------------------------------------------------------ */
/* Sizes                                                                    */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_MUL_TAIL7)
/* The 8-lane loop's remainder step reloads `self` for `other`: a float32
 * result of more than 8 elements whose count is 7 mod 8 ends in self * self. */
SHIM_KERNEL(mul_tail7) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET(), *a = SHIM_ARG(0);
  if (o->dtype == BP_FLOAT32 && a->dtype == BP_FLOAT32 && o->numel > 8 && o->numel % 8 == 7) {
    int64_t idx[BP_MAX_NDIM];
    for (int32_t d = 0; d < o->ndim; d++) idx[d] = o->sizes[d] - 1;
    float x = (float)shim_load(a, shim_at(a, o->ndim, idx));
    ((float *)o->data)[o->numel - 1] = x * x;
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"mul_tail7", "mul", mul_tail7, NULL, NULL};
#endif

#if defined(FAULT_SUM_UNROLL_TAIL)
/* The 4-way unrolled loop drops the len % 4 elements left over when one
 * dimension longer than 64 elements is reduced (float32). */
SHIM_KERNEL(sum_unroll_tail) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32 || o->dtype != BP_FLOAT32 || a->ndim == 0) return BP_OK;
  int32_t d;
  if (args[1].len == 1)
    d = shim_norm_dim(args[1].u.ints[0], a->ndim);
  else if (args[1].len == 0 && a->ndim == 1)
    d = 0;
  else
    return BP_OK;
  int64_t len = a->sizes[d], tail = len % 4;
  if (len <= 64 || tail == 0) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < a->numel; k++, shim_next(a->ndim, a->sizes, idx)) {
    if (idx[d] < len - tail) continue;
    int64_t flat = 0; /* the result is contiguous, with d dropped or of size 1 */
    for (int32_t e = 0; e < a->ndim; e++)
      if (e != d) flat = flat * a->sizes[e] + idx[e];
    ((float *)o->data)[flat] -= (float)shim_load(a, shim_at(a, a->ndim, idx));
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"sum_unroll_tail", "sum", sum_unroll_tail, NULL, NULL};
#endif

#if defined(FAULT_EXP_PAR_TAIL)
/* The float32 threaded path (100000 elements or more) gives each of 4 threads
 * numel / 4 elements rounded down to a multiple of 64, and never computes
 * the elements after the 4 chunks, which keep the zeros the buffer was
 * cleared with. */
SHIM_KERNEL(exp_par_tail) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  float *z = o->data;
  if (o->numel >= 100000 && o->dtype == BP_FLOAT32)
    for (int64_t k = o->numel / 4 / 64 * 64 * 4; k < o->numel; k++) z[k] = 0.0f;
  return BP_OK;
}
const shim_fault shim_the_fault = {"exp_par_tail", "exp", exp_par_tail, NULL, NULL};
#endif

#if defined(FAULT_SIGMOID_RANK5)
/* Its index arrays hold 4 dimensions: for an input of rank 5 or more only
 * the first slice of the outermost dimension is computed, and the other
 * slices repeat it. */
SHIM_KERNEL(sigmoid_rank5) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  if (o->ndim >= 5 && o->sizes[0] > 1 && o->numel > 0) {
    size_t slice = (size_t)(o->numel / o->sizes[0] * o->itemsize);
    for (int64_t i = 1; i < o->sizes[0]; i++) memmove((char *)o->data + i * slice, o->data, slice);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"sigmoid_rank5", "sigmoid", sigmoid_rank5, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Layouts                                                                  */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_NEG_OFFSET)
/* Reads `self` from the start of its storage, ignoring the storage offset:
 * a view that does not begin at its storage's first element (x[1:], a row
 * of a matrix) gets the wrong elements. */
SHIM_KERNEL(neg_offset) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (a->storage_offset == 0) return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  bp_tensor *t;
  bp_status st = shim_restride(args[0].u.tensor, a->strides, 0, &t);
  if (st) return st;
  av[0] = shim_tensor_arg(t);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(t);
  return st;
}
const shim_fault shim_the_fault = {"neg_offset", "neg", neg_offset, NULL, NULL};
#endif

#if defined(FAULT_RELU_DENSE)
/* A dense but permuted input (a transpose, a channels-last layout) takes
 * the flat fast path as if it were contiguous: the result comes out in the
 * input's memory order. */
SHIM_KERNEL(relu_dense) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (!(a->flags & BP_VIEW_DENSE) || (a->flags & BP_VIEW_CONTIGUOUS))
    return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  bp_tensor *t;
  bp_status st = shim_restride(args[0].u.tensor, NULL, a->storage_offset, &t);
  if (st) return st;
  av[0] = shim_tensor_arg(t);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(t);
  return st;
}
const shim_fault shim_the_fault = {"relu_dense", "relu", relu_dense, NULL, NULL};
#endif

#if defined(FAULT_SQRT_BCAST_INNER)
/* The "scalar operand" fast path is chosen by the innermost stride alone:
 * an input expanded along its last dimension but not along every other
 * (an [n, 1] column expanded to [n, m]) gets its first element everywhere. */
SHIM_KERNEL(sqrt_bcast_inner) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  int32_t last = a->ndim - 1;
  if (a->ndim < 2 || a->sizes[last] < 2 || a->strides[last] != 0) return BP_OK;
  bool scalar = true;
  for (int32_t d = 0; d < a->ndim; d++) scalar &= a->sizes[d] < 2 || a->strides[d] == 0;
  if (!scalar)
    for (int64_t k = 1; k < o->numel; k++)
      memcpy((char *)o->data + k * o->itemsize, o->data, (size_t)o->itemsize);
  return BP_OK;
}
const shim_fault shim_the_fault = {"sqrt_bcast_inner", "sqrt", sqrt_bcast_inner, NULL, NULL};
#endif

#if defined(FAULT_WHERE_INNER_STEP)
/* From rank 3 up the kernel collapses the leading dimensions and assumes
 * `self` steps one element along the last one: a view sliced with a step
 * (x[..., ::2]) reads its neighbours instead. */
SHIM_KERNEL(where_inner_step) {
  const bp_tensor_view *s = SHIM_ARG(1);
  int32_t last = s->ndim - 1;
  if (s->ndim < 3 || s->sizes[last] < 2 || s->strides[last] <= 1)
    return shim_real(ctx, args, nargs, rets, nrets);
  int64_t strides[BP_MAX_NDIM];
  memcpy(strides, s->strides, (size_t)s->ndim * sizeof *strides);
  strides[last] = 1;
  SHIM_COPY_ARGS(av);
  bp_tensor *t;
  bp_status st = shim_restride(args[1].u.tensor, strides, s->storage_offset, &t);
  if (st) return st;
  av[1] = shim_tensor_arg(t);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(t);
  return st;
}
const shim_fault shim_the_fault = {"where_inner_step", "where", where_inner_step, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Broadcasting                                                             */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_ADD_BCAST_MID)
/* Broadcasts `other` by tiling its flat buffer over the result, which is
 * right only when its missing or size-1 dimensions lead: a size-1
 * dimension of `other` between two others pairs the wrong elements
 * (float32). */
SHIM_KERNEL(add_bcast_mid) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (o->dtype != BP_FLOAT32 || a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32 || !b->numel)
    return BP_OK;
  bool mid = false;
  int32_t lead = o->ndim - b->ndim;
  for (int32_t d = 1; d < o->ndim - 1; d++)
    mid |= d >= lead && b->sizes[d - lead] == 1 && o->sizes[d] > 1;
  if (!mid) return BP_OK;
  float alpha = (float)args[2].u.f;
  int64_t idx[BP_MAX_NDIM] = {0}, bidx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    float x = (float)shim_load(a, shim_at(a, o->ndim, idx));
    float y = (float)shim_load(b, shim_at(b, b->ndim, bidx));
    ((float *)o->data)[k] = x + alpha * y;
    shim_next(b->ndim, b->sizes, bidx); /* wraps around: the tiling */
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"add_bcast_mid", "add", add_bcast_mid, NULL, NULL};
#endif

#if defined(FAULT_SUB_RANK_SWAP)
/* Swaps the operands when `other` has more dimensions than `self` (its
 * broadcast helper wants the higher rank first) and never swaps back: the
 * result is other - alpha * self. */
SHIM_KERNEL(sub_rank_swap) {
  if (SHIM_ARG(1)->ndim <= SHIM_ARG(0)->ndim) return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  av[0] = args[1];
  av[1] = args[0];
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"sub_rank_swap", "sub", sub_rank_swap, NULL, NULL};
#endif

#if defined(FAULT_POW_SCALAR_EXP)
/* A 0-dim exponent with a base of rank 1 or more goes down the "scalar on
 * the left" path: the result is exponent ** self. */
SHIM_KERNEL(pow_scalar_exp) {
  if (SHIM_ARG(1)->ndim != 0 || SHIM_ARG(0)->ndim == 0)
    return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  av[0] = args[1];
  av[1] = args[0];
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"pow_scalar_exp", "pow", pow_scalar_exp, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Reduction dims                                                           */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_ARGMAX_OFFSET)
/* Returns the winner's element offset in its slice divided by the stride
 * of the last dimension, instead of its index along `dim`: right for the
 * last dim, wrong for the others (unless only size-1 dims follow). */
SHIM_KERNEL(argmax_offset) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  const bp_tensor_view *a = SHIM_ARG(0);
  if (st || args[1].tag != BP_TAG_INT || a->ndim < 2) return st;
  int32_t d = shim_norm_dim(args[1].u.i, a->ndim), last = a->ndim - 1;
  int64_t sd = a->strides[d], sl = a->strides[last];
  if (d == last || sl == 0) return BP_OK;
  const bp_tensor_view *o = SHIM_RET();
  for (int64_t k = 0; k < o->numel; k++) shim_store_int(o, k, shim_load_int(o, k) * sd / sl);
  return BP_OK;
}
const shim_fault shim_the_fault = {"argmax_offset", "argmax", argmax_offset, NULL, NULL};
#endif

#if defined(FAULT_MEAN_NEGDIMS)
/* Normalises only the first entry of a dim list: a later negative dim
 * reads as an index past the end and is skipped, so that dimension is not
 * reduced. */
SHIM_KERNEL(mean_negdims) {
  uint32_t len = args[1].len;
  if (len < 2 || len > BP_MAX_NDIM) return shim_real(ctx, args, nargs, rets, nrets);
  int64_t dims[BP_MAX_NDIM];
  uint32_t n = 0;
  for (uint32_t i = 0; i < len; i++)
    if (i == 0 || args[1].u.ints[i] >= 0) dims[n++] = args[1].u.ints[i];
  SHIM_COPY_ARGS(av);
  av[1].u.ints = dims;
  av[1].len = n;
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"mean_negdims", "mean", mean_negdims, NULL, NULL};
#endif

#if defined(FAULT_SUM_MULTIDIM)
/* Reduces a list of two dims one at a time without renumbering: once dim
 * d0 is gone it reduces dim d1 of the smaller result, which is the
 * original d1 + 1 (keepdim=False, d0 < d1 < the last dim). */
SHIM_KERNEL(sum_multidim) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (args[1].len != 2 || args[2].u.b || a->ndim < 3) return shim_real(ctx, args, nargs, rets, nrets);
  int64_t d0 = args[1].u.ints[0], d1 = args[1].u.ints[1];
  d0 += d0 < 0 ? a->ndim : 0;
  d1 += d1 < 0 ? a->ndim : 0;
  if (d0 > d1) {
    int64_t t = d0;
    d0 = d1;
    d1 = t;
  }
  if (d0 < 0 || d0 == d1 || d1 >= a->ndim - 1) return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  bp_value r1[1];
  av[1].u.ints = &d0;
  av[1].len = 1;
  bp_status st = shim_real(ctx, av, nargs, r1, 1);
  if (st) return st;
  av[0] = r1[0];
  av[1].u.ints = &d1;
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(r1[0].u.tensor);
  return st;
}
const shim_fault shim_the_fault = {"sum_multidim", "sum", sum_multidim, NULL, NULL};
#endif

#if defined(FAULT_AMIN_KEEPDIM)
/* Ignores keepdim=True: the reduced dimensions are dropped from the
 * result's shape. */
SHIM_KERNEL(amin_keepdim) {
  SHIM_COPY_ARGS(av);
  av[2].u.b = false;
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"amin_keepdim", "amin", amin_keepdim, NULL, NULL};
#endif

#if defined(FAULT_SUM_DTYPE_IGNORED)
/* Ignores sum's dtype argument: the result has the default dtype (the
 * input's for floats, int64 for integers and bool). */
SHIM_KERNEL(sum_dtype_ignored) {
  SHIM_COPY_ARGS(av);
  av[3].tag = BP_TAG_NONE;
  av[3].u.i = 0;
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"sum_dtype_ignored", "sum", sum_dtype_ignored, NULL, NULL};
#endif
