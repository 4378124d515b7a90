/*
 * conformance/checks/bounds.c - core::OP/bounds: the kernel writes
 * nothing before or after its arguments (canaries).
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* core::OP/bounds: canaries before and after every tensor argument (an
 * as_strided view inside a larger allocation) survive the call. */
void case_bounds(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    int got = call_sample(c, sk, M_GUARD, &s, &as, "bounds");
    if (got == 0) return;
    if (got < 0) continue;
    bp_stack_release(&as.st);
    for (int i = 0; i < as.nmade; i++) {
      size_t len = 0;
      unsigned char *b = tensor_bytes(as.base[i], &len);
      if (!b) {
        verdict(ST_FAIL, "bounds: cannot read back argument %d: %s", as.made_arg[i],
                bp_last_error());
        return;
      }
      size_t item = (size_t)bp_tensor_get_view(as.base[i])->itemsize;
      size_t pre = CANARY * item, post = (size_t)(CANARY + as.span[i]) * item;
      int a = as.made_arg[i];
      for (size_t x = 0; x < pre; x++)
        if (b[x] != canary_byte(x)) {
          verdict(ST_FAIL,
                  "bounds: sample %s: the canary %zu byte(s) before argument %d '%s' was "
                  "overwritten",
                  sk_name[sk], pre - x, a, cx.cur.si.name[a]);
          free(b);
          return;
        }
      for (size_t x = post; x < len; x++)
        if (b[x] != canary_byte(x)) {
          verdict(ST_FAIL,
                  "bounds: sample %s: the canary after argument %d '%s' was overwritten (byte "
                  "+%zu past its last element)",
                  sk_name[sk], a, cx.cur.si.name[a], x - post);
          free(b);
          return;
        }
      free(b);
    }
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "canaries of %d elements before and after every argument intact", CANARY);
}
