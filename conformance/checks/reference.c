/*
 * conformance/checks/reference.c - OP/reference: an op outside core that
 * has a composite (bp_op_def.composite, built on other ops through
 * host->call) has a reference for its kernel.  Each of the op's generic
 * samples (every layout, and a larger shape) runs through the plugin's
 * kernel and again through the composite, with the op's kernels for the
 * device disabled (bp_set_kernel_enabled), on equal fresh arguments; the
 * results must agree: integer and bool ones exactly, float ones within
 * eight times the op set's tolerance for their dtype (the two paths round
 * in different orders).  The composite runs on the same device, over the
 * plugin's kernels of other ops, which their own cases certify.
 *
 * An op without a composite gets a SKIP that says so: the certificate
 * then shows that its values were checked by nothing but its own
 * repeatability, and its meta, honesty, bounds, lifetime and aliasing
 * cases.
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

#define MAXR 8

/* The results of a call: each tensor's view (dtype, shape) and bytes. */
typedef struct results {
  size_t n;
  int32_t dtype[MAXR], ndim[MAXR];
  int64_t sizes[MAXR][BP_MAX_NDIM];
  unsigned char *bytes[MAXR];
  size_t len[MAXR];
} results;

static void results_take(results *r, bp_stack *st) {
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < st->top && r->n < MAXR; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(st, (int64_t)i, &t) != BP_OK) continue;
    const bp_tensor_view *v = bp_tensor_get_view(t);
    r->dtype[r->n] = v->dtype;
    r->ndim[r->n] = v->ndim;
    memcpy(r->sizes[r->n], v->sizes, (size_t)v->ndim * sizeof v->sizes[0]);
    r->bytes[r->n] = tensor_bytes(t, &r->len[r->n]);
    r->n++;
  }
  bp_stack_release(st);
}

static void results_free(results *r) {
  for (size_t i = 0; i < r->n; i++) free(r->bytes[i]);
}

static bool is_float_dt(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

/* Whether the kernel's results k agree with the composite's c; else what
 * differs, in why. */
static bool agree(const results *k, const results *c, char *why, size_t len) {
  if (k->n != c->n) {
    snprintf(why, len, "the kernel gives %zu tensor result(s), the composite %zu", k->n, c->n);
    return false;
  }
  for (size_t i = 0; i < k->n; i++) {
    char ks[80], cs[80];
    if (k->dtype[i] != c->dtype[i] || k->ndim[i] != c->ndim[i] ||
        memcmp(k->sizes[i], c->sizes[i], (size_t)k->ndim[i] * sizeof k->sizes[i][0]) != 0) {
      snprintf(why, len, "result %zu is %s%s from the kernel, %s%s from the composite", i,
               bp_dtype_name(k->dtype[i]), shape_str(k->ndim[i], k->sizes[i], ks, sizeof ks),
               bp_dtype_name(c->dtype[i]), shape_str(c->ndim[i], c->sizes[i], cs, sizeof cs));
      return false;
    }
    if (!k->bytes[i] || !c->bytes[i] || k->len[i] != c->len[i]) {
      snprintf(why, len, "certifier error: cannot read result %zu", i);
      return false;
    }
    size_t item = bp_dtype_size(k->dtype[i]), n = item ? k->len[i] / item : 0;
    bool fl = is_float_dt(k->dtype[i]);
    double rtol = 0, atol = 0;
    if (fl) dt_tolerance(k->dtype[i], &rtol, &atol);
    size_t bad = 0, worst = 0;
    double worst_excess = -1, wk = 0, wc = 0;
    for (size_t e = 0; e < n; e++) {
      const unsigned char *pk = k->bytes[i] + e * item, *pc = c->bytes[i] + e * item;
      if (!fl) {
        if (memcmp(pk, pc, item) == 0) continue;
        bad++;
        if (worst_excess < 0) worst_excess = 0, worst = e;
        continue;
      }
      double g = load_f(pk, k->dtype[i]), w = load_f(pc, k->dtype[i]);
      if ((g != g && w != w) || g == w) continue; /* both NaN, or equal */
      double excess = INFINITY;                   /* a NaN or an infinity against another value */
      if (g == g && w == w && !isinf(g) && !isinf(w)) {
        excess = fabs(g - w) - 8 * (atol + rtol * fabs(w));
        if (excess <= 0) continue;
      }
      bad++;
      if (excess > worst_excess) worst_excess = excess, worst = e, wk = g, wc = w;
    }
    if (bad) {
      if (fl)
        snprintf(why, len, "result %zu: %zu of %zu elements differ from the composite's; worst at "
                           "flat index %zu: the kernel gives %.9g, the composite %.9g (8x the "
                           "%s tolerance: rtol %g, atol %g)",
                 i, bad, n, worst, wk, wc, bp_dtype_name(k->dtype[i]), rtol, atol);
      else
        snprintf(why, len, "result %zu: %zu of %zu elements differ from the composite's, the "
                           "first at flat index %zu", i, bad, n, worst);
      return false;
    }
  }
  return true;
}

/* One sample through the kernel and through the composite: 1 when they
 * agree, -1 when either path refused the sample, 0 after a verdict. */
static int one(const sample *s, int32_t dev) {
  argset as;
  int got = call_on(s, M_PLAIN, &as, "reference");
  if (got <= 0) return got;
  results k, c;
  results_take(&k, &as.st);
  argset_free(&as);
  if (bp_set_kernel_enabled(cx.cur.op, dev, false) != BP_OK) {
    results_free(&k);
    verdict(ST_FAIL, "reference: certifier error: cannot disable %s's kernels for %s: %s",
            cx.cur.oi.name, device_name(dev), bp_last_error());
    return 0;
  }
  got = call_on(s, M_PLAIN, &as, "reference");
  bp_set_kernel_enabled(cx.cur.op, dev, true);
  if (got <= 0) {
    results_free(&k);
    return got;
  }
  results_take(&c, &as.st);
  argset_free(&as);
  char why[400], desc[300];
  bool ok = agree(&k, &c, why, sizeof why);
  results_free(&k);
  results_free(&c);
  if (ok) return 1;
  verdict(ST_FAIL, "reference: %s: the kernel and the op's composite disagree: %s",
          sample_desc(s, desc, sizeof desc), why);
  return 0;
}

void case_reference(const certify_case *c) {
  if (!op_setup(c)) return;
  if (!cx.cur.oi.has_composite) {
    verdict(ST_SKIP, "%s has no composite (bp_op_def.composite) to check its kernel against: its "
                     "values are checked only for repeatability, and its meta, honesty, bounds, "
                     "lifetime and aliasing by their cases",
            c->op);
    return;
  }
  size_t n;
  sample *set = op_check_set(&n);
  if (!set) return;
  size_t checked = 0;
  for (size_t k = 0; k < n; k++) {
    int r = one(&set[k], cx.put.device.type);
    if (r == 0) {
      sample_set_free(set, n);
      return;
    }
    checked += r > 0;
  }
  sample_set_free(set, n);
  if (all_refused(c, n)) return;
  verdict(ST_PASS, "the kernel agrees with the op's composite on %zu sample(s) (8x the op set's "
                   "tolerance)", checked);
}
