/*
 * acme.c - an example Backplane plugin, built outside the Backplane tree
 * against the installed SDK (pkg-config backplane-sdk).
 *
 * It defines its own namespace, "acme", with two operators on the host CPU
 * device, one for each kind of kernel:
 *
 *   acme::axpy(Tensor x, Tensor y, float alpha=1.0) -> Tensor
 *       alpha * x + y, elementwise, same shapes; an unboxed kernel: a plain
 *       C function whose signature follows from the schema.
 *   acme::clamp_abs(Tensor self, float limit) -> Tensor
 *       each element clamped to [-limit, limit]; a boxed kernel, which
 *       receives the arguments as tagged values.
 *
 * Both take float32 or float64 tensors of any strides, and share one meta
 * function, which computes the result's dtype and shape without touching
 * data and refuses bad arguments with the same messages as the kernels.
 * The plugin claims no `core` op set (op_set_version 0).
 */
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

/* The host's function table, valid from bp_plugin_init() until unload. */
static const bp_host_api *host;

static const int32_t float_dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_DTYPE_INVALID};

/* Checks the tensor arguments: float32 or float64, and (for axpy) two
 * tensors of the same dtype and shape. */
static bp_status check_args(const bp_kernel_ctx *ctx, const bp_tensor_view *x, const bp_tensor_view *y) {
  if (x->dtype != BP_FLOAT32 && x->dtype != BP_FLOAT64)
    return host->set_errorf(BP_ERR_TYPE, "%s: argument #0: expected float32 or float64, got dtype code %d",
                            ctx->op_name, (int)x->dtype);
  if (!y) return BP_OK;
  if (y->dtype != x->dtype)
    return host->set_errorf(BP_ERR_TYPE, "%s: argument #1 'y': expected the dtype of 'x' (code %d), got code %d",
                            ctx->op_name, (int)x->dtype, (int)y->dtype);
  if (y->ndim != x->ndim)
    return host->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'y': expected %d dimensions like 'x', got %d",
                            ctx->op_name, (int)x->ndim, (int)y->ndim);
  for (int32_t d = 0; d < x->ndim; d++)
    if (x->sizes[d] != y->sizes[d])
      return host->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'y': dimension %d is %lld, 'x' has %lld",
                              ctx->op_name, (int)d, (long long)y->sizes[d], (long long)x->sizes[d]);
  return BP_OK;
}

/* The one meta function: the result has the first argument's device,
 * dtype and shape, with contiguous strides. */
static bp_status meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs, bp_tensor_meta *outs,
                      size_t nouts) {
  (void)nouts;
  const bp_tensor_view *x = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *y = nargs == 3 ? host->tensor_view(args[1].u.tensor) : NULL;
  bp_status st = check_args(ctx, x, y);
  if (st != BP_OK) return st;
  outs[0].device = x->device;
  outs[0].dtype = x->dtype;
  outs[0].ndim = x->ndim;
  int64_t stride = 1;
  for (int32_t d = x->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = x->sizes[d];
    outs[0].strides[d] = stride;
    stride *= x->sizes[d] > 1 ? x->sizes[d] : 1;
  }
  return BP_OK;
}

/* The element offset of the n-th element (in row-major order) of v. */
static int64_t offset_of(const bp_tensor_view *v, int64_t n) {
  int64_t off = 0;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    off += (n % v->sizes[d]) * v->strides[d];
    n /= v->sizes[d];
  }
  return off;
}

static double load(const bp_tensor_view *v, int64_t n) {
  int64_t off = offset_of(v, n);
  return v->dtype == BP_FLOAT32 ? (double)((const float *)v->data)[off] : ((const double *)v->data)[off];
}

static void store(const bp_tensor_view *v, int64_t n, double value) {
  if (v->dtype == BP_FLOAT32)
    ((float *)v->data)[n] = (float)value;
  else
    ((double *)v->data)[n] = value;
}

/* A new contiguous tensor shaped like x; *out is a new reference. */
static bp_status empty_like(const bp_tensor_view *x, bp_tensor **out) {
  return host->tensor_empty(x->device, x->dtype, x->ndim, x->sizes, out);
}

/* The unboxed kernel of acme::axpy.  Its signature follows the schema:
 * Tensor -> bp_tensor *, float -> double, a Tensor result -> bp_tensor **
 * (a new reference that passes to the caller). */
static bp_status axpy_kernel(const bp_kernel_ctx *ctx, bp_tensor *x_t, bp_tensor *y_t, double alpha,
                             bp_tensor **out) {
  const bp_tensor_view *x = host->tensor_view(x_t);
  const bp_tensor_view *y = host->tensor_view(y_t);
  bp_status st = check_args(ctx, x, y);
  if (st != BP_OK) return st;
  bp_tensor *z_t;
  if ((st = empty_like(x, &z_t)) != BP_OK) return st;
  const bp_tensor_view *z = host->tensor_view(z_t);
  for (int64_t n = 0; n < x->numel; n++) store(z, n, alpha * load(x, n) + load(y, n));
  *out = z_t;
  return BP_OK;
}

/* The boxed kernel of acme::clamp_abs: args[0] is the Tensor, args[1] the
 * float, both already checked against the schema by the host. */
static bp_status clamp_abs_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *x = host->tensor_view(args[0].u.tensor);
  double limit = args[1].u.f;
  bp_status st = check_args(ctx, x, NULL);
  if (st != BP_OK) return st;
  if (!(limit >= 0))
    return host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: argument #1 'limit': expected >= 0, got %g",
                            ctx->op_name, limit);
  bp_tensor *z_t;
  if ((st = empty_like(x, &z_t)) != BP_OK) return st;
  const bp_tensor_view *z = host->tensor_view(z_t);
  for (int64_t n = 0; n < x->numel; n++) {
    double v = load(x, n);
    store(z, n, v > limit ? limit : v < -limit ? -limit : v);
  }
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = z_t;
  return BP_OK;
}

/* Registers the namespace, the two operators and their kernels. */
static bp_status setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def lib_def = {BP_LIBRARY_DEF_STRUCT_SIZE, "acme", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = h->library(reg, &lib_def, &lib);
  if (st != BP_OK) return st;

  bp_op_def op;
  memset(&op, 0, sizeof op);
  op.struct_size = BP_OP_DEF_STRUCT_SIZE;
  op.meta = meta;
  op.schema = "axpy(Tensor x, Tensor y, float alpha=1.0) -> Tensor";
  op.doc = "alpha * x + y, same shapes";
  if ((st = h->def(lib, &op)) != BP_OK) return st;
  op.schema = "clamp_abs(Tensor self, float limit) -> Tensor";
  op.doc = "clamp each element to [-limit, limit]";
  if ((st = h->def(lib, &op)) != BP_OK) return st;

  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.device_type = BP_DEVICE_CPU;
  k.dtypes = float_dtypes;
  k.op = "axpy";
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))axpy_kernel;
  if ((st = h->impl(lib, &k)) != BP_OK) return st;
  k.op = "clamp_abs";
  k.unboxed = NULL;
  k.boxed = clamp_abs_kernel;
  return h->impl(lib, &k);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "acme",
    .vendor = "ACME Accelerators",
    .version = "1.0.0",
    .op_set_version = 0,
    .setup = setup,
};

/* The one exported symbol.  It only checks the host and returns the
 * descriptor; registration happens in setup(). */
BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *h) {
  if (h->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  host = h;
  return &desc;
}
