/*
 * conformance/tests/good/vendoronly.c - a correct plugin with a vendor
 * namespace only: no core op, op_set_version 0, ops that write their
 * arguments in place and one with two results.
 *
 * Namespace "vnd" (DEF), on BP_DEVICE_CPU, float32 and float64, inputs of
 * any strides:
 *
 *   vnd::scale(Tensor x, float s) -> Tensor
 *       s * x, a new contiguous tensor
 *   vnd::axpy_(Tensor(a!) y, Tensor x, float a) -> Tensor(a!)
 *       y += a * x in place (x of y's shape and dtype); returns y
 *   vnd::clamp_(Tensor(a!) self, float lo, float hi) -> Tensor(a!)
 *       each element of self clamped to [lo, hi] in place; returns self
 *   vnd::minmax(Tensor x) -> (Tensor min, Tensor max)
 *       the smallest and the largest element, as two 0-dim tensors
 *       (NaN if x holds one; an empty x fails with BP_ERR_SHAPE)
 *   vnd::act(Tensor x, str kind) -> Tensor
 *       kind 'relu', 'abs' or 'log' of each element, a new contiguous
 *       tensor; another kind fails with BP_ERR_INVALID_ARGUMENT, and so
 *       does 'log' of an element that is not positive.  bp-certify can
 *       generate its calls only with sample hints (conformance/tests/
 *       vendoronly.hints: the kinds, and x in a positive range)
 *
 * A tensor written in place must not hold one element at several indices
 * (a stride 0 in a dimension of size > 1): that fails with
 * BP_ERR_INVALID_ARGUMENT, and so does an axpy_ whose x shares memory with
 * y without being y itself (PyTorch refuses such partial overlaps); x that
 * is y (axpy_(y, y, a)) is y * (1 + a).
 *
 * The same source builds two more plugins:
 *   - with VND_REFERENCE, "vendoronly_reference": kernels of the same ops
 *     in an IMPL library of "vnd" at BP_PRIORITY_REFERENCE, as a vendor's
 *     reference build for `bp-certify --reference` (it defines nothing, so
 *     it loads beside the plugin that defines vnd);
 *   - with VND_FAULT_SCALE_DENSE, "vnd_scale_dense": scale takes a fast
 *     path for any input without gaps (a transposed one too) and walks it
 *     in memory order, so a transposed input gives a transposed result.
 *     Nothing but a reference of its values sees it;
 *   - with VND_FAULT_ACT_LOG1P, "vnd_act_log1p": act's 'log' computes
 *     log(1 + x).  Only a reference sees it, on samples that hints make:
 *     the kind 'log', and x positive, which the generic samples are not;
 *   - with VND_FAULT_AXPY_OVERLAP, "vnd_axpy_overlap": axpy_ takes an x
 *     that partially overlaps y and reads elements it already wrote;
 *   - with VND_FAULT_CLAMP_GAPS, "vnd_clamp_gaps": clamp_ walks any self
 *     whose last dimension is contiguous as numel elements in a row,
 *     writing into the gaps between the rows of a strided self.
 * With VND_FAKEDEV besides (or alone), the kernels are for a device type
 * of the plugin's own, "vnddev" (host memory that the host does not touch,
 * tests/plugins/fakedev.h), and the plugin is named with "_dev": the
 * reference's CPU kernels then check a device's.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

#ifdef VND_FAKEDEV
#define FAKEDEV_OOM "vnddev: out of memory"
#include "fakedev.h"
static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "vnddev",
    .type = BP_DEVICE_INVALID,
    .count = fakedev_count1,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
};
#endif

enum op { SCALE, AXPY, CLAMP, MINMAX, ACT };

/* act's kinds */
enum { ACT_RELU, ACT_ABS, ACT_LOG, ACT_BAD };
static int act_kind(const char *k) {
  return !k ? ACT_BAD : strcmp(k, "relu") == 0 ? ACT_RELU : strcmp(k, "abs") == 0 ? ACT_ABS
       : strcmp(k, "log") == 0 ? ACT_LOG : ACT_BAD;
}

static const bp_tensor_view *view(const bp_value *v) { return H->tensor_view(v->u.tensor); }

static bp_status need_float(const bp_kernel_ctx *ctx, int arg, const bp_tensor_view *v) {
  if (v->dtype == BP_FLOAT32 || v->dtype == BP_FLOAT64) return BP_OK;
  return H->set_errorf(BP_ERR_TYPE, "%s: argument #%d: expected float32 or float64, got dtype %d",
                       ctx->op_name, arg, (int)v->dtype);
}

#ifndef VND_FAULT_AXPY_OVERLAP
/* The bytes a view reaches, [lo, hi). */
static void reach(const bp_tensor_view *v, uintptr_t *lo, uintptr_t *hi) {
  int64_t mn = 0, mx = 0;
  for (int32_t d = 0; d < v->ndim; d++) {
    int64_t e = (v->sizes[d] - 1) * v->strides[d];
    if (e < 0) mn += e;
    else mx += e;
  }
  *lo = (uintptr_t)v->data + (uintptr_t)(mn * v->itemsize);
  *hi = (uintptr_t)v->data + (uintptr_t)((mx + 1) * v->itemsize);
}

/* Whether x and y share memory without being the same view. */
static bool partial_overlap(const bp_tensor_view *x, const bp_tensor_view *y) {
  if (x->numel == 0 || y->numel == 0) return false;
  uintptr_t xl, xh, yl, yh;
  reach(x, &xl, &xh);
  reach(y, &yl, &yh);
  if (xh <= yl || yh <= xl) return false;
  bool same = x->data == y->data && x->ndim == y->ndim;
  for (int32_t d = 0; same && d < x->ndim; d++) same = x->strides[d] == y->strides[d];
  return !same;
}
#endif

/* Every check of the arguments, for the meta function and the kernels. */
static bp_status check(const bp_kernel_ctx *ctx, const bp_value *args) {
  int op = (int)(intptr_t)ctx->user_data;
  const bp_tensor_view *t = view(&args[0]);
  bp_status st = need_float(ctx, 0, t);
  if (st) return st;
  if (op == AXPY || op == CLAMP)
    for (int32_t d = 0; d < t->ndim; d++)
      if (t->strides[d] == 0 && t->sizes[d] > 1)
        return H->set_errorf(BP_ERR_INVALID_ARGUMENT,
                             "%s: argument #0 is written in place but holds one element at several "
                             "indices (stride 0 in dimension %d)", ctx->op_name, (int)d);
  if (op == AXPY) {
    const bp_tensor_view *x = view(&args[1]);
    if ((st = need_float(ctx, 1, x))) return st;
    if (x->dtype != t->dtype)
      return H->set_errorf(BP_ERR_TYPE, "%s: argument #1 'x' must have the dtype of 'y'", ctx->op_name);
    bool same = x->ndim == t->ndim;
    for (int32_t d = 0; same && d < t->ndim; d++) same = x->sizes[d] == t->sizes[d];
    if (!same)
      return H->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'x' must have the shape of 'y'", ctx->op_name);
#ifndef VND_FAULT_AXPY_OVERLAP
    if (partial_overlap(x, t))
      return H->set_errorf(BP_ERR_INVALID_ARGUMENT,
                           "%s: argument #1 'x' shares memory with 'y', which it writes, without "
                           "being 'y' itself", ctx->op_name);
#endif
  }
  if (op == CLAMP && !(args[1].u.f <= args[2].u.f))
    return H->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: lo (%g) must not exceed hi (%g)", ctx->op_name,
                         args[1].u.f, args[2].u.f);
  if (op == ACT && act_kind(args[1].u.str) == ACT_BAD)
    return H->set_errorf(BP_ERR_INVALID_ARGUMENT,
                         "%s: argument #1 'kind' is '%s'; expected 'relu', 'abs' or 'log'",
                         ctx->op_name, args[1].u.str ? args[1].u.str : "(null)");
  if (op == MINMAX && t->numel == 0)
    return H->set_errorf(BP_ERR_SHAPE, "%s: argument #0 'x' is empty; it has no minimum",
                         ctx->op_name);
  return BP_OK;
}

static bp_status meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                      bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  bp_status st = check(ctx, args);
  if (st) return st;
  int op = (int)(intptr_t)ctx->user_data;
  const bp_tensor_view *t = view(&args[0]);
  for (size_t i = 0; i < nouts; i++) {
    outs[i].device = t->device;
    outs[i].dtype = t->dtype;
    outs[i].ndim = op == MINMAX ? 0 : t->ndim;
    if (op == MINMAX) continue;
    memcpy(outs[i].sizes, t->sizes, (size_t)t->ndim * sizeof *t->sizes);
    if (op != SCALE && op != ACT) { /* the result is the argument itself */
      memcpy(outs[i].strides, t->strides, (size_t)t->ndim * sizeof *t->strides);
      continue;
    }
    int64_t acc = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
      outs[i].strides[d] = acc;
      acc *= t->sizes[d] > 1 ? t->sizes[d] : 1;
    }
  }
  return BP_OK;
}

/* The address of element k (row-major) of v. */
static char *elem(const bp_tensor_view *v, int64_t k) {
  int64_t off = 0;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    off += k % v->sizes[d] * v->strides[d];
    k /= v->sizes[d];
  }
  return (char *)v->data + off * v->itemsize;
}

static double get(const bp_tensor_view *v, int64_t k) {
  const char *p = elem(v, k);
  return v->dtype == BP_FLOAT32 ? *(const float *)p : *(const double *)p;
}

static void set(const bp_tensor_view *v, int64_t k, double x) {
  char *p = elem(v, k);
  if (v->dtype == BP_FLOAT32) *(float *)p = (float)x;
  else *(double *)p = x;
}

static bp_value tensor_value(bp_tensor *t) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_TENSOR;
  v.u.tensor = t;
  return v;
}

static bp_status kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                        bp_value *rets, size_t nrets) {
  int op = (int)(intptr_t)ctx->user_data;
  bp_tensor_meta m[2];
  m[0].struct_size = m[1].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = H->op_meta(ctx->op, args, nargs, m, nrets);
  if (st) return st;
  const bp_tensor_view *t = view(&args[0]);
  bool f32 = t->dtype == BP_FLOAT32;
  if (op == SCALE) {
    bp_tensor *out;
    st = H->tensor_empty_strided(m[0].device, m[0].dtype, m[0].ndim, m[0].sizes, m[0].strides, &out);
    if (st) return st;
    const bp_tensor_view *o = H->tensor_view(out);
    double s = f32 ? (float)args[1].u.f : args[1].u.f;
#ifdef VND_FAULT_SCALE_DENSE
    /* "no gaps" (the last element's offset is numel - 1) taken for
     * contiguous */
    int64_t last = 0;
    bool gaps = false;
    for (int32_t d = 0; d < t->ndim; d++) {
      if (t->strides[d] < 0) gaps = true;
      last += (t->sizes[d] - 1) * t->strides[d];
    }
    if (!gaps && t->numel > 0 && last == t->numel - 1) {
      for (int64_t k = 0; k < t->numel; k++) {
        double x = f32 ? ((const float *)t->data)[k] : ((const double *)t->data)[k];
        if (f32) ((float *)o->data)[k] = (float)(s * x);
        else ((double *)o->data)[k] = s * x;
      }
      rets[0] = tensor_value(out);
      return BP_OK;
    }
#endif
    for (int64_t k = 0; k < t->numel; k++) set(o, k, s * get(t, k));
    rets[0] = tensor_value(out);
    return BP_OK;
  }
  if (op == ACT) {
    int kind = act_kind(args[1].u.str);
    for (int64_t k = 0; k < t->numel; k++)
      if (kind == ACT_LOG && !(get(t, k) > 0))
        return H->set_errorf(BP_ERR_INVALID_ARGUMENT,
                             "%s: kind 'log' of element %lld, %g, which is not positive",
                             ctx->op_name, (long long)k, get(t, k));
    bp_tensor *out;
    st = H->tensor_empty_strided(m[0].device, m[0].dtype, m[0].ndim, m[0].sizes, m[0].strides, &out);
    if (st) return st;
    const bp_tensor_view *o = H->tensor_view(out);
    for (int64_t k = 0; k < t->numel; k++) {
      double x = get(t, k);
#ifdef VND_FAULT_ACT_LOG1P
      double lg = log1p(x);
#else
      double lg = log(x);
#endif
      set(o, k, kind == ACT_RELU ? (x > 0 ? x : x == x ? 0 : x) : kind == ACT_ABS ? fabs(x) : lg);
    }
    rets[0] = tensor_value(out);
    return BP_OK;
  }
  if (op == MINMAX) {
    double lo = get(t, 0), hi = lo;
    for (int64_t k = 1; k < t->numel; k++) {
      double v = get(t, k);
      if (isnan(v) || isnan(lo)) lo = hi = NAN;
      else lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    bp_tensor *r[2] = {NULL, NULL};
    for (int i = 0; i < 2 && !st; i++) st = H->tensor_empty(m[i].device, m[i].dtype, 0, NULL, &r[i]);
    if (st) {
      H->tensor_release(r[0]);
      return st;
    }
    set(H->tensor_view(r[0]), 0, lo);
    set(H->tensor_view(r[1]), 0, hi);
    rets[0] = tensor_value(r[0]);
    rets[1] = tensor_value(r[1]);
    return BP_OK;
  }
  if (op == AXPY) {
    const bp_tensor_view *x = view(&args[1]);
    double a = f32 ? (float)args[2].u.f : args[2].u.f;
    for (int64_t k = 0; k < t->numel; k++) set(t, k, get(t, k) + a * get(x, k));
  } else {
    double lo = f32 ? (float)args[1].u.f : args[1].u.f, hi = f32 ? (float)args[2].u.f : args[2].u.f;
#ifdef VND_FAULT_CLAMP_GAPS
    if (t->strides[t->ndim - 1] == 1) { /* "contiguous enough" */
      for (int64_t k = 0; k < t->numel; k++) {
        double v = f32 ? ((float *)t->data)[k] : ((double *)t->data)[k];
        v = v < lo ? lo : v > hi ? hi : v;
        if (f32) ((float *)t->data)[k] = (float)v;
        else ((double *)t->data)[k] = v;
      }
      rets[0] = tensor_value(H->tensor_retain(args[0].u.tensor));
      return BP_OK;
    }
#endif
    for (int64_t k = 0; k < t->numel; k++) {
      double v = get(t, k);
      set(t, k, v < lo ? lo : v > hi ? hi : v); /* NaN stays */
    }
  }
  rets[0] = tensor_value(H->tensor_retain(args[0].u.tensor));
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  static const int32_t dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_DTYPE_INVALID};
  static const struct {
    const char *name, *schema, *doc;
    int op;
  } ops[] = {
      {"scale", "scale(Tensor x, float s) -> Tensor", "s * x", SCALE},
      {"axpy_", "axpy_(Tensor(a!) y, Tensor x, float a) -> Tensor(a!)", "y += a * x in place", AXPY},
      {"clamp_", "clamp_(Tensor(a!) self, float lo, float hi) -> Tensor(a!)",
       "clamp self to [lo, hi] in place", CLAMP},
      {"minmax", "minmax(Tensor x) -> (Tensor min, Tensor max)", "the smallest and largest element",
       MINMAX},
      {"act", "act(Tensor x, str kind) -> Tensor", "relu, abs or log of each element", ACT},
  };
#ifdef VND_REFERENCE
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "vnd", BP_LIBRARY_IMPL, 0};
#else
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "vnd", BP_LIBRARY_DEF, 0};
#endif
  bp_library *lib;
  int32_t dev = BP_DEVICE_CPU;
#ifdef VND_FAKEDEV
  bp_status st = host->device_type(reg, &iface, &dev);
  if (!st) st = host->library(reg, &ld, &lib);
#else
  bp_status st = host->library(reg, &ld, &lib);
#endif
  for (size_t i = 0; !st && i < sizeof ops / sizeof *ops; i++) {
    void *code = (void *)(intptr_t)ops[i].op;
    bp_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = ops[i].schema;
    d.meta = meta;
    d.user_data = code;
    d.doc = ops[i].doc;
    bp_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = ops[i].name;
    k.device_type = dev;
    k.boxed = kernel;
    k.user_data = code;
    k.dtypes = dtypes;
#ifdef VND_REFERENCE
    k.priority = BP_PRIORITY_REFERENCE;
    st = host->impl(lib, &k);
#else
    st = host->def(lib, &d);
    if (!st) st = host->impl(lib, &k);
#endif
  }
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
#if defined(VND_REFERENCE)
    .name = "vendoronly_reference",
#elif defined(VND_FAULT_SCALE_DENSE) && defined(VND_FAKEDEV)
    .name = "vnd_scale_dense_dev",
#elif defined(VND_FAULT_ACT_LOG1P)
    .name = "vnd_act_log1p",
#elif defined(VND_FAULT_AXPY_OVERLAP)
    .name = "vnd_axpy_overlap",
#elif defined(VND_FAULT_CLAMP_GAPS)
    .name = "vnd_clamp_gaps",
#elif defined(VND_FAULT_SCALE_DENSE)
    .name = "vnd_scale_dense",
#elif defined(VND_FAKEDEV)
    .name = "vendoronly_dev",
#else
    .name = "vendoronly",
#endif
    .vendor = "Backplane tests (correct plugins)",
    .version = "1.0.0",
    .op_set_version = 0,
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  if (!host || host->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  H = host;
  return &desc;
}
