/*
 * host/core_nn.c - the ops of op set 2 that models build layers from:
 * cat, stack, linear, rms_norm, batch_norm (inference) and
 * scaled_dot_product_attention (core_sdpa.c).  Each has a meta function and a host
 * composite over other core ops (docs/op-set.md, "Host composites"), so
 * that every device with the elementwise, reduction and matmul kernels
 * runs them; a plugin may register a faster kernel of its own.
 *
 * Views (a transposed weight, a result slice to copy into, statistics
 * broadcast along a channel) are made with bp_tensor_as_strided: no data
 * moves for them.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* A view of t (a new reference). */
static bp_status view(bp_tensor *t, int32_t ndim, const int64_t *sizes, const int64_t *strides,
                      int64_t offset, bp_tensor **out) {
  return bp_tensor_as_strided(t, ndim, sizes, strides, offset, out);
}

/* t's last two dims swapped (a new reference). */
static bp_status transposed(bp_tensor *t, bp_tensor **out) {
  const bp_tensor_view *v = &t->view;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  copy_sizes(sizes, v->sizes, v->ndim);
  copy_sizes(strides, v->strides, v->ndim);
  int32_t a = v->ndim - 2, b = v->ndim - 1;
  sizes[a] = v->sizes[b], sizes[b] = v->sizes[a];
  strides[a] = v->strides[b], strides[b] = v->strides[a];
  return view(t, v->ndim, sizes, strides, v->storage_offset, out);
}



/* ------------------------------------------------------------------------ */
/* cat and stack                                                            */
/* ------------------------------------------------------------------------ */

/* A 1-dimensional empty tensor, which cat skips (PyTorch's legacy rule). */
static bool skipped(const bp_tensor_view *v) { return v->ndim == 1 && v->sizes[0] == 0; }

/* The list's common dtype and device, and its first tensor that cat does
 * not skip (NULL if all are). */
static bp_status list_common(const bp_kernel_ctx *ctx, const bp_value *list, int32_t *dt,
                             const bp_tensor_view **ref) {
  if (list->len == 0)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #0 'tensors' is empty; expected at "
                     "least one tensor", ctx->op_name);
  const bp_tensor_view *first = &list->u.tensors[0]->view;
  *dt = first->dtype;
  *ref = NULL;
  for (uint32_t i = 0; i < list->len; i++) {
    const bp_tensor_view *v = &list->u.tensors[i]->view;
    if (v->device.type != first->device.type || v->device.index != first->device.index)
      return bp__error(BP_ERR_DEVICE, "%s: argument #0 'tensors': tensor #%u is on another "
                       "device than tensor #0", ctx->op_name, (unsigned)i);
    *dt = bp__promote(*dt, v->dtype);
    if (!*ref && !skipped(v)) *ref = v;
  }
  return BP_OK;
}

/* cat(tensors, dim): the tensors joined along dim; every other size
 * equal. */
static bp_status meta_cat(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_value *list = &args[0];
  int32_t dt;
  const bp_tensor_view *ref;
  bp_status st = list_common(ctx, list, &dt, &ref);
  if (st) return st;
  if (!ref) { /* every tensor is [0] */
    int64_t zero = 0;
    set_contiguous(&outs[0], list->u.tensors[0]->view.device, dt, 1, &zero);
    return BP_OK;
  }
  int32_t dim;
  int64_t sizes[BP_MAX_NDIM];
  char s1[160], s2[160];
  for (uint32_t i = 0; i < list->len; i++)
    if (list->u.tensors[i]->view.ndim == 0)
      return bp__error(BP_ERR_SHAPE, "%s: argument #0 'tensors': tensor #%u is 0-dimensional; "
                       "cat joins tensors of at least 1 dimension", ctx->op_name, (unsigned)i);
  st = norm_dim(ctx, 1, args[1].u.i, ref->ndim, &dim);
  if (st) return st;
  copy_sizes(sizes, ref->sizes, ref->ndim);
  sizes[dim] = 0;
  for (uint32_t i = 0; i < list->len; i++) {
    const bp_tensor_view *v = &list->u.tensors[i]->view;
    if (skipped(v)) continue;
    bool same = v->ndim == ref->ndim;
    for (int32_t d = 0; same && d < v->ndim; d++) same = d == dim || v->sizes[d] == ref->sizes[d];
    if (!same)
      return bp__error(BP_ERR_SHAPE, "%s: argument #0 'tensors': tensor #%u has shape %s, which "
                       "does not match %s except in dimension %d", ctx->op_name, (unsigned)i,
                       shape_str(v->ndim, v->sizes, s1, sizeof s1),
                       shape_str(ref->ndim, ref->sizes, s2, sizeof s2), (int)dim);
    sizes[dim] += v->sizes[dim];
  }
  set_contiguous(&outs[0], ref->device, dt, ref->ndim, sizes);
  return BP_OK;
}

/* Copies t into the view of out with t's sizes and the given strides and
 * offset: its slice of a cat or stack result (copy_ converts the dtype). */
static bp_status copy_into(bp_tensor *out, bp_tensor *t, const int64_t *strides,
                           int64_t offset) {
  bp_tensor *slice = NULL, *r = NULL;
  bp_status st = view(out, t->view.ndim, t->view.sizes, strides, offset, &slice);
  bp_value v[2] = {tv(slice), tv(t)};
  if (!st) st = bp__core_call("core::copy_", v, 2, &r);
  bp_tensor_release(r);
  bp_tensor_release(slice);
  return st;
}

/* Copies each tensor into its slice of a new result (copy_ converts). */
static bp_status cat_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_cat, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *out = NULL;
  st = bp__core_empty(ctx, m.device, m.dtype, m.ndim, m.sizes, &out);
  int32_t dim = 0;
  if (!st && m.ndim > 0) st = norm_dim(ctx, 1, args[1].u.i, m.ndim, &dim);
  int64_t at = 0;
  for (uint32_t i = 0; !st && i < args[0].len; i++) {
    bp_tensor *t = args[0].u.tensors[i];
    if (skipped(&t->view) || t->view.numel == 0) continue;
    st = copy_into(out, t, m.strides, at * m.strides[dim]);
    at += t->view.sizes[dim];
  }
  if (st) {
    bp_tensor_release(out);
    return st;
  }
  return ret_tensor(rets, out);
}

/* stack(tensors, dim): tensors of one shape joined along a new dim. */
static bp_status meta_stack(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_value *list = &args[0];
  int32_t dt, dim;
  const bp_tensor_view *ref;
  bp_status st = list_common(ctx, list, &dt, &ref);
  if (st) return st;
  ref = &list->u.tensors[0]->view;
  if (ref->ndim + 1 > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: the result would have %d dimensions", ctx->op_name,
                     (int)ref->ndim + 1);
  st = norm_dim(ctx, 1, args[1].u.i, ref->ndim + 1, &dim);
  if (st) return st;
  char s1[160], s2[160];
  for (uint32_t i = 1; i < list->len; i++) {
    const bp_tensor_view *v = &list->u.tensors[i]->view;
    bool same = v->ndim == ref->ndim;
    for (int32_t d = 0; same && d < v->ndim; d++) same = v->sizes[d] == ref->sizes[d];
    if (!same)
      return bp__error(BP_ERR_SHAPE, "%s: argument #0 'tensors': tensor #%u has shape %s, "
                       "expected %s (the shape of tensor #0)", ctx->op_name, (unsigned)i,
                       shape_str(v->ndim, v->sizes, s1, sizeof s1),
                       shape_str(ref->ndim, ref->sizes, s2, sizeof s2));
  }
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t d = 0, j = 0; d <= ref->ndim; d++)
    sizes[d] = d == dim ? (int64_t)list->len : ref->sizes[j++];
  set_contiguous(&outs[0], ref->device, dt, ref->ndim + 1, sizes);
  return BP_OK;
}

static bp_status stack_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_stack, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *out = NULL;
  st = bp__core_empty(ctx, m.device, m.dtype, m.ndim, m.sizes, &out);
  int32_t dim = 0;
  if (!st) st = norm_dim(ctx, 1, args[1].u.i, m.ndim, &dim);
  int64_t strides[BP_MAX_NDIM];
  for (int32_t d = 0, j = 0; d < m.ndim; d++)
    if (d != dim) strides[j++] = m.strides[d];
  for (uint32_t i = 0; !st && i < args[0].len; i++) {
    bp_tensor *t = args[0].u.tensors[i];
    if (t->view.numel == 0) continue;
    st = copy_into(out, t, strides, (int64_t)i * m.strides[dim]);
  }
  if (st) {
    bp_tensor_release(out);
    return st;
  }
  return ret_tensor(rets, out);
}

/* ------------------------------------------------------------------------ */
/* linear                                                                   */
/* ------------------------------------------------------------------------ */

/* A Tensor? argument i that must be a 1-dimensional [n] of dtype dt. */
static bp_status need_vector(const bp_kernel_ctx *ctx, const bp_value *args, size_t i, int64_t n,
                             int32_t dt) {
  if (args[i].tag == BP_TAG_NONE) return BP_OK;
  const bp_tensor_view *v = V(&args[i]);
  if (v->ndim != 1 || v->sizes[0] != n) {
    char s1[160];
    return bp__error(BP_ERR_SHAPE, "%s: argument #%zu '%s' has shape %s, expected [%lld]",
                     ctx->op_name, i, an(ctx, i), shape_str(v->ndim, v->sizes, s1, sizeof s1),
                     (long long)n);
  }
  if (v->dtype != dt) return type_error(ctx, i, v->dtype, bp_dtype_name(dt));
  return BP_OK;
}

/* linear(input, weight [out, in], bias [out]?): input @ weight^T + bias. */
static bp_status meta_linear(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]), *w = V(&args[1]);
  char s1[160], s2[160];
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  if (w->dtype != x->dtype) return type_error(ctx, 1, w->dtype, bp_dtype_name(x->dtype));
  if (w->ndim != 2)
    return bp__error(BP_ERR_SHAPE, "%s: argument #1 'weight' has shape %s; expected 2 dimensions "
                     "[out_features, in_features]", ctx->op_name,
                     shape_str(w->ndim, w->sizes, s1, sizeof s1));
  if (x->ndim == 0 || x->sizes[x->ndim - 1] != w->sizes[1])
    return bp__error(BP_ERR_SHAPE, "%s: argument #0 'input' with shape %s does not match "
                     "argument #1 'weight' with shape %s (in_features %lld)", ctx->op_name,
                     shape_str(x->ndim, x->sizes, s1, sizeof s1),
                     shape_str(w->ndim, w->sizes, s2, sizeof s2), (long long)w->sizes[1]);
  bp_status st = need_vector(ctx, args, 2, w->sizes[0], x->dtype);
  if (st) return st;
  int64_t sizes[BP_MAX_NDIM];
  copy_sizes(sizes, x->sizes, x->ndim);
  sizes[x->ndim - 1] = w->sizes[0];
  set_contiguous(&outs[0], x->device, x->dtype, x->ndim, sizes);
  return BP_OK;
}

static bp_status linear_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_linear, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *wt = NULL, *r = NULL;
  st = transposed(args[1].u.tensor, &wt);
  if (st) return st;
  bp_value v[2] = {args[0], tv(wt)};
  st = bp__core_call("core::matmul", v, 2, &r);
  bp_tensor_release(wt);
  if (!st && args[2].tag == BP_TAG_TENSOR) {
    bp_value b[2] = {args[2], fv(1.0)};
    st = bp__core_step("core::add", &r, b, 2);
  }
  if (st) {
    bp_tensor_release(r);
    return st;
  }
  return ret_tensor(rets, r);
}

/* ------------------------------------------------------------------------ */
/* rms_norm and batch_norm                                                  */
/* ------------------------------------------------------------------------ */

/* rms_norm(input, normalized_shape, weight?, eps?): the trailing dims of
 * normalized_shape, which weight has. */
static bp_status meta_rms_norm(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  bp_status st = normalized_shape_ok(ctx, args);
  if (!st) st = normalized_weight_ok(ctx, args, 2);
  if (st) return st;
  if (args[3].tag == BP_TAG_FLOAT && !(args[3].u.f >= 0))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #3 'eps' is %g, expected >= 0",
                     ctx->op_name, args[3].u.f);
  set_contiguous(&outs[0], x->device, x->dtype, x->ndim, x->sizes);
  return BP_OK;
}

/* x converted to float32 (float64 stays): the computation's dtype of a
 * normalisation, as PyTorch's opmath type. */
static bp_status upcast(bp_tensor *x, bp_tensor **out) {
  if (x->view.dtype == BP_FLOAT32 || x->view.dtype == BP_FLOAT64) {
    *out = bp_tensor_retain(x);
    return BP_OK;
  }
  bp_value v[2] = {tv(x), {.tag = BP_TAG_SCALAR_TYPE, .u.i = BP_FLOAT32}};
  return bp__core_call("core::cast", v, 2, out);
}

/* PyTorch's: x (in float32 for 16-bit floats) * rsqrt(mean(x^2 over the
 * normalised dims) + eps), cast back to x's dtype, then * weight.  eps
 * None is the computation dtype's machine epsilon. */
static bp_status rms_norm_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                    bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_rms_norm, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *x = args[0].u.tensor, *xu = NULL, *ms = NULL;
  st = upcast(x, &xu);
  if (st) return st;
  double eps = args[3].tag == BP_TAG_FLOAT ? args[3].u.f
               : xu->view.dtype == BP_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  int64_t dims[BP_MAX_NDIM];
  uint32_t k = args[1].len;
  for (uint32_t i = 0; i < k; i++) dims[i] = -(int64_t)k + (int64_t)i;
  bp_value sq[2] = {tv(xu), tv(xu)};
  st = bp__core_call("core::mul", sq, 2, &ms);
  bp_value dl = {.tag = BP_TAG_INT_LIST, .len = k};
  dl.u.ints = dims;
  bp_value keep = {.tag = BP_TAG_BOOL};
  keep.u.b = true;
  bp_value mean_args[2] = {dl, keep}, e[1] = {fv(eps)};
  if (!st) st = bp__core_step("core::mean", &ms, mean_args, 2);
  if (!st) st = bp__core_step("core::add.Scalar", &ms, e, 1);
  if (!st) st = bp__core_step("core::rsqrt", &ms, NULL, 0);
  bp_value xv[1] = {tv(xu)};
  if (!st) st = bp__core_step("core::mul", &ms, xv, 1);
  bp_value to[1] = {{.tag = BP_TAG_SCALAR_TYPE, .u.i = x->view.dtype}};
  if (!st && ms->view.dtype != x->view.dtype) st = bp__core_step("core::cast", &ms, to, 1);
  if (!st && args[2].tag == BP_TAG_TENSOR) st = bp__core_step("core::mul", &ms, &args[2], 1);
  bp_tensor_release(xu);
  if (st) {
    bp_tensor_release(ms);
    return st;
  }
  return ret_tensor(rets, ms);
}

/* batch_norm(input [N, C, ...], weight?, bias?, running_mean, running_var,
 * training, momentum, eps, cudnn_enabled): inference only. */
static bp_status meta_batch_norm(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  char s1[160];
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  if (x->ndim < 2)
    return bp__error(BP_ERR_SHAPE, "%s: argument #0 'input' has shape %s; expected at least 2 "
                     "dimensions [N, C, ...]", ctx->op_name,
                     shape_str(x->ndim, x->sizes, s1, sizeof s1));
  if (args[5].u.b)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #5 'training' is True; the op set "
                     "defines batch_norm for inference only (running statistics)", ctx->op_name);
  for (size_t i = 3; i <= 4; i++)
    if (args[i].tag == BP_TAG_NONE)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%zu '%s' is None; inference needs "
                       "the running statistics", ctx->op_name, i, an(ctx, i));
  for (size_t i = 1; i <= 4; i++) {
    bp_status st = need_vector(ctx, args, i, x->sizes[1], x->dtype);
    if (st) return st;
  }
  if (!(args[7].u.f >= 0))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #7 'eps' is %g, expected >= 0",
                     ctx->op_name, args[7].u.f);
  set_contiguous(&outs[0], x->device, x->dtype, x->ndim, x->sizes);
  return BP_OK;
}

/* A [C] statistic viewed as [C, 1, ..., 1] (ndim - 1 dims), to broadcast
 * along the channel dim of an [N, C, ...] input. */
static bp_status per_channel(bp_tensor *s, int32_t ndim, bp_tensor **out) {
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  for (int32_t d = 0; d < ndim - 1; d++) sizes[d] = 1, strides[d] = 0;
  sizes[0] = s->view.sizes[0];
  strides[0] = s->view.strides[0];
  return view(s, ndim - 1, sizes, strides, s->view.storage_offset, out);
}

/* (input - mean) * (rsqrt(var + eps) * weight) + bias. */
static bp_status batch_norm_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                      size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_batch_norm, ctx, args, nargs, &m);
  if (st) return st;
  int32_t nd = args[0].u.tensor->view.ndim;
  bp_tensor *c[5] = {NULL}; /* weight, bias, mean, var as [C, 1, ...] */
  for (int i = 1; !st && i <= 4; i++)
    if (args[i].tag == BP_TAG_TENSOR) st = per_channel(args[i].u.tensor, nd, &c[i]);
  bp_tensor *inv = NULL, *y = NULL;
  if (!st) st = bp__core_scalar_tensor(m.device, m.dtype, &args[7], &inv);
  bp_value var[2] = {tv(c[4]), fv(1.0)};
  if (!st) st = bp__core_step("core::add", &inv, var, 2); /* eps + var */
  if (!st) st = bp__core_step("core::rsqrt", &inv, NULL, 0);
  bp_value w[1] = {tv(c[1])};
  if (!st && c[1]) st = bp__core_step("core::mul", &inv, w, 1);
  bp_value xm[3] = {args[0], tv(c[3]), fv(1.0)};
  if (!st) st = bp__core_call("core::sub", xm, 3, &y);
  bp_value iv1[1] = {tv(inv)};
  if (!st) st = bp__core_step("core::mul", &y, iv1, 1);
  bp_value b[2] = {tv(c[2]), fv(1.0)};
  if (!st && c[2]) st = bp__core_step("core::add", &y, b, 2);
  for (int i = 0; i < 5; i++) bp_tensor_release(c[i]);
  bp_tensor_release(inv);
  if (st) {
    bp_tensor_release(y);
    return st;
  }
  return ret_tensor(rets, y);
}

/* ------------------------------------------------------------------------ */
/* The definitions                                                          */
/* ------------------------------------------------------------------------ */

const core_def bp__core_defs_nn[] = {
    {"cat(Tensor[] tensors, int dim=0) -> Tensor", meta_cat, 0, 0,
     "the tensors joined along dim", 2, cat_composite},
    {"stack(Tensor[] tensors, int dim=0) -> Tensor", meta_stack, 0, 0,
     "the tensors joined along a new dim", 2, stack_composite},
    {"linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", meta_linear, 0, 0,
     "input @ weight^T + bias", 2, linear_composite},
    {"rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
     "Tensor", meta_rms_norm, 0, 0,
     "input * rsqrt(mean(input^2 over the trailing normalized_shape dims) + eps) * weight", 2,
     rms_norm_composite},
    {"batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
     "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
     meta_batch_norm, 0, 0, "(input - running_mean) / sqrt(running_var + eps) * weight + bias "
     "per channel (dim 1); inference only", 2, batch_norm_composite},
    {"scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
     "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> Tensor",
     bp__core_meta_sdpa, 0, 0, "softmax(query @ key^T * scale + mask) @ value, inference (dropout 0)", 2,
     bp__core_sdpa_composite},
};
const size_t bp__core_ndefs_nn = sizeof bp__core_defs_nn / sizeof bp__core_defs_nn[0];
