/*
 * plugins/cuda/overlap.h - whether two views share memory, as the CPU
 * plugin decides it: copy_ copies an overlapping source first, and add.out
 * refuses an out that overlaps an input other than exactly that input.
 * Host code, also run by tests/cuda/test-cuda-functors.
 */
#ifndef BP_PLUGINS_CUDA_OVERLAP_H
#define BP_PLUGINS_CUDA_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/abi.h>

/* The bytes [lo, hi) that a view's elements lie in. */
static inline void cu_byte_span(const bp_tensor_view *v, uintptr_t *lo, uintptr_t *hi) {
  int64_t reach = 0;
  for (int32_t d = 0; d < v->ndim; d++)
    if (v->sizes[d] > 1) reach += (v->sizes[d] - 1) * v->strides[d];
  *lo = (uintptr_t)v->data;
  *hi = *lo + (uintptr_t)((reach + 1) * v->itemsize);
}

static inline uint64_t cu_gcd64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/*
 * Whether two views may share a byte.  Views on other devices, or whose
 * byte spans are apart, do not.  Otherwise, every element of a starts at
 * a->data plus a multiple of g (the gcd of both views' byte strides) away
 * from b's elements, which rules out interleaved views such as the even
 * and odd elements of one buffer.  With d the distance from b's start to
 * a's modulo g, an element of a that starts d bytes after one of b meets
 * it when d < b's itemsize, and one that starts g - d bytes before it when
 * g - d < a's itemsize (the views may differ in dtype).
 */
static inline bool cu_may_overlap(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->numel == 0 || b->numel == 0) return false;
  if (a->device.type != b->device.type || a->device.index != b->device.index) return false;
  uintptr_t alo, ahi, blo, bhi;
  cu_byte_span(a, &alo, &ahi);
  cu_byte_span(b, &blo, &bhi);
  if (ahi <= blo || bhi <= alo) return false;
  uint64_t g = 0;
  for (int32_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] > 1) g = cu_gcd64(g, (uint64_t)(a->strides[d] * a->itemsize));
  for (int32_t d = 0; d < b->ndim; d++)
    if (b->sizes[d] > 1) g = cu_gcd64(g, (uint64_t)(b->strides[d] * b->itemsize));
  if (g == 0) return true; /* two single elements whose spans meet */
  int64_t diff = (int64_t)((intptr_t)alo - (intptr_t)blo) % (int64_t)g; /* a - b mod g */
  if (diff < 0) diff += (int64_t)g;
  return diff < b->itemsize || (int64_t)g - diff < a->itemsize;
}

/* Whether two views address exactly the same elements in the same order. */
static inline bool cu_same_view(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || (a->sizes[d] > 1 && a->strides[d] != b->strides[d]))
      return false;
  return true;
}

#endif /* BP_PLUGINS_CUDA_OVERLAP_H */
