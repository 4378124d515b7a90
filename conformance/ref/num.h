/*
 * conformance/ref/num.h - scalar arithmetic of the op set's dtypes, written from
 * docs/op-set.md alone: promotion, rounding to float16/bfloat16/float32,
 * integer wraparound, the saturating float-to-integer conversion of `cast`,
 * element loads and stores, and the tolerance table.
 *
 * The reference implementation (ref.c) and the harness (harness.c) build on
 * these; nothing here knows about the CPU plugin.
 */
#ifndef BP_TESTS_CPU_NUM_H
#define BP_TESTS_CPU_NUM_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/host.h>

/* Every dtype the op set covers, floats first. */
#define NUM_DTYPES 10
extern const int32_t all_dtypes[NUM_DTYPES];

/* The four float dtypes, and the five integer dtypes (bool excluded). */
extern const int32_t float_dtypes[4];
extern const int32_t int_dtypes[5];

bool dt_is_float(int32_t dt);
bool dt_is_int(int32_t dt); /* an integer dtype, not bool */
const char *dt_name(int32_t dt);

/* The promotion of the spec's "Type promotion" paragraph. */
int32_t dt_promote(int32_t a, int32_t b);

/* The range of an integer dtype (bool: 0 .. 1). */
int64_t dt_min(int32_t dt);
int64_t dt_max(int32_t dt);

/* v rounded to a float dtype, to nearest-even, overflowing to +-inf, with
 * subnormals; float64 returns v. */
double round_to(int32_t dt, double v);

/* v wrapped into an integer dtype (two's complement); bool gives v != 0. */
int64_t wrap_int(int32_t dt, int64_t v);

/* `cast` from a float value to an integer or bool dtype: truncation toward
 * zero, saturation at the range, NaN to 0; to bool, v != 0 (NaN is true). */
int64_t float_to_int(int32_t dt, double v);

/* float16 and bfloat16 bit patterns. */
uint16_t f16_bits(double v); /* rounds as round_to(BP_FLOAT16, v) */
double f16_value(uint16_t h);
uint16_t bf16_bits(double v); /* rounds as round_to(BP_BFLOAT16, v) */
double bf16_value(uint16_t h);

/* One element at p.  load_f/store_f are for float dtypes, load_i/store_i
 * for integer and bool dtypes; stores round (floats) or wrap (integers). */
double load_f(const void *p, int32_t dt);
int64_t load_i(const void *p, int32_t dt);
void store_f(void *p, int32_t dt, double v);
void store_i(void *p, int32_t dt, int64_t v);

/* NaN payloads.  A NaN of float dtype dt with bit pattern `bits` (sign,
 * quiet bit and payload, which may be a signalling NaN) as a double that
 * store_f writes back as exactly those bits: the payload sits in the
 * double's top mantissa bits.  Such a double must only be copied, never
 * computed with (arithmetic quiets a signalling NaN).  store_f writes any
 * other NaN as dt's NaN with the double's top payload bits (the canonical
 * quiet NaN for the canonical double one). */
double nan_with_bits(int32_t dt, uint64_t bits);
/* Whether v is a NaN, by its bits (no floating-point operation). */
bool is_nan_bits(double v);

/* The spacing of float dtype dt's values at |v|: one unit in the last
 * place (the smallest normal's for subnormals and 0; inf for inf). */
double dt_ulp(int32_t dt, double v);

/* The spec's tolerance for a float dtype (0 and 0 for the exact ones). */
void dt_tolerance(int32_t dt, double *rtol, double *atol);

#endif /* BP_TESTS_CPU_NUM_H */
