/*
 * tests/test-unload.c - vendor device types side by side, streams and
 * events, unloading (refused while tensors or streams are alive, then
 * complete), fragments of namespaces, files that are not plugins, and the
 * errors of unload.
 *
 * Each case runs in a fresh process, so the registry starts empty: the
 * first vendor device type registered gets BP_DEVICE_DYNAMIC_FIRST.  The
 * plugins are built by tests/plugins/local.mk; each source says what it
 * is for.
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>

#include "loaderutil.h"

/* ------------------------------------------------------------------------ */
/* Vendor device types                                                      */
/* ------------------------------------------------------------------------ */

static void vendor_devices_coexist(void) {
  bp_plugin *va = must_load("vendor_a"), *vb = must_load("vendor_b");
  if (!va || !vb) return;
  /* A plugin's note from setup() is kept; none is "". */
  is_int(info_of(vb).status, BP_OK);
  is_str(info_of(vb).error, "vendor_b: npu_b is simulated in host memory");
  is_str(info_of(va).error, "");
  int32_t a = device_code("npu_a"), b = device_code("npu_b");
  cmp_ok(a, ">=", BP_DEVICE_DYNAMIC_FIRST);
  cmp_ok(b, ">=", BP_DEVICE_DYNAMIC_FIRST);
  cmp_ok(a, "!=", b);
  is_str(bp_device_type_name(a), "npu_a");
  is_str(bp_device_type_name(b), "npu_b");
  /* The plugins received the same codes from host->device_type. */
  const bp_op *code_a = must_find("vendor_a::device_code");
  const bp_op *code_b = must_find("vendor_b::device_code");
  is_int(vendor_device_code(code_a), a);
  is_int(vendor_device_code(code_b), b);
  int32_t n = 0;
  is_status(bp_device_count(a, &n), BP_OK);
  is_int(n, 1);

  const bp_op *off_a = must_find("vendor_a::offset"), *off_b = must_find("vendor_b::offset");
  float x[3] = {1, 2, 3};
  float plus1[3] = {2, 3, 4}, plus100[3] = {101, 102, 103}, plus200[3] = {201, 202, 203};
  bp_tensor *cpu = f32(x, 3);
  bp_tensor *ta = f32_on(bp_device_make(a, 0), x, 3), *tb = f32_on(bp_device_make(b, 0), x, 3);
  ok(ta && tb);
  if (!ta || !tb) return;
  is_int(bp_tensor_get_view(ta)->device.type, a);
  /* Each op dispatches on the device of its argument. */
  expect_values(off_a, cpu, BP_DEVICE_CPU, plus1, 3);
  expect_values(off_a, ta, a, plus100, 3);
  expect_values(off_b, cpu, BP_DEVICE_CPU, plus1, 3);
  expect_values(off_b, tb, b, plus200, 3);
  /* vendor_a has no kernel for vendor_b's device. */
  bp_tensor *r;
  is_status(call1(off_a, tb, &r), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "no kernel for npu_b:0");
  /* Copies across the two vendor devices go through host memory. */
  bp_tensor *tb2 = f32_on(bp_device_make(b, 0), plus1, 3);
  if (tb2) {
    is_status(bp_tensor_copy(tb2, ta), BP_OK);
    is_double(((const float *)bp_tensor_get_view(tb2)->data)[2], 3, 0);
    bp_tensor_release(tb2);
  }

  /* vendor_a goes; vendor_b keeps working. */
  bp_tensor_release(ta);
  is_status(bp_plugin_unload(va), BP_OK);
  expect_values(off_b, tb, b, plus200, 3);
  is_status(call1(off_a, cpu, &r), BP_ERR_NOT_FOUND);
  is_status(bp_tensor_empty(bp_device_make(a, 0), BP_FLOAT32, 1, (int64_t[]){3}, &r),
            BP_ERR_DEVICE);
  has_str(bp_last_error(), "npu_a");
  has_str(bp_last_error(), "not registered");
  is_status(bp_device_count(a, &n), BP_ERR_DEVICE);

  /* Back again: the same name gets the same code. */
  va = must_load("vendor_a");
  if (!va) return;
  is_int(device_code("npu_a"), a);
  is_int(vendor_device_code(code_a), a);
  ta = f32_on(bp_device_make(a, 0), x, 3);
  ok(ta != NULL);
  if (ta) expect_values(off_a, ta, a, plus100, 3);
  bp_tensor_release(ta);
  bp_tensor_release(tb);
  bp_tensor_release(cpu);
  is_status(bp_plugin_unload(vb), BP_OK);
  is_status(bp_plugin_unload(va), BP_OK);
  is_int(bp_live_tensor_count(), 0);
}

/* The stream and event functions forward to the device's interface, keep
 * the current stream per thread, refuse devices without streams, and keep
 * the plugin loaded while a handle is alive. */
static void *other_thread_stream(void *arg) {
  bp_stream *s = (bp_stream *)1;
  bp_status st = bp_stream_get_current(*(bp_device *)arg, &s);
  return (st == BP_OK && s == NULL) ? arg : NULL;
}

static void streams_and_events(void) {
  bp_plugin *p = must_load("good");
  if (!p) return;
  bp_device g0 = bp_device_make(device_code("gooddev"), 0);
  bp_device g1 = bp_device_make(g0.type, 1);
  is_status(bp_device_synchronize(g0), BP_OK);
  is_status(bp_device_synchronize(BP_CPU), BP_OK);

  bp_stream *s = NULL, *cur = (bp_stream *)1;
  is_status(bp_stream_get_current(g0, &cur), BP_OK);
  ok(cur == NULL); /* the default stream */
  is_status(bp_stream_create(g0, &s), BP_OK);
  ok(s != NULL);
  is_status(bp_stream_set_current(g0, s), BP_OK);
  is_status(bp_stream_get_current(g0, &cur), BP_OK);
  ok(cur == s);
  /* Current per device and per thread. */
  is_status(bp_stream_get_current(g1, &cur), BP_OK);
  ok(cur == NULL);
  pthread_t th;
  void *res = NULL;
  ok(pthread_create(&th, NULL, other_thread_stream, &g0) == 0 && pthread_join(th, &res) == 0);
  ok(res == &g0);
  /* The plugin's own check surfaces with its message. */
  is_status(bp_stream_set_current(g1, s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "made current on device 1");
  has_str(bp_last_error(), "gooddev");

  bp_event *e = NULL;
  is_status(bp_event_create(g0, &e), BP_OK);
  is_status(bp_stream_wait_event(g0, NULL, e), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "never recorded");
  is_status(bp_event_record(g0, e, s), BP_OK);
  is_status(bp_stream_wait_event(g0, NULL, e), BP_OK);
  is_status(bp_event_synchronize(g0, e), BP_OK);
  is_status(bp_stream_synchronize(g0, s), BP_OK);
  is_status(bp_stream_synchronize(g0, NULL), BP_OK);

  /* Alive handles keep the plugin. */
  is_status(bp_plugin_unload(p), BP_ERR_BUSY);
  has_str(bp_last_error(), "2 streams or events");
  has_str(bp_last_error(), "gooddev");
  is_status(bp_event_destroy(g0, e), BP_OK);
  is_status(bp_stream_destroy(g0, s), BP_OK);
  is_status(bp_stream_get_current(g0, &cur), BP_OK);
  ok(cur == NULL); /* destroying the current stream resets it */
  is_status(bp_stream_destroy(g0, NULL), BP_OK);
  is_status(bp_event_destroy(g0, NULL), BP_OK);

  /* Bad arguments and devices without streams. */
  is_status(bp_stream_create(g0, NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "bp_stream_create: out_stream is NULL");
  is_status(bp_event_record(g0, NULL, NULL), BP_ERR_INVALID_ARGUMENT);
  is_status(bp_stream_create(BP_CPU, &s), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "bp_stream_create: device type 'cpu' has no streams");
  is_status(bp_event_create(BP_CPU, &e), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "bp_event_create: device type 'cpu' has no events");
  is_status(bp_stream_create(bp_device_make(g0.type, 7), &s), BP_ERR_DEVICE);
  has_str(bp_last_error(), "device gooddev:7 does not exist");
  is_status(bp_device_synchronize(bp_device_make(BP_DEVICE_CUDA, 0)), BP_ERR_DEVICE);
  has_str(bp_last_error(), "bp_device_synchronize: cuda is not registered");

  is_status(bp_plugin_unload(p), BP_OK);
  is_status(bp_device_synchronize(g0), BP_ERR_DEVICE);
}

static void unload_busy_then_ok(void) {
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  int32_t npu = device_code("npu_a");
  const bp_op *off = must_find("vendor_a::offset");
  float x[4] = {1, 2, 3, 4}, plus100[4] = {101, 102, 103, 104};
  bp_tensor *t = f32_on(bp_device_make(npu, 0), x, 4);
  ok(t != NULL);
  if (!t) return;
  /* A view shares t's storage and counts as a tensor of its own. */
  bp_tensor *view = NULL;
  is_status(bp_tensor_as_strided(t, 1, (int64_t[]){2}, (int64_t[]){2}, 0, &view), BP_OK);

  is_status(bp_plugin_unload(va), BP_ERR_BUSY);
  has_str(bp_last_error(), "npu_a");
  has_str(bp_last_error(), "2 tensors");
  has_str(bp_last_error(), "vendor_a");
  /* Nothing changed. */
  is_int(info_of(va).state, BP_PLUGIN_LOADED);
  expect_values(off, t, npu, plus100, 4);
  is_int(device_code("npu_a"), npu);

  bp_tensor_release(t);
  is_status(bp_plugin_unload(va), BP_ERR_BUSY);
  has_str(bp_last_error(), "1 tensor is");
  has_str(bp_last_error(), "npu_a");
  /* The view's second element is t's third, and outlives t's handle. */
  is_double(((const float *)bp_tensor_get_view(view)->data)[2], 3, 0);

  bp_tensor_release(view);
  is_status(bp_plugin_unload(va), BP_OK);
  is_int(info_of(va).state, BP_PLUGIN_UNLOADED);
  is_int(bp_live_tensor_count(), 0);
}

static void unload_removes_registrations(void) {
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  const bp_op *off = must_find("vendor_a::offset"), *slow = must_find("vendor_a::slow");
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  is_status(bp_op_get_info(off, &oi), BP_OK);
  is_int(oi.defined, 1);
  is_int(oi.nkernels, 2);
  is_str(oi.owner, "vendor_a");

  is_status(bp_plugin_unload(va), BP_OK);
  float x[2] = {5, 6}, plus1[2] = {6, 7};
  bp_tensor *cpu = f32(x, 2), *r;
  is_status(call1(off, cpu, &r), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "vendor_a::offset");
  has_str(bp_last_error(), "not defined");
  is_status(call1(slow, cpu, &r), BP_ERR_NOT_FOUND);
  is_status(bp_op_get_info(off, &oi), BP_OK);
  is_int(oi.defined, 0);
  is_int(oi.nkernels, 0);
  ok(oi.schema == NULL);
  bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
  is_status(bp_op_get_kernel(off, 0, &ki), BP_ERR_NOT_FOUND);
  is_status(bp_set_kernel_enabled(off, BP_DEVICE_CPU, false), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "no kernel for cpu");
  /* Still findable by name: the same handle. */
  const bp_op *found = NULL;
  is_status(bp_op_find("vendor_a::offset", &found), BP_OK);
  ok(found == off);

  /* Reloading brings it all back under the old handles. */
  size_t nops = bp_op_count();
  va = must_load("vendor_a");
  if (!va) return;
  is_int(bp_op_count(), nops);
  is_status(bp_op_find("vendor_a::offset", &found), BP_OK);
  ok(found == off);
  expect_values(off, cpu, BP_DEVICE_CPU, plus1, 2);
  expect_values(slow, cpu, BP_DEVICE_CPU, plus1, 2);
  is_status(bp_op_get_info(off, &oi), BP_OK);
  is_int(oi.defined, 1);
  is_int(oi.nkernels, 2);
  bp_tensor_release(cpu);
  is_status(bp_plugin_unload(va), BP_OK);
}

static void fragments(void) {
  bp_plugin *va = must_load("vendor_a");
  bp_plugin *frag = must_load("frag");
  if (!va || !frag) return;
  const bp_op *triple = must_find("vendor_a::triple");
  float x[2] = {1, -4}, want[2] = {3, -12}, plus1[2] = {2, -3};
  bp_tensor *a = f32(x, 2), *r;
  expect_values(triple, a, BP_DEVICE_CPU, want, 2);
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  is_status(bp_op_get_info(triple, &oi), BP_OK);
  is_str(oi.owner, "frag");

  /* good does not accept fragments. */
  bp_plugin *good = must_load("good");
  is_status(bp_plugin_load(test_plugin("frag_good"), NULL), BP_ERR_UNSUPPORTED);
  has_str(bp_last_error(), "namespace 'good'");
  has_str(bp_last_error(), "does not accept fragments");
  const bp_op *gt;
  if (bp_op_find("good::triple", &gt) == BP_OK) {
    is_status(call1(gt, a, &r), BP_ERR_NOT_FOUND);
  }
  if (good) expect_good_add_works();

  /* The fragment unloads on its own; the namespace's owner stays. */
  is_status(bp_plugin_unload(frag), BP_OK);
  is_status(call1(triple, a, &r), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "vendor_a::triple");
  expect_values(must_find("vendor_a::offset"), a, BP_DEVICE_CPU, plus1, 2);
  bp_tensor_release(a);
}

/* ------------------------------------------------------------------------ */
/* Files that are not plugins, and unload errors                            */
/* ------------------------------------------------------------------------ */

static void bad_files(void) {
  bp_plugin *good = must_load("good");
  if (!good) return;
  char *dir = temp_dir();
  if (!dir) {
    ok(0);
    return;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/garbage.so", dir);
  FILE *f = fopen(path, "w");
  ok(f != NULL);
  if (f) {
    fputs("This is not an ELF file, whatever its name says.\n", f);
    for (int i = 0; i < 64; i++) fputc('a' + (rand() % 26), f);
    fclose(f);
  }
  is_status(bp_plugin_load(path, NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), "not an ELF file");
  has_str(bp_last_error(), canon(path));

  snprintf(path, sizeof path, "%s/does-not-exist.so", dir);
  is_status(bp_plugin_load(path, NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), "cannot open");
  has_str(bp_last_error(), path);
  bp_plugin *rec = record_for(path);
  ok(rec != NULL);
  if (rec) is_int(info_of(rec).state, BP_PLUGIN_FAILED);

  is_status(bp_plugin_load(NULL, NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "path is NULL");
  is_status(bp_plugin_load("", NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "path is empty");

  /* None of it touched the plugin that did load. */
  is_int(info_of(good).state, BP_PLUGIN_LOADED);
  expect_good_add_works();
  rm_tree(dir);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(vendor_devices_coexist),
      TAP_CASE(streams_and_events),
      TAP_CASE(unload_busy_then_ok),
      TAP_CASE(unload_removes_registrations),
      TAP_CASE(fragments),
      TAP_CASE(bad_files),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
