/*
 * The CPU plugin's registration, and how calls reach its kernels: every
 * core op has a meta function and an enabled CPU kernel from the cpu
 * plugin; keyword arguments and defaults reach the kernels.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <string.h>

#include "cases.h"
#include "harness.h"

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* The names of every core op, for the registration check. */
static const char *const core_ops[] = {
    "add",        "add.out", "sub",        "mul",    "div",    "maximum", "minimum",
    "pow",        "muladd",  "neg",        "abs",    "exp",    "log",     "sqrt",
    "rsqrt",      "relu",    "sigmoid",    "tanh",   "gelu",   "where",   "sum",
    "mean",       "amax",    "amin",       "argmax", "matmul", "softmax", "log_softmax",
    "layer_norm", "cast",    "contiguous", "fill_",  "copy_"};

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
/* Keyword arguments and defaults                                           */
/* ------------------------------------------------------------------------ */

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

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(kernels_registered),
      TAP_CASE(keywords_and_defaults),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
