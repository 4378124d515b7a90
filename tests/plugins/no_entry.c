/*
 * tests/plugins/no_entry.c - a shared object that loads fine but is not a
 * Backplane plugin: it exports a symbol, only not bp_plugin_init.
 */
#include <backplane/plugin.h>

BP_PLUGIN_EXPORT int not_a_plugin_entry(void);

BP_PLUGIN_EXPORT int not_a_plugin_entry(void) { return 42; }
