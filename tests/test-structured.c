/*
 * Structured kernels (BP_KERNEL_DEF_STRUCTURED, ABI 1.2): the host runs
 * the meta function, allocates the results and hands them to the kernel,
 * which only fills them; it releases them when the kernel fails or
 * tampers with them; it refuses the flag where it cannot apply; a plugin
 * of ABI 1.1 keeps its old flags ignored; bp_aux_impl_structured picks
 * the self-allocating kernel on an older host; the reference CPU plugin's
 * kernels are structured.
 */
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>
#include <backplane/plugin_aux.h>

#include "testutil.h"

static const bp_host_api *host;

/* What the last kernel call saw of its results. */
static struct {
  int calls;
  int32_t ndim, dtype;
  int64_t size0;
  bool contiguous;
} seen;

static bp_status same_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  const bp_tensor_view *v = host->tensor_view(args[0].u.tensor);
  if (v->dtype != BP_FLOAT32)
    return host->set_errorf(BP_ERR_TYPE, "%s: argument #0 'x': expected float32, got %s",
                            ctx->op_name, bp_dtype_name(v->dtype));
  for (size_t j = 0; j < nouts; j++) {
    outs[j].device = v->device;
    outs[j].dtype = BP_FLOAT32;
    outs[j].ndim = v->ndim;
    int64_t s = 1;
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      outs[j].sizes[d] = v->sizes[d];
      outs[j].strides[d] = s;
      s *= v->sizes[d];
    }
  }
  return BP_OK;
}

/* out[i] = x[i] * scale + shift over a contiguous 1-D x. */
static void affine(const bp_tensor *x, bp_tensor *out, float scale, float shift) {
  const bp_tensor_view *vx = host->tensor_view(x), *vo = host->tensor_view(out);
  const float *a = vx->data;
  float *o = vo->data;
  for (int64_t i = 0; i < vx->sizes[0]; i++) o[i] = a[i] * scale + shift;
}

static void note(const bp_value *rets) {
  const bp_tensor_view *v = host->tensor_view(rets[0].u.tensor);
  seen.calls++;
  seen.ndim = v->ndim;
  seen.dtype = v->dtype;
  seen.size0 = v->ndim ? v->sizes[0] : -1;
  seen.contiguous = v->ndim != 1 || v->strides[0] == 1;
}

static bp_status twice_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  (void)ctx;
  affine(args[0].u.tensor, out, 2, 0);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(twice_kernel, twice_impl)

static bp_status twice_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  note(rets);
  return twice_impl(ctx, args, rets[0].u.tensor);
}

static bp_status pair_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  if (nrets != 2) return host->set_error(BP_ERR_INTERNAL, "st::pair: expected 2 results");
  affine(args[0].u.tensor, rets[0].u.tensor, 1, 1);
  affine(args[0].u.tensor, rets[1].u.tensor, 1, -1);
  return BP_OK;
}

static bp_status fails_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)args;
  (void)nargs;
  (void)nrets;
  note(rets);
  return host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: the kernel refuses", ctx->op_name);
}

/* A vendor bug: the kernel overwrites the result the host gave it. */
static bp_status swaps_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)nrets;
  rets[0].u.tensor = NULL;
  return BP_OK;
}

static bp_status plain_unboxed(const bp_kernel_ctx *ctx, bp_tensor *x, bp_tensor **out) {
  (void)ctx;
  (void)x;
  (void)out;
  return BP_ERR_INTERNAL;
}

/* What each refused registration said. */
enum { R_UNBOXED, R_ALIAS, R_NOMETA, R_UNKNOWN_FLAG, R_LIST, R_COUNT };
static bp_status refused_status[R_COUNT];
static char refused_msg[R_COUNT][512];
/* What bp_aux_impl_structured registered on a host of ABI 1.1 and 1.2. */
static bp_kernel_def captured;
static bp_status capture_impl(bp_library *lib, const bp_kernel_def *k) {
  (void)lib;
  captured = *k;
  return BP_OK;
}
static bp_kernel_def aux_on_old, aux_on_new;

static bp_status def(bp_library *lib, const char *schema, bool meta) {
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = schema;
  d.meta = meta ? same_meta : NULL;
  return host->def(lib, &d);
}

static bp_status impl(bp_library *lib, const char *op, bp_boxed_kernel boxed, uint32_t flags) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = boxed;
  k.flags = flags;
  return host->impl(lib, &k);
}

static void refused(int which, bp_status st) {
  refused_status[which] = st;
  snprintf(refused_msg[which], sizeof refused_msg[which], "%s", host->last_error());
}

static bp_status st_setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "st", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = h->library(reg, &ld, &lib);
  const char *ops[] = {"twice(Tensor x) -> Tensor", "pair(Tensor x) -> (Tensor, Tensor)",
                       "fails(Tensor x) -> Tensor", "swaps(Tensor x) -> Tensor",
                       "plain(Tensor x) -> Tensor", "inplace(Tensor(a!) x) -> Tensor(a!)",
                       "count(Tensor x) -> (Tensor, int)"};
  for (size_t i = 0; !st && i < sizeof ops / sizeof ops[0]; i++) st = def(lib, ops[i], true);
  if (!st) st = def(lib, "nometa(Tensor x) -> Tensor", false);
  if (!st) st = impl(lib, "twice", twice_fill, BP_KERNEL_DEF_STRUCTURED);
  if (!st) st = impl(lib, "pair", pair_fill, BP_KERNEL_DEF_STRUCTURED);
  if (!st) st = impl(lib, "fails", fails_fill, BP_KERNEL_DEF_STRUCTURED);
  if (!st) st = impl(lib, "swaps", swaps_fill, BP_KERNEL_DEF_STRUCTURED);
  if (st) return st;
  /* What the host must refuse. */
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "plain";
  k.device_type = BP_DEVICE_CPU;
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))plain_unboxed;
  k.flags = BP_KERNEL_DEF_STRUCTURED;
  refused(R_UNBOXED, h->impl(lib, &k));
  refused(R_ALIAS, impl(lib, "inplace", twice_fill, BP_KERNEL_DEF_STRUCTURED));
  refused(R_NOMETA, impl(lib, "nometa", twice_fill, BP_KERNEL_DEF_STRUCTURED));
  refused(R_UNKNOWN_FLAG, impl(lib, "plain", twice_kernel, 1u << 5));
  refused(R_LIST, impl(lib, "count", twice_fill, BP_KERNEL_DEF_STRUCTURED));
  /* The plain self-allocating form serves st::plain. */
  st = impl(lib, "plain", twice_kernel, 0);
  /* bp_aux_impl_structured on a host of ABI 1.1 and of 1.2. */
  bp_host_api proxy = *h;
  proxy.impl = capture_impl;
  proxy.abi_minor = 1;
  if (!st) st = bp_aux_impl_structured(&proxy, lib, "plain", BP_DEVICE_CPU, twice_kernel,
                                       twice_kernel_fill, NULL, BP_PRIORITY_DEFAULT);
  aux_on_old = captured;
  proxy.abi_minor = 2;
  if (!st) st = bp_aux_impl_structured(&proxy, lib, "plain", BP_DEVICE_CPU, twice_kernel,
                                       twice_kernel_fill, NULL, BP_PRIORITY_DEFAULT);
  aux_on_new = captured;
  return st;
}

static const bp_plugin_desc st_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "st", .setup = st_setup};

static const bp_plugin_desc *st_init(const bp_host_api *h) {
  host = h;
  return &st_desc;
}

/* A plugin built against ABI 1.1 that left bits in flags, which its host
 * ignored: a 1.2 host ignores them too, and the kernel stays plain. */
static bp_status old_setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "old", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = h->library(reg, &ld, &lib);
  if (!st) st = def(lib, "twice(Tensor x) -> Tensor", true);
  if (!st) st = impl(lib, "twice", twice_kernel, BP_KERNEL_DEF_STRUCTURED | (1u << 7));
  return st;
}

static const bp_plugin_desc old_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = 1, .name = "old", .setup = old_setup};

static const bp_plugin_desc *old_init(const bp_host_api *h) {
  host = h;
  return &old_desc;
}

static const float X[3] = {1, -2, 4};

static int32_t kind_of(const char *name) {
  const bp_op *op = must_find(name);
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  if (!op || bp_op_get_kernel(op, 0, &ki) != BP_OK) return -1;
  return ki.kind;
}

/* Registers the st plugin (each case runs in a process of its own). */
static bool st_registered(void) {
  if (ok(bp_plugin_register(st_init, "st", NULL) == BP_OK)) return true;
  tap_diag("%s", bp_last_error());
  return false;
}

static void the_host_allocates_and_the_kernel_fills(void) {
  if (!st_registered()) return;
  is_int(kind_of("st::twice"), BP_KERNEL_STRUCTURED);
  is_int(kind_of("st::plain"), BP_KERNEL_BOXED);
  int64_t live = bp_live_tensor_count();
  bp_tensor *x = f32(X, 3);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, x);
  bp_tensor *r = call_for_tensor(must_find("st::twice"), &s);
  is_int(seen.calls, 1);
  is_int(seen.ndim, 1);
  is_int(seen.size0, 3);
  is_int(seen.dtype, BP_FLOAT32);
  ok(seen.contiguous);
  for (int i = 0; i < 3 && r; i++) is_double(f32data(r)[i], 2 * X[i], 0);
  bp_stack_release(&s);
  /* Two results. */
  bp_stack_push_tensor(&s, x);
  is_status(bp_call(must_find("st::pair"), &s), BP_OK);
  is_int(s.top, 2);
  for (int j = 0; j < 2 && s.top == 2; j++) {
    const float *v = f32data(slots[j].u.tensor);
    for (int i = 0; i < 3; i++) is_double(v[i], X[i] + (j ? -1 : 1), 0);
  }
  bp_stack_release(&s);
  /* The meta function refuses: the kernel never runs, nothing is left. */
  bp_tensor *n = NULL;
  int64_t one = 1;
  is_status(bp_tensor_empty(BP_CPU, BP_INT32, 1, &one, &n), BP_OK);
  bp_stack_push_tensor(&s, n);
  is_status(bp_call(must_find("st::twice"), &s), BP_ERR_TYPE);
  has_str(bp_last_error(), "st::twice: argument #0 'x': expected float32, got int32");
  is_int(seen.calls, 1);
  bp_tensor_release(n);
  /* The kernel fails: its message, and the result is released. */
  s.top = 0;
  bp_stack_push_tensor(&s, x);
  is_status(bp_call(must_find("st::fails"), &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "st::fails: the kernel refuses");
  is_int(seen.calls, 2);
  /* The kernel overwrites the result it was given. */
  s.top = 0;
  bp_stack_push_tensor(&s, x);
  is_status(bp_call(must_find("st::swaps"), &s), BP_ERR_INTERNAL);
  has_str(bp_last_error(), "st::swaps: the structured kernel (plugin 'st') replaced result #0, "
                           "which the host allocated for it to fill");
  bp_stack_release(&s);
  /* The self-allocating form gives the same result. */
  bp_stack_push_tensor(&s, x);
  r = call_for_tensor(must_find("st::plain"), &s);
  for (int i = 0; i < 3 && r; i++) is_double(f32data(r)[i], 2 * X[i], 0);
  bp_stack_release(&s);
  bp_tensor_release(x);
  is_int(bp_live_tensor_count(), live);
}

static void the_flag_is_refused_where_it_cannot_apply(void) {
  if (!st_registered()) return;
  is_status(refused_status[R_UNBOXED], BP_ERR_INVALID_ARGUMENT);
  has_str(refused_msg[R_UNBOXED], "plugin 'st': impl 'st::plain' for cpu: BP_KERNEL_DEF_STRUCTURED "
                                  "is for boxed kernels, and this one is unboxed");
  is_status(refused_status[R_ALIAS], BP_ERR_INVALID_ARGUMENT);
  has_str(refused_msg[R_ALIAS], "impl 'st::inplace' for cpu: BP_KERNEL_DEF_STRUCTURED needs an op "
                                "with a meta function whose results are all plain Tensors");
  has_str(refused_msg[R_ALIAS], "(it aliases an argument)");
  is_status(refused_status[R_NOMETA], BP_ERR_INVALID_ARGUMENT);
  has_str(refused_msg[R_NOMETA], "'st::nometa' has none");
  is_status(refused_status[R_LIST], BP_ERR_INVALID_ARGUMENT);
  has_str(refused_msg[R_LIST], "result #1 of 'st::count(Tensor x) -> (Tensor, int)' is not (it is "
                               "not a plain Tensor)");
  is_status(refused_status[R_UNKNOWN_FLAG], BP_ERR_INVALID_ARGUMENT);
  has_str(refused_msg[R_UNKNOWN_FLAG], "impl 'st::plain' for cpu: unknown flags 0x20 (this host "
                                       "knows 0x1)");
}

static void aux_picks_by_host_version(void) {
  if (!st_registered()) return;
  ok(aux_on_old.boxed == twice_kernel);
  is_int(aux_on_old.flags, 0);
  ok(aux_on_new.boxed == twice_kernel_fill);
  is_int(aux_on_new.flags, BP_KERNEL_DEF_STRUCTURED);
  is_int(aux_on_new.priority, BP_PRIORITY_DEFAULT);
}

static void a_1_1_plugin_keeps_its_flags_ignored(void) {
  if (!ok(bp_plugin_register(old_init, "old", NULL) == BP_OK)) {
    tap_diag("%s", bp_last_error());
    return;
  }
  is_int(kind_of("old::twice"), BP_KERNEL_BOXED);
  bp_tensor *x = f32(X, 3);
  bp_value slots[1];
  bp_stack s = BP_STACK_INIT(slots, 1);
  bp_stack_push_tensor(&s, x);
  bp_tensor *r = call_for_tensor(must_find("old::twice"), &s);
  for (int i = 0; i < 3 && r; i++) is_double(f32data(r)[i], 2 * X[i], 0);
  bp_stack_release(&s);
  bp_tensor_release(x);
}

static void the_cpu_plugin_is_structured(void) {
  char path[4096];
  const char *top = getenv("top_builddir");
  snprintf(path, sizeof path, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  if (!ok(bp_plugin_load(path, NULL) == BP_OK)) {
    tap_diag("%s", bp_last_error());
    return;
  }
  const char *structured[] = {"core::add", "core::relu", "core::where", "core::sum",
                              "core::matmul", "core::softmax", "core::layer_norm"};
  for (size_t i = 0; i < sizeof structured / sizeof structured[0]; i++)
    is_int(kind_of(structured[i]), BP_KERNEL_STRUCTURED);
  /* Ops that write or return an argument keep plain kernels. */
  is_int(kind_of("core::add.out"), BP_KERNEL_BOXED);
  is_int(kind_of("core::fill_"), BP_KERNEL_BOXED);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(the_host_allocates_and_the_kernel_fills),
      TAP_CASE(the_flag_is_refused_where_it_cannot_apply),
      TAP_CASE(aux_picks_by_host_version),
      TAP_CASE(a_1_1_plugin_keeps_its_flags_ignored),
      TAP_CASE(the_cpu_plugin_is_structured),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
