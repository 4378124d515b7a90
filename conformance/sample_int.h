/*
 * conformance/sample_int.h - what the sample-set generators share
 * (sample_gen.c, and the entry points of the others); not used outside
 * them.
 */
#ifndef BP_CONFORMANCE_SAMPLE_INT_H
#define BP_CONFORMANCE_SAMPLE_INT_H

#include "sample.h"

/* A set being built, for core op r in the case's dtype dt. */
typedef struct slist {
  sample *v;
  size_t n, cap;
  int r;
  int32_t dt;
  const gen_opts *o;
} slist;

static inline enum kind kind_of(const slist *L) { return cert_core_refs[L->r].kind; }
static inline int sub_of(const slist *L) { return cert_core_refs[L->r].sub; }

/* A new zeroed sample at the end of L, labelled. */
sample *cert_gen_next(slist *L, const char *label);
/* Whether the kernel declares dt. */
bool cert_gen_declared(const slist *L, int32_t dt);
/* Argument `arg` of the op in its usual range of values. */
rt *cert_gen_input(const slist *L, int arg, int32_t dt, int32_t nd, const int64_t *sz);

/* The usual range of argument `arg` of an op of kind and sub, in dt. */
void cert_gen_domain(enum kind kind, int sub, int arg, int32_t dt, double *lo, double *hi);
/* Whether the op rounds once, so that its results compare bit for bit. */
bool cert_gen_exact(enum kind kind, int sub);
/* The fill_ value of a variant: 0 a plain one, 1 .. GEN_NFILL-1 the
 * others (special ones among them). */
#define GEN_NFILL 14
double cert_gen_fill_value(int32_t dt, int variant);
/* Values for a tensor of shape sh in dt to be laid out as lay: constant
 * along the dim an expanded layout expands. */
typedef struct shape shape;
rt *cert_gen_for_layout(int32_t dt, const shape *sh, int lay, enum kind kind, int sub);

/* The special values of a dtype (sample_values.c): float value i <
 * NSPECIAL (NaN first), integer value i < NSPECIAL_I; and t with one
 * element in `every` made special (NaN only when nan; the largest finite
 * values, which overflow an accumulator or a product, only when big). */
#define NSPECIAL 17
#define NSPECIAL_I 8
double cert_gen_special_f(int32_t dt, int i);
int64_t cert_gen_special_i(int32_t dt, int i);
void cert_gen_sprinkle(rt *t, int every, bool nan, bool big);
/* Whether special value i is one of the largest finite ones; the
 * smallest subnormal of float dtype dt. */
bool cert_gen_is_big(int i);
double cert_gen_denorm_min(int32_t dt);

/* A table of every pair of n values (fv for a float dtype, iv for an
 * integer one): a [n, 1] against b [n], with the op's other arguments
 * (variant: alpha, c); and one sample of the op on x, with dim for the ops
 * that take one (sample_values.c). */
void cert_gen_pair_table(slist *L, const char *label, int variant, const double *fv,
                         const int64_t *iv, int n);
void cert_gen_on(slist *L, const char *label, rt *x, int64_t dim);

/* Values a list of special values misses (sample_edges.c): NaN payloads,
 * integers beyond a float's mantissa, each float dtype's rounding edges;
 * cert_gen_nan_payload(dt, i) is NaN pattern i < NPAYLOAD of float dtype dt as
 * nan_with_bits encodes it. */
#define NPAYLOAD 7
double cert_gen_nan_payload(int32_t dt, int i);
void cert_gen_value_edges(slist *L);

/* The sets of the gathers (sample_index.c), of topk and sort
 * (sample_sort.c), of attention (sample_sdpa.c), of conv2d and the pools
 * (sample_conv.c), and of cat, linear, rms_norm and batch_norm
 * (sample_nn.c): false for another kind. */
bool cert_gen_index_set(slist *L, int sk);
bool cert_gen_sort_set(slist *L, int sk);
bool cert_gen_sdpa_set(slist *L, int sk);
bool cert_gen_conv_set(slist *L, int sk);
bool cert_gen_nn_set(slist *L, int sk);

/* The value-class set, and the bad-shape set of the errors check. */
void cert_gen_values(slist *L);
void cert_gen_badshape(slist *L);

struct shape {
  int32_t n;
  int64_t s[6];
};

#endif /* BP_CONFORMANCE_SAMPLE_INT_H */
