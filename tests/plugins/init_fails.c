/*
 * tests/plugins/init_fails.c - a plugin whose entry point refuses the host,
 * the way a plugin does when a runtime it needs is missing: it explains
 * through host->set_error() and returns NULL.
 */
#include <backplane/plugin.h>

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  host->set_error(BP_ERR_UNSUPPORTED, "init_fails: needs a widget, and this machine has none");
  return NULL;
}
