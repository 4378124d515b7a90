/*
 * The core op set's meta functions, shipped by the host: result device,
 * dtype, sizes and strides, and the argument errors of docs/op-set.md.
 * They run without any plugin: bp_op_meta() only reads metadata.
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
#define T1(dt, a) T(dt, 1, SHAPE(a))
#define T2(dt, a, b) T(dt, 2, SHAPE(a, b))
#define T3(dt, a, b, c) T(dt, 3, SHAPE(a, b, c))

/* Runs op's meta on the stack; returns the status, fills *m. */
static bp_status meta(const char *name, bp_stack *s, bp_tensor_meta *m) {
  const bp_op *op = must_find(name);
  m->struct_size = BP_TENSOR_META_STRUCT_SIZE;
  return op ? bp_op_meta(op, s, m, 1) : BP_ERR_NOT_FOUND;
}

static void is_shape(const bp_tensor_meta *m, int32_t ndim, const int64_t *sizes) {
  is_int(m->ndim, ndim);
  for (int32_t d = 0; d < ndim && d < m->ndim; d++) is_int(m->sizes[d], sizes[d]);
  /* New results are contiguous. */
  int64_t st = 1;
  for (int32_t d = ndim - 1; d >= 0 && d < m->ndim; d--) {
    is_int(m->strides[d], st);
    st *= sizes[d] > 0 ? sizes[d] : 1;
  }
}

static bp_value slots[8];

static bp_stack stack_of(int n, bp_tensor **ts) {
  bp_stack s = BP_STACK_INIT(slots, 8);
  for (int i = 0; i < n; i++) bp_stack_push_tensor(&s, ts[i]);
  return s;
}

static void promotion_table(void) {
  static const int32_t dts[] = {BP_BOOL, BP_UINT8, BP_INT8, BP_INT16, BP_INT32, BP_INT64,
                                BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64};
  /* PyTorch's torch.promote_types over these dtypes, row by column. */
  static const int32_t want[10][10] = {
      {BP_BOOL, BP_UINT8, BP_INT8, BP_INT16, BP_INT32, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_UINT8, BP_UINT8, BP_INT16, BP_INT16, BP_INT32, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_INT8, BP_INT16, BP_INT8, BP_INT16, BP_INT32, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_INT16, BP_INT16, BP_INT16, BP_INT16, BP_INT32, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_INT32, BP_INT32, BP_INT32, BP_INT32, BP_INT32, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_INT64, BP_INT64, BP_INT64, BP_INT64, BP_INT64, BP_INT64, BP_FLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, BP_FLOAT16, BP_FLOAT32, BP_FLOAT32, BP_FLOAT64},
      {BP_BFLOAT16, BP_BFLOAT16, BP_BFLOAT16, BP_BFLOAT16, BP_BFLOAT16, BP_BFLOAT16, BP_FLOAT32, BP_BFLOAT16, BP_FLOAT32, BP_FLOAT64},
      {BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT32, BP_FLOAT64},
      {BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64, BP_FLOAT64},
  };
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 10; j++) {
      bp_tensor *ts[2] = {T1(dts[i], 3), T1(dts[j], 3)};
      bp_stack s = stack_of(2, ts);
      bp_tensor_meta m;
      is_status(meta("core::mul", &s, &m), BP_OK);
      if (m.dtype != want[i][j])
        tap_diag("mul(%s, %s): got %s, expected %s", bp_dtype_name(dts[i]), bp_dtype_name(dts[j]),
                 bp_dtype_name(m.dtype), bp_dtype_name(want[i][j]));
      is_int(m.dtype, want[i][j]);
      bp_tensor_release(ts[0]);
      bp_tensor_release(ts[1]);
    }
}

static void broadcasting(void) {
  bp_tensor *ts[2] = {T3(BP_FLOAT32, 2, 1, 4), T2(BP_FLOAT32, 3, 1)};
  bp_stack s = stack_of(2, ts);
  bp_tensor_meta m;
  is_status(meta("core::add", &s, &m), BP_OK);
  is_shape(&m, 3, SHAPE(2, 3, 4));
  is_int(m.device.type, BP_DEVICE_CPU);
  bp_tensor *bad[2] = {T2(BP_FLOAT32, 2, 3), T1(BP_FLOAT32, 4)};
  s = stack_of(2, bad);
  is_status(meta("core::add", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::add: argument #1 'other' with shape [4] cannot be broadcast with "
                          "argument #0 'self' with shape [2, 3] (dimension 1: 4 vs 3)");
  /* 0-size dimensions broadcast like any other size. */
  bp_tensor *z[2] = {T2(BP_FLOAT32, 0, 3), T1(BP_FLOAT32, 3)};
  s = stack_of(2, z);
  is_status(meta("core::sub", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(0, 3));
  /* 0-dim with anything. */
  bp_tensor *sc[2] = {T(BP_INT32, 0, NULL), T2(BP_INT32, 2, 2)};
  s = stack_of(2, sc);
  is_status(meta("core::maximum", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(2, 2));
  bp_tensor *all[] = {ts[0], ts[1], bad[0], bad[1], z[0], z[1], sc[0], sc[1]};
  for (int i = 0; i < 8; i++) bp_tensor_release(all[i]);
}

static void binary_rules(void) {
  bp_tensor_meta m;
  bp_tensor *i1 = T1(BP_INT32, 3), *i2 = T1(BP_INT32, 3), *b1 = T1(BP_BOOL, 3), *b2 = T1(BP_BOOL, 3);
  bp_tensor *ii[2] = {i1, i2}, *bb[2] = {b1, b2};
  bp_stack s = stack_of(2, ii);
  is_status(meta("core::div", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT32);
  s = stack_of(2, ii);
  is_status(meta("core::pow", &s, &m), BP_OK);
  is_int(m.dtype, BP_INT32);
  s = stack_of(2, bb);
  is_status(meta("core::sub", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::sub: not defined for two bool operands");
  s = stack_of(2, bb);
  is_status(meta("core::pow", &s, &m), BP_ERR_TYPE);
  s = stack_of(2, bb);
  is_status(meta("core::add", &s, &m), BP_OK);
  is_int(m.dtype, BP_BOOL);
  /* alpha must suit the result dtype. */
  s = stack_of(2, ii);
  bp_stack_push_float(&s, 0.5);
  is_status(meta("core::add", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::add: argument #2 'alpha' is 0.5, which an int32 result cannot use "
                          "(expected an integral value within int64's range)");
  s = stack_of(2, ii);
  bp_stack_push_float(&s, -3.0);
  is_status(meta("core::sub", &s, &m), BP_OK);
  /* an infinity, NaN or a whole number past int64 is no integer alpha */
  static const double not_int[] = {INFINITY, -INFINITY, NAN, 1e30, 0x1p63};
  for (size_t k = 0; k < sizeof not_int / sizeof *not_int; k++) {
    s = stack_of(2, ii);
    bp_stack_push_float(&s, not_int[k]);
    is_status(meta("core::add", &s, &m), BP_ERR_TYPE);
  }
  s = stack_of(2, ii);
  bp_stack_push_float(&s, -0x1p63);
  is_status(meta("core::add", &s, &m), BP_OK);
  s = stack_of(2, bb);
  bp_stack_push_float(&s, 2.0);
  is_status(meta("core::add", &s, &m), BP_ERR_TYPE);
  has_str(bp_last_error(), "which a bool result cannot use (expected 1)");
  /* muladd needs a floating result. */
  s = stack_of(2, ii);
  bp_stack_push_float(&s, 1.0);
  is_status(meta("core::muladd", &s, &m), BP_ERR_TYPE);
  has_str(bp_last_error(), "expected a floating-point dtype, got int32");
  bp_tensor *fi[2] = {T1(BP_FLOAT16, 3), i1};
  s = stack_of(2, fi);
  bp_stack_push_float(&s, 1.0);
  is_status(meta("core::muladd", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT16);
  bp_tensor *all[] = {i1, i2, b1, b2, fi[0]};
  for (int i = 0; i < 5; i++) bp_tensor_release(all[i]);
}

static void add_out(void) {
  bp_tensor_meta m;
  bp_tensor *a = T2(BP_FLOAT32, 2, 3), *b = T1(BP_FLOAT32, 3);
  int64_t sz[2] = {2, 3}, st[2] = {1, 2};
  bp_tensor *out = NULL, *bad = T2(BP_FLOAT32, 3, 2), *bad_dt = T2(BP_FLOAT64, 2, 3);
  bp_tensor_empty_strided(BP_CPU, BP_FLOAT32, 2, sz, st, &out);
  bp_tensor *ts[2] = {a, b};
  const char *kw[] = {"out"};
  (void)kw;
  bp_stack s = stack_of(2, ts);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_tensor(&s, out);
  is_status(meta("core::add.out", &s, &m), BP_OK);
  /* The result is out itself: its strides, not contiguous ones. */
  is_int(m.strides[0], 1);
  is_int(m.strides[1], 2);
  s = stack_of(2, ts);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_tensor(&s, bad);
  is_status(meta("core::add.out", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::add.out: argument #3 'out' has shape [3, 2], expected [2, 3]");
  s = stack_of(2, ts);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_tensor(&s, bad_dt);
  is_status(meta("core::add.out", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::add.out: argument #3 'out': expected float32, got float64");
  bp_tensor *all[] = {a, b, out, bad, bad_dt};
  for (int i = 0; i < 5; i++) bp_tensor_release(all[i]);
}

static void unary_rules(void) {
  bp_tensor_meta m;
  bp_tensor *i = T2(BP_INT64, 2, 2), *b = T1(BP_BOOL, 2), *h = T1(BP_BFLOAT16, 5);
  bp_stack s = stack_of(1, &i);
  is_status(meta("core::exp", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT32);
  is_shape(&m, 2, SHAPE(2, 2));
  s = stack_of(1, &h);
  is_status(meta("core::tanh", &s, &m), BP_OK);
  is_int(m.dtype, BP_BFLOAT16);
  s = stack_of(1, &i);
  is_status(meta("core::neg", &s, &m), BP_OK);
  is_int(m.dtype, BP_INT64);
  const char *no_bool[] = {"core::neg", "core::abs", "core::relu"};
  for (int k = 0; k < 3; k++) {
    s = stack_of(1, &b);
    is_status(meta(no_bool[k], &s, &m), BP_ERR_TYPE);
    has_str(bp_last_error(), "argument #0 'self': expected a numeric dtype (not bool), got bool");
  }
  s = stack_of(1, &h);
  bp_stack_push_str(&s, "tanh");
  is_status(meta("core::gelu", &s, &m), BP_OK);
  s = stack_of(1, &h);
  bp_stack_push_str(&s, "erf");
  is_status(meta("core::gelu", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(),
         "core::gelu: argument #1 'approximate': expected \"none\" or \"tanh\", got \"erf\"");
  bp_tensor_release(i);
  bp_tensor_release(b);
  bp_tensor_release(h);
}

static void where_rules(void) {
  bp_tensor_meta m;
  bp_tensor *c = T2(BP_BOOL, 2, 1), *a = T1(BP_INT8, 3), *b = T(BP_FLOAT32, 0, NULL);
  bp_tensor *ts[3] = {c, a, b};
  bp_stack s = stack_of(3, ts);
  is_status(meta("core::where", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(2, 3));
  is_int(m.dtype, BP_FLOAT32);
  bp_tensor *bad[3] = {a, a, b};
  s = stack_of(3, bad);
  is_status(meta("core::where", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::where: argument #0 'condition': expected bool, got int8");
  bp_tensor_release(c);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

static bp_status reduce(const char *name, bp_tensor *t, const int64_t *dims, size_t ndims,
                        bool keepdim, bp_tensor_meta *m) {
  bp_stack s = stack_of(1, &t);
  bp_stack_push_int_list(&s, dims, ndims);
  bp_stack_push_bool(&s, keepdim);
  return meta(name, &s, m);
}

static void reductions(void) {
  bp_tensor_meta m;
  bp_tensor *f = T3(BP_FLOAT32, 2, 3, 4), *i = T2(BP_INT8, 2, 3), *e = T2(BP_FLOAT32, 0, 3);
  is_status(reduce("core::sum", f, SHAPE(1), 1, false, &m), BP_OK);
  is_shape(&m, 2, SHAPE(2, 4));
  is_status(reduce("core::sum", f, SHAPE(-1, 0), 2, true, &m), BP_OK);
  is_shape(&m, 3, SHAPE(1, 3, 1));
  is_status(reduce("core::mean", f, NULL, 0, false, &m), BP_OK);
  is_shape(&m, 0, NULL);
  is_status(reduce("core::sum", i, NULL, 0, true, &m), BP_OK);
  is_int(m.dtype, BP_INT64);
  is_shape(&m, 2, SHAPE(1, 1));
  is_status(reduce("core::amax", i, SHAPE(0), 1, false, &m), BP_OK);
  is_int(m.dtype, BP_INT8);
  is_status(reduce("core::mean", i, NULL, 0, false, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::mean: argument #0 'self': expected a floating-point dtype, got int8");
  is_status(reduce("core::sum", f, SHAPE(3), 1, false, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::sum: argument #1 'dim': dimension 3 is out of range for a "
                          "3-dimensional tensor (expected -3 .. 2)");
  is_status(reduce("core::sum", f, SHAPE(1, -2), 2, false, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::sum: argument #1 'dim': dimension 1 appears twice");
  /* Empty inputs: sum and mean have values, amax and amin do not. */
  is_status(reduce("core::sum", e, SHAPE(0), 1, false, &m), BP_OK);
  is_shape(&m, 1, SHAPE(3));
  is_status(reduce("core::mean", e, NULL, 0, false, &m), BP_OK);
  is_status(reduce("core::amin", e, SHAPE(0), 1, false, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::amin: cannot reduce dimension 0 of size 0 (the result would have "
                          "no value)");
  is_status(reduce("core::amax", e, SHAPE(1), 1, true, &m), BP_OK); /* size-3 dim: fine */
  is_shape(&m, 2, SHAPE(0, 1));
  /* 0-dim tensors accept dims -1 and 0. */
  bp_tensor *z = T(BP_FLOAT64, 0, NULL);
  is_status(reduce("core::sum", z, SHAPE(-1), 1, false, &m), BP_OK);
  is_shape(&m, 0, NULL);
  /* ... but not twice, as torch says, for each reduction. */
  const char *rops[] = {"core::sum", "core::mean", "core::amax", "core::amin"};
  for (int k = 0; k < 4; k++) {
    is_status(reduce(rops[k], z, SHAPE(0, -1), 2, false, &m), BP_ERR_INVALID_ARGUMENT);
    has_str(bp_last_error(), "dimension 0 appears twice");
    is_status(reduce(rops[k], z, SHAPE(0, 0), 2, true, &m), BP_ERR_INVALID_ARGUMENT);
  }
  /* sum's dtype argument. */
  bp_stack s = stack_of(1, &i);
  bp_stack_push_int_list(&s, NULL, 0);
  bp_stack_push_bool(&s, false);
  bp_stack_push_scalar_type(&s, BP_FLOAT64);
  is_status(meta("core::sum", &s, &m), BP_OK);
  is_int(m.dtype, BP_FLOAT64);
  bp_tensor *all[] = {f, i, e, z};
  for (int k = 0; k < 4; k++) bp_tensor_release(all[k]);
}

static void argmax_rules(void) {
  bp_tensor_meta m;
  bp_tensor *f = T2(BP_FLOAT32, 2, 5), *b = T1(BP_BOOL, 2), *e = T2(BP_FLOAT32, 0, 2);
  bp_stack s = stack_of(1, &f);
  is_status(meta("core::argmax", &s, &m), BP_OK);
  is_int(m.dtype, BP_INT64);
  is_shape(&m, 0, NULL);
  s = stack_of(1, &f);
  bp_stack_push_none(&s);
  bp_stack_push_bool(&s, true);
  is_status(meta("core::argmax", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(1, 1));
  s = stack_of(1, &f);
  bp_stack_push_int(&s, -1);
  is_status(meta("core::argmax", &s, &m), BP_OK);
  is_shape(&m, 1, SHAPE(2));
  s = stack_of(1, &b);
  is_status(meta("core::argmax", &s, &m), BP_ERR_TYPE);
  s = stack_of(1, &e);
  is_status(meta("core::argmax", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::argmax: argument #0 'self' is empty; it has no maximum");
  /* An empty input whose reduced dim is not empty has an empty result, as
   * in torch (and amax); reducing the size-0 dim has no value. */
  s = stack_of(1, &e);
  bp_stack_push_int(&s, 1);
  is_status(meta("core::argmax", &s, &m), BP_OK);
  is_int(m.dtype, BP_INT64);
  is_shape(&m, 1, SHAPE(0));
  s = stack_of(1, &e);
  bp_stack_push_int(&s, -1);
  bp_stack_push_bool(&s, true);
  is_status(meta("core::argmax", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(0, 1));
  s = stack_of(1, &e);
  bp_stack_push_int(&s, 0);
  is_status(meta("core::argmax", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::argmax: cannot reduce dimension 0 of size 0 (the result would "
                          "have no value)");
  bp_tensor_release(f);
  bp_tensor_release(b);
  bp_tensor_release(e);
}

static bp_status mm(bp_tensor *a, bp_tensor *b, bp_tensor_meta *m) {
  bp_tensor *ts[2] = {a, b};
  bp_stack s = stack_of(2, ts);
  return meta("core::matmul", &s, m);
}

static void matmul_shapes(void) {
  bp_tensor_meta m;
  bp_tensor *v3 = T1(BP_FLOAT32, 3), *m23 = T2(BP_FLOAT32, 2, 3), *m34 = T2(BP_FLOAT32, 3, 4);
  bp_tensor *b534 = T3(BP_FLOAT32, 5, 3, 4), *b123 = T3(BP_FLOAT32, 1, 2, 3);
  bp_tensor *m43 = T2(BP_FLOAT32, 4, 3), *d34 = T2(BP_FLOAT64, 3, 4), *i34 = T2(BP_INT32, 3, 4);
  is_status(mm(v3, v3, &m), BP_OK);
  is_shape(&m, 0, NULL);
  is_status(mm(m23, m34, &m), BP_OK);
  is_shape(&m, 2, SHAPE(2, 4));
  is_status(mm(v3, m34, &m), BP_OK);
  is_shape(&m, 1, SHAPE(4));
  is_status(mm(m23, v3, &m), BP_OK);
  is_shape(&m, 1, SHAPE(2));
  is_status(mm(b123, b534, &m), BP_OK);
  is_shape(&m, 3, SHAPE(5, 2, 4));
  is_status(mm(m23, m43, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::matmul: shapes [2, 3] and [4, 3] cannot be multiplied (3 vs 4)");
  is_status(mm(m23, d34, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::matmul: argument #1 'other': expected float32, got float64");
  is_status(mm(i34, i34, &m), BP_ERR_TYPE);
  has_str(bp_last_error(), "expected a floating-point dtype, got int32");
  bp_tensor *all[] = {v3, m23, m34, b534, b123, m43, d34, i34};
  for (int k = 0; k < 8; k++) bp_tensor_release(all[k]);
}

static void nn_rules(void) {
  bp_tensor_meta m;
  bp_tensor *x = T3(BP_FLOAT32, 2, 3, 4), *w = T1(BP_FLOAT32, 4), *wd = T1(BP_FLOAT64, 4);
  bp_tensor *w3 = T1(BP_FLOAT32, 3), *xi = T1(BP_INT32, 4);
  bp_stack s = stack_of(1, &x);
  bp_stack_push_int(&s, -1);
  is_status(meta("core::log_softmax", &s, &m), BP_OK);
  is_shape(&m, 3, SHAPE(2, 3, 4));
  s = stack_of(1, &x);
  bp_stack_push_int(&s, 3);
  is_status(meta("core::softmax", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::softmax: argument #1 'dim': dimension 3 is out of range for a "
                          "3-dimensional tensor (expected -3 .. 2)");
  s = stack_of(1, &xi);
  bp_stack_push_int(&s, 0);
  is_status(meta("core::softmax", &s, &m), BP_ERR_TYPE);
  /* layer_norm */
  int64_t ns4[1] = {4}, ns34[2] = {3, 4}, ns5[1] = {5};
  s = stack_of(1, &x);
  bp_stack_push_int_list(&s, ns34, 2);
  is_status(meta("core::layer_norm", &s, &m), BP_OK);
  is_shape(&m, 3, SHAPE(2, 3, 4));
  s = stack_of(1, &x);
  bp_stack_push_int_list(&s, ns5, 1);
  is_status(meta("core::layer_norm", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::layer_norm: argument #1 'normalized_shape' [5] does not match the "
                          "trailing dimensions of input shape [2, 3, 4]");
  s = stack_of(1, &x);
  bp_stack_push_int_list(&s, ns4, 1);
  bp_stack_push_tensor(&s, w3);
  is_status(meta("core::layer_norm", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::layer_norm: argument #2 'weight' has shape [3], expected [4]");
  s = stack_of(1, &x);
  bp_stack_push_int_list(&s, ns4, 1);
  bp_stack_push_none(&s);
  bp_stack_push_tensor(&s, wd);
  is_status(meta("core::layer_norm", &s, &m), BP_ERR_TYPE);
  is_str(bp_last_error(), "core::layer_norm: argument #3 'bias': expected float32, got float64");
  s = stack_of(1, &x);
  bp_stack_push_int_list(&s, ns4, 1);
  bp_stack_push_tensor(&s, w);
  bp_stack_push_tensor(&s, w);
  bp_stack_push_float(&s, -1.0);
  is_status(meta("core::layer_norm", &s, &m), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "argument #4 'eps' is -1, expected >= 0");
  bp_tensor *all[] = {x, w, wd, w3, xi};
  for (int k = 0; k < 5; k++) bp_tensor_release(all[k]);
}

static void memory_ops(void) {
  bp_tensor_meta m;
  bp_tensor *a = T2(BP_INT16, 3, 4), *t = NULL;
  int64_t tsz[2] = {4, 3}, tst[2] = {1, 4};
  bp_tensor_as_strided(a, 2, tsz, tst, 0, &t);
  bp_stack s = stack_of(1, &a);
  bp_stack_push_scalar_type(&s, BP_BFLOAT16);
  is_status(meta("core::cast", &s, &m), BP_OK);
  is_int(m.dtype, BP_BFLOAT16);
  is_shape(&m, 2, SHAPE(3, 4));
  /* contiguous: an alias of a contiguous input, else a contiguous copy. */
  s = stack_of(1, &a);
  is_status(meta("core::contiguous", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(3, 4));
  s = stack_of(1, &t);
  is_status(meta("core::contiguous", &s, &m), BP_OK);
  is_shape(&m, 2, SHAPE(4, 3));
  /* In-place ops return their argument's own layout. */
  s = stack_of(1, &t);
  bp_stack_push_float(&s, 2.0);
  is_status(meta("core::fill_", &s, &m), BP_OK);
  is_int(m.strides[0], 1);
  is_int(m.strides[1], 4);
  bp_tensor *row = T1(BP_FLOAT32, 3), *bad = T1(BP_FLOAT32, 4);
  bp_tensor *cp[2] = {t, row};
  s = stack_of(2, cp);
  is_status(meta("core::copy_", &s, &m), BP_OK);
  is_int(m.strides[1], 4);
  bp_tensor *cb[2] = {t, bad};
  s = stack_of(2, cb);
  is_status(meta("core::copy_", &s, &m), BP_ERR_SHAPE);
  has_str(bp_last_error(), "core::copy_: argument #1 'src' with shape [4] cannot be broadcast");
  bp_tensor *grow[2] = {row, t};
  s = stack_of(2, grow);
  is_status(meta("core::copy_", &s, &m), BP_ERR_SHAPE);
  is_str(bp_last_error(), "core::copy_: argument #1 'src' with shape [4, 3] cannot be broadcast to "
                          "argument #0 'self' with shape [3]");
  bp_tensor *all[] = {a, t, row, bad};
  for (int k = 0; k < 4; k++) bp_tensor_release(all[k]);
}

/* copy_'s self and add.out's out may not hold one address at several
 * indices (a broadcast dimension); fill_'s self may. */
static void written_tensors_once(void) {
  bp_tensor_meta m;
  bp_tensor *base = T1(BP_FLOAT32, 3), *src = T2(BP_FLOAT32, 2, 3), *a = T2(BP_FLOAT32, 2, 3);
  bp_tensor *wide = NULL, *one = NULL;
  is_status(bp_tensor_as_strided(base, 2, SHAPE(2, 3), SHAPE(0, 1), 0, &wide), BP_OK);
  is_status(bp_tensor_as_strided(base, 2, SHAPE(1, 3), SHAPE(0, 1), 0, &one), BP_OK);
  bp_tensor *cp[2] = {wide, src};
  bp_stack s = stack_of(2, cp);
  is_status(meta("core::copy_", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::copy_: argument #0 'self': dimension 0 has 2 elements at one "
                          "address (stride 0), and it is written; expected a tensor without "
                          "broadcast dimensions");
  bp_tensor *ts[2] = {a, src};
  s = stack_of(2, ts);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_tensor(&s, wide);
  is_status(meta("core::add.out", &s, &m), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::add.out: argument #3 'out': dimension 0 has 2 elements at one "
                          "address (stride 0), and it is written; expected a tensor without "
                          "broadcast dimensions");
  /* fill_ writes one value everywhere: allowed. */
  s = stack_of(1, &wide);
  bp_stack_push_float(&s, 2.0);
  is_status(meta("core::fill_", &s, &m), BP_OK);
  /* A stride-0 dimension of size 1 holds one element: allowed. */
  bp_tensor *row = T1(BP_FLOAT32, 3), *c1[2] = {one, row};
  s = stack_of(2, c1);
  is_status(meta("core::copy_", &s, &m), BP_OK);
  /* A broadcast src is fine: only the written tensor matters. */
  bp_tensor *c2[2] = {src, wide};
  s = stack_of(2, c2);
  is_status(meta("core::copy_", &s, &m), BP_OK);
  bp_tensor *all[] = {base, src, a, wide, one, row};
  for (int k = 0; k < 6; k++) bp_tensor_release(all[k]);
}

static void op_set_listing(void) {
  /* Every op is defined by the host, with a meta function, and says the
   * op-set version that added it; no other core op exists. */
  static const char *v1[] = {
      "add", "add.out", "sub", "mul", "div", "maximum", "minimum", "pow", "muladd", "neg", "abs",
      "exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "gelu", "where", "sum", "mean",
      "amax", "amin", "argmax", "matmul", "softmax", "log_softmax", "layer_norm", "cast",
      "contiguous", "fill_", "copy_"};
  static const char *v2[] = {
      "sin", "cos", "erf", "silu", "eq", "eq.Scalar", "ne", "ne.Scalar", "lt", "lt.Scalar", "le",
      "le.Scalar", "gt", "gt.Scalar", "ge", "ge.Scalar", "logical_not", "logical_and",
      "logical_or", "isnan", "masked_fill", "clamp", "add.Scalar", "sub.Scalar", "mul.Scalar",
      "div.Scalar", "pow.Scalar", "index_select", "embedding", "gather",
      "cumsum", "topk", "sort", "cat", "stack", "linear", "rms_norm", "batch_norm",
      "scaled_dot_product_attention", "conv2d", "max_pool2d", "avg_pool2d",
      "adaptive_avg_pool2d", "add_", "add_.Scalar", "sub_", "sub_.Scalar", "mul_", "mul_.Scalar", "div_", "div_.Scalar",
      "neg_", "abs_", "exp_", "log_", "sqrt_", "rsqrt_", "relu_", "sigmoid_", "tanh_", "sin_",
      "cos_", "erf_", "silu_", "gelu_", "masked_fill_", "clamp_"};
  const size_t n1 = sizeof v1 / sizeof v1[0], n2 = sizeof v2 / sizeof v2[0];
  for (size_t i = 0; i < n1 + n2; i++) {
    char full[64];
    snprintf(full, sizeof full, "core::%s", i < n1 ? v1[i] : v2[i - n1]);
    const bp_op *op = must_find(full);
    bp_op_info info;
    info.struct_size = BP_OP_INFO_STRUCT_SIZE;
    is_status(bp_op_get_info(op, &info), BP_OK);
    is_str(info.owner, "host");
    is_int(info.has_meta, 1);
    is_int(info.defined, 1);
    is_int(info.op_set_version, i < n1 ? 1 : 2);
  }
  /* Each op with one plain Tensor result has an .out form of op set 2
   * (add's is op set 1's add.out). */
  size_t nout = 0;
  for (size_t i = 0; i < n1 + n2; i++) {
    const char *name = i < n1 ? v1[i] : v2[i - n1];
    const char *dot = strchr(name, '.');
    size_t base = dot ? (size_t)(dot - name) : strlen(name);
    if (name[base - 1] == '_' || (dot && strcmp(dot, ".out") == 0) || !strcmp(name, "add") ||
        !strcmp(name, "contiguous") || !strcmp(name, "topk") || !strcmp(name, "sort"))
      continue; /* (topk and sort have two results) */
    char full[64];
    snprintf(full, sizeof full, "core::%s%s", name, dot ? "_out" : ".out");
    const bp_op *op = must_find(full);
    bp_op_info info;
    info.struct_size = BP_OP_INFO_STRUCT_SIZE;
    is_status(bp_op_get_info(op, &info), BP_OK);
    is_int(info.has_meta, 1);
    is_int(info.has_composite, 1);
    is_int(info.op_set_version, 2);
    nout++;
  }
  is_int(nout, 69);
  size_t ncore = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info info;
    info.struct_size = BP_OP_INFO_STRUCT_SIZE;
    if (bp_op_get_info(bp_op_at(i), &info) == BP_OK && strncmp(info.name, "core::", 6) == 0)
      ncore++;
  }
  is_int(ncore, n1 + n2 + nout);
  is_int(BP_CORE_OP_SET_VERSION, 2);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(promotion_table), TAP_CASE(broadcasting), TAP_CASE(binary_rules),
      TAP_CASE(add_out),         TAP_CASE(unary_rules),  TAP_CASE(where_rules),
      TAP_CASE(reductions),      TAP_CASE(argmax_rules), TAP_CASE(matmul_shapes),
      TAP_CASE(nn_rules),        TAP_CASE(memory_ops),   TAP_CASE(op_set_listing),
      TAP_CASE(written_tensors_once),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
