/*
 * conformance/plugin.c - the plugin under test, inside a child: loading
 * it, the device under test, the kernels it registered, and an op's
 * schema, as libbackplane describes it (bp_op_get_arg/ret).
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "cert.h"

/* Loads the plugin; on failure gives a FAIL verdict and returns false. */
bool cert_load_plugin(cert_ctx *cx) {
  if (bp_plugin_load(cx->opt.plugin, &cx->put.plugin) != BP_OK) {
    cert_verdict(cx, ST_FAIL, "plugin does not load: %s", bp_last_error());
    return false;
  }
  cx->put.info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(cx->put.plugin, &cx->put.info) != BP_OK || !cx->put.info.name) {
    cert_verdict(cx, ST_FAIL, "bp_plugin_get_info failed: %s", bp_last_error());
    return false;
  }
  return true;
}

bool cert_is_core(const char *name) { return strncmp(name, "core::", 6) == 0; }

/* Whether the plugin registered an enabled kernel of op for device type. */
bool cert_plugin_kernel(cert_ctx *cx, const bp_op *op, int32_t type, bp_kernel_info *out) {
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  if (bp_op_get_info(op, &oi) != BP_OK) return false;
  for (int32_t k = 0; k < oi.nkernels; k++) {
    bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
    if (bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK && ki.device_type == type && ki.enabled &&
        ki.plugin && strcmp(ki.plugin, cx->put.info.name) == 0) {
      if (out) *out = ki;
      return true;
    }
  }
  return false;
}

/* Whether the CPU may touch memory of device type `type`: the CPU, or a
 * type whose interface declares BP_DEVICE_HOST_VISIBLE, unless
 * BP_CERTIFY_DEVICE_PATH=1 asks for the device path. */
static bool host_visible(int32_t type) {
  const char *force = getenv("BP_CERTIFY_DEVICE_PATH");
  uint32_t flags = 0;
  if (force && *force == '1') return false;
  return type == BP_DEVICE_CPU ||
         (bp_device_type_flags(type, &flags) == BP_OK && (flags & BP_DEVICE_HOST_VISIBLE));
}

/* The device under test: --device when given, else the device type for
 * which the plugin registered most of its kernels, else the CPU. */
bool cert_pick_device(cert_ctx *cx) {
  if (cx->opt.device) {
    const char *colon = strchr(cx->opt.device, ':');
    size_t tlen = colon ? (size_t)(colon - cx->opt.device) : strlen(cx->opt.device);
    int32_t index = colon ? (int32_t)strtol(colon + 1, NULL, 10) : 0;
    /* Fixed codes first, then the runtime-assigned vendor range. */
    for (int32_t code = 1; code < BP_DEVICE_DYNAMIC_FIRST + 256; code++) {
      const char *n = bp_device_type_name(code);
      if (n && strlen(n) == tlen && strncmp(n, cx->opt.device, tlen) == 0) {
        cx->put.device = bp_device_make(code, index);
        cx->put.host_visible = host_visible(code);
        return true;
      }
    }
    cert_verdict(cx, ST_FAIL, "--device %s: no such device type is registered", cx->opt.device);
    return false;
  }
  int32_t best = BP_DEVICE_CPU, best_n = 0;
  int32_t types[64], counts[64];
  int nt = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK) continue;
    for (int32_t k = 0; k < oi.nkernels; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK || !ki.plugin ||
          strcmp(ki.plugin, cx->put.info.name) != 0)
        continue;
      int t;
      for (t = 0; t < nt && types[t] != ki.device_type; t++) {
      }
      if (t == nt) {
        if (nt == 64) continue;
        types[nt] = ki.device_type;
        counts[nt++] = 0;
      }
      if (++counts[t] > best_n) best_n = counts[t], best = types[t];
    }
  }
  cx->put.device = bp_device_make(best, 0);
  cx->put.host_visible = host_visible(best);
  return true;
}

const char *cert_device_name(int32_t type) {
  const char *n = bp_device_type_name(type);
  return n ? n : "?";
}

/* ------------------------------------------------------------------------ */
/* An op's schema                                                           */
/* ------------------------------------------------------------------------ */

/* Fills schema_info from libbackplane's description of an op's arguments
 * and results (bp_op_get_arg/ret): at most 12 arguments and 4 Tensor
 * results, names and type spellings truncated to their fields.  An
 * argument's alias letter is the first of its alias set (the a of
 * Tensor(a!)); a result counts when its type is Tensor (Tensor[] and
 * Tensor? included), whatever its position among the others.  An op that
 * is not defined gives an empty schema_info. */
void cert_op_schema_info(const bp_op *op, schema_info *out) {
  memset(out, 0, sizeof *out);
  bp_arg_info a;
  for (size_t k = 0; out->n < 12; k++) {
    memset(&a, 0, sizeof a);
    a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    if (!op || bp_op_get_arg(op, k, &a) != BP_OK) break;
    int i = out->n++;
    snprintf(out->name[i], sizeof out->name[i], "%s", a.name);
    snprintf(out->type[i], sizeof out->type[i], "%s", a.type);
    out->mutated[i] = (a.flags & BP_ARG_WRITTEN) != 0;
    out->has_default[i] = (a.flags & BP_ARG_HAS_DEFAULT) != 0;
    out->alias[i] = a.alias_set ? a.alias_set[0] : 0;
  }
  for (size_t k = 0; out->nret < 4; k++) {
    memset(&a, 0, sizeof a);
    a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    if (!op || bp_op_get_ret(op, k, &a) != BP_OK) break;
    if (a.tag == BP_TAG_TENSOR || a.tag == BP_TAG_TENSOR_LIST)
      out->ret_alias[out->nret++] = a.alias_set ? a.alias_set[0] : 0;
  }
  bp_clear_error();
}
