/*
 * conformance/tests/faulty/triggers-num.c - the triggers of the shim
 * corpus's faults of sizes, layouts, broadcasting, dims, promotion, value
 * classes and matmul shapes (confirm.h): one call on inputs of the fault's
 * region, compared with the float64 reference, bit for bit where the op
 * set makes the op correctly rounded.
 *
 * Each trigger runs in a child process that exits right after it, so the
 * triggers do not free what they make.
 */
#include <math.h>

#include "confirm.h"

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define F32 BP_FLOAT32

/* A call with the given tensors (and nothing else yet). */
static call *with(int n, bp_tensor *a, bp_tensor *b, bp_tensor *c3) {
  static call c;
  call_init(&c);
  bp_tensor *t[3] = {a, b, c3};
  for (int i = 0; i < n; i++) arg_t(&c, t[i]);
  return &c;
}

static double sqrt_n(int64_t n) { return sqrt((double)(n > 1 ? n : 1)); }

/* ------------------------------------------------------------------------ */
/* Sizes and layouts                                                        */
/* ------------------------------------------------------------------------ */

static int t_mul_tail7(char *why, size_t len) {
  rt *a = rnd(F32, 1, S(23), -2, 2), *b = rnd(F32, 1, S(23), -2, 2);
  return check("core::mul", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_MUL, a, b, 1.0), true, 1, 1, why, len);
}

static int t_sum_unroll_tail(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(3, 70), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(1), 1);
  int64_t n;
  rt *want = ref_reduce(RR_SUM, x, S(1), 1, false, BP_DTYPE_INVALID, &n);
  return check("core::sum", c, want, false, sqrt_n(n), (double)n, why, len);
}

static int t_exp_par_tail(char *why, size_t len) {
  rt *x = rnd(F32, 1, S(100000), -3, 3);
  return check("core::exp", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_EXP, x), false, 1, 1,
               why, len);
}

static int t_sigmoid_rank5(char *why, size_t len) {
  rt *x = rnd(F32, 5, S(2, 2, 2, 2, 3), -3, 3);
  return check("core::sigmoid", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_SIGMOID, x),
               false, 1, 1, why, len);
}

static int t_neg_offset(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(2, 5), -2, 2);
  return check("core::neg", with(1, mk(x, NULL, 7), NULL, NULL), ref_unary(RU_NEG, x), true, 1, 1,
               why, len);
}

static int t_relu_dense(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(3, 4), -2, 2); /* stored transposed */
  return check("core::relu", with(1, mk(x, S(1, 3), 0), NULL, NULL), ref_unary(RU_RELU, x), true,
               1, 1, why, len);
}

static int t_sqrt_bcast_inner(char *why, size_t len) {
  rt *col = rnd(F32, 2, S(3, 1), 0.5, 4), *x = ref_expand(col, 2, S(3, 4));
  return check("core::sqrt", with(1, mk(x, S(1, 0), 0), NULL, NULL), ref_unary(RU_SQRT, x), true,
               1, 1, why, len);
}

static int t_where_inner_step(char *why, size_t len) {
  rt *c = rnd(BP_BOOL, 3, S(2, 3, 4), 0, 1), *a = rnd(F32, 3, S(2, 3, 4), -2, 2),
     *b = rnd(F32, 3, S(2, 3, 4), -2, 2);
  return check("core::where", with(3, mk(c, NULL, 0), mk(a, S(24, 8, 2), 0), mk(b, NULL, 0)),
               ref_where(c, a, b), true, 1, 1, why, len);
}

/* ------------------------------------------------------------------------ */
/* Broadcasting and dims                                                    */
/* ------------------------------------------------------------------------ */

static int t_add_bcast_mid(char *why, size_t len) {
  rt *a = rnd(F32, 3, S(2, 3, 4), -2, 2), *b = rnd(F32, 3, S(2, 1, 4), -2, 2);
  return check("core::add", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_ADD, a, b, 1.0), true, 1, 1, why, len);
}

static int t_sub_rank_swap(char *why, size_t len) {
  rt *a = rnd(F32, 1, S(4), -2, 2), *b = rnd(F32, 2, S(3, 4), -2, 2);
  return check("core::sub", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_SUB, a, b, 1.0), true, 1, 1, why, len);
}

static int t_pow_scalar_exp(char *why, size_t len) {
  rt *a = rnd(F32, 2, S(2, 3), 0.5, 2), *e = vals(F32, 0, NULL, V(3.0));
  return check("core::pow", with(2, mk(a, NULL, 0), mk(e, NULL, 0), NULL),
               ref_binary(RB_POW, a, e, 1.0), false, 1, 1, why, len);
}

static int t_argmax_offset(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(4, 5), -5, 5);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_i(c, 0);
  return check("core::argmax", c, ref_argmax(x, true, 0, false), true, 1, 1, why, len);
}

static int t_mean_negdims(char *why, size_t len) {
  rt *x = rnd(F32, 3, S(3, 4, 5), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(0, -1), 2);
  int64_t n;
  rt *want = ref_reduce(RR_MEAN, x, S(0, 2), 2, false, BP_DTYPE_INVALID, &n);
  return check("core::mean", c, want, false, sqrt_n(n), 1, why, len);
}

static int t_sum_multidim(char *why, size_t len) {
  rt *x = rnd(F32, 3, S(3, 4, 5), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(0, 1), 2);
  int64_t n;
  rt *want = ref_reduce(RR_SUM, x, S(0, 1), 2, false, BP_DTYPE_INVALID, &n);
  return check("core::sum", c, want, false, sqrt_n(n), (double)n, why, len);
}

static int t_amin_keepdim(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(3, 4), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(1), 1);
  arg_b(c, true);
  int64_t n;
  return check("core::amin", c, ref_reduce(RR_AMIN, x, S(1), 1, true, BP_DTYPE_INVALID, &n), true,
               1, 1, why, len);
}

static int t_sum_dtype_ignored(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(2, 3), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(0), 0);
  arg_b(c, false);
  arg_dt(c, BP_FLOAT64);
  int64_t n;
  rt *want = ref_reduce(RR_SUM, x, NULL, 0, false, BP_FLOAT64, &n);
  return check("core::sum", c, want, false, sqrt_n(n), (double)n, why, len);
}

/* ------------------------------------------------------------------------ */
/* Promotion and value classes                                              */
/* ------------------------------------------------------------------------ */

static int t_add_first_dtype(char *why, size_t len) {
  rt *a = rnd(BP_INT32, 2, S(2, 3), -5, 5), *b = rnd(F32, 2, S(2, 3), -2, 2);
  return check("core::add", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_ADD, a, b, 1.0), true, 1, 1, why, len);
}

static int t_mul_int8_as_u8(char *why, size_t len) {
  rt *a = vals(BP_INT8, 1, S(6), V(-3, -1, 0, 1, 2, -128)), *b = rnd(F32, 1, S(6), -2, 2);
  return check("core::mul", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_MUL, a, b, 1.0), true, 1, 1, why, len);
}

static int t_minimum_u8_i8(char *why, size_t len) {
  rt *a = vals(BP_UINT8, 1, S(6), V(5, 200, 0, 7, 255, 3)),
     *b = vals(BP_INT8, 1, S(6), V(-1, 100, -128, 7, -5, 3));
  return check("core::minimum", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_MINIMUM, a, b, 1.0), true, 1, 1, why, len);
}

static int t_maximum_nan(char *why, size_t len) {
  rt *a = vals(F32, 1, S(4), V(1, NAN, -2, NAN)), *b = vals(F32, 1, S(4), V(0, 3, NAN, NAN));
  return check("core::maximum", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_MAXIMUM, a, b, 1.0), true, 1, 1, why, len);
}

static int t_relu_negzero(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(-0.0, 1.5, -2, 0.0));
  return check("core::relu", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_RELU, x), true, 1,
               1, why, len);
}

static int t_exp_clamp(char *why, size_t len) {
  rt *x = vals(F32, 1, S(5), V(89.5, 100, NAN, 1, -1));
  return check("core::exp", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_EXP, x), false, 1, 1,
               why, len);
}

static int t_sin_naive_reduce(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(1000.5, 12345.5, -9876.25, 1));
  /* (Half float32's relative tolerance and no absolute one: a few ulps,
   * as bp-certify holds these ops to.) */
  return check("core::sin", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_SIN, x), false, 0.5,
               0, why, len);
}

static int t_cos_shift(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(1.5707, -1.5709, 4.7123, 0.5));
  return check("core::cos", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_COS, x), false, 0.5,
               0, why, len);
}

static int t_erf_as726(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(1e-3, -2e-4, 0.01, 1.5));
  return check("core::erf", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_ERF, x), false, 0.5,
               0, why, len);
}

static int t_silu_underflow(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(-90, -95, -100, 2));
  return check("core::silu", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_SILU, x), false,
               0.5, 0, why, len);
}

static int t_lt_nan_ordered(char *why, size_t len) {
  rt *a = vals(F32, 1, S(4), V(NAN, 1, 2, NAN)), *b = vals(F32, 1, S(4), V(1, NAN, 3, NAN));
  return check("core::lt", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_compare(RC_LT, a, b), true, 1, 1, why, len);
}

static int t_eq_signed_zero(char *why, size_t len) {
  rt *a = vals(F32, 1, S(4), V(-0.0, 0.0, NAN, 1)), *b = vals(F32, 1, S(4), V(0.0, -0.0, NAN, 1));
  return check("core::eq", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_compare(RC_EQ, a, b), true, 1, 1, why, len);
}

static int t_gather_dense_strides(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(4, 3), -2, 2), *ix = rt_new(BP_INT64, 2, S(4, 3));
  for (int64_t k = 0; k < ix->numel; k++) ix->i[k] = (k * 7 + 1) % 4;
  call *c = with(1, mk(x, S(1, 4), 0), NULL, NULL); /* x transposed in memory */
  arg_i(c, 0);
  arg_t(c, mk(ix, NULL, 0));
  return check("core::gather", c, ref_gather(x, 0, ix), true, 1, 1, why, len);
}

static int t_cumsum_block_carry(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(2, 130), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_i(c, 1);
  int64_t n;
  rt *want = ref_cumsum(x, 1, BP_DTYPE_INVALID, &n);
  return check("core::cumsum", c, want, false, sqrt_n(n), (double)n, why, len);
}

/* In place: the host hands the structured kernel self to fill. */
static int t_add_two_pass(char *why, size_t len) {
  rt *a = rnd(F32, 2, S(3, 5), -2, 2), *b = rnd(F32, 2, S(3, 5), -2, 2);
  return check("core::add_", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_ADD, a, b, 1.0), true, 1, 1, why, len);
}

/* Equal values of both signs of zero: the reversed run puts -0.0 first. */
static int t_sort_reversed_ties(char *why, size_t len) {
  rt *x = vals(F32, 1, S(5), V(0.0, -0.0, 1.0, 2.0, -1.0));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_i(c, 0);
  arg_b(c, true);
  rt *ix = NULL, *want = ref_topk(x, 0, 5, true, &ix);
  rt_free(ix);
  return check("core::sort", c, want, true, 1, 1, why, len);
}

static int t_topk_nan_smallest(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(1.0, NAN, 2.0, -3.0));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_i(c, 2);
  rt *ix = NULL, *want = ref_topk(x, -1, 2, true, &ix);
  rt_free(ix);
  return check("core::topk", c, want, true, 1, 1, why, len);
}

static int t_sdpa_scale_inv_e(char *why, size_t len) {
  rt *q = rnd(F32, 3, S(1, 4, 8), -1, 1), *k = rnd(F32, 3, S(1, 6, 8), -1, 1),
     *v = rnd(F32, 3, S(1, 6, 8), -1, 1);
  call *c = with(3, mk(q, NULL, 0), mk(k, NULL, 0), mk(v, NULL, 0));
  return check("core::scaled_dot_product_attention", c, ref_sdpa(q, k, v, NULL, false, NAN),
               false, 6, 3, why, len);
}

/* ------------------------------------------------------------------------ */
/* Op set 2's layers                                                        */
/* ------------------------------------------------------------------------ */

static int t_conv2d_group_offset(char *why, size_t len) {
  rt *x = rnd(F32, 4, S(1, 4, 5, 5), -0.5, 0.5), *w = rnd(F32, 4, S(4, 2, 3, 3), -0.5, 0.5);
  call *c = with(2, mk(x, NULL, 0), mk(w, NULL, 0), NULL);
  arg_none(c);
  arg_list(c, S(1, 1), 2);
  arg_list(c, S(1, 1), 2);
  arg_list(c, S(1, 1), 2);
  arg_i(c, 2); /* groups */
  int64_t k;
  rt *want = ref_conv2d(x, w, NULL, S(1, 1), S(1, 1), S(1, 1), 2, &k, NULL);
  return check("core::conv2d", c, want, false, sqrt_n(k), 1, why, len);
}

static int t_max_pool2d_nan_gt(char *why, size_t len) {
  rt *x = vals(F32, 4, S(1, 1, 2, 4), V(1, NAN, 3, 4, 5, 6, NAN, NAN));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(2, 2), 2);
  arg_list(c, NULL, 0); /* stride []: the kernel's */
  arg_list(c, S(0, 0), 2);
  arg_list(c, S(1, 1), 2);
  arg_b(c, false);
  return check("core::max_pool2d", c, ref_max_pool2d(x, S(2, 2), S(2, 2), S(0, 0), S(1, 1), false),
               true, 1, 1, why, len);
}

static int t_avg_pool2d_pad_ignored(char *why, size_t len) {
  rt *x = rnd(F32, 4, S(1, 2, 4, 5), -2, 2);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(3, 3), 2);
  arg_list(c, S(1, 1), 2);
  arg_list(c, S(1, 1), 2); /* padding, counted by the default count_include_pad */
  rt *want = ref_avg_pool2d(x, S(3, 3), S(1, 1), S(1, 1), false, true, 0);
  return check("core::avg_pool2d", c, want, false, 3, 1, why, len);
}

static int t_cat_empty_break(char *why, size_t len) {
  rt *a = rnd(F32, 2, S(2, 3), -2, 2), *e = rt_new(F32, 1, S(0)), *b = rnd(F32, 2, S(2, 2), -2, 2);
  static bp_tensor *list[3];
  list[0] = mk(a, NULL, 0), list[1] = mk(e, NULL, 0), list[2] = mk(b, NULL, 0);
  call *c = with(0, NULL, NULL, NULL);
  arg_tl(c, list, 3);
  arg_i(c, -1);
  const rt *ts[3] = {a, e, b};
  return check("core::cat", c, ref_cat(ts, 3, -1), true, 1, 1, why, len);
}

static int t_clamp_fmax_nan(char *why, size_t len) {
  rt *x = vals(F32, 1, S(4), V(NAN, 1.5, -3, 5));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_f(c, -1);
  arg_f(c, 2);
  ref_scalar lo = {REF_S_FLOAT, 0, -1}, hi = {REF_S_FLOAT, 0, 2};
  return check("core::clamp", c, ref_clamp(x, &lo, &hi), true, 1, 1, why, len);
}

static int t_rms_norm_eps_outside(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(2, 5), -1e-3, 1e-3);
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_list(c, S(5), 1);
  return check("core::rms_norm", c, ref_rms_norm(x, 1, NULL, NAN), false, sqrt_n(5), 1, why, len);
}

static int t_softmax_nomax(char *why, size_t len) {
  rt *x = vals(F32, 2, S(2, 5), V(100, 101, 99, 102, 100.5, 1, 2, 3, 4, 5));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_i(c, 1);
  return check("core::softmax", c, ref_softmax(x, 1, false), false, sqrt_n(5), 1, why, len);
}

static int t_sum_f16_accum(char *why, size_t len) {
  rt *x = rnd(BP_FLOAT16, 1, S(4096), 1, 1);
  int64_t n;
  rt *want = ref_reduce(RR_SUM, x, NULL, 0, false, BP_DTYPE_INVALID, &n);
  return check("core::sum", with(1, mk(x, NULL, 0), NULL, NULL), want, false, sqrt_n(n), (double)n,
               why, len);
}

static int t_abs_int_min(char *why, size_t len) {
  rt *x = vals(BP_INT32, 1, S(3), V(-2147483648.0, -5, 7));
  return check("core::abs", with(1, mk(x, NULL, 0), NULL, NULL), ref_unary(RU_ABS, x), true, 1, 1,
               why, len);
}

static int t_cast_cvtt(char *why, size_t len) {
  rt *x = vals(F32, 1, S(5), V(NAN, 3e9, -3e9, 2.5, -7.9));
  call *c = with(1, mk(x, NULL, 0), NULL, NULL);
  arg_dt(c, BP_INT32);
  return check("core::cast", c, ref_cast(x, BP_INT32), true, 1, 1, why, len);
}

static int t_div_ftz(char *why, size_t len) {
  rt *a = vals(F32, 1, S(3), V(1e-30, 3, -1e-30)), *b = vals(F32, 1, S(3), V(1e10, 2, 1e10));
  return check("core::div", with(2, mk(a, NULL, 0), mk(b, NULL, 0), NULL),
               ref_binary(RB_DIV, a, b, 1.0), true, 1, 1, why, len);
}

static int t_pow_exp_log(char *why, size_t len) {
  rt *a = vals(F32, 1, S(5), V(-2, 0, NAN, 2, 1)), *e = vals(F32, 1, S(5), V(2, 0, 0, 3, NAN));
  return check("core::pow", with(2, mk(a, NULL, 0), mk(e, NULL, 0), NULL),
               ref_binary(RB_POW, a, e, 1.0), false, 1, 1, why, len);
}

/* ------------------------------------------------------------------------ */
/* matmul shapes                                                            */
/* ------------------------------------------------------------------------ */

/* matmul of a and b, b laid out with b_strides (NULL: row-major). */
static int matmul(rt *a, rt *b, const int64_t *b_strides, char *why, size_t len) {
  int64_t k;
  rt *want = ref_matmul(a, b, &k);
  return check("core::matmul", with(2, mk(a, NULL, 0), mk(b, b_strides, 0), NULL), want, false,
               sqrt_n(k), 1, why, len);
}

static int t_matmul_k_tail(char *why, size_t len) {
  return matmul(rnd(F32, 2, S(3, 100), -0.5, 0.5), rnd(F32, 2, S(100, 4), -0.5, 0.5), NULL, why,
                len);
}

static int t_matmul_batch_b(char *why, size_t len) {
  return matmul(rnd(F32, 2, S(2, 3), -0.5, 0.5), rnd(F32, 3, S(3, 3, 4), -0.5, 0.5), NULL, why,
                len);
}

static int t_matmul_trans_b(char *why, size_t len) {
  return matmul(rnd(F32, 2, S(2, 3), -0.5, 0.5), rnd(F32, 2, S(3, 4), -0.5, 0.5), S(1, 3), why,
                len);
}

static int t_matmul_k1(char *why, size_t len) {
  return matmul(rnd(F32, 2, S(3, 1), -0.5, 0.5), rnd(F32, 2, S(1, 4), -0.5, 0.5), NULL, why, len);
}

const trigger num_triggers[] = {
    {"mul_tail7", t_mul_tail7, 0},
    {"sum_unroll_tail", t_sum_unroll_tail, 0},
    {"exp_par_tail", t_exp_par_tail, 0},
    {"sigmoid_rank5", t_sigmoid_rank5, 0},
    {"neg_offset", t_neg_offset, 0},
    {"relu_dense", t_relu_dense, 0},
    {"sqrt_bcast_inner", t_sqrt_bcast_inner, 0},
    {"where_inner_step", t_where_inner_step, 0},
    {"add_bcast_mid", t_add_bcast_mid, 0},
    {"sub_rank_swap", t_sub_rank_swap, 0},
    {"pow_scalar_exp", t_pow_scalar_exp, 0},
    {"argmax_offset", t_argmax_offset, 0},
    {"mean_negdims", t_mean_negdims, 0},
    {"sum_multidim", t_sum_multidim, 0},
    {"amin_keepdim", t_amin_keepdim, 0},
    {"sum_dtype_ignored", t_sum_dtype_ignored, 0},
    {"add_first_dtype", t_add_first_dtype, 0},
    {"mul_int8_as_u8", t_mul_int8_as_u8, 0},
    {"minimum_u8_i8", t_minimum_u8_i8, 0},
    {"maximum_nan", t_maximum_nan, 0},
    {"relu_negzero", t_relu_negzero, 0},
    {"exp_clamp", t_exp_clamp, 0},
    {"sin_naive_reduce", t_sin_naive_reduce, 0},
    {"cos_shift", t_cos_shift, 0},
    {"erf_as726", t_erf_as726, 0},
    {"silu_underflow", t_silu_underflow, 0},
    {"lt_nan_ordered", t_lt_nan_ordered, 0},
    {"eq_signed_zero", t_eq_signed_zero, 0},
    {"gather_dense_strides", t_gather_dense_strides, 0},
    {"cumsum_block_carry", t_cumsum_block_carry, 0},
    {"add_two_pass", t_add_two_pass, 0},
    {"sort_reversed_ties", t_sort_reversed_ties, 0},
    {"topk_nan_smallest", t_topk_nan_smallest, 0},
    {"sdpa_scale_inv_e", t_sdpa_scale_inv_e, 0},
    {"conv2d_group_offset", t_conv2d_group_offset, 0},
    {"max_pool2d_nan_gt", t_max_pool2d_nan_gt, 0},
    {"avg_pool2d_pad_ignored", t_avg_pool2d_pad_ignored, 0},
    {"cat_empty_break", t_cat_empty_break, 0},
    {"clamp_fmax_nan", t_clamp_fmax_nan, 0},
    {"rms_norm_eps_outside", t_rms_norm_eps_outside, 0},
    {"softmax_nomax", t_softmax_nomax, 0},
    {"sum_f16_accum", t_sum_f16_accum, 0},
    {"abs_int_min", t_abs_int_min, 0},
    {"cast_cvtt", t_cast_cvtt, 0},
    {"div_ftz", t_div_ftz, 0},
    {"pow_exp_log", t_pow_exp_log, 0},
    {"matmul_k_tail", t_matmul_k_tail, 0},
    {"matmul_batch_b", t_matmul_batch_b, 0},
    {"matmul_trans_b", t_matmul_trans_b, 0},
    {"matmul_k1", t_matmul_k1, 0},
};
const size_t num_ntriggers = sizeof num_triggers / sizeof *num_triggers;
