/*
 * host/core_call.c - what the host's composites of the `core` op set use
 * (core_meta.h): Scalars as 0-dim tensors on a device, and calls of other
 * core ops.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <backplane/plugin_aux.h>

/* ------------------------------------------------------------------------ */
/* Scalars                                                                  */
/* ------------------------------------------------------------------------ */

/* A Scalar is weak in promotion: it raises the category of dt (bool <
 * integer < float) to its own, never the width within a category. */
int32_t bp__core_promote_weak(int32_t dt, const bp_value *s) {
  if (s->tag == BP_TAG_FLOAT) return is_float(dt) ? dt : BP_FLOAT32;
  if (s->tag == BP_TAG_INT) return dt == BP_BOOL ? BP_INT64 : dt;
  return dt; /* bool, or None */
}

const char *bp__core_scalar_str(const bp_value *s, char *buf, size_t n) {
  if (s->tag == BP_TAG_FLOAT) snprintf(buf, n, "%.17g", s->u.f);
  else if (s->tag == BP_TAG_INT) snprintf(buf, n, "%lld", (long long)s->u.i);
  else if (s->tag == BP_TAG_BOOL) snprintf(buf, n, "%s", s->u.b ? "True" : "False");
  else snprintf(buf, n, "None");
  return buf;
}

/* bp_tensor_empty for a composite's tensor `what` ("its result", "the
 * input padded to [...]"): a failure names the op and `what` (the
 * allocator's own message names only the size). */
bp_status bp__core_alloc(const bp_kernel_ctx *ctx, const char *what, bp_device dev, int32_t dt,
                         int32_t ndim, const int64_t *sizes, bp_tensor **out) {
  bp_status st = bp_tensor_empty(dev, dt, ndim, sizes, out);
  if (st == BP_OK) return BP_OK;
  char why[256];
  snprintf(why, sizeof why, "%s", bp_last_error());
  return bp__error(st, "%s: %s could not be allocated: %s", ctx->op_name, what, why);
}

bp_status bp__core_empty(const bp_kernel_ctx *ctx, bp_device dev, int32_t dt, int32_t ndim,
                         const int64_t *sizes, bp_tensor **out) {
  return bp__core_alloc(ctx, "its result", dev, dt, ndim, sizes, out);
}

/*
 * A 0-dim tensor of dtype dt on device dev holding the Scalar s converted
 * as core::cast converts (*out is a new reference).  It is made in host
 * memory and copied to another device as it is.
 */
bp_status bp__core_scalar_tensor(bp_device dev, int32_t dt, const bp_value *s, bp_tensor **out) {
  bp_device host = {BP_DEVICE_CPU, 0};
  bp_tensor *h = NULL;
  bp_status st = bp_tensor_empty(host, dt, 0, NULL, &h);
  if (st) return st;
  double f = s->u.f;
  int64_t i = s->tag == BP_TAG_BOOL ? (int64_t)s->u.b : s->u.i;
  bool ok = s->tag == BP_TAG_FLOAT ? bp_aux_convert(dt, h->view.data, BP_FLOAT64, &f)
                                   : bp_aux_convert(dt, h->view.data, BP_INT64, &i);
  if (!ok) {
    bp_tensor_release(h);
    return bp__error(BP_ERR_TYPE, "a Scalar cannot be converted to dtype code %d", (int)dt);
  }
  return bp__core_to_device(h, dev, out);
}

bp_status bp__core_to_device(bp_tensor *h, bp_device dev, bp_tensor **out) {
  if (dev.type == BP_DEVICE_CPU && dev.index == 0) {
    *out = h;
    return BP_OK;
  }
  bp_tensor *d = NULL;
  bp_status st = bp_tensor_empty(dev, h->view.dtype, h->view.ndim, h->view.sizes, &d);
  if (!st) st = bp_tensor_copy(d, h);
  bp_tensor_release(h);
  if (st) {
    bp_tensor_release(d);
    return st;
  }
  *out = d;
  return BP_OK;
}

/* Calls core op `name` on n values; *out receives its one Tensor result
 * (a new reference). */
bp_status bp__core_call(const char *name, const bp_value *vals, size_t n, bp_tensor **out) {
  const bp_op *op = NULL;
  bp_status st = bp__op_find(name, &op);
  if (st) return st;
  if (n > 8)
    return bp__error(BP_ERR_INTERNAL, "%s: a host composite passed %zu arguments (at most 8)",
                     name, n);
  bp_value slots[8];
  bp_stack s = BP_STACK_INIT(slots, 8);
  for (size_t i = 0; i < n; i++) slots[i] = vals[i];
  s.top = n;
  st = bp_call(op, &s);
  if (st) return st;
  *out = slots[0].u.tensor;
  return BP_OK;
}

bp_status bp__core_step(const char *op, bp_tensor **x, const bp_value *rest, size_t nrest) {
  bp_value v[9] = {{.tag = BP_TAG_TENSOR}};
  v[0].u.tensor = *x;
  if (nrest > 8) nrest = 8; /* bp__core_call refuses more than 8 */
  for (size_t i = 0; i < nrest; i++) v[1 + i] = rest[i];
  bp_tensor *r = NULL;
  bp_status st = bp__core_call(op, v, 1 + nrest, &r);
  if (!st) {
    bp_tensor_release(*x);
    *x = r;
  }
  return st;
}
