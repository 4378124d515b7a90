/*
 * abi/compat-plugin.c - a plugin for the ABI compatibility test, built
 * twice from this one source:
 *
 *   compat_1_0   against the frozen headers of ABI 1.0 (abi/sdk-1.0/), as a
 *                plugin released with 1.0 was, and loaded by today's host;
 *   compat_next  with -DCOMPAT_NEXT against today's headers, posing as a
 *                plugin from the next minor ABI: it states abi_minor + 1,
 *                returns a larger descriptor with appended fields, and
 *                checks the host table for a slot appended after today's
 *                last one before it would use it, as the struct-size rules
 *                require.  Loaded by today's host, it meets an older host.
 *
 * Namespace compat10 or compatnext:
 *   scale(Tensor a, float s) -> Tensor   unboxed kernel, a * s (float32)
 *   neg(Tensor a) -> Tensor              boxed kernel, -a (float32), which
 *                                        calls scale through host->call
 *   features() -> int                    what bp_plugin_init saw: 1 when
 *                                        the host had the next slot
 * Both tensor ops share one meta function.
 */
#include <string.h>

#include <backplane/plugin.h>

#ifdef COMPAT_NEXT
#define NS "compatnext"
#define NAME "compat_next"
#define MINOR (BP_ABI_VERSION_MINOR + 1)
#else
#define NS "compat10"
#define NAME "compat_1_0"
#define MINOR BP_ABI_VERSION_MINOR
#endif

static const bp_host_api *H;
static int64_t features;

static bp_status meta_same(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *v = ctx->host->tensor_view(args[0].u.tensor);
  if (v->dtype != BP_FLOAT32)
    return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #0 'a': expected float32", ctx->op_name);
  outs[0].device = v->device;
  outs[0].dtype = v->dtype;
  outs[0].ndim = v->ndim;
  int64_t stride = 1;
  for (int32_t i = v->ndim - 1; i >= 0; i--) {
    outs[0].sizes[i] = v->sizes[i];
    outs[0].strides[i] = stride;
    stride *= v->sizes[i] ? v->sizes[i] : 1;
  }
  return BP_OK;
}

/* a * s into a new contiguous tensor; a is walked through its strides. */
static bp_status map(const bp_kernel_ctx *ctx, bp_tensor *a, float s, bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(a);
  if (v->dtype != BP_FLOAT32)
    return H->set_errorf(BP_ERR_TYPE, "%s: argument #0 'a': expected float32", ctx->op_name);
  bp_status st = H->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, out);
  if (st) return st;
  float *z = H->tensor_view(*out)->data;
  const float *x = v->data;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t n = 0; n < v->numel; n++) {
    int64_t off = 0;
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
    z[n] = x[off] * s;
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return BP_OK;
}

static bp_status scale_unboxed(const bp_kernel_ctx *ctx, bp_tensor *a, double s, bp_tensor **out) {
  return map(ctx, a, (float)s, out);
}

/* neg goes through the host table: it finds NS::scale and calls it with
 * s = -1, so that the plugin built against the 1.0 headers also relies on
 * the offsets of the op_find and call slots. */
static bp_status neg_boxed(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  const bp_op *scale;
  bp_status st = H->op_find(NS "::scale", &scale);
  if (st) return st;
  bp_value slots[2];
  bp_stack stack = BP_STACK_INIT(slots, 2);
  slots[0] = args[0];
  slots[1].tag = BP_TAG_FLOAT;
  slots[1].len = 0;
  slots[1].u.f = -1.0;
  stack.top = 2;
  if ((st = H->call(scale, &stack))) return st;
  rets[0] = slots[0];
  return BP_OK;
}

static bp_status features_boxed(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_INT;
  rets[0].len = 0;
  rets[0].u.i = features;
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, NS, BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  static const char *const schemas[] = {"scale(Tensor a, float s) -> Tensor", "neg(Tensor a) -> Tensor",
                                        "features() -> int"};
  for (size_t i = 0; i < 3; i++) {
    bp_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = schemas[i];
    d.meta = i < 2 ? meta_same : NULL;
    if ((st = host->def(lib, &d))) return st;
  }
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.device_type = BP_DEVICE_CPU;
  static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  k.op = "scale";
  k.unboxed = (bp_unboxed_kernel)scale_unboxed;
  k.dtypes = f32;
  if ((st = host->impl(lib, &k))) return st;
  k.unboxed = NULL;
  k.dtypes = NULL;
  k.op = "neg";
  k.boxed = neg_boxed;
  if ((st = host->impl(lib, &k))) return st;
  k.op = "features";
  k.boxed = features_boxed;
  return host->impl(lib, &k);
}

#ifdef COMPAT_NEXT
/* The host table as the next minor header would declare it: today's table
 * with one slot appended. */
typedef struct next_host_api {
  bp_host_api base;
  bp_status (*next_slot)(int64_t *out_value);
} next_host_api;

/* The descriptor of the next minor: today's with two fields appended, which
 * today's host must ignore. */
typedef struct next_desc {
  bp_plugin_desc base;
  uint64_t next_flags;
  int64_t saw_next_slot; /* read by abi/test-compat.c */
} next_desc;

static next_desc desc = {
    .base = {.struct_size = sizeof(next_desc),
             .abi_major = BP_ABI_VERSION_MAJOR,
             .abi_minor = MINOR,
             .name = NAME,
             .vendor = "Backplane ABI tests",
             .version = "1.1.0",
             .setup = setup},
    .next_flags = ~(uint64_t)0,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  /* A slot of 1.0 that this plugin needs: an older host cannot lack it, but
   * the rule is the same for every slot. */
  if (!BP_HOST_HAS(host, op_meta)) {
    if (BP_HOST_HAS(host, set_error))
      host->set_error(BP_ERR_VERSION, NAME ": the host table has no 'op_meta' slot");
    return NULL;
  }
  /* The appended slot is optional for this plugin: use it only when the
   * host's table covers it and it is not NULL. */
  const next_host_api *next = (const next_host_api *)(const void *)host;
  features = BP_HAS_FIELD(host, next_host_api, next_slot) && next->next_slot != NULL;
  desc.saw_next_slot = features;
  H = host;
  return &desc.base;
}
#else
static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = MINOR,
    .name = NAME,
    .vendor = "Backplane ABI tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  features = 0;
  return &desc;
}
#endif
