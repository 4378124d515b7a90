/*
 * host/core_v2.c - the ops that version 2 of the `core` op set adds: their
 * schemas, meta functions, and the host's composites.
 *
 * A composite serves an op on a device type that has no kernel for it, by
 * calling other core ops there (docs/op-set.md, "Op set 2").  The Scalar
 * overloads (`mul.Scalar`, `lt.Scalar`, `clamp`, `masked_fill`, ...) are
 * composites over their tensor forms: the Scalar becomes a 0-dim tensor of
 * the computation's dtype on the tensor's device, so that a plugin needs
 * no kernel for them (it may still register one, which then runs).
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <math.h>
#include <stdlib.h>

#include <backplane/plugin_aux.h>

/* ------------------------------------------------------------------------ */
/* Comparisons and logical ops                                              */
/* ------------------------------------------------------------------------ */

/* eq, ne, lt, le, gt, ge on two tensors: bool, broadcast; the operands are
 * compared in their promoted dtype. */
static bp_status meta_compare(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *b = V(&args[1]);
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, a, 0, b, 1, &ndim, sizes);
  if (st) return st;
  set_contiguous(&outs[0], a->device, BP_BOOL, ndim, sizes);
  return BP_OK;
}

/* A op with a tensor and a Scalar: self's shape; user_data says the
 * result dtype (BP_BOOL, or -1 for the weak promotion). */
static bp_status meta_scalar_same_shape(const bp_kernel_ctx *ctx, const bp_value *args,
                                        int32_t dt, bp_tensor_meta *out) {
  (void)ctx;
  const bp_tensor_view *a = V(&args[0]);
  set_contiguous(out, a->device, dt, a->ndim, a->sizes);
  return BP_OK;
}

static bp_status meta_compare_scalar(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                     bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  return meta_scalar_same_shape(ctx, args, BP_BOOL, &outs[0]);
}

/* op.Scalar(self, other): op(self, other as a 0-dim tensor of the
 * promoted dtype). */
static bp_status compare_scalar_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                          size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_compare_scalar, ctx, args, nargs, &m);
  if (st) return st;
  const bp_tensor_view *a = V(&args[0]);
  bp_tensor *s = NULL, *r = NULL;
  st = bp__core_scalar_tensor(a->device, bp__core_promote_weak(a->dtype, &args[1]), &args[1], &s);
  if (st) return st;
  bp_value v[2] = {args[0], tv(s)};
  st = bp__core_call((const char *)ctx->user_data, v, 2, &r);
  bp_tensor_release(s);
  return st ? st : ret_tensor(rets, r);
}

/* logical_and, logical_or: bool, broadcast. */
#define meta_logical2 meta_compare

/* logical_not, isnan: bool of self's shape. */
static bp_status meta_bool_unary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  return meta_scalar_same_shape(ctx, args, BP_BOOL, &outs[0]);
}

/* The tensor `x != 0` (a new reference); a bool x is itself, retained. */
static bp_status truth(bp_tensor *x, bp_tensor **out) {
  if (x->view.dtype == BP_BOOL) {
    *out = bp_tensor_retain(x);
    return BP_OK;
  }
  bp_value zero = {.tag = BP_TAG_INT};
  bp_tensor *z = NULL;
  bp_status st = bp__core_scalar_tensor(x->view.device, x->view.dtype, &zero, &z);
  if (st) return st;
  bp_value v[2] = {tv(x), tv(z)};
  st = bp__core_call("core::ne", v, 2, out);
  bp_tensor_release(z);
  return st;
}

/* logical_not(x) = (x == 0); isnan(x) = (x != x). */
static bp_status bool_unary_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                      size_t nargs, bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_tensor *x = args[0].u.tensor, *r = NULL;
  bp_status st;
  if (ctx->user_data) { /* isnan: only a float is ever unequal to itself */
    bp_value v[2] = {args[0], args[0]};
    st = bp__core_call("core::ne", v, 2, &r);
    return st ? st : ret_tensor(rets, r);
  }
  bp_value zero = {.tag = BP_TAG_INT};
  bp_tensor *z = NULL;
  st = bp__core_scalar_tensor(x->view.device, x->view.dtype, &zero, &z);
  if (st) return st;
  bp_value v[2] = {args[0], tv(z)};
  st = bp__core_call("core::eq", v, 2, &r);
  bp_tensor_release(z);
  return st ? st : ret_tensor(rets, r);
}

/* logical_and(a, b) = (a != 0) * (b != 0); logical_or with maximum. */
static bp_status logical2_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                    bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_logical2, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *ta = NULL, *tb = NULL, *r = NULL;
  st = truth(args[0].u.tensor, &ta);
  if (!st) st = truth(args[1].u.tensor, &tb);
  if (!st) {
    bp_value v[2] = {tv(ta), tv(tb)};
    st = bp__core_call(ctx->user_data ? "core::maximum" : "core::mul", v, 2, &r);
  }
  bp_tensor_release(ta);
  bp_tensor_release(tb);
  return st ? st : ret_tensor(rets, r);
}

/* ------------------------------------------------------------------------ */
/* masked_fill and clamp                                                    */
/* ------------------------------------------------------------------------ */

/* Whether Scalar s converts to dtype dt without overflow (PyTorch's check,
 * but for uint8, where PyTorch also wraps negatives down to -255 and core
 * refuses them: docs/op-set.md): an integer dtype takes a finite value in
 * its range (truncated), a float dtype any value whose finite magnitude it
 * can hold (infinities and NaN included), bool any value. */
static bool scalar_fits(int32_t dt, const bp_value *s) {
  if (dt == BP_BOOL || s->tag == BP_TAG_BOOL) return true;
  double lo, hi;
  switch (dt) {
    case BP_INT8: lo = -128.0, hi = 127.0; break;
    case BP_INT16: lo = -32768.0, hi = 32767.0; break;
    case BP_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
    case BP_UINT8: lo = 0, hi = 255.0; break;
    case BP_INT64: return s->tag == BP_TAG_INT || (isfinite(s->u.f) && s->u.f >= -0x1p63 &&
                                                   s->u.f < 0x1p63);
    case BP_FLOAT16: lo = -65504.0, hi = 65504.0; break;
    case BP_BFLOAT16: lo = -0x1.fep127, hi = 0x1.fep127; break;
    case BP_FLOAT32: lo = -0x1.fffffep127, hi = 0x1.fffffep127; break;
    default: return true; /* float64 */
  }
  if (s->tag == BP_TAG_INT) return (double)s->u.i >= lo && (double)s->u.i <= hi;
  double v = s->u.f;
  if (is_float(dt)) {
    /* Values that round to the largest finite one still fit. */
    double half_ulp = dt == BP_FLOAT16 ? 16.0 : dt == BP_BFLOAT16 ? 0x1p119 : 0x1p103;
    return !isfinite(v) || (v > lo - half_ulp && v < hi + half_ulp);
  }
  return isfinite(v) && v > lo - 1.0 && v < hi + 1.0;
}

static bp_status need_fit(const bp_kernel_ctx *ctx, size_t i, int32_t dt, const bp_value *s) {
  if (scalar_fits(dt, s)) return BP_OK;
  char buf[64];
  return bp__error(BP_ERR_INVALID_ARGUMENT,
                   "%s: argument #%zu '%s': the value %s cannot be converted to %s without "
                   "overflow", ctx->op_name, i, an(ctx, i), bp__core_scalar_str(s, buf, sizeof buf),
                   bp_dtype_name(dt));
}

/* masked_fill(self, mask, value): self where mask is false, else value;
 * broadcast; self's dtype. */
static bp_status meta_masked_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *m = V(&args[1]);
  if (m->dtype != BP_BOOL) return type_error(ctx, 1, m->dtype, "bool");
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, a, 0, m, 1, &ndim, sizes);
  if (!st) st = need_fit(ctx, 2, a->dtype, &args[2]);
  if (st) return st;
  set_contiguous(&outs[0], a->device, a->dtype, ndim, sizes);
  return BP_OK;
}

/* where(mask, value, self). */
static bp_status masked_fill_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                       size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_masked_fill, ctx, args, nargs, &m);
  if (st) return st;
  const bp_tensor_view *a = V(&args[0]);
  bp_tensor *s = NULL, *r = NULL;
  st = bp__core_scalar_tensor(a->device, a->dtype, &args[2], &s);
  if (st) return st;
  bp_value v[3] = {args[1], tv(s), args[0]};
  st = bp__core_call("core::where", v, 3, &r);
  bp_tensor_release(s);
  return st ? st : ret_tensor(rets, r);
}

/* clamp(self, min, max): the dtype of self weakly promoted with both. */
static bp_status meta_clamp(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  if (args[1].tag == BP_TAG_NONE && args[2].tag == BP_TAG_NONE)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: at least one of argument #1 'min' and #2 'max' must not be None",
                     ctx->op_name);
  int32_t dt = bp__core_promote_weak(bp__core_promote_weak(a->dtype, &args[1]), &args[2]);
  if (dt == BP_BOOL) return type_error(ctx, 0, a->dtype, "a numeric dtype (not bool)");
  /* A bound is converted to the result's dtype as masked_fill's value is
   * (a bound that wrapped would clamp to nonsense). */
  for (size_t k = 1; k <= 2; k++) {
    bp_status st = args[k].tag == BP_TAG_NONE ? BP_OK : need_fit(ctx, k, dt, &args[k]);
    if (st) return st;
  }
  set_contiguous(&outs[0], a->device, dt, a->ndim, a->sizes);
  return BP_OK;
}

/* minimum(maximum(self, min), max): NaN propagates from self and from the
 * bounds; min > max gives max everywhere, as in PyTorch. */
static bp_status clamp_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_clamp, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *cur = bp_tensor_retain(args[0].u.tensor);
  /* A bare self of another dtype than the result (no bound raised it) is
   * converted first, so that the result always has the promoted dtype. */
  if (cur->view.dtype != m.dtype) {
    bp_value v[2] = {tv(cur), {.tag = BP_TAG_SCALAR_TYPE, .u.i = m.dtype}};
    bp_tensor *c = NULL;
    st = bp__core_call("core::cast", v, 2, &c);
    bp_tensor_release(cur);
    if (st) return st;
    cur = c;
  }
  static const char *const fn[2] = {"core::maximum", "core::minimum"};
  for (int k = 0; k < 2 && !st; k++) {
    if (args[1 + k].tag == BP_TAG_NONE) continue;
    bp_tensor *s = NULL, *r = NULL;
    st = bp__core_scalar_tensor(cur->view.device, m.dtype, &args[1 + k], &s);
    if (st) break;
    bp_value v[2] = {tv(cur), tv(s)};
    st = bp__core_call(fn[k], v, 2, &r);
    bp_tensor_release(s);
    if (st) break;
    bp_tensor_release(cur);
    cur = r;
  }
  if (st) {
    bp_tensor_release(cur);
    return st;
  }
  return ret_tensor(rets, cur);
}

/* ------------------------------------------------------------------------ */
/* Arithmetic with a Scalar                                                 */
/* ------------------------------------------------------------------------ */

/* add.Scalar, sub.Scalar, mul.Scalar, div.Scalar, pow.Scalar: the tensor
 * op's rules with other as a 0-dim tensor of the weakly promoted dtype
 * (which is the result's dtype).  user_data is the OP_ kind. */
static bp_status meta_binary_scalar(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                    bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  int kind = (int)(intptr_t)ctx->user_data;
  const bp_tensor_view *a = V(&args[0]);
  int32_t dt = bp__core_promote_weak(a->dtype, &args[1]);
  if (kind == OP_DIV && !is_float(dt)) dt = BP_FLOAT32;
  /* The tensor op's own checks, on a 0-dim view that stands for the
   * Scalar. */
  bp_tensor_view s;
  memset(&s, 0, sizeof s);
  s.struct_size = BP_TENSOR_VIEW_STRUCT_SIZE;
  s.device = a->device;
  s.dtype = dt;
  s.numel = 1;
  return bp__core_binary_result(ctx, a, &s, nargs > 2 ? args[2].u.f : 1.0, kind, &outs[0]);
}

static bp_status binary_scalar_composite(const bp_kernel_ctx *ctx, const bp_value *args,
                                         size_t nargs, bp_value *rets, size_t nrets) {
  (void)nrets;
  static const char *const names[] = {
      [OP_ADD] = "core::add", [OP_SUB] = "core::sub", [OP_MUL] = "core::mul",
      [OP_DIV] = "core::div", [OP_POW] = "core::pow"};
  int kind = (int)(intptr_t)ctx->user_data;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_binary_scalar, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *s = NULL, *r = NULL;
  /* the Scalar in the result's dtype: the weakly promoted one */
  st = bp__core_scalar_tensor(m.device, m.dtype, &args[1], &s);
  if (st) return st;
  bp_value v[3] = {args[0], tv(s), nargs > 2 ? args[2] : fv(1.0)};
  st = bp__core_call(names[kind], v, kind == OP_ADD || kind == OP_SUB ? 3 : 2, &r);
  bp_tensor_release(s);
  return st ? st : ret_tensor(rets, r);
}

/* ------------------------------------------------------------------------ */
/* Gathers                                                                  */
/* ------------------------------------------------------------------------ */

/* An index argument: int64 or int32 (the kernel checks each value). */
static bp_status need_index(const bp_kernel_ctx *ctx, size_t i, const bp_tensor_view *v) {
  if (v->dtype == BP_INT64 || v->dtype == BP_INT32) return BP_OK;
  return type_error(ctx, i, v->dtype, "int64 or int32");
}

/* index_select(self, dim, index): self's shape with dim's size replaced
 * by the number of indices (index is 1-dimensional or 0-dim). */
static bp_status meta_index_select(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *ix = V(&args[2]);
  int32_t dim;
  bp_status st = norm_dim(ctx, 1, args[1].u.i, a->ndim, &dim);
  if (!st) st = need_index(ctx, 2, ix);
  if (st) return st;
  if (ix->ndim > 1) {
    char s1[160];
    return bp__error(BP_ERR_SHAPE, "%s: argument #2 'index' has shape %s; expected 1 dimension "
                     "(or 0)", ctx->op_name, shape_str(ix->ndim, ix->sizes, s1, sizeof s1));
  }
  if (a->ndim == 0 && ix->numel != 1)
    return bp__error(BP_ERR_SHAPE, "%s: argument #2 'index' has %lld elements; a 0-dim self "
                     "takes exactly 1", ctx->op_name, (long long)ix->numel);
  int64_t sizes[BP_MAX_NDIM];
  copy_sizes(sizes, a->sizes, a->ndim);
  if (a->ndim > 0) sizes[dim] = ix->numel;
  set_contiguous(&outs[0], a->device, a->dtype, a->ndim, sizes);
  return BP_OK;
}

/* embedding(weight, indices, padding_idx, ...): weight's rows at the
 * indices, shape indices.shape + [embedding_dim]. */
static bp_status meta_embedding(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *w = V(&args[0]), *ix = V(&args[1]);
  char s1[160];
  if (w->ndim != 2)
    return bp__error(BP_ERR_SHAPE, "%s: argument #0 'weight' has shape %s; expected 2 dimensions "
                     "[num_embeddings, embedding_dim]", ctx->op_name,
                     shape_str(w->ndim, w->sizes, s1, sizeof s1));
  bp_status st = need_index(ctx, 1, ix);
  if (st) return st;
  int64_t pad = args[2].u.i;
  if (pad != -1 && (pad < 0 || pad >= w->sizes[0]))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #2 'padding_idx' is %lld; expected -1 "
                     "(none) or 0 .. %lld", ctx->op_name, (long long)pad,
                     (long long)w->sizes[0] - 1);
  if (ix->ndim + 1 > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: the result would have %d dimensions", ctx->op_name,
                     (int)ix->ndim + 1);
  int64_t sizes[BP_MAX_NDIM];
  copy_sizes(sizes, ix->sizes, ix->ndim);
  sizes[ix->ndim] = w->sizes[1];
  set_contiguous(&outs[0], w->device, w->dtype, ix->ndim + 1, sizes);
  return BP_OK;
}

/* index_select(weight, 0, indices flattened), viewed as the result's
 * shape.  padding_idx changes only the gradient, which the op set does
 * not compute: the padding row is read as it is. */
static bp_status embedding_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                     bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  bp_status st = run_meta(meta_embedding, ctx, args, nargs, &m);
  if (st) return st;
  bp_tensor *ix = args[1].u.tensor, *flat = NULL, *c = NULL, *sel = NULL, *r = NULL;
  bp_value v1[1] = {args[1]};
  st = bp__core_call("core::contiguous", v1, 1, &c);
  if (st) return st;
  int64_t n = ix->view.numel, one = 1;
  st = bp_tensor_as_strided(c, 1, &n, &one, c->view.storage_offset, &flat);
  bp_tensor_release(c);
  if (st) return st;
  bp_value dim = {.tag = BP_TAG_INT};
  bp_value v3[3] = {args[0], dim, tv(flat)};
  st = bp__core_call("core::index_select", v3, 3, &sel);
  bp_tensor_release(flat);
  if (st) {
    /* An index out of range is the caller's: say it in embedding's terms. */
    const char *msg = bp_last_error(), *tail = strstr(msg, "'index': ");
    if (st == BP_ERR_INVALID_ARGUMENT && tail) {
      char copy[512];
      snprintf(copy, sizeof copy, "%s", tail + strlen("'index': "));
      return bp__error(st, "%s: argument #1 'indices': %s", ctx->op_name, copy);
    }
    return st;
  }
  st = bp_tensor_as_strided(sel, m.ndim, m.sizes, m.strides, sel->view.storage_offset, &r);
  bp_tensor_release(sel);
  return st ? st : ret_tensor(rets, r);
}

/* gather(self, dim, index): out[i][j][k] = self[index[i][j][k]][j][k]
 * (dim 0), shape index's; index has self's rank and sizes no larger off
 * dim. */
static bp_status meta_gather(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *ix = V(&args[2]);
  int32_t dim;
  bp_status st = norm_dim(ctx, 1, args[1].u.i, a->ndim, &dim);
  if (!st) st = need_index(ctx, 2, ix);
  if (st) return st;
  char s1[160], s2[160];
  int32_t na = a->ndim > 0 ? a->ndim : 1, ni = ix->ndim > 0 ? ix->ndim : 1;
  if (na != ni)
    return bp__error(BP_ERR_SHAPE, "%s: argument #2 'index' has %d dimensions, argument #0 "
                     "'self' %d; expected the same number", ctx->op_name, (int)ix->ndim,
                     (int)a->ndim);
  for (int32_t d = 0; d < ix->ndim && a->ndim > 0; d++)
    if (d != dim && ix->sizes[d] > a->sizes[d])
      return bp__error(BP_ERR_SHAPE, "%s: argument #2 'index' with shape %s is larger than "
                       "argument #0 'self' with shape %s in dimension %d (%lld vs %lld)",
                       ctx->op_name, shape_str(ix->ndim, ix->sizes, s1, sizeof s1),
                       shape_str(a->ndim, a->sizes, s2, sizeof s2), (int)d,
                       (long long)ix->sizes[d], (long long)a->sizes[d]);
  set_contiguous(&outs[0], a->device, a->dtype, ix->ndim, ix->sizes);
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* cumsum                                                                   */
/* ------------------------------------------------------------------------ */

/* cumsum(self, dim, dtype): self's shape; dtype if given, else int64 for
 * integers and bool, else self's (sum's rule). */
static bp_status meta_cumsum(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  int32_t dim;
  bp_status st = norm_dim(ctx, 1, args[1].u.i, a->ndim, &dim);
  if (st) return st;
  int32_t dt = is_float(a->dtype) ? a->dtype : BP_INT64;
  if (nargs > 2 && args[2].tag == BP_TAG_SCALAR_TYPE) {
    st = need_dtype_code(ctx, 2, args[2].u.i);
    if (st) return st;
    dt = (int32_t)args[2].u.i;
  }
  set_contiguous(&outs[0], a->device, dt, a->ndim, a->sizes);
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* topk and sort                                                            */
/* ------------------------------------------------------------------------ */

/* topk(self, k, dim, largest, sorted) and sort(self, dim, descending):
 * values of self's dtype and int64 indices, of self's shape with dim's
 * size k for topk.  topk refuses bool, as PyTorch does. */
static bp_status meta_topk_sort(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  bool topk = (intptr_t)ctx->user_data == 1;
  const bp_tensor_view *a = V(&args[0]);
  size_t di = topk ? 2 : 1;
  int32_t dim;
  bp_status st = norm_dim(ctx, di, args[di].u.i, a->ndim, &dim);
  if (st) return st;
  int64_t sizes[BP_MAX_NDIM];
  copy_sizes(sizes, a->sizes, a->ndim);
  if (topk) {
    if (a->dtype == BP_BOOL) return type_error(ctx, 0, a->dtype, "a numeric dtype (not bool)");
    int64_t n = a->ndim > 0 ? a->sizes[dim] : 1, k = args[1].u.i;
    if (k < 0 || k > n)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #1 'k' is %lld, but dimension %d "
                       "has %lld elements (expected 0 .. %lld)", ctx->op_name, (long long)k,
                       (int)dim, (long long)n, (long long)n);
    if (a->ndim > 0) sizes[dim] = k;
  }
  set_contiguous(&outs[0], a->device, a->dtype, a->ndim, sizes);
  set_contiguous(&outs[1], a->device, BP_INT64, a->ndim, sizes);
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* The definitions                                                          */
/* ------------------------------------------------------------------------ */

#define UN2(name, rule, doc)                                                                   \
  {#name "(Tensor self) -> Tensor", bp__core_meta_unary, rule, 0, doc, 2, NULL}
#define CMP(name, doc)                                                                         \
  {#name "(Tensor self, Tensor other) -> Tensor", meta_compare, 0, 0, doc, 2, NULL},           \
  {#name ".Scalar(Tensor self, Scalar other) -> Tensor", meta_compare_scalar,                  \
   (intptr_t) "core::" #name, 0, doc " (a Scalar other)", 2, compare_scalar_composite}
#define ARITH_SCALAR(name, kind, doc)                                                          \
  {#name ".Scalar(Tensor self, Scalar other) -> Tensor", meta_binary_scalar, kind, 0, doc, 2,  \
   binary_scalar_composite}

const core_def bp__core_defs_v2[] = {
    UN2(sin, U_FLOAT, "sine"),
    UN2(cos, U_FLOAT, "cosine"),
    UN2(erf, U_FLOAT, "error function"),
    UN2(silu, U_FLOAT, "self * sigmoid(self)"),
    CMP(eq, "self == other, bool, broadcast"),
    CMP(ne, "self != other, bool, broadcast (true where either is NaN)"),
    CMP(lt, "self < other, bool, broadcast"),
    CMP(le, "self <= other, bool, broadcast"),
    CMP(gt, "self > other, bool, broadcast"),
    CMP(ge, "self >= other, bool, broadcast"),
    {"logical_not(Tensor self) -> Tensor", meta_bool_unary, 0, 0, "self == 0, bool", 2,
     bool_unary_composite},
    {"logical_and(Tensor self, Tensor other) -> Tensor", meta_logical2, 0, 0,
     "self != 0 and other != 0, bool, broadcast", 2, logical2_composite},
    {"logical_or(Tensor self, Tensor other) -> Tensor", meta_logical2, 1, 0,
     "self != 0 or other != 0, bool, broadcast", 2, logical2_composite},
    {"isnan(Tensor self) -> Tensor", meta_bool_unary, 1, 0, "self != self, bool", 2,
     bool_unary_composite},
    {"masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor", meta_masked_fill, 0, 0,
     "value where mask, else self; broadcast", 2, masked_fill_composite},
    {"clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", meta_clamp, 0, 0,
     "min(max(self, min), max)", 2, clamp_composite},
    {"add.Scalar(Tensor self, Scalar other, float alpha=1.0) -> Tensor", meta_binary_scalar, OP_ADD,
     0, "self + alpha * other", 2, binary_scalar_composite},
    {"sub.Scalar(Tensor self, Scalar other, float alpha=1.0) -> Tensor", meta_binary_scalar, OP_SUB,
     0, "self - alpha * other", 2, binary_scalar_composite},
    ARITH_SCALAR(mul, OP_MUL, "self * other"),
    ARITH_SCALAR(div, OP_DIV, "self / other (true division)"),
    ARITH_SCALAR(pow, OP_POW, "self ** other"),
    {"index_select(Tensor self, int dim, Tensor index) -> Tensor", meta_index_select, 0, 0,
     "the slices of self along dim at the indices", 2, NULL},
    {"embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
     "bool sparse=False) -> Tensor",
     meta_embedding, 0, 0, "the rows of weight at the indices (padding_idx and the others only "
     "change gradients)", 2, embedding_composite},
    {"gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
     meta_gather, 0, 0, "self's elements along dim at index's values", 2, NULL},
    {"cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", meta_cumsum, 0, 0,
     "inclusive prefix sums along dim", 2, NULL},
    {"topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor "
     "values, Tensor indices)", meta_topk_sort, 1, 0,
     "the k largest (smallest) elements along dim and their indices, in order; ties by index",
     2, NULL},
    {"sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
     meta_topk_sort, 0, 0, "self sorted along dim (stable) and the indices of the sorted order",
     2, NULL},
};
const size_t bp__core_ndefs_v2 = sizeof bp__core_defs_v2 / sizeof bp__core_defs_v2[0];
