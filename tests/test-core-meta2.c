/*
 * The meta functions of op set 2's comparisons, logical ops and Scalar
 * overloads (docs/op-set.md, "Op set 2"): bool results, broadcasting,
 * the weak promotion of a Scalar, and the errors that name the argument.
 * They run without any plugin.  Which ops have a host composite is
 * checked here too; what the composites compute is test-cpu-compare's.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

static bp_tensor *T(int32_t dtype, int32_t ndim, const int64_t *sizes) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, dtype, ndim, sizes, &t) != BP_OK) tap_diag("T: %s", bp_last_error());
  return t;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static bp_value slots[8];

/* Runs op's meta on s; fills *m. */
static bp_status meta(const char *name, bp_stack *s, bp_tensor_meta *m) {
  const bp_op *op = must_find(name);
  m->struct_size = BP_TENSOR_META_STRUCT_SIZE;
  return op ? bp_op_meta(op, s, m, 1) : BP_ERR_NOT_FOUND;
}

static void comparisons(void) {
  static const char *const ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  for (int i = 0; i < 6; i++) {
    char name[32];
    snprintf(name, sizeof name, "core::%s", ops[i]);
    bp_tensor *a = T(BP_INT8, 2, SHAPE(2, 3)), *b = T(BP_FLOAT16, 2, SHAPE(1, 3));
    bp_stack s = BP_STACK_INIT(slots, 8);
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_tensor_meta m;
    is_status(meta(name, &s, &m), BP_OK);
    is_int(m.dtype, BP_BOOL);
    is_int(m.ndim, 2);
    is_int(m.sizes[0], 2);
    is_int(m.sizes[1], 3);
    bp_tensor *c = T(BP_FLOAT32, 1, SHAPE(4));
    s.top = 0;
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, c);
    is_status(meta(name, &s, &m), BP_ERR_SHAPE);
    has_str(bp_last_error(), "argument #1 'other' with shape [4] cannot be broadcast");
    /* The Scalar overload: self's shape, bool. */
    snprintf(name, sizeof name, "core::%s.Scalar", ops[i]);
    s.top = 0;
    bp_stack_push_tensor(&s, a);
    bp_stack_push_float(&s, 2.5);
    is_status(meta(name, &s, &m), BP_OK);
    is_int(m.dtype, BP_BOOL);
    is_int(m.ndim, 2);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
  }
}

static void logical_ops(void) {
  bp_tensor *a = T(BP_FLOAT32, 1, SHAPE(3)), *b = T(BP_INT64, 2, SHAPE(2, 1));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_tensor_meta m;
  const char *two[] = {"core::logical_and", "core::logical_or"};
  for (int i = 0; i < 2; i++) {
    s.top = 0;
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    is_status(meta(two[i], &s, &m), BP_OK);
    is_int(m.dtype, BP_BOOL);
    is_int(m.ndim, 2);
    is_int(m.sizes[1], 3);
  }
  const char *one[] = {"core::logical_not", "core::isnan"};
  for (int i = 0; i < 2; i++) {
    s.top = 0;
    bp_stack_push_tensor(&s, b);
    is_status(meta(one[i], &s, &m), BP_OK);
    is_int(m.dtype, BP_BOOL);
    is_int(m.ndim, 2);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
}

/* The result dtype of op(tensor of dt, Scalar v). */
static int32_t scalar_result(const char *op, int32_t dt, int tag, double v) {
  bp_tensor *a = T(dt, 1, SHAPE(2));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_stack_push_tensor(&s, a);
  if (tag == BP_TAG_FLOAT) bp_stack_push_float(&s, v);
  else if (tag == BP_TAG_INT) bp_stack_push_int(&s, (int64_t)v);
  else bp_stack_push_bool(&s, v != 0);
  bp_tensor_meta m;
  bp_status st = meta(op, &s, &m);
  bp_tensor_release(a);
  if (st) tap_diag("%s: %s", op, bp_last_error());
  return st ? BP_DTYPE_INVALID : m.dtype;
}

static void scalar_promotion(void) {
  /* A Scalar raises the category, never the width. */
  is_int(scalar_result("core::mul.Scalar", BP_BFLOAT16, BP_TAG_FLOAT, 2.5), BP_BFLOAT16);
  is_int(scalar_result("core::mul.Scalar", BP_FLOAT16, BP_TAG_INT, 3), BP_FLOAT16);
  is_int(scalar_result("core::add.Scalar", BP_INT8, BP_TAG_INT, 300), BP_INT8);
  is_int(scalar_result("core::mul.Scalar", BP_INT32, BP_TAG_FLOAT, 1.5), BP_FLOAT32);
  is_int(scalar_result("core::add.Scalar", BP_BOOL, BP_TAG_INT, 1), BP_INT64);
  is_int(scalar_result("core::add.Scalar", BP_BOOL, BP_TAG_BOOL, 1), BP_BOOL);
  is_int(scalar_result("core::mul.Scalar", BP_UINT8, BP_TAG_BOOL, 1), BP_UINT8);
  is_int(scalar_result("core::div.Scalar", BP_INT64, BP_TAG_INT, 2), BP_FLOAT32);
  is_int(scalar_result("core::div.Scalar", BP_FLOAT64, BP_TAG_INT, 2), BP_FLOAT64);
  is_int(scalar_result("core::pow.Scalar", BP_INT16, BP_TAG_INT, 2), BP_INT16);
  is_int(scalar_result("core::pow.Scalar", BP_INT16, BP_TAG_FLOAT, 0.5), BP_FLOAT32);
  /* The tensor op's own rules apply. */
  is_int(scalar_result("core::sub.Scalar", BP_BOOL, BP_TAG_BOOL, 1), BP_DTYPE_INVALID);
  has_str(bp_last_error(), "core::sub.Scalar: not defined for two bool operands");
  bp_tensor *a = T(BP_INT32, 1, SHAPE(2));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 2);
  bp_stack_push_float(&s, 0.5);
  bp_tensor_meta m;
  is_status(meta("core::add.Scalar", &s, &m), BP_ERR_TYPE);
  has_str(bp_last_error(), "argument #2 'alpha' is 0.5, which an int32 result cannot use");
  bp_tensor_release(a);
}

static void masked_fill_rules(void) {
  bp_tensor *a = T(BP_UINT8, 2, SHAPE(2, 3)), *mask = T(BP_BOOL, 1, SHAPE(3)),
            *bad = T(BP_UINT8, 1, SHAPE(3));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_tensor_meta m;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, mask);
  bp_stack_push_int(&s, 255);
  is_status(meta("core::masked_fill", &s, &m), BP_OK);
  is_int(m.dtype, BP_UINT8);
  is_int(m.ndim, 2);
  /* A value that does not fit is refused, as PyTorch refuses it. */
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, mask);
  bp_stack_push_int(&s, 256);
  is_status(meta("core::masked_fill", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::masked_fill: argument #2 'value': the value 256 cannot be "
                          "converted to uint8 without overflow");
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, mask);
  bp_stack_push_float(&s, NAN);
  is_status(meta("core::masked_fill", &s, &m), BP_ERR_INVALID_ARGUMENT);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, bad);
  bp_stack_push_int(&s, 1);
  is_status(meta("core::masked_fill", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::masked_fill: argument #1 'mask': expected bool, got uint8");
  /* A float tensor takes infinities and NaN, and values that round to
   * its largest finite one; not beyond. */
  bp_tensor *h = T(BP_FLOAT16, 1, SHAPE(3));
  const double fits[] = {INFINITY, NAN, 65504.0, 65519.0, -65519.0}, not_fits[] = {65520.0, 1e6};
  for (int i = 0; i < 5 + 2; i++) {
    s.top = 0;
    bp_stack_push_tensor(&s, h);
    bp_stack_push_tensor(&s, mask);
    bp_stack_push_float(&s, i < 5 ? fits[i] : not_fits[i - 5]);
    is_status(meta("core::masked_fill", &s, &m), i < 5 ? BP_OK : BP_ERR_INVALID_ARGUMENT);
  }
  bp_tensor_release(a);
  bp_tensor_release(mask);
  bp_tensor_release(bad);
  bp_tensor_release(h);
}

static void clamp_rules(void) {
  bp_tensor *a = T(BP_INT32, 1, SHAPE(4)), *b = T(BP_BOOL, 1, SHAPE(4));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_tensor_meta m;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 0);
  bp_stack_push_float(&s, 2.5);
  is_status(meta("core::clamp", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT32);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_none(&s);
  bp_stack_push_int(&s, 3);
  is_status(meta("core::clamp", &s, &m), BP_OK);
  is_int(m.dtype, BP_INT32);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  is_status(meta("core::clamp", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::clamp: at least one of argument #1 'min' and #2 'max' must not "
                          "be None");
  s.top = 0;
  bp_stack_push_tensor(&s, b);
  bp_stack_push_bool(&s, true);
  is_status(meta("core::clamp", &s, &m), BP_ERR_TYPE);
  /* a bound that the result's dtype does not hold is refused, not wrapped
   * (an int32 clamped at 2^40 would clamp at 0) */
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_none(&s);
  bp_stack_push_int(&s, (int64_t)1 << 40);
  is_status(meta("core::clamp", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::clamp: argument #2 'max': the value 1099511627776 cannot be "
                          "converted to int32 without overflow");
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, -((int64_t)1 << 31) - 1);
  bp_stack_push_int(&s, 5);
  is_status(meta("core::clamp", &s, &m), BP_ERR_INVALID_ARGUMENT);
  s.top = 0; /* a float bound raises the result to float32, which holds 2^40 */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_float(&s, 0x1p40);
  bp_stack_push_none(&s);
  is_status(meta("core::clamp", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT32);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

static bp_status meta3(const char *op, bp_tensor *a, int64_t dim, bp_tensor *ix,
                       bp_tensor_meta *m) {
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, dim);
  bp_stack_push_tensor(&s, ix);
  return meta(op, &s, m);
}

static void gather_rules(void) {
  bp_tensor *a = T(BP_BFLOAT16, 3, SHAPE(4, 5, 6)), *i1 = T(BP_INT64, 1, SHAPE(7)),
            *i32 = T(BP_INT32, 1, SHAPE(2)), *f = T(BP_FLOAT32, 1, SHAPE(2)),
            *i2 = T(BP_INT64, 2, SHAPE(2, 2)), *g = T(BP_INT64, 3, SHAPE(9, 5, 2)),
            *big = T(BP_INT64, 3, SHAPE(1, 6, 6));
  bp_tensor_meta m;
  is_status(meta3("core::index_select", a, -2, i1, &m), BP_OK);
  is_int(m.dtype, BP_BFLOAT16);
  is_int(m.ndim, 3);
  is_int(m.sizes[1], 7);
  is_int(m.sizes[2], 6);
  is_status(meta3("core::index_select", a, 0, i32, &m), BP_OK);
  is_int(m.sizes[0], 2);
  is_status(meta3("core::index_select", a, 0, f, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::index_select: argument #2 'index': expected int64 or int32, "
                          "got float32");
  is_status(meta3("core::index_select", a, 0, i2, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::index_select: argument #2 'index' has shape [2, 2]; expected 1 "
                          "dimension (or 0)");
  is_status(meta3("core::index_select", a, 3, i1, &m), BP_ERR_INVALID_ARGUMENT);
  /* gather: index's shape; larger than self along dim only */
  is_status(meta3("core::gather", a, 0, g, &m), BP_OK);
  is_int(m.ndim, 3);
  is_int(m.sizes[0], 9);
  is_int(m.sizes[2], 2);
  is_status(meta3("core::gather", a, 0, big, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::gather: argument #2 'index' with shape [1, 6, 6] is larger than "
                          "argument #0 'self' with shape [4, 5, 6] in dimension 1 (6 vs 5)");
  is_status(meta3("core::gather", a, 0, i1, &m), BP_ERR_SHAPE);
  has_str(bp_last_error(), "has 1 dimensions, argument #0 'self' 3");
  /* embedding: indices.shape + [dim] */
  bp_tensor *w = T(BP_FLOAT32, 2, SHAPE(10, 3));
  bp_stack s = BP_STACK_INIT(slots, 8);
  bp_stack_push_tensor(&s, w);
  bp_stack_push_tensor(&s, i2);
  is_status(meta("core::embedding", &s, &m), BP_OK);
  is_int(m.ndim, 3);
  is_int(m.sizes[2], 3);
  s.top = 0;
  bp_stack_push_tensor(&s, w);
  bp_stack_push_tensor(&s, i2);
  bp_stack_push_int(&s, 10);
  is_status(meta("core::embedding", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::embedding: argument #2 'padding_idx' is 10; expected -1 (none) "
                          "or 0 .. 9");
  s.top = 0;
  bp_stack_push_tensor(&s, i1);
  bp_stack_push_tensor(&s, i2);
  is_status(meta("core::embedding", &s, &m), BP_ERR_SHAPE);
  bp_tensor *all[] = {a, i1, i32, f, i2, g, big, w};
  for (int i = 0; i < 8; i++) bp_tensor_release(all[i]);
}

/* The tensor comparisons need a kernel; the rest are served by the host's
 * composites on a device without one. */
static void composites(void) {
  static const char *const kernel_ops[] = {"eq", "ne", "lt", "le", "gt", "ge",
                                           "index_select", "gather", "cumsum"};
  static const char *const composite_ops[] = {
      "eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar",
      "logical_not", "logical_and", "logical_or", "isnan", "masked_fill", "clamp",
      "add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar", "pow.Scalar", "embedding",
      "cat", "stack", "linear", "rms_norm", "batch_norm", "scaled_dot_product_attention", "conv2d",
      "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "add_", "add_.Scalar", "sub_", "sub_.Scalar", "mul_", "mul_.Scalar", "div_", "div_.Scalar",
      "neg_", "abs_", "exp_", "log_", "sqrt_", "rsqrt_", "relu_", "sigmoid_", "tanh_", "sin_",
      "cos_", "erf_", "silu_", "gelu_", "masked_fill_", "clamp_"};
  const size_t nk = sizeof kernel_ops / sizeof *kernel_ops;
  for (size_t i = 0; i < nk + sizeof composite_ops / sizeof *composite_ops; i++) {
    char name[40];
    snprintf(name, sizeof name, "core::%s", i < nk ? kernel_ops[i] : composite_ops[i - nk]);
    bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    is_status(bp_op_get_info(must_find(name), &info), BP_OK);
    if (info.has_composite != (i >= nk))
      tap_diag("%s: has_composite %d", name, info.has_composite);
    is_int(info.has_composite, i >= nk);
    is_int(info.op_set_version, 2);
  }
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(comparisons),  TAP_CASE(logical_ops), TAP_CASE(scalar_promotion),
      TAP_CASE(masked_fill_rules), TAP_CASE(clamp_rules), TAP_CASE(gather_rules),
      TAP_CASE(composites),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
