/*
 * abi/compat-1-1-plugin.c - a plugin of ABI 1.1 that uses slots appended
 * in 1.1 only where the host has them, so that it also loads on a host
 * that reports ABI 1.0 (abi/test-compat.c simulates one).
 *
 * Namespace compat11:
 *   twice(Tensor a, float factor=2.0) -> Tensor   boxed, a * factor, float32
 *
 * In setup() it describes what it found in its setup note
 * (bp_plugin_info.error): with 1.1 slots, core::add's third argument
 * (host->op_get_arg) and the name of float32 (host->dtype_name); without
 * them, "1.0 host".  Its kernel declares float32 and a priority (1.1
 * fields of bp_kernel_def), which a 1.0 host does not read.
 */
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

static bp_status twice(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                       bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: argument #0 'a': expected contiguous float32",
                         ctx->op_name);
  bp_tensor *out;
  bp_status st = H->tensor_empty(v->device, BP_FLOAT32, v->ndim, v->sizes, &out);
  if (st) return st;
  float *z = H->tensor_view(out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = ((const float *)v->data)[i] * (float)args[1].u.f;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host; /* H, from bp_plugin_init, is the table this plugin checks */
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "compat11", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st;
  if ((st = H->library(reg, &ld, &lib))) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "twice(Tensor a, float factor=2.0) -> Tensor";
  if ((st = H->def(lib, &d))) return st;
  static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "twice";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = twice;
  k.dtypes = f32;
  k.priority = 5;
  if ((st = H->impl(lib, &k))) return st;
  char note[160] = "1.0 host";
  const bp_op *add;
  if (BP_HOST_HAS(H, op_get_arg) && BP_HOST_HAS(H, dtype_name) &&
      H->op_find("core::add", &add) == BP_OK) {
    bp_arg_info a;
    memset(&a, 0, sizeof a);
    a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    if ((st = H->op_get_arg(add, 2, &a))) return st;
    snprintf(note, sizeof note, "1.1 host: core::add argument 2 is '%s' (%s, default %g); %s",
             a.name, a.type, a.default_value.u.f, H->dtype_name(BP_FLOAT32));
  }
  H->set_error(BP_OK, note);
  return BP_OK;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "compat_1_1",
    .vendor = "Backplane ABI tests",
    .version = "1.1.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
