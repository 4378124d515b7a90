/* The boxed stack: pushing and reading every tag, and the errors. */
#include <string.h>

#include <backplane/host.h>

#include "tap.h"

static void push_and_get_every_tag(void) {
  bp_value slots[16];
  bp_stack s = BP_STACK_INIT(slots, 16);
  int64_t n = 2;
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t), BP_OK);
  int64_t ints[3] = {1, -2, 3};
  double floats[2] = {0.5, -1.5};
  bp_tensor *tl[2] = {t, t};
  is_status(bp_stack_push_tensor(&s, t), BP_OK);
  is_status(bp_stack_push_int(&s, -7), BP_OK);
  is_status(bp_stack_push_float(&s, 2.5), BP_OK);
  is_status(bp_stack_push_bool(&s, true), BP_OK);
  is_status(bp_stack_push_str(&s, "tanh"), BP_OK);
  is_status(bp_stack_push_int_list(&s, ints, 3), BP_OK);
  is_status(bp_stack_push_float_list(&s, floats, 2), BP_OK);
  is_status(bp_stack_push_tensor_list(&s, tl, 2), BP_OK);
  is_status(bp_stack_push_scalar_type(&s, BP_BFLOAT16), BP_OK);
  is_status(bp_stack_push_device(&s, bp_device_make(BP_DEVICE_CUDA, 3)), BP_OK);
  is_status(bp_stack_push_none(&s), BP_OK);
  is_int(s.top, 11);

  bp_tensor *gt;
  int64_t gi;
  double gf;
  bool gb;
  const char *gs;
  const int64_t *gil;
  const double *gfl;
  bp_tensor *const *gtl;
  size_t len;
  int32_t gdt;
  bp_device gd;
  is_status(bp_stack_get_tensor(&s, 0, &gt), BP_OK);
  ok(gt == t);
  is_status(bp_stack_get_int(&s, 1, &gi), BP_OK);
  is_int(gi, -7);
  is_status(bp_stack_get_float(&s, 2, &gf), BP_OK);
  is_double(gf, 2.5, 0);
  is_status(bp_stack_get_bool(&s, 3, &gb), BP_OK);
  ok(gb);
  is_status(bp_stack_get_str(&s, 4, &gs), BP_OK);
  is_str(gs, "tanh");
  is_int(slots[4].len, 4);
  is_status(bp_stack_get_int_list(&s, 5, &gil, &len), BP_OK);
  is_int(len, 3);
  is_int(gil[1], -2);
  is_status(bp_stack_get_float_list(&s, 6, &gfl, &len), BP_OK);
  is_int(len, 2);
  is_double(gfl[1], -1.5, 0);
  is_status(bp_stack_get_tensor_list(&s, 7, &gtl, &len), BP_OK);
  is_int(len, 2);
  ok(gtl[1] == t);
  is_status(bp_stack_get_scalar_type(&s, 8, &gdt), BP_OK);
  is_int(gdt, BP_BFLOAT16);
  is_status(bp_stack_get_device(&s, 9, &gd), BP_OK);
  is_int(gd.type, BP_DEVICE_CUDA);
  is_int(gd.index, 3);
  is_int(bp_stack_tag(&s, 10), BP_TAG_NONE);
  /* Negative indices count from the top. */
  is_int(bp_stack_tag(&s, -1), BP_TAG_NONE);
  is_int(bp_stack_tag(&s, -11), BP_TAG_TENSOR);
  is_int(bp_stack_tag(&s, -12), -1);
  is_int(bp_stack_tag(&s, 11), -1);
  is_status(bp_stack_get_device(&s, -2, &gd), BP_OK);
  /* An int reads as a float, as a float argument accepts it. */
  is_status(bp_stack_get_float(&s, 1, &gf), BP_OK);
  is_double(gf, -7.0, 0);
  bp_stack_pop(&s, 2);
  is_int(s.top, 9);
  bp_stack_pop(&s, 100);
  is_int(s.top, 0);
  bp_tensor_release(t);
}

static void wrong_tags_name_the_slot(void) {
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  int64_t n = 1;
  bp_tensor *t = NULL;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t);
  bp_stack_push_int(&s, 1);
  bp_stack_push_int(&s, 2);
  bp_stack_push_tensor(&s, t);
  double f;
  is_status(bp_stack_get_float(&s, 2, &f), BP_ERR_TYPE);
  is_str(bp_last_error(), "stack slot #2: expected float, got Tensor");
  bp_tensor *gt;
  is_status(bp_stack_get_tensor(&s, 0, &gt), BP_ERR_TYPE);
  is_str(bp_last_error(), "stack slot #0: expected Tensor, got int");
  const char *str;
  is_status(bp_stack_get_str(&s, -1, &str), BP_ERR_TYPE);
  is_str(bp_last_error(), "stack slot #2: expected str, got Tensor");
  int64_t i;
  is_status(bp_stack_get_int(&s, 3, &i), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_last_error(), "stack slot #3: no such slot (the stack holds 3)");
  is_status(bp_stack_get_int(&s, -4, &i), BP_ERR_INVALID_ARGUMENT);
  is_status(bp_stack_get_int(&s, 0, NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "bp_stack_get_int: out is NULL");
  const int64_t *l;
  size_t len;
  is_status(bp_stack_get_int_list(&s, 0, &l, &len), BP_ERR_TYPE);
  is_str(bp_last_error(), "stack slot #0: expected int[], got int");
  is_status(bp_stack_get_int_list(&s, 0, &l, NULL), BP_ERR_INVALID_ARGUMENT);
  bp_tensor_release(t);
}

static void bad_pushes(void) {
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  is_status(bp_stack_push_int(&s, 1), BP_OK);
  is_status(bp_stack_push_int(&s, 2), BP_OK);
  is_status(bp_stack_push_int(&s, 3), BP_ERR_OVERFLOW);
  is_str(bp_last_error(), "bp_stack_push_int: the stack is full (capacity 2)");
  is_int(s.top, 2);
  bp_stack_pop(&s, 2);
  is_status(bp_stack_push_tensor(&s, NULL), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "push None for an absent Tensor?");
  is_status(bp_stack_push_str(&s, NULL), BP_ERR_INVALID_ARGUMENT);
  is_status(bp_stack_push_int_list(&s, NULL, 2), BP_ERR_INVALID_ARGUMENT);
  is_status(bp_stack_push_int_list(&s, NULL, 0), BP_OK); /* an empty list */
  bp_stack_pop(&s, 1);
  bp_tensor *tl[2] = {NULL, NULL};
  is_status(bp_stack_push_tensor_list(&s, tl, 2), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "element 0 is NULL");
  is_status(bp_stack_push_scalar_type(&s, 12345), BP_ERR_TYPE);
  has_str(bp_last_error(), "12345 is not a bp_dtype");
  is_int(s.top, 0);
  is_status(bp_stack_push_int(NULL, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "stack is NULL");
  bp_stack bad = s;
  bad.struct_size = 8;
  is_status(bp_stack_push_int(&bad, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "struct_size is 8");
  bad = s;
  bad.top = 5;
  is_status(bp_stack_push_int(&bad, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "corrupt");
  /* A stack without its array (an unchecked malloc) is corrupt to every
   * function: none reads or writes through it. */
  bp_stack noarray = BP_STACK_INIT(NULL, 4);
  noarray.top = 2;
  is_status(bp_stack_push_int(&noarray, 1), BP_ERR_INVALID_ARGUMENT);
  int64_t got;
  is_status(bp_stack_get_int(&noarray, 0, &got), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "corrupt");
  is_int(bp_stack_tag(&noarray, 0), -1);
  bp_stack_release(&noarray);
  is_int(noarray.top, 2);
}

static void release_drops_result_references(void) {
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  int64_t live = bp_live_tensor_count();
  int64_t n = 3;
  bp_tensor *a = NULL, *b = NULL;
  bp_tensor_empty(BP_CPU, BP_INT32, 1, &n, &a);
  bp_tensor_empty(BP_CPU, BP_INT32, 1, &n, &b);
  /* As results, the stack's tensors are owned by the receiver. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 4);
  bp_stack_push_tensor(&s, b);
  is_int(bp_live_tensor_count(), live + 2);
  bp_stack_release(&s);
  is_int(s.top, 0);
  is_int(bp_live_tensor_count(), live);
  bp_stack_release(NULL);
}

static void tag_names(void) {
  is_str(bp_tag_name(BP_TAG_TENSOR), "Tensor");
  is_str(bp_tag_name(BP_TAG_INT_LIST), "int[]");
  is_str(bp_tag_name(BP_TAG_SCALAR_TYPE), "ScalarType");
  is_str(bp_tag_name(BP_TAG_NONE), "None");
  is_str(bp_tag_name(BP_TAG_COUNT), "?");
  is_str(bp_tag_name(-1), "?");
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(push_and_get_every_tag), TAP_CASE(wrong_tags_name_the_slot),
      TAP_CASE(bad_pushes),             TAP_CASE(release_drops_result_references),
      TAP_CASE(tag_names),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
