/*
 * tests/cpu/cases.h - small helpers for writing the CPU plugin's test
 * cases: trial seeds, literal arrays, one-line checked calls, zero tensors,
 * and tensors on the "good" test plugin's device.
 */
#ifndef BP_TESTS_CPU_CASES_H
#define BP_TESTS_CPU_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Tables of cases.  A table is a macro whose rows are X(fn, name, args...):
 *
 *     #define UNARY_CASES(X, fn) \
 *       X(fn, unary_float32, BP_FLOAT32, 40, 0x0a000000) \
 *       X(fn, unary_float64, BP_FLOAT64, 30, 0x0a100000)
 *     UNARY_CASES(DEFINE_CASE, unary_dtype)
 *
 * defines one case per row, `static void unary_float32(void)` calling
 * unary_dtype(BP_FLOAT32, 40, 0x0a000000); UNARY_CASES(LIST_CASE, _) in
 * main's array of tap_case lists them, each a TAP point of its own.
 */
#define DEFINE_CASE(fn, name, ...) \
  static void name(void) { fn(__VA_ARGS__); }
#define LIST_CASE(fn, name, ...) TAP_CASE(name),

/* A trial's seed from its case's base seed and its number. */
uint64_t trial_seed(uint64_t base, int64_t trial);

/* Small literal arrays for hand-worked cases: v holds the logical
 * elements, rounded to dt (lit_f) or wrapped into it (lit_i).  Owned. */
rt *lit_f(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v);
rt *lit_i(int32_t dt, int32_t ndim, const int64_t *sizes, const int64_t *v);

/* The same from doubles for any dtype, and a 1-D contiguous tensor of n
 * of them: for integer and bool dtypes, the values must be whole numbers
 * that an int64 holds. */
rt *lit_d(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v);
bp_tensor *tensor_d(int32_t dt, const double *v, int64_t n);

/* A contiguous tensor with r's contents. */
bp_tensor *from_rt(const rt *r);

/* Calls a one-result op with tensor arguments only (b and c may be NULL)
 * and checks it (RUN).  Returns the result, or NULL after a report. */
bp_tensor *call_t(const char *name, bp_tensor *a, bp_tensor *b, bp_tensor *c);

/* cast(a, to), checked. */
bp_tensor *call_cast(bp_tensor *a, int32_t to);

/* Pushes self, dims, keepdim (and dtype=None for sum) and runs the
 * reduction `name` (checked). */
bp_tensor *call_reduce(const char *name, bp_tensor *a, const int64_t *dims, size_t nd,
                       bool keepdim);

/* Contiguous zero-filled tensors of shape [a] and [a, b]. */
bp_tensor *zeros1(int32_t dt, int64_t a);
bp_tensor *zeros2(int32_t dt, int64_t a, int64_t b);

/* Pushes up to three tensors (b and c may be NULL). */
void push_t(bp_stack *s, bp_tensor *a, bp_tensor *b, bp_tensor *c);

/* The device type the "good" test plugin registers under `name`, or
 * BP_DEVICE_INVALID. */
int32_t device_type_named(const char *name);

/* A float32 tensor on gooddev:0 (host-visible memory) holding v; the
 * "good" test plugin must be loaded.  NULL after a failed assertion. */
bp_tensor *on_gooddev(int32_t ndim, const int64_t *sizes, const double *v);

#endif /* BP_TESTS_CPU_CASES_H */
