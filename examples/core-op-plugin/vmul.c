/*
 * vmul: a vendor plugin that implements core::mul for the CPU with the
 * helper kit <backplane/plugin_aux.h>: every dtype of the op set, any
 * strides, broadcasting and type promotion, in one kernel.
 */
#include <backplane/plugin_aux.h>

/* out = self * other, element by element.  The kit reads the two Tensor
 * arguments, converts them to the dtype of the result (which the op set's
 * meta function chose, with its shape, after checking every argument),
 * broadcasts them, and evaluates the expression in that dtype's compute
 * type: float, double, or uint64_t for the integers and bool, so that
 * products wrap and bool is and.  It defines mul_kernel, which allocates
 * its result (any host), and mul_kernel_fill, which fills the result the
 * host allocated (a host of ABI 1.2 or later). */
BP_AUX_POINTWISE_KERNEL(mul_kernel, 2, (self, other), self * other)

/* core::mul is defined by the host; the plugin only implements it. */
static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def def = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &def, &lib);
  if (st != BP_OK) return st;
  /* The pair, picked by the host's ABI version, for every dtype the op
   * allows (NULL; a list such as BP_AUX_DTYPES(BP_FLOAT32) declares fewer). */
  return BP_AUX_IMPL_STRUCTURED(host, lib, "mul", BP_DEVICE_CPU, mul_kernel, NULL);
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
