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

/* core::OP/repeatability: two calls on equal fresh arguments give
 * bitwise equal results, unless the op is declared nondeterministic. */
void case_repeat(const certify_case *c) {
  if (!op_setup(c)) return;
  if (cx.cur.oi.flags & BP_OP_NONDETERMINISTIC) {
    verdict(ST_SKIP, "%s is declared nondeterministic (BP_OP_NONDETERMINISTIC)", c->op);
    return;
  }
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    unsigned char *r[2] = {NULL, NULL};
    size_t len[2];
    bool skip = false;
    for (int t = 0; t < 2 && !skip; t++) {
      sample s;
      argset as;
      rng_seed_name(c->name);
      int got = call_sample(c, sk, M_PLAIN, &s, &as, "repeatability");
      if (got == 0) return;
      if (got < 0) {
        skip = true;
        break;
      }
      r[t] = result_bytes(&as.st, &len[t]);
      bp_stack_release(&as.st);
      argset_free(&as);
      sample_free(&s);
    }
    if (skip) {
      free(r[0]);
      continue;
    }
    long at = len[0] == len[1] ? first_diff(r[0], r[1], len[0]) : 0;
    free(r[0]);
    free(r[1]);
    if (at >= 0) {
      verdict(ST_FAIL, "repeatability: sample %s: a second identical call gave a different "
                       "result (byte %ld)",
              sk_name[sk], at);
      return;
    }
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "bitwise equal results from repeated calls");
}
