/*
 * The CPU plugin's error paths: wrong dtypes, shapes that do not
 * broadcast, dims out of range, bad arguments and mixed devices fail with
 * the status and message the spec gives, in the meta function and the
 * kernel alike, leaving no handle behind; and an empty tensor whose other
 * dimensions are huge overflows no size or stride arithmetic.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <math.h>

#include "cases.h"
#include "harness.h"
#include "testutil.h"

static void errors_dtype(void) {
  cpu_setup();
  bp_tensor *f = zeros2(BP_FLOAT32, 2, 3), *d = zeros2(BP_FLOAT64, 3, 2);
  bp_tensor *i = zeros2(BP_INT32, 2, 3), *bo = zeros2(BP_BOOL, 2, 3), *i8 = zeros2(BP_INT8, 2, 3);
  bp_tensor *d23 = zeros2(BP_FLOAT64, 2, 3);
  bp_value slots[6];
  bp_stack s = BP_STACK_INIT(slots, 6);

  ctx_set("mean of int32");
  push_t(&s, i, NULL, NULL);
  EXPECT_ERROR(core_op("mean"), &s, BP_ERR_TYPE,
               "core::mean: argument #0 'self': expected a floating-point dtype, got int32", NULL);
  ctx_set("mean of bool");
  push_t(&s, bo, NULL, NULL);
  EXPECT_ERROR(core_op("mean"), &s, BP_ERR_TYPE, NULL, "got bool");
  ctx_set("where with a float32 condition");
  push_t(&s, f, f, f);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_TYPE,
               "core::where: argument #0 'condition': expected bool, got float32", NULL);
  ctx_set("where with an int8 condition");
  push_t(&s, i8, f, f);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_TYPE, NULL, "got int8");
  ctx_set("matmul float32 x float64");
  push_t(&s, f, d, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_TYPE,
               "core::matmul: argument #1 'other': expected float32, got float64", NULL);
  ctx_set("matmul of int32");
  bp_tensor *i32 = zeros2(BP_INT32, 3, 2);
  push_t(&s, i, i32, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_TYPE, NULL, "got int32");
  ctx_set("softmax, log_softmax, layer_norm of integers");
  push_t(&s, i, NULL, NULL);
  bp_stack_push_int(&s, 0);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_TYPE, NULL, "got int32");
  push_t(&s, bo, NULL, NULL);
  bp_stack_push_int(&s, 0);
  EXPECT_ERROR(core_op("log_softmax"), &s, BP_ERR_TYPE, NULL, "got bool");
  push_t(&s, i8, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_TYPE, NULL, "got int8");
  ctx_set("muladd of integers");
  push_t(&s, i, i8, NULL);
  bp_stack_push_float(&s, 1);
  EXPECT_ERROR(core_op("muladd"), &s, BP_ERR_TYPE, NULL, "floating-point");
  ctx_set("sub and pow of two bools");
  push_t(&s, bo, bo, NULL);
  EXPECT_ERROR(core_op("sub"), &s, BP_ERR_TYPE, NULL, "core::sub");
  push_t(&s, bo, bo, NULL);
  EXPECT_ERROR(core_op("pow"), &s, BP_ERR_TYPE, NULL, "core::pow");
  ctx_set("add with a fractional alpha on integers, alpha 2 on bools");
  push_t(&s, i, i8, NULL);
  bp_stack_push_float(&s, 0.5);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_TYPE, NULL, "alpha");
  push_t(&s, i8, i8, NULL);
  bp_stack_push_float(&s, -1.5);
  EXPECT_ERROR(core_op("sub"), &s, BP_ERR_TYPE, NULL, "alpha");
  push_t(&s, bo, bo, NULL);
  bp_stack_push_float(&s, 2);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_TYPE, NULL, "alpha");
  ctx_set("neg, abs, relu, argmax of bool");
  const char *nb[] = {"neg", "abs", "relu", "argmax"};
  for (int k = 0; k < 4; k++) {
    push_t(&s, bo, NULL, NULL);
    EXPECT_ERROR(core_op(nb[k]), &s, BP_ERR_TYPE, NULL, "got bool");
  }
  ctx_set("add.out into the wrong dtype");
  push_t(&s, f, f, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, d23);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_TYPE,
               "core::add.out: argument #3 'out': expected float32, got float64", NULL);
  ctx_set("layer_norm with a float64 weight for float32 input");
  bp_tensor *w64 = zeros1(BP_FLOAT64, 3);
  push_t(&s, f, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_tensor(&s, w64);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_TYPE, NULL, "got float64");
  bp_tensor *ts[] = {f, d, i, bo, i8, d23, i32, w64};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

static void errors_shape(void) {
  cpu_setup();
  bp_value slots[6];
  bp_stack s = BP_STACK_INIT(slots, 6);
  bp_tensor *a23 = zeros2(BP_FLOAT32, 2, 3), *b4 = zeros1(BP_FLOAT32, 4);
  bp_tensor *a53 = zeros2(BP_FLOAT32, 5, 3), *b21 = zeros2(BP_FLOAT32, 2, 1);
  bp_tensor *a45 = zeros2(BP_FLOAT32, 4, 5), *c2 = zeros1(BP_BOOL, 2), *b3 = zeros1(BP_FLOAT32, 3);
  bp_tensor *e03 = zeros2(BP_FLOAT32, 0, 3), *s0 = tensor_zeros(BP_FLOAT32, 0, NULL);
  bp_tensor *a22 = zeros2(BP_FLOAT32, 2, 2), *a13 = zeros2(BP_FLOAT32, 1, 3);
  ctx_set("add [2, 3] + [4]");
  push_t(&s, a23, b4, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_SHAPE,
               "core::add: argument #1 'other' with shape [4] cannot be broadcast with argument "
               "#0 'self' with shape [2, 3] (dimension 1: 4 vs 3)",
               NULL);
  ctx_set("mul [5, 3] * [2, 1]");
  push_t(&s, a53, b21, NULL);
  EXPECT_ERROR(core_op("mul"), &s, BP_ERR_SHAPE,
               "core::mul: argument #1 'other' with shape [2, 1] cannot be broadcast with "
               "argument #0 'self' with shape [5, 3] (dimension 0: 2 vs 5)",
               NULL);
  ctx_set("where(bool [2], [3], [3])");
  push_t(&s, c2, b3, b3);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_SHAPE, NULL, "cannot be broadcast");
  ctx_set("matmul [2, 3] x [4, 5]");
  push_t(&s, a23, a45, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "[2, 3]");
  has_str(bp_last_error(), "[4, 5]");
  ctx_set("matmul batch [2, 2, 3] x [3, 3, 4]");
  bp_tensor *m1 = tensor_zeros(BP_FLOAT32, 3, (int64_t[]){2, 2, 3});
  bp_tensor *m2 = tensor_zeros(BP_FLOAT32, 3, (int64_t[]){3, 3, 4});
  push_t(&s, m1, m2, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "[2, 2, 3]");
  has_str(bp_last_error(), "[3, 3, 4]");
  ctx_set("matmul of a 0-dim tensor");
  push_t(&s, s0, b3, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "core::matmul");
  push_t(&s, b3, s0, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_SHAPE, NULL, "core::matmul");
  ctx_set("amax, amin, argmax of nothing");
  int64_t d0[] = {0};
  push_t(&s, e03, NULL, NULL);
  EXPECT_ERROR(core_op("amax"), &s, BP_ERR_SHAPE, NULL, "core::amax");
  push_t(&s, e03, NULL, NULL);
  bp_stack_push_int_list(&s, d0, 1);
  EXPECT_ERROR(core_op("amin"), &s, BP_ERR_SHAPE, NULL, "core::amin");
  push_t(&s, e03, NULL, NULL);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_SHAPE, NULL, "core::argmax");
  push_t(&s, e03, NULL, NULL);
  bp_stack_push_int(&s, 0);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_SHAPE, NULL, "core::argmax");
  /* Over the non-empty dim the result is empty, as in torch. */
  ctx_set("argmax of a [0, 3] tensor over dim 1");
  push_t(&s, e03, NULL, NULL);
  bp_stack_push_int(&s, 1);
  is_status(bp_call(core_op("argmax"), &s), BP_OK);
  if (s.top == 1) {
    const bp_tensor_view *v = bp_tensor_get_view(s.values[0].u.tensor);
    is_int(v->dtype, BP_INT64);
    is_int(v->ndim, 1);
    is_int(v->ndim == 1 ? v->sizes[0] : -1, 0);
  }
  bp_stack_release(&s);
  ctx_set("layer_norm with a normalized_shape that is not the trailing sizes");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){4}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "normalized_shape");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){2}, 1);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "normalized_shape");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_tensor(&s, b4);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "weight");
  push_t(&s, a23, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_none(&s);
  bp_stack_push_tensor(&s, a23);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_SHAPE, NULL, "bias");
  ctx_set("add.out into the wrong shape");
  push_t(&s, a23, b3, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, b3);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_SHAPE,
               "core::add.out: argument #3 'out' has shape [3], expected [2, 3]", NULL);
  ctx_set("copy_ from a shape that does not broadcast to self");
  push_t(&s, a22, b3, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  push_t(&s, b3, a23, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  push_t(&s, a13, a23, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_SHAPE, NULL, "core::copy_");
  bp_tensor *ts[] = {a23, b4, a53, b21, a45, c2, b3, e03, s0, a22, a13, m1, m2};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

static void errors_dim(void) {
  cpu_setup();
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *a = zeros2(BP_FLOAT32, 2, 3), *v = zeros1(BP_FLOAT32, 3);
  bp_tensor *z = tensor_zeros(BP_FLOAT32, 0, NULL);
  ctx_set("softmax dim 2 of a 2-D tensor");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int(&s, 2);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_INVALID_ARGUMENT,
               "core::softmax: argument #1 'dim': dimension 2 is out of range for a "
               "2-dimensional tensor (expected -2 .. 1)",
               NULL);
  ctx_set("log_softmax dim -3 of a 2-D tensor");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int(&s, -3);
  EXPECT_ERROR(core_op("log_softmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL,
               "dimension -3 is out of range for a 2-dimensional tensor (expected -2 .. 1)");
  ctx_set("softmax dim 1 of a 0-dim tensor");
  push_t(&s, z, NULL, NULL);
  bp_stack_push_int(&s, 1);
  EXPECT_ERROR(core_op("softmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "(expected -1 .. 0)");
  const char *reds[] = {"sum", "mean", "amax", "amin"};
  for (int k = 0; k < 4; k++) {
    ctx_set("%s over dims out of range and repeated", reds[k]);
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){2}, 1);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){0, -3}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){1, -1}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "'dim'");
    push_t(&s, a, NULL, NULL);
    bp_stack_push_int_list(&s, (int64_t[]){0, 0}, 2);
    EXPECT_ERROR(core_op(reds[k]), &s, BP_ERR_INVALID_ARGUMENT, NULL, "'dim'");
  }
  ctx_set("argmax dim out of range");
  push_t(&s, v, NULL, NULL);
  bp_stack_push_int(&s, 1);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL,
               "dimension 1 is out of range for a 1-dimensional tensor (expected -1 .. 0)");
  push_t(&s, z, NULL, NULL);
  bp_stack_push_int(&s, -2);
  EXPECT_ERROR(core_op("argmax"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "out of range");
  bp_tensor_release(a);
  bp_tensor_release(v);
  bp_tensor_release(z);
  cpu_done();
}

static void errors_args(void) {
  cpu_setup();
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *a = zeros2(BP_FLOAT32, 2, 3);
  const char *bad[] = {"fast", "", "Tanh", "none "};
  for (int k = 0; k < 4; k++) {
    ctx_set("gelu approximate=\"%s\"", bad[k]);
    push_t(&s, a, NULL, NULL);
    bp_stack_push_str(&s, bad[k]);
    EXPECT_ERROR(core_op("gelu"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "approximate");
  }
  ctx_set("layer_norm eps < 0");
  push_t(&s, a, NULL, NULL);
  bp_stack_push_int_list(&s, (int64_t[]){3}, 1);
  bp_stack_push_none(&s);
  bp_stack_push_none(&s);
  bp_stack_push_float(&s, -1e-5);
  EXPECT_ERROR(core_op("layer_norm"), &s, BP_ERR_INVALID_ARGUMENT, NULL, "eps");
  bp_tensor_release(a);
  cpu_done();
}

/* An empty tensor whose other dimensions are huge, [2^40, 2^40, 2^40, 0]:
 * ops give empty results, or the reduction of nothing, and no size or
 * stride arithmetic overflows (the sanitizer build traps one that does). */
static void huge_empty(void) {
  cpu_setup();
  const int64_t big = INT64_C(1) << 40;
  int64_t sz[4] = {big, big, big, 0}, t_sz[4] = {0, big, big, big};
  bp_tensor *a = NULL, *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 4, sz, &a), BP_OK);
  /* The same shape with the zero first, as a view with saturated strides. */
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 4, t_sz, &t), BP_OK);
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_tensor *ins[2] = {a, t};
  for (int k = 0; k < 2; k++) {
    bp_tensor *x = ins[k];
    ctx_set("huge empty tensor #%d", k);
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("neg"), &s), BP_OK);
    if (s.top == 1) is_int(bp_tensor_numel(slots[0].u.tensor), 0);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_float(&s, 2.0);
    is_status(bp_call(core_op("add"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_scalar_type(&s, BP_FLOAT64);
    is_status(bp_call(core_op("cast"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_float(&s, 1.0);
    is_status(bp_call(core_op("fill_"), &s), BP_OK);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int(&s, 1);
    is_status(bp_call(core_op("softmax"), &s), BP_OK);
    bp_stack_release(&s);
    /* sum and mean of everything: 0 and NaN. */
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("sum"), &s), BP_OK);
    if (s.top == 1) ok(*(const float *)bp_tensor_get_view(slots[0].u.tensor)->data == 0.0f);
    bp_stack_release(&s);
    bp_stack_push_tensor(&s, x);
    is_status(bp_call(core_op("mean"), &s), BP_OK);
    if (s.top == 1) ok(isnan(*(const float *)bp_tensor_get_view(slots[0].u.tensor)->data));
    bp_stack_release(&s);
    /* sum over a huge dimension: still empty. */
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, (int64_t[]){k ? 1 : 0}, 1);
    is_status(bp_call(core_op("sum"), &s), BP_OK);
    if (s.top == 1) is_int(bp_tensor_numel(slots[0].u.tensor), 0);
    bp_stack_release(&s);
  }
  bp_tensor_release(a);
  bp_tensor_release(t);
  cpu_done();
}

/* gather checks each index in the loop that reads with it: an index out
 * of range deep in a large index (past the vector loops' first lanes,
 * in another thread's rows) is still refused, and the message names the
 * first one, whichever row or lane saw one first.  (The meta function
 * cannot see the values: the kernel alone refuses them.) */
static void errors_index(void) {
  cpu_setup();
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  static const int32_t dts[] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_INT8};
  static const int32_t idts[] = {BP_INT64, BP_INT32};
  static const int64_t at[2] = {20007, 50001}, bad[2] = {1000, -1};
  for (size_t d = 0; d < NELEMS(dts); d++)
    for (int64_t dim = 0; dim < 2; dim++)
      for (size_t it = 0; it < NELEMS(idts); it++)
        for (int from = 0; from < 2; from++) {
          /* 1000 along dim, 64 across it; zeros but for bad indices at
           * at[from ..] (one in each thread's rows, then one) */
          int64_t sz[2] = {dim == 0 ? 1000 : 64, dim == 0 ? 64 : 1000};
          bp_tensor *a = tensor_zeros(dts[d], 2, sz), *ix = tensor_zeros(idts[it], 2, sz);
          void *iv = bp_tensor_get_view(ix)->data;
          for (int k = from; k < 2; k++) {
            if (idts[it] == BP_INT64) ((int64_t *)iv)[at[k]] = bad[k];
            else ((int32_t *)iv)[at[k]] = (int32_t)bad[k];
          }
          ctx_set("gather of %s along %d, %s indices, bad from %lld", bp_dtype_name(dts[d]),
                  (int)dim, bp_dtype_name(idts[it]), (long long)at[from]);
          char msg[256];
          snprintf(msg, sizeof msg,
                   "core::gather: argument #2 'index': index %lld (at position %lld) is out of "
                   "range for dimension %d of size 1000 (expected 0 .. 999)",
                   (long long)bad[from], (long long)at[from], (int)dim);
          int64_t live = bp_live_tensor_count();
          push_t(&s, a, NULL, NULL);
          bp_stack_push_int(&s, dim);
          bp_stack_push_tensor(&s, ix);
          is_status(bp_call(core_op("gather"), &s), BP_ERR_INVALID_ARGUMENT);
          is_str(bp_last_error(), msg);
          is_int(s.top, 0);
          is_int(bp_live_tensor_count(), live);
          s.top = 0;
          bp_tensor_release(a);
          bp_tensor_release(ix);
        }
  cpu_done();
}

/* Mixed devices are refused; a device without core kernels has none. */
static void errors_device(void) {
  cpu_setup();
  must_load("good");
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  double v3[] = {1, 2, 3};
  bp_tensor *g = on_gooddev(1, (int64_t[]){3}, v3), *g2 = on_gooddev(1, (int64_t[]){3}, v3);
  bp_tensor *c = tensor_f(BP_FLOAT32, v3, 3), *cb = tensor_i(BP_BOOL, (int64_t[]){1, 0, 1}, 3);
  if (!g || !g2) {
    cpu_done();
    return;
  }
  ctx_set("add(cpu, gooddev)");
  push_t(&s, c, g, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_DEVICE,
               "core::add: argument #1 'other' is on gooddev:0 but argument #0 'self' is on "
               "cpu:0; the op does not allow mixed devices",
               NULL);
  ctx_set("where(cpu, gooddev, cpu)");
  push_t(&s, cb, g, c);
  EXPECT_ERROR(core_op("where"), &s, BP_ERR_DEVICE, NULL, "gooddev:0");
  ctx_set("matmul(gooddev, cpu)");
  push_t(&s, g, c, NULL);
  EXPECT_ERROR(core_op("matmul"), &s, BP_ERR_DEVICE, NULL, "cpu:0");
  ctx_set("add.out(cpu, cpu, out=gooddev)");
  push_t(&s, c, c, NULL);
  bp_stack_push_float(&s, 1);
  bp_stack_push_tensor(&s, g);
  EXPECT_ERROR(core_op("add.out"), &s, BP_ERR_DEVICE, NULL, "gooddev:0");
  ctx_set("ops on gooddev alone find no kernel");
  push_t(&s, g, g2, NULL);
  EXPECT_ERROR(core_op("add"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  push_t(&s, g, NULL, NULL);
  EXPECT_ERROR(core_op("neg"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  ctx_set("copy_(gooddev, cpu): the kernel of self's device runs, and there is none");
  push_t(&s, g, c, NULL);
  EXPECT_ERROR(core_op("copy_"), &s, BP_ERR_NOT_FOUND, NULL, "no kernel for gooddev:0");
  bp_tensor *ts[] = {g, g2, c, cb};
  for (size_t k = 0; k < NELEMS(ts); k++) bp_tensor_release(ts[k]);
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(errors_dtype),
      TAP_CASE(errors_shape),
      TAP_CASE(errors_dim),
      TAP_CASE(errors_args),
      TAP_CASE(errors_index),
      TAP_CASE(errors_device),
      TAP_CASE(huge_empty),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
