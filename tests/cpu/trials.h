/*
 * tests/cpu/trials.h - one seeded random trial of each op family.
 *
 * A trial seeds its own PRNG with `seed`, draws a shape (rand_shape(), so
 * 33 000 to 90 000 elements while set_large_shapes() is on), the operands'
 * layouts and values, and the op's other arguments; names itself with
 * ctx_set() (the seed included); calls the op through RUN (the harness's
 * checks); compares the result with the float64 reference of ref.c within
 * the spec's tolerances; and releases everything.  Failures are reported
 * to the current case, which goes on.
 */
#ifndef BP_TESTS_CPU_TRIALS_H
#define BP_TESTS_CPU_TRIALS_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"

/* The schema names of ref.h's binary (RB_*) and unary (RU_*) ops. */
extern const char *const binop_schema_name[7];
extern const char *const unop_schema_name[15];

/* An alpha the result dtype can use: integral for integers, 1 for bool,
 * and for floats a power of two (so that alpha * other is exact and the
 * float32 computation rounds once, like the reference). */
double pick_alpha(rng *r, int32_t dt);

/* Binary op `op` (RB_*) on operands of dtypes da and db that broadcast
 * together, with an alpha for add and sub now and then. */
void binary_trial(int op, int32_t da, int32_t db, uint64_t seed);
/* Unary op `op` (RU_*) of a dtype-dt tensor; values suited to the op. */
void unary_trial(int op, int32_t dt, uint64_t seed);
/* where(bool condition, da, db), all three broadcasting together. */
void where_trial(int32_t da, int32_t db, uint64_t seed);
/* Reduction `op` (RR_SUM, RR_MEAN, RR_AMAX, RR_AMIN) over a random dim
 * list, keepdim or not; for sum, with a random dtype= when with_dtype. */
void reduce_trial(int op, int32_t dt, uint64_t seed, bool with_dtype);
/* argmax over one dim or all (dim=None), keepdim or not, with many ties. */
void argmax_trial(int32_t dt, uint64_t seed);
/* matmul of vectors, matrices and broadcast batches, inner sizes from 0
 * to 300. */
void matmul_trial(int32_t dt, uint64_t seed);
/* softmax, or log_softmax when log_, over a random dim. */
void softmax_trial(bool log_, int32_t dt, uint64_t seed);
/* layer_norm over 1 .. ndim trailing dims, with or without weight and
 * bias, and one of a few eps. */
void layer_norm_trial(int32_t dt, uint64_t seed);
/* cast from one dtype to another (to the same dtype, bit for bit). */
void cast_trial(int32_t from, int32_t to, uint64_t seed);
/* contiguous: the same tensor if it is contiguous, else a copy, bit for
 * bit. */
void contiguous_trial(int32_t dt, uint64_t seed);
/* fill_ writes value converted as cast converts a float64. */
void fill_trial(int32_t dt, uint64_t seed);
/* copy_ from one dtype to another, src broadcast to self. */
void copy_trial(int32_t dst, int32_t src, uint64_t seed);

/* layer_norm(x, ns, w, b, eps) against the reference; releases and frees
 * every argument (w, b, rw and rb may be NULL). */
void check_layer_norm(bp_tensor *x, rt *rx, int32_t nnorm, const int64_t *ns, bp_tensor *w, rt *rw,
                      bp_tensor *b, rt *rb, double eps);

#endif /* BP_TESTS_CPU_TRIALS_H */
