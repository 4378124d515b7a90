/*
 * The CPU plugin's broadcasting elementwise ops against the float64
 * reference of ref.c: add, sub, mul, div, maximum, minimum and pow for
 * every dtype and every pair of dtypes, add.out, muladd and where, on
 * seeded random operands (broadcast, transposed, strided, stride-0 and
 * overlapping, with special values), and hand-worked values.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "harness.h"
#include "trials.h"

/* ------------------------------------------------------------------------ */
/* Elementwise binary ops                                                   */
/* ------------------------------------------------------------------------ */

/* Every binary op on two tensors of dtype dt, `trials` times. */
static void binary_same_dtype(int32_t dt, int trials, uint64_t base) {
  cpu_setup();
  for (int op = RB_ADD; op <= RB_POW; op++) {
    if (dt == BP_BOOL && (op == RB_SUB || op == RB_POW)) continue; /* errors */
    for (int t = 0; t < trials; t++) binary_trial(op, dt, dt, trial_seed(base + (uint64_t)op, t));
  }
  cpu_done();
}

/* A case per dtype: its trials per op and its base seed. */
#define BINARY_CASES(X, fn)                           \
  X(fn, binary_float32, BP_FLOAT32, 40, 0xb1000000)   \
  X(fn, binary_float64, BP_FLOAT64, 30, 0xb1100000)   \
  X(fn, binary_float16, BP_FLOAT16, 30, 0xb1200000)   \
  X(fn, binary_bfloat16, BP_BFLOAT16, 30, 0xb1300000) \
  X(fn, binary_int8, BP_INT8, 25, 0xb1400000)         \
  X(fn, binary_int16, BP_INT16, 25, 0xb1400100)       \
  X(fn, binary_int32, BP_INT32, 25, 0xb1400200)       \
  X(fn, binary_int64, BP_INT64, 25, 0xb1400300)       \
  X(fn, binary_uint8, BP_UINT8, 25, 0xb1400400)       \
  X(fn, binary_bool, BP_BOOL, 30, 0xb1500000)
BINARY_CASES(DEFINE_CASE, binary_same_dtype)

/* Every pair of different dtypes, every op their promotion allows. */
static void binary_promotion(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++) {
      if (i == j) continue;
      for (int op = RB_ADD; op <= RB_POW; op++)
        for (int t = 0; t < 3; t++)
          binary_trial(op, all_dtypes[i], all_dtypes[j],
                       trial_seed(0xb1600000 + (i << 12) + (j << 8) + (uint64_t)op, t));
    }
  cpu_done();
}

/* Hand-worked values that doubles hold exactly, of any dtypes: the op,
 * the operands' dtypes, the result's, the number of elements, alpha (NAN:
 * none passed), the operands and the result. */
typedef struct exact_binary {
  const char *op;
  int32_t da, db, dr;
  int64_t n;
  double alpha, a[9], b[9], want[9];
} exact_binary;

static const exact_binary exact[] = {
    /* add with an integral alpha on integers, and alpha wrapping through it. */
    {"add", BP_INT16, BP_INT16, BP_INT16, 2, 3, {1000, -1}, {20000, 5}, {61000 - 65536, 14}},
    /* int64 with float16 gives float16, which overflows to inf. */
    {"add", BP_INT64, BP_FLOAT16, BP_FLOAT16, 3, NAN,
     {70000, 3, -100000}, {1, 0.5, 0}, {INFINITY, 3.5, -INFINITY}},
    /* float16 with bfloat16 gives float32. */
    {"mul", BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, 2, NAN, {1.5, 60000}, {-2, 4}, {-3, 240000}},
    /* Booleans: add and maximum are or, mul and minimum are and, div is
     * float32. */
    {"add", BP_BOOL, BP_BOOL, BP_BOOL, 4, NAN, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 1, 1, 0}},
    {"maximum", BP_BOOL, BP_BOOL, BP_BOOL, 4, NAN, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 1, 1, 0}},
    {"mul", BP_BOOL, BP_BOOL, BP_BOOL, 4, NAN, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 0, 0, 0}},
    {"minimum", BP_BOOL, BP_BOOL, BP_BOOL, 4, NAN, {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 0, 0, 0}},
    {"div", BP_BOOL, BP_BOOL, BP_FLOAT32, 4, NAN,
     {1, 0, 1, 0}, {1, 1, 0, 0}, {1, 0, INFINITY, NAN}},
    /* div of integers is true division in float32. */
    {"div", BP_INT32, BP_INT32, BP_FLOAT32, 6, NAN,
     {7, -7, 1, 0, 1, 16777217}, {2, 2, 0, 0, 3, 1}, {3.5, -3.5, INFINITY, NAN, 1.0 / 3, 16777216}},
    /* Float pow is C's pow. */
    {"pow", BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, 9, NAN,
     {-8, 0, -0.0, 1, NAN, -1, 2, 4, -2},
     {1.0 / 3, -1, -1, NAN, 0, INFINITY, 10, 0.5, 3},
     {NAN, INFINITY, -INFINITY, 1, 1, 1, 1024, 2, -8}},
    {"pow", BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, 9, NAN,
     {-8, 0, -0.0, 1, NAN, -1, 2, 4, -2},
     {1.0 / 3, -1, -1, NAN, 0, INFINITY, 10, 0.5, 3},
     {NAN, INFINITY, -INFINITY, 1, 1, 1, 1024, 2, -8}},
    /* sub with alpha on floats; float16 rounds to nearest-even: 2048 + 1
     * is a tie at float16's spacing of 2 there, and even is 2048. */
    {"sub", BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, 5, 2,
     {1, 2048, 65504, 0, -1}, {0.25, -0.5, -8, 0, 0.5}, {0.5, 2048, INFINITY, 0, -2}},
};

/* Hand-worked values: NaN in maximum/minimum, wraparound, promotion,
 * boolean logic, true division of integers, integer and float pow. */
static void binary_special(void) {
  cpu_setup();
  int64_t n4[] = {4}, n1[] = {1};
  for (size_t i = 0; i < NELEMS(float_dtypes); i++) {
    int32_t dt = float_dtypes[i];
    ctx_set("maximum/minimum with NaN, %s", dt_name(dt));
    rt *a = lit_f(dt, 1, n4, (double[]){NAN, 1, -INFINITY, 2});
    rt *b = lit_f(dt, 1, n4, (double[]){0, NAN, INFINITY, -3});
    bp_tensor *ta = from_rt(a), *tb = from_rt(b);
    rt *wmax = lit_f(dt, 1, n4, (double[]){NAN, NAN, INFINITY, 2});
    rt *wmin = lit_f(dt, 1, n4, (double[]){NAN, NAN, -INFINITY, -3});
    bp_tensor *r1 = call_t("maximum", ta, tb, NULL), *r2 = call_t("minimum", ta, tb, NULL);
    CLOSE(r1, wmax, 1, TOL_PLAIN);
    CLOSE(r2, wmin, 1, TOL_PLAIN);
    bp_tensor *all[] = {ta, tb, r1, r2};
    for (size_t k = 0; k < 4; k++) bp_tensor_release(all[k]);
    rt *rs[] = {a, b, wmax, wmin};
    for (size_t k = 0; k < 4; k++) rt_free(rs[k]);
  }
  /* Integer wraparound. */
  struct {
    const char *op;
    int32_t da, db, dr;
    int64_t a, b, want;
  } wraps[] = {
      {"add", BP_INT32, BP_INT32, BP_INT32, INT32_MAX, 1, INT32_MIN},
      {"sub", BP_INT8, BP_INT8, BP_INT8, -128, 1, 127},
      {"add", BP_UINT8, BP_UINT8, BP_UINT8, 250, 10, 4},
      {"mul", BP_INT64, BP_INT64, BP_INT64, (int64_t)1 << 62, 4, 0},
      {"mul", BP_INT16, BP_INT16, BP_INT16, 300, 300, 90000 - 65536},
      {"add", BP_INT64, BP_INT64, BP_INT64, INT64_MAX, INT64_MAX, -2},
      /* uint8 with int8 promotes to int16: no wrap at 8 bits. */
      {"add", BP_UINT8, BP_INT8, BP_INT16, 200, 100, 300},
      {"mul", BP_UINT8, BP_INT8, BP_INT16, 255, -1, -255},
      {"sub", BP_INT8, BP_UINT8, BP_INT16, -128, 255, -383},
      {"mul", BP_UINT8, BP_INT32, BP_INT32, 255, 3, 765},
      {"add", BP_BOOL, BP_INT8, BP_INT8, 1, 127, -128},
      {"maximum", BP_UINT8, BP_INT8, BP_INT16, 200, -1, 200},
      {"minimum", BP_INT64, BP_UINT8, BP_INT64, -5, 0, -5},
      {"pow", BP_INT8, BP_INT8, BP_INT8, 3, 5, 243 - 256},
      {"pow", BP_INT64, BP_INT64, BP_INT64, -2, 63, INT64_MIN},
      {"pow", BP_INT64, BP_INT64, BP_INT64, 2, 64, 0},
      {"pow", BP_INT32, BP_INT32, BP_INT32, 2, -1, 0},
      {"pow", BP_INT32, BP_INT32, BP_INT32, 1, -7, 1},
      {"pow", BP_INT32, BP_INT32, BP_INT32, -1, -3, -1},
      {"pow", BP_INT32, BP_INT32, BP_INT32, -1, -4, 1},
      {"pow", BP_INT16, BP_INT16, BP_INT16, 0, 0, 1},
      {"pow", BP_INT16, BP_INT16, BP_INT16, 0, -2, 0},
      {"pow", BP_UINT8, BP_UINT8, BP_UINT8, 2, 9, 0},
      {"pow", BP_UINT8, BP_INT8, BP_INT16, 7, 5, 16807},
  };
  for (size_t i = 0; i < NELEMS(wraps); i++) {
    ctx_set("%s(%s %lld, %s %lld)", wraps[i].op, dt_name(wraps[i].da), (long long)wraps[i].a,
            dt_name(wraps[i].db), (long long)wraps[i].b);
    bp_tensor *a = tensor_i(wraps[i].da, &wraps[i].a, 1),
              *b = tensor_i(wraps[i].db, &wraps[i].b, 1);
    rt *want = lit_i(wraps[i].dr, 1, n1, &wraps[i].want);
    bp_tensor *res = call_t(wraps[i].op, a, b, NULL);
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  for (size_t i = 0; i < NELEMS(exact); i++) {
    const exact_binary *e = &exact[i];
    char alpha[32] = "";
    if (!isnan(e->alpha)) snprintf(alpha, sizeof alpha, ", alpha=%g", e->alpha);
    ctx_set("%s(%s, %s%s) of hand-worked values", e->op, dt_name(e->da), dt_name(e->db), alpha);
    bp_tensor *a = tensor_d(e->da, e->a, e->n), *b = tensor_d(e->db, e->b, e->n);
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    push_t(&s, a, b, NULL);
    if (!isnan(e->alpha)) bp_stack_push_float(&s, e->alpha);
    bp_tensor *res = RUN(core_op(e->op), &s, .in = {a, b}, .ret = RET_NEW);
    rt *want = lit_d(e->dr, 1, (int64_t[]){e->n}, e->want);
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  cpu_done();
}

/* add.out: out in any writable layout, or exactly one of the inputs. */
static void add_out(void) {
  cpu_setup();
  const bp_op *op = core_op("add.out");
  static const int32_t pairs[][2] = {{BP_FLOAT32, BP_FLOAT32}, {BP_FLOAT64, BP_FLOAT32},
                                     {BP_FLOAT16, BP_FLOAT16}, {BP_BFLOAT16, BP_BFLOAT16},
                                     {BP_INT32, BP_INT32},     {BP_INT8, BP_UINT8},
                                     {BP_BOOL, BP_BOOL},       {BP_INT64, BP_FLOAT16},
                                     {BP_UINT8, BP_UINT8},     {BP_FLOAT16, BP_BFLOAT16}};
  for (size_t p = 0; p < NELEMS(pairs); p++)
    for (int t = 0; t < 24; t++) {
      uint64_t seed = trial_seed(0xa0d00000 + (p << 8), t);
      rng r;
      rng_seed(&r, seed);
      int32_t da = pairs[p][0], db = pairs[p][1], dt = dt_promote(da, db);
      int32_t n, nb;
      int64_t sizes[BP_MAX_NDIM], sb[BP_MAX_NDIM];
      rand_shape(&r, 4, 6, &n, sizes);
      rand_bcast_operand(&r, n, sizes, &nb, sb);
      /* out aliases self (0), other (1), or neither (2, 3); with keyword
       * arguments for 3; 4 is add.out(x, x, out=x). */
      int mode = (int)rng_int(&r, 0, 4);
      if (mode == 4) {
        nb = n;
        memcpy(sb, sizes, sizeof sizes);
        db = da = dt = pairs[p][0];
      }
      if (mode == 1) { /* other must then have the full shape and dtype */
        nb = n;
        memcpy(sb, sizes, sizeof sizes);
        db = dt;
        da = pairs[p][0] == dt ? pairs[p][1] : pairs[p][0];
      }
      if (mode == 0 && da != dt) mode = 2;
      int la, lb, lo = 0;
      rt *ra, *rb;
      bp_tensor *a =
          gen_tensor(&r, da, n, sizes, mode == 0 || mode == 4 ? LAY_WRITABLE : LAY_RANDOM,
                     VP_GENERAL, &ra, &la);
      bp_tensor *b = mode == 4 ? bp_tensor_retain(a)
                               : gen_tensor(&r, db, nb, sb, mode == 1 ? LAY_WRITABLE : LAY_RANDOM,
                                            VP_GENERAL, &rb, &lb);
      if (mode == 4) {
        rb = read_tensor(a);
        lb = la;
      }
      bp_tensor *out = mode == 0 || mode == 4 ? a : mode == 1 ? b : NULL;
      rt *junk = NULL;
      if (!out) out = gen_tensor(&r, dt, n, sizes, LAY_WRITABLE, VP_GENERAL, &junk, &lo);
      rt_free(junk);
      double alpha = pick_alpha(&r, dt);
      ctx_set("add.out(%s %s %s, %s %s %s, alpha=%g, out %s) mode=%d seed=0x%llx", dt_name(da),
              shape_str(n, sizes), layout_name(la), dt_name(db), shape_str(nb, sb), layout_name(lb),
              alpha, layout_name(lo), mode, (unsigned long long)seed);
      rt *want = ref_binary(RB_ADD, ra, rb, alpha);
      bp_value slots[4];
      bp_stack s = BP_STACK_INIT(slots, 4);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_tensor(&s, b);
      bp_tensor *res;
      if (mode == 3) {
        static const char *const kw[] = {"out", "alpha"};
        bp_stack_push_tensor(&s, out);
        bp_stack_push_float(&s, alpha);
        res = RUN(op, &s, .in = {a, b}, .mut = out, .ret = RET_SELF, .kw = kw, .nkw = 2);
      } else {
        bp_stack_push_float(&s, alpha);
        bp_stack_push_tensor(&s, out);
        res = RUN(op, &s,
                  .in = {mode == 0 || mode == 4 ? NULL : a, mode == 1 || mode == 4 ? NULL : b},
                  .mut = out, .ret = RET_SELF);
      }
      if (res) CLOSE(res, want, 1, TOL_PLAIN);
      rt_free(want);
      rt_free(ra);
      rt_free(rb);
      bp_tensor_release(res);
      if (out != a && out != b) bp_tensor_release(out);
      bp_tensor_release(a);
      bp_tensor_release(b);
    }
  cpu_done();
}

static void muladd(void) {
  cpu_setup();
  static const int32_t pairs[][2] = {
      {BP_FLOAT32, BP_FLOAT32},   {BP_FLOAT64, BP_FLOAT64}, {BP_FLOAT16, BP_FLOAT16},
      {BP_BFLOAT16, BP_BFLOAT16}, {BP_INT32, BP_FLOAT32},   {BP_FLOAT16, BP_BFLOAT16},
      {BP_BOOL, BP_FLOAT64},      {BP_INT64, BP_FLOAT16},   {BP_BFLOAT16, BP_UINT8}};
  static const double cs[] = {0.5, -1.25, 3, 0, 1000, -0.0};
  for (size_t p = 0; p < NELEMS(pairs); p++)
    for (int t = 0; t < 30; t++) {
      uint64_t seed = trial_seed(0x3a000000 + (p << 8), t);
      rng r;
      rng_seed(&r, seed);
      int32_t n, na, nb;
      int64_t sizes[BP_MAX_NDIM], sa[BP_MAX_NDIM], sb[BP_MAX_NDIM];
      rand_shape(&r, 4, 6, &n, sizes);
      rand_bcast_operand(&r, n, sizes, &na, sa);
      rand_bcast_operand(&r, n, sizes, &nb, sb);
      int la, lb;
      rt *ra, *rb;
      bp_tensor *a = gen_tensor(&r, pairs[p][0], na, sa, LAY_RANDOM, VP_GENERAL, &ra, &la);
      bp_tensor *b = gen_tensor(&r, pairs[p][1], nb, sb, LAY_RANDOM, VP_GENERAL, &rb, &lb);
      double c = cs[rng_int(&r, 0, (int64_t)NELEMS(cs) - 1)];
      ctx_set("muladd(%s %s %s, %s %s %s, %g) seed=0x%llx", dt_name(pairs[p][0]), shape_str(na, sa),
              layout_name(la), dt_name(pairs[p][1]), shape_str(nb, sb), layout_name(lb), c,
              (unsigned long long)seed);
      bp_value slots[3];
      bp_stack s = BP_STACK_INIT(slots, 3);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_tensor(&s, b);
      bp_stack_push_float(&s, c);
      bp_tensor *res = RUN(core_op("muladd"), &s, .in = {a, b}, .ret = RET_NEW);
      rt *want = ref_muladd(ra, rb, c);
      if (res) CLOSE(res, want, 1, TOL_PLAIN);
      rt_free(want);
      rt_free(ra);
      rt_free(rb);
      bp_tensor_release(res);
      bp_tensor_release(a);
      bp_tensor_release(b);
    }
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* where                                                                    */
/* ------------------------------------------------------------------------ */

static void where_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++)
      for (int t = 0; t < (i == j ? 12 : 3); t++)
        where_trial(all_dtypes[i], all_dtypes[j], trial_seed(0x3e000000 + (i << 12) + (j << 8), t));
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      BINARY_CASES(LIST_CASE, _)
      TAP_CASE(binary_promotion),
      TAP_CASE(binary_special),
      TAP_CASE(add_out),
      TAP_CASE(muladd),
      TAP_CASE(where_all),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
