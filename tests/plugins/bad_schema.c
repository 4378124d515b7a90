/*
 * tests/plugins/bad_schema.c - a plugin whose setup() defines an op with a
 * schema the host cannot parse (a float argument whose default is a word),
 * the way a schema copied by hand goes wrong.  setup() returns the status
 * def() gave it; the load must fail with BP_ERR_SCHEMA, and the message must
 * name the plugin, the schema and the column.
 */
#include <backplane/plugin.h>

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_status st;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "bad_schema", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  if ((st = host->library(reg, &ld, &lib))) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "scale(Tensor self, float factor=fast) -> Tensor";
  return host->def(lib, &d);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "bad_schema",
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  (void)host;
  return &desc;
}
