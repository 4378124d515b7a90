/*
 * plugins/cuda/scan.cu - cumsum (op set 2): inclusive prefix sums along a
 * dim.
 *
 * self is converted to the result dtype first (contiguous), as the CPU
 * plugin and PyTorch do for `dtype=`.  Each thread owns one (outer, inner)
 * column and walks it along dim, so that neighbouring threads read
 * neighbouring elements; floats accumulate in double and round each
 * prefix once, integers in uint64 that wraps to the result dtype, bool as
 * "any so far".  (A column is sequential: long columns of few outer and
 * inner elements run on few threads.)
 */
#include "kernels.cuh"

template <class T>
__global__ void k_cumsum(const T *x, T *o, int64_t outer, int64_t n, int64_t inner) {
  int64_t cols = outer * inner;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols;
       c += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = c / inner, i = c % inner;
    int64_t at = p * n * inner + i;
    if constexpr (Tr<T>::is_float) {
      double acc = 0;
      for (int64_t k = 0; k < n; k++, at += inner) {
        acc += (double)lv(x[at]);
        o[at] = Cv<T>::f(acc);
      }
    } else {
      uint64_t acc = 0;
      for (int64_t k = 0; k < n; k++, at += inner) {
        if constexpr (std::is_same<T, b8>::value)
          acc |= (uint64_t)lv(x[at]);
        else
          acc += (uint64_t)lv(x[at]);
        o[at] = Cv<T>::f((int64_t)acc);
      }
    }
  }
}

static bp_status cumsum_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *o = cu_view(out);
  if (o->numel == 0) return BP_OK;
  cudaStream_t s;
  bp_status st = cu_enter(o->device.index, &s);
  bp_tensor *c = NULL;
  if (!st) st = cu_cast_to(args[0].u.tensor, o->dtype, ctx->op_name, &c);
  if (!st) {
    const bp_tensor_view *a = cu_view(c);
    int32_t dim = a->ndim == 0 ? 0 : (int32_t)(args[1].u.i < 0 ? args[1].u.i + a->ndim
                                                                : args[1].u.i);
    int64_t outer = 1, n = a->ndim ? a->sizes[dim] : 1, inner = 1;
    for (int32_t d = 0; d < dim; d++) outer *= a->sizes[d];
    for (int32_t d = dim + 1; d < a->ndim; d++) inner *= a->sizes[d];
    unsigned blocks = cu_blocks(o->device.index, outer * inner, CU_THREADS);
    CU_SWITCH_ALL(o->dtype,
                  st = CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s", ctx->op_name,
                              bp_aux_dtype_name(o->dtype)),
                  k_cumsum<scalar_t><<<blocks, CU_THREADS, 0, s>>>(
                      (const scalar_t *)a->data, (scalar_t *)o->data, outer, n, inner));
    if (!st) st = cu_launched(ctx->op_name);
  }
  cu_host->tensor_release(c);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(cumsum_kernel, cumsum_impl)

bp_status cu_register_scan(bp_library *lib) {
  return CU_IMPL_STRUCTURED(lib, "cumsum", cumsum_kernel, NULL);
}
