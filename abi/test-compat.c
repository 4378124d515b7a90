/*
 * abi/test-compat.c - plugins and hosts of different minor versions work
 * together.
 *
 *   - compat_1_0, built against the frozen ABI 1.0 headers in abi/sdk-1.0/,
 *     loads into today's host, and its unboxed and boxed kernels and meta
 *     function work.
 *   - compat_next, posing as a plugin of the next minor (a larger
 *     descriptor, abi_minor + 1), loads into today's host, which is older
 *     than it; the plugin sees that the slot appended in its version is
 *     missing and does without it.
 *   - compat_1_1, built against the frozen ABI 1.1 headers in abi/sdk-1.1/,
 *     uses 1.1 slots after BP_HOST_HAS(): it loads into today's host and
 *     uses them, and loads into a host that reports ABI 1.0 (simulated:
 *     its table handed over with 1.0's struct_size and minor) and does
 *     without them.
 *   - compat_1_2, built against the frozen ABI 1.2 headers in abi/sdk-1.2/,
 *     defines an op with a Scalar argument (1.2) when the host's minor
 *     allows: in today's host it is called with an int, a float and a
 *     bool, and described as Scalar; in a host that reports ABI 1.1 it
 *     leaves that op out.
 *   - The same plugin's bp_plugin_init, given hand-made host tables, tells
 *     a table that has the appended slot from one whose struct_size stops
 *     before it or whose slot is NULL, and refuses a table too small for a
 *     slot it needs, with a message.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "../tests/tap.h"

static const char *compat_plugin(const char *name) {
  static char buf[2][4096];
  static int next;
  char *b = buf[next++ % 2];
  const char *top = getenv("top_builddir");
  snprintf(b, sizeof buf[0], "%s/abi/.libs/%s.so", top ? top : ".", name);
  return b;
}

static bp_tensor *vec(const float *x, int64_t n) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t) != BP_OK) return NULL;
  memcpy(bp_tensor_get_view(t)->data, x, (size_t)n * sizeof *x);
  return t;
}

/* Calls ns::op on t (and s, when has_s) and checks the float32 result. */
static void check_call(const char *name, bp_tensor *t, int has_s, double s, const float *want, int64_t n) {
  const bp_op *op = NULL;
  is_status(bp_op_find(name, &op), BP_OK);
  if (!op) return;
  bp_value slots[4];
  bp_stack st = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&st, t);
  if (has_s) bp_stack_push_float(&st, s);
  is_status(bp_call(op, &st), BP_OK);
  if (st.top != 1) return;
  const bp_tensor_view *v = bp_tensor_get_view(slots[0].u.tensor);
  is_int(v->numel, n);
  for (int64_t i = 0; i < n && i < v->numel; i++) is_double(((const float *)v->data)[i], want[i], 0);
  bp_stack_release(&st);
}

static int64_t call_features(const char *name) {
  const bp_op *op = NULL;
  bp_value slots[1];
  bp_stack st = BP_STACK_INIT(slots, 1);
  if (bp_op_find(name, &op) != BP_OK || bp_call(op, &st) != BP_OK) {
    tap_diag("%s: %s", name, bp_last_error());
    return -1;
  }
  return slots[0].u.i;
}

static void old_plugin_in_todays_host(void) {
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(compat_plugin("compat_1_0"), &p), BP_OK);
  if (!p) return;
  bp_plugin_info info;
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  is_status(bp_plugin_get_info(p, &info), BP_OK);
  is_int(info.abi_major, 1);
  is_int(info.abi_minor, 0);
  is_int(info.state, BP_PLUGIN_LOADED);
  const float x[3] = {1, 2, 3}, twice[3] = {2, 4, 6}, minus[3] = {-1, -2, -3};
  bp_tensor *t = vec(x, 3);
  check_call("compat10::scale", t, 1, 2.0, twice, 3);
  check_call("compat10::neg", t, 0, 0, minus, 3);

  /* The kernels' kinds are as registered: unboxed and boxed. */
  const bp_op *op = NULL;
  bp_kernel_info k;
  k.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  is_status(bp_op_find("compat10::scale", &op), BP_OK);
  is_status(bp_op_get_kernel(op, 0, &k), BP_OK);
  ok(k.kind == BP_KERNEL_UNBOXED || k.kind == BP_KERNEL_UNBOXED_FAST);

  /* Its meta function agrees. */
  bp_value slots[2];
  bp_stack st = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&st, t);
  bp_stack_push_float(&st, 2.0);
  bp_tensor_meta m;
  memset(&m, 0, sizeof m);
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  is_status(bp_op_meta(op, &st, &m, 1), BP_OK);
  is_int(m.dtype, BP_FLOAT32);
  is_int(m.ndim, 1);
  is_int(m.sizes[0], 3);
  is_int(call_features("compat10::features"), 0);
  bp_tensor_release(t);
  is_status(bp_plugin_unload(p), BP_OK);
}

static void newer_plugin_in_older_host(void) {
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(compat_plugin("compat_next"), &p), BP_OK);
  if (!p) return;
  bp_plugin_info info;
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  is_status(bp_plugin_get_info(p, &info), BP_OK);
  is_int(info.abi_major, BP_ABI_VERSION_MAJOR);
  is_int(info.abi_minor, BP_ABI_VERSION_MINOR + 1);
  is_str(info.version, "1.1.0");
  /* Today's table ends before the next minor's slot: the plugin noticed. */
  is_int(call_features("compatnext::features"), 0);
  const float x[2] = {1.5f, -2}, half[2] = {0.75f, -1}, minus[2] = {-1.5f, 2};
  bp_tensor *t = vec(x, 2);
  check_call("compatnext::scale", t, 1, 0.5, half, 2);
  check_call("compatnext::neg", t, 0, 0, minus, 2);
  bp_tensor_release(t);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* The next minor's host table and descriptor, as compat-plugin.c declares
 * them. */
typedef struct next_host_api {
  bp_host_api base;
  bp_status (*next_slot)(int64_t *out_value);
} next_host_api;
typedef struct next_desc {
  bp_plugin_desc base;
  uint64_t next_flags;
  int64_t saw_next_slot;
} next_desc;

static char last_message[256];
static bp_status fake_set_error(bp_status status, const char *message) {
  snprintf(last_message, sizeof last_message, "%s", message ? message : "");
  return status;
}
static bp_status fake_op_meta(const bp_op *op, const bp_value *args, size_t nargs, bp_tensor_meta *outs,
                              size_t nouts) {
  (void)op, (void)args, (void)nargs, (void)outs, (void)nouts;
  return BP_ERR_UNSUPPORTED;
}
static bp_status fake_next_slot(int64_t *out_value) {
  *out_value = 42;
  return BP_OK;
}

/* Calls the plugin's entry point directly with a table of struct_size
 * `size`; returns the descriptor. */
static const next_desc *init_with(void *handle, size_t size, int with_slot) {
  next_host_api table;
  memset(&table, 0, sizeof table);
  table.base.struct_size = size;
  table.base.abi_major = BP_ABI_VERSION_MAJOR;
  table.base.abi_minor = BP_ABI_VERSION_MINOR + (size > BP_HOST_API_STRUCT_SIZE);
  table.base.set_error = fake_set_error;
  table.base.op_meta = fake_op_meta;
  table.next_slot = with_slot ? fake_next_slot : NULL;
  last_message[0] = '\0';
  bp_plugin_init_fn init = (bp_plugin_init_fn)(void (*)(void))dlsym(handle, BP_PLUGIN_ENTRY_SYMBOL);
  if (!init) return NULL;
  return (const next_desc *)(const void *)init(&table.base);
}

static void struct_size_rules_in_init(void) {
  void *h = dlopen(compat_plugin("compat_next"), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    tap_diag("dlopen: %s", dlerror());
    ok(0);
    return;
  }
  const next_desc *d = init_with(h, sizeof(next_host_api), 1);
  ok(d != NULL);
  if (d) {
    is_int(d->base.struct_size, sizeof(next_desc));
    is_int(d->saw_next_slot, 1); /* a next-minor host with the slot */
  }
  d = init_with(h, sizeof(next_host_api), 0);
  ok(d && d->saw_next_slot == 0); /* the slot is there but NULL */
  d = init_with(h, BP_HOST_API_STRUCT_SIZE, 1);
  ok(d && d->saw_next_slot == 0); /* a 1.0 table: struct_size stops before it */
  d = init_with(h, offsetof(bp_host_api, op_meta), 1);
  ok(d == NULL); /* too small for a slot the plugin needs */
  is_str(last_message, "compat_next: the host table has no 'op_meta' slot");
  dlclose(h);
}

static const char *note_of(bp_plugin *p) {
  static bp_plugin_info info;
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(p, &info) != BP_OK) return "";
  return info.error ? info.error : "";
}

/* compat11::twice(a) on [1.5, -2]: expects [3, -4]. */
static void check_twice(void) {
  const float x[2] = {1.5f, -2}, want[2] = {3, -4};
  bp_tensor *t = vec(x, 2);
  check_call("compat11::twice", t, 0, 0, want, 2);
  bp_tensor_release(t);
}

static void plugin_1_1_in_todays_host(void) {
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(compat_plugin("compat_1_1"), &p), BP_OK);
  if (!p) return;
  is_str(note_of(p), "1.1 host: core::add argument 2 is 'alpha' (float, default 1); float32");
  check_twice();
  /* Its kernel's 1.1 fields were read. */
  const bp_op *op = NULL;
  bp_kernel_info k;
  k.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  if (bp_op_find("compat11::twice", &op) == BP_OK && bp_op_get_kernel(op, 0, &k) == BP_OK) {
    is_int(k.priority, 5);
    ok(k.dtypes && k.dtypes[0] == BP_FLOAT32);
  } else {
    ok(0);
  }
  is_status(bp_plugin_unload(p), BP_OK);
}

/* A host that reports ABI 1.0: the real table, cut to 1.0's size. */
static bp_host_api table_1_0;
static void *compat_1_1_handle;

static const bp_plugin_desc *init_as_1_0_host(const bp_host_api *host) {
  table_1_0 = *host;
  table_1_0.struct_size = BP_STRUCT_SIZE(bp_host_api, core_op_set_version);
  table_1_0.abi_minor = 0;
  bp_plugin_init_fn init =
      (bp_plugin_init_fn)(void (*)(void))dlsym(compat_1_1_handle, BP_PLUGIN_ENTRY_SYMBOL);
  return init ? init(&table_1_0) : NULL;
}

static void plugin_1_1_in_a_1_0_host(void) {
  compat_1_1_handle = dlopen(compat_plugin("compat_1_1"), RTLD_NOW | RTLD_LOCAL);
  if (!compat_1_1_handle) {
    tap_diag("dlopen: %s", dlerror());
    ok(0);
    return;
  }
  bp_plugin *p = NULL;
  is_status(bp_plugin_register(init_as_1_0_host, "compat_1_1 in a 1.0 host", &p), BP_OK);
  if (p) {
    is_str(note_of(p), "1.0 host");
    check_twice();
  }
}

/* compat12::scale(a, s) on [1.5, -2] with a Scalar pushed as value v. */
static void check_scale(bp_value v, float factor) {
  const float x[2] = {1.5f, -2};
  float want[2] = {1.5f * factor, -2 * factor};
  bp_tensor *t = vec(x, 2);
  const bp_op *op = NULL;
  is_status(bp_op_find("compat12::scale", &op), BP_OK);
  bp_value slots[2];
  bp_stack st = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&st, t);
  slots[st.top++] = v;
  is_status(op ? bp_call(op, &st) : BP_ERR_NOT_FOUND, BP_OK);
  if (st.top == 1 && slots[0].tag == BP_TAG_TENSOR) {
    const bp_tensor_view *r = bp_tensor_get_view(slots[0].u.tensor);
    for (int64_t i = 0; i < 2 && i < r->numel; i++) is_double(((const float *)r->data)[i], want[i], 0);
    bp_stack_release(&st);
  }
  bp_tensor_release(t);
}

static void plugin_1_2_in_todays_host(void) {
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(compat_plugin("compat_1_2"), &p), BP_OK);
  if (!p) return;
  is_str(note_of(p), "1.2 host");
  check_scale((bp_value){.tag = BP_TAG_INT, .u.i = 3}, 3);
  check_scale((bp_value){.tag = BP_TAG_FLOAT, .u.f = 0.5}, 0.5f);
  check_scale((bp_value){.tag = BP_TAG_BOOL, .u.b = true}, 1);
  /* A string is no Scalar, and neither is the descriptive tag itself. */
  const bp_op *op = NULL;
  is_status(bp_op_find("compat12::scale", &op), BP_OK);
  bp_tensor *t = vec((const float[]){1}, 1);
  bp_value slots[2];
  bp_stack st = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&st, t);
  bp_stack_push_str(&st, "2");
  is_status(bp_call(op, &st), BP_ERR_TYPE);
  has_str(bp_last_error(), "argument #1 's': expected Scalar, got str");
  st.top = 1;
  slots[st.top++] = (bp_value){.tag = BP_TAG_SCALAR, .u.i = 2};
  is_status(bp_call(op, &st), BP_ERR_TYPE);
  has_str(bp_last_error(), "only describes argument types");
  bp_tensor_release(t);
  /* Described as Scalar; not a core op. */
  bp_arg_info a;
  memset(&a, 0, sizeof a);
  a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
  is_status(bp_op_get_arg(op, 1, &a), BP_OK);
  is_int(a.tag, BP_TAG_SCALAR);
  is_str(a.type, "Scalar");
  bp_op_info oi;
  memset(&oi, 0, sizeof oi);
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  is_status(bp_op_get_info(op, &oi), BP_OK);
  is_int(oi.op_set_version, 0);
  is_status(bp_op_find("core::add", &op), BP_OK);
  is_status(bp_op_get_info(op, &oi), BP_OK);
  is_int(oi.op_set_version, 1);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* A host that reports ABI 1.1: the real table, with 1.1's minor. */
static bp_host_api table_1_1;
static void *compat_1_2_handle;

static const bp_plugin_desc *init_as_1_1_host(const bp_host_api *host) {
  table_1_1 = *host;
  table_1_1.abi_minor = 1;
  bp_plugin_init_fn init =
      (bp_plugin_init_fn)(void (*)(void))dlsym(compat_1_2_handle, BP_PLUGIN_ENTRY_SYMBOL);
  return init ? init(&table_1_1) : NULL;
}

static void plugin_1_2_in_a_1_1_host(void) {
  compat_1_2_handle = dlopen(compat_plugin("compat_1_2"), RTLD_NOW | RTLD_LOCAL);
  if (!compat_1_2_handle) {
    tap_diag("dlopen: %s", dlerror());
    ok(0);
    return;
  }
  bp_plugin *p = NULL;
  is_status(bp_plugin_register(init_as_1_1_host, "compat_1_2 in a 1.1 host", &p), BP_OK);
  if (!p) return;
  is_str(note_of(p), "1.1 host");
  const bp_op *op = NULL;
  is_status(bp_op_find("compat12::ones", &op), BP_OK);
  /* Never defined here (an earlier case's definition went with its
   * unload). */
  bp_op_info oi;
  memset(&oi, 0, sizeof oi);
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  ok(bp_op_find("compat12::scale", &op) != BP_OK ||
     (bp_op_get_info(op, &oi) == BP_OK && !oi.defined));
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(old_plugin_in_todays_host),
      TAP_CASE(newer_plugin_in_older_host),
      TAP_CASE(plugin_1_1_in_todays_host),
      TAP_CASE(plugin_1_1_in_a_1_0_host),
      TAP_CASE(plugin_1_2_in_todays_host),
      TAP_CASE(plugin_1_2_in_a_1_1_host),
      TAP_CASE(struct_size_rules_in_init),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
