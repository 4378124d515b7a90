/*
 * conformance/tests/faulty/faults-layers.c - faults in the layers of core
 * op set 2 for the shim corpus (shim.h): conv2d, the pools, cat, clamp
 * and rms_norm, which the CPU plugin leaves to the host's composites.
 * Each fault is a whole float32 kernel of its own, written as a vendor
 * writes one to replace the composite (plain loops over the arguments'
 * strides, a result sized by the op's meta function), right everywhere
 * but in its bug's region.  A plugin is built with one -DFAULT_<NAME>;
 * corpus.tsv lists them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef int faults_layers_unit; /* the unit is never empty */

/* Each kernel takes float32 tensors only: the host's composite serves
 * the other dtypes (shim.h). */
static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
const int32_t *shim_fault_dtypes = f32;

#if defined(FAULT_CONV2D_GROUP_OFFSET) || defined(FAULT_MAX_POOL2D_NAN_GT) || \
    defined(FAULT_AVG_POOL2D_PAD_IGNORED)
/* An image argument [N, C, H, W] or [C, H, W] seen as 4-D: its sizes and
 * strides (N 1 with stride 0 for a 3-D one). */
typedef struct img {
  const bp_tensor_view *v;
  int64_t size[4], stride[4];
} img;

static img as_img(const bp_tensor_view *v) {
  img m = {v, {1, 0, 0, 0}, {0, 0, 0, 0}};
  int32_t b = v->ndim - 3;
  for (int32_t d = 0; d < v->ndim; d++) {
    m.size[d + 1 - b] = v->sizes[d];
    m.stride[d + 1 - b] = v->strides[d];
  }
  return m;
}

static int64_t img_at(const img *m, int64_t n, int64_t c, int64_t y, int64_t x) {
  return n * m->stride[0] + c * m->stride[1] + y * m->stride[2] + x * m->stride[3];
}
#endif

#if defined(FAULT_CONV2D_GROUP_OFFSET)
/* A direct convolution that forgets each group's offset into the input
 * channels: every group reads the first group's, which is right for
 * groups 1 only. */
SHIM_KERNEL(conv2d_group_offset) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  img x = as_img(SHIM_ARG(0)), o = as_img(shim_view(out));
  const bp_tensor_view *w = SHIM_ARG(1);
  const bp_tensor_view *b = args[2].tag == BP_TAG_TENSOR ? SHIM_ARG(2) : NULL;
  const int64_t *s = args[3].u.ints, *p = args[4].u.ints, *d = args[5].u.ints;
  int64_t cg = w->sizes[1]; /* input channels per group */
  for (int64_t n = 0; n < o.size[0]; n++)
    for (int64_t oc = 0; oc < o.size[1]; oc++)
      for (int64_t oy = 0; oy < o.size[2]; oy++)
        for (int64_t ox = 0; ox < o.size[3]; ox++) {
          double acc = b ? shim_load(b, oc * b->strides[0]) : 0;
          for (int64_t c = 0; c < cg; c++)
            for (int64_t i = 0; i < w->sizes[2]; i++)
              for (int64_t j = 0; j < w->sizes[3]; j++) {
                int64_t y = oy * s[0] - p[0] + i * d[0], xx = ox * s[1] - p[1] + j * d[1];
                if (y < 0 || y >= x.size[2] || xx < 0 || xx >= x.size[3]) continue;
                /* input channel c, where group oc / (O / groups) reads
                 * channel oc / (O / groups) * cg + c */
                acc += shim_load(x.v, img_at(&x, n, c, y, xx)) *
                       shim_load(w, oc * w->strides[0] + c * w->strides[1] +
                                        i * w->strides[2] + j * w->strides[3]);
              }
          shim_store(o.v, img_at(&o, n, oc, oy, ox), acc);
        }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"conv2d_group_offset", "conv2d", conv2d_group_offset, NULL,
                                   NULL};
#endif

#if defined(FAULT_MAX_POOL2D_NAN_GT) || defined(FAULT_AVG_POOL2D_PAD_IGNORED)
/* The geometry of a pool call: kernel, stride ([]: the kernel), padding,
 * dilation (avg_pool2d: 1). */
static void pool_geometry(const bp_value *args, bool avg, int64_t *k, int64_t *s, int64_t *p,
                          int64_t *d) {
  for (int j = 0; j < 2; j++) {
    k[j] = args[1].u.ints[j];
    s[j] = args[2].len ? args[2].u.ints[j] : k[j];
    p[j] = args[3].u.ints[j];
    d[j] = avg ? 1 : args[4].u.ints[j];
  }
}
#endif

#if defined(FAULT_MAX_POOL2D_NAN_GT)
/* The maximum of each window kept with `v > m` from -inf: a NaN never
 * compares greater, so it is dropped instead of propagated (a window of
 * NaN alone gives -inf). */
SHIM_KERNEL(max_pool2d_nan_gt) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  img x = as_img(SHIM_ARG(0)), o = as_img(shim_view(out));
  int64_t k[2], s[2], p[2], d[2];
  pool_geometry(args, false, k, s, p, d);
  for (int64_t n = 0; n < o.size[0]; n++)
    for (int64_t c = 0; c < o.size[1]; c++)
      for (int64_t oy = 0; oy < o.size[2]; oy++)
        for (int64_t ox = 0; ox < o.size[3]; ox++) {
          float m = -INFINITY;
          for (int64_t i = 0; i < k[0]; i++)
            for (int64_t j = 0; j < k[1]; j++) {
              int64_t y = oy * s[0] - p[0] + i * d[0], xx = ox * s[1] - p[1] + j * d[1];
              if (y < 0 || y >= x.size[2] || xx < 0 || xx >= x.size[3]) continue;
              float v = (float)shim_load(x.v, img_at(&x, n, c, y, xx));
              if (v > m) m = v;
            }
          shim_store(o.v, img_at(&o, n, c, oy, ox), m);
        }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"max_pool2d_nan_gt", "max_pool2d", max_pool2d_nan_gt, NULL,
                                   NULL};
#endif

#if defined(FAULT_AVG_POOL2D_PAD_IGNORED)
/* count_include_pad ignored: each window's sum is divided by the input
 * elements it covers, as count_include_pad=False does, though True (the
 * default) counts the padding too.  Right without padding, and with a
 * divisor_override. */
SHIM_KERNEL(avg_pool2d_pad_ignored) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  img x = as_img(SHIM_ARG(0)), o = as_img(shim_view(out));
  int64_t k[2], s[2], p[2], d[2];
  pool_geometry(args, true, k, s, p, d);
  bool div = args[6].tag == BP_TAG_INT;
  for (int64_t n = 0; n < o.size[0]; n++)
    for (int64_t c = 0; c < o.size[1]; c++)
      for (int64_t oy = 0; oy < o.size[2]; oy++)
        for (int64_t ox = 0; ox < o.size[3]; ox++) {
          double sum = 0;
          int64_t count = 0;
          for (int64_t i = 0; i < k[0]; i++)
            for (int64_t j = 0; j < k[1]; j++) {
              int64_t y = oy * s[0] - p[0] + i, xx = ox * s[1] - p[1] + j;
              if (y < 0 || y >= x.size[2] || xx < 0 || xx >= x.size[3]) continue;
              sum += shim_load(x.v, img_at(&x, n, c, y, xx));
              count++;
            }
          shim_store(o.v, img_at(&o, n, c, oy, ox), sum / (double)(div ? args[6].u.i : count));
        }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"avg_pool2d_pad_ignored", "avg_pool2d",
                                   avg_pool2d_pad_ignored, NULL, NULL};
#endif

#if defined(FAULT_CAT_EMPTY_BREAK)
/* The result is cleared, then each input is copied into its slice; an
 * input with no elements ends the loop (a break where a continue was
 * meant), so the inputs after an empty one are left as zeros. */
SHIM_KERNEL(cat_empty_break) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *o = shim_view(out);
  memset(o->data, 0, (size_t)(o->numel * o->itemsize));
  int32_t d = o->ndim ? shim_norm_dim(args[1].u.i, o->ndim) : 0;
  int64_t at = 0;
  for (uint32_t t = 0; t < args[0].len; t++) {
    const bp_tensor_view *v = shim_view(args[0].u.tensors[t]);
    if (v->numel == 0) break;
    int64_t idx[BP_MAX_NDIM] = {0};
    for (int64_t e = 0; e < v->numel; e++, shim_next(v->ndim, v->sizes, idx)) {
      int64_t off = 0;
      for (int32_t j = 0; j < v->ndim; j++) off += (idx[j] + (j == d ? at : 0)) * o->strides[j];
      shim_store(o, off, shim_load(v, shim_at(v, v->ndim, idx)));
    }
    at += v->sizes[d];
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"cat_empty_break", "cat", cat_empty_break, NULL, NULL};
#endif

#if defined(FAULT_CLAMP_FMAX_NAN)
/* min(max(self, min), max) with fmaxf and fminf, which return the other
 * operand when one is NaN: a NaN element becomes min (or max when min is
 * None), and a NaN bound is ignored, where the op set gives NaN. */
static float bound_of(const bp_value *v) {
  return v->tag == BP_TAG_FLOAT ? (float)v->u.f : v->tag == BP_TAG_INT ? (float)v->u.i
                                                                       : (float)v->u.b;
}
SHIM_KERNEL(clamp_fmax_nan) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = shim_view(out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t e = 0; e < o->numel; e++, shim_next(o->ndim, o->sizes, idx)) {
    float x = (float)shim_load(a, shim_at(a, a->ndim, idx));
    if (args[1].tag != BP_TAG_NONE) x = fmaxf(x, bound_of(&args[1]));
    if (args[2].tag != BP_TAG_NONE) x = fminf(x, bound_of(&args[2]));
    ((float *)o->data)[e] = x;
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"clamp_fmax_nan", "clamp", clamp_fmax_nan, NULL, NULL};
#endif

#if defined(FAULT_RMS_NORM_EPS_OUTSIDE)
/* x / (sqrt(mean(x^2)) + eps) * weight: eps added after the square root,
 * not under it.  With the default eps (1.2e-7) that is invisible on rows
 * of ordinary size; it shows on rows near 0 and with a larger eps. */
SHIM_KERNEL(rms_norm_eps_outside) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = shim_view(out);
  const bp_tensor_view *w = args[2].tag == BP_TAG_TENSOR ? SHIM_ARG(2) : NULL;
  double eps = args[3].tag == BP_TAG_FLOAT ? args[3].u.f : 1.1920928955078125e-07;
  int64_t len = 1;
  for (uint32_t j = 0; j < args[1].len; j++) len *= args[1].u.ints[j];
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t r = 0; len && r < o->numel / len; r++) {
    int64_t first[BP_MAX_NDIM];
    memcpy(first, idx, sizeof first);
    double ss = 0;
    for (int64_t e = 0; e < len; e++, shim_next(a->ndim, a->sizes, idx)) {
      double v = shim_load(a, shim_at(a, a->ndim, idx));
      ss += v * v;
    }
    double inv = 1 / (sqrt(ss / (double)len) + eps);
    memcpy(idx, first, sizeof first);
    for (int64_t e = 0; e < len; e++, shim_next(a->ndim, a->sizes, idx)) {
      double y = shim_load(a, shim_at(a, a->ndim, idx)) * inv;
      if (w) y *= shim_load(w, shim_at(w, w->ndim, idx + a->ndim - w->ndim));
      ((float *)o->data)[r * len + e] = (float)y;
    }
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"rms_norm_eps_outside", "rms_norm", rms_norm_eps_outside, NULL,
                                   NULL};
#endif
