/*
 * plugins/cuda/sort.cu - topk and sort (op set 2).
 *
 * The order is the op set's (docs/op-set.md): by value, NaN above every
 * number, equal values by index.  Each thread owns one slice along dim
 * (an (outer, inner) column, so that neighbouring threads read
 * neighbouring elements) and orders its positions in scratch memory: a
 * bounded insertion of the best k for topk with k <= 64, a stable
 * bottom-up merge sort otherwise; then it copies the first k values and
 * their indices.  A slice is sequential, so few long slices run on few
 * threads: this is the kernel that is right everywhere, to be joined by a
 * block-per-slice one for the long slices of sampling.
 */
#include "kernels.cuh"

/* topk takes the insertion path up to this k (as the CPU plugin). */
#define CU_TOPK_INSERT_MAX 64

/* Whether a comes strictly before b: floats in double (NaN above every
 * number), integers as int64. */
template <class T>
__device__ __forceinline__ bool sort_before(T a, T b, bool descending) {
  if constexpr (Tr<T>::is_float) {
    double x = (double)lv(a), y = (double)lv(b);
    bool nx = x != x, ny = y != y;
    if (nx || ny) return descending ? nx && !ny : ny && !nx;
    return descending ? x > y : x < y;
  } else {
    int64_t x = (int64_t)lv(a), y = (int64_t)lv(b);
    return descending ? x > y : x < y;
  }
}

template <class T>
__global__ void k_sort(const T *x, T *values, int64_t *indices, int64_t *scratch,
                       int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending) {
  int64_t slices = outer * inner;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < slices;
       c += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = c / inner, i = c % inner;
    const T *xs = x + p * n * inner + i;
    int64_t *idx = scratch + c * 2 * n, *tmp = idx + n;
    if (k <= CU_TOPK_INSERT_MAX && k < n) {
      int64_t have = 0;
      for (int64_t e = 0; e < n && k > 0; e++) {
        T v = xs[e * inner];
        if (have == k && !sort_before(v, xs[idx[k - 1] * inner], descending)) continue;
        int64_t at = have < k ? have++ : k - 1;
        while (at > 0 && sort_before(v, xs[idx[at - 1] * inner], descending)) {
          idx[at] = idx[at - 1];
          at--;
        }
        idx[at] = e;
      }
    } else {
      for (int64_t e = 0; e < n; e++) idx[e] = e;
      int64_t *src = idx, *dst = tmp;
      for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
          int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
          int64_t a = lo, b = mid, o = lo;
          while (a < mid && b < hi)
            dst[o++] = sort_before(xs[src[b] * inner], xs[src[a] * inner], descending) ? src[b++]
                                                                                     : src[a++];
          while (a < mid) dst[o++] = src[a++];
          while (b < hi) dst[o++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
      }
      idx = src;
    }
    T *vo = values + p * k * inner + i;
    int64_t *io = indices + p * k * inner + i;
    for (int64_t r = 0; r < k; r++) {
      vo[r * inner] = xs[idx[r] * inner];
      io[r * inner] = idx[r];
    }
  }
}

/* Fills values and indices, the results the meta function sized. */
static bp_status topk_sort(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *values,
                           bp_tensor *indices) {
  bool topk = (intptr_t)ctx->user_data == 1;
  const bp_tensor_view *vv = cu_view(values), *vx = cu_view(args[0].u.tensor);
  if (vv->numel == 0) return BP_OK;
  cudaStream_t s;
  bp_status st = cu_enter(vv->device.index, &s);
  bp_tensor *c = NULL, *scratch = NULL;
  if (!st) st = cu_cast_to(args[0].u.tensor, vx->dtype, ctx->op_name, &c);
  if (!st) {
    const bp_tensor_view *a = cu_view(c);
    int64_t dim_arg = args[topk ? 2 : 1].u.i;
    int32_t dim = a->ndim > 0 ? (int32_t)(dim_arg < 0 ? dim_arg + a->ndim : dim_arg) : 0;
    int64_t outer = 1, n = a->ndim > 0 ? a->sizes[dim] : 1, inner = 1;
    for (int32_t d = 0; d < dim; d++) outer *= a->sizes[d];
    for (int32_t d = dim + 1; d < a->ndim; d++) inner *= a->sizes[d];
    /* a 0-dim self gives its element for k 0 or 1, as in PyTorch */
    int64_t k = topk && a->ndim > 0 ? args[1].u.i : n;
    bool descending = topk ? args[3].u.b : args[2].u.b;
    int64_t words = outer * inner * 2 * n;
    st = cu_host->tensor_empty(a->device, BP_INT64, 1, &words, &scratch);
    if (!st) {
      unsigned blocks = cu_blocks(vv->device.index, outer * inner, CU_THREADS);
      CU_SWITCH_ALL(a->dtype,
                    st = CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s", ctx->op_name,
                                bp_aux_dtype_name(a->dtype)),
                    k_sort<scalar_t><<<blocks, CU_THREADS, 0, s>>>(
                        (const scalar_t *)a->data, (scalar_t *)vv->data,
                        (int64_t *)cu_view(indices)->data, (int64_t *)cu_view(scratch)->data,
                        outer, n, inner, k, descending));
      if (!st) st = cu_launched(ctx->op_name);
    }
  }
  cu_host->tensor_release(scratch);
  cu_host->tensor_release(c);
  return st;
}

static bp_status topk_sort_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                bp_tensor *const *outs) {
  return topk_sort(ctx, args, outs[0], outs[1]);
}
/* topk_sort_kernel_fill fills the two results the host allocated;
 * topk_sort_kernel, for a host before ABI 1.2, allocates them. */
BP_AUX_STRUCTURED_KERNEL_N(topk_sort_kernel, topk_sort_impl, 2)

bp_status cu_register_sort(bp_library *lib) {
  static const char *const ops[] = {"sort", "topk"}; /* user_data: 0, 1 */
  bp_status st = BP_OK;
  for (intptr_t i = 0; !st && i < 2; i++)
    st = bp_aux_impl_structured(cu_host, lib, ops[i], BP_DEVICE_CUDA, topk_sort_kernel,
                                topk_sort_kernel_fill, (const void *)i, BP_PRIORITY_REFERENCE);
  return st;
}
