/*
 * conformance/ref/ref.h - a plain float64 reference implementation of the `core`
 * op set (docs/op-set.md), for checking backends against.
 *
 * It works on rt arrays: row-major values of one dtype, floats held as
 * double and integers and bool as int64_t.  Each function computes the
 * result shape and dtype itself from the spec (so it also checks the host's
 * meta functions) and assumes valid arguments: the error paths are tested
 * separately.  Float results are computed in double from the inputs' exact
 * values and rounded once to the result dtype; the comparison tolerance
 * covers the difference from computing in float32.
 */
#ifndef BP_TESTS_CPU_REF_H
#define BP_TESTS_CPU_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/host.h>

typedef struct rt {
  int32_t dtype;
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  int64_t numel;
  double *f;  /* the values of a float dtype, row-major */
  int64_t *i; /* the values of an integer or bool dtype, row-major */
} rt;

rt *rt_new(int32_t dtype, int32_t ndim, const int64_t *sizes);
void rt_free(rt *r);

/* NumPy broadcasting of two shapes; false when they do not broadcast. */
bool ref_broadcast(int32_t na, const int64_t *sa, int32_t nb, const int64_t *sb, int32_t *nout,
                   int64_t *sout);

/* a broadcast to the shape (n, sizes), which it must broadcast to. */
rt *ref_expand(const rt *a, int32_t n, const int64_t *sizes);

/* An integer as float dtype dt, rounded as torch rounds it (see ref.c). */
double int_to_float(int32_t dt, int64_t v);
/* `cast`: every element converted to dt. */
rt *ref_cast(const rt *a, int32_t dt);

enum ref_binop { RB_ADD, RB_SUB, RB_MUL, RB_DIV, RB_MAXIMUM, RB_MINIMUM, RB_POW };
/* self op other; alpha is used by add and sub. */
rt *ref_binary(int op, const rt *a, const rt *b, double alpha);
rt *ref_muladd(const rt *a, const rt *b, double c);

enum ref_unop {
  RU_NEG,
  RU_ABS,
  RU_RELU,
  RU_EXP,
  RU_LOG,
  RU_SQRT,
  RU_RSQRT,
  RU_SIGMOID,
  RU_TANH,
  RU_GELU,
  RU_GELU_TANH,
  /* op set 2 */
  RU_SIN,
  RU_COS,
  RU_ERF,
  RU_SILU
};
extern const char *const ref_unop_name[15];
rt *ref_unary(int op, const rt *a);

rt *ref_where(const rt *cond, const rt *a, const rt *b);

enum ref_redop { RR_SUM, RR_MEAN, RR_AMAX, RR_AMIN };
extern const char *const ref_redop_name[4];
/* A reduction over dims (all when ndims is 0).  sum_dtype is sum's dtype
 * argument, or BP_DTYPE_INVALID for None.  *n_out receives the number of
 * elements combined into each result. */
rt *ref_reduce(int op, const rt *a, const int64_t *dims, size_t ndims, bool keepdim,
               int32_t sum_dtype, int64_t *n_out);
/* argmax over dim, or over the flattened tensor when !has_dim. */
rt *ref_argmax(const rt *a, bool has_dim, int64_t dim, bool keepdim);

/* torch.matmul.  *k_out receives the inner size. */
rt *ref_matmul(const rt *a, const rt *b, int64_t *k_out);

rt *ref_softmax(const rt *a, int64_t dim, bool log);

/* layer_norm over the last nnorm dimensions; w and b may be NULL. */
rt *ref_layer_norm(const rt *x, int32_t nnorm, const rt *w, const rt *b, double eps);

/* ---- Op set 2 (ref2.c) ----------------------------------------------- */

/* A Scalar argument: which kind of number, and its value. */
typedef struct ref_scalar {
  int kind; /* REF_S_INT, REF_S_FLOAT, REF_S_BOOL, or REF_S_NONE */
  int64_t i;
  double f;
} ref_scalar;
enum { REF_S_NONE, REF_S_INT, REF_S_FLOAT, REF_S_BOOL };

/* The weak promotion of dtype dt with a Scalar (docs/op-set.md). */
int32_t ref_promote_scalar(int32_t dt, const ref_scalar *s);
/* A 0-dim rt of dtype dt holding s converted as core::cast converts. */
rt *ref_scalar_rt(int32_t dt, const ref_scalar *s);

enum ref_cmpop { RC_EQ, RC_NE, RC_LT, RC_LE, RC_GT, RC_GE };
extern const char *const ref_cmpop_name[6];
/* self op other in their promoted dtype, bool, broadcast. */
rt *ref_compare(int op, const rt *a, const rt *b);
/* self op other for a Scalar other. */
rt *ref_compare_scalar(int op, const rt *a, const ref_scalar *s);

/* logical_and (or = false) and logical_or (or = true); logical_not; isnan. */
rt *ref_logical(bool or, const rt *a, const rt *b);
rt *ref_logical_not(const rt *a);
rt *ref_isnan(const rt *a);

/* masked_fill: value where mask, else self, broadcast, self's dtype. */
rt *ref_masked_fill(const rt *a, const rt *mask, const ref_scalar *value);
/* clamp with Scalar? bounds (kind REF_S_NONE for None). */
rt *ref_clamp(const rt *a, const ref_scalar *lo, const ref_scalar *hi);
/* add/sub/mul/div/pow with a Scalar other (op a ref_binop). */
rt *ref_binary_scalar(int op, const rt *a, const ref_scalar *s, double alpha);

/* Gathers: the indices are valid (in [0, size of dim)). */
rt *ref_index_select(const rt *a, int64_t dim, const rt *index);
rt *ref_gather(const rt *a, int64_t dim, const rt *index);
rt *ref_embedding(const rt *weight, const rt *indices);

/* cumsum along dim; dtype is its dtype argument or BP_DTYPE_INVALID.
 * *n_out receives the length of dim (the most terms in one sum). */
rt *ref_cumsum(const rt *a, int64_t dim, int32_t dtype, int64_t *n_out);

/* topk and sort: the first k elements along dim in the op set's order (by
 * value, descending or ascending, NaN above every number, equal values by
 * index), and in *indices (owned) their indices.  A 0-dim a gives its
 * element whatever k is (0 or 1), as PyTorch's topk does. */
rt *ref_topk(const rt *a, int64_t dim, int64_t k, bool descending, rt **indices);

/* scaled_dot_product_attention: softmax(q k^T * scale + mask) v in
 * float64, rounded once to q's dtype.  q [..., L, E], k [..., S, E], v
 * [..., S, Ev] of one rank, batch dims equal or 1, key heads (dim -3)
 * dividing query heads; mask NULL, bool (true keeps) or float (added),
 * broadcast to [..., L, S]; causal removes j > i; scale NAN for
 * 1/sqrt(E).  A row with every score removed is NaN; with no keys (S 0)
 * the result is 0. */
rt *ref_sdpa(const rt *q, const rt *k, const rt *v, const rt *mask, bool causal, double scale);

/* ---- Op set 2's layers (ref3.c) ----------------------------------------- */

/* The number of windows along one dim of size `in`: kernel k, stride s,
 * padding p on both sides, dilation d; PyTorch's output size, rounded up
 * with ceil_mode unless the last window would start in the end padding. */
int64_t ref_window_count(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode);

/* Some results are sums whose terms a correct implementation may round
 * first (a bias added to the rounded products, as the host's composites
 * do): `terms` (may be NULL) then receives a float64 array of the
 * result's shape with the largest such term's magnitude per element, or
 * NULL where there is none (no bias). */

/* conv2d: x [N, C, H, W] or [C, H, W], w [O, C / groups, KH, KW], b [O]
 * or NULL; stride, padding and dilation hold (height, width).  *k_out
 * receives the products summed into each result, C / groups * KH * KW. */
rt *ref_conv2d(const rt *x, const rt *w, const rt *b, const int64_t *stride,
               const int64_t *padding, const int64_t *dilation, int64_t groups, int64_t *k_out,
               rt **terms);
/* max_pool2d over windows of k (height, width) with s, p, d; NaN
 * propagates, the padding is the lowest value; any numeric dtype. */
rt *ref_max_pool2d(const rt *x, const int64_t *k, const int64_t *s, const int64_t *p,
                   const int64_t *d, bool ceil_mode);
/* avg_pool2d: each window's sum over the input, divided by
 * divisor_override (0 for None), else by the window's size clipped to the
 * padded input (count_include_pad) or to the input. */
rt *ref_avg_pool2d(const rt *x, const int64_t *k, const int64_t *s, const int64_t *p,
                   bool ceil_mode, bool count_include_pad, int64_t divisor_override);
/* adaptive_avg_pool2d to out_size (height, width); *n_out receives the
 * size of the largest window. */
rt *ref_adaptive_avg_pool2d(const rt *x, const int64_t *out_size, int64_t *n_out);
/* cat of ts[0 .. n-1] along dim, in their promoted dtype; a [0] tensor is
 * skipped (but promotes). */
rt *ref_cat(const rt *const *ts, int n, int64_t dim);
/* linear: x [..., in] times w [out, in] transposed, plus b [out] or NULL. */
rt *ref_linear(const rt *x, const rt *w, const rt *b, rt **terms);
/* rms_norm over the last nnorm dims, w NULL or of their shape; eps NAN
 * for None (the computation dtype's machine epsilon).  float16 and
 * bfloat16 are rounded to their dtype before the weight, as the op's
 * definition casts back first. */
rt *ref_rms_norm(const rt *x, int32_t nnorm, const rt *w, double eps);
/* batch_norm in inference: per channel (dim 1) of x, with the running
 * statistics; w and b may be NULL.  The terms: the normalised value
 * (times the weight) and the bias. */
rt *ref_batch_norm(const rt *x, const rt *w, const rt *b, const rt *mean, const rt *var,
                   double eps, rt **terms);

/* Helpers ref.c shares with ref2.c. */
bool ref_next_index(int32_t n, const int64_t *sizes, int64_t *idx);
int64_t ref_bidx(const rt *a, int32_t n, const int64_t *idx);

#endif /* BP_TESTS_CPU_REF_H */
