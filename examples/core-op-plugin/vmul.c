/*
 * vmul: a vendor plugin that implements core::mul for the CPU with the
 * helper kit <backplane/plugin_aux.h>: every dtype of the op set, any
 * strides, broadcasting and type promotion, in one kernel.
 */
#include <backplane/plugin_aux.h>

/* out = self * other.  `out` was allocated by the kit from the op set's
 * meta function (which gave its shape and dtype and checked every
 * argument).  The inputs are converted to out's dtype, and the iterator
 * broadcasts them and hands out 1-D runs of elements. */
static bp_status mul_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *v[3] = {bp_aux_view(ctx, out), NULL, NULL};
  int32_t dt = v[0]->dtype;
  bp_tensor *in[2] = {NULL, NULL}, *arg;
  bp_status st = BP_OK;
  for (size_t i = 0; i < 2 && st == BP_OK; i++) {
    st = bp_aux_arg_tensor(ctx, args, i, &arg);
    if (st == BP_OK) st = bp_aux_to_dtype(ctx, arg, dt, &in[i]);
    if (st == BP_OK) v[i + 1] = bp_aux_view(ctx, in[i]);
  }
  bp_aux_iter it;
  bp_aux_run r;
  if (st == BP_OK) st = bp_aux_iter_init(ctx, &it, 3, v);
  if (st == BP_OK) {
    /* T is the storage type; bp_aux_load computes in float, double, or
     * uint64_t for integers and bool (so products wrap, and bool is and). */
    BP_AUX_DISPATCH(dt, T, st = bp_aux_unsupported_dtype(ctx, 0, dt),
      for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r);)
        for (int64_t k = 0; k < r.n; k++)
          bp_aux_store(BP_AUX_AT(T, r, 0, k),
                       bp_aux_load(*BP_AUX_AT(T, r, 1, k)) * bp_aux_load(*BP_AUX_AT(T, r, 2, k))));
  }
  ctx->host->tensor_release(in[0]);
  ctx->host->tensor_release(in[1]);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(mul_kernel, mul_impl)

/* core::mul is defined by the host; the plugin only implements it. */
static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def def = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &def, &lib);
  if (st != BP_OK) return st;
  /* Structured on a 1.2 host (mul_kernel_fill fills the result the host
   * allocated), self-allocating on an older one (mul_kernel). */
  return bp_aux_impl_structured(host, lib, "mul", BP_DEVICE_CPU, mul_kernel, mul_kernel_fill,
                                NULL, BP_PRIORITY_DEFAULT);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "vmul",
    .vendor = "My Company",
    .version = "0.1.0",
    .op_set_version = 0, /* one core op, not the whole set */
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  return host->abi_major == BP_ABI_VERSION_MAJOR ? &desc : NULL;
}
