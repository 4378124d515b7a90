/*
 * host/core_out.c - the `.out` forms of op set 2, and how every `.out` and
 * in-place form writes its result.
 *
 * Each core op with one plain Tensor result has an `.out` form (`sub.out`,
 * `eq.Scalar_out`, `matmul.out`, ...): the op's schema with a keyword-only
 * `Tensor(a!) out` last, returning `out`.  PyTorch's rules hold: `out` has
 * the result's dtype (no conversion), and the result's shape or no elements
 * at all (then it is resized, when its storage is its own); an argument may
 * be `out` itself (an exact alias) but may not overlap it in part.
 *
 * The result reaches the written tensor (`out`, or an in-place form's self)
 * straight from the op's kernel when that kernel is structured and the
 * tensor has the layout the op's meta function gives (dtype, sizes and
 * strides): the kernel fills it as it would fill a result the host
 * allocated.  An argument that is the written tensor itself reaches the
 * kernel too, but only for pointwise ops, whose every result element
 * depends on the same element of its inputs.  Otherwise the op computes a
 * new result, which copy_ writes in.
 */
#define _GNU_SOURCE
#include "core_meta.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The ops whose result element i depends only on element i of each input
 * (after broadcasting): a structured kernel may write over an input that is
 * exactly its result.  Names without "core::" and without an overload. */
static const char *const pointwise_ops[] = {
    "add", "sub", "mul", "div", "maximum", "minimum", "pow", "muladd", "neg", "abs", "exp",
    "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "gelu", "where", "cast", "sin", "cos",
    "erf", "silu", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
    "logical_or", "isnan", "masked_fill", "clamp"};

bool bp__core_pointwise(const char *name) {
  if (strncmp(name, "core::", 6) == 0) name += 6;
  size_t n = strcspn(name, ".");
  for (size_t i = 0; i < sizeof pointwise_ops / sizeof pointwise_ops[0]; i++)
    if (strlen(pointwise_ops[i]) == n && memcmp(pointwise_ops[i], name, n) == 0) return true;
  return false;
}

/* ------------------------------------------------------------------------ */
/* Overlap                                                                  */
/* ------------------------------------------------------------------------ */

/* The bytes [lo, hi) that v's elements reach, as addresses (two tensors
 * may wrap the same memory in storages of their own). */
static void byte_span(const bp_tensor_view *v, uintptr_t *lo, uintptr_t *hi) {
  int64_t a, b;
  bp__view_span(v, &a, &b);
  *lo = (uintptr_t)v->storage_base + (uintptr_t)a;
  *hi = (uintptr_t)v->storage_base + (uintptr_t)b;
}

/* No overlap, the same elements in the same order, or any other overlap
 * (which this treats as partial, as PyTorch does). */
enum { OV_NONE, OV_SAME, OV_PARTIAL };

static int overlap_of(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->device.type != b->device.type || a->device.index != b->device.index) return OV_NONE;
  uintptr_t alo, ahi, blo, bhi;
  byte_span(a, &alo, &ahi);
  byte_span(b, &blo, &bhi);
  if (a->numel == 0 || b->numel == 0 || ahi <= blo || bhi <= alo) return OV_NONE;
  bool same = a->data == b->data && a->dtype == b->dtype && a->ndim == b->ndim;
  for (int32_t d = 0; same && d < a->ndim; d++)
    same = a->sizes[d] == b->sizes[d] && (a->sizes[d] <= 1 || a->strides[d] == b->strides[d]);
  return same ? OV_SAME : OV_PARTIAL;
}

/* Whether v has the dtype, sizes and strides of m (a stride is free where
 * its dim has at most one element). */
static bool same_layout(const bp_tensor_meta *m, const bp_tensor_view *v) {
  if (m->dtype != v->dtype || m->ndim != v->ndim) return false;
  for (int32_t d = 0; d < v->ndim; d++)
    if (m->sizes[d] != v->sizes[d] || (v->sizes[d] > 1 && m->strides[d] != v->strides[d]))
      return false;
  return true;
}

/* Runs BODY for each tensor among op's arguments, list elements included,
 * with V_ its view and I_ its argument's index. */
#define EACH_TENSOR_ARG(op, args, V_, I_, BODY)                                              \
  for (uint32_t j_ = 0; j_ < (op)->ntensor_args; j_++) {                                   \
    uint32_t I_ = (op)->tensor_args[j_];                                                   \
    const bp_value *v_ = &(args)[I_];                                                      \
    size_t n_ = v_->tag == BP_TAG_TENSOR ? 1 : v_->tag == BP_TAG_TENSOR_LIST ? v_->len : 0; \
    for (size_t e_ = 0; e_ < n_; e_++) {                                                   \
      const bp_tensor_view *V_ =                                                          \
          v_->tag == BP_TAG_TENSOR ? &v_->u.tensor->view : &v_->u.tensors[e_]->view;      \
      BODY                                                                                 \
    }                                                                                      \
  }

/* ------------------------------------------------------------------------ */
/* Writing a result into a tensor                                           */
/* ------------------------------------------------------------------------ */

bp_status bp__core_into(const bp_op *op, const bp_value *args, const bp_tensor_meta *m,
                        bp_tensor *dst, bool pointwise, bp_tensor **out) {
  const bp_tensor_view *d = &dst->view;
  bp_status st;
  if (d->numel == 0) {
    *out = bp_tensor_retain(dst);
    return BP_OK;
  }
  /* add.Scalar ... pow.Scalar: the tensor op with the Scalar as a 0-dim
   * tensor of the result's dtype (their composite's rule), so that the
   * tensor op's kernel fills dst (x.mul_(0.5)). */
  static const char *const scalar_ops[] = {"core::add.Scalar", "core::sub.Scalar",
                                           "core::mul.Scalar", "core::div.Scalar",
                                           "core::pow.Scalar"};
  for (size_t i = 0; i < sizeof scalar_ops / sizeof scalar_ops[0]; i++) {
    if (strcmp(op->name, scalar_ops[i]) != 0) continue;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(scalar_ops[i]) - 7), scalar_ops[i]);
    const bp_op *base = NULL;
    bp_tensor *sc = NULL;
    st = bp__op_find(name, &base);
    if (!st) st = bp__core_scalar_tensor(m->device, m->dtype, &args[1], &sc);
    if (st) return st;
    bp_value v[3] = {args[0], tv(sc), i < 2 ? args[2] : fv(1.0)};
    st = bp__core_into(base, v, m, dst, pointwise, out);
    bp_tensor_release(sc);
    return st;
  }
  bool direct = same_layout(m, d);
  if (direct) {
    EACH_TENSOR_ARG(op, args, a, i, {
      (void)i;
      int ov = overlap_of(a, d);
      if (ov == OV_PARTIAL || (ov == OV_SAME && !pointwise)) direct = false;
    })
  }
  if (direct) {
    bool ran = false;
    st = bp__call_structured_into(op, args, dst, &ran);
    if (st) return st;
    if (ran) {
      *out = bp_tensor_retain(dst);
      return BP_OK;
    }
  }
  /* The op's own result, then copied in. */
  bp_value slots[BP__MAX_ARGS];
  bp_stack s = BP_STACK_INIT(slots, BP__MAX_ARGS);
  for (uint32_t i = 0; i < op->nargs; i++) slots[i] = args[i];
  s.top = op->nargs;
  st = bp_call(op, &s);
  if (st) return st;
  bp_tensor *r = slots[0].u.tensor;
  bp_value v[2] = {tv(dst), tv(r)};
  st = bp__core_call("core::copy_", v, 2, out);
  bp_tensor_release(r);
  return st;
}

/* ------------------------------------------------------------------------ */
/* The .out forms                                                           */
/* ------------------------------------------------------------------------ */

bp_status bp__core_meta_as(const bp_kernel_ctx *ctx, const bp_op *op, const bp_value *args,
                           size_t nargs, bp_tensor_meta *m) {
  m->struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = bp__op_meta_args(op, args, nargs, m, 1);
  if (st) {
    char msg[512];
    const char *e = bp_last_error(), *colon = strstr(e, ": ");
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : e);
    return bp__error(st, "%s: %s", ctx->op_name, msg);
  }
  return BP_OK;
}

/* The out-of-place op of an .out form (user_data: its name). */
static bp_status base_op(const bp_kernel_ctx *ctx, const bp_op **out) {
  if (bp__op_find((const char *)ctx->user_data, out))
    return bp__error(BP_ERR_INTERNAL, "%s: its out-of-place op %s is not defined", ctx->op_name,
                     (const char *)ctx->user_data);
  return BP_OK;
}

/* The checks of an .out form: op (the out-of-place op) accepts the
 * arguments before `out`, whose result metadata goes into m; `out` has its
 * dtype, and its shape (*same) or no elements; `out` is written once and
 * overlaps no argument in part. */
static bp_status out_check(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           const bp_op **op, bp_tensor_meta *m, bool *same) {
  bp_status st = base_op(ctx, op);
  if (st) return st;
  st = bp__core_meta_as(ctx, *op, args, nargs - 1, m);
  if (st) return st;
  size_t k = nargs - 1;
  const bp_tensor_view *o = V(&args[k]);
  if (o->dtype != m->dtype)
    return bp__error(BP_ERR_TYPE, "%s: argument #%zu 'out' is %s, expected %s (the result's "
                     "dtype; an .out form does not convert)", ctx->op_name, k,
                     bp_dtype_name(o->dtype), bp_dtype_name(m->dtype));
  *same = o->ndim == m->ndim;
  for (int32_t d = 0; *same && d < o->ndim; d++) *same = o->sizes[d] == m->sizes[d];
  char s1[160], s2[160];
  if (!*same && o->numel != 0)
    return bp__error(BP_ERR_SHAPE, "%s: argument #%zu 'out' has shape %s, expected %s (the "
                     "result's shape) or no elements", ctx->op_name, k,
                     shape_str(o->ndim, o->sizes, s1, sizeof s1),
                     shape_str(m->ndim, m->sizes, s2, sizeof s2));
  st = written_once(ctx, k, "out", o);
  if (st) return st;
  if (o->device.type != m->device.type || o->device.index != m->device.index)
    return bp__error(BP_ERR_DEVICE, "%s: argument #%zu 'out' is not on the result's device",
                     ctx->op_name, k);
  EACH_TENSOR_ARG(*op, args, a, i, {
    if (overlap_of(a, o) == OV_PARTIAL)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%u '%s' and argument #%zu 'out' "
                       "share memory in part; an argument may be 'out' itself, but not overlap "
                       "it otherwise", ctx->op_name, i, an(ctx, i), k);
  })
  return BP_OK;
}

static bp_status meta_out(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  const bp_op *op = NULL;
  bp_tensor_meta m;
  bool same = false;
  bp_status st = out_check(ctx, args, nargs, &op, &m, &same);
  if (st) return st;
  const bp_tensor_view *o = V(&args[nargs - 1]);
  if (same)
    copy_meta(&outs[0], o);
  else
    set_contiguous(&outs[0], o->device, m.dtype, m.ndim, m.sizes);
  return BP_OK;
}

static bp_status out_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)nrets;
  const bp_op *op = NULL;
  bp_tensor_meta m;
  bool same = false;
  bp_status st = out_check(ctx, args, nargs, &op, &m, &same);
  if (st) return st;
  bp_tensor *o = args[nargs - 1].u.tensor;
  if (!same) {
    st = bp__tensor_resize_empty(o, m.ndim, m.sizes, ctx->op_name);
    if (st) return st;
  }
  bp_tensor *r = NULL;
  st = bp__core_into(op, args, &m, o, bp__core_pointwise(op->name), &r);
  if (st) return st;
  return ret_tensor(rets, r);
}

/* The base ops' names, which the .out forms' user_data points at. */
#define MAX_OUT_FORMS 128
static char out_base[MAX_OUT_FORMS][64];
static size_t n_out_forms;

/*
 * The .out form of core op c, if it has one: an op with one plain Tensor
 * result, no written or aliased argument, and no .out form of op set 1
 * (add.out).  Its schema goes into buf.
 */
static bool out_schema(const char *schema, char *buf, size_t n, char *base, size_t nb) {
  const char *paren = strchr(schema, '('), *arrow = strstr(schema, ") -> Tensor");
  if (!paren || !arrow || strcmp(arrow, ") -> Tensor") != 0 || strchr(schema, '!') ||
      strstr(schema, "(a)"))
    return false;
  int namelen = (int)(paren - schema);
  if (namelen == 3 && memcmp(schema, "add", 3) == 0) return false;
  const char *dot = memchr(schema, '.', (size_t)namelen);
  int w = snprintf(base, nb, "core::%.*s", namelen, schema);
  if (w < 0 || (size_t)w >= nb) return false;
  int args_len = (int)(arrow - paren - 1);
  bool kwonly = strstr(paren, "*,") != NULL && strstr(paren, "*,") < arrow;
  w = snprintf(buf, n, "%.*s%s(%.*s%s%s) -> Tensor(a!)", namelen, schema,
               dot ? "_out" : ".out", args_len, paren + 1, args_len ? ", " : "",
               kwonly ? "Tensor(a!) out" : "*, Tensor(a!) out");
  return w > 0 && (size_t)w < n;
}

bp_status bp__core_def_out(const bp_host_api *h, bp_library *lib, const core_def *c) {
  char schema[512], doc[96];
  if (n_out_forms >= MAX_OUT_FORMS)
    return bp__error(BP_ERR_INTERNAL, "core: more than %d .out forms", MAX_OUT_FORMS);
  char *base = out_base[n_out_forms];
  if (!out_schema(c->schema, schema, sizeof schema, base, sizeof out_base[0])) return BP_OK;
  n_out_forms++;
  snprintf(doc, sizeof doc, "%s, written into out", base + 6);
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = schema;
  d.meta = meta_out;
  d.flags = c->flags;
  d.user_data = base;
  d.doc = doc;
  d.op_set_version = 2;
  d.composite = out_composite;
  return h->def(lib, &d);
}
