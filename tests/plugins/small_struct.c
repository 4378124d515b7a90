/*
 * tests/plugins/small_struct.c - a descriptor whose struct_size (8) does not
 * even cover the ABI version fields.  The host must refuse it with
 * BP_ERR_VERSION without reading past those 8 bytes.
 */
#include <backplane/plugin.h>

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)reg;
  return host->set_error(BP_ERR_INTERNAL, "small_struct: setup must not run");
}

static const bp_plugin_desc desc = {
    .struct_size = 8,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "small_struct",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  (void)host;
  return &desc;
}
