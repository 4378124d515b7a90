/*
 * plugins/cuda/kernels.cuh - device-side building blocks shared by the
 * kernel files: the storage types of the op set's dtypes, their compute
 * types, the conversions of core::cast, strided offsets, and a dtype
 * switch.
 *
 * float16 and bfloat16 are stored as 16 bits and computed in float32, as
 * the op set says.  bool is its own storage type (b8) so that it never
 * mixes with uint8.  Integers compute in an unsigned type of at least 32
 * bits, so that overflow wraps.
 */
#ifndef BP_PLUGINS_CUDA_KERNELS_CUH
#define BP_PLUGINS_CUDA_KERNELS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda.h"

/* Storage types of float16, bfloat16 and bool. */
struct h16 {
  uint16_t x;
};
struct bf16 {
  uint16_t x;
};
struct b8 {
  uint8_t x;
};

/* Host and device: the functions that tests/cuda/test-cuda-functors also
 * runs on the host. */
#define CU_HD __host__ __device__ __forceinline__

/* Tr<T>: C, the type T computes in; ld() and st() convert to and from
 * it; U, the unsigned type integers wrap in. */
template <class T> struct Tr {
  typedef T C;
  typedef T U;
  static CU_HD C ld(T x) { return x; }
  static CU_HD T st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<float> {
  typedef float C;
  static CU_HD float ld(float x) { return x; }
  static CU_HD float st(float x) { return x; }
  static const bool is_float = true;
};
template <> struct Tr<double> {
  typedef double C;
  static CU_HD double ld(double x) { return x; }
  static CU_HD double st(double x) { return x; }
  static const bool is_float = true;
};
template <> struct Tr<h16> {
  typedef float C;
  static CU_HD float ld(h16 x) { return __half2float(__ushort_as_half(x.x)); }
  static CU_HD h16 st(float x) {
    h16 r;
    r.x = __half_as_ushort(__float2half_rn(x));
    return r;
  }
  static const bool is_float = true;
};
template <> struct Tr<bf16> {
  typedef float C;
  static CU_HD float ld(bf16 x) {
    return __bfloat162float(__ushort_as_bfloat16(x.x));
  }
  static CU_HD bf16 st(float x) {
    bf16 r;
    r.x = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    return r;
  }
  static const bool is_float = true;
};
template <> struct Tr<int8_t> {
  typedef int8_t C;
  typedef uint32_t U;
  static CU_HD C ld(int8_t x) { return x; }
  static CU_HD int8_t st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<int16_t> {
  typedef int16_t C;
  typedef uint32_t U;
  static CU_HD C ld(int16_t x) { return x; }
  static CU_HD int16_t st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<int32_t> {
  typedef int32_t C;
  typedef uint32_t U;
  static CU_HD C ld(int32_t x) { return x; }
  static CU_HD int32_t st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<int64_t> {
  typedef int64_t C;
  typedef uint64_t U;
  static CU_HD C ld(int64_t x) { return x; }
  static CU_HD int64_t st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<uint8_t> {
  typedef uint8_t C;
  typedef uint32_t U;
  static CU_HD C ld(uint8_t x) { return x; }
  static CU_HD uint8_t st(C x) { return x; }
  static const bool is_float = false;
};
template <> struct Tr<b8> {
  typedef uint8_t C;
  typedef uint32_t U;
  static CU_HD C ld(b8 x) { return (uint8_t)(x.x != 0); }
  static CU_HD b8 st(C x) {
    b8 r;
    r.x = (uint8_t)(x != 0);
    return r;
  }
  static const bool is_float = false;
};

/* ------------------------------------------------------------------------ */
/* core::cast conversions                                                   */
/* ------------------------------------------------------------------------ */

/* lv(x): a stored value loaded as float, double or int64 (bool as 0/1). */
static CU_HD float lv(float x) { return x; }
static CU_HD double lv(double x) { return x; }
static CU_HD float lv(h16 x) { return Tr<h16>::ld(x); }
static CU_HD float lv(bf16 x) { return Tr<bf16>::ld(x); }
static CU_HD int64_t lv(int8_t x) { return x; }
static CU_HD int64_t lv(int16_t x) { return x; }
static CU_HD int64_t lv(int32_t x) { return x; }
static CU_HD int64_t lv(int64_t x) { return x; }
static CU_HD int64_t lv(uint8_t x) { return x; }
static CU_HD int64_t lv(b8 x) { return x.x != 0; }

/* Float to integer: truncates toward zero, saturates, NaN gives 0.  The
 * range checks come first, as out-of-range conversions are undefined;
 * MIN - 1 and MAX + 1 round to -2^63 and 2^63 for 64 bits, which still
 * bound the values that convert. */
template <class T> struct Lim;
#define CU_LIM(T, LO, HI)                                      \
  template <> struct Lim<T> {                                  \
    static constexpr T min = LO, max = HI;                     \
  };
CU_LIM(int8_t, INT8_MIN, INT8_MAX)
CU_LIM(int16_t, INT16_MIN, INT16_MAX)
CU_LIM(int32_t, INT32_MIN, INT32_MAX)
CU_LIM(int64_t, INT64_MIN, INT64_MAX)
CU_LIM(uint8_t, 0, UINT8_MAX)
#undef CU_LIM

template <class T> __host__ CU_HD T cu_sat(double d) {
  if (d != d) return 0;
  if (!(d > (double)Lim<T>::min - 1.0)) return Lim<T>::min;
  if (!(d < (double)Lim<T>::max + 1.0)) return Lim<T>::max;
  return (T)d;
}

/* Cv<D>::f(v): converts a loaded value (float, double or int64) to D's
 * storage type by the rules of core::cast. */
template <class D> struct Cv {
  static CU_HD D f(float v) { return cu_sat<D>((double)v); }
  static CU_HD D f(double v) { return cu_sat<D>(v); }
  static CU_HD D f(int64_t v) { return (D)v; }
};
template <> struct Cv<float> {
  static CU_HD float f(float v) { return v; }
  static CU_HD float f(double v) { return (float)v; }
  static CU_HD float f(int64_t v) { return (float)v; }
};
template <> struct Cv<double> {
  static CU_HD double f(float v) { return v; }
  static CU_HD double f(double v) { return v; }
  static CU_HD double f(int64_t v) { return (double)v; }
};
template <> struct Cv<h16> {
  static CU_HD h16 f(float v) { return Tr<h16>::st(v); }
  static CU_HD h16 f(double v) {
    h16 r;
    r.x = __half_as_ushort(__double2half(v));
    return r;
  }
  static CU_HD h16 f(int64_t v) {
    h16 r;
    r.x = __half_as_ushort(__ll2half_rn((long long)v));
    return r;
  }
};
template <> struct Cv<bf16> {
  static CU_HD bf16 f(float v) { return Tr<bf16>::st(v); }
  static CU_HD bf16 f(double v) {
    bf16 r;
    r.x = __bfloat16_as_ushort(__double2bfloat16(v));
    return r;
  }
  static CU_HD bf16 f(int64_t v) {
    bf16 r;
    r.x = __bfloat16_as_ushort(__ll2bfloat16_rn((long long)v));
    return r;
  }
};
template <> struct Cv<b8> {
  template <class V> static CU_HD b8 f(V v) {
    b8 r;
    r.x = (uint8_t)(v != 0);
    return r;
  }
};

/* ------------------------------------------------------------------------ */
/* Strided iteration                                                        */
/* ------------------------------------------------------------------------ */

#define CU_MAX_OPS 4

/*
 * The geometry of an elementwise launch over up to 4 operands (output
 * first), broadcast to one shape: bp_aux_iter_plan's plan (size-1
 * dimensions dropped, the rest ordered by the output's strides, and
 * neighbours that every operand steps through as one merged), with the
 * strides in elements.  Passed to kernels by value.
 */
struct Geo {
  int ndim;
  int64_t numel;
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[CU_MAX_OPS][BP_MAX_NDIM];
};

/* Builds the geometry of views (each broadcasting to shape). */
void cu_geo_init(Geo *g, int nops, const bp_tensor_view *const *views, int32_t ndim,
                 const int64_t *shape);

/* Whether operand k steps through the iteration contiguously (stride 1),
 * or is one broadcast element (stride 0 everywhere). */
bool cu_geo_contiguous(const Geo *g, int k);
bool cu_geo_scalar(const Geo *g, int k);

/* The element offsets of linear index i for the first N operands: no
 * division for one dimension, 32-bit divisions while the indices fit. */
template <int N>
__device__ __forceinline__ void geo_offsets(const Geo &g, int64_t i, int64_t (&off)[N]) {
  if (g.ndim <= 1) {
#pragma unroll
    for (int k = 0; k < N; k++) off[k] = g.ndim ? i * g.strides[k][0] : 0;
    return;
  }
#pragma unroll
  for (int k = 0; k < N; k++) off[k] = 0;
  if (g.numel <= INT32_MAX) {
    uint32_t j = (uint32_t)i;
    for (int d = g.ndim - 1; d >= 0; d--) {
      uint32_t s = (uint32_t)g.sizes[d];
      uint32_t c = j % s;
      j /= s;
#pragma unroll
      for (int k = 0; k < N; k++) off[k] += (int64_t)c * g.strides[k][d];
    }
    return;
  }
  for (int d = g.ndim - 1; d >= 0; d--) {
    int64_t s = g.sizes[d];
    int64_t c = i % s;
    i /= s;
#pragma unroll
    for (int k = 0; k < N; k++) off[k] += c * g.strides[k][d];
  }
}

/* A grid-stride loop over [0, n). */
#define CU_GRID_LOOP(i, n)                                                          \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);        \
       i += (int64_t)blockDim.x * gridDim.x)

/* ------------------------------------------------------------------------ */
/* Dtype switches                                                           */
/* ------------------------------------------------------------------------ */

#define CU_CASE(code, T, ...) \
  case code: {                \
    typedef T scalar_t;       \
    __VA_ARGS__;              \
    break;                    \
  }

/* Runs the statements with scalar_t set to dt's storage type; `otherwise`
 * runs for a dtype outside the op set. */
#define CU_SWITCH_ALL(dt, otherwise, ...)          \
  switch (dt) {                                    \
    CU_CASE(BP_FLOAT32, float, __VA_ARGS__)        \
    CU_CASE(BP_FLOAT64, double, __VA_ARGS__)       \
    CU_CASE(BP_FLOAT16, h16, __VA_ARGS__)          \
    CU_CASE(BP_BFLOAT16, bf16, __VA_ARGS__)        \
    CU_CASE(BP_INT8, int8_t, __VA_ARGS__)          \
    CU_CASE(BP_INT16, int16_t, __VA_ARGS__)        \
    CU_CASE(BP_INT32, int32_t, __VA_ARGS__)        \
    CU_CASE(BP_INT64, int64_t, __VA_ARGS__)        \
    CU_CASE(BP_UINT8, uint8_t, __VA_ARGS__)        \
    CU_CASE(BP_BOOL, b8, __VA_ARGS__)              \
    default: otherwise;                            \
  }

#define CU_SWITCH_FLOAT(dt, otherwise, ...)        \
  switch (dt) {                                    \
    CU_CASE(BP_FLOAT32, float, __VA_ARGS__)        \
    CU_CASE(BP_FLOAT64, double, __VA_ARGS__)       \
    CU_CASE(BP_FLOAT16, h16, __VA_ARGS__)          \
    CU_CASE(BP_BFLOAT16, bf16, __VA_ARGS__)        \
    default: otherwise;                            \
  }

/* Block-wide reduction helpers: a warp shuffle tree, then one value per
 * warp through shared memory. */
template <class T, class F> __device__ __forceinline__ T warp_reduce(T v, F f) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* Reduces v over the block (blockDim.x a multiple of 32, at most 1024);
 * every thread receives the result.  `sh` holds 32 values. */
template <class T, class F> __device__ __forceinline__ T block_reduce(T v, F f, T *sh) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_reduce(v, f);
  __syncthreads();
  if (lane == 0) sh[w] = v;
  __syncthreads();
  T r = sh[0];
  for (int i = 1; i < nw; i++) r = f(r, sh[i]);
  return r;
}

#endif /* BP_PLUGINS_CUDA_KERNELS_CUH */
