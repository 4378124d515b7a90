/*
 * tests/plugins/good.c - a well-behaved test plugin that exercises every
 * dispatch path: boxed and unboxed kernels of varied signatures (fast-path
 * and libffi), a meta function, a composite, two vendor device types (one
 * with a fallback), errors with and without messages, and a kernel that
 * breaks the result contract.  Namespace "good".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;
#define FAKEDEV_OOM "gooddev: out of memory"
#include "fakedev.h"
static int32_t gooddev = BP_DEVICE_INVALID, fbdev = BP_DEVICE_INVALID;

/* ------------------------------------------------------------------------ */
/* Two host-visible vendor devices ("gooddev" with 2 devices, "fbdev")      */
/* ------------------------------------------------------------------------ */

static bp_status dev_count2(void *ud, int32_t *n) {
  (void)ud;
  *n = 2;
  return BP_OK;
}
static bp_status dev_props(void *ud, int32_t index, bp_device_props *p) {
  (void)ud;
  snprintf(p->name, sizeof p->name, "Good test device %d", (int)index);
  if (BP_HAS_FIELD(p, bp_device_props, total_memory)) p->total_memory = 1u << 20;
  return BP_OK;
}

/* Streams and events of "gooddev": work is synchronous, so a stream only
 * counts what was recorded on it and an event remembers the count it saw.
 * The current stream is kept per thread and per device, as a GPU plugin
 * keeps it. */
typedef struct good_stream {
  int32_t index;
  int64_t work;
} good_stream;
typedef struct good_event {
  int32_t index;
  int64_t seen;
  good_stream *waited_by;
} good_event;
static _Thread_local good_stream *current_stream[2];

static bp_status stream_create(void *ud, int32_t index, void **out) {
  (void)ud;
  good_stream *s = calloc(1, sizeof *s);
  if (!s) return H->set_error(BP_ERR_OUT_OF_MEMORY, "gooddev: out of memory");
  s->index = index;
  *out = s;
  return BP_OK;
}
static bp_status stream_destroy(void *ud, int32_t index, void *stream) {
  (void)ud;
  good_stream *s = stream;
  if (s->index != index)
    return H->set_errorf(BP_ERR_INVALID_ARGUMENT, "gooddev: stream of device %d destroyed on %d",
                         (int)s->index, (int)index);
  if (current_stream[index] == s) current_stream[index] = NULL;
  free(s);
  return BP_OK;
}
static bp_status stream_get(void *ud, int32_t index, void **out) {
  (void)ud;
  *out = current_stream[index];
  return BP_OK;
}
static bp_status stream_set(void *ud, int32_t index, void *stream) {
  (void)ud;
  good_stream *s = stream;
  if (s && s->index != index)
    return H->set_errorf(BP_ERR_INVALID_ARGUMENT,
                         "gooddev: stream of device %d made current on device %d",
                         (int)s->index, (int)index);
  current_stream[index] = s;
  return BP_OK;
}
static bp_status stream_sync(void *ud, int32_t index, void *stream) {
  (void)ud;
  (void)index;
  (void)stream;
  return BP_OK;
}
static bp_status event_create(void *ud, int32_t index, void **out) {
  (void)ud;
  good_event *e = calloc(1, sizeof *e);
  if (!e) return H->set_error(BP_ERR_OUT_OF_MEMORY, "gooddev: out of memory");
  e->index = index;
  e->seen = -1;
  *out = e;
  return BP_OK;
}
static bp_status event_destroy(void *ud, int32_t index, void *event) {
  (void)ud;
  (void)index;
  free(event);
  return BP_OK;
}
static bp_status event_record(void *ud, int32_t index, void *event, void *stream) {
  (void)ud;
  (void)index;
  good_stream *s = stream;
  good_event *e = event;
  e->seen = s ? ++s->work : 0;
  return BP_OK;
}
static bp_status stream_wait(void *ud, int32_t index, void *stream, void *event) {
  (void)ud;
  (void)index;
  good_event *e = event;
  if (e->seen < 0)
    return H->set_error(BP_ERR_INVALID_ARGUMENT, "gooddev: waiting on an event never recorded");
  e->waited_by = stream;
  return BP_OK;
}
static bp_status event_sync(void *ud, int32_t index, void *event) {
  (void)ud;
  (void)index;
  good_event *e = event;
  if (e->seen < 0)
    return H->set_error(BP_ERR_INVALID_ARGUMENT, "gooddev: synchronizing an event never recorded");
  return BP_OK;
}

static const bp_device_iface gooddev_iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "gooddev",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = dev_count2,
    .properties = dev_props,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_get_current = stream_get,
    .stream_set_current = stream_set,
    .stream_synchronize = stream_sync,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .stream_wait_event = stream_wait,
    .event_synchronize = event_sync,
};

/* "mutedev": its allocations fail without a message. */
static bp_status mute_alloc(void *ud, int32_t index, size_t nbytes, void **out) {
  (void)ud;
  (void)index;
  (void)nbytes;
  (void)out;
  return BP_ERR_OUT_OF_MEMORY;
}

static const bp_device_iface mutedev_iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "mutedev",
    .type = BP_DEVICE_INVALID,
    .count = fakedev_count1,
    .alloc = mute_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
};

static const bp_device_iface fbdev_iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "fbdev",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = fakedev_count1,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static bp_status need_f32(const char *op, const char *arg, const bp_tensor *t) {
  const bp_tensor_view *v = H->tensor_view(t);
  if (v->dtype != BP_FLOAT32)
    return H->set_errorf(BP_ERR_TYPE, "%s: argument '%s': expected float32, got dtype %d", op, arg,
                         (int)v->dtype);
  if (!(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_UNSUPPORTED, "%s: argument '%s' must be contiguous", op, arg);
  return BP_OK;
}

static bp_status same_shape(const char *op, const bp_tensor *a, const bp_tensor *b) {
  const bp_tensor_view *x = H->tensor_view(a), *y = H->tensor_view(b);
  if (x->ndim != y->ndim || memcmp(x->sizes, y->sizes, (size_t)x->ndim * sizeof(int64_t)) != 0)
    return H->set_errorf(BP_ERR_SHAPE, "%s: shapes differ (%lld and %lld elements)", op,
                         (long long)x->numel, (long long)y->numel);
  return BP_OK;
}

static bp_status empty_like(const bp_tensor *t, bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(t);
  return H->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, out);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* good::add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor, boxed. */
static bp_status add_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_tensor *a = args[0].u.tensor, *b = args[1].u.tensor;
  double alpha = args[2].u.f;
  bp_status st;
  if ((st = need_f32(ctx->op_name, "a", a)) || (st = need_f32(ctx->op_name, "b", b)) ||
      (st = same_shape(ctx->op_name, a, b)))
    return st;
  bp_tensor *out;
  if ((st = empty_like(a, &out))) return st;
  const float *x = H->tensor_view(a)->data, *y = H->tensor_view(b)->data;
  float *z = H->tensor_view(out)->data;
  for (int64_t i = 0, n = H->tensor_view(a)->numel; i < n; i++) z[i] = x[i] + (float)alpha * y[i];
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status add_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = H->tensor_view(args[0].u.tensor);
  outs[0].device = a->device;
  outs[0].dtype = a->dtype;
  outs[0].ndim = a->ndim;
  int64_t s = 1;
  for (int32_t d = a->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = a->sizes[d];
    outs[0].strides[d] = s;
    s *= a->sizes[d];
  }
  return BP_OK;
}

/* good::muladd(Tensor a, Tensor b, float c) -> Tensor, unboxed (fast path). */
static bp_status muladd_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor *b, double c,
                               bp_tensor **out) {
  bp_status st;
  if ((st = need_f32(ctx->op_name, "a", a)) || (st = need_f32(ctx->op_name, "b", b)) ||
      (st = same_shape(ctx->op_name, a, b)) || (st = empty_like(a, out)))
    return st;
  const float *x = H->tensor_view(a)->data, *y = H->tensor_view(b)->data;
  float *z = H->tensor_view(*out)->data;
  for (int64_t i = 0, n = H->tensor_view(a)->numel; i < n; i++) z[i] = x[i] * y[i] + (float)c;
  return BP_OK;
}

/* good::scale(Tensor a, int k) -> Tensor, unboxed (fast path). */
static bp_status scale_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, int64_t k, bp_tensor **out) {
  bp_status st;
  if ((st = need_f32(ctx->op_name, "a", a)) || (st = empty_like(a, out))) return st;
  const float *x = H->tensor_view(a)->data;
  float *z = H->tensor_view(*out)->data;
  for (int64_t i = 0, n = H->tensor_view(a)->numel; i < n; i++) z[i] = x[i] * (float)k;
  return BP_OK;
}

/* good::split(Tensor a) -> (Tensor first, Tensor second), unboxed (fast
 * path with two results): the two halves of a 1-D tensor, as copies. */
static bp_status split_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor **first,
                              bp_tensor **second) {
  bp_status st;
  if ((st = need_f32(ctx->op_name, "a", a))) return st;
  const bp_tensor_view *v = H->tensor_view(a);
  if (v->ndim != 1 || v->numel % 2)
    return H->set_errorf(BP_ERR_SHAPE, "%s: expected a 1-D tensor of even length", ctx->op_name);
  int64_t half = v->numel / 2;
  if ((st = H->tensor_empty(v->device, BP_FLOAT32, 1, &half, first))) return st;
  if ((st = H->tensor_empty(v->device, BP_FLOAT32, 1, &half, second))) {
    H->tensor_release(*first);
    return st;
  }
  memcpy(H->tensor_view(*first)->data, v->data, (size_t)half * 4);
  memcpy(H->tensor_view(*second)->data, (const float *)v->data + half, (size_t)half * 4);
  return BP_OK;
}

/* good::fill_(Tensor(a!) self, float value) -> Tensor(a!), unboxed. */
static bp_status fill_kernel(const bp_kernel_ctx *ctx, bp_tensor *self, double value,
                             bp_tensor **out) {
  bp_status st;
  if ((st = need_f32(ctx->op_name, "self", self))) return st;
  float *z = H->tensor_view(self)->data;
  for (int64_t i = 0, n = H->tensor_view(self)->numel; i < n; i++) z[i] = (float)value;
  *out = H->tensor_retain(self);
  return BP_OK;
}

/*
 * good::sink: every argument type, to prove the marshalling.  It folds its
 * arguments into its results in a documented way that the test recomputes:
 *   int   = n + 10*(m or 7) + 100*len(il) + 1000*sum(il) + 10000*pair[0] + 100000*pair[1]
 *   float = x + (y or 0.25) + sum(fl) + strlen(s) + (t ? 100 + strlen(t) : 0)
 *           + (b ? 1000 : 0) + 10000*len(tl)
 *   bool  = f xor (g or true)
 *   dtype = dt2 or dt
 *   Tensor: int64 with 4 elements [d.type, d.index, d2 ? d2.type : -1,
 *           d2 ? d2.index : -1] on the CPU, proving the Device pointers.
 */
#define SINK_SCHEMA                                                                      \
  "(Tensor a, Tensor? b, int n, int? m, float x, float? y, bool f, bool? g, str s, "     \
  "str? t, ScalarType dt, ScalarType? dt2, Device d, Device? d2, int[] il, float[] fl, " \
  "Tensor[] tl, int[2] pair=1) -> (Tensor, int, float, bool, ScalarType)"

static bp_status sink_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor *b, int64_t n,
                             const int64_t *m, double x, const double *y, bool f, const bool *g,
                             const char *s, const char *t, int32_t dt, const int32_t *dt2,
                             const bp_device *d, const bp_device *d2, const int64_t *il,
                             size_t il_len, const double *fl, size_t fl_len,
                             bp_tensor *const *tl, size_t tl_len, const int64_t *pair,
                             size_t pair_len, bp_tensor **out_t, int64_t *out_i, double *out_f,
                             bool *out_b, int32_t *out_dt) {
  (void)ctx;
  (void)a;
  if (pair_len != 2 || !d || !s)
    return H->set_error(BP_ERR_INTERNAL, "good::sink: bad marshalling (pair, d or s)");
  int64_t isum = 0;
  for (size_t i = 0; i < il_len; i++) isum += il[i];
  double fsum = 0;
  for (size_t i = 0; i < fl_len; i++) fsum += fl[i];
  for (size_t i = 0; i < tl_len; i++)
    if (!tl[i]) return H->set_error(BP_ERR_INTERNAL, "good::sink: NULL in tensor list");
  *out_i = n + 10 * (m ? *m : 7) + 100 * (int64_t)il_len + 1000 * isum + 10000 * pair[0] +
           100000 * pair[1];
  *out_f = x + (y ? *y : 0.25) + fsum + (double)strlen(s) + (t ? 100.0 + (double)strlen(t) : 0) +
           (b ? 1000.0 : 0) + 10000.0 * (double)tl_len;
  *out_b = f != (g ? *g : true);
  *out_dt = dt2 ? *dt2 : dt;
  int64_t four = 4;
  bp_status st = H->tensor_empty(bp_device_make(BP_DEVICE_CPU, 0), BP_INT64, 1, &four, out_t);
  if (st) return st;
  int64_t *o = H->tensor_view(*out_t)->data;
  o[0] = d->type;
  o[1] = d->index;
  o[2] = d2 ? d2->type : -1;
  o[3] = d2 ? d2->index : -1;
  return BP_OK;
}

/* The same as a boxed kernel, reading the values directly. */
static bp_status sink_boxed(const bp_kernel_ctx *ctx, const bp_value *v, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bool none[18];
  for (int i = 0; i < 18; i++) none[i] = v[i].tag == BP_TAG_NONE;
  bp_tensor *out_t;
  int64_t oi;
  double of;
  bool ob;
  int32_t odt, dt2 = none[11] ? 0 : (int32_t)v[11].u.i;
  bp_status st = sink_kernel(
      ctx, v[0].u.tensor, none[1] ? NULL : v[1].u.tensor, v[2].u.i, none[3] ? NULL : &v[3].u.i,
      v[4].u.f, none[5] ? NULL : &v[5].u.f, v[6].u.b, none[7] ? NULL : &v[7].u.b, v[8].u.str,
      none[9] ? NULL : v[9].u.str, (int32_t)v[10].u.i, none[11] ? NULL : &dt2, &v[12].u.device,
      none[13] ? NULL : &v[13].u.device, v[14].u.ints, v[14].len, v[15].u.floats, v[15].len,
      v[16].u.tensors, v[16].len, v[17].u.ints, v[17].len, &out_t, &oi, &of, &ob, &odt);
  if (st) return st;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = out_t;
  rets[1].tag = BP_TAG_INT;
  rets[1].u.i = oi;
  rets[2].tag = BP_TAG_FLOAT;
  rets[2].u.f = of;
  rets[3].tag = BP_TAG_BOOL;
  rets[3].u.b = ob;
  rets[4].tag = BP_TAG_SCALAR_TYPE;
  rets[4].u.i = odt;
  return BP_OK;
}

/* good::twice(Tensor a) -> Tensor: a composite, a + a through host->call. */
static const bp_op *add_op;
static bp_status twice_composite(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                 bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  bp_value slots[3];
  bp_stack st = BP_STACK_INIT(slots, 3);
  slots[0] = args[0];
  slots[1] = args[0];
  st.top = 2;
  bp_status s = H->call(add_op, &st);
  if (s) return s;
  rets[0] = slots[0];
  return BP_OK;
}

/* good::fail(Tensor a) -> Tensor: fails with a message. */
static bp_status fail_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return H->set_errorf(BP_ERR_SHAPE, "%s: argument 'a': expected 3 dims, got 1", ctx->op_name);
}

/* good::fail_silent(Tensor a) -> Tensor: fails without a message. */
static bp_status fail_silent_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                    bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return BP_ERR_UNSUPPORTED;
}

/* good::bad_result(Tensor a) -> Tensor: returns an int where a Tensor is due. */
static bp_status bad_result_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_INT;
  rets[0].u.i = 42;
  return BP_OK;
}

/* good::weird_status(Tensor a) -> Tensor: returns a status no ABI has. */
static bp_status weird_status_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                     bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return (bp_status)977;
}

/* good::first(Tensor a, Tensor b, float c) -> Tensor, boxed: returns a new
 * reference to `a`, so a call allocates nothing in the kernel. */
static bp_status first_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = H->tensor_retain(args[0].u.tensor);
  return BP_OK;
}

/* The fbdev fallback: serves every op on fbdev by naming it in an error. */
static bp_status fb_fallback(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)args;
  (void)rets;
  (void)nrets;
  return H->set_errorf(BP_ERR_UNSUPPORTED, "fbdev fallback: %s with %zu arguments", ctx->op_name,
                       nargs);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static bp_status def(bp_library *lib, const char *schema, bp_meta_fn meta,
                     bp_boxed_kernel composite) {
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = schema;
  d.meta = meta;
  d.composite = composite;
  return H->def(lib, &d);
}

static bp_status impl(bp_library *lib, const char *op, int32_t dev, bp_boxed_kernel boxed,
                      bp_unboxed_kernel unboxed) {
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = dev;
  k.boxed = boxed;
  k.unboxed = unboxed;
  return H->impl(lib, &k);
}

#define U(fn) ((bp_unboxed_kernel)(void (*)(void))(fn))

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_status st;
  if ((st = H->device_type(reg, &gooddev_iface, &gooddev))) return st;
  if ((st = H->device_type(reg, &fbdev_iface, &fbdev))) return st;
  int32_t mutedev;
  if ((st = H->device_type(reg, &mutedev_iface, &mutedev))) return st;
  bp_fallback_def fb = {BP_FALLBACK_DEF_STRUCT_SIZE, 0, 0, fb_fallback, NULL};
  fb.device_type = fbdev;
  if ((st = H->fallback(reg, &fb))) return st;

  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "good", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  if ((st = H->library(reg, &ld, &lib))) return st;
  if ((st = def(lib, "add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor", add_meta, NULL)) ||
      (st = def(lib, "muladd(Tensor a, Tensor b, float c) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "scale(Tensor a, int k) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "split(Tensor a) -> (Tensor first, Tensor second)", NULL, NULL)) ||
      (st = def(lib, "fill_(Tensor(a!) self, float value) -> Tensor(a!)", NULL, NULL)) ||
      (st = def(lib, "sink" SINK_SCHEMA, NULL, NULL)) ||
      (st = def(lib, "sink.boxed" SINK_SCHEMA, NULL, NULL)) ||
      (st = def(lib, "twice(Tensor a) -> Tensor", NULL, twice_composite)) ||
      (st = def(lib, "fail(Tensor a) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "fail_silent(Tensor a) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "bad_result(Tensor a) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "weird_status(Tensor a) -> Tensor", NULL, NULL)) ||
      (st = def(lib, "first(Tensor a, Tensor b, float c) -> Tensor", NULL, NULL)))
    return st;
  if ((st = impl(lib, "add", BP_DEVICE_CPU, add_kernel, NULL)) ||
      (st = impl(lib, "add", gooddev, add_kernel, NULL)) ||
      (st = impl(lib, "muladd", BP_DEVICE_CPU, NULL, U(muladd_kernel))) ||
      (st = impl(lib, "good::scale", BP_DEVICE_CPU, NULL, U(scale_kernel))) ||
      (st = impl(lib, "split", BP_DEVICE_CPU, NULL, U(split_kernel))) ||
      (st = impl(lib, "fill_", BP_DEVICE_CPU, NULL, U(fill_kernel))) ||
      (st = impl(lib, "sink", BP_DEVICE_CPU, NULL, U(sink_kernel))) ||
      (st = impl(lib, "sink.boxed", BP_DEVICE_CPU, sink_boxed, NULL)) ||
      (st = impl(lib, "fail", BP_DEVICE_CPU, fail_kernel, NULL)) ||
      (st = impl(lib, "fail_silent", BP_DEVICE_CPU, fail_silent_kernel, NULL)) ||
      (st = impl(lib, "bad_result", BP_DEVICE_CPU, bad_result_kernel, NULL)) ||
      (st = impl(lib, "weird_status", BP_DEVICE_CPU, weird_status_kernel, NULL)) ||
      (st = impl(lib, "first", BP_DEVICE_CPU, first_kernel, NULL)))
    return st;
  return H->op_find("good::add", &add_op);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "good",
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
