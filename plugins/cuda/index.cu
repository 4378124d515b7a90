/*
 * plugins/cuda/index.cu - the gathers of op set 2: index_select and gather
 * (embedding is the host's composite over index_select).
 *
 * self is made contiguous and the indices contiguous int64 first (copies
 * only when they are not).  Each thread copies elements of the result;
 * an index out of range is never followed: its element gets zero bits and
 * the thread records its position (atomicMin over a device word), which
 * the kernel reads back after the launch to refuse the call with the
 * index, its position and the bound, as the op set says.  That read waits
 * for the stream: the price of an exact error without a device assert.
 */
#include <stdio.h>

#include "kernels.cuh"

/* Elements are copied as unsigned words of their width. */
template <int W> struct Word;
template <> struct Word<1> { typedef uint8_t T; };
template <> struct Word<2> { typedef uint16_t T; };
template <> struct Word<4> { typedef uint32_t T; };
template <> struct Word<8> { typedef uint64_t T; };

/* out[o, k, i] = self[o, ix[k], i] for o < outer, k < n, i < inner. */
template <class T>
__global__ void k_index_select(const T *self, const int64_t *ix, T *out, int64_t outer,
                               int64_t n, int64_t inner, int64_t size,
                               unsigned long long *bad) {
  int64_t total = outer * n * inner;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % inner, t = e / inner, k = t % n, o = t / n;
    int64_t j = ix[k];
    if (j < 0 || j >= size) {
      atomicMin(bad, (unsigned long long)k);
      out[e] = T(0);
      continue;
    }
    out[e] = self[(o * size + j) * inner + i];
  }
}

/* Only checks the indices (a result with no element to copy). */
__global__ void k_check_index(const int64_t *ix, int64_t n, int64_t size,
                              unsigned long long *bad) {
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += (int64_t)gridDim.x * blockDim.x)
    if (ix[k] < 0 || ix[k] >= size) atomicMin(bad, (unsigned long long)k);
}

/* The result's shape and self's strides (elements), by value. */
struct GatherGeo {
  int32_t ndim, dim;
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];
  int64_t size; /* self's size along dim */
};

template <class T>
__global__ void k_gather(const T *self, const int64_t *ix, T *out, int64_t total, GatherGeo g,
                         unsigned long long *bad) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = ix[e];
    if (j < 0 || j >= g.size) {
      atomicMin(bad, (unsigned long long)e);
      out[e] = T(0);
      continue;
    }
    int64_t off = 0, rest = e;
    for (int32_t d = g.ndim - 1; d >= 0; d--) {
      int64_t id = rest % g.sizes[d];
      rest /= g.sizes[d];
      off += (d == g.dim ? j : id) * g.strides[d];
    }
    out[e] = self[off];
  }
}

/* Contiguous self and int64 indices, a device word for the first bad
 * position; released by gather_ctx_free. */
struct GatherCtx {
  bp_tensor *self, *ix, *bad;
  cudaStream_t s;
};

static void gather_ctx_free(GatherCtx *g) {
  cu_host->tensor_release(g->self);
  cu_host->tensor_release(g->ix);
  cu_host->tensor_release(g->bad);
}

static bp_status gather_ctx_init(const bp_kernel_ctx *ctx, const bp_value *args, GatherCtx *g) {
  memset(g, 0, sizeof *g);
  const bp_tensor_view *a = cu_view(args[0].u.tensor);
  bp_status st = cu_enter(a->device.index, &g->s);
  if (!st) st = cu_cast_to(args[0].u.tensor, a->dtype, ctx->op_name, &g->self);
  if (!st) st = cu_cast_to(args[2].u.tensor, BP_INT64, ctx->op_name, &g->ix);
  if (!st) st = cu_host->tensor_empty(a->device, BP_INT64, 0, NULL, &g->bad);
  if (!st)
    st = cu_check(cudaMemsetAsync(cu_view(g->bad)->data, 0xff, 8, g->s),
                  "cudaMemsetAsync (the index check)");
  return st;
}

/* After the launch: the first index out of range, if any, refused. */
static bp_status gather_ctx_check(const bp_kernel_ctx *ctx, GatherCtx *g, int32_t dim,
                                  int64_t size) {
  bp_status st = cu_launched(ctx->op_name);
  if (st) return st;
  unsigned long long pos = 0;
  int64_t value = 0;
  st = cu_check(cudaMemcpyAsync(&pos, cu_view(g->bad)->data, 8, cudaMemcpyDeviceToHost, g->s),
                "cudaMemcpyAsync (the index check)");
  if (!st) st = cu_check(cudaStreamSynchronize(g->s), "cudaStreamSynchronize (the index check)");
  if (st || pos == ~0ull) return st;
  const int64_t *ix = (const int64_t *)cu_view(g->ix)->data;
  st = cu_check(cudaMemcpy(&value, ix + pos, 8, cudaMemcpyDeviceToHost), "cudaMemcpy (an index)");
  if (st) return st;
  return CU_ERR(BP_ERR_INVALID_ARGUMENT,
                "cuda: %s: argument #2 'index': index %lld (at position %llu) is out of range for "
                "dimension %d of size %lld (expected 0 .. %lld)",
                ctx->op_name, (long long)value, pos, (int)dim, (long long)size,
                (long long)size - 1);
}

static int32_t dim_of(const bp_value *args) {
  const bp_tensor_view *a = cu_view(args[0].u.tensor);
  if (a->ndim == 0) return 0;
  return (int32_t)(args[1].u.i < 0 ? args[1].u.i + a->ndim : args[1].u.i);
}

static bp_status index_select_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                   bp_tensor *out) {
  const bp_tensor_view *o = cu_view(out);
  if (o->numel == 0 && cu_view(args[2].u.tensor)->numel == 0) return BP_OK;
  GatherCtx g;
  bp_status st = gather_ctx_init(ctx, args, &g);
  int32_t dim = dim_of(args);
  const bp_tensor_view *a = st ? NULL : cu_view(g.self);
  int64_t size = a && a->ndim > 0 ? a->sizes[dim] : 1;
  if (!st) {
    int64_t outer = 1, inner = 1, n = cu_view(g.ix)->numel;
    for (int32_t d = 0; d < dim; d++) outer *= a->sizes[d];
    for (int32_t d = dim + 1; d < a->ndim; d++) inner *= a->sizes[d];
    int64_t total = outer * n * inner;
    unsigned blocks = cu_blocks(a->device.index, total > 0 ? total : 1, CU_THREADS);
    unsigned long long *bad = (unsigned long long *)cu_view(g.bad)->data;
    const int64_t *ix = (const int64_t *)cu_view(g.ix)->data;
#define LAUNCH(W)                                                                          \
  k_index_select<Word<W>::T><<<blocks, CU_THREADS, 0, g.s>>>(                               \
      (const Word<W>::T *)a->data, ix, (Word<W>::T *)o->data, outer, n, inner, size, bad)
    if (total > 0) {
      switch (a->itemsize) {
        case 1: LAUNCH(1); break;
        case 2: LAUNCH(2); break;
        case 4: LAUNCH(4); break;
        default: LAUNCH(8); break;
      }
    } else if (n > 0) {
      /* no element to copy (inner or outer is 0), but indices to check */
      k_check_index<<<cu_blocks(a->device.index, n, CU_THREADS), CU_THREADS, 0, g.s>>>(
          ix, n, size, bad);
    }
#undef LAUNCH
    st = gather_ctx_check(ctx, &g, dim, size);
  }
  gather_ctx_free(&g);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(index_select_kernel, index_select_impl)

static bp_status gather_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *o = cu_view(out);
  if (o->numel == 0) return BP_OK;
  GatherCtx g;
  bp_status st = gather_ctx_init(ctx, args, &g);
  int32_t dim = dim_of(args);
  if (!st) {
    const bp_tensor_view *a = cu_view(g.self);
    GatherGeo geo = {};
    geo.ndim = o->ndim;
    geo.dim = dim;
    geo.size = a->ndim > 0 ? a->sizes[dim] : 1;
    for (int32_t d = 0; d < o->ndim; d++) {
      geo.sizes[d] = o->sizes[d];
      geo.strides[d] = a->ndim > 0 ? a->strides[d] : 0;
    }
    unsigned blocks = cu_blocks(a->device.index, o->numel, CU_THREADS);
    unsigned long long *bad = (unsigned long long *)cu_view(g.bad)->data;
    const int64_t *ix = (const int64_t *)cu_view(g.ix)->data;
#define LAUNCH(W)                                                                          \
  k_gather<Word<W>::T><<<blocks, CU_THREADS, 0, g.s>>>(                                     \
      (const Word<W>::T *)a->data, ix, (Word<W>::T *)o->data, o->numel, geo, bad)
    switch (a->itemsize) {
      case 1: LAUNCH(1); break;
      case 2: LAUNCH(2); break;
      case 4: LAUNCH(4); break;
      default: LAUNCH(8); break;
    }
#undef LAUNCH
    st = gather_ctx_check(ctx, &g, dim, geo.size);
  }
  gather_ctx_free(&g);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(gather_kernel, gather_impl)

bp_status cu_register_index(bp_library *lib) {
  bp_status st = CU_IMPL_STRUCTURED(lib, "index_select", index_select_kernel, NULL);
  if (!st) st = CU_IMPL_STRUCTURED(lib, "gather", gather_kernel, NULL);
  return st;
}
