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

/* core::OP/honesty: inputs the schema does not mark (a!) are unchanged
 * (byte compare; on host-visible memory also read-only pages, so the
 * faulting write is named), results alias inputs or each other only as
 * declared, and an (a!) argument that the op returns is returned. */
void case_honesty(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    char why[300];
    if (!get_sample(sk, &s, why, sizeof why)) {
      verdict(ST_SKIP, "%s", why);
      return;
    }
    if (!materialise(&s, &cx.cur.si, M_PROTECT, &as)) {
      verdict(ST_FAIL, "honesty: cannot build sample %s: %s", sk_name[sk], bp_last_error());
      return;
    }
    unsigned char *snap[8] = {NULL};
    size_t snaplen[8] = {0};
    for (int i = 0; i < as.nmade; i++)
      if (!cx.cur.si.mutated[as.made_arg[i]]) snap[i] = tensor_bytes(as.made[i], &snaplen[i]);
    if (bp_call(cx.cur.op, &as.st) != BP_OK) {
      if (!refused(sk, "honesty")) return;
      for (int i = 0; i < 8; i++) free(snap[i]);
      argset_free(&as);
      sample_free(&s);
      continue;
    }
    for (int i = 0; i < as.nmade; i++) {
      if (!snap[i]) continue;
      size_t len = 0;
      unsigned char *now_bytes = tensor_bytes(as.made[i], &len);
      long at = now_bytes && len == snaplen[i] ? first_diff(snap[i], now_bytes, len) : 0;
      free(now_bytes);
      free(snap[i]);
      snap[i] = NULL;
      if (at >= 0) {
        int a = as.made_arg[i];
        verdict(ST_FAIL,
                "honesty: sample %s: argument %d '%s' was modified (byte %ld), but the schema "
                "does not declare it mutable",
                sk_name[sk], a, cx.cur.si.name[a], at);
        return;
      }
    }
    for (size_t j = 0; j < as.st.top; j++) {
      bp_tensor *res;
      if (bp_stack_get_tensor(&as.st, (int64_t)j, &res) != BP_OK) continue;
      char ra = j < 4 ? cx.cur.si.ret_alias[j] : 0;
      for (int i = 0; i < as.nmade; i++) {
        int a = as.made_arg[i];
        bool declared = ra && cx.cur.si.alias[a] == ra;
        if (declared && cx.cur.si.mutated[a] && res != as.made[i] &&
            bp_tensor_get_view(res)->data != bp_tensor_get_view(as.made[i])->data) {
          verdict(ST_FAIL,
                  "honesty: sample %s: result %zu must be argument %d '%s' (declared %s), but "
                  "the op returned another tensor",
                  sk_name[sk], j, a, cx.cur.si.name[a], cx.cur.si.type[a]);
          return;
        }
        if (!declared && overlaps(res, as.made[i])) {
          verdict(ST_FAIL,
                  "honesty: sample %s: result %zu aliases argument %d '%s', which the schema "
                  "does not declare (no shared alias annotation)",
                  sk_name[sk], j, a, cx.cur.si.name[a]);
          return;
        }
      }
      for (size_t j2 = j + 1; j2 < as.st.top; j2++) {
        bp_tensor *r2;
        if (bp_stack_get_tensor(&as.st, (int64_t)j2, &r2) != BP_OK) continue;
        if (overlaps(res, r2) && !(ra && j2 < 4 && cx.cur.si.ret_alias[j2] == ra)) {
          verdict(ST_FAIL, "honesty: sample %s: results %zu and %zu alias each other", sk_name[sk],
                  j, j2);
          return;
        }
      }
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  if (cx.put.host_visible)
    verdict(ST_PASS, "inputs unchanged (read-only pages and byte compare); aliasing as declared");
  else
    verdict(ST_PASS, "inputs unchanged (byte compare; read-only pages skipped: the device is not "
                     "host-visible); aliasing as declared");
}
