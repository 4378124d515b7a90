/*
 * conformance/checks/common.c - what the per-op checks share: the setup
 * of the case's op (cx.cur), its samples, and the refusals an op outside
 * core may give.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Loads the plugin and finds the case's op; false after a verdict. */
bool op_setup(const certify_case *c) {
  rng_seed_name(c->name);
  if (!load_plugin() || !pick_device()) return false;
  install_fault_handler();
  cx.cur.oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_find(c->op, &cx.cur.op) != BP_OK || bp_op_get_info(cx.cur.op, &cx.cur.oi) != BP_OK) {
    verdict(ST_FAIL, "%s: %s", c->op, bp_last_error());
    return false;
  }
  parse_schema(cx.cur.oi.schema, &cx.cur.si);
  cx.cur.r = core_ref_index(c->op);
  cx.cur.has_kernel = plugin_kernel(cx.cur.op, cx.put.device.type, &cx.cur.ki);
  if (!cx.cur.has_kernel) {
    verdict(ST_SKIP, "%s has no kernel for %s (see registration/profile)", c->op,
            device_name(cx.put.device.type));
    return false;
  }
  return true;
}

/* The float32 sample of kind sk of the current op (core or generic). */
bool get_sample(int sk, sample *s, char *why, size_t len) {
  if (cx.cur.r >= 0) {
    gen_core(cx.cur.r, BP_FLOAT32, sk, 0, s);
    return true;
  }
  return gen_generic(&cx.cur.si, sk, s, why, len);
}

/* Whether the kernel of the current op declares dtype dt. */
bool declares(int32_t dt) {
  if (!cx.cur.ki.dtypes) return true;
  for (const int32_t *p = cx.cur.ki.dtypes; *p != BP_DTYPE_INVALID; p++)
    if (*p == dt) return true;
  return false;
}

/* The samples the other checks use (NCHECK_SAMPLES of them). */
const int check_samples[] = {SK_BASIC, SK_NONCONTIG};

/* An op outside core may refuse a generated sample (a layout or a value
 * it does not take) with a clean error: that sample is left out of the
 * check (cx.cur.nrefused, cx.cur.refusal).  A core op must take every
 * sample. */

/* After a failed call: true (the sample is left out) for an op outside
 * core, false after a FAIL verdict for a core op. */
bool refused(int sk, const char *check) {
  if (cx.cur.r >= 0) {
    verdict(ST_FAIL, "%s: the call on sample %s failed: %s", check, sk_name[sk], bp_last_error());
    return false;
  }
  cx.cur.nrefused++;
  snprintf(cx.cur.refusal, sizeof cx.cur.refusal, "%s (sample %s)", bp_last_error(), sk_name[sk]);
  return true;
}

/* True after a SKIP verdict when the op refused every sample. */
bool all_refused(const certify_case *c, int nsamples) {
  if (cx.cur.nrefused < nsamples) return false;
  verdict(ST_SKIP, "%s refused every generated sample: %s", c->op, cx.cur.refusal);
  return true;
}

/* Builds sample sk in mode and calls the op: 1 when the call succeeded,
 * -1 when an op outside core refused the sample, 0 after a verdict. */
int call_sample(const certify_case *c, int sk, int mode, sample *s, argset *as,
                const char *check) {
  char why[300];
  (void)c;
  if (!get_sample(sk, s, why, sizeof why)) {
    verdict(ST_SKIP, "%s", why);
    return 0;
  }
  if (!materialise(s, &cx.cur.si, mode, as)) {
    verdict(ST_FAIL, "%s: cannot build the arguments of sample %s on %s: %s", check, sk_name[sk],
            device_name(cx.put.device.type), bp_last_error());
    return 0;
  }
  if (bp_call(cx.cur.op, &as->st) != BP_OK) {
    if (!refused(sk, check)) return 0;
    argset_free(as);
    sample_free(s);
    return -1;
  }
  return 1;
}
