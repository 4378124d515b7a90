/*
 * conformance/checks/registration.c - the registration checks: the core
 * op set the plugin claims (registration/profile), and the definitions
 * and kernels it registers (registration/schemas).
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

void cert_case_profile(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
  if (cx->put.info.op_set_version == 0) {
    cert_verdict(cx, ST_PASS,
                 "claims no core op set (op_set_version 0): its own ops are certified on "
                 "the generic checks");
    return;
  }
  size_t ncore = 0, nmissing = 0, nlater = 0, ncomposite = 0;
  const char *first = NULL;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK || !cert_is_core(oi.name)) continue;
    /* An op added by a later op-set version than the plugin claims is
     * not required of it (a v1 plugin keeps its certificate). */
    if (oi.op_set_version > cx->put.info.op_set_version) {
      nlater++;
      continue;
    }
    ncore++;
    bool found = false;
    for (int32_t k = 0; k < oi.nkernels && !found; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      found = bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK &&
              ki.device_type == cx->put.device.type && ki.enabled && ki.plugin &&
              strcmp(ki.plugin, cx->put.info.name) == 0;
    }
    /* An op with the host's composite runs without a kernel of its own
     * (over the plugin's kernels of other ops): a kernel is optional. */
    if (!found && oi.has_composite) {
      ncomposite++;
      continue;
    }
    if (!found && nmissing++ == 0) first = oi.name;
  }
  char also[160] = "";
  if (ncomposite)
    snprintf(also, sizeof also, "; %zu served by the host's composites", ncomposite);
  if (ncore == 0)
    cert_verdict(cx, ST_FAIL, "the host defines no core:: ops");
  else if (nmissing == 1)
    cert_verdict(cx, ST_FAIL, "claims core op set %u, but %s has no kernel for %s",
                 cx->put.info.op_set_version, first, cert_device_name(cx->put.device.type));
  else if (nmissing)
    cert_verdict(cx, ST_FAIL,
                 "claims core op set %u, but %s has no kernel for %s (%zu of %zu core ops "
                 "missing)",
                 cx->put.info.op_set_version, first, cert_device_name(cx->put.device.type),
                 nmissing, ncore);
  else if (nlater)
    cert_verdict(cx, ST_PASS,
                 "the %zu core ops of op set %u have kernels for %s%s (%zu ops of later op "
                 "sets are not required)",
                 ncore - ncomposite, cx->put.info.op_set_version,
                 cert_device_name(cx->put.device.type), also, nlater);
  else
    cert_verdict(cx, ST_PASS, "%zu core ops have kernels for %s%s", ncore - ncomposite,
                 cert_device_name(cx->put.device.type), also);
}

void cert_case_schemas(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cert_load_plugin(cx)) return;
  size_t nown = 0, nimpl = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK) continue;
    bool own = oi.owner && strcmp(oi.owner, cx->put.info.name) == 0;
    int32_t mine = 0;
    for (int32_t k = 0; k < oi.nkernels; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK || !ki.plugin ||
          strcmp(ki.plugin, cx->put.info.name) != 0)
        continue;
      /* One kernel per op and device type. */
      for (int32_t k2 = k + 1; k2 < oi.nkernels; k2++) {
        bp_kernel_info k2i = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
        if (bp_op_get_kernel(op, (size_t)k2, &k2i) == BP_OK && k2i.device_type == ki.device_type &&
            k2i.plugin && strcmp(k2i.plugin, cx->put.info.name) == 0) {
          cert_verdict(cx, ST_FAIL, "%s has two kernels for device type %s", oi.name,
                       cert_device_name(ki.device_type));
          return;
        }
      }
      mine++;
    }
    if (!own && !mine) continue;
    if (own) nown++;
    nimpl += (size_t)mine;
    if (!oi.defined || !oi.schema) {
      cert_verdict(cx, ST_FAIL, "%s: the plugin %s it, but it has no definition (schema)", oi.name,
                   own ? "owns" : "implements");
      return;
    }
    if (own && cert_is_core(oi.name)) {
      cert_verdict(cx, ST_FAIL, "%s: a plugin may not define ops in the core namespace", oi.name);
      return;
    }
  }
  cert_verdict(cx, ST_PASS, "%zu ops of its own, %zu kernels, all on defined ops with schemas",
               nown, nimpl);
}

/* registration/probe: the probe, a process that loaded the plugin before
 * any case, said what it registers.  If it could not (the plugin failed
 * to load, crashed or took longer than --timeout there), no op can be
 * checked, and the run fails closed. */
void cert_case_probe(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cx->probe.loaded) {
    cert_verdict(cx, ST_FAIL,
                 "probe: the certifier could not learn what the plugin registers, so no op "
                 "was checked: %s",
                 cx->probe.why);
    return;
  }
  cert_verdict(cx, ST_PASS, "%s registers %zu op(s) with kernels for %s", cx->probe.name,
               cx->probe.nops, cx->probe.device);
}
