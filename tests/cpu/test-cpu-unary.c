/*
 * The CPU plugin's elementwise unary ops (neg, abs, relu, exp, log, sqrt,
 * rsqrt, sigmoid, tanh, gelu in both forms) against the float64
 * reference of ref.c for every dtype, on seeded random tensors in every
 * layout; float32 exp, sigmoid, tanh and gelu at the edges of exp's
 * range; and hand-worked values.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <math.h>

#include "cases.h"
#include "harness.h"
#include "trials.h"

/* Every unary op the dtype takes on tensors of dtype dt, `trials` times. */
static void unary_dtype(int32_t dt, int trials, uint64_t base) {
  cpu_setup();
  for (int op = RU_NEG; op <= RU_SILU; op++) {
    if (dt == BP_BOOL && op <= RU_RELU) continue; /* errors */
    for (int t = 0; t < trials; t++) unary_trial(op, dt, trial_seed(base + (uint64_t)op, t));
  }
  cpu_done();
}

/* A case per dtype: its trials per op and its base seed. */
#define UNARY_CASES(X, fn)                           \
  X(fn, unary_float32, BP_FLOAT32, 40, 0x0a000000)   \
  X(fn, unary_float64, BP_FLOAT64, 30, 0x0a100000)   \
  X(fn, unary_float16, BP_FLOAT16, 30, 0x0a200000)   \
  X(fn, unary_bfloat16, BP_BFLOAT16, 30, 0x0a300000) \
  X(fn, unary_int8, BP_INT8, 12, 0x0a400000)         \
  X(fn, unary_int16, BP_INT16, 12, 0x0a400100)       \
  X(fn, unary_int32, BP_INT32, 12, 0x0a400200)       \
  X(fn, unary_int64, BP_INT64, 12, 0x0a400300)       \
  X(fn, unary_uint8, BP_UINT8, 12, 0x0a400400)       \
  X(fn, unary_bool, BP_BOOL, 12, 0x0a500000)
UNARY_CASES(DEFINE_CASE, unary_dtype)

/* ulps between a float32 result and the float64 value it approximates
 * (the spacing of float32 around that value, 2^-149 at least). */
static double ulps_f32(float got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : INFINITY;
  if (isinf((float)want) || isinf(got)) return got == (float)want ? 0 : INFINITY;
  int e;
  (void)frexp(want, &e);
  double ulp = ldexp(1.0, e - 24);
  if (!(ulp >= 0x1p-149)) ulp = 0x1p-149;
  return fabs((double)got - want) / ulp;
}

/*
 * float32 exp and the ops computed through it at the edges of exp's range:
 * ±0, ±inf, NaN, the last finite result and the first overflow, the
 * threshold of subnormal results, subnormal results down to the last that
 * rounds up to 2^-149, and large negatives.  exp and tanh must be within
 * 2 ulp (subnormal results included, which the tolerance's atol would
 * hide); all must meet the tolerance.  Each value appears at three
 * offsets, so that it reaches the vector loop's lanes and its tail.
 */
static void unary_exp_edges(void) {
  cpu_setup();
  static const double vals[] = {
      0.0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 0.5, -0.5, 10, -10, 20, -20, 0x1p-30, -0x1p-30,
      0x1.62e430p-2, -0x1.62e430p-2,           /* ln2/2 */
      0x1.62e42ep+6,                           /* the largest x with a finite e^x */
      0x1.62e430p+6,                           /* the smallest x with e^x = +inf */
      0x1.62e42cp+6, 88, 89, 100, 1e30, 0x1.fffffep+127, -0x1.5d58a0p+6, /* ln 2^-126 */
      -0x1.5d589ep+6, -0x1.5d58a2p+6, -87, -88, -90, -100, -103,
      -0x1.9fe366p+6, -0x1.9fe368p+6, -0x1.9fe36ap+6, /* ln 2^-150 */
      -103.98, -104, -105, -200, -1e30, -0x1.fffffep+127, 0.625, -0.625, 0x1.3ffffep-1, 3, -3,
      9, 9.01, 0x1.233334p+3, 0x1.233332p+3, -9.1, 9.2}; /* tanh's clamp at 9.1 */
  enum { K = (int)NELEMS(vals), N = 3 * K + 2 };
  double in[N];
  for (int i = 0; i < N; i++) in[i] = i == 0 || i == N - 1 ? 0.25 : vals[(i - 1) % K];
  int64_t sizes[1] = {N};
  rt *ra = lit_f(BP_FLOAT32, 1, sizes, in);
  bp_tensor *a = from_rt(ra);
  static const struct {
    const char *name;
    int op;
    int ulp; /* checked within 2 ulp */
  } ops[] = {{"exp", RU_EXP, 1},
             {"sigmoid", RU_SIGMOID, 0},
             {"tanh", RU_TANH, 1},
             {"gelu", RU_GELU_TANH, 0}};
  for (size_t k = 0; k < NELEMS(ops); k++) {
    ctx_set("%s(float32) at the edges of exp's range", ops[k].name);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    if (ops[k].op == RU_GELU_TANH) bp_stack_push_str(&s, "tanh");
    bp_tensor *res = RUN(core_op(ops[k].name), &s, .in = {a}, .ret = RET_NEW);
    rt *want = ref_unary(ops[k].op, ra);
    if (res) {
      CLOSE(res, want, 1, TOL_PLAIN);
      const float *got = bp_tensor_get_view(res)->data;
      for (int i = 0; ops[k].ulp && i < N; i++) {
        double w = ops[k].op == RU_EXP ? exp((double)(float)in[i]) : tanh((double)(float)in[i]);
        double u = ulps_f32(got[i], w);
        if (u > 2)
          REPORT("within 2 ulp", "%s(%a) = %a, expected %a (%g ulp)", ops[k].name, in[i],
                 (double)got[i], w, u);
        /* tanh is odd: tanh(-0) is -0 */
        if (ops[k].op == RU_TANH && in[i] == 0 && !signbit(got[i]) != !signbit(in[i]))
          REPORT("the sign of a zero", "tanh(%a) = %a", in[i], (double)got[i]);
      }
    }
    rt_free(want);
    bp_tensor_release(res);
  }
  rt_free(ra);
  bp_tensor_release(a);
  cpu_done();
}

/* Hand-worked values that doubles hold exactly: the op, its approximate
 * argument (NULL: none passed), the input's dtype and the result's, the
 * number of elements, the input and the result. */
typedef struct exact_unary {
  const char *op, *approximate;
  int32_t dt, dr;
  int64_t n;
  double in[6], want[6];
} exact_unary;

static const exact_unary exact[] = {
    {"log", NULL, BP_FLOAT32, BP_FLOAT32, 6,
     {0, -0.0, -1, INFINITY, NAN, 1}, {-INFINITY, -INFINITY, NAN, INFINITY, NAN, 0}},
    {"sqrt", NULL, BP_FLOAT64, BP_FLOAT64, 6,
     {-1, 0, 4, INFINITY, 2, NAN}, {NAN, 0, 2, INFINITY, 1.4142135623730951, NAN}},
    {"rsqrt", NULL, BP_FLOAT32, BP_FLOAT32, 6,
     {0, 4, INFINITY, -1, 0.25, NAN}, {INFINITY, 0.5, 0, NAN, 2, NAN}},
    {"relu", NULL, BP_FLOAT32, BP_FLOAT32, 6,
     {NAN, -1, 2, -INFINITY, INFINITY, -0.0}, {NAN, 0, 2, 0, INFINITY, 0}},
    {"exp", NULL, BP_FLOAT16, BP_FLOAT16, 6,
     {12, -INFINITY, 0, 1, NAN, -20}, {INFINITY, 0, 1, 2.718281828459045, NAN, 2.0611536e-09}},
    {"sigmoid", NULL, BP_FLOAT32, BP_FLOAT32, 6,
     {INFINITY, -INFINITY, 0, NAN, 100, -100}, {1, 0, 0.5, NAN, 1, 3.7200759760208356e-44}},
    {"tanh", NULL, BP_BFLOAT16, BP_BFLOAT16, 6,
     {INFINITY, -INFINITY, 0, NAN, 20, -0.5}, {1, -1, 0, NAN, 1, -0.46211715726000974}},
    /* |x| > 9.01 rounds to 1 (the kernel clamps at 9.1) */
    {"tanh", NULL, BP_FLOAT32, BP_FLOAT32, 6,
     {-0.0, 0, 9.1, -9.5, 0x1p-100, -0x1p-100}, {-0.0, 0, 1, -1, 0x1p-100, -0x1p-100}},
    {"neg", NULL, BP_FLOAT64, BP_FLOAT64, 6,
     {0, -0.0, INFINITY, NAN, 1.5, -2}, {-0.0, 0, -INFINITY, NAN, -1.5, 2}},
    {"abs", NULL, BP_BFLOAT16, BP_BFLOAT16, 6,
     {-0.0, -INFINITY, NAN, -3, 3, -1e30}, {0, INFINITY, NAN, 3, 3, 1e30}},
    {"gelu", NULL, BP_FLOAT64, BP_FLOAT64, 6,
     {1, -1, 0, NAN, 3, -3},
     {0.8413447460685429, -0.15865525393145707, 0, NAN, 2.99595030590511, -0.00404969409489031}},
    /* gelu's tanh form. */
    {"gelu", "tanh", BP_FLOAT64, BP_FLOAT64, 6,
     {1, -1, 0, NAN, 3, -3},
     {0.8411919906082768, -0.15880800939172324, 0, NAN, 2.996362607918227,
      -0.0036373920817729943}},
    /* Integers and bool into the float ops give float32. */
    {"exp", NULL, BP_INT32, BP_FLOAT32, 4,
     {0, 1, 4, -1}, {1, 2.718281828459045, 54.598150033144236, 0.36787944117144233}},
    {"sqrt", NULL, BP_UINT8, BP_FLOAT32, 4, {4, 9, 0, 255}, {2, 3, 0, 15.968719422671311}},
    {"gelu", NULL, BP_BOOL, BP_FLOAT32, 4,
     {1, 0, 1, 0}, {0.8413447460685429, 0, 0.8413447460685429, 0}},
};

/* Hand-worked values of the unary ops. */
static void unary_special(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(exact); i++) {
    const exact_unary *e = &exact[i];
    ctx_set("%s(%s%s%s) of hand-worked values", e->op, dt_name(e->dt),
            e->approximate ? ", approximate=" : "", e->approximate ? e->approximate : "");
    bp_tensor *a = tensor_d(e->dt, e->in, e->n);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    if (e->approximate) bp_stack_push_str(&s, e->approximate);
    bp_tensor *res = RUN(core_op(e->op), &s, .in = {a}, .ret = RET_NEW);
    rt *want = lit_d(e->dr, 1, (int64_t[]){e->n}, e->want);
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* Integers: wraparound at the most negative value. */
  struct {
    const char *op;
    int32_t dt;
    int64_t in[4], want[4];
  } in[] = {
      {"abs", BP_INT8, {-128, -1, 5, 0}, {-128, 1, 5, 0}},
      {"neg", BP_INT32, {INT32_MIN, 5, 0, -7}, {INT32_MIN, -5, 0, 7}},
      {"neg", BP_UINT8, {1, 0, 200, 255}, {255, 0, 56, 1}},
      {"abs", BP_UINT8, {255, 0, 128, 1}, {255, 0, 128, 1}},
      {"relu", BP_INT16, {-5, 0, 7, INT16_MIN}, {0, 0, 7, 0}},
      {"abs", BP_INT64, {INT64_MIN, -3, INT64_MAX, 0}, {INT64_MIN, 3, INT64_MAX, 0}},
  };
  int64_t n4[] = {4};
  for (size_t i = 0; i < NELEMS(in); i++) {
    ctx_set("%s(%s) hand-worked values", in[i].op, dt_name(in[i].dt));
    bp_tensor *a = tensor_i(in[i].dt, in[i].in, 4);
    bp_tensor *res = call_t(in[i].op, a, NULL, NULL);
    rt *want = lit_i(in[i].dt, 1, n4, in[i].want);
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      UNARY_CASES(LIST_CASE, _)
      TAP_CASE(unary_special),
      TAP_CASE(unary_exp_edges),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
