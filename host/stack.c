/* host/stack.c - pushing and reading tagged values on a boxed stack. */
#include "internal.h"

#include <string.h>

static const char *const tag_names[BP_TAG_COUNT] = {
    [BP_TAG_NONE] = "None",        [BP_TAG_TENSOR] = "Tensor",
    [BP_TAG_INT] = "int",          [BP_TAG_FLOAT] = "float",
    [BP_TAG_BOOL] = "bool",        [BP_TAG_STR] = "str",
    [BP_TAG_INT_LIST] = "int[]",   [BP_TAG_FLOAT_LIST] = "float[]",
    [BP_TAG_TENSOR_LIST] = "Tensor[]", [BP_TAG_SCALAR_TYPE] = "ScalarType",
    [BP_TAG_DEVICE] = "Device",    [BP_TAG_SCALAR] = "Scalar",
};

BP_API const char *bp_tag_name(int32_t tag) {
  return tag >= 0 && tag < BP_TAG_COUNT ? tag_names[tag] : "?";
}

/* Checks a stack handed in by the caller before it is used. */
static bp_status check_stack(const bp_stack *s, const char *fn) {
  if (!s) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: stack is NULL", fn);
  if (s->struct_size < BP_STACK_STRUCT_SIZE)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: stack->struct_size is %zu, expected %zu (use BP_STACK_INIT)", fn,
                     s->struct_size, (size_t)BP_STACK_STRUCT_SIZE);
  if (s->top > s->capacity || (s->capacity > 0 && !s->values))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: stack is corrupt (top %zu, capacity %zu)", fn,
                     s->top, s->capacity);
  return BP_OK;
}

static bp_status push(bp_stack *s, const char *fn, bp_value v) {
  bp_status st = check_stack(s, fn);
  if (st) return st;
  if (s->top == s->capacity)
    return bp__error(BP_ERR_OVERFLOW, "%s: the stack is full (capacity %zu)", fn, s->capacity);
  s->values[s->top++] = v;
  return BP_OK;
}

static bp_value make(uint32_t tag, uint32_t len) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = tag;
  v.len = len;
  return v;
}

static bp_status check_len(size_t n, const char *fn) {
  if (n > UINT32_MAX)
    return bp__error(BP_ERR_OVERFLOW, "%s: %zu elements exceed the %u a value can hold", fn, n,
                     (unsigned)UINT32_MAX);
  return BP_OK;
}

BP_API bp_status bp_stack_push_none(bp_stack *s) {
  return push(s, "bp_stack_push_none", make(BP_TAG_NONE, 0));
}

BP_API bp_status bp_stack_push_tensor(bp_stack *s, bp_tensor *t) {
  if (!t)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "bp_stack_push_tensor: tensor is NULL (push None for an absent Tensor?)");
  bp_value v = make(BP_TAG_TENSOR, 0);
  v.u.tensor = t;
  return push(s, "bp_stack_push_tensor", v);
}

BP_API bp_status bp_stack_push_int(bp_stack *s, int64_t x) {
  bp_value v = make(BP_TAG_INT, 0);
  v.u.i = x;
  return push(s, "bp_stack_push_int", v);
}

BP_API bp_status bp_stack_push_float(bp_stack *s, double x) {
  bp_value v = make(BP_TAG_FLOAT, 0);
  v.u.f = x;
  return push(s, "bp_stack_push_float", v);
}

BP_API bp_status bp_stack_push_bool(bp_stack *s, bool x) {
  bp_value v = make(BP_TAG_BOOL, 0);
  v.u.b = x;
  return push(s, "bp_stack_push_bool", v);
}

BP_API bp_status bp_stack_push_str(bp_stack *s, const char *x) {
  if (!x) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stack_push_str: string is NULL");
  size_t n = strlen(x);
  bp_status st = check_len(n, "bp_stack_push_str");
  if (st) return st;
  bp_value v = make(BP_TAG_STR, (uint32_t)n);
  v.u.str = x;
  return push(s, "bp_stack_push_str", v);
}

BP_API bp_status bp_stack_push_int_list(bp_stack *s, const int64_t *x, size_t n) {
  if (!x && n) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stack_push_int_list: list is NULL");
  bp_status st = check_len(n, "bp_stack_push_int_list");
  if (st) return st;
  bp_value v = make(BP_TAG_INT_LIST, (uint32_t)n);
  v.u.ints = x;
  return push(s, "bp_stack_push_int_list", v);
}

BP_API bp_status bp_stack_push_float_list(bp_stack *s, const double *x, size_t n) {
  if (!x && n) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stack_push_float_list: list is NULL");
  bp_status st = check_len(n, "bp_stack_push_float_list");
  if (st) return st;
  bp_value v = make(BP_TAG_FLOAT_LIST, (uint32_t)n);
  v.u.floats = x;
  return push(s, "bp_stack_push_float_list", v);
}

BP_API bp_status bp_stack_push_tensor_list(bp_stack *s, bp_tensor *const *x, size_t n) {
  static const char fn[] = "bp_stack_push_tensor_list";
  if (!x && n) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: list is NULL", fn);
  bp_status st = check_len(n, fn);
  if (st) return st;
  for (size_t i = 0; i < n; i++)
    if (!x[i]) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: element %zu is NULL", fn, i);
  bp_value v = make(BP_TAG_TENSOR_LIST, (uint32_t)n);
  v.u.tensors = x;
  return push(s, fn, v);
}

BP_API bp_status bp_stack_push_scalar_type(bp_stack *s, int32_t dtype) {
  if (!bp_dtype_name(dtype))
    return bp__error(BP_ERR_TYPE, "bp_stack_push_scalar_type: %d is not a bp_dtype", (int)dtype);
  bp_value v = make(BP_TAG_SCALAR_TYPE, 0);
  v.u.i = dtype;
  return push(s, "bp_stack_push_scalar_type", v);
}

BP_API bp_status bp_stack_push_device(bp_stack *s, bp_device d) {
  bp_value v = make(BP_TAG_DEVICE, 0);
  v.u.device = d;
  return push(s, "bp_stack_push_device", v);
}

/* Finds slot idx (negative counts from the top) holding `want`. */
static bp_status slot(const bp_stack *s, int64_t idx, uint32_t want, const char *fn,
                      const bp_value **out) {
  bp_status st = check_stack(s, fn);
  if (st) return st;
  int64_t i = idx < 0 ? (int64_t)s->top + idx : idx;
  if (i < 0 || i >= (int64_t)s->top)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "stack slot #%lld: no such slot (the stack holds %zu)",
                     (long long)idx, s->top);
  const bp_value *v = &s->values[i];
  if (v->tag != want && !(want == BP_TAG_FLOAT && v->tag == BP_TAG_INT))
    return bp__error(BP_ERR_TYPE, "stack slot #%lld: expected %s, got %s", (long long)i,
                     bp_tag_name((int32_t)want), bp_tag_name((int32_t)v->tag));
  *out = v;
  return BP_OK;
}

#define GET(fn_name, tag, type, expr)                                   \
  BP_API bp_status fn_name(const bp_stack *s, int64_t idx, type *out) { \
    const bp_value *v;                                                  \
    if (!out) return bp__error(BP_ERR_INVALID_ARGUMENT, #fn_name ": out is NULL"); \
    bp_status st = slot(s, idx, tag, #fn_name, &v);                    \
    if (st) return st;                                                  \
    *out = (expr);                                                      \
    return BP_OK;                                                       \
  }

GET(bp_stack_get_tensor, BP_TAG_TENSOR, bp_tensor *, v->u.tensor)
GET(bp_stack_get_int, BP_TAG_INT, int64_t, v->u.i)
GET(bp_stack_get_float, BP_TAG_FLOAT, double, v->tag == BP_TAG_INT ? (double)v->u.i : v->u.f)
GET(bp_stack_get_bool, BP_TAG_BOOL, bool, v->u.b)
GET(bp_stack_get_str, BP_TAG_STR, const char *, v->u.str)
GET(bp_stack_get_scalar_type, BP_TAG_SCALAR_TYPE, int32_t, (int32_t)v->u.i)
GET(bp_stack_get_device, BP_TAG_DEVICE, bp_device, v->u.device)

#define GET_LIST(fn_name, tag, type, member)                                        \
  BP_API bp_status fn_name(const bp_stack *s, int64_t idx, type *out, size_t *out_n) { \
    const bp_value *v;                                                              \
    if (!out || !out_n)                                                             \
      return bp__error(BP_ERR_INVALID_ARGUMENT, #fn_name ": %s is NULL",           \
                       !out ? "out" : "out_n");                                     \
    bp_status st = slot(s, idx, tag, #fn_name, &v);                                \
    if (st) return st;                                                              \
    *out = v->u.member;                                                             \
    *out_n = v->len;                                                                \
    return BP_OK;                                                                   \
  }

GET_LIST(bp_stack_get_int_list, BP_TAG_INT_LIST, const int64_t *, ints)
GET_LIST(bp_stack_get_float_list, BP_TAG_FLOAT_LIST, const double *, floats)
GET_LIST(bp_stack_get_tensor_list, BP_TAG_TENSOR_LIST, bp_tensor *const *, tensors)

BP_API int32_t bp_stack_tag(const bp_stack *s, int64_t idx) {
  if (!s || s->struct_size < BP_STACK_STRUCT_SIZE || s->top > s->capacity ||
      (s->capacity > 0 && !s->values))
    return -1;
  int64_t i = idx < 0 ? (int64_t)s->top + idx : idx;
  if (i < 0 || i >= (int64_t)s->top) return -1;
  return (int32_t)s->values[i].tag;
}

BP_API void bp_stack_pop(bp_stack *s, size_t n) {
  if (!s || s->top > s->capacity) return;
  s->top = n >= s->top ? 0 : s->top - n;
}

BP_API void bp_stack_release(bp_stack *s) {
  /* A corrupt stack is left alone: releasing through it would be worse. */
  if (!s || s->top > s->capacity || (s->capacity > 0 && !s->values)) return;
  for (size_t i = 0; i < s->top; i++)
    if (s->values[i].tag == BP_TAG_TENSOR) bp_tensor_release(s->values[i].u.tensor);
  s->top = 0;
}
