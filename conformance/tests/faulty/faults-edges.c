/*
 * conformance/tests/faulty/faults-edges.c - faults at the values a list of
 * special values misses, for the shim corpus (shim.h): NaN payloads,
 * integers beyond a float's mantissa, and the rounding edges of the float
 * dtypes.  Each is right on every value but those; a plugin is built with
 * one -DFAULT_<NAME>, and corpus.tsv lists them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef int faults_edges_unit; /* the unit is never empty */

#if defined(FAULT_RELU_SIGN_BIT)
/* relu as "clear the lanes whose sign bit is set" (an integer mask of the
 * sign): a NaN with its sign bit set becomes 0, where relu keeps a NaN. */
SHIM_KERNEL(relu_sign_bit) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (!shim_is_float(o->dtype)) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx));
    if (x != x && signbit(x)) shim_store(o, k, 0.0);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"relu_sign_bit", "relu", relu_sign_bit, NULL, NULL};
#endif

#if defined(FAULT_CAST_BF16_BIAS)
/* float32 to bfloat16 by the rounding bias (bits + 0x7fff + lsb) >> 16
 * with no test for NaN: right for every number and for infinity, but a
 * NaN whose payload lies in the low bits becomes infinity, and one with
 * every payload bit set carries into the sign (0x7fffffff gives -0.0). */
SHIM_KERNEL(cast_bf16_bias) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32 || o->dtype != BP_BFLOAT16) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  uint16_t *out = o->data;
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    uint32_t u = ((const uint32_t *)a->data)[shim_at(a, o->ndim, idx)];
    out[k] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"cast_bf16_bias", "cast", cast_bf16_bias, NULL, NULL};
#endif

#if defined(FAULT_CAST_NARROW_EARLY_INF)
/* A narrowing float cast (float64 to float32, float32 or float64 to float16
 * and bfloat16) that tests for overflow before it rounds: a value above
 * the target's largest finite value but below the midpoint to the next
 * power of two becomes infinity, where rounding gives the largest value. */
static double max_of(int32_t dt) {
  return dt == BP_FLOAT16 ? 65504.0 : dt == BP_BFLOAT16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
}
SHIM_KERNEL(cast_narrow_early_inf) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (!shim_is_float(a->dtype) || !shim_is_float(o->dtype) || o->dtype == BP_FLOAT64 ||
      o->dtype == a->dtype)
    return BP_OK;
  double mx = max_of(o->dtype);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx));
    if (fabs(x) > mx) shim_store(o, k, x > 0 ? INFINITY : -INFINITY);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"cast_narrow_early_inf", "cast", cast_narrow_early_inf, NULL,
                                   NULL};
#endif

#if defined(FAULT_CAST_I64_F32_DOUBLE)
/* int64 to float32 through double, (float)(double)x: two roundings, so an
 * int64 past 2^53 just above a float32 tie (2^62 + 2^38 + 1) lands on the
 * tie after the first and rounds to even in the second. */
SHIM_KERNEL(cast_i64_f32_double) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_INT64 || o->dtype != BP_FLOAT32) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    int64_t v = ((const int64_t *)a->data)[shim_at(a, o->ndim, idx)];
    ((float *)o->data)[k] = (float)(double)v;
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"cast_i64_f32_double", "cast", cast_i64_f32_double, NULL,
                                   NULL};
#endif

#if defined(FAULT_EQ_INT64_DOUBLE)
/* eq of int64 operands compared as doubles: two values past 2^53 that
 * round to one double (2^53 and 2^53 + 1) come out equal. */
SHIM_KERNEL(eq_int64_double) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (a->dtype != BP_INT64 || b->dtype != BP_INT64) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = (double)((const int64_t *)a->data)[shim_at(a, o->ndim, idx)];
    double y = (double)((const int64_t *)b->data)[shim_at(b, o->ndim, idx)];
    ((unsigned char *)o->data)[k] = x == y;
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"eq_int64_double", "eq", eq_int64_double, NULL, NULL};
#endif

#if defined(FAULT_SORT_BITS_KEY)
/* A float32 sort by the integer key of each value's bits (flip all bits of
 * a negative, the sign bit of a positive: a radix sort's key; -0.0 keyed
 * as 0.0), stable.  Every number and infinity sorts right, and a positive
 * NaN last, but a NaN with its sign bit set sorts first, where the op set
 * puts every NaN above every number. */
static uint32_t key_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (u == 0x80000000u) u = 0; /* -0.0 ties with 0.0 */
  return u >> 31 ? ~u : u | 0x80000000u;
}
SHIM_KERNEL(sort_bits_key) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *x = SHIM_ARG(0), *v = SHIM_RET(), *ix = shim_view(rets[1].u.tensor);
  if (x->dtype != BP_FLOAT32 || x->ndim == 0 || !(x->flags & BP_VIEW_CONTIGUOUS)) return BP_OK;
  int32_t dim = shim_norm_dim(args[1].u.i, x->ndim);
  bool desc = args[2].u.b;
  int64_t outer = 1, n = x->sizes[dim], inner = 1;
  for (int32_t d = 0; d < dim; d++) outer *= x->sizes[d];
  for (int32_t d = dim + 1; d < x->ndim; d++) inner *= x->sizes[d];
  const float *xs = x->data;
  float *vs = v->data;
  int64_t *is = ix->data;
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = p * n * inner + i;
      /* insertion sort of the indices by key (descending: by key, ties
       * kept in index order) */
      for (int64_t e = 0; e < n; e++) {
        uint32_t ke = key_of(xs[base + e * inner]);
        int64_t at = e;
        while (at > 0) {
          uint32_t ko = key_of(xs[base + is[base + (at - 1) * inner] * inner]);
          if (desc ? ke <= ko : ke >= ko) break;
          is[base + at * inner] = is[base + (at - 1) * inner];
          at--;
        }
        is[base + at * inner] = e;
      }
      for (int64_t e = 0; e < n; e++) vs[base + e * inner] = xs[base + is[base + e * inner] * inner];
    }
  return BP_OK;
}
const shim_fault shim_the_fault = {"sort_bits_key", "sort", sort_bits_key, NULL, NULL};
#endif

#if defined(FAULT_ISNAN_CANONICAL) || defined(FAULT_CLAMP_INT_DOUBLE) || \
    defined(FAULT_MASKED_FILL_INT_DOUBLE)
/* Whole kernels of ops the CPU plugin leaves to the host's composites,
 * declaring float32 (which op set 2 needs of a kernel) and, for the int64
 * faults, int64; their declared dtypes cover every tensor they read or
 * write (isnan's bool result, masked_fill's bool mask). */
#if defined(FAULT_ISNAN_CANONICAL)
static const int32_t only[] = {BP_FLOAT32, BP_BOOL, BP_DTYPE_INVALID};
#elif defined(FAULT_CLAMP_INT_DOUBLE)
static const int32_t only[] = {BP_FLOAT32, BP_INT64, BP_DTYPE_INVALID};
#else
static const int32_t only[] = {BP_FLOAT32, BP_INT64, BP_BOOL, BP_DTYPE_INVALID};
#endif
const int32_t *shim_fault_dtypes = only;
#endif

#if defined(FAULT_ISNAN_CANONICAL)
/* isnan as "the bits, sign aside, are the quiet NaN 0x7fc00000": the NaN
 * that arithmetic makes, but not a signalling NaN or a NaN with a payload
 * (from memory, another library, a cast). */
SHIM_KERNEL(isnan_canonical) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = shim_view(out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t e = 0; e < o->numel; e++, shim_next(o->ndim, o->sizes, idx)) {
    bool nan = false;
    if (a->dtype == BP_FLOAT32) {
      uint32_t u = ((const uint32_t *)a->data)[shim_at(a, a->ndim, idx)];
      nan = (u & 0x7fffffffu) == 0x7fc00000u;
    }
    ((unsigned char *)o->data)[e] = nan;
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"isnan_canonical", "isnan", isnan_canonical, NULL, NULL};
#endif

#if defined(FAULT_CLAMP_INT_DOUBLE) || defined(FAULT_MASKED_FILL_INT_DOUBLE)
/* A Scalar as float32 (an int one rounded once), and as int64 read
 * through a double whatever its tag: the fault, an int Scalar past 2^53
 * rounded. */
static float scalar_f32(const bp_value *v) {
  return v->tag == BP_TAG_INT ? (float)v->u.i : v->tag == BP_TAG_BOOL ? (float)v->u.b
                                                                       : (float)v->u.f;
}
static int64_t scalar_via_double(const bp_value *v) {
  double d = v->tag == BP_TAG_INT ? (double)v->u.i : v->tag == BP_TAG_BOOL ? (double)v->u.b : v->u.f;
  return d >= 9223372036854775807.0 ? INT64_MAX : (int64_t)d;
}
#endif

#if defined(FAULT_CLAMP_INT_DOUBLE)
/* clamp: float32 right (NaN in self or a bound gives NaN); int64 with its
 * bounds taken through double. */
SHIM_KERNEL(clamp_int_double) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = shim_view(out);
  const bp_value *b[2] = {&args[1], &args[2]};
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t e = 0; e < o->numel; e++, shim_next(o->ndim, o->sizes, idx)) {
    int64_t at = shim_at(a, a->ndim, idx);
    if (o->dtype == BP_INT64) {
      int64_t x = ((const int64_t *)a->data)[at];
      for (int j = 0; j < 2; j++) {
        if (b[j]->tag == BP_TAG_NONE) continue;
        int64_t y = scalar_via_double(b[j]);
        x = j == 0 ? (x < y ? y : x) : (x > y ? y : x);
      }
      ((int64_t *)o->data)[e] = x;
      continue;
    }
    float x = a->dtype == BP_FLOAT32 ? ((const float *)a->data)[at]
                                     : (float)((const int64_t *)a->data)[at];
    for (int j = 0; j < 2; j++) {
      if (b[j]->tag == BP_TAG_NONE || x != x) continue;
      float y = scalar_f32(b[j]);
      x = y != y ? y : j == 0 ? (x < y ? y : x) : (x > y ? y : x);
    }
    ((float *)o->data)[e] = x;
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"clamp_int_double", "clamp", clamp_int_double, NULL, NULL};
#endif

#if defined(FAULT_MASKED_FILL_INT_DOUBLE)
/* masked_fill: float32 and bool right; int64 with its value taken through
 * double. */
SHIM_KERNEL(masked_fill_int_double) {
  (void)nrets;
  bp_tensor *out = NULL;
  bp_status st = shim_alloc_result(ctx, args, nargs, &out);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *m = SHIM_ARG(1), *o = shim_view(out);
  size_t item = (size_t)o->itemsize;
  int64_t iv = scalar_via_double(&args[2]);
  float fv = scalar_f32(&args[2]);
  unsigned char bv = args[2].tag == BP_TAG_INT ? args[2].u.i != 0
                     : args[2].tag == BP_TAG_BOOL ? args[2].u.b != 0 : args[2].u.f != 0;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t e = 0; e < o->numel; e++, shim_next(o->ndim, o->sizes, idx)) {
    char *dst = (char *)o->data + (size_t)e * item;
    if (((const unsigned char *)m->data)[shim_at(m, o->ndim, idx)] == 0)
      memcpy(dst, (const char *)a->data + (size_t)shim_at(a, o->ndim, idx) * item, item);
    else if (o->dtype == BP_INT64)
      memcpy(dst, &iv, item);
    else if (o->dtype == BP_FLOAT32)
      memcpy(dst, &fv, item);
    else
      *dst = (char)bv;
  }
  return shim_return(rets, out);
}
const shim_fault shim_the_fault = {"masked_fill_int_double", "masked_fill", masked_fill_int_double,
                                   NULL, NULL};
#endif
