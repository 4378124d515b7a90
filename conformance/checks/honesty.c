/*
 * conformance/checks/honesty.c - core::OP/honesty: the kernel keeps to
 * its schema: it writes only to the arguments marked (a!), and its
 * results alias only what the schema declares.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Checks one call of sample s; false after a verdict. */
static bool honest(cert_ctx *cx, const sample *s, bool *skipped) {
  argset as;
  char desc[300];
  cert_sample_desc(s, desc, sizeof desc);
  *skipped = false;
  if (!cert_materialise(cx, s, &cx->cur.si, M_PROTECT, &as)) {
    cert_verdict(cx, ST_FAIL, "honesty: certifier error: cannot build %s: %s", desc,
                 bp_last_error());
    cert_argset_free(&as);
    return false;
  }
  if (cert_op_set_refuses(cx, &as)) {
    *skipped = true;
    cert_argset_free(&as);
    return true;
  }
  unsigned char *snap[8] = {NULL};
  size_t snaplen[8] = {0};
  for (int i = 0; i < as.nmade; i++)
    if (!cx->cur.si.mutated[as.made_arg[i]]) snap[i] = cert_tensor_bytes(as.made[i], &snaplen[i]);
  bool ok = true;
  if (bp_call(cx->cur.op, &as.st) != BP_OK) {
    ok = cert_refused(cx, s, "honesty");
    *skipped = ok;
    for (int i = 0; i < 8; i++) free(snap[i]);
    cert_argset_free(&as);
    return ok;
  }
  for (int i = 0; i < as.nmade && ok; i++) {
    if (!snap[i]) continue;
    size_t len = 0;
    unsigned char *now_bytes = cert_tensor_bytes(as.made[i], &len);
    long at = now_bytes && len == snaplen[i] ? cert_first_diff(snap[i], now_bytes, len) : 0;
    free(now_bytes);
    if (at >= 0) {
      int a = as.made_arg[i];
      cert_verdict(cx, ST_FAIL,
                   "honesty: %s: argument %d '%s' was modified (byte %ld), but the schema does not "
                   "declare it mutable",
                   desc, a, cx->cur.si.name[a], at);
      ok = false;
    }
  }
  for (int i = 0; i < 8; i++) free(snap[i]);
  for (size_t j = 0; j < as.st.top && ok; j++) {
    bp_tensor *res;
    if (bp_stack_get_tensor(&as.st, (int64_t)j, &res) != BP_OK) continue;
    char ra = j < 4 ? cx->cur.si.ret_alias[j] : 0;
    for (int i = 0; i < as.nmade && ok; i++) {
      int a = as.made_arg[i];
      bool declared = ra && cx->cur.si.alias[a] == ra;
      if (declared && cx->cur.si.mutated[a] && res != as.made[i] &&
          bp_tensor_get_view(res)->data != bp_tensor_get_view(as.made[i])->data) {
        cert_verdict(cx, ST_FAIL,
                     "honesty: %s: result %zu must be argument %d '%s' (declared %s), but the op "
                     "returned another tensor",
                     desc, j, a, cx->cur.si.name[a], cx->cur.si.type[a]);
        ok = false;
      } else if (!declared && cert_overlaps(res, as.made[i])) {
        cert_verdict(cx, ST_FAIL,
                     "honesty: %s: result %zu aliases argument %d '%s', which the schema does not "
                     "declare (no shared alias annotation)",
                     desc, j, a, cx->cur.si.name[a]);
        ok = false;
      }
    }
    for (size_t j2 = j + 1; j2 < as.st.top && ok; j2++) {
      bp_tensor *r2;
      if (bp_stack_get_tensor(&as.st, (int64_t)j2, &r2) != BP_OK) continue;
      if (cert_overlaps(res, r2) && !(ra && j2 < 4 && cx->cur.si.ret_alias[j2] == ra)) {
        cert_verdict(cx, ST_FAIL, "honesty: %s: results %zu and %zu alias each other", desc, j, j2);
        ok = false;
      }
    }
  }
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  return ok && cert_guard_ok(cx, "bounds", s);
}

/* core::OP/honesty: inputs the schema does not mark (a!) are unchanged
 * (byte compare; on host-visible memory also read-only pages, so the
 * faulting write is named, and guard pages right after them, so that a
 * read past the end faults), results alias inputs or each other only as
 * declared, and an (a!) argument that the op returns is returned. */
void cert_case_honesty(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  for (size_t k = 0; k < n; k++) {
    bool skipped;
    if (!honest(cx, &set[k], &skipped)) {
      cert_sample_set_free(set, n);
      return;
    }
  }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  if (cx->put.host_visible)
    cert_verdict(cx, ST_PASS,
                 "inputs unchanged on %zu samples (read-only pages and byte compare); "
                 "aliasing as declared",
                 n);
  else
    cert_verdict(cx, ST_PASS,
                 "inputs unchanged on %zu samples (byte compare; read-only pages skipped: "
                 "the device is not host-visible); aliasing as declared",
                 n);
}
