/*
 * conformance/tests/good/f32only.c - a correct plugin whose kernels take
 * float32 only, for ops whose result dtype an argument can change:
 * core::sum and core::cumsum, each with a `dtype=` argument.
 *
 * Each kernel declares {float32} and is structured: the host runs the
 * op's meta function, allocates the result and hands it over to fill.
 * The declared list covers results too, so the host never asks these
 * kernels for sum(x, dtype=float64) or cumsum(x, dim, dtype=float64),
 * whose float64 results they could not write; neither does bp-certify,
 * which leaves those samples out and says so.  The kernels walk the
 * arguments' strides and accumulate in double, unlike the CPU plugin.
 * It claims no core op set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

/* Element k (row-major) of a view of ndim dims: its offset in elements. */
static int64_t offset_of(const bp_tensor_view *v, int64_t k) {
  int64_t off = 0;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    off += (k % v->sizes[d]) * v->strides[d];
    k /= v->sizes[d];
  }
  return off;
}

static float at(const bp_tensor_view *v, int64_t off) { return ((const float *)v->data)[off]; }

/* The kernels check what they rely on; the host has refused every other
 * call before they run. */
static bp_status want_f32(const bp_kernel_ctx *ctx, const bp_tensor_view *x,
                          const bp_tensor_view *o) {
  if (x->dtype == BP_FLOAT32 && o->dtype == BP_FLOAT32) return BP_OK;
  return H->set_errorf(BP_ERR_INTERNAL, "%s: f32only was called on %s into %s, which it does not "
                       "declare", ctx->op_name, H->dtype_name(x->dtype), H->dtype_name(o->dtype));
}

/* sum(Tensor self, int[] dim=[], bool keepdim=False, *, ScalarType? dtype=None):
 * each result element is the double sum of the input elements that map
 * to it (the reduced dims dropped, or kept with size 1). */
static bp_status sum_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *x = H->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = H->tensor_view(rets[0].u.tensor);
  bp_status st = want_f32(ctx, x, o);
  if (st) return st;
  bool reduced[BP_MAX_NDIM] = {false};
  int32_t nd = x->ndim > 0 ? x->ndim : 1;
  for (uint32_t i = 0; i < args[1].len; i++)
    reduced[(args[1].u.ints[i] % nd + nd) % nd] = true;
  if (args[1].len == 0)
    for (int32_t d = 0; d < x->ndim; d++) reduced[d] = true;
  double *acc = calloc((size_t)(o->numel > 0 ? o->numel : 1), sizeof *acc);
  if (!acc) return H->set_errorf(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  for (int64_t k = 0; k < x->numel; k++) {
    /* the result's row-major index of input element k */
    int64_t rest = k, out = 0, scale = 1;
    for (int32_t d = x->ndim - 1; d >= 0; d--) {
      int64_t i = rest % x->sizes[d];
      rest /= x->sizes[d];
      if (reduced[d]) continue;
      out += i * scale;
      scale *= x->sizes[d];
    }
    acc[out] += at(x, offset_of(x, k));
  }
  for (int64_t j = 0; j < o->numel; j++) ((float *)o->data)[offset_of(o, j)] = (float)acc[j];
  free(acc);
  return BP_OK;
}

/* cumsum(Tensor self, int dim, *, ScalarType? dtype=None): along dim, the
 * running double sum of each slice. */
static bp_status cumsum_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *x = H->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = H->tensor_view(rets[0].u.tensor);
  bp_status st = want_f32(ctx, x, o);
  if (st) return st;
  if (x->numel == 0) return BP_OK;
  int32_t nd = x->ndim > 0 ? x->ndim : 1;
  int32_t dim = (int32_t)((args[1].u.i % nd + nd) % nd);
  int64_t len = x->ndim > 0 ? x->sizes[dim] : 1;
  int64_t xs = x->ndim > 0 ? x->strides[dim] : 0, os = o->ndim > 0 ? o->strides[dim] : 0;
  /* every element whose index along dim is 0 starts a slice */
  for (int64_t k = 0; k < x->numel; k++) {
    int64_t rest = k, along = 0;
    for (int32_t d = x->ndim - 1; d >= 0; d--) {
      if (d == dim) along = rest % x->sizes[d];
      rest /= x->sizes[d];
    }
    if (along != 0) continue;
    int64_t xo = offset_of(x, k), oo = offset_of(o, k);
    double run = 0;
    for (int64_t i = 0; i < len; i++) {
      run += at(x, xo + i * xs);
      ((float *)o->data)[oo + i * os] = (float)run;
    }
  }
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  static const struct {
    const char *op;
    bp_boxed_kernel fill;
  } ops[] = {{"sum", sum_fill}, {"cumsum", cumsum_fill}};
  if (H->abi_minor < 2)
    return H->set_error(BP_ERR_VERSION, "f32only: its kernels are structured, which needs ABI 1.2");
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = H->library(reg, &ld, &lib);
  for (size_t i = 0; !st && i < sizeof ops / sizeof *ops; i++) {
    bp_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = ops[i].op;
    k.device_type = BP_DEVICE_CPU;
    k.flags = BP_KERNEL_DEF_STRUCTURED;
    k.boxed = ops[i].fill;
    k.dtypes = f32;
    st = H->impl(lib, &k);
  }
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "f32only",
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
