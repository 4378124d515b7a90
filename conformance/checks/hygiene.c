/*
 * conformance/checks/hygiene.c - core::OP/hygiene: a call leaks no
 * tensor handle and no device memory.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* core::OP/hygiene: live tensor handles, and the bytes their storages
 * hold on the device under test, are the same after each call. */
void case_hygiene(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    int64_t live0 = bp_live_tensor_count(), bytes0 = 0, bytes1 = 0;
    bool have_bytes = bp_device_memory_in_use(cx.put.device.type, &bytes0) == BP_OK;
    int got = call_sample(c, sk, M_PLAIN, &s, &as, "hygiene");
    if (got == 0) return;
    if (got < 0) continue;
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
    int64_t live1 = bp_live_tensor_count();
    if (live1 != live0) {
      verdict(ST_FAIL, "hygiene: sample %s: %lld tensor handle(s) leaked (%lld live before the "
                       "case, %lld after)",
              sk_name[sk], (long long)(live1 - live0), (long long)live0, (long long)live1);
      return;
    }
    if (have_bytes && bp_device_memory_in_use(cx.put.device.type, &bytes1) == BP_OK &&
        bytes1 != bytes0) {
      verdict(ST_FAIL, "hygiene: sample %s: %lld byte(s) of %s memory still held after the "
                       "case (%lld before, %lld after)",
              sk_name[sk], (long long)(bytes1 - bytes0), device_name(cx.put.device.type),
              (long long)bytes0, (long long)bytes1);
      return;
    }
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "no tensor handle leaked, and %s memory in use is back where it was",
          device_name(cx.put.device.type));
}
