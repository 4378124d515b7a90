/*
 * conformance/checks/process.c - process hygiene: a plugin leaves the
 * process as it found it.  process/load (in a fresh process) compares the
 * floating-point control state and every signal's disposition and the
 * signal mask after loading the plugin with the state before; OP/process
 * compares them after every call of the op, successful or failing, with
 * the state before the calls.  teardown.c checks the unload.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "../hoststate.h"
#include "../procstate.h"
#include "checks.h"

/* Compares the process state with fp0/sig0/hs0; false after a verdict
 * that starts with `what`. */
static bool unchanged(cert_ctx *cx, const fp_state *fp0, const sig_state *sig0,
                      const host_state *hs0, const char *what) {
  fp_state fp;
  sig_state sig;
  host_state hs;
  char why[400];
  cert_fp_state_get(&fp);
  if (!cert_fp_state_same(fp0, &fp, why, sizeof why)) {
    cert_verdict(cx, ST_FAIL, "process: %s changed the floating-point environment: %s", what, why);
    return false;
  }
  cert_sig_state_get(&sig);
  if (!cert_sig_state_same(sig0, &sig, why, sizeof why)) {
    cert_verdict(cx, ST_FAIL, "process: %s changed a signal's disposition: %s", what, why);
    return false;
  }
  cert_host_state_get(&hs, HS_NO_FDS);
  bool same = cert_host_state_same(hs0, &hs, HS_NO_FDS, why, sizeof why);
  cert_host_state_free(&hs);
  if (!same) {
    cert_verdict(cx, ST_FAIL, "process: %s changed the host process: %s", what, why);
    return false;
  }
  return true;
}

/* process/load: loading the plugin (its init and setup) leaves the FP
 * environment, the signal dispositions and the mask, the environment
 * variables, locale, working directory, umask, resource limits and CPU
 * affinity as they were. */
void cert_case_process_load(cert_ctx *cx, const certify_case *c) {
  (void)c;
  fp_state fp0;
  sig_state sig0;
  host_state hs0;
  cert_fp_state_get(&fp0);
  cert_sig_state_get(&sig0);
  cert_host_state_get(&hs0, HS_NO_FDS);
  bool ok = cert_load_plugin(cx) && cert_pick_device(cx) &&
            unchanged(cx, &fp0, &sig0, &hs0, "loading the plugin");
  cert_host_state_free(&hs0);
  if (!ok) return;
  cert_verdict(cx, ST_PASS,
               "loading the plugin leaves the floating-point environment, every signal's "
               "disposition and the mask, the environment variables, locale, working "
               "directory, umask, resource limits and CPU affinity as they were");
}

/* Calls the op on each sample of v and checks the state after each;
 * false after a verdict. */
static bool calls_leave_alone(cert_ctx *cx, sample *v, size_t n, const fp_state *fp0,
                              const sig_state *sig0, const host_state *hs0, size_t *ncalls) {
  for (size_t k = 0; k < n; k++) {
    argset as;
    char desc[300], what[400];
    if (!cert_materialise(cx, &v[k], &cx->cur.si, M_PLAIN, &as)) {
      cert_argset_free(&as);
      continue;
    }
    bp_status st = bp_call(cx->cur.op, &as.st);
    if (st == BP_OK) bp_stack_release(&as.st);
    cert_argset_free(&as);
    (*ncalls)++;
    snprintf(what, sizeof what, "a %s call on %s", st == BP_OK ? "successful" : "failing",
             cert_sample_desc(&v[k], desc, sizeof desc));
    if (!unchanged(cx, fp0, sig0, hs0, what) || !cert_guard_ok(cx, "bounds", &v[k])) return false;
  }
  return true;
}

/* OP/process: no call of the op, successful or failing, changes the FP
 * environment (rounding, flush to zero, denormals are zero, traps), a
 * signal's disposition or the signal mask. */
void cert_case_process(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  fp_state fp0;
  sig_state sig0;
  host_state hs0;
  size_t n, nb = 0, ncalls = 0;
  sample *set = cert_op_check_set(cx, &n), *bad = NULL;
  if (!set) return;
  cert_fp_state_get(&fp0);
  cert_sig_state_get(&sig0);
  cert_host_state_get(&hs0, HS_NO_FDS);
  bool ok = calls_leave_alone(cx, set, n, &fp0, &sig0, &hs0, &ncalls);
  if (ok && cx->cur.r >= 0) {
    gen_opts o = cert_op_gen_opts(cx);
    bad = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_BADSHAPE, &o, &nb);
    ok = calls_leave_alone(cx, bad, nb, &fp0, &sig0, &hs0, &ncalls);
  }
  cert_host_state_free(&hs0);
  cert_sample_set_free(set, n);
  cert_sample_set_free(bad, nb);
  if (!ok) return;
  cert_verdict(cx, ST_PASS,
               "%zu calls leave the floating-point environment, the signal dispositions and "
               "mask, the environment variables, locale, working directory, umask, resource "
               "limits and CPU affinity as they were",
               ncalls);
}
