/*
 * host/core_meta.h - what the meta functions of the `core` op set share
 * (core.c: version 1; core_v2.c: version 2): the dtype tests, shapes,
 * broadcasting, dims, the errors that name an argument, and the table
 * entry of a core op.
 */
#ifndef BP_HOST_CORE_META_H
#define BP_HOST_CORE_META_H

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Dtype rules                                                              */
/* ------------------------------------------------------------------------ */

static inline bool is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

static inline int float_rank(int32_t dt) {
  return dt == BP_FLOAT64 ? 3 : dt == BP_FLOAT32 ? 2 : 1;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static inline const bp_tensor_view *V(const bp_value *v) { return &v->u.tensor->view; }

static inline const char *an(const bp_kernel_ctx *ctx, size_t i) {
  const bp__schema *s = ((const bp_op *)ctx->op)->schema;
  return i < s->nargs && s->args[i].name ? s->args[i].name : "?";
}

/* "[2, 3]" into buf. */
static inline const char *shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t n) {
  return bp__shape_str(ndim, sizes, buf, n);
}

/* Copies n sizes; a 0-dim tensor's sizes pointer is NULL, which memcpy
 * must not see even for 0 bytes. */
static inline void copy_sizes(int64_t *dst, const int64_t *src, int32_t n) {
  for (int32_t d = 0; d < n; d++) dst[d] = src[d];
}

static inline void set_contiguous(bp_tensor_meta *m, bp_device dev, int32_t dtype, int32_t ndim,
                           const int64_t *sizes) {
  m->device = dev;
  m->dtype = dtype;
  m->ndim = ndim;
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    m->sizes[d] = sizes[d];
    m->strides[d] = s;
    if (!__builtin_mul_overflow(s, sizes[d] > 0 ? sizes[d] : 1, &s)) continue;
    s = INT64_MAX;
  }
}

static inline void copy_meta(bp_tensor_meta *m, const bp_tensor_view *v) {
  m->device = v->device;
  m->dtype = v->dtype;
  m->ndim = v->ndim;
  for (int32_t d = 0; d < v->ndim; d++) {
    m->sizes[d] = v->sizes[d];
    m->strides[d] = v->strides[d];
  }
}

/* A ScalarType argument's value must be a dtype code: the stack's push
 * checks that, but a value can also be written directly. */
static inline bp_status need_dtype_code(const bp_kernel_ctx *ctx, size_t i, int64_t code) {
  if (bp_dtype_name((int32_t)code) && code == (int32_t)code) return BP_OK;
  return bp__error(BP_ERR_TYPE, "%s: argument #%zu '%s': %lld is not a dtype", ctx->op_name, i,
                   an(ctx, i), (long long)code);
}

/* Broadcasts sizes (NumPy rules) into out; names both arguments on error. */
static inline bp_status broadcast(const bp_kernel_ctx *ctx, int32_t *ndim, int64_t *sizes, size_t ai,
                           const bp_tensor_view *b, size_t bi, const bp_tensor_view *a) {
  int32_t n = *ndim > b->ndim ? *ndim : b->ndim;
  int64_t out[BP_MAX_NDIM];
  for (int32_t d = 0; d < n; d++) {
    int32_t da = d - (n - *ndim), db = d - (n - b->ndim);
    int64_t sa = da >= 0 ? sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      char s1[160], s2[160];
      return bp__error(BP_ERR_SHAPE,
                       "%s: argument #%zu '%s' with shape %s cannot be broadcast with argument "
                       "#%zu '%s' with shape %s (dimension %d: %lld vs %lld)",
                       ctx->op_name, bi, an(ctx, bi), shape_str(b->ndim, b->sizes, s1, sizeof s1),
                       ai, an(ctx, ai), shape_str(a->ndim, a->sizes, s2, sizeof s2), (int)d,
                       (long long)sb, (long long)sa);
    }
    out[d] = sa == 1 ? sb : sa;
  }
  copy_sizes(sizes, out, n);
  *ndim = n;
  return BP_OK;
}

/* The broadcast shape of arguments #ai (a) and #bi (b), into ndim/sizes. */
static inline bp_status broadcast2(const bp_kernel_ctx *ctx, const bp_tensor_view *a, size_t ai,
                            const bp_tensor_view *b, size_t bi, int32_t *ndim, int64_t *sizes) {
  *ndim = a->ndim;
  copy_sizes(sizes, a->sizes, a->ndim);
  return broadcast(ctx, ndim, sizes, ai, b, bi, a);
}

/* Normalises dim into [0, ndim) (a 0-dim tensor accepts -1 and 0). */
static inline bp_status norm_dim(const bp_kernel_ctx *ctx, size_t argi, int64_t dim, int32_t ndim,
                          int32_t *out) {
  int32_t lim = ndim > 0 ? ndim : 1;
  *out = 0;
  if (dim < -lim || dim >= lim)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: argument #%zu '%s': dimension %lld is out of range for a %d-dimensional "
                     "tensor (expected %d .. %d)", ctx->op_name, argi, an(ctx, argi),
                     (long long)dim, (int)ndim, -lim, lim - 1);
  *out = (int32_t)(dim < 0 ? dim + lim : dim);
  return BP_OK;
}

static inline bp_status type_error(const bp_kernel_ctx *ctx, size_t i, int32_t got, const char *want) {
  return bp__error(BP_ERR_TYPE, "%s: argument #%zu '%s': expected %s, got %s", ctx->op_name, i,
                   an(ctx, i), want, bp_dtype_name(got) ? bp_dtype_name(got) : "?");
}

/* A tensor that an op writes elementwise (copy_'s self, add.out's out)
 * must not hold one memory location at several indices: a dimension of
 * size > 1 with stride 0, as an expanded view has.  Which of the values
 * would land there is undefined (kernels write in parallel), so the op
 * refuses it, as PyTorch does.  (fill_ writes one value: it may.  An
 * empty tensor is written nowhere: it may too, as in PyTorch.) */
static inline bp_status written_once(const bp_kernel_ctx *ctx, size_t i, const char *name,
                              const bp_tensor_view *v) {
  if (v->numel == 0) return BP_OK;
  for (int32_t d = 0; d < v->ndim; d++)
    if (v->sizes[d] > 1 && v->strides[d] == 0)
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "%s: argument #%zu '%s': dimension %d has %lld elements at one address "
                       "(stride 0), and it is written; expected a tensor without broadcast "
                       "dimensions",
                       ctx->op_name, i, name, d, (long long)v->sizes[d]);
  return BP_OK;
}

/* A normalisation's input (argument #0, floating) and normalized_shape
 * (argument #1, the input's trailing sizes), and its weight-like argument
 * i if given (normalized_shape's shape, the input's dtype). */
static inline bp_status normalized_shape_ok(const bp_kernel_ctx *ctx, const bp_value *args) {
  const bp_tensor_view *x = V(&args[0]);
  const bp_value *ns = &args[1];
  char s1[160], s2[160];
  if (!is_float(x->dtype)) return type_error(ctx, 0, x->dtype, "a floating-point dtype");
  bool ok = ns->len > 0 && ns->len <= (uint32_t)x->ndim;
  for (uint32_t i = 0; ok && i < ns->len; i++)
    ok = ns->u.ints[i] == x->sizes[x->ndim - (int32_t)ns->len + (int32_t)i];
  if (!ok)
    return bp__error(BP_ERR_SHAPE, "%s: argument #1 'normalized_shape' %s does not match the "
                     "trailing dimensions of input shape %s", ctx->op_name,
                     shape_str((int32_t)ns->len, ns->u.ints, s1, sizeof s1),
                     shape_str(x->ndim, x->sizes, s2, sizeof s2));
  return BP_OK;
}

static inline bp_status normalized_weight_ok(const bp_kernel_ctx *ctx, const bp_value *args,
                                             size_t i) {
  if (args[i].tag == BP_TAG_NONE) return BP_OK;
  const bp_tensor_view *x = V(&args[0]), *w = V(&args[i]);
  const bp_value *ns = &args[1];
  char s1[160], s2[160];
  bool same = w->ndim == (int32_t)ns->len;
  for (int32_t d = 0; same && d < w->ndim; d++) same = w->sizes[d] == ns->u.ints[d];
  if (!same)
    return bp__error(BP_ERR_SHAPE, "%s: argument #%zu '%s' has shape %s, expected %s",
                     ctx->op_name, i, an(ctx, i), shape_str(w->ndim, w->sizes, s1, sizeof s1),
                     shape_str((int32_t)ns->len, ns->u.ints, s2, sizeof s2));
  if (w->dtype != x->dtype) return type_error(ctx, i, w->dtype, bp_dtype_name(x->dtype));
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Meta functions that both versions use (core.c)                           */
/* ------------------------------------------------------------------------ */

/* Which binary op a meta function serves (user_data of its def). */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAXIMUM, OP_MINIMUM, OP_POW };

/* user_data of a unary op: which result dtype rule applies. */
enum { U_SAME_NO_BOOL = 1, U_FLOAT };

/* The result of binary op `kind` on a (argument #0) and b (#1); alpha is
 * add's and sub's (1 for the others). */
bp_status bp__core_binary_result(const bp_kernel_ctx *ctx, const bp_tensor_view *a,
                                 const bp_tensor_view *b, double alpha, int kind,
                                 bp_tensor_meta *out);
/* A unary op's result: user_data is its U_ rule. */
bp_status bp__core_meta_unary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_tensor_meta *outs, size_t nouts);

/* ------------------------------------------------------------------------ */
/* Composites (core_call.c)                                                 */
/* ------------------------------------------------------------------------ */

/* A Scalar is weak in promotion: it raises the category of dt (bool <
 * integer < float) to its own, never the width within a category. */
int32_t bp__core_promote_weak(int32_t dt, const bp_value *s);
/* A Scalar as text ("2.5", "True"), into buf. */
const char *bp__core_scalar_str(const bp_value *s, char *buf, size_t n);
/* bp_tensor_empty for a composite's tensor `what` ("the input padded to
 * [1, 3, 9, 9]"), whose failure names ctx's op and `what`. */
bp_status bp__core_alloc(const bp_kernel_ctx *ctx, const char *what, bp_device dev, int32_t dt,
                         int32_t ndim, const int64_t *sizes, bp_tensor **out);
/* The same for a composite's result ("its result"). */
bp_status bp__core_empty(const bp_kernel_ctx *ctx, bp_device dev, int32_t dt, int32_t ndim,
                         const int64_t *sizes, bp_tensor **out);
/* A 0-dim tensor of dtype dt on device dev holding the Scalar s converted
 * as core::cast converts (*out is a new reference). */
bp_status bp__core_scalar_tensor(bp_device dev, int32_t dt, const bp_value *s, bp_tensor **out);
/* h (a tensor in host memory, whose reference this takes) on device dev:
 * h itself for the host's CPU, else a copy (*out is a new reference). */
bp_status bp__core_to_device(bp_tensor *h, bp_device dev, bp_tensor **out);
/* Calls core op `name` on n values (at most 8); *out receives its one
 * Tensor result (a new reference). */
bp_status bp__core_call(const char *name, const bp_value *vals, size_t n, bp_tensor **out);
/* Calls op on (*x, rest...) and, on success, releases *x and puts the
 * result in its place: a chain of ops on one tensor. */
bp_status bp__core_step(const char *op, bp_tensor **x, const bp_value *rest, size_t nrest);

static inline bp_value tv(bp_tensor *t) {
  bp_value v = {.tag = BP_TAG_TENSOR};
  v.u.tensor = t;
  return v;
}

static inline bp_value iv(int64_t i) {
  bp_value v = {.tag = BP_TAG_INT};
  v.u.i = i;
  return v;
}

static inline bp_value fv(double f) {
  bp_value v = {.tag = BP_TAG_FLOAT};
  v.u.f = f;
  return v;
}

/* A composite first runs its op's meta function: its errors are the op's
 * own, before any call.  m receives the result's metadata. */
static inline bp_status run_meta(bp_meta_fn meta, const bp_kernel_ctx *ctx, const bp_value *args,
                          size_t nargs, bp_tensor_meta *m) {
  m->struct_size = BP_TENSOR_META_STRUCT_SIZE;
  return meta(ctx, args, nargs, m, 1);
}

/* A composite's one Tensor result. */
static inline bp_status ret_tensor(bp_value *rets, bp_tensor *t) {
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = t;
  return BP_OK;
}


/* ------------------------------------------------------------------------ */
/* The definitions                                                          */
/* ------------------------------------------------------------------------ */

typedef struct core_def {
  const char *schema;
  bp_meta_fn meta;
  intptr_t data;
  uint64_t flags;
  const char *doc;
  uint32_t since;              /* the op-set version that added it */
  bp_boxed_kernel composite;   /* the host's composite, if any */
} core_def;

/* core_sdpa.c: scaled_dot_product_attention's meta function and composite. */
bp_status bp__core_meta_sdpa(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts);
bp_status bp__core_sdpa_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets);

/* The ops that op set 2 adds: core_v2.c (elementwise, gathers, cumsum)
 * and core_nn.c (shapes and nn ops), in that order. */
extern const core_def bp__core_defs_v2[];
extern const size_t bp__core_ndefs_v2;
extern const core_def bp__core_defs_nn[];
extern const size_t bp__core_ndefs_nn;
/* core_conv.c: conv2d and the 2-D pools. */
extern const core_def bp__core_defs_conv[];
extern const size_t bp__core_ndefs_conv;
/* core_inplace.c: the in-place forms (add_, relu_, masked_fill_, ...). */
extern const core_def bp__core_defs_inplace[];
extern const size_t bp__core_ndefs_inplace;

/* core_out.c: the .out forms and writing a result into a tensor.
 * bp__core_def_out defines c's .out form, if it has one.  bp__core_into
 * computes op on args, which op's meta function accepted with result m,
 * into dst (of m's shape, m's dtype or one it converts to), straight from
 * a structured kernel where it can (pointwise: an argument may be dst
 * itself); *out is a new reference to dst. */
bp_status bp__core_def_out(const bp_host_api *h, bp_library *lib, const core_def *c);
bp_status bp__core_into(const bp_op *op, const bp_value *args, const bp_tensor_meta *m,
                        bp_tensor *dst, bool pointwise, bp_tensor **out);
bool bp__core_pointwise(const char *name);
/* op's meta function on the first nargs of args (those of op's schema),
 * for the in-place or .out form of ctx: its errors in ctx's op name. */
bp_status bp__core_meta_as(const bp_kernel_ctx *ctx, const bp_op *op, const bp_value *args,
                           size_t nargs, bp_tensor_meta *m);

#endif /* BP_HOST_CORE_META_H */
