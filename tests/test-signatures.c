/*
 * tests/test-signatures.c - how a schema maps to an unboxed kernel's C
 * signature (docs/schemas.md): schemas past the call path's limits are
 * refused at registration with a message, every four-argument signature
 * of the fast path reaches its own trampoline, and optional lists pass
 * (NULL, 0) for None and a non-NULL pointer for an empty list.  Each case
 * registers an in-process plugin.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* An in-process plugin whose setup() tries schemas past the call path's
 * limits and records what the host said. */
static const bp_host_api *limits_host;
static bp_status limits_status[4];
static char limits_msg[4][1024];

static bp_status limits_setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "limits", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  char many[2048] = "many(";
  for (int i = 0; i < 33; i++) {
    char arg[16];
    snprintf(arg, sizeof arg, "%sint a%d", i ? ", " : "", i);
    strcat(many, arg);
  }
  strcat(many, ") -> Tensor");
  /* A name longer than the registry's names (511 bytes with "limits::"). */
  char longname[700];
  memset(longname, 'x', 600);
  strcpy(longname + 600, "(Tensor a) -> Tensor");
  const char *schemas[4] = {many,
                            "rets(Tensor a) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, "
                            "Tensor, Tensor, Tensor)",
                            "listret(Tensor a) -> Tensor[]", longname};
  for (int i = 0; i < 4; i++) {
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = schemas[i];
    limits_status[i] = host->def(lib, &d);
    snprintf(limits_msg[i], sizeof limits_msg[i], "%s", host->last_error());
  }
  return BP_OK;
}

static const bp_plugin_desc limits_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "limits", .setup = limits_setup};

static const bp_plugin_desc *limits_init(const bp_host_api *host) {
  limits_host = host;
  return &limits_desc;
}

static void unmappable_schemas_are_refused(void) {
  is_status(bp_plugin_register(limits_init, "limits", NULL), BP_OK);
  is_int(limits_status[0], BP_ERR_UNSUPPORTED);
  has_str(limits_msg[0], "plugin 'limits': def ");
  has_str(limits_msg[0], "33 arguments and 1 returns exceed the limits of 32 and 8");
  is_int(limits_status[1], BP_ERR_UNSUPPORTED);
  has_str(limits_msg[1], "1 arguments and 9 returns exceed the limits");
  /* List results have no unboxed mapping, and the grammar refuses them. */
  is_int(limits_status[2], BP_ERR_SCHEMA);
  has_str(limits_msg[2], "schema 'listret(Tensor a) -> Tensor[]'");
  const bp_op *op;
  is_status(bp_op_find("limits::many", &op), BP_ERR_NOT_FOUND);
  /* A name that does not fit is refused, not registered cut short under a
   * name that impl() and bp_op_find() could never give. */
  is_int(limits_status[3], BP_ERR_INVALID_ARGUMENT);
  has_str(limits_msg[3], "plugin 'limits': def in 'limits': op name 'limits::xxxx");
  has_str(limits_msg[3], "xxx' is too long (at most 511 characters with its namespace)");
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info info;
    info.struct_size = BP_OP_INFO_STRUCT_SIZE;
    if (bp_op_get_info(bp_op_at(i), &info) == BP_OK) ok(strncmp(info.name, "limits::xxx", 11) != 0);
  }
}

/* An in-process plugin with unboxed kernels of four-argument signatures
 * whose fast-path index is past 127: each must get its own trampoline (or
 * libffi), never another signature's. */
static const bp_host_api *sigs_host;

/* The float64 scalar a + 10 k + 100 x[0] + 1000 y[0]. */
static bp_status sigs_result(double a, int64_t k, bp_tensor *x, bp_tensor *y, bp_tensor **out) {
  bp_status st = sigs_host->tensor_empty(BP_CPU, BP_FLOAT64, 0, NULL, out);
  if (st) return st;
  const float *xv = sigs_host->tensor_view(x)->data, *yv = sigs_host->tensor_view(y)->data;
  *(double *)sigs_host->tensor_view(*out)->data = a + 10.0 * (double)k + 100.0 * xv[0] + 1000.0 * yv[0];
  return BP_OK;
}

static bp_status sigs_fitt(const bp_kernel_ctx *ctx, double a, int64_t k, bp_tensor *x,
                           bp_tensor *y, bp_tensor **out) {
  (void)ctx;
  return sigs_result(a, k, x, y, out);
}

static bp_status sigs_itft(const bp_kernel_ctx *ctx, int64_t k, bp_tensor *x, double a,
                           bp_tensor *y, bp_tensor **out) {
  (void)ctx;
  return sigs_result(a, k, x, y, out);
}

static bp_status sigs_tfff(const bp_kernel_ctx *ctx, bp_tensor *x, double a, double b, double c,
                           bp_tensor **out) {
  (void)ctx;
  return sigs_result(a + b + c, 0, x, x, out);
}

/* sigs::optlist(Tensor x, int[]? l=None) -> Tensor: the float64 scalar -1
 * for None (a NULL pointer), else the list's length. */
static bp_status sigs_optlist(const bp_kernel_ctx *ctx, bp_tensor *x, const int64_t *l, size_t n,
                              bp_tensor **out) {
  (void)ctx;
  (void)x;
  bp_status st = sigs_host->tensor_empty(BP_CPU, BP_FLOAT64, 0, NULL, out);
  if (!st) *(double *)sigs_host->tensor_view(*out)->data = l ? (double)n : -1.0;
  return st;
}

/* sigs::scalars(Tensor x, Scalar s, Scalar? t=None, Scalar u=2.5) -> Tensor:
 * float64 [kinds, s, t, u], kinds = 100 kind(s) + 10 kind(t) + kind(u)
 * with kind 0 for None (a NULL pointer), 1 int, 2 float, 3 bool, and each
 * value as a double (-1 for None). */
static double scalar_value(const bp_value *v, int *kind) {
  if (!v) return *kind = 0, -1;
  switch (v->tag) {
    case BP_TAG_INT: return *kind = 1, (double)v->u.i;
    case BP_TAG_FLOAT: return *kind = 2, v->u.f;
    case BP_TAG_BOOL: return *kind = 3, v->u.b ? 1.0 : 0.0;
    default: return *kind = 9, -9;
  }
}

static bp_status sigs_scalars(const bp_kernel_ctx *ctx, bp_tensor *x, const bp_value *s,
                              const bp_value *t, const bp_value *u, bp_tensor **out) {
  (void)ctx;
  (void)x;
  int64_t four = 4;
  bp_status st = sigs_host->tensor_empty(BP_CPU, BP_FLOAT64, 1, &four, out);
  if (st) return st;
  double *r = sigs_host->tensor_view(*out)->data;
  int ks, kt, ku;
  r[1] = scalar_value(s, &ks);
  r[2] = scalar_value(t, &kt);
  r[3] = scalar_value(u, &ku);
  r[0] = 100.0 * ks + 10.0 * kt + ku;
  return BP_OK;
}

static bp_status sigs_setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "sigs", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = host->library(reg, &ld, &lib);
  if (st) return st;
  static const char *const schemas[3] = {
      "fitt(float a, int k, Tensor x, Tensor y) -> Tensor",
      "itft(int k, Tensor x, float a, Tensor y) -> Tensor",
      "tfff(Tensor x, float a, float b, float c) -> Tensor"};
  static const char *const names[3] = {"fitt", "itft", "tfff"};
  const bp_unboxed_kernel fns[3] = {(bp_unboxed_kernel)(void (*)(void))sigs_fitt,
                                    (bp_unboxed_kernel)(void (*)(void))sigs_itft,
                                    (bp_unboxed_kernel)(void (*)(void))sigs_tfff};
  for (int i = 0; i < 3; i++) {
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = schemas[i];
    if ((st = host->def(lib, &d))) return st;
    bp_kernel_def k = {0};
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = names[i];
    k.device_type = BP_DEVICE_CPU;
    k.unboxed = fns[i];
    if ((st = host->impl(lib, &k))) return st;
  }
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "optlist(Tensor x, int[]? l=None) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "optlist";
  k.device_type = BP_DEVICE_CPU;
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))sigs_optlist;
  if ((st = host->impl(lib, &k))) return st;
  d.schema = "scalars(Tensor x, Scalar s, Scalar? t=None, Scalar u=2.5) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  k.op = "scalars";
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))sigs_scalars;
  return host->impl(lib, &k);
}

static const bp_plugin_desc sigs_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "sigs", .setup = sigs_setup};

static const bp_plugin_desc *sigs_init(const bp_host_api *host) {
  sigs_host = host;
  return &sigs_desc;
}

static void four_argument_signatures(void) {
  if (!ok(bp_plugin_register(sigs_init, "sigs", NULL) == BP_OK)) {
    tap_diag("%s", bp_last_error());
    return;
  }
  const float xv[1] = {3}, yv[1] = {5};
  bp_tensor *x = f32(xv, 1), *y = f32(yv, 1);
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  const char *names[3] = {"sigs::fitt", "sigs::itft", "sigs::tfff"};
  const double want[3] = {0.5 + 70 + 300 + 5000, 0.5 + 70 + 300 + 5000, 0.5 + 0.25 + 2 + 3300};
  for (int i = 0; i < 3; i++) {
    const bp_op *op = must_find(names[i]);
    is_status(bp_op_get_kernel(op, 0, &ki), BP_OK);
    is_int(ki.kind, BP_KERNEL_UNBOXED_FAST);
    bp_value slots[4];
    bp_stack s = BP_STACK_INIT(slots, 4);
    if (i == 0) {
      bp_stack_push_float(&s, 0.5);
      bp_stack_push_int(&s, 7);
      bp_stack_push_tensor(&s, x);
      bp_stack_push_tensor(&s, y);
    } else if (i == 1) {
      bp_stack_push_int(&s, 7);
      bp_stack_push_tensor(&s, x);
      bp_stack_push_float(&s, 0.5);
      bp_stack_push_tensor(&s, y);
    } else {
      bp_stack_push_tensor(&s, x);
      bp_stack_push_float(&s, 0.5);
      bp_stack_push_float(&s, 0.25);
      bp_stack_push_float(&s, 2);
    }
    is_status(bp_call(op, &s), BP_OK);
    bp_tensor *r = NULL;
    if (bp_stack_get_tensor(&s, 0, &r) == BP_OK)
      is_double(*(const double *)bp_tensor_get_view(r)->data, want[i], 0);
    bp_stack_release(&s);
  }
  bp_tensor_release(x);
  bp_tensor_release(y);
  is_int(bp_live_tensor_count(), 0);
}

/* docs/schemas.md: an optional list passes NULL and 0 for None, and an
 * empty list as a non-NULL pointer and 0, however the caller pushed it. */
static double optlist_result(bp_stack *s) {
  const bp_op *op = must_find("sigs::optlist");
  double r = -99;
  bp_status st = bp_call(op, s);
  is_status(st, BP_OK);
  if (st != BP_OK) return r;
  bp_tensor *t = NULL;
  if (bp_stack_get_tensor(s, 0, &t) == BP_OK) r = *(const double *)bp_tensor_get_view(t)->data;
  bp_stack_release(s);
  return r;
}

static void optional_lists_unboxed(void) {
  if (!ok(bp_plugin_register(sigs_init, "sigs", NULL) == BP_OK)) return;
  const float xv[1] = {1};
  bp_tensor *x = f32(xv, 1);
  int64_t two[2] = {5, 6};
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, x);
  is_double(optlist_result(&s), -1, 0); /* the default, None */
  bp_stack_push_tensor(&s, x);
  bp_stack_push_none(&s);
  is_double(optlist_result(&s), -1, 0);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int_list(&s, two, 2);
  is_double(optlist_result(&s), 2, 0);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int_list(&s, two, 0);
  is_double(optlist_result(&s), 0, 0);
  bp_stack_push_tensor(&s, x);
  is_status(bp_stack_push_int_list(&s, NULL, 0), BP_OK); /* empty, not None */
  is_double(optlist_result(&s), 0, 0);
  bp_tensor_release(x);
}

/* docs/schemas.md: a Scalar is passed as a pointer to its value, whose tag
 * says int, float or bool; a Scalar? None as NULL; defaults keep their
 * kind. */
static void scalars_unboxed(void) {
  if (!ok(bp_plugin_register(sigs_init, "sigs", NULL) == BP_OK)) return;
  const float xv[1] = {1};
  bp_tensor *x = f32(xv, 1);
  const bp_op *op = must_find("sigs::scalars");
  struct {
    bp_value s, t;
    int nargs;
    double want[4];
  } cases[] = {
      {{.tag = BP_TAG_INT, .u.i = 3}, {.tag = BP_TAG_NONE}, 2, {102, 3, -1, 2.5}},
      {{.tag = BP_TAG_FLOAT, .u.f = 0.5}, {.tag = BP_TAG_BOOL, .u.b = true}, 3, {232, 0.5, 1, 2.5}},
      {{.tag = BP_TAG_BOOL, .u.b = false}, {.tag = BP_TAG_INT, .u.i = -7}, 3, {312, 0, -7, 2.5}},
      {{.tag = BP_TAG_INT, .u.i = INT64_C(1) << 40}, {.tag = BP_TAG_NONE}, 3,
       {102, 1099511627776.0, -1, 2.5}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    bp_value slots[4];
    bp_stack s = BP_STACK_INIT(slots, 4);
    bp_stack_push_tensor(&s, x);
    slots[s.top++] = cases[c].s;
    if (cases[c].nargs == 3) slots[s.top++] = cases[c].t;
    is_status(bp_call(op, &s), BP_OK);
    bp_tensor *r = NULL;
    if (bp_stack_get_tensor(&s, 0, &r) == BP_OK) {
      const double *v = bp_tensor_get_view(r)->data;
      for (int i = 0; i < 4; i++) is_double(v[i], cases[c].want[i], 0);
    }
    bp_stack_release(&s);
  }
  /* A str, a tensor or None is not a Scalar. */
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_none(&s);
  is_status(bp_call(op, &s), BP_ERR_TYPE);
  has_str(bp_last_error(), "sigs::scalars: argument #1 's': expected Scalar, got None");
  s.top = 1;
  bp_stack_push_tensor(&s, x);
  is_status(bp_call(op, &s), BP_ERR_TYPE);
  has_str(bp_last_error(), "expected Scalar, got Tensor");
  bp_tensor_release(x);
  is_int(bp_live_tensor_count(), 0);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(unmappable_schemas_are_refused),
      TAP_CASE(four_argument_signatures),
      TAP_CASE(optional_lists_unboxed),
      TAP_CASE(scalars_unboxed),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
