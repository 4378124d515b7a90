/*
 * host/introspect.c - what hosts and plugins can ask about an operator:
 * bp_op_get_info(), and each argument and result of its schema
 * (bp_op_get_arg/ret, host->op_get_arg/ret), so that no tool has to parse
 * schema text again.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

bool bp__op_type_texts(bp_op *op) {
  const bp__schema *s = op->schema;
  size_t total = 0;
  for (size_t i = 0; i < s->nargs; i++) total += bp__arg_type_format(&s->args[i], NULL, 0) + 1;
  for (size_t j = 0; j < s->nrets; j++) total += bp__arg_type_format(&s->rets[j], NULL, 0) + 1;
  char *block = bp__malloc(total ? total : 1);
  if (!block) return false;
  char *w = block;
  for (size_t i = 0; i < s->nargs + s->nrets; i++) {
    const bp__arg *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
    size_t n = bp__arg_type_format(a, w, (size_t)(block + total - w));
    op->arg_type_text[i] = w;
    w += n + 1;
  }
  bp__free(op->type_block);
  op->type_block = block;
  return true;
}

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
