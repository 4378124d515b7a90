/*
 * tests/plugins/major_plus.c - a plugin built for the next major ABI.  The
 * host must refuse it with BP_ERR_VERSION before reading anything else of
 * its descriptor, and name both versions.
 */
#include <backplane/plugin.h>

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)reg;
  /* Never reached: a host of another major must not run setup(). */
  return host->set_error(BP_ERR_INTERNAL, "major_plus: setup ran on a host of another major");
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR + 1,
    .abi_minor = 0,
    .name = "major_plus",
    .vendor = "Backplane tests",
    .version = "2.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  (void)host;
  return &desc;
}
