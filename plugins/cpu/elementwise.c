/*
 * plugins/cpu/elementwise.c - binary, unary, where, muladd and add.out
 * (cast.c holds cast, contiguous, fill_ and copy_; elementwise.h the
 * dtype machinery both use).
 *
 * Every kernel is an inner loop over one run of elements (cpu_loop_fn),
 * driven by cpu_iter, which broadcasts, coalesces and parallelises.  The
 * loops are generated per (op, dtype) by the macros below, so no loop
 * switches on the dtype per element.  Each loop has a fast path for
 * contiguous operands, written as a plain indexed loop that GCC vectorises
 * (and CPU_CLONES compiles for AVX-512, AVX2 and baseline), and a generic
 * strided path.  The loop pointers are deliberately not `restrict`: add.out
 * may write into one of its inputs, and GCC's run-time alias check accepts
 * an output that is exactly an input while keeping the vector loop.
 *
 * Type promotion: the op's meta function gives the result dtype; an input
 * of another dtype is first converted to it in a contiguous temporary
 * (cpu_cast_copy, in cast.c), so the loops see operands of one dtype.
 * float16 and bfloat16 are computed in float32 and rounded back; integers
 * compute in unsigned arithmetic of at least 32 bits, so that overflow
 * wraps instead of being undefined.
 */
#include <math.h>

#include "elementwise.h"
#include "vmath.h"

/* ------------------------------------------------------------------------ */
/* Math functions per dtype                                                 */
/* ------------------------------------------------------------------------ */

/* fn##S names the float or double variant of a <math.h> function. */
#define MATH(fn, S) fn##S

/* EXP_<tn> and TANH_<tn>: the exp and tanh a dtype's loops use, and
 * TCLONES_<tn> their clones.  float32 and bfloat16 use vmath.h's, whose
 * loops vectorise; float64 uses libm.  The float16 loops stay scalar (GCC
 * does not vectorise their conversions), and a scalar vm_exp_f32 took 2 to
 * 3 times as long as libm's expf there, so float16 keeps expf; its tanh is
 * still faster than tanhf. */
#define EXP_f32 vm_exp_f32
#define EXP_bf16 vm_exp_f32
#define EXP_f16 expf
#define EXP_f64 exp
#define TANH_f32 vm_tanh_f32
#define TANH_bf16 vm_tanh_f32
#define TANH_f16 vm_tanh_f32
#define TANH_f64 tanh
#define TCLONES_f32 CPU_CLONES CONTRACT
#define TCLONES_bf16 CPU_CLONES CONTRACT
#define TCLONES_f16 F16_CLONES CONTRACT
#define TCLONES_f64 NO_CLONES

/* ------------------------------------------------------------------------ */
/* Binary loops                                                             */
/* ------------------------------------------------------------------------ */

/*
 * A binary loop over (out, a, b), all of storage type T, compiled with the
 * attribute CLONES: computes EXPR on `a` and `b` loaded as C, after SETUP
 * (which may read ctx).  Besides the contiguous path it has paths for a
 * contiguous operand with a broadcast scalar, the usual shape of
 * "tensor op scalar".
 */
#define BINARY_LOOP(CLONES, name, T, C, LD, ST, SETUP, EXPR)                                \
  CLONES static void name(char **p, const int64_t *s, int64_t n, void *ctx) {               \
    SETUP;                                                                                  \
    const int64_t w = (int64_t)sizeof(T);                                                   \
    if (s[0] == w && s[1] == w && s[2] == w) {                                              \
      T *o = PTR(T, p[0]);                                                                  \
      const T *x = CPTR(T, p[1]), *y = CPTR(T, p[2]);                                       \
      for (int64_t i = 0; i < n; i++) {                                                     \
        const C a = LD(x[i]), b = LD(y[i]);                                                 \
        o[i] = ST(EXPR);                                                                    \
      }                                                                                     \
    } else if (s[0] == w && s[1] == w && s[2] == 0) {                                       \
      T *o = PTR(T, p[0]);                                                                  \
      const T *x = CPTR(T, p[1]);                                                           \
      const C b = LD(*CPTR(T, p[2]));                                                       \
      for (int64_t i = 0; i < n; i++) {                                                     \
        const C a = LD(x[i]);                                                               \
        o[i] = ST(EXPR);                                                                    \
      }                                                                                     \
    } else if (s[0] == w && s[1] == 0 && s[2] == w) {                                       \
      T *o = PTR(T, p[0]);                                                                  \
      const T *y = CPTR(T, p[2]);                                                           \
      const C a = LD(*CPTR(T, p[1]));                                                       \
      for (int64_t i = 0; i < n; i++) {                                                     \
        const C b = LD(y[i]);                                                               \
        o[i] = ST(EXPR);                                                                    \
      }                                                                                     \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      const char *px = p[1], *py = p[2];                                                    \
      for (int64_t i = 0; i < n; i++, po += s[0], px += s[1], py += s[2]) {                 \
        const C a = LD(*CPTR(T, px)), b = LD(*CPTR(T, py));                                 \
        *PTR(T, po) = ST(EXPR);                                                             \
      }                                                                                     \
    }                                                                                       \
  }

/* ctx of a binary loop: alpha (or muladd's c), converted per dtype. */
#define NO_SETUP (void)ctx
#define ALPHA_FLOAT(C) const C al = (C)(*(const double *)ctx)
#define ALPHA_INT(tn, U) const U al = (U)CV_##tn(*(const double *)ctx)

/* Either operand NaN gives NaN; otherwise the larger (smaller). */
#define FMAX(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))
#define FMIN(a, b) ((a) < (b) || (a) != (a) ? (a) : (b))

#define X(tn, T, C, LD, ST, S, VEC, CALL)                                                   \
  BINARY_LOOP(VEC, add1_##tn, T, C, LD, ST, NO_SETUP, a + b)                                \
  BINARY_LOOP(VEC, add_##tn, T, C, LD, ST, ALPHA_FLOAT(C), a + al * b)                      \
  BINARY_LOOP(VEC, sub1_##tn, T, C, LD, ST, NO_SETUP, a - b)                                \
  BINARY_LOOP(VEC, sub_##tn, T, C, LD, ST, ALPHA_FLOAT(C), a - al * b)                      \
  BINARY_LOOP(VEC, mul_##tn, T, C, LD, ST, NO_SETUP, a * b)                                 \
  BINARY_LOOP(VEC, div_##tn, T, C, LD, ST, NO_SETUP, a / b)                                 \
  BINARY_LOOP(VEC, max_##tn, T, C, LD, ST, NO_SETUP, FMAX(a, b))                            \
  BINARY_LOOP(VEC, min_##tn, T, C, LD, ST, NO_SETUP, FMIN(a, b))                            \
  BINARY_LOOP(VEC, muladd_##tn, T, C, LD, ST, ALPHA_FLOAT(C), a * b + al)                   \
  BINARY_LOOP(CALL, pow_##tn, T, C, LD, ST, NO_SETUP, MATH(pow, S)(a, b))
FLOAT_TYPES(X)
#undef X

/*
 * Integer pow: repeated multiplication, wrapping, computed by squaring
 * (the same result modulo 2^64, and so modulo 2^n).  A negative exponent
 * gives 0, except for bases 1 and -1.
 */
static inline int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)base;
  for (uint64_t k = (uint64_t)e; k; k >>= 1) {
    if (k & 1u) r *= b;
    b *= b;
  }
  return (int64_t)r;
}

#define X(tn, T, U)                                                                         \
  BINARY_LOOP(CPU_CLONES, add1_##tn, T, T, ID, ID, NO_SETUP, (T)((U)a + (U)b))              \
  BINARY_LOOP(CPU_CLONES, add_##tn, T, T, ID, ID, ALPHA_INT(tn, U), (T)((U)a + al * (U)b))  \
  BINARY_LOOP(CPU_CLONES, sub1_##tn, T, T, ID, ID, NO_SETUP, (T)((U)a - (U)b))              \
  BINARY_LOOP(CPU_CLONES, sub_##tn, T, T, ID, ID, ALPHA_INT(tn, U), (T)((U)a - al * (U)b))  \
  BINARY_LOOP(CPU_CLONES, mul_##tn, T, T, ID, ID, NO_SETUP, (T)((U)a * (U)b))               \
  BINARY_LOOP(CPU_CLONES, max_##tn, T, T, ID, ID, NO_SETUP, a > b ? a : b)                  \
  BINARY_LOOP(CPU_CLONES, min_##tn, T, T, ID, ID, NO_SETUP, a < b ? a : b)                  \
  BINARY_LOOP(NO_CLONES, pow_##tn, T, T, ID, ID, NO_SETUP, (T)ipow(a, b))
INT_TYPES(X)
#undef X

/* bool: add and maximum are or, mul and minimum are and. */
#define OR(a, b) (uint8_t)((a != 0) | (b != 0))
#define AND(a, b) (uint8_t)((a != 0) & (b != 0))
BINARY_LOOP(CPU_CLONES, or_b8, uint8_t, uint8_t, ID, ID, NO_SETUP, OR(a, b))
BINARY_LOOP(CPU_CLONES, and_b8, uint8_t, uint8_t, ID, ID, NO_SETUP, AND(a, b))

/* ------------------------------------------------------------------------ */
/* Unary loops                                                              */
/* ------------------------------------------------------------------------ */

/* sqrt(2/pi) and 1/sqrt(2), which strict C11 <math.h> does not define. */
#define SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define SQRT_1_2 0.70710678118654752440084436210485

/*
 * gelu: x/2 (1 + erf(x/sqrt2)) is written x/2 erfc(-x/sqrt2), and
 * x/2 (1 + tanh(u)) is written x / (1 + exp(-2u)): the same functions,
 * without the cancellation in 1 + erf and 1 + tanh for negative x.
 */
#define GELU(C, S, a) ((C)0.5 * (a) * MATH(erfc, S)(-(a) * (C)SQRT_1_2))
#define GELU_TANH(C, tn, a)                                                                 \
  ((a) / ((C)1 + EXP_##tn((C)-2 * (C)SQRT_2_OVER_PI * ((a) + (C)0.044715 * (a) * (a) * (a)))))

/* sigmoid with one exp, e = exp(-|a|): 1 / (1 + e) for a >= 0, and e / (1 + e)
 * below, so that results down to the subnormals keep their value (1 / (1 +
 * exp(-a)) is 0 as soon as exp(-a) overflows).  NaN takes the second form
 * and stays NaN. */
#define X(tn, T, C, LD, ST, S, VEC, CALL)                                                   \
  static inline C sigmoid1_##tn(C a) {                                                      \
    C e = EXP_##tn(-MATH(fabs, S)(a));                                                      \
    C r = (C)1 / ((C)1 + e);                                                                \
    return a >= (C)0 ? r : e * r;                                                           \
  }
FLOAT_TYPES(X)
#undef X

/* silu, x sigmoid(x): below -80, sigmoid(x) is e^x (to a relative 1e-34),
 * which in float32 underflows before the product does (e^-103 is 0, while
 * 103 e^-103 is a subnormal): the product x e^x is computed in double
 * there. */
#define SILU(C, S, tn, a)                                                                   \
  ((a) >= (C)-80 ? (a) * sigmoid1_##tn(a) : (C)((double)(a) * exp((double)(a))))

/* relu: !(a <= 0) is true for NaN, which stays. */
#define X(tn, T, C, LD, ST, S, VEC, CALL)                                                   \
  UNARY_LOOP(VEC, neg_##tn, T, C, LD, ST, -a)                                               \
  UNARY_LOOP(VEC, abs_##tn, T, C, LD, ST, MATH(fabs, S)(a))                                 \
  UNARY_LOOP(VEC, relu_##tn, T, C, LD, ST, !(a <= (C)0) ? a : (C)0)                         \
  UNARY_LOOP(VEC, sqrt_##tn, T, C, LD, ST, MATH(sqrt, S)(a))                                \
  UNARY_LOOP(VEC, rsqrt_##tn, T, C, LD, ST, (C)1 / MATH(sqrt, S)(a))                        \
  UNARY_LOOP(TCLONES_##tn, exp_##tn, T, C, LD, ST, EXP_##tn(a))                            \
  UNARY_LOOP(CALL, log_##tn, T, C, LD, ST, MATH(log, S)(a))                                 \
  UNARY_LOOP(TCLONES_##tn, sigmoid_##tn, T, C, LD, ST, sigmoid1_##tn(a))                    \
  UNARY_LOOP(TCLONES_##tn, tanh_##tn, T, C, LD, ST, TANH_##tn(a))                           \
  UNARY_LOOP(CALL, gelu_##tn, T, C, LD, ST, GELU(C, S, a))                                  \
  UNARY_LOOP(TCLONES_##tn, gelu_tanh_##tn, T, C, LD, ST, GELU_TANH(C, tn, a))             \
  UNARY_LOOP(CALL, sin_##tn, T, C, LD, ST, MATH(sin, S)(a))                                 \
  UNARY_LOOP(CALL, cos_##tn, T, C, LD, ST, MATH(cos, S)(a))                                 \
  UNARY_LOOP(CALL, erf_##tn, T, C, LD, ST, MATH(erf, S)(a))                                 \
  UNARY_LOOP(CALL, silu_##tn, T, C, LD, ST, SILU(C, S, tn, a))
FLOAT_TYPES(X)
#undef X

/* Integer neg and abs wrap: the most negative value maps to itself. */
#define X(tn, T, U)                                                                         \
  UNARY_LOOP(CPU_CLONES, neg_##tn, T, T, ID, ID, (T)((U)0 - (U)a))                          \
  UNARY_LOOP(CPU_CLONES, abs_##tn, T, T, ID, ID, a < 0 ? (T)((U)0 - (U)a) : a)              \
  UNARY_LOOP(CPU_CLONES, relu_##tn, T, T, ID, ID, a > 0 ? a : 0)
SIGNED_TYPES(X)
#undef X
UNARY_LOOP(CPU_CLONES, neg_u8, uint8_t, uint8_t, ID, ID, (uint8_t)(0u - a))
UNARY_LOOP(CPU_CLONES, abs_u8, uint8_t, uint8_t, ID, ID, a)
UNARY_LOOP(CPU_CLONES, relu_u8, uint8_t, uint8_t, ID, ID, a)

/* ------------------------------------------------------------------------ */
/* Where loops                                                              */
/* ------------------------------------------------------------------------ */

/* where_<tn>: (out, condition, a, b). */
#define X(tn, T)                                                                            \
  CPU_CLONES static void where_##tn(char **p, const int64_t *s, int64_t n, void *ctx) {     \
    (void)ctx;                                                                              \
    const int64_t w = (int64_t)sizeof(T);                                                   \
    if (s[0] == w && s[1] == 1 && s[2] == w && s[3] == w) {                                 \
      T *o = PTR(T, p[0]);                                                                  \
      const uint8_t *c = CPTR(uint8_t, p[1]);                                               \
      const T *x = CPTR(T, p[2]), *y = CPTR(T, p[3]);                                       \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                            \
    } else if (s[0] == w && s[1] == 1 && s[2] == 0 && s[3] == w) {                          \
      /* masked_fill's shape: a value where the condition holds */                          \
      T *o = PTR(T, p[0]);                                                                  \
      const uint8_t *c = CPTR(uint8_t, p[1]);                                               \
      const T x = *CPTR(T, p[2]), *y = CPTR(T, p[3]);                                       \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x : y[i];                               \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      const char *pc = p[1], *px = p[2], *py = p[3];                                        \
      for (int64_t i = 0; i < n; i++, po += s[0], pc += s[1], px += s[2], py += s[3])       \
        *PTR(T, po) = *CPTR(uint8_t, pc) ? *CPTR(T, px) : *CPTR(T, py);                      \
    }                                                                                       \
  }
ALL_TYPES(X)
#undef X

/* ------------------------------------------------------------------------ */
/* Op descriptors (a kernel's user_data)                                    */
/* ------------------------------------------------------------------------ */

typedef struct binary_op {
  const char *name;       /* the op, in core */
  cpu_loop_fn loops[NDT]; /* self op other, with alpha for add and sub */
  cpu_loop_fn unit[NDT];  /* the same for alpha == 1 (cheaper), if any */
  bool scalar;            /* argument #2 is a float: alpha, or muladd's c */
} binary_op;

typedef struct unary_op {
  const char *name;
  cpu_loop_fn loops[NDT];
} unary_op;

#define FLOAT_ROW(op)                                                                       \
  [DT_f32] = op##_f32, [DT_f64] = op##_f64, [DT_f16] = op##_f16, [DT_bf16] = op##_bf16
#define INT_ROW(op)                                                                         \
  [DT_i8] = op##_i8, [DT_i16] = op##_i16, [DT_i32] = op##_i32, [DT_i64] = op##_i64,         \
  [DT_u8] = op##_u8
#define NUM_ROW(op) FLOAT_ROW(op), INT_ROW(op)

static const binary_op op_add = {
    "add", .loops = {NUM_ROW(add)}, .unit = {NUM_ROW(add1), [DT_b8] = or_b8}, .scalar = true};
static const binary_op op_sub = {
    "sub", .loops = {NUM_ROW(sub)}, .unit = {NUM_ROW(sub1)}, .scalar = true};
static const binary_op op_mul = {"mul", .loops = {NUM_ROW(mul), [DT_b8] = and_b8}};
static const binary_op op_div = {"div", .loops = {FLOAT_ROW(div)}};
static const binary_op op_maximum = {"maximum", .loops = {NUM_ROW(max), [DT_b8] = or_b8}};
static const binary_op op_minimum = {"minimum", .loops = {NUM_ROW(min), [DT_b8] = and_b8}};
static const binary_op op_pow = {"pow", .loops = {NUM_ROW(pow)}};
static const binary_op op_muladd = {"muladd", .loops = {FLOAT_ROW(muladd)}, .scalar = true};

static const unary_op op_neg = {"neg", {NUM_ROW(neg)}};
static const unary_op op_abs = {"abs", {NUM_ROW(abs)}};
static const unary_op op_relu = {"relu", {NUM_ROW(relu)}};
static const unary_op op_exp = {"exp", {FLOAT_ROW(exp)}};
static const unary_op op_log = {"log", {FLOAT_ROW(log)}};
static const unary_op op_sqrt = {"sqrt", {FLOAT_ROW(sqrt)}};
static const unary_op op_rsqrt = {"rsqrt", {FLOAT_ROW(rsqrt)}};
static const unary_op op_sigmoid = {"sigmoid", {FLOAT_ROW(sigmoid)}};
static const unary_op op_tanh = {"tanh", {FLOAT_ROW(tanh)}};
static const unary_op op_gelu = {"gelu", {FLOAT_ROW(gelu)}};
static const unary_op op_gelu_tanh = {"gelu", {FLOAT_ROW(gelu_tanh)}};
/* Op set 2. */
static const unary_op op_sin = {"sin", {FLOAT_ROW(sin)}};
static const unary_op op_cos = {"cos", {FLOAT_ROW(cos)}};
static const unary_op op_erf = {"erf", {FLOAT_ROW(erf)}};
static const unary_op op_silu = {"silu", {FLOAT_ROW(silu)}};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* out = a op b (alpha applied where the op has one), out already sized. */
static bp_status run_binary(const bp_kernel_ctx *ctx, const binary_op *op, bp_tensor *out,
                            bp_tensor *a, bp_tensor *b, double alpha) {
  const bp_tensor_view *vo = view_of(out);
  int i = dt_index(vo->dtype);
  cpu_loop_fn loop = NULL;
  if (i >= 0) loop = alpha == 1.0 && op->unit[i] ? op->unit[i] : op->loops[i];
  if (!loop) return unsupported(ctx, 0, vo->dtype);
  bp_tensor *ts[2] = {a, b};
  bp_aux_operands in;
  bp_status st = bp_aux_operands_init(ctx, &in, cpu_operand_cast, vo, 1, ts, 2, vo->dtype);
  if (st) return st;
  run(loop, 3, in.views, &alpha);
  bp_aux_operands_release(ctx, &in);
  return BP_OK;
}

/* add, sub, mul, div, maximum, minimum, pow and muladd. */
static bp_status binary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const binary_op *op = ctx->user_data;
  double alpha = op->scalar ? args[2].u.f : 1.0;
  return run_binary(ctx, op, out, args[0].u.tensor, args[1].u.tensor, alpha);
}
BP_AUX_STRUCTURED_KERNEL(binary_kernel, binary_impl)

/* add.out(self, other, *, alpha, out): out may be exactly self or other. */
static bp_status add_out_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  return run_binary(ctx, &op_add, out, args[0].u.tensor, args[1].u.tensor, args[2].u.f);
}
BP_AUX_OUT_KERNEL(add_out_kernel, add_out_impl, 2)

/* neg, abs, relu, exp, log, sqrt, rsqrt, sigmoid, tanh, gelu, sin, cos,
 * erf and silu. */
static bp_status unary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const unary_op *op = ctx->user_data;
  if (op == &op_gelu && strcmp(args[1].u.str, "tanh") == 0) op = &op_gelu_tanh;
  bp_status st = BP_OK;
  const bp_tensor_view *vo = view_of(out);
  cpu_loop_fn loop = loop_for(op->loops, vo->dtype);
  bp_aux_operands in;
  if (!loop) {
    st = unsupported(ctx, 0, vo->dtype);
  } else {
    st = bp_aux_operands_init(ctx, &in, cpu_operand_cast, vo, 1, &args[0].u.tensor, 1, vo->dtype);
    if (!st) {
      run(loop, 2, in.views, NULL);
      bp_aux_operands_release(ctx, &in);
    }
  }
  return st;
}
BP_AUX_STRUCTURED_KERNEL(unary_kernel, unary_impl)

static bp_status where_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  static const cpu_loop_fn loops[NDT] = {
#define X(tn, T) [DT_##tn] = where_##tn,
      ALL_TYPES(X)
#undef X
  };
  bp_status st = BP_OK;
  const bp_tensor_view *vo = view_of(out);
  cpu_loop_fn loop = loop_for(loops, vo->dtype);
  bp_aux_operands in;
  if (!loop) {
    st = unsupported(ctx, 1, vo->dtype);
  } else {
    /* self and other take the result dtype; the condition is bool (the
     * meta function checks it) and is read as it is. */
    bp_tensor *ts[2] = {args[1].u.tensor, args[2].u.tensor};
    st = bp_aux_operands_init(ctx, &in, cpu_operand_cast, vo, 2, ts, 2, vo->dtype);
    if (!st) {
      in.views[1] = view_of(args[0].u.tensor);
      run(loop, 4, in.views, NULL);
      bp_aux_operands_release(ctx, &in);
    }
  }
  return st;
}
BP_AUX_STRUCTURED_KERNEL(where_kernel, where_impl)

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* The binary and unary ops under their names, then the kernels of their
 * own. */
bp_status cpu_register_elementwise(bp_library *lib) {
  static const binary_op *const binary[] = {&op_add, &op_sub,     &op_mul,     &op_div,
                                            &op_maximum, &op_minimum, &op_pow, &op_muladd};
  static const unary_op *const unary[] = {&op_neg,  &op_abs,     &op_exp,  &op_log,
                                          &op_sqrt, &op_rsqrt,   &op_relu, &op_sigmoid,
                                          &op_tanh, &op_gelu, &op_sin,  &op_cos,
                                          &op_erf,  &op_silu};
  static const struct {
    const char *op;
    bp_boxed_kernel fn;
  } own[] = {{"add.out", add_out_kernel}};
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof binary / sizeof binary[0]; i++)
    st = CPU_IMPL_STRUCTURED(lib, binary[i]->name, binary_kernel, binary[i]);
  for (size_t i = 0; !st && i < sizeof unary / sizeof unary[0]; i++)
    st = CPU_IMPL_STRUCTURED(lib, unary[i]->name, unary_kernel, unary[i]);
  for (size_t i = 0; !st && i < sizeof own / sizeof own[0]; i++)
    st = cpu_impl(lib, own[i].op, own[i].fn, NULL);
  if (!st) st = CPU_IMPL_STRUCTURED(lib, "where", where_kernel, NULL);
  return st;
}
