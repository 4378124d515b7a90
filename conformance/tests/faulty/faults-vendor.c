/*
 * conformance/tests/faulty/faults-vendor.c - faults in a vendor's own op
 * (shim.h, shim_fault_vendor_op): an op outside core, in namespace
 * "faulty", whose CPU kernel has the bug and whose composite over core
 * ops is right, as a vendor registers both (the composite serves the
 * devices without a kernel).  A plugin is built with one -DFAULT_<NAME>;
 * corpus.tsv lists them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef int faults_vendor_unit; /* the unit is never empty */

#if defined(FAULT_AXPBY_DENSE)
/* faulty::axpby(Tensor a, Tensor b, float alpha) -> Tensor: a + alpha * b,
 * a and b of one shape and dtype, the result contiguous.  The kernel's
 * fast path for two dense operands with the same strides (both
 * transposed, both channels-last) runs over memory in order and writes
 * the result in that order, so its elements come out permuted; it should
 * have taken that path only for contiguous operands. */
static const bp_tensor_view *view_of(const bp_value *v) { return shim_view(v->u.tensor); }

static bp_status axpby_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = view_of(&args[0]), *b = view_of(&args[1]);
  if (a->dtype != b->dtype)
    return shim_host->set_errorf(BP_ERR_TYPE, "%s: argument #1 'b': dtype %d, expected a's, %d",
                                 ctx->op_name, (int)b->dtype, (int)a->dtype);
  if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof *a->sizes) != 0)
    return shim_host->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'b' must have a's shape",
                                 ctx->op_name);
  outs[0].device = a->device;
  outs[0].dtype = a->dtype;
  outs[0].ndim = a->ndim;
  int64_t st = 1;
  for (int32_t d = a->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = a->sizes[d];
    outs[0].strides[d] = st;
    st *= a->sizes[d];
  }
  return BP_OK;
}

/* Whether v's elements fill its span exactly (dense, in some order). */
static bool dense(const bp_tensor_view *v) {
  int64_t span = 1;
  for (int32_t d = 0; d < v->ndim; d++) {
    if (v->strides[d] <= 0 && v->sizes[d] > 1) return false;
    span += (v->sizes[d] - 1) * v->strides[d];
  }
  return span == v->numel;
}

SHIM_KERNEL(axpby_kernel) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = view_of(&args[0]), *b = view_of(&args[1]), *o = shim_view(out);
  float alpha = (float)args[2].u.f;
  float *y = o->data;
  bool same = memcmp(a->strides, b->strides, (size_t)a->ndim * sizeof *a->strides) == 0;
  if (same && dense(a) && dense(b)) {
    const float *x = a->data, *z = b->data;
    for (int64_t k = 0; k < o->numel; k++) y[k] = x[k] + alpha * z[k];
  } else {
    int64_t idx[BP_MAX_NDIM] = {0};
    for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx))
      y[k] = (float)shim_load(a, shim_at(a, o->ndim, idx)) +
             alpha * (float)shim_load(b, shim_at(b, o->ndim, idx));
  }
  return shim_return(rets, out);
}

/* The composite: core::add(a, b, alpha). */
SHIM_KERNEL(axpby_composite) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  static const bp_op *add;
  if (!add) {
    bp_status st = shim_host->op_find("core::add", &add);
    if (st) return st;
  }
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  slots[0] = args[0];
  slots[1] = args[1];
  slots[2] = args[2];
  s.top = 3;
  bp_status st = shim_host->call(add, &s);
  if (st) return st;
  rets[0] = slots[0];
  return BP_OK;
}

static const shim_vendor_op axpby = {"axpby(Tensor a, Tensor b, float alpha) -> Tensor", "axpby",
                                     axpby_meta, axpby_kernel, axpby_composite};
const shim_vendor_op *shim_fault_vendor_op = &axpby;
const shim_fault shim_the_fault = {"axpby_dense", NULL, NULL, NULL, NULL};
#endif
