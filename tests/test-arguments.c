/*
 * Binding a call's arguments: boxed calls and defaults, keyword arguments,
 * argument checks that name the argument, every argument type (with and
 * without the optional ones), and fixed-size lists.  Uses the "good" test
 * plugin (tests/plugins/good.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const float A[4] = {1, 2, 3, 4}, B[4] = {0.5f, -1, 2, 8};

static void boxed_call_and_defaults(void) {
  must_load("good");
  const bp_op *add = must_find("good::add");
  int64_t live = bp_live_tensor_count();
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_tensor *r = call_for_tensor(add, &s); /* alpha defaults to 1.0 */
  ok(r != NULL);
  is_int(s.top, 1);
  for (int i = 0; i < 4 && r; i++) is_double(f32data(r)[i], A[i] + B[i], 0);
  bp_stack_release(&s);
  /* Kwarg-only arguments may also be given positionally, in schema order. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 2.0);
  r = call_for_tensor(add, &s);
  for (int i = 0; i < 4 && r; i++) is_double(f32data(r)[i], A[i] + 2 * B[i], 0);
  bp_stack_release(&s);
  bp_tensor_release(a);
  bp_tensor_release(b);
  is_int(bp_live_tensor_count(), live);
}

static void keyword_arguments(void) {
  must_load("good");
  const bp_op *add = must_find("good::add");
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  const char *alpha[] = {"alpha"};
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 0.5);
  is_status(bp_call_kw(add, &s, alpha, 1), BP_OK);
  bp_tensor *r = NULL;
  bp_stack_get_tensor(&s, 0, &r);
  for (int i = 0; i < 4 && r; i++) is_double(f32data(r)[i], A[i] + 0.5f * B[i], 0);
  bp_stack_release(&s);
  /* Every argument by name, in any order. */
  const char *all[] = {"b", "alpha", "a"};
  bp_stack_push_tensor(&s, b);
  bp_stack_push_int(&s, 3); /* an int where a float is due */
  bp_stack_push_tensor(&s, a);
  is_status(bp_call_kw(add, &s, all, 3), BP_OK);
  bp_stack_get_tensor(&s, 0, &r);
  for (int i = 0; i < 4 && r; i++) is_double(f32data(r)[i], A[i] + 3 * B[i], 0);
  bp_stack_release(&s);

  const char *beta[] = {"beta"};
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 0.5);
  is_status(bp_call_kw(add, &s, beta, 1), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "good::add: unexpected keyword argument 'beta'");
  is_int(s.top, 0);
  const char *twice[] = {"a"};
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_tensor(&s, a);
  is_status(bp_call_kw(add, &s, twice, 1), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "good::add: argument #0 'a' was given twice");
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call_kw(add, &s, alpha, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "good::add: takes 2 positional arguments but 3 were given");
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(add, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "good::add: missing argument #1 'b'");
  bp_stack_push_tensor(&s, a);
  is_status(bp_call_kw(add, &s, NULL, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "kwnames is NULL");
  bp_stack_push_tensor(&s, a);
  is_status(bp_call_kw(add, &s, alpha, 2), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "2 keyword names but only 1 values");
  bp_tensor_release(a);
  bp_tensor_release(b);
}

static void argument_checks_name_the_argument(void) {
  must_load("good");
  const bp_op *muladd = must_find("good::muladd");
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 3);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(muladd, &s), BP_ERR_TYPE);
  is_str(bp_last_error(), "good::muladd: argument #1 'b': expected Tensor, got int");
  is_int(s.top, 0);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_str(&s, "x");
  is_status(bp_call(muladd, &s), BP_ERR_TYPE);
  is_str(bp_last_error(), "good::muladd: argument #2 'c': expected float, got str");
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_none(&s);
  is_status(bp_call(muladd, &s), BP_ERR_TYPE);
  is_str(bp_last_error(), "good::muladd: argument #2 'c': expected float, got None");
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(muladd, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "good::muladd: takes 3 arguments but 4 were given");
  /* A forged value with a bad tag or a NULL tensor is refused, not used. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 1.0);
  slots[1].u.tensor = NULL;
  is_status(bp_call(muladd, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "good::muladd: argument #1 'b': the tensor is NULL");
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 1.0);
  slots[2].tag = 99;
  is_status(bp_call(muladd, &s), BP_ERR_TYPE);
  has_str(bp_last_error(), "expected float, got an invalid tag 99");
  /* So is a NULL string, list array or list element written directly. */
  const bp_op *gelu = must_find("core::gelu"), *sum = must_find("core::sum"),
              *sink = must_find("good::sink");
  bp_stack_push_tensor(&s, a);
  bp_stack_push_str(&s, "none");
  slots[1].u.str = NULL;
  is_status(bp_call(gelu, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::gelu: argument #1 'approximate': the string is NULL");
  const char *approx[] = {"approximate"};
  bp_stack_push_tensor(&s, a);
  bp_stack_push_str(&s, "none");
  slots[1].u.str = NULL;
  is_status(bp_call_kw(gelu, &s, approx, 1), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::gelu: argument #1 'approximate': the string is NULL");
  int64_t dims[2] = {0, 0};
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int_list(&s, dims, 2);
  slots[1].u.ints = NULL;
  is_status(bp_call(sum, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "core::sum: argument #1 'dim': the list of 2 elements is NULL");
  bp_value big[18];
  bp_stack bs = BP_STACK_INIT(big, 18);
  bp_tensor *tl[2] = {a, b};
  int64_t il[1] = {1};
  double fl[1] = {1};
  bp_stack_push_tensor(&bs, a);
  bp_stack_push_none(&bs);
  bp_stack_push_int(&bs, 1);
  bp_stack_push_none(&bs);
  bp_stack_push_float(&bs, 1);
  bp_stack_push_none(&bs);
  bp_stack_push_bool(&bs, true);
  bp_stack_push_none(&bs);
  bp_stack_push_str(&bs, "s");
  bp_stack_push_none(&bs);
  bp_stack_push_scalar_type(&bs, BP_INT16);
  bp_stack_push_none(&bs);
  bp_stack_push_device(&bs, BP_CPU);
  bp_stack_push_none(&bs);
  bp_stack_push_int_list(&bs, il, 1);
  bp_stack_push_float_list(&bs, fl, 1);
  is_status(bp_stack_push_tensor_list(&bs, tl, 2), BP_OK);
  tl[1] = NULL; /* the caller's array changed after the push */
  is_status(bp_call(sink, &bs), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "good::sink: argument #16 ");
  has_str(bp_last_error(), ": element 1 of the list is NULL");
  /* The kernel's own checks come back with its message. */
  int64_t n2 = 2;
  bp_tensor *i32 = NULL;
  bp_tensor_empty(BP_CPU, BP_INT32, 1, &n2, &i32);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, i32);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(muladd, &s), BP_ERR_TYPE);
  is_str(bp_last_error(), "good::muladd: argument 'b': expected float32, got dtype 32");
  /* Results need room on the stack. */
  const bp_op *split = must_find("good::split");
  bp_value one[1];
  bp_stack small = BP_STACK_INIT(one, 1);
  bp_stack_push_tensor(&small, a);
  is_status(bp_call(split, &small), BP_ERR_OVERFLOW);
  is_str(bp_last_error(), "good::split: the stack's capacity 1 cannot hold the 2 results");
  /* Broken calls. */
  is_status(bp_call(NULL, &s), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "bp_call: op is NULL");
  is_status(bp_call(muladd, NULL), BP_ERR_INVALID_ARGUMENT);
  bp_stack raw;
  memset(&raw, 0, sizeof raw);
  is_status(bp_call(muladd, &raw), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "use BP_STACK_INIT");
  /* A stack without its array (say, from an unchecked malloc) is refused
   * as the stack functions refuse it, never read or written through. */
  bp_stack noarray = BP_STACK_INIT(NULL, 4);
  noarray.top = 2;
  is_status(bp_stack_push_int(&noarray, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "stack is corrupt");
  const bp_op *add = must_find("good::add");
  is_status(bp_call(add, &noarray), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "or is corrupt");
  is_int(noarray.top, 0);
  noarray.top = 2;
  bp_tensor_meta meta_out;
  meta_out.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  is_status(bp_op_meta(add, &noarray, &meta_out, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "is corrupt");
  bp_tensor_release(i32);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

typedef struct sink_args {
  bool b, m, y, g, t, dt2, d2, pair;
} sink_args;

/* Pushes good::sink's arguments (with the optional ones present or not) and
 * checks the results against the documented folding. */
static void run_sink(const char *opname, sink_args o) {
  const bp_op *op = must_find(opname);
  int64_t n2 = 2;
  bp_tensor *a = NULL, *b = NULL;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n2, &a);
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n2, &b);
  bp_tensor *tl[3] = {a, b, a};
  int64_t il[3] = {4, 5, 6}, pair[2] = {3, 8};
  double fl[2] = {0.5, 0.25};
  bp_value slots[18];
  bp_stack s = BP_STACK_INIT(slots, 18);
  bp_stack_push_tensor(&s, a);
  o.b ? bp_stack_push_tensor(&s, b) : bp_stack_push_none(&s);
  bp_stack_push_int(&s, 2);
  o.m ? bp_stack_push_int(&s, 9) : bp_stack_push_none(&s);
  bp_stack_push_float(&s, 1.5);
  o.y ? bp_stack_push_float(&s, 0.125) : bp_stack_push_none(&s);
  bp_stack_push_bool(&s, true);
  o.g ? bp_stack_push_bool(&s, true) : bp_stack_push_none(&s);
  bp_stack_push_str(&s, "hello");
  o.t ? bp_stack_push_str(&s, "ab") : bp_stack_push_none(&s);
  bp_stack_push_scalar_type(&s, BP_INT16);
  o.dt2 ? bp_stack_push_scalar_type(&s, BP_BFLOAT16) : bp_stack_push_none(&s);
  bp_stack_push_device(&s, bp_device_make(BP_DEVICE_CUDA, 3));
  o.d2 ? bp_stack_push_device(&s, bp_device_make(BP_DEVICE_ROCM, 1)) : bp_stack_push_none(&s);
  bp_stack_push_int_list(&s, il, 3);
  bp_stack_push_float_list(&s, fl, 2);
  bp_stack_push_tensor_list(&s, tl, 3);
  if (o.pair) bp_stack_push_int_list(&s, pair, 2); /* else the default [1, 1] */
  is_status(bp_call(op, &s), BP_OK);
  is_int(s.top, 5);
  int64_t p0 = o.pair ? 3 : 1, p1 = o.pair ? 8 : 1;
  int64_t want_i = 2 + 10 * (o.m ? 9 : 7) + 100 * 3 + 1000 * 15 + 10000 * p0 + 100000 * p1;
  double want_f = 1.5 + (o.y ? 0.125 : 0.25) + 0.75 + 5 + (o.t ? 102 : 0) + (o.b ? 1000 : 0) + 30000;
  bool want_b = true != (o.g ? true : true);
  int64_t gi;
  double gf;
  bool gb;
  int32_t gdt;
  bp_tensor *gt = NULL;
  is_status(bp_stack_get_int(&s, 1, &gi), BP_OK);
  is_int(gi, want_i);
  is_status(bp_stack_get_float(&s, 2, &gf), BP_OK);
  is_double(gf, want_f, 0);
  is_status(bp_stack_get_bool(&s, 3, &gb), BP_OK);
  is_int(gb, want_b);
  is_status(bp_stack_get_scalar_type(&s, 4, &gdt), BP_OK);
  is_int(gdt, o.dt2 ? BP_BFLOAT16 : BP_INT16);
  is_status(bp_stack_get_tensor(&s, 0, &gt), BP_OK);
  if (gt) {
    const int64_t *d = bp_tensor_get_view(gt)->data;
    is_int(d[0], BP_DEVICE_CUDA);
    is_int(d[1], 3);
    is_int(d[2], o.d2 ? BP_DEVICE_ROCM : -1);
    is_int(d[3], o.d2 ? 1 : -1);
  }
  bp_stack_release(&s);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

static void every_argument_type(void) {
  must_load("good");
  sink_args none = {0}, all = {1, 1, 1, 1, 1, 1, 1, 1};
  sink_args mixed = {.b = 1, .y = 1, .t = 1, .d2 = 1};
  const char *ops[] = {"good::sink", "good::sink.boxed"};
  for (int i = 0; i < 2; i++) {
    run_sink(ops[i], none);
    run_sink(ops[i], all);
    run_sink(ops[i], mixed);
  }
  /* good::sink's unboxed kernel goes through libffi: its schema has no
   * fast-path signature. */
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  is_status(bp_op_get_kernel(must_find("good::sink"), 0, &ki), BP_OK);
  is_int(ki.kind, BP_KERNEL_UNBOXED);
  is_status(bp_op_get_kernel(must_find("good::sink.boxed"), 0, &ki), BP_OK);
  is_int(ki.kind, BP_KERNEL_BOXED);
}

static void fixed_size_lists_are_checked(void) {
  must_load("good");
  const bp_op *op = must_find("good::sink");
  int64_t n2 = 2;
  bp_tensor *a = NULL;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n2, &a);
  int64_t three[3] = {1, 2, 3};
  bp_value slots[18];
  bp_stack s = BP_STACK_INIT(slots, 18);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_none(&s);
  bp_stack_push_int(&s, 2);
  bp_stack_push_none(&s);
  bp_stack_push_float(&s, 1.5);
  bp_stack_push_none(&s);
  bp_stack_push_bool(&s, true);
  bp_stack_push_none(&s);
  bp_stack_push_str(&s, "s");
  bp_stack_push_none(&s);
  bp_stack_push_scalar_type(&s, BP_INT16);
  bp_stack_push_none(&s);
  bp_stack_push_device(&s, BP_CPU);
  bp_stack_push_none(&s);
  bp_stack_push_int_list(&s, three, 3);
  bp_stack_push_float_list(&s, NULL, 0);
  bp_stack_push_tensor_list(&s, NULL, 0);
  bp_stack_push_int_list(&s, three, 3);
  is_status(bp_call(op, &s), BP_ERR_SHAPE);
  is_str(bp_last_error(), "good::sink: argument #17 'pair': expected int[2], got a list of 3");
  bp_tensor_release(a);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(boxed_call_and_defaults),
      TAP_CASE(keyword_arguments),
      TAP_CASE(argument_checks_name_the_argument),
      TAP_CASE(every_argument_type),
      TAP_CASE(fixed_size_lists_are_checked),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
