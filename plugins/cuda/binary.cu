/*
 * plugins/cuda/binary.cu - the binary ops (add, sub, mul, div, maximum,
 * minimum, pow, muladd) and add.out.
 *
 * Each op is a functor Bin<OP, T> (elementwise_ops.cuh, which tests also
 * run on the host), run by map2 of map.cuh over the output and the two
 * inputs, once they are converted to the result dtype (cu_cast_to, in
 * elementwise.cu).  A compiled op is one vectorised kernel for each of
 * contiguous operands, a broadcast first and a broadcast second operand,
 * and one strided kernel.  Compiled apart from elementwise.cu, unary.cu
 * and compare.cu so that they build in parallel.
 */
#include "elementwise_ops.cuh"
#include "map.cuh"

/* ------------------------------------------------------------------------ */
/* Binary ops                                                               */
/* ------------------------------------------------------------------------ */

/* What a binary kernel's user_data says. */
struct BinaryOp {
  int op;       /* B_* with alpha; the alpha-free form is op - 1 for add/sub */
  bool scalar;  /* argument #2 is a float: alpha or c */
  bool ints;    /* integers supported */
  int bool_op;  /* B_OR or B_AND for bool, or -1 */
};

static const BinaryOp op_add = {B_ADD, true, true, B_OR};
static const BinaryOp op_sub = {B_SUB, true, true, -1};
static const BinaryOp op_mul = {B_MUL, false, true, B_AND};
static const BinaryOp op_div = {B_DIV, false, false, -1};
static const BinaryOp op_maximum = {B_MAX, false, true, B_OR};
static const BinaryOp op_minimum = {B_MIN, false, true, B_AND};
static const BinaryOp op_pow = {B_POW, false, true, -1};
static const BinaryOp op_muladd = {B_MULADD, true, false, -1};

template <int OP, class T> static void run_bin(const Launch &L, double alpha) {
  Bin<OP, T> f;
  if constexpr (Tr<T>::is_float)
    f.al = (decltype(f.al))alpha;
  else
    f.al = (decltype(f.al))cu_sat<T>(alpha);
  map2<Bin<OP, T>, T, T, T>(L, f);
}

/* Integer ops for an integer T; false when op has none. */
template <class T> static bool bin_int(const Launch &L, int op, double alpha) {
  switch (op) {
    case B_ADD1: run_bin<B_ADD1, T>(L, alpha); return true;
    case B_ADD: run_bin<B_ADD, T>(L, alpha); return true;
    case B_SUB1: run_bin<B_SUB1, T>(L, alpha); return true;
    case B_SUB: run_bin<B_SUB, T>(L, alpha); return true;
    case B_MUL: run_bin<B_MUL, T>(L, alpha); return true;
    case B_MAX: run_bin<B_MAX, T>(L, alpha); return true;
    case B_MIN: run_bin<B_MIN, T>(L, alpha); return true;
    case B_POW: run_bin<B_POW, T>(L, alpha); return true;
    default: return false;
  }
}

template <class T> static bool bin_float(const Launch &L, int op, double alpha) {
  switch (op) {
    case B_ADD1: run_bin<B_ADD1, T>(L, alpha); return true;
    case B_ADD: run_bin<B_ADD, T>(L, alpha); return true;
    case B_SUB1: run_bin<B_SUB1, T>(L, alpha); return true;
    case B_SUB: run_bin<B_SUB, T>(L, alpha); return true;
    case B_MUL: run_bin<B_MUL, T>(L, alpha); return true;
    case B_DIV: run_bin<B_DIV, T>(L, alpha); return true;
    case B_MAX: run_bin<B_MAX, T>(L, alpha); return true;
    case B_MIN: run_bin<B_MIN, T>(L, alpha); return true;
    case B_POW: run_bin<B_POW, T>(L, alpha); return true;
    case B_MULADD: run_bin<B_MULADD, T>(L, alpha); return true;
    default: return false;
  }
}

/* out = a op b; out already sized. */
static bp_status run_binary(const bp_kernel_ctx *ctx, const BinaryOp *op, bp_tensor *out,
                            bp_tensor *a, bp_tensor *b, double alpha) {
  const bp_tensor_view *vo = cu_view(out);
  int32_t dt = vo->dtype;
  int code = op->op;
  if ((code == B_ADD || code == B_SUB) && alpha == 1.0) code -= 1;
  if (dt == BP_BOOL) {
    if (op->bool_op < 0 || (op->scalar && alpha != 1.0)) return unsupported(ctx, 0, dt);
    code = op->bool_op;
  } else if (!bp_aux_dtype_is_float(dt) && !op->ints) {
    return unsupported(ctx, 0, dt);
  }
  bp_tensor *ts[2] = {a, b};
  Inputs in;
  bp_status st = inputs_init(&in, ctx, vo, 1, ts, 2, dt);
  if (st) return st;
  if (vo->numel == 0) return BP_OK;
  Launch L;
  st = launch_init(&L, 3, in.ops.views);
  if (st) return st;
  bool ok = false;
  switch (dt) {
    case BP_FLOAT32: ok = bin_float<float>(L, code, alpha); break;
    case BP_FLOAT64: ok = bin_float<double>(L, code, alpha); break;
    case BP_FLOAT16: ok = bin_float<h16>(L, code, alpha); break;
    case BP_BFLOAT16: ok = bin_float<bf16>(L, code, alpha); break;
    case BP_INT8: ok = bin_int<int8_t>(L, code, alpha); break;
    case BP_INT16: ok = bin_int<int16_t>(L, code, alpha); break;
    case BP_INT32: ok = bin_int<int32_t>(L, code, alpha); break;
    case BP_INT64: ok = bin_int<int64_t>(L, code, alpha); break;
    case BP_UINT8: ok = bin_int<uint8_t>(L, code, alpha); break;
    case BP_BOOL:
      ok = true;
      if (code == B_OR)
        map2<Bin<B_OR, b8>, b8, b8, b8>(L, Bin<B_OR, b8>());
      else
        map2<Bin<B_AND, b8>, b8, b8, b8>(L, Bin<B_AND, b8>());
      break;
    default: break;
  }
  if (!ok) return unsupported(ctx, 0, dt);
  return cu_launched(ctx->op_name);
}

static bp_status binary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const BinaryOp *op = (const BinaryOp *)ctx->user_data;
  double alpha = op->scalar ? args[2].u.f : 1.0;
  return run_binary(ctx, op, out, args[0].u.tensor, args[1].u.tensor, alpha);
}
BP_AUX_STRUCTURED_KERNEL(binary_kernel, binary_impl)

/* add.out(self, other, *, alpha, out): out may be exactly self or other. */
static bp_status add_out_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  return run_binary(ctx, &op_add, out, args[0].u.tensor, args[1].u.tensor, args[2].u.f);
}
BP_AUX_OUT_KERNEL(add_out_kernel, add_out_impl, 2)

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

bp_status cu_register_binary(bp_library *lib) {
  static const struct {
    const char *op;
    const void *data;
  } binary[] = {
      {"add", &op_add},         {"sub", &op_sub},         {"mul", &op_mul},
      {"div", &op_div},         {"maximum", &op_maximum}, {"minimum", &op_minimum},
      {"pow", &op_pow},         {"muladd", &op_muladd},
  };
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof binary / sizeof binary[0]; i++)
    st = CU_IMPL_STRUCTURED(lib, binary[i].op, binary_kernel, binary[i].data);
  if (!st) st = cu_impl(lib, "add.out", add_out_kernel, NULL);
  return st;
}
