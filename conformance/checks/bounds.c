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

/* Which bytes of a guarded argument's storage its elements are: the
 * canary must hold everywhere else, the gaps of a strided view too. */
static unsigned char *element_mask(const argset *as, int i, size_t len) {
  const bp_tensor_view *v = bp_tensor_get_view(as->made[i]);
  unsigned char *m = calloc(len ? len : 1, 1);
  if (!m) return NULL;
  size_t item = (size_t)v->itemsize;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < v->numel; k++) {
    int64_t off = as->pre[i];
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
    if (off >= 0 && (size_t)(off + 1) * item <= len) memset(m + (size_t)off * item, 1, item);
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return m;
}

/* Checks the canaries of every argument of a call of s; false after a
 * verdict. */
static bool canaries_intact(cert_ctx *cx, const argset *as, const sample *s) {
  char desc[300];
  for (int i = 0; i < as->nmade; i++) {
    size_t len = 0;
    unsigned char *b = cert_tensor_bytes(as->base[i], &len);
    unsigned char *m = b ? element_mask(as, i, len) : NULL;
    int a = as->made_arg[i];
    if (!b || !m) {
      cert_verdict(cx, ST_FAIL, "bounds: certifier error: cannot read back argument %d: %s", a,
                   bp_last_error());
      free(b);
      return false;
    }
    size_t item = (size_t)bp_tensor_get_view(as->base[i])->itemsize;
    size_t first = (size_t)as->pre[i] * item, last = (size_t)(as->pre[i] + as->span[i]) * item;
    for (size_t x = 0; x < len; x++) {
      if (m[x] || b[x] == cert_canary_byte(x)) continue;
      cert_sample_desc(s, desc, sizeof desc);
      if (x < first)
        cert_verdict(cx, ST_FAIL,
                     "bounds: %s: the kernel wrote %zu byte(s) before argument %d '%s'", desc,
                     first - x, a, cx->cur.si.name[a]);
      else if (x >= last)
        cert_verdict(cx, ST_FAIL,
                     "bounds: %s: the kernel wrote byte +%zu past the last element of "
                     "argument %d '%s'",
                     desc, x - last, a, cx->cur.si.name[a]);
      else
        cert_verdict(cx, ST_FAIL,
                     "bounds: %s: the kernel wrote between the elements of argument %d '%s' "
                     "(byte %zu of its storage, a gap of its strides)",
                     desc, a, cx->cur.si.name[a], x - first);
      free(b);
      free(m);
      return false;
    }
    free(b);
    free(m);
  }
  return true;
}

/* core::OP/bounds: canaries before and after every tensor argument (an
 * as_strided view inside a larger allocation), and in the gaps of a
 * strided one, survive the call; and so do the canaries that libbackplane
 * keeps around every block the kernel allocates through the host. */
void cert_case_bounds(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  for (size_t k = 0; k < n; k++) {
    argset as;
    int got = cert_call_on(cx, &set[k], M_GUARD, &as, "bounds");
    if (got == 0) {
      cert_sample_set_free(set, n);
      return;
    }
    if (got < 0) continue;
    bp_stack_release(&as.st);
    bool ok = canaries_intact(cx, &as, &set[k]);
    cert_argset_free(&as);
    if (!ok || !cert_guard_ok(cx, "bounds", &set[k])) {
      cert_sample_set_free(set, n);
      return;
    }
  }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  cert_verdict(cx, ST_PASS,
               "canaries of %d elements around every argument, in the gaps of strided ones, "
               "and around every block the kernel allocated, intact on %zu samples",
               CANARY, n);
}
