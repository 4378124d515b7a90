/*
 * host/tensor.c - the tensor runtime (the dtypes: dtype.c).
 *
 * A tensor is one allocation holding its reference count, its metadata
 * view (with inline size and stride arrays) and, for a fresh tensor, its
 * storage record.  Views made with bp_tensor_as_strided() point at the base
 * tensor's storage record and hold a reference to it.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static atomic_int_fast64_t live_tensors;

BP_API int64_t bp_live_tensor_count(void) {
  return (int64_t)atomic_load_explicit(&live_tensors, memory_order_relaxed);
}

/* PyTorch's notion: dimensions of size 1 may have any stride, and an empty
 * tensor is contiguous. */
static bool strides_contiguous(int32_t ndim, const int64_t *sizes, const int64_t *strides,
                               int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

/* No two indices share an element and no element is skipped, in some
 * order of the dimensions. */
static bool strides_dense(int32_t ndim, const int64_t *sizes, const int64_t *strides,
                          int64_t numel) {
  if (numel == 0) return true;
  int32_t order[BP_MAX_NDIM];
  int32_t n = 0;
  for (int32_t d = 0; d < ndim; d++)
    if (sizes[d] != 1) order[n++] = d;
  /* Insertion sort by stride: ndim is at most 16. */
  for (int32_t i = 1; i < n; i++) {
    int32_t k = order[i], j = i;
    while (j > 0 && strides[order[j - 1]] > strides[k]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = k;
  }
  int64_t expected = 1;
  for (int32_t i = 0; i < n; i++) {
    if (strides[order[i]] != expected) return false;
    expected *= sizes[order[i]];
  }
  return true;
}

/* Validates sizes/strides and computes numel and the number of storage
 * elements they reach (0 for an empty tensor). */
static bp_status check_geometry(const char *fn, int32_t ndim, const int64_t *sizes,
                                const int64_t *strides, int64_t *out_numel,
                                int64_t *out_extent) {
  if (ndim < 0 || ndim > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: ndim is %d, expected 0 .. %d", fn, (int)ndim, BP_MAX_NDIM);
  if (ndim > 0 && !sizes)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: sizes is NULL for ndim %d", fn, (int)ndim);
  int64_t numel = 1, last = 0;
  bool empty = false;
  for (int32_t d = 0; d < ndim; d++) {
    if (sizes[d] < 0)
      return bp__error(BP_ERR_SHAPE, "%s: sizes[%d] is %lld, expected >= 0", fn, (int)d,
                       (long long)sizes[d]);
    if (strides && strides[d] < 0)
      return bp__error(BP_ERR_SHAPE, "%s: strides[%d] is %lld, expected >= 0", fn, (int)d,
                       (long long)strides[d]);
    empty |= sizes[d] == 0;
  }
  /* A zero dimension anywhere makes the tensor empty, however large the
   * others (PyTorch allows torch.empty(2**40, 2**40, 0)). */
  for (int32_t d = 0; d < ndim && !empty; d++)
    if (!bp__mul_ok(numel, sizes[d], &numel))
      return bp__error(BP_ERR_OVERFLOW, "%s: the element count overflows at dimension %d", fn,
                       (int)d);
  if (empty) numel = 0;
  if (numel > 0 && strides) {
    for (int32_t d = 0; d < ndim; d++) {
      int64_t reach;
      if (!bp__mul_ok(sizes[d] - 1, strides[d], &reach) ||
          __builtin_add_overflow(last, reach, &last))
        return bp__error(BP_ERR_OVERFLOW, "%s: the storage extent overflows at dimension %d", fn,
                         (int)d);
    }
  }
  *out_numel = numel;
  *out_extent = numel == 0 ? 0 : (strides ? last + 1 : numel);
  return BP_OK;
}

/* Row-major strides.  An empty tensor may have sizes whose product
 * overflows (PyTorch allows torch.empty(0, 2**40, 2**40)); its strides are
 * never used to reach an element, so they saturate instead. */
static void contiguous_strides(int32_t ndim, const int64_t *sizes, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    if (!bp__mul_ok(s, sizes[d] > 0 ? sizes[d] : 1, &s)) s = INT64_MAX;
  }
}

/* Fills t's view from its storage and geometry (already validated). */
static void fill_view(bp_tensor *t, int32_t dtype, int32_t ndim, const int64_t *sizes,
                      const int64_t *strides, int64_t offset, int64_t numel) {
  size_t item = bp_dtype_size(dtype);
  /* Loops, not memcpy: ndim is small, and a call costs more. */
  for (int32_t d = 0; d < ndim; d++) t->sizes[d] = sizes[d];
  if (strides)
    for (int32_t d = 0; d < ndim; d++) t->strides[d] = strides[d];
  else
    contiguous_strides(ndim, sizes, t->strides);
  bp_tensor_view *v = &t->view;
  v->struct_size = BP_TENSOR_VIEW_STRUCT_SIZE;
  v->device = t->storage->device;
  t->device_slot = bp__device_slot(v->device.type);
  t->dtype_bit = bp__dtype_bit(dtype);
  v->dtype = dtype;
  v->ndim = ndim;
  v->sizes = ndim > 0 ? t->sizes : NULL;
  v->strides = ndim > 0 ? t->strides : NULL;
  v->storage_offset = offset;
  v->numel = numel;
  v->itemsize = (int64_t)item;
  v->storage_base = t->storage->data;
  v->storage_nbytes = t->storage->nbytes;
  v->data = t->storage->data ? (char *)t->storage->data + offset * (int64_t)item : NULL;
  v->flags = 0;
  if (strides_contiguous(ndim, t->sizes, t->strides, numel))
    v->flags |= BP_VIEW_CONTIGUOUS | BP_VIEW_DENSE;
  else if (strides_dense(ndim, t->sizes, t->strides, numel))
    v->flags |= BP_VIEW_DENSE;
}

/* What a handle kept for reuse holds as its count (guard.c): a release of
 * a handle already freed is then seen, not a silent double free. */
#define FREED_MARK (INT64_MIN / 2)

/* A handle's block: the one freed last when the guard reuses addresses
 * (guard.c), else a new one; and its end. */
static void free_block(bp_tensor *t) {
  atomic_store_explicit(&t->refcount, FREED_MARK, memory_order_relaxed);
  if (!bp__guard_keep_handle(t, sizeof *t)) bp__free(t);
}

/* Whether a device type counts its tensors: an unload waits for a
 * plugin's types to have none.  The host CPU's type is never unloaded, and
 * nothing reads its count, so its tensors skip two atomic operations (a
 * locked instruction each, a good part of a small call). */
static inline bool counts_tensors(const bp__device_type *dt) { return dt != &bp__cpu_type; }

static bp_tensor *tensor_block(bp__device_type *dt) {
  bp_tensor *t = bp__guard_reuse_handle(sizeof *t);
  if (!t) t = bp__malloc(sizeof *t);
  if (!t) return NULL;
  atomic_init(&t->refcount, 1);
  atomic_fetch_add_explicit(&live_tensors, 1, memory_order_relaxed);
  if (counts_tensors(dt)) atomic_fetch_add_explicit(&dt->live_tensors, 1, memory_order_relaxed);
  return t;
}

static bp_status tensor_new(const char *fn, bp_device device, int32_t dtype, int32_t ndim,
                            const int64_t *sizes, const int64_t *strides, void *blob,
                            bp_blob_deleter deleter, void *deleter_ctx, bp_tensor **out) {
  if (!out) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  size_t item = bp_dtype_size(dtype);
  if (item == 0) return bp__error(BP_ERR_TYPE, "%s: dtype %d is not a bp_dtype", fn, (int)dtype);
  int64_t numel, extent, nbytes, elem_bytes;
  bp_status st = check_geometry(fn, ndim, sizes, strides, &numel, &extent);
  if (st) return st;
  /* Strides of 0 let numel exceed the storage's extent; the elements'
   * byte count (bp_tensor_nbytes) must fit too. */
  if (!bp__mul_ok(extent, (int64_t)item, &nbytes) ||
      !bp__mul_ok(numel, (int64_t)item, &elem_bytes))
    return bp__error(BP_ERR_OVERFLOW, "%s: %lld elements of %s overflow the byte size", fn,
                     (long long)(numel > extent ? numel : extent), bp_dtype_name(dtype));
  if (blob == NULL && extent > 0 && deleter != NULL)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
  /* Kernels load whole elements: on memory not aligned to the element
   * size every load would be undefined behaviour (and a fault on some
   * devices). */
  if (blob && extent > 0 && (uintptr_t)blob % item != 0)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: data %p is not aligned to the %zu-byte elements of %s; copy it to "
                     "aligned memory first",
                     fn, blob, item, bp_dtype_name(dtype));
  /* Finding the device and counting the tensor against it happen inside a
   * read section, so that an unload, which hides the device and then waits
   * for read sections to end, sees every tensor made on it. */
  bp__device_type *dt;
  bp_tensor *t;
  if (device.type == BP_DEVICE_CPU && device.index == 0) {
    /* The host CPU is never unloaded: no read section. */
    dt = &bp__cpu_type;
    t = tensor_block(dt);
  } else {
    bool nested = false;
    bp__reader *r = bp__read_enter(&nested);
    if (!r) return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    st = bp__device_check(device, fn, &dt);
    t = st ? NULL : tensor_block(dt);
    bp__read_exit(r, nested);
    if (st) return st;
  }
  if (!t) return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  bp__storage *s = &t->own_storage;
  atomic_init(&s->refcount, 1);
  s->dt = dt;
  s->device = device;
  s->nbytes = (size_t)nbytes;
  s->deleter = deleter;
  s->deleter_ctx = deleter_ctx;
  s->embedded_in = t;
  s->data = blob;
  s->inline_data = false;
  /* Small CPU storage lives inside the tensor's block, unless allocations
   * are guarded (guard.c): then every storage gets its canaries. */
  if (!blob && !deleter && device.type == BP_DEVICE_CPU && nbytes <= BP__INLINE_BYTES &&
      !bp__guard_enabled()) {
    uintptr_t p = ((uintptr_t)t->inline_data + 63) & ~(uintptr_t)63;
    s->data = nbytes ? (void *)p : NULL;
    s->inline_data = true;
  } else if (!blob && !deleter) {
    st = bp__device_alloc(dt, device.index, (size_t)nbytes, &s->data);
    if (st) {
      atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
      if (counts_tensors(dt)) atomic_fetch_sub_explicit(&dt->live_tensors, 1, memory_order_relaxed);
      bp__free(t);
      return st;
    }
  }
  t->storage = s;
  fill_view(t, dtype, ndim, sizes, strides, 0, numel);
  *out = t;
  return BP_OK;
}

BP_API bp_status bp_tensor_empty(bp_device device, int32_t dtype, int32_t ndim,
                                 const int64_t *sizes, bp_tensor **out) {
  return tensor_new("bp_tensor_empty", device, dtype, ndim, sizes, NULL, NULL, NULL, NULL, out);
}

BP_API bp_status bp_tensor_empty_strided(bp_device device, int32_t dtype, int32_t ndim,
                                         const int64_t *sizes, const int64_t *strides,
                                         bp_tensor **out) {
  if (ndim > 0 && !strides)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_tensor_empty_strided: strides is NULL");
  return tensor_new("bp_tensor_empty_strided", device, dtype, ndim, sizes, strides, NULL, NULL,
                    NULL, out);
}

/* A blob with no deleter is marked by this no-op, so that tensor_new can
 * tell "wrap this memory" from "allocate". */
static void no_delete(void *ctx, void *data) {
  (void)ctx;
  (void)data;
}

BP_API bp_status bp_tensor_from_blob(bp_device device, int32_t dtype, int32_t ndim,
                                     const int64_t *sizes, const int64_t *strides, void *data,
                                     bp_blob_deleter deleter, void *deleter_ctx,
                                     bp_tensor **out) {
  return tensor_new("bp_tensor_from_blob", device, dtype, ndim, sizes, strides, data,
                    deleter ? deleter : no_delete, deleter_ctx, out);
}

BP_API bp_status bp_tensor_as_strided(bp_tensor *base, int32_t ndim, const int64_t *sizes,
                                      const int64_t *strides, int64_t storage_offset,
                                      bp_tensor **out) {
  static const char fn[] = "bp_tensor_as_strided";
  if (!base || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !base ? "base" : "out");
  if (ndim > 0 && !strides)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: strides is NULL", fn);
  if (storage_offset < 0)
    return bp__error(BP_ERR_SHAPE, "%s: storage_offset is %lld, expected >= 0", fn,
                     (long long)storage_offset);
  int64_t numel, extent, end_el, end_bytes;
  bp_status st = check_geometry(fn, ndim, sizes, strides, &numel, &extent);
  if (st) return st;
  bp__storage *s = base->storage;
  int64_t item = base->view.itemsize;
  /* An empty view reaches no element and may start anywhere (as in
   * PyTorch), but its data pointer and DLPack byte_offset are still
   * storage_offset * itemsize. */
  if (!bp__mul_ok(storage_offset, item, &end_bytes))
    return bp__error(BP_ERR_OVERFLOW, "%s: storage_offset %lld overflows the byte offset", fn,
                     (long long)storage_offset);
  if (!bp__mul_ok(numel, item, &end_bytes))
    return bp__error(BP_ERR_OVERFLOW, "%s: %lld elements of %s overflow the byte size", fn,
                     (long long)numel, bp_dtype_name(base->view.dtype));
  if (numel > 0) {
    if (__builtin_add_overflow(storage_offset, extent, &end_el) ||
        !bp__mul_ok(end_el, item, &end_bytes))
      return bp__error(BP_ERR_OVERFLOW, "%s: the view's extent overflows", fn);
    if ((uint64_t)end_bytes > s->nbytes)
      return bp__error(BP_ERR_SHAPE,
                       "%s: the view reaches byte %lld but the storage has %zu bytes", fn,
                       (long long)end_bytes, s->nbytes);
  }
  bp_tensor *t = tensor_block(s->dt);
  if (!t) return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
  t->storage = s;
  fill_view(t, base->view.dtype, ndim, sizes, strides, storage_offset, numel);
  *out = t;
  return BP_OK;
}

/*
 * Gives t, which has no elements, the contiguous shape `sizes` of its dtype
 * (the .out forms' resize of an empty `out`).  Its storage must be t's
 * alone and the host's allocation: storage that views share or that wraps
 * outside memory (bp_tensor_from_blob, DLPack) is not replaced.
 */
bp_status bp__tensor_resize_empty(bp_tensor *t, int32_t ndim, const int64_t *sizes,
                                  const char *who) {
  bp__storage *s = t->storage;
  if (t->view.numel != 0)
    return bp__error(BP_ERR_INTERNAL, "%s: only a tensor with no elements is resized", who);
  if (s->deleter || atomic_load_explicit(&s->refcount, memory_order_acquire) != 1)
    return bp__error(BP_ERR_SHAPE, "%s: 'out' has no elements but cannot be resized: %s", who,
                     s->deleter ? "it wraps memory that the host did not allocate"
                                : "other tensors share its storage");
  int64_t numel, extent, nbytes;
  int64_t strides[BP_MAX_NDIM];
  if (ndim < 0 || ndim > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: ndim is %d, expected 0 .. %d", who, (int)ndim, BP_MAX_NDIM);
  contiguous_strides(ndim, sizes, strides);
  bp_status st = check_geometry(who, ndim, sizes, strides, &numel, &extent);
  if (st) return st;
  if (!bp__mul_ok(extent, t->view.itemsize, &nbytes))
    return bp__error(BP_ERR_OVERFLOW, "%s: %lld elements of %s overflow the byte size", who,
                     (long long)extent, bp_dtype_name(t->view.dtype));
  if ((uint64_t)nbytes > s->nbytes) {
    void *data = NULL;
    st = bp__device_alloc(s->dt, s->device.index, (size_t)nbytes, &data);
    if (st) return st;
    if (!s->inline_data && s->data) bp__device_free(s->dt, s->device.index, s->data, s->nbytes);
    s->data = data;
    s->nbytes = (size_t)nbytes;
    s->inline_data = false;
  }
  fill_view(t, t->view.dtype, ndim, sizes, strides, 0, numel);
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* References                                                               */
/* ------------------------------------------------------------------------ */

BP_API bp_tensor *bp_tensor_retain(bp_tensor *t) {
  if (t) atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}

static void storage_release(bp__storage *s) {
  /* Only tensors hold a storage, and the caller's is one of them: a count
   * of 1 is the caller's alone, and nothing can raise it any more.  Most
   * storages have one tensor, so the locked decrement is skipped then. */
  if (atomic_load_explicit(&s->refcount, memory_order_acquire) != 1 &&
      atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
    return;
  if (s->deleter)
    s->deleter(s->deleter_ctx, s->data);
  else if (!s->inline_data)
    bp__device_free(s->dt, s->device.index, s->data, s->nbytes);
  /* The storage record lives in the block of the tensor that created it;
   * that tensor's own reference is gone by now, so the block can go. */
  free_block(s->embedded_in);
}

BP_API void bp_tensor_release(bp_tensor *t) {
  if (!t) return;
  int_fast64_t was = atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel);
  if (BP__UNLIKELY(was <= 0)) bp__guard_bad_release(t);
  if (was != 1) return;
  bp__storage *s = t->storage;
  bp__device_type *dt = s->dt;
  atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
  if (s->embedded_in != t) free_block(t);
  storage_release(s);
  /* Only now, after the device's free() has returned, may an unload see
   * the device type without tensors and close the plugin. */
  if (counts_tensors(dt)) atomic_fetch_sub_explicit(&dt->live_tensors, 1, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

BP_API const bp_tensor_view *bp_tensor_get_view(const bp_tensor *t) {
  return t ? &t->view : NULL;
}

BP_API bool bp_tensor_is_contiguous(const bp_tensor *t) {
  return t && (t->view.flags & BP_VIEW_CONTIGUOUS);
}

BP_API int64_t bp_tensor_numel(const bp_tensor *t) { return t ? t->view.numel : 0; }

BP_API int64_t bp_tensor_nbytes(const bp_tensor *t) {
  return t ? t->view.numel * t->view.itemsize : 0;
}

/* ------------------------------------------------------------------------ */
/* Copy                                                                     */
/* ------------------------------------------------------------------------ */

/* Copies elements between host-visible buffers with any strides (bytes per
 * element `item`), walking the indices in row-major order. */
static void strided_copy(char *dst, const int64_t *dstr, const char *src, const int64_t *sstr,
                         int32_t ndim, const int64_t *sizes, int64_t numel, int64_t item) {
  if (numel == 0) return;
  int64_t idx[BP_MAX_NDIM] = {0};
  int64_t doff = 0, soff = 0;
  for (int64_t n = 0; n < numel; n++) {
    memcpy(dst + doff * item, src + soff * item, (size_t)item);
    for (int32_t d = ndim - 1; d >= 0; d--) {
      if (++idx[d] < sizes[d]) {
        doff += dstr[d];
        soff += sstr[d];
        break;
      }
      doff -= dstr[d] * (sizes[d] - 1);
      soff -= sstr[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

/* A live tensor keeps its device type registered, so its interface as
 * registered is valid (the published pointer may be hidden by an unload
 * attempt). */
static const bp_device_iface *iface_of(const bp_tensor *t) {
  return t->storage->dt->registered;
}

static bool host_visible(const bp_tensor *t) {
  return (iface_of(t)->flags & BP_DEVICE_HOST_VISIBLE) != 0;
}

/* Copies `nbytes` between two devices through `iface`, the interface of
 * the side that is not host memory. */
static bp_status iface_copy(const bp_device_iface *iface, void *dst, bp_device dd, const void *src,
                            bp_device sd, size_t nbytes) {
  if (nbytes == 0) return BP_OK;
  bp_status s = iface->copy(iface->user_data, dst, dd, src, sd, nbytes);
  if (s) return bp__plugin_failed(s, iface->name, "copy()");
  return BP_OK;
}

const char *bp__shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t n) {
  size_t len = 0;
  if (n == 0) return buf;
  len += (size_t)snprintf(buf, n, "[");
  for (int32_t d = 0; d < ndim && len < n; d++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

BP_API bp_status bp_tensor_copy(bp_tensor *dst, const bp_tensor *src) {
  static const char fn[] = "bp_tensor_copy";
  if (!dst || !src)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !dst ? "dst" : "src");
  const bp_tensor_view *dv = &dst->view, *sv = &src->view;
  if (dv->dtype != sv->dtype)
    return bp__error(BP_ERR_TYPE, "%s: dst is %s but src is %s", fn, bp_dtype_name(dv->dtype),
                     bp_dtype_name(sv->dtype));
  bool same = dv->ndim == sv->ndim;
  for (int32_t d = 0; same && d < dv->ndim; d++) same = dv->sizes[d] == sv->sizes[d];
  char s1[160], s2[160];
  if (!same)
    return bp__error(BP_ERR_SHAPE, "%s: dst has shape %s but src has shape %s (a copy does not "
                     "broadcast)", fn, bp__shape_str(dv->ndim, dv->sizes, s1, sizeof s1),
                     bp__shape_str(sv->ndim, sv->sizes, s2, sizeof s2));
  if (dv->numel == 0) return BP_OK;
  /* As core::copy_: a destination with several elements at one address
   * (a broadcast dimension) would keep only one of their values. */
  for (int32_t d = 0; d < dv->ndim; d++)
    if (dv->sizes[d] > 1 && dv->strides[d] == 0)
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "%s: dst's dimension %d has %lld elements at one address (stride 0); "
                       "expected a destination without broadcast dimensions",
                       fn, (int)d, (long long)dv->sizes[d]);
  int64_t item = dv->itemsize, nbytes = dv->numel * item;
  bool dh = host_visible(dst), sh = host_visible(src);
  bool dc = dv->flags & BP_VIEW_CONTIGUOUS, sc = sv->flags & BP_VIEW_CONTIGUOUS;

  if (dc && sc) {
    if (dh && sh) {
      memmove(dv->data, sv->data, (size_t)nbytes);
      return BP_OK;
    }
    if (dh || sh || dv->device.type == sv->device.type)
      return iface_copy(sh ? iface_of(dst) : iface_of(src), dv->data, dv->device, sv->data,
                        sv->device, (size_t)nbytes);
  }

  /* General case: bring both sides to host memory, gather/scatter there,
   * and write back.  Device sides copy their whole touched span, so bytes
   * between a strided destination's elements survive. */
  int64_t slo, shi, dlo, dhi;
  bp__view_span(sv, &slo, &shi);
  bp__view_span(dv, &dlo, &dhi);
  char *sbuf = NULL, *dbuf = NULL;
  const char *sbase;
  char *dbase;
  bp_status st = BP_OK;
  bool overlap = dst->storage == src->storage && dlo < shi && slo < dhi;
  if (sh && !overlap) {
    sbase = (const char *)sv->storage_base;
  } else {
    sbuf = bp__malloc((size_t)(shi - slo));
    if (!sbuf) return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    if (sh)
      memcpy(sbuf, (const char *)sv->storage_base + slo, (size_t)(shi - slo));
    else
      st = iface_copy(iface_of(src), sbuf, BP_CPU, (const char *)sv->storage_base + slo,
                      sv->device, (size_t)(shi - slo));
    sbase = sbuf - slo;
  }
  if (!st) {
    if (dh) {
      dbase = (char *)dv->storage_base;
    } else {
      dbuf = bp__malloc((size_t)(dhi - dlo));
      if (!dbuf) st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
      else
        st = iface_copy(iface_of(dst), dbuf, BP_CPU, (char *)dv->storage_base + dlo, dv->device,
                        (size_t)(dhi - dlo));
      dbase = dbuf - dlo;
    }
  }
  if (!st) {
    strided_copy(dbase + dv->storage_offset * item, dv->strides, sbase + sv->storage_offset * item,
                 sv->strides, dv->ndim, dv->sizes, dv->numel, item);
    if (!dh)
      st = iface_copy(iface_of(dst), (char *)dv->storage_base + dlo, dv->device, dbuf, BP_CPU,
                      (size_t)(dhi - dlo));
  }
  bp__free(sbuf);
  bp__free(dbuf);
  return st;
}
