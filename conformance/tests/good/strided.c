/*
 * conformance/tests/good/strided.c - a correct plugin whose results are
 * not contiguous: its meta functions give legal non-contiguous strides,
 * and its kernels allocate exactly those and write only those elements.
 *
 * Namespace "lay" (DEF), on BP_DEVICE_CPU, float32 and float64, inputs of
 * any strides; op_set_version 0:
 *
 *   lay::colmajor(Tensor self) -> Tensor
 *       a copy of self in column-major (Fortran) order: strides [1, d0, d0*d1, ...]
 *   lay::padded_scale(Tensor self, float s) -> Tensor
 *       s * self, each row (the last dimension) padded to a multiple of 16
 *       elements (64 bytes of float32), as a vendor aligns rows
 *   lay::axpby_cm(Tensor x, Tensor y, float a) -> Tensor
 *       a * x + y for x and y of one shape and dtype, in column-major order
 */
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

enum layout { COLMAJOR, PADDED };

static const bp_tensor_view *view(const bp_value *v) { return H->tensor_view(v->u.tensor); }

/* The argument checks every op shares: dtypes, and x and y alike. */
static bp_status check(const bp_kernel_ctx *ctx, const bp_tensor_view *x, const bp_tensor_view *y) {
  if (x->dtype != BP_FLOAT32 && x->dtype != BP_FLOAT64)
    return H->set_errorf(BP_ERR_TYPE, "%s: argument #0: expected float32 or float64, got dtype %d",
                         ctx->op_name, (int)x->dtype);
  if (!y) return BP_OK;
  if (y->dtype != x->dtype)
    return H->set_errorf(BP_ERR_TYPE, "%s: argument #1 'y': dtype %d, but 'x' has %d", ctx->op_name,
                         (int)y->dtype, (int)x->dtype);
  bool same = y->ndim == x->ndim;
  for (int32_t d = 0; same && d < x->ndim; d++) same = x->sizes[d] == y->sizes[d];
  if (!same)
    return H->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'y' must have the shape of 'x'", ctx->op_name);
  return BP_OK;
}

/* The strides of a layout for sizes (a size of 0 counts as 1). */
static void layout_strides(int layout, int32_t ndim, const int64_t *sizes, int64_t *strides) {
  if (layout == COLMAJOR) {
    int64_t acc = 1;
    for (int32_t d = 0; d < ndim; d++) {
      strides[d] = acc;
      acc *= sizes[d] > 1 ? sizes[d] : 1;
    }
    return;
  }
  int64_t acc = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = acc;
    acc *= sizes[d] > 1 ? sizes[d] : 1;
    if (d == ndim - 1) acc = (acc + 15) / 16 * 16; /* the row's padding */
  }
}

static int layout_of(const bp_kernel_ctx *ctx) { return (int)(intptr_t)ctx->user_data; }

/* One meta function: the first tensor's shape and dtype, in the op's layout. */
static bp_status meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                      bp_tensor_meta *outs, size_t nouts) {
  (void)nouts;
  const bp_tensor_view *x = view(&args[0]);
  bp_status st = check(ctx, x, nargs == 3 && args[1].tag == BP_TAG_TENSOR ? view(&args[1]) : NULL);
  if (st) return st;
  outs[0].device = x->device;
  outs[0].dtype = x->dtype;
  outs[0].ndim = x->ndim;
  memcpy(outs[0].sizes, x->sizes, (size_t)x->ndim * sizeof *x->sizes);
  layout_strides(layout_of(ctx), x->ndim, x->sizes, outs[0].strides);
  return BP_OK;
}

static double load(const bp_tensor_view *v, int64_t off) {
  return v->dtype == BP_FLOAT32 ? ((const float *)v->data)[off] : ((const double *)v->data)[off];
}

static void store(const bp_tensor_view *v, int64_t off, double x) {
  if (v->dtype == BP_FLOAT32) ((float *)v->data)[off] = (float)x;
  else ((double *)v->data)[off] = x;
}

/* The element offset of index idx in v. */
static int64_t offset(const bp_tensor_view *v, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
  return off;
}

/* One kernel for the three ops: out = a * x + b * y (y optional), where
 * (a, b) is (1, 0) for colmajor, (s, 0) for padded_scale and (a, 1) for
 * axpby_cm; the result in the strides the meta function gives. */
static bp_status kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                        bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = H->op_meta(ctx->op, args, nargs, &m, 1);
  if (st) return st;
  bp_tensor *out;
  st = H->tensor_empty_strided(m.device, m.dtype, m.ndim, m.sizes, m.strides, &out);
  if (st) return st;
  const bp_tensor_view *o = H->tensor_view(out), *x = view(&args[0]);
  const bp_tensor_view *y = nargs == 3 ? view(&args[1]) : NULL;
  double a = nargs == 1 ? 1.0 : args[nargs - 1].u.f;
  if (o->dtype == BP_FLOAT32) a = (float)a;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++) {
    double v = a * load(x, offset(x, idx)) + (y ? load(y, offset(y, idx)) : 0.0);
    store(o, offset(o, idx), v);
    for (int32_t d = o->ndim - 1; d >= 0; d--) {
      if (++idx[d] < o->sizes[d]) break;
      idx[d] = 0;
    }
  }
  memset(rets, 0, sizeof *rets);
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  static const int32_t dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_DTYPE_INVALID};
  static const struct {
    const char *schema, *doc;
    int layout;
  } ops[] = {
      {"colmajor(Tensor self) -> Tensor", "a copy of self in column-major order", COLMAJOR},
      {"padded_scale(Tensor self, float s) -> Tensor", "s * self with rows padded to 16 elements",
       PADDED},
      {"axpby_cm(Tensor x, Tensor y, float a) -> Tensor", "a * x + y in column-major order",
       COLMAJOR},
  };
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "lay", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  for (size_t i = 0; !st && i < sizeof ops / sizeof *ops; i++) {
    bp_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = ops[i].schema;
    d.meta = meta;
    d.user_data = (void *)(intptr_t)ops[i].layout;
    d.doc = ops[i].doc;
    st = host->def(lib, &d);
    char name[32]; /* the op's name: the schema up to '(' */
    size_t n = strcspn(ops[i].schema, "(");
    memcpy(name, ops[i].schema, n);
    name[n] = '\0';
    bp_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = name;
    k.device_type = BP_DEVICE_CPU;
    k.boxed = kernel;
    k.dtypes = dtypes;
    if (!st) st = host->impl(lib, &k);
  }
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "strided",
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
