/*
 * plugins/cuda/unary.cu - the unary ops: neg, abs, relu, exp, log, sqrt,
 * rsqrt, sigmoid, tanh, gelu (both forms), sin, cos, erf, silu.
 *
 * Each op is a functor Un<OP, T> (elementwise_ops.cuh, which tests also
 * run on the host), run by map1 of map.cuh once the input is converted to
 * the result dtype (cu_cast_to, in elementwise.cu): a vectorised kernel
 * for contiguous operands and a strided one.  Floating types take every
 * op, integers neg, abs and relu.  Compiled apart from elementwise.cu,
 * binary.cu and compare.cu so that they build in parallel.
 */
#include "elementwise_ops.cuh"
#include "map.cuh"

/* ------------------------------------------------------------------------ */
/* Unary ops                                                                */
/* ------------------------------------------------------------------------ */

struct UnaryOp {
  int op;
  bool ints; /* neg, abs and relu also take integers */
};

static const UnaryOp op_neg = {U_NEG, true}, op_abs = {U_ABS, true}, op_relu = {U_RELU, true},
                     op_exp = {U_EXP, false}, op_log = {U_LOG, false},
                     op_sqrt = {U_SQRT, false}, op_rsqrt = {U_RSQRT, false},
                     op_sigmoid = {U_SIGMOID, false}, op_tanh = {U_TANH, false},
                     op_gelu = {U_GELU, false}, op_sin = {U_SIN, false},
                     op_cos = {U_COS, false}, op_erf = {U_ERF, false},
                     op_silu = {U_SILU, false};

template <int OP, class T> static void run_un(const Launch &L) {
  map1<Un<OP, T>, T, T>(L, Un<OP, T>());
}

template <class T> static bool un_float(const Launch &L, int op) {
  switch (op) {
    case U_NEG: run_un<U_NEG, T>(L); return true;
    case U_ABS: run_un<U_ABS, T>(L); return true;
    case U_RELU: run_un<U_RELU, T>(L); return true;
    case U_SQRT: run_un<U_SQRT, T>(L); return true;
    case U_RSQRT: run_un<U_RSQRT, T>(L); return true;
    case U_EXP: run_un<U_EXP, T>(L); return true;
    case U_LOG: run_un<U_LOG, T>(L); return true;
    case U_SIGMOID: run_un<U_SIGMOID, T>(L); return true;
    case U_TANH: run_un<U_TANH, T>(L); return true;
    case U_GELU: run_un<U_GELU, T>(L); return true;
    case U_GELU_TANH: run_un<U_GELU_TANH, T>(L); return true;
    case U_SIN: run_un<U_SIN, T>(L); return true;
    case U_COS: run_un<U_COS, T>(L); return true;
    case U_ERF: run_un<U_ERF, T>(L); return true;
    case U_SILU: run_un<U_SILU, T>(L); return true;
    default: return false;
  }
}

template <class T> static bool un_int(const Launch &L, int op) {
  switch (op) {
    case U_NEG: run_un<U_NEG, T>(L); return true;
    case U_ABS: run_un<U_ABS, T>(L); return true;
    case U_RELU: run_un<U_RELU, T>(L); return true;
    default: return false;
  }
}

static bp_status unary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const UnaryOp *op = (const UnaryOp *)ctx->user_data;
  int code = op->op;
  if (op == &op_gelu && strcmp(args[1].u.str, "tanh") == 0) code = U_GELU_TANH;
  bp_status st = BP_OK;
  const bp_tensor_view *vo = cu_view(out);
  bool ok = false;
  {
    Inputs in;
    st = inputs_init(&in, ctx, vo, 1, &args[0].u.tensor, 1, vo->dtype);
    Launch L;
    if (!st && vo->numel > 0) st = launch_init(&L, 2, in.ops.views);
    if (!st && vo->numel == 0) ok = true;
    if (!st && vo->numel > 0) {
      switch (vo->dtype) {
        case BP_FLOAT32: ok = un_float<float>(L, code); break;
        case BP_FLOAT64: ok = un_float<double>(L, code); break;
        case BP_FLOAT16: ok = un_float<h16>(L, code); break;
        case BP_BFLOAT16: ok = un_float<bf16>(L, code); break;
        case BP_INT8: ok = un_int<int8_t>(L, code); break;
        case BP_INT16: ok = un_int<int16_t>(L, code); break;
        case BP_INT32: ok = un_int<int32_t>(L, code); break;
        case BP_INT64: ok = un_int<int64_t>(L, code); break;
        case BP_UINT8: ok = un_int<uint8_t>(L, code); break;
        default: break;
      }
      if (ok) st = cu_launched(ctx->op_name);
    }
  }
  if (!st && !ok) st = unsupported(ctx, 0, vo->dtype);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(unary_kernel, unary_impl)

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

bp_status cu_register_unary(bp_library *lib) {
  static const struct {
    const char *op;
    const void *data;
  } unary[] = {
      {"neg", &op_neg},     {"abs", &op_abs},         {"exp", &op_exp},   {"log", &op_log},
      {"sqrt", &op_sqrt},   {"rsqrt", &op_rsqrt},     {"relu", &op_relu},
      {"sigmoid", &op_sigmoid}, {"tanh", &op_tanh},   {"gelu", &op_gelu},
      {"sin", &op_sin},     {"cos", &op_cos},         {"erf", &op_erf},   {"silu", &op_silu},
  };
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof unary / sizeof unary[0]; i++)
    st = CU_IMPL_STRUCTURED(lib, unary[i].op, unary_kernel, unary[i].data);
  return st;
}
