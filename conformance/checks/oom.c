/*
 * conformance/checks/oom.c - OP/oom: the op's kernel meets a host out of
 * memory.
 *
 * A kernel allocates through the host (its results, its temporaries, the
 * CPU device's storage), and in a real process any of those may fail.
 * For up to two of the op's samples, a call is made once to count the
 * host allocations it makes; then, for each N up to that count (at most
 * OOM_MAX), the call is made again with the Nth failing, alone and then
 * with every one after it (bp-certify links the host's objects and uses
 * the allocator's test controls, host/alloc.h).  Each such call must
 * either succeed with the same results, bit for bit, as the call with all
 * memory, or fail with BP_ERR_OUT_OF_MEMORY and a message; either way it
 * must leave no tensor and no device memory behind, and the next call with
 * memory must succeed.  A crash is a failure of the case, as everywhere.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "alloc.h"
#include "checks.h"

#define OOM_MAX 48 /* allocations swept per sample */

typedef struct baseline {
  unsigned char *bytes; /* the results with all memory (owned) */
  size_t len;
  long allocs;          /* host allocations one call makes */
  int64_t tensors, memory;
} baseline;

static int64_t device_memory(cert_ctx *cx) {
  int64_t b = 0;
  if (bp_device_memory_in_use(cx->put.device.type, &b) != BP_OK) b = 0;
  return b;
}

/* Makes the sample's arguments with all memory; false after a verdict. */
static bool args_for(cert_ctx *cx, const sample *s, argset *as) {
  bp__alloc_test_fail(0, false);
  if (cert_materialise(cx, s, &cx->cur.si, M_PLAIN, as)) return true;
  char desc[300];
  cert_verdict(cx, ST_FAIL, "oom: certifier error: cannot build the arguments of %s: %s",
               cert_sample_desc(s, desc, sizeof desc), bp_last_error());
  cert_argset_free(as);
  return false;
}

/* The call with all memory: 1 with b filled, -1 when the sample is left
 * out (refused), 0 after a verdict. */
static int measure(cert_ctx *cx, const sample *s, baseline *b) {
  argset as;
  if (!args_for(cx, s, &as)) return 0;
  if (cert_op_set_refuses(cx, &as)) {
    cert_argset_free(&as);
    return -1;
  }
  b->tensors = bp_live_tensor_count() - as.nmade;
  long first = bp__alloc_test_count();
  if (bp_call(cx->cur.op, &as.st) != BP_OK) {
    int r = cert_refused(cx, s, "oom") ? -1 : 0;
    cert_argset_free(&as);
    return r;
  }
  b->allocs = bp__alloc_test_count() - first;
  b->bytes = cert_result_bytes(&as.st, &b->len);
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  b->memory = device_memory(cx);
  return 1;
}

/* One call with the nth allocation failing (and all after it when
 * sticky); false after a verdict. */
static bool one(cert_ctx *cx, const sample *s, const baseline *b, long n, bool sticky) {
  argset as;
  if (!args_for(cx, s, &as)) return false;
  bp_clear_error();
  bp__alloc_test_fail(n, sticky);
  bp_status st = bp_call(cx->cur.op, &as.st);
  bp__alloc_test_fail(0, false);
  char desc[300], when[120], msg[400];
  cert_sample_desc(s, desc, sizeof desc);
  snprintf(when, sizeof when, "host allocation %ld of %ld%s failing", n, b->allocs,
           sticky ? " and every one after it" : "");
  snprintf(msg, sizeof msg, "%s", bp_last_error());
  bool okay = true;
  if (st == BP_OK) {
    size_t len = 0;
    unsigned char *got = cert_result_bytes(&as.st, &len);
    bp_stack_release(&as.st);
    long at = got && len == b->len ? cert_first_diff(got, b->bytes, len) : 0;
    free(got);
    if (at >= 0) {
      cert_verdict(cx, ST_FAIL,
                   "oom: %s, with %s: the call succeeded but its results differ from the "
                   "call with all memory (%s): the kernel went on past a failed allocation, "
                   "or its results depend on what memory held before the call",
                   desc, when, len != b->len ? "another size" : "a byte differs");
      okay = false;
    }
  } else if (st != BP_ERR_OUT_OF_MEMORY) {
    cert_verdict(cx, ST_FAIL,
                 "oom: %s, with %s: the call returned %s (%s), expected BP_ERR_OUT_OF_MEMORY "
                 "(a kernel passes on the status of the host call that failed)",
                 desc, when, bp_status_str(st), msg);
    okay = false;
  } else if (!*msg) {
    cert_verdict(cx, ST_FAIL,
                 "oom: %s, with %s: the call returned BP_ERR_OUT_OF_MEMORY with no message", desc,
                 when);
    okay = false;
  }
  cert_argset_free(&as);
  if (!okay) return false;
  int64_t tensors = bp_live_tensor_count(), memory = device_memory(cx);
  if (tensors != b->tensors || memory != b->memory) {
    cert_verdict(cx, ST_FAIL,
                 "oom: %s, with %s: the call (%s) left %lld tensor(s) and %lld byte(s) of "
                 "device memory behind",
                 desc, when, bp_status_str(st), (long long)(tensors - b->tensors),
                 (long long)(memory - b->memory));
    return false;
  }
  /* The next call with memory succeeds, with the same results. */
  if (!args_for(cx, s, &as)) return false;
  st = bp_call(cx->cur.op, &as.st);
  size_t len = 0;
  unsigned char *got = st == BP_OK ? cert_result_bytes(&as.st, &len) : NULL;
  if (st == BP_OK) bp_stack_release(&as.st);
  cert_argset_free(&as);
  bool same = st == BP_OK && got && len == b->len && cert_first_diff(got, b->bytes, len) < 0;
  free(got);
  if (!same) {
    if (st != BP_OK)
      cert_verdict(cx, ST_FAIL,
                   "oom: %s: after a call with %s, the next call with all memory fails: %s: %s",
                   desc, when, bp_status_str(st), bp_last_error());
    else
      cert_verdict(cx, ST_FAIL,
                   "oom: %s: after a call with %s, the next call with all memory gives other "
                   "results",
                   desc, when);
    return false;
  }
  return true;
}

void cert_case_oom(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  size_t swept = 0, calls = 0;
  long most = 0;
  for (size_t k = 0; k < n && swept < 2; k++) {
    baseline b = {0};
    int r = measure(cx, &set[k], &b);
    if (r == 0) {
      cert_sample_set_free(set, n);
      return;
    }
    if (r < 0) continue;
    long upto = b.allocs < OOM_MAX ? b.allocs : OOM_MAX;
    bool okay = true;
    for (int sticky = 0; okay && sticky < 2; sticky++)
      for (long i = 1; okay && i <= upto; i++, calls++) okay = one(cx, &set[k], &b, i, sticky);
    free(b.bytes);
    if (!okay) {
      cert_sample_set_free(set, n);
      return;
    }
    if (b.allocs > most) most = b.allocs;
    swept++;
  }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  if (swept == 0) {
    cert_verdict(cx, ST_SKIP, "no sample of %s could be called", c->op);
    return;
  }
  if (most == 0) {
    cert_verdict(cx, ST_PASS,
                 "the op's calls make no host allocation (%zu sample(s)): nothing to fail", swept);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "%zu call(s) with one of the host's allocations failing (up to %ld per call, "
               "alone and with all after it), on %zu sample(s): each gave the same results "
               "or BP_ERR_OUT_OF_MEMORY with a message, and left nothing behind",
               calls, most < OOM_MAX ? most : OOM_MAX, swept);
}
