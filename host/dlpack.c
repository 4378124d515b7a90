/*
 * host/dlpack.c - zero-copy exchange with DLPack (DLManagedTensor).
 *
 * Export shares the tensor's data and its size/stride arrays and holds a
 * reference to the tensor until the consumer calls the deleter.  Import
 * wraps the producer's memory and calls its deleter when the last
 * reference dies.
 */
#include "internal.h"

#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bp_tensor_view shares DLTensor's field types where they overlap, so that
 * export only points at the host's arrays. */
BP_STATIC_ASSERT(sizeof(((DLTensor *)0)->shape[0]) == sizeof(int64_t), "DLPack shape is int64");
BP_STATIC_ASSERT(sizeof(DLDevice) == sizeof(bp_device), "DLDevice matches bp_device");

/* DLPack's code for bool (kDLBool, added after the 0.6 header we build
 * against); Backplane's dtype codes already use it. */
#define BP_DLPACK_BOOL_CODE 6

static void export_deleter(DLManagedTensor *m) {
  if (!m) return;
  bp_tensor_release(m->manager_ctx);
  bp__free(m);
}

BP_API bp_status bp_tensor_to_dlpack(bp_tensor *t, struct DLManagedTensor **out) {
  if (!t || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_tensor_to_dlpack: %s is NULL",
                     !t ? "tensor" : "out");
  DLManagedTensor *m = bp__calloc(1, sizeof *m);
  if (!m) return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_tensor_to_dlpack: out of memory");
  const bp_tensor_view *v = &t->view;
  DLTensor *d = &m->dl_tensor;
  d->data = v->storage_base;
  d->byte_offset = (uint64_t)(v->storage_offset * v->itemsize);
  d->device.device_type = v->device.type >= BP_DEVICE_DYNAMIC_FIRST
                              ? kDLExtDev
                              : (DLDeviceType)v->device.type;
  d->device.device_id = v->device.index;
  d->ndim = v->ndim;
  d->dtype.code = (uint8_t)BP_DTYPE_DLPACK_CODE(v->dtype);
  d->dtype.bits = (uint8_t)BP_DTYPE_BITS(v->dtype);
  d->dtype.lanes = 1;
  /* The tensor's inline arrays: valid as long as the reference we hold. */
  d->shape = t->sizes;
  d->strides = t->strides;
  m->manager_ctx = bp_tensor_retain(t);
  m->deleter = export_deleter;
  *out = m;
  return BP_OK;
}

static void import_deleter(void *ctx, void *data) {
  (void)data;
  DLManagedTensor *m = ctx;
  if (m->deleter) m->deleter(m);
}

BP_API bp_status bp_tensor_from_dlpack(struct DLManagedTensor *src, bp_tensor **out) {
  static const char fn[] = "bp_tensor_from_dlpack";
  if (!src || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !src ? "src" : "out");
  const DLTensor *d = &src->dl_tensor;
  if (d->ndim < 0 || d->ndim > BP_MAX_NDIM)
    return bp__error(BP_ERR_SHAPE, "%s: ndim is %d, expected 0 .. %d", fn, d->ndim, BP_MAX_NDIM);
  if (d->dtype.lanes != 1)
    return bp__error(BP_ERR_TYPE, "%s: dtype has %u lanes, only 1 is supported", fn,
                     (unsigned)d->dtype.lanes);
  int32_t dtype = BP_DTYPE_PACK((int32_t)d->dtype.code, (int32_t)d->dtype.bits);
  if (!bp_dtype_name(dtype))
    return bp__error(BP_ERR_TYPE, "%s: DLPack dtype (code %u, %u bits) has no Backplane dtype", fn,
                     (unsigned)d->dtype.code, (unsigned)d->dtype.bits);
  if (d->ndim > 0 && !d->shape)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: shape is NULL for ndim %d", fn, d->ndim);
  if (d->strides)
    for (int i = 0; i < d->ndim; i++)
      if (d->strides[i] < 0)
        return bp__error(BP_ERR_SHAPE, "%s: strides[%d] is %lld; negative strides are not supported",
                         fn, i, (long long)d->strides[i]);
  size_t item = bp_dtype_size(dtype);
  if (d->byte_offset % item)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: byte_offset %llu is not a multiple of the %zu-byte element",
                     fn, (unsigned long long)d->byte_offset, item);
  /* data + byte_offset must not wrap around the address space */
  if (d->byte_offset > (uint64_t)INT64_MAX ||
      (d->data && d->byte_offset > UINTPTR_MAX - (uintptr_t)d->data))
    return bp__error(BP_ERR_OVERFLOW, "%s: byte_offset %llu reaches past the address space", fn,
                     (unsigned long long)d->byte_offset);
  bp_device dev = bp_device_make((int32_t)d->device.device_type, (int32_t)d->device.device_id);
  char *data = d->data ? (char *)d->data + d->byte_offset : NULL;
  bp_status st = bp_tensor_from_blob(dev, dtype, (int32_t)d->ndim, d->shape, d->strides, data,
                                     import_deleter, src, out);
  if (st && bp_last_status() == st && strncmp(bp_last_error(), fn, sizeof fn - 1) != 0) {
    /* Say which entry point the failure came through. */
    char msg[900];
    snprintf(msg, sizeof msg, "%s", bp_last_error());
    return bp__error(st, "%s: %s", fn, msg);
  }
  return st;
}
