/*
 * backplane/plugin_aux.h - helpers for writing plugins, built on
 * <backplane/plugin.h> alone.
 *
 * This header is to plugin.h what Lua's lauxlib.h is to lua.h: convenience
 * written only against the public plugin API.  Everything is `static
 * inline` or a macro, so it adds no ABI, no exported symbol and nothing to
 * link, and a plugin built with it loads in any host of ABI 1.0 or later.
 * It compiles as C11 and as C++11 or later (nvcc too), and includes only
 * plugin.h and the C standard library.  It holds dtype names, sizes and a
 * dtype switch; float16 and bfloat16 conversions and those of core::cast;
 * argument accessors; output allocation through the op's meta function;
 * registration with declared dtypes; a strided, broadcasting iterator that
 * hands out 1-D inner loops; an overlap test for two views; and pointwise
 * kernels written as their scalar expression (BP_AUX_POINTWISE_KERNEL).
 *
 * ERRORS: a function that takes a bp_kernel_ctx records its message with
 * ctx->host->set_errorf() and returns that status, so a kernel can return
 * it.  A message names the op and the argument by its index in the op's
 * schema, from 0, as the host's own messages do ("core::add: argument #1:
 * expected Tensor, got None").  Added with ABI 1.1; it uses
 * only ABI 1.0 host slots, but for bp_aux_arg_name() (bp_aux_arg_errorf's
 * argument names), which checks for the 1.1 slot op_get_arg and does
 * without it, and the 1.1 kernel priority that bp_aux_impl_at() sets is
 * ignored by a 1.0 host.
 */
#ifndef BACKPLANE_PLUGIN_AUX_H
#define BACKPLANE_PLUGIN_AUX_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Dtypes                                                                   */
/* ------------------------------------------------------------------------ */

/* The name of a dtype code as the op set spells it ("float32"), or
 * "unknown" for a code outside the op set.  Static strings. */
static inline const char *bp_aux_dtype_name(int32_t dt) {
  switch (dt) {
    case BP_INT8: return "int8";
    case BP_INT16: return "int16";
    case BP_INT32: return "int32";
    case BP_INT64: return "int64";
    case BP_UINT8: return "uint8";
    case BP_FLOAT16: return "float16";
    case BP_FLOAT32: return "float32";
    case BP_FLOAT64: return "float64";
    case BP_BFLOAT16: return "bfloat16";
    case BP_BOOL: return "bool";
    default: return "unknown";
  }
}

/* Bytes per element of a dtype of the op set, 0 for any other code. */
static inline int64_t bp_aux_dtype_size(int32_t dt) {
  switch (dt) {
    case BP_INT8: case BP_UINT8: case BP_BOOL: return 1;
    case BP_INT16: case BP_FLOAT16: case BP_BFLOAT16: return 2;
    case BP_INT32: case BP_FLOAT32: return 4;
    case BP_INT64: case BP_FLOAT64: return 8;
    default: return 0;
  }
}

/* Whether a dtype is floating point (float16, bfloat16, float32, float64). */
static inline bool bp_aux_dtype_is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

/*
 * The dtype in which two tensor operands of a core op meet
 * (docs/op-set.md, "Type promotion"): bool < integers < floats; the wider
 * within a category; uint8 with int8 or int16 gives int16; float16 with
 * bfloat16 gives float32.  A kernel of a comparison computes in it.
 * (Added with ABI 1.2 and op set 2; header-only, so it works with any host.)
 */
static inline int32_t bp_aux_promote(int32_t a, int32_t b) {
  if (a == b || b == BP_BOOL) return a;
  if (a == BP_BOOL) return b;
  bool fa = bp_aux_dtype_is_float(a), fb = bp_aux_dtype_is_float(b);
  if (fa && fb) {
    if (a == BP_FLOAT64 || b == BP_FLOAT64) return BP_FLOAT64;
    return BP_FLOAT32; /* float32 with a 16-bit float, or float16 with bfloat16 */
  }
  if (fa || fb) return fa ? a : b;
  if (a == BP_UINT8 || b == BP_UINT8) {
    int32_t o = a == BP_UINT8 ? b : a;
    return (o == BP_INT8 || o == BP_INT16) ? BP_INT16 : o;
  }
  return bp_aux_dtype_size(a) >= bp_aux_dtype_size(b) ? a : b;
}

/*
 * The dtype in which a tensor of dtype dt meets a Scalar whose value has
 * tag scalar_tag (BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL): a Scalar is
 * weak, raising the category (bool < integer < float) but never the width
 * (float for an integer tensor is float32).  (Added with ABI 1.2, whose
 * schemas have Scalar arguments; header-only.)
 */
static inline int32_t bp_aux_promote_scalar(int32_t dt, uint32_t scalar_tag) {
  if (scalar_tag == BP_TAG_FLOAT) return bp_aux_dtype_is_float(dt) ? dt : BP_FLOAT32;
  if (scalar_tag == BP_TAG_INT) return dt == BP_BOOL ? BP_INT64 : dt;
  return dt;
}

/* The name of a value tag ("Tensor", "int", "None", ...), for messages. */
static inline const char *bp_aux_tag_name(uint32_t tag) {
  static const char *const names[BP_TAG_COUNT] = {
      "None", "Tensor", "int", "float", "bool", "str", "int[]", "float[]", "Tensor[]",
      "ScalarType", "Device", "Scalar"};
  return tag < BP_TAG_COUNT ? names[tag] : "an unknown tag";
}

/*
 * Storage types: how the kit's dtype switch names an element of each
 * dtype.  float16 and bfloat16 are their 16 bits and bool its byte, in
 * structs so that C's _Generic and C++ overloads tell them apart from
 * uint16_t and uint8_t.  The others are the C types of their width.
 */
typedef struct bp_aux_float16 { uint16_t bits; } bp_aux_float16;
typedef struct bp_aux_bfloat16 { uint16_t bits; } bp_aux_bfloat16;
typedef struct bp_aux_bool { uint8_t value; } bp_aux_bool; /* 0 or 1 */

/*
 * BP_AUX_DISPATCH(dt, T, otherwise, body...): a switch over the op set's
 * ten dtypes that runs the statements `body` with `T` bound (by typedef) to
 * dt's storage type: int8_t, int16_t, int32_t, int64_t, uint8_t,
 * bp_aux_float16, float, double, bp_aux_bfloat16 or bp_aux_bool, and the
 * statement `otherwise` for any other code.  The body comes last, so it
 * may contain commas.
 *
 *     BP_AUX_DISPATCH(v->dtype, T, return bp_aux_unsupported_dtype(ctx, 0, v->dtype),
 *                     fill((T *)v->data, v->numel));
 */
#define BP_AUX_CASE_(code, type, T, ...) \
  case code: {                           \
    typedef type T;                      \
    __VA_ARGS__;                         \
  } break;
#define BP_AUX_FLOAT_CASES_(T, ...)                          \
  BP_AUX_CASE_(BP_FLOAT16, bp_aux_float16, T, __VA_ARGS__)   \
  BP_AUX_CASE_(BP_FLOAT32, float, T, __VA_ARGS__)            \
  BP_AUX_CASE_(BP_FLOAT64, double, T, __VA_ARGS__)           \
  BP_AUX_CASE_(BP_BFLOAT16, bp_aux_bfloat16, T, __VA_ARGS__)
#define BP_AUX_INT_CASES_(T, ...)                 \
  BP_AUX_CASE_(BP_INT8, int8_t, T, __VA_ARGS__)   \
  BP_AUX_CASE_(BP_INT16, int16_t, T, __VA_ARGS__) \
  BP_AUX_CASE_(BP_INT32, int32_t, T, __VA_ARGS__) \
  BP_AUX_CASE_(BP_INT64, int64_t, T, __VA_ARGS__) \
  BP_AUX_CASE_(BP_UINT8, uint8_t, T, __VA_ARGS__)
#define BP_AUX_DISPATCH(dt, T, otherwise, ...)         \
  switch (dt) {                                        \
    BP_AUX_INT_CASES_(T, __VA_ARGS__)                  \
    BP_AUX_FLOAT_CASES_(T, __VA_ARGS__)                \
    BP_AUX_CASE_(BP_BOOL, bp_aux_bool, T, __VA_ARGS__) \
    default: otherwise; break;                         \
  }

/* ------------------------------------------------------------------------ */
/* float16 and bfloat16                                                     */
/* ------------------------------------------------------------------------ */

/*
 * float16 is IEEE binary16 and bfloat16 the top half of a float32.  To
 * float: exact.  From float: rounded to nearest, ties to even; overflow
 * gives infinity, subnormal results are correctly rounded, and NaN stays
 * NaN with its payload's top bits, quieted.  In C, where the compiler has
 * _Float16, the float16 pair uses it (F16C instructions where the target
 * has them); elsewhere (C++, older compilers) the portable code gives the
 * same bits for every input.
 */
static inline float bp_aux_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t bp_aux_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float bp_aux_bf16_to_f32(uint16_t h) { return bp_aux_bits_to_f32((uint32_t)h << 16); }

static inline uint16_t bp_aux_f32_to_bf16(float f) {
  uint32_t u = bp_aux_f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

#if defined(__FLT16_MAX__) && !defined(__cplusplus)
#define BP_AUX_HAVE_FLOAT16_ 1
#endif

static inline float bp_aux_f16_to_f32(uint16_t h) {
#ifdef BP_AUX_HAVE_FLOAT16_
  __extension__ _Float16 x;
  memcpy(&x, &h, sizeof x);
  return (float)x;
#else
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u); /* inf, or quiet NaN */
  } else if (exp) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man) { /* subnormal: normalise */
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while (!(man & 0x400u));
    u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  } else {
    u = sign;
  }
  return bp_aux_bits_to_f32(u);
#endif
}

static inline uint16_t bp_aux_f32_to_f16(float f) {
#ifdef BP_AUX_HAVE_FLOAT16_
  __extension__ _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, sizeof h);
  return h;
#else
  uint32_t u = bp_aux_f32_to_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                    /* inf */
  if (a < 0x38800000u) {                                          /* subnormal or 0 */
    if (a < 0x33000000u) return (uint16_t)sign;
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint32_t half = m >> shift, rem = m & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t r = a - 0x38000000u; /* rebias */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
#endif
}

/*
 * To float16 and bfloat16 from double and from integers, rounded once.
 * Going through float32 with round-to-nearest twice can round wrongly (a
 * value just above a tie becomes the tie).  Rounding to float32 "to odd"
 * first keeps the information that the value was inexact, and the second
 * rounding, to 11 or 8 bits, is then correct.
 */
static inline float bp_aux_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t u = bp_aux_f32_to_bits(f);
  double af = f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
  if (!(u & 1u)) u = af > ad ? u - 1u : u + 1u; /* the odd neighbour */
  return bp_aux_bits_to_f32(u);
}

static inline float bp_aux_i64_to_f32_odd(int64_t v) {
  uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  if (m < (1u << 24)) return (float)v; /* exact */
  int shift = 0;                       /* keep the top 24 bits */
#if defined(__GNUC__)
  shift = 40 - __builtin_clzll(m);
#else
  while ((m >> shift) >= (1u << 24)) shift++;
#endif
  uint64_t kept = m >> shift;
  if (m & ((UINT64_C(1) << shift) - 1)) kept |= 1u;
  float f = (float)kept * (float)(UINT64_C(1) << shift); /* both exact */
  return v < 0 ? -f : f;
}

static inline uint16_t bp_aux_f64_to_f16(double d) {
  return bp_aux_f32_to_f16(bp_aux_f64_to_f32_odd(d));
}
static inline uint16_t bp_aux_f64_to_bf16(double d) {
  return bp_aux_f32_to_bf16(bp_aux_f64_to_f32_odd(d));
}
static inline uint16_t bp_aux_i64_to_f16(int64_t v) {
  return bp_aux_f32_to_f16(bp_aux_i64_to_f32_odd(v));
}
static inline uint16_t bp_aux_i64_to_bf16(int64_t v) {
  return bp_aux_f32_to_bf16(bp_aux_i64_to_f32_odd(v));
}

/* ------------------------------------------------------------------------ */
/* Elements: loads, stores and the conversions of core::cast                */
/* ------------------------------------------------------------------------ */

/*
 * bp_aux_load(x) gives a stored element (of a storage type above) as the
 * type it computes in: float for float16, bfloat16 and float32, double for
 * float64, and uint64_t for the integers and bool (signed values sign
 * extended), in which +, - and * wrap as the op set's integer results do.
 * Compare, and take maxima and minima, with bp_aux_signed, bp_aux_max and
 * bp_aux_min (below, in plugin_aux_pointwise.h), which read a uint64_t as
 * the signed value it holds.  bp_aux_store(p, v) stores
 * v, of that compute type, into *p: rounded for the floating types,
 * truncated to the width for the integers (wrapping), v != 0 for bool.
 * Type-generic: _Generic in C, overloads in C++.
 */
#define BP_AUX_ELEM_(sfx, T, C, load, store)                          \
  static inline C bp_aux_load_##sfx##_(T x) { return load; }         \
  static inline void bp_aux_store_##sfx##_(T *p, C v) { store; }
BP_AUX_ELEM_(f16, bp_aux_float16, float, bp_aux_f16_to_f32(x.bits), p->bits = bp_aux_f32_to_f16(v))
BP_AUX_ELEM_(bf16, bp_aux_bfloat16, float, bp_aux_bf16_to_f32(x.bits),
             p->bits = bp_aux_f32_to_bf16(v))
BP_AUX_ELEM_(f32, float, float, x, *p = v)
BP_AUX_ELEM_(f64, double, double, x, *p = v)
BP_AUX_ELEM_(i8, int8_t, uint64_t, (uint64_t)(int64_t)x, *p = (int8_t)(uint8_t)v)
BP_AUX_ELEM_(i16, int16_t, uint64_t, (uint64_t)(int64_t)x, *p = (int16_t)(uint16_t)v)
BP_AUX_ELEM_(i32, int32_t, uint64_t, (uint64_t)(int64_t)x, *p = (int32_t)(uint32_t)v)
BP_AUX_ELEM_(i64, int64_t, uint64_t, (uint64_t)x, *p = (int64_t)v)
BP_AUX_ELEM_(u8, uint8_t, uint64_t, x, *p = (uint8_t)v)
BP_AUX_ELEM_(bool, bp_aux_bool, uint64_t, x.value != 0, p->value = v != 0)
#undef BP_AUX_ELEM_

#ifdef __cplusplus
} /* extern "C" */
#define BP_AUX_OVERLOAD_(T, C, sfx)                                       \
  static inline C bp_aux_load(T x) { return bp_aux_load_##sfx##_(x); } \
  static inline void bp_aux_store(T *p, C v) { bp_aux_store_##sfx##_(p, v); }
BP_AUX_OVERLOAD_(bp_aux_float16, float, f16)
BP_AUX_OVERLOAD_(bp_aux_bfloat16, float, bf16)
BP_AUX_OVERLOAD_(float, float, f32)
BP_AUX_OVERLOAD_(double, double, f64)
BP_AUX_OVERLOAD_(int8_t, uint64_t, i8)
BP_AUX_OVERLOAD_(int16_t, uint64_t, i16)
BP_AUX_OVERLOAD_(int32_t, uint64_t, i32)
BP_AUX_OVERLOAD_(int64_t, uint64_t, i64)
BP_AUX_OVERLOAD_(uint8_t, uint64_t, u8)
BP_AUX_OVERLOAD_(bp_aux_bool, uint64_t, bool)
#undef BP_AUX_OVERLOAD_
extern "C" {
#else
#define bp_aux_load(x)                                                            \
  _Generic((x), bp_aux_float16: bp_aux_load_f16_, bp_aux_bfloat16: bp_aux_load_bf16_, \
           float: bp_aux_load_f32_, double: bp_aux_load_f64_, int8_t: bp_aux_load_i8_, \
           int16_t: bp_aux_load_i16_, int32_t: bp_aux_load_i32_, int64_t: bp_aux_load_i64_, \
           uint8_t: bp_aux_load_u8_, bp_aux_bool: bp_aux_load_bool_)(x)
#define bp_aux_store(p, v)                                                           \
  _Generic((p), bp_aux_float16 *: bp_aux_store_f16_, bp_aux_bfloat16 *: bp_aux_store_bf16_, \
           float *: bp_aux_store_f32_, double *: bp_aux_store_f64_, int8_t *: bp_aux_store_i8_, \
           int16_t *: bp_aux_store_i16_, int32_t *: bp_aux_store_i32_,                  \
           int64_t *: bp_aux_store_i64_, uint8_t *: bp_aux_store_u8_,                   \
           bp_aux_bool *: bp_aux_store_bool_)(p, v)
#endif

/*
 * Converts the element at src (of dtype src_dt, aligned) into dst_dt at
 * dst by the rules of core::cast: floating to integer truncates toward
 * zero and saturates, NaN giving 0; to bool is != 0 (NaN is true); the
 * rest rounds to nearest even, once.  Equal dtypes copy the bits.  False,
 * writing nothing, for a code outside the op set.  A switch per element:
 * fast loops dispatch once instead.
 */
static inline bool bp_aux_convert(int32_t dst_dt, void *dst, int32_t src_dt, const void *src) {
  int64_t size = bp_aux_dtype_size(dst_dt);
  if (size == 0 || bp_aux_dtype_size(src_dt) == 0) return false;
  if (dst_dt == src_dt) {
    memcpy(dst, src, (size_t)size);
    return true;
  }
  double d = 0;
  int64_t i = 0;
  bool fl = bp_aux_dtype_is_float(src_dt);
  BP_AUX_DISPATCH(src_dt, T, return false, {
    T x;
    memcpy(&x, src, sizeof x);
    if (fl) d = (double)bp_aux_load(x); else i = (int64_t)bp_aux_load(x);
  })
  switch (dst_dt) {
#define BP_AUX_SAT_(T, LO, HI)                                              \
  {                                                                         \
    T r = (T)i;                                                             \
    if (fl)                                                                 \
      r = d != d ? (T)0                                                     \
          : !(d > (double)(LO)-1.0) ? (T)(LO)                               \
          : !(d < (double)(HI) + 1.0) ? (T)(HI) : (T)d;                     \
    memcpy(dst, &r, sizeof r);                                              \
    return true;                                                            \
  }
    case BP_INT8: BP_AUX_SAT_(int8_t, INT8_MIN, INT8_MAX)
    case BP_INT16: BP_AUX_SAT_(int16_t, INT16_MIN, INT16_MAX)
    case BP_INT32: BP_AUX_SAT_(int32_t, INT32_MIN, INT32_MAX)
    case BP_INT64: BP_AUX_SAT_(int64_t, INT64_MIN, INT64_MAX)
    case BP_UINT8: BP_AUX_SAT_(uint8_t, 0, UINT8_MAX)
#undef BP_AUX_SAT_
    case BP_BOOL: *(uint8_t *)dst = fl ? d != 0 : i != 0; return true;
    case BP_FLOAT32: *(float *)dst = fl ? (float)d : (float)i; return true;
    case BP_FLOAT64: *(double *)dst = fl ? d : (double)i; return true;
    case BP_FLOAT16: *(uint16_t *)dst = fl ? bp_aux_f64_to_f16(d) : bp_aux_i64_to_f16(i); break;
    default: *(uint16_t *)dst = fl ? bp_aux_f64_to_bf16(d) : bp_aux_i64_to_bf16(i); break;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Accessors for args[i] (i below the schema's argument count) of a boxed
 * kernel or meta function.  On success they write *out.  A value of
 * another tag (None, say) records "OP: argument #i: expected T, got U" and
 * gives BP_ERR_TYPE; a bad value gives BP_ERR_INVALID_ARGUMENT.
 */
static inline bp_status bp_aux_arg_tag_(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                                        uint32_t tag) {
  if (args[i].tag == tag) return BP_OK;
  return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #%u: expected %s, got %s", ctx->op_name,
                               (unsigned)i, bp_aux_tag_name(tag), bp_aux_tag_name(args[i].tag));
}

/* bp_aux_arg_tensor (a `Tensor`), bp_aux_arg_int, bp_aux_arg_bool and
 * bp_aux_arg_str (borrowed for the call, NUL-terminated). */
#define BP_AUX_ARG_(name, tag, T, field)                                                       \
  static inline bp_status bp_aux_arg_##name(const bp_kernel_ctx *ctx, const bp_value *args,    \
                                            size_t i, T *out) {                                \
    bp_status st = bp_aux_arg_tag_(ctx, args, i, tag);                                         \
    if (st == BP_OK) *out = args[i].u.field;                                                   \
    return st;                                                                                 \
  }
BP_AUX_ARG_(tensor, BP_TAG_TENSOR, bp_tensor *, tensor)
BP_AUX_ARG_(int, BP_TAG_INT, int64_t, i)
BP_AUX_ARG_(bool, BP_TAG_BOOL, bool, b)
BP_AUX_ARG_(str, BP_TAG_STR, const char *, str)
#undef BP_AUX_ARG_

/* A `Tensor?`: *out is NULL for None. */
static inline bp_status bp_aux_arg_opt_tensor(const bp_kernel_ctx *ctx, const bp_value *args,
                                              size_t i, bp_tensor **out) {
  if (args[i].tag != BP_TAG_NONE) return bp_aux_arg_tensor(ctx, args, i, out);
  *out = NULL;
  return BP_OK;
}

/* A `float`; an int is accepted and converted. */
static inline bp_status bp_aux_arg_float(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                                         double *out) {
  bool is_int = args[i].tag == BP_TAG_INT;
  bp_status st = is_int ? BP_OK : bp_aux_arg_tag_(ctx, args, i, BP_TAG_FLOAT);
  if (st == BP_OK) *out = is_int ? (double)args[i].u.i : args[i].u.f;
  return st;
}

/* A `Scalar` (ABI 1.2): its value as a double, and which kind of number
 * it is in *tag (BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL; tag may be NULL).
 * An int of more than 53 bits loses precision as a double: read u.i when
 * *tag is BP_TAG_INT to keep it exact. */
static inline bp_status bp_aux_arg_scalar(const bp_kernel_ctx *ctx, const bp_value *args,
                                          size_t i, double *out, uint32_t *tag) {
  const bp_value *v = &args[i];
  if (v->tag != BP_TAG_INT && v->tag != BP_TAG_FLOAT && v->tag != BP_TAG_BOOL)
    return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #%zu: expected Scalar, got %s",
                                 ctx->op_name, i, bp_aux_tag_name(v->tag));
  *out = v->tag == BP_TAG_INT ? (double)v->u.i : v->tag == BP_TAG_FLOAT ? v->u.f : v->u.b ? 1 : 0;
  if (tag) *tag = v->tag;
  return BP_OK;
}

/* A `ScalarType`: a dtype of the op set. */
static inline bp_status bp_aux_arg_dtype(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                                         int32_t *out) {
  bp_status st = bp_aux_arg_tag_(ctx, args, i, BP_TAG_SCALAR_TYPE);
  if (st != BP_OK) return st;
  int64_t v = args[i].u.i;
  if (v < 0 || v > INT32_MAX || bp_aux_dtype_size((int32_t)v) == 0)
    return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #%u: %lld is not a dtype of the op set",
                                 ctx->op_name, (unsigned)i, (long long)v);
  *out = (int32_t)v;
  return BP_OK;
}

/* Wraps dimension v (negative counts from the end) of a tensor of ndim
 * dimensions into [0, max(ndim, 1)), as PyTorch does, or records why not. */
static inline bp_status bp_aux_dim_(const bp_kernel_ctx *ctx, size_t i, int64_t v, int32_t ndim,
                                    uint32_t seen, int32_t *out) {
  int64_t n = ndim > 0 ? ndim : 1, d = v < 0 ? v + n : v;
  if (d < 0 || d >= n || (seen >> d & 1u))
    return ctx->host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: argument #%u: dimension %lld is "
                                 "%s for a tensor of %d dimensions", ctx->op_name, (unsigned)i,
                                 (long long)v, d < 0 || d >= n ? "out of range" : "repeated",
                                 (int)ndim);
  *out = (int32_t)d;
  return BP_OK;
}

/* An `int dim` of a tensor of `ndim` dimensions, wrapped into [0, ndim). */
static inline bp_status bp_aux_arg_dim(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                                       int32_t ndim, int32_t *out) {
  bp_status st = bp_aux_arg_tag_(ctx, args, i, BP_TAG_INT);
  return st != BP_OK ? st : bp_aux_dim_(ctx, i, args[i].u.i, ndim, 0, out);
}

/* An `int[] dim`: each wrapped as bp_aux_arg_dim does, into dims[0 ..
 * *count - 1] (room for BP_MAX_NDIM), refusing a dimension given twice. */
static inline bp_status bp_aux_arg_dims(const bp_kernel_ctx *ctx, const bp_value *args, size_t i,
                                        int32_t ndim, int32_t *dims, int32_t *count) {
  bp_status st = bp_aux_arg_tag_(ctx, args, i, BP_TAG_INT_LIST);
  uint32_t seen = 0;
  for (uint32_t k = 0; st == BP_OK && k < args[i].len; k++) {
    st = bp_aux_dim_(ctx, i, args[i].u.ints[k], ndim, seen, &dims[k]);
    if (st == BP_OK) seen |= 1u << dims[k];
  }
  if (st == BP_OK) *count = (int32_t)args[i].len;
  return st;
}

/* The dimensions a reduction reduces, as ndim flags in mask: argument #i
 * is an `int[] dim` (empty: all of them) or an `int? dim` (None: all),
 * each wrapped as bp_aux_arg_dim does. */
static inline bp_status bp_aux_arg_reduce_dims(const bp_kernel_ctx *ctx, const bp_value *args,
                                               size_t i, int32_t ndim, bool *mask) {
  int32_t dims[BP_MAX_NDIM], count = 0;
  bp_status st = BP_OK;
  if (args[i].tag == BP_TAG_INT)
    st = bp_aux_arg_dim(ctx, args, i, ndim, &dims[count++]);
  else if (args[i].tag != BP_TAG_NONE)
    st = bp_aux_arg_dims(ctx, args, i, ndim, dims, &count);
  for (int32_t d = 0; st == BP_OK && d < ndim; d++) mask[d] = count == 0;
  for (int32_t k = 0; st == BP_OK && ndim > 0 && k < count; k++) mask[dims[k]] = true;
  return st;
}

/* The metadata of a tensor (host-owned, valid while t lives). */
static inline const bp_tensor_view *bp_aux_view(const bp_kernel_ctx *ctx, const bp_tensor *t) {
  return ctx->host->tensor_view(t);
}

/* The name of argument #i of the op being called, from its schema
 * (host->op_get_arg, ABI 1.1), or "" where the host cannot say. */
static inline const char *bp_aux_arg_name(const bp_kernel_ctx *ctx, size_t i) {
  bp_arg_info info;
  info.struct_size = BP_ARG_INFO_STRUCT_SIZE;
  if (!ctx->op || !BP_HOST_HAS(ctx->host, op_get_arg) ||
      ctx->host->op_get_arg(ctx->op, i, &info) != BP_OK || !info.name)
    return "";
  return info.name;
}

/*
 * An error about argument #i (its index in the op's schema, from 0), as
 * Lua's luaL_argerror words one: records `status` with the message
 * "OP: argument #i 'NAME': WHAT", WHAT written by fmt and what follows it
 * (printf's), NAME the argument's name from the schema (left out, with
 * its quotes, where the host cannot say), and returns status.
 */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static inline bp_status bp_aux_arg_errorf(const bp_kernel_ctx *ctx, bp_status status, size_t i,
                                          const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *name = bp_aux_arg_name(ctx, i);
  if (!*name) return ctx->host->set_errorf(status, "%s: argument #%u: %s", ctx->op_name,
                                           (unsigned)i, what);
  return ctx->host->set_errorf(status, "%s: argument #%u '%s': %s", ctx->op_name, (unsigned)i,
                               name, what);
}

/* Records "OP: argument #i 'NAME': this plugin has no kernel for DTYPE"
 * (bp_aux_arg_errorf) and returns BP_ERR_UNSUPPORTED, for a dtype the
 * kernel does not handle.  Declaring the kernel's dtypes at registration
 * (BP_AUX_DTYPES) keeps such calls from reaching it. */
static inline bp_status bp_aux_unsupported_dtype(const bp_kernel_ctx *ctx, size_t i, int32_t dt) {
  return bp_aux_arg_errorf(ctx, BP_ERR_UNSUPPORTED, i, "this plugin has no kernel for %s",
                           bp_aux_dtype_name(dt));
}

/* The results and registration, the iterator and the overlap tests, and
 * the pointwise kernels built on them, live in their own files, part of
 * this header. */
#define BACKPLANE_PLUGIN_AUX_INSIDE
#include <backplane/plugin_aux_kernel.h>
#include <backplane/plugin_aux_iter.h>
#include <backplane/plugin_aux_pointwise.h>
#undef BACKPLANE_PLUGIN_AUX_INSIDE

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_AUX_H */
