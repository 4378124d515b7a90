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

/* core::OP/meta: every result agrees with bp_op_meta on the same
 * arguments: dtype, sizes, strides and device. */
void case_meta(const certify_case *c) {
  if (!op_setup(c)) return;
  if (!cx.cur.oi.has_meta) {
    verdict(ST_FAIL, "meta: %s has no meta function", c->op);
    return;
  }
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    char why[300];
    if (!get_sample(sk, &s, why, sizeof why)) {
      verdict(ST_SKIP, "%s", why);
      return;
    }
    if (!materialise(&s, &cx.cur.si, M_PLAIN, &as)) {
      verdict(ST_FAIL, "meta: cannot build sample %s: %s", sk_name[sk], bp_last_error());
      return;
    }
    size_t nret = cx.cur.si.nret ? (size_t)cx.cur.si.nret : 1;
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    if (bp_op_meta(cx.cur.op, &as.st, meta, nret) != BP_OK) {
      verdict(ST_FAIL, "meta: the meta function refused sample %s: %s", sk_name[sk],
              bp_last_error());
      return;
    }
    if (bp_call(cx.cur.op, &as.st) != BP_OK) {
      if (!refused(sk, "meta")) return;
      argset_free(&as);
      sample_free(&s);
      continue;
    }
    for (size_t i = 0; i < nret && i < as.st.top; i++) {
      bp_tensor *res;
      if (bp_stack_get_tensor(&as.st, (int64_t)i, &res) != BP_OK) continue;
      const bp_tensor_view *rv = bp_tensor_get_view(res);
      const bp_tensor_meta *m = &meta[i];
      char g1[96], g2[96], m1[96], m2[96];
      if (rv->dtype != m->dtype) {
        verdict(ST_FAIL, "meta: sample %s: result %zu has dtype %s, bp_op_meta says %s",
                sk_name[sk], i, dt_name(rv->dtype), dt_name(m->dtype));
        return;
      }
      if (rv->ndim != m->ndim ||
          (rv->ndim && (memcmp(rv->sizes, m->sizes, (size_t)rv->ndim * 8) != 0 ||
                        memcmp(rv->strides, m->strides, (size_t)rv->ndim * 8) != 0))) {
        verdict(ST_FAIL,
                "meta: sample %s: result %zu has sizes %s strides %s, bp_op_meta says sizes %s "
                "strides %s",
                sk_name[sk], i, shape_str(rv->ndim, rv->sizes, g1, 96),
                shape_str(rv->ndim, rv->strides, g2, 96), shape_str(m->ndim, m->sizes, m1, 96),
                shape_str(m->ndim, m->strides, m2, 96));
        return;
      }
      if (rv->device.type != m->device.type || rv->device.index != m->device.index) {
        verdict(ST_FAIL, "meta: sample %s: result %zu is on %s:%d, bp_op_meta says %s:%d",
                sk_name[sk], i, device_name(rv->device.type), rv->device.index,
                device_name(m->device.type), m->device.index);
        return;
      }
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "results agree with bp_op_meta (dtype, sizes, strides, device) on %d samples",
          NCHECK_SAMPLES - cx.cur.nrefused);
}

/* OP/generic: an op outside core without a meta function, in place of
 * its generic checks. */
void case_nometa(const certify_case *c) {
  (void)c;
  verdict(ST_SKIP, "no meta function: the generic checks need one to know the results");
}
