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
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* The indices of `ix` (int64 or int32, any strides) as int64, in order,
 * into a new array *out (free it); each must lie in [0, bound). */
static bp_status read_indices(const bp_kernel_ctx *ctx, const bp_tensor_view *ix, int argi,
                              int64_t bound, int32_t dim, int64_t **out) {
  int64_t n = ix->numel;
  int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld indices",
                         ctx->op_name, (long long)n);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int32_t d = 0; d < ix->ndim; d++) off += idx[d] * ix->strides[d];
    const char *p = (const char *)ix->data + off * ix->itemsize;
    int64_t i = ix->dtype == BP_INT64 ? *(const int64_t *)(const void *)p
                                      : *(const int32_t *)(const void *)p;
    if (i < 0 || i >= bound) {
      free(v);
      return CPU_ERR(BP_ERR_INVALID_ARGUMENT,
                     "%s: argument #%d 'index': index %lld (at position %lld) is out of range "
                     "for dimension %d of size %lld (expected 0 .. %lld)",
                     ctx->op_name, argi, (long long)i, (long long)k, (int)dim, (long long)bound,
                     (long long)bound - 1);
    }
    v[k] = i;
    for (int32_t d = ix->ndim - 1; d >= 0; d--) {
      if (++idx[d] < ix->sizes[d]) break;
      idx[d] = 0;
    }
  }
  *out = v;
  return BP_OK;
}

/* What both gathers start with: dim, self's size along it, the checked
 * indices (*ix, to free) and a contiguous self (*c, to release). */
static bp_status gather_setup(const bp_kernel_ctx *ctx, const bp_value *args, int32_t *dim,
                              int64_t *size, int64_t **ix, bp_tensor **c) {
  const bp_tensor_view *va = view_of(args[0].u.tensor);
  *dim = 0;
  if (va->ndim > 0) *dim = (int32_t)(args[1].u.i < 0 ? args[1].u.i + va->ndim : args[1].u.i);
  *size = va->ndim > 0 ? va->sizes[*dim] : 1;
  *ix = NULL;
  *c = NULL;
  bp_status st = read_indices(ctx, view_of(args[2].u.tensor), 2, *size, *dim, ix);
  if (st) return st;
  st = cpu_cast_to(args[0].u.tensor, va->dtype, c);
  if (st) {
    free(*ix);
    *ix = NULL;
  }
  return st;
}

/* out = self's slices along dim at index (out sized by the host). */
static bp_status index_select_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                   bp_tensor *out) {
  const bp_tensor_view *va = view_of(args[0].u.tensor), *vi = view_of(args[2].u.tensor);
  const bp_tensor_view *vo = view_of(out);
  int32_t dim;
  int64_t size, *ix;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, &dim, &size, &ix, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  int64_t outer = 1, inner = 1, n = vi->numel;
  for (int32_t d = 0; d < dim; d++) outer *= va->sizes[d];
  for (int32_t d = dim + 1; d < va->ndim; d++) inner *= va->sizes[d];
  size_t row = (size_t)(inner * va->itemsize);
  const char *src = vc->data;
  char *dst = vo->data;
  if (vo->numel > 0)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t k = 0; k < n; k++)
        memcpy(dst + (size_t)(o * n + k) * row, src + (size_t)(o * size + ix[k]) * row, row);
  cpu_host->tensor_release(c);
  free(ix);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(index_select_kernel, index_select_impl)

/* out[..., i_dim, ...] = self[..., index[..., i_dim, ...], ...]. */
static bp_status gather_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *va = view_of(args[0].u.tensor), *vo = view_of(out);
  int32_t dim;
  int64_t size, *ix;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, &dim, &size, &ix, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  size_t isz = (size_t)va->itemsize;
  const char *src = vc->data;
  char *dst = vo->data;
  int64_t idx[BP_MAX_NDIM] = {0};
  /* The index's positions, in row-major order, are the result's. */
  for (int64_t k = 0; k < vo->numel; k++) {
    int64_t off = 0;
    for (int32_t d = 0; d < va->ndim; d++)
      off += (d == dim ? ix[k] : idx[d]) * vc->strides[d];
    memcpy(dst + (size_t)k * isz, src + (size_t)off * isz, isz);
    for (int32_t d = vo->ndim - 1; d >= 0; d--) {
      if (++idx[d] < vo->sizes[d]) break;
      idx[d] = 0;
    }
  }
  cpu_host->tensor_release(c);
  free(ix);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(gather_kernel, gather_impl)

bp_status cpu_register_index(bp_library *lib) {
  bp_status st = CPU_IMPL_STRUCTURED(lib, "index_select", index_select_kernel, NULL);
  if (!st) st = CPU_IMPL_STRUCTURED(lib, "gather", gather_kernel, NULL);
  return st;
}
