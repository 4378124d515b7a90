/*
 * hostmem: a plugin that registers a vendor device type, "hostmem", whose
 * memory is plain host memory from the C library, and runs ops on it:
 * core::add (and add.out), core::mul and core::relu in every dtype, core::sum and
 * core::softmax in float32 alone (declared so), and an op of its own,
 * hostmem::swish, with the helper kit <backplane/plugin_aux.h>.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin_aux.h>

/* ------------------------------------------------------------------------ */
/* The device type: the interface's required functions are all there is.   */
/* ------------------------------------------------------------------------ */

static bp_status count(void *ud, int32_t *out_count) {
  (void)ud;
  *out_count = 1;
  return BP_OK;
}

/* 64-byte aligned, as the interface requires; aligned_alloc wants a
 * multiple of the alignment. */
static bp_status alloc(void *ud, int32_t index, size_t nbytes, void **out_ptr) {
  (void)ud, (void)index;
  *out_ptr = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  return *out_ptr ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

static void release(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud, (void)index, (void)nbytes;
  free(ptr);
}

/* Both sides are host memory, whichever device they belong to. */
static bp_status copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                      size_t nbytes) {
  (void)ud, (void)dd, (void)sd;
  memmove(dst, src, nbytes);
  return BP_OK;
}

static bp_status synchronize(void *ud, int32_t index) {
  (void)ud, (void)index;
  return BP_OK; /* nothing runs asynchronously */
}

static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "hostmem",
    .type = BP_DEVICE_INVALID, /* the host assigns a runtime code */
    .flags = BP_DEVICE_HOST_VISIBLE, /* kernels and the kit read it directly */
    .count = count,
    .alloc = alloc,
    .free = release,
    .copy = copy,
    .synchronize = synchronize,
};

/* ------------------------------------------------------------------------ */
/* Pointwise kernels: the scalar expression, in the compute type of the    */
/* result's dtype (float, double, or uint64_t that wraps for integers).    */
/* ------------------------------------------------------------------------ */

BP_AUX_POINTWISE_KERNEL(add_kernel, 2, (self, other, alpha), self + alpha * other)
BP_AUX_POINTWISE_OUT_KERNEL(add_out_kernel, add_kernel, 2) /* add.out: add into `out` */
BP_AUX_POINTWISE_KERNEL(mul_kernel, 2, (self, other), self * other)
BP_AUX_POINTWISE_KERNEL(relu_kernel, 1, (self), bp_aux_max(self, 0))
BP_AUX_POINTWISE_FLOAT_KERNEL(swish_kernel, 1, (x), x / (1 + exp(-x)))

/* ------------------------------------------------------------------------ */
/* float32 kernels                                                          */
/* ------------------------------------------------------------------------ */

/* core::sum(self, dim, keepdim, *, dtype): the input converted to the
 * result's dtype first (as torch does), summed in double into a buffer
 * that has stride 0 along the reduced dimensions, then stored. */
static bp_status sum_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *o = bp_aux_view(ctx, out);
  if (!bp_aux_dtype_is_float(o->dtype)) return bp_aux_unsupported_dtype(ctx, 3, o->dtype);
  bp_tensor *xt;
  bool reduce[BP_MAX_NDIM];
  bp_status st = bp_aux_to_dtype(ctx, args[0].u.tensor, o->dtype, &xt);
  if (st != BP_OK) return st;
  const bp_tensor_view *x = bp_aux_view(ctx, xt);
  st = bp_aux_arg_reduce_dims(ctx, args, 1, x->ndim, reduce);
  double *acc = calloc((size_t)(o->numel > 0 ? o->numel : 1), sizeof *acc);
  if (st == BP_OK && !acc) st = ctx->host->set_errorf(BP_ERR_OUT_OF_MEMORY, "hostmem: out of memory");
  if (st == BP_OK) {
    /* acc seen in x's shape (stride 0 where reduced), then in out's. */
    int64_t xs[BP_MAX_NDIM], os[BP_MAX_NDIM], n = 1;
    for (int32_t d = x->ndim - 1; d >= 0; d--) {
      xs[d] = reduce[d] ? 0 : n;
      n *= reduce[d] ? 1 : x->sizes[d];
    }
    n = 1;
    for (int32_t d = o->ndim - 1; d >= 0; d--) {
      os[d] = n;
      n *= o->sizes[d];
    }
    bp_tensor_view a = *x, ao = *o;
    a.data = ao.data = acc, a.dtype = ao.dtype = BP_FLOAT64, a.itemsize = ao.itemsize = 8;
    a.strides = xs, ao.strides = os;
    const bp_tensor_view *in[2] = {&a, x}, *wr[2] = {o, &ao};
    bp_aux_iter it;
    bp_aux_run r;
    bp_aux_iter_plan(&it, 2, in, x->ndim, x->sizes);
    for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r);)
      for (int64_t k = 0; k < r.n; k++) {
        double v = 0;
        bp_aux_convert(BP_FLOAT64, &v, x->dtype, BP_AUX_AT(char, r, 1, k));
        *BP_AUX_AT(double, r, 0, k) += v;
      }
    bp_aux_iter_plan(&it, 2, wr, o->ndim, o->sizes);
    for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r);)
      for (int64_t k = 0; k < r.n; k++)
        bp_aux_convert(o->dtype, BP_AUX_AT(char, r, 0, k), BP_FLOAT64, BP_AUX_AT(char, r, 1, k));
  }
  free(acc);
  ctx->host->tensor_release(xt);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(sum_kernel, sum_impl)

/* The offset, in elements, of slice s along `dim`: its first element. */
static int64_t slice_offset(const bp_tensor_view *v, int32_t dim, int64_t s) {
  int64_t off = 0;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    if (d == dim) continue;
    off += s % v->sizes[d] * v->strides[d];
    s /= v->sizes[d];
  }
  return off;
}

/* core::softmax(self, dim): per slice along dim, the maximum subtracted,
 * exp and its sum in double. */
static bp_status softmax_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *x = bp_aux_view(ctx, args[0].u.tensor), *o = bp_aux_view(ctx, out);
  int32_t dim = 0;
  bp_status st = bp_aux_arg_dim(ctx, args, 1, x->ndim, &dim);
  if (st != BP_OK || x->numel == 0) return st;
  int64_t n = x->ndim ? x->sizes[dim] : 1, sx = x->ndim ? x->strides[dim] : 0,
          so = o->ndim ? o->strides[dim] : 0;
  for (int64_t s = 0; s < x->numel / n; s++) {
    const float *px = (const float *)x->data + slice_offset(x, dim, s);
    float *po = (float *)o->data + slice_offset(o, dim, s), m = -INFINITY;
    double sum = 0;
    for (int64_t k = 0; k < n; k++) m = px[k * sx] > m ? px[k * sx] : m;
    for (int64_t k = 0; k < n; k++) sum += exp((double)px[k * sx] - m);
    for (int64_t k = 0; k < n; k++) po[k * so] = (float)(exp((double)px[k * sx] - m) / sum);
  }
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(softmax_kernel, softmax_impl)

/* ------------------------------------------------------------------------ */
/* An op of its own: hostmem::swish(Tensor x) -> Tensor, x * sigmoid(x)     */
/* ------------------------------------------------------------------------ */

/* The meta function: the result's device, dtype and shape (x's), from the
 * arguments' metadata alone; a dtype that is not floating is refused. */
static bp_status swish_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs, (void)nouts;
  bp_tensor *t;
  bp_status st = bp_aux_arg_tensor(ctx, args, 0, &t);
  if (st != BP_OK) return st;
  const bp_tensor_view *x = bp_aux_view(ctx, t);
  if (!bp_aux_dtype_is_float(x->dtype))
    return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #0 'x': expected a floating-point "
                                 "dtype, got %s", ctx->op_name, bp_aux_dtype_name(x->dtype));
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

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def core_def = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library_def own_def = {BP_LIBRARY_DEF_STRUCT_SIZE, "hostmem", BP_LIBRARY_DEF, 0};
  bp_op_def swish;
  memset(&swish, 0, sizeof swish);
  swish.struct_size = BP_OP_DEF_STRUCT_SIZE;
  swish.schema = "swish(Tensor x) -> Tensor";
  swish.meta = swish_meta;
  swish.doc = "x * sigmoid(x)";
  const int32_t *f32 = BP_AUX_DTYPES(BP_FLOAT32);
  const int32_t *floats = BP_AUX_DTYPES(BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16);
  int32_t dev; /* the code the host gave the device type: kernels run on it */
  bp_library *core, *own;
  bp_status st = host->device_type(reg, &iface, &dev);
  if (st == BP_OK) st = host->library(reg, &core_def, &core);
  /* NULL: every dtype the op allows. */
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, core, "add", dev, add_kernel, NULL);
  if (st == BP_OK) st = bp_aux_impl_dtypes(host, core, "add.out", dev, add_out_kernel, NULL);
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, core, "mul", dev, mul_kernel, NULL);
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, core, "relu", dev, relu_kernel, NULL);
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, core, "sum", dev, sum_kernel, f32);
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, core, "softmax", dev, softmax_kernel, f32);
  if (st == BP_OK) st = host->library(reg, &own_def, &own);
  if (st == BP_OK) st = host->def(own, &swish);
  if (st == BP_OK) st = BP_AUX_IMPL_STRUCTURED(host, own, "swish", dev, swish_kernel, floats);
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "hostmem",
    .vendor = "My Company",
    .version = "0.1.0",
    .op_set_version = 0, /* a few core ops, not the whole set */
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  return host->abi_major == BP_ABI_VERSION_MAJOR ? &desc : NULL;
}
