/*
 * host/core_inplace.c - the in-place forms of op set 2 (`add_`, `relu_`,
 * `masked_fill_`, ...): PyTorch's `op_` on the ops that models call in
 * place.  Each is `op` on the same arguments, written back into self:
 *
 *   - the result must have self's shape: an in-place op does not broadcast
 *     self (`BP_ERR_SHAPE`, as PyTorch refuses "output with shape [3]
 *     doesn't match the broadcast shape [2, 3]");
 *   - the result's dtype must be castable to self's, by PyTorch's rule: no
 *     float into an integer or bool self, no integer into a bool self
 *     (`BP_ERR_TYPE`); a lower category is converted (`int8 add_ float`
 *     fails, `float32 add_ int8` is float32);
 *   - self must not hold one address at several indices (stride 0 along a
 *     dim of size > 1), as for every written argument.
 *
 * The meta function checks all three through `op`'s own meta function and
 * gives self's metadata; the composite writes `op`'s result into self
 * (core_out.c: straight from a structured kernel where the layouts allow,
 * else by copy_, so that an argument that overlaps self in part reads the
 * values from before the call), then returns self.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <string.h>

/* A dtype's category: bool < integer < float. */
static int category(int32_t dt) { return dt == BP_BOOL ? 0 : is_float(dt) ? 2 : 1; }

/* The out-of-place op of an in-place one (user_data: its name). */
static bp_status target(const bp_kernel_ctx *ctx, const bp_op **out) {
  bp_status st = bp__op_find((const char *)ctx->user_data, out);
  if (st)
    return bp__error(BP_ERR_INTERNAL, "%s: its out-of-place op %s is not defined", ctx->op_name,
                     (const char *)ctx->user_data);
  return BP_OK;
}

/* The checks of an in-place form: self is written once, op (the
 * out-of-place op) accepts the arguments with result r, which has self's
 * shape and no higher dtype category. */
static bp_status inplace_check(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               const bp_op **op, bp_tensor_meta *r) {
  bp_status st = target(ctx, op);
  if (st) return st;
  const bp_tensor_view *self = V(&args[0]);
  st = written_once(ctx, 0, "self", self);
  if (st) return st;
  st = bp__core_meta_as(ctx, *op, args, nargs, r);
  if (st) return st;
  char s1[160], s2[160];
  bool same = r->ndim == self->ndim;
  for (int32_t d = 0; same && d < r->ndim; d++) same = r->sizes[d] == self->sizes[d];
  if (!same)
    return bp__error(BP_ERR_SHAPE, "%s: argument #0 'self' has shape %s, but the result has "
                     "shape %s; an in-place op does not broadcast self", ctx->op_name,
                     shape_str(self->ndim, self->sizes, s1, sizeof s1),
                     shape_str(r->ndim, r->sizes, s2, sizeof s2));
  if (category(r->dtype) > category(self->dtype))
    return bp__error(BP_ERR_TYPE, "%s: the result's dtype %s cannot be written into argument #0 "
                     "'self' of dtype %s", ctx->op_name, bp_dtype_name(r->dtype),
                     bp_dtype_name(self->dtype));
  return BP_OK;
}

static bp_status meta_inplace(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  const bp_op *op = NULL;
  bp_tensor_meta r;
  bp_status st = inplace_check(ctx, args, nargs, &op, &r);
  if (st) return st;
  copy_meta(&outs[0], V(&args[0]));
  return BP_OK;
}

static bp_status inplace_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  const bp_op *op = NULL;
  bp_tensor_meta r;
  bp_status st = inplace_check(ctx, args, nargs, &op, &r);
  if (st) return st;
  bp_tensor *w = NULL;
  st = bp__core_into(op, args, &r, args[0].u.tensor, bp__core_pointwise(op->name), &w);
  if (st) return st;
  return ret_tensor(rets, w); /* self */
}

#define IN2(name, tail, doc)                                                                   \
  {#name "_(Tensor(a!) self, Tensor other" tail ") -> Tensor(a!)", meta_inplace,              \
   (intptr_t) "core::" #name, 0, doc, 2, inplace_composite},                                   \
  {#name "_.Scalar(Tensor(a!) self, Scalar other" tail ") -> Tensor(a!)", meta_inplace,        \
   (intptr_t) "core::" #name ".Scalar", 0, doc " (a Scalar other)", 2, inplace_composite}
#define IN1(name)                                                                              \
  {#name "_(Tensor(a!) self) -> Tensor(a!)", meta_inplace, (intptr_t) "core::" #name, 0,       \
   #name " in place", 2, inplace_composite}

const core_def bp__core_defs_inplace[] = {
    IN2(add, ", *, float alpha=1.0", "self += alpha * other"),
    IN2(sub, ", *, float alpha=1.0", "self -= alpha * other"),
    IN2(mul, "", "self *= other"),
    IN2(div, "", "self /= other"),
    IN1(neg), IN1(abs), IN1(exp), IN1(log), IN1(sqrt), IN1(rsqrt), IN1(relu), IN1(sigmoid),
    IN1(tanh), IN1(sin), IN1(cos), IN1(erf), IN1(silu),
    {"gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)", meta_inplace,
     (intptr_t) "core::gelu", 0, "gelu in place", 2, inplace_composite},
    {"masked_fill_(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)", meta_inplace,
     (intptr_t) "core::masked_fill", 0, "masked_fill in place", 2, inplace_composite},
    {"clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", meta_inplace,
     (intptr_t) "core::clamp", 0, "clamp in place", 2, inplace_composite},
};
const size_t bp__core_ndefs_inplace =
    sizeof bp__core_defs_inplace / sizeof bp__core_defs_inplace[0];
