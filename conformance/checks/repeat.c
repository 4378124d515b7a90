/*
 * conformance/checks/repeat.c - core::OP/repeatability: equal calls give
 * bitwise equal results.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Two calls of s: 1 when their results are bitwise equal, -1 when an op
 * outside core refused s, 0 after a verdict. */
static int repeat_one(cert_ctx *cx, const sample *s) {
  unsigned char *r[2] = {NULL, NULL};
  size_t len[2] = {0, 0};
  int got = 1;
  for (int t = 0; t < 2 && got > 0; t++) {
    argset as;
    got = cert_call_on(cx, s, M_PLAIN, &as, "repeatability");
    if (got <= 0) break;
    r[t] = cert_result_bytes(&as.st, &len[t]);
    bp_stack_release(&as.st);
    cert_argset_free(&as);
  }
  if (got <= 0) {
    free(r[0]);
    return got;
  }
  if (!cert_guard_ok(cx, "bounds", s)) {
    free(r[0]);
    free(r[1]);
    return 0;
  }
  long at = len[0] == len[1] ? cert_first_diff(r[0], r[1], len[0]) : 0;
  free(r[0]);
  free(r[1]);
  if (at < 0) return 1;
  char desc[300];
  cert_verdict(cx, ST_FAIL,
               "repeatability: %s: a second identical call gave a different result (byte "
               "%ld)",
               cert_sample_desc(s, desc, sizeof desc), at);
  return 0;
}

/* core::OP/repeatability: two calls on equal fresh arguments give
 * bitwise equal results, unless the op is declared nondeterministic; in
 * the full profile the large inputs too, where threaded paths split the
 * work. */
void cert_case_repeat(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  if (cx->cur.oi.flags & BP_OP_NONDETERMINISTIC) {
    cert_verdict(cx, ST_SKIP, "%s is declared nondeterministic (BP_OP_NONDETERMINISTIC)", c->op);
    return;
  }
  size_t n, nl = 0;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  for (size_t k = 0; k < n; k++)
    if (repeat_one(cx, &set[k]) == 0) {
      cert_sample_set_free(set, n);
      return;
    }
  cert_sample_set_free(set, n);
  if (cx->cur.r >= 0 && cx->opt.full) {
    gen_opts o = cert_op_gen_opts(cx);
    sample *large = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_LARGE, &o, &nl);
    nl = cert_keep_declared(cx, large, nl);
    for (size_t k = 0; k < nl; k++)
      if (repeat_one(cx, &large[k]) == 0) {
        cert_sample_set_free(large, nl);
        return;
      }
    cert_sample_set_free(large, nl);
  }
  if (cert_all_refused(cx, c, n + nl)) return;
  cert_verdict(cx, ST_PASS, "bitwise equal results from repeated calls on %zu samples", n + nl);
}
