/*
 * tests/plugins/frag.c - a plugin that adds an op to a namespace another
 * plugin owns, through a FRAGMENT library.  Built twice:
 *   frag       adds vendor_a::triple; vendor_a allows fragments
 *   frag_good  (-DFRAG_GOOD) adds good::triple; good does not allow them,
 *              so setup fails with BP_ERR_UNSUPPORTED
 * triple(Tensor a) -> Tensor is 3 * a (float32, CPU).
 */
#include <backplane/plugin.h>

#if defined(FRAG_GOOD)
#define PLUGIN_NAME "frag_good"
#define TARGET_NS "good"
#else
#define PLUGIN_NAME "frag"
#define TARGET_NS "vendor_a"
#endif

static const bp_host_api *H;

static bp_status triple_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(a);
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: expected a contiguous float32 tensor", ctx->op_name);
  bp_status st = H->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, out);
  if (st) return st;
  const float *x = v->data;
  float *z = H->tensor_view(*out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = 3.0f * x[i];
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, TARGET_NS, BP_LIBRARY_FRAGMENT, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "triple(Tensor a) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "triple";
  k.device_type = BP_DEVICE_CPU;
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))triple_kernel;
  return host->impl(lib, &k);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = PLUGIN_NAME,
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
