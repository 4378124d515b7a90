/*
 * tests/plugins/tuned.c - a vendor's "tuned" kernels beside the reference
 * CPU plugin, for kernel precedence and declared dtypes.  Built twice:
 *   tuned    (default)      priority 10
 *   tuned_b  (-DTUNED_B)    priority 10 too, to tie with tuned
 * Each registers, for the CPU device type:
 *   core::add          declares float32 only; returns a tensor of `self`'s
 *                      shape filled with MARK (1000 for tuned, 2000 for
 *                      tuned_b), so a test sees whose kernel ran;
 *   core::cumsum       a structured kernel declaring float32 only: fills
 *                      the result the host allocated with MARK, so a
 *                      call whose result the host made float64 must never
 *                      reach it;
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

/* core::sum, float32 only: its float32 result is filled with the marker.
 * Declared dtypes cover results too, so sum(x, dtype=float64) never
 * reaches it. */
static bp_status sum_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  if (args[3].tag == BP_TAG_SCALAR_TYPE && args[3].u.i != BP_FLOAT32)
    return H->set_errorf(BP_ERR_INTERNAL, "%s: " PLUGIN_NAME " was asked for a result of a dtype "
                         "it does not declare", ctx->op_name);
  int64_t one = 1;
  bp_device dev = H->tensor_view(args[0].u.tensor)->device;
  bp_status st = H->tensor_empty(dev, BP_FLOAT32, 1, &one, &rets[0].u.tensor);
  if (st) return st;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  *(float *)H->tensor_view(rets[0].u.tensor)->data = MARK;
  return BP_OK;
}

/* core::clamp, int32 only: an int32 result of self's shape, every element
 * the marker.  clamp(int32, 2.5) is float32 (a float Scalar promotes), so
 * it goes to the host's composite. */
static bp_status clamp_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  for (int i = 1; i < 3; i++)
    if (args[i].tag == BP_TAG_FLOAT)
      return H->set_errorf(BP_ERR_INTERNAL, "%s: " PLUGIN_NAME " was asked for a float32 result",
                           ctx->op_name);
  bp_status st = H->tensor_empty(v->device, BP_INT32, v->ndim, v->sizes, &rets[0].u.tensor);
  if (st) return st;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  const bp_tensor_view *o = H->tensor_view(rets[0].u.tensor);
  for (int64_t i = 0; i < o->numel; i++) ((int32_t *)o->data)[i] = (int32_t)MARK;
  return BP_OK;
}

/* core::cumsum, structured, float32 only: fills its result with MARK. */
static bp_status cumsum_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  (void)args;
  const bp_tensor_view *o = H->tensor_view(rets[0].u.tensor);
  if (o->dtype != BP_FLOAT32)
    return H->set_errorf(BP_ERR_INTERNAL, "%s: " PLUGIN_NAME " was handed a %s result to fill",
                         ctx->op_name, H->dtype_name(o->dtype));
  for (int64_t i = 0; i < o->numel; i++) ((float *)o->data)[i] = MARK;
  return BP_OK;
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
  k.op = "core::sum";
  k.boxed = sum_kernel;
  if ((st = H->impl(core, &k))) return st;
  k.op = "core::cumsum";
  k.boxed = cumsum_kernel;
  k.flags = BP_KERNEL_DEF_STRUCTURED;
  if ((st = H->impl(core, &k))) return st;
  k.flags = 0;
  static const int32_t i32_only[] = {BP_INT32, BP_DTYPE_INVALID};
  k.op = "core::clamp";
  k.boxed = clamp_kernel;
  k.dtypes = i32_only;
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
