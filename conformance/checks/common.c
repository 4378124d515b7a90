/*
 * conformance/checks/common.c - what the per-op checks share: the setup
 * of the case's op (cx->cur), the samples they run, a call on one sample,
 * the allocation guard's reports, and the refusals an op outside core may
 * give.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Loads the plugin and finds the case's op; false after a verdict. */
bool cert_op_setup(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return false;
  cert_install_fault_handler(cx);
  cx->cur.oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_find(c->op, &cx->cur.op) != BP_OK || bp_op_get_info(cx->cur.op, &cx->cur.oi) != BP_OK) {
    cert_verdict(cx, ST_FAIL, "%s: %s", c->op, bp_last_error());
    return false;
  }
  cert_op_schema_info(cx->cur.op, &cx->cur.si);
  cx->cur.r = cert_core_ref_index(c->op);
  cx->cur.has_kernel = cert_plugin_kernel(cx, cx->cur.op, cx->put.device.type, &cx->cur.ki);
  if (!cx->cur.has_kernel && cx->cur.oi.has_composite) {
    cert_verdict(cx, ST_SKIP,
                 "%s has no kernel of the plugin's for %s: the host's composite serves it, "
                 "over kernels certified in their own cases",
                 c->op, cert_device_name(cx->put.device.type));
    return false;
  }
  if (!cx->cur.has_kernel) {
    cert_verdict(cx, ST_SKIP, "%s has no kernel for %s (see registration/profile)", c->op,
                 cert_device_name(cx->put.device.type));
    return false;
  }
  /* Whatever the plugin's load left in the guard's pipe is not this op's. */
  char stale[512];
  cert_alloc_guard_read(stale, sizeof stale);
  return true;
}

/* Whether the kernel of the current op declares dtype dt. */
bool cert_declares(cert_ctx *cx, int32_t dt) { return cert_dtypes_have(cx->cur.ki.dtypes, dt); }

bool cert_dtypes_have(const int32_t *dtypes, int32_t dt) {
  if (!dtypes) return true;
  for (const int32_t *p = dtypes; *p != BP_DTYPE_INVALID; p++)
    if (*p == dt) return true;
  return false;
}

size_t cert_result_dtypes(cert_ctx *cx, const argset *as, int32_t *out, size_t max) {
  bp_tensor_meta meta[4];
  for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  size_t nret = cx->cur.si.nret > 0 && cx->cur.si.nret <= 4 ? (size_t)cx->cur.si.nret : 1;
  if (nret > max) nret = max;
  if (bp_op_meta(cx->cur.op, &as->st, meta, nret) != BP_OK) {
    bp_clear_error();
    return 0;
  }
  for (size_t j = 0; j < nret; j++) out[j] = meta[j].dtype;
  return nret;
}

double cert_excess_8x(int32_t dt, const void *got, const void *want) {
  size_t item = bp_dtype_size(dt);
  if (memcmp(got, want, item) == 0) return -1;
  if (!dt_is_float(dt)) return 1;
  double g = load_f(got, dt), w = load_f(want, dt);
  if ((g != g && w != w) || g == w) return -1; /* both NaN, or equal (0 and -0) */
  if (g != g || w != w || isinf(g) || isinf(w)) return INFINITY;
  double rtol = 0, atol = 0;
  dt_tolerance(dt, &rtol, &atol);
  return fabs(g - w) - 8 * (atol + rtol * fabs(w));
}

gen_opts cert_op_gen_opts(cert_ctx *cx) {
  gen_opts o = {cx->cur.ki.dtypes, cx->opt.full, cx->cur.r < 0 ? cx->cur.oi.name : NULL};
  return o;
}

/* A kernel's declared dtypes cover its results too (docs/host-guide.md):
 * the host never sends it a call whose result would have a dtype it does
 * not declare (sum(x, dtype=float64) to a float32-only sum), so neither
 * does the certifier. */
bool cert_undeclared_result(cert_ctx *cx, const argset *as) {
  if (!cx->cur.ki.dtypes) return false;
  int32_t dts[4];
  size_t nret = cert_result_dtypes(cx, as, dts, 4);
  for (size_t j = 0; j < nret; j++) {
    if (dts[j] == BP_DTYPE_INVALID || cert_declares(cx, dts[j])) continue;
    if (cx->cur.nundeclared++ == 0)
      snprintf(cx->cur.undeclared, sizeof cx->cur.undeclared,
               "result %zu would be %s, which the kernel does not declare (the host sends such "
               "calls to another kernel or the op's composite)",
               j, bp_dtype_name(dts[j]) ? bp_dtype_name(dts[j]) : "?");
    return true;
  }
  return false;
}

size_t cert_keep_declared(cert_ctx *cx, sample *v, size_t n) {
  if (!cx->cur.ki.dtypes || !cx->cur.op) return n;
  size_t kept = 0;
  for (size_t k = 0; k < n; k++) {
    argset as;
    bool drop =
        cert_materialise(cx, &v[k], &cx->cur.si, M_PLAIN, &as) && cert_undeclared_result(cx, &as);
    cert_argset_free(&as);
    if (drop) {
      cert_sample_free(&v[k]);
      continue;
    }
    if (kept != k) v[kept] = v[k];
    kept++;
  }
  return kept;
}

sample *cert_op_check_set(cert_ctx *cx, size_t *n) {
  char why[300];
  gen_opts o = cert_op_gen_opts(cx);
  sample *v = cert_check_set(cx->cur.r, &cx->cur.si, &o, n, why, sizeof why);
  if (!v) {
    cert_verdict(cx, ST_SKIP, "%s", why);
    return NULL;
  }
  size_t all = *n;
  *n = cert_keep_declared(cx, v, *n);
  if (*n == 0 && all > 0) {
    free(v);
    cert_verdict(cx, ST_SKIP, "every sample's %s", cx->cur.undeclared);
    return NULL;
  }
  return v;
}

/* An op outside core may refuse a generated sample (a layout or a value
 * it does not take) with a clean error: that sample is left out of the
 * check (cx->cur.nrefused, cx->cur.refusal).  A core op must take every
 * sample. */
bool cert_refused(cert_ctx *cx, const sample *s, const char *check) {
  char desc[300];
  cert_sample_desc(s, desc, sizeof desc);
  if (cx->cur.r >= 0) {
    cert_verdict(cx, ST_FAIL, "%s: the call on %s failed: %s", check, desc, bp_last_error());
    return false;
  }
  cx->cur.nrefused++;
  snprintf(cx->cur.refusal, sizeof cx->cur.refusal, "%s (sample %s)", bp_last_error(), desc);
  return true;
}

bool cert_all_refused(cert_ctx *cx, const certify_case *c, size_t nsamples) {
  if ((size_t)cx->cur.nrefused < nsamples) return false;
  cert_verdict(cx, ST_SKIP, "%s refused every generated sample: %s", c->op, cx->cur.refusal);
  return true;
}

bool cert_op_set_refuses(cert_ctx *cx, const argset *as) {
  if (cx->cur.r < 0) return false;
  bp_tensor_meta meta[4];
  for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  if (bp_op_meta(cx->cur.op, &as->st, meta, 4) == BP_OK) return false;
  bp_clear_error();
  return true;
}

int cert_call_on(cert_ctx *cx, const sample *s, int mode, argset *as, const char *check) {
  char desc[300];
  if (!cert_materialise(cx, s, &cx->cur.si, mode, as)) {
    cert_sample_desc(s, desc, sizeof desc);
    cert_verdict(cx, ST_FAIL, "%s: certifier error: cannot build the arguments of %s on %s: %s",
                 check, desc, cert_device_name(cx->put.device.type), bp_last_error());
    cert_argset_free(as);
    return 0;
  }
  if (cert_op_set_refuses(cx, as)) {
    cert_argset_free(as);
    return -1;
  }
  if (bp_call(cx->cur.op, &as->st) != BP_OK) {
    if (!cert_refused(cx, s, check)) {
      cert_argset_free(as);
      return 0;
    }
    cert_argset_free(as);
    return -1;
  }
  return 1;
}

bool cert_guard_ok(cert_ctx *cx, const char *check, const sample *s) {
  char msg[600], desc[300];
  if (!cert_alloc_guard_read(msg, sizeof msg)) return true;
  cert_sample_desc(s, desc, sizeof desc);
  cert_verdict(cx, ST_FAIL,
               "%s: %s: the plugin wrote outside memory it allocated through the host: %s", check,
               desc, msg);
  return false;
}
