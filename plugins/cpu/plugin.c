/*
 * plugins/cpu/plugin.c - the CPU reference plugin: entry point and setup.
 *
 * It implements the whole `core` op set for BP_DEVICE_CPU (the host's
 * built-in device), so it registers no device type of its own.
 */
#include "cpu.h"

const bp_host_api *cpu_host;

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  if (!BP_HOST_HAS(host, op_meta))
    return host->set_error(BP_ERR_VERSION, "cpu: the host lacks op_meta, which the kernels need");
  if (host->core_op_set_version < BP_CORE_OP_SET_VERSION)
    return host->set_errorf(BP_ERR_VERSION,
                            "cpu: the host defines core op set %llu, this plugin implements %d",
                            (unsigned long long)host->core_op_set_version, BP_CORE_OP_SET_VERSION);
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  cpu_stream_init();
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (!st) st = cpu_register_elementwise(lib);
  if (!st) st = cpu_register_compare(lib);
  if (!st) st = cpu_register_index(lib);
  if (!st) st = cpu_register_scan(lib);
  if (!st) st = cpu_register_sort(lib);
  if (!st) st = cpu_register_attention(lib);
  if (!st) st = cpu_register_cast(lib);
  if (!st) st = cpu_register_reduce(lib);
  if (!st) st = cpu_register_softmax(lib);
  if (!st) st = cpu_register_layer_norm(lib);
  if (!st) st = cpu_register_matmul(lib);
  if (!st) st = cpu_register_conv(lib);
  if (!st) st = cpu_register_maxpool(lib);
  return st;
}

static void teardown(const bp_host_api *host) {
  (void)host;
  cpu_pool_shutdown();
  cpu_blas_shutdown();
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "cpu",
    .vendor = "Backplane",
    .version = "0.1.0",
    .op_set_version = BP_CORE_OP_SET_VERSION,
    .setup = setup,
    .teardown = teardown,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  if (!host || host->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  cpu_host = host;
  return &desc;
}
