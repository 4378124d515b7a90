/*
 * tests/test-loader.c - loading, refusing and describing plugins, discovery,
 * static registration, and registrations after setup (test-unload.c has
 * device types, streams and unloading).
 *
 * Each case runs in a fresh process, so the registry starts empty: the
 * first vendor device type registered gets BP_DEVICE_DYNAMIC_FIRST, and a
 * plugin loaded in one case is unknown in the next.  The plugins are built
 * by tests/plugins/local.mk; each source says what it is for.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "loaderutil.h"

/* ------------------------------------------------------------------------ */
/* Versions and descriptors                                                 */
/* ------------------------------------------------------------------------ */

static void version_major_refused(void) {
  bp_plugin *sentinel = (bp_plugin *)&sentinel, *p = sentinel;
  size_t before = bp_plugin_count();
  is_status(bp_plugin_load(test_plugin("major_plus"), &p), BP_ERR_VERSION);
  char built[64], host[64];
  snprintf(built, sizeof built, "built for Backplane ABI %d.0", BP_ABI_VERSION_MAJOR + 1);
  snprintf(host, sizeof host, "implements ABI %d.%d", BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR);
  has_str(bp_last_error(), built);
  has_str(bp_last_error(), host);
  has_str(bp_last_error(), canon(test_plugin("major_plus")));
  ok(p == sentinel); /* out-parameters are written only on success */
  /* The attempt is recorded, with the version the plugin asked for. */
  is_int(bp_plugin_count(), before + 1);
  bp_plugin *rec = record_for(canon(test_plugin("major_plus")));
  ok(rec != NULL);
  if (rec) {
    bp_plugin_info info = info_of(rec);
    is_int(info.state, BP_PLUGIN_FAILED);
    is_int(info.status, BP_ERR_VERSION);
    is_int(info.abi_major, BP_ABI_VERSION_MAJOR + 1);
    has_str(info.error, built);
  }
}

static void older_minor_loads(void) {
  /* minor_old's descriptor ends at setup; its teardown field aborts if the
   * host reads it anyway. */
  bp_plugin *p = must_load("minor_old");
  if (!p) return;
  bp_plugin_info info = info_of(p);
  is_int(info.state, BP_PLUGIN_LOADED);
  is_str(info.name, "minor_old");
  is_str(info.version, "0.9.0");
  const bp_op *id = must_find("oldminor::id");
  float x[2] = {4, 5};
  bp_tensor *a = f32(x, 2), *r;
  is_status(call1(id, a, &r), BP_OK);
  ok(r == a); /* the kernel returns its input, retained */
  bp_tensor_release(r);
  is_status(bp_plugin_unload(p), BP_OK);
  is_int(info_of(p).state, BP_PLUGIN_UNLOADED);
  is_status(call1(id, a, &r), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "oldminor::id");
  bp_tensor_release(a);
  is_int(bp_live_tensor_count(), 0);
}

static void newer_minor_loads(void) {
  bp_plugin *p = must_load("minor_new");
  if (!p) return;
  bp_plugin_info info = info_of(p);
  is_int(info.state, BP_PLUGIN_LOADED);
  is_int(info.abi_major, BP_ABI_VERSION_MAJOR);
  is_int(info.abi_minor, BP_ABI_VERSION_MINOR + 1);
  is_str(info.version, "1.1.0");
  float x[3] = {1, 2, 3}, want[3] = {2, 3, 4};
  bp_tensor *a = f32(x, 3);
  expect_values(must_find("newminor::one"), a, BP_DEVICE_CPU, want, 3);
  bp_tensor_release(a);
  is_status(bp_plugin_unload(p), BP_OK);
}

static void missing_entry_symbol(void) {
  is_status(bp_plugin_load(test_plugin("no_entry"), NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), "does not export 'bp_plugin_init'");
  has_str(bp_last_error(), canon(test_plugin("no_entry")));
  bp_plugin *rec = record_for(canon(test_plugin("no_entry")));
  ok(rec != NULL);
  if (rec) {
    bp_plugin_info info = info_of(rec);
    is_int(info.state, BP_PLUGIN_FAILED);
    is_int(info.status, BP_ERR_LOAD);
    ok(info.name == NULL); /* it never described itself */
  }
}

static void init_refuses(void) {
  is_status(bp_plugin_load(test_plugin("init_fails"), NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), "needs a widget");
  has_str(bp_last_error(), "bp_plugin_init refused");
  has_str(bp_last_error(), canon(test_plugin("init_fails")));
}

static void small_descriptor(void) {
  is_status(bp_plugin_load(test_plugin("small_struct"), NULL), BP_ERR_VERSION);
  has_str(bp_last_error(), "struct_size is 8");
  has_str(bp_last_error(), canon(test_plugin("small_struct")));
}

/* ------------------------------------------------------------------------ */
/* Failing setup() and conflicting registrations                            */
/* ------------------------------------------------------------------------ */

/* A schema def() refuses fails the load with def()'s status, and the
 * message names the plugin, the schema and what is wrong where. */
static void bad_schema_fails_the_load(void) {
  is_status(bp_plugin_load(test_plugin("bad_schema"), NULL), BP_ERR_SCHEMA);
  const char *e = bp_last_error();
  has_str(e, "plugin 'bad_schema'");
  has_str(e, "scale(Tensor self, float factor=fast) -> Tensor");
  has_str(e, "column 33");
  has_str(e, "expected a float as the default of 'float factor' but got 'fast'");
  const bp_op *op = NULL;
  if (bp_op_find("bad_schema::scale", &op) == BP_OK) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    is_status(bp_op_get_info(op, &oi), BP_OK);
    is_int(oi.defined, 0);
  } else {
    has_str(bp_last_error(), "bad_schema::scale");
  }
  /* Nothing of it stays loaded: a second load fails the same way, not as
   * a plugin already loaded. */
  is_status(bp_plugin_load(test_plugin("bad_schema"), NULL), BP_ERR_SCHEMA);
  has_str(bp_last_error(), "but got 'fast'");
}

static void setup_failure_rolls_back(void) {
  is_status(bp_plugin_load(test_plugin("setup_fails"), NULL), BP_ERR_BACKEND);
  has_str(bp_last_error(), "the npu_a firmware did not answer");
  has_str(bp_last_error(), "setup failed");
  has_str(bp_last_error(), "setup_fails");

  /* The op may survive as a name, but not as something callable. */
  const bp_op *doomed = NULL;
  float x[2] = {1, 2};
  bp_tensor *a = f32(x, 2), *r;
  if (bp_op_find("vendor_a::doomed", &doomed) == BP_OK) {
    is_status(call1(doomed, a, &r), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "not defined");
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    is_status(bp_op_get_info(doomed, &oi), BP_OK);
    is_int(oi.defined, 0);
    is_int(oi.nkernels, 0);
  }

  /* Its device type was the first vendor type of this process, and is
   * gone: no count, no tensors. */
  int32_t code = BP_DEVICE_DYNAMIC_FIRST, count = -1;
  is_status(bp_device_count(code, &count), BP_ERR_DEVICE);
  has_str(bp_last_error(), "not registered");
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(bp_device_make(code, 0), BP_FLOAT32, 1, (int64_t[]){2}, &t),
            BP_ERR_DEVICE);
  ok(t == NULL);
  is_int(device_code("npu_a"), -1);

  /* The record says what happened. */
  bp_plugin *rec = record_for(canon(test_plugin("setup_fails")));
  ok(rec != NULL);
  if (rec) {
    bp_plugin_info info = info_of(rec);
    is_int(info.state, BP_PLUGIN_FAILED);
    is_int(info.status, BP_ERR_BACKEND);
    is_str(info.name, "setup_fails");
    has_str(info.error, "firmware did not answer");
  }

  /* vendor_a takes the namespace and the device type name it held. */
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  int32_t npu = device_code("npu_a");
  cmp_ok(npu, ">=", BP_DEVICE_DYNAMIC_FIRST);
  is_int(vendor_device_code(must_find("vendor_a::device_code")), npu);
  if (doomed) {
    is_status(call1(doomed, a, &r), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "not defined");
  }
  /* Its fallback went too: an op with no npu_a kernel finds none, instead
   * of reaching the rolled-back fallback. */
  bp_tensor *on_npu = f32_on(bp_device_make(npu, 0), x, 2);
  ok(on_npu != NULL);
  if (on_npu) {
    is_status(call1(must_find("vendor_a::slow"), on_npu, &r), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "no kernel for npu_a:0");
    bp_tensor_release(on_npu);
  }
  bp_tensor_release(a);
  is_status(bp_plugin_unload(va), BP_OK);
}

static void conflicting_impls(void) {
  is_status(bp_plugin_load(test_plugin("conflict"), NULL), BP_ERR_ALREADY_EXISTS);
  has_str(bp_last_error(), "conflict::op");
  has_str(bp_last_error(), "registered a kernel for it already");
  /* The first kernel went with the failed setup. */
  const bp_op *op;
  if (bp_op_find("conflict::op", &op) == BP_OK) {
    float x[1] = {1};
    bp_tensor *a = f32(x, 1), *r;
    is_status(call1(op, a, &r), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "not defined");
    bp_tensor_release(a);
  }
}

static void namespace_owned(void) {
  bp_plugin *good = must_load("good");
  if (!good) return;
  is_status(bp_plugin_load(test_plugin("conflict_ns"), NULL), BP_ERR_ALREADY_EXISTS);
  has_str(bp_last_error(), "namespace 'good' is already defined by plugin 'good'");
  has_str(bp_last_error(), "open it with kind BP_LIBRARY_IMPL");
  has_str(bp_last_error(), "conflict_ns");
  expect_good_add_works();
  is_int(info_of(good).state, BP_PLUGIN_LOADED);
}

static void impl_without_def(void) {
  is_status(bp_plugin_load(test_plugin("impl_nodef"), NULL), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "ghost::op");
  has_str(bp_last_error(), "not defined");
  has_str(bp_last_error(), "impl_nodef");
}

/* A kernel for a device type that no plugin registered is refused, with
 * the code in the message (it was accepted and never reachable). */
static void impl_without_device(void) {
  is_status(bp_plugin_load(test_plugin("impl_nodev"), NULL), BP_ERR_DEVICE);
  has_str(bp_last_error(), "setup failed: impl 'nodev::op': device type 300 is not "
                           "registered");
  has_str(bp_last_error(), "host->device_type()");
}

/* ------------------------------------------------------------------------ */
/* Records and discovery                                                    */
/* ------------------------------------------------------------------------ */

static void same_path_twice_is_noop(void) {
  bp_plugin *p1 = must_load("good");
  if (!p1) return;
  char good_path[PATH_MAX];
  snprintf(good_path, sizeof good_path, "%s", canon(test_plugin("good")));
  size_t count = bp_plugin_count(), nops = bp_op_count();
  bp_plugin *p2 = NULL, *p3 = NULL, *p4 = NULL;
  is_status(bp_plugin_load(test_plugin("good"), &p2), BP_OK);
  ok(p2 == p1);

  /* Another spelling of the same file: through "..". */
  char dotted[PATH_MAX];
  snprintf(dotted, sizeof dotted, "%s/tests/plugins/.libs/../.libs/good.so",
           getenv("top_builddir") ? getenv("top_builddir") : ".");
  is_status(bp_plugin_load(dotted, &p3), BP_OK);
  ok(p3 == p1);

  /* Through a symbolic link, and through a path relative to the current
   * directory. */
  char *dir = temp_dir();
  if (dir) {
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/alias.so", dir);
    ok(symlink(good_path, link) == 0);
    is_status(bp_plugin_load(link, &p4), BP_OK);
    ok(p4 == p1);
    ok(chdir(dir) == 0);
    bp_plugin *p5 = NULL;
    is_status(bp_plugin_load("./alias.so", &p5), BP_OK);
    ok(p5 == p1);
    rm_tree(dir);
  }
  is_int(bp_plugin_count(), count);
  is_int(bp_op_count(), nops);
  is_str(info_of(p1).path, good_path);
  expect_good_add_works();
}

static void failure_recorded_in_info(void) {
  const char *path = canon(test_plugin("init_fails"));
  size_t before = bp_plugin_count();
  is_status(bp_plugin_load(test_plugin("init_fails"), NULL), BP_ERR_LOAD);
  is_int(bp_plugin_count(), before + 1);
  bp_plugin *rec = bp_plugin_at(before);
  ok(rec != NULL);
  if (!rec) return;
  bp_plugin_info info = info_of(rec);
  is_str(info.path, path);
  is_int(info.state, BP_PLUGIN_FAILED);
  is_int(info.status, BP_ERR_LOAD);
  is_int(info.origin, BP_ORIGIN_EXPLICIT);
  has_str(info.error, "needs a widget");
  ok(bp_plugin_at(before + 1) == NULL);

  /* A retry updates the same record instead of adding one. */
  is_status(bp_plugin_load(path, NULL), BP_ERR_LOAD);
  is_int(bp_plugin_count(), before + 1);
  has_str(info_of(rec).error, "needs a widget");

  /* The host fills only what the caller's struct_size covers. */
  bp_plugin_info small;
  memset(&small, 0xab, sizeof small);
  small.struct_size = BP_STRUCT_SIZE(bp_plugin_info, path);
  is_status(bp_plugin_get_info(rec, &small), BP_OK);
  is_str(small.path, path);
  is_int(small.struct_size, BP_STRUCT_SIZE(bp_plugin_info, path));
  ok(small.name == (const char *)(uintptr_t)0xababababababababull);

  /* Bad arguments are refused with a message. */
  is_status(bp_plugin_get_info(NULL, &small), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "plugin is NULL");
  small.struct_size = 4;
  is_status(bp_plugin_get_info(rec, &small), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "struct_size is 4");
}

/* Whether the installed plugin directory holds any candidate, which
 * discovery would load too. */
static bool installed_dir_has_plugins(void) {
  DIR *d = opendir(bp_plugin_dir());
  if (!d) return false;
  bool any = false;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) any = true;
  }
  closedir(d);
  return any;
}

static void discovery_env(void) {
  char *dir = temp_dir();
  if (!dir) {
    ok(0);
    return;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/good.so", dir);
  ok(symlink(canon(test_plugin("good")), path) == 0);
  snprintf(path, sizeof path, "%s/init_fails.so", dir);
  ok(symlink(canon(test_plugin("init_fails")), path) == 0);
  /* Not a candidate: the name does not end in ".so". */
  snprintf(path, sizeof path, "%s/vendor_a.so.disabled", dir);
  ok(symlink(canon(test_plugin("vendor_a")), path) == 0);

  char env[PATH_MAX + 64];
  snprintf(env, sizeof env, "/nonexistent/bp-plugins::%s", dir);
  ok(setenv("BP_PLUGIN_PATH", env, 1) == 0);
  size_t loaded = 12345;
  is_status(bp_plugin_discover(&loaded), BP_OK);
  if (installed_dir_has_plugins())
    tap_diag("%s holds plugins; not checking the count", bp_plugin_dir());
  else
    is_int(loaded, 1);

  bp_plugin *good = record_for(canon(test_plugin("good")));
  bp_plugin *bad = record_for(canon(test_plugin("init_fails")));
  ok(good != NULL);
  ok(bad != NULL);
  ok(record_for(canon(test_plugin("vendor_a"))) == NULL);
  if (good) {
    bp_plugin_info info = info_of(good);
    is_int(info.state, BP_PLUGIN_LOADED);
    is_int(info.origin, BP_ORIGIN_ENV);
    is_str(info.name, "good");
  }
  if (bad) {
    bp_plugin_info info = info_of(bad);
    is_int(info.state, BP_PLUGIN_FAILED);
    is_int(info.origin, BP_ORIGIN_ENV);
    is_int(info.status, BP_ERR_LOAD);
    has_str(info.error, "needs a widget");
  }
  expect_good_add_works();

  /* Again: nothing new to load, and nothing recorded twice. */
  size_t count = bp_plugin_count();
  loaded = 12345;
  is_status(bp_plugin_discover(&loaded), BP_OK);
  is_int(loaded, 0);
  is_int(bp_plugin_count(), count);
  is_status(bp_plugin_discover(NULL), BP_OK);
  rm_tree(dir);
}

/* ------------------------------------------------------------------------ */
/* A plugin linked into the test program                                    */
/* ------------------------------------------------------------------------ */

static const bp_host_api *inproc_host;
static bp_plugin *inproc_handle;
static bp_status inproc_unload_status = BP_OK;
static char inproc_unload_error[256];

/* inproc::negate(Tensor a) -> Tensor, float32. */
static bp_status negate_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_host_api *h = ctx->host;
  const bp_tensor_view *v = h->tensor_view(args[0].u.tensor);
  bp_tensor *out;
  bp_status st = h->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, &out);
  if (st) return st;
  for (int64_t i = 0; i < v->numel; i++)
    ((float *)h->tensor_view(out)->data)[i] = -((const float *)v->data)[i];
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = out;
  return BP_OK;
}

/* inproc::unload_me(Tensor a) -> Tensor: tries to unload its own plugin
 * from inside the call, records the outcome, and returns a. */
static bp_status unload_me_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  inproc_unload_status = bp_plugin_unload(inproc_handle);
  snprintf(inproc_unload_error, sizeof inproc_unload_error, "%s", bp_last_error());
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = ctx->host->tensor_retain(args[0].u.tensor);
  return BP_OK;
}

static bp_status inproc_setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "inproc", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  static const struct {
    const char *schema, *op;
    bp_boxed_kernel kernel;
  } ops[] = {
      {"negate(Tensor a) -> Tensor", "negate", negate_kernel},
      {"unload_me(Tensor a) -> Tensor", "unload_me", unload_me_kernel},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = ops[i].schema;
    if ((st = host->def(lib, &d))) return st;
    bp_kernel_def k = {0};
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = ops[i].op;
    k.device_type = BP_DEVICE_CPU;
    k.boxed = ops[i].kernel;
    if ((st = host->impl(lib, &k))) return st;
  }
  return BP_OK;
}

static const bp_plugin_desc inproc_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "inproc",
    .vendor = "Backplane tests",
    .version = "0.0.1",
    .setup = inproc_setup,
};

static const bp_plugin_desc *inproc_init(const bp_host_api *host) {
  inproc_host = host;
  return &inproc_desc;
}

static void static_register(void) {
  bp_plugin *p = NULL, *again = NULL;
  is_status(bp_plugin_register(inproc_init, "the test program", &p), BP_OK);
  ok(p != NULL);
  if (!p) return;
  ok(inproc_host != NULL);
  bp_plugin_info info = info_of(p);
  is_str(info.path, "(static)");
  is_str(info.name, "inproc");
  is_int(info.origin, BP_ORIGIN_STATIC);
  is_int(info.state, BP_PLUGIN_LOADED);

  const bp_op *neg = must_find("inproc::negate");
  float x[3] = {1, -2, 3}, want[3] = {-1, 2, -3};
  bp_tensor *a = f32(x, 3);
  expect_values(neg, a, BP_DEVICE_CPU, want, 3);

  /* The same init again is the same plugin. */
  size_t count = bp_plugin_count();
  is_status(bp_plugin_register(inproc_init, "the test program", &again), BP_OK);
  ok(again == p);
  is_int(bp_plugin_count(), count);

  /* It unloads and comes back like any other. */
  is_status(bp_plugin_unload(p), BP_OK);
  bp_tensor *r;
  is_status(call1(neg, a, &r), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "inproc::negate");
  is_status(bp_plugin_register(inproc_init, "the test program", &again), BP_OK);
  ok(again == p);
  expect_values(neg, a, BP_DEVICE_CPU, want, 3);

  is_status(bp_plugin_register(NULL, "nothing", NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "init is NULL");
  bp_tensor_release(a);
}

/* A plugin that keeps its registrar and library past setup(), as a plugin
 * registering lazily would: using them later must fail with the
 * documented BP_ERR_INVALID_ARGUMENT, not touch freed memory. */
static const bp_host_api *late_host;
static bp_registrar *late_reg;
static bp_library *late_lib;

static bp_status late_stale_status = BP_OK;
static char late_stale_msg[512];

static bp_status late_setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "late", BP_LIBRARY_DEF, 0};
  if (late_lib) {
    /* A library kept from an earlier load, used in this setup(). */
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = "stale(Tensor a) -> Tensor";
    late_stale_status = host->def(late_lib, &d);
    snprintf(late_stale_msg, sizeof late_stale_msg, "%s", host->last_error());
  }
  late_reg = reg;
  return host->library(reg, &ld, &late_lib);
}

static const bp_plugin_desc late_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "late",
    .setup = late_setup,
};

static const bp_plugin_desc *late_init(const bp_host_api *host) {
  late_host = host;
  return &late_desc;
}

/* Tries every registration slot with the kept handles. */
static void late_registrations_fail(void) {
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "later(Tensor a) -> Tensor";
  is_status(late_host->def(late_lib, &d), BP_ERR_INVALID_ARGUMENT);
  has_str(late_host->last_error(), "plugin 'late': def called outside setup()");
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "later";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = (bp_boxed_kernel)1;
  is_status(late_host->impl(late_lib, &k), BP_ERR_INVALID_ARGUMENT);
  has_str(late_host->last_error(), "plugin 'late': impl called outside setup()");
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "late2", BP_LIBRARY_DEF, 0};
  bp_library *lib2 = NULL;
  is_status(late_host->library(late_reg, &ld, &lib2), BP_ERR_INVALID_ARGUMENT);
  has_str(late_host->last_error(), "plugin 'late': library called outside setup()");
  ok(lib2 == NULL);
  const bp_op *op;
  is_status(bp_op_find("late::later", &op), BP_ERR_NOT_FOUND);
}

static void registration_handles_after_setup(void) {
  bp_plugin *p = NULL;
  is_status(bp_plugin_register(late_init, "late", &p), BP_OK);
  if (!p) return;
  bp_library *first = late_lib;
  late_registrations_fail();
  /* After an unload, and after a new setup() that made new handles, the
   * old library still fails cleanly. */
  is_status(bp_plugin_unload(p), BP_OK);
  late_registrations_fail();
  is_status(bp_plugin_register(late_init, "late", &p), BP_OK);
  is_status(late_stale_status, BP_ERR_INVALID_ARGUMENT);
  has_str(late_stale_msg, "plugin 'late': def called with a library from an earlier setup()");
  is_status(bp_op_find("late::stale", &(const bp_op *){NULL}), BP_ERR_NOT_FOUND);
  late_lib = first;
  late_registrations_fail();
}

/* ------------------------------------------------------------------------ */
/* Unload errors (with the in-process plugin above)                         */
/* ------------------------------------------------------------------------ */

static void unload_errors(void) {
  is_status(bp_plugin_unload(NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "plugin is NULL");

  /* Unloading twice. */
  bp_plugin *va = must_load("vendor_a");
  if (va) {
    is_status(bp_plugin_unload(va), BP_OK);
    is_status(bp_plugin_unload(va), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "is not loaded");
  }

  /* A plugin that never loaded. */
  size_t before = bp_plugin_count();
  is_status(bp_plugin_load(test_plugin("init_fails"), NULL), BP_ERR_LOAD);
  bp_plugin *failed = bp_plugin_at(before);
  ok(failed != NULL);
  if (failed) {
    is_status(bp_plugin_unload(failed), BP_ERR_NOT_FOUND);
    has_str(bp_last_error(), "is not loaded");
    has_str(bp_last_error(), "init_fails");
  }

  /* The host's own registrations, if the listing shows them. */
  bool host_listed = false;
  for (size_t i = 0; i < bp_plugin_count(); i++) {
    bp_plugin *p = bp_plugin_at(i);
    if (strcmp(info_of(p).path, "(host)") == 0) {
      host_listed = true;
      is_status(bp_plugin_unload(p), BP_ERR_INVALID_ARGUMENT);
      has_str(bp_last_error(), "cannot be unloaded");
    }
  }
  if (!host_listed) tap_diag("the host's pseudo-plugin is not listed; not unloading it");

  /* From inside a call into the plugin itself. */
  is_status(bp_plugin_register(inproc_init, "the test program", &inproc_handle), BP_OK);
  if (!inproc_handle) return;
  float x[1] = {7};
  bp_tensor *a = f32(x, 1), *r;
  inproc_unload_status = BP_OK;
  is_status(call1(must_find("inproc::unload_me"), a, &r), BP_OK);
  ok(r == a);
  bp_tensor_release(r);
  is_status(inproc_unload_status, BP_ERR_BUSY);
  has_str(inproc_unload_error, "inside a call");
  is_int(info_of(inproc_handle).state, BP_PLUGIN_LOADED);
  is_status(bp_plugin_unload(inproc_handle), BP_OK);
  bp_tensor_release(a);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(version_major_refused),
      TAP_CASE(older_minor_loads),
      TAP_CASE(newer_minor_loads),
      TAP_CASE(missing_entry_symbol),
      TAP_CASE(init_refuses),
      TAP_CASE(small_descriptor),
      TAP_CASE(setup_failure_rolls_back),
      TAP_CASE(bad_schema_fails_the_load),
      TAP_CASE(conflicting_impls),
      TAP_CASE(namespace_owned),
      TAP_CASE(impl_without_def),
      TAP_CASE(impl_without_device),
      TAP_CASE(same_path_twice_is_noop),
      TAP_CASE(failure_recorded_in_info),
      TAP_CASE(discovery_env),
      TAP_CASE(static_register),
      TAP_CASE(registration_handles_after_setup),
      TAP_CASE(unload_errors),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
