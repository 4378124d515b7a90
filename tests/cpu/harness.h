/*
 * tests/cpu/harness.h - the machinery of the CPU plugin's tests: a seeded
 * PRNG, random shapes, tensors in many layouts with random contents, a
 * checked call (meta agreement, untouched inputs, in-place identity,
 * contiguous results, no leaked handles), comparison against the reference
 * with the spec's tolerances, and error-path checks.
 *
 * harness.c holds the PRNG, setup, checked calls and comparisons, and
 * tensors.c the shapes, values and tensors.
 *
 * Diagnostics name the trial through a context line (op, dtypes, shapes,
 * layouts, seed) that each trial sets with ctx_set().  After MAX_REPORTS
 * failures in one case, further failures are only counted, so that a
 * missing kernel does not flood the log.
 */
#ifndef BP_TESTS_CPU_HARNESS_H
#define BP_TESTS_CPU_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/host.h>

#include "num.h"
#include "ref.h"
#include "tap.h"

/* ------------------------------------------------------------------------ */
/* PRNG (splitmix64): every trial seeds its own, and prints the seed.       */
/* ------------------------------------------------------------------------ */

typedef struct rng {
  uint64_t s;
} rng;

void rng_seed(rng *r, uint64_t seed);
uint64_t rng_next(rng *r);
int64_t rng_int(rng *r, int64_t lo, int64_t hi); /* inclusive */
double rng_uniform(rng *r, double lo, double hi);
bool rng_chance(rng *r, double p);

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

/* Loads the CPU plugin from $top_builddir/plugins/cpu/.libs/cpu.so, or
 * fails the case and ends it.  Records the live tensor count for
 * cpu_done(). */
void cpu_setup(void);
/* The path cpu_setup() loads. */
const char *cpu_plugin_path(void);
/* Ends a case: prints how much it checked (calls, result elements, error
 * paths), reports failures that were only counted, checks that no tensor
 * handle leaked, and unloads the plugin (its teardown must succeed). */
void cpu_done(void);

/* Ends the case at once, failed: the harness itself could not go on.
 * Prints what failed, its status, the thread's last error and the trial. */
void die(const char *what, bp_status st) __attribute__((noreturn));

/* "core::<name>", or fails the case and returns NULL. */
const bp_op *core_op(const char *name);

/* The diagnostic context of the current trial (printf-style). */
void ctx_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fails the case with a message and the context; after MAX_REPORTS only
 * counts.  Returns false. */
#define MAX_REPORTS 12
bool report_at(const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define REPORT(what, ...) report_at(__FILE__, __LINE__, (what), __VA_ARGS__)

/* "[2, 3]" (rotating static buffers). */
const char *shape_str(int32_t ndim, const int64_t *sizes);

/* ------------------------------------------------------------------------ */
/* Shapes                                                                   */
/* ------------------------------------------------------------------------ */

/* A random shape of 0 .. maxdim dimensions, sizes 0 .. maxsize (0 rarely,
 * 1 often). */
void rand_shape(rng *r, int32_t maxdim, int64_t maxsize, int32_t *ndim, int64_t *sizes);
/* While on, rand_shape() gives shapes of 33 000 to 90 000 elements. */
void set_large_shapes(bool on);
/* A random shape that broadcasts to `sizes`: leading dimensions dropped
 * and some sizes set to 1. */
void rand_bcast_operand(rng *r, int32_t n, const int64_t *sizes, int32_t *nout, int64_t *sout);

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

/* Value profiles for random contents. */
enum {
  VP_GENERAL,  /* moderate values with NaN, infinities, -0.0, large and tiny */
  VP_FINITE,   /* moderate finite values only */
  VP_ACCUM,    /* moderate values with rare NaN and infinities (sums) */
  VP_POSITIVE, /* mostly positive (log, sqrt) with some zeros, negatives, NaN */
  VP_TIES,     /* small integers, for ties (argmax, maximum) */
  VP_WIDE,     /* wide magnitudes and conversion edges (cast, fill_) */
  VP_EXPONENT, /* exponents for pow: small, some negative, some large */
  VP_UNIT,     /* within [-0.5, 0.5], for long dot products: float32
                * accumulation error grows with the terms, not the result */
  VP_UNIT_NAN  /* the same with rare NaN and infinities */
};

/* Layouts.  LAY_BCAST has a stride-0 dimension and LAY_OVERLAP overlapping
 * strides; neither may be written.  LAY_RANDOM picks any layout and
 * LAY_WRITABLE any of the first three. */
enum { LAY_CONTIG, LAY_PERM, LAY_STRIDED, LAY_BCAST, LAY_OVERLAP, LAY_RANDOM, LAY_WRITABLE };
const char *layout_name(int layout);

/* A CPU tensor of the given shape in `layout`, a view into a larger storage
 * filled with random values of profile `prof`; *ref receives its logical
 * contents (owned).  *used (may be NULL) receives the layout chosen. */
bp_tensor *gen_tensor(rng *r, int32_t dt, int32_t ndim, const int64_t *sizes, int layout, int prof,
                      rt **ref, int *used);
/* The same with given contents (layout LAY_CONTIG, LAY_PERM or LAY_STRIDED,
 * or LAY_WRITABLE); the storage around the view holds random bytes. */
bp_tensor *tensor_from(rng *r, const rt *values, int layout, int *used);
/* A 1-D contiguous tensor from doubles or from integers. */
bp_tensor *tensor_f(int32_t dt, const double *v, int64_t n);
bp_tensor *tensor_i(int32_t dt, const int64_t *v, int64_t n);
/* A contiguous tensor of any shape, zero-filled. */
bp_tensor *tensor_zeros(int32_t dt, int32_t ndim, const int64_t *sizes);
/* The logical contents of any tensor with host-visible data. */
rt *read_tensor(const bp_tensor *t);
/* A random value of a dtype and profile, as a double (floats, rounded to
 * dt) or an int64 (integers and bool). */
double rand_float(rng *r, int32_t dt, int prof);
int64_t rand_int(rng *r, int32_t dt, int prof);
/* Byte offset of logical element idx (an index per dimension) from the
 * view's data pointer. */
int64_t elem_offset(const bp_tensor_view *v, const int64_t *idx);
/* Steps a row-major index over sizes to the next element; false after
 * the last (idx is then all zeros again). */
bool next_idx(int32_t n, const int64_t *sizes, int64_t *idx);

/* ------------------------------------------------------------------------ */
/* Checked calls                                                            */
/* ------------------------------------------------------------------------ */

enum {
  RET_NEW,       /* a new contiguous tensor */
  RET_SELF,      /* the (a!) argument itself */
  RET_CONTIGUOUS /* `contiguous`: in[0] if contiguous, else a new one */
};

typedef struct callspec {
  bp_tensor *in[6];      /* tensor arguments that must not change */
  bp_tensor *mut;        /* the (a!) argument: only its view may change */
  int ret;               /* RET_* */
  const char *const *kw; /* keyword names (bp_call_kw), or NULL */
  size_t nkw;
} callspec;

/* Calls op on the stack's arguments and checks everything but the values:
 * the meta function (bp_op_meta on the same arguments) succeeds and
 * agrees with the result's device, dtype and sizes; the result is
 * contiguous and new (or the handle the op returns itself); the inputs'
 * storage is byte-for-byte unchanged, and so is the mutable argument's
 * storage outside its view; exactly one handle is added.  Returns the
 * result (owned) and empties the stack, or NULL after a report. */
bp_tensor *run_at(const char *file, int line, const bp_op *op, bp_stack *s, const callspec *cs);
#define RUN(op, s, ...) run_at(__FILE__, __LINE__, (op), (s), &(callspec){__VA_ARGS__})

/* Comparison kinds: the spec's tolerance as is, rtol scaled by sqrt(n)
 * (reductions, matmul, softmax, layer_norm), or that and atol scaled by n
 * (sum). */
enum { TOL_PLAIN, TOL_SQRT, TOL_SUM };

/* Compares a result with the reference: dtype and shape, then every
 * element within the tolerance of the dtype (exact for integers and bool,
 * NaN matching NaN).  Reports the mismatch count, the worst element and
 * the largest absolute and relative errors. */
bool close_at(const char *file, int line, const bp_tensor *got, const rt *want, int64_t n,
              int kind);
#define CLOSE(got, want, n, kind) close_at(__FILE__, __LINE__, (got), (want), (n), (kind))

/* The number of elements of got outside the tolerance of want (as
 * close_at() judges them), or -1 when the dtype or shape differs.  Pure:
 * safe to call from several threads. */
int64_t count_mismatches(const rt *got, const rt *want, int64_t n, int kind);

/* Compares two tensors' logical elements bit for bit (same dtype). */
bool bits_at(const char *file, int line, const bp_tensor *got, const bp_tensor *want);
#define BITS(got, want) bits_at(__FILE__, __LINE__, (got), (want))

/* Expects the call to fail with `status`, leaving the stack empty and no
 * handle behind.  `msg` is the whole message, or NULL; `part` (may be NULL)
 * must occur in it.  Unless the error is about devices (which meta
 * functions do not see), bp_op_meta must fail the same way. */
void error_at(const char *file, int line, const bp_op *op, bp_stack *s, bp_status status,
              const char *msg, const char *part);
#define EXPECT_ERROR(op, s, status, msg, part) \
  error_at(__FILE__, __LINE__, (op), (s), (status), (msg), (part))

#endif /* BP_TESTS_CPU_HARNESS_H */
