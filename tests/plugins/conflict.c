/*
 * tests/plugins/conflict.c - plugins whose setup() makes a registration the
 * host must refuse.  Built three times:
 *   conflict     (default)        two kernels for conflict::op on the CPU
 *                                 -> BP_ERR_ALREADY_EXISTS
 *   conflict_ns  (-DCONFLICT_NS)  a DEF library of "good", which good.so
 *                                 owns -> BP_ERR_ALREADY_EXISTS
 *   impl_nodef   (-DIMPL_NODEF)   a kernel for ghost::op, which nobody
 *                                 defines -> BP_ERR_NOT_FOUND
 *   impl_nodev   (-DIMPL_NODEV)   a kernel for device type 300, which no
 *                                 plugin registered -> BP_ERR_DEVICE
 * Each passes the host's status on unchanged, so the load fails with it.
 */
#include <backplane/plugin.h>

#if defined(CONFLICT_NS)
#define PLUGIN_NAME "conflict_ns"
#elif defined(IMPL_NODEF)
#define PLUGIN_NAME "impl_nodef"
#elif defined(IMPL_NODEV)
#define PLUGIN_NAME "impl_nodev"
#else
#define PLUGIN_NAME "conflict"
#endif

static const bp_host_api *H;

static bp_status id_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = H->tensor_retain(args[0].u.tensor);
  return BP_OK;
}

static bp_status impl_on(bp_library *lib, const char *op, int32_t device_type) {
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = device_type;
  k.boxed = id_kernel;
  return H->impl(lib, &k);
}

#ifndef IMPL_NODEV
static bp_status impl_cpu(bp_library *lib, const char *op) { return impl_on(lib, op, BP_DEVICE_CPU); }
#endif

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_library *lib;
  bp_status st;
#if defined(CONFLICT_NS)
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "good", BP_LIBRARY_DEF, 0};
  if ((st = H->library(reg, &ld, &lib))) return st;
  /* Reached only when good.so is not loaded. */
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "stolen(Tensor a) -> Tensor";
  if ((st = H->def(lib, &d))) return st;
  return impl_cpu(lib, "stolen");
#elif defined(IMPL_NODEF)
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "ghost", BP_LIBRARY_IMPL, 0};
  if ((st = H->library(reg, &ld, &lib))) return st;
  return impl_cpu(lib, "ghost::op");
#elif defined(IMPL_NODEV)
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "nodev", BP_LIBRARY_DEF, 0};
  if ((st = H->library(reg, &ld, &lib))) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "op(Tensor a) -> Tensor";
  if ((st = H->def(lib, &d))) return st;
  /* A code in the vendor range that no device_type() call returned. */
  return impl_on(lib, "op", 300);
#else
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "conflict", BP_LIBRARY_DEF, 0};
  if ((st = H->library(reg, &ld, &lib))) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "op(Tensor a) -> Tensor";
  if ((st = H->def(lib, &d))) return st;
  if ((st = impl_cpu(lib, "op"))) return st;
  return impl_cpu(lib, "op"); /* the second kernel for the same slot */
#endif
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
