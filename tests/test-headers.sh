#!/bin/sh
# Every public header compiles on its own, as C11 and as C++11, with all
# warnings as errors.  Then a program that uses every part of
# <backplane/plugin_aux.h> (its functions are static inline, so only a use
# compiles them) is built as C11 and as C++11 and run: its checks must
# pass, and both builds must print the same lines (float16 goes through
# _Float16 in C where the compiler has it, and through portable code in
# C++, so this holds the two to the same bits).
inc="${top_srcdir:-.}/sdk/include"
cc="${CC:-cc}"
cxx="${CXX:-c++}"
headers="abi.h plugin.h host.h plugin_aux.h"
warn="-pedantic -Wall -Wextra -Werror"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..14"
n=0
fail=0
for h in $headers; do
  printf '#include <backplane/%s>\nint bp_test_unit_is_not_empty;\n' "$h" > "$tmp/t.c"
  n=$((n + 1))
  if $cc -std=c11 $warn -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/err"; then
    echo "ok $n - $h compiles alone as C11"
  else
    echo "not ok $n - $h compiles alone as C11"; sed 's/^/# /' "$tmp/err"; fail=1
  fi
  cp "$tmp/t.c" "$tmp/t.cc"
  n=$((n + 1))
  if $cxx -std=c++11 $warn -I"$inc" -c "$tmp/t.cc" -o "$tmp/t.o" 2> "$tmp/err"; then
    echo "ok $n - $h compiles alone as C++11"
  else
    echo "not ok $n - $h compiles alone as C++11"; sed 's/^/# /' "$tmp/err"; fail=1
  fi
done

cat > "$tmp/aux.c" <<'PROGRAM'
#include <stdarg.h>
#include <stdio.h>
#include <backplane/plugin_aux.h>

static int failed;
static char msg[256];
#define CHECK(c) ((c) ? (void)0 : (void)(failed = 1, printf("FAIL %s:%d: %s\n", "aux", __LINE__, #c)))

static bp_status set_errorf(bp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return st;
}

static uint64_t fnv(uint64_t h, uint64_t v) { return (h ^ v) * UINT64_C(1099511628211); }

/* A view of `data` with the given sizes and element strides. */
static bp_tensor_view view(void *data, int32_t dt, int32_t ndim, const int64_t *sizes,
                           const int64_t *strides) {
  bp_tensor_view v;
  memset(&v, 0, sizeof v);
  v.struct_size = BP_TENSOR_VIEW_STRUCT_SIZE;
  v.data = data;
  v.dtype = dt;
  v.ndim = ndim;
  v.sizes = sizes;
  v.strides = strides;
  v.itemsize = bp_aux_dtype_size(dt);
  v.numel = 1;
  for (int32_t d = 0; d < ndim; d++) v.numel *= sizes[d];
  return v;
}

int main(void) {
  /* float16 and bfloat16: every float16, a sweep of float32 bit patterns. */
  uint64_t h = 14695981039346656037u;
  for (uint32_t b = 0; b < 65536; b++) {
    h = fnv(h, bp_aux_f32_to_bits(bp_aux_f16_to_f32((uint16_t)b)));
    h = fnv(h, bp_aux_f32_to_bits(bp_aux_bf16_to_f32((uint16_t)b)));
  }
  for (uint64_t b = 0; b < 0x100000000u; b += 251) {
    float f = bp_aux_bits_to_f32((uint32_t)b);
    h = fnv(fnv(h, bp_aux_f32_to_f16(f)), bp_aux_f32_to_bf16(f));
  }
  printf("halves %016llx\n", (unsigned long long)h);
  CHECK(bp_aux_f32_to_f16(1.0f) == 0x3c00 && bp_aux_f16_to_f32(0x0001) == 5.9604645e-8f);
  CHECK(bp_aux_f32_to_f16(65520.0f) == 0x7c00 && bp_aux_f32_to_f16(65519.0f) == 0x7bff);
  CHECK(bp_aux_f32_to_bf16(bp_aux_bits_to_f32(0x3f808000u)) == 0x3f80); /* tie to even */
  CHECK((bp_aux_f32_to_f16(bp_aux_bits_to_f32(0x7f800001u)) & 0x7fff) > 0x7c00);
  CHECK(bp_aux_f64_to_f16(1.0 + 1.0 / 2048 + 1e-12) == 0x3c01); /* rounded once */

  /* core::cast conversions, through the dtype switch. */
  double dv = -3.75;
  int8_t i8 = 0;
  uint8_t u8 = 7, bo = 9;
  CHECK(bp_aux_convert(BP_INT8, &i8, BP_FLOAT64, &dv) && i8 == -3);
  dv = 1e9;
  CHECK(bp_aux_convert(BP_UINT8, &u8, BP_FLOAT64, &dv) && u8 == 255);
  dv = 0.0 / 0.0;
  CHECK(bp_aux_convert(BP_INT8, &i8, BP_FLOAT64, &dv) && i8 == 0);
  CHECK(bp_aux_convert(BP_BOOL, &bo, BP_FLOAT64, &dv) && bo == 1);
  CHECK(!bp_aux_convert(BP_INT8, &i8, 12345, &dv));
  int n_types = 0;
  for (int32_t dt = 0; dt < 0x700; dt++) {
    BP_AUX_DISPATCH(dt, T, continue, {
      T x, y;
      bp_aux_store(&x, 250);
      bp_aux_store(&y, bp_aux_load(x) + bp_aux_load(x));
      double back = 0;
      CHECK(bp_aux_convert(BP_FLOAT64, &back, dt, &y));
      printf("%s %d %.1f\n", bp_aux_dtype_name(dt), (int)sizeof(T), back);
      CHECK((int64_t)sizeof(T) == bp_aux_dtype_size(dt));
      n_types++;
    })
  }
  CHECK(n_types == 10);

  /* The iterator: out[i][j] = a[j][i] (transposed) + b[j] (broadcast). */
  float out[3][4], a[4][3], b[4];
  for (int i = 0; i < 12; i++) a[i % 4][i / 4] = (float)i, b[i % 4] = (float)(100 * (i % 4));
  int64_t s34[2] = {3, 4}, c34[2] = {4, 1}, t34[2] = {1, 3}, s4[1] = {4}, c4[1] = {1};
  bp_tensor_view vo = view(out, BP_FLOAT32, 2, s34, c34), va = view(a, BP_FLOAT32, 2, s34, t34),
                 vb = view(b, BP_FLOAT32, 1, s4, c4);
  const bp_tensor_view *views[3] = {&vo, &va, &vb};
  bp_host_api host;
  memset(&host, 0, sizeof host);
  host.set_errorf = set_errorf;
  bp_kernel_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.host = &host;
  ctx.op_name = "test::op";
  bp_aux_iter it;
  bp_aux_run r;
  CHECK(bp_aux_iter_init(&ctx, &it, 3, views) == BP_OK && it.numel == 12 && it.ndim == 2);
  int runs = 0;
  for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r); runs++)
    for (int64_t k = 0; k < r.n; k++)
      *BP_AUX_AT(float, r, 0, k) = *BP_AUX_AT(float, r, 1, k) + *BP_AUX_AT(float, r, 2, k);
  CHECK(runs == 3);
  for (int i = 0; i < 12; i++) CHECK(out[i / 4][i % 4] == a[i % 4][i / 4] + b[i % 4]);
  int64_t s2[1] = {2};
  bp_tensor_view bad = view(b, BP_FLOAT32, 1, s2, c4);
  views[2] = &bad;
  CHECK(bp_aux_iter_init(&ctx, &it, 3, views) == BP_ERR_SHAPE && strstr(msg, "test::op: operand 2"));
  int64_t s0[2] = {3, 0}, one[1] = {1};
  bp_tensor_view empty = view(out, BP_FLOAT32, 2, s0, c34), scalar = view(b, BP_FLOAT32, 0, NULL, NULL);
  bp_tensor_view ones = view(b, BP_FLOAT32, 1, one, c4);
  const bp_tensor_view *ev[1] = {&empty}, *sv[2] = {&scalar, &ones};
  CHECK(bp_aux_iter_init(&ctx, &it, 1, ev) == BP_OK && it.numel == 0);
  bp_aux_iter_start(&it, 0, it.numel, &r);
  CHECK(!bp_aux_iter_next(&it, &r));
  CHECK(bp_aux_iter_init(&ctx, &it, 2, sv) == BP_ERR_SHAPE);
  bp_aux_iter_plan(&it, 2, sv, 1, one);
  bp_aux_iter_start(&it, 0, it.numel, &r);
  CHECK(it.ndim == 0 && bp_aux_iter_next(&it, &r) && r.n == 1 && !bp_aux_iter_next(&it, &r));

  /* Overlap: the even and odd elements of a buffer do not meet. */
  int64_t two[1] = {2};
  bp_tensor_view even = view(a, BP_FLOAT32, 1, s2, two), odd = view(&a[0][1], BP_FLOAT32, 1, s2, two);
  CHECK(!bp_aux_may_overlap(&even, &odd) && bp_aux_may_overlap(&even, &even));
  CHECK(bp_aux_same_view(&even, &even) && !bp_aux_same_view(&even, &odd));

  /* Arguments. */
  int64_t dims[2] = {-1, 1};
  bp_value args[2];
  memset(args, 0, sizeof args);
  args[0].tag = BP_TAG_INT_LIST;
  args[0].len = 2;
  args[0].u.ints = dims;
  int32_t got[BP_MAX_NDIM], count = 0;
  bp_tensor *t;
  CHECK(bp_aux_arg_dims(&ctx, args, 0, 2, got, &count) == BP_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(msg, "test::op: argument #0: dimension 1 is repeated for a tensor of 2 dimensions") == 0);
  dims[0] = -2;
  CHECK(bp_aux_arg_dims(&ctx, args, 0, 2, got, &count) == BP_OK && count == 2 && got[0] == 0);
  CHECK(bp_aux_arg_tensor(&ctx, args, 1, &t) == BP_ERR_TYPE);
  CHECK(strcmp(msg, "test::op: argument #1: expected Tensor, got None") == 0);
  printf("%s\n", failed ? "FAILED" : "passed");
  return failed;
}
PROGRAM
cp "$tmp/aux.c" "$tmp/aux.cc"
n=$((n + 1))
if $cc -std=c11 $warn -O2 -I"$inc" "$tmp/aux.c" -o "$tmp/aux-c" 2> "$tmp/err" &&
   "$tmp/aux-c" > "$tmp/out-c" 2>&1; then
  echo "ok $n - plugin_aux.h: its checks pass in C11"
else
  echo "not ok $n - plugin_aux.h: its checks pass in C11"; cat "$tmp/err" "$tmp/out-c" 2>/dev/null | sed 's/^/# /'; fail=1
fi
n=$((n + 1))
if $cxx -std=c++11 $warn -O2 -I"$inc" "$tmp/aux.cc" -o "$tmp/aux-cc" 2> "$tmp/err" &&
   "$tmp/aux-cc" > "$tmp/out-cc" 2>&1; then
  echo "ok $n - plugin_aux.h: its checks pass in C++11"
else
  echo "not ok $n - plugin_aux.h: its checks pass in C++11"; cat "$tmp/err" "$tmp/out-cc" 2>/dev/null | sed 's/^/# /'; fail=1
fi
n=$((n + 1))
if cmp -s "$tmp/out-c" "$tmp/out-cc"; then
  echo "ok $n - plugin_aux.h gives the same results in C11 and C++11"
else
  echo "not ok $n - plugin_aux.h gives the same results in C11 and C++11"
  diff "$tmp/out-c" "$tmp/out-cc" 2>&1 | head -20 | sed 's/^/# /'; fail=1
fi
cat > "$tmp/pw.c" <<'PROGRAM'
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <backplane/plugin_aux.h>

static int failed;
static char msg[256];
#define CHECK(c) ((c) ? (void)0 : (void)(failed = 1, printf("FAIL %s:%d: %s\n", "pw", __LINE__, #c)))

/* A host of the few slots the kit calls: tensors are malloc'd structs. */
struct bp_tensor {
  bp_tensor_view v;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  int refs;
  bool owns;
};
static int live;
static bp_status set_errorf(bp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return st;
}
static const bp_tensor_view *tensor_view(const bp_tensor *t) { return &t->v; }
static bp_tensor *tensor_retain(bp_tensor *t) { t->refs++; return t; }
static void tensor_release(bp_tensor *t) {
  if (t && --t->refs == 0) {
    if (t->owns) free(t->v.data);
    free(t);
    live--;
  }
}
static bp_tensor *wrap(void *data, int32_t dt, int32_t ndim, const int64_t *sizes,
                       const int64_t *strides) {
  bp_tensor *t = (bp_tensor *)calloc(1, sizeof *t);
  t->v.struct_size = BP_TENSOR_VIEW_STRUCT_SIZE;
  t->v.data = data;
  t->v.dtype = dt;
  t->v.ndim = ndim;
  t->v.itemsize = bp_aux_dtype_size(dt);
  t->v.numel = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    t->sizes[d] = sizes[d];
    t->strides[d] = strides ? strides[d] : (d == ndim - 1 ? 1 : t->strides[d + 1] * sizes[d + 1]);
    t->v.numel *= sizes[d];
  }
  t->v.sizes = t->sizes;
  t->v.strides = t->strides;
  t->refs = 1;
  live++;
  return t;
}
static bp_status tensor_empty(bp_device dev, int32_t dt, int32_t ndim, const int64_t *sizes,
                              bp_tensor **out) {
  int64_t n = 1;
  for (int32_t d = 0; d < ndim; d++) n *= sizes[d];
  *out = wrap(malloc((size_t)(n * bp_aux_dtype_size(dt) + 1)), dt, ndim, sizes, NULL);
  (*out)->owns = true;
  (*out)->v.device = dev;
  return BP_OK;
}

/* A "copy" that hands back src itself, which bp_aux_copy_source refuses. */
static bp_status no_copy(const bp_kernel_ctx *c, bp_tensor *src, int32_t dt, bp_tensor **out) {
  (void)c;
  (void)dt;
  *out = tensor_retain(src);
  return BP_OK;
}

/* A conversion for bp_aux_operands_init that works once, then fails. */
static int casts_left;
static bp_status failing_cast(const bp_kernel_ctx *c, bp_tensor *src, int32_t dt, bp_tensor **out) {
  if (casts_left-- <= 0) return c->host->set_errorf(BP_ERR_OUT_OF_MEMORY, "%s: no room", c->op_name);
  return bp_aux_to_dtype(c, src, dt, out);
}

BP_AUX_POINTWISE_KERNEL(add_kernel, 2, (self, other, alpha), self + alpha * other)
BP_AUX_POINTWISE_KERNEL(mul_kernel, 2, (self, other), self * other)
BP_AUX_POINTWISE_KERNEL(relu_kernel, 1, (self), bp_aux_max(self, 0))
BP_AUX_POINTWISE_KERNEL(where_kernel, 3, (c, a, b), c ? a : b)
BP_AUX_POINTWISE_OUT_KERNEL(add_out_kernel, add_kernel, 2)
BP_AUX_POINTWISE_FLOAT_KERNEL(swish_kernel, 1, (x), x / (1 + exp(-(double)x)))

/* Two results: self's first and second halves (float32 [4] into two [2]);
 * refuses a self whose first element is negative. */
static bp_status halves_impl(const bp_kernel_ctx *c, const bp_value *args, bp_tensor *const *outs) {
  const float *x = (const float *)c->host->tensor_view(args[0].u.tensor)->data;
  if (x[0] < 0) return c->host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: negative", c->op_name);
  for (int k = 0; k < 2; k++) {
    float *o = (float *)c->host->tensor_view(outs[k])->data;
    o[0] = x[2 * k];
    o[1] = x[2 * k + 1];
  }
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL_N(halves_kernel, halves_impl, 2)

static bp_host_api host;
static bp_kernel_ctx ctx;

/* host->impl: keeps what was registered. */
static bp_kernel_def defs[8];
static int ndefs;
static bp_status op_meta(const bp_op *op, const bp_value *args, size_t nargs, bp_tensor_meta *outs,
                         size_t nouts) {
  (void)op, (void)args, (void)nargs, (void)outs, (void)nouts;
  return BP_OK;
}
/* The meta function of halves: two float32 [2] results. */
static bp_status halves_meta(const bp_op *op, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)op, (void)args, (void)nargs;
  for (size_t k = 0; k < nouts; k++) {
    outs[k].device.type = BP_DEVICE_CPU;
    outs[k].device.index = 0;
    outs[k].dtype = BP_FLOAT32;
    outs[k].ndim = 1;
    outs[k].sizes[0] = 2;
    outs[k].strides[0] = 1;
  }
  return BP_OK;
}
static bp_status refusing_meta(const bp_op *op, const bp_value *args, size_t nargs,
                               bp_tensor_meta *outs, size_t nouts) {
  (void)op, (void)args, (void)nargs, (void)outs, (void)nouts;
  return set_errorf(BP_ERR_SHAPE, "test::op: refused");
}
static bp_status tensor_empty_strided(bp_device dev, int32_t dt, int32_t ndim,
                                      const int64_t *sizes, const int64_t *strides,
                                      bp_tensor **out) {
  (void)strides; /* contiguous here */
  return tensor_empty(dev, dt, ndim, sizes, out);
}
/* host->op_get_arg: the arguments of add.out. */
static bp_status op_get_arg(const bp_op *op, size_t index, bp_arg_info *info) {
  static const char *const names[] = {"self", "other", "alpha", "out"};
  (void)op;
  if (index >= 4) return BP_ERR_NOT_FOUND;
  memset(info, 0, sizeof *info);
  info->name = names[index];
  return BP_OK;
}
static bp_status impl(bp_library *lib, const bp_kernel_def *k) {
  (void)lib;
  defs[ndefs++] = *k;
  return BP_OK;
}

/* Calls kernel k (the _fill form) with args, filling out. */
static bp_status call(bp_boxed_kernel k, bp_value *args, size_t nargs, bp_tensor *out) {
  bp_value ret;
  ret.tag = BP_TAG_TENSOR;
  ret.u.tensor = out;
  msg[0] = 0;
  return k(&ctx, args, nargs, &ret, 1);
}
static bp_value tv(bp_tensor *t) { bp_value v; memset(&v, 0, sizeof v); v.tag = BP_TAG_TENSOR; v.u.tensor = t; return v; }
static bp_value fv(double f) { bp_value v; memset(&v, 0, sizeof v); v.tag = BP_TAG_FLOAT; v.u.f = f; return v; }

int main(void) {
  host.set_errorf = set_errorf;
  host.tensor_view = tensor_view;
  host.tensor_retain = tensor_retain;
  host.tensor_release = tensor_release;
  host.tensor_empty = tensor_empty;
  ctx.host = &host;
  ctx.op_name = "test::op";
  host.impl = impl;
  host.op_meta = op_meta;
  host.abi_major = BP_ABI_VERSION_MAJOR;
  host.abi_minor = BP_ABI_VERSION_MINOR;
  /* Registration declares dtypes: the structured form on this host. */
  static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  CHECK(BP_AUX_IMPL_STRUCTURED(&host, NULL, "add", BP_DEVICE_CPU, add_kernel, NULL) == BP_OK);
  CHECK(BP_AUX_IMPL_STRUCTURED(&host, NULL, "mul", 300, mul_kernel, f32) == BP_OK);
  CHECK(bp_aux_impl_dtypes(&host, NULL, "relu", 300, relu_kernel, f32) == BP_OK);
  CHECK(bp_aux_impl_structured_dtypes(&host, NULL, "where", 300, where_kernel, where_kernel_fill,
                                      NULL, BP_PRIORITY_REFERENCE, f32) == BP_OK);
  CHECK(bp_aux_impl(&host, NULL, "swish", 300, swish_kernel, NULL) == BP_OK);
  CHECK(ndefs == 5 && defs[0].dtypes == NULL && defs[0].boxed == add_kernel_fill &&
        defs[0].flags == BP_KERNEL_DEF_STRUCTURED && defs[0].priority == BP_PRIORITY_DEFAULT);
  CHECK(defs[1].dtypes == f32 && defs[1].device_type == 300 && defs[1].boxed == mul_kernel_fill);
  CHECK(defs[2].dtypes == f32 && defs[2].boxed == relu_kernel && defs[2].flags == 0);
  CHECK(defs[3].priority == BP_PRIORITY_REFERENCE && defs[3].boxed == where_kernel_fill);
  CHECK(defs[4].dtypes == NULL && defs[4].boxed == swish_kernel);
#ifndef __cplusplus
  const int32_t *lit = BP_AUX_DTYPES(BP_FLOAT32, BP_INT8);
  CHECK(lit[0] == BP_FLOAT32 && lit[1] == BP_INT8 && lit[2] == BP_DTYPE_INVALID);
#endif
  int64_t s4[1] = {4}, s22[2] = {2, 2}, t22[2] = {1, 2}, s2[1] = {2};

  /* Signed comparisons in the compute types. */
  CHECK(bp_aux_signed(bp_aux_load((int8_t)-3)) == -3 && bp_aux_signed(bp_aux_load((int64_t)INT64_MIN)) == INT64_MIN);
  CHECK(bp_aux_max(bp_aux_load((int32_t)-5), 0) == 0 && bp_aux_min(bp_aux_load((int16_t)-5), 0) == (uint64_t)-5);
  CHECK(bp_aux_max(bp_aux_load((uint8_t)200), 0) == 200);
  CHECK(isnan(bp_aux_max((float)NAN, 0)) && isnan(bp_aux_min(0.0, (double)NAN)) && bp_aux_max(-1.5, 2) == 2);
  CHECK(!signbit(bp_aux_max(-0.0f, 0)));

  /* int8 + int8 wraps; int64 wraps with no overflow; alpha saturates for uint8. */
  int8_t a8[4] = {100, -100, 5, -1}, b8[4] = {100, -100, 7, 1}, o8[4];
  bp_tensor *ta = wrap(a8, BP_INT8, 1, s4, NULL), *tb = wrap(b8, BP_INT8, 1, s4, NULL),
            *to = wrap(o8, BP_INT8, 1, s4, NULL);
  bp_value args[3] = {tv(ta), tv(tb), fv(1)};
  CHECK(call(add_kernel_fill, args, 3, to) == BP_OK);
  CHECK(o8[0] == -56 && o8[1] == 56 && o8[2] == 12 && o8[3] == 0);
  args[2] = fv(-2);
  CHECK(call(add_kernel_fill, args, 3, to) == BP_OK && o8[0] == -100 && o8[2] == -9);
  int64_t a64[2] = {INT64_MAX, INT64_MIN}, b64[2] = {1, -1}, o64[2];
  bp_tensor *t64a = wrap(a64, BP_INT64, 1, s2, NULL), *t64b = wrap(b64, BP_INT64, 1, s2, NULL),
            *t64o = wrap(o64, BP_INT64, 1, s2, NULL);
  bp_value a64v[3] = {tv(t64a), tv(t64b), fv(1)};
  CHECK(call(add_kernel_fill, a64v, 3, t64o) == BP_OK && o64[0] == INT64_MIN && o64[1] == INT64_MAX);
  CHECK(call(mul_kernel_fill, a64v, 2, t64o) == BP_OK && o64[0] == INT64_MAX && o64[1] == INT64_MIN);
  uint8_t u8a[2] = {3, 4}, u8b[2] = {10, 20}, u8o[2];
  bp_tensor *tua = wrap(u8a, BP_UINT8, 1, s2, NULL), *tub = wrap(u8b, BP_UINT8, 1, s2, NULL),
            *tuo = wrap(u8o, BP_UINT8, 1, s2, NULL);
  bp_value uargs[3] = {tv(tua), tv(tub), fv(-1)};
  CHECK(call(add_kernel_fill, uargs, 3, tuo) == BP_OK && u8o[0] == 3 && u8o[1] == 4);

  /* relu: negative integers, NaN, -0.0; in place. */
  int32_t r32[4] = {-7, 0, 7, INT32_MIN};
  bp_tensor *tr = wrap(r32, BP_INT32, 1, s4, NULL);
  bp_value rargs[1] = {tv(tr)};
  CHECK(call(relu_kernel_fill, rargs, 1, tr) == BP_OK);
  CHECK(r32[0] == 0 && r32[1] == 0 && r32[2] == 7 && r32[3] == 0);
  float rf[4] = {-1.5f, NAN, -0.0f, 2.5f};
  bp_tensor *trf = wrap(rf, BP_FLOAT32, 1, s4, NULL);
  rargs[0] = tv(trf);
  CHECK(call(relu_kernel_fill, rargs, 1, trf) == BP_OK);
  CHECK(rf[0] == 0 && isnan(rf[1]) && rf[2] == 0 && !signbit(rf[2]) && rf[3] == 2.5f);

  /* Promotion: int16 x float32 -> float32 (the int16 input converted);
   * a transposed input walks the strided loop; a broadcast one too. */
  int16_t ai[4] = {1, 2, 3, 4};
  float bf[2] = {10, 100}, of[4];
  bp_tensor *tai = wrap(ai, BP_INT16, 2, s22, t22), *tbf = wrap(bf, BP_FLOAT32, 1, s2, NULL),
            *tof = wrap(of, BP_FLOAT32, 2, s22, NULL);
  bp_value pargs[2] = {tv(tai), tv(tbf)};
  CHECK(call(mul_kernel_fill, pargs, 2, tof) == BP_OK);
  CHECK(of[0] == 10 && of[1] == 300 && of[2] == 20 && of[3] == 400);

  /* bool: mul is and, add is or; where picks by a bool condition. */
  bp_aux_bool ba[4] = {{1}, {1}, {0}, {0}}, bb[4] = {{1}, {0}, {1}, {0}}, bo[4];
  bp_tensor *tba = wrap(ba, BP_BOOL, 1, s4, NULL), *tbb = wrap(bb, BP_BOOL, 1, s4, NULL),
            *tbo = wrap(bo, BP_BOOL, 1, s4, NULL);
  bp_value bargs[3] = {tv(tba), tv(tbb), fv(1)};
  CHECK(call(mul_kernel_fill, bargs, 2, tbo) == BP_OK && bo[0].value == 1 && bo[1].value == 0 && bo[2].value == 0);
  CHECK(call(add_kernel_fill, bargs, 3, tbo) == BP_OK && bo[1].value == 1 && bo[2].value == 1 && bo[3].value == 0);
  double wa[4] = {1, 2, 3, 4}, wb[1] = {-1}, wo[4];
  int64_t one[1] = {1};
  bp_tensor *twa = wrap(wa, BP_FLOAT64, 1, s4, NULL), *twb = wrap(wb, BP_FLOAT64, 1, one, NULL),
            *two = wrap(wo, BP_FLOAT64, 1, s4, NULL);
  bp_value wargs[3] = {tv(tba), tv(twa), tv(twb)};
  CHECK(call(where_kernel_fill, wargs, 3, two) == BP_OK);
  CHECK(wo[0] == 1 && wo[1] == 2 && wo[2] == -1 && wo[3] == -1);

  /* float16 rounds once; the float-only kernel refuses an integer result. */
  bp_aux_float16 h[2], ho[2];
  bp_aux_store(&h[0], 1.0f);
  bp_aux_store(&h[1], -2.0f);
  bp_tensor *th = wrap(h, BP_FLOAT16, 1, s2, NULL), *tho = wrap(ho, BP_FLOAT16, 1, s2, NULL);
  bp_value hargs[1] = {tv(th)};
  CHECK(call(swish_kernel_fill, hargs, 1, tho) == BP_OK);
  printf("swish float16 %04x %04x\n", ho[0].bits, ho[1].bits);
  CHECK(ho[0].bits == bp_aux_f32_to_f16((float)(1 / (1 + exp(-1.0)))));
  CHECK(call(swish_kernel_fill, rargs, 1, to) == BP_ERR_UNSUPPORTED);
  CHECK(strcmp(msg, "test::op: argument #0: this plugin has no kernel for int8") == 0);

  /* add.out: out may be exactly an input, not part of one. */
  int8_t big[5] = {1, 2, 3, 4, 5};
  bp_tensor *tbig = wrap(big, BP_INT8, 1, s4, NULL), *tpart = wrap(big + 1, BP_INT8, 1, s4, NULL);
  bp_value oargs[4] = {tv(tbig), tv(tbig), fv(2), tv(tbig)}, oret;
  CHECK(add_out_kernel(&ctx, oargs, 4, &oret, 1) == BP_OK && oret.u.tensor == tbig);
  CHECK(big[0] == 3 && big[3] == 12 && big[4] == 5);
  tensor_release(oret.u.tensor);
  oargs[3] = tv(tpart);
  CHECK(add_out_kernel(&ctx, oargs, 4, &oret, 1) == BP_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(msg, "test::op: argument #3: overlaps argument #0 in memory (it may only be exactly "
                    "that tensor)") == 0);

  /* Errors name the argument by its schema index. */
  bp_value bad[3] = {tv(ta), fv(1), fv(1)};
  CHECK(call(add_kernel_fill, bad, 3, to) == BP_ERR_TYPE);
  CHECK(strcmp(msg, "test::op: argument #1: expected Tensor, got float") == 0);
  bad[1] = tv(tb);
  bad[2] = tv(tb);
  CHECK(call(add_kernel_fill, bad, 3, to) == BP_ERR_TYPE);
  CHECK(strcmp(msg, "test::op: argument #2: expected a number (int, float or bool), got Tensor") == 0);
  bp_value shp[2] = {tv(ta), tv(tbf)};
  CHECK(call(mul_kernel_fill, shp, 2, to) == BP_ERR_SHAPE);

  /* A kernel of two results: allocating, filling, and releasing both when
   * it fails. */
  float hx[4] = {1, 2, 3, 4};
  bp_tensor *thx = wrap(hx, BP_FLOAT32, 1, s4, NULL);
  bp_value hxa[1] = {tv(thx)}, hret[2];
  host.op_meta = halves_meta;
  host.tensor_empty_strided = tensor_empty_strided;
  int live0 = live;
  CHECK(halves_kernel(&ctx, hxa, 1, hret, 2) == BP_OK && live == live0 + 2);
  const float *h0 = (const float *)tensor_view(hret[0].u.tensor)->data,
              *h1 = (const float *)tensor_view(hret[1].u.tensor)->data;
  CHECK(hret[1].tag == BP_TAG_TENSOR && h0[0] == 1 && h0[1] == 2 && h1[0] == 3 && h1[1] == 4);
  hx[0] = 5;
  CHECK(halves_kernel_fill(&ctx, hxa, 1, hret, 2) == BP_OK && h0[0] == 5 && h1[1] == 4);
  tensor_release(hret[0].u.tensor);
  tensor_release(hret[1].u.tensor);
  hx[0] = -1;
  CHECK(halves_kernel(&ctx, hxa, 1, hret, 2) == BP_ERR_INVALID_ARGUMENT && live == live0);
  CHECK(strcmp(msg, "test::op: negative") == 0);
  /* A meta function that refuses the arguments: nothing is allocated. */
  host.op_meta = refusing_meta;
  hx[0] = 1;
  CHECK(halves_kernel(&ctx, hxa, 1, hret, 2) == BP_ERR_SHAPE && live == live0);
  CHECK(strcmp(msg, "test::op: refused") == 0);
  host.op_meta = op_meta;

  /* The distinct elements of an expanded view. */
  int64_t es[2] = {3, 4}, est[2] = {0, 1}, dsz[2];
  bp_tensor *tev = wrap(big, BP_INT8, 2, es, est);
  bp_tensor_view dv;
  bp_aux_distinct_view(&tev->v, &dv, dsz);
  CHECK(tev->v.numel == 12 && dv.sizes == dsz && dsz[0] == 1 && dsz[1] == 4 && dv.numel == 4 &&
        dv.strides == tev->v.strides);
  /* Empty, with other sizes whose product is past int64: numel 0. */
  int64_t hs[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0}, hst[3] = {1, 1, 1}, hsz[3];
  bp_tensor_view hv = tev->v;
  hv.ndim = 3;
  hv.sizes = hs;
  hv.strides = hst;
  hv.numel = 0;
  bp_aux_distinct_view(&hv, &dv, hsz);
  CHECK(dv.numel == 0 && hsz[0] == hs[0] && hsz[2] == 0);

  /* Operands in the dtype a kernel computes in: an input of that dtype
   * is its own view, another a converted temporary that release frees; a
   * conversion that fails leaves nothing behind. */
  {
    int live_before = live;
    float of[3] = {1, 2, 3};
    int8_t oi[3] = {4, -5, 6}, oj[3] = {7, 8, -9};
    int64_t on[1] = {3};
    bp_tensor *oa = wrap(of, BP_FLOAT32, 1, on, NULL), *ob = wrap(oi, BP_INT8, 1, on, NULL);
    bp_tensor *oc = wrap(oj, BP_INT8, 1, on, NULL);
    bp_tensor *ots[3] = {oa, ob, oc};
    int live1 = live;
    bp_aux_operands ops;
    CHECK(bp_aux_operands_init(&ctx, &ops, NULL, &oa->v, 1, ots, 3, BP_FLOAT32) == BP_OK);
    CHECK(ops.views[0] == &oa->v && ops.views[1] == &oa->v && !ops.temps[1] && ops.temps[2] &&
          ops.views[2]->dtype == BP_FLOAT32 && ((const float *)ops.views[2]->data)[1] == -5.0f &&
          ((const float *)ops.views[3]->data)[2] == -9.0f && live == live1 + 2);
    bp_aux_operands_release(&ctx, &ops);
    CHECK(live == live1 && !ops.temps[2] && !ops.temps[3]);
    casts_left = 1; /* the second conversion fails: the first is released */
    CHECK(bp_aux_operands_init(&ctx, &ops, failing_cast, &oa->v, 1, ots, 3, BP_FLOAT32) ==
              BP_ERR_OUT_OF_MEMORY &&
          live == live1 && strcmp(msg, "test::op: no room") == 0);
    bp_aux_operands_release(&ctx, &ops); /* harmless after a failed init */
    CHECK(bp_aux_operands_init(&ctx, &ops, NULL, &oa->v, 7, ots, 3, BP_FLOAT32) ==
          BP_ERR_INVALID_ARGUMENT);
    CHECK(live == live1);
    tensor_release(oa);
    tensor_release(ob);
    tensor_release(oc);
    CHECK(live == live_before);
  }

  /* copy_'s opening: nothing to do onto itself or when empty; a source
   * apart from self read as it is; an overlapping one copied first, in
   * self's dtype. */
  {
    int live_before = live;
    int16_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t n4[1] = {4}, n0[1] = {0};
    bp_tensor *lo = wrap(buf, BP_INT16, 1, n4, NULL), *hi = wrap(buf + 4, BP_INT16, 1, n4, NULL);
    bp_tensor *mid = wrap(buf + 2, BP_INT16, 1, n4, NULL), *lo2 = wrap(buf, BP_INT16, 1, n4, NULL);
    bp_tensor *none = wrap(buf, BP_INT16, 1, n0, NULL), *tmp;
    const bp_tensor_view *rd;
    int live1 = live;
    CHECK(bp_aux_copy_source(&ctx, lo, lo2, NULL, &tmp, &rd) == BP_OK && !rd && !tmp);
    CHECK(bp_aux_copy_source(&ctx, none, hi, NULL, &tmp, &rd) == BP_OK && !rd && !tmp);
    CHECK(bp_aux_copy_source(&ctx, lo, hi, NULL, &tmp, &rd) == BP_OK && rd == &hi->v && !tmp);
    CHECK(bp_aux_copy_source(&ctx, lo, mid, NULL, &tmp, &rd) == BP_OK && tmp && rd == &tmp->v &&
          rd->data != mid->v.data && ((const int16_t *)rd->data)[0] == 3 &&
          ((const int16_t *)rd->data)[3] == 6 && live == live1 + 1);
    tensor_release(tmp);
    CHECK(bp_aux_copy_source(&ctx, lo, mid, no_copy, &tmp, &rd) == BP_ERR_INTERNAL && !tmp &&
          !rd && live == live1);
    bp_tensor *own[] = {lo, hi, mid, lo2, none};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) tensor_release(own[i]);
    CHECK(live == live_before);
  }

  /* Argument errors name the argument, from the schema where the host
   * can say (a host of ABI 1.1 or later). */
  host.struct_size = BP_HOST_API_STRUCT_SIZE;
  host.op_get_arg = op_get_arg;
  ctx.op = (const bp_op *)&ctx; /* any op: the fake host has one */
  CHECK(call(swish_kernel_fill, rargs, 1, to) == BP_ERR_UNSUPPORTED);
  CHECK(strcmp(msg, "test::op: argument #0 'self': this plugin has no kernel for int8") == 0);
  CHECK(bp_aux_arg_errorf(&ctx, BP_ERR_INVALID_ARGUMENT, 2, "expected %s, got %d", "1", 2) == BP_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(msg, "test::op: argument #2 'alpha': expected 1, got 2") == 0);
  CHECK(bp_aux_arg_errorf(&ctx, BP_ERR_INVALID_ARGUMENT, 7, "past the end") == BP_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(msg, "test::op: argument #7: past the end") == 0);

  bp_tensor *all[] = {thx, tev, tbig, tpart, ta, tb, to, t64a, t64b, t64o, tua, tub, tuo, tr, trf, tai, tbf, tof,
                      tba, tbb, tbo, twa, twb, two, th, tho};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tensor_release(all[i]);
  CHECK(live == 0); /* every converted input released */
  printf("%s\n", failed ? "FAILED" : "passed");
  return failed;
}
PROGRAM
cp "$tmp/pw.c" "$tmp/pw.cc"
n=$((n + 1))
if $cc -std=c11 $warn -O2 -I"$inc" "$tmp/pw.c" -o "$tmp/pw-c" -lm 2> "$tmp/err" &&
   "$tmp/pw-c" > "$tmp/pw-out-c" 2>&1; then
  echo "ok $n - plugin_aux.h: pointwise kernels pass their checks in C11"
else
  echo "not ok $n - plugin_aux.h: pointwise kernels pass their checks in C11"
  cat "$tmp/err" "$tmp/pw-out-c" 2>/dev/null | sed 's/^/# /'; fail=1
fi
n=$((n + 1))
if $cxx -std=c++11 $warn -O2 -I"$inc" "$tmp/pw.cc" -o "$tmp/pw-cc" 2> "$tmp/err" &&
   "$tmp/pw-cc" > "$tmp/pw-out-cc" 2>&1; then
  echo "ok $n - plugin_aux.h: pointwise kernels pass their checks in C++11"
else
  echo "not ok $n - plugin_aux.h: pointwise kernels pass their checks in C++11"
  cat "$tmp/err" "$tmp/pw-out-cc" 2>/dev/null | sed 's/^/# /'; fail=1
fi
n=$((n + 1))
if cmp -s "$tmp/pw-out-c" "$tmp/pw-out-cc"; then
  echo "ok $n - the pointwise kernels give the same results in C11 and C++11"
else
  echo "not ok $n - the pointwise kernels give the same results in C11 and C++11"
  diff "$tmp/pw-out-c" "$tmp/pw-out-cc" 2>&1 | head -20 | sed 's/^/# /'; fail=1
fi
exit $fail
