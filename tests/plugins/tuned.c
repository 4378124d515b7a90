/*
 * tests/plugins/tuned.c - a vendor's "tuned" kernels beside the reference
 * CPU plugin, for kernel precedence and declared dtypes.  Built twice:
 *   tuned    (default)      priority 10
 *   tuned_b  (-DTUNED_B)    priority 10 too, to tie with tuned
 * Each registers, for the CPU device type:
 *   core::add          declares float32 only; returns a tensor of `self`'s
 *                      shape filled with MARK (1000 for tuned, 2000 for
 *                      tuned_b), so a test sees whose kernel ran;
 *   NAME::only_f32     defined here, Tensor -> Tensor, an unboxed kernel
 *                      (the fast path) declaring float32: it fails with
 *                      "ran on <dtype>" if it is ever called with another.
 */
#include <string.h>

#include <backplane/plugin.h>

#if defined(TUNED_B)
#define PLUGIN_NAME "tuned_b"
#define MARK 2000.0f
#else
#define PLUGIN_NAME "tuned"
#define MARK 1000.0f
#endif

static const bp_host_api *H;
static const int32_t f32_only[] = {BP_FLOAT32, BP_DTYPE_INVALID};

static bp_status marked(const bp_tensor *like, bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(like);
  bp_status st = H->tensor_empty(v->device, BP_FLOAT32, v->ndim, v->sizes, out);
  if (st) return st;
  const bp_tensor_view *o = H->tensor_view(*out);
  for (int64_t i = 0; i < o->numel; i++) ((float *)o->data)[i] = MARK;
  return BP_OK;
}

static bp_status add_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  for (int i = 0; i < 2; i++)
    if (H->tensor_view(args[i].u.tensor)->dtype != BP_FLOAT32)
      return H->set_errorf(BP_ERR_INTERNAL, "%s: " PLUGIN_NAME " ran on a dtype it does not declare",
                           ctx->op_name);
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  return marked(args[0].u.tensor, &rets[0].u.tensor);
}

static bp_status only_f32(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor **out) {
  int32_t dt = H->tensor_view(a)->dtype;
  if (dt != BP_FLOAT32)
    return H->set_errorf(BP_ERR_INTERNAL, "%s: ran on %s", ctx->op_name,
                         BP_HOST_HAS(H, dtype_name) ? H->dtype_name(dt) : "another dtype");
  return marked(a, out);
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_library *core, *own;
  bp_library_def ci = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library_def od = {BP_LIBRARY_DEF_STRUCT_SIZE, PLUGIN_NAME, BP_LIBRARY_DEF, 0};
  bp_status st;
  if ((st = H->library(reg, &ci, &core)) || (st = H->library(reg, &od, &own))) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "core::add";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = add_kernel;
  k.dtypes = f32_only;
  k.priority = 10;
  if ((st = H->impl(core, &k))) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "only_f32(Tensor a) -> Tensor";
  if ((st = H->def(own, &d))) return st;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "only_f32";
  k.device_type = BP_DEVICE_CPU;
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))only_f32;
  k.dtypes = f32_only;
  return H->impl(own, &k);
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
