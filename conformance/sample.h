/*
 * conformance/sample.h - samples: the arguments of one call of an op, and
 * the sets of them that each check runs.
 *
 * The numerics check of a core op runs, per dtype, one set per sample
 * class (sizes, layouts, broadcasting, dims, promotion, value classes,
 * large inputs); docs/certification.md lists what each class holds.  The
 * sets are generated from the op's kind and the op set's rules, and are
 * deterministic for a seed: cert_rng_seed_name() seeds them per case.
 */
#ifndef BP_CONFORMANCE_SAMPLE_H
#define BP_CONFORMANCE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/host.h>

#include "cert.h"
#include "layout.h"
#include "num.h"
#include "ref.h"

/* ---- Random numbers: splitmix64, seeded per case ---------------------- */

/* Seeds the generator from --seed and the case's name. */
void cert_rng_seed_name(cert_ctx *cx, const char *name);
/* Puts the generator back as a fresh process has it. */
void cert_rng_reset(void);
uint64_t cert_rng_next(void);
double cert_rng_uniform(double lo, double hi);

/* ---- Samples ------------------------------------------------------------ */

enum argk { AK_TENSOR, AK_FLOAT, AK_INT, AK_BOOL, AK_INTLIST, AK_DTYPE, AK_NONE, AK_STR,
            AK_TENSORLIST };

#define SAMPLE_MAX_ARGS 10
#define SAMPLE_MAX_LIST 6

/* A Tensor[] argument: its tensors (owned) and how each lies in memory. */
typedef struct tlist {
  int n;
  rt *t[SAMPLE_MAX_LIST];
  tlayout lay[SAMPLE_MAX_LIST];
} tlist;

typedef struct sarg {
  int k;                        /* enum argk */
  rt *t;                        /* AK_TENSOR: the values (owned), as the op sees them */
  tlayout lay;                  /* AK_TENSOR: how they lie in memory */
  double f;                     /* AK_FLOAT */
  int64_t i;                    /* AK_INT, AK_BOOL */
  int64_t list[BP_MAX_NDIM];    /* AK_INTLIST */
  size_t nlist;
  int32_t dt;                   /* AK_DTYPE */
  const char *s;                /* AK_STR: static */
  tlist *l;                     /* AK_TENSORLIST (owned) */
} sarg;

typedef struct sample {
  int n;
  sarg a[SAMPLE_MAX_ARGS];
  bool exact;      /* compare bit for bit (the op rounds once) */
  bool zero_ties;  /* -0.0 and +0.0 may stand for each other (max/min) */
  int32_t refuse;  /* in the bad set: a status the kernel must fail with
                      though the meta function accepts the call (an index
                      out of range), or 0 */
  char label[64];  /* what the sample exercises, for messages */
} sample;

void cert_sample_free(sample *s);
void cert_add_tensor(sample *s, rt *t, int lay_kind);
void cert_add_float(sample *s, double f);
void cert_add_int(sample *s, int64_t i);
void cert_add_bool(sample *s, bool b);
void cert_add_list(sample *s, const int64_t *v, size_t n);
void cert_add_dtype(sample *s, int32_t dt);
void cert_add_none(sample *s);
void cert_add_str(sample *s, const char *str);
/* A Tensor[] of the n tensors ts (taken), tensor i in layout kind lays[i]
 * (NULL: all contiguous). */
void cert_add_tensor_list(sample *s, rt *const *ts, const int *lays, int n);

/* Random values of r's dtype: floats in [lo, hi) rounded to the dtype,
 * integers in [lo, hi] clipped to the dtype's range, bools 0 or 1. */
void cert_fill_rt(rt *r, double lo, double hi);
rt *cert_rand_rt(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi);

/* Makes t's values constant along the dim that the expanded layout kind
 * lay expands, so that they can be laid out with stride 0 there. */
void cert_gen_make_expandable(rt *t, int lay);

/* "sizes: float32[2, 3](transposed), int64[3], 0.5" into buf. */
const char *cert_sample_desc(const sample *s, char *buf, size_t len);
/* "[2, 3]" into buf. */
const char *cert_shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t len);

/* ---- The core ops the certifier has a reference for -------------------- */

enum kind { K_BINARY, K_ADD_OUT, K_MULADD, K_UNARY, K_WHERE, K_REDUCE, K_ARGMAX, K_MATMUL,
            K_SOFTMAX, K_LAYER_NORM, K_CAST, K_CONTIGUOUS, K_FILL, K_COPY,
            /* op set 2 */
            K_COMPARE, K_INDEX_SELECT, K_GATHER, K_EMBEDDING, K_CUMSUM, K_TOPK, K_SORT,
            K_SDPA, K_LOGICAL, K_BOOL_UNARY, K_MASKED_FILL, K_CLAMP, K_CAT, K_LINEAR,
            K_RMS_NORM, K_BATCH_NORM, K_CONV2D, K_MAX_POOL, K_AVG_POOL, K_ADAPTIVE_POOL };

typedef struct core_ref {
  const char *name; /* without "core::" */
  enum kind kind;
  int sub;          /* the ref_binop, ref_unop, ref_redop, or log for softmax;
                       or for logical_*, isnan: or, isnan */
} core_ref;

extern const core_ref cert_core_refs[];
extern const size_t cert_ncore_refs;

/* The index of a core op in core_refs[], or -1. */
int cert_core_ref_index(const char *opname);

/* ---- Sample classes ------------------------------------------------------ */

enum sk {
  SK_BASIC,     /* one small sample */
  SK_SIZES,     /* every length 0 .. 70, multiples of 8 .. 64 +-1, ranks 0 .. 5 */
  SK_LAYOUTS,   /* each tensor argument in turn in every layout */
  SK_BROADCAST, /* size-1 dims everywhere, rank mismatches, 0-dim operands */
  SK_DIMS,      /* every dim, negative dims, several, none, keepdim, dtype */
  SK_PROMOTION, /* mixed-dtype operands, every promotion pair */
  SK_VALUES,    /* NaN, infinities, zeros, extremes, denormals, range edges */
  SK_LARGE,     /* 1e5 .. 1e6 elements: threaded and blocked paths */
  SK_BADSHAPE,  /* shapes the op refuses (the errors check) */
  SK_COUNT
};
extern const char *const cert_sk_name[SK_COUNT];

/* Whether sample class sk applies to a kind of op (SK_BADSHAPE: whether
 * the op has shapes to refuse). */
bool cert_sk_applies(enum kind kind, int sk);

/* Options of a generated set: the dtypes the kernel declares (NULL: all)
 * for the partners of mixed-dtype samples, and the profile. */
typedef struct gen_opts {
  const int32_t *declared; /* ended by BP_DTYPE_INVALID, or NULL */
  bool full;
  const char *op;          /* an op outside core: its name, for its
                              --hints (hints.h), or NULL */
} gen_opts;

/* The samples of class sk of core op r in dtype dt: a new array of *n
 * samples (free each with sample_free, then the array). */
sample *cert_gen_core_set(int r, int32_t dt, int sk, const gen_opts *o, size_t *n);

/* The samples the checks other than numerics run on an op, in float32: for
 * a core op (r >= 0) the basic sample, lengths where vector loops end,
 * every rank, every layout of every argument and some broadcasting; for
 * another op, samples made from its schema (si) in several layouts.
 * NULL with the reason in why when an argument cannot be generated. */
sample *cert_check_set(int r, const schema_info *si, const gen_opts *o, size_t *n, char *why,
                       size_t len);
/* Frees a set of n samples. */
void cert_sample_set_free(sample *v, size_t n);

/* The reference result of a valid core sample, and the scales of its
 * tolerance (docs/op-set.md: rtol grows with sqrt(n) for ops that
 * accumulate, atol with n for sum); *slack (owned) receives, for the ops
 * whose definition rounds its terms on the way (a bias added to a rounded
 * sum, batch_norm's steps), the error each element may have beyond them,
 * or NULL. */
rt *cert_ref_core(int r, const sample *s, double *rscale, double *ascale, rt **slack);
/* The reference of a core op's second result (topk's and sort's indices,
 * compared exactly), or NULL for an op with one result. */
rt *cert_ref_core2(int r, const sample *s);

#endif /* BP_CONFORMANCE_SAMPLE_H */
