/*
 * host/core_sdpa.c - scaled_dot_product_attention (op set 2): its meta
 * function and its composite, softmax(query @ key^T * scale + mask) @
 * value over matmul, mul.Scalar, masked_fill or add, and softmax.
 *
 * Grouped-query attention: key and value may have fewer heads (the dim
 * before the last two) than query, a divisor of them; query head h then
 * uses key head h / (query heads / key heads), as PyTorch's enable_gqa
 * and repeat_interleave do.  is_causal masks key positions j > i for query
 * position i (the top-left alignment of PyTorch's math kernel, so that
 * L != S keeps the first S columns of row i up to i).  A row that masks
 * every key is NaN, as softmax of -inf everywhere is.  Inference only:
 * dropout_p must be 0.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <math.h>

/* The result's batch dims, checking key's and value's against query's:
 * equal, 1 (broadcast) on either side, or for the heads dim a divisor of
 * query's. */
static bp_status batch_dims(const bp_kernel_ctx *ctx, const bp_tensor_view *q,
                            const bp_tensor_view *k, const bp_tensor_view *v, int64_t *sizes) {
  int32_t nd = q->ndim;
  char s1[160], s2[160];
  for (int32_t d = 0; d < nd - 2; d++) {
    int64_t qs = q->sizes[d], ks = k->sizes[d];
    bool gqa = d == nd - 3 && ks > 0 && qs % ks == 0;
    if (!(qs == ks || qs == 1 || ks == 1 || gqa) || v->sizes[d] != ks)
      return bp__error(BP_ERR_SHAPE, "%s: argument #1 'key' with shape %s (and value's) does not "
                       "match argument #0 'query' with shape %s in dimension %d (expected the "
                       "same size, 1, or for the heads a divisor of query's)", ctx->op_name,
                       shape_str(k->ndim, k->sizes, s1, sizeof s1),
                       shape_str(q->ndim, q->sizes, s2, sizeof s2), (int)d);
    sizes[d] = gqa || ks == 1 ? qs : qs == 1 ? ks : qs;
  }
  return BP_OK;
}

bp_status bp__core_meta_sdpa(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *q = V(&args[0]), *k = V(&args[1]), *v = V(&args[2]);
  char s1[160], s2[160];
  if (!is_float(q->dtype)) return type_error(ctx, 0, q->dtype, "a floating-point dtype");
  for (size_t i = 1; i <= 2; i++)
    if (V(&args[i])->dtype != q->dtype) return type_error(ctx, i, V(&args[i])->dtype,
                                                          bp_dtype_name(q->dtype));
  if (q->ndim < 2)
    return bp__error(BP_ERR_SHAPE, "%s: argument #0 'query' has shape %s; expected at least 2 "
                     "dimensions ([..., L, E])", ctx->op_name,
                     shape_str(q->ndim, q->sizes, s1, sizeof s1));
  for (size_t i = 1; i <= 2; i++) {
    const bp_tensor_view *t = V(&args[i]);
    if (t->ndim != q->ndim)
      return bp__error(BP_ERR_SHAPE, "%s: argument #%zu '%s' has shape %s; expected %d "
                       "dimensions, as query has", ctx->op_name, i, an(ctx, i),
                       shape_str(t->ndim, t->sizes, s1, sizeof s1), (int)q->ndim);
  }
  int32_t nd = q->ndim;
  int64_t L = q->sizes[nd - 2], E = q->sizes[nd - 1], S = k->sizes[nd - 2];
  if (k->sizes[nd - 1] != E || v->sizes[nd - 2] != S)
    return bp__error(BP_ERR_SHAPE, "%s: query %s, key %s and value %s do not fit [..., L, E], "
                     "[..., S, E] and [..., S, Ev]", ctx->op_name,
                     shape_str(q->ndim, q->sizes, s1, sizeof s1),
                     shape_str(k->ndim, k->sizes, s2, sizeof s2),
                     shape_str(v->ndim, v->sizes, (char[160]){0}, 160));
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = batch_dims(ctx, q, k, v, sizes);
  if (st) return st;
  if (args[4].u.f != 0.0)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #4 'dropout_p' is %g; the op set "
                     "computes attention for inference (expected 0)", ctx->op_name, args[4].u.f);
  if (args[3].tag == BP_TAG_TENSOR) {
    const bp_tensor_view *m = V(&args[3]);
    if (args[5].u.b)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #3 'attn_mask' is given with "
                       "is_causal=True; give one of them", ctx->op_name);
    if (m->dtype != BP_BOOL && m->dtype != q->dtype)
      return type_error(ctx, 3, m->dtype, q->dtype == BP_FLOAT32 ? "bool or float32"
                                          : "bool or query's dtype");
    /* the mask broadcasts to the scores, [..., L, S] */
    int64_t target[BP_MAX_NDIM];
    copy_sizes(target, sizes, nd - 2);
    target[nd - 2] = L;
    target[nd - 1] = S;
    bool ok = m->ndim <= nd;
    for (int32_t d = 0; ok && d < m->ndim; d++) {
      int64_t ms = m->sizes[d], ts = target[nd - m->ndim + d];
      ok = ms == ts || ms == 1;
    }
    if (!ok)
      return bp__error(BP_ERR_SHAPE, "%s: argument #3 'attn_mask' with shape %s does not "
                       "broadcast to the scores' shape %s", ctx->op_name,
                       shape_str(m->ndim, m->sizes, s1, sizeof s1),
                       shape_str(nd, target, s2, sizeof s2));
  }
  sizes[nd - 2] = L;
  sizes[nd - 1] = v->sizes[nd - 1];
  set_contiguous(&outs[0], q->device, q->dtype, nd, sizes);
  return BP_OK;
}

/* key or value with its heads repeated g times each (a new contiguous
 * tensor, h * g heads), or t itself (retained) when g is 1. */
static bp_status repeat_heads(bp_tensor *t, int64_t g, bp_tensor **out) {
  if (g == 1) {
    *out = bp_tensor_retain(t);
    return BP_OK;
  }
  const bp_tensor_view *v = &t->view;
  int32_t nd = v->ndim, h = nd - 3;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  /* [..., H, S, E] viewed as [..., H, g, S, E] with stride 0 along g */
  for (int32_t d = 0, j = 0; d < nd; d++, j++) {
    sizes[j] = v->sizes[d];
    strides[j] = v->strides[d];
    if (d == h) sizes[++j] = g, strides[j] = 0;
  }
  bp_tensor *x = NULL, *c = NULL;
  bp_status st = bp_tensor_as_strided(t, nd + 1, sizes, strides, v->storage_offset, &x);
  bp_value a[1] = {tv(x)};
  if (!st) st = bp__core_call("core::contiguous", a, 1, &c);
  bp_tensor_release(x);
  if (st) return st;
  /* merged back to [..., H * g, S, E]: contiguous, so a plain view */
  int64_t ms[BP_MAX_NDIM], mst[BP_MAX_NDIM], s = 1;
  copy_sizes(ms, v->sizes, nd);
  ms[h] *= g;
  for (int32_t d = nd - 1; d >= 0; d--) {
    mst[d] = s;
    s *= ms[d] > 0 ? ms[d] : 1;
  }
  st = bp_tensor_as_strided(c, nd, ms, mst, c->view.storage_offset, out);
  bp_tensor_release(c);
  return st;
}

/* The bool mask of is_causal, [L, S], true where key j > query i (the
 * masked positions), on device dev (a new reference). */
static bp_status causal_mask(bp_device dev, int64_t L, int64_t S, bp_tensor **out) {
  bp_device host = {BP_DEVICE_CPU, 0};
  int64_t sizes[2] = {L, S};
  bp_tensor *h = NULL;
  bp_status st = bp_tensor_empty(host, BP_BOOL, 2, sizes, &h);
  if (st) return st;
  uint8_t *p = h->view.data;
  for (int64_t i = 0; i < L; i++)
    for (int64_t j = 0; j < S; j++) p[i * S + j] = j > i;
  return bp__core_to_device(h, dev, out);
}


bp_status bp__core_sdpa_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(bp__core_meta_sdpa, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *q = args[0].u.tensor, *k = args[1].u.tensor, *v = args[2].u.tensor;
  int32_t nd = q->view.ndim;
  int64_t g = 1;
  if (nd >= 3 && k->view.sizes[nd - 3] > 1 && k->view.sizes[nd - 3] != q->view.sizes[nd - 3])
    g = q->view.sizes[nd - 3] / k->view.sizes[nd - 3];
  bp_tensor *kk = NULL, *vv = NULL, *kt = NULL, *s = NULL, *mask = NULL;
  st = repeat_heads(k, g, &kk);
  if (!st) st = repeat_heads(v, g, &vv);
  if (!st) {
    const bp_tensor_view *kv = &kk->view;
    int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
    copy_sizes(sizes, kv->sizes, nd);
    copy_sizes(strides, kv->strides, nd);
    sizes[nd - 2] = kv->sizes[nd - 1], sizes[nd - 1] = kv->sizes[nd - 2];
    strides[nd - 2] = kv->strides[nd - 1], strides[nd - 1] = kv->strides[nd - 2];
    st = bp_tensor_as_strided(kk, nd, sizes, strides, kv->storage_offset, &kt);
  }
  bp_value qk[2] = {args[0], tv(kt)};
  if (!st) st = bp__core_call("core::matmul", qk, 2, &s);
  double scale = args[6].tag == BP_TAG_FLOAT ? args[6].u.f
                                             : 1.0 / sqrt((double)q->view.sizes[nd - 1]);
  bp_value sc[1] = {fv(scale)};
  if (!st) st = bp__core_step("core::mul.Scalar", &s, sc, 1);
  bp_value minf[2] = {{.tag = BP_TAG_TENSOR}, fv(-INFINITY)};
  if (!st && args[5].u.b) {
    st = causal_mask(q->view.device, q->view.sizes[nd - 2], k->view.sizes[nd - 2], &mask);
    minf[0] = tv(mask);
    if (!st) st = bp__core_step("core::masked_fill", &s, minf, 2);
  } else if (!st && args[3].tag == BP_TAG_TENSOR && V(&args[3])->dtype == BP_BOOL) {
    bp_value a[1] = {args[3]};
    st = bp__core_call("core::logical_not", a, 1, &mask);
    minf[0] = tv(mask);
    if (!st) st = bp__core_step("core::masked_fill", &s, minf, 2);
  } else if (!st && args[3].tag == BP_TAG_TENSOR) {
    bp_value a[2] = {args[3], fv(1.0)};
    st = bp__core_step("core::add", &s, a, 2);
  }
  bp_value last[1] = {iv(-1)}, vv1[1] = {tv(vv)};
  if (!st) st = bp__core_step("core::softmax", &s, last, 1);
  if (!st) st = bp__core_step("core::matmul", &s, vv1, 1);
  bp_tensor *all[] = {kk, vv, kt, mask};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) bp_tensor_release(all[i]);
  if (st) {
    bp_tensor_release(s);
    return st;
  }
  return ret_tensor(rets, s);
}
