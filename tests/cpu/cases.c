/* tests/cpu/cases.c - see cases.h. */
#include "cases.h"

#include <stdlib.h>
#include <string.h>

uint64_t trial_seed(uint64_t base, int64_t trial) {
  return base ^ ((uint64_t)trial * 0x100000001b3u);
}

rt *lit_f(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v) {
  rt *r = rt_new(dt, ndim, sizes);
  for (int64_t k = 0; k < r->numel; k++) r->f[k] = round_to(dt, v[k]);
  return r;
}

rt *lit_i(int32_t dt, int32_t ndim, const int64_t *sizes, const int64_t *v) {
  rt *r = rt_new(dt, ndim, sizes);
  for (int64_t k = 0; k < r->numel; k++) r->i[k] = wrap_int(dt, v[k]);
  return r;
}

rt *lit_d(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v) {
  if (dt_is_float(dt)) return lit_f(dt, ndim, sizes, v);
  rt *r = rt_new(dt, ndim, sizes);
  for (int64_t k = 0; k < r->numel; k++) r->i[k] = wrap_int(dt, (int64_t)v[k]);
  return r;
}

bp_tensor *tensor_d(int32_t dt, const double *v, int64_t n) {
  if (dt_is_float(dt)) return tensor_f(dt, v, n);
  int64_t *iv = malloc((size_t)(n ? n : 1) * sizeof *iv);
  if (!iv) return NULL;
  for (int64_t k = 0; k < n; k++) iv[k] = (int64_t)v[k];
  bp_tensor *t = tensor_i(dt, iv, n);
  free(iv);
  return t;
}

bp_tensor *from_rt(const rt *r) {
  rng g;
  rng_seed(&g, 1);
  return tensor_from(&g, r, LAY_CONTIG, NULL);
}

bp_tensor *call_t(const char *name, bp_tensor *a, bp_tensor *b, bp_tensor *c) {
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  push_t(&s, a, b, c);
  return RUN(core_op(name), &s, .in = {a, b, c}, .ret = RET_NEW);
}

bp_tensor *call_cast(bp_tensor *a, int32_t to) {
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_scalar_type(&s, to);
  return RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
}

bp_tensor *call_reduce(const char *name, bp_tensor *a, const int64_t *dims, size_t nd,
                       bool keepdim) {
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int_list(&s, dims, nd);
  bp_stack_push_bool(&s, keepdim);
  if (!strcmp(name, "sum")) bp_stack_push_none(&s);
  return RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
}

bp_tensor *zeros2(int32_t dt, int64_t a, int64_t b) {
  int64_t sz[] = {a, b};
  return tensor_zeros(dt, 2, sz);
}

bp_tensor *zeros1(int32_t dt, int64_t a) { return tensor_zeros(dt, 1, &a); }

void push_t(bp_stack *s, bp_tensor *a, bp_tensor *b, bp_tensor *c) {
  bp_stack_push_tensor(s, a);
  if (b) bp_stack_push_tensor(s, b);
  if (c) bp_stack_push_tensor(s, c);
}

int32_t device_type_named(const char *name) {
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 64; t++) {
    const char *n = bp_device_type_name(t);
    if (n && !strcmp(n, name)) return t;
  }
  return BP_DEVICE_INVALID;
}

bp_tensor *on_gooddev(int32_t ndim, const int64_t *sizes, const double *v) {
  bp_tensor *t = NULL;
  bp_status st =
      bp_tensor_empty(bp_device_make(device_type_named("gooddev"), 0), BP_FLOAT32, ndim, sizes, &t);
  if (st) {
    tap_diag("gooddev tensor: %s: %s", bp_status_str(st), bp_last_error());
    ok(0);
    return NULL;
  }
  const bp_tensor_view *vw = bp_tensor_get_view(t);
  for (int64_t k = 0; k < vw->numel; k++) store_f((char *)vw->data + k * 4, BP_FLOAT32, v[k]);
  return t;
}
