/*
 * plugins/cuda/reduce.cu - sum, mean, amax, amin, argmax.
 *
 * A reduction is planned on the host: the input's dimensions split into
 * kept dimensions (one per output element, in the output's order) and
 * reduced ones, size-1 dimensions dropped and neighbours that step
 * through memory as one merged (order kept, so argmax's positions stay
 * row-major).  Two kernels follow:
 *
 *   rows     a block reduces one output, or a slice of one output's
 *            reduced range when there are too few outputs to fill the GPU
 *            (a second small kernel then combines the slices in order).
 *            Each thread keeps four accumulators over coalesced loads,
 *            then the block combines them in a shared-memory tree.
 *   columns  when the innermost kept dimension is contiguous (sum(dim=0)
 *            of a matrix), a thread reduces one output and neighbouring
 *            threads read neighbouring elements.
 *
 * BP_CUDA_REDUCE tunes the geometry for benchmarks (read once; see
 * parse_tuning): "slice=N" sets the elements per slice of a split row
 * reduction, "cols=N" how many reduced positions a column thread loads
 * before it adds them (in the same order, so results do not change), and
 * "finish=pdl" launches the kernel that combines the slices with
 * programmatic dependent launch (sm_90 and later), so that its launch
 * overlaps the last blocks of the first kernel instead of following it.
 *
 * The functors (what each reduction accumulates, steps and combines) are
 * in reduce_ops.cuh.  Accumulators: float32, float16 and bfloat16 in
 * float32, float64 in double, integers and bool in 64-bit unsigned
 * arithmetic that wraps.  sum(dtype=...) first converts the input to that
 * dtype (cu_cast_to), as the op set converts mixed inputs to the result
 * dtype.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "reduce_ops.cuh"
#include "reduce_plan.h"

enum { OP_SUM = 1, OP_MEAN, OP_AMAX, OP_AMIN, OP_ARGMAX };

__device__ __forceinline__ int64_t kept_offset(const RPlan &p, int64_t o) {
  int64_t off = 0;
  for (int d = p.nk - 1; d >= 0; d--) {
    off += (o % p.ksize[d]) * p.kstride[d];
    o /= p.ksize[d];
  }
  return off;
}

__device__ __forceinline__ int64_t red_offset(const RPlan &p, int64_t r) {
  if (p.nr == 1) return r * p.rstride[0];
  int64_t off = 0;
  for (int d = p.nr - 1; d >= 0; d--) {
    off += (r % p.rsize[d]) * p.rstride[d];
    r /= p.rsize[d];
  }
  return off;
}

/* Programmatic dependent launch (PTX griddepcontrol, compiled for
 * compute_90 and later only, so nothing in an image built for an older
 * architecture: the launcher uses PDL only where the image holds them,
 * see pdl_usable; nothing either when the next kernel was launched
 * without the attribute).  pdl_trigger: this block no longer holds the
 * next kernel back (it still runs; nothing it writes is promised to that
 * kernel).  pdl_wait: returns once the kernel before this one on the
 * stream has finished and its writes are visible. */
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Rows: block (o, s) reduces slice s of output o.  With one slice it
 * stores; otherwise it writes its partial. */
template <class T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <class Op, class T>
__global__ void k_rows(Op op, const T *in, typename OutOf<Op, T>::type *out,
                       typename Op::A *partial, RPlan p) {
  typedef typename Op::A A;
  extern __shared__ unsigned char smem_raw[];
  A *sh = reinterpret_cast<A *>(smem_raw);
  int64_t o = p.obase + blockIdx.x;
  int s = blockIdx.y;
  const T *base = in + kept_offset(p, o);
  int64_t lo = (int64_t)s * p.chunk, hi = lo + p.chunk < p.nred ? lo + p.chunk : p.nred;
  A a0 = op.init(), a1 = op.init(), a2 = op.init(), a3 = op.init();
  int64_t B = blockDim.x;
  if (p.nr == 1 && p.rstride[0] == 1) {
    /* Contiguous: 16-byte vector loads when the slice is aligned (the
     * launcher makes slices multiples of 4096 elements). */
    const int N = 16 / sizeof(T) < 1 ? 1 : 16 / sizeof(T);
    int64_t r = lo;
    if (N > 1 && ((uintptr_t)(base + lo) & 15) == 0) {
      int64_t nv = (hi - lo) / N;
      const Vec<T, N> *v = reinterpret_cast<const Vec<T, N> *>(base + lo);
      int64_t j = threadIdx.x;
      for (; j + B < nv; j += 2 * B) {
        Vec<T, N> x = v[j], y = v[j + B];
#pragma unroll
        for (int k = 0; k < N; k += 2) {
          a0 = op.step(a0, x.v[k], lo + j * N + k);
          a1 = op.step(a1, x.v[k + 1], lo + j * N + k + 1);
          a2 = op.step(a2, y.v[k], lo + (j + B) * N + k);
          a3 = op.step(a3, y.v[k + 1], lo + (j + B) * N + k + 1);
        }
      }
      for (; j < nv; j += B) {
        Vec<T, N> x = v[j];
#pragma unroll
        for (int k = 0; k < N; k++) a0 = op.step(a0, x.v[k], lo + j * N + k);
      }
      r = lo + nv * N;
    }
    for (r += threadIdx.x; r < hi; r += B) a0 = op.step(a0, base[r], r);
  } else {
    for (int64_t r = lo + threadIdx.x; r < hi; r += B)
      a0 = op.step(a0, base[red_offset(p, r)], r);
  }
  /* The loads are done: a k_finish launched with PDL may start.  (Only
   * when one follows: a kernel of somebody else's launched with PDL after
   * this one must still find the outputs written.) */
  if (p.splits > 1) pdl_trigger();
  /* Combined in an order that keeps argmax's ties on the lower index
   * (comb breaks ties by index, so any order is right). */
  A acc = op.comb(op.comb(a0, a1), op.comb(a2, a3));
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) sh[threadIdx.x] = op.comb(sh[threadIdx.x], sh[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (p.splits == 1)
      out[o] = op.store(sh[0], p.nred);
    else
      partial[o * p.splits + s] = sh[0];
  }
}

/* Combines the slices' partial results: a block per output. */
template <class Op, class T>
__global__ void k_finish(Op op, typename OutOf<Op, T>::type *out, const typename Op::A *partial,
                         RPlan p) {
  typedef typename Op::A A;
  extern __shared__ unsigned char smem_raw[];
  A *sh = reinterpret_cast<A *>(smem_raw);
  int64_t o = blockIdx.x;
  pdl_wait(); /* the partials are written (when launched with PDL) */
  A a = op.init();
  for (int s = threadIdx.x; s < p.splits; s += blockDim.x) a = op.comb(a, partial[o * p.splits + s]);
  sh[threadIdx.x] = a;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) sh[threadIdx.x] = op.comb(sh[threadIdx.x], sh[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[o] = op.store(sh[0], p.nred);
}

/* Columns: a thread per output and slice (blockIdx.y), reduced positions
 * in order; with several slices each writes its partial.  U positions are
 * loaded before they are stepped through (in order), so that U loads are
 * in flight per thread. */
template <class Op, class T, int U>
__global__ void k_cols(Op op, const T *in, typename OutOf<Op, T>::type *out,
                       typename Op::A *partial, RPlan p) {
  int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= p.nout) return;
  int s = blockIdx.y;
  const T *base = in + kept_offset(p, o);
  int64_t lo = (int64_t)s * p.chunk, hi = lo + p.chunk < p.nred ? lo + p.chunk : p.nred;
  typename Op::A a = op.init();
  int64_t r = lo;
  if constexpr (U > 1) {
    if (p.nr == 1) {
      const int64_t st = p.rstride[0];
      const T *q = base + r * st;
      for (; r + U <= hi; r += U, q += U * st) {
        T x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u] = q[u * st];
#pragma unroll
        for (int u = 0; u < U; u++) a = op.step(a, x[u], r + u);
      }
    }
  }
  for (; r < hi; r++) a = op.step(a, base[red_offset(p, r)], r);
  if (p.splits > 1) pdl_trigger(); /* as in k_rows */
  if (p.splits == 1)
    out[o] = op.store(a, p.nred);
  else
    partial[o * p.splits + s] = a;
}

/* The BP_CUDA_REDUCE settings, parsed once: a comma-separated list of
 * "slice=N" (N a positive multiple of 4096: the elements per slice when
 * a row reduction is split across blocks; default: about 8 blocks per SM),
 * "cols=N" (1, 4 or 8: positions a column thread loads at once; default
 * 1) and "finish=kernel|pdl" (how the slices' partials are combined: a
 * second kernel launched after the first, the default, or launched with
 * programmatic dependent launch on sm_90 and later).  A malformed value
 * fails every reduction with a message that names it, rather than
 * silently measuring something else. */
static struct {
  pthread_once_t once;
  int64_t slice; /* 0: the default policy */
  int cols;
  bool pdl;
  char err[200];
} tuning = {PTHREAD_ONCE_INIT, 0, 1, false, ""};

static void parse_tuning(void) {
  const char *env = getenv("BP_CUDA_REDUCE");
  if (!env || !*env) return;
  char buf[128];
  if (strlen(env) >= sizeof buf) {
    snprintf(tuning.err, sizeof tuning.err, "BP_CUDA_REDUCE is longer than %zu characters",
             sizeof buf - 1);
    return;
  }
  strcpy(buf, env);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '='), *end = NULL;
    if (eq) *eq = '\0'; /* item is the key, eq + 1 the value */
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    bool num = eq && end != eq + 1 && *end == '\0';
    if (eq && strcmp(item, "slice") == 0) {
      if (!num || v <= 0 || v % 4096 != 0) {
        snprintf(tuning.err, sizeof tuning.err,
                 "BP_CUDA_REDUCE: slice: expected a positive multiple of 4096, got '%s'", eq + 1);
        return;
      }
      tuning.slice = v;
    } else if (eq && strcmp(item, "cols") == 0) {
      if (!num || (v != 1 && v != 4 && v != 8)) {
        snprintf(tuning.err, sizeof tuning.err,
                 "BP_CUDA_REDUCE: cols: expected 1, 4 or 8, got '%s'", eq + 1);
        return;
      }
      tuning.cols = (int)v;
    } else if (eq && strcmp(item, "finish") == 0) {
      if (strcmp(eq + 1, "kernel") != 0 && strcmp(eq + 1, "pdl") != 0) {
        snprintf(tuning.err, sizeof tuning.err,
                 "BP_CUDA_REDUCE: finish: expected kernel or pdl, got '%s'", eq + 1);
        return;
      }
      tuning.pdl = strcmp(eq + 1, "pdl") == 0;
    } else {
      snprintf(tuning.err, sizeof tuning.err,
               "BP_CUDA_REDUCE: expected slice=N, cols=N or finish=kernel|pdl, got '%s%s%s'",
               item, eq ? "=" : "", eq ? eq + 1 : "");
      return;
    }
  }
}

/* Whether k_finish, as device `dev` runs it, may be launched with
 * programmatic dependent launch: cu_reduce_pdl (reduce_plan.h) of the
 * device and of the PTX architecture of the image it runs.  Asked once
 * per device (with `dev` current): every kernel of this file comes from
 * the same list of architectures.  0: not asked yet, 1: yes, 2: no. */
static int pdl_image[CU_MAX_DEVICES];

template <class Op, class T>
static bp_status pdl_usable(const char *name, int32_t dev, bool *out) {
  *out = false;
  if (cu_devices[dev].cc_major < 9) return BP_OK;
  int v = __atomic_load_n(&pdl_image[dev], __ATOMIC_RELAXED);
  if (v == 0) {
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, k_finish<Op, T>);
    if (e != cudaSuccess) {
      char what[160];
      snprintf(what, sizeof what, "%s: cudaFuncGetAttributes (programmatic dependent launch)",
               name);
      return cu_check(e, what);
    }
    v = cu_reduce_pdl(cu_devices[dev].cc_major, fa.ptxVersion) ? 1 : 2;
    __atomic_store_n(&pdl_image[dev], v, __ATOMIC_RELAXED);
    /* A benchmark of finish=pdl should know when it measured no PDL. */
    const char *verbose = getenv("BP_CUDA_VERBOSE");
    if (verbose && *verbose && strcmp(verbose, "0") != 0)
      fprintf(stderr,
              "cuda: %s: finish=pdl: cuda:%d (compute capability %d.x) runs kernels built for "
              "compute_%d: %s\n",
              name, (int)dev, cu_devices[dev].cc_major, fa.ptxVersion,
              v == 1 ? "programmatic dependent launch" : "a normal launch (no griddepcontrol)");
  }
  *out = v == 1;
  return BP_OK;
}

/* Launches the reduction's kernels; `name` is the op's, for messages.
 * Launch errors of the <<<>>> launches are left for the caller's
 * cu_launched; cudaLaunchKernelEx returns its own, reported here. */
template <class Op, class T>
static bp_status launch(const char *name, Op op, const T *in, void *out, RPlan &p, int32_t dev,
                        cudaStream_t s, bp_device device) {
  typedef typename OutOf<Op, T>::type O;
  typedef typename Op::A A;
  int64_t sms = cu_devices[dev].sm_count > 0 ? cu_devices[dev].sm_count : 1;
  bool columns = cu_reduce_split(&p, sms, tuning.slice);
  int64_t splits = p.splits;
  bp_tensor *ws = NULL;
  A *partial = NULL;
  if (splits > 1) {
    int64_t bytes = p.nout * splits * (int64_t)sizeof(A);
    bp_status st = cu_host->tensor_empty(device, BP_UINT8, 1, &bytes, &ws);
    if (st) return st;
    partial = (A *)cu_view(ws)->data;
  }
  if (columns) {
    dim3 grid((unsigned)((p.nout + CU_THREADS - 1) / CU_THREADS), (unsigned)splits);
    if (tuning.cols == 8)
      k_cols<Op, T, 8><<<grid, CU_THREADS, 0, s>>>(op, in, (O *)out, partial, p);
    else if (tuning.cols == 4)
      k_cols<Op, T, 4><<<grid, CU_THREADS, 0, s>>>(op, in, (O *)out, partial, p);
    else
      k_cols<Op, T, 1><<<grid, CU_THREADS, 0, s>>>(op, in, (O *)out, partial, p);
  } else {
    /* A block per output: more outputs than gridDim.x allows take
     * several launches (only with one slice each: see cu_reduce_split). */
    int threads = p.nred >= 4096 ? 256 : p.nred >= 512 ? 128 : 32;
    for (int64_t base = 0, n; base < p.nout; base += n) {
      n = cu_rows_launch(&p, base);
      p.obase = base;
      dim3 grid((unsigned)n, (unsigned)splits);
      k_rows<Op, T><<<grid, threads, threads * sizeof(A), s>>>(op, in, (O *)out, partial, p);
    }
    p.obase = 0;
  }
  if (splits > 1) {
    int ft = splits >= 256 ? 256 : splits >= 64 ? 64 : 32;
    bool pdl = false;
    if (tuning.pdl) {
      bp_status st = pdl_usable<Op, T>(name, dev, &pdl);
      if (st) {
        cu_host->tensor_release(ws);
        return st;
      }
    }
    if (pdl) {
      cudaLaunchAttribute attr[1] = {};
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3((unsigned)p.nout);
      cfg.blockDim = dim3((unsigned)ft);
      cfg.dynamicSmemBytes = ft * sizeof(A);
      cfg.stream = s;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cudaError_t e =
          cudaLaunchKernelEx(&cfg, k_finish<Op, T>, op, (O *)out, (const A *)partial, p);
      if (e != cudaSuccess) {
        cu_host->tensor_release(ws);
        /* cu_check also clears e as the thread's last error. */
        char what[160];
        snprintf(what, sizeof what, "%s: cudaLaunchKernelEx (programmatic dependent launch)",
                 name);
        return cu_check(e, what);
      }
    } else {
      k_finish<Op, T><<<(unsigned)p.nout, ft, ft * sizeof(A), s>>>(op, (O *)out, partial, p);
    }
  }
  /* Freed blocks are reused on this stream only, after these kernels. */
  cu_host->tensor_release(ws);
  return BP_OK;
}

/* The kept or reduced dimensions of size > 1, merged (the kit's). */
static int collect(const bp_tensor_view *v, const bool *reduced, bool want, int64_t *sizes,
                   int64_t *strides) {
  return bp_aux_coalesce_dims(bp_aux_dims_where(v, reduced, want, sizes, strides), sizes, strides);
}

template <class T>
static bp_status run_op(const char *name, int op, const bp_tensor_view *a, void *out, RPlan &p,
                        int32_t dev, cudaStream_t s) {
  const T *in = (const T *)a->data;
  switch (op) {
    case OP_SUM: return launch(name, SumOp<T>(), in, out, p, dev, s, a->device);
    case OP_MEAN:
      if constexpr (Tr<T>::is_float)
        return launch(name, MeanOp<T>(), in, out, p, dev, s, a->device);
      break;
    case OP_AMAX: return launch(name, ExtOp<T, true>(), in, out, p, dev, s, a->device);
    case OP_AMIN: return launch(name, ExtOp<T, false>(), in, out, p, dev, s, a->device);
    case OP_ARGMAX:
      if constexpr (!std::is_same<T, b8>::value)
        return launch(name, ArgOp<T>(), in, out, p, dev, s, a->device);
      break;
  }
  return CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s", name,
                bp_aux_dtype_name(a->dtype));
}

static bp_status reduce_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)nrets;
  int op = (int)(intptr_t)ctx->user_data;
  pthread_once(&tuning.once, parse_tuning);
  if (tuning.err[0])
    return CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: %s: %s", ctx->op_name, tuning.err);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *o = cu_view(out);
  const bp_tensor_view *a0 = cu_view(args[0].u.tensor);
  int32_t conv = op == OP_SUM ? o->dtype : a0->dtype;
  bp_tensor *conv_t = NULL;
  cudaStream_t s;
  st = cu_enter(a0->device.index, &s);
  if (!st && o->numel > 0) {
    if (a0->dtype != conv) st = cu_cast_to(args[0].u.tensor, conv, ctx->op_name, &conv_t);
    const bp_tensor_view *a = conv_t ? cu_view(conv_t) : a0;
    if (!st) {
      RPlan p;
      memset(&p, 0, sizeof p);
      if (a->numel == 0) {
        /* Every output is the reduction of nothing.  The input's other
         * dimensions may be so large that their product, or a merged
         * stride, would overflow, so they are not planned. */
        p.nk = 1;
        p.ksize[0] = o->numel;
        p.nout = o->numel;
      } else {
        bool reduced[BP_MAX_NDIM] = {false};
        (void)bp_aux_arg_reduce_dims(ctx, args, 1, a->ndim, reduced); /* meta checked dim */
        p.nk = collect(a, reduced, false, p.ksize, p.kstride);
        p.nr = collect(a, reduced, true, p.rsize, p.rstride);
        p.nout = 1;
        for (int i = 0; i < p.nk; i++) p.nout *= p.ksize[i];
        p.nred = 1;
        for (int i = 0; i < p.nr; i++) p.nred *= p.rsize[i];
      }
      int32_t dev = a->device.index;
      CU_SWITCH_ALL(a->dtype, st = CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: no kernel for %s",
                                          ctx->op_name, bp_aux_dtype_name(a->dtype)),
                    st = run_op<scalar_t>(ctx->op_name, op, a, o->data, p, dev, s));
      if (!st) st = cu_launched(ctx->op_name);
    }
  }
  cu_host->tensor_release(conv_t);
  return bp_aux_finish(ctx, st, rets, out);
}

bp_status cu_register_reduce(bp_library *lib) {
  static const struct {
    const char *name;
    int op;
  } ops[] = {{"sum", OP_SUM}, {"mean", OP_MEAN}, {"amax", OP_AMAX}, {"amin", OP_AMIN},
             {"argmax", OP_ARGMAX}};
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof ops / sizeof ops[0]; i++)
    st = cu_impl(lib, ops[i].name, reduce_kernel, (void *)(intptr_t)ops[i].op);
  return st;
}
