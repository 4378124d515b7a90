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
echo "1..11"
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
exit $fail
