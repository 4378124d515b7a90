/*
 * The CPU plugin's reductions (sum, with and without dtype=, mean, amax,
 * amin, argmax) against the float64 reference of ref.c for every dtype,
 * over random dim lists of seeded random tensors in every layout; and
 * hand-worked cases: empty inputs, integer accumulation, NaN rules,
 * first-index ties, 0-dim tensors.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <math.h>
#include <string.h>

#include "cases.h"
#include "harness.h"
#include "trials.h"

static void reductions_sum(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 30; t++)
      reduce_trial(RR_SUM, all_dtypes[i], trial_seed(0x50000000 + (i << 8), t), false);
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 10; t++)
      reduce_trial(RR_SUM, all_dtypes[i], trial_seed(0x50100000 + (i << 8), t), true);
  cpu_done();
}

static void reductions_mean(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 40; t++)
      reduce_trial(RR_MEAN, float_dtypes[i], trial_seed(0x50200000 + (i << 8), t), false);
  cpu_done();
}

static void reductions_minmax(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 25; t++) {
      reduce_trial(RR_AMAX, all_dtypes[i], trial_seed(0x50300000 + (i << 8), t), false);
      reduce_trial(RR_AMIN, all_dtypes[i], trial_seed(0x50400000 + (i << 8), t), false);
    }
  cpu_done();
}

static void reductions_argmax(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++) {
    if (all_dtypes[i] == BP_BOOL) continue;
    for (int t = 0; t < 40; t++) argmax_trial(all_dtypes[i], trial_seed(0x50500000 + (i << 8), t));
  }
  cpu_done();
}

/* Hand-worked reductions: empty inputs, integer accumulation, NaN rules,
 * first-index ties. */
static void reductions_special(void) {
  cpu_setup();
  int64_t none[1] = {0}, d1[] = {1}, d0[] = {0};
  int64_t s0[] = {0}, s30[] = {3, 0}, s20[] = {2, 0}, n1[] = {1}, n3[] = {3};
  {
    ctx_set("sum and mean of nothing");
    bp_tensor *e = tensor_zeros(BP_FLOAT32, 1, s0), *e2 = tensor_zeros(BP_INT32, 2, s30);
    bp_tensor *e3 = tensor_zeros(BP_FLOAT64, 2, s20);
    bp_tensor *r1 = call_reduce("sum", e, none, 0, false);
    bp_tensor *r2 = call_reduce("sum", e2, d1, 1, false);
    bp_tensor *r3 = call_reduce("mean", e, none, 0, false);
    bp_tensor *r4 = call_reduce("mean", e3, d1, 1, true);
    rt *w1 = lit_f(BP_FLOAT32, 0, NULL, (double[]){0});
    rt *w2 = lit_i(BP_INT64, 1, n3, (int64_t[]){0, 0, 0});
    rt *w3 = lit_f(BP_FLOAT32, 0, NULL, (double[]){NAN});
    rt *w4 = lit_f(BP_FLOAT64, 2, (int64_t[]){2, 1}, (double[]){NAN, NAN});
    CLOSE(r1, w1, 1, TOL_PLAIN);
    CLOSE(r2, w2, 1, TOL_PLAIN);
    CLOSE(r3, w3, 1, TOL_PLAIN);
    CLOSE(r4, w4, 1, TOL_PLAIN);
    rt *rs[] = {w1, w2, w3, w4};
    for (int k = 0; k < 4; k++) rt_free(rs[k]);
    bp_tensor *ts[] = {e, e2, e3, r1, r2, r3, r4};
    for (int k = 0; k < 7; k++) bp_tensor_release(ts[k]);
  }
  {
    ctx_set("amax over a dim that is not empty, of a tensor that is");
    bp_tensor *e = tensor_zeros(BP_FLOAT32, 2, (int64_t[]){0, 3});
    bp_tensor *r1 = call_reduce("amax", e, d1, 1, false);
    rt *w = lit_f(BP_FLOAT32, 1, s0, NULL);
    CLOSE(r1, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(r1);
    bp_tensor_release(e);
  }
  struct {
    const char *op;
    int32_t dt;
    int64_t in[4];
    int32_t wdt;
    int64_t want;
  } isum[] = {
      {"sum", BP_INT64, {INT64_MAX, 1, 0, 0}, BP_INT64, INT64_MIN},
      {"sum", BP_INT8, {100, 100, 100, -1}, BP_INT64, 299},
      {"sum", BP_UINT8, {255, 255, 255, 255}, BP_INT64, 1020},
      {"sum", BP_BOOL, {1, 1, 0, 1}, BP_INT64, 3},
      {"sum", BP_INT32, {INT32_MAX, INT32_MAX, 2, 0}, BP_INT64, 4294967296},
      {"amax", BP_INT8, {-5, -3, -128, -4}, BP_INT8, -3},
      {"amin", BP_UINT8, {5, 255, 3, 4}, BP_UINT8, 3},
      {"amax", BP_BOOL, {0, 1, 0, 0}, BP_BOOL, 1},
      {"amin", BP_BOOL, {1, 1, 0, 1}, BP_BOOL, 0},
      {"amax", BP_INT64, {INT64_MIN, INT64_MIN + 1, -1, INT64_MIN}, BP_INT64, -1},
      {"argmax", BP_INT32, {3, 5, 5, 1}, BP_INT64, 1},
      {"argmax", BP_UINT8, {0, 255, 255, 7}, BP_INT64, 1},
      {"argmax", BP_INT8, {-128, -128, -128, -128}, BP_INT64, 0},
      {"argmax", BP_INT16, {-2, -1, 0, 0}, BP_INT64, 2},
  };
  for (size_t i = 0; i < NELEMS(isum); i++) {
    ctx_set("%s(%s) of hand-worked values", isum[i].op, dt_name(isum[i].dt));
    bp_tensor *a = tensor_i(isum[i].dt, isum[i].in, 4), *res;
    if (!strcmp(isum[i].op, "argmax")) {
      bp_value slots[1];
      bp_stack s = BP_STACK_INIT(slots, 1);
      bp_stack_push_tensor(&s, a);
      res = RUN(core_op("argmax"), &s, .in = {a}, .ret = RET_NEW);
    } else {
      res = call_reduce(isum[i].op, a, none, 0, false);
    }
    rt *w = lit_i(isum[i].wdt, 0, NULL, &isum[i].want);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* NaN: amax and amin propagate it, argmax takes the first. */
  for (size_t i = 0; i < NELEMS(float_dtypes); i++) {
    int32_t dt = float_dtypes[i];
    ctx_set("NaN in amax/amin/argmax, %s", dt_name(dt));
    bp_tensor *a = tensor_f(dt, (double[]){1, NAN, 3, NAN, INFINITY}, 5);
    bp_tensor *b = tensor_f(dt, (double[]){-INFINITY, -INFINITY, -INFINITY}, 3);
    bp_tensor *c = tensor_f(dt, (double[]){-0.5, 7, -1e4, 7}, 4);
    bp_tensor *r1 = call_reduce("amax", a, none, 0, false);
    bp_tensor *r2 = call_reduce("amin", a, d0, 1, true);
    bp_tensor *r3 = call_t("argmax", a, NULL, NULL);
    bp_tensor *r4 = call_t("argmax", b, NULL, NULL);
    bp_tensor *r5 = call_t("argmax", c, NULL, NULL);
    bp_tensor *r6 = call_reduce("amin", c, d0, 1, false);
    rt *w1 = lit_f(dt, 0, NULL, (double[]){NAN}), *w2 = lit_f(dt, 1, n1, (double[]){NAN});
    rt *w3 = lit_i(BP_INT64, 0, NULL, (int64_t[]){1}),
       *w4 = lit_i(BP_INT64, 0, NULL, (int64_t[]){0});
    rt *w5 = lit_i(BP_INT64, 0, NULL, (int64_t[]){1}), *w6 = lit_f(dt, 0, NULL, (double[]){-1e4});
    CLOSE(r1, w1, 1, TOL_PLAIN);
    CLOSE(r2, w2, 1, TOL_PLAIN);
    CLOSE(r3, w3, 1, TOL_PLAIN);
    CLOSE(r4, w4, 1, TOL_PLAIN);
    CLOSE(r5, w5, 1, TOL_PLAIN);
    CLOSE(r6, w6, 1, TOL_PLAIN);
    rt *rs[] = {w1, w2, w3, w4, w5, w6};
    for (int k = 0; k < 6; k++) rt_free(rs[k]);
    bp_tensor *ts[] = {a, b, c, r1, r2, r3, r4, r5, r6};
    for (int k = 0; k < 9; k++) bp_tensor_release(ts[k]);
  }
  /* argmax with dim=None and keepdim: an all-ones shape holding the flat
   * index (of the logical order, here of a transposed view). */
  {
    ctx_set("argmax(float32 [2, 3] transposed, dim=None, keepdim=True)");
    bp_tensor *base = tensor_f(BP_FLOAT32, (double[]){0, 1, 2, 9, 4, 5}, 6), *t = NULL;
    /* base as [3, 2] row-major; t is its transpose [2, 3]: t[1][1] = 9. */
    bp_tensor_as_strided(base, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2}, 0, &t);
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, t);
    bp_stack_push_none(&s);
    bp_stack_push_bool(&s, true);
    bp_tensor *res = RUN(core_op("argmax"), &s, .in = {t}, .ret = RET_NEW);
    rt *w = lit_i(BP_INT64, 2, (int64_t[]){1, 1}, (int64_t[]){4});
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(t);
    bp_tensor_release(base);
  }
  /* sum's dtype: the input is converted first, and the result wraps in
   * the dtype. */
  {
    ctx_set("sum(int32, dtype=int8) and sum(float16, dtype=float32)");
    bp_tensor *a = tensor_i(BP_INT32, (int64_t[]){100, 100}, 2);
    bp_tensor *b = tensor_f(BP_FLOAT16, (double[]){60000, 60000}, 2);
    bp_value slots[4];
    bp_stack s = BP_STACK_INIT(slots, 4);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_int_list(&s, none, 0);
    bp_stack_push_bool(&s, false);
    bp_stack_push_scalar_type(&s, BP_INT8);
    bp_tensor *r1 = RUN(core_op("sum"), &s, .in = {a}, .ret = RET_NEW);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_int_list(&s, none, 0);
    bp_stack_push_bool(&s, false);
    bp_stack_push_scalar_type(&s, BP_FLOAT32);
    bp_tensor *r2 = RUN(core_op("sum"), &s, .in = {b}, .ret = RET_NEW);
    /* Without a dtype, float16 sums round to float16: 120000 is inf. */
    bp_tensor *r3 = call_reduce("sum", b, none, 0, false);
    rt *w1 = lit_i(BP_INT8, 0, NULL, (int64_t[]){200 - 256});
    rt *w2 = lit_f(BP_FLOAT32, 0, NULL, (double[]){120000});
    rt *w3 = lit_f(BP_FLOAT16, 0, NULL, (double[]){INFINITY});
    CLOSE(r1, w1, 1, TOL_PLAIN);
    CLOSE(r2, w2, 1, TOL_PLAIN);
    CLOSE(r3, w3, 1, TOL_PLAIN);
    rt *rs[] = {w1, w2, w3};
    for (int k = 0; k < 3; k++) rt_free(rs[k]);
    bp_tensor *ts[] = {a, b, r1, r2, r3};
    for (int k = 0; k < 5; k++) bp_tensor_release(ts[k]);
  }
  /* sum(dtype=float16 or bfloat16) rounds each element once, as cast does:
   * 1 + 2^-11 + 2^-40 is above the float16 tie between 1 and 1 + 2^-10,
   * and 2^24 + 2^16 + 1 above the bfloat16 tie between 2^24 and 2^24 +
   * 2^17, but both round to that tie in float32 first.  The cancelling
   * second element leaves the rounding as the whole result. */
  {
    ctx_set("sum(float64, dtype=float16) and sum(int64, dtype=bfloat16) at ties");
    bp_tensor *a = tensor_f(BP_FLOAT64, (double[]){1 + 0x1p-11 + 0x1p-40, -1}, 2);
    bp_tensor *b = tensor_i(BP_INT64, (int64_t[]){(1 << 24) + (1 << 16) + 1, -(1 << 24)}, 2);
    bp_value slots[4];
    bp_stack s = BP_STACK_INIT(slots, 4);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_int_list(&s, none, 0);
    bp_stack_push_bool(&s, false);
    bp_stack_push_scalar_type(&s, BP_FLOAT16);
    bp_tensor *r1 = RUN(core_op("sum"), &s, .in = {a}, .ret = RET_NEW);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_int_list(&s, none, 0);
    bp_stack_push_bool(&s, false);
    bp_stack_push_scalar_type(&s, BP_BFLOAT16);
    bp_tensor *r2 = RUN(core_op("sum"), &s, .in = {b}, .ret = RET_NEW);
    rt *w1 = lit_f(BP_FLOAT16, 0, NULL, (double[]){0x1p-10});
    rt *w2 = lit_f(BP_BFLOAT16, 0, NULL, (double[]){0x1p17});
    CLOSE(r1, w1, 2, TOL_SUM);
    CLOSE(r2, w2, 2, TOL_SUM);
    rt_free(w1);
    rt_free(w2);
    bp_tensor *ts[] = {a, b, r1, r2};
    for (int k = 0; k < 4; k++) bp_tensor_release(ts[k]);
  }
  /* A 0-dim tensor reduces to itself, with dims [], [0] or [-1]. */
  {
    int64_t dm1[] = {-1};
    const int64_t *dl[] = {none, d0, dm1};
    for (int k = 0; k < 3; k++) {
      ctx_set("sum/amax of a 0-dim float64, dims %d", k);
      bp_tensor *a = tensor_zeros(BP_FLOAT64, 0, NULL);
      store_f(bp_tensor_get_view(a)->data, BP_FLOAT64, -2.5);
      bp_tensor *r1 = call_reduce("sum", a, dl[k], k ? 1 : 0, true);
      bp_tensor *r2 = call_reduce("amax", a, dl[k], k ? 1 : 0, false);
      rt *w = lit_f(BP_FLOAT64, 0, NULL, (double[]){-2.5});
      CLOSE(r1, w, 1, TOL_PLAIN);
      CLOSE(r2, w, 1, TOL_PLAIN);
      rt_free(w);
      bp_tensor_release(r1);
      bp_tensor_release(r2);
      bp_tensor_release(a);
    }
  }
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(reductions_sum),
      TAP_CASE(reductions_mean),
      TAP_CASE(reductions_minmax),
      TAP_CASE(reductions_argmax),
      TAP_CASE(reductions_special),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
