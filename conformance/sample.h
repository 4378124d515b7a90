/*
 * conformance/sample.h - samples: the arguments of one call, as values on
 * the host (rt, from tests/cpu/ref.h), and the reference result of a core
 * op's sample (samples.c).
 *
 * A sample is generated from the op (gen_core: each core op has an entry
 * in core_refs[], whose kind says how its arguments are made) or from its
 * schema (gen_generic: ops outside core).  devtensor.h makes it into
 * tensors on the device under test.
 */
#ifndef BP_CONFORMANCE_SAMPLE_H
#define BP_CONFORMANCE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cert.h"
#include "num.h"
#include "ref.h"

/* ------------------------------------------------------------------------ */
/* Random values                                                            */
/* ------------------------------------------------------------------------ */

/* splitmix64, seeded per case from --seed and the case's name. */
uint64_t rng_next(void);
double rng_uniform(double lo, double hi);
void rng_seed_name(const char *name);
/* Puts the generator back as a fresh process has it. */
void rng_reset(void);

/* Random values of r's dtype: floats in [lo, hi) rounded to the dtype,
 * integers in [lo, hi] clipped to the dtype's range, bools 0 or 1. */
void fill_rt(rt *r, double lo, double hi);
rt *rand_rt(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi);

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

/* Sample kinds: the test points of numerics, and the inputs of the other
 * checks. */
enum sk { SK_BASIC, SK_SHAPES, SK_EMPTY, SK_BCAST, SK_NONCONTIG, SK_BADSHAPE, SK_COUNT };
extern const char *const sk_name[];
#define SHAPE_VARIANTS 3

enum argk { AK_TENSOR, AK_FLOAT, AK_INT, AK_BOOL, AK_INTLIST, AK_DTYPE, AK_NONE, AK_STR };

typedef struct sarg {
  int k;
  rt *t;           /* AK_TENSOR: the values (owned) */
  bool nc;         /* AK_TENSOR: lay it out non-contiguously */
  double f;        /* AK_FLOAT */
  int64_t i;       /* AK_INT, AK_BOOL */
  int64_t list[4]; /* AK_INTLIST */
  size_t nlist;
  int32_t dt;      /* AK_DTYPE */
  const char *s;   /* AK_STR: static */
} sarg;

typedef struct sample {
  int n;
  sarg a[8];
} sample;

void sample_free(sample *s);
void add_tensor(sample *s, rt *t, bool nc);
void add_float(sample *s, double f);
void add_int(sample *s, int64_t i);
void add_list(sample *s, const int64_t *v, size_t n);
void add_dtype(sample *s, int32_t dt);

/* "float32[2, 3] float32[4](strided)": the tensors of a sample. */
const char *sample_desc(const sample *s, char *buf, size_t len);
/* "[2, 3]" into buf. */
const char *shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Core ops: their samples and reference results                            */
/* ------------------------------------------------------------------------ */

enum kind { K_BINARY, K_ADD_OUT, K_MULADD, K_UNARY, K_WHERE, K_REDUCE, K_ARGMAX, K_MATMUL,
            K_SOFTMAX, K_LAYER_NORM, K_CAST, K_CONTIGUOUS, K_FILL, K_COPY };

typedef struct core_ref {
  const char *name; /* without "core::" */
  enum kind kind;
  int sub;          /* the ref_binop, ref_unop, ref_redop, or log for softmax */
} core_ref;

extern const core_ref core_refs[];
extern const size_t ncore_refs;

/* The index of a core op in core_refs[], or -1. */
int core_ref_index(const char *opname);
/* Whether a sample kind applies to a kind of op. */
bool sk_applies(enum kind kind, int sk);
/* The arguments of a core op's sample, of dtype dt. */
void gen_core(int r, int32_t dt, int sk, int variant, sample *s);
/* The reference result of a valid core sample; the tolerance scales. */
rt *ref_core(int r, const sample *s, double *rscale, double *ascale);

/* A generic sample from a schema (ops outside core); false with the
 * reason when an argument cannot be generated. */
bool gen_generic(const schema_info *si, int sk, sample *s, char *why, size_t len);

#endif /* BP_CONFORMANCE_SAMPLE_H */
