/* DLPack export and import: zero-copy, and the deleter rules. */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "tap.h"

static void export_is_zero_copy(void) {
  int64_t sizes[2] = {2, 3};
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &t), BP_OK);
  int64_t live = bp_live_tensor_count();
  DLManagedTensor *m = NULL;
  is_status(bp_tensor_to_dlpack(t, &m), BP_OK);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  ok((char *)m->dl_tensor.data + m->dl_tensor.byte_offset == (char *)v->data);
  ok(m->dl_tensor.shape == v->sizes);
  ok(m->dl_tensor.strides == v->strides);
  is_int(m->dl_tensor.ndim, 2);
  is_int(m->dl_tensor.dtype.code, kDLFloat);
  is_int(m->dl_tensor.dtype.bits, 32);
  is_int(m->dl_tensor.dtype.lanes, 1);
  is_int(m->dl_tensor.device.device_type, kDLCPU);
  is_int(m->dl_tensor.device.device_id, 0);
  /* The export holds the tensor: releasing ours keeps the data alive. */
  bp_tensor_release(t);
  is_int(bp_live_tensor_count(), live);
  float *f = (float *)((char *)m->dl_tensor.data + m->dl_tensor.byte_offset);
  f[5] = 1.5f; /* still writable; ASan would catch a use after free */
  m->deleter(m);
  is_int(bp_live_tensor_count(), live - 1);
}

static void export_view_offset_and_bool(void) {
  int64_t n = 10;
  bp_tensor *base = NULL, *view = NULL;
  bp_tensor_empty(BP_CPU, BP_BOOL, 1, &n, &base);
  int64_t vs = 4, st = 2;
  is_status(bp_tensor_as_strided(base, 1, &vs, &st, 3, &view), BP_OK);
  DLManagedTensor *m = NULL;
  is_status(bp_tensor_to_dlpack(view, &m), BP_OK);
  is_int(m->dl_tensor.byte_offset, 3);
  is_int(m->dl_tensor.strides[0], 2);
  is_int(m->dl_tensor.dtype.code, 6); /* kDLBool */
  is_int(m->dl_tensor.dtype.bits, 8);
  bp_tensor_release(view);
  bp_tensor_release(base);
  m->deleter(m);
  is_status(bp_tensor_to_dlpack(NULL, &m), BP_ERR_INVALID_ARGUMENT);
}

typedef struct producer {
  DLManagedTensor m;
  int64_t shape[2];
  int64_t strides[2];
  double data[6];
  int deleted;
} producer;

static int deletions;
static void producer_delete(DLManagedTensor *m) {
  producer *p = m->manager_ctx;
  p->deleted++;
  deletions++;
}

static void make_producer(producer *p) {
  memset(p, 0, sizeof *p);
  p->shape[0] = 2;
  p->shape[1] = 3;
  for (int i = 0; i < 6; i++) p->data[i] = i * 0.5;
  p->m.dl_tensor.data = p->data;
  p->m.dl_tensor.device.device_type = kDLCPU;
  p->m.dl_tensor.ndim = 2;
  p->m.dl_tensor.dtype.code = kDLFloat;
  p->m.dl_tensor.dtype.bits = 64;
  p->m.dl_tensor.dtype.lanes = 1;
  p->m.dl_tensor.shape = p->shape;
  p->m.dl_tensor.strides = NULL; /* contiguous */
  p->m.manager_ctx = p;
  p->m.deleter = producer_delete;
}

static void import_is_zero_copy(void) {
  producer p;
  make_producer(&p);
  bp_tensor *t = NULL;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_OK);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  ok(v->data == (void *)p.data);
  is_int(v->dtype, BP_FLOAT64);
  is_int(v->strides[0], 3);
  ok(bp_tensor_is_contiguous(t));
  bp_tensor *t2 = bp_tensor_retain(t);
  bp_tensor_release(t);
  is_int(p.deleted, 0);
  bp_tensor_release(t2);
  is_int(p.deleted, 1); /* exactly once, at the last reference */
}

static void import_strided_with_offset(void) {
  producer p;
  make_producer(&p);
  p.shape[0] = 2;
  p.shape[1] = 2;
  p.strides[0] = 3;
  p.strides[1] = 1;
  p.m.dl_tensor.strides = p.strides;
  p.m.dl_tensor.byte_offset = sizeof(double); /* starts at data[1] */
  bp_tensor *t = NULL;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_OK);
  const double *d = bp_tensor_get_view(t)->data;
  is_double(d[0], 0.5, 0);
  is_double(d[3], 2.0, 0);
  ok(!bp_tensor_is_contiguous(t));
  bp_tensor_release(t);
  is_int(p.deleted, 1);
}

static void import_errors_leave_ownership(void) {
  producer p;
  bp_tensor *t = NULL;
  deletions = 0;
  make_producer(&p);
  p.m.dl_tensor.dtype.lanes = 4;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_TYPE);
  has_str(bp_last_error(), "dtype has 4 lanes");
  make_producer(&p);
  p.m.dl_tensor.dtype.code = kDLComplex;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_TYPE);
  has_str(bp_last_error(), "code 5, 64 bits) has no Backplane dtype");
  make_producer(&p);
  p.strides[0] = -3;
  p.strides[1] = 1;
  p.m.dl_tensor.strides = p.strides;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_SHAPE);
  has_str(bp_last_error(), "negative strides are not supported");
  make_producer(&p);
  p.m.dl_tensor.byte_offset = 3;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "byte_offset 3 is not a multiple of the 8-byte element");
  /* a byte_offset that wraps the data pointer around */
  static const uint64_t wraps[] = {UINT64_MAX - 7, (uint64_t)1 << 63};
  for (size_t k = 0; k < sizeof wraps / sizeof *wraps; k++) {
    make_producer(&p);
    p.m.dl_tensor.byte_offset = wraps[k];
    is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_OVERFLOW);
    has_str(bp_last_error(), "reaches past the address space");
  }
  make_producer(&p);
  p.m.dl_tensor.device.device_type = kDLCUDA;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_DEVICE);
  has_str(bp_last_error(), "bp_tensor_from_dlpack: bp_tensor_from_blob: cuda is not registered");
  make_producer(&p);
  p.m.dl_tensor.ndim = 40;
  is_status(bp_tensor_from_dlpack(&p.m, &t), BP_ERR_SHAPE);
  is_status(bp_tensor_from_dlpack(NULL, &t), BP_ERR_INVALID_ARGUMENT);
  ok(t == NULL);
  is_int(deletions, 0); /* on failure the caller still owns src */
}

static void round_trip(void) {
  int64_t sizes[3] = {2, 1, 4};
  bp_tensor *t = NULL, *back = NULL;
  bp_tensor_empty(BP_CPU, BP_INT8, 3, sizes, &t);
  int8_t *d = bp_tensor_get_view(t)->data;
  for (int i = 0; i < 8; i++) d[i] = (int8_t)(i - 4);
  DLManagedTensor *m = NULL;
  is_status(bp_tensor_to_dlpack(t, &m), BP_OK);
  is_status(bp_tensor_from_dlpack(m, &back), BP_OK);
  bp_tensor_release(t);
  const bp_tensor_view *v = bp_tensor_get_view(back);
  ok(v->data == (void *)d);
  is_int(v->dtype, BP_INT8);
  is_int(v->sizes[2], 4);
  is_int(((int8_t *)v->data)[7], 3);
  int64_t live = bp_live_tensor_count();
  bp_tensor_release(back); /* calls the export deleter, which frees t */
  is_int(bp_live_tensor_count(), live - 2);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(export_is_zero_copy),    TAP_CASE(export_view_offset_and_bool),
      TAP_CASE(import_is_zero_copy),    TAP_CASE(import_strided_with_offset),
      TAP_CASE(import_errors_leave_ownership), TAP_CASE(round_trip),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
