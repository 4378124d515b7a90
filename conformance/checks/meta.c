/*
 * conformance/checks/meta.c - core::OP/meta: results agree with the op's
 * meta function; OP/generic: an op outside core without one.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Compares the results on as->st with meta[]; false after a verdict. */
static bool agrees(cert_ctx *cx, const argset *as, const bp_tensor_meta *meta, size_t nret,
                   const char *desc) {
  for (size_t i = 0; i < nret && i < as->st.top; i++) {
    bp_tensor *res;
    if (bp_stack_get_tensor(&as->st, (int64_t)i, &res) != BP_OK) continue;
    const bp_tensor_view *rv = bp_tensor_get_view(res);
    const bp_tensor_meta *m = &meta[i];
    char g1[96], g2[96], m1[96], m2[96];
    if (rv->dtype != m->dtype) {
      cert_verdict(cx, ST_FAIL, "meta: %s: result %zu has dtype %s, bp_op_meta says %s", desc, i,
                   dt_name(rv->dtype), dt_name(m->dtype));
      return false;
    }
    if (rv->ndim != m->ndim ||
        (rv->ndim && (memcmp(rv->sizes, m->sizes, (size_t)rv->ndim * 8) != 0 ||
                      memcmp(rv->strides, m->strides, (size_t)rv->ndim * 8) != 0))) {
      cert_verdict(
          cx, ST_FAIL,
          "meta: %s: result %zu has sizes %s strides %s, bp_op_meta says sizes %s strides %s", desc,
          i, cert_shape_str(rv->ndim, rv->sizes, g1, 96),
          cert_shape_str(rv->ndim, rv->strides, g2, 96), cert_shape_str(m->ndim, m->sizes, m1, 96),
          cert_shape_str(m->ndim, m->strides, m2, 96));
      return false;
    }
    if (rv->device.type != m->device.type || rv->device.index != m->device.index) {
      cert_verdict(cx, ST_FAIL, "meta: %s: result %zu is on %s:%d, bp_op_meta says %s:%d", desc, i,
                   cert_device_name(rv->device.type), rv->device.index,
                   cert_device_name(m->device.type), m->device.index);
      return false;
    }
  }
  return true;
}

/* core::OP/meta: every result agrees with bp_op_meta on the same
 * arguments: dtype, sizes, strides and device. */
void cert_case_meta(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  if (!cx->cur.oi.has_meta) {
    cert_verdict(cx, ST_FAIL, "meta: %s has no meta function", c->op);
    return;
  }
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  for (size_t k = 0; k < n; k++) {
    const sample *s = &set[k];
    argset as;
    char desc[300];
    cert_sample_desc(s, desc, sizeof desc);
    if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as)) {
      cert_verdict(cx, ST_FAIL, "meta: certifier error: cannot build %s: %s", desc,
                   bp_last_error());
      cert_argset_free(&as);
      cert_sample_set_free(set, n);
      return;
    }
    size_t nret = cx->cur.si.nret ? (size_t)cx->cur.si.nret : 1;
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    if (bp_op_meta(cx->cur.op, &as.st, meta, nret) != BP_OK) {
      /* The op set refuses it: the errors check holds the kernel to that. */
      cert_argset_free(&as);
      cx->cur.nrefused++;
      snprintf(cx->cur.refusal, sizeof cx->cur.refusal, "%s (sample %s)", bp_last_error(), desc);
      continue;
    }
    if (bp_call(cx->cur.op, &as.st) != BP_OK) {
      bool ok = cert_refused(cx, s, "meta");
      cert_argset_free(&as);
      if (!ok) {
        cert_sample_set_free(set, n);
        return;
      }
      continue;
    }
    bool ok = agrees(cx, &as, meta, nret, desc);
    bp_stack_release(&as.st);
    cert_argset_free(&as);
    if (!ok || !cert_guard_ok(cx, "bounds", s)) {
      cert_sample_set_free(set, n);
      return;
    }
  }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  cert_verdict(cx, ST_PASS,
               "results agree with bp_op_meta (dtype, sizes, strides, device) on %zu samples",
               n - (size_t)cx->cur.nrefused);
}

/* OP/generic: an op outside core without a meta function, in place of
 * its generic checks. */
void cert_case_nometa(cert_ctx *cx, const certify_case *c) {
  (void)c;
  cert_verdict(cx, ST_SKIP, "no meta function: the generic checks need one to know the results");
}
