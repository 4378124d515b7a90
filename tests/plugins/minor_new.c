/*
 * tests/plugins/minor_new.c - a plugin from a newer minor version: its
 * descriptor is a larger struct (bp_plugin_desc followed by fields this host
 * has never heard of) and it checks the host table with BP_HOST_HAS before
 * relying on a slot, as a plugin built against a newer header must.
 *
 * Namespace "newminor": one(Tensor a) -> Tensor, a + 1 (float32).
 */
#include <backplane/plugin.h>

static const bp_host_api *H;

/* What a descriptor of ABI 1.1 might look like to this test. */
typedef struct future_desc {
  bp_plugin_desc base;
  uint64_t future_flags;
  const void *future_table;
} future_desc;

static bp_status one_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: expected a contiguous float32 tensor", ctx->op_name);
  bp_tensor *out;
  bp_status st = H->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, &out);
  if (st) return st;
  const float *x = v->data;
  float *z = H->tensor_view(out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = x[i] + 1.0f;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "newminor", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "one(Tensor a) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "one";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = one_kernel;
  return host->impl(lib, &k);
}

static const future_desc desc = {
    .base =
        {
            .struct_size = sizeof(future_desc),
            .abi_major = BP_ABI_VERSION_MAJOR,
            .abi_minor = BP_ABI_VERSION_MINOR + 1,
            .name = "minor_new",
            .vendor = "Backplane tests",
            .version = "1.1.0",
            .setup = setup,
        },
    .future_flags = ~(uint64_t)0,
    .future_table = &desc,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  /* A plugin built against a newer header may not assume any slot: check
   * the ones it uses (here `call`, the last slot of ABI 1.0) first. */
  if (!BP_HOST_HAS(host, call) || !BP_HOST_HAS(host, set_error)) {
    if (BP_HOST_HAS(host, set_error))
      host->set_error(BP_ERR_VERSION, "minor_new: the host has no 'call' slot");
    return NULL;
  }
  H = host;
  return &desc.base;
}
