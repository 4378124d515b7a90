/*
 * conformance/tests/faulty/faults-v2.c - faults in the ops of core op set
 * 2 for the shim corpus (shim.h), written the way vendor shortcuts go
 * wrong.  A plugin is built with one -DFAULT_<NAME>; corpus.tsv lists
 * them.  Each calls the CPU plugin's kernel and then rewrites the float32
 * elements its shortcut would have computed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef int faults_v2_unit; /* the unit is never empty */

#if defined(FAULT_SIN_NAIVE_REDUCE) || defined(FAULT_COS_SHIFT) || \
    defined(FAULT_ERF_AS726) || defined(FAULT_SILU_UNDERFLOW)
/* Rewrites every float32 element of the result with f(x). */
static bp_status rewrite_f32(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets, float (*f)(float)) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx))
    ((float *)o->data)[k] = f((float)shim_load(a, shim_at(a, o->ndim, idx)));
  return BP_OK;
}
#endif

#if defined(FAULT_SIN_NAIVE_REDUCE)
/* Reduces the argument to [-pi, pi] in float32 with a float32 2 pi, whose
 * rounding error (1.7e-7) is multiplied by the number of turns: exact
 * within one turn, tens of ulps off from |x| > pi on. */
static float naive_sin(float x) {
  float r = x - 6.2831855f * rintf(x * 0.15915494f);
  return sinf(r);
}
SHIM_KERNEL(sin_naive_reduce) { return rewrite_f32(ctx, args, nargs, rets, nrets, naive_sin); }
const shim_fault shim_the_fault = {"sin_naive_reduce", "sin", sin_naive_reduce, NULL, NULL};
#endif

#if defined(FAULT_COS_SHIFT)
/* cos(x) as sin(x + pi/2) in float32: the sum rounds to the spacing of x,
 * an absolute error that near the zeros of cos is a large relative one. */
static float shifted_cos(float x) { return sinf(x + 1.5707964f); }
SHIM_KERNEL(cos_shift) { return rewrite_f32(ctx, args, nargs, rets, nrets, shifted_cos); }
const shim_fault shim_the_fault = {"cos_shift", "cos", cos_shift, NULL, NULL};
#endif

#if defined(FAULT_ERF_AS726)
/* Abramowitz and Stegun 7.1.26: within 1.5e-7 of erf absolutely, which
 * looks fine in a plot, but near 0 (erf x ~ 1.13 x) the relative error is
 * thousands of ulps. */
static float as726_erf(float x) {
  float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
  float p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
            t * (-1.453152027f + t * 1.061405429f))));
  float r = 1.0f - p * expf(-x * x);
  return x < 0 ? -r : r;
}
SHIM_KERNEL(erf_as726) { return rewrite_f32(ctx, args, nargs, rets, nrets, as726_erf); }
const shim_fault shim_the_fault = {"erf_as726", "erf", erf_as726, NULL, NULL};
#endif

#if defined(FAULT_SILU_UNDERFLOW)
/* x * sigmoid(x) with sigmoid as 1 / (1 + e^-x): below -88.7, e^-x is
 * +inf and the result -0, where x e^x is still a subnormal down to -103
 * (and -inf gives NaN, as it should). */
static float plain_silu(float x) { return x * (1.0f / (1.0f + expf(-x))); }
SHIM_KERNEL(silu_underflow) { return rewrite_f32(ctx, args, nargs, rets, nrets, plain_silu); }
const shim_fault shim_the_fault = {"silu_underflow", "silu", silu_underflow, NULL, NULL};
#endif

#if defined(FAULT_LT_NAN_ORDERED) || defined(FAULT_EQ_SIGNED_ZERO)
/* Rewrites every bool element of the result from the float32 operands
 * (broadcast to it) with f(a, b). */
static bp_status rewrite_cmp_f32(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_value *rets, size_t nrets, int (*f)(float, float)) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  if (a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32) return BP_OK;
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    float x = (float)shim_load(a, shim_at(a, o->ndim, idx));
    float y = (float)shim_load(b, shim_at(b, o->ndim, idx));
    ((unsigned char *)o->data)[k] = (unsigned char)f(x, y);
  }
  return BP_OK;
}
#endif

#if defined(FAULT_LT_NAN_ORDERED)
/* a < b written as !(a >= b), the same for every ordered pair, but true
 * wherever either operand is NaN (a comparison with NaN is false). */
static int lt_negated(float a, float b) { return !(a >= b); }
SHIM_KERNEL(lt_nan_ordered) { return rewrite_cmp_f32(ctx, args, nargs, rets, nrets, lt_negated); }
const shim_fault shim_the_fault = {"lt_nan_ordered", "lt", lt_nan_ordered, NULL, NULL};
#endif

#if defined(FAULT_EQ_SIGNED_ZERO)
/* a == b as a comparison of the bit patterns (a memcmp or integer compare
 * of the lanes): -0.0 == 0.0 becomes false, and NaN == NaN true when both
 * NaNs have one payload. */
static int eq_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }
SHIM_KERNEL(eq_signed_zero) { return rewrite_cmp_f32(ctx, args, nargs, rets, nrets, eq_bits); }
const shim_fault shim_the_fault = {"eq_signed_zero", "eq", eq_signed_zero, NULL, NULL};
#endif

#if defined(FAULT_INDEX_SELECT_CLAMP)
/* A "safe" gather: an index out of range is clamped into [0, size - 1]
 * instead of refused, so a bad token id reads the last row and the error
 * is never seen. */
SHIM_KERNEL(index_select_clamp) {
  const bp_tensor_view *a = SHIM_ARG(0), *ix = SHIM_ARG(2);
  int64_t dim = args[1].u.i < 0 ? args[1].u.i + a->ndim : args[1].u.i;
  int64_t size = a->ndim > 0 ? a->sizes[dim] : 1;
  bp_tensor *c = NULL;
  bp_status st = shim_host->tensor_empty(ix->device, ix->dtype, ix->ndim, ix->sizes, &c);
  if (st) return st;
  const bp_tensor_view *cv = shim_view(c);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < ix->numel; k++, shim_next(ix->ndim, ix->sizes, idx)) {
    int64_t i = shim_load_int(ix, shim_at(ix, ix->ndim, idx));
    shim_store_int(cv, k, i < 0 ? 0 : i >= size ? (size > 0 ? size - 1 : 0) : i);
  }
  SHIM_COPY_ARGS(av);
  av[2] = shim_tensor_arg(c);
  st = size > 0 || ix->numel == 0 ? shim_real(ctx, av, nargs, rets, nrets)
                                  : shim_real(ctx, args, nargs, rets, nrets);
  shim_host->tensor_release(c);
  return st;
}
const shim_fault shim_the_fault = {"index_select_clamp", "index_select", index_select_clamp, NULL,
                                   NULL};
#endif

#if defined(FAULT_GATHER_DENSE_STRIDES)
/* gather that addresses self with the strides of a dense tensor of its
 * shape: right for every contiguous self, wrong for a transposed or
 * sliced one. */
SHIM_KERNEL(gather_dense_strides) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *ix = SHIM_ARG(2), *o = SHIM_RET();
  if (a->flags & BP_VIEW_CONTIGUOUS) return BP_OK;
  /* (only where the dense offsets stay inside the storage: the shim reads
   * nothing the view does not own) */
  uint64_t reach = (uint64_t)(a->storage_offset + a->numel) * (uint64_t)a->itemsize;
  if (reach > a->storage_nbytes) return BP_OK;
  int64_t dim = args[1].u.i < 0 ? args[1].u.i + a->ndim : args[1].u.i;
  int64_t dense[BP_MAX_NDIM], s = 1;
  for (int32_t d = a->ndim - 1; d >= 0; d--) {
    dense[d] = s;
    s *= a->sizes[d] > 0 ? a->sizes[d] : 1;
  }
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(o->ndim, o->sizes, idx)) {
    int64_t off = 0;
    for (int32_t d = 0; d < a->ndim; d++)
      off += (d == dim ? shim_load_int(ix, shim_at(ix, ix->ndim, idx)) : idx[d]) * dense[d];
    /* the same storage, read as if dense from the view's first element */
    shim_store(o, k, shim_load(a, off));
  }
  return BP_OK;
}
const shim_fault shim_the_fault = {"gather_dense_strides", "gather", gather_dense_strides, NULL,
                                   NULL};
#endif

#if defined(FAULT_CUMSUM_BLOCK_CARRY)
/* A blocked scan (blocks of 64 along dim, as a vector or GPU scan splits
 * the work) that forgets to add the previous blocks' total to a block:
 * right for any dim of up to 64 elements. */
SHIM_KERNEL(cumsum_block_carry) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  if (o->dtype != BP_FLOAT32 || o->ndim == 0) return BP_OK;
  int64_t dim = args[1].u.i < 0 ? args[1].u.i + o->ndim : args[1].u.i;
  int64_t outer = 1, n = o->sizes[dim], inner = 1;
  for (int64_t d = 0; d < dim; d++) outer *= o->sizes[d];
  for (int64_t d = dim + 1; d < o->ndim; d++) inner *= o->sizes[d];
  float *y = (float *)o->data; /* the host allocated it: contiguous */
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++) {
      float carry = 0, last = 0; /* last: the true prefix before this element */
      for (int64_t k = 0; k < n; k++) {
        float *e = &y[(p * n + k) * inner + i];
        if (k % 64 == 0) carry = last; /* the blocks before this one */
        last = *e;
        *e -= carry;
      }
    }
  return BP_OK;
}
const shim_fault shim_the_fault = {"cumsum_block_carry", "cumsum", cumsum_block_carry, NULL,
                                   NULL};
#endif

#if defined(FAULT_ADD_TWO_PASS)
/* A structured add that fills its result in two passes, as a BLAS-minded
 * port does (y = alpha * other, then y += self): right whenever the result
 * is a fresh tensor, wrong when the host hands it self to fill (x.add_(y),
 * add(x, y, out=x)), where the first pass overwrites self. */
SHIM_KERNEL(add_two_pass) {
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *o = SHIM_RET();
  bool flat = a->dtype == BP_FLOAT32 && b->dtype == BP_FLOAT32 && o->dtype == BP_FLOAT32 &&
              a->numel == o->numel && b->numel == o->numel &&
              (a->flags & BP_VIEW_CONTIGUOUS) && (b->flags & BP_VIEW_CONTIGUOUS) &&
              (o->flags & BP_VIEW_CONTIGUOUS) && args[2].u.f == 1.0;
  if (!flat) return shim_real(ctx, args, nargs, rets, nrets);
  float *y = o->data;
  const float *x = a->data, *z = b->data;
  for (int64_t k = 0; k < o->numel; k++) y[k] = z[k];
  for (int64_t k = 0; k < o->numel; k++) y[k] += x[k];
  return BP_OK;
}
const shim_fault shim_the_fault = {"add_two_pass", "add", add_two_pass, NULL, NULL};
bool shim_fault_structured = true;
#endif

#if defined(FAULT_SORT_REVERSED_TIES) || defined(FAULT_TOPK_NAN_SMALLEST)
/* The float32 slices of topk's or sort's results ([outer, k, inner],
 * contiguous): calls f on each with its values, indices and the input. */
typedef void (*slice_fn)(float *v, int64_t *ix, int64_t k, int64_t step, const bp_tensor_view *x,
                         int64_t xbase, int64_t xstep, int64_t n, bool descending);
static bp_status each_slice(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets, bool topk, slice_fn f) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *x = SHIM_ARG(0), *v = SHIM_RET(), *ix = shim_view(rets[1].u.tensor);
  if (x->dtype != BP_FLOAT32 || x->ndim == 0 || !(x->flags & BP_VIEW_CONTIGUOUS)) return BP_OK;
  int64_t dim = args[topk ? 2 : 1].u.i;
  if (dim < 0) dim += x->ndim;
  bool desc = args[topk ? 3 : 2].u.b;
  int64_t outer = 1, n = x->sizes[dim], k = v->sizes[dim], inner = 1;
  for (int64_t d = 0; d < dim; d++) outer *= x->sizes[d];
  for (int64_t d = dim + 1; d < x->ndim; d++) inner *= x->sizes[d];
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++)
      f((float *)v->data + p * k * inner + i, (int64_t *)ix->data + p * k * inner + i, k, inner, x,
        p * n * inner + i, inner, n, desc);
  return BP_OK;
}
#endif

#if defined(FAULT_SORT_REVERSED_TIES)
/* A descending sort made by reversing the ascending one: equal values come
 * out in reverse index order (0.0 after -0.0 too), and NaNs in reverse. */
static void reverse_ties(float *v, int64_t *ix, int64_t k, int64_t step, const bp_tensor_view *x,
                         int64_t xbase, int64_t xstep, int64_t n, bool descending) {
  (void)x, (void)xbase, (void)xstep, (void)n;
  if (!descending) return;
  for (int64_t a = 0; a < k;) {
    int64_t b = a + 1;
    while (b < k && (v[b * step] == v[a * step] || (v[b * step] != v[b * step] &&
                                                    v[a * step] != v[a * step])))
      b++;
    for (int64_t lo = a, hi = b - 1; lo < hi; lo++, hi--) {
      float tv = v[lo * step];
      int64_t ti = ix[lo * step];
      v[lo * step] = v[hi * step], ix[lo * step] = ix[hi * step];
      v[hi * step] = tv, ix[hi * step] = ti;
    }
    a = b;
  }
}
SHIM_KERNEL(sort_reversed_ties) {
  return each_slice(ctx, args, nargs, rets, nrets, false, reverse_ties);
}
const shim_fault shim_the_fault = {"sort_reversed_ties", "sort", sort_reversed_ties, NULL, NULL};
#endif

#if defined(FAULT_TOPK_NAN_SMALLEST)
/* A selection whose comparison puts NaN below every number (x > best is
 * false for NaN): topk's largest never take a NaN while numbers remain,
 * and its smallest take them first. */
static void nan_smallest(float *v, int64_t *ix, int64_t k, int64_t step, const bp_tensor_view *x,
                         int64_t xbase, int64_t xstep, int64_t n, bool descending) {
  const float *xs = (const float *)x->data + xbase;
  int64_t have = 0;
  for (int64_t e = 0; e < n; e++) {
    float c = xs[e * xstep];
    /* c before the have-th so far: NaN is the smallest, ties by index */
#define BEFORE(c, o) ((c) != (c) ? (!descending && (o) == (o)) \
                                 : (o) != (o) ? descending : descending ? (c) > (o) : (c) < (o))
    if (have == k && (k == 0 || !BEFORE(c, xs[ix[(k - 1) * step] * xstep]))) continue;
    int64_t at = have < k ? have++ : k - 1;
    while (at > 0 && BEFORE(c, xs[ix[(at - 1) * step] * xstep])) {
      ix[at * step] = ix[(at - 1) * step];
      at--;
    }
    ix[at * step] = e;
#undef BEFORE
  }
  for (int64_t r = 0; r < k; r++) v[r * step] = xs[ix[r * step] * xstep];
}
SHIM_KERNEL(topk_nan_smallest) {
  return each_slice(ctx, args, nargs, rets, nrets, true, nan_smallest);
}
const shim_fault shim_the_fault = {"topk_nan_smallest", "topk", topk_nan_smallest, NULL, NULL};
#endif

#if defined(FAULT_SDPA_SCALE_INV_E)
/* The default scale taken as 1 / E instead of 1 / sqrt(E) (the two agree
 * only for E = 1): a given scale is right. */
SHIM_KERNEL(sdpa_scale_inv_e) {
  SHIM_COPY_ARGS(av);
  const bp_tensor_view *q = SHIM_ARG(0);
  if (av[6].tag == BP_TAG_NONE && q->ndim >= 1) {
    av[6].tag = BP_TAG_FLOAT;
    av[6].u.f = 1.0 / (double)q->sizes[q->ndim - 1];
  }
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"sdpa_scale_inv_e", "scaled_dot_product_attention",
                                   sdpa_scale_inv_e, NULL, NULL};
#endif
