/*
 * host/select.c - the host's say in which kernel a call goes to:
 * bp_set_kernel_provider() and bp_set_kernel_enabled().  Each changes the
 * registry's kernels or precedence.c's choices under the registry lock and
 * rebuilds the op's dispatch tables.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <string.h>

BP_API bp_status bp_set_kernel_provider(const bp_op *cop, int32_t device_type,
                                        const char *plugin) {
  bp_op *op = (bp_op *)cop; /* handles are const to callers; the registry owns them */
  int slot = bp__device_slot(device_type);
  char dbuf[32];
  if (slot < 0)
    return bp__error(BP_ERR_DEVICE, "bp_set_kernel_provider: %s cannot have kernels",
                     bp__device_type_label(device_type, dbuf, sizeof dbuf));
  if (plugin && (!*plugin || strlen(plugin) > BP__PLUGIN_NAME_MAX))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_set_kernel_provider: the plugin name is %s",
                     *plugin ? "too long" : "empty");
  bp_status st = BP_OK;
  bp__registry_lock();
  if (op && plugin) {
    bool found = false;
    for (const bp__kernel *k = op->registered[slot]; k && !found; k = k->next_reg)
      found = bp__kernel_live(k) && bp__precedence_named(k, plugin);
    if (!found) {
      st = bp__error(BP_ERR_NOT_FOUND,
                     "bp_set_kernel_provider: no loaded plugin named '%s' has a kernel for '%s' "
                     "on %s", plugin, op->name,
                     bp__device_type_label(device_type, dbuf, sizeof dbuf));
      goto out;
    }
  }
  st = bp__precedence_choose(op, slot, plugin);
  if (st) goto out;
  if (op)
    bp__registry_rebuild_op(op);
  else
    bp__registry_rebuild_all();
out:
  bp__registry_unlock();
  return st;
}

BP_API bp_status bp_set_kernel_enabled(const bp_op *cop, int32_t device_type, bool enabled) {
  if (!cop) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_set_kernel_enabled: op is NULL");
  bp_op *op = (bp_op *)cop;
  int slot = bp__device_slot(device_type);
  char dbuf[32];
  bool any = false;
  bp__registry_lock();
  for (bp__kernel *k = slot >= 0 ? op->registered[slot] : NULL; k; k = k->next_reg) {
    if (!bp__kernel_live(k)) continue;
    k->enabled = enabled;
    any = true;
  }
  if (any) bp__registry_rebuild_op(op);
  bp__registry_unlock();
  if (!any)
    return bp__error(BP_ERR_NOT_FOUND, "bp_set_kernel_enabled: op '%s' has no kernel for %s",
                     op->name, bp__device_type_label(device_type, dbuf, sizeof dbuf));
  return BP_OK;
}
