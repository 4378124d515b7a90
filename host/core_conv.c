/*
 * host/core_conv.c - the convolution and pooling ops of op set 2: conv2d,
 * max_pool2d, avg_pool2d and adaptive_avg_pool2d, with their meta
 * functions and host composites.
 *
 * The composites work on views: the input is padded (a new tensor filled
 * with the padding value, the input copied into its interior), and the
 * windows of the padded input are one as_strided view [N, C, OH, OW, KH,
 * KW].  Pooling reduces the view over its last two dims (amax, sum);
 * conv2d makes each group's view contiguous (im2col) and multiplies it by
 * the group's weight with matmul.  A plugin with kernels of its own for
 * them gets the calls instead (docs/op-set.md, "Host composites").
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <math.h>
#include <stdlib.h>

/* A 2-D geometry: kernel, stride, padding, dilation, input and output. */
typedef struct geo2 {
  int64_t k[2], s[2], p[2], d[2];
  int64_t in[2], out[2];
  int64_t pad_end[2]; /* padding after the input (more than p with ceil_mode) */
} geo2;

/* int[2] argument i: two values, or one for both; `dflt` (may be NULL) for
 * an empty list. */
static bp_status pair(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                      const int64_t *dflt, int64_t lo, int64_t *out) {
  const bp_value *v = &args[i];
  if (v->len == 0 && dflt) {
    out[0] = dflt[0], out[1] = dflt[1];
  } else if (v->len == 1 || v->len == 2) {
    out[0] = v->u.ints[0];
    out[1] = v->u.ints[v->len - 1];
  } else {
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%zu '%s' has %u values; expected 2 "
                     "(or 1 for both)", ctx->op_name, i, an(ctx, i), (unsigned)v->len);
  }
  for (int j = 0; j < 2; j++)
    if (out[j] < lo)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%zu '%s' is [%lld, %lld]; each "
                       "value must be at least %lld", ctx->op_name, i, an(ctx, i),
                       (long long)out[0], (long long)out[1], (long long)lo);
  return BP_OK;
}

/* The error of a window geometry whose sizes do not fit in int64. */
static bp_status overflowed(const bp_kernel_ctx *ctx, const geo2 *g, int j) {
  return bp__error(BP_ERR_OVERFLOW, "%s: the window geometry of the %s overflows int64 (input "
                   "%lld, kernel_size %lld, stride %lld, padding %lld, dilation %lld)",
                   ctx->op_name, j ? "width" : "height", (long long)g->in[j], (long long)g->k[j],
                   (long long)g->s[j], (long long)g->p[j], (long long)g->d[j]);
}

/* Output sizes of a window geometry (PyTorch's formula, ceil_mode
 * included: the quotient rounded down, or up with ceil_mode, and a last
 * window that would start in the end padding dropped; with ceil_mode an
 * input shorter than the kernel still has the window that starts on it). */
static bp_status outputs(const bp_kernel_ctx *ctx, geo2 *g, bool ceil_mode) {
  for (int j = 0; j < 2; j++) {
    /* k, s, d >= 1 and p >= 0 (pair()); sums of arguments near INT64_MAX
     * are refused rather than wrapped. */
    int64_t ext, span, o, last, reach, end;
    if (__builtin_mul_overflow(g->d[j], g->k[j] - 1, &ext) || __builtin_add_overflow(ext, 1, &ext) ||
        __builtin_mul_overflow(g->p[j], 2, &span) || __builtin_add_overflow(span, g->in[j], &span) ||
        __builtin_sub_overflow(span, ext, &span))
      return overflowed(ctx, g, j);
    /* span / s rounded down, or up with ceil_mode (C's division truncates
     * towards 0) */
    int64_t q = span / g->s[j], r = span % g->s[j];
    if (r != 0 && span < 0 && !ceil_mode) q--;
    if (r != 0 && span > 0 && ceil_mode) q++;
    if (__builtin_add_overflow(q, 1, &o)) return overflowed(ctx, g, j);
    if (ceil_mode && o > 0 && !__builtin_add_overflow(g->in[j], g->p[j], &end) &&
        (__builtin_mul_overflow(o - 1, g->s[j], &last) || last >= end))
      o--;
    if (o < 1)
      return bp__error(BP_ERR_SHAPE, "%s: the input's %s of %lld with padding %lld is smaller "
                       "than the kernel's extent %lld: the output would be empty",
                       ctx->op_name, j ? "width" : "height", (long long)g->in[j],
                       (long long)g->p[j], (long long)ext);
    g->out[j] = o;
    /* the end padding the last window reaches */
    if (__builtin_mul_overflow(o - 1, g->s[j], &reach) || __builtin_add_overflow(reach, ext, &reach))
      return overflowed(ctx, g, j);
    g->pad_end[j] = reach - g->in[j] - g->p[j] > g->p[j] ? reach - g->in[j] - g->p[j] : g->p[j];
  }
  return BP_OK;
}

/* An input of 3 ([C, H, W]) or 4 ([N, C, H, W]) dims. */
static bp_status image(const bp_kernel_ctx *ctx, const bp_tensor_view *x, size_t i) {
  char s1[160];
  if (x->ndim != 3 && x->ndim != 4)
    return bp__error(BP_ERR_SHAPE, "%s: argument #%zu '%s' has shape %s; expected [N, C, H, W] "
                     "or [C, H, W]", ctx->op_name, i, an(ctx, i),
                     shape_str(x->ndim, x->sizes, s1, sizeof s1));
  return BP_OK;
}

/* x as 4-D (a view of a 3-D x with N = 1), a new reference. */
static bp_status as4d(bp_tensor *x, bp_tensor **out) {
  const bp_tensor_view *v = &x->view;
  if (v->ndim == 4) {
    *out = bp_tensor_retain(x);
    return BP_OK;
  }
  int64_t sizes[4] = {1, v->sizes[0], v->sizes[1], v->sizes[2]};
  int64_t strides[4] = {0, v->strides[0], v->strides[1], v->strides[2]};
  return bp_tensor_as_strided(x, 4, sizes, strides, v->storage_offset, out);
}

/* x [N, C, H, W] padded by p before and pad_end after, with `fill`
 * (a new tensor; x itself, retained, without padding). */
static bp_status padded(const bp_kernel_ctx *ctx, bp_tensor *x, const geo2 *g, double fill,
                        bp_tensor **out) {
  const bp_tensor_view *v = &x->view;
  if (!g->p[0] && !g->p[1] && !g->pad_end[0] && !g->pad_end[1]) {
    *out = bp_tensor_retain(x);
    return BP_OK;
  }
  int64_t sizes[4] = {v->sizes[0], v->sizes[1], v->sizes[2] + g->p[0] + g->pad_end[0],
                      v->sizes[3] + g->p[1] + g->pad_end[1]};
  bp_tensor *p = NULL, *in = NULL, *r = NULL;
  char shape[160], what[192];
  snprintf(what, sizeof what, "the input padded to %s",
           bp__shape_str(4, sizes, shape, sizeof shape));
  bp_status st = bp__core_alloc(ctx, what, v->device, v->dtype, 4, sizes, &p);
  bp_value f[1] = {fv(fill)};
  if (!st) st = bp__core_step("core::fill_", &p, f, 1);
  if (!st) {
    const bp_tensor_view *pv = &p->view;
    st = bp_tensor_as_strided(p, 4, v->sizes, pv->strides,
                              g->p[0] * pv->strides[2] + g->p[1] * pv->strides[3], &in);
  }
  bp_value c[2] = {tv(in), tv(x)};
  if (!st) st = bp__core_call("core::copy_", c, 2, &r);
  bp_tensor_release(r);
  bp_tensor_release(in);
  if (st) {
    bp_tensor_release(p);
    return st;
  }
  *out = p;
  return BP_OK;
}

/* The stride of a window dimension of n positions, `by` elements of the
 * padded input apart (its stride `stride`): 0 where there is one position,
 * whose step is never taken (a stride or dilation near INT64_MAX leaves
 * one; several fit in the padded input, whose extent fits in int64). */
static int64_t step(int64_t stride, int64_t by, int64_t n) { return n > 1 ? stride * by : 0; }

/* The windows of padded input p: [N, C, OH, OW, KH, KW] (a view). */
static bp_status windows(bp_tensor *p, const geo2 *g, bp_tensor **out) {
  const bp_tensor_view *v = &p->view;
  int64_t sizes[6] = {v->sizes[0], v->sizes[1], g->out[0], g->out[1], g->k[0], g->k[1]};
  int64_t strides[6] = {v->strides[0], v->strides[1], step(v->strides[2], g->s[0], g->out[0]),
                        step(v->strides[3], g->s[1], g->out[1]),
                        step(v->strides[2], g->d[0], g->k[0]), step(v->strides[3], g->d[1], g->k[1])};
  return bp_tensor_as_strided(p, 6, sizes, strides, v->storage_offset, out);
}

/* The result's metadata for an input x with c channels: [N, c, OH, OW], or
 * [c, OH, OW] for a 3-D x. */
static void pooled_meta(bp_tensor_meta *m, const bp_tensor_view *x, int64_t c, const geo2 *g,
                        int32_t dtype) {
  int64_t sizes[4];
  int32_t n = 0;
  if (x->ndim == 4) sizes[n++] = x->sizes[0];
  sizes[n++] = c;
  sizes[n++] = g->out[0];
  sizes[n++] = g->out[1];
  set_contiguous(m, x->device, dtype, n, sizes);
}

/* r [N, C, OH, OW] as the result of a 3-D input ([C, OH, OW], a view), or
 * r itself. */
static bp_status unbatch(bp_tensor *r, int32_t ndim, bp_tensor **out) {
  if (ndim == 4) {
    *out = r;
    return BP_OK;
  }
  const bp_tensor_view *v = &r->view;
  bp_status st = bp_tensor_as_strided(r, 3, v->sizes + 1, v->strides + 1, v->storage_offset, out);
  bp_tensor_release(r);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                    */
/* ------------------------------------------------------------------------ */

/* max_pool2d(self, kernel_size, stride=[], padding=0, dilation=1,
 * ceil_mode) and avg_pool2d(self, kernel_size, stride=[], padding=0,
 * ceil_mode, count_include_pad, divisor_override): the geometry. */
static bp_status pool_geo(const bp_kernel_ctx *ctx, const bp_value *args, bool avg, geo2 *g) {
  const bp_tensor_view *x = V(&args[0]);
  bp_status st = image(ctx, x, 0);
  if (!st) st = pair(ctx, args, 1, NULL, 1, g->k);
  if (!st) st = pair(ctx, args, 2, g->k, 1, g->s);
  if (!st) st = pair(ctx, args, 3, NULL, 0, g->p);
  static const int64_t one[2] = {1, 1};
  if (!st && avg) g->d[0] = g->d[1] = 1;
  else if (!st) st = pair(ctx, args, 4, one, 1, g->d);
  if (st) return st;
  int64_t ext;
  for (int j = 0; j < 2; j++)
    if (!__builtin_mul_overflow(g->d[j], g->k[j] - 1, &ext) && ext < INT64_MAX &&
        g->p[j] > (ext + 1) / 2)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #3 'padding' is [%lld, %lld]; it "
                       "may be at most half the kernel's extent", ctx->op_name,
                       (long long)g->p[0], (long long)g->p[1]);
  g->in[0] = x->sizes[x->ndim - 2];
  g->in[1] = x->sizes[x->ndim - 1];
  return outputs(ctx, g, args[avg ? 4 : 5].u.b);
}

/* The windows of input x (args[0]) padded with `fill`, reduced by core op
 * `op` (amax, sum) over the window dims: [N, C, OH, OW] in *out. */
static bp_status reduce_windows(const bp_kernel_ctx *ctx, const bp_value *args, const geo2 *g,
                                double fill, const char *op, bp_tensor **out) {
  bp_tensor *x4 = NULL, *p = NULL, *w = NULL;
  bp_status st = as4d(args[0].u.tensor, &x4);
  if (!st) st = padded(ctx, x4, g, fill, &p);
  if (!st) st = windows(p, g, &w);
  int64_t dims[2] = {-2, -1};
  bp_value dl = {.tag = BP_TAG_INT_LIST, .len = 2};
  dl.u.ints = dims;
  if (!st) st = bp__core_step(op, &w, &dl, 1);
  bp_tensor_release(x4);
  bp_tensor_release(p);
  if (st) {
    bp_tensor_release(w);
    return st;
  }
  *out = w;
  return BP_OK;
}

static bp_status meta_max_pool2d(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  geo2 g;
  if (x->dtype == BP_BOOL) return type_error(ctx, 0, x->dtype, "a numeric dtype (not bool)");
  bp_status st = pool_geo(ctx, args, false, &g);
  if (st) return st;
  pooled_meta(&outs[0], x, x->sizes[x->ndim - 3], &g, x->dtype);
  return BP_OK;
}

/* amax over the windows of the input padded with -inf (the dtype's lowest
 * value for integers): NaN propagates, as in PyTorch. */
static bp_status max_pool2d_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                      size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_max_pool2d, ctx, args, nargs, &m);
  if (st) return st;
  const bp_tensor_view *x = V(&args[0]);
  geo2 g;
  pool_geo(ctx, args, false, &g);
  double low = is_float(x->dtype) ? -INFINITY
               : x->dtype == BP_UINT8 ? 0.0 : -ldexp(1.0, (int)bp_dtype_size(x->dtype) * 8 - 1);
  bp_tensor *w = NULL, *r = NULL;
  st = reduce_windows(ctx, args, &g, low, "core::amax", &w);
  if (!st) st = unbatch(w, x->ndim, &r);
  return st ? st : ret_tensor(rets, r);
}

static bp_status meta_avg_pool2d(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  geo2 g;
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  bp_status st = pool_geo(ctx, args, true, &g);
  if (st) return st;
  if (args[6].tag == BP_TAG_INT && args[6].u.i == 0)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #6 'divisor_override' is 0",
                     ctx->op_name);
  pooled_meta(&outs[0], x, x->sizes[x->ndim - 3], &g, x->dtype);
  return BP_OK;
}

/* The sums of the windows of the input padded with 0, divided by each
 * window's divisor: PyTorch's (the window clipped to the padded input,
 * or to the input itself without count_include_pad), or the override. */
static bp_status avg_pool2d_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                      size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_avg_pool2d, ctx, args, nargs, &m);
  if (st) return st;
  const bp_tensor_view *x = V(&args[0]);
  geo2 g;
  pool_geo(ctx, args, true, &g);
  bool include_pad = args[5].u.b;
  /* the divisors, [OH, OW] in float64 on the host, then on the device */
  bp_device host = {BP_DEVICE_CPU, 0};
  bp_tensor *dv = NULL;
  st = bp__core_empty(ctx, host, BP_FLOAT64, 2, g.out, &dv);
  if (st) return st;
  double *d = dv->view.data;
  for (int64_t i = 0; i < g.out[0]; i++)
    for (int64_t j = 0; j < g.out[1]; j++) {
      int64_t c[2];
      for (int a = 0; a < 2; a++) {
        int64_t pos = a ? j : i, start = pos * g.s[a] - g.p[a];
        int64_t end = start + g.k[a];
        if (end > g.in[a] + g.p[a]) end = g.in[a] + g.p[a];
        if (!include_pad) {
          if (start < 0) start = 0;
          if (end > g.in[a]) end = g.in[a];
        } else if (start < -g.p[a]) {
          start = -g.p[a];
        }
        c[a] = end - start;
      }
      d[i * g.out[1] + j] = args[6].tag == BP_TAG_INT ? (double)args[6].u.i : (double)(c[0] * c[1]);
    }
  bp_tensor *w = NULL, *dd = NULL, *r = NULL;
  bp_value to[1] = {{.tag = BP_TAG_SCALAR_TYPE, .u.i = x->dtype}};
  st = bp__core_to_device(dv, x->device, &dd);
  if (!st) st = bp__core_step("core::cast", &dd, to, 1);
  if (!st) st = reduce_windows(ctx, args, &g, 0.0, "core::sum", &w);
  bp_value div[1] = {tv(dd)};
  if (!st) st = bp__core_step("core::div", &w, div, 1);
  bp_tensor_release(dd);
  if (!st) st = unbatch(w, x->ndim, &r);
  else bp_tensor_release(w);
  return st ? st : ret_tensor(rets, r);
}

/* adaptive_avg_pool2d(self, output_size): window i of n over size s spans
 * [floor(i s / n), ceil((i + 1) s / n)). */
static bp_status meta_adaptive_avg_pool2d(const bp_kernel_ctx *ctx, const bp_value *args,
                                          size_t nargs, bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  geo2 g;
  bp_status st = image(ctx, x, 0);
  if (!st) st = pair(ctx, args, 1, NULL, 1, g.out);
  if (st) return st;
  for (int32_t d = 1; d < x->ndim; d++)
    if (x->sizes[d] == 0)
      return bp__error(BP_ERR_SHAPE, "%s: argument #0 'self' has a dimension of size 0 besides "
                       "the batch", ctx->op_name);
  pooled_meta(&outs[0], x, x->sizes[x->ndim - 3], &g, x->dtype);
  return BP_OK;
}

static bp_status adaptive_avg_pool2d_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                               size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_adaptive_avg_pool2d, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *x4 = NULL, *out = NULL;
  st = as4d(args[0].u.tensor, &x4);
  if (st) return st;
  const bp_tensor_view *v = &x4->view;
  int64_t oh = m.sizes[m.ndim - 2], ow = m.sizes[m.ndim - 1];
  int64_t osz[4] = {v->sizes[0], v->sizes[1], oh, ow};
  st = bp__core_empty(ctx, v->device, v->dtype, 4, osz, &out);
  int64_t dims[2] = {-2, -1};
  bp_value dl = {.tag = BP_TAG_INT_LIST, .len = 2};
  dl.u.ints = dims;
  bp_value keep = {.tag = BP_TAG_BOOL};
  keep.u.b = true;
  /* one mean per output position, into its [N, C, 1, 1] slice */
  for (int64_t i = 0; !st && i < oh; i++)
    for (int64_t j = 0; !st && j < ow; j++) {
      int64_t h0 = i * v->sizes[2] / oh, h1 = ((i + 1) * v->sizes[2] + oh - 1) / oh;
      int64_t w0 = j * v->sizes[3] / ow, w1 = ((j + 1) * v->sizes[3] + ow - 1) / ow;
      int64_t ws[4] = {v->sizes[0], v->sizes[1], h1 - h0, w1 - w0}, one[4] = {v->sizes[0],
                                                                            v->sizes[1], 1, 1};
      bp_tensor *win = NULL, *slot = NULL, *mean = NULL, *r = NULL;
      st = bp_tensor_as_strided(x4, 4, ws, v->strides,
                                v->storage_offset + h0 * v->strides[2] + w0 * v->strides[3], &win);
      bp_value ma[3] = {tv(win), dl, keep};
      if (!st) st = bp__core_call("core::mean", ma, 3, &mean);
      const bp_tensor_view *o = &out->view;
      if (!st)
        st = bp_tensor_as_strided(out, 4, one, o->strides, i * o->strides[2] + j * o->strides[3],
                                  &slot);
      bp_value c[2] = {tv(slot), tv(mean)};
      if (!st) st = bp__core_call("core::copy_", c, 2, &r);
      bp_tensor *all[] = {win, slot, mean, r};
      for (int k = 0; k < 4; k++) bp_tensor_release(all[k]);
    }
  bp_tensor_release(x4);
  bp_tensor *res = NULL;
  if (!st) st = unbatch(out, m.ndim, &res);
  else bp_tensor_release(out);
  return st ? st : ret_tensor(rets, res);
}

/* ------------------------------------------------------------------------ */
/* conv2d                                                                   */
/* ------------------------------------------------------------------------ */

/* conv2d(input, weight [O, C/groups, KH, KW], bias [O]?, stride, padding,
 * dilation, groups): the geometry, and out_channels in *o. */
static bp_status conv_geo(const bp_kernel_ctx *ctx, const bp_value *args, geo2 *g, int64_t *o) {
  const bp_tensor_view *x = V(&args[0]), *w = V(&args[1]);
  char s1[160];
  bp_status st = image(ctx, x, 0);
  if (st) return st;
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  if (w->dtype != x->dtype) return type_error(ctx, 1, w->dtype, bp_dtype_name(x->dtype));
  if (w->ndim != 4)
    return bp__error(BP_ERR_SHAPE, "%s: argument #1 'weight' has shape %s; expected "
                     "[out_channels, in_channels / groups, KH, KW]", ctx->op_name,
                     shape_str(w->ndim, w->sizes, s1, sizeof s1));
  int64_t groups = args[6].u.i, c = x->sizes[x->ndim - 3];
  *o = w->sizes[0];
  if (groups < 1 || c % groups || *o % groups)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #6 'groups' is %lld; expected a "
                     "positive divisor of in_channels (%lld) and out_channels (%lld)",
                     ctx->op_name, (long long)groups, (long long)c, (long long)*o);
  if (w->sizes[1] != c / groups)
    return bp__error(BP_ERR_SHAPE, "%s: argument #1 'weight' has %lld input channels per group; "
                     "expected %lld (the input's %lld channels / %lld groups)", ctx->op_name,
                     (long long)w->sizes[1], (long long)(c / groups), (long long)c,
                     (long long)groups);
  if (args[2].tag == BP_TAG_TENSOR) {
    const bp_tensor_view *b = V(&args[2]);
    if (b->ndim != 1 || b->sizes[0] != *o)
      return bp__error(BP_ERR_SHAPE, "%s: argument #2 'bias' has shape %s, expected [%lld]",
                       ctx->op_name, shape_str(b->ndim, b->sizes, s1, sizeof s1), (long long)*o);
    if (b->dtype != x->dtype) return type_error(ctx, 2, b->dtype, bp_dtype_name(x->dtype));
  }
  st = pair(ctx, args, 3, NULL, 1, g->s);
  if (!st) st = pair(ctx, args, 4, NULL, 0, g->p);
  if (!st) st = pair(ctx, args, 5, NULL, 1, g->d);
  if (st) return st;
  g->k[0] = w->sizes[2], g->k[1] = w->sizes[3];
  g->in[0] = x->sizes[x->ndim - 2], g->in[1] = x->sizes[x->ndim - 1];
  return outputs(ctx, g, false);
}

static bp_status meta_conv2d(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  geo2 g;
  int64_t o;
  bp_status st = conv_geo(ctx, args, &g, &o);
  if (st) return st;
  const bp_tensor_view *x = V(&args[0]);
  pooled_meta(&outs[0], x, o, &g, x->dtype);
  return BP_OK;
}

/* Group gi of conv2d into out [N, O, OH, OW]: its windows made contiguous
 * as [N, OH * OW, C/G * KH * KW] (im2col), times its weight as [C/G * KH *
 * KW, O/G], copied into out's channel slice. */
static bp_status conv_group(bp_tensor *p, bp_tensor *w, bp_tensor *out, const geo2 *g,
                            int64_t gi, int64_t groups) {
  const bp_tensor_view *pv = &p->view, *wv = &w->view, *ov = &out->view;
  int64_t n = pv->sizes[0], cg = wv->sizes[1], og = wv->sizes[0] / groups;
  int64_t l = g->out[0] * g->out[1], k = cg * g->k[0] * g->k[1];
  int64_t cs[6] = {n, g->out[0], g->out[1], cg, g->k[0], g->k[1]};
  int64_t cst[6] = {pv->strides[0], step(pv->strides[2], g->s[0], g->out[0]),
                    step(pv->strides[3], g->s[1], g->out[1]), pv->strides[1],
                    step(pv->strides[2], g->d[0], g->k[0]), step(pv->strides[3], g->d[1], g->k[1])};
  int64_t ws[4] = {og, cg, g->k[0], g->k[1]};
  bp_tensor *cols = NULL, *ws4 = NULL, *wt = NULL, *r = NULL, *r4 = NULL, *slot = NULL, *c = NULL;
  bp_status st = bp_tensor_as_strided(p, 6, cs, cst, pv->storage_offset + gi * cg * pv->strides[1],
                                      &cols);
  if (!st) st = bp__core_step("core::contiguous", &cols, NULL, 0);
  int64_t c3[3] = {n, l, k}, c3s[3] = {l * k, k, 1};
  if (!st) st = bp_tensor_as_strided(cols, 3, c3, c3s, cols->view.storage_offset, &c);
  if (!st) st = bp_tensor_as_strided(w, 4, ws, wv->strides,
                                     wv->storage_offset + gi * og * wv->strides[0], &ws4);
  if (!st) st = bp__core_step("core::contiguous", &ws4, NULL, 0);
  int64_t t2[2] = {k, og}, t2s[2] = {1, k};
  if (!st) st = bp_tensor_as_strided(ws4, 2, t2, t2s, ws4->view.storage_offset, &wt);
  bp_value mm[2] = {tv(c), tv(wt)};
  if (!st) st = bp__core_call("core::matmul", mm, 2, &r); /* [N, L, O/G] */
  int64_t r4s[4] = {n, og, g->out[0], g->out[1]}, r4st[4] = {l * og, 1, g->out[1] * og, og};
  if (!st) st = bp_tensor_as_strided(r, 4, r4s, r4st, r->view.storage_offset, &r4);
  if (!st) st = bp_tensor_as_strided(out, 4, r4s, ov->strides, gi * og * ov->strides[1], &slot);
  bp_tensor *done = NULL;
  bp_value cp[2] = {tv(slot), tv(r4)};
  if (!st) st = bp__core_call("core::copy_", cp, 2, &done);
  bp_tensor *all[] = {cols, ws4, wt, r, r4, slot, c, done};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) bp_tensor_release(all[i]);
  return st;
}

static bp_status conv2d_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_conv2d, ctx, args, nargs, &m);
  if (st) return st;
  geo2 g;
  int64_t o;
  conv_geo(ctx, args, &g, &o);
  const bp_tensor_view *x = V(&args[0]);
  bp_tensor *x4 = NULL, *p = NULL, *out = NULL;
  st = as4d(args[0].u.tensor, &x4);
  if (!st) st = padded(ctx, x4, &g, 0.0, &p);
  int64_t osz[4] = {x4 ? x4->view.sizes[0] : 0, o, g.out[0], g.out[1]};
  if (!st) st = bp__core_empty(ctx, x->device, x->dtype, 4, osz, &out);
  for (int64_t gi = 0; !st && gi < args[6].u.i; gi++)
    st = conv_group(p, args[1].u.tensor, out, &g, gi, args[6].u.i);
  if (!st && args[2].tag == BP_TAG_TENSOR) {
    /* bias [O] viewed as [O, 1, 1] */
    const bp_tensor_view *b = V(&args[2]);
    int64_t bs[3] = {o, 1, 1}, bst[3] = {b->strides[0], 0, 0};
    bp_tensor *bv = NULL;
    st = bp_tensor_as_strided(args[2].u.tensor, 3, bs, bst, b->storage_offset, &bv);
    bp_value a[2] = {tv(bv), fv(1.0)};
    if (!st) st = bp__core_step("core::add", &out, a, 2);
    bp_tensor_release(bv);
  }
  bp_tensor_release(x4);
  bp_tensor_release(p);
  bp_tensor *r = NULL;
  if (!st) st = unbatch(out, x->ndim, &r);
  else bp_tensor_release(out);
  return st ? st : ret_tensor(rets, r);
}

/* ------------------------------------------------------------------------ */
/* The definitions                                                          */
/* ------------------------------------------------------------------------ */

const core_def bp__core_defs_conv[] = {
    {"conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
     "int[2] dilation=1, int groups=1) -> Tensor",
     meta_conv2d, 0, 0, "2-D cross-correlation of input [N, C, H, W] with weight [O, C/groups, "
     "KH, KW]", 2, conv2d_composite},
    {"max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] "
     "dilation=1, bool ceil_mode=False) -> Tensor",
     meta_max_pool2d, 0, 0, "the maximum of each window", 2, max_pool2d_composite},
    {"avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
     "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
     meta_avg_pool2d, 0, 0, "the mean of each window", 2, avg_pool2d_composite},
    {"adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor", meta_adaptive_avg_pool2d,
     0, 0, "the mean of each of output_size windows that cover the input", 2,
     adaptive_avg_pool2d_composite},
};
const size_t bp__core_ndefs_conv = sizeof bp__core_defs_conv / sizeof bp__core_defs_conv[0];
