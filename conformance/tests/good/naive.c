/*
 * conformance/tests/good/naive.c - a correct plugin written as plainly as
 * it can be, as a check that the certifier accepts more than the
 * reference CPU plugin's way of doing things.
 *
 * It claims no core op set (op_set_version 0) and implements 14 core ops
 * for BP_DEVICE_CPU: add, sub, mul, div, maximum, minimum, neg, abs, relu,
 * where, sum, amax, matmul and cast, for every dtype the op set allows for
 * each (declared).  Every kernel sizes its result with host->op_meta (a
 * contiguous tensor), walks it one element at a time over any input
 * strides with NumPy broadcasting, computes in double (integers in 64-bit
 * wrapping arithmetic) and rounds once to the result dtype.  Rounding is
 * its own round-to-nearest-even on the significand, with subnormals and
 * overflow, so float16 and bfloat16 need no compiler support.  For the
 * ops the op set defines as correctly rounded this is bit for bit what
 * the op set says: double holds the exact product or sum of two float32
 * values, and rounding twice through double is innocuous for float32 and
 * narrower.  Conversions follow `cast`: float to integer truncates and
 * saturates (NaN gives 0), integers wrap, and int64 to a narrow float
 * rounds once (through double rounded to odd).
 *
 * It also defines an op of its own, naive::axpby(Tensor a, Tensor b, float
 * alpha) -> Tensor (a + alpha * b, a and b of one shape and float dtype),
 * with a CPU kernel and a composite over core::add, as a vendor registers
 * both: bp-certify checks the kernel against the composite.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

enum op { ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, NEG, ABS, RELU, WHERE, SUM, AMAX, MATMUL, CAST };

/* ------------------------------------------------------------------------ */
/* Dtypes and rounding                                                      */
/* ------------------------------------------------------------------------ */

static bool is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

/* x rounded to an integer, ties to even (for |x| < 2^52). */
static double rint_even(double x) {
  double r = floor(x), d = x - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0)) r += 1;
  return r;
}

/* v rounded to nearest-even with p significant bits, for a format whose
 * normal numbers have frexp exponents emin .. emax - 1 (subnormals below,
 * infinity from 2^emax on). */
static double round_p(double v, int p, int emin, int emax) {
  if (v == 0 || isnan(v) || isinf(v)) return v;
  int e;
  frexp(v, &e);
  int q = (e < emin ? emin : e) - p; /* the exponent of the last place */
  double r = ldexp(rint_even(ldexp(fabs(v), -q)), q);
  return copysign(r >= ldexp(1.0, emax) ? INFINITY : r, v);
}

/* v rounded to a float dtype. */
static double round_to(int32_t dt, double v) {
  switch (dt) {
    case BP_FLOAT32: return round_p(v, 24, -125, 128);
    case BP_FLOAT16: return round_p(v, 11, -13, 16);
    case BP_BFLOAT16: return round_p(v, 8, -125, 128);
    default: return v;
  }
}

/* An int64 as a double rounded to odd: rounding that once more to 24 bits
 * or fewer gives the correctly rounded value. */
static double int_odd(int64_t x) {
  uint64_t m = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  if (m < ((uint64_t)1 << 53)) return (double)x;
  int shift = 11 - __builtin_clzll(m);
  uint64_t kept = m >> shift;
  if (m & (((uint64_t)1 << shift) - 1)) kept |= 1;
  double d = ldexp((double)kept, shift);
  return x < 0 ? -d : d;
}

static double int_to_float(int32_t dt, int64_t x) {
  return dt == BP_FLOAT64 ? (double)x : round_to(dt, int_odd(x));
}

/* The range of an integer dtype. */
static void int_range(int32_t dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case BP_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case BP_INT16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case BP_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case BP_UINT8: *lo = 0, *hi = UINT8_MAX; break;
    case BP_BOOL: *lo = 0, *hi = 1; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
  }
}

/* `cast` from a float to an integer dtype or bool. */
static int64_t float_to_int(int32_t dt, double v) {
  if (dt == BP_BOOL) return v != 0;
  if (isnan(v)) return 0;
  int64_t lo, hi;
  int_range(dt, &lo, &hi);
  double t = trunc(v);
  if (t <= (double)lo) return lo;
  if (dt == BP_INT64 ? t >= 9223372036854775808.0 : t >= (double)hi) return hi;
  return (int64_t)t;
}

/* ------------------------------------------------------------------------ */
/* Elements                                                                 */
/* ------------------------------------------------------------------------ */

static double f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

/* The bits of a float16 value (r already rounded to float16). */
static uint16_t f16_bits(double r) {
  uint16_t s = signbit(r) ? 0x8000 : 0;
  double a = fabs(r);
  if (isnan(r)) return s | 0x7e00;
  if (isinf(a)) return s | 0x7c00;
  if (a < ldexp(1.0, -14)) return s | (uint16_t)ldexp(a, 24); /* subnormal or 0 */
  int e;
  double m = frexp(a, &e);
  return s | (uint16_t)((e + 14) << 10) | (uint16_t)ldexp(m * 2 - 1, 10);
}

static double bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t bf16_bits(double r) {
  float f = (float)r; /* exact: r is a bfloat16 value */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return isnan(r) ? (uint16_t)((u >> 16) | 0x40) : (uint16_t)(u >> 16);
}

static const void *at(const bp_tensor_view *v, int64_t off) {
  return (const char *)v->data + off * v->itemsize;
}

/* An element of a float dtype, or of an integer dtype or bool. */
static double get_f(const bp_tensor_view *v, int64_t off) {
  const void *p = at(v, off);
  switch (v->dtype) {
    case BP_FLOAT32: return *(const float *)p;
    case BP_FLOAT64: return *(const double *)p;
    case BP_FLOAT16: return f16_value(*(const uint16_t *)p);
    default: return bf16_value(*(const uint16_t *)p);
  }
}

static int64_t get_i(const bp_tensor_view *v, int64_t off) {
  const void *p = at(v, off);
  switch (v->dtype) {
    case BP_INT8: return *(const int8_t *)p;
    case BP_INT16: return *(const int16_t *)p;
    case BP_INT32: return *(const int32_t *)p;
    case BP_INT64: return *(const int64_t *)p;
    case BP_UINT8: return *(const uint8_t *)p;
    default: return *(const uint8_t *)p != 0; /* bool */
  }
}

/* An element converted to a float dtype, and to an integer dtype or bool,
 * as `cast` converts. */
static double to_float(int32_t dt, const bp_tensor_view *v, int64_t off) {
  return is_float(v->dtype) ? round_to(dt, get_f(v, off)) : int_to_float(dt, get_i(v, off));
}

static int64_t to_int(int32_t dt, const bp_tensor_view *v, int64_t off) {
  if (is_float(v->dtype)) return float_to_int(dt, get_f(v, off));
  int64_t x = get_i(v, off);
  return dt == BP_BOOL ? x != 0 : x;
}

/* Stores a value of the element's float dtype (already rounded to it). */
static void put_f(const bp_tensor_view *v, int64_t k, double r) {
  void *p = (char *)v->data + k * v->itemsize;
  switch (v->dtype) {
    case BP_FLOAT32: *(float *)p = (float)r; break;
    case BP_FLOAT64: *(double *)p = r; break;
    case BP_FLOAT16: *(uint16_t *)p = f16_bits(r); break;
    default: *(uint16_t *)p = bf16_bits(r); break;
  }
}

/* Stores an integer, wrapped to the element's dtype (bool: != 0). */
static void put_i(const bp_tensor_view *v, int64_t k, int64_t x) {
  void *p = (char *)v->data + k * v->itemsize;
  uint64_t u = (uint64_t)x;
  switch (v->dtype) {
    case BP_INT8: *(uint8_t *)p = (uint8_t)u; break;
    case BP_INT16: *(uint16_t *)p = (uint16_t)u; break;
    case BP_INT32: *(uint32_t *)p = (uint32_t)u; break;
    case BP_INT64: *(int64_t *)p = x; break;
    case BP_UINT8: *(uint8_t *)p = (uint8_t)u; break;
    default: *(uint8_t *)p = x != 0; break;
  }
}

/* The next row-major index of a shape. */
static void next(int32_t ndim, const int64_t *sizes, int64_t *idx) {
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) return;
    idx[d] = 0;
  }
}

/* The offset in v of the element at index idx of an n-dim result that v
 * broadcasts to. */
static int64_t bcast(const bp_tensor_view *v, int32_t n, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < v->ndim; d++)
    if (v->sizes[d] != 1) off += idx[d + n - v->ndim] * v->strides[d];
  return off;
}

static const bp_tensor_view *view(const bp_value *v) { return H->tensor_view(v->u.tensor); }

/* The result, as the op's meta function shapes it. */
static bp_status result(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                        bp_tensor **out, const bp_tensor_view **ov) {
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = H->op_meta(ctx->op, args, nargs, &m, 1);
  if (!st) st = H->tensor_empty_strided(m.device, m.dtype, m.ndim, m.sizes, m.strides, out);
  if (!st) *ov = H->tensor_view(*out);
  return st;
}

static bp_status ret(bp_value *rets, bp_tensor *t) {
  memset(rets, 0, sizeof *rets);
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = t;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

static double float_op(int op, double x, double y, double alpha) {
  switch (op) {
    case ADD: return x + alpha * y;
    case SUB: return x - alpha * y;
    case MUL: return x * y;
    case DIV: return x / y;
    case MAXIMUM: return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    default: return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
  }
}

static int64_t int_op(int op, int64_t x, int64_t y, int64_t alpha) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y, ua = (uint64_t)alpha;
  switch (op) {
    case ADD: return (int64_t)(ux + ua * uy);
    case SUB: return (int64_t)(ux - ua * uy);
    case MUL: return (int64_t)(ux * uy);
    case MAXIMUM: return x > y ? x : y;
    default: return x < y ? x : y;
  }
}

/* add, sub, mul, div, maximum, minimum. */
static bp_status k_binary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nrets;
  int op = (int)(intptr_t)ctx->user_data;
  bp_tensor *out;
  const bp_tensor_view *o, *a = view(&args[0]), *b = view(&args[1]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  int32_t dt = o->dtype;
  double alpha = op == ADD || op == SUB ? args[2].u.f : 1.0;
  /* alpha in the computation's type: float32 for the narrow floats */
  double falpha = dt == BP_FLOAT64 ? alpha : round_to(BP_FLOAT32, alpha);
  int64_t ialpha = is_float(dt) ? 0 : float_to_int(dt, alpha);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, next(o->ndim, o->sizes, idx)) {
    int64_t ia = bcast(a, o->ndim, idx), ib = bcast(b, o->ndim, idx);
    if (is_float(dt)) {
      double r = float_op(op, to_float(dt, a, ia), to_float(dt, b, ib), falpha);
      put_f(o, k, round_to(dt, r));
    } else if (dt == BP_BOOL) { /* add and maximum are or, mul and minimum and */
      bool x = get_i(a, ia), y = get_i(b, ib);
      put_i(o, k, op == ADD || op == MAXIMUM ? x || y : x && y);
    } else {
      put_i(o, k, int_op(op, to_int(dt, a, ia), to_int(dt, b, ib), ialpha));
    }
  }
  return ret(rets, out);
}

/* neg, abs, relu: the result has the input's dtype. */
static bp_status k_unary(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                         bp_value *rets, size_t nrets) {
  (void)nrets;
  int op = (int)(intptr_t)ctx->user_data;
  bp_tensor *out;
  const bp_tensor_view *o, *a = view(&args[0]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, next(o->ndim, o->sizes, idx)) {
    int64_t off = bcast(a, o->ndim, idx);
    if (is_float(o->dtype)) {
      double x = get_f(a, off);
      put_f(o, k, op == NEG ? -x : op == ABS ? fabs(x) : isnan(x) || x > 0 ? x : 0.0);
    } else {
      int64_t x = get_i(a, off);
      int64_t negx = (int64_t)(0 - (uint64_t)x); /* wraps: the minimum maps to itself */
      put_i(o, k, op == NEG ? negx : op == ABS ? (x < 0 ? negx : x) : x > 0 ? x : 0);
    }
  }
  return ret(rets, out);
}

/* where(condition, self, other). */
static bp_status k_where(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                         bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  const bp_tensor_view *o, *c = view(&args[0]), *a = view(&args[1]), *b = view(&args[2]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, next(o->ndim, o->sizes, idx)) {
    const bp_tensor_view *src = get_i(c, bcast(c, o->ndim, idx)) ? a : b;
    int64_t off = bcast(src, o->ndim, idx);
    if (is_float(o->dtype)) put_f(o, k, to_float(o->dtype, src, off));
    else put_i(o, k, to_int(o->dtype, src, off));
  }
  return ret(rets, out);
}

/* sum and amax over a dim list (empty: every dim). */
static bp_status k_reduce(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nrets;
  int op = (int)(intptr_t)ctx->user_data;
  bp_tensor *out;
  const bp_tensor_view *o, *a = view(&args[0]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  bool red[BP_MAX_NDIM];
  for (int32_t d = 0; d < a->ndim; d++) red[d] = args[1].len == 0;
  for (uint32_t i = 0; i < args[1].len && a->ndim > 0; i++) {
    int64_t d = args[1].u.ints[i];
    red[d < 0 ? d + a->ndim : d] = true;
  }
  int32_t dt = o->dtype;
  size_t n = (size_t)(o->numel ? o->numel : 1);
  double *facc = calloc(n, sizeof *facc);
  int64_t *iacc = calloc(n, sizeof *iacc);
  bool *seen = calloc(n, sizeof *seen);
  if (!facc || !iacc || !seen) {
    free(facc), free(iacc), free(seen);
    H->tensor_release(out);
    return H->set_errorf(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->op_name);
  }
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < a->numel; k++, next(a->ndim, a->sizes, idx)) {
    int64_t j = 0, off = bcast(a, a->ndim, idx);
    for (int32_t d = 0; d < a->ndim; d++)
      if (!red[d]) j = j * a->sizes[d] + idx[d];
    if (op == SUM && is_float(dt)) { /* sum converts its input to the result dtype first */
      facc[j] += to_float(dt, a, off);
    } else if (op == SUM) {
      iacc[j] = (int64_t)((uint64_t)iacc[j] + (uint64_t)to_int(dt, a, off));
    } else if (is_float(dt)) { /* amax: NaN sticks */
      double v = get_f(a, off);
      if (!seen[j] || isnan(v) || (!isnan(facc[j]) && v > facc[j])) facc[j] = v;
    } else {
      int64_t v = get_i(a, off);
      if (!seen[j] || v > iacc[j]) iacc[j] = v;
    }
    seen[j] = true;
  }
  for (int64_t j = 0; j < o->numel; j++) {
    if (is_float(dt)) put_f(o, j, round_to(dt, facc[j]));
    else put_i(o, j, iacc[j]);
  }
  free(facc), free(iacc), free(seen);
  return ret(rets, out);
}

/* matmul: batch dims broadcast; a 1-D self is a row, a 1-D other a column. */
static bp_status k_matmul(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  const bp_tensor_view *o, *a = view(&args[0]), *b = view(&args[1]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  int32_t na = a->ndim, nb = b->ndim;
  int64_t k = a->sizes[na - 1];
  int64_t ak = a->strides[na - 1], bk = nb >= 2 ? b->strides[nb - 2] : b->strides[0];
  int32_t nbatch = o->ndim - (na >= 2) - (nb >= 2);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t e = 0; e < o->numel; e++, next(o->ndim, o->sizes, idx)) {
    int64_t offa = 0, offb = 0;
    for (int32_t d = 0; d < na - 2; d++)
      if (a->sizes[d] != 1) offa += idx[d + nbatch - (na - 2)] * a->strides[d];
    for (int32_t d = 0; d < nb - 2; d++)
      if (b->sizes[d] != 1) offb += idx[d + nbatch - (nb - 2)] * b->strides[d];
    if (na >= 2) offa += idx[nbatch] * a->strides[na - 2];
    if (nb >= 2) offb += idx[o->ndim - 1] * b->strides[nb - 1];
    double s = 0;
    for (int64_t p = 0; p < k; p++) s += get_f(a, offa + p * ak) * get_f(b, offb + p * bk);
    put_f(o, e, round_to(o->dtype, s));
  }
  return ret(rets, out);
}

static bp_status k_cast(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                        bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  const bp_tensor_view *o, *a = view(&args[0]);
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, next(o->ndim, o->sizes, idx)) {
    int64_t off = bcast(a, o->ndim, idx);
    if (is_float(o->dtype)) put_f(o, k, to_float(o->dtype, a, off));
    else put_i(o, k, to_int(o->dtype, a, off));
  }
  return ret(rets, out);
}

/* ------------------------------------------------------------------------ */
/* naive::axpby, an op of its own                                           */
/* ------------------------------------------------------------------------ */

static bp_status axpby_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = view(&args[0]), *b = view(&args[1]);
  if (a->dtype != b->dtype || (a->dtype != BP_FLOAT32 && a->dtype != BP_FLOAT64))
    return H->set_errorf(BP_ERR_TYPE, "%s: a and b must be both float32 or both float64",
                         ctx->op_name);
  if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof *a->sizes) != 0)
    return H->set_errorf(BP_ERR_SHAPE, "%s: argument #1 'b' must have a's shape", ctx->op_name);
  outs[0].device = a->device;
  outs[0].dtype = a->dtype;
  outs[0].ndim = a->ndim;
  int64_t st = 1;
  for (int32_t d = a->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = a->sizes[d];
    outs[0].strides[d] = st;
    st *= a->sizes[d];
  }
  return BP_OK;
}

/* a + alpha * b in double, rounded once: core::add's rule. */
static bp_status axpby_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out;
  const bp_tensor_view *o;
  bp_status st = result(ctx, args, nargs, &out, &o);
  if (st) return st;
  const bp_tensor_view *a = view(&args[0]), *b = view(&args[1]);
  double alpha = o->dtype == BP_FLOAT32 ? (double)(float)args[2].u.f : args[2].u.f;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, next(o->ndim, o->sizes, idx))
    put_f(o, k, get_f(a, bcast(a, o->ndim, idx)) + alpha * get_f(b, bcast(b, o->ndim, idx)));
  return ret(rets, out);
}

/* The composite, for a device without the kernel: core::add(a, b, alpha). */
static bp_status axpby_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  const bp_op *add;
  bp_status st = H->op_find("core::add", &add);
  if (st) return st;
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  memcpy(slots, args, 3 * sizeof *args);
  s.top = 3;
  st = H->call(add, &s);
  if (st) return st;
  rets[0] = slots[0];
  return BP_OK;
}

static bp_status def_axpby(bp_registrar *reg) {
  static const int32_t f[] = {BP_FLOAT32, BP_FLOAT64, BP_DTYPE_INVALID};
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "naive", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = H->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "axpby(Tensor a, Tensor b, float alpha) -> Tensor";
  d.meta = axpby_meta;
  d.composite = axpby_composite;
  d.doc = "a + alpha * b";
  st = H->def(lib, &d);
  if (st) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "axpby";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = axpby_kernel;
  k.dtypes = f;
  return H->impl(lib, &k);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

#define FLOATS BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16
#define INTS BP_INT8, BP_INT16, BP_INT32, BP_INT64, BP_UINT8
static const int32_t all_dtypes[] = {FLOATS, INTS, BP_BOOL, BP_DTYPE_INVALID};
static const int32_t no_bool[] = {FLOATS, INTS, BP_DTYPE_INVALID};
static const int32_t floats[] = {FLOATS, BP_DTYPE_INVALID};

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  static const struct {
    const char *op;
    bp_boxed_kernel fn;
    int code;
    const int32_t *dtypes;
  } ops[] = {
      {"add", k_binary, ADD, all_dtypes},     {"sub", k_binary, SUB, no_bool},
      {"mul", k_binary, MUL, all_dtypes},     {"div", k_binary, DIV, all_dtypes},
      {"maximum", k_binary, MAXIMUM, all_dtypes}, {"minimum", k_binary, MINIMUM, all_dtypes},
      {"neg", k_unary, NEG, no_bool},         {"abs", k_unary, ABS, no_bool},
      {"relu", k_unary, RELU, no_bool},       {"where", k_where, WHERE, all_dtypes},
      {"sum", k_reduce, SUM, all_dtypes},     {"amax", k_reduce, AMAX, all_dtypes},
      {"matmul", k_matmul, MATMUL, floats},   {"cast", k_cast, CAST, all_dtypes},
  };
  if (!BP_HOST_HAS(host, op_meta))
    return host->set_error(BP_ERR_VERSION, "naive: the host lacks op_meta, which the kernels need");
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  for (size_t i = 0; !st && i < sizeof ops / sizeof *ops; i++) {
    bp_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = ops[i].op;
    k.device_type = BP_DEVICE_CPU;
    k.boxed = ops[i].fn;
    k.user_data = (void *)(intptr_t)ops[i].code;
    k.dtypes = ops[i].dtypes;
    st = host->impl(lib, &k);
  }
  if (!st) st = def_axpby(reg);
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "naive",
    .vendor = "Backplane tests (correct plugins)",
    .version = "1.0.0",
    .op_set_version = 0,
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  if (!host || host->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  H = host;
  return &desc;
}
