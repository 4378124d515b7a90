/*
 * conformance/tests/faulty/faults-values.c - faults of type promotion,
 * value classes and matmul shapes for the shim corpus (shim.h).  A plugin
 * is built with one -DFAULT_<NAME>; corpus.tsv lists them.
 */
#include <math.h>
#include <stdlib.h>

#include "shim.h"

typedef int faults_values_unit; /* the unit is never empty */

#if defined(FAULT_ADD_FIRST_DTYPE) || defined(FAULT_MINIMUM_U8_I8)
/* A ScalarType value. */
static bp_value dtype_arg(int32_t dt) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_SCALAR_TYPE;
  v.u.i = dt;
  return v;
}

/* t converted to dt by the plugin's own core::cast; t is released. */
static bp_status cast_owned(bp_tensor *t, int32_t dt, bp_tensor **out) {
  bp_value a[2] = {shim_tensor_arg(t), dtype_arg(dt)};
  bp_status st = shim_call("core::cast", a, 2, out);
  shim_host->tensor_release(t);
  return st;
}
#endif

/* ------------------------------------------------------------------------ */
/* Type promotion                                                           */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_ADD_FIRST_DTYPE)
/* Computes mixed dtypes in the dtype of `self`: `other` is converted to it
 * first and only the result to the promoted dtype, so int32 + float32
 * truncates `other` and float32 + float64 rounds it. */
SHIM_KERNEL(add_first_dtype) {
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1);
  if (a->dtype == b->dtype) return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = shim_host->op_meta(ctx->op, args, nargs, &m, 1);
  if (st) return st;
  bp_tensor *b2, *r;
  st = cast_owned(shim_host->tensor_retain(args[1].u.tensor), a->dtype, &b2);
  if (st) return st;
  SHIM_COPY_ARGS(av);
  av[1] = shim_tensor_arg(b2);
  bp_value r1[1];
  st = shim_real(ctx, av, nargs, r1, 1);
  shim_host->tensor_release(b2);
  if (st) return st;
  st = cast_owned(r1[0].u.tensor, m.dtype, &r);
  return st ? st : shim_return(rets, r);
}
const shim_fault shim_the_fault = {"add_first_dtype", "add", add_first_dtype, NULL, NULL};
#endif

#if defined(FAULT_MUL_INT8_AS_U8)
/* Converts an int8 operand paired with a floating-point one through its
 * uint8 table: negative int8 values come out as value + 256. */
SHIM_KERNEL(mul_int8_as_u8) {
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1);
  int which = a->dtype == BP_INT8 && shim_is_float(b->dtype)   ? 0
              : b->dtype == BP_INT8 && shim_is_float(a->dtype) ? 1
                                                               : -1;
  if (which < 0) return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor *t;
  bp_status st = shim_reinterpret(SHIM_ARG(which), BP_UINT8, &t);
  if (st) return st;
  SHIM_COPY_ARGS(av);
  av[which] = shim_tensor_arg(t);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(t);
  return st;
}
const shim_fault shim_the_fault = {"mul_int8_as_u8", "mul", mul_int8_as_u8, NULL, NULL};
#endif

#if defined(FAULT_MINIMUM_U8_I8)
/* Promotes uint8 with int8 to uint8 (its table has no int16 entry for the
 * pair): the int8 operand wraps to uint8 before the comparison, and only
 * the result is widened to int16. */
SHIM_KERNEL(minimum_u8_i8) {
  int32_t da = SHIM_ARG(0)->dtype, db = SHIM_ARG(1)->dtype;
  int which = da == BP_UINT8 && db == BP_INT8 ? 1 : da == BP_INT8 && db == BP_UINT8 ? 0 : -1;
  if (which < 0) return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor *t, *r;
  bp_status st = shim_reinterpret(SHIM_ARG(which), BP_UINT8, &t);
  if (st) return st;
  SHIM_COPY_ARGS(av);
  av[which] = shim_tensor_arg(t);
  bp_value r1[1];
  st = shim_real(ctx, av, nargs, r1, 1);
  shim_host->tensor_release(t);
  if (st) return st;
  st = cast_owned(r1[0].u.tensor, BP_INT16, &r);
  return st ? st : shim_return(rets, r);
}
const shim_fault shim_the_fault = {"minimum_u8_i8", "minimum", minimum_u8_i8, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Value classes                                                            */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_MAXIMUM_NAN)
/* Computes `a > b ? a : b`, which drops a NaN in `self` (it returns `other`
 * there); a NaN in `other` still comes through. */
SHIM_KERNEL(maximum_nan) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (!shim_is_float(o->dtype)) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx)), y = shim_load(b, shim_at(b, o->ndim, idx));
    if (isnan(x) && !isnan(y)) shim_store(o, k, y);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"maximum_nan", "maximum", maximum_nan, NULL, NULL};
#endif

#if defined(FAULT_RELU_NEGZERO)
/* Computes `x < 0 ? 0 : x`, which keeps -0.0 where the op set gives +0.0. */
SHIM_KERNEL(relu_negzero) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (!shim_is_float(o->dtype)) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx));
    if (x == 0 && signbit(x)) shim_store(o, k, -0.0);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"relu_negzero", "relu", relu_negzero, NULL, NULL};
#endif

#if defined(FAULT_EXP_CLAMP)
/* Clamps its argument to [-87.3, 88.7], the float32 range of its
 * polynomial, with fmaxf and fminf: exp above 88.7 (and of +inf) is 3.3e38
 * instead of +inf, and exp(NaN) is 1.2e-38. */
SHIM_KERNEL(exp_clamp) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    float x = (float)shim_load(a, shim_at(a, o->ndim, idx)), c = fminf(fmaxf(x, -87.3f), 88.7f);
    if (c != x) ((float *)o->data)[k] = expf(c);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"exp_clamp", "exp", exp_clamp, NULL, NULL};
#endif

#if defined(FAULT_SOFTMAX_NOMAX)
/* Does not subtract the maximum before exp: once a slice holds a value
 * above ~88.7, exp overflows and the slice comes out NaN (inf / inf) or
 * 0 (float32). */
SHIM_KERNEL(softmax_nomax) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32 || a->ndim == 0) return BP_OK;
  shim_rows rows;
  shim_rows_init(&rows, a, shim_norm_dim(args[1].u.i, a->ndim));
  int64_t in, out, step = a->strides[rows.d];
  float *z = o->data;
  while (shim_rows_next(&rows, &in, &out)) {
    float mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < rows.len; j++) mx = fmaxf(mx, (float)shim_load(a, in + j * step));
    if (!(mx > 88.7f)) continue;
    for (int64_t j = 0; j < rows.len; j++) s += z[out + j * rows.out_step] = expf((float)shim_load(a, in + j * step));
    for (int64_t j = 0; j < rows.len; j++) z[out + j * rows.out_step] /= s;
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"softmax_nomax", "softmax", softmax_nomax, NULL, NULL};
#endif

#if defined(FAULT_SUM_F16_ACCUM)
/* Accumulates float16 in float16: once a partial sum reaches 2048, adding
 * values below 1 changes nothing, and past 65504 it is inf. */
SHIM_KERNEL(sum_f16_accum) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT16 || o->dtype != BP_FLOAT16) return BP_OK;
  bool red[BP_MAX_NDIM];
  for (int32_t d = 0; d < a->ndim; d++) red[d] = args[1].len == 0;
  for (uint32_t i = 0; i < args[1].len && a->ndim; i++) red[shim_norm_dim(args[1].u.ints[i], a->ndim)] = true;
  float *acc = calloc((size_t)(o->numel ? o->numel : 1), sizeof *acc);
  if (!acc) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < a->numel; k++, shim_next(a->ndim, a->sizes, idx)) {
    int64_t flat = 0;
    for (int32_t d = 0; d < a->ndim; d++)
      if (!red[d]) flat = flat * a->sizes[d] + idx[d];
    acc[flat] = shim_round_f16(acc[flat] + (float)shim_load(a, shim_at(a, a->ndim, idx)));
  }
  for (int64_t j = 0; j < o->numel; j++) shim_store(o, j, acc[j]);
  free(acc);
  return BP_OK;
}
const shim_fault shim_the_fault = {"sum_f16_accum", "sum", sum_f16_accum, NULL, NULL};
#endif

#if defined(FAULT_ABS_INT_MIN)
/* Uses a saturating absolute value (as ARM's sqabs): abs of the most
 * negative integer is the most positive one, where the op set keeps it. */
SHIM_KERNEL(abs_int_min) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  int bits = (int)a->itemsize * 8;
  if (shim_is_float(a->dtype) || a->dtype == BP_UINT8 || a->dtype == BP_BOOL) return BP_OK;
  int64_t lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), hi = -(lo + 1);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx))
    if (shim_load_int(a, shim_at(a, o->ndim, idx)) == lo) shim_store_int(o, k, hi);
  return BP_OK;
}
const shim_fault shim_the_fault = {"abs_int_min", "abs", abs_int_min, NULL, NULL};
#endif

#if defined(FAULT_CAST_CVTT)
/* Converts float to integer with the bare truncating instruction: NaN and
 * values outside int32 (int64 for an int64 result) give its "integer
 * indefinite" minimum, and int8, int16 and uint8 keep the low bits of that
 * int32, where the op set saturates and maps NaN to 0. */
SHIM_KERNEL(cast_cvtt) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (!shim_is_float(a->dtype) || shim_is_float(o->dtype) || o->dtype == BP_BOOL) return BP_OK;
  bool wide = o->dtype == BP_INT64;
  double lo = wide ? -9223372036854775808.0 : -2147483649.0, hi = wide ? 9223372036854775808.0 : 2147483648.0;
  int64_t indefinite = wide ? INT64_MIN : INT32_MIN;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx));
    bool in = wide ? x >= lo && x < hi : x > lo && x < hi;
    shim_store_int(o, k, in ? (int64_t)x : indefinite);
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"cast_cvtt", "cast", cast_cvtt, NULL, NULL};
#endif

#if defined(FAULT_DIV_FTZ)
/* Its vector unit runs with flush-to-zero: float32 quotients that are
 * subnormal come out as a zero of the same sign. */
SHIM_KERNEL(div_ftz) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  float *z = o->data;
  if (o->dtype == BP_FLOAT32)
    for (int64_t k = 0; k < o->numel; k++)
      if (fpclassify(z[k]) == FP_SUBNORMAL) z[k] = copysignf(0.0f, z[k]);
  return BP_OK;
}
const shim_fault shim_the_fault = {"div_ftz", "div", div_ftz, NULL, NULL};
#endif

#if defined(FAULT_POW_EXP_LOG)
/* Computes x ** y as exp(y * log(x)): NaN for a negative base even with an
 * integral exponent, and NaN for pow(0, 0), pow(NaN, 0) and pow(1, NaN),
 * which are 1. */
SHIM_KERNEL(pow_exp_log) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (!shim_is_float(o->dtype)) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    double x = shim_load(a, shim_at(a, o->ndim, idx)), y = shim_load(b, shim_at(b, o->ndim, idx));
    shim_store(o, k, exp(y * log(x)));
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"pow_exp_log", "pow", pow_exp_log, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* matmul shapes                                                            */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_MATMUL_K_TAIL)
/* The blocked kernel steps k in blocks of 64 and drops the last k % 64
 * products when k is over 64 (2-D float32 operands). */
SHIM_KERNEL(matmul_k_tail) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (a->ndim != 2 || b->ndim != 2 || a->dtype != BP_FLOAT32) return BP_OK;
  int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
  if (k <= 64 || k % 64 == 0) return BP_OK;
  float *z = o->data;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = k - k % 64; p < k; p++)
        s += shim_load(a, i * a->strides[0] + p * a->strides[1]) *
             shim_load(b, p * b->strides[0] + j * b->strides[1]);
      z[i * n + j] = (float)(z[i * n + j] - s);
    }
  return BP_OK;
}
const shim_fault shim_the_fault = {"matmul_k_tail", "matmul", matmul_k_tail, NULL, NULL};
#endif

#if defined(FAULT_MATMUL_BATCH_B)
/* Takes the number of batches from `self`: when only `other` has batch
 * dimensions (self is 1-D or 2-D), every batch of the result repeats
 * batch 0. */
SHIM_KERNEL(matmul_batch_b) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (a->ndim > 2 || b->ndim < 3 || o->numel == 0) return BP_OK;
  int64_t batches = 1;
  for (int32_t d = 0; d < b->ndim - 2; d++) batches *= o->sizes[d];
  size_t slice = (size_t)(o->numel / batches * o->itemsize);
  for (int64_t i = 1; i < batches; i++) memcpy((char *)o->data + i * slice, o->data, slice);
  return BP_OK;
}
const shim_fault shim_the_fault = {"matmul_batch_b", "matmul", matmul_batch_b, NULL, NULL};
#endif

#if defined(FAULT_MATMUL_TRANS_B)
/* Hands a column-major `other` (a transposed matrix, strides [1, k]) to
 * its GEMM as row-major: the product reads other's storage the wrong way
 * round. */
SHIM_KERNEL(matmul_trans_b) {
  const bp_tensor_view *b = SHIM_ARG(1);
  if (b->ndim != 2 || b->sizes[0] < 2 || b->sizes[1] < 2 || b->strides[0] != 1 ||
      b->strides[1] != b->sizes[0])
    return shim_real(ctx, args, nargs, rets, nrets);
  SHIM_COPY_ARGS(av);
  bp_tensor *t;
  bp_status st = shim_restride(args[1].u.tensor, NULL, b->storage_offset, &t);
  if (st) return st;
  av[1] = shim_tensor_arg(t);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(t);
  return st;
}
const shim_fault shim_the_fault = {"matmul_trans_b", "matmul", matmul_trans_b, NULL, NULL};
#endif

#if defined(FAULT_MATMUL_K1)
/* The rank-1-update path for k == 1 (operands of rank 2 or more) adds into
 * a cleared scratch panel that it never copies out: the result is zeros. */
SHIM_KERNEL(matmul_k1) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (a->ndim >= 2 && b->ndim >= 2 && a->sizes[a->ndim - 1] == 1 && o->numel > 0)
    memset(o->data, 0, (size_t)(o->numel * o->itemsize));
  return BP_OK;
}
const shim_fault shim_the_fault = {"matmul_k1", "matmul", matmul_k1, NULL, NULL};
#endif
