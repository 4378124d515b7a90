/*
 * tests/test-schema.c - the operator-schema parser and printer.
 *
 * Two corpora drive most of it: valid schemas with their canonical text,
 * and invalid schemas with the column and a key phrase of the message.
 * The detailed cases check the parsed structure field by field; the last
 * parses with a comma decimal point.  test-schema-stress.c feeds the
 * parser mutated and truncated text and fails each allocation in turn.
 */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/abi.h>

#include "../host/schema.h"
#include "tap.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#include "schema-corpus.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* format(parse(text)) is the canonical text, and parsing that gives the
 * same text again; the text without "ns::" is the same minus the prefix. */
static void check_valid(const valid_case *c) {
  const char *want = c->canon ? c->canon : c->text;
  bp__schema *s = parse_ok(c->text);
  if (!s) return;
  char *once = format_new(s, true);
  if (!is_str(once, want)) tap_diag("  schema: %s", c->text);
  char *bare = format_new(s, false);
  if (s->ns && once && bare) {
    size_t skip = strlen(s->ns) + 2;
    is_str(bare, once + skip);
  } else {
    is_str(bare, once);
  }
  bp__schema *again = once ? parse_ok(once) : NULL;
  if (again) {
    char *twice = format_new(again, true);
    is_str(twice, once);
    free(twice);
  }
  bp__schema_free(again);
  free(bare);
  free(once);
  bp__schema_free(s);
}

static void check_valid_all(const valid_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) check_valid(&cases[i]);
}

static void check_invalid(const invalid_case *c) {
  bp__schema *s = (bp__schema *)&s; /* must stay untouched */
  bp__schema *const before = s;
  char err[512] = "unchanged";
  char col[32];
  int st = bp__schema_parse(c->text, &s, err, sizeof err);
  snprintf(col, sizeof col, "column %d: ", c->column);
  bool good = is_int(st, BP_ERR_SCHEMA);
  good &= ok(s == before);
  good &= ok(strncmp(err, col, strlen(col)) == 0);
  good &= has_str(err, c->phrase);
  if (!good) {
    tap_diag("  schema: %s", c->text);
    tap_diag("  error:  %s", err);
    tap_diag("  wanted: %s... %s", col, c->phrase);
  }
  if (st == BP_OK && s != before) bp__schema_free(s);
}

static void check_invalid_all(const invalid_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) check_invalid(&cases[i]);
}

/* Checks one argument's type fields; alias may be NULL. */
static void check_arg(const bp__arg *a, const char *name, int type,
                      int32_t value_tag, bool optional, bool kwarg_only) {
  is_str(a->name, name);
  is_int(a->type, type);
  is_int(a->value_tag, value_tag);
  is_int(a->optional, optional);
  is_int(a->kwarg_only, kwarg_only);
}

static void check_list(const bp__arg *a, bool is_list, int64_t size) {
  is_int(a->is_list, is_list);
  is_int(a->list_size, size);
}

static void check_alias(const bp__arg *a, const char *set, bool is_write) {
  is_str(a->alias_set, set);
  is_int(a->is_write, is_write);
}

static void check_no_default(const bp__arg *a) {
  ok(!a->has_default);
}

static void check_default_tag(const bp__arg *a, int32_t tag) {
  ok(a->has_default);
  is_int(a->default_value.tag, tag);
}

/* ------------------------------------------------------------------------ */
/* Cases: corpora                                                           */
/* ------------------------------------------------------------------------ */

static void valid_basic_corpus(void) {
  check_valid_all(valid_basic, n_valid_basic);
}
static void valid_optional_corpus(void) {
  check_valid_all(valid_optional, n_valid_optional);
}
static void valid_defaults_corpus(void) {
  check_valid_all(valid_defaults, n_valid_defaults);
}
static void valid_lists_corpus(void) {
  check_valid_all(valid_lists, n_valid_lists);
}
static void valid_alias_corpus(void) {
  check_valid_all(valid_alias, n_valid_alias);
}
static void valid_returns_corpus(void) {
  check_valid_all(valid_returns, n_valid_returns);
}
static void invalid_syntax_corpus(void) {
  check_invalid_all(invalid_syntax, n_invalid_syntax);
}
static void invalid_semantic_corpus(void) {
  check_invalid_all(invalid_semantic, n_invalid_semantic);
}

static void corpus_sizes(void) {
  size_t nvalid = n_valid_basic + n_valid_optional +
                  n_valid_defaults + n_valid_lists +
                  n_valid_alias + n_valid_returns;
  size_t ninvalid = n_invalid_syntax + n_invalid_semantic;
  tap_diag("corpus: %zu valid, %zu invalid schemas", nvalid, ninvalid);
  cmp_ok(nvalid, ">=", 70);
  cmp_ok(ninvalid, ">=", 50);
}

/* ------------------------------------------------------------------------ */
/* Cases: structure                                                         */
/* ------------------------------------------------------------------------ */

static void detail_names(void) {
  bp__schema *s = parse_ok(
      "ns::op.overload(Tensor a, Tensor(a!) out, float c=1.0, *, "
      "int dim=-1) -> Tensor");
  if (!s) return;
  is_str(s->ns, "ns");
  is_str(s->name, "op");
  is_str(s->overload, "overload");
  is_int(s->nargs, 4);
  is_int(s->npositional, 3);
  is_int(s->nrets, 1);
  check_arg(&s->args[0], "a", BP__T_TENSOR, BP_TAG_TENSOR, false, false);
  check_alias(&s->args[0], NULL, false);
  check_no_default(&s->args[0]);
  check_arg(&s->args[1], "out", BP__T_TENSOR, BP_TAG_TENSOR, false, false);
  check_alias(&s->args[1], "a", true);
  check_arg(&s->args[2], "c", BP__T_FLOAT, BP_TAG_FLOAT, false, false);
  check_default_tag(&s->args[2], BP_TAG_FLOAT);
  is_double(s->args[2].default_value.u.f, 1.0, 0);
  check_arg(&s->args[3], "dim", BP__T_INT, BP_TAG_INT, false, true);
  check_default_tag(&s->args[3], BP_TAG_INT);
  is_int(s->args[3].default_value.u.i, -1);
  check_list(&s->args[3], false, -1);
  is_str(s->rets[0].name, NULL);
  is_int(s->rets[0].type, BP__T_TENSOR);
  is_int(s->rets[0].value_tag, BP_TAG_TENSOR);
  check_alias(&s->rets[0], NULL, false);
  bp__schema_free(s);

  /* No namespace, no overload. */
  s = parse_ok("relu(Tensor self) -> Tensor");
  if (!s) return;
  is_str(s->ns, NULL);
  is_str(s->name, "relu");
  is_str(s->overload, "");
  is_int(s->nargs, 1);
  is_int(s->npositional, 1);
  bp__schema_free(s);

  /* Overload without namespace; nothing at all between the parentheses. */
  s = parse_ok("  f.out ( ) -> ( ) ");
  if (!s) return;
  is_str(s->ns, NULL);
  is_str(s->name, "f");
  is_str(s->overload, "out");
  is_int(s->nargs, 0);
  is_int(s->npositional, 0);
  is_int(s->nrets, 0);
  bp__schema_free(s);

  /* Everything keyword-only. */
  s = parse_ok("f(*, Tensor a, int b=2) -> ()");
  if (!s) return;
  is_int(s->nargs, 2);
  is_int(s->npositional, 0);
  ok(s->args[0].kwarg_only);
  ok(s->args[1].kwarg_only);
  bp__schema_free(s);
}

static void detail_types(void) {
  bp__schema *s = parse_ok(
      "f(Tensor t, int i, SymInt si, float f, bool b, str s, ScalarType st, "
      "Device d) -> ()");
  if (!s) return;
  is_int(s->nargs, 8);
  const bp__arg *a = s->args;
  check_arg(&a[0], "t", BP__T_TENSOR, BP_TAG_TENSOR, false, false);
  check_arg(&a[1], "i", BP__T_INT, BP_TAG_INT, false, false);
  check_arg(&a[2], "si", BP__T_INT, BP_TAG_INT, false, false);
  check_arg(&a[3], "f", BP__T_FLOAT, BP_TAG_FLOAT, false, false);
  check_arg(&a[4], "b", BP__T_BOOL, BP_TAG_BOOL, false, false);
  check_arg(&a[5], "s", BP__T_STR, BP_TAG_STR, false, false);
  check_arg(&a[6], "st", BP__T_SCALAR_TYPE, BP_TAG_SCALAR_TYPE, false, false);
  check_arg(&a[7], "d", BP__T_DEVICE, BP_TAG_DEVICE, false, false);
  for (size_t i = 0; i < s->nargs; i++) {
    check_list(&a[i], false, -1);
    check_alias(&a[i], NULL, false);
    check_no_default(&a[i]);
  }
  bp__schema_free(s);

  /* Optionals keep the tag a present value has. */
  s = parse_ok("f(Tensor? t, int? i, float? f, bool? b, str? s, "
               "ScalarType? st, Device? d, int[]? l) -> ()");
  if (!s) return;
  a = s->args;
  check_arg(&a[0], "t", BP__T_TENSOR, BP_TAG_TENSOR, true, false);
  check_arg(&a[1], "i", BP__T_INT, BP_TAG_INT, true, false);
  check_arg(&a[2], "f", BP__T_FLOAT, BP_TAG_FLOAT, true, false);
  check_arg(&a[3], "b", BP__T_BOOL, BP_TAG_BOOL, true, false);
  check_arg(&a[4], "s", BP__T_STR, BP_TAG_STR, true, false);
  check_arg(&a[5], "st", BP__T_SCALAR_TYPE, BP_TAG_SCALAR_TYPE, true, false);
  check_arg(&a[6], "d", BP__T_DEVICE, BP_TAG_DEVICE, true, false);
  check_arg(&a[7], "l", BP__T_INT, BP_TAG_INT_LIST, true, false);
  check_list(&a[7], true, -1);
  bp__schema_free(s);
}

static void detail_lists(void) {
  bp__schema *s = parse_ok(
      "f(int[] a, int[2] b, SymInt[3] c, float[] d, float[4] e, Tensor[] g, "
      "Tensor[2] h, int[]? i, Tensor[]? j, float[2]? k) -> ()");
  if (!s) return;
  const bp__arg *a = s->args;
  is_int(s->nargs, 10);
  check_arg(&a[0], "a", BP__T_INT, BP_TAG_INT_LIST, false, false);
  check_list(&a[0], true, -1);
  check_arg(&a[1], "b", BP__T_INT, BP_TAG_INT_LIST, false, false);
  check_list(&a[1], true, 2);
  check_arg(&a[2], "c", BP__T_INT, BP_TAG_INT_LIST, false, false);
  check_list(&a[2], true, 3);
  check_arg(&a[3], "d", BP__T_FLOAT, BP_TAG_FLOAT_LIST, false, false);
  check_list(&a[3], true, -1);
  check_arg(&a[4], "e", BP__T_FLOAT, BP_TAG_FLOAT_LIST, false, false);
  check_list(&a[4], true, 4);
  check_arg(&a[5], "g", BP__T_TENSOR, BP_TAG_TENSOR_LIST, false, false);
  check_list(&a[5], true, -1);
  check_arg(&a[6], "h", BP__T_TENSOR, BP_TAG_TENSOR_LIST, false, false);
  check_list(&a[6], true, 2);
  check_arg(&a[7], "i", BP__T_INT, BP_TAG_INT_LIST, true, false);
  check_list(&a[7], true, -1);
  check_arg(&a[8], "j", BP__T_TENSOR, BP_TAG_TENSOR_LIST, true, false);
  check_list(&a[8], true, -1);
  check_arg(&a[9], "k", BP__T_FLOAT, BP_TAG_FLOAT_LIST, true, false);
  check_list(&a[9], true, 2);
  bp__schema_free(s);

  s = parse_ok("f(int[2] stride=1, int[] e=[], int[] l=[3, -4, 5], "
               "float[3] w=0.5, float[] v=[1, -2.5], float[] z=[], "
               "int[]? n=None, int[]? m=[7]) -> ()");
  if (!s) return;
  a = s->args;
  check_default_tag(&a[0], BP_TAG_INT_LIST);
  is_int(a[0].default_value.len, 2);
  if (a[0].default_value.len == 2) {
    is_int(a[0].default_value.u.ints[0], 1);
    is_int(a[0].default_value.u.ints[1], 1);
  }
  /* An empty list is a real array, not NULL, so it differs from None. */
  check_default_tag(&a[1], BP_TAG_INT_LIST);
  is_int(a[1].default_value.len, 0);
  ok(a[1].default_value.u.ints != NULL);
  check_default_tag(&a[2], BP_TAG_INT_LIST);
  is_int(a[2].default_value.len, 3);
  if (a[2].default_value.len == 3) {
    is_int(a[2].default_value.u.ints[0], 3);
    is_int(a[2].default_value.u.ints[1], -4);
    is_int(a[2].default_value.u.ints[2], 5);
  }
  check_default_tag(&a[3], BP_TAG_FLOAT_LIST);
  is_int(a[3].default_value.len, 3);
  for (uint32_t i = 0; i < a[3].default_value.len; i++)
    is_double(a[3].default_value.u.floats[i], 0.5, 0);
  check_default_tag(&a[4], BP_TAG_FLOAT_LIST);
  is_int(a[4].default_value.len, 2);
  if (a[4].default_value.len == 2) {
    is_double(a[4].default_value.u.floats[0], 1.0, 0);
    is_double(a[4].default_value.u.floats[1], -2.5, 0);
  }
  check_default_tag(&a[5], BP_TAG_FLOAT_LIST);
  is_int(a[5].default_value.len, 0);
  ok(a[5].default_value.u.floats != NULL);
  check_default_tag(&a[6], BP_TAG_NONE);
  check_default_tag(&a[7], BP_TAG_INT_LIST);
  is_int(a[7].default_value.len, 1);
  if (a[7].default_value.len == 1) is_int(a[7].default_value.u.ints[0], 7);
  bp__schema_free(s);
}

static void detail_defaults(void) {
  bp__schema *s = parse_ok(
      "f(int a=3, int b=-9223372036854775808, float c=-1e-05, float d=2, "
      "float e=-0.0, bool f=True, bool g=False, str h=\"tanh\", "
      "str i='a\\\\b\\'c\\\"d', str j=\"\", ScalarType k=bfloat16, "
      "Tensor? l=None, Device? m=None, int? n=None, int? o=5, "
      "float x=.5, float y=1e5) -> ()");
  if (!s) return;
  const bp__arg *a = s->args;
  is_int(s->nargs, 17);
  check_default_tag(&a[0], BP_TAG_INT);
  is_int(a[0].default_value.u.i, 3);
  check_default_tag(&a[1], BP_TAG_INT);
  ok(a[1].default_value.u.i == INT64_MIN);
  check_default_tag(&a[2], BP_TAG_FLOAT);
  ok(a[2].default_value.u.f == -1e-05);
  /* An int literal for a float is stored as a float. */
  check_default_tag(&a[3], BP_TAG_FLOAT);
  ok(a[3].default_value.u.f == 2.0);
  check_default_tag(&a[4], BP_TAG_FLOAT);
  ok(a[4].default_value.u.f == 0.0 && signbit(a[4].default_value.u.f));
  check_default_tag(&a[5], BP_TAG_BOOL);
  ok(a[5].default_value.u.b);
  check_default_tag(&a[6], BP_TAG_BOOL);
  ok(!a[6].default_value.u.b);
  check_default_tag(&a[7], BP_TAG_STR);
  is_str(a[7].default_value.u.str, "tanh");
  is_int(a[7].default_value.len, 4);
  check_default_tag(&a[8], BP_TAG_STR);
  is_str(a[8].default_value.u.str, "a\\b'c\"d");
  is_int(a[8].default_value.len, 7);
  check_default_tag(&a[9], BP_TAG_STR);
  is_str(a[9].default_value.u.str, "");
  is_int(a[9].default_value.len, 0);
  check_default_tag(&a[10], BP_TAG_SCALAR_TYPE);
  is_int(a[10].default_value.u.i, BP_BFLOAT16);
  check_default_tag(&a[11], BP_TAG_NONE);
  is_int(a[11].value_tag, BP_TAG_TENSOR);
  check_default_tag(&a[12], BP_TAG_NONE);
  is_int(a[12].value_tag, BP_TAG_DEVICE);
  check_default_tag(&a[13], BP_TAG_NONE);
  check_default_tag(&a[14], BP_TAG_INT);
  is_int(a[14].default_value.u.i, 5);
  ok(a[14].optional);
  check_default_tag(&a[15], BP_TAG_FLOAT);
  ok(a[15].default_value.u.f == 0.5);
  check_default_tag(&a[16], BP_TAG_FLOAT);
  ok(a[16].default_value.u.f == 1e5);
  bp__schema_free(s);

  /* Every dtype name and its code from abi.h. */
  static const struct {
    const char *name;
    int32_t code;
  } dtypes[] = {
      {"float32", BP_FLOAT32}, {"float64", BP_FLOAT64},
      {"float16", BP_FLOAT16}, {"bfloat16", BP_BFLOAT16},
      {"int8", BP_INT8},       {"int16", BP_INT16},
      {"int32", BP_INT32},     {"int64", BP_INT64},
      {"uint8", BP_UINT8},     {"bool", BP_BOOL},
  };
  for (size_t i = 0; i < N_ELEMS(dtypes); i++) {
    char text[96];
    snprintf(text, sizeof text, "f(ScalarType? t=%s) -> ()", dtypes[i].name);
    s = parse_ok(text);
    if (!s) continue;
    check_default_tag(&s->args[0], BP_TAG_SCALAR_TYPE);
    is_int(s->args[0].default_value.u.i, dtypes[i].code);
    bp__schema_free(s);
  }
}

static void detail_alias(void) {
  bp__schema *s = parse_ok(
      "f(Tensor(a) x, Tensor(b!) y, Tensor(c!)[] z, Tensor(d!)? w, "
      "Tensor(e)[]? v) -> (Tensor(a) r, Tensor(b!), Tensor(q!) extra)");
  if (!s) return;
  const bp__arg *a = s->args;
  check_alias(&a[0], "a", false);
  check_alias(&a[1], "b", true);
  check_alias(&a[2], "c", true);
  check_list(&a[2], true, -1);
  is_int(a[2].value_tag, BP_TAG_TENSOR_LIST);
  check_alias(&a[3], "d", true);
  ok(a[3].optional);
  check_alias(&a[4], "e", false);
  ok(a[4].optional && a[4].is_list);
  is_int(s->nrets, 3);
  is_str(s->rets[0].name, "r");
  check_alias(&s->rets[0], "a", false);
  is_str(s->rets[1].name, NULL);
  check_alias(&s->rets[1], "b", true);
  /* A return may name an alias set that no argument has. */
  is_str(s->rets[2].name, "extra");
  check_alias(&s->rets[2], "q", true);
  bp__schema_free(s);
}

static void detail_returns(void) {
  bp__schema *s = parse_ok(
      "f(Tensor x) -> (Tensor values, SymInt n, float m, bool b, "
      "ScalarType t)");
  if (!s) return;
  is_int(s->nrets, 5);
  const bp__arg *r = s->rets;
  is_str(r[0].name, "values");
  is_int(r[0].type, BP__T_TENSOR);
  is_int(r[0].value_tag, BP_TAG_TENSOR);
  is_int(r[1].type, BP__T_INT);
  is_int(r[1].value_tag, BP_TAG_INT);
  is_int(r[2].value_tag, BP_TAG_FLOAT);
  is_int(r[3].value_tag, BP_TAG_BOOL);
  is_int(r[4].value_tag, BP_TAG_SCALAR_TYPE);
  for (size_t i = 0; i < s->nrets; i++) {
    ok(!r[i].has_default);
    ok(!r[i].is_list);
    ok(!r[i].optional);
    ok(!r[i].kwarg_only);
  }
  bp__schema_free(s);

  s = parse_ok("f(Tensor x) -> (Tensor, Tensor)");
  if (!s) return;
  is_int(s->nrets, 2);
  is_str(s->rets[0].name, NULL);
  is_str(s->rets[1].name, NULL);
  bp__schema_free(s);

  s = parse_ok("f(Tensor x) -> Tensor out");
  if (!s) return;
  is_int(s->nrets, 1);
  is_str(s->rets[0].name, "out");
  bp__schema_free(s);
}

/* Scalar (ABI 1.2): its value's tag says which kind of number it is, in a
 * default as in a call; the canonical text keeps the kind (1 vs 1.0). */
static void detail_scalar(void) {
  bp__schema *s = parse_ok(
      "add.Scalar(Tensor self, Scalar other, Scalar alpha=1, Scalar? lo=None, "
      "Scalar f=-2.5, Scalar b=True, Scalar e=1e3, Scalar? m=0.0) -> Tensor");
  if (!s) return;
  is_int(s->nargs, 8);
  const bp__arg *a = s->args;
  check_arg(&a[1], "other", BP__T_SCALAR, BP_TAG_SCALAR, false, false);
  check_no_default(&a[1]);
  check_arg(&a[2], "alpha", BP__T_SCALAR, BP_TAG_SCALAR, false, false);
  check_default_tag(&a[2], BP_TAG_INT);
  is_int(a[2].default_value.u.i, 1);
  check_arg(&a[3], "lo", BP__T_SCALAR, BP_TAG_SCALAR, true, false);
  check_default_tag(&a[3], BP_TAG_NONE);
  check_default_tag(&a[4], BP_TAG_FLOAT);
  is_double(a[4].default_value.u.f, -2.5, 0);
  check_default_tag(&a[5], BP_TAG_BOOL);
  ok(a[5].default_value.u.b);
  check_default_tag(&a[6], BP_TAG_FLOAT);
  is_double(a[6].default_value.u.f, 1000, 0);
  check_default_tag(&a[7], BP_TAG_FLOAT);
  char buf[256];
  bp__schema_format(s, false, buf, sizeof buf);
  is_str(buf, "add.Scalar(Tensor self, Scalar other, Scalar alpha=1, Scalar? lo=None, "
              "Scalar f=-2.5, Scalar b=True, Scalar e=1000.0, Scalar? m=0.0) -> Tensor");
  char ty[32];
  bp__arg_type_format(&a[3], ty, sizeof ty);
  is_str(ty, "Scalar?");
  bp__schema_free(s);
}

/* ------------------------------------------------------------------------ */
/* Cases: printing and the error buffer                                     */
/* ------------------------------------------------------------------------ */

static void format_buffers(void) {
  const char *text = "ns::f.o(Tensor(a!) x, int[2] s=[1, 1]) -> Tensor(a!)";
  bp__schema *s = parse_ok(text);
  if (!s) return;
  size_t n = strlen(text);
  is_int(bp__schema_format(s, true, NULL, 0), n);

  /* Truncation keeps a NUL-terminated prefix and still returns the full
   * length. */
  char small[11];
  memset(small, 'X', sizeof small);
  is_int(bp__schema_format(s, true, small, sizeof small), n);
  is_str(small, "ns::f.o(Te");
  char one[1] = {'X'};
  is_int(bp__schema_format(s, true, one, 1), n);
  is_int(one[0], '\0');

  char full[128];
  is_int(bp__schema_format(s, false, full, sizeof full), n - 4);
  is_str(full, "f.o(Tensor(a!) x, int[2] s=[1, 1]) -> Tensor(a!)");

  char ty[32];
  is_int(bp__arg_type_format(&s->args[0], ty, sizeof ty), 10);
  is_str(ty, "Tensor(a!)");
  bp__arg_type_format(&s->args[1], ty, sizeof ty);
  is_str(ty, "int[2]");
  is_int(bp__arg_type_format(&s->args[1], NULL, 0), 6);
  char tiny[4];
  is_int(bp__arg_type_format(&s->args[0], tiny, sizeof tiny), 10);
  is_str(tiny, "Ten");
  bp__schema_free(s);

  s = parse_ok("f(float? a, Tensor(b)[]? c, SymInt[] d, Tensor? e) -> ()");
  if (!s) return;
  bp__arg_type_format(&s->args[0], ty, sizeof ty);
  is_str(ty, "float?");
  bp__arg_type_format(&s->args[1], ty, sizeof ty);
  is_str(ty, "Tensor(b)[]?");
  bp__arg_type_format(&s->args[2], ty, sizeof ty);
  is_str(ty, "int[]");
  bp__arg_type_format(&s->args[3], ty, sizeof ty);
  is_str(ty, "Tensor?");
  bp__schema_free(s);

  /* NULL schema and NULL argument print nothing. */
  char empty[4] = "xyz";
  is_int(bp__schema_format(NULL, true, empty, sizeof empty), 0);
  is_str(empty, "");
  is_int(bp__arg_type_format(NULL, NULL, 0), 0);
  bp__schema_free(NULL);
}

/* Schemas that mean the same print the same. */
static void format_canonical(void) {
  static const char *const same[][2] = {
      {"f(int[2] s=1) -> ()", "f(int[2] s=[1, 1]) -> ()"},
      {"f(float c=1) -> ()", "f(float c=1.0) -> ()"},
      {"f(float c=1e0) -> ()", "f(float c=10e-1) -> ()"},
      {"f(SymInt x) -> SymInt", "f(int x) -> int"},
      {"f(str s='a') -> ()", "f(str s=\"a\") -> ()"},
      {"f(Tensor x) -> (Tensor)", "f(Tensor x) -> Tensor"},
      {"f(Tensor x) -> Tensor y", "f(Tensor x) -> (Tensor y)"},
      {"f( Tensor x ,*,int y=0)->( )", "f(Tensor x, *, int y=0) -> ()"},
  };
  for (size_t i = 0; i < N_ELEMS(same); i++) {
    bp__schema *a = parse_ok(same[i][0]);
    bp__schema *b = parse_ok(same[i][1]);
    if (a && b) {
      char *fa = format_new(a, true), *fb = format_new(b, true);
      if (!is_str(fa, fb))
        tap_diag("  schemas: %s | %s", same[i][0], same[i][1]);
      free(fa);
      free(fb);
    }
    bp__schema_free(a);
    bp__schema_free(b);
  }
}

static void error_buffer(void) {
  const char *bad = "f(Tensor a, Tensor a) -> ()";
  bp__schema *s = NULL;

  /* A short buffer gets a NUL-terminated prefix. */
  char err[12];
  memset(err, 'X', sizeof err);
  is_int(bp__schema_parse(bad, &s, err, sizeof err), BP_ERR_SCHEMA);
  is_str(err, "column 20: ");
  ok(s == NULL);
  char tiny[4];
  is_int(bp__schema_parse(bad, &s, tiny, sizeof tiny), BP_ERR_SCHEMA);
  is_str(tiny, "col");

  /* No buffer at all is fine. */
  is_int(bp__schema_parse(bad, &s, NULL, 0), BP_ERR_SCHEMA);
  char keep[8] = "keep";
  is_int(bp__schema_parse(bad, &s, keep, 0), BP_ERR_SCHEMA);
  is_str(keep, "keep");
  ok(s == NULL);

  /* Success clears the message. */
  char msg[64] = "stale";
  is_int(bp__schema_parse("f() -> ()", &s, msg, sizeof msg), BP_OK);
  is_str(msg, "");
  bp__schema_free(s);
  s = NULL;

  /* NULL text is a schema error; NULL out is a caller bug. */
  char m2[64];
  is_int(bp__schema_parse(NULL, &s, m2, sizeof m2), BP_ERR_SCHEMA);
  has_str(m2, "column 1: ");
  ok(s == NULL);
  is_int(bp__schema_parse("f() -> ()", NULL, m2, sizeof m2),
         BP_ERR_INVALID_ARGUMENT);

  /* Long tokens are quoted shortened; non-ASCII bytes are escaped. */
  char m3[256];
  is_int(bp__schema_parse("f(Tensor a) -> Tensor "
                          "abcdefghijklmnopqrstuvwxyz0123456789 x",
                          &s, m3, sizeof m3),
         BP_ERR_SCHEMA);
  has_str(m3, "column 60: expected end of input but got 'x'");
  is_int(bp__schema_parse("f(Tensor a) -> () "
                          "abcdefghijklmnopqrstuvwxyz0123456789",
                          &s, m3, sizeof m3),
         BP_ERR_SCHEMA);
  has_str(m3, "got 'abcdefghijklmnopqrstuvwx...'");
  is_int(bp__schema_parse("f(Tensor \xc3\xa9) -> ()", &s, m3, sizeof m3),
         BP_ERR_SCHEMA);
  has_str(m3, "column 10: expected an argument name but got '\\xc3'");

  /* A float literal longer than any double needs is refused, not copied. */
  char text[400];
  char *p = text;
  p += sprintf(p, "f(float x=0.");
  for (int i = 0; i < 300; i++) *p++ = '1';
  strcpy(p, ") -> ()");
  is_int(bp__schema_parse(text, &s, m3, sizeof m3), BP_ERR_SCHEMA);
  has_str(m3, "column 11: float literal is too long");
}

/* ------------------------------------------------------------------------ */
/* Locale: numbers read and print with '.' whatever LC_NUMERIC says         */
/* ------------------------------------------------------------------------ */

static void comma_locale(void) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE",
                                      "fr_FR.UTF-8", "fr_FR.utf8", "fr_FR"};
  const char *got = NULL;
  for (size_t i = 0; i < N_ELEMS(names) && !got; i++)
    got = setlocale(LC_NUMERIC, names[i]);
  char probe[16];
  snprintf(probe, sizeof probe, "%.1f", 1.5);
  if (!got || strcmp(probe, "1.5") == 0) {
    /* Not tap_skip(): under TAP_NOFORK=1 it would end the whole run. */
    setlocale(LC_NUMERIC, "C");
    tap_diag("comma_locale: no locale with a comma decimal point is "
             "installed; nothing checked");
    return;
  }
  const char *text = "f(float a=1.5, float b=-1e-05, float[] c=[0.25, 3], "
                     "float d=.5) -> ()";
  bp__schema *s = parse_ok(text);
  if (s) {
    is_double(s->args[0].default_value.u.f, 1.5, 0);
    is_double(s->args[1].default_value.u.f, -1e-05, 0);
    is_double(s->args[2].default_value.u.floats[0], 0.25, 0);
    is_double(s->args[3].default_value.u.f, 0.5, 0);
    char *f = format_new(s, true);
    is_str(f, "f(float a=1.5, float b=-1e-05, float[] c=[0.25, 3.0], "
              "float d=0.5) -> ()");
    free(f);
  }
  bp__schema_free(s);
  setlocale(LC_NUMERIC, "C");
}

static const tap_case cases[] = {
    TAP_CASE(corpus_sizes),
    TAP_CASE(valid_basic_corpus),
    TAP_CASE(valid_optional_corpus),
    TAP_CASE(valid_defaults_corpus),
    TAP_CASE(valid_lists_corpus),
    TAP_CASE(valid_alias_corpus),
    TAP_CASE(valid_returns_corpus),
    TAP_CASE(invalid_syntax_corpus),
    TAP_CASE(invalid_semantic_corpus),
    TAP_CASE(detail_names),
    TAP_CASE(detail_types),
    TAP_CASE(detail_lists),
    TAP_CASE(detail_defaults),
    TAP_CASE(detail_alias),
    TAP_CASE(detail_returns),
    TAP_CASE(detail_scalar),
    TAP_CASE(format_buffers),
    TAP_CASE(format_canonical),
    TAP_CASE(error_buffer),
    TAP_CASE(comma_locale),
};

int main(void) { return tap_main(cases, TAP_NCASES(cases)); }
