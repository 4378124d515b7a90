/*
 * host/core.c - the `core` op set (version 1, and the ops of version 2 so
 * far): its schemas and its meta functions.
 *
 * The host defines every core op and ships its meta function, so that all
 * backends agree on output shapes, dtypes and errors: a plugin implements
 * core ops (an IMPL library) and sizes its outputs through host->op_meta.
 * docs/op-set.md specifies the semantics; the functions here are the
 * executable form of its "Result" and "Errors" paragraphs.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Meta functions                                                           */
/* ------------------------------------------------------------------------ */

static bp_status meta_binary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  int kind = (int)(intptr_t)ctx->user_data;
  double alpha = kind == OP_ADD || kind == OP_SUB ? args[2].u.f : 1.0;
  return bp__core_binary_result(ctx, V(&args[0]), V(&args[1]), alpha, kind, &outs[0]);
}

static bp_status meta_add_out(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  bp_tensor_meta want;
  want.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = bp__core_binary_result(ctx, V(&args[0]), V(&args[1]), args[2].u.f, OP_ADD, &want);
  if (st) return st;
  const bp_tensor_view *o = V(&args[3]);
  bool same = o->ndim == want.ndim;
  for (int32_t d = 0; same && d < o->ndim; d++) same = o->sizes[d] == want.sizes[d];
  char s1[160], s2[160];
  if (!same)
    return bp__error(BP_ERR_SHAPE, "%s: argument #3 'out' has shape %s, expected %s%s",
                     ctx->op_name, shape_str(o->ndim, o->sizes, s1, sizeof s1),
                     shape_str(want.ndim, want.sizes, s2, sizeof s2),
                     o->numel == 0 ? " (op set 1's add.out does not resize an empty 'out', as "
                                     "op set 2's .out forms do)"
                                   : "");
  if (o->dtype != want.dtype) return type_error(ctx, 3, o->dtype, bp_dtype_name(want.dtype));
  st = written_once(ctx, 3, "out", o);
  if (st) return st;
  copy_meta(&outs[0], o);
  return BP_OK;
}

static bp_status meta_muladd(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *b = V(&args[1]);
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, a, 0, b, 1, &ndim, sizes);
  if (st) return st;
  int32_t dt = bp__promote(a->dtype, b->dtype);
  if (!is_float(dt)) return type_error(ctx, 0, a->dtype, "a floating-point dtype");
  set_contiguous(&outs[0], a->device, dt, ndim, sizes);
  return BP_OK;
}

static bp_status meta_gelu(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  const char *ap = args[1].u.str;
  if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: argument #1 'approximate': expected \"none\" or \"tanh\", got \"%s\"",
                     ctx->op_name, ap);
  return bp__core_meta_unary(ctx, args, nargs, outs, nouts);
}

static bp_status meta_where(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *c = V(&args[0]), *a = V(&args[1]), *b = V(&args[2]);
  if (c->dtype != BP_BOOL) return type_error(ctx, 0, c->dtype, "bool");
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, c, 0, a, 1, &ndim, sizes);
  if (!st) st = broadcast(ctx, &ndim, sizes, 0, b, 2, c);
  if (st) return st;
  set_contiguous(&outs[0], a->device, bp__promote(a->dtype, b->dtype), ndim, sizes);
  return BP_OK;
}

/* Reductions: which dims, and the result shape. */
static bp_status reduce_shape(const bp_kernel_ctx *ctx, const bp_tensor_view *a,
                              const bp_value *dims, bool keepdim, bool need_nonempty,
                              int32_t *out_ndim, int64_t *out_sizes) {
  bool reduce[BP_MAX_NDIM] = {false};
  if (dims->len == 0) {
    for (int32_t d = 0; d < a->ndim; d++) reduce[d] = true;
  } else {
    for (uint32_t i = 0; i < dims->len; i++) {
      int32_t d;
      bp_status st = norm_dim(ctx, 1, dims->u.ints[i], a->ndim, &d);
      if (st) return st;
      /* A 0-dim tensor's one dim (0 or -1) may not be named twice either;
       * its reduce[0] is not read below. */
      if (reduce[d])
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #1 'dim': dimension %d appears twice",
                         ctx->op_name, (int)d);
      reduce[d] = true;
    }
  }
  int32_t n = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (reduce[d] && need_nonempty && a->sizes[d] == 0)
      return bp__error(BP_ERR_SHAPE,
                       "%s: cannot reduce dimension %d of size 0 (the result would have no value)",
                       ctx->op_name, (int)d);
    if (!reduce[d])
      out_sizes[n++] = a->sizes[d];
    else if (keepdim)
      out_sizes[n++] = 1;
  }
  *out_ndim = n;
  return BP_OK;
}

/* user_data of a reduction. */
enum { R_SUM = 1, R_MEAN, R_MINMAX };

static bp_status meta_reduce(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  int kind = (int)(intptr_t)ctx->user_data;
  int32_t dt = a->dtype;
  if (kind == R_SUM) {
    if (nargs > 3 && args[3].tag == BP_TAG_SCALAR_TYPE) {
      bp_status st = need_dtype_code(ctx, 3, args[3].u.i);
      if (st) return st;
      dt = (int32_t)args[3].u.i;
    }
    else if (!is_float(dt))
      dt = BP_INT64;
  } else if (kind == R_MEAN && !is_float(dt)) {
    return type_error(ctx, 0, dt, "a floating-point dtype");
  }
  int32_t n = 0;
  int64_t sizes[BP_MAX_NDIM] = {0};
  bp_status st = reduce_shape(ctx, a, &args[1], args[2].u.b, kind == R_MINMAX, &n, sizes);
  if (st) return st;
  set_contiguous(&outs[0], a->device, dt, n, sizes);
  return BP_OK;
}

static bp_status meta_argmax(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  bool keepdim = args[2].u.b;
  if (a->dtype == BP_BOOL) return type_error(ctx, 0, a->dtype, "a numeric dtype (not bool)");
  int64_t sizes[BP_MAX_NDIM];
  int32_t n = 0;
  if (args[1].tag == BP_TAG_NONE) {
    if (a->numel == 0)
      return bp__error(BP_ERR_SHAPE, "%s: argument #0 'self' is empty; it has no maximum",
                       ctx->op_name);
    for (int32_t d = 0; keepdim && d < a->ndim; d++) sizes[n++] = 1;
  } else {
    int32_t dim;
    bp_status st = norm_dim(ctx, 1, args[1].u.i, a->ndim, &dim);
    if (st) return st;
    /* Only the reduced dim must be non-empty: an empty result is fine. */
    if (a->ndim > 0 && a->sizes[dim] == 0)
      return bp__error(BP_ERR_SHAPE,
                       "%s: cannot reduce dimension %d of size 0 (the result would have no value)",
                       ctx->op_name, (int)dim);
    for (int32_t d = 0; d < a->ndim; d++)
      if (d != dim)
        sizes[n++] = a->sizes[d];
      else if (keepdim)
        sizes[n++] = 1;
  }
  set_contiguous(&outs[0], a->device, BP_INT64, n, sizes);
  return BP_OK;
}

static bp_status meta_matmul(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]), *b = V(&args[1]);
  if (!is_float(a->dtype)) return type_error(ctx, 0, a->dtype, "a floating-point dtype");
  if (b->dtype != a->dtype) return type_error(ctx, 1, b->dtype, bp_dtype_name(a->dtype));
  if (a->ndim == 0 || b->ndim == 0)
    return bp__error(BP_ERR_SHAPE, "%s: argument #%d '%s' is 0-dimensional; matmul needs at least 1 "
                     "dimension", ctx->op_name, a->ndim == 0 ? 0 : 1, a->ndim == 0 ? an(ctx, 0) : an(ctx, 1));
  /* Vectors are promoted to matrices and the added dimension dropped. */
  int64_t k1 = a->sizes[a->ndim - 1];
  int64_t k2 = b->ndim == 1 ? b->sizes[0] : b->sizes[b->ndim - 2];
  if (k1 != k2) {
    char s1[160], s2[160];
    return bp__error(BP_ERR_SHAPE, "%s: shapes %s and %s cannot be multiplied (%lld vs %lld)",
                     ctx->op_name, shape_str(a->ndim, a->sizes, s1, sizeof s1),
                     shape_str(b->ndim, b->sizes, s2, sizeof s2), (long long)k1, (long long)k2);
  }
  int32_t na = a->ndim >= 2 ? a->ndim - 2 : 0, nb = b->ndim >= 2 ? b->ndim - 2 : 0;
  int32_t nbatch = na > nb ? na : nb;
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t d = 0; d < nbatch; d++) {
    int32_t da = d - (nbatch - na), db = d - (nbatch - nb);
    int64_t sa = da >= 0 ? a->sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      char s1[160], s2[160];
      return bp__error(BP_ERR_SHAPE, "%s: batch dimensions of %s and %s cannot be broadcast",
                       ctx->op_name, shape_str(a->ndim, a->sizes, s1, sizeof s1),
                       shape_str(b->ndim, b->sizes, s2, sizeof s2));
    }
    sizes[d] = sa == 1 ? sb : sa;
  }
  int32_t n = nbatch;
  if (a->ndim >= 2) sizes[n++] = a->sizes[a->ndim - 2];
  if (b->ndim >= 2) sizes[n++] = b->sizes[b->ndim - 1];
  if (n > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: the result would have %d dimensions", ctx->op_name, (int)n);
  set_contiguous(&outs[0], a->device, a->dtype, n, sizes);
  return BP_OK;
}

static bp_status meta_softmax(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  if (!is_float(a->dtype)) return type_error(ctx, 0, a->dtype, "a floating-point dtype");
  int32_t dim;
  bp_status st = norm_dim(ctx, 1, args[1].u.i, a->ndim, &dim);
  if (st) return st;
  set_contiguous(&outs[0], a->device, a->dtype, a->ndim, a->sizes);
  return BP_OK;
}

static bp_status meta_layer_norm(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *x = V(&args[0]);
  bp_status st = normalized_shape_ok(ctx, args);
  for (size_t i = 2; !st && i <= 3; i++) st = normalized_weight_ok(ctx, args, i);
  if (st) return st;
  if (!(args[4].u.f >= 0))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #4 'eps' is %g, expected >= 0",
                     ctx->op_name, args[4].u.f);
  set_contiguous(&outs[0], x->device, x->dtype, x->ndim, x->sizes);
  return BP_OK;
}

static bp_status meta_cast(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  bp_status st = need_dtype_code(ctx, 1, args[1].u.i);
  if (st) return st;
  const bp_tensor_view *a = V(&args[0]);
  set_contiguous(&outs[0], a->device, (int32_t)args[1].u.i, a->ndim, a->sizes);
  return BP_OK;
}

static bp_status meta_contiguous(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = V(&args[0]);
  /* An already contiguous input is returned itself (the schema declares
   * the alias), so the result has exactly its metadata. */
  if (a->flags & BP_VIEW_CONTIGUOUS)
    copy_meta(&outs[0], a);
  else
    set_contiguous(&outs[0], a->device, a->dtype, a->ndim, a->sizes);
  return BP_OK;
}

static bp_status meta_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)nargs;
  (void)nouts;
  copy_meta(&outs[0], V(&args[0]));
  return BP_OK;
}

static bp_status meta_copy(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *self = V(&args[0]), *src = V(&args[1]);
  /* src must broadcast to self's shape exactly. */
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  bp_status st = broadcast2(ctx, self, 0, src, 1, &ndim, sizes);
  if (st) return st;
  bool same = ndim == self->ndim;
  for (int32_t d = 0; same && d < ndim; d++) same = sizes[d] == self->sizes[d];
  if (!same) {
    char s1[160], s2[160];
    return bp__error(BP_ERR_SHAPE, "%s: argument #1 'src' with shape %s cannot be broadcast to "
                     "argument #0 'self' with shape %s", ctx->op_name,
                     shape_str(src->ndim, src->sizes, s1, sizeof s1),
                     shape_str(self->ndim, self->sizes, s2, sizeof s2));
  }
  st = written_once(ctx, 0, "self", self);
  if (st) return st;
  copy_meta(&outs[0], self);
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* The definitions                                                          */
/* ------------------------------------------------------------------------ */

#define BIN(name, kind, doc)                                                               \
  {#name "(Tensor self, Tensor other) -> Tensor", meta_binary, kind, 0, doc, 1, NULL}
#define UN(name, rule, doc) {#name "(Tensor self) -> Tensor", bp__core_meta_unary, rule, 0, doc, 1, NULL}
#define RED(name, kind, doc)                                                                   \
  {#name "(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", meta_reduce, kind, 0, doc, 1, NULL}

static const core_def core_defs[] = {
    {"add(Tensor self, Tensor other, *, float alpha=1.0) -> Tensor", meta_binary, OP_ADD, 0,
     "self + alpha * other, broadcast", 1, NULL},
    {"add.out(Tensor self, Tensor other, *, float alpha=1.0, Tensor(a!) out) -> Tensor(a!)",
     meta_add_out, OP_ADD, 0, "add into out", 1, NULL},
    {"sub(Tensor self, Tensor other, *, float alpha=1.0) -> Tensor", meta_binary, OP_SUB, 0,
     "self - alpha * other, broadcast", 1, NULL},
    BIN(mul, OP_MUL, "self * other, broadcast"),
    BIN(div, OP_DIV, "self / other (true division), broadcast"),
    BIN(maximum, OP_MAXIMUM, "elementwise maximum; NaN propagates"),
    BIN(minimum, OP_MINIMUM, "elementwise minimum; NaN propagates"),
    {"pow(Tensor self, Tensor exponent) -> Tensor", meta_binary, OP_POW, 0,
     "self ** exponent, broadcast", 1, NULL},
    {"muladd(Tensor a, Tensor b, float c) -> Tensor", meta_muladd, 0, 0, "a * b + c, broadcast", 1, NULL},
    UN(neg, U_SAME_NO_BOOL, "-self"),
    UN(abs, U_SAME_NO_BOOL, "|self|"),
    UN(exp, U_FLOAT, "e ** self"),
    UN(log, U_FLOAT, "natural logarithm"),
    UN(sqrt, U_FLOAT, "square root"),
    UN(rsqrt, U_FLOAT, "1 / sqrt(self)"),
    UN(relu, U_SAME_NO_BOOL, "max(self, 0)"),
    UN(sigmoid, U_FLOAT, "1 / (1 + e ** -self)"),
    UN(tanh, U_FLOAT, "hyperbolic tangent"),
    {"gelu(Tensor self, *, str approximate=\"none\") -> Tensor", meta_gelu, U_FLOAT, 0,
     "Gaussian error linear unit (erf form, or tanh approximation)", 1, NULL},
    {"where(Tensor condition, Tensor self, Tensor other) -> Tensor", meta_where, 0, 0,
     "condition ? self : other, broadcast", 1, NULL},
    {"sum(Tensor self, int[] dim=[], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     meta_reduce, R_SUM, 0, "sum over dims (all when dim is empty)", 1, NULL},
    RED(mean, R_MEAN, "mean over dims (all when dim is empty)"),
    RED(amax, R_MINMAX, "maximum over dims (all when dim is empty)"),
    RED(amin, R_MINMAX, "minimum over dims (all when dim is empty)"),
    {"argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", meta_argmax, 0, 0,
     "index of the first maximum along dim (of the flattened tensor when dim is None)", 1, NULL},
    {"matmul(Tensor self, Tensor other) -> Tensor", meta_matmul, 0, 0,
     "matrix product, batched with broadcasting", 1, NULL},
    {"softmax(Tensor self, int dim) -> Tensor", meta_softmax, 0, 0, "softmax along dim", 1, NULL},
    {"log_softmax(Tensor self, int dim) -> Tensor", meta_softmax, 1, 0, "log of softmax along dim", 1, NULL},
    {"layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
     "float eps=1e-05) -> Tensor",
     meta_layer_norm, 0, 0, "layer normalisation over the trailing normalized_shape dims", 1, NULL},
    {"cast(Tensor self, ScalarType dtype) -> Tensor", meta_cast, 0, 0, "convert to dtype", 1, NULL},
    {"contiguous(Tensor(a) self) -> Tensor(a)", meta_contiguous, 0, 0,
     "self if contiguous, else a contiguous copy", 1, NULL},
    {"fill_(Tensor(a!) self, float value) -> Tensor(a!)", meta_fill, 0, 0, "set every element", 1, NULL},
    {"copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)", meta_copy, 0, BP_OP_MIXED_DEVICES,
     "copy src (broadcast, converted, from any device) into self", 1, NULL},
};

/* The host's built-in plugin: it defines the core op set through the
 * public host table, like any plugin's setup(). */
bp_status bp__core_setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_DEF, 0};
  bp_library *lib = NULL;
  bp_status st = h->library(reg, &ld, &lib);
  const struct {
    const core_def *defs;
    size_t n;
  } tables[] = {{core_defs, sizeof core_defs / sizeof core_defs[0]},
                {bp__core_defs_v2, bp__core_ndefs_v2},
                {bp__core_defs_nn, bp__core_ndefs_nn},
                {bp__core_defs_conv, bp__core_ndefs_conv},
                {bp__core_defs_inplace, bp__core_ndefs_inplace}};
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (size_t i = 0; !st && i < tables[t].n; i++) {
      const core_def *c = &tables[t].defs[i];
      bp_op_def d;
      memset(&d, 0, sizeof d);
      d.struct_size = BP_OP_DEF_STRUCT_SIZE;
      d.schema = c->schema;
      d.meta = c->meta;
      d.flags = c->flags;
      d.user_data = (void *)c->data;
      d.doc = c->doc;
      d.op_set_version = c->since;
      d.composite = c->composite;
      st = h->def(lib, &d);
    }
  /* Then the .out forms, of every table but the in-place forms'. */
  for (size_t t = 0; t + 1 < sizeof tables / sizeof tables[0]; t++)
    for (size_t i = 0; !st && i < tables[t].n; i++)
      st = bp__core_def_out(h, lib, &tables[t].defs[i]);
  return st;
}
