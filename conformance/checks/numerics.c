/*
 * conformance/checks/numerics.c - core::OP/DTYPE/CLASS: the results of a
 * core op against the float64 reference, per dtype and sample class
 * (sample.h), each sample compared as docs/op-set.md says: bit for bit
 * for the ops that round once, within ulps for the elementwise functions,
 * within a tolerance that grows with the reduced length for the ops that
 * accumulate.  A sample the op set refuses (the meta function's verdict)
 * must be refused by the kernel too, with the same status and a message.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* How results of sample s of the current op must match, dt being the
 * result's dtype. */
static cmp_rule rule_for(cert_ctx *cx, const sample *s, int32_t dt, double rscale, double ascale) {
  cmp_rule r = {s->exact, s->zero_ties, 0, false, rscale, ascale, NULL};
  const core_ref *cr = &cert_core_refs[cx->cur.r];
  bool transcendental = (cr->kind == K_UNARY && !s->exact) ||
                        (cr->kind == K_BINARY && cr->sub == RB_POW);
  if (transcendental && dt_is_float(dt)) {
    r.ulps = dt == BP_FLOAT16 || dt == BP_BFLOAT16 ? 1 : 4;
    /* gelu's formula cancels in its tail, as C computes it */
    r.ulp_floor = cr->kind == K_UNARY && cr->sub == RU_GELU;
  }
  return r;
}

/* The kernel must refuse a sample that the op set refuses (status ms,
 * message mmsg); false after a verdict. */
static bool refuses_too(cert_ctx *cx, argset *as, bp_status ms, const char *mmsg,
                        const char *desc) {
  bp_clear_error();
  bp_status cs = bp_call(cx->cur.op, &as->st);
  if (cs == BP_OK) {
    bp_stack_release(&as->st);
    cert_verdict(cx, ST_FAIL,
                 "numerics: %s: the op set refuses it (%s: %s), but the kernel returned BP_OK",
                 desc, bp_status_str(ms), mmsg);
    return false;
  }
  if (cs != ms) {
    cert_verdict(cx, ST_FAIL,
                 "numerics: %s: the kernel failed with %s (%s), the op set says %s (%s)", desc,
                 bp_status_str(cs), bp_last_error(), bp_status_str(ms), mmsg);
    return false;
  }
  if (!*bp_last_error()) {
    cert_verdict(cx, ST_FAIL, "numerics: %s: the kernel failed with %s but no message", desc,
                 bp_status_str(cs));
    return false;
  }
  return true;
}

/* Whether the op takes dtype dt at all: its basic sample in dt passes the
 * meta function's dtype rules.  False after a SKIP verdict. */
static bool takes_dtype(cert_ctx *cx, const certify_case *c) {
  gen_opts o = cert_op_gen_opts(cx);
  size_t n;
  sample *v = cert_gen_core_set(cx->cur.r, c->dt, SK_BASIC, &o, &n);
  argset as;
  bool ok = true;
  if (n && cert_materialise(cx, &v[0], &cx->cur.si, M_PLAIN, &as)) {
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    if (bp_op_meta(cx->cur.op, &as.st, meta, 4) == BP_ERR_TYPE) {
      cert_verdict(cx, ST_SKIP, "%s does not take %s (%s)", c->op, dt_name(c->dt), bp_last_error());
      ok = false;
    }
  }
  cert_argset_free(&as);
  cert_sample_set_free(v, n);
  return ok;
}

/* The second result of an op that has one (topk's and sort's indices),
 * exactly: 1, or 0 after a verdict. */
static int second_ok(cert_ctx *cx, const sample *s, const bp_stack *st, const char *desc) {
  rt *want = cert_ref_core2(cx->cur.r, s);
  if (!want) return 1;
  char why[700];
  bp_tensor *res = NULL;
  cmp_rule exact = {.exact = true};
  int ret = 0;
  if (st->top < 2 || bp_stack_get_tensor(st, 1, &res) != BP_OK)
    cert_verdict(cx, ST_FAIL, "numerics: the call on %s returned no result #1", desc);
  else if (!cert_compare(res, want, &exact, why, sizeof why))
    cert_verdict(cx, ST_FAIL, "numerics: %s: result #1 (the indices): %s", desc, why);
  else
    ret = 1;
  rt_free(want);
  return ret;
}

/* One sample: 1 checked, 0 after a verdict, -1 refused as the op set says,
 * -2 left out (a result of a dtype the kernel does not declare). */
int cert_numerics_one(cert_ctx *cx, const certify_case *c, const sample *s) {
  char desc[400], why[700], mmsg[400];
  argset as;
  cert_sample_desc(s, desc, sizeof desc);
  if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as)) {
    cert_verdict(cx, ST_FAIL,
                 "numerics: certifier error: cannot build the arguments (%s) on %s: %s", desc,
                 cert_device_name(cx->put.device.type), bp_last_error());
    cert_argset_free(&as);
    return 0;
  }
  bp_tensor_meta meta[4];
  for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status ms = bp_op_meta(cx->cur.op, &as.st, meta, 4);
  if (ms != BP_OK) {
    snprintf(mmsg, sizeof mmsg, "%s", bp_last_error());
    bool ok = refuses_too(cx, &as, ms, mmsg, desc);
    cert_argset_free(&as);
    if (ok && !cert_guard_ok(cx, "numerics", s)) return 0;
    return ok ? -1 : 0;
  }
  if (cert_undeclared_result(cx, &as)) {
    cert_argset_free(&as);
    return -2;
  }
  double rscale, ascale;
  rt *slack = NULL;
  rt *want = cert_ref_core(cx->cur.r, s, &rscale, &ascale, &slack);
  cmp_rule rule = rule_for(cx, s, want ? want->dtype : c->dt, rscale, ascale);
  rule.slack = slack;
  int ret = 0;
  bp_tensor *res = NULL;
  if (bp_call(cx->cur.op, &as.st) != BP_OK)
    cert_verdict(cx, ST_FAIL, "numerics: the call on %s failed: %s", desc, bp_last_error());
  else if (!cert_in_reference_order(cx, s, &as.st, desc))
    ret = 0; /* a verdict was given */
  else if (as.st.top < 1 || bp_stack_get_tensor(&as.st, 0, &res) != BP_OK)
    cert_verdict(cx, ST_FAIL, "numerics: the call on %s returned no tensor", desc);
  else if (!want)
    cert_verdict(cx, ST_FAIL, "numerics: certifier error: no reference for %s", desc);
  else if (!cert_compare(res, want, &rule, why, sizeof why))
    cert_verdict(cx, ST_FAIL, "numerics: %s: %s", desc, why);
  else
    ret = second_ok(cx, s, &as.st, desc);
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  rt_free(want);
  rt_free(slack);
  if (ret && !cert_guard_ok(cx, "bounds", s)) ret = 0;
  (void)c;
  return ret;
}

void cert_case_numerics(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  if (!cert_declares(cx, c->dt)) {
    if (c->dt == BP_FLOAT32 && cx->put.info.op_set_version >= 1) {
      cert_verdict(cx, ST_FAIL,
                   "numerics: the plugin claims core op set %u, which needs float32, but the "
                   "kernel does not declare it",
                   cx->put.info.op_set_version);
      return;
    }
    cert_verdict(cx, ST_SKIP, "the kernel does not declare %s", dt_name(c->dt));
    return;
  }
  if (!takes_dtype(cx, c)) return;
  gen_opts o = cert_op_gen_opts(cx);
  size_t n, checked = 0, nrefused = 0, nexact = 0;
  sample *set = cert_gen_core_set(cx->cur.r, c->dt, c->sk, &o, &n);
  for (size_t i = 0; i < n; i++) {
    int got = cert_numerics_one(cx, c, &set[i]);
    if (got == 0) {
      cert_sample_set_free(set, n);
      return;
    }
    if (got == -1) nrefused++;
    else if (got > 0) checked++, nexact += set[i].exact || !dt_is_float(c->dt);
  }
  cert_sample_set_free(set, n);
  if (n == 0) {
    cert_verdict(cx, ST_SKIP, "no %s samples for %s", cert_sk_name[c->sk], c->op);
    return;
  }
  if (checked + nrefused == 0 && cx->cur.nundeclared > 0) {
    /* The host never sends the kernel these calls.  A plugin that claims
     * the core op set must serve float32 calls, results included. */
    if (c->dt == BP_FLOAT32 && c->sk == SK_BASIC && cx->put.info.op_set_version >= 1)
      cert_verdict(cx, ST_FAIL,
                   "numerics: the plugin claims core op set %u, which needs float32, but the "
                   "float32 call's %s",
                   cx->put.info.op_set_version, cx->cur.undeclared);
    else
      cert_verdict(cx, ST_SKIP, "every sample's %s", cx->cur.undeclared);
    return;
  }
  cert_verdict(cx, ST_PASS, "%zu samples match the float64 reference (%zu bit for bit)%s", checked,
               nexact, nrefused ? ", and the kernel refuses the ones the op set refuses" : "");
}
