/* plugins/cpu/common.c - output allocation and registration helpers. */
#include "cpu.h"

bp_status cpu_alloc_outputs(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor **outs, size_t nouts) {
  bp_tensor_meta meta[8];
  if (nouts > 8) return CPU_ERR(BP_ERR_INTERNAL, "%s: too many results", ctx->op_name);
  for (size_t i = 0; i < nouts; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = cpu_host->op_meta(ctx->op, args, nargs, meta, nouts);
  if (st) return st;
  for (size_t i = 0; i < nouts; i++) {
    st = cpu_host->tensor_empty_strided(meta[i].device, meta[i].dtype, meta[i].ndim, meta[i].sizes,
                                        meta[i].strides, &outs[i]);
    if (st) {
      while (i--) cpu_host->tensor_release(outs[i]);
      return st;
    }
  }
  return BP_OK;
}

bp_status cpu_impl(bp_library *lib, const char *op, bp_boxed_kernel fn, void *user_data) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = fn;
  k.user_data = user_data;
  return cpu_host->impl(lib, &k);
}
