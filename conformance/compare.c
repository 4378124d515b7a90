/*
 * conformance/compare.c - a result of numerics against the float64
 * reference: dtype, shape, then each element within the dtype's
 * tolerance (conformance/ref/num.c), scaled by the sample.
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <backplane/host.h>

#include "devtensor.h"
#include "num.h"
#include "ref.h"
#include "sample.h"

/* Whether got and want (both floats of the result dtype) match under r. */
static bool float_match(const cmp_rule *r, int32_t dt, double g, double w, double rtol,
                        double atol, double slack, double *excess) {
  *excess = 0;
  if (isnan(g) && isnan(w)) return true;
  if (r->exact) {
    if (g != w) {
      *excess = isnan(g) || isnan(w) ? INFINITY : fabs(g - w);
      return false;
    }
    if (g == 0 && !r->zero_ties && signbit(g) != signbit(w)) {
      *excess = 0x1p-1074;
      return false;
    }
    return true;
  }
  if (g == w) return true;
  if (isinf(w) || isinf(g) || isnan(w) || isnan(g)) {
    /* An infinity or a NaN is matched exactly: no bound covers it. */
    *excess = INFINITY;
    return false;
  }
  double d = fabs(g - w), bound;
  if (r->ulps > 0) {
    bound = r->ulps * dt_ulp(dt, w);
    if (r->ulp_floor && atol > bound) bound = atol;
  } else {
    bound = atol + rtol * fabs(w) + slack;
  }
  if (d <= bound) return true;
  *excess = isnan(d) ? INFINITY : d - bound;
  return false;
}

/* Compares a result (on any device) with the reference under rule r;
 * writes a reason into why and returns false on a mismatch: the mismatch
 * count, the worst element (index, got, expected) and the bound. */
bool cert_compare(const bp_tensor *got, const rt *want, const cmp_rule *r, char *why,
                  size_t whylen) {
  const bp_tensor_view *gv = bp_tensor_get_view(got);
  char b1[96], b2[96];
  if (gv->dtype != want->dtype) {
    snprintf(why, whylen, "result dtype %s, expected %s", dt_name(gv->dtype),
             dt_name(want->dtype));
    return false;
  }
  if (gv->ndim != want->ndim ||
      (gv->ndim && memcmp(gv->sizes, want->sizes, (size_t)gv->ndim * sizeof(int64_t)) != 0)) {
    snprintf(why, whylen, "result shape %s, expected %s",
             cert_shape_str(gv->ndim, gv->sizes, b1, 96),
             cert_shape_str(want->ndim, want->sizes, b2, 96));
    return false;
  }
  bp_tensor *host = NULL;
  if (bp_tensor_empty(BP_CPU, gv->dtype, gv->ndim, gv->sizes, &host) != BP_OK ||
      bp_tensor_copy(host, got) != BP_OK) {
    snprintf(why, whylen, "cannot copy the result to the CPU: %s", bp_last_error());
    bp_tensor_release(host);
    return false;
  }
  const bp_tensor_view *hv = bp_tensor_get_view(host);
  double rtol, atol;
  dt_tolerance(want->dtype, &rtol, &atol);
  rtol *= r->rscale;
  atol *= r->ascale;
  int64_t bad = 0, worst = -1;
  double worst_excess = -1, wg = 0, ww = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    const char *p = (const char *)hv->data + i * hv->itemsize;
    double excess;
    if (dt_is_float(want->dtype)) {
      double g = load_f(p, want->dtype), w = want->f[i];
      double slack = r->slack ? r->slack->f[i] : 0;
      if (float_match(r, want->dtype, g, w, rtol, atol, slack, &excess)) continue;
      if (excess > worst_excess) worst_excess = excess, worst = i, wg = g, ww = w;
    } else {
      int64_t gi = load_i(p, want->dtype);
      if (gi == want->i[i]) continue;
      excess = fabs((double)gi - (double)want->i[i]);
      if (excess > worst_excess) worst_excess = excess, worst = i, wg = (double)gi,
                                 ww = (double)want->i[i];
    }
    bad++;
  }
  bp_tensor_release(host);
  if (!bad) return true;
  char rule[120];
  if (!dt_is_float(want->dtype) || r->exact)
    snprintf(rule, sizeof rule, "%s", dt_is_float(want->dtype)
                                          ? "bit-exact: the float64 result rounded once"
                                          : "exact");
  else if (r->ulps > 0)
    snprintf(rule, sizeof rule, "within %g ulp%s", r->ulps,
             r->ulp_floor ? " or the dtype's atol" : "");
  else if (r->slack)
    snprintf(rule, sizeof rule, "rtol %g, atol %g, and %g for the rounding of its terms", rtol,
             atol, r->slack->f[worst]);
  else
    snprintf(rule, sizeof rule, "rtol %g, atol %g", rtol, atol);
  snprintf(why, whylen,
           "%lld of %lld elements mismatch; worst at flat index %lld: got %.17g, expected %.17g "
           "(%s)",
           (long long)bad, (long long)want->numel, (long long)worst, wg, ww, rule);
  return false;
}
