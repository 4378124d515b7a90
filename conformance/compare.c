/*
 * conformance/compare.c - a result of numerics against the float64
 * reference: dtype, shape, then each element within the dtype's
 * tolerance (tests/cpu/num.c), scaled by the sample.
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

/* Compares a result (on any device) with the reference; writes a reason
 * into why and returns false on a mismatch: the mismatch count, the worst
 * element (index, got, expected) and the largest errors. */
bool compare(const bp_tensor *got, const rt *want, double rscale, double ascale, char *why,
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
    snprintf(why, whylen, "result shape %s, expected %s", shape_str(gv->ndim, gv->sizes, b1, 96),
             shape_str(want->ndim, want->sizes, b2, 96));
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
  rtol *= rscale;
  atol *= ascale;
  int64_t bad = 0, worst = -1;
  double max_abs = 0, max_rel = 0, worst_excess = -1, wg = 0, ww = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    const char *p = (const char *)hv->data + i * hv->itemsize;
    double g, w;
    if (dt_is_float(want->dtype)) {
      g = load_f(p, want->dtype), w = want->f[i];
      if (isnan(g) && isnan(w)) continue;
      if (g == w) continue;
      double d = fabs(g - w);
      if (d <= atol + rtol * fabs(w)) continue;
      double excess = isnan(d) ? INFINITY : d - (atol + rtol * fabs(w));
      if (d > max_abs || isnan(d)) max_abs = d;
      if (w != 0 && d / fabs(w) > max_rel) max_rel = d / fabs(w);
      if (excess > worst_excess) worst_excess = excess, worst = i, wg = g, ww = w;
    } else {
      int64_t gi = load_i(p, want->dtype);
      if (gi == want->i[i]) continue;
      double d = fabs((double)gi - (double)want->i[i]);
      if (d > max_abs) max_abs = d, worst = i, wg = (double)gi, ww = (double)want->i[i];
    }
    bad++;
  }
  bp_tensor_release(host);
  if (bad) {
    snprintf(why, whylen,
             "%lld of %lld elements mismatch; worst at flat index %lld: got %.9g, expected %.9g; "
             "max abs error %g, max rel error %g (rtol %g, atol %g)",
             (long long)bad, (long long)want->numel, (long long)worst, wg, ww, max_abs, max_rel,
             rtol, atol);
    return false;
  }
  return true;
}
