/*
 * conformance/checks/aliasing.c - core::OP/aliasing: a pointwise op's
 * `.out` form with `out` an argument of the call (an exact alias, as in
 * `x.add_(y)` and `add(x, y, out=x)`) gives the op's own result.
 *
 * The host hands a structured kernel the written tensor itself to fill
 * when its layout is the result's, and, for a pointwise op, even when it
 * is one of the kernel's inputs (docs/op-set.md, "The .out forms"): the
 * kernel must read element i of its inputs before it writes element i of
 * its result, and nothing else of them after.  A kernel that fills its
 * result in passes (a scaled copy of one operand, then the other added)
 * or clears it first passes every other check and fails this one.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Whether the op of core_refs[r] is pointwise: each result element comes
 * from the same element of each (broadcast) input. */
static bool pointwise(int r) {
  switch (cert_core_refs[r].kind) {
    case K_BINARY: case K_MULADD: case K_UNARY: case K_WHERE: case K_CAST: case K_COMPARE:
    case K_LOGICAL: case K_BOOL_UNARY: case K_MASKED_FILL: case K_CLAMP:
      return true;
    default:
      return false;
  }
}

/* One sample: the op's result, then its .out form with out = each tensor
 * argument that has the result's dtype and shape.  1 when all agree (or
 * none could alias), -1 when the sample is left out, 0 after a verdict. */
static int alias_one(cert_ctx *cx, const sample *s, const bp_op *out_op, const char *out_name,
                     const bp_op *inplace, const char *inplace_name, int *tried) {
  argset as;
  int got = cert_call_on(cx, s, M_PLAIN, &as, "aliasing");
  if (got <= 0) return got;
  size_t wlen = 0;
  unsigned char *want = cert_result_bytes(&as.st, &wlen);
  bp_tensor *r = NULL;
  bp_stack_get_tensor(&as.st, 0, &r);
  const bp_tensor_view *rv = r ? bp_tensor_get_view(r) : NULL;
  int32_t rdt = rv ? rv->dtype : BP_DTYPE_INVALID, rnd = rv ? rv->ndim : 0;
  int64_t rsz[BP_MAX_NDIM];
  for (int32_t d = 0; d < rnd; d++) rsz[d] = rv->sizes[d];
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  int result = 1;
  for (int j = 0; result == 1 && want && j < s->n; j++) {
    if (s->a[j].k != AK_TENSOR) continue;
    argset bs;
    if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &bs)) {
      cert_argset_free(&bs);
      break;
    }
    bp_tensor *t = NULL;
    for (int m = 0; m < bs.nmade; m++)
      if (bs.made_arg[m] == j) t = bs.made[m];
    const bp_tensor_view *tv = t ? bp_tensor_get_view(t) : NULL;
    bool same = tv && tv->dtype == rdt && tv->ndim == rnd;
    for (int32_t d = 0; same && d < rnd; d++) same = tv->sizes[d] == rsz[d];
    /* Contiguous, as the result is: the host then hands the kernel this
     * very tensor (another layout takes a fresh result and copy_). */
    same = same && (tv->flags & BP_VIEW_CONTIGUOUS);
    if (!same) {
      cert_argset_free(&bs);
      continue;
    }
    (*tried)++;
    /* self through the in-place form (add_: add.out has a kernel of its
     * own), any other argument through the .out form */
    /* every argument after self by name: a sample gives keyword-only ones
     * (add's alpha) in order, which bp_call takes and bp_call_kw does not */
    const char *kw[16];
    size_t nkw = 0;
    for (int i = 1; i < s->n && i < cx->cur.si.n && nkw < 15; i++) kw[nkw++] = cx->cur.si.name[i];
    kw[nkw++] = "out";
    const char *via = j == 0 && inplace ? inplace_name : out_name;
    bp_status st;
    if (j == 0 && inplace) {
      st = bp_call(inplace, &bs.st);
    } else {
      bp_stack_push_tensor(&bs.st, t);
      st = bp_call_kw(out_op, &bs.st, kw, nkw);
    }
    char desc[300];
    if (st != BP_OK) {
      cert_verdict(cx, ST_FAIL, "aliasing: %s: %s with out = argument #%d '%s' failed: %s",
                   cert_sample_desc(s, desc, sizeof desc), via, j, cx->cur.si.name[j],
                   bp_last_error());
      result = 0;
    } else {
      bp_stack_release(&bs.st);
      size_t glen = 0;
      unsigned char *g = cert_tensor_bytes(t, &glen);
      long at = g && glen == wlen ? cert_first_diff(g, want, wlen) : 0;
      if (at >= 0) {
        cert_verdict(cx, ST_FAIL,
                     "aliasing: %s: %s with out = argument #%d '%s' (which the host gives "
                     "a structured kernel to fill in place) differs from %s's result at byte %ld: "
                     "the kernel reads an input element after writing that element of its result",
                     cert_sample_desc(s, desc, sizeof desc), via, j, cx->cur.si.name[j],
                     cx->cur.oi.name, at);
        result = 0;
      }
      free(g);
    }
    cert_argset_free(&bs);
  }
  free(want);
  if (result == 1 && !cert_guard_ok(cx, "bounds", s)) result = 0;
  return result;
}

/* OP/aliasing: for an op that writes an argument, aliasing_written.c's
 * relations; else for a pointwise core op with an .out form, on the check
 * set. */
void cert_case_aliasing(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  /* An op that writes an argument (add.out, copy_, a vendor's axpy_):
   * what it writes, in every relation a caller can give it. */
  for (int i = 0; i < cx->cur.si.n; i++)
    if (cx->cur.si.mutated[i] && strncmp(cx->cur.si.type[i], "Tensor", 6) == 0 &&
        !strchr(cx->cur.si.type[i], '[')) {
      cert_written_aliasing(cx, c); /* aliasing_written.c */
      return;
    }
  if (cx->cur.r < 0) {
    cert_verdict(cx, ST_SKIP,
                 "%s writes no Tensor argument (Tensor(a!)): nothing a caller passes can "
                 "alias what it writes",
                 c->op);
    return;
  }
  if (!pointwise(cx->cur.r)) {
    cert_verdict(cx, ST_SKIP,
                 "%s is not a pointwise core op: its .out form is given a fresh result "
                 "when out is an argument",
                 c->op);
    return;
  }
  if (cx->cur.ki.kind != BP_KERNEL_STRUCTURED) {
    cert_verdict(cx, ST_SKIP,
                 "%s's kernel is not structured: the host computes its in-place and .out "
                 "forms into a fresh result, which copy_ writes in",
                 c->op);
    return;
  }
  char name[160], iname[160];
  const char *dot = strchr(c->op + 6, '.');
  snprintf(name, sizeof name, "%s%s", c->op, dot ? "_out" : ".out");
  int base = dot ? (int)(dot - c->op) : (int)strlen(c->op);
  snprintf(iname, sizeof iname, "%.*s_%s", base, c->op, dot ? dot : "");
  const bp_op *out_op = NULL, *inplace = NULL;
  if (bp_op_find(name, &out_op) != BP_OK) {
    bp_clear_error();
    cert_verdict(cx, ST_SKIP, "%s has no .out form in this host's op set", c->op);
    return;
  }
  if (bp_op_find(iname, &inplace) != BP_OK) bp_clear_error();
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  int tried = 0;
  for (size_t k = 0; k < n; k++)
    if (alias_one(cx, &set[k], out_op, name, inplace, iname, &tried) == 0) {
      cert_sample_set_free(set, n);
      return;
    }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  if (tried == 0) {
    cert_verdict(cx, ST_SKIP, "no sample has an argument of the result's dtype and shape");
    return;
  }
  cert_verdict(cx, ST_PASS, "%s%s%s with out = an argument gives %s's bits on %d calls", name,
               inplace ? " and " : "", inplace ? iname : "", c->op, tried);
}
