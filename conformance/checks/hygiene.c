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

/* Live handles and device bytes now. */
static void usage_now(int64_t *live, int64_t *bytes, bool *have_bytes) {
  *live = bp_live_tensor_count();
  *have_bytes = bp_device_memory_in_use(cx.put.device.type, bytes) == BP_OK;
}

/* After a call of s (which failed when `failing`): false after a verdict
 * when handles or device bytes are not back where they were. */
static bool back(const sample *s, bool failing, int64_t live0, int64_t bytes0, bool have) {
  int64_t live1, bytes1;
  bool have1;
  char desc[300];
  usage_now(&live1, &bytes1, &have1);
  if (live1 == live0 && (!have || !have1 || bytes1 == bytes0)) return true;
  sample_desc(s, desc, sizeof desc);
  if (live1 != live0)
    verdict(ST_FAIL, "hygiene: %s: %lld tensor handle(s) leaked by a %s call (%lld live before, "
                     "%lld after)",
            desc, (long long)(live1 - live0), failing ? "failing" : "successful",
            (long long)live0, (long long)live1);
  else
    verdict(ST_FAIL, "hygiene: %s: %lld byte(s) of %s memory still held after a %s call (%lld "
                     "before, %lld after)",
            desc, (long long)(bytes1 - bytes0), device_name(cx.put.device.type),
            failing ? "failing" : "successful", (long long)bytes0, (long long)bytes1);
  return false;
}

/* The samples the op set refuses: each call must fail and still leave
 * nothing behind.  False after a verdict. */
static bool failing_calls(size_t *nfail) {
  gen_opts o = op_gen_opts();
  size_t n;
  sample *bad = gen_core_set(cx.cur.r, BP_FLOAT32, SK_BADSHAPE, &o, &n);
  for (size_t k = 0; k < n; k++) {
    int64_t live0, bytes0;
    bool have;
    usage_now(&live0, &bytes0, &have);
    argset as;
    if (!materialise(&bad[k], &cx.cur.si, M_PLAIN, &as)) {
      argset_free(&as);
      continue;
    }
    bp_status st = bp_call(cx.cur.op, &as.st);
    if (st == BP_OK) bp_stack_release(&as.st); /* the errors check says so */
    argset_free(&as);
    if (!back(&bad[k], st != BP_OK, live0, bytes0, have)) {
      sample_set_free(bad, n);
      return false;
    }
    *nfail += st != BP_OK;
  }
  sample_set_free(bad, n);
  return true;
}

/* core::OP/hygiene: live tensor handles, and the bytes their storages
 * hold on the device under test, are the same after each call, a
 * successful one or one that fails. */
void case_hygiene(const certify_case *c) {
  if (!op_setup(c)) return;
  size_t n, nfail = 0;
  sample *set = op_check_set(&n);
  if (!set) return;
  for (size_t k = 0; k < n; k++) {
    int64_t live0, bytes0;
    bool have;
    usage_now(&live0, &bytes0, &have);
    argset as;
    int got = call_on(&set[k], M_PLAIN, &as, "hygiene");
    if (got == 0) {
      sample_set_free(set, n);
      return;
    }
    if (got > 0) {
      bp_stack_release(&as.st);
      argset_free(&as);
    }
    if (!back(&set[k], got < 0, live0, bytes0, have) || !guard_ok("bounds", &set[k])) {
      sample_set_free(set, n);
      return;
    }
  }
  sample_set_free(set, n);
  if (cx.cur.r >= 0 && !failing_calls(&nfail)) return;
  if (all_refused(c, n)) return;
  verdict(ST_PASS, "no tensor handle leaked, and %s memory in use is back where it was, after %zu "
                   "calls and %zu failing ones",
          device_name(cx.put.device.type), n, nfail);
}
