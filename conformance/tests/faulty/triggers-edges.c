/*
 * conformance/tests/faulty/triggers-edges.c - the triggers of the shim
 * corpus's faults at the values a list of special values misses
 * (faults-edges.c): NaN payloads, integers beyond a float's mantissa, and
 * the rounding edges of a narrowing cast; of the fault in a vendor's own
 * op, which its composite would have caught (faults-vendor.c); and of an
 * optional argument given alone (faults-args.c) (confirm.h).
 */
#include <math.h>
#include <stdio.h>

#include "confirm.h"

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define F32 BP_FLOAT32
#define I64 BP_INT64

static call *with1(bp_tensor *a) {
  static call c;
  call_init(&c);
  arg_t(&c, a);
  return &c;
}

/* float32 NaNs by their bits: a negative quiet one, a signalling one with
 * the lowest payload bit, a quiet one with a low payload, all ones. */
#define NEG_NAN nan_with_bits(F32, 0xffc00000u)
#define SNAN_1 nan_with_bits(F32, 0x7f800001u)
#define QNAN_1 nan_with_bits(F32, 0x7fc00001u)
#define ONES nan_with_bits(F32, 0x7fffffffu)

static rt *f32_of(int64_t n, const double *v) {
  rt *x = rt_new(F32, 1, S(n));
  for (int64_t i = 0; i < n; i++) x->f[i] = v[i]; /* copied, never computed: payloads stay */
  return x;
}

static rt *i64_of(int64_t n, const int64_t *v) {
  rt *x = rt_new(I64, 1, S(n));
  for (int64_t i = 0; i < n; i++) x->i[i] = v[i];
  return x;
}

#define P53 ((int64_t)1 << 53)
#define ODD (((int64_t)1 << 62) + ((int64_t)1 << 38) + 1)

static int t_relu_sign_bit(char *why, size_t len) {
  rt *x = f32_of(3, (const double[]){NEG_NAN, 1, -2});
  return check("core::relu", with1(mk(x, NULL, 0)), ref_unary(RU_RELU, x), true, 1, 1, why, len);
}

static int t_cast_bf16_bias(char *why, size_t len) {
  rt *x = f32_of(3, (const double[]){SNAN_1, ONES, 1.5});
  call *c = with1(mk(x, NULL, 0));
  arg_dt(c, BP_BFLOAT16);
  return check("core::cast", c, ref_cast(x, BP_BFLOAT16), true, 1, 1, why, len);
}

static int t_cast_narrow_early_inf(char *why, size_t len) {
  rt *x = f32_of(3, (const double[]){65519.0, -65519.0, 1.0});
  call *c = with1(mk(x, NULL, 0));
  arg_dt(c, BP_FLOAT16);
  return check("core::cast", c, ref_cast(x, BP_FLOAT16), true, 1, 1, why, len);
}

static int t_cast_i64_f32_double(char *why, size_t len) {
  rt *x = i64_of(3, (const int64_t[]){ODD, -ODD, 3});
  call *c = with1(mk(x, NULL, 0));
  arg_dt(c, F32);
  return check("core::cast", c, ref_cast(x, F32), true, 1, 1, why, len);
}

static int t_eq_int64_double(char *why, size_t len) {
  rt *a = i64_of(2, (const int64_t[]){P53, 5}), *b = i64_of(2, (const int64_t[]){P53 + 1, 5});
  call *c = with1(mk(a, NULL, 0));
  arg_t(c, mk(b, NULL, 0));
  return check("core::eq", c, ref_compare(RC_EQ, a, b), true, 1, 1, why, len);
}

static int t_sort_bits_key(char *why, size_t len) {
  rt *x = f32_of(4, (const double[]){1, NEG_NAN, -INFINITY, 2});
  call *c = with1(mk(x, NULL, 0));
  arg_i(c, 0);
  arg_b(c, false);
  rt *ix = NULL, *want = ref_topk(x, 0, 4, false, &ix);
  rt_free(ix);
  return check("core::sort", c, want, true, 1, 1, why, len);
}

static int t_isnan_canonical(char *why, size_t len) {
  rt *x = f32_of(4, (const double[]){SNAN_1, QNAN_1, ONES, 1});
  return check("core::isnan", with1(mk(x, NULL, 0)), ref_isnan(x), true, 1, 1, why, len);
}

static int t_clamp_int_double(char *why, size_t len) {
  rt *x = i64_of(3, (const int64_t[]){P53, P53 + 2, 0});
  call *c = with1(mk(x, NULL, 0));
  arg_i(c, P53 + 1);
  arg_none(c);
  ref_scalar lo = {REF_S_INT, P53 + 1, 0}, hi = {REF_S_NONE, 0, 0};
  return check("core::clamp", c, ref_clamp(x, &lo, &hi), true, 1, 1, why, len);
}

static int t_masked_fill_int_double(char *why, size_t len) {
  rt *x = i64_of(3, (const int64_t[]){1, 2, 3});
  rt *m = rt_new(BP_BOOL, 1, S(3));
  m->i[0] = 1, m->i[1] = 0, m->i[2] = 1;
  call *c = with1(mk(x, NULL, 0));
  arg_t(c, mk(m, NULL, 0));
  arg_i(c, P53 + 1);
  ref_scalar v = {REF_S_INT, P53 + 1, 0};
  return check("core::masked_fill", c, ref_masked_fill(x, m, &v), true, 1, 1, why, len);
}

/* faulty::axpby on two transposed operands against a + alpha * b; a
 * plugin without the op (the CPU plugin) does not have the fault. */
static int t_axpby_dense(char *why, size_t len) {
  const bp_op *op;
  if (bp_op_find("faulty::axpby", &op) != BP_OK) {
    bp_clear_error();
    snprintf(why, len, "the plugin defines no faulty::axpby");
    return 0;
  }
  rt *a = rnd(F32, 2, S(3, 4), -2, 2), *b = rnd(F32, 2, S(3, 4), -2, 2);
  call *c = with1(mk(a, S(1, 3), 0));
  arg_t(c, mk(b, S(1, 3), 0));
  arg_f(c, 0.5);
  return check("faulty::axpby", c, ref_binary(RB_ADD, a, b, 0.5), false, 8, 8, why, len);
}

/* layer_norm with a bias and no weight (faults-args.c). */
static int t_layer_norm_bias_needs_weight(char *why, size_t len) {
  static const int64_t last[] = {5};
  rt *x = rnd(F32, 2, S(3, 5), -2, 2), *b = rnd(F32, 1, S(5), -1, 1);
  call *c = with1(mk(x, NULL, 0));
  arg_list(c, last, 1);
  arg_none(c);
  arg_t(c, mk(b, NULL, 0));
  arg_f(c, 1e-5);
  return check("core::layer_norm", c, ref_layer_norm(x, 1, NULL, b, 1e-5), false, 1, 1, why,
               len);
}

/* topk with sorted=False: each value must sit beside its own index
 * (faults-args.c). */
static int t_topk_unsorted_pairs(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(3, 10), -2, 2);
  call *c = with1(mk(x, NULL, 0));
  arg_i(c, 4);
  arg_i(c, 1);
  arg_b(c, true);
  arg_b(c, false);
  const bp_op *op;
  bp_tensor *tv = NULL, *ti = NULL;
  if (bp_op_find("core::topk", &op) != BP_OK || bp_call(op, &c->st) != BP_OK ||
      bp_stack_get_tensor(&c->st, 0, &tv) != BP_OK || bp_stack_get_tensor(&c->st, 1, &ti) != BP_OK) {
    snprintf(why, len, "core::topk failed: %s", bp_last_error());
    return -1;
  }
  rt *v = get(tv), *ix = get(ti);
  int bad = 0, first = -1;
  for (int64_t r = 0; r < 3; r++)
    for (int64_t j = 0; j < 4; j++) {
      int64_t at = ix->i[r * 4 + j];
      if (at < 0 || at >= 10 || x->f[r * 10 + at] != v->f[r * 4 + j]) {
        if (first < 0) first = (int)(r * 4 + j);
        bad++;
      }
    }
  snprintf(why, len, "%d of 12 values are not the input's value at their index%s", bad,
           bad ? " (sorted=False)" : "");
  bp_stack_release(&c->st);
  return bad > 0;
}

const trigger edges_triggers[] = {
    {"relu_sign_bit", t_relu_sign_bit, 0},
    {"cast_bf16_bias", t_cast_bf16_bias, 0},
    {"cast_narrow_early_inf", t_cast_narrow_early_inf, 0},
    {"cast_i64_f32_double", t_cast_i64_f32_double, 0},
    {"eq_int64_double", t_eq_int64_double, 0},
    {"sort_bits_key", t_sort_bits_key, 0},
    {"isnan_canonical", t_isnan_canonical, 0},
    {"clamp_int_double", t_clamp_int_double, 0},
    {"masked_fill_int_double", t_masked_fill_int_double, 0},
    {"axpby_dense", t_axpby_dense, 0},
    {"layer_norm_bias_needs_weight", t_layer_norm_bias_needs_weight, 0},
    {"topk_unsorted_pairs", t_topk_unsorted_pairs, 0},
};
const size_t edges_ntriggers = sizeof edges_triggers / sizeof *edges_triggers;
