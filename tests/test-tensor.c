/* The tensor runtime: creation, metadata, views, references, copies. */
#include <stdint.h>
#include <string.h>

#include <backplane/host.h>

#include "tap.h"

static bp_tensor *make(int32_t dtype, int32_t ndim, const int64_t *sizes) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, dtype, ndim, sizes, &t) != BP_OK) {
    tap_diag("make: %s", bp_last_error());
    return NULL;
  }
  return t;
}

static void empty_contiguous(void) {
  int64_t sizes[3] = {2, 3, 4};
  int64_t live = bp_live_tensor_count();
  bp_tensor *t = make(BP_FLOAT32, 3, sizes);
  ok(t != NULL);
  is_int(bp_live_tensor_count(), live + 1);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  is_int(v->struct_size, BP_TENSOR_VIEW_STRUCT_SIZE);
  is_int(v->ndim, 3);
  is_int(v->dtype, BP_FLOAT32);
  is_int(v->device.type, BP_DEVICE_CPU);
  is_int(v->device.index, 0);
  is_int(v->sizes[0], 2);
  is_int(v->sizes[2], 4);
  is_int(v->strides[0], 12);
  is_int(v->strides[1], 4);
  is_int(v->strides[2], 1);
  is_int(v->numel, 24);
  is_int(v->itemsize, 4);
  is_int(v->storage_offset, 0);
  is_int(v->storage_nbytes, 96);
  ok(v->data != NULL && v->data == v->storage_base);
  ok(((uintptr_t)v->data % 64) == 0);
  ok(v->flags & BP_VIEW_CONTIGUOUS);
  ok(v->flags & BP_VIEW_DENSE);
  ok(bp_tensor_is_contiguous(t));
  is_int(bp_tensor_numel(t), 24);
  is_int(bp_tensor_nbytes(t), 96);
  /* The memory is really usable. */
  memset(v->data, 0xab, 96);
  bp_tensor_release(t);
  is_int(bp_live_tensor_count(), live);
}

static void every_dtype(void) {
  static const struct { int32_t dt; const char *name; size_t size; } dts[] = {
      {BP_FLOAT32, "float32", 4}, {BP_FLOAT64, "float64", 8}, {BP_FLOAT16, "float16", 2},
      {BP_BFLOAT16, "bfloat16", 2}, {BP_INT8, "int8", 1},    {BP_INT16, "int16", 2},
      {BP_INT32, "int32", 4},     {BP_INT64, "int64", 8},    {BP_UINT8, "uint8", 1},
      {BP_BOOL, "bool", 1},
  };
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    int64_t n = 5;
    bp_tensor *t = make(dts[i].dt, 1, &n);
    ok(t != NULL);
    is_int(bp_tensor_get_view(t)->itemsize, dts[i].size);
    is_int(bp_tensor_nbytes(t), 5 * dts[i].size);
    is_str(bp_dtype_name(dts[i].dt), dts[i].name);
    is_int(bp_dtype_size(dts[i].dt), dts[i].size);
    int32_t back = 0;
    is_status(bp_dtype_from_name(dts[i].name, &back), BP_OK);
    is_int(back, dts[i].dt);
    bp_tensor_release(t);
  }
  ok(bp_dtype_name(0) == NULL);
  is_int(bp_dtype_size(BP_DTYPE_PACK(2, 24)), 0);
  int32_t dt;
  is_status(bp_dtype_from_name("float8", &dt), BP_ERR_TYPE);
  has_str(bp_last_error(), "unknown dtype 'float8'");
  is_status(bp_dtype_from_name(NULL, &dt), BP_ERR_INVALID_ARGUMENT);
  /* DLPack codes: (code << 8) | bits. */
  is_int(BP_DTYPE_DLPACK_CODE(BP_BFLOAT16), 4);
  is_int(BP_DTYPE_BITS(BP_FLOAT64), 64);
  is_int(BP_DTYPE_DLPACK_CODE(BP_BOOL), 6);
}

static void zero_size_and_zero_dim(void) {
  int64_t sizes[2] = {3, 0};
  bp_tensor *t = make(BP_FLOAT32, 2, sizes);
  ok(t != NULL);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  is_int(v->numel, 0);
  is_int(v->storage_nbytes, 0);
  ok(v->data == NULL);
  ok(bp_tensor_is_contiguous(t));
  is_int(bp_tensor_nbytes(t), 0);
  bp_tensor_release(t);

  bp_tensor *s = make(BP_INT64, 0, NULL);
  ok(s != NULL);
  v = bp_tensor_get_view(s);
  is_int(v->ndim, 0);
  is_int(v->numel, 1);
  is_int(v->storage_nbytes, 8);
  ok(v->sizes == NULL && v->strides == NULL);
  ok(v->data != NULL);
  *(int64_t *)v->data = 42;
  ok(bp_tensor_is_contiguous(s));
  bp_tensor_release(s);
}

static void bad_arguments(void) {
  bp_tensor *t = NULL;
  int64_t neg[2] = {2, -1};
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, neg, &t), BP_ERR_SHAPE);
  has_str(bp_last_error(), "bp_tensor_empty: sizes[1] is -1, expected >= 0");
  int64_t many[17] = {1};
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 17, many, &t), BP_ERR_SHAPE);
  has_str(bp_last_error(), "ndim is 17, expected 0 .. 16");
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, -1, many, &t), BP_ERR_SHAPE);
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, NULL, &t), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "sizes is NULL for ndim 2");
  int64_t one = 1;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &one, NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "out is NULL");
  is_status(bp_tensor_empty(BP_CPU, 0, 1, &one, &t), BP_ERR_TYPE);
  has_str(bp_last_error(), "dtype 0 is not a bp_dtype");
  int64_t str_neg[1] = {-3};
  is_status(bp_tensor_empty_strided(BP_CPU, BP_FLOAT32, 1, &one, str_neg, &t), BP_ERR_SHAPE);
  has_str(bp_last_error(), "strides[0] is -3");
  is_status(bp_tensor_empty_strided(BP_CPU, BP_FLOAT32, 1, &one, NULL, &t), BP_ERR_INVALID_ARGUMENT);
  ok(t == NULL);
}

static void overflow_is_refused(void) {
  bp_tensor *t = NULL;
  /* 2^62 elements: the count fits in int64 but the bytes do not. */
  int64_t big[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, big, &t), BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "overflow the byte size");
  /* The element count itself overflows. */
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 2};
  is_status(bp_tensor_empty(BP_CPU, BP_INT8, 3, huge, &t), BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "element count overflows at dimension 1");
  /* The strided extent overflows. */
  int64_t sizes[2] = {3, 3}, strides[2] = {INT64_MAX / 2, 1};
  is_status(bp_tensor_empty_strided(BP_CPU, BP_INT8, 2, sizes, strides, &t), BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "storage extent overflows");
  ok(t == NULL);
  /* Huge sizes next to a zero dimension make an empty tensor, as in PyTorch. */
  int64_t zero_big[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  is_status(bp_tensor_empty(BP_CPU, BP_INT8, 3, zero_big, &t), BP_OK);
  is_int(bp_tensor_numel(t), 0);
  bp_tensor_release(t);
  /* Wherever the zero dimension is, and with explicit strides too. */
  int64_t big_zero[4] = {INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40, 0};
  int64_t ones[4] = {1, 1, 1, 1};
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 4, big_zero, &t), BP_OK);
  is_int(bp_tensor_numel(t), 0);
  bp_tensor_release(t);
  is_status(bp_tensor_empty_strided(BP_CPU, BP_FLOAT32, 4, big_zero, ones, &t), BP_OK);
  is_int(bp_tensor_numel(t), 0);
  bp_tensor_release(t);
}

static void unknown_devices(void) {
  bp_tensor *t = NULL;
  int64_t n = 4;
  is_status(bp_tensor_empty(bp_device_make(BP_DEVICE_CUDA, 0), BP_FLOAT32, 1, &n, &t), BP_ERR_DEVICE);
  has_str(bp_last_error(), "bp_tensor_empty: cuda is not registered");
  is_status(bp_tensor_empty(bp_device_make(BP_DEVICE_CPU, 1), BP_FLOAT32, 1, &n, &t), BP_ERR_DEVICE);
  has_str(bp_last_error(), "device cpu:1 does not exist (1 device of that type)");
  is_status(bp_tensor_empty(bp_device_make(9999, 0), BP_FLOAT32, 1, &n, &t), BP_ERR_DEVICE);
  has_str(bp_last_error(), "device type 9999 is not registered");
  ok(t == NULL);
}

static void strided_and_views(void) {
  int64_t sizes[2] = {3, 4};
  bp_tensor *base = make(BP_INT32, 2, sizes);
  int32_t *d = bp_tensor_get_view(base)->data;
  for (int i = 0; i < 12; i++) d[i] = i;
  /* The transpose: 4x3 with strides (1, 4). */
  int64_t tsz[2] = {4, 3}, tst[2] = {1, 4};
  bp_tensor *tr = NULL;
  is_status(bp_tensor_as_strided(base, 2, tsz, tst, 0, &tr), BP_OK);
  const bp_tensor_view *v = bp_tensor_get_view(tr);
  ok(!bp_tensor_is_contiguous(tr));
  ok(v->flags & BP_VIEW_DENSE);
  ok(v->storage_base == bp_tensor_get_view(base)->storage_base);
  is_int(((int32_t *)v->data)[2 * v->strides[0] + 1 * v->strides[1]], 6); /* tr[2][1] = base[1][2] */
  /* A row view at an offset. */
  int64_t rsz[1] = {4}, rst[1] = {1};
  bp_tensor *row = NULL;
  is_status(bp_tensor_as_strided(base, 1, rsz, rst, 8, &row), BP_OK);
  is_int(((int32_t *)bp_tensor_get_view(row)->data)[0], 8);
  ok(bp_tensor_is_contiguous(row));
  /* A broadcast (stride 0) view is neither contiguous nor dense. */
  int64_t bsz[2] = {5, 4}, bst[2] = {0, 1};
  bp_tensor *bc = NULL;
  is_status(bp_tensor_as_strided(base, 2, bsz, bst, 0, &bc), BP_OK);
  ok(!(bp_tensor_get_view(bc)->flags & (BP_VIEW_CONTIGUOUS | BP_VIEW_DENSE)));
  /* Views outside the storage are refused. */
  bp_tensor *bad = NULL;
  is_status(bp_tensor_as_strided(base, 1, rsz, rst, 9, &bad), BP_ERR_SHAPE);
  has_str(bp_last_error(), "reaches byte 52 but the storage has 48 bytes");
  is_status(bp_tensor_as_strided(base, 1, rsz, rst, -1, &bad), BP_ERR_SHAPE);
  has_str(bp_last_error(), "storage_offset is -1");
  /* An empty view reaches nothing and may start past the storage, but its
   * byte offset (data pointer, DLPack byte_offset) must not overflow. */
  int64_t zsz[1] = {0};
  bp_tensor *empty = NULL;
  is_status(bp_tensor_as_strided(base, 1, zsz, rst, 100, &empty), BP_OK);
  is_int(bp_tensor_numel(empty), 0);
  bp_tensor_release(empty);
  is_status(bp_tensor_as_strided(base, 1, zsz, rst, INT64_MAX / 2, &bad), BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "storage_offset 4611686018427387903 overflows the byte offset");
  /* A stride of 0 reaches one element however many it repeats, but the
   * elements' byte count (bp_tensor_nbytes) must still fit. */
  int64_t hsz[1] = {INT64_MAX / 2}, hst[1] = {0};
  is_status(bp_tensor_as_strided(base, 1, hsz, hst, 0, &bad), BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "4611686018427387903 elements of int32 overflow the byte size");
  int32_t one_int = 7;
  is_status(bp_tensor_from_blob(BP_CPU, BP_INT32, 1, hsz, hst, &one_int, NULL, NULL, &bad),
            BP_ERR_OVERFLOW);
  has_str(bp_last_error(), "4611686018427387903 elements of int32 overflow the byte size");
  hsz[0] = INT64_MAX / 4;
  bp_tensor *rep = NULL;
  is_status(bp_tensor_as_strided(base, 1, hsz, hst, 3, &rep), BP_OK);
  is_int(bp_tensor_nbytes(rep), (INT64_MAX / 4) * 4);
  is_int(((int32_t *)bp_tensor_get_view(rep)->data)[0], 3);
  bp_tensor_release(rep);
  is_status(bp_tensor_as_strided(NULL, 1, rsz, rst, 0, &bad), BP_ERR_INVALID_ARGUMENT);
  ok(bad == NULL);
  /* The base may die first: its storage lives on in the views. */
  bp_tensor_release(base);
  is_int(((int32_t *)bp_tensor_get_view(row)->data)[3], 11);
  bp_tensor_release(tr);
  bp_tensor_release(bc);
  is_int(((int32_t *)bp_tensor_get_view(row)->data)[1], 9);
  bp_tensor_release(row);
}

static void empty_strided_extent(void) {
  int64_t sizes[2] = {2, 3}, strides[2] = {10, 2};
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty_strided(BP_CPU, BP_FLOAT64, 2, sizes, strides, &t), BP_OK);
  /* Reaches element (1*10 + 2*2) = 14, so 15 elements of storage. */
  is_int(bp_tensor_get_view(t)->storage_nbytes, 15 * 8);
  ok(!bp_tensor_is_contiguous(t));
  ok(!(bp_tensor_get_view(t)->flags & BP_VIEW_DENSE));
  bp_tensor_release(t);
}

static int deleted;
static void *deleted_data;
static void count_delete(void *ctx, void *data) {
  deleted += *(int *)ctx;
  deleted_data = data;
}

static void from_blob_and_refcounts(void) {
  float buf[6] = {1, 2, 3, 4, 5, 6};
  int64_t sizes[2] = {2, 3};
  int inc = 1;
  bp_tensor *t = NULL;
  deleted = 0;
  is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 2, sizes, NULL, buf, count_delete, &inc, &t),
            BP_OK);
  ok(bp_tensor_get_view(t)->data == buf);
  is_int(bp_tensor_get_view(t)->strides[0], 3);
  ok(bp_tensor_retain(t) == t);
  ok(bp_tensor_retain(NULL) == NULL);
  bp_tensor_release(t);
  is_int(deleted, 0);
  bp_tensor_release(t);
  is_int(deleted, 1);
  ok(deleted_data == buf);
  bp_tensor_release(NULL); /* a no-op */
  /* On failure the deleter is not called and the caller keeps the memory. */
  deleted = 0;
  is_status(bp_tensor_from_blob(BP_CPU, 3, 2, sizes, NULL, buf, count_delete, &inc, &t), BP_ERR_TYPE);
  is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 2, sizes, NULL, NULL, count_delete, &inc, &t),
            BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "data is NULL");
  is_int(deleted, 0);
  /* No deleter at all is allowed. */
  is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 2, sizes, NULL, buf, NULL, NULL, &t), BP_OK);
  bp_tensor_release(t);
  /* Memory not aligned to the element size is refused, naming the dtype;
   * one-byte elements and an empty tensor (never read) may start anywhere. */
  char *odd = (char *)buf + 1;
  int64_t two = 2, none = 0;
  t = NULL;
  is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 1, &two, NULL, odd, count_delete, &inc, &t),
            BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "not aligned to the 4-byte elements of float32");
  ok(t == NULL);
  is_int(deleted, 0);
  is_status(bp_tensor_from_blob(BP_CPU, BP_INT16, 1, &two, NULL, odd, NULL, NULL, &t),
            BP_ERR_INVALID_ARGUMENT);
  is_status(bp_tensor_from_blob(BP_CPU, BP_UINT8, 1, &two, NULL, odd, NULL, NULL, &t), BP_OK);
  bp_tensor_release(t);
  is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT64, 1, &none, NULL, odd, NULL, NULL, &t), BP_OK);
  bp_tensor_release(t);
}

static void copy_between_layouts(void) {
  int64_t sizes[2] = {3, 4};
  bp_tensor *a = make(BP_INT16, 2, sizes), *b = make(BP_INT16, 2, sizes);
  int16_t *ad = bp_tensor_get_view(a)->data, *bd = bp_tensor_get_view(b)->data;
  for (int i = 0; i < 12; i++) ad[i] = (int16_t)(i * 3);
  is_status(bp_tensor_copy(b, a), BP_OK);
  ok(memcmp(ad, bd, 24) == 0);
  /* Copy a transposed view into a contiguous 4x3 tensor. */
  int64_t tsz[2] = {4, 3}, tst[2] = {1, 4};
  bp_tensor *tr = NULL, *c = make(BP_INT16, 2, tsz);
  is_status(bp_tensor_as_strided(a, 2, tsz, tst, 0, &tr), BP_OK);
  is_status(bp_tensor_copy(c, tr), BP_OK);
  int16_t *cd = bp_tensor_get_view(c)->data;
  int good = 1;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) good &= cd[i * 3 + j] == ad[j * 4 + i];
  ok(good);
  /* Copy into a strided destination leaves the gaps alone. */
  int64_t wide[1] = {8}, half[1] = {4}, st2[1] = {2};
  bp_tensor *w = make(BP_INT16, 1, wide), *evens = NULL, *src = make(BP_INT16, 1, half);
  int16_t *wd = bp_tensor_get_view(w)->data, *sd = bp_tensor_get_view(src)->data;
  for (int i = 0; i < 8; i++) wd[i] = -1;
  for (int i = 0; i < 4; i++) sd[i] = (int16_t)(100 + i);
  is_status(bp_tensor_as_strided(w, 1, half, st2, 0, &evens), BP_OK);
  is_status(bp_tensor_copy(evens, src), BP_OK);
  int16_t expect[8] = {100, -1, 101, -1, 102, -1, 103, -1};
  ok(memcmp(wd, expect, sizeof expect) == 0);
  /* Overlapping source and destination behave as if through a temporary. */
  int64_t seven[1] = {7}, one[1] = {1};
  bp_tensor *lo = NULL, *hi = NULL;
  for (int i = 0; i < 8; i++) wd[i] = (int16_t)i;
  is_status(bp_tensor_as_strided(w, 1, seven, one, 0, &lo), BP_OK);
  is_status(bp_tensor_as_strided(w, 1, seven, one, 1, &hi), BP_OK);
  is_status(bp_tensor_copy(hi, lo), BP_OK);
  int16_t shifted[8] = {0, 0, 1, 2, 3, 4, 5, 6};
  ok(memcmp(wd, shifted, sizeof shifted) == 0);
  /* Mismatches are refused with both sides named. */
  bp_tensor *f = make(BP_FLOAT32, 2, sizes);
  is_status(bp_tensor_copy(f, a), BP_ERR_TYPE);
  has_str(bp_last_error(), "dst is float32 but src is int16");
  is_status(bp_tensor_copy(c, a), BP_ERR_SHAPE);
  is_str(bp_last_error(), "bp_tensor_copy: dst has shape [4, 3] but src has shape [3, 4] (a copy "
                          "does not broadcast)");
  is_status(bp_tensor_copy(NULL, a), BP_ERR_INVALID_ARGUMENT);
  /* A destination with a broadcast dimension is refused, and left alone;
   * a broadcast source is fine. */
  int64_t bsz[2] = {3, 4}, bst[2] = {0, 1};
  bp_tensor *bcast = NULL;
  for (int i = 0; i < 8; i++) wd[i] = (int16_t)i;
  is_status(bp_tensor_as_strided(w, 2, bsz, bst, 0, &bcast), BP_OK);
  is_status(bp_tensor_copy(bcast, a), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "bp_tensor_copy: dst's dimension 0 has 3 elements at one address "
                          "(stride 0); expected a destination without broadcast dimensions");
  int16_t untouched[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ok(memcmp(wd, untouched, sizeof untouched) == 0);
  is_status(bp_tensor_copy(b, bcast), BP_OK);
  ok(bd[0] == 0 && bd[4] == 0 && bd[11] == 3);
  bp_tensor *items[] = {a, b, tr, c, w, evens, src, lo, hi, f, bcast};
  for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) bp_tensor_release(items[i]);
}

static void large_blocks_are_reused(void) {
  /* Only meaningful when the CPU cache is on; it is off under ASan so that
   * freed blocks stay poisoned. */
  int64_t n = 1 << 20;
  bp_tensor *a = make(BP_FLOAT32, 1, &n);
  void *first = bp_tensor_get_view(a)->data;
  bp_tensor_release(a);
  bp_tensor *b = make(BP_FLOAT32, 1, &n);
  void *second = bp_tensor_get_view(b)->data;
  bp_tensor_release(b);
#if defined(__SANITIZE_ADDRESS__)
  (void)first;
  (void)second;
  tap_skip("the CPU block cache is disabled under AddressSanitizer");
#else
  ok(first == second);
#endif
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(empty_contiguous),     TAP_CASE(every_dtype),
      TAP_CASE(zero_size_and_zero_dim), TAP_CASE(bad_arguments),
      TAP_CASE(overflow_is_refused),  TAP_CASE(unknown_devices),
      TAP_CASE(strided_and_views),    TAP_CASE(empty_strided_extent),
      TAP_CASE(from_blob_and_refcounts), TAP_CASE(copy_between_layouts),
      TAP_CASE(large_blocks_are_reused),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
