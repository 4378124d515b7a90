/*
 * host/api.c - the public entry points that need the host started (the
 * core op set defined, init.c): loading plugins and finding ops.  Each
 * starts the host, then does its work in loader.c or registry.c, which
 * never call back up here.
 */
#include "internal.h"

BP_API bp_status bp_plugin_load(const char *path, bp_plugin **out_plugin) {
  bp_status st = bp__ensure_init();
  return st ? st : bp__plugin_load(path, out_plugin);
}

BP_API bp_status bp_plugin_register(bp_plugin_init_fn init, const char *label,
                                    bp_plugin **out_plugin) {
  bp_status st = bp__ensure_init();
  return st ? st : bp__plugin_register(init, label, out_plugin);
}

BP_API bp_status bp_plugin_discover(size_t *out_loaded) {
  bp_status st = bp__ensure_init();
  return st ? st : bp__plugin_discover(out_loaded);
}

BP_API bp_status bp_op_find(const char *name, const bp_op **out_op) {
  bp_status st = bp__ensure_init();
  return st ? st : bp__op_find(name, out_op);
}

/* A failed start leaves the ops that were defined: they are listed. */
BP_API size_t bp_op_count(void) {
  (void)bp__ensure_init();
  return bp__op_count();
}

BP_API const bp_op *bp_op_at(size_t index) {
  (void)bp__ensure_init();
  return bp__op_at(index);
}
