/*
 * The CPU plugin (plugins/cpu/) against docs/op-set.md: every core op, for
 * every dtype it takes, on seeded random cases (shapes with 0-size, 1-sized
 * and 0-dim dimensions, broadcasting, transposed, strided, stride-0 and
 * overlapping inputs, special values) checked against the float64
 * reference of ref.c within the spec's tolerances; targeted cases with
 * values worked out by hand; the error paths; and tensors large enough for
 * the plugin's thread pool.
 *
 * Every call also goes through the harness's checks: the result agrees
 * with bp_op_meta, is new and contiguous (or the argument an in-place op
 * returns), the inputs are unchanged and no handle leaks.  A failing trial
 * prints its seed; the suite is deterministic, so TAP_ONLY=<case> replays
 * it.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cases.h"
#include "harness.h"
#include "testutil.h"
#include "trials.h"

/* The names of every core op, for the registration check. */
static const char *const core_ops[] = {
    "add",        "add.out", "sub",        "mul",    "div",    "maximum", "minimum",
    "pow",        "muladd",  "neg",        "abs",    "exp",    "log",     "sqrt",
    "rsqrt",      "relu",    "sigmoid",    "tanh",   "gelu",   "where",   "sum",
    "mean",       "amax",    "amin",       "argmax", "matmul", "softmax", "log_softmax",
    "layer_norm", "cast",    "contiguous", "fill_",  "copy_"};

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static void kernels_registered(void) {
  cpu_setup();
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(cpu_plugin_path(), &p), BP_OK);
  bp_plugin_info pi = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
  is_status(bp_plugin_get_info(p, &pi), BP_OK);
  is_str(pi.name, "cpu");
  is_int(pi.state, BP_PLUGIN_LOADED);
  is_int(pi.op_set_version, BP_CORE_OP_SET_VERSION);
  int missing = 0;
  for (size_t i = 0; i < NELEMS(core_ops); i++) {
    const bp_op *op = core_op(core_ops[i]);
    if (!op) continue;
    bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    is_status(bp_op_get_info(op, &info), BP_OK);
    ok(info.has_meta);
    bool found = false;
    for (int32_t k = 0; k < info.nkernels; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK) continue;
      if (ki.device_type == BP_DEVICE_CPU && ki.plugin && !strcmp(ki.plugin, "cpu") && ki.enabled)
        found = true;
    }
    if (!found) {
      tap_diag("core::%s has no enabled CPU kernel from the cpu plugin", core_ops[i]);
      missing++;
    }
  }
  is_int(missing, 0);
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* Elementwise binary ops                                                   */
/* ------------------------------------------------------------------------ */

/* Every binary op on two tensors of dtype dt, `trials` times. */
static void binary_same_dtype(int32_t dt, int trials, uint64_t base) {
  for (int op = RB_ADD; op <= RB_POW; op++) {
    if (dt == BP_BOOL && (op == RB_SUB || op == RB_POW)) continue; /* errors */
    for (int t = 0; t < trials; t++) binary_trial(op, dt, dt, trial_seed(base + (uint64_t)op, t));
  }
}

static void binary_float32(void) {
  cpu_setup();
  binary_same_dtype(BP_FLOAT32, 40, 0xb1000000);
  cpu_done();
}

static void binary_float64(void) {
  cpu_setup();
  binary_same_dtype(BP_FLOAT64, 30, 0xb1100000);
  cpu_done();
}

static void binary_float16(void) {
  cpu_setup();
  binary_same_dtype(BP_FLOAT16, 30, 0xb1200000);
  cpu_done();
}

static void binary_bfloat16(void) {
  cpu_setup();
  binary_same_dtype(BP_BFLOAT16, 30, 0xb1300000);
  cpu_done();
}

static void binary_ints(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(int_dtypes); i++)
    binary_same_dtype(int_dtypes[i], 25, 0xb1400000 + ((uint64_t)i << 8));
  cpu_done();
}

static void binary_bool(void) {
  cpu_setup();
  binary_same_dtype(BP_BOOL, 30, 0xb1500000);
  cpu_done();
}

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

/* Hand-worked values: NaN in maximum/minimum, wraparound, promotion,
 * boolean logic, true division of integers, integer and float pow. */
static void binary_special(void) {
  cpu_setup();
  int64_t n3[] = {3}, n4[] = {4}, n5[] = {5}, n9[] = {9}, n6[] = {6}, n1[] = {1};
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
  /* add with an integral alpha on integers, and alpha wrapping through it. */
  {
    ctx_set("add(int16, int16, alpha=3)");
    bp_tensor *a = tensor_i(BP_INT16, (int64_t[]){1000, -1}, 2);
    bp_tensor *b = tensor_i(BP_INT16, (int64_t[]){20000, 5}, 2);
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, 3);
    bp_tensor *res = RUN(core_op("add"), &s, .in = {a, b}, .ret = RET_NEW);
    int64_t n2[] = {2};
    rt *want = lit_i(BP_INT16, 1, n2, (int64_t[]){61000 - 65536, 14});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* int64 with float16 gives float16, which overflows to inf. */
  {
    ctx_set("add(int64, float16)");
    bp_tensor *a = tensor_i(BP_INT64, (int64_t[]){70000, 3, -100000}, 3);
    bp_tensor *b = tensor_f(BP_FLOAT16, (double[]){1, 0.5, 0}, 3);
    bp_tensor *res = call_t("add", a, b, NULL);
    rt *want = lit_f(BP_FLOAT16, 1, n3, (double[]){INFINITY, 3.5, -INFINITY});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* float16 with bfloat16 gives float32. */
  {
    ctx_set("mul(float16, bfloat16)");
    bp_tensor *a = tensor_f(BP_FLOAT16, (double[]){1.5, 60000}, 2);
    bp_tensor *b = tensor_f(BP_BFLOAT16, (double[]){-2, 4}, 2);
    bp_tensor *res = call_t("mul", a, b, NULL);
    int64_t n2[] = {2};
    rt *want = lit_f(BP_FLOAT32, 1, n2, (double[]){-3, 240000});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* Booleans: add and maximum are or, mul and minimum are and, div is
   * float32. */
  {
    bp_tensor *a = tensor_i(BP_BOOL, (int64_t[]){1, 0, 1, 0}, 4);
    bp_tensor *b = tensor_i(BP_BOOL, (int64_t[]){1, 1, 0, 0}, 4);
    const char *ops[] = {"add", "maximum", "mul", "minimum"};
    int64_t want_or[] = {1, 1, 1, 0}, want_and[] = {1, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
      ctx_set("%s(bool, bool)", ops[k]);
      bp_tensor *res = call_t(ops[k], a, b, NULL);
      rt *want = lit_i(BP_BOOL, 1, n4, k < 2 ? want_or : want_and);
      CLOSE(res, want, 1, TOL_PLAIN);
      rt_free(want);
      bp_tensor_release(res);
    }
    ctx_set("div(bool, bool)");
    bp_tensor *res = call_t("div", a, b, NULL);
    rt *want = lit_f(BP_FLOAT32, 1, n4, (double[]){1, 0, INFINITY, NAN});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* div of integers is true division in float32. */
  {
    ctx_set("div(int32, int32)");
    bp_tensor *a = tensor_i(BP_INT32, (int64_t[]){7, -7, 1, 0, 1, 16777217}, 6);
    bp_tensor *b = tensor_i(BP_INT32, (int64_t[]){2, 2, 0, 0, 3, 1}, 6);
    bp_tensor *res = call_t("div", a, b, NULL);
    rt *want = lit_f(BP_FLOAT32, 1, n6, (double[]){3.5, -3.5, INFINITY, NAN, 1.0 / 3, 16777216});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* Float pow is C's pow. */
  for (size_t i = 0; i < 2; i++) {
    int32_t dt = i ? BP_FLOAT64 : BP_FLOAT32;
    ctx_set("pow special values, %s", dt_name(dt));
    bp_tensor *a = tensor_f(dt, (double[]){-8, 0, -0.0, 1, NAN, -1, 2, 4, -2}, 9);
    bp_tensor *b = tensor_f(dt, (double[]){1.0 / 3, -1, -1, NAN, 0, INFINITY, 10, 0.5, 3}, 9);
    bp_tensor *res = call_t("pow", a, b, NULL);
    rt *want = lit_f(dt, 1, n9, (double[]){NAN, INFINITY, -INFINITY, 1, 1, 1, 1024, 2, -8});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  /* sub and add with alpha on floats; float16 rounds to nearest-even. */
  {
    ctx_set("sub(float16, float16, alpha=2)");
    bp_tensor *a = tensor_f(BP_FLOAT16, (double[]){1, 2048, 65504, 0, -1}, 5);
    bp_tensor *b = tensor_f(BP_FLOAT16, (double[]){0.25, -0.5, -8, 0, 0.5}, 5);
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, 2);
    bp_tensor *res = RUN(core_op("sub"), &s, .in = {a, b}, .ret = RET_NEW);
    /* 2048 + 1 is a tie at float16's spacing of 2 there: even is 2048. */
    rt *want = lit_f(BP_FLOAT16, 1, n5, (double[]){0.5, 2048, INFINITY, 0, -2});
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
/* Elementwise unary ops                                                    */
/* ------------------------------------------------------------------------ */

static void unary_dtype(int32_t dt, int trials, uint64_t base) {
  for (int op = RU_NEG; op <= RU_GELU_TANH; op++) {
    if (dt == BP_BOOL && op <= RU_RELU) continue; /* errors */
    for (int t = 0; t < trials; t++) unary_trial(op, dt, trial_seed(base + (uint64_t)op, t));
  }
}

static void unary_float32(void) {
  cpu_setup();
  unary_dtype(BP_FLOAT32, 40, 0x0a000000);
  cpu_done();
}

static void unary_float64(void) {
  cpu_setup();
  unary_dtype(BP_FLOAT64, 30, 0x0a100000);
  cpu_done();
}

static void unary_half(void) {
  cpu_setup();
  unary_dtype(BP_FLOAT16, 30, 0x0a200000);
  unary_dtype(BP_BFLOAT16, 30, 0x0a300000);
  cpu_done();
}

static void unary_ints(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(int_dtypes); i++)
    unary_dtype(int_dtypes[i], 12, 0x0a400000 + ((uint64_t)i << 8));
  unary_dtype(BP_BOOL, 12, 0x0a500000);
  cpu_done();
}

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
      -103.98, -104, -105, -200, -1e30, -0x1.fffffep+127, 0.625, -0.625, 0x1.3ffffep-1, 3, -3};
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
      }
    }
    rt_free(want);
    bp_tensor_release(res);
  }
  rt_free(ra);
  bp_tensor_release(a);
  cpu_done();
}

/* Hand-worked values of the unary ops. */
static void unary_special(void) {
  cpu_setup();
  struct {
    const char *op;
    int32_t dt;
    double in[6];
    double want[6]; /* in the result dtype */
  } fl[] = {
      {"log",
       BP_FLOAT32,
       {0, -0.0, -1, INFINITY, NAN, 1},
       {-INFINITY, -INFINITY, NAN, INFINITY, NAN, 0}},
      {"sqrt",
       BP_FLOAT64,
       {-1, 0, 4, INFINITY, 2, NAN},
       {NAN, 0, 2, INFINITY, 1.4142135623730951, NAN}},
      {"rsqrt", BP_FLOAT32, {0, 4, INFINITY, -1, 0.25, NAN}, {INFINITY, 0.5, 0, NAN, 2, NAN}},
      {"relu", BP_FLOAT32, {NAN, -1, 2, -INFINITY, INFINITY, -0.0}, {NAN, 0, 2, 0, INFINITY, 0}},
      {"exp",
       BP_FLOAT16,
       {12, -INFINITY, 0, 1, NAN, -20},
       {INFINITY, 0, 1, 2.718281828459045, NAN, 2.0611536e-09}},
      {"sigmoid",
       BP_FLOAT32,
       {INFINITY, -INFINITY, 0, NAN, 100, -100},
       {1, 0, 0.5, NAN, 1, 3.7200759760208356e-44}},
      {"tanh",
       BP_BFLOAT16,
       {INFINITY, -INFINITY, 0, NAN, 20, -0.5},
       {1, -1, 0, NAN, 1, -0.46211715726000974}},
      {"neg", BP_FLOAT64, {0, -0.0, INFINITY, NAN, 1.5, -2}, {-0.0, 0, -INFINITY, NAN, -1.5, 2}},
      {"abs", BP_BFLOAT16, {-0.0, -INFINITY, NAN, -3, 3, -1e30}, {0, INFINITY, NAN, 3, 3, 1e30}},
      {"gelu",
       BP_FLOAT64,
       {1, -1, 0, NAN, 3, -3},
       {0.8413447460685429, -0.15865525393145707, 0, NAN, 2.99595030590511, -0.00404969409489031}},
  };
  int64_t n6[] = {6};
  for (size_t i = 0; i < NELEMS(fl); i++) {
    ctx_set("%s(%s) hand-worked values", fl[i].op, dt_name(fl[i].dt));
    bp_tensor *a = tensor_f(fl[i].dt, fl[i].in, 6);
    bp_tensor *res = call_t(fl[i].op, a, NULL, NULL);
    rt *want = lit_f(fl[i].dt, 1, n6, fl[i].want);
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* gelu's tanh form. */
  {
    ctx_set("gelu(float64, approximate=\"tanh\")");
    bp_tensor *a = tensor_f(BP_FLOAT64, (double[]){1, -1, 0, NAN, 3, -3}, 6);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_str(&s, "tanh");
    bp_tensor *res = RUN(core_op("gelu"), &s, .in = {a}, .ret = RET_NEW);
    rt *want = lit_f(BP_FLOAT64, 1, n6,
                     (double[]){0.8411919906082768, -0.15880800939172324, 0, NAN, 2.996362607918227,
                                -0.0036373920817729943});
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
  /* Integers and bool into the float ops give float32. */
  {
    ctx_set("exp/sqrt/gelu of integers and bool");
    bp_tensor *a = tensor_i(BP_INT32, (int64_t[]){0, 1, 4, -1}, 4);
    bp_tensor *b = tensor_i(BP_UINT8, (int64_t[]){4, 9, 0, 255}, 4);
    bp_tensor *c = tensor_i(BP_BOOL, (int64_t[]){1, 0, 1, 0}, 4);
    bp_tensor *r1 = call_t("exp", a, NULL, NULL), *r2 = call_t("sqrt", b, NULL, NULL);
    bp_tensor *r3 = call_t("gelu", c, NULL, NULL);
    rt *w1 = lit_f(BP_FLOAT32, 1, n4,
                   (double[]){1, 2.718281828459045, 54.598150033144236, 0.36787944117144233});
    rt *w2 = lit_f(BP_FLOAT32, 1, n4, (double[]){2, 3, 0, 15.968719422671311});
    rt *w3 = lit_f(BP_FLOAT32, 1, n4, (double[]){0.8413447460685429, 0, 0.8413447460685429, 0});
    CLOSE(r1, w1, 1, TOL_PLAIN);
    CLOSE(r2, w2, 1, TOL_PLAIN);
    CLOSE(r3, w3, 1, TOL_PLAIN);
    rt *rs[] = {w1, w2, w3};
    for (int k = 0; k < 3; k++) rt_free(rs[k]);
    bp_tensor *ts[] = {a, b, c, r1, r2, r3};
    for (int k = 0; k < 6; k++) bp_tensor_release(ts[k]);
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

/* ------------------------------------------------------------------------ */
/* Reductions                                                               */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* matmul                                                                   */
/* ------------------------------------------------------------------------ */

static void matmul_float32(void) {
  cpu_setup();
  for (int t = 0; t < 150; t++) matmul_trial(BP_FLOAT32, trial_seed(0x3a7000000, t));
  cpu_done();
}

static void matmul_others(void) {
  cpu_setup();
  for (int t = 0; t < 80; t++) {
    matmul_trial(BP_FLOAT64, trial_seed(0x3a7100000, t));
    matmul_trial(BP_FLOAT16, trial_seed(0x3a7200000, t));
    matmul_trial(BP_BFLOAT16, trial_seed(0x3a7300000, t));
  }
  cpu_done();
}

/* The same products through the plugin's own kernels: BP_BLAS_LIBRARY=none
 * (read when the plugin loads; each case is a fresh process) keeps it from
 * loading a BLAS library. */
static void matmul_builtin_kernels(void) {
  setenv("BP_BLAS_LIBRARY", "none", 1);
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 60; t++)
      matmul_trial(float_dtypes[i], trial_seed(0x3a7400000 + (i << 12), t));
  /* Large: row blocks in parallel, matrix-vector loops, a folded batch. */
  struct {
    int32_t dt, na, nb;
    int64_t sa[3], sb[3];
  } big[] = {{BP_FLOAT32, 2, 2, {200, 40}, {40, 190}},
             {BP_FLOAT64, 2, 1, {400, 150}, {150}},
             {BP_FLOAT32, 1, 2, {150}, {150, 400}},
             {BP_FLOAT16, 3, 2, {3, 120, 33}, {33, 100}},
             {BP_BFLOAT16, 3, 3, {2, 130, 20}, {2, 20, 140}}};
  rng r;
  rng_seed(&r, 0x3a75);
  for (size_t i = 0; i < NELEMS(big); i++) {
    int la, lb;
    rt *ra, *rb;
    bp_tensor *a = gen_tensor(&r, big[i].dt, big[i].na, big[i].sa, LAY_RANDOM, VP_UNIT, &ra, &la);
    bp_tensor *b = gen_tensor(&r, big[i].dt, big[i].nb, big[i].sb, LAY_RANDOM, VP_UNIT, &rb, &lb);
    ctx_set("large matmul without BLAS, %s %s %s x %s %s", dt_name(big[i].dt),
            shape_str(big[i].na, big[i].sa), layout_name(la), shape_str(big[i].nb, big[i].sb),
            layout_name(lb));
    bp_tensor *res = call_t("matmul", a, b, NULL);
    int64_t k;
    rt *w = ref_matmul(ra, rb, &k);
    CLOSE(res, w, k, TOL_SQRT);
    rt_free(w);
    rt_free(ra);
    rt_free(rb);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  cpu_done();
}

/* Hand-worked products: dot, vector-matrix, an empty inner dimension, and
 * 0 * inf, which must give NaN (no skipping of zeros). */
static void matmul_special(void) {
  cpu_setup();
  {
    ctx_set("matmul of two vectors is a 0-dim dot product");
    bp_tensor *a = tensor_f(BP_FLOAT32, (double[]){1, 2, 3}, 3);
    bp_tensor *b = tensor_f(BP_FLOAT32, (double[]){4, -5, 6}, 3);
    bp_tensor *res = call_t("matmul", a, b, NULL);
    rt *w = lit_f(BP_FLOAT32, 0, NULL, (double[]){12});
    CLOSE(res, w, 3, TOL_SQRT);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  {
    ctx_set("matmul vector [2] x matrix [2, 3], and matrix [3, 2] x vector [2]");
    bp_tensor *v = tensor_f(BP_FLOAT64, (double[]){1, -1}, 2);
    bp_tensor *mb = NULL, *mt = NULL;
    bp_tensor *m = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4, 5, 6}, 6);
    bp_tensor_as_strided(m, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}, 0, &mb);
    bp_tensor_as_strided(m, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0, &mt); /* mb^T */
    bp_tensor *r1 = call_t("matmul", v, mb, NULL), *r2 = call_t("matmul", mt, v, NULL);
    rt *w1 = lit_f(BP_FLOAT64, 1, (int64_t[]){3}, (double[]){-3, -3, -3});
    rt *w2 = lit_f(BP_FLOAT64, 1, (int64_t[]){3}, (double[]){-3, -3, -3});
    CLOSE(r1, w1, 2, TOL_SQRT);
    CLOSE(r2, w2, 2, TOL_SQRT);
    rt_free(w1);
    rt_free(w2);
    bp_tensor *ts[] = {v, mb, mt, m, r1, r2};
    for (int k = 0; k < 6; k++) bp_tensor_release(ts[k]);
  }
  {
    ctx_set("matmul [3, 0] x [0, 4] gives zeros");
    bp_tensor *a = tensor_zeros(BP_FLOAT32, 2, (int64_t[]){3, 0});
    bp_tensor *b = tensor_zeros(BP_FLOAT32, 2, (int64_t[]){0, 4});
    bp_tensor *res = call_t("matmul", a, b, NULL);
    double z[12] = {0};
    rt *w = lit_f(BP_FLOAT32, 2, (int64_t[]){3, 4}, z);
    CLOSE(res, w, 1, TOL_SQRT);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  for (size_t i = 0; i < NELEMS(float_dtypes); i++) {
    int32_t dt = float_dtypes[i];
    ctx_set("matmul with 0 * inf and NaN, %s", dt_name(dt));
    bp_tensor *base = tensor_f(dt, (double[]){0, 1, 2, 3}, 4), *a = NULL, *b = NULL;
    bp_tensor_as_strided(base, 2, (int64_t[]){2, 2}, (int64_t[]){2, 1}, 0, &a);
    bp_tensor *bb = tensor_f(dt, (double[]){INFINITY, 1, 0, NAN}, 4);
    bp_tensor_as_strided(bb, 2, (int64_t[]){2, 2}, (int64_t[]){2, 1}, 0, &b);
    /* [[0, 1], [2, 3]] x [[inf, 1], [0, NaN]] = [[NaN, NaN], [inf, NaN]] */
    bp_tensor *res = call_t("matmul", a, b, NULL);
    rt *w = lit_f(dt, 2, (int64_t[]){2, 2}, (double[]){NAN, NAN, INFINITY, NAN});
    CLOSE(res, w, 2, TOL_SQRT);
    rt_free(w);
    bp_tensor *ts[] = {base, a, bb, b, res};
    for (int k = 0; k < 5; k++) bp_tensor_release(ts[k]);
  }
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* softmax, log_softmax, layer_norm                                         */
/* ------------------------------------------------------------------------ */

static void softmax_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 40; t++) {
      softmax_trial(false, float_dtypes[i], trial_seed(0x50f70000 + (i << 8), t));
      softmax_trial(true, float_dtypes[i], trial_seed(0x50f80000 + (i << 8), t));
    }
  /* Hand-worked: the stable form, -inf, +inf, an all -inf slice, 0-dim. */
  struct {
    int32_t dt;
    double in[3], sm[3], lsm[3];
  } hw[] = {
      {BP_FLOAT32,
       {1, 2, 3},
       {0.09003057317038046, 0.24472847105479767, 0.6652409557748219},
       {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806}},
      {BP_FLOAT32,
       {1000, 1000, -INFINITY},
       {0.5, 0.5, 0},
       {-0.6931471805599453, -0.6931471805599453, -INFINITY}},
      {BP_FLOAT16,
       {10000, 10000, 10000},
       {1.0 / 3, 1.0 / 3, 1.0 / 3},
       {-1.0986122886681098, -1.0986122886681098, -1.0986122886681098}},
      {BP_FLOAT64, {INFINITY, 0, 1}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
      {BP_BFLOAT16, {-INFINITY, -INFINITY, -INFINITY}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
      {BP_FLOAT64, {NAN, 0, 1}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
  };
  int64_t n3[] = {3};
  for (size_t i = 0; i < NELEMS(hw); i++)
    for (int lg = 0; lg < 2; lg++) {
      ctx_set("%s(%s) hand-worked values #%zu", lg ? "log_softmax" : "softmax", dt_name(hw[i].dt),
              i);
      bp_tensor *a = tensor_f(hw[i].dt, hw[i].in, 3);
      bp_value slots[2];
      bp_stack s = BP_STACK_INIT(slots, 2);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_int(&s, -1);
      bp_tensor *res = RUN(core_op(lg ? "log_softmax" : "softmax"), &s, .in = {a}, .ret = RET_NEW);
      rt *w = lit_f(hw[i].dt, 1, n3, lg ? hw[i].lsm : hw[i].sm);
      CLOSE(res, w, 3, TOL_SQRT);
      rt_free(w);
      bp_tensor_release(res);
      bp_tensor_release(a);
    }
  {
    ctx_set("softmax and log_softmax of a 0-dim tensor");
    bp_tensor *a = tensor_zeros(BP_FLOAT32, 0, NULL);
    store_f(bp_tensor_get_view(a)->data, BP_FLOAT32, 7.5);
    for (int lg = 0; lg < 2; lg++) {
      bp_value slots[2];
      bp_stack s = BP_STACK_INIT(slots, 2);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_int(&s, lg ? 0 : -1);
      bp_tensor *res = RUN(core_op(lg ? "log_softmax" : "softmax"), &s, .in = {a}, .ret = RET_NEW);
      rt *w = lit_f(BP_FLOAT32, 0, NULL, (double[]){lg ? 0.0 : 1.0});
      CLOSE(res, w, 1, TOL_SQRT);
      rt_free(w);
      bp_tensor_release(res);
    }
    bp_tensor_release(a);
  }
  cpu_done();
}

static void layer_norm(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 50; t++)
      layer_norm_trial(float_dtypes[i], trial_seed(0x1a7e0000 + (i << 8), t));
  {
    /* x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25. */
    ctx_set("layer_norm hand-worked, eps=0, with weight and bias");
    bp_tensor *x = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4}, 4);
    bp_tensor *w = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4}, 4);
    bp_tensor *b = tensor_f(BP_FLOAT64, (double[]){0, 0, 0, 1}, 4);
    int64_t ns[] = {4};
    bp_value slots[5];
    bp_stack s = BP_STACK_INIT(slots, 5);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, ns, 1);
    bp_stack_push_tensor(&s, w);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, 0);
    bp_tensor *res = RUN(core_op("layer_norm"), &s, .in = {x, w, b}, .ret = RET_NEW);
    double k = 1 / sqrt(1.25);
    rt *want =
        lit_f(BP_FLOAT64, 1, ns, (double[]){-1.5 * k, -0.5 * 2 * k, 0.5 * 3 * k, 1.5 * 4 * k + 1});
    CLOSE(res, want, 4, TOL_SQRT);
    rt_free(want);
    bp_tensor *ts[] = {res, x, w, b};
    for (int i = 0; i < 4; i++) bp_tensor_release(ts[i]);
  }
  {
    /* Rows of one value (0.1, 0.7, 1.1: their float64 sums divided by 7
     * are not the value), eps=0: the variance is exactly 0 and every
     * result 0/0, NaN, in the plugin and in the reference alike. */
    int64_t sz[] = {3, 7}, ns[] = {7};
    rt *rx = rt_new(BP_FLOAT64, 2, sz);
    for (int64_t i = 0; i < 21; i++) rx->f[i] = i < 7 ? 0.1 : i < 14 ? 0.7 : 1.1;
    rt *nan = rt_new(BP_FLOAT64, 2, sz);
    for (int64_t i = 0; i < 21; i++) nan->f[i] = NAN;
    rng r;
    rng_seed(&r, 0x1a7e0001);
    bp_tensor *x = tensor_from(&r, rx, LAY_CONTIG, NULL);
    ctx_set("layer_norm of constant rows, eps=0: the reference");
    rt *want = ref_layer_norm(rx, 1, NULL, NULL, 0);
    bp_tensor *wt = tensor_from(&r, want, LAY_CONTIG, NULL);
    CLOSE(wt, nan, 1, TOL_PLAIN);
    ctx_set("layer_norm of constant rows, eps=0");
    check_layer_norm(x, rx, 1, ns, NULL, NULL, NULL, NULL, 0);
    rt_free(want);
    rt_free(nan);
    bp_tensor_release(wt);
  }
  cpu_done();
}

/*
 * softmax along a dimension followed by contiguous ones is computed for
 * blocks of 128 columns at once: copied into a buffer with their max, then
 * their exponentials and sums 32 columns at a time.  Blocks whose buffer
 * would exceed 4 MiB (columns of more than 8192 float32 or 4096 float64
 * rows) are computed 8 rows at a time with a running max instead.
 * layer_norm of rows that are neighbours in memory (a transposed input) is
 * computed for blocks of 128 rows at once.  Sizes with remainders
 * everywhere, every float dtype, and values that grow along the softmax
 * dimension, so that the running max changes in every step and the sums
 * are rescaled.
 */
static void softmax_columns_case(bool log_, int32_t dt, int32_t n, const int64_t *sizes,
                                 int64_t dim, int prof, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_CONTIG, prof, &ra, NULL);
  const char *name = log_ ? "log_softmax" : "softmax";
  ctx_set("columns %s(%s %s, dim=%lld) seed=0x%llx", name, dt_name(dt), shape_str(n, sizes),
          (long long)dim, (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, dim);
  bp_tensor *res = RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_softmax(ra, dim, log_);
  if (res) CLOSE(res, want, sizes[dim], TOL_SQRT);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

/* x[l][c] = slope * l + c / 64 along dim 0 of a [len, cols] matrix, with
 * a -inf column, a NaN in another, and columns whose first rows are -inf
 * (masked): 8 rows (a whole step of the running max), 11, and 1.  Three
 * more have a NaN among such leading rows, where the running max is still
 * -inf, which must make the whole column NaN: 8 NaN rows, -inf rows with a
 * NaN at row 3, and 12 -inf rows with a NaN at row 9. */
static void softmax_growing(bool log_, int32_t dt, int64_t len, int64_t cols, double slope) {
  int64_t sz[2] = {len, cols};
  rt *v = rt_new(dt, 2, sz);
  for (int64_t l = 0; l < len; l++)
    for (int64_t c = 0; c < cols; c++) v->f[l * cols + c] = round_to(dt, slope * (double)l + (double)c / 64);
  for (int64_t l = 0; l < len; l++) v->f[l * cols + 1] = -INFINITY;
  v->f[(len / 2) * cols + 2] = NAN;
  static const int64_t masked[][2] = {{3, 8}, {4, 11}, {5, 1}}; /* column, leading rows */
  for (size_t k = 0; k < NELEMS(masked); k++)
    for (int64_t l = 0; l < masked[k][1] && l < len; l++) v->f[l * cols + masked[k][0]] = -INFINITY;
  static const int64_t nan_masked[][3] = {{6, 0, -1}, {7, 8, 3}, {8, 12, 9}}; /* column, -inf rows, NaN row */
  for (size_t k = 0; k < NELEMS(nan_masked); k++) {
    int64_t c = nan_masked[k][0];
    for (int64_t l = 0; l < nan_masked[k][1] && l < len; l++) v->f[l * cols + c] = -INFINITY;
    if (nan_masked[k][2] < 0)
      for (int64_t l = 0; l < 8 && l < len; l++) v->f[l * cols + c] = NAN;
    else if (nan_masked[k][2] < len)
      v->f[nan_masked[k][2] * cols + c] = NAN;
  }
  bp_tensor *a = from_rt(v);
  const char *name = log_ ? "log_softmax" : "softmax";
  ctx_set("columns %s(%s [%lld, %lld] growing by %g along dim 0)", name, dt_name(dt),
          (long long)len, (long long)cols, slope);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 0);
  bp_tensor *res = RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_softmax(v, 0, log_);
  if (res) CLOSE(res, want, len, TOL_SQRT);
  rt_free(want);
  rt_free(v);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

static void softmax_columns(void) {
  cpu_setup();
  static const struct {
    int32_t n;
    int64_t sizes[3];
    int64_t dim;
  } shapes[] = {
      {2, {67, 131}, 0}, {3, {5, 37, 133}, 1}, {2, {9, 300}, 0},
      {2, {1000, 3}, -2}, {3, {17, 2, 129}, 0}, {3, {3, 300, 70}, -2},
  };
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (size_t k = 0; k < NELEMS(shapes); k++)
      for (int lg = 0; lg < 2; lg++) {
        uint64_t seed = trial_seed(0x50c00000 + (i << 8) + (uint64_t)lg, (int64_t)k);
        softmax_columns_case(lg, float_dtypes[i], shapes[k].n, shapes[k].sizes, shapes[k].dim,
                             k % 2 ? VP_ACCUM : VP_FINITE, seed);
      }
  /* Long columns, on either side of the buffer's limit. */
  static const struct {
    int32_t dt;
    int64_t sizes[2];
  } tall[] = {
      {BP_FLOAT32, {8192, 130}}, {BP_FLOAT32, {8300, 130}},
      {BP_FLOAT64, {4096, 131}}, {BP_FLOAT64, {4100, 131}},
      {BP_BFLOAT16, {8300, 140}},
  };
  for (size_t k = 0; k < NELEMS(tall); k++)
    for (int lg = 0; lg < 2; lg++)
      softmax_columns_case(lg, tall[k].dt, 2, tall[k].sizes, 0, VP_FINITE,
                           trial_seed(0x50c10000 + (uint64_t)lg, (int64_t)k));
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int lg = 0; lg < 2; lg++) {
      softmax_growing(lg, float_dtypes[i], 203, 131, 0.25);
      softmax_growing(lg, float_dtypes[i], 203, 131, -0.25);
      softmax_growing(lg, float_dtypes[i], 77, 140, 3);
    }
  for (int lg = 0; lg < 2; lg++) {
    softmax_growing(lg, BP_FLOAT32, 8300, 131, 0.001);
    softmax_growing(lg, BP_FLOAT64, 4100, 131, -0.001);
  }
  cpu_done();
}

static void layer_norm_columns_case(int32_t dt, int32_t n, const int64_t *sizes, int32_t nnorm,
                                    int prof, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  const int64_t *ns = sizes + (n - nnorm);
  rt *rx, *rw = NULL, *rb = NULL;
  int lx;
  bp_tensor *x = gen_tensor(&r, dt, n, sizes, LAY_PERM, prof, &rx, &lx);
  bool hw = rng_chance(&r, 0.6), hb = rng_chance(&r, 0.6);
  bp_tensor *w = hw ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rw, NULL) : NULL;
  bp_tensor *b = hb ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rb, NULL) : NULL;
  const bp_tensor_view *v = bp_tensor_get_view(x);
  ctx_set("columns layer_norm(%s %s strides %s, %s, weight %d, bias %d) seed=0x%llx",
          dt_name(dt), shape_str(n, sizes), shape_str(n, v->strides), shape_str(nnorm, ns), hw,
          hb, (unsigned long long)seed);
  check_layer_norm(x, rx, nnorm, ns, w, rw, b, rb, 1e-5);
}

static void layer_norm_columns(void) {
  cpu_setup();
  static const struct {
    int32_t n, nnorm;
    int64_t sizes[4];
  } shapes[] = {
      {2, 1, {131, 67}}, {2, 1, {300, 130}}, {2, 1, {5, 200}},  {3, 2, {133, 9, 7}},
      {3, 1, {4, 129, 65}}, {4, 2, {3, 70, 5, 6}}, {3, 3, {7, 9, 11}},
  };
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (size_t k = 0; k < NELEMS(shapes); k++)
      for (int t = 0; t < 2; t++)
        layer_norm_columns_case(float_dtypes[i], shapes[k].n, shapes[k].sizes, shapes[k].nnorm,
                                t ? VP_ACCUM : VP_FINITE,
                                trial_seed(0x1a7c0000 + (i << 8) + (uint64_t)t, (int64_t)k));
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* cast, contiguous, fill_, copy_                                           */
/* ------------------------------------------------------------------------ */

static void cast_matrix(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++)
      for (int t = 0; t < 8; t++)
        cast_trial(all_dtypes[i], all_dtypes[j], trial_seed(0xca570000 + (i << 12) + (j << 8), t));
  cpu_done();
}

/* Exact results of `cast` that the spec pins down: saturation, NaN to 0,
 * truncation, wraparound, bool, and rounding to nearest-even. */
static void cast_exact(void) {
  cpu_setup();
  struct {
    int32_t from, to;
    double in;
    int64_t want;
  } f2i[] = {
      {BP_FLOAT32, BP_INT8, 127.9, 127},
      {BP_FLOAT32, BP_INT8, 128, 127},
      {BP_FLOAT32, BP_INT8, -128.9, -128},
      {BP_FLOAT32, BP_INT8, -129, -128},
      {BP_FLOAT32, BP_INT8, 1e10, 127},
      {BP_FLOAT32, BP_INT8, -INFINITY, -128},
      {BP_FLOAT32, BP_INT8, INFINITY, 127},
      {BP_FLOAT32, BP_INT8, NAN, 0},
      {BP_FLOAT32, BP_INT8, -0.5, 0},
      {BP_FLOAT32, BP_INT8, -1.5, -1},
      {BP_FLOAT64, BP_UINT8, -1, 0},
      {BP_FLOAT64, BP_UINT8, 255.9, 255},
      {BP_FLOAT64, BP_UINT8, 256, 255},
      {BP_FLOAT64, BP_UINT8, -0.9, 0},
      {BP_FLOAT64, BP_UINT8, NAN, 0},
      {BP_FLOAT64, BP_UINT8, -1e300, 0},
      {BP_FLOAT64, BP_INT64, 9.3e18, INT64_MAX},
      {BP_FLOAT64, BP_INT64, -9.3e18, INT64_MIN},
      {BP_FLOAT64, BP_INT64, -9223372036854775808.0, INT64_MIN},
      {BP_FLOAT64, BP_INT64, 9223372036854775808.0, INT64_MAX},
      {BP_FLOAT64, BP_INT64, 4611686018427387904.0, 4611686018427387904},
      {BP_FLOAT64, BP_INT64, NAN, 0},
      {BP_FLOAT64, BP_INT64, -INFINITY, INT64_MIN},
      {BP_FLOAT32, BP_INT32, 2147483520.0, 2147483520},
      {BP_FLOAT32, BP_INT32, 2147483648.0, INT32_MAX},
      {BP_FLOAT32, BP_INT32, -2147483648.0, INT32_MIN},
      {BP_FLOAT32, BP_INT32, -3e9, INT32_MIN},
      {BP_FLOAT64, BP_INT32, -2147483648.9, INT32_MIN},
      {BP_FLOAT64, BP_INT32, 2147483647.9, INT32_MAX},
      {BP_FLOAT16, BP_INT16, 65504, 32767},
      {BP_FLOAT16, BP_INT16, -INFINITY, -32768},
      {BP_FLOAT16, BP_INT16, -32768, -32768},
      {BP_FLOAT16, BP_UINT8, -2, 0},
      {BP_BFLOAT16, BP_INT32, 3e38, INT32_MAX},
      {BP_BFLOAT16, BP_INT64, -3e38, INT64_MIN},
      {BP_BFLOAT16, BP_INT8, NAN, 0},
      {BP_FLOAT16, BP_INT64, NAN, 0},
      {BP_FLOAT32, BP_BOOL, NAN, 1},
      {BP_FLOAT32, BP_BOOL, -0.0, 0},
      {BP_FLOAT64, BP_BOOL, 1e-300, 1},
      {BP_FLOAT16, BP_BOOL, INFINITY, 1},
      {BP_BFLOAT16, BP_BOOL, -0.0, 0},
      {BP_FLOAT64, BP_BOOL, 0.1, 1},
  };
  for (size_t i = 0; i < NELEMS(f2i); i++) {
    ctx_set("cast(%s %.17g, %s)", dt_name(f2i[i].from), f2i[i].in, dt_name(f2i[i].to));
    bp_tensor *a = tensor_f(f2i[i].from, &f2i[i].in, 1);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_scalar_type(&s, f2i[i].to);
    bp_tensor *res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
    rt *w = lit_i(f2i[i].to, 1, (int64_t[]){1}, &f2i[i].want);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  struct {
    int32_t from, to;
    int64_t in, want;
  } i2i[] = {
      {BP_INT32, BP_INT8, 300, 44},
      {BP_INT64, BP_UINT8, -1, 255},
      {BP_UINT8, BP_INT8, 200, -56},
      {BP_INT16, BP_BOOL, -32768, 1},
      {BP_INT64, BP_INT32, ((int64_t)1 << 32) + 5, 5},
      {BP_INT8, BP_UINT8, -128, 128},
      {BP_INT64, BP_INT16, -65535, 1},
      {BP_BOOL, BP_INT64, 1, 1},
      {BP_UINT8, BP_BOOL, 0, 0},
      {BP_UINT8, BP_BOOL, 2, 1},
      {BP_INT8, BP_INT64, -7, -7},
      {BP_UINT8, BP_INT16, 255, 255},
  };
  for (size_t i = 0; i < NELEMS(i2i); i++) {
    ctx_set("cast(%s %lld, %s)", dt_name(i2i[i].from), (long long)i2i[i].in, dt_name(i2i[i].to));
    bp_tensor *a = tensor_i(i2i[i].from, &i2i[i].in, 1);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_scalar_type(&s, i2i[i].to);
    bp_tensor *res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
    rt *w = lit_i(i2i[i].to, 1, (int64_t[]){1}, &i2i[i].want);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* Rounding to nearest-even, checked bit for bit: ties go to the even
   * neighbour, past the largest finite value is inf, subnormals round,
   * NaN stays NaN (even one whose payload lies in the bits dropped). */
  struct {
    int32_t from, to;
    uint64_t in_bits; /* the source's bit pattern (an integer's value) */
    uint64_t want;    /* the result's bit pattern */
  } rne[] = {
      {BP_FLOAT32, BP_FLOAT16, 0x3f801000, 0x3c00},  /* 1 + 2^-11: tie, down to even */
      {BP_FLOAT32, BP_FLOAT16, 0x3f803000, 0x3c02},  /* 1 + 3*2^-11: tie, up to even */
      {BP_FLOAT32, BP_FLOAT16, 0x3f801001, 0x3c01},  /* just above the tie */
      {BP_FLOAT32, BP_FLOAT16, 0x3f800fff, 0x3c00},  /* just below the tie */
      {BP_FLOAT32, BP_FLOAT16, 0x477fe000, 0x7bff},  /* 65504 */
      {BP_FLOAT32, BP_FLOAT16, 0x477fefff, 0x7bff},  /* just below 65520 */
      {BP_FLOAT32, BP_FLOAT16, 0x477ff000, 0x7c00},  /* 65520: tie, to inf */
      {BP_FLOAT32, BP_FLOAT16, 0xc77ff000, 0xfc00},  /* -65520 */
      {BP_FLOAT32, BP_FLOAT16, 0x33800000, 0x0001},  /* 2^-24, the least subnormal */
      {BP_FLOAT32, BP_FLOAT16, 0x33000000, 0x0000},  /* 2^-25: tie, to 0 */
      {BP_FLOAT32, BP_FLOAT16, 0x33c00000, 0x0002},  /* 1.5 * 2^-24: tie, to 2 */
      {BP_FLOAT32, BP_FLOAT16, 0x33000001, 0x0001},  /* just above 2^-25 */
      {BP_FLOAT32, BP_FLOAT16, 0x80000000, 0x8000},  /* -0.0 */
      {BP_FLOAT32, BP_FLOAT16, 0x387fe000, 0x0400},  /* 1023.5 * 2^-24: tie, up into the normals */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f808000, 0x3f80}, /* 1 + 2^-8: tie, down */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f818000, 0x3f82}, /* 1 + 3*2^-8: tie, up */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f808001, 0x3f81}, /* just above the tie */
      {BP_FLOAT32, BP_BFLOAT16, 0x7f7fffff, 0x7f80}, /* FLT_MAX rounds to inf */
      {BP_FLOAT32, BP_BFLOAT16, 0x7f7f7fff, 0x7f7f}, /* below the tie: finite */
      {BP_FLOAT32, BP_BFLOAT16, 0x00010000, 0x0001}, /* a subnormal, exact */
      {BP_FLOAT32, BP_BFLOAT16, 0x00018000, 0x0002}, /* a subnormal tie, up to even */
      {BP_FLOAT64, BP_FLOAT16, 0x3ff0020000000000, 0x3c00},  /* 1 + 2^-11 */
      {BP_FLOAT64, BP_FLOAT16, 0x3ff0020000000001, 0x3c01},  /* just above it */
      {BP_FLOAT64, BP_BFLOAT16, 0x3ff0100000000000, 0x3f80}, /* 1 + 2^-8 */
      {BP_FLOAT64, BP_BFLOAT16, 0x3ff0300000000000, 0x3f82}, /* 1 + 3*2^-8 */
      {BP_FLOAT64, BP_FLOAT16, 0x40effe0000000000, 0x7c00},  /* 65520: tie, to inf */
      {BP_FLOAT16, BP_BFLOAT16, 0x3c01, 0x3f80},             /* 1 + 2^-10 to 8 bits: down */
      {BP_BFLOAT16, BP_FLOAT16, 0x4780, 0x7c00},             /* 65536 is past float16 */
      {BP_BFLOAT16, BP_FLOAT16, 0x3f81, 0x3c08},             /* 1 + 2^-7, exact */
      /* Integers round once, from their exact value. */
      {BP_INT32, BP_FLOAT16, 2049, 0x6800},                    /* tie, down to 2048 */
      {BP_INT32, BP_FLOAT16, 2051, 0x6802},                    /* tie, up to 2052 */
      {BP_INT16, BP_FLOAT16, 32767, 0x7800},                   /* 32768 */
      {BP_INT32, BP_FLOAT16, 65519, 0x7bff},                   /* below the tie: 65504 */
      {BP_INT32, BP_FLOAT16, 65520, 0x7c00},                   /* tie: inf */
      {BP_INT32, BP_BFLOAT16, 257, 0x4380},                    /* tie, down to 256 */
      {BP_INT32, BP_BFLOAT16, 259, 0x4382},                    /* tie, up to 260 */
      {BP_INT16, BP_BFLOAT16, -32767, 0xc700},                 /* -32768 */
      {BP_INT64, BP_BFLOAT16, 16842753, 0x4b81},               /* 2^24 + 2^16 + 1: above the tie */
      {BP_INT64, BP_FLOAT16, 2053, 0x6802},                    /* tie, down to 2052 */
      {BP_INT32, BP_FLOAT32, 16777217, 0x4b800000},            /* 2^24 + 1: tie, down */
      {BP_INT32, BP_FLOAT32, 16777219, 0x4b800002},            /* 2^24 + 3: tie, up */
      {BP_INT64, BP_FLOAT32, 0x1000001000000001, 0x5d800001},  /* 2^60 + 2^36 + 1: up */
      {BP_INT64, BP_FLOAT32, (uint64_t)INT64_MIN, 0xdf000000}, /* -2^63 */
      {BP_INT64, BP_FLOAT64, 9007199254740993, 0x4340000000000000},   /* 2^53 + 1: tie, down */
      {BP_INT64, BP_FLOAT64, 0x4000000000000201, 0x43d0000000000001}, /* 2^62 + 2^9 + 1: up */
      {BP_UINT8, BP_BFLOAT16, 255, 0x437f},                           /* exact in 8 bits */
      {BP_INT16, BP_BFLOAT16, 511, 0x4400},                           /* 9 bits: up to 512 */
      {BP_INT8, BP_FLOAT16, -128, 0xd800},
      {BP_BOOL, BP_BFLOAT16, 1, 0x3f80},
  };
  for (size_t i = 0; i < NELEMS(rne); i++) {
    ctx_set("cast(%s bits 0x%llx, %s) rounds to nearest-even", dt_name(rne[i].from),
            (unsigned long long)rne[i].in_bits, dt_name(rne[i].to));
    bp_tensor *a = tensor_zeros(rne[i].from, 0, NULL);
    if (dt_is_float(rne[i].from)) /* little-endian: the low bytes */
      memcpy(bp_tensor_get_view(a)->data, &rne[i].in_bits, bp_dtype_size(rne[i].from));
    else
      store_i(bp_tensor_get_view(a)->data, rne[i].from, (int64_t)rne[i].in_bits);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_scalar_type(&s, rne[i].to);
    bp_tensor *res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
    if (res) {
      uint64_t got = 0;
      memcpy(&got, bp_tensor_get_view(res)->data, bp_dtype_size(rne[i].to));
      if (got != rne[i].want)
        REPORT("rounding to nearest-even", "got bits 0x%llx, expected 0x%llx",
               (unsigned long long)got, (unsigned long long)rne[i].want);
    }
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* NaN of every float width stays NaN through every float cast. */
  {
    uint64_t nans[][2] = {{BP_FLOAT32, 0x7f800001},
                          {BP_FLOAT32, 0xffc00000},
                          {BP_FLOAT64, 0x7ff0000000000001},
                          {BP_FLOAT16, 0x7c01},
                          {BP_BFLOAT16, 0x7f81}};
    for (size_t i = 0; i < NELEMS(nans); i++)
      for (size_t j = 0; j < NELEMS(float_dtypes); j++) {
        int32_t from = (int32_t)nans[i][0], to = float_dtypes[j];
        ctx_set("cast(%s NaN bits 0x%llx, %s)", dt_name(from), (unsigned long long)nans[i][1],
                dt_name(to));
        bp_tensor *a = tensor_zeros(from, 0, NULL);
        memcpy(bp_tensor_get_view(a)->data, &nans[i][1], bp_dtype_size(from));
        bp_value slots[2];
        bp_stack s = BP_STACK_INIT(slots, 2);
        bp_stack_push_tensor(&s, a);
        bp_stack_push_scalar_type(&s, to);
        bp_tensor *res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
        if (res && !isnan(load_f(bp_tensor_get_view(res)->data, to)))
          REPORT("NaN stays NaN", "got %g", load_f(bp_tensor_get_view(res)->data, to));
        bp_tensor_release(res);
        bp_tensor_release(a);
      }
  }
  cpu_done();
}

static void contiguous_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 30; t++)
      contiguous_trial(all_dtypes[i], trial_seed(0xc0470000 + (i << 8), t));
  cpu_done();
}

static void fill_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 30; t++) fill_trial(all_dtypes[i], trial_seed(0xf1110000 + (i << 8), t));
  cpu_done();
}

/* copy_ from every dtype to every dtype. */
static void copy_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++)
      for (int t = 0; t < (i == j ? 12 : 4); t++)
        copy_trial(all_dtypes[i], all_dtypes[j], trial_seed(0xc0970000 + (i << 12) + (j << 8), t));
  cpu_done();
}

/* copy_ between views of one storage: the result is as if src were read
 * first, whichever way the two overlap. */
static void copy_overlap(void) {
  cpu_setup();
  const bp_op *op = core_op("copy_");
  for (int t = 0; t < 100; t++) {
    uint64_t seed = trial_seed(0xc0980000, t);
    rng r;
    rng_seed(&r, seed);
    int32_t dt = all_dtypes[rng_int(&r, 0, NUM_DTYPES - 1)];
    int kind = (int)rng_int(&r, 0, 4);
    /* Large runs (past the parallel grain) now and then. */
    int64_t n = rng_chance(&r, 0.1) ? rng_int(&r, 33000, 50000) : rng_int(&r, 2, 40);
    double u = rng_uniform(&r, 0, 1);
    int64_t shift = u < 0.3 ? 1 : u < 0.6 ? n - 1 : rng_int(&r, 1, n - 1);
    int64_t m = rng_int(&r, 2, 9);
    int64_t st[2], sr[2], sz[2], off_self = 0, off_src = 0, total;
    if (kind == 4) {
      /* Random 2-D views: self without self-overlap (row-major or
       * transposed, maybe strided), src with any strides, 0 included. */
      sz[0] = rng_int(&r, 1, 7);
      sz[1] = rng_int(&r, 1, 7);
      int64_t step = rng_int(&r, 1, 2);
      bool tr = rng_chance(&r, 0.5);
      st[tr ? 0 : 1] = step;
      st[tr ? 1 : 0] = step * sz[tr ? 0 : 1] + rng_int(&r, 0, 1);
      for (int d = 0; d < 2; d++) sr[d] = rng_int(&r, 0, 4);
      off_self = rng_int(&r, 0, 6);
      off_src = rng_int(&r, 0, 6);
      int64_t es = off_self + (sz[0] - 1) * st[0] + (sz[1] - 1) * st[1] + 1;
      int64_t er = off_src + (sz[0] - 1) * sr[0] + (sz[1] - 1) * sr[1] + 1;
      total = es > er ? es : er;
    } else {
      total = kind == 2 ? m * m : kind == 3 ? 2 * n + 1 : n + shift;
    }
    bp_tensor *base = gen_tensor(&r, dt, 1, &total, LAY_CONTIG, VP_GENERAL, NULL, NULL);
    bp_tensor *self = NULL, *src = NULL;
    const char *what = "";
    switch (kind) {
      case 0: /* self lies before src */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 0, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, shift, &src);
        what = "self = base[0:n], src = base[shift:shift+n]";
        break;
      case 1: /* src lies before self */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, shift, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 0, &src);
        what = "self = base[shift:shift+n], src = base[0:n]";
        break;
      case 2: /* an in-place transpose */
        bp_tensor_as_strided(base, 2, (int64_t[]){m, m}, (int64_t[]){m, 1}, 0, &self);
        bp_tensor_as_strided(base, 2, (int64_t[]){m, m}, (int64_t[]){1, m}, 0, &src);
        what = "self = M, src = M^T";
        break;
      case 3: /* every other element from a contiguous run that covers them */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){2}, 0, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 1, &src);
        what = "self = base[0::2], src = base[1:n+1]";
        break;
      default:
        bp_tensor_as_strided(base, 2, sz, st, off_self, &self);
        bp_tensor_as_strided(base, 2, sz, sr, off_src, &src);
        what = "random 2-D views";
        break;
    }
    if (kind == 4)
      ctx_set(
          "copy_ overlapping, %s, %s: self %s strides %s offset %lld, src strides %s offset "
          "%lld seed=0x%llx",
          dt_name(dt), what, shape_str(2, sz), shape_str(2, st), (long long)off_self,
          shape_str(2, sr), (long long)off_src, (unsigned long long)seed);
    else
      ctx_set("copy_ overlapping, %s, %s, n=%lld shift=%lld m=%lld seed=0x%llx", dt_name(dt), what,
              (long long)n, (long long)shift, (long long)m, (unsigned long long)seed);
    rt *want = read_tensor(src);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, src);
    bp_tensor *res = RUN(op, &s, .mut = self, .ret = RET_SELF);
    if (res) {
      bp_tensor *wt = tensor_from(&r, want, LAY_CONTIG, NULL);
      BITS(res, wt);
      bp_tensor_release(wt);
    }
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(src);
    bp_tensor_release(base);
  }
  /* One buffer seen in two dtypes (bp_tensor_from_blob twice), whose
   * elements differ in size: the float16 self[k], at byte 18 + 16 k, lies
   * inside the int64 src[k + 1], at byte 16 (k + 1), so copying element by
   * element would overwrite src[k + 1] before reading it. */
  {
    int64_t buf[8] = {1, 0, 2, 0, 3, 0, 4, 0};
    int64_t n3[] = {3};
    bp_tensor *src = NULL, *self = NULL;
    is_status(bp_tensor_from_blob(BP_CPU, BP_INT64, 1, n3, (int64_t[]){2}, buf, NULL, NULL, &src),
              BP_OK);
    is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT16, 1, n3, (int64_t[]){8}, (char *)buf + 18,
                                  NULL, NULL, &self),
              BP_OK);
    ctx_set("copy_ float16 self inside the next element of an int64 src (one buffer)");
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, src);
    bp_tensor *res = RUN(op, &s, .mut = self, .ret = RET_SELF);
    rt *w = lit_f(BP_FLOAT16, 1, n3, (double[]){1, 2, 3});
    if (res) CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(src);
  }
  cpu_done();
}

/* copy_ from another device: the CPU kernel moves the data through the
 * device interfaces, then converts and broadcasts. */
static void copy_cross_device(void) {
  cpu_setup();
  must_load("good");
  bp_tensor *g = on_gooddev(1, (int64_t[]){3}, (double[]){1.5, -2.25, 1e10});
  if (!g) {
    cpu_done();
    return;
  }
  struct {
    int32_t dt;
    int32_t ndim;
    int64_t sizes[2];
  } dsts[] = {
      {BP_FLOAT32, 1, {3}}, {BP_FLOAT64, 2, {2, 3}}, {BP_INT16, 2, {4, 3}}, {BP_BFLOAT16, 1, {3}}};
  for (size_t i = 0; i < NELEMS(dsts); i++) {
    ctx_set("copy_(cpu %s %s, gooddev float32 [3])", dt_name(dsts[i].dt),
            shape_str(dsts[i].ndim, dsts[i].sizes));
    rng r;
    rng_seed(&r, 0xde0 + i);
    bp_tensor *self = gen_tensor(&r, dsts[i].dt, dsts[i].ndim, dsts[i].sizes, LAY_WRITABLE,
                                 VP_GENERAL, NULL, NULL);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, g);
    bp_tensor *res = RUN(core_op("copy_"), &s, .in = {g}, .mut = self, .ret = RET_SELF);
    rt *src = read_tensor(g), *ex = ref_expand(src, dsts[i].ndim, dsts[i].sizes);
    rt *want = ref_cast(ex, dsts[i].dt);
    if (res) {
      CLOSE(res, want, 1, TOL_PLAIN);
      is_int(bp_tensor_get_view(res)->device.type, BP_DEVICE_CPU);
    }
    rt_free(src);
    rt_free(ex);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
  }
  /* A strided view on gooddev: every other element of a [6]. */
  {
    bp_tensor *gb = on_gooddev(1, (int64_t[]){6}, (double[]){1, -1, 2, -2, 3, -3}), *gv = NULL;
    bp_tensor_as_strided(gb, 1, (int64_t[]){3}, (int64_t[]){2}, 0, &gv);
    ctx_set("copy_(cpu float64 [2, 3], gooddev float32 [3] with stride 2)");
    bp_tensor *self = tensor_zeros(BP_FLOAT64, 2, (int64_t[]){2, 3});
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, gv);
    bp_tensor *res = RUN(core_op("copy_"), &s, .in = {gv}, .mut = self, .ret = RET_SELF);
    rt *want = lit_f(BP_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 1, 2, 3});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(gv);
    bp_tensor_release(gb);
  }
  bp_tensor_release(g);
  cpu_done();
}

/* Keyword arguments and defaults reach the kernels. */
static void keywords_and_defaults(void) {
  cpu_setup();
  rng r;
  rng_seed(&r, 0x4e7);
  int64_t sz[] = {2, 3};
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sz, LAY_PERM, VP_FINITE, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, BP_FLOAT32, 2, sz, LAY_CONTIG, VP_FINITE, &rb, NULL);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  {
    ctx_set("add(a, b, alpha=-0.5) by keyword");
    static const char *const kw[] = {"alpha"};
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, -0.5);
    bp_tensor *res = RUN(core_op("add"), &s, .in = {a, b}, .ret = RET_NEW, .kw = kw, .nkw = 1);
    rt *w = ref_binary(RB_ADD, ra, rb, -0.5);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
  }
  {
    ctx_set("gelu(a, approximate=\"tanh\") by keyword");
    static const char *const kw[] = {"approximate"};
    bp_stack_push_tensor(&s, a);
    bp_stack_push_str(&s, "tanh");
    bp_tensor *res = RUN(core_op("gelu"), &s, .in = {a}, .ret = RET_NEW, .kw = kw, .nkw = 1);
    rt *w = ref_unary(RU_GELU_TANH, ra);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
  }
  {
    ctx_set("sum(a, dtype=float64) by keyword, dims defaulted");
    static const char *const kw[] = {"dtype"};
    bp_stack_push_tensor(&s, a);
    bp_stack_push_scalar_type(&s, BP_FLOAT64);
    bp_tensor *res = RUN(core_op("sum"), &s, .in = {a}, .ret = RET_NEW, .kw = kw, .nkw = 1);
    int64_t cnt;
    rt *w = ref_reduce(RR_SUM, ra, NULL, 0, false, BP_FLOAT64, &cnt);
    CLOSE(res, w, cnt, TOL_SUM);
    rt_free(w);
    bp_tensor_release(res);
  }
  {
    ctx_set("sum(a), mean(a, [1]), argmax(a): defaults");
    bp_stack_push_tensor(&s, a);
    bp_tensor *r1 = RUN(core_op("sum"), &s, .in = {a}, .ret = RET_NEW);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_int_list(&s, (int64_t[]){1}, 1);
    bp_tensor *r2 = RUN(core_op("mean"), &s, .in = {a}, .ret = RET_NEW);
    bp_stack_push_tensor(&s, a);
    bp_tensor *r3 = RUN(core_op("argmax"), &s, .in = {a}, .ret = RET_NEW);
    int64_t c1, c2;
    rt *w1 = ref_reduce(RR_SUM, ra, NULL, 0, false, BP_DTYPE_INVALID, &c1);
    rt *w2 = ref_reduce(RR_MEAN, ra, (int64_t[]){1}, 1, false, BP_DTYPE_INVALID, &c2);
    rt *w3 = ref_argmax(ra, false, 0, false);
    CLOSE(r1, w1, c1, TOL_SUM);
    CLOSE(r2, w2, c2, TOL_SQRT);
    CLOSE(r3, w3, 1, TOL_PLAIN);
    rt *rs[] = {w1, w2, w3};
    for (int k = 0; k < 3; k++) rt_free(rs[k]);
    bp_tensor *ts[] = {r1, r2, r3};
    for (int k = 0; k < 3; k++) bp_tensor_release(ts[k]);
  }
  {
    ctx_set("layer_norm(a, [3]) with defaults");
    bp_stack_push_tensor(&s, a);
    bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
    bp_tensor *res = RUN(core_op("layer_norm"), &s, .in = {a}, .ret = RET_NEW);
    rt *w = ref_layer_norm(ra, 1, NULL, NULL, 1e-5);
    CLOSE(res, w, 3, TOL_SQRT);
    rt_free(w);
    bp_tensor_release(res);
  }
  rt_free(ra);
  rt_free(rb);
  bp_tensor_release(a);
  bp_tensor_release(b);
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* Strided operands walked in tiles                                         */
/* ------------------------------------------------------------------------ */

/*
 * An input that steps 64 bytes or more per element along the innermost
 * dimension (a transposed or permuted view) makes the plugin walk two
 * dimensions in 64 x 64 tiles and copy that input through a buffer.  The
 * shapes here have tiles with remainders (67 = 64 + 3, 131 = 2 * 64 + 3),
 * short inner runs, broadcast operands beside the transposed ones, and 3-
 * and 4-D permutations; a tile misplaced, skipped or copied with the
 * wrong element size changes the result.
 */
typedef struct tiled_shape {
  int32_t n, nb;
  int64_t sa[4], sb[4]; /* b's shape broadcasts to a's */
  int la, lb;
} tiled_shape;

static const tiled_shape tiled_shapes[] = {
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_CONTIG},
    {2, 2, {67, 131}, {67, 131}, LAY_CONTIG, LAY_PERM},
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_PERM},
    {2, 1, {67, 131}, {131}, LAY_PERM, LAY_CONTIG},         /* a broadcast row */
    {2, 2, {67, 131}, {67, 1}, LAY_PERM, LAY_CONTIG},       /* a broadcast column */
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_BCAST},
    {2, 2, {130, 5}, {130, 5}, LAY_CONTIG, LAY_PERM},       /* inner runs of 5 */
    {2, 2, {5, 130}, {5, 130}, LAY_PERM, LAY_STRIDED},
    {3, 3, {5, 70, 66}, {5, 70, 66}, LAY_PERM, LAY_PERM},
    {3, 3, {66, 3, 65}, {66, 3, 65}, LAY_CONTIG, LAY_PERM},
    {4, 3, {2, 66, 3, 67}, {66, 1, 67}, LAY_PERM, LAY_PERM},
    {2, 2, {300, 257}, {300, 257}, LAY_CONTIG, LAY_PERM},   /* past the parallel grain */
};

static void tiled_binary(int op, int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, sh->la, VP_GENERAL, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, dt, sh->nb, sh->sb, sh->lb, VP_GENERAL, &rb, NULL);
  ctx_set("tiled %s(%s %s %s, %s %s) seed=0x%llx", binop_schema_name[op], dt_name(dt),
          shape_str(sh->n, sh->sa), layout_name(sh->la), shape_str(sh->nb, sh->sb),
          layout_name(sh->lb), (unsigned long long)seed);
  bp_tensor *res = call_t(binop_schema_name[op], a, b, NULL);
  rt *want = ref_binary(op, ra, rb, 1);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(ra);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

/* where(c, a, b) with the condition and a transposed, b broadcast. */
static void tiled_where(int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *rc, *ra, *rb;
  bp_tensor *c = gen_tensor(&r, BP_BOOL, sh->n, sh->sa, LAY_PERM, VP_GENERAL, &rc, NULL);
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, sh->la, VP_GENERAL, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, dt, sh->nb, sh->sb, sh->lb, VP_GENERAL, &rb, NULL);
  ctx_set("tiled where(bool %s perm, %s %s, %s %s) seed=0x%llx", shape_str(sh->n, sh->sa),
          dt_name(dt), layout_name(sh->la), shape_str(sh->nb, sh->sb), layout_name(sh->lb),
          (unsigned long long)seed);
  bp_tensor *res = call_t("where", c, a, b);
  rt *want = ref_where(rc, ra, rb);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt *rs[] = {want, rc, ra, rb};
  for (int k = 0; k < 4; k++) rt_free(rs[k]);
  bp_tensor *ts[] = {res, c, a, b};
  for (int k = 0; k < 4; k++) bp_tensor_release(ts[k]);
}

/* Unary, cast and contiguous of a permuted tensor; copy_ and fill_ into
 * one (an output that is a permuted view is walked in its memory order). */
static void tiled_others(int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, LAY_PERM, VP_WIDE, &ra, NULL);
  const char *un = dt == BP_BOOL ? "sigmoid" : "neg";
  int uop = dt == BP_BOOL ? RU_SIGMOID : RU_NEG;
  ctx_set("tiled %s(%s %s perm) seed=0x%llx", un, dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  bp_tensor *res = call_t(un, a, NULL, NULL);
  rt *want = ref_unary(uop, ra);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);

  int32_t to = all_dtypes[(size_t)(dt * 7 + 3) % NUM_DTYPES];
  ctx_set("tiled cast(%s %s perm, %s) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          dt_name(to), (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_scalar_type(&s, to);
  res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
  want = ref_cast(ra, to);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);

  ctx_set("tiled contiguous(%s %s perm) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  res = RUN(core_op("contiguous"), &s, .in = {a}, .ret = RET_CONTIGUOUS);
  if (res) BITS(res, a);
  bp_tensor_release(res);

  /* copy_ of a permuted src into a self permuted another way (or not). */
  bp_tensor *self = gen_tensor(&r, dt, sh->n, sh->sa, sh->lb == LAY_PERM ? LAY_PERM : LAY_CONTIG,
                               VP_GENERAL, NULL, NULL);
  bp_tensor *src = gen_tensor(&r, dt, sh->nb, sh->sb, LAY_PERM, VP_GENERAL, &rb, NULL);
  ctx_set("tiled copy_(%s %s, %s perm) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          shape_str(sh->nb, sh->sb), (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, self);
  bp_stack_push_tensor(&s, src);
  res = RUN(core_op("copy_"), &s, .in = {src}, .mut = self, .ret = RET_SELF);
  want = ref_expand(rb, sh->n, sh->sa);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(src);

  ctx_set("tiled fill_(%s %s perm, 3) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, self);
  bp_stack_push_float(&s, 3);
  res = RUN(core_op("fill_"), &s, .mut = self, .ret = RET_SELF);
  want = rt_new(dt, sh->n, sh->sa);
  for (int64_t k = 0; k < want->numel; k++) {
    want->f[k] = round_to(dt, 3);
    want->i[k] = float_to_int(dt, 3);
  }
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);
  bp_tensor_release(self);
  rt_free(ra);
  bp_tensor_release(a);
}

static void tiled_elementwise(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++) {
    int32_t dt = all_dtypes[i];
    for (size_t k = 0; k < NELEMS(tiled_shapes); k++) {
      uint64_t seed = trial_seed(0x711e0000 + (i << 8), (int64_t)k);
      tiled_binary(RB_ADD, dt, &tiled_shapes[k], seed);
      if (k % 3 == 0) tiled_binary(RB_MUL, dt, &tiled_shapes[k], seed + 1);
      if (k % 4 == 1) tiled_where(dt, &tiled_shapes[k], seed + 2);
      if (k % 2 == 0) tiled_others(dt, &tiled_shapes[k], seed + 3);
    }
  }
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* Tensors past the plugin's parallel grain (32768 elements)                */
/* ------------------------------------------------------------------------ */

/* Random trials of every op family at 33 000 to 90 000 elements, for the
 * dtypes in dts. */
static void large_random(const int32_t *dts, size_t ndt, uint64_t base) {
  set_large_shapes(true);
  for (size_t i = 0; i < ndt; i++) {
    int32_t dt = dts[i];
    uint64_t b = base + ((uint64_t)dt << 16);
    for (int op = RB_ADD; op <= RB_POW; op++)
      if (dt != BP_BOOL || (op != RB_SUB && op != RB_POW))
        binary_trial(op, dt, dt, b + (uint64_t)op);
    binary_trial(RB_ADD, dt, all_dtypes[(i + 3) % NUM_DTYPES], b + 10);
    binary_trial(RB_MUL, all_dtypes[(i + 7) % NUM_DTYPES], dt, b + 11);
    for (int op = RU_NEG; op <= RU_GELU_TANH; op++)
      if (dt != BP_BOOL || op > RU_RELU) unary_trial(op, dt, b + 20 + (uint64_t)op);
    for (int t = 0; t < 2; t++) {
      reduce_trial(RR_SUM, dt, b + 40 + (uint64_t)t, false);
      if (dt_is_float(dt)) reduce_trial(RR_MEAN, dt, b + 42 + (uint64_t)t, false);
      reduce_trial(RR_AMAX, dt, b + 44 + (uint64_t)t, false);
      reduce_trial(RR_AMIN, dt, b + 46 + (uint64_t)t, false);
      if (dt != BP_BOOL) argmax_trial(dt, b + 48 + (uint64_t)t);
    }
    reduce_trial(RR_SUM, dt, b + 50, true);
    cast_trial(dt, all_dtypes[(i + 1) % NUM_DTYPES], b + 60);
    cast_trial(dt, all_dtypes[(i + 5) % NUM_DTYPES], b + 61);
    cast_trial(dt, dt, b + 62);
    copy_trial(dt, all_dtypes[(i + 2) % NUM_DTYPES], b + 70);
    copy_trial(dt, dt, b + 71);
    fill_trial(dt, b + 72);
    contiguous_trial(dt, b + 73);
    where_trial(dt, all_dtypes[(i + 4) % NUM_DTYPES], b + 74);
    if (dt_is_float(dt)) {
      softmax_trial(false, dt, b + 80);
      softmax_trial(true, dt, b + 81);
      layer_norm_trial(dt, b + 82);
      matmul_trial(dt, b + 83);
    }
  }
  set_large_shapes(false);
}

/* Targeted large cases: ties and NaN across the pool's chunks, and
 * matmul and layer_norm with large results. */
static void large_targeted(uint64_t base) {
  rng r;
  rng_seed(&r, base);
  {
    /* argmax over many ties must return the first, across chunks; NaN
     * far into the tensor, twice. */
    int64_t sz[] = {70001};
    rt *ra;
    bp_tensor *a = gen_tensor(&r, BP_INT8, 1, sz, LAY_CONTIG, VP_GENERAL, &ra, NULL);
    ctx_set("large argmax int8 [70001] seed=0x%llx", (unsigned long long)base);
    bp_tensor *res = call_t("argmax", a, NULL, NULL);
    rt *w = ref_argmax(ra, false, 0, false);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    rt_free(ra);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor *f = gen_tensor(&r, BP_FLOAT32, 1, sz, LAY_CONTIG, VP_FINITE, NULL, NULL);
    float *fd = bp_tensor_get_view(f)->data;
    fd[50001] = NAN;
    fd[60001] = NAN;
    fd[33] = 100;
    ctx_set("large argmax/amax/amin float32 [70001] with NaN at 50001 and 60001");
    res = call_t("argmax", f, NULL, NULL);
    w = lit_i(BP_INT64, 0, NULL, (int64_t[]){50001});
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor *r2 = call_reduce("amax", f, NULL, 0, false);
    bp_tensor *r3 = call_reduce("amin", f, NULL, 0, false);
    w = lit_f(BP_FLOAT32, 0, NULL, (double[]){NAN});
    CLOSE(r2, w, 1, TOL_PLAIN);
    CLOSE(r3, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(r2);
    bp_tensor_release(r3);
    bp_tensor_release(f);
  }
  {
    /* Sums of every dtype over each dim of a transposed [263, 131]. */
    int64_t sa[] = {263, 131}, d0[] = {0}, d1[] = {-1};
    const int64_t *dl[] = {d0, d0, d1};
    for (size_t i = 0; i < NUM_DTYPES; i++)
      for (int k = 0; k < 3; k++) {
        int32_t dt = all_dtypes[i];
        rt *ra;
        bp_tensor *a = gen_tensor(&r, dt, 2, sa, LAY_PERM, VP_ACCUM, &ra, NULL);
        ctx_set("large sum %s [263, 131] transposed, dims #%d seed=0x%llx", dt_name(dt), k,
                (unsigned long long)base);
        int64_t cnt;
        bp_tensor *res = call_reduce("sum", a, dl[k], k ? 1 : 0, k == 1);
        rt *w = ref_reduce(RR_SUM, ra, dl[k], k ? 1 : 0, k == 1, BP_DTYPE_INVALID, &cnt);
        CLOSE(res, w, cnt, TOL_SUM);
        rt_free(w);
        rt_free(ra);
        bp_tensor_release(res);
        bp_tensor_release(a);
      }
  }
  {
    /* matmul with a large result, and a batched one; layer_norm rows. */
    int64_t sa[] = {200, 8}, sb[] = {8, 200}, ba[] = {4, 100, 12}, bb[] = {12, 90};
    rt *ra, *rb;
    bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sa, LAY_PERM, VP_UNIT, &ra, NULL);
    bp_tensor *b = gen_tensor(&r, BP_FLOAT32, 2, sb, LAY_CONTIG, VP_UNIT, &rb, NULL);
    ctx_set("large matmul float32 [200, 8] x [8, 200] seed=0x%llx", (unsigned long long)base);
    bp_tensor *res = call_t("matmul", a, b, NULL);
    int64_t k;
    rt *w = ref_matmul(ra, rb, &k);
    CLOSE(res, w, k, TOL_SQRT);
    rt_free(w);
    rt_free(ra);
    rt_free(rb);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
    a = gen_tensor(&r, BP_BFLOAT16, 3, ba, LAY_CONTIG, VP_UNIT, &ra, NULL);
    b = gen_tensor(&r, BP_BFLOAT16, 2, bb, LAY_PERM, VP_UNIT, &rb, NULL);
    ctx_set("large matmul bfloat16 [4, 100, 12] x [12, 90] seed=0x%llx", (unsigned long long)base);
    res = call_t("matmul", a, b, NULL);
    w = ref_matmul(ra, rb, &k);
    CLOSE(res, w, k, TOL_SQRT);
    rt_free(w);
    rt_free(ra);
    rt_free(rb);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
    int64_t sx[] = {40, 1000};
    rt *rx;
    bp_tensor *x = gen_tensor(&r, BP_FLOAT32, 2, sx, LAY_CONTIG, VP_FINITE, &rx, NULL);
    ctx_set("large layer_norm float32 [40, 1000] seed=0x%llx", (unsigned long long)base);
    bp_value slots[5];
    bp_stack s = BP_STACK_INIT(slots, 5);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, (int64_t[]){1000}, 1);
    res = RUN(core_op("layer_norm"), &s, .in = {x}, .ret = RET_NEW);
    w = ref_layer_norm(rx, 1, NULL, NULL, 1e-5);
    CLOSE(res, w, 1000, TOL_SQRT);
    rt_free(w);
    rt_free(rx);
    bp_tensor_release(res);
    bp_tensor_release(x);
  }
}

static void large_tensors(void) {
  cpu_setup();
  large_targeted(0x1a46e001);
  large_random(all_dtypes, NUM_DTYPES, 0x1a46e101);
  cpu_done();
}

/* The same with the pool at one thread and at three: BP_CPU_THREADS is
 * read when the plugin loads, and each case is a fresh process. */
static void large_tensors_one_thread(void) {
  static const int32_t dts[] = {BP_FLOAT32, BP_BFLOAT16, BP_INT64, BP_UINT8};
  setenv("BP_CPU_THREADS", "1", 1);
  cpu_setup();
  large_targeted(0x1a46e002);
  large_random(dts, NELEMS(dts), 0x1a46e102);
  cpu_done();
}

static void large_tensors_three_threads(void) {
  static const int32_t dts[] = {BP_FLOAT64, BP_FLOAT16, BP_INT32, BP_BOOL};
  setenv("BP_CPU_THREADS", "3", 1);
  cpu_setup();
  large_targeted(0x1a46e003);
  large_random(dts, NELEMS(dts), 0x1a46e103);
  cpu_done();
}

/* A column reduction with fewer blocks of outputs than threads splits
 * the reduced range too, keeping a partial result per output and piece:
 * only as many pieces as fill the threads, not a piece per thread for
 * every block.  sum(dim=0) of a [32, 32768] float32 (4 MiB, 8 blocks of
 * 4096 columns) with 64 threads wanted 84 MB of partial results (8
 * blocks x 64 pieces x 4096); 8 pieces per block need 10.5 MB. */
static void column_pieces_memory(void) {
  setenv("BP_CPU_THREADS", "64", 1);
  cpu_setup();
  rng r;
  rng_seed(&r, 0xc01d);
  int64_t sz[] = {32, 32768}, d0[] = {0}, cnt;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sz, LAY_CONTIG, VP_FINITE, &ra, NULL);
  ctx_set("sum(float32 [32, 32768], dim=0) with 64 threads");
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  bp_tensor *res = call_reduce("sum", a, d0, 1, false);
  getrusage(RUSAGE_SELF, &after);
  rt *w = ref_reduce(RR_SUM, ra, d0, 1, false, BP_DTYPE_INVALID, &cnt);
  if (res) CLOSE(res, w, cnt, TOL_SUM);
  long grown_mb = (after.ru_maxrss - before.ru_maxrss) / 1024;
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer's shadow of 64 new threads' stacks counts in the
   * resident set; the result is still checked above. */
  tap_diag("the resident set grew by %ld MB: not bounded under ThreadSanitizer", grown_mb);
#else
  if (grown_mb > 40)
    REPORT("memory", "the peak resident set grew by %ld MB for a 4 MB input (expected < 40)",
           grown_mb);
#endif
  rt_free(w);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
  cpu_done();
}

/* Several host threads calling at once: the pool runs one job at a time
 * and callers that find it busy run inline; every result must still be
 * right. */
typedef struct conc_job {
  const char *what;
  const bp_op *op;
  bp_tensor *a, *b;
  rt *want;
  int64_t n;
  int kind, iters;
  int failures;
  char first[512];
} conc_job;

static void *conc_worker(void *arg) {
  conc_job *j = arg;
  for (int i = 0; i < j->iters; i++) {
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, j->a);
    if (j->b) bp_stack_push_tensor(&s, j->b);
    bp_status st = bp_call(j->op, &s);
    bp_tensor *r = NULL;
    if (st || bp_stack_get_tensor(&s, 0, &r) != BP_OK) {
      if (!j->failures++)
        snprintf(j->first, sizeof j->first, "%s: call %d: %s: %s", j->what, i, bp_status_str(st),
                 bp_last_error());
      continue;
    }
    rt *got = read_tensor(r);
    int64_t bad = count_mismatches(got, j->want, j->n, j->kind);
    if (bad && !j->failures++)
      snprintf(j->first, sizeof j->first, "%s: call %d: %lld elements differ from the reference",
               j->what, i, (long long)bad);
    rt_free(got);
    bp_stack_release(&s);
  }
  return NULL;
}

static void concurrent_callers(void) {
  cpu_setup();
  rng r;
  rng_seed(&r, 0xc0cc);
  int64_t s2[] = {300, 200}, s1[] = {70001}, sm[] = {120, 64}, sn[] = {64, 130};
  rt *ra, *rb, *rc, *rm, *rn;
  bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, s2, LAY_PERM, VP_FINITE, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, BP_FLOAT32, 2, s2, LAY_CONTIG, VP_FINITE, &rb, NULL);
  bp_tensor *c = gen_tensor(&r, BP_FLOAT16, 1, s1, LAY_STRIDED, VP_FINITE, &rc, NULL);
  bp_tensor *m = gen_tensor(&r, BP_FLOAT32, 2, sm, LAY_CONTIG, VP_UNIT, &rm, NULL);
  bp_tensor *nmat = gen_tensor(&r, BP_FLOAT32, 2, sn, LAY_PERM, VP_UNIT, &rn, NULL);
  int64_t cnt, k;
  conc_job jobs[] = {
      {"add float32 [300, 200]", core_op("add"), a, b, ref_binary(RB_ADD, ra, rb, 1), 1, TOL_PLAIN,
       15, 0, ""},
      {"sum float32 [300, 200]", core_op("sum"), a, NULL,
       ref_reduce(RR_SUM, ra, NULL, 0, false, BP_DTYPE_INVALID, &cnt), 0, TOL_SUM, 15, 0, ""},
      {"exp float16 [70001]", core_op("exp"), c, NULL, ref_unary(RU_EXP, rc), 1, TOL_PLAIN, 15, 0,
       ""},
      {"matmul float32 [120, 64] x [64, 130]", core_op("matmul"), m, nmat, ref_matmul(rm, rn, &k),
       0, TOL_SQRT, 15, 0, ""},
      {"mul float32 [300, 200]", core_op("mul"), b, a, ref_binary(RB_MUL, rb, ra, 1), 1, TOL_PLAIN,
       15, 0, ""},
  };
  jobs[1].n = cnt;
  jobs[3].n = k;
  ctx_set("concurrent callers");
  pthread_t th[NELEMS(jobs)];
  for (size_t i = 0; i < NELEMS(jobs); i++)
    ok(pthread_create(&th[i], NULL, conc_worker, &jobs[i]) == 0);
  for (size_t i = 0; i < NELEMS(jobs); i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < NELEMS(jobs); i++) {
    if (jobs[i].failures)
      REPORT("concurrent calls", "%d of %d calls failed; the first: %s", jobs[i].failures,
             jobs[i].iters, jobs[i].first);
    rt_free(jobs[i].want);
  }
  rt *rs[] = {ra, rb, rc, rm, rn};
  for (size_t i = 0; i < NELEMS(rs); i++) rt_free(rs[i]);
  bp_tensor *ts[] = {a, b, c, m, nmat};
  for (size_t i = 0; i < NELEMS(ts); i++) bp_tensor_release(ts[i]);
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static void errors_dtype(void) {
  cpu_setup();
  bp_tensor *f = zeros2(BP_FLOAT32, 2, 3), *d = zeros2(BP_FLOAT64, 3, 2);
  bp_tensor *i = zeros2(BP_INT32, 2, 3), *bo = zeros2(BP_BOOL, 2, 3), *i8 = zeros2(BP_INT8, 2, 3);
  bp_tensor *d23 = zeros2(BP_FLOAT64, 2, 3);
  bp_value slots[6];
  bp_stack s = BP_STACK_INIT(slots, 6);

  ctx_set("mean of int32");
  push_t(&s, i, NULL, NULL);
  EXPECT_ERROR(core_op("mean"), &s, BP_ERR_TYPE,
               "core::mean: argument #0 'self': expected a floating-point dtype, got int32", NULL);
  ctx_set("mean of bool");
  push_t(&s, bo, NULL, NULL);
  EXPECT_ERROR(core_op("mean"), &s, BP_ERR_TYPE, NULL, "got bool");
  ctx_set("where with a float32 condition");
  push_t(&s, f, f, f);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_TYPE,
               "core::where: argument #0 'condition': expected bool, got float32", NULL);
  ctx_set("where with an int8 condition");
  push_t(&s, i8, f, f);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_TYPE, NULL, "got int8");
  ctx_set("matmul float32 x float64");
  push_t(&s, f, d, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_TYPE,
               "core::matmul: argument #1 'other': expected float32, got float64", NULL);
  ctx_set("matmul of int32");
  bp_tensor *i32 = zeros2(BP_INT32, 3, 2);
  push_t(&s, i, i32, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_TYPE, NULL, "got int32");
  ctx_set("softmax, log_softmax, layer_norm of integers");
  push_t(&s, i, NULL, NULL);
  bp_stack_push_int(&s, 0);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_TYPE, NULL, "got int32");
  push_t(&s, bo, NULL, NULL);
  bp_stack_push_int(&s, 0);
  EXPECT_ERROR(core_op("log_softmax"), &s, BP_ERR_TYPE, NULL, "got bool");
  push_t(&s, i8, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_TYPE, NULL, "got int8");
  ctx_set("muladd of integers");
  push_t(&s, i, i8, NULL);
  bp_stack_push_float(&s, 1);
  EXPECT_ERROR(core_op("muladd"), &s, BP_ERR_TYPE, NULL, "floating-point");
  ctx_set("sub and pow of two bools");
  push_t(&s, bo, bo, NULL);
  EXPECT_ERROR(core_op("sub"), &s, BP_ERR_TYPE, NULL, "core::sub");
  push_t(&s, bo, bo, NULL);
  EXPECT_ERROR(core_op("pow"), &s, BP_ERR_TYPE, NULL, "core::pow");
  ctx_set("add with a fractional alpha on integers, alpha 2 on bools");
  push_t(&s, i, i8, NULL);
  bp_stack_push_float(&s, 0.5);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_TYPE, NULL, "alpha");
  push_t(&s, i8, i8, NULL);
  bp_stack_push_float(&s, -1.5);
  EXPECT_ERROR(core_op("sub"), &s, BP_ERR_TYPE, NULL, "alpha");
  push_t(&s, bo, bo, NULL);
  bp_stack_push_float(&s, 2);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_TYPE, NULL, "alpha");
  ctx_set("neg, abs, relu, argmax of bool");
  const char *nb[] = {"neg", "abs", "relu", "argmax"};
  for (int k = 0; k < 4; k++) {
    push_t(&s, bo, NULL, NULL);
    EXPECT_ERROR(core_op(nb[k]), &s, BP_ERR_TYPE, NULL, "got bool");
  }
  ctx_set("add.out into the wrong dtype");
  push_t(&s, f, f, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, d23);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_TYPE,
               "core::add.out: argument #3 'out': expected float32, got float64", NULL);
  ctx_set("layer_norm with a float64 weight for float32 input");
  bp_tensor *w64 = zeros1(BP_FLOAT64, 3);
  push_t(&s, f, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_tensor(&s, w64);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_TYPE, NULL, "got float64");
  bp_tensor *ts[] = {f, d, i, bo, i8, d23, i32, w64};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

static void errors_shape(void) {
  cpu_setup();
  bp_value slots[6];
  bp_stack s = BP_STACK_INIT(slots, 6);
  bp_tensor *a23 = zeros2(BP_FLOAT32, 2, 3), *b4 = zeros1(BP_FLOAT32, 4);
  bp_tensor *a53 = zeros2(BP_FLOAT32, 5, 3), *b21 = zeros2(BP_FLOAT32, 2, 1);
  bp_tensor *a45 = zeros2(BP_FLOAT32, 4, 5), *c2 = zeros1(BP_BOOL, 2), *b3 = zeros1(BP_FLOAT32, 3);
  bp_tensor *e03 = zeros2(BP_FLOAT32, 0, 3), *s0 = tensor_zeros(BP_FLOAT32, 0, NULL);
  bp_tensor *a22 = zeros2(BP_FLOAT32, 2, 2), *a13 = zeros2(BP_FLOAT32, 1, 3);
  ctx_set("add [2, 3] + [4]");
  push_t(&s, a23, b4, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_SHAPE,
               "core::add: argument #1 'other' with shape [4] cannot be broadcast with argument "
               "#0 'self' with shape [2, 3] (dimension 1: 4 vs 3)",
               NULL);
  ctx_set("mul [5, 3] * [2, 1]");
  push_t(&s, a53, b21, NULL);
  EXPECT_ERROR(core_op("mul"), &s, BP_ERR_SHAPE,
               "core::mul: argument #1 'other' with shape [2, 1] cannot be broadcast with "
               "argument #0 'self' with shape [5, 3] (dimension 0: 2 vs 5)",
               NULL);
  ctx_set("where(bool [2], [3], [3])");
  push_t(&s, c2, b3, b3);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_SHAPE, NULL, "cannot be broadcast");
  ctx_set("matmul [2, 3] x [4, 5]");
  push_t(&s, a23, a45, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "[2, 3]");
  has_str(bp_last_error(), "[4, 5]");
  ctx_set("matmul batch [2, 2, 3] x [3, 3, 4]");
  bp_tensor *m1 = tensor_zeros(BP_FLOAT32, 3, (int64_t[]){2, 2, 3});
  bp_tensor *m2 = tensor_zeros(BP_FLOAT32, 3, (int64_t[]){3, 3, 4});
  push_t(&s, m1, m2, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "[2, 2, 3]");
  has_str(bp_last_error(), "[3, 3, 4]");
  ctx_set("matmul of a 0-dim tensor");
  push_t(&s, s0, b3, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "core::matmul");
  push_t(&s, b3, s0, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "core::matmul");
  ctx_set("amax, amin, argmax of nothing");
  int64_t d0[] = {0};
  push_t(&s, e03, NULL, NULL);
  EXPECT_ERROR(core_op("amax"), &s, BP_ERR_SHAPE, NULL, "core::amax");
  push_t(&s, e03, NULL, NULL);
  bp_stack_push_int_list(&s, d0, 1);
  EXPECT_ERROR(core_op("amin"), &s, BP_ERR_SHAPE, NULL, "core::amin");
  push_t(&s, e03, NULL, NULL);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_SHAPE, NULL, "core::argmax");
  push_t(&s, e03, NULL, NULL);
  bp_stack_push_int(&s, 1);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_SHAPE, NULL, "core::argmax");
  ctx_set("layer_norm with a normalized_shape that is not the trailing sizes");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){4}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "normalized_shape");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){2}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "normalized_shape");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_tensor(&s, b4);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "weight");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_none(&s);
  bp_stack_push_tensor(&s, a23);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "bias");
  ctx_set("add.out into the wrong shape");
  push_t(&s, a23, b3, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, b3);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_SHAPE,
               "core::add.out: argument #3 'out' has shape [3], expected [2, 3]", NULL);
  ctx_set("copy_ from a shape that does not broadcast to self");
  push_t(&s, a22, b3, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  push_t(&s, b3, a23, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  push_t(&s, a13, a23, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  bp_tensor *ts[] = {a23, b4, a53, b21, a45, c2, b3, e03, s0, a22, a13, m1, m2};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

static void errors_dim(void) {
  cpu_setup();
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *a = zeros2(BP_FLOAT32, 2, 3), *v = zeros1(BP_FLOAT32, 3);
  bp_tensor *z = tensor_zeros(BP_FLOAT32, 0, NULL);
  ctx_set("softmax dim 2 of a 2-D tensor");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int(&s, 2);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_INVALID_ARGUMENT,
               "core::softmax: argument #1 'dim': dimension 2 is out of range for a "
               "2-dimensional tensor (expected -2 .. 1)",
               NULL);
  ctx_set("log_softmax dim -3 of a 2-D tensor");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int(&s, -3);
  EXPECT_ERROR(core_op("log_softmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL,
               "dimension -3 is out of range for a 2-dimensional tensor (expected -2 .. 1)");
  ctx_set("softmax dim 1 of a 0-dim tensor");
  push_t(&s, z, NULL, NULL);
  bp_stack_push_int(&s, 1);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "(expected -1 .. 0)");
  const char *reds[] = {"sum", "mean", "amax", "amin"};
  for (int k = 0; k < 4; k++) {
    ctx_set("%s over dims out of range and repeated", reds[k]);
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){2}, 1);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){0, -3}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){1, -1}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "'dim'");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){0, 0}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "'dim'");
  }
  ctx_set("argmax dim out of range");
  push_t(&s, v, NULL, NULL);
  bp_stack_push_int(&s, 1);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL,
               "dimension 1 is out of range for a 1-dimensional tensor (expected -1 .. 0)");
  push_t(&s, z, NULL, NULL);
  bp_stack_push_int(&s, -2);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
  bp_tensor_release(a);
  bp_tensor_release(v);
  bp_tensor_release(z);
  cpu_done();
}

static void errors_args(void) {
  cpu_setup();
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *a = zeros2(BP_FLOAT32, 2, 3);
  const char *bad[] = {"fast", "", "Tanh", "none "};
  for (int k = 0; k < 4; k++) {
    ctx_set("gelu approximate=\"%s\"", bad[k]);
    push_t(&s, a, NULL, NULL);
    bp_stack_push_str(&s, bad[k]);
    EXPECT_ERROR(core_op("gelu"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "approximate");
  }
  ctx_set("layer_norm eps < 0");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_none(&s);
  bp_stack_push_none(&s);
  bp_stack_push_float(&s, -1e-5);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "eps");
  bp_tensor_release(a);
  cpu_done();
}

/* An empty tensor whose other dimensions are huge, [2^40, 2^40, 2^40, 0]:
 * ops give empty results, or the reduction of nothing, and no size or
 * stride arithmetic overflows (the sanitizer build traps one that does). */
static void huge_empty(void) {
  cpu_setup();
  const int64_t big = INT64_C(1) << 40;
  int64_t sz[4] = {big, big, big, 0}, t_sz[4] = {0, big, big, big};
  bp_tensor *a = NULL, *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 4, sz, &a), BP_OK);
  /* The same shape with the zero first, as a view with saturated strides. */
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 4, t_sz, &t), BP_OK);
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *ins[2] = {a, t};
  for (int k = 0; k < 2; k++) {
    bp_tensor *x = ins[k];
    ctx_set("huge empty tensor #%d", k);
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("neg"), &s), BP_OK);
    if (s.top == 1) is_int(bp_tensor_numel(slots[0].u.tensor), 0);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_float(&s, 2.0);
    is_status(bp_call(core_op("add"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_scalar_type(&s, BP_FLOAT64);
    is_status(bp_call(core_op("cast"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_float(&s, 1.0);
    is_status(bp_call(core_op("fill_"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int(&s, 1);
    is_status(bp_call(core_op("softmax"), &s), BP_OK);
    bp_stack_release(&s);
    /* sum and mean of everything: 0 and NaN. */
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("sum"), &s), BP_OK);
    if (s.top == 1) ok(*(const float *)bp_tensor_get_view(slots[0].u.tensor)->data == 0.0f);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("mean"), &s), BP_OK);
    if (s.top == 1) ok(isnan(*(const float *)bp_tensor_get_view(slots[0].u.tensor)->data));
    bp_stack_release(&s);
    /* sum over a huge dimension: still empty. */
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, (int64_t[]){k ? 1 : 0}, 1);
    is_status(bp_call(core_op("sum"), &s), BP_OK);
    if (s.top == 1) is_int(bp_tensor_numel(slots[0].u.tensor), 0);
    bp_stack_release(&s);
  }
  bp_tensor_release(a);
  bp_tensor_release(t);
  cpu_done();
}

/* Mixed devices are refused; a device without core kernels has none. */
static void errors_device(void) {
  cpu_setup();
  must_load("good");
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  double v3[] = {1, 2, 3};
  bp_tensor *g = on_gooddev(1, (int64_t[]){3}, v3), *g2 = on_gooddev(1, (int64_t[]){3}, v3);
  bp_tensor *c = tensor_f(BP_FLOAT32, v3, 3), *cb = tensor_i(BP_BOOL, (int64_t[]){1, 0, 1}, 3);
  if (!g || !g2) {
    cpu_done();
    return;
  }
  ctx_set("add(cpu, gooddev)");
  push_t(&s, c, g, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_DEVICE,
               "core::add: argument #1 'other' is on gooddev:0 but argument #0 'self' is on "
               "cpu:0; the op does not allow mixed devices",
               NULL);
  ctx_set("where(cpu, gooddev, cpu)");
  push_t(&s, cb, g, c);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_DEVICE, NULL, "gooddev:0");
  ctx_set("matmul(gooddev, cpu)");
  push_t(&s, g, c, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_DEVICE, NULL, "cpu:0");
  ctx_set("add.out(cpu, cpu, out=gooddev)");
  push_t(&s, c, c, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, g);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_DEVICE, NULL, "gooddev:0");
  ctx_set("ops on gooddev alone find no kernel");
  push_t(&s, g, g2, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  push_t(&s, g, NULL, NULL);
  EXPECT_ERROR(core_op("neg"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  ctx_set("copy_(gooddev, cpu): the kernel of self's device runs, and there is none");
  push_t(&s, g, c, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  bp_tensor *ts[] = {g, g2, c, cb};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(kernels_registered),
      TAP_CASE(binary_float32),
      TAP_CASE(binary_float64),
      TAP_CASE(binary_float16),
      TAP_CASE(binary_bfloat16),
      TAP_CASE(binary_ints),
      TAP_CASE(binary_bool),
      TAP_CASE(binary_promotion),
      TAP_CASE(binary_special),
      TAP_CASE(add_out),
      TAP_CASE(muladd),
      TAP_CASE(unary_float32),
      TAP_CASE(unary_float64),
      TAP_CASE(unary_half),
      TAP_CASE(unary_ints),
      TAP_CASE(unary_special),
      TAP_CASE(unary_exp_edges),
      TAP_CASE(where_all),
      TAP_CASE(reductions_sum),
      TAP_CASE(reductions_mean),
      TAP_CASE(reductions_minmax),
      TAP_CASE(reductions_argmax),
      TAP_CASE(reductions_special),
      TAP_CASE(matmul_float32),
      TAP_CASE(matmul_others),
      TAP_CASE(matmul_special),
      TAP_CASE(matmul_builtin_kernels),
      TAP_CASE(softmax_all),
      TAP_CASE(layer_norm),
      TAP_CASE(softmax_columns),
      TAP_CASE(layer_norm_columns),
      TAP_CASE(cast_matrix),
      TAP_CASE(cast_exact),
      TAP_CASE(contiguous_all),
      TAP_CASE(fill_all),
      TAP_CASE(copy_all),
      TAP_CASE(copy_overlap),
      TAP_CASE(copy_cross_device),
      TAP_CASE(tiled_elementwise),
      TAP_CASE(keywords_and_defaults),
      TAP_CASE(large_tensors),
      TAP_CASE(large_tensors_one_thread),
      TAP_CASE(large_tensors_three_threads),
      TAP_CASE(column_pieces_memory),
      TAP_CASE(concurrent_callers),
      TAP_CASE(errors_dtype),
      TAP_CASE(errors_shape),
      TAP_CASE(errors_dim),
      TAP_CASE(errors_args),
      TAP_CASE(errors_device),
      TAP_CASE(huge_empty),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
