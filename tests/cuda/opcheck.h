/*
 * tests/cuda/opcheck.h - test-cuda-ops' harness (opcheck.c): random inputs
 * made the same on the CPU and on cuda:0 (twins of one random storage, in
 * a chosen layout), and a call of an op on both devices whose outcomes
 * are compared within the op set's tolerances.
 */
#ifndef BP_TESTS_CUDA_OPCHECK_H
#define BP_TESTS_CUDA_OPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudatest.h"

/* ---- random numbers and dtypes ------------------------------------------ */

uint64_t rnd(void);
double uni(double lo, double hi);
int64_t irange(int64_t lo, int64_t hi);

#define NDTYPES 10
extern const int32_t all_dtypes[NDTYPES];
bool is_float(int32_t dt);
const char *dtn(int32_t dt);
/* Element i of the dtype-dt array p, as a double. */
double get_f(int32_t dt, const void *p, int64_t i);
uint16_t f2h_bits(float f);

/* Value profiles. */
enum { P_GENERAL, P_FINITE, P_POS, P_UNIT, P_WIDE, P_EXP, P_TIES };

/* ---- tensors on both devices -------------------------------------------- */

enum { L_CONTIG, L_PERM, L_STRIDED, L_BCAST, L_ANY, L_WRITABLE };

typedef struct twin {
  bp_tensor *c, *g;   /* the views on the CPU and on cuda:0 */
  bp_tensor *cs, *gs; /* their storages */
} twin;

/* A twin of the given shape and layout (L_*) with random contents of a
 * value profile (P_*); all NULL after a failure. */
twin make(int32_t dt, int32_t ndim, const int64_t *sizes, int layout, int prof);
void twin_free(twin *t);
/* A host copy of t (owned). */
bp_tensor *to_host(bp_tensor *t);

/* What a failure's diagnostic says the trial was; a failed point with a
 * diagnostic (the first 20 of a case). */
void ctx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- comparison and calls ----------------------------------------------- */

enum { T_PLAIN, T_SQRT, T_SUM };
void tolerance(int32_t dt, double *rtol, double *atol);

enum { A_T, A_T_CPU, A_NONE, A_INT, A_FLOAT, A_BOOL, A_STR, A_INTS, A_DTYPE };

typedef struct arg {
  int kind;
  twin *t;          /* A_T: the twin's view on each device; A_T_CPU: the
                       CPU view on both (a cross-device argument) */
  int64_t i;
  double f;
  const char *s;
  const int64_t *ints;
  size_t n;
  const char *kw;   /* keyword name, or NULL for positional */
} arg;

#define AT(tw) ((arg){A_T, (tw), 0, 0, NULL, NULL, 0, NULL})
#define AT_CPU(tw) ((arg){A_T_CPU, (tw), 0, 0, NULL, NULL, 0, NULL})
#define ANONE ((arg){A_NONE, NULL, 0, 0, NULL, NULL, 0, NULL})
#define AINT(v) ((arg){A_INT, NULL, (v), 0, NULL, NULL, 0, NULL})
#define AFLOAT(v) ((arg){A_FLOAT, NULL, 0, (v), NULL, NULL, 0, NULL})
#define ABOOL(v) ((arg){A_BOOL, NULL, (v), 0, NULL, NULL, 0, NULL})
#define AINTS(p, c) ((arg){A_INTS, NULL, 0, 0, NULL, (p), (c), NULL})
#define KW(a, name) ((arg){(a).kind, (a).t, (a).i, (a).f, (a).s, (a).ints, (a).n, (name)})

bp_status call_on(const bp_op *op, const arg *args, size_t nargs, bool gpu, bp_tensor **out);
/* Runs op on both devices and compares.  `mut` (may be NULL) is the twin
 * the op writes: its storages are compared too, and the result must be
 * its view.  kind (T_*) and n scale the tolerance. */
void check(const char *name, const arg *args, size_t nargs, twin *mut, int kind, int64_t n);

/* ---- a case's start and end --------------------------------------------- */

/* Loads both plugins and seeds the generator; false to skip the case. */
bool setup(uint64_t seed);
/* Reports the trials, checks that no tensor is left, unloads. */
void done(void);

/* Shapes of broadcasting pairs. */
typedef struct shape2 {
  int32_t na;
  int64_t a[4];
  int32_t nb;
  int64_t b[4];
} shape2;
extern const shape2 pairs[];
extern const size_t npairs;
#define NPAIRS npairs

#endif /* BP_TESTS_CUDA_OPCHECK_H */
