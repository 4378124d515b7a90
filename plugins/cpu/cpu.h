/*
 * plugins/cpu/cpu.h - internals of the CPU reference plugin.
 *
 * The plugin includes only the SDK headers and reaches the host through the
 * table it was given (cpu_host).  Kernels are boxed and registered for
 * BP_DEVICE_CPU in an IMPL library of the `core` namespace; each sizes its
 * outputs through the op's meta function (cpu_alloc_outputs), so shapes,
 * dtypes and argument errors are the op set's by construction.
 *
 * Layout:
 *   plugin.c       entry point, descriptor, setup
 *   common.c       output allocation, registration helper, dtype casts
 *   pool.c         the thread pool (cpu_parallel_for)
 *   iter.c         strided, broadcasting iteration (cpu_iter)
 *   elementwise.c  binary, unary, where, muladd, cast, contiguous, fill_,
 *                  copy_, add.out
 *   reduce.c       sum, mean, amax, amin, argmax
 *   nn.c           softmax, log_softmax, layer_norm
 *   matmul.c       matmul: CBLAS when available, else a blocked kernel
 */
#ifndef BP_PLUGINS_CPU_H
#define BP_PLUGINS_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

/* The host's table, set by bp_plugin_init before setup runs. */
extern const bp_host_api *cpu_host;

/* Records an error on the calling thread and evaluates to its status. */
#define CPU_ERR(status, ...) cpu_host->set_errorf((status), __VA_ARGS__)

/* Compiles a hot loop for the x86-64-v4 (AVX-512) and v3 (AVX2, FMA, F16C)
 * levels and baseline x86-64, and picks one at load time, so one binary is
 * portable and fast.  The levels, not single features: without F16C every
 * float16 conversion would be a library call.  Name such functions apart
 * across the plugin's files, static or not: clang 14 gives each one's
 * resolver ("name.resolver") external linkage, so two files with a
 * sum_f32 of their own fail to link. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif

#define CPU_LIKELY(x) __builtin_expect(!!(x), 1)
#define CPU_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------------------ */
/* Half-precision conversions (float16 is IEEE binary16; bfloat16 is the    */
/* top half of a float32).  Round to nearest even; NaN stays NaN.           */
/* ------------------------------------------------------------------------ */

static inline float cpu_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t cpu_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float cpu_f16_to_f32(uint16_t h) {
#if defined(__FLT16_MAX__) && !defined(__cplusplus)
  _Float16 x;
  memcpy(&x, &h, sizeof x);
  return (float)x;
#else
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13);
  } else if (exp) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man) {
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while (!(man & 0x400u));
    u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  } else {
    u = sign;
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

static inline uint16_t cpu_f32_to_f16(float f) {
#if defined(__FLT16_MAX__) && !defined(__cplusplus)
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, sizeof h);
  return h;
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);           /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);          /* overflow: inf */
  if (a < 0x38800000u) {                                            /* subnormal or 0 */
    if (a < 0x33000000u) return (uint16_t)sign;
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint32_t half = m >> shift, rem = m & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t r = a - 0x38000000u;                                     /* rebias */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
#endif
}

/*
 * To float16 and bfloat16 from double and from integers.  Going through
 * float32 with round-to-nearest twice can round wrongly (a value just
 * above a tie becomes the tie).  Rounding to float32 "to odd" first keeps
 * the information that the value was inexact, and a later round to
 * nearest-even at 11 or 8 bits is then correct (float32 has more than two
 * extra bits).
 */
static inline float cpu_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  double af = f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
  if (!(u & 1u)) u = af > ad ? u - 1u : u + 1u; /* the odd neighbour */
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float cpu_i64_to_f32_odd(int64_t v) {
  uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  if (m < (1u << 24)) return (float)v; /* exact */
  int shift = 40 - __builtin_clzll(m); /* keep the top 24 bits */
  uint64_t kept = m >> shift;
  if (m & ((UINT64_C(1) << shift) - 1)) kept |= 1u;
  float f = (float)kept * (float)(UINT64_C(1) << shift); /* both exact */
  return v < 0 ? -f : f;
}

/* ------------------------------------------------------------------------ */
/* Dtypes                                                                   */
/* ------------------------------------------------------------------------ */

static inline bool cpu_is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

/* Reads element `p` of dtype `dt` as a double (any dtype). */
static inline double cpu_load_f64(int32_t dt, const void *p) {
  switch (dt) {
    case BP_FLOAT32: return *(const float *)p;
    case BP_FLOAT64: return *(const double *)p;
    case BP_FLOAT16: return cpu_f16_to_f32(*(const uint16_t *)p);
    case BP_BFLOAT16: return cpu_bf16_to_f32(*(const uint16_t *)p);
    case BP_INT8: return *(const int8_t *)p;
    case BP_INT16: return *(const int16_t *)p;
    case BP_INT32: return *(const int32_t *)p;
    case BP_INT64: return (double)*(const int64_t *)p;
    case BP_UINT8: return *(const uint8_t *)p;
    case BP_BOOL: return *(const uint8_t *)p != 0;
    default: return 0;
  }
}

/*
 * Creates a contiguous copy of `src` converted to `dtype` (the conversion
 * rules of core::cast: float to integer truncates toward zero and
 * saturates, NaN becomes 0; anything to bool is "!= 0").  If src already
 * has that dtype and is contiguous, *out is a new reference to src.
 */
bp_status cpu_cast_to(const bp_tensor *src, int32_t dtype, bp_tensor **out);

/* ------------------------------------------------------------------------ */
/* Outputs and registration                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Allocates the Tensor results of the op being called (ctx->op), sized by
 * its meta function from the kernel's arguments: outs[i] for result i.  On
 * failure nothing is left allocated and the op set's error is recorded.
 */
bp_status cpu_alloc_outputs(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor **outs, size_t nouts);

/* Registers `fn` as the boxed CPU kernel of core::<op>. */
bp_status cpu_impl(bp_library *lib, const char *op, bp_boxed_kernel fn, void *user_data);

/* Puts a Tensor result (owned) into rets[0]. */
static inline bp_status cpu_return(bp_value *rets, bp_tensor *t) {
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = t;
  return BP_OK;
}

/* Each kernel file registers its kernels. */
bp_status cpu_register_elementwise(bp_library *lib);
bp_status cpu_register_reduce(bp_library *lib);
bp_status cpu_register_nn(bp_library *lib);
bp_status cpu_register_matmul(bp_library *lib);

/* ------------------------------------------------------------------------ */
/* Parallelism                                                              */
/* ------------------------------------------------------------------------ */

/* Work below this many elements (or inner-loop iterations) stays on the
 * calling thread: waking the pool costs more. */
#define CPU_GRAIN 32768

/* The number of threads kernels use: BP_CPU_THREADS if set (>= 1), else
 * the online CPUs. */
int cpu_num_threads(void);

/*
 * Runs fn(ctx, begin, end) over [0, n), split into at most cpu_num_threads()
 * contiguous chunks of at least `grain` items, on the pool and the calling
 * thread; returns when all are done.  Runs inline when n <= grain, when
 * there is one thread, or when called from inside a pool task.  Safe to
 * call from several threads at once.
 */
void cpu_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                      void *ctx);

/* Stops the pool's threads (at teardown). */
void cpu_pool_shutdown(void);
/* blas.c: the CBLAS library matmul hands float32 and float64 GEMMs to. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*cpu_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k,
                             float alpha, const float *a, int lda, const float *b, int ldb,
                             float beta, float *c, int ldc);
typedef void (*cpu_dgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k,
                             double alpha, const double *a, int lda, const double *b, int ldb,
                             double beta, double *c, int ldc);
/* Its cblas_sgemm and cblas_dgemm, loaded at the first call since setup;
 * NULL where no library loaded. */
void cpu_blas(cpu_sgemm_fn *sgemm, cpu_dgemm_fn *dgemm);
/* Stops the library's threads and closes it (at teardown). */
void cpu_blas_shutdown(void);

/* ------------------------------------------------------------------------ */
/* Strided, broadcasting iteration                                          */
/* ------------------------------------------------------------------------ */

#define CPU_ITER_MAX_OPS 4

/*
 * An iteration over `shape` for up to 4 operands, each broadcast to the
 * shape: a broadcast dimension gets stride 0.  Operand 0 is the output,
 * which is written; the others are inputs, which are only read.
 * Dimensions of size 1 are dropped, the others are ordered by stride (the
 * output's first) and neighbours that every operand steps through as one
 * are merged, so the innermost run is as long as possible.  Strides are in
 * bytes.  An input that steps a cache line per element along the innermost
 * dimension but less along another (tile_dim) makes the run walk those two
 * in tiles, copying such inputs (`packed`) through contiguous buffers; see
 * iter.c.
 */
typedef struct cpu_iter {
  int nops;
  int ndim;                                      /* 0 for a single element */
  int64_t numel;
  int64_t sizes[BP_MAX_NDIM];                    /* innermost last */
  int64_t strides[CPU_ITER_MAX_OPS][BP_MAX_NDIM];
  int64_t elsize[CPU_ITER_MAX_OPS];              /* bytes per element */
  char *data[CPU_ITER_MAX_OPS];
  int tile_dim;                                  /* tiled with the innermost, or -1 */
  unsigned packed;                               /* bit i: input i goes through a buffer */
} cpu_iter;

/* Builds an iteration; views[i] must broadcast to shape (the meta function
 * has checked that). */
void cpu_iter_init(cpu_iter *it, int nops, const bp_tensor_view *const *views, int32_t ndim,
                   const int64_t *shape);

/* An inner loop over n elements: operand i starts at ptrs[i] and advances
 * by strides[i] bytes.  Contiguous operands have strides[i] == itemsize. */
typedef void (*cpu_loop_fn)(char **ptrs, const int64_t *strides, int64_t n, void *ctx);

/*
 * Copies a tk x ti block of elements of w bytes (1, 2, 4 or 8): element
 * (kk, ii), at src + kk * sk + ii * si, goes to element kk * ds + ii of
 * dst.  With sk == w (the source dense along kk) it reads the source a
 * cache line at a time and turns 16-byte rows around in registers.
 */
void cpu_transpose(char *dst, int64_t ds, const char *src, int64_t sk, int64_t si, int64_t tk,
                   int64_t ti, int64_t w);

/* Calls loop over every element exactly once, in parallel when the tensor
 * is large.  The order is row-major in the planned dimensions unless the
 * iteration is tiled; a loop must not depend on it. */
void cpu_iter_run(const cpu_iter *it, cpu_loop_fn loop, void *ctx);

#endif /* BP_PLUGINS_CPU_H */
