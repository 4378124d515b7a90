/*
 * plugins/cpu/sort.c - topk and sort (op set 2).
 *
 * Both order the elements of each slice along dim by value, NaN above
 * every number, equal values (0.0 and -0.0 among them) by their index: the
 * stable order, PyTorch's sort(stable=True).  topk takes the first k of
 * the descending order (largest) or of the ascending one; sort all of
 * them.  Each slice's values are read once into keys (double for the
 * floats and the integers that fit, int64 for int64), and its order is
 * found by:
 *   - a bounded insertion of the best k so far, for topk with k <= 64:
 *     one comparison per element once the buffer is full (sampling's
 *     topk of a vocabulary is this);
 *   - a bottom-up merge sort of the indices, which is stable, otherwise.
 * Slices run on the pool.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* topk takes the insertion path up to this k. */
#define TOPK_INSERT_MAX 64

typedef struct sort_job {
  const char *x;       /* self, contiguous */
  char *values;        /* [outer, k, inner] */
  int64_t *indices;    /* likewise */
  int32_t dtype;
  int64_t itemsize, outer, n, inner, k;
  bool descending, exact_int; /* exact_int: int64 keys */
  bool failed;
} sort_job;

/* One key: a double, or an int64 (int64 self, whose values a double would
 * round). */
typedef union key {
  double f;
  int64_t i;
} key;

static key load_key(const sort_job *j, const char *p) {
  key k;
  switch (j->dtype) {
    case BP_FLOAT32: k.f = *(const float *)(const void *)p; break;
    case BP_FLOAT64: k.f = *(const double *)(const void *)p; break;
    case BP_FLOAT16: k.f = bp_aux_f16_to_f32(*(const uint16_t *)(const void *)p); break;
    case BP_BFLOAT16: k.f = bp_aux_bf16_to_f32(*(const uint16_t *)(const void *)p); break;
    case BP_INT8: k.f = *(const int8_t *)(const void *)p; break;
    case BP_INT16: k.f = *(const int16_t *)(const void *)p; break;
    case BP_INT32: k.f = *(const int32_t *)(const void *)p; break;
    case BP_UINT8: k.f = *(const uint8_t *)p; break;
    case BP_BOOL: k.f = *(const uint8_t *)p != 0; break;
    default: k.i = *(const int64_t *)(const void *)p; break; /* int64 */
  }
  return k;
}

/* Whether element a (key ka) comes strictly before element b in the
 * order: by value, NaN above every number; equal values are left to the
 * caller (the lower index first). */
static inline bool before(const sort_job *j, key ka, key kb) {
  if (j->exact_int) return j->descending ? ka.i > kb.i : ka.i < kb.i;
  bool na = ka.f != ka.f, nb = kb.f != kb.f;
  if (na || nb) return j->descending ? na && !nb : nb && !na;
  return j->descending ? ka.f > kb.f : ka.f < kb.f;
}

/* The order of keys[0 .. n-1], stable: idx gets it (tmp is scratch). */
static void merge_sort(const sort_job *j, const key *keys, int64_t *idx, int64_t *tmp,
                       int64_t n) {
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  int64_t *src = idx, *dst = tmp;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      /* the right run's element goes first only when strictly before */
      while (a < mid && b < hi)
        dst[o++] = before(j, keys[src[b]], keys[src[a]]) ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}

/* The first k of the order of keys[0 .. n-1] into idx[0 .. k-1], by
 * insertion into the best k so far: a later element enters only when it
 * is strictly before the k-th, so equal values keep their index order. */
static void select_k(const sort_job *j, const key *keys, int64_t *idx, int64_t n, int64_t k) {
  int64_t have = 0;
  for (int64_t e = 0; e < n; e++) {
    if (have == k && !before(j, keys[e], keys[idx[k - 1]])) continue;
    int64_t at = have < k ? have++ : k - 1;
    while (at > 0 && before(j, keys[e], keys[idx[at - 1]])) {
      idx[at] = idx[at - 1];
      at--;
    }
    idx[at] = e;
  }
}

static void sort_items(void *ctx, int64_t begin, int64_t end) {
  sort_job *j = ctx;
  int64_t n = j->n, k = j->k, inner = j->inner;
  key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
  int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
  int64_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
  if (!keys || !idx || !tmp) {
    j->failed = true;
    free(keys);
    free(idx);
    free(tmp);
    return;
  }
  bool insert = k <= TOPK_INSERT_MAX && k < n;
  size_t item = (size_t)j->itemsize;
  for (int64_t it = begin; it < end; it++) {
    int64_t o = it / inner, i = it % inner;
    const char *x = j->x + (size_t)(o * n * inner + i) * item;
    for (int64_t e = 0; e < n; e++) keys[e] = load_key(j, x + (size_t)(e * inner) * item);
    if (insert && k > 0)
      select_k(j, keys, idx, n, k);
    else
      merge_sort(j, keys, idx, tmp, n);
    char *v = j->values + (size_t)(o * k * inner + i) * item;
    int64_t *ix = j->indices + o * k * inner + i;
    for (int64_t r = 0; r < k; r++) {
      memcpy(v + (size_t)(r * inner) * item, x + (size_t)(idx[r] * inner) * item, item);
      ix[r * inner] = idx[r];
    }
  }
  free(keys);
  free(idx);
  free(tmp);
}

/* Fills values and indices (the results the meta function sized). */
static bp_status topk_sort(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *values,
                           bp_tensor *indices) {
  bool topk = (intptr_t)ctx->user_data == 1;
  const bp_tensor_view *vv = view_of(values), *vx = view_of(args[0].u.tensor);
  if (vv->numel == 0) return BP_OK;
  bp_tensor *c = NULL;
  bp_status st = cpu_cast_to(args[0].u.tensor, vx->dtype, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  int64_t dim_arg = args[topk ? 2 : 1].u.i;
  int32_t dim = vc->ndim > 0 ? (int32_t)(dim_arg < 0 ? dim_arg + vc->ndim : dim_arg) : 0;
  sort_job j = {vc->data, vv->data, view_of(indices)->data, vc->dtype, vc->itemsize, 1,
                vc->ndim > 0 ? vc->sizes[dim] : 1, 1, 0, false, vc->dtype == BP_INT64, false};
  /* a 0-dim self gives its element for k 0 or 1, as in PyTorch */
  j.k = topk && vc->ndim > 0 ? args[1].u.i : j.n;
  j.descending = topk ? args[3].u.b : args[2].u.b;
  for (int32_t d = 0; d < dim; d++) j.outer *= vc->sizes[d];
  for (int32_t d = dim + 1; d < vc->ndim; d++) j.inner *= vc->sizes[d];
  int64_t slices = j.outer * j.inner;
  cpu_parallel_for(slices, j.n >= 4096 ? 1 : 4096 / (j.n > 0 ? j.n : 1), sort_items, &j);
  cpu_host->tensor_release(c);
  if (j.failed)
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the scratch of a slice of %lld "
                   "elements", ctx->op_name, (long long)j.n);
  return BP_OK;
}

/* The structured kernel: the host allocated both results. */
static bp_status topk_sort_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  return topk_sort(ctx, args, rets[0].u.tensor, rets[1].u.tensor);
}

/* For a host before ABI 1.2: the kernel allocates both results. */
static bp_status topk_sort_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                  bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *out[2];
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, out, 2);
  if (st) return st;
  st = topk_sort(ctx, args, out[0], out[1]);
  if (st) {
    cpu_host->tensor_release(out[0]);
    cpu_host->tensor_release(out[1]);
    return st;
  }
  bp_aux_return_tensor(&rets[0], out[0]);
  return bp_aux_return_tensor(&rets[1], out[1]);
}

bp_status cpu_register_sort(bp_library *lib) {
  static const char *const ops[] = {"sort", "topk"}; /* user_data: 0, 1 */
  bp_status st = BP_OK;
  for (intptr_t i = 0; !st && i < 2; i++)
    st = bp_aux_impl_structured(cpu_host, lib, ops[i], BP_DEVICE_CPU, topk_sort_kernel,
                                topk_sort_fill, (const void *)i, BP_PRIORITY_REFERENCE);
  return st;
}
