/*
 * tests/test-precedence.c - several plugins with kernels for one op and
 * one device type, and kernels' declared dtypes, which the host enforces.
 *
 * tests/plugins/tuned.c registers core::add and core::sum for the CPU
 * (float32 only, priority 10, results filled with a marker: 1000 from
 * tuned, 2000 from tuned_b) and core::clamp (int32 only, the same marker)
 * beside the reference CPU plugin.  Each case runs in a fresh
 * process (tap_main), so BP_PREFER_PLUGINS can be set before the host
 * reads it.
 */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *cpu_plugin(void) {
  static char buf[4096];
  const char *top = getenv("top_builddir");
  snprintf(buf, sizeof buf, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  return buf;
}

static bp_plugin *load_cpu(void) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_load(cpu_plugin(), &p);
  if (st) tap_diag("loading cpu.so: %s", bp_last_error());
  is_status(st, BP_OK);
  return p;
}

static bp_tensor *full(int32_t dtype, double v) {
  int64_t n = 3;
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, dtype, 1, &n, &t) != BP_OK) return NULL;
  const bp_tensor_view *tv = bp_tensor_get_view(t);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == BP_FLOAT32) ((float *)tv->data)[i] = (float)v;
    if (dtype == BP_FLOAT64) ((double *)tv->data)[i] = v;
    if (dtype == BP_FLOAT16) ((uint16_t *)tv->data)[i] = 0x3c00; /* 1.0 */
  }
  return t;
}

/* core::add(a, b) of two `dtype` tensors holding 1 and 2; the first
 * element of the result as a double, or -1 on failure. */
static double add_first(int32_t dtype) {
  const bp_op *op = must_find("core::add");
  bp_tensor *a = full(dtype, 1), *b = full(dtype, 2);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  double r = -1;
  if (bp_call(op, &s) == BP_OK) {
    const bp_tensor_view *v = bp_tensor_get_view(s.values[0].u.tensor);
    r = v->dtype == BP_FLOAT32 ? ((float *)v->data)[0]
        : v->dtype == BP_FLOAT64 ? ((double *)v->data)[0] : 0;
    bp_stack_release(&s);
  } else {
    tap_diag("core::add(%s): %s", bp_dtype_name(dtype), bp_last_error());
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  return r;
}

/* The reproducer: a plugin with one core kernel for the CPU, then the
 * reference CPU plugin.  Both load; the tuned kernel wins by priority for
 * float32, and the reference serves every dtype the tuned one lacks. */
static void vendor_beside_reference(void) {
  bp_plugin *t = must_load("tuned");
  bp_plugin *cpu = load_cpu();
  if (!t || !cpu) return;
  is_double(add_first(BP_FLOAT32), 1000, 0);
  is_double(add_first(BP_FLOAT64), 3, 0);
  /* Every other core op is the reference's. */
  const bp_op *neg = must_find("core::neg");
  bp_op_info oi;
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  is_status(bp_op_get_info(neg, &oi), BP_OK);
  is_int(oi.nkernels, 1);
  /* bp_op_get_kernel lists both CPU kernels, the active one first. */
  const bp_op *add = must_find("core::add");
  is_status(bp_op_get_info(add, &oi), BP_OK);
  is_int(oi.nkernels, 2);
  bp_kernel_info k0, k1;
  k0.struct_size = k1.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  is_status(bp_op_get_kernel(add, 0, &k0), BP_OK);
  is_status(bp_op_get_kernel(add, 1, &k1), BP_OK);
  is_str(k0.plugin, "tuned");
  is_int(k0.priority, 10);
  is_int(k0.active, 1);
  is_str(k1.plugin, "cpu");
  is_int(k1.active, 0);
  ok(k0.dtypes && k0.dtypes[0] == BP_FLOAT32 && k0.dtypes[1] == BP_DTYPE_INVALID);
  /* Unloading the active provider hands the op to the next. */
  is_status(bp_plugin_unload(t), BP_OK);
  is_double(add_first(BP_FLOAT32), 3, 0);
  is_status(bp_op_get_kernel(add, 0, &k0), BP_OK);
  is_str(k0.plugin, "cpu");
  is_int(k0.active, 1);
  /* And loading it again takes it back. */
  is_status(bp_plugin_load(test_plugin("tuned"), NULL), BP_OK);
  is_double(add_first(BP_FLOAT32), 1000, 0);
}

/* The order of loading does not matter to priority. */
static void reference_first(void) {
  if (!load_cpu() || !must_load("tuned")) return;
  is_double(add_first(BP_FLOAT32), 1000, 0);
  is_double(add_first(BP_FLOAT64), 3, 0);
}

/* Equal priorities: the kernel registered first wins. */
static void ties_go_to_the_first(void) {
  if (!must_load("tuned_b") || !must_load("tuned") || !load_cpu()) return;
  is_double(add_first(BP_FLOAT32), 2000, 0);
}

/* The host's override: per op, for every op, and removed again. */
static void host_chooses(void) {
  if (!must_load("tuned") || !load_cpu() || !must_load("tuned_b")) return;
  const bp_op *add = must_find("core::add");
  is_double(add_first(BP_FLOAT32), 1000, 0);
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, "cpu"), BP_OK);
  is_double(add_first(BP_FLOAT32), 3, 0);
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, "tuned_b"), BP_OK);
  is_double(add_first(BP_FLOAT32), 2000, 0);
  /* A per-op choice beats a choice for every op. */
  is_status(bp_set_kernel_provider(NULL, BP_DEVICE_CPU, "cpu"), BP_OK);
  is_double(add_first(BP_FLOAT32), 2000, 0);
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, NULL), BP_OK);
  is_double(add_first(BP_FLOAT32), 3, 0);
  is_status(bp_set_kernel_provider(NULL, BP_DEVICE_CPU, NULL), BP_OK);
  is_double(add_first(BP_FLOAT32), 1000, 0);
  /* The chosen plugin's kernel still declares its dtypes: float64 goes on
   * to the next candidate. */
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, "tuned"), BP_OK);
  is_double(add_first(BP_FLOAT64), 3, 0);
  /* Errors name what is wrong. */
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, "nobody"), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "no loaded plugin named 'nobody' has a kernel for 'core::add' on cpu");
  is_status(bp_set_kernel_provider(add, -5, "cpu"), BP_ERR_DEVICE);
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, ""), BP_ERR_INVALID_ARGUMENT);
  /* A choice outlives an unload of its plugin. */
  bp_plugin *b = NULL;
  is_status(bp_plugin_load(test_plugin("tuned_b"), &b), BP_OK);
  is_status(bp_set_kernel_provider(add, BP_DEVICE_CPU, "tuned_b"), BP_OK);
  is_status(bp_plugin_unload(b), BP_OK);
  is_double(add_first(BP_FLOAT32), 1000, 0);
  is_status(bp_plugin_load(test_plugin("tuned_b"), NULL), BP_OK);
  is_double(add_first(BP_FLOAT32), 2000, 0);
}

/* BP_PREFER_PLUGINS names plugins in order of preference. */
static void environment_prefers(void) {
  setenv("BP_PREFER_PLUGINS", " nobody , cpu,tuned", 1);
  if (!must_load("tuned") || !load_cpu()) return;
  is_double(add_first(BP_FLOAT32), 3, 0);
}

/* A kernel never sees a dtype it does not declare: the call goes to the
 * next kernel, or fails before it runs, on the fast path and the general
 * path alike. */
static void declared_dtypes_enforced(void) {
  if (!must_load("tuned")) return;
  const bp_op *op = must_find("tuned::only_f32");
  const bp_op *add = must_find("core::add");
  bp_tensor *h = full(BP_FLOAT16, 1), *f = full(BP_FLOAT32, 1);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  /* The fast path (exact tags, one device). */
  bp_stack_push_tensor(&s, h);
  is_status(bp_call(op, &s), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "tuned::only_f32: argument #0 'a' is float16, which the kernel for cpu "
                          "(plugin 'tuned') does not support (it declares float32), and no other "
                          "kernel for cpu does");
  /* The general path (a keyword argument). */
  s.top = 0;
  bp_stack_push_tensor(&s, h);
  const char *kw[] = {"a"};
  is_status(bp_call_kw(op, &s, kw, 1), BP_ERR_UNSUPPORTED);
  has_str(bp_last_error(), "float16");
  /* float32 runs. */
  s.top = 0;
  bp_stack_push_tensor(&s, f);
  is_status(bp_call(op, &s), BP_OK);
  bp_stack_release(&s);
  /* core::add with only the tuned kernel: float16 is refused (no
   * reference loaded), mixed float32 + float16 too, by the second
   * argument. */
  s.top = 0;
  bp_stack_push_tensor(&s, f);
  bp_stack_push_tensor(&s, h);
  is_status(bp_call(add, &s), BP_ERR_UNSUPPORTED);
  has_str(bp_last_error(), "argument #1 'other' is float16");
  bp_tensor_release(h);
  bp_tensor_release(f);
}

/* core::sum(x, dtype=d) on a float32 x: the first element of the result
 * as a double (-1 on failure), its dtype in *dt. */
static double sum_as(int32_t dtype, int32_t *dt) {
  const bp_op *op = must_find("core::sum");
  bp_tensor *x = full(BP_FLOAT32, 1);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, x);
  if (dtype != BP_DTYPE_INVALID) bp_stack_push_scalar_type(&s, dtype);
  const char *kw[] = {"dtype"};
  double r = -1;
  *dt = BP_DTYPE_INVALID;
  if (bp_call_kw(op, &s, kw, dtype != BP_DTYPE_INVALID) == BP_OK) {
    const bp_tensor_view *v = bp_tensor_get_view(s.values[0].u.tensor);
    *dt = v->dtype;
    r = v->dtype == BP_FLOAT32 ? ((float *)v->data)[0] : ((double *)v->data)[0];
    bp_stack_release(&s);
  }
  bp_tensor_release(x);
  return r;
}

/* core::cumsum(x, 0, dtype=d) on a float32 x of three 1s: the last
 * element of the result as a double (-1 on failure), its dtype in *dt. */
static double cumsum_as(int32_t dtype, int32_t *dt) {
  const bp_op *op = must_find("core::cumsum");
  bp_tensor *x = full(BP_FLOAT32, 1);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int(&s, 0);
  if (dtype != BP_DTYPE_INVALID) bp_stack_push_scalar_type(&s, dtype);
  double r = -1;
  *dt = BP_DTYPE_INVALID;
  if (bp_call(op, &s) == BP_OK) {
    const bp_tensor_view *v = bp_tensor_get_view(s.values[0].u.tensor);
    *dt = v->dtype;
    r = v->dtype == BP_FLOAT32 ? ((float *)v->data)[2] : ((double *)v->data)[2];
    bp_stack_release(&s);
  }
  bp_tensor_release(x);
  return r;
}

/* core::clamp(x, min) on an int32 x of three 1s: the first element of
 * the result as a double (-1 on failure), its dtype in *dt. */
static double clamp_int32(bp_value min, int32_t *dt) {
  const bp_op *op = must_find("core::clamp");
  int64_t n = 3;
  bp_tensor *x = NULL;
  if (bp_tensor_empty(BP_CPU, BP_INT32, 1, &n, &x) != BP_OK) return -1;
  for (int i = 0; i < 3; i++) ((int32_t *)bp_tensor_get_view(x)->data)[i] = 1;
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, x);
  s.values[s.top++] = min;
  double r = -1;
  *dt = BP_DTYPE_INVALID;
  if (bp_call(op, &s) == BP_OK) {
    const bp_tensor_view *v = bp_tensor_get_view(s.values[0].u.tensor);
    *dt = v->dtype;
    r = v->dtype == BP_INT32 ? ((int32_t *)v->data)[0] : ((float *)v->data)[0];
    bp_stack_release(&s);
  } else {
    tap_diag("core::clamp: %s", bp_last_error());
  }
  bp_tensor_release(x);
  return r;
}

/* Declared dtypes cover results too: a float32-only core::sum is not
 * asked for sum(x, dtype=float64), which goes to the next kernel, or
 * fails naming the op, the plugin and the dtype; an int32-only
 * core::clamp is not asked for clamp(int32, 2.5), a float32 result, which
 * goes to the host's composite.  The caller's last error survives the
 * routing. */
static void declared_dtypes_cover_results(void) {
  if (!must_load("tuned")) return;
  int32_t dt;
  is_double(sum_as(BP_DTYPE_INVALID, &dt), 1000, 0);
  is_int(dt, BP_FLOAT32);
  is_double(sum_as(BP_FLOAT32, &dt), 1000, 0);
  /* Only the tuned kernel: refused before it runs. */
  is_double(sum_as(BP_FLOAT64, &dt), -1, 0);
  is_status(bp_last_status(), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "core::sum: result #0 would be float64, which the kernel for cpu "
                          "(plugin 'tuned') does not support (it declares float32), and no other "
                          "kernel for cpu does");
  /* A structured float32-only kernel (cumsum) is handed no float64 result
   * to fill, on the fast path too: the call goes elsewhere or fails. */
  is_double(cumsum_as(BP_DTYPE_INVALID, &dt), 1000, 0);
  ok(cumsum_as(BP_FLOAT64, &dt) != 1000); /* a float64 cumsum does not reach it */
  if (!load_cpu()) return;
  is_double(cumsum_as(BP_FLOAT64, &dt), 3, 0);
  is_int(dt, BP_FLOAT64);
  is_double(cumsum_as(BP_FLOAT32, &dt), 1000, 0);
  /* The reference takes it; float32 still goes to the tuned kernel. */
  is_double(sum_as(BP_FLOAT64, &dt), 3, 0);
  is_int(dt, BP_FLOAT64);
  is_double(sum_as(BP_FLOAT32, &dt), 1000, 0);
  /* clamp: int32 bounds stay with the tuned kernel, a float bound's
   * float32 result goes to the composite. */
  bp_value two = {.tag = BP_TAG_INT, .u.i = 2}, half = {.tag = BP_TAG_FLOAT, .u.f = 2.5};
  is_double(clamp_int32(two, &dt), 1000, 0);
  is_int(dt, BP_INT32);
  is_double(clamp_int32(half, &dt), 2.5, 0);
  is_int(dt, BP_FLOAT32);
  /* A successful call leaves the last error as it was, though routing ran
   * the meta function. */
  bp_clear_error();
  const bp_op *sum = must_find("core::sum");
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  is_status(bp_call(sum, &s), BP_ERR_INVALID_ARGUMENT);
  char before[256];
  snprintf(before, sizeof before, "%s", bp_last_error());
  is_double(sum_as(BP_FLOAT64, &dt), 3, 0);
  is_status(bp_last_status(), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), before);
}

/* A second kernel from the same plugin for the same slot is refused,
 * and only that kernel (tests/plugins/conflict.c passes it on). */
static void same_plugin_twice(void) {
  is_status(bp_plugin_load(test_plugin("conflict"), NULL), BP_ERR_ALREADY_EXISTS);
  has_str(bp_last_error(), "only this second kernel is refused");
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(vendor_beside_reference), TAP_CASE(reference_first),
      TAP_CASE(ties_go_to_the_first),    TAP_CASE(host_chooses),
      TAP_CASE(environment_prefers),     TAP_CASE(declared_dtypes_enforced),
      TAP_CASE(declared_dtypes_cover_results), TAP_CASE(same_plugin_twice),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
