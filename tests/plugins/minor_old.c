/*
 * tests/plugins/minor_old.c - a plugin from an older minor version, whose
 * descriptor ends at `setup`.  Its static struct still has a `teardown`
 * field (this header is newer than the plugin pretends to be), set to a
 * function that aborts: a host that reads past struct_size calls it on
 * unload and the test crashes.
 *
 * Namespace "oldminor": id(Tensor a) -> Tensor returns its input.
 */
#include <stdio.h>
#include <stdlib.h>

#include <backplane/plugin.h>

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

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "oldminor", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "id(Tensor a) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "id";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = id_kernel;
  return host->impl(lib, &k);
}

static void teardown_past_struct_size(const bp_host_api *host) {
  (void)host;
  fprintf(stderr, "minor_old: the host called teardown, which lies past struct_size\n");
  abort();
}

static const bp_plugin_desc desc = {
    .struct_size = BP_STRUCT_SIZE(bp_plugin_desc, setup),
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "minor_old",
    .vendor = "Backplane tests",
    .version = "0.9.0",
    .setup = setup,
    .teardown = teardown_past_struct_size,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
