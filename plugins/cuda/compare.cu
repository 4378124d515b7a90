/*
 * plugins/cuda/compare.cu - the comparisons of op set 2: eq, ne, lt, le,
 * gt, ge.
 *
 * Each is a functor CmpF<OP, T> (elementwise_ops.cuh, which tests also run
 * on the host; NaN is unequal to everything and never ordered), run by
 * map2 of map.cuh over a bool output and the two inputs, once these are
 * converted to their promoted dtype (cu_cast_to, in elementwise.cu).
 * Every dtype of the op set compares, so the file instantiates map2's
 * four kernels 60 times; it is compiled apart from elementwise.cu,
 * binary.cu and unary.cu so that they build in parallel.
 */
#include "elementwise_ops.cuh"
#include "map.cuh"

/* ------------------------------------------------------------------------ */
/* Comparisons (op set 2)                                                   */
/* ------------------------------------------------------------------------ */

template <class T> static void run_cmp(const Launch &L, int op) {
  switch (op) {
    case C_EQ: map2<CmpF<C_EQ, T>, b8, T, T>(L, CmpF<C_EQ, T>()); break;
    case C_NE: map2<CmpF<C_NE, T>, b8, T, T>(L, CmpF<C_NE, T>()); break;
    case C_LT: map2<CmpF<C_LT, T>, b8, T, T>(L, CmpF<C_LT, T>()); break;
    case C_LE: map2<CmpF<C_LE, T>, b8, T, T>(L, CmpF<C_LE, T>()); break;
    case C_GT: map2<CmpF<C_GT, T>, b8, T, T>(L, CmpF<C_GT, T>()); break;
    default: map2<CmpF<C_GE, T>, b8, T, T>(L, CmpF<C_GE, T>()); break;
  }
}

/* out (bool) = self op other, in their promoted dtype.  user_data holds
 * the C_* code. */
static bp_status compare_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  int op = (int)(intptr_t)ctx->user_data;
  const bp_tensor_view *vo = cu_view(out);
  int32_t dt = bp_aux_promote(cu_view(args[0].u.tensor)->dtype, cu_view(args[1].u.tensor)->dtype);
  bp_tensor *ts[2] = {args[0].u.tensor, args[1].u.tensor};
  Inputs in;
  bp_status st = inputs_init(&in, ctx, vo, 1, ts, 2, dt);
  if (st) return st;
  if (vo->numel == 0) return BP_OK;
  Launch L;
  st = launch_init(&L, 3, in.ops.views);
  if (st) return st;
  bool ok = true;
  CU_SWITCH_ALL(dt, ok = false, run_cmp<scalar_t>(L, op));
  if (!ok) return unsupported(ctx, 0, dt);
  return cu_launched(ctx->op_name);
}
BP_AUX_STRUCTURED_KERNEL(compare_kernel, compare_impl)

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

bp_status cu_register_compare(bp_library *lib) {
  static const char *const compare[] = {"eq", "ne", "lt", "le", "gt", "ge"}; /* C_* order */
  bp_status st = BP_OK;
  for (int i = 0; !st && i < 6; i++)
    st = CU_IMPL_STRUCTURED(lib, compare[i], compare_kernel, (const void *)(intptr_t)i);
  return st;
}
