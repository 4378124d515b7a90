/*
 * plugins/cuda/matmul.cu - matmul: cuBLAS when it can be loaded, else a
 * tiled kernel.
 *
 * cuBLAS is loaded at run time (dlopen), on the first matmul, so that a
 * missing cuBLAS never fails the plugin's load: BP_CUBLAS_LIBRARY names
 * the library to use (an empty value forces the tiled kernel), otherwise
 * libcublas.so.13 and then libcublas.so are tried.  cu_matmul_path() says
 * which path is in use and why; BP_CUDA_MATMUL=tiled forces the tiled
 * kernel (for tests and benchmarks).
 *
 * Both operands are made contiguous; a 1-D operand is a row (first) or
 * column (second) vector.  Batch dimensions broadcast: when each operand
 * either has the whole batch or none of it, one strided-batched GEMM does
 * all of it (stride 0 for the operand without a batch); other broadcasts
 * run one GEMM per batch entry.  Row-major C = A B is computed as the
 * column-major C^T = B^T A^T, so no operand is transposed in memory.
 *
 * Each (device, stream) pair has its own cuBLAS handle, bound to that
 * stream when it is created (blas_handles.h says why a handle per device
 * whose stream is switched before each GEMM is not safe).
 *
 * float32 computes in float32 (CUBLAS_COMPUTE_32F: no TF32, whose 10-bit
 * mantissa misses the op set's float32 tolerance), unless BP_CUDA_TF32=1
 * allows TF32.  float16 and bfloat16 accumulate in float32, float64 in
 * double.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_api.h>

#include "blas_handles.h"
#include "kernels.cuh"

/* ------------------------------------------------------------------------ */
/* cuBLAS, loaded at run time                                               */
/* ------------------------------------------------------------------------ */

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*gemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void *, const void *, cudaDataType, int, long long,
                                  const void *, cudaDataType, int, long long, const void *, void *,
                                  cudaDataType, int, long long, int, cublasComputeType_t,
                                  cublasGemmAlgo_t);
typedef const char *(*status_string_fn)(cublasStatus_t);

static struct {
  pthread_once_t once;
  pthread_mutex_t lock;  /* guards `handles` */
  void *lib;
  create_fn create;
  destroy_fn destroy;
  set_stream_fn set_stream;
  gemm_fn gemm;
  status_string_fn status_string; /* cublasGetStatusString, or NULL */
  cu_blas_table handles;          /* one per (device, stream) */
  char path[320];
  bool tf32;
  bool force_tiled; /* BP_CUDA_MATMUL=tiled */
} blas = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, NULL, NULL, NULL,
          {NULL, 0, 0}, "", false, false};

static void load_cublas(void) {
  const char *env = getenv("BP_CUBLAS_LIBRARY");
  const char *tf = getenv("BP_CUDA_TF32");
  const char *mode = getenv("BP_CUDA_MATMUL");
  blas.tf32 = tf && strcmp(tf, "1") == 0;
  if (mode && strcmp(mode, "tiled") == 0) {
    blas.force_tiled = true;
    snprintf(blas.path, sizeof blas.path, "tiled kernel (BP_CUDA_MATMUL=tiled)");
    return;
  }
  const char *names[3] = {"libcublas.so.13", "libcublas.so", NULL};
  if (env) {
    names[0] = env;
    names[1] = NULL;
  }
  if (env && !*env) {
    snprintf(blas.path, sizeof blas.path, "tiled kernel (BP_CUBLAS_LIBRARY is empty)");
    return;
  }
  const char *err = "not found";
  for (int i = 0; names[i]; i++) {
    blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (blas.lib) {
      blas.create = (create_fn)dlsym(blas.lib, "cublasCreate_v2");
      blas.destroy = (destroy_fn)dlsym(blas.lib, "cublasDestroy_v2");
      blas.set_stream = (set_stream_fn)dlsym(blas.lib, "cublasSetStream_v2");
      blas.gemm = (gemm_fn)dlsym(blas.lib, "cublasGemmStridedBatchedEx");
      blas.status_string = (status_string_fn)dlsym(blas.lib, "cublasGetStatusString");
      if (blas.create && blas.destroy && blas.set_stream && blas.gemm) {
        snprintf(blas.path, sizeof blas.path, "cublas (%s)%s", names[i],
                 blas.tf32 ? ", TF32 allowed" : "");
        return;
      }
      dlclose(blas.lib);
      blas.lib = NULL;
      err = "lacks cublasGemmStridedBatchedEx";
    } else {
      const char *e = dlerror();
      err = e ? e : "not found";
    }
  }
  snprintf(blas.path, sizeof blas.path, "tiled kernel (cuBLAS: %s)", err);
}

const char *cu_matmul_path(void) { return blas.path[0] ? blas.path : "not chosen yet (no matmul ran)"; }

/* The calls of blas_handles.h.  A handle is created with its device
 * current (cu_enter made it so) and bound to its stream once. */
static int handle_create(void *ud, int32_t device, void *stream, void **out) {
  (void)ud;
  (void)device;
  cublasHandle_t h = NULL;
  cublasStatus_t cs = blas.create(&h);
  if (cs != CUBLAS_STATUS_SUCCESS) return (int)cs;
  cs = blas.set_stream(h, (cudaStream_t)stream);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    blas.destroy(h);
    return (int)cs;
  }
  *out = (void *)h;
  return 0;
}

static void handle_destroy(void *ud, int32_t device, void *handle) {
  (void)ud;
  int cur = -1;
  /* Nothing to report to (a stream's destruction or the unload): a
   * failure is not left as the thread's last CUDA error either, which the
   * next op's launch check would report as its own. */
  bool failed = cudaGetDevice(&cur) != cudaSuccess;
  if (cur != device) failed |= cudaSetDevice(device) != cudaSuccess;
  if (failed) cudaGetLastError();
  blas.destroy((cublasHandle_t)handle);
}

/* (A table with entries implies that cuBLAS was loaded, under this lock.) */
void cu_matmul_stream_destroyed(int32_t device, cudaStream_t stream) {
  pthread_mutex_lock(&blas.lock);
  if (blas.handles.n)
    cu_blas_forget(&blas.handles, device, false, (void *)stream, handle_destroy, NULL);
  pthread_mutex_unlock(&blas.lock);
}

void cu_matmul_shutdown(void) {
  pthread_mutex_lock(&blas.lock);
  if (blas.handles.n) cu_blas_forget(&blas.handles, -1, true, NULL, handle_destroy, NULL);
  pthread_mutex_unlock(&blas.lock);
  /* The library stays loaded: cuBLAS registers exit handlers and cannot
   * be unloaded safely while the process runs. */
}

/* ------------------------------------------------------------------------ */
/* The tiled kernel                                                         */
/* ------------------------------------------------------------------------ */

#define TM 64
#define TN 64
#define TK 16

/* C[M, N] = A[M, K] B[K, N], row-major, for each of `batch` matrices;
 * 256 threads, each computing a 4x4 block of a 64x64 tile (rows ty + 16i,
 * columns tx + 16j). */
template <class T>
__global__ void __launch_bounds__(256) k_gemm(const T *A, const T *B, T *C, int64_t M, int64_t N,
                                              int64_t K, int64_t sa, int64_t sb, int64_t batch) {
  typedef typename Tr<T>::C Acc;
  __shared__ Acc As[TK][TM + 1];
  __shared__ Acc Bs[TK][TN + 1];
  int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  int64_t row0 = (int64_t)blockIdx.y * TM, col0 = (int64_t)blockIdx.x * TN;
  for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
    const T *a = A + z * sa;
    const T *b = B + z * sb;
    T *c = C + z * M * N;
    Acc acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[i][j] = 0;
    for (int64_t k0 = 0; k0 < K; k0 += TK) {
      /* A tile: 64 rows x 16 columns; B tile: 16 rows x 64 columns. */
#pragma unroll
      for (int l = 0; l < 4; l++) {
        int e = tid + l * 256;
        int r = e / TK, k = e % TK;
        int64_t gr = row0 + r, gk = k0 + k;
        As[k][r] = gr < M && gk < K ? Tr<T>::ld(a[gr * K + gk]) : (Acc)0;
        int kb = e / TN, cb = e % TN;
        int64_t gkb = k0 + kb, gc = col0 + cb;
        Bs[kb][cb] = gkb < K && gc < N ? Tr<T>::ld(b[gkb * N + gc]) : (Acc)0;
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < TK; k++) {
        Acc av[4], bv[4];
#pragma unroll
        for (int i = 0; i < 4; i++) av[i] = As[k][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; j++) bv[j] = Bs[k][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
          for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int64_t r = row0 + ty + 16 * i, cc = col0 + tx + 16 * j;
        if (r < M && cc < N) c[r * N + cc] = Tr<T>::st(acc[i][j]);
      }
  }
}

/* ------------------------------------------------------------------------ */
/* One (batched) product                                                    */
/* ------------------------------------------------------------------------ */

struct Gemm {
  int32_t dt, dev;
  cudaStream_t s;
  const void *a, *b;
  void *c;
  int64_t M, N, K, sa, sb, batch; /* strides in elements between matrices */
  bool force_tiled;
};

static bp_status gemm_tiled(const Gemm &g) {
  unsigned gx = (unsigned)((g.N + TN - 1) / TN), gy = (unsigned)((g.M + TM - 1) / TM);
  if (gy > 65535)
    return CU_ERR(BP_ERR_UNSUPPORTED, "cuda: core::matmul: %lld rows are more than the tiled "
                  "kernel handles", (long long)g.M);
  dim3 grid(gx, gy, (unsigned)(g.batch < 65535 ? g.batch : 65535));
  CU_SWITCH_FLOAT(g.dt,
                  return CU_ERR(BP_ERR_UNSUPPORTED, "cuda: core::matmul: no kernel for %s",
                                bp_aux_dtype_name(g.dt)),
                  k_gemm<scalar_t><<<grid, 256, 0, g.s>>>(
                      (const scalar_t *)g.a, (const scalar_t *)g.b, (scalar_t *)g.c, g.M, g.N,
                      g.K, g.sa, g.sb, g.batch));
  return cu_launched("core::matmul (tiled kernel)");
}

static bp_status gemm_blas(const Gemm &g, bool *done) {
  *done = false;
  if (g.force_tiled || !blas.lib || g.M > INT_MAX || g.N > INT_MAX || g.K > INT_MAX ||
      g.batch > INT_MAX)
    return BP_OK;
  cudaDataType t;
  cublasComputeType_t ct;
  switch (g.dt) {
    case BP_FLOAT32:
      t = CUDA_R_32F;
      ct = blas.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case BP_FLOAT64: t = CUDA_R_64F; ct = CUBLAS_COMPUTE_64F; break;
    case BP_FLOAT16: t = CUDA_R_16F; ct = CUBLAS_COMPUTE_32F; break;
    case BP_BFLOAT16: t = CUDA_R_16BF; ct = CUBLAS_COMPUTE_32F; break;
    default: return BP_OK;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void *one = ct == CUBLAS_COMPUTE_64F ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = ct == CUBLAS_COMPUTE_64F ? (const void *)&zero_d : (const void *)&zero_f;
  /* The table is locked only to find or make the handle: it is bound to
   * g.s alone and never reconfigured, so the GEMM itself needs no lock
   * (cuBLAS may be called from several threads with one handle). */
  pthread_mutex_lock(&blas.lock);
  void *h = NULL;
  int rc = cu_blas_get(&blas.handles, g.dev, (void *)g.s, handle_create, handle_destroy, NULL, &h);
  pthread_mutex_unlock(&blas.lock);
  if (rc == CU_BLAS_NO_MEMORY)
    return CU_ERR(BP_ERR_OUT_OF_MEMORY, "cuda: core::matmul: out of host memory for a cuBLAS "
                  "handle");
  cublasStatus_t cs = (cublasStatus_t)rc;
  if (cs == CUBLAS_STATUS_SUCCESS)
    cs = blas.gemm((cublasHandle_t)h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g.N, (int)g.M, (int)g.K,
                   one, g.b, t, (int)g.N, (long long)g.sb, g.a, t, (int)g.K, (long long)g.sa,
                   zero, g.c, t, (int)g.N, (long long)(g.M * g.N), (int)g.batch, ct,
                   CUBLAS_GEMM_DEFAULT);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    const char *text = blas.status_string ? blas.status_string(cs) : NULL;
    return CU_ERR(cs == CUBLAS_STATUS_ALLOC_FAILED ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND,
                  "cuda: core::matmul: cuBLAS failed: %s (status %d; M=%lld N=%lld K=%lld "
                  "batch=%lld, %s)", text ? text : "no description", (int)cs, (long long)g.M,
                  (long long)g.N, (long long)g.K, (long long)g.batch, bp_aux_dtype_name(g.dt));
  }
  *done = true;
  return BP_OK;
}

static bp_status gemm_run(const Gemm &g) {
  if (g.M == 0 || g.N == 0 || g.batch == 0) return BP_OK;
  if (g.K == 0)
    return cu_check(cudaMemsetAsync(g.c, 0, (size_t)(g.batch * g.M * g.N) *
                                                (size_t)(BP_DTYPE_BITS(g.dt) / 8), g.s),
                    "core::matmul: cudaMemsetAsync");
  bool done;
  bp_status st = gemm_blas(g, &done);
  if (st || done) return st;
  return gemm_tiled(g);
}

/* ------------------------------------------------------------------------ */
/* The kernel                                                               */
/* ------------------------------------------------------------------------ */

static bp_status matmul_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  pthread_once(&blas.once, load_cublas);
  const bp_tensor_view *o = cu_view(out);
  const bp_tensor_view *va0 = cu_view(args[0].u.tensor), *vb0 = cu_view(args[1].u.tensor);
  bp_tensor *at = NULL, *bt = NULL;
  Gemm g;
  memset(&g, 0, sizeof g);
  g.dt = o->dtype;
  g.dev = o->device.index;
  g.force_tiled = blas.force_tiled;
  st = cu_enter(g.dev, &g.s);
  if (!st) st = cu_cast_to(args[0].u.tensor, va0->dtype, ctx->op_name, &at);
  if (!st) st = cu_cast_to(args[1].u.tensor, vb0->dtype, ctx->op_name, &bt);
  if (!st && o->numel > 0) {
    const bp_tensor_view *va = cu_view(at), *vb = cu_view(bt);
    int32_t an = va->ndim, bn = vb->ndim;
    g.M = an == 1 ? 1 : va->sizes[an - 2];
    g.K = va->sizes[an - 1];
    g.N = bn == 1 ? 1 : vb->sizes[bn - 1];
    /* Batch shapes, aligned at the right. */
    int32_t abd = an > 2 ? an - 2 : 0, bbd = bn > 2 ? bn - 2 : 0;
    int32_t nb = abd > bbd ? abd : bbd;
    int64_t bsz[BP_MAX_NDIM], asz[BP_MAX_NDIM], bbsz[BP_MAX_NDIM];
    int64_t abatch = 1, bbatch = 1, batch = 1;
    for (int32_t d = 0; d < nb; d++) {
      int32_t da = d - (nb - abd), db = d - (nb - bbd);
      asz[d] = da >= 0 ? va->sizes[da] : 1;
      bbsz[d] = db >= 0 ? vb->sizes[db] : 1;
      bsz[d] = asz[d] > bbsz[d] ? asz[d] : bbsz[d];
      abatch *= asz[d];
      bbatch *= bbsz[d];
      batch *= bsz[d];
    }
    int64_t mk = g.M * g.K, kn = g.K * g.N, mn = g.M * g.N;
    size_t isz = BP_DTYPE_BITS(g.dt) / 8;
    bool a_full = abatch == batch, b_full = bbatch == batch;
    bool a_none = abatch == 1, b_none = bbatch == 1;
    /* A full batch must also be laid out as the output's (no size-1
     * dimension broadcast against another): equal products with sizes
     * >= the other's imply equal sizes. */
    g.a = va->data;
    g.b = vb->data;
    g.c = o->data;
    if ((a_full || a_none) && (b_full || b_none)) {
      g.sa = a_full && batch > 1 ? mk : 0;
      g.sb = b_full && batch > 1 ? kn : 0;
      g.batch = batch;
      st = gemm_run(g);
    } else {
      /* One product per batch entry. */
      for (int64_t z = 0; !st && z < batch; z++) {
        int64_t rem = z, ia = 0, ib = 0, ma = 1, mb = 1;
        for (int32_t d = nb - 1; d >= 0; d--) {
          int64_t c = rem % bsz[d];
          rem /= bsz[d];
          ia += (asz[d] == 1 ? 0 : c) * ma;
          ib += (bbsz[d] == 1 ? 0 : c) * mb;
          ma *= asz[d];
          mb *= bbsz[d];
        }
        Gemm one = g;
        one.a = (const char *)va->data + (size_t)(ia * mk) * isz;
        one.b = (const char *)vb->data + (size_t)(ib * kn) * isz;
        one.c = (char *)o->data + (size_t)(z * mn) * isz;
        one.batch = 1;
        st = gemm_run(one);
      }
    }
  }
  cu_host->tensor_release(at);
  cu_host->tensor_release(bt);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(matmul_kernel, matmul_impl)

bp_status cu_register_matmul(bp_library *lib) { return CU_IMPL_STRUCTURED(lib, "matmul", matmul_kernel, NULL); }
