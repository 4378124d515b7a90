/* conformance/ref/num.c - see num.h. */
#include "num.h"

#include <math.h>
#include <string.h>

const int32_t all_dtypes[NUM_DTYPES] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16, BP_INT8,
                                        BP_INT16,   BP_INT32,   BP_INT64,   BP_UINT8,    BP_BOOL};
const int32_t float_dtypes[4] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16};
const int32_t int_dtypes[5] = {BP_INT8, BP_INT16, BP_INT32, BP_INT64, BP_UINT8};

bool dt_is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

bool dt_is_int(int32_t dt) {
  return dt == BP_INT8 || dt == BP_INT16 || dt == BP_INT32 || dt == BP_INT64 || dt == BP_UINT8;
}

const char *dt_name(int32_t dt) {
  const char *n = bp_dtype_name(dt);
  return n ? n : "?";
}

/* Bits of an integer or float dtype, for "the wider one". */
static int width(int32_t dt) {
  switch (dt) {
    case BP_INT8:
    case BP_UINT8:
    case BP_BOOL: return 8;
    case BP_INT16:
    case BP_FLOAT16:
    case BP_BFLOAT16: return 16;
    case BP_INT32:
    case BP_FLOAT32: return 32;
    default: return 64;
  }
}

int32_t dt_promote(int32_t a, int32_t b) {
  if (a == b) return a;
  /* bool < integers < floats: the higher category wins outright. */
  int ca = a == BP_BOOL ? 0 : dt_is_int(a) ? 1 : 2;
  int cb = b == BP_BOOL ? 0 : dt_is_int(b) ? 1 : 2;
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    bool ha = width(a) == 16, hb = width(b) == 16;
    if (ha && hb) return BP_FLOAT32; /* float16 with bfloat16 */
    return width(a) >= width(b) ? a : b;
  }
  /* Two different integers. */
  if (a == BP_UINT8 || b == BP_UINT8) {
    int32_t other = a == BP_UINT8 ? b : a;
    return (other == BP_INT8 || other == BP_INT16) ? BP_INT16 : other;
  }
  return width(a) >= width(b) ? a : b;
}

int64_t dt_min(int32_t dt) {
  switch (dt) {
    case BP_INT8: return INT8_MIN;
    case BP_INT16: return INT16_MIN;
    case BP_INT32: return INT32_MIN;
    case BP_INT64: return INT64_MIN;
    default: return 0;
  }
}

int64_t dt_max(int32_t dt) {
  switch (dt) {
    case BP_INT8: return INT8_MAX;
    case BP_INT16: return INT16_MAX;
    case BP_INT32: return INT32_MAX;
    case BP_INT64: return INT64_MAX;
    case BP_UINT8: return UINT8_MAX;
    default: return 1;
  }
}

/* Rounds v to a binary format with `p` significand bits (the implicit one
 * included), smallest normal exponent emin and largest exponent emax.  The
 * scaling by a power of two is exact, so nearbyint() (round to nearest-even
 * in the default mode) does the only rounding. */
static double round_fmt(double v, int p, int emin, int emax) {
  if (isnan(v) || isinf(v) || v == 0) return v;
  double a = fabs(v);
  int ex;
  frexp(a, &ex);
  int e = ex - 1;         /* a is in [2^e, 2^(e+1)) */
  if (e < emin) e = emin; /* subnormal: the quantum stops shrinking */
  double q = ldexp(1.0, e - (p - 1));
  double r = nearbyint(a / q) * q;
  double maxf = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
  if (r > maxf) r = INFINITY;
  return copysign(r, v);
}

double round_to(int32_t dt, double v) {
  switch (dt) {
    case BP_FLOAT32: return round_fmt(v, 24, -126, 127);
    case BP_FLOAT16: return round_fmt(v, 11, -14, 15);
    case BP_BFLOAT16: return round_fmt(v, 8, -126, 127);
    default: return v;
  }
}

int64_t wrap_int(int32_t dt, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (dt) {
    case BP_BOOL: return v != 0;
    case BP_UINT8: return (int64_t)(u & 0xffu);
    case BP_INT8: return (int64_t)(u & 0x80u ? (int64_t)(u & 0xffu) - 0x100 : (int64_t)(u & 0xffu));
    case BP_INT16:
      return (int64_t)(u & 0x8000u ? (int64_t)(u & 0xffffu) - 0x10000 : (int64_t)(u & 0xffffu));
    case BP_INT32:
      return u & 0x80000000u ? (int64_t)(u & 0xffffffffu) - (int64_t)0x100000000
                             : (int64_t)(u & 0xffffffffu);
    default: return v;
  }
}

int64_t float_to_int(int32_t dt, double v) {
  if (dt == BP_BOOL) return v != 0 || isnan(v);
  if (isnan(v)) return 0;
  double t = trunc(v);
  if (dt == BP_INT64) {
    /* 2^63 is the first double past INT64_MAX; -2^63 is INT64_MIN itself. */
    if (t >= 9223372036854775808.0) return INT64_MAX;
    if (t < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)t;
  }
  if (t > (double)dt_max(dt)) return dt_max(dt);
  if (t < (double)dt_min(dt)) return dt_min(dt);
  return (int64_t)t;
}

uint16_t f16_bits(double v) {
  double r = round_to(BP_FLOAT16, v);
  uint16_t sign = signbit(r) ? 0x8000u : 0;
  if (isnan(r)) return (uint16_t)(sign | 0x7e00u);
  double a = fabs(r);
  if (isinf(a)) return (uint16_t)(sign | 0x7c00u);
  if (a < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)(a * ldexp(1.0, 24)));
  int ex;
  frexp(a, &ex);
  int e = ex - 1;
  uint16_t m = (uint16_t)(a * ldexp(1.0, 10 - e) - 1024.0);
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | m);
}

double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double a;
  if (e == 0x1f)
    a = m ? NAN : INFINITY;
  else if (e == 0)
    a = ldexp((double)m, -24);
  else
    a = ldexp((double)(m | 0x400), e - 25);
  return h & 0x8000u ? -a : a;
}

uint16_t bf16_bits(double v) {
  double r = round_to(BP_BFLOAT16, v);
  if (isnan(r)) return (uint16_t)(signbit(r) ? 0xffc0u : 0x7fc0u);
  float f = (float)r; /* exact: a bfloat16 value is a float32 value */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

double bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

double load_f(const void *p, int32_t dt) {
  switch (dt) {
    case BP_FLOAT32: {
      float f;
      memcpy(&f, p, 4);
      return f;
    }
    case BP_FLOAT64: {
      double d;
      memcpy(&d, p, 8);
      return d;
    }
    case BP_FLOAT16: {
      uint16_t h;
      memcpy(&h, p, 2);
      return f16_value(h);
    }
    default: {
      uint16_t h;
      memcpy(&h, p, 2);
      return bf16_value(h);
    }
  }
}

int64_t load_i(const void *p, int32_t dt) {
  switch (dt) {
    case BP_INT8: return *(const int8_t *)p;
    case BP_UINT8: return *(const uint8_t *)p;
    case BP_BOOL: return *(const uint8_t *)p;
    case BP_INT16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case BP_INT32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

/* The mantissa bits of float dtype dt. */
static int mant_bits(int32_t dt) {
  switch (dt) {
    case BP_FLOAT64: return 52;
    case BP_FLOAT16: return 10;
    case BP_BFLOAT16: return 7;
    default: return 23;
  }
}

bool is_nan_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}

double nan_with_bits(int32_t dt, uint64_t bits) {
  int m = mant_bits(dt), w = dt == BP_FLOAT64 ? 64 : dt == BP_FLOAT32 ? 32 : 16;
  uint64_t mant = bits & (((uint64_t)1 << m) - 1);
  uint64_t sign = (bits >> (w - 1)) & 1;
  if (mant == 0) mant = (uint64_t)1 << (m - 1); /* not a NaN pattern: the quiet one */
  uint64_t u = sign << 63 | 0x7ff0000000000000ull | mant << (52 - m);
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* dt's bits of NaN v (see nan_with_bits). */
static uint64_t nan_bits_of(int32_t dt, double v) {
  int m = mant_bits(dt), w = dt == BP_FLOAT64 ? 64 : dt == BP_FLOAT32 ? 32 : 16;
  uint64_t u;
  memcpy(&u, &v, 8);
  uint64_t mant = (u & 0x000fffffffffffffull) >> (52 - m);
  if (mant == 0) mant = (uint64_t)1 << (m - 1);
  uint64_t exp = (((uint64_t)1 << (w - 1 - m)) - 1) << m;
  return (u >> 63) << (w - 1) | exp | mant;
}

void store_f(void *p, int32_t dt, double v) {
  if (is_nan_bits(v)) {
    uint64_t b = nan_bits_of(dt, v);
    if (dt == BP_FLOAT64) {
      memcpy(p, &v, 8);
    } else if (dt == BP_FLOAT32) {
      uint32_t b32 = (uint32_t)b;
      memcpy(p, &b32, 4);
    } else {
      uint16_t b16 = (uint16_t)b;
      memcpy(p, &b16, 2);
    }
    return;
  }
  switch (dt) {
    case BP_FLOAT32: {
      float f = (float)round_to(BP_FLOAT32, v);
      memcpy(p, &f, 4);
      break;
    }
    case BP_FLOAT64: memcpy(p, &v, 8); break;
    case BP_FLOAT16: {
      uint16_t h = f16_bits(v);
      memcpy(p, &h, 2);
      break;
    }
    default: {
      uint16_t h = bf16_bits(v);
      memcpy(p, &h, 2);
      break;
    }
  }
}

void store_i(void *p, int32_t dt, int64_t v) {
  v = wrap_int(dt, v);
  switch (dt) {
    case BP_INT8: *(int8_t *)p = (int8_t)v; break;
    case BP_UINT8:
    case BP_BOOL: *(uint8_t *)p = (uint8_t)v; break;
    case BP_INT16: {
      int16_t x = (int16_t)v;
      memcpy(p, &x, 2);
      break;
    }
    case BP_INT32: {
      int32_t x = (int32_t)v;
      memcpy(p, &x, 4);
      break;
    }
    default: memcpy(p, &v, 8); break;
  }
}

double dt_ulp(int32_t dt, double v) {
  int p = dt == BP_FLOAT64 ? 53 : dt == BP_FLOAT16 ? 11 : dt == BP_BFLOAT16 ? 8 : 24;
  int emin = dt == BP_FLOAT64 ? -1021 : dt == BP_FLOAT16 ? -13 : -125; /* frexp's exponent */
  v = fabs(v);
  if (!isfinite(v)) return INFINITY;
  int e;
  frexp(v, &e);
  if (v == 0 || e < emin) e = emin;
  return ldexp(1.0, e - p);
}

void dt_tolerance(int32_t dt, double *rtol, double *atol) {
  switch (dt) {
    case BP_FLOAT32:
      *rtol = 1.3e-6;
      *atol = 1e-5;
      break;
    case BP_FLOAT64:
      *rtol = 1e-7;
      *atol = 1e-7;
      break;
    case BP_FLOAT16:
      *rtol = 1e-3;
      *atol = 1e-5;
      break;
    case BP_BFLOAT16:
      *rtol = 1.6e-2;
      *atol = 1e-5;
      break;
    default:
      *rtol = 0;
      *atol = 0;
      break;
  }
}
