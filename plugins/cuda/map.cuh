/*
 * plugins/cuda/map.cuh - the grid-stride kernels and launchers that the
 * elementwise files (elementwise.cu, binary.cu, unary.cu, compare.cu) run
 * their functors with, and the helpers they share: the "no kernel for this
 * dtype" error and inputs converted to one dtype.
 *
 * Every function here is a template or static, so each .cu file that
 * includes it compiles its own copies of what it uses, and the files
 * compile in parallel.
 *
 * The kernels: a vectorised one for contiguous operands of one shape
 * (16-byte loads and stores where the pointers allow), a contiguous one
 * where an operand is a broadcast scalar ("tensor op scalar"), and a
 * strided one that computes every operand's offset from the element's
 * index, over the geometry of cu_geo_init (kernels.cuh, elementwise.cu).
 */
#ifndef BP_PLUGINS_CUDA_MAP_CUH
#define BP_PLUGINS_CUDA_MAP_CUH

#include "kernels.cuh"

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* Elements per vector access: 16 bytes of the output, 2 to 8 elements. */
template <class O> struct VecN {
  static const int n = 16 / sizeof(O) < 2 ? 2 : 16 / sizeof(O) > 8 ? 8 : 16 / sizeof(O);
};

template <class T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

/* out[i] = f(a[i]) with N-element vector accesses; the tail (n % N) too. */
template <class F, class O, class A, int N>
__global__ void k_map1_vec(F f, O *o, const A *a, int64_t n) {
  int64_t nv = n / N;
  CU_GRID_LOOP(i, nv) {
    Vec<A, N> x = reinterpret_cast<const Vec<A, N> *>(a)[i];
    Vec<O, N> r;
#pragma unroll
    for (int k = 0; k < N; k++) r.v[k] = f(x.v[k]);
    reinterpret_cast<Vec<O, N> *>(o)[i] = r;
  }
  CU_GRID_LOOP(j, n - nv * N) o[nv * N + j] = f(a[nv * N + j]);
}

template <class F, class O, class A> __global__ void k_map1_strided(F f, O *o, const A *a, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[2];
    geo_offsets<2>(g, i, off);
    o[off[0]] = f(a[off[1]]);
  }
}

/* out[i] = f(a[i], b[i]) with N-element vector accesses; SA (SB): a (b) is
 * one broadcast element. */
template <class F, class O, class A, class B, int N, bool SA, bool SB>
__global__ void k_map2_vec(F f, O *o, const A *a, const B *b, int64_t n) {
  int64_t nv = n / N;
  const A a0 = a[0];
  const B b0 = b[0];
  CU_GRID_LOOP(i, nv) {
    Vec<A, N> x;
    Vec<B, N> y;
    if (!SA) x = reinterpret_cast<const Vec<A, N> *>(a)[i];
    if (!SB) y = reinterpret_cast<const Vec<B, N> *>(b)[i];
    Vec<O, N> r;
#pragma unroll
    for (int k = 0; k < N; k++) r.v[k] = f(SA ? a0 : x.v[k], SB ? b0 : y.v[k]);
    reinterpret_cast<Vec<O, N> *>(o)[i] = r;
  }
  CU_GRID_LOOP(j, n - nv * N) {
    int64_t e = nv * N + j;
    o[e] = f(SA ? a0 : a[e], SB ? b0 : b[e]);
  }
}

template <class F, class O, class A, class B>
__global__ void k_map2_strided(F f, O *o, const A *a, const B *b, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[3];
    geo_offsets<3>(g, i, off);
    o[off[0]] = f(a[off[1]], b[off[2]]);
  }
}

template <class F, class O, class A, class B, class C>
__global__ void k_map3_strided(F f, O *o, const A *a, const B *b, const C *c, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[4];
    geo_offsets<4>(g, i, off);
    o[off[0]] = f(a[off[1]], b[off[2]], c[off[3]]);
  }
}

/* The value is converted on the device, by the rules of cast. */
template <class T> __global__ void k_fill(T *o, double value, Geo g) {
  const T v = Cv<T>::f(value);
  if (g.ndim <= 1) {
    int64_t s = g.ndim ? g.strides[0][0] : 0;
    CU_GRID_LOOP(i, g.numel) o[i * s] = v;
  } else {
    CU_GRID_LOOP(i, g.numel) {
      int64_t off[1];
      geo_offsets<1>(g, i, off);
      o[off[0]] = v;
    }
  }
}

static inline bool aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

/* A launch: the device, its current stream and the geometry. */
struct Launch {
  int32_t dev;
  cudaStream_t s;
  Geo g;
  void *p[CU_MAX_OPS];
};

static inline bp_status launch_init(Launch *L, int nops, const bp_tensor_view *const *views) {
  L->dev = views[0]->device.index;
  bp_status st = cu_enter(L->dev, &L->s);
  if (st) return st;
  cu_geo_init(&L->g, nops, views, views[0]->ndim, views[0]->sizes);
  for (int i = 0; i < nops; i++) L->p[i] = views[i]->data;
  return BP_OK;
}

/* VEC false leaves out the vectorised kernel (conversions between two
 * dtypes other than two floating ones, which mostly serve other kernels:
 * with it they were a third of the plugin's size). */
template <class F, class O, class A, bool VEC = true> static void map1(const Launch &L, F f) {
  O *o = (O *)L.p[0];
  const A *a = (const A *)L.p[1];
  int64_t n = L.g.numel;
  if (n == 0) return;
  if (VEC && cu_geo_contiguous(&L.g, 0) && cu_geo_contiguous(&L.g, 1)) {
    const int N = VecN<O>::n;
    if (aligned(o, sizeof(O) * N) && aligned(a, sizeof(A) * N)) {
      k_map1_vec<F, O, A, N>
          <<<cu_blocks(L.dev, n / N + 1, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, n);
      return;
    }
  }
  k_map1_strided<F, O, A><<<cu_blocks(L.dev, n, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, L.g);
}

template <class F, class O, class A, class B> static void map2(const Launch &L, F f) {
  O *o = (O *)L.p[0];
  const A *a = (const A *)L.p[1];
  const B *b = (const B *)L.p[2];
  int64_t n = L.g.numel;
  if (n == 0) return;
  if (cu_geo_contiguous(&L.g, 0)) {
    bool ca = cu_geo_contiguous(&L.g, 1), cb = cu_geo_contiguous(&L.g, 2);
    bool sa = !ca && cu_geo_scalar(&L.g, 1), sb = !cb && cu_geo_scalar(&L.g, 2);
    const int N = VecN<O>::n;
    /* Both broadcast (a single element) goes the strided way. */
    if ((ca || sa) && (cb || sb) && !(sa && sb) && aligned(o, sizeof(O) * N) &&
        (sa || aligned(a, sizeof(A) * N)) && (sb || aligned(b, sizeof(B) * N))) {
      unsigned blocks = cu_blocks(L.dev, n / N + 1, CU_THREADS);
      if (ca && cb)
        k_map2_vec<F, O, A, B, N, false, false><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      else if (ca)
        k_map2_vec<F, O, A, B, N, false, true><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      else
        k_map2_vec<F, O, A, B, N, true, false><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      return;
    }
  }
  k_map2_strided<F, O, A, B>
      <<<cu_blocks(L.dev, n, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, b, L.g);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* A dtype of argument #argi that the meta function let through but no
 * kernel handles (bp_aux_arg_errorf: the name from the op's schema). */
static inline bp_status unsupported(const bp_kernel_ctx *ctx, int argi, int32_t dt) {
  return bp_aux_arg_errorf(ctx, BP_ERR_UNSUPPORTED, (size_t)argi,
                           "the CUDA plugin has no kernel for %s", bp_aux_dtype_name(dt));
}

/* The CUDA conversion of an input to the dtype a kernel computes in, for
 * bp_aux_operands_init (the kit's step every plugin shares). */
static inline bp_status cu_operand_cast(const bp_kernel_ctx *ctx, bp_tensor *src, int32_t dtype,
                                        bp_tensor **out) {
  return cu_cast_to(src, dtype, ctx->op_name, out);
}

/* The kit's operands (bp_aux_operands), released when the kernel returns. */
struct Inputs {
  bp_aux_operands ops;
  const bp_kernel_ctx *ctx;
  Inputs() : ctx(nullptr) { memset(&ops, 0, sizeof ops); }
  ~Inputs() {
    if (ctx) bp_aux_operands_release(ctx, &ops);
  }
  Inputs(const Inputs &) = delete;
  Inputs &operator=(const Inputs &) = delete;
};

/* ops.views[0] = out; ops.views[first + i] = ts[i] converted to dtype. */
static inline bp_status inputs_init(Inputs *in, const bp_kernel_ctx *ctx, const bp_tensor_view *out,
                                    int first, bp_tensor *const *ts, int n, int32_t dtype) {
  in->ctx = ctx;
  return bp_aux_operands_init(ctx, &in->ops, cu_operand_cast, out, first, ts, n, dtype);
}

#endif /* BP_PLUGINS_CUDA_MAP_CUH */
