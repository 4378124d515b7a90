/* conformance/ref/ref3.c - see ref.h: the reference of op set 2's layers
 * (conv2d, the pools, cat, linear, rms_norm, batch_norm), written from
 * docs/op-set.md as plain loops in float64, each result rounded once (to
 * the input's dtype) unless the op's definition rounds in between. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

int64_t ref_window_count(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1; /* where the last window may start */
  /* rounded down (up with ceil_mode), as a floor for a negative span: with
   * ceil_mode an input shorter than the kernel keeps the window that
   * starts on it */
  int64_t num = span + (ceil_mode ? s - 1 : 0);
  int64_t n = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  /* ceil_mode never starts a window in the end padding */
  if (ceil_mode && n > 0 && (n - 1) * s - p >= in) n--;
  return n < 0 ? 0 : n;
}

/* The sizes of a pooled or convolved result: x's leading dims (N, or
 * none for a 3-D x), c channels, then oh and ow. */
static rt *image_out(const rt *x, int32_t dt, int64_t c, int64_t oh, int64_t ow) {
  int64_t sizes[4];
  int32_t n = 0;
  if (x->ndim == 4) sizes[n++] = x->sizes[0];
  sizes[n++] = c;
  sizes[n++] = oh;
  sizes[n++] = ow;
  return rt_new(dt, n, sizes);
}

/* x's N (1 for a 3-D x), C, H and W. */
static void image_dims(const rt *x, int64_t *n, int64_t *c, int64_t *h, int64_t *w) {
  int32_t b = x->ndim - 3;
  *n = b ? x->sizes[0] : 1;
  *c = x->sizes[b];
  *h = x->sizes[b + 1];
  *w = x->sizes[b + 2];
}

/* A float64 rt of r's shape for the magnitudes of the terms of r's
 * elements, when terms is not NULL and `want`; else NULL. */
static rt *terms_for(const rt *r, rt **terms, bool want) {
  if (terms) *terms = want ? rt_new(BP_FLOAT64, r->ndim, r->sizes) : NULL;
  return terms ? *terms : NULL;
}

rt *ref_conv2d(const rt *x, const rt *w, const rt *b, const int64_t *stride,
               const int64_t *padding, const int64_t *dilation, int64_t groups, int64_t *k_out,
               rt **terms) {
  int64_t n, c, h, wd;
  image_dims(x, &n, &c, &h, &wd);
  int64_t o = w->sizes[0], cg = w->sizes[1], kh = w->sizes[2], kw = w->sizes[3];
  int64_t oh = ref_window_count(h, kh, stride[0], padding[0], dilation[0], false);
  int64_t ow = ref_window_count(wd, kw, stride[1], padding[1], dilation[1], false);
  rt *out = image_out(x, x->dtype, o, oh, ow), *mag = terms_for(out, terms, b != NULL);
  int64_t og = o / groups;
  *k_out = cg * kh * kw;
  for (int64_t in = 0; in < n; in++)
    for (int64_t oc = 0; oc < o; oc++) {
      int64_t c0 = oc / og * cg; /* the group's first input channel */
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double s = 0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t i = 0; i < kh; i++)
              for (int64_t j = 0; j < kw; j++) {
                /* the padding is zeros: it adds nothing */
                int64_t r = y * stride[0] - padding[0] + i * dilation[0];
                int64_t q = xx * stride[1] - padding[1] + j * dilation[1];
                if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                s += x->f[((in * c + c0 + ci) * h + r) * wd + q] *
                     w->f[((oc * cg + ci) * kh + i) * kw + j];
              }
          int64_t at = ((in * o + oc) * oh + y) * ow + xx;
          if (mag) mag->f[at] = fmax(fabs(s), fabs(b->f[oc]));
          if (b) s += b->f[oc];
          out->f[at] = round_to(x->dtype, s);
        }
    }
  return out;
}

rt *ref_max_pool2d(const rt *x, const int64_t *k, const int64_t *s, const int64_t *p,
                   const int64_t *d, bool ceil_mode) {
  int64_t n, c, h, w;
  image_dims(x, &n, &c, &h, &w);
  int64_t oh = ref_window_count(h, k[0], s[0], p[0], d[0], ceil_mode);
  int64_t ow = ref_window_count(w, k[1], s[1], p[1], d[1], ceil_mode);
  rt *out = image_out(x, x->dtype, c, oh, ow);
  bool fl = dt_is_float(x->dtype);
  int64_t idx = 0;
  for (int64_t plane = 0; plane < n * c; plane++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++, idx++) {
        /* the padding is the lowest value: it never wins, but a window
         * that holds nothing else gives it */
        double m = fl ? -INFINITY : (double)dt_min(x->dtype);
        int64_t mi = dt_min(x->dtype);
        for (int64_t i = 0; i < k[0]; i++)
          for (int64_t j = 0; j < k[1]; j++) {
            int64_t r = y * s[0] - p[0] + i * d[0], q = xx * s[1] - p[1] + j * d[1];
            if (r < 0 || r >= h || q < 0 || q >= w) continue;
            int64_t e = (plane * h + r) * w + q;
            if (fl && (isnan(x->f[e]) || isnan(m))) m = NAN; /* NaN propagates */
            else if (fl && x->f[e] > m) m = x->f[e];
            else if (!fl && x->i[e] > mi) mi = x->i[e];
          }
        if (fl) out->f[idx] = m;
        else out->i[idx] = mi;
      }
  return out;
}

rt *ref_avg_pool2d(const rt *x, const int64_t *k, const int64_t *s, const int64_t *p,
                   bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  int64_t n, c, h, w;
  image_dims(x, &n, &c, &h, &w);
  int64_t oh = ref_window_count(h, k[0], s[0], p[0], 1, ceil_mode);
  int64_t ow = ref_window_count(w, k[1], s[1], p[1], 1, ceil_mode);
  rt *out = image_out(x, x->dtype, c, oh, ow);
  int64_t idx = 0;
  for (int64_t plane = 0; plane < n * c; plane++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++, idx++) {
        /* the window, clipped to the padded input (the divisor with
         * count_include_pad), then to the input (the sum, and the divisor
         * without) */
        int64_t r0 = y * s[0] - p[0], q0 = xx * s[1] - p[1];
        int64_t r1 = r0 + k[0] < h + p[0] ? r0 + k[0] : h + p[0];
        int64_t q1 = q0 + k[1] < w + p[1] ? q0 + k[1] : w + p[1];
        int64_t padded = (r1 - r0) * (q1 - q0);
        r0 = r0 < 0 ? 0 : r0, q0 = q0 < 0 ? 0 : q0;
        r1 = r1 > h ? h : r1, q1 = q1 > w ? w : q1;
        double sum = 0;
        for (int64_t r = r0; r < r1; r++)
          for (int64_t q = q0; q < q1; q++) sum += x->f[(plane * h + r) * w + q];
        double div = divisor_override ? (double)divisor_override
                     : count_include_pad ? (double)padded
                                         : (double)((r1 - r0) * (q1 - q0));
        out->f[idx] = round_to(x->dtype, sum / div);
      }
  return out;
}

rt *ref_adaptive_avg_pool2d(const rt *x, const int64_t *out_size, int64_t *n_out) {
  int64_t n, c, h, w, oh = out_size[0], ow = out_size[1];
  image_dims(x, &n, &c, &h, &w);
  rt *out = image_out(x, x->dtype, c, oh, ow);
  int64_t idx = 0, most = 0;
  for (int64_t plane = 0; plane < n * c; plane++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++, idx++) {
        /* window i of n over s: [floor(i s / n), ceil((i + 1) s / n)) */
        int64_t r0 = y * h / oh, r1 = ((y + 1) * h + oh - 1) / oh;
        int64_t q0 = xx * w / ow, q1 = ((xx + 1) * w + ow - 1) / ow;
        double sum = 0;
        for (int64_t r = r0; r < r1; r++)
          for (int64_t q = q0; q < q1; q++) sum += x->f[(plane * h + r) * w + q];
        int64_t cnt = (r1 - r0) * (q1 - q0);
        if (cnt > most) most = cnt;
        out->f[idx] = round_to(x->dtype, sum / (double)cnt);
      }
  *n_out = most;
  return out;
}

rt *ref_cat(const rt *const *ts, int n, int64_t dim) {
  /* every tensor takes part in the promotion; a [0] one is skipped */
  int32_t dt = ts[0]->dtype;
  const rt *first = NULL;
  for (int i = 0; i < n; i++) {
    dt = dt_promote(dt, ts[i]->dtype);
    bool skipped = ts[i]->ndim == 1 && ts[i]->sizes[0] == 0;
    if (!first && !skipped) first = ts[i];
  }
  if (!first) {
    int64_t zero = 0;
    return rt_new(dt, 1, &zero);
  }
  int32_t nd = first->ndim, d = (int32_t)(dim < 0 ? dim + nd : dim);
  int64_t sizes[BP_MAX_NDIM];
  memcpy(sizes, first->sizes, (size_t)nd * sizeof *sizes);
  sizes[d] = 0;
  for (int i = 0; i < n; i++)
    if (!(ts[i]->ndim == 1 && ts[i]->sizes[0] == 0)) sizes[d] += ts[i]->sizes[d];
  rt *out = rt_new(dt, nd, sizes);
  int64_t outer = 1, inner = 1, pos = 0;
  for (int32_t j = 0; j < d; j++) outer *= sizes[j];
  for (int32_t j = d + 1; j < nd; j++) inner *= sizes[j];
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 1 && ts[i]->sizes[0] == 0) continue;
    rt *cv = ref_cast(ts[i], dt); /* converted as cast converts */
    int64_t len = ts[i]->sizes[d];
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < len * inner; j++) {
        int64_t src = o * len * inner + j, dst = (o * sizes[d] + pos) * inner + j;
        out->f[dst] = cv->f[src];
        out->i[dst] = cv->i[src];
      }
    pos += len;
    rt_free(cv);
  }
  return out;
}

rt *ref_linear(const rt *x, const rt *w, const rt *b, rt **terms) {
  int64_t in = w->sizes[1], o = w->sizes[0], sizes[BP_MAX_NDIM];
  memcpy(sizes, x->sizes, (size_t)x->ndim * sizeof *sizes);
  sizes[x->ndim - 1] = o;
  rt *out = rt_new(x->dtype, x->ndim, sizes), *mag = terms_for(out, terms, b != NULL);
  int64_t rows = 1;
  for (int32_t d = 0; d < x->ndim - 1; d++) rows *= x->sizes[d];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < o; j++) {
      double s = 0;
      for (int64_t q = 0; q < in; q++) s += x->f[r * in + q] * w->f[j * in + q];
      if (mag) mag->f[r * o + j] = fmax(fabs(s), fabs(b->f[j]));
      if (b) s += b->f[j];
      out->f[r * o + j] = round_to(x->dtype, s);
    }
  return out;
}

rt *ref_rms_norm(const rt *x, int32_t nnorm, const rt *w, double eps) {
  rt *out = rt_new(x->dtype, x->ndim, x->sizes);
  bool half = x->dtype == BP_FLOAT16 || x->dtype == BP_BFLOAT16;
  /* eps None: the machine epsilon of the computation's dtype (float32 for
   * the 16-bit floats) */
  if (isnan(eps)) eps = x->dtype == BP_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  int64_t len = 1;
  for (int32_t d = x->ndim - nnorm; d < x->ndim; d++) len *= x->sizes[d];
  if (len == 0) return out;
  for (int64_t r = 0; r < x->numel / len; r++) {
    const double *v = x->f + r * len;
    double ms = 0;
    for (int64_t j = 0; j < len; j++) ms += v[j] * v[j];
    double inv = 1 / sqrt(ms / (double)len + eps);
    for (int64_t j = 0; j < len; j++) {
      double y = v[j] * inv;
      /* a 16-bit float is cast back to its dtype before the weight */
      if (half && w) y = round_to(x->dtype, y);
      if (w) y *= w->f[j];
      out->f[r * len + j] = round_to(x->dtype, y);
    }
  }
  return out;
}

rt *ref_batch_norm(const rt *x, const rt *w, const rt *b, const rt *mean, const rt *var,
                   double eps, rt **terms) {
  rt *out = rt_new(x->dtype, x->ndim, x->sizes), *mag = terms_for(out, terms, true);
  int64_t c = x->sizes[1], inner = 1;
  for (int32_t d = 2; d < x->ndim; d++) inner *= x->sizes[d];
  for (int64_t k = 0; k < x->numel; k++) {
    int64_t ch = k / inner % c;
    double y = (x->f[k] - mean->f[ch]) / sqrt(var->f[ch] + eps);
    if (w) y *= w->f[ch];
    /* (the terms: the normalised value, and the bias) */
    if (mag) mag->f[k] = fmax(fabs(y), b ? fabs(b->f[ch]) : 0);
    if (b) y += b->f[ch];
    out->f[k] = round_to(x->dtype, y);
  }
  return out;
}
