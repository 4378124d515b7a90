/*
 * host/core_rules.c - the rules that the core op set's meta functions
 * share (core.c, core_v2.c, core_nn.c): PyTorch's dtype promotion, the
 * result of a binary op and of a unary one.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Dtype rules                                                              */
/* ------------------------------------------------------------------------ */

/* PyTorch's promotion among the dtypes of the op set: bool < integers <
 * floats; uint8 with a signed 8- or 16-bit integer gives int16; float16
 * with bfloat16 gives float32. */
int32_t bp__promote(int32_t a, int32_t b) {
  if (a == b) return a;
  if (a == BP_BOOL) return b;
  if (b == BP_BOOL) return a;
  if (is_float(a) && is_float(b)) {
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == 1 && rb == 1) return BP_FLOAT32; /* float16 with bfloat16 */
    return ra >= rb ? a : b;
  }
  if (is_float(a)) return a;
  if (is_float(b)) return b;
  if (a == BP_UINT8 || b == BP_UINT8) {
    int32_t o = a == BP_UINT8 ? b : a;
    return (o == BP_INT8 || o == BP_INT16) ? BP_INT16 : o;
  }
  return BP_DTYPE_BITS(a) >= BP_DTYPE_BITS(b) ? a : b;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

bp_status bp__core_binary_result(const bp_kernel_ctx *ctx, const bp_tensor_view *a,
                                 const bp_tensor_view *b, double alpha, int kind,
                                 bp_tensor_meta *out) {
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, a, 0, b, 1, &ndim, sizes);
  if (st) return st;
  int32_t dt = bp__promote(a->dtype, b->dtype);
  if (dt == BP_BOOL && (kind == OP_SUB || kind == OP_POW))
    return bp__error(BP_ERR_TYPE, "%s: not defined for two bool operands", ctx->op_name);
  if (kind == OP_DIV && !is_float(dt)) dt = BP_FLOAT32;
  if ((kind == OP_ADD || kind == OP_SUB) && !is_float(dt)) {
    /* (an integral alpha that int64 holds: an infinity or 1e30 would
     * convert to nothing an integer kernel can use) */
    if (dt == BP_BOOL ? alpha != 1.0
                      : !(alpha >= -0x1p63 && alpha < 0x1p63) || alpha != floor(alpha))
      return bp__error(BP_ERR_TYPE,
                       "%s: argument #2 'alpha' is %g, which %s %s result cannot use (expected %s)",
                       ctx->op_name, alpha, bp_dtype_name(dt)[0] == 'i' ? "an" : "a", bp_dtype_name(dt),
                       dt == BP_BOOL ? "1" : "an integral value within int64's range");
  }
  set_contiguous(out, a->device, dt, ndim, sizes);
  return BP_OK;
}

bp_status bp__core_meta_unary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  int rule = (int)(intptr_t)ctx->user_data;
  int32_t dt = a->dtype;
  if (rule == U_SAME_NO_BOOL && dt == BP_BOOL)
    return type_error(ctx, 0, dt, "a numeric dtype (not bool)");
  if (rule == U_FLOAT && !is_float(dt)) dt = BP_FLOAT32;
  set_contiguous(&outs[0], a->device, dt, a->ndim, a->sizes);
  return BP_OK;
}
