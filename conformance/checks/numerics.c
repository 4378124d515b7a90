/*
 * conformance/checks/numerics.c - core::OP/DTYPE/SAMPLE: the results of
 * a core op against the float64 reference, per dtype and sample kind.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* core::OP/DTYPE/SAMPLE: numerics against the float64 reference. */
void case_numerics(const certify_case *c) {
  if (!op_setup(c)) return;
  if (!declares(c->dt)) {
    if (c->dt == BP_FLOAT32 && cx.put.info.op_set_version >= 1) {
      verdict(ST_FAIL, "numerics: the plugin claims core op set %u, which needs float32, but the "
                       "kernel does not declare it",
              cx.put.info.op_set_version);
      return;
    }
    verdict(ST_SKIP, "the kernel does not declare %s", dt_name(c->dt));
    return;
  }
  int nvar = c->sk == SK_SHAPES ? SHAPE_VARIANTS : 1, checked = 0;
  for (int v = 0; v < nvar; v++) {
    sample s;
    argset as;
    char desc[300], why[600];
    gen_core(cx.cur.r, c->dt, c->sk, v, &s);
    sample_desc(&s, desc, sizeof desc);
    if (!materialise(&s, &cx.cur.si, M_PLAIN, &as)) {
      verdict(ST_FAIL, "cannot build the arguments (%s) on %s: %s", desc,
              device_name(cx.put.device.type), bp_last_error());
      return;
    }
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    bp_status ms = bp_op_meta(cx.cur.op, &as.st, meta, 1);
    if (ms == BP_ERR_TYPE && v == 0) {
      verdict(ST_SKIP, "%s does not take %s (%s)", c->op, dt_name(c->dt), bp_last_error());
      /* A worker goes on after a skip: nothing may stay behind. */
      argset_free(&as);
      sample_free(&s);
      return;
    }
    if (ms == BP_ERR_SHAPE && c->sk == SK_EMPTY && core_refs[cx.cur.r].kind == K_ARGMAX) {
      /* The op set: argmax of nothing fails with BP_ERR_SHAPE. */
      bp_status cs = bp_call(cx.cur.op, &as.st);
      if (cs != BP_ERR_SHAPE) {
        verdict(ST_FAIL, "numerics: argmax of an empty tensor (%s) gave %s, expected BP_ERR_SHAPE",
                desc, bp_status_str(cs));
        return;
      }
      verdict(ST_PASS, "refuses an empty input with BP_ERR_SHAPE, as the op set says");
      argset_free(&as);
      sample_free(&s);
      return;
    }
    if (ms != BP_OK) {
      verdict(ST_FAIL, "the meta function refused the sample %s: %s", desc, bp_last_error());
      return;
    }
    double rscale, ascale;
    rt *want = ref_core(cx.cur.r, &s, &rscale, &ascale);
    if (bp_call(cx.cur.op, &as.st) != BP_OK) {
      verdict(ST_FAIL, "numerics: the call on %s failed: %s", desc, bp_last_error());
      return;
    }
    bp_tensor *res = NULL;
    if (as.st.top < 1 || bp_stack_get_tensor(&as.st, 0, &res) != BP_OK) {
      verdict(ST_FAIL, "numerics: the call on %s returned no tensor", desc);
      return;
    }
    if (!compare(res, want, rscale, ascale, why, sizeof why)) {
      verdict(ST_FAIL, "numerics: %s: %s", desc, why);
      return;
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    rt_free(want);
    sample_free(&s);
    checked++;
  }
  double rtol, atol;
  dt_tolerance(c->dt, &rtol, &atol);
  verdict(ST_PASS, "%d sample(s) match the float64 reference (rtol %g, atol %g)", checked, rtol,
          atol);
}
