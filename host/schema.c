/*
 * host/schema.c - parses and prints operator schemas.
 *
 * docs/schemas.md gives the grammar; the parser below follows it production
 * by production.  It is a recursive-descent parser over a one-token
 * lookahead lexer.  The first error wins: every failure path records its
 * message and returns false, later failures are ignored, and the caller
 * frees whatever was built so far.
 *
 * Nothing here has mutable static state, so parsing and printing are safe
 * from any number of threads at once.
 */
#include "schema_lex.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest N of a fixed-size list T[N].  A cap keeps `int[N] x=1`, which
 * allocates N elements, from turning a typo into a huge allocation. */
#define MAX_FIXED_LIST 1024

/* ------------------------------------------------------------------------ */
/* Names                                                                    */
/* ------------------------------------------------------------------------ */

static const struct {
  const char *name;
  int type;
} type_names[] = {
    {"Tensor", BP__T_TENSOR}, {"int", BP__T_INT},
    {"SymInt", BP__T_INT},    {"float", BP__T_FLOAT},
    {"bool", BP__T_BOOL},     {"str", BP__T_STR},
    {"ScalarType", BP__T_SCALAR_TYPE}, {"Device", BP__T_DEVICE},
    {"Scalar", BP__T_SCALAR},
};

#define SUPPORTED_TYPES \
  "Tensor, int, SymInt, float, bool, str, ScalarType, Device, Scalar"

/* PyTorch types this subset leaves out.  They get "not supported" rather
 * than "unknown", so that a schema copied from PyTorch fails clearly. */
static const char *const pytorch_only_types[] = {
    "Layout", "MemoryFormat", "Generator", "Dimname", "Storage",
    "Stream", "QScheme", "complex", "SymFloat", "SymBool", "Any", "number",
};

#define DTYPE_LIST \
  "float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8 " \
  "or bool"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The tag a present value of this argument carries on the boxed stack. */
static int32_t value_tag_of(const bp__arg *a) {
  switch (a->type) {
  case BP__T_TENSOR: return a->is_list ? BP_TAG_TENSOR_LIST : BP_TAG_TENSOR;
  case BP__T_INT: return a->is_list ? BP_TAG_INT_LIST : BP_TAG_INT;
  case BP__T_FLOAT: return a->is_list ? BP_TAG_FLOAT_LIST : BP_TAG_FLOAT;
  case BP__T_BOOL: return BP_TAG_BOOL;
  case BP__T_STR: return BP_TAG_STR;
  case BP__T_SCALAR_TYPE: return BP_TAG_SCALAR_TYPE;
  case BP__T_DEVICE: return BP_TAG_DEVICE;
  case BP__T_SCALAR: return BP_TAG_SCALAR;
  default: return BP_TAG_NONE;
  }
}

/* ------------------------------------------------------------------------ */
/* Allocation helpers                                                       */
/* ------------------------------------------------------------------------ */

static char *dup_mem(bp__parser *p, const char *s, size_t n) {
  char *d = bp__malloc(n + 1);
  if (!d) {
    bp__lex_oom(p);
    return NULL;
  }
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static char *dup_token(bp__parser *p) {
  return dup_mem(p, p->text + p->tok.start, p->tok.len);
}

/* Grows an array to hold at least one more element: returns the new
 * array (the old one is then gone) or NULL (the old one is untouched). */
static void *grow_array(void *arr, size_t *cap, size_t elem) {
  size_t ncap = *cap ? *cap * 2 : 4;
  if (ncap < *cap || ncap > SIZE_MAX / elem) return NULL;
  void *n = bp__realloc(arr, ncap * elem);
  if (n) *cap = ncap;
  return n;
}

/* Appends a zeroed argument to *arr (n used of cap) and returns it. */
static bp__arg *new_arg(bp__parser *p, bp__arg **arr, size_t *n, size_t *cap) {
  if (*n == *cap) {
    bp__arg *grown = grow_array(*arr, cap, sizeof **arr);
    if (!grown) {
      bp__lex_oom(p);
      return NULL;
    }
    *arr = grown;
  }
  bp__arg *a = &(*arr)[(*n)++];
  memset(a, 0, sizeof *a);
  a->list_size = -1;
  a->default_value.tag = BP_TAG_NONE;
  return a;
}

/* Frees what an argument owns; the default's memory is known by its tag. */
static void arg_clear(bp__arg *a) {
  bp__free(a->name);
  bp__free(a->alias_set);
  switch (a->default_value.tag) {
  case BP_TAG_STR: bp__free((void *)a->default_value.u.str); break;
  case BP_TAG_INT_LIST: bp__free((void *)a->default_value.u.ints); break;
  case BP_TAG_FLOAT_LIST: bp__free((void *)a->default_value.u.floats); break;
  default: break;
  }
}

void bp__schema_free(bp__schema *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nargs; i++) arg_clear(&s->args[i]);
  for (size_t i = 0; i < s->nrets; i++) arg_clear(&s->rets[i]);
  bp__free(s->args);
  bp__free(s->rets);
  bp__free(s->ns);
  bp__free(s->name);
  bp__free(s->overload);
  bp__free(s);
}

/* ------------------------------------------------------------------------ */
/* Literals                                                                 */
/* ------------------------------------------------------------------------ */

/* -?[0-9]+ */
static bool is_int_text(const char *s, size_t n) {
  size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
  if (i == n) return false;
  for (; i < n; i++)
    if (!is_digit(s[i])) return false;
  return true;
}

/* -?( D+ ( "." D* )? | "." D+ ) ( [eE] [+-]? D+ )?  where D is [0-9] */
static bool is_float_text(const char *s, size_t n) {
  size_t i = (n > 0 && s[0] == '-') ? 1 : 0, d = 0;
  while (i < n && is_digit(s[i])) i++, d++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && is_digit(s[i])) i++, d++;
  }
  if (d == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t e = 0;
    while (i < n && is_digit(s[i])) i++, e++;
    if (e == 0) return false;
  }
  return i == n;
}

/* Reads the current token, known to be an int literal, as an int64. */
static bool token_to_int(bp__parser *p, int64_t *out) {
  const char *s = p->text + p->tok.start;
  size_t n = p->tok.len;
  bool neg = s[0] == '-';
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  uint64_t v = 0;
  for (size_t i = neg ? 1 : 0; i < n; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (limit - d) / 10) {
      char q[MAX_QUOTE * 4 + 4];
      bp__lex_quote(p, q);
      return bp__lex_fail(p, p->tok.start,
                     "integer '%s' is out of range for int64", q);
    }
    v = v * 10 + d;
  }
  /* 2^63 fits only as INT64_MIN, which has no positive counterpart. */
  if (!neg)
    *out = (int64_t)v;
  else if (v == (uint64_t)INT64_MAX + 1)
    *out = INT64_MIN;
  else
    *out = -(int64_t)v;
  return true;
}

/* Reads the current token, known to be a float or int literal, as a
 * double. */
static bool token_to_double(bp__parser *p, double *out) {
  char q[MAX_QUOTE * 4 + 4];
  if (p->tok.len > MAX_FLOAT_LEN)
    return bp__lex_fail(p, p->tok.start,
                   "float literal is too long (more than %d characters)",
                   MAX_FLOAT_LEN);
  if (!bp__lex_text_to_double(p->text + p->tok.start, p->tok.len, out)) {
    bp__lex_quote(p, q);
    return bp__lex_fail(p, p->tok.start, "float '%s' is out of range for a double",
                   q);
  }
  return true;
}

/* Decodes the current string token (escapes already checked by the lexer)
 * into a new NUL-terminated string. */
static char *token_to_string(bp__parser *p, size_t *len) {
  const char *s = p->text + p->tok.start + 1;
  size_t n = p->tok.len - 2, k = 0;
  char *d = bp__malloc(n + 1);
  if (!d) {
    bp__lex_oom(p);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\\') i++;
    d[k++] = s[i];
  }
  d[k] = '\0';
  *len = k;
  return d;
}

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * type = base [ "(" ident [ "!" ] ")" ] [ "[" [ size ] "]" ] [ "?" ]
 * `expected` says what the caller would have accepted here, for the
 * message when the token is not a type name at all.
 */
static bool parse_type(bp__parser *p, bp__arg *a, const char *expected) {
  size_t col = p->tok.start;
  if (p->tok.kind != TK_IDENT) return bp__lex_expected(p, expected);
  for (size_t i = 0; i < NELEMS(type_names) && !a->type; i++)
    if (bp__lex_at_word(p, type_names[i].name)) a->type = type_names[i].type;
  if (!a->type) {
    char q[MAX_QUOTE * 4 + 4];
    bp__lex_quote(p, q);
    for (size_t i = 0; i < NELEMS(pytorch_only_types); i++)
      if (bp__lex_at_word(p, pytorch_only_types[i]))
        return bp__lex_fail(p, col, "type '%s' is not supported (supported "
                               "types: " SUPPORTED_TYPES ")", q);
    return bp__lex_fail(p, col, "unknown type '%s' (supported types: "
                           SUPPORTED_TYPES ")", q);
  }
  const char *base = bp__schema_type_spelling(a->type);
  bp__lex_advance(p);

  if (bp__lex_at_punct(p, '(')) {
    size_t acol = p->tok.start;
    bp__lex_advance(p);
    if (p->tok.kind != TK_IDENT) return bp__lex_expected(p, "an alias set name");
    if (!(a->alias_set = dup_token(p))) return false;
    bp__lex_advance(p);
    if (bp__lex_at_punct(p, '!')) {
      a->is_write = true;
      bp__lex_advance(p);
    }
    if (!bp__lex_at_punct(p, ')'))
      return bp__lex_expected(p, a->is_write ? "')'" : "'!' or ')'");
    bp__lex_advance(p);
    /* Only tensors share storage, so only they can alias or be written. */
    if (a->type != BP__T_TENSOR)
      return bp__lex_fail(p, acol, "alias annotation '(%s%s)' is only valid on "
                              "Tensor types, not on '%s'",
                     a->alias_set, a->is_write ? "!" : "", base);
  }

  if (bp__lex_at_punct(p, '[')) {
    bp__lex_advance(p);
    if (p->tok.kind == TK_NUMBER) {
      const char *s = p->text + p->tok.start;
      int64_t n = 0;
      bool good = is_int_text(s, p->tok.len) && s[0] != '-';
      for (size_t i = 0; good && i < p->tok.len && n <= MAX_FIXED_LIST; i++)
        n = n * 10 + (s[i] - '0');
      if (!good || n < 1 || n > MAX_FIXED_LIST) {
        char q[MAX_QUOTE * 4 + 4];
        bp__lex_quote(p, q);
        return bp__lex_fail(p, p->tok.start, "list size must be a whole number "
                                        "from 1 to %d, but got '%s'",
                       MAX_FIXED_LIST, q);
      }
      a->list_size = n;
      bp__lex_advance(p);
    }
    if (!bp__lex_at_punct(p, ']'))
      return bp__lex_expected(p, a->list_size >= 0 ? "']'" : "a list size or ']'");
    bp__lex_advance(p);
    a->is_list = true;
    /* bp_value has list tags for these three element types only. */
    if (a->type != BP__T_INT && a->type != BP__T_FLOAT &&
        a->type != BP__T_TENSOR)
      return bp__lex_fail(p, col, "lists of '%s' are not supported (only int, "
                             "SymInt, float and Tensor lists have a value "
                             "tag)", base);
  }

  if (bp__lex_at_punct(p, '?')) {
    a->optional = true;
    bp__lex_advance(p);
    /* A list whose elements may be None has no value tag. */
    if (bp__lex_at_punct(p, '['))
      return bp__lex_fail(p, p->tok.start, "lists of optional elements ('%s?[]') "
                                      "are not supported; '%s[]?' is an "
                                      "optional list", base, base);
  }
  a->value_tag = value_tag_of(a);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Defaults                                                                 */
/* ------------------------------------------------------------------------ */

/* "expected WHAT as the default of 'TYPE NAME' but got 'TOKEN'". */
static bool fail_default(bp__parser *p, const bp__arg *a, const char *what) {
  char ty[64];
  bp__arg_type_format(a, ty, sizeof ty);
  if (p->tok.kind == TK_END)
    return bp__lex_fail(p, p->tok.start,
                   "expected %s as the default of '%s %s' at end of input",
                   what, ty, a->name);
  char q[MAX_QUOTE * 4 + 4];
  bp__lex_quote(p, q);
  return bp__lex_fail(p, p->tok.start,
                 "expected %s as the default of '%s %s' but got '%s'", what,
                 ty, a->name, q);
}

/* The dtype of c10::ScalarType number `num` (Byte 0 ... Double 7, Bool 11,
 * BFloat16 15), or false for the complex, quantized and unknown ones. */
static bool torch_scalar_type(int64_t num, int32_t *out) {
  static const int32_t codes[16] = {
      BP_UINT8, BP_INT8, BP_INT16, BP_INT32, BP_INT64, BP_FLOAT16, BP_FLOAT32,
      BP_FLOAT64, 0, 0, 0, BP_BOOL, 0, 0, 0, BP_BFLOAT16};
  if (num < 0 || num > 15 || !codes[num]) return false;
  *out = codes[num];
  return true;
}

/* What a default of this base type looks like, for messages. */
static const char *scalar_what(int type) {
  switch (type) {
  case BP__T_INT: return "an int";
  case BP__T_FLOAT: return "a float";
  case BP__T_BOOL: return "True or False";
  case BP__T_STR: return "a string";
  case BP__T_SCALAR_TYPE:
    return "a dtype name (" DTYPE_LIST ") or PyTorch's ScalarType number";
  case BP__T_SCALAR: return "a number, True or False";
  default: return "None";
  }
}

/*
 * Reads the current token as one value of a's base type into *v (for a
 * list, one element).  Does not bp__lex_advance.  A list element's error names only
 * what was expected, since "the default of ..." would point at the list.
 */
static bool parse_scalar(bp__parser *p, const bp__arg *a, bp_value *v,
                         bool in_list) {
  const char *s = p->text + p->tok.start;
  size_t n = p->tok.len;
  memset(v, 0, sizeof *v);
  switch (a->type) {
  case BP__T_INT:
    if (p->tok.kind != TK_NUMBER || !is_int_text(s, n)) break;
    v->tag = BP_TAG_INT;
    return token_to_int(p, &v->u.i);
  case BP__T_FLOAT:
    /* An int literal is a fine float ("float alpha=1"). */
    if (p->tok.kind != TK_NUMBER || !is_float_text(s, n)) break;
    v->tag = BP_TAG_FLOAT;
    return token_to_double(p, &v->u.f);
  case BP__T_BOOL:
    if (!bp__lex_at_word(p, "True") && !bp__lex_at_word(p, "False")) break;
    v->tag = BP_TAG_BOOL;
    v->u.b = bp__lex_at_word(p, "True");
    return true;
  case BP__T_STR: {
    if (p->tok.kind != TK_STRING) break;
    size_t len;
    char *str = token_to_string(p, &len);
    if (!str) return false;
    if (len > UINT32_MAX) {
      bp__free(str);
      return bp__lex_fail(p, p->tok.start, "string literal is too long");
    }
    v->tag = BP_TAG_STR;
    v->len = (uint32_t)len;
    v->u.str = str;
    return true;
  }
  case BP__T_SCALAR:
    /* The literal says which kind of number: 1 is an int, 1.0 a float. */
    if (bp__lex_at_word(p, "True") || bp__lex_at_word(p, "False")) {
      v->tag = BP_TAG_BOOL;
      v->u.b = bp__lex_at_word(p, "True");
      return true;
    }
    if (p->tok.kind != TK_NUMBER) break;
    if (is_int_text(s, n)) {
      v->tag = BP_TAG_INT;
      return token_to_int(p, &v->u.i);
    }
    if (!is_float_text(s, n)) break;
    v->tag = BP_TAG_FLOAT;
    return token_to_double(p, &v->u.f);
  case BP__T_SCALAR_TYPE: {
    int32_t code;
    if (bp__lex_at_dtype(p, &code)) {
      v->tag = BP_TAG_SCALAR_TYPE;
      v->u.i = code;
      return true;
    }
    /* PyTorch prints a ScalarType default as its c10::ScalarType number
     * (randint's `ScalarType? dtype=4`), so schemas copied from torch
     * carry it. */
    if (p->tok.kind == TK_NUMBER && is_int_text(s, n)) {
      int64_t num;
      if (!token_to_int(p, &num)) return false;
      if (!torch_scalar_type(num, &code))
        return bp__lex_fail(p, p->tok.start,
                            "the default of '%s' is PyTorch's ScalarType %" PRId64
                            ", which has no Backplane dtype (the numbers "
                            "with one: 0-7, 11 and 15)", a->name, num);
      v->tag = BP_TAG_SCALAR_TYPE;
      v->u.i = code;
      return true;
    }
    break;
  }
  default:
    break;
  }
  const char *what = scalar_what(a->type);
  return in_list ? bp__lex_expected(p, what) : fail_default(p, a, what);
}

/*
 * A list default: "[" [ scalar { "," scalar } ] "]", or for a fixed-size
 * list T[N] a single scalar that stands for N copies of itself (PyTorch's
 * `int[2] stride=1`).  Stored as the expanded list.  T[N] also takes an
 * empty list, which the op reads as "derived from another argument".
 */
static bool parse_list_default(bp__parser *p, bp__arg *a) {
  bool ints = a->type == BP__T_INT;
  size_t elem = ints ? sizeof(int64_t) : sizeof(double);
  size_t col = p->tok.start, n = 0, cap = 0;
  void *items = NULL;
  bp_value v;

  if (!bp__lex_at_punct(p, '[')) {
    if (a->list_size < 0 || p->tok.kind != TK_NUMBER)
      return fail_default(p, a, a->list_size < 0
                                    ? "a list such as [0, 1]"
                                    : "a list such as [0, 1] or one number");
    if (!parse_scalar(p, a, &v, false)) return false;
    n = (size_t)a->list_size;
    if (!(items = bp__malloc(n * elem))) return bp__lex_oom(p);
    for (size_t i = 0; i < n; i++) {
      if (ints)
        ((int64_t *)items)[i] = v.u.i;
      else
        ((double *)items)[i] = v.u.f;
    }
  } else {
    bp__lex_advance(p);
    while (!bp__lex_at_punct(p, ']')) {
      if (!parse_scalar(p, a, &v, true)) goto fail;
      if (n == cap) {
        void *grown = grow_array(items, &cap, elem);
        if (!grown) {
          bp__lex_oom(p);
          goto fail;
        }
        items = grown;
      }
      if (ints)
        ((int64_t *)items)[n++] = v.u.i;
      else
        ((double *)items)[n++] = v.u.f;
      bp__lex_advance(p);
      if (bp__lex_at_punct(p, ',')) {
        bp__lex_advance(p);
        if (bp__lex_at_punct(p, ']')) {
          bp__lex_expected(p, scalar_what(a->type));
          goto fail;
        }
      } else if (!bp__lex_at_punct(p, ']')) {
        bp__lex_expected(p, "',' or ']'");
        goto fail;
      }
    }
    /* (An empty default of a fixed-size list is PyTorch's "derived from
     * another argument", as max_pool2d's `int[2] stride=[]`.) */
    if (a->list_size >= 0 && n != 0 && n != (size_t)a->list_size) {
      char ty[64];
      bp__arg_type_format(a, ty, sizeof ty);
      bp__lex_fail(p, col, "the default of '%s %s' has %zu element%s but the "
                      "type has %" PRId64,
              ty, a->name, n, n == 1 ? "" : "s", a->list_size);
      goto fail;
    }
    if (n > UINT32_MAX) {
      bp__lex_fail(p, col, "list default has too many elements");
      goto fail;
    }
    /* An empty list still gets an array: the unboxed calling convention
     * passes None as a NULL pointer, so [] must not be NULL. */
    if (!items && !(items = bp__malloc(elem))) return bp__lex_oom(p);
  }
  a->default_value.tag = ints ? BP_TAG_INT_LIST : BP_TAG_FLOAT_LIST;
  a->default_value.len = (uint32_t)n;
  if (ints)
    a->default_value.u.ints = items;
  else
    a->default_value.u.floats = items;
  a->has_default = true;
  bp__lex_advance(p);
  return true;
fail:
  bp__free(items);
  return false;
}

/* default = "None" | scalar | list, after the '='. */
static bool parse_default(bp__parser *p, bp__arg *a) {
  char ty[64];
  bp__arg_type_format(a, ty, sizeof ty);
  size_t col = p->tok.start;
  /* A Tensor or Device has no literal syntax, so None is all there is. */
  if ((a->type == BP__T_TENSOR || a->type == BP__T_DEVICE) && !a->optional)
    return bp__lex_fail(p, col, "'%s %s' cannot have a default; only an "
                           "optional %s ('%s?') can, and only None",
                   ty, a->name, ty, ty);
  if (bp__lex_at_word(p, "None")) {
    if (!a->optional)
      return bp__lex_fail(p, col, "None is not a valid default for '%s %s' "
                             "because '%s' is not optional (write '%s?')",
                     ty, a->name, ty, ty);
    a->has_default = true;
    a->default_value.tag = BP_TAG_NONE;
    bp__lex_advance(p);
    return true;
  }
  if (a->type == BP__T_TENSOR || a->type == BP__T_DEVICE)
    return fail_default(p, a, "None");
  if (a->is_list) return parse_list_default(p, a);
  bp_value v;
  if (!parse_scalar(p, a, &v, false)) return false;
  a->default_value = v;
  a->has_default = true;
  bp__lex_advance(p);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Arguments and returns                                                    */
/* ------------------------------------------------------------------------ */

/* param = type ident [ "=" default ] */
static bool parse_param(bp__parser *p, bp__arg *a, const char *expected,
                        size_t *name_col) {
  if (!parse_type(p, a, expected)) return false;
  if (p->tok.kind != TK_IDENT) return bp__lex_expected(p, "an argument name");
  *name_col = p->tok.start;
  if (!(a->name = dup_token(p))) return false;
  bp__lex_advance(p);
  if (!bp__lex_at_punct(p, '=')) return true;
  bp__lex_advance(p);
  return parse_default(p, a);
}

/* params = "(" [ ( param | "*" ) { "," ( param | "*" ) } ] ")" */
static bool parse_params(bp__parser *p, bp__schema *s) {
  size_t cap = 0, star_col = 0;
  bool star = false;
  size_t first_default = SIZE_MAX; /* the first positional with a default */
  bp__lex_advance(p);                      /* past '(' */
  if (bp__lex_at_punct(p, ')')) {
    bp__lex_advance(p);
    return true;
  }
  for (;;) {
    if (bp__lex_at_punct(p, '*')) {
      if (star)
        return bp__lex_fail(p, p->tok.start, "a second '*': keyword-only "
                                        "arguments are marked once");
      star = true;
      star_col = p->tok.start;
      s->npositional = s->nargs;
      bp__lex_advance(p);
      if (!bp__lex_at_punct(p, ',') && !bp__lex_at_punct(p, ')'))
        return bp__lex_expected(p, "',' after '*'");
    } else {
      const char *expected = star ? "an argument type"
                             : s->nargs == 0 ? "an argument type, '*' or ')'"
                                             : "an argument type or '*'";
      size_t col = p->tok.start, name_col = 0;
      bp__arg *a = new_arg(p, &s->args, &s->nargs, &cap);
      if (!a) return false;
      a->kwarg_only = star;
      if (!parse_param(p, a, expected, &name_col)) return false;
      for (size_t i = 0; i + 1 < s->nargs; i++)
        if (strcmp(s->args[i].name, a->name) == 0)
          return bp__lex_fail(p, name_col, "duplicate argument name '%s'",
                         a->name);
      /* Positional arguments are filled left to right, so once one may be
       * left out, all that follow must be too. */
      if (!star && a->has_default && first_default == SIZE_MAX)
        first_default = s->nargs - 1;
      if (!star && !a->has_default && first_default != SIZE_MAX)
        return bp__lex_fail(p, col, "positional argument '%s' has no default but "
                               "follows '%s', which has one (give it a "
                               "default, or move it before '%s' or after "
                               "'*')",
                       a->name, s->args[first_default].name,
                       s->args[first_default].name);
    }
    if (bp__lex_at_punct(p, ')')) break;
    if (!bp__lex_at_punct(p, ',')) return bp__lex_expected(p, "',' or ')'");
    bp__lex_advance(p);
  }
  if (star && s->npositional == s->nargs)
    return bp__lex_fail(p, star_col, "'*' must be followed by at least one "
                                "keyword-only argument");
  if (!star) s->npositional = s->nargs;
  bp__lex_advance(p); /* past ')' */
  return true;
}

/* ret = type [ ident ] */
static bool parse_return(bp__parser *p, bp__schema *s, size_t *cap,
                         const char *expected) {
  size_t col = p->tok.start;
  bp__arg *r = new_arg(p, &s->rets, &s->nrets, cap);
  if (!r) return false;
  if (!parse_type(p, r, expected)) return false;
  /* The unboxed calling convention has out-parameters for these only. */
  if (r->is_list || r->optional || r->type == BP__T_STR ||
      r->type == BP__T_DEVICE || r->type == BP__T_SCALAR) {
    char ty[64];
    bp__arg_type_format(r, ty, sizeof ty);
    return bp__lex_fail(p, col, "return type '%s' is not supported (a return "
                           "must be Tensor, int, SymInt, float, bool or "
                           "ScalarType)", ty);
  }
  if (p->tok.kind != TK_IDENT) return true;
  size_t name_col = p->tok.start;
  if (!(r->name = dup_token(p))) return false;
  for (size_t i = 0; i + 1 < s->nrets; i++)
    if (s->rets[i].name && strcmp(s->rets[i].name, r->name) == 0)
      return bp__lex_fail(p, name_col, "duplicate return name '%s'", r->name);
  bp__lex_advance(p);
  return true;
}

/* returns = ret | "(" [ ret { "," ret } ] ")" */
static bool parse_returns(bp__parser *p, bp__schema *s) {
  size_t cap = 0;
  if (!bp__lex_at_punct(p, '('))
    return parse_return(p, s, &cap, "a return type or '('");
  bp__lex_advance(p);
  if (bp__lex_at_punct(p, ')')) {
    bp__lex_advance(p);
    return true;
  }
  for (;;) {
    if (!parse_return(p, s, &cap,
                      s->nrets == 0 ? "a return type or ')'" : "a return type"))
      return false;
    if (bp__lex_at_punct(p, ')')) break;
    if (!bp__lex_at_punct(p, ',')) return bp__lex_expected(p, "',' or ')'");
    bp__lex_advance(p);
  }
  bp__lex_advance(p);
  return true;
}

/* schema = [ ident "::" ] ident [ "." ident ] params "->" returns END */
static bool parse_schema(bp__parser *p, bp__schema *s) {
  if (p->tok.kind != TK_IDENT) return bp__lex_expected(p, "an operator name");
  char *first = dup_token(p);
  if (!first) return false;
  bp__lex_advance(p);
  if (p->tok.kind == TK_SCOPE) {
    s->ns = first;
    bp__lex_advance(p);
    if (p->tok.kind != TK_IDENT)
      return bp__lex_expected(p, "an operator name after '::'");
    if (!(s->name = dup_token(p))) return false;
    bp__lex_advance(p);
  } else {
    s->name = first;
  }
  if (bp__lex_at_punct(p, '.')) {
    bp__lex_advance(p);
    if (p->tok.kind != TK_IDENT) return bp__lex_expected(p, "an overload name");
    if (!(s->overload = dup_token(p))) return false;
    bp__lex_advance(p);
  } else if (!(s->overload = dup_mem(p, "", 0))) {
    return false;
  }
  if (!bp__lex_at_punct(p, '('))
    return bp__lex_expected(p, s->overload[0] ? "'('"
                            : s->ns        ? "'.' or '('"
                                           : "'::', '.' or '('");
  if (!parse_params(p, s)) return false;
  if (p->tok.kind != TK_ARROW) return bp__lex_expected(p, "'->'");
  bp__lex_advance(p);
  if (!parse_returns(p, s)) return false;
  if (p->tok.kind != TK_END) return bp__lex_expected(p, "end of input");
  return true;
}

bp_status bp__schema_parse(const char *text, bp__schema **out, char *err,
                           size_t errlen) {
  bp__parser p = {text ? text : "", 0, {TK_END, 0, 0}, err, errlen, BP_OK};
  if (err && errlen > 0) err[0] = '\0';
  if (!out) {
    /* A caller bug rather than a bad schema. */
    if (err && errlen > 0) snprintf(err, errlen, "no place for the schema");
    return BP_ERR_INVALID_ARGUMENT;
  }
  if (!text) {
    bp__lex_fail(&p, 0, "no schema text (NULL)");
    return p.status;
  }
  bp__schema *s = bp__calloc(1, sizeof *s);
  if (!s) {
    bp__lex_oom(&p);
    return p.status;
  }
  bp__lex_advance(&p);
  parse_schema(&p, s);
  if (p.status != BP_OK) {
    bp__schema_free(s);
    return p.status;
  }
  *out = s;
  return BP_OK;
}
