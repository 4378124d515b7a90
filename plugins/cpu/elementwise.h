/*
 * plugins/cpu/elementwise.h - the dtype machinery that elementwise.c
 * (binary, unary, where, muladd, add.out), compare.c (the comparisons) and
 * cast.c (cast, contiguous, fill_, copy_) share.
 *
 * Dense dtype indices for the loop tables, X-macros over the dtypes, the
 * conversions of core::cast (CV_<dst>, LD_<src>), the clone attributes, the
 * pointer casts and UNARY_LOOP, and the small helpers every kernel uses.
 * Only macros, static inline functions and declarations: every loop is
 * defined in one .c file, so that none is compiled twice.
 */
#ifndef BP_PLUGINS_CPU_ELEMENTWISE_H
#define BP_PLUGINS_CPU_ELEMENTWISE_H

#include "cpu.h"

/* ------------------------------------------------------------------------ */
/* Dtypes                                                                   */
/* ------------------------------------------------------------------------ */

/* Dense indices of the op set's dtypes, for the loop tables. */
enum { DT_f32, DT_f64, DT_f16, DT_bf16, DT_i8, DT_i16, DT_i32, DT_i64, DT_u8, DT_b8, NDT };

static inline int dt_index(int32_t dt) {
  switch (dt) {
    case BP_FLOAT32: return DT_f32;
    case BP_FLOAT64: return DT_f64;
    case BP_FLOAT16: return DT_f16;
    case BP_BFLOAT16: return DT_bf16;
    case BP_INT8: return DT_i8;
    case BP_INT16: return DT_i16;
    case BP_INT32: return DT_i32;
    case BP_INT64: return DT_i64;
    case BP_UINT8: return DT_u8;
    case BP_BOOL: return DT_b8;
    default: return -1;
  }
}

/* Every dtype with its storage type. */
#define ALL_TYPES(X)                                                                        \
  X(f32, float) X(f64, double) X(f16, uint16_t) X(bf16, uint16_t) X(i8, int8_t)             \
  X(i16, int16_t) X(i32, int32_t) X(i64, int64_t) X(u8, uint8_t) X(b8, uint8_t)

/*
 * Loops that vectorise are compiled once per vector ISA (CPU_CLONES).
 * float16 loops are cloned for x86-64-v4 and -v3 instead: those levels
 * include F16C, without which GCC converts each _Float16 (bp_aux_f16_to_f32,
 * bp_aux_f32_to_f16) through a libgcc call (float16 add ran 20x slower).  Loops
 * that call a library function per element (pow, log, erfc, ...) gain
 * nothing from a vector ISA and are compiled once, except for float16.
 * exp, sigmoid, tanh and gelu's tanh form compute in float32 through
 * vmath.h's branch-free vm_exp_f32 and vm_tanh_f32, which vectorise; in
 * float64 they call libm (see EXP_<tn> in elementwise.c).  The conversion
 * loops of cast.c are compiled once, except those involving float16.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define F16_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define F16_CLONES
#endif
#define NO_CLONES

/* Floating dtypes: name, storage type, compute type, load to and store
 * from the compute type, the suffix of the <math.h> functions for the
 * compute type, and the clones of vectorising and of calling loops. */
#define ID(x) (x)
#define FLOAT_TYPES(X)                                                                      \
  X(f32, float, float, ID, ID, f, CPU_CLONES, NO_CLONES)                                    \
  X(f64, double, double, ID, ID, , CPU_CLONES, NO_CLONES)                                   \
  X(f16, uint16_t, float, bp_aux_f16_to_f32, bp_aux_f32_to_f16, f, F16_CLONES, F16_CLONES)        \
  X(bf16, uint16_t, float, bp_aux_bf16_to_f32, bp_aux_f32_to_bf16, f, CPU_CLONES, NO_CLONES)

/* Integer dtypes: name, type, and the unsigned type (at least 32 bits, so
 * that no operand is promoted to a signed int) that arithmetic wraps in. */
#define SIGNED_TYPES(X)                                                                     \
  X(i8, int8_t, uint32_t) X(i16, int16_t, uint32_t) X(i32, int32_t, uint32_t)               \
  X(i64, int64_t, uint64_t)
#define INT_TYPES(X) SIGNED_TYPES(X) X(u8, uint8_t, uint32_t)

/* ------------------------------------------------------------------------ */
/* Conversions (the rules of core::cast)                                    */
/* ------------------------------------------------------------------------ */

/* Float to integer: truncates toward zero, saturates, NaN gives 0.  The
 * range checks come first because C leaves out-of-range conversions
 * undefined.  MIN - 1 and MAX + 1 are exact doubles for every width but
 * 64 bits, where they round to -2^63 and 2^63, which still bound the
 * values that convert. */
#define X(tn, T, LO, HI)                                                                    \
  static inline T sat_##tn(double d) {                                                      \
    if (d != d) return 0;                                                                   \
    if (!(d > (double)(LO)-1.0)) return LO;                                                 \
    if (!(d < (double)(HI) + 1.0)) return HI;                                               \
    return (T)d;                                                                            \
  }                                                                                         \
  static inline T wrap_##tn(int64_t v) { return (T)v; }
X(i8, int8_t, INT8_MIN, INT8_MAX)
X(i16, int16_t, INT16_MIN, INT16_MAX)
X(i32, int32_t, INT32_MIN, INT32_MAX)
X(i64, int64_t, INT64_MIN, INT64_MAX)
X(u8, uint8_t, 0, UINT8_MAX)
#undef X

/* CV_<dst>(v): converts a loaded value v (float, double or an integer) to
 * dst's storage type. */
#define CV_f32(v) ((float)(v))
#define CV_f64(v) ((double)(v))
/* Double and integers go to float16 and bfloat16 rounded once (through
 * float32 rounded to odd; see plugin_aux.h). */
#define CV_f16(v)                                                                           \
  _Generic((v), float: bp_aux_f32_to_f16, double: bp_aux_f64_to_f16, default: bp_aux_i64_to_f16)(v)
#define CV_bf16(v)                                                                          \
  _Generic((v), float: bp_aux_f32_to_bf16, double: bp_aux_f64_to_bf16,                      \
           default: bp_aux_i64_to_bf16)(v)
#define CV_INT(tn, v) _Generic((v), float: sat_##tn, double: sat_##tn, default: wrap_##tn)(v)
#define CV_i8(v) CV_INT(i8, v)
#define CV_i16(v) CV_INT(i16, v)
#define CV_i32(v) CV_INT(i32, v)
#define CV_i64(v) CV_INT(i64, v)
#define CV_u8(v) CV_INT(u8, v)
#define CV_b8(v) ((uint8_t)((v) != 0))

/* LD_<src>(x): loads a stored value as float, double or an integer. */
#define LD_f32(x) (x)
#define LD_f64(x) (x)
#define LD_f16(x) bp_aux_f16_to_f32(x)
#define LD_bf16(x) bp_aux_bf16_to_f32(x)
#define LD_i8(x) (x)
#define LD_i16(x) (x)
#define LD_i32(x) (x)
#define LD_i64(x) (x)
#define LD_u8(x) (x)
#define LD_b8(x) ((uint8_t)((x) != 0))

/* ------------------------------------------------------------------------ */
/* Loop generators                                                          */
/* ------------------------------------------------------------------------ */

/* Pointer casts through void *, as tensor data is addressed in bytes. */
#define PTR(T, p) ((T *)(void *)(p))
#define CPTR(T, p) ((const T *)(const void *)(p))

/* A unary loop over (out, a). */
#define UNARY_LOOP(CLONES, name, T, C, LD, ST, EXPR)                                        \
  CLONES static void name(char **p, const int64_t *s, int64_t n, void *ctx) {               \
    (void)ctx;                                                                              \
    const int64_t w = (int64_t)sizeof(T);                                                   \
    if (s[0] == w && s[1] == w) {                                                           \
      T *o = PTR(T, p[0]);                                                                  \
      const T *x = CPTR(T, p[1]);                                                           \
      for (int64_t i = 0; i < n; i++) {                                                     \
        const C a = LD(x[i]);                                                               \
        o[i] = ST(EXPR);                                                                    \
      }                                                                                     \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      const char *px = p[1];                                                                \
      for (int64_t i = 0; i < n; i++, po += s[0], px += s[1]) {                             \
        const C a = LD(*CPTR(T, px));                                                       \
        *PTR(T, po) = ST(EXPR);                                                             \
      }                                                                                     \
    }                                                                                       \
  }

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static inline const bp_tensor_view *view_of(const bp_tensor *t) {
  return cpu_host->tensor_view(t);
}

/* The loop of `dt` in `loops`, or NULL. */
static inline cpu_loop_fn loop_for(const cpu_loop_fn *loops, int32_t dt) {
  int i = dt_index(dt);
  return i < 0 ? NULL : loops[i];
}

/* A dtype of argument #argi that the meta function let through but no
 * loop handles ("OP: argument #I 'NAME': the CPU plugin has no kernel for
 * DTYPE", the name from the op's schema). */
static inline bp_status unsupported(const bp_kernel_ctx *ctx, int argi, int32_t dt) {
  return bp_aux_arg_errorf(ctx, BP_ERR_UNSUPPORTED, (size_t)argi,
                           "the CPU plugin has no kernel for %s", bp_aux_dtype_name(dt));
}

/* Runs `loop` over `nops` operands broadcast to views[0]'s shape. */
static inline void run(cpu_loop_fn loop, int nops, const bp_tensor_view *const *views,
                       void *ctx) {
  cpu_iter it;
  cpu_iter_init(&it, nops, views, views[0]->ndim, views[0]->sizes);
  cpu_iter_run(&it, loop, ctx);
}

/* cast.c: a contiguous copy of v converted to dtype, always a new tensor. */
bp_status cpu_cast_copy(const bp_tensor_view *v, int32_t dtype, bp_tensor **out);

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

/* The CPU's conversion of an input to the dtype a kernel computes in, for
 * bp_aux_operands_init (the kit's step every plugin shares): threaded, and
 * contiguous. */
static inline bp_status cpu_operand_cast(const bp_kernel_ctx *ctx, bp_tensor *src, int32_t dtype,
                                         bp_tensor **out) {
  (void)ctx;
  return cpu_cast_copy(view_of(src), dtype, out);
}

#endif /* BP_PLUGINS_CPU_ELEMENTWISE_H */
