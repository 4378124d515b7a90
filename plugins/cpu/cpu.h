/*
 * plugins/cpu/cpu.h - internals of the CPU reference plugin.
 *
 * The plugin includes only the SDK headers and reaches the host through the
 * table it was given (cpu_host).  Kernels are boxed and registered for
 * BP_DEVICE_CPU in an IMPL library of the `core` namespace; their outputs
 * are sized by the op's meta function (structured kernels, whose results
 * the host allocates, or bp_aux_alloc_outputs on a host before ABI 1.2),
 * so shapes, dtypes and argument errors are the op set's by construction.
 *
 * Layout:
 *   plugin.c       entry point, descriptor, setup
 *   pool.c         the thread pool (cpu_parallel_for)
 *   iter.c         strided, broadcasting iteration (cpu_iter)
 *   elementwise.h  dtype machinery elementwise.c and cast.c share
 *   elementwise.c  binary, unary, where, muladd, add.out
 *   cast.c         cast, contiguous, fill_, copy_; cpu_cast_to
 *   compare.c      eq, ne, lt, le, gt, ge (op set 2)
 *   index.c        index_select, gather (op set 2)
 *   scan.c         cumsum (op set 2)
 *   sort.c         topk, sort (op set 2)
 *   attention.c    scaled_dot_product_attention, fused (op set 2, float32)
 *   reduce.c       sum, mean, amax, amin, argmax
 *   softmax.c      softmax, log_softmax
 *   layer_norm.c   layer_norm
 *   layer_norm_cols.c  layer_norm of neighbouring rows (a transposed input)
 *   rows.c         row kernels that softmax.c and layer_norm.c share
 *   stream.c       non-temporal stores of large results
 *   matmul.c       matmul: CBLAS when available, else a blocked kernel
 *   conv.c         conv2d: its input, and an implicit GEMM over matmul.c's
 *                  micro-kernel
 *   conv_direct.c  conv2d's direct path (conv.h: what the two share)
 *   maxpool.c      max_pool2d, an output row at a time
 */
#ifndef BP_PLUGINS_CPU_H
#define BP_PLUGINS_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <backplane/plugin_aux.h>

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
/* Dtypes                                                                   */
/* ------------------------------------------------------------------------ */

/* float16 and bfloat16 conversions, dtype names and the like come from
 * <backplane/plugin_aux.h>.  The faulty plugins of the conformance tests
 * (conformance/tests/faulty/shim.c) build over this header and still use
 * these names for some of them. */
#define cpu_is_float bp_aux_dtype_is_float
#define cpu_f16_to_f32 bp_aux_f16_to_f32
#define cpu_f32_to_f16 bp_aux_f32_to_f16
#define cpu_f32_to_bf16 bp_aux_f32_to_bf16

/* Reads element `p` of dtype `dt` as a double (any dtype). */
static inline double cpu_load_f64(int32_t dt, const void *p) {
  switch (dt) {
    case BP_FLOAT32: return *(const float *)p;
    case BP_FLOAT64: return *(const double *)p;
    case BP_FLOAT16: return bp_aux_f16_to_f32(*(const uint16_t *)p);
    case BP_BFLOAT16: return bp_aux_bf16_to_f32(*(const uint16_t *)p);
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
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* Registers `fn` as the boxed CPU kernel of core::<op>, at the
 * reference priority: a vendor's kernel for the same op wins over it. */
static inline bp_status cpu_impl(bp_library *lib, const char *op, bp_boxed_kernel fn,
                                 const void *user_data) {
  return bp_aux_impl_at(cpu_host, lib, op, BP_DEVICE_CPU, fn, user_data, BP_PRIORITY_REFERENCE);
}

/* Registers a kernel of BP_AUX_STRUCTURED_KERNEL(name, impl) as the CPU
 * kernel of core::<op>, at the reference priority: structured (the host
 * sizes and allocates the result) on a host of ABI 1.2 or later. */
#define CPU_IMPL_STRUCTURED(lib, op, name, user_data)                                      \
  bp_aux_impl_structured(cpu_host, (lib), (op), BP_DEVICE_CPU, name, name##_fill, (user_data), \
                         BP_PRIORITY_REFERENCE)

/* Registers a kernel of BP_AUX_STRUCTURED_KERNEL(name, impl) for the
 * dtypes listed (ended by BP_DTYPE_INVALID), at the reference priority:
 * the host's composite serves the others. */
#define CPU_IMPL_STRUCTURED_DTYPES(lib, op, name, dtypes) \
  cpu_impl_dtypes((lib), (op), name, name##_fill, (dtypes))
static inline bp_status cpu_impl_dtypes(bp_library *lib, const char *op, bp_boxed_kernel boxed,
                                        bp_boxed_kernel fill, const int32_t *dtypes) {
  bool structured = cpu_host->abi_major == BP_ABI_VERSION_MAJOR && cpu_host->abi_minor >= 2;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.flags = structured ? BP_KERNEL_DEF_STRUCTURED : 0;
  k.boxed = structured ? fill : boxed;
  k.dtypes = dtypes;
  k.priority = BP_PRIORITY_REFERENCE;
  return cpu_host->impl(lib, &k);
}

/* Each kernel file registers its kernels. */
bp_status cpu_register_elementwise(bp_library *lib);
bp_status cpu_register_compare(bp_library *lib);
bp_status cpu_register_index(bp_library *lib);
bp_status cpu_register_scan(bp_library *lib);
bp_status cpu_register_sort(bp_library *lib);
bp_status cpu_register_attention(bp_library *lib);
bp_status cpu_register_cast(bp_library *lib);
bp_status cpu_register_reduce(bp_library *lib);
bp_status cpu_register_softmax(bp_library *lib);
bp_status cpu_register_layer_norm(bp_library *lib);
bp_status cpu_register_matmul(bp_library *lib);
bp_status cpu_register_conv(bp_library *lib);
bp_status cpu_register_maxpool(bp_library *lib);

/* ------------------------------------------------------------------------ */
/* The GEMM micro-kernel (matmul.c), for conv.c                             */
/* ------------------------------------------------------------------------ */

/* Multiplies an mr-row panel of packed A (mr values per step: a[p*mr + i];
 * or, for a "rows" kernel, mr rows of lda elements: a[i*lda + p]) by an
 * nr-column panel of packed B (b[p*nr + j]) over kc steps, and writes (or,
 * when accumulate, adds) the m x n top-left part of the mr x nr tile into
 * c, row-major with ldc elements per row.  All mr rows of A are read, even
 * past m.  float, or double for f64. */
typedef void (*cpu_ukernel_fn)(int64_t kc, const void *a, int64_t lda, const void *b, void *c,
                               int64_t ldc, int64_t m, int64_t n, bool accumulate);
typedef struct cpu_ukernel {
  cpu_ukernel_fn fn;
  int mr, nr;
} cpu_ukernel;

/* The float "rows" form of the widest micro-kernel this CPU runs. */
cpu_ukernel cpu_gemm_ukernel_rows(void);
/* The SIMD level of the micro-kernels this CPU runs, as BP_CPU_GEMM_ISA
 * caps it: 2 AVX-512, 1 AVX2 with FMA, 0 baseline. */
int cpu_gemm_level(void);

/* ------------------------------------------------------------------------ */
/* Row kernels (rows.c), for softmax.c and layer_norm.c                     */
/* ------------------------------------------------------------------------ */

/* Elements summed in float lanes per double addition. */
#define CPU_ROW_BLOCK 1024

/* The sum of x - c, or of (x - c)^2 when `squares`, over n <= CPU_ROW_BLOCK
 * elements, in lanes; c is given in two parts, c + c_lo (see rows.c). */
float cpu_row_sum_f32(const float *x, int64_t n, bool squares, float c, float c_lo);
double cpu_row_sum_f64(const double *x, int64_t n, bool squares, double c, double c_lo);
/* The same over any n: blocks of CPU_ROW_BLOCK added in double.  With
 * ahead (the next row, of n elements too), each block of it is prefetched
 * as the block of x is summed, so that the next row's first pass finds it
 * in the caches while this one computes. */
double cpu_row_total_f32(const float *x, int64_t n, bool squares, float c, float c_lo,
                         const float *ahead);
double cpu_row_total_f64(const double *x, int64_t n, bool squares, double c, const double *ahead);
/* Prefetches the bytes [p, p + n) (a cache line per 64 bytes). */
static inline void cpu_prefetch(const void *p, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) __builtin_prefetch((const char *)p + i);
}
/* Reads n elements of dtype dt (float32, float16 or bfloat16; stride in
 * bytes) as floats, and writes them back rounded to nearest even. */
void cpu_gather_f32(float *dst, const char *src, int64_t stride, int64_t n, int32_t dt);
void cpu_scatter_f32(char *dst, int64_t stride, const float *src, int64_t n, int32_t dt);
/* The same for float64 rows. */
void cpu_gather_f64(double *dst, const char *src, int64_t stride, int64_t n);
void cpu_scatter_f64(char *dst, int64_t stride, const double *src, int64_t n);

/* ------------------------------------------------------------------------ */
/* Streaming stores (stream.c)                                              */
/* ------------------------------------------------------------------------ */

/* Results of at least this many bytes are written with non-temporal
 * stores: the last-level cache's size, or BP_CPU_STREAM_BYTES. */
extern int64_t cpu_stream_min;
static inline bool cpu_stream_wanted(int64_t bytes) { return bytes >= cpu_stream_min; }
/* Reads the settings and picks the stores (at setup). */
void cpu_stream_init(void);
/* Copies n bytes from src (a small buffer, in L1) to dst with
 * non-temporal stores, or plain ones where there are none. */
void cpu_stream_copy(void *dst, const void *src, size_t n);
/* The same for rows of n bytes: row r from src + r * ss to dst + r * ds. */
void cpu_stream_rows(void *dst, int64_t ds, const void *src, int64_t ss, int64_t rows, size_t n);
/* Orders the non-temporal stores before the calling thread's later
 * stores: a pool task that streamed calls it before it returns. */
void cpu_stream_end(void);

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

/* The same over n items of uneven or large work, handed out one at a time
 * as threads come free (a thread that wakes late takes fewer; with
 * cpu_parallel_for's one chunk a thread, the caller could end up running
 * every chunk itself).  Runs inline where cpu_parallel_for would. */
void cpu_parallel_items(int64_t n, void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);

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
/* Its cblas_sgemm and cblas_dgemm (behind a lock: calls take turns),
 * loaded at the first call since setup; NULL where no library loaded. */
void cpu_blas(cpu_sgemm_fn *sgemm, cpu_dgemm_fn *dgemm);
/* Stops the library's threads and closes it (at teardown). */
void cpu_blas_shutdown(void);

/* ------------------------------------------------------------------------ */
/* Strided, broadcasting iteration                                          */
/* ------------------------------------------------------------------------ */

#define CPU_ITER_MAX_OPS 4

/*
 * The plan of an iteration (bp_aux_iter of <backplane/plugin_aux.h>: each
 * operand broadcast to the shape, size-1 dimensions dropped, the others
 * ordered by stride, the output's first, and merged where every operand
 * steps through them as one; byte strides), for up to 4 operands.  Operand
 * 0 is the output, which is written; the others are inputs, only read.  An
 * input that steps a cache line per element along the innermost dimension
 * but less along another (tile_dim) makes the run walk those two in tiles,
 * copying such inputs (`packed`) through contiguous buffers; see iter.c.
 */
typedef struct cpu_iter {
  bp_aux_iter a;
  int tile_dim;    /* tiled with the innermost, or -1 */
  unsigned packed; /* bit i: input i goes through a buffer */
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
