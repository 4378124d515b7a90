/*
 * plugins/cpu/index.c - the gathers of op set 2: index_select and gather
 * (embedding is the host's composite over index_select).
 *
 * Both read every index first and refuse one out of range with the index,
 * its position and the bound, before anything is read from self: an index
 * never reaches memory it does not name.  self is made contiguous (a copy
 * when it is not), so that a gathered slice is one memcpy: index_select of
 * whole rows, the embedding lookup, copies `inner` elements per index.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* The first index of v[0 .. n-1] outside [0, bound), or -1. */
static int64_t first_bad(const int64_t *v, int64_t n, int64_t bound) {
  uint64_t any = 0;
  /* one unsigned compare per index (negative ones wrap to huge), and a
   * branch-free loop until one is found */
  for (int64_t k = 0; k < n; k++) any |= (uint64_t)v[k] >= (uint64_t)bound;
  if (!any) return -1;
  for (int64_t k = 0; k < n; k++)
    if ((uint64_t)v[k] >= (uint64_t)bound) return k;
  return -1;
}

/* The indices of `ix` (int64 or int32, any strides) as contiguous int64,
 * in order: *out is ix's own data when it is contiguous int64 (*owned
 * false), else a new array to free.  Each must lie in [0, bound). */
static bp_status read_indices(const bp_kernel_ctx *ctx, const bp_tensor_view *ix, int argi,
                              int64_t bound, int32_t dim, const int64_t **out, bool *owned) {
  int64_t n = ix->numel;
  int64_t *v = NULL;
  *owned = !(ix->dtype == BP_INT64 && (ix->flags & BP_VIEW_CONTIGUOUS));
  if (*owned) {
    v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld indices",
                           ctx->op_name, (long long)n);
    int64_t idx[BP_MAX_NDIM] = {0};
    for (int64_t k = 0; k < n; k++) {
      int64_t off = 0;
      for (int32_t d = 0; d < ix->ndim; d++) off += idx[d] * ix->strides[d];
      const char *p = (const char *)ix->data + off * ix->itemsize;
      v[k] = ix->dtype == BP_INT64 ? *(const int64_t *)(const void *)p
                                   : *(const int32_t *)(const void *)p;
      for (int32_t d = ix->ndim - 1; d >= 0; d--) {
        if (++idx[d] < ix->sizes[d]) break;
        idx[d] = 0;
      }
    }
  }
  const int64_t *all = *owned ? v : (const int64_t *)ix->data;
  int64_t k = first_bad(all, n, bound);
  if (k >= 0) {
    int64_t i = all[k];
    free(v);
    return CPU_ERR(BP_ERR_INVALID_ARGUMENT,
                   "%s: argument #%d 'index': index %lld (at position %lld) is out of range "
                   "for dimension %d of size %lld (expected 0 .. %lld)",
                   ctx->op_name, argi, (long long)i, (long long)k, (int)dim, (long long)bound,
                   (long long)bound - 1);
  }
  *out = all;
  return BP_OK;
}

/* What both gathers start with: dim, self's size along it, the checked
 * indices (*ix, to free) and a contiguous self (*c, to release). */
static bp_status gather_setup(const bp_kernel_ctx *ctx, const bp_value *args, int32_t *dim,
                              int64_t *size, const int64_t **ix, bool *owned, bp_tensor **c) {
  const bp_tensor_view *va = view_of(args[0].u.tensor);
  *dim = 0;
  if (va->ndim > 0) *dim = (int32_t)(args[1].u.i < 0 ? args[1].u.i + va->ndim : args[1].u.i);
  *size = va->ndim > 0 ? va->sizes[*dim] : 1;
  *ix = NULL;
  *c = NULL;
  bp_status st = read_indices(ctx, view_of(args[2].u.tensor), 2, *size, *dim, ix, owned);
  if (st) return st;
  st = cpu_cast_to(args[0].u.tensor, va->dtype, c);
  if (st && *owned) free((void *)*ix);
  return st;
}

/* index_select's copies: slice t = (o, k) of the result is slice (o,
 * ix[k]) of self, `row` bytes each. */
typedef struct select_job {
  const char *src;
  char *dst;
  const int64_t *ix;
  int64_t outer, n, inner, size;
  size_t row;
} select_job;

static void select_rows(void *ctx, int64_t begin, int64_t end) {
  const select_job *j = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / j->n, k = t % j->n;
    memcpy(j->dst + (size_t)t * j->row, j->src + (size_t)(o * j->size + j->ix[k]) * j->row,
           j->row);
  }
}

/* out = self's slices along dim at index (out sized by the host). */
static bp_status index_select_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                   bp_tensor *out) {
  const bp_tensor_view *va = view_of(args[0].u.tensor), *vi = view_of(args[2].u.tensor);
  const bp_tensor_view *vo = view_of(out);
  int32_t dim;
  int64_t size;
  const int64_t *ix;
  bool owned;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, &dim, &size, &ix, &owned, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  select_job j = {vc->data, vo->data, ix, 1, vi->numel, 1, size, 0};
  for (int32_t d = 0; d < dim; d++) j.outer *= va->sizes[d];
  for (int32_t d = dim + 1; d < va->ndim; d++) j.inner *= va->sizes[d];
  j.row = (size_t)(j.inner * va->itemsize);
  if (vo->numel > 0)
    cpu_parallel_for(j.outer * j.n, j.row >= 65536 ? 1 : (int64_t)(65536 / (j.row ? j.row : 1)),
                     select_rows, &j);
  cpu_host->tensor_release(c);
  if (owned) free((void *)ix);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(index_select_kernel, index_select_impl)

/* gather's copies, one row of the result (its last dim) per item: the
 * source offset of the row's start is computed once, then stepped along
 * the last dim (by the index when dim is the last). */
typedef struct gather_job {
  const bp_tensor_view *self, *out;
  const int64_t *ix;
  int32_t dim;
} gather_job;

#define GATHER_ROW(T)                                                                       \
  for (int64_t i = 0; i < last; i++)                                                        \
    ((T *)dst)[i] = ((const T *)src)[base + (along ? ix[i] * sl : i * sl + ix[i] * sd)]

static void gather_rows(void *ctx, int64_t begin, int64_t end) {
  const gather_job *j = ctx;
  const bp_tensor_view *a = j->self, *o = j->out;
  int32_t nd = o->ndim, dim = j->dim;
  int64_t last = nd > 0 ? o->sizes[nd - 1] : 1;
  bool along = nd == 0 || dim == nd - 1;
  int64_t sl = a->ndim > 0 ? a->strides[a->ndim - 1] : 0, sd = a->ndim > 0 ? a->strides[dim] : 0;
  const char *src = a->data;
  for (int64_t r = begin; r < end; r++) {
    /* the row's multi-index (all but the last dim) and base offset */
    int64_t rest = r, base = 0;
    for (int32_t d = nd - 2; d >= 0; d--) {
      int64_t id = rest % o->sizes[d];
      rest /= o->sizes[d];
      if (d != dim) base += id * a->strides[d];
    }
    const int64_t *ix = j->ix + r * last;
    char *dst = (char *)o->data + (size_t)(r * last * o->itemsize);
    /* (the row's base leaves dim out: each element adds its index's) */
    switch (a->itemsize) {
      case 1: GATHER_ROW(uint8_t); break;
      case 2: GATHER_ROW(uint16_t); break;
      case 4: GATHER_ROW(uint32_t); break;
      default: GATHER_ROW(uint64_t); break;
    }
  }
}

/* out[..., i_dim, ...] = self[..., index[..., i_dim, ...], ...]. */
static bp_status gather_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out);
  int32_t dim;
  int64_t size;
  const int64_t *ix;
  bool owned;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, &dim, &size, &ix, &owned, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  gather_job j = {vc, vo, ix, dim};
  int64_t last = vo->ndim > 0 ? vo->sizes[vo->ndim - 1] : 1;
  int64_t rows = last > 0 ? vo->numel / last : 0;
  if (rows > 0)
    cpu_parallel_for(rows, last >= 16384 ? 1 : 16384 / last, gather_rows, &j);
  cpu_host->tensor_release(c);
  if (owned) free((void *)ix);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(gather_kernel, gather_impl)

bp_status cpu_register_index(bp_library *lib) {
  bp_status st = CPU_IMPL_STRUCTURED(lib, "index_select", index_select_kernel, NULL);
  if (!st) st = CPU_IMPL_STRUCTURED(lib, "gather", gather_kernel, NULL);
  return st;
}
