/*
 * plugins/cuda/nn.cu - softmax, log_softmax and layer_norm.
 *
 * The input is made contiguous first (a copy only when it is not).  A
 * softmax over the innermost dimension gives each row to a block, which
 * finds the maximum and the sum of exponentials with block reductions; a
 * softmax over another dimension gives each (outer, inner) column to a
 * thread, so that neighbouring threads read neighbouring elements.
 * layer_norm gives each row to a block: a block reduction for the mean,
 * another for the biased variance (both accumulated in double), then the
 * normalised row, computed in the compute type as the CPU plugin does
 * (see ln_stats).  With BP_CUDA_NN=registers, rows of up to 8192 elements
 * stay in registers between the passes (CU_NN_PER elements a thread).
 * float16 and bfloat16 compute in float32, float64 in double.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels.cuh"

template <class C> struct MaxF {
  __device__ __forceinline__ C operator()(C a, C b) const { return (a > b || a != a) ? a : b; }
};
template <class C> struct AddF {
  __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};

__device__ __forceinline__ float n_exp(float a) { return expf(a); }
__device__ __forceinline__ double n_exp(double a) { return exp(a); }
__device__ __forceinline__ float n_log(float a) { return logf(a); }
__device__ __forceinline__ double n_log(double a) { return log(a); }
__device__ __forceinline__ float n_sqrt(float a) { return sqrtf(a); }
__device__ __forceinline__ double n_sqrt(double a) { return sqrt(a); }

/* Rows of up to CU_NN_PER * 1024 elements are held in registers, CU_NN_PER
 * a thread, by a block of a multiple of 32 threads (at most 1024, so that
 * registers stay few and many blocks fit on an SM). */
#define CU_NN_PER 8

static int cu_nn_threads(int64_t n) {
  int64_t t = (n + CU_NN_PER - 1) / CU_NN_PER;
  t = (t + 31) / 32 * 32;
  return (int)(t < 32 ? 32 : t > 1024 ? 1024 : t);
}

/* Rows are read in several passes (the row stays in L1 and L2 between
 * them) unless BP_CUDA_NN=registers holds them in registers.  On an H100
 * the passes were as fast or faster (bench/README.md): the register
 * kernels need so many registers that fewer blocks fit on an SM. */
static bool cu_nn_registers(void) {
  static int mode = -1;
  if (mode < 0) {
    const char *e = getenv("BP_CUDA_NN");
    mode = e && strcmp(e, "registers") == 0;
  }
  return mode == 1;
}

template <class T, bool LOG>
__global__ void k_softmax_rows(const T *in, T *out, int64_t rows, int64_t n) {
  typedef typename Tr<T>::C C;
  __shared__ C sh[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * n;
    T *y = out + row * n;
    C m = (C)-INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = MaxF<C>()(m, Tr<T>::ld(x[i]));
    m = block_reduce(m, MaxF<C>(), sh);
    C sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += n_exp(Tr<T>::ld(x[i]) - m);
    sum = block_reduce(sum, AddF<C>(), sh);
    if (LOG) {
      C ls = n_log(sum);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        y[i] = Tr<T>::st(Tr<T>::ld(x[i]) - m - ls);
    } else {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        y[i] = Tr<T>::st(n_exp(Tr<T>::ld(x[i]) - m) / sum);
    }
    __syncthreads();
  }
}

/* The same with the row held in registers (PER elements a thread), so
 * that it is read from memory once: rows up to PER * blockDim.x. */
template <class T, bool LOG, int PER>
__global__ void __launch_bounds__(1024) k_softmax_rows_reg(const T *in, T *out, int64_t rows,
                                                           int64_t n) {
  typedef typename Tr<T>::C C;
  __shared__ C sh[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * n;
    T *y = out + row * n;
    C v[PER];
    C m = (C)-INFINITY;
#pragma unroll
    for (int k = 0; k < PER; k++) {
      int i = threadIdx.x + k * blockDim.x;
      v[k] = i < n ? Tr<T>::ld(x[i]) : (C)-INFINITY;
      m = MaxF<C>()(m, v[k]);
    }
    m = block_reduce(m, MaxF<C>(), sh);
    C sum = 0;
#pragma unroll
    for (int k = 0; k < PER; k++) {
      int i = threadIdx.x + k * blockDim.x;
      if (i < n) {
        C e = n_exp(v[k] - m);
        sum += e;
        if (!LOG) v[k] = e;
      }
    }
    sum = block_reduce(sum, AddF<C>(), sh);
    C ls = LOG ? n_log(sum) : (C)0;
#pragma unroll
    for (int k = 0; k < PER; k++) {
      int i = threadIdx.x + k * blockDim.x;
      if (i < n) y[i] = Tr<T>::st(LOG ? v[k] - m - ls : v[k] / sum);
    }
  }
}

template <class T, bool LOG>
__global__ void k_softmax_cols(const T *in, T *out, int64_t outer, int64_t n, int64_t inner) {
  typedef typename Tr<T>::C C;
  CU_GRID_LOOP(c, outer * inner) {
    int64_t o = c / inner, j = c % inner;
    const T *x = in + o * n * inner + j;
    T *y = out + o * n * inner + j;
    C m = (C)-INFINITY;
    for (int64_t i = 0; i < n; i++) m = MaxF<C>()(m, Tr<T>::ld(x[i * inner]));
    C sum = 0;
    for (int64_t i = 0; i < n; i++) sum += n_exp(Tr<T>::ld(x[i * inner]) - m);
    if (LOG) {
      C ls = n_log(sum);
      for (int64_t i = 0; i < n; i++) y[i * inner] = Tr<T>::st(Tr<T>::ld(x[i * inner]) - m - ls);
    } else {
      for (int64_t i = 0; i < n; i++)
        y[i * inner] = Tr<T>::st(n_exp(Tr<T>::ld(x[i * inner]) - m) / sum);
    }
  }
}

template <class T>
static void softmax_launch(bool log, const T *in, T *out, int64_t outer, int64_t n, int64_t inner,
                           int32_t dev, cudaStream_t s) {
  if (inner == 1) {
    int64_t rows = outer;
    unsigned blocks = (unsigned)(rows < 65535 * 16 ? rows : 65535 * 16);
    if (n <= CU_NN_PER * 1024 && cu_nn_registers()) {
      int threads = cu_nn_threads(n);
      if (log)
        k_softmax_rows_reg<T, true, CU_NN_PER><<<blocks, threads, 0, s>>>(in, out, rows, n);
      else
        k_softmax_rows_reg<T, false, CU_NN_PER><<<blocks, threads, 0, s>>>(in, out, rows, n);
      return;
    }
    int threads = n >= 1024 ? 256 : n >= 128 ? 128 : 32;
    if (log)
      k_softmax_rows<T, true><<<blocks, threads, 0, s>>>(in, out, rows, n);
    else
      k_softmax_rows<T, false><<<blocks, threads, 0, s>>>(in, out, rows, n);
  } else {
    unsigned blocks = cu_blocks(dev, outer * inner, CU_THREADS);
    if (log)
      k_softmax_cols<T, true><<<blocks, CU_THREADS, 0, s>>>(in, out, outer, n, inner);
    else
      k_softmax_cols<T, false><<<blocks, CU_THREADS, 0, s>>>(in, out, outer, n, inner);
  }
}

static bp_status softmax_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bool log = (intptr_t)ctx->user_data != 0;
  bp_status st = BP_OK;
  const bp_tensor_view *a0 = cu_view(args[0].u.tensor), *o = cu_view(out);
  bp_tensor *ct = NULL;
  cudaStream_t s;
  st = cu_enter(a0->device.index, &s);
  if (!st && a0->numel > 0) st = cu_cast_to(args[0].u.tensor, a0->dtype, ctx->op_name, &ct);
  if (!st && a0->numel > 0) {
    const bp_tensor_view *a = cu_view(ct);
    int64_t d_arg = args[1].u.i;
    int32_t dim = a->ndim == 0 ? 0 : (int32_t)(d_arg < 0 ? d_arg + a->ndim : d_arg);
    int64_t outer = 1, n = 1, inner = 1;
    for (int32_t d = 0; d < a->ndim; d++) {
      if (d < dim) outer *= a->sizes[d];
      else if (d == dim) n = a->sizes[d];
      else inner *= a->sizes[d];
    }
    CU_SWITCH_FLOAT(a->dtype, st = CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s",
                                          ctx->op_name, bp_aux_dtype_name(a->dtype)),
                    softmax_launch<scalar_t>(log, (const scalar_t *)a->data,
                                             (scalar_t *)o->data, outer, n, inner,
                                             a->device.index, s));
    if (!st) st = cu_launched(ctx->op_name);
  }
  cu_host->tensor_release(ct);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(softmax_kernel, softmax_impl)

/* ------------------------------------------------------------------------ */
/* layer_norm                                                               */
/* ------------------------------------------------------------------------ */

/*
 * A row's statistics, in the row's compute type C (float for float32,
 * float16 and bfloat16, double for float64), as the CPU plugin's
 * norm_rows has them: the mean as hi + lo (hi the mean rounded to C, lo
 * the rest, 0 for double), and rstd = 1 / sqrt(var + eps) rounded to C.
 *
 * The mean and the variance are still accumulated in double: an
 * addition an element for the mean, a subtraction and a multiply-add for
 * the variance.  What this replaced was a double division an element (a
 * sequence of several FP64 instructions, on GPUs most of which run FP64 at
 * 1/64 of the FP32 rate); the one division left is per row (rstd).  The
 * accumulation stays in double for correctness: a row of equal values sums
 * exactly, so its mean is that value, its variance exactly 0 and every
 * output the bias (as on the CPU), and summing thousands of elements of a
 * row far from 0 (1e4 plus small noise) in float would lose digits of the
 * mean that the deviations (x - mean) need.
 */
template <class C> struct LnStats {
  C hi, lo, rstd;
};

template <class C> __device__ __forceinline__ LnStats<C> ln_stats(double mean, double var,
                                                                  double eps) {
  LnStats<C> st;
  st.hi = (C)mean;
  st.lo = (C)(mean - (double)st.hi);
  st.rstd = (C)(1.0 / sqrt(var + eps));
  return st;
}

/* y = ((x - hi) - lo) * rstd * w + b, in C, w and b each optional: the
 * CPU plugin's normalisation, operation for operation.  For x near the
 * mean, x - hi is exact. */
template <class T>
__device__ __forceinline__ typename Tr<T>::C ln_out(T x, const LnStats<typename Tr<T>::C> &st,
                                                    const T *w, const T *b, int64_t i) {
  typedef typename Tr<T>::C C;
  C v = ((Tr<T>::ld(x) - st.hi) - st.lo) * st.rstd;
  if (w) v = v * Tr<T>::ld(w[i]);
  if (b) v = v + Tr<T>::ld(b[i]);
  return v;
}

/* A block per row; PER > 0 holds the row in registers (rows up to PER *
 * blockDim.x), PER == 0 reads it three times. */
template <class T, int PER>
__global__ void __launch_bounds__(1024) k_layer_norm(const T *in, T *out, const T *w, const T *b,
                                                     int64_t rows, int64_t n, double eps) {
  typedef typename Tr<T>::C C;
  __shared__ double sh[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * n;
    T *y = out + row * n;
    double sum = 0, sq = 0, mean, var;
    if (PER > 0) {
      T v[PER > 0 ? PER : 1];
#pragma unroll
      for (int k = 0; k < PER; k++) {
        int i = threadIdx.x + k * blockDim.x;
        if (i < n) {
          v[k] = x[i];
          sum += (double)Tr<T>::ld(v[k]);
        }
      }
      mean = block_reduce(sum, AddF<double>(), sh) / (double)n;
#pragma unroll
      for (int k = 0; k < PER; k++) {
        int i = threadIdx.x + k * blockDim.x;
        if (i < n) {
          double d = (double)Tr<T>::ld(v[k]) - mean;
          sq += d * d;
        }
      }
      var = block_reduce(sq, AddF<double>(), sh) / (double)n;
      const LnStats<C> st = ln_stats<C>(mean, var, eps);
#pragma unroll
      for (int k = 0; k < PER; k++) {
        int i = threadIdx.x + k * blockDim.x;
        if (i < n) y[i] = Tr<T>::st(ln_out(v[k], st, w, b, i));
      }
    } else {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += (double)Tr<T>::ld(x[i]);
      mean = block_reduce(sum, AddF<double>(), sh) / (double)n;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        double d = (double)Tr<T>::ld(x[i]) - mean;
        sq += d * d;
      }
      var = block_reduce(sq, AddF<double>(), sh) / (double)n;
      const LnStats<C> st = ln_stats<C>(mean, var, eps);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        y[i] = Tr<T>::st(ln_out(x[i], st, w, b, i));
    }
    __syncthreads();
  }
}

template <class T>
static void layer_norm_launch(const T *x, T *y, const T *w, const T *b, int64_t rows, int64_t n,
                              double eps, cudaStream_t s) {
  unsigned blocks = (unsigned)(rows < 65535 * 16 ? rows : 65535 * 16);
  if (n <= CU_NN_PER * 1024 && cu_nn_registers()) {
    k_layer_norm<T, CU_NN_PER><<<blocks, cu_nn_threads(n), 0, s>>>(x, y, w, b, rows, n, eps);
    return;
  }
  int threads = n >= 1024 ? 256 : n >= 128 ? 128 : 32;
  k_layer_norm<T, 0><<<blocks, threads, 0, s>>>(x, y, w, b, rows, n, eps);
}

static bp_status layer_norm_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *a0 = cu_view(args[0].u.tensor), *o = cu_view(out);
  bp_tensor *ct = NULL, *wt = NULL, *bt = NULL;
  cudaStream_t s;
  st = cu_enter(a0->device.index, &s);
  if (!st && a0->numel > 0) {
    st = cu_cast_to(args[0].u.tensor, a0->dtype, ctx->op_name, &ct);
    if (!st && args[2].tag == BP_TAG_TENSOR)
      st = cu_cast_to(args[2].u.tensor, a0->dtype, ctx->op_name, &wt);
    if (!st && args[3].tag == BP_TAG_TENSOR)
      st = cu_cast_to(args[3].u.tensor, a0->dtype, ctx->op_name, &bt);
  }
  if (!st && a0->numel > 0) {
    int64_t n = 1;
    for (uint32_t i = 0; i < args[1].len; i++) n *= args[1].u.ints[i];
    int64_t rows = a0->numel / n;
    const void *w = wt ? cu_view(wt)->data : NULL, *b = bt ? cu_view(bt)->data : NULL;
    const void *x = cu_view(ct)->data;
    double eps = args[4].u.f;
    CU_SWITCH_FLOAT(a0->dtype, st = CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s",
                                           ctx->op_name, bp_aux_dtype_name(a0->dtype)),
                    layer_norm_launch<scalar_t>((const scalar_t *)x, (scalar_t *)o->data,
                                                (const scalar_t *)w, (const scalar_t *)b, rows,
                                                n, eps, s));
    if (!st) st = cu_launched(ctx->op_name);
  }
  cu_host->tensor_release(ct);
  cu_host->tensor_release(wt);
  cu_host->tensor_release(bt);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(layer_norm_kernel, layer_norm_impl)

bp_status cu_register_nn(bp_library *lib) {
  bp_status st = CU_IMPL_STRUCTURED(lib, "softmax", softmax_kernel, (void *)0);
  if (!st) st = CU_IMPL_STRUCTURED(lib, "log_softmax", softmax_kernel, (void *)1);
  if (!st) st = CU_IMPL_STRUCTURED(lib, "layer_norm", layer_norm_kernel, NULL);
  return st;
}
