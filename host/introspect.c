/*
 * host/introspect.c - what hosts and plugins can ask about an operator:
 * bp_op_get_info(), and each argument and result of its schema
 * (bp_op_get_arg/ret, host->op_get_arg/ret), so that no tool has to parse
 * schema text again; and which kernels it has (bp_op_get_kernel), in
 * precedence order.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

BP_API bp_status bp_op_get_info(const bp_op *op, bp_op_info *out) {
  if (!op || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_info: %s is NULL", !op ? "op" : "out_info");
  if (out->struct_size < BP_STRUCT_SIZE(bp_op_info, name))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_info: out_info->struct_size is %zu",
                     out->struct_size);
  bp_op_info info;
  memset(&info, 0, sizeof info);
  bp__registry_lock();
  info.name = op->name;
  bool def = atomic_load(&op->defined);
  info.schema = def ? op->schema_text : NULL;
  info.doc = op->doc ? op->doc : "";
  info.owner = def ? bp__plugin_label(op->def_owner) : "(none)";
  info.flags = op->flags;
  info.defined = def;
  info.has_meta = def && op->meta != NULL;
  info.has_composite = def && op->composite != NULL;
  info.nkernels = (int32_t)bp__op_kernel_count(op);
  if (def) {
    info.nargs = (int32_t)op->nargs;
    info.nrets = (int32_t)op->nrets;
    info.npositional = (int32_t)op->npositional;
    info.op_set_version = op->op_set_version;
  }
  bp__registry_unlock();
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = n;
  memcpy(out, &info, n);
  return BP_OK;
}

static bp_status get_arg(const bp_op *op, size_t index, bp_arg_info *out, bool ret) {
  const char *fn = ret ? "bp_op_get_ret" : "bp_op_get_arg";
  if (!op || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !op ? "op" : "out_info");
  if (out->struct_size < BP_STRUCT_SIZE(bp_arg_info, name))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out_info->struct_size is %zu", fn,
                     out->struct_size);
  bp_arg_info info;
  memset(&info, 0, sizeof info);
  bp_status st = BP_OK;
  bp__registry_lock();
  size_t n = 0;
  if (!atomic_load(&op->defined)) {
    st = bp__error(BP_ERR_NOT_FOUND, "%s: op '%s' is not defined", fn, op->name);
  } else if (index >= (n = ret ? op->nrets : op->nargs)) {
    st = bp__error(BP_ERR_NOT_FOUND, "%s: op '%s' has %zu %s%s, index %zu is past them", fn,
                   op->name, n, ret ? "result" : "argument", n == 1 ? "" : "s", index);
  } else {
    const bp__arg *a = ret ? &op->schema->rets[index] : &op->schema->args[index];
    info.name = a->name ? a->name : "";
    info.type = op->arg_type_text[ret ? op->nargs + index : index];
    info.alias_set = a->alias_set;
    info.tag = a->value_tag;
    info.list_size = a->is_list && a->list_size >= 0 ? (int32_t)a->list_size : -1;
    info.flags = (a->optional ? BP_ARG_OPTIONAL : 0) | (a->is_list ? BP_ARG_LIST : 0) |
                 (a->kwarg_only ? BP_ARG_KWARG_ONLY : 0) |
                 (a->has_default ? BP_ARG_HAS_DEFAULT : 0) | (a->is_write ? BP_ARG_WRITTEN : 0);
    if (a->has_default) info.default_value = a->default_value;
  }
  bp__registry_unlock();
  if (st) return st;
  size_t sz = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = sz;
  memcpy(out, &info, sz);
  return BP_OK;
}

BP_API bp_status bp_op_get_arg(const bp_op *op, size_t index, bp_arg_info *out_info) {
  return get_arg(op, index, out_info, false);
}

BP_API bp_status bp_op_get_ret(const bp_op *op, size_t index, bp_arg_info *out_info) {
  return get_arg(op, index, out_info, true);
}

BP_API bp_status bp_op_get_kernel(const bp_op *op, size_t index, bp_kernel_info *out) {
  if (!op || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_kernel: %s is NULL", !op ? "op" : "out_info");
  if (out->struct_size < BP_STRUCT_SIZE(bp_kernel_info, plugin))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_kernel: out_info->struct_size is %zu",
                     out->struct_size);
  bp_kernel_info info;
  memset(&info, 0, sizeof info);
  size_t seen = 0;
  bool found = false;
  bp__registry_lock();
  for (int s = 0; s < BP__DEVICE_SLOTS && !found; s++) {
    if (!op->registered[s]) continue;
    bp__kernel *v[BP__MAX_CANDIDATES];
    size_t n = bp__precedence_sorted(op, s, v, BP__MAX_CANDIDATES);
    if (index >= seen + n) {
      seen += n;
      continue;
    }
    const bp__kernel *k = v[index - seen];
    seen = index + 1;
    found = true;
    info.plugin = bp__plugin_label(k->owner);
    info.dtypes = k->dtypes;
    info.device_type = k->ctx.device_type;
    info.kind = k->kind;
    info.enabled = k->enabled;
    info.priority = k->priority;
    info.active = atomic_load_explicit(&op->dispatch[s], memory_order_relaxed) == k;
  }
  bp__registry_unlock();
  if (!found)
    return bp__error(BP_ERR_NOT_FOUND, "bp_op_get_kernel: op '%s' has %zu kernel%s, index %zu is past them",
                     op->name, seen, seen == 1 ? "" : "s", index);
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = n;
  memcpy(out, &info, n);
  return BP_OK;
}

size_t bp__op_kernel_count(const bp_op *op) {
  size_t n = 0;
  for (int s = 0; s < BP__DEVICE_SLOTS; s++)
    for (const bp__kernel *k = op->registered[s]; k; k = k->next_reg) n += bp__kernel_live(k);
  return n;
}

bool bp__op_kernel_disabled(const bp_op *op, int slot, char *buf, size_t n) {
  bool found = false;
  bp__registry_lock();
  for (const bp__kernel *k = op->registered[slot]; k && !found; k = k->next_reg)
    if (bp__kernel_live(k) && !k->enabled) {
      found = true;
      snprintf(buf, n, "%s", k->owner && k->owner->name ? k->owner->name : "?");
    }
  bp__registry_unlock();
  return found;
}

/* The device types that have an enabled kernel for op, for "no kernel"
 * messages; called from the call path's error branch. */
size_t bp__op_kernel_devices(const bp_op *op, char *buf, size_t n) {
  size_t len = 0, count = 0;
  char dbuf[32];
  buf[0] = '\0';
  bp__registry_lock();
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    const bp__kernel *k = op->registered[s];
    while (k && !(bp__kernel_live(k) && k->enabled)) k = k->next_reg;
    if (!k) continue;
    int w = snprintf(buf + len, n - len, "%s%s", count ? ", " : "",
                     bp__device_type_label(k->ctx.device_type, dbuf, sizeof dbuf));
    if (w > 0 && (size_t)w < n - len) len += (size_t)w;
    count++;
  }
  bp__registry_unlock();
  return count;
}
