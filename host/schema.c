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
#include "schema.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PRINTF_LIKE(fmt, args)
#endif

/* The largest N of a fixed-size list T[N].  A cap keeps `int[N] x=1`, which
 * allocates N elements, from turning a typo into a huge allocation. */
#define MAX_FIXED_LIST 1024

/* The longest float literal we convert; longer ones are refused rather than
 * copied to the heap (no real schema needs 256 digits). */
#define MAX_FLOAT_LEN 255

/* How much of a token an error message quotes. */
#define MAX_QUOTE 24

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

static const struct {
  const char *name;
  int32_t code;
} dtype_names[] = {
    {"float32", BP_FLOAT32}, {"float64", BP_FLOAT64}, {"float16", BP_FLOAT16},
    {"bfloat16", BP_BFLOAT16}, {"int8", BP_INT8}, {"int16", BP_INT16},
    {"int32", BP_INT32}, {"int64", BP_INT64}, {"uint8", BP_UINT8},
    {"bool", BP_BOOL},
};

#define DTYPE_LIST \
  "float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8 " \
  "or bool"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The canonical spelling of a base type (SymInt prints as int). */
static const char *type_spelling(int type) {
  switch (type) {
  case BP__T_TENSOR: return "Tensor";
  case BP__T_INT: return "int";
  case BP__T_FLOAT: return "float";
  case BP__T_BOOL: return "bool";
  case BP__T_STR: return "str";
  case BP__T_SCALAR_TYPE: return "ScalarType";
  case BP__T_DEVICE: return "Device";
  case BP__T_SCALAR: return "Scalar";
  default: return "?";
  }
}

static const char *dtype_name(int64_t code) {
  for (size_t i = 0; i < NELEMS(dtype_names); i++)
    if (dtype_names[i].code == code) return dtype_names[i].name;
  return NULL;
}

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
/* Locale-independent number conversion                                     */
/* ------------------------------------------------------------------------ */

/*
 * strtod() and printf("%g") follow LC_NUMERIC, which the application that
 * embeds the host may have set ("1,5" in de_DE).  Schemas always use '.',
 * so we swap the locale's decimal point in and out.  Asking snprintf for
 * it is thread-safe, where localeconv() is not.
 */
static void locale_point(char point[8]) {
  char probe[16];
  int n = snprintf(probe, sizeof probe, "%.1f", 1.5); /* "1" POINT "5" */
  if (n < 3 || n - 2 >= 8) {
    strcpy(point, ".");
    return;
  }
  memcpy(point, probe + 1, (size_t)n - 2);
  point[n - 2] = '\0';
}

/* Converts the validated float literal s[0 .. n-1].  Returns false when it
 * overflows a double (underflow to a subnormal or zero is accepted). */
static bool text_to_double(const char *s, size_t n, double *out) {
  char point[8], buf[MAX_FLOAT_LEN * 8 + 1];
  locale_point(point);
  size_t plen = strlen(point), k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '.') {
      memcpy(buf + k, point, plen);
      k += plen;
    } else {
      buf[k++] = s[i];
    }
  }
  buf[k] = '\0';
  int saved = errno; /* callers' errno is theirs, not ours */
  errno = 0;
  char *end;
  double v = strtod(buf, &end);
  bool good = end == buf + k && !(errno == ERANGE && isinf(v));
  errno = saved;
  if (good) *out = v;
  return good;
}

/* Writes the shortest text that reads back as v, always with a '.' or an
 * exponent so that it reads as a float ("1.0", "1e-05", "-0.0"). */
static void double_to_text(double v, char out[48]) {
  char point[8];
  locale_point(point);
  for (int prec = 15; prec <= 17; prec++) {
    char raw[40];
    snprintf(raw, sizeof raw, "%.*g", prec, v);
    /* Put '.' back in place of the locale's decimal point. */
    char *p = strstr(raw, point);
    if (p && strcmp(point, ".") != 0) {
      *p = '.';
      memmove(p + 1, p + strlen(point), strlen(p + strlen(point)) + 1);
    }
    strcpy(out, raw);
    double back;
    if (text_to_double(out, strlen(out), &back) && back == v) break;
  }
  if (!strpbrk(out, ".eEin")) strcat(out, ".0"); /* "in": inf and nan */
}

/* ------------------------------------------------------------------------ */
/* Lexer                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum tok_kind {
  TK_END,    /* end of input */
  TK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  TK_NUMBER, /* a run that starts like a number; validated where used */
  TK_STRING, /* '...' or "...", escapes already checked */
  TK_ARROW,  /* -> */
  TK_SCOPE,  /* :: */
  TK_PUNCT,  /* one of ( ) [ ] , * ? ! = . */
  TK_BAD     /* any other byte, or a malformed string */
} tok_kind;

typedef struct token {
  tok_kind kind;
  size_t start; /* byte offset in the text; the column is start + 1 */
  size_t len;
} token;

typedef struct parser {
  const char *text;
  size_t pos;       /* where the lexer resumes */
  token tok;        /* the current token */
  char *err;        /* the caller's message buffer, or NULL */
  size_t errlen;
  bp_status status; /* BP_OK until the first failure */
} parser;

/* ASCII only: <ctype.h> depends on the locale and on char's signedness. */
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

static bool fail_at(parser *p, size_t at, const char *fmt, ...)
    PRINTF_LIKE(3, 4);

/* Records the first failure: "column N: " + the formatted message. */
static bool fail_at(parser *p, size_t at, const char *fmt, ...) {
  if (p->status != BP_OK) return false;
  p->status = BP_ERR_SCHEMA;
  if (p->err && p->errlen > 0) {
    int k = snprintf(p->err, p->errlen, "column %zu: ", at + 1);
    if (k >= 0 && (size_t)k < p->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
      va_end(ap);
    }
  }
  return false;
}

static bool fail_oom(parser *p) {
  if (p->status != BP_OK) return false;
  p->status = BP_ERR_OUT_OF_MEMORY;
  if (p->err && p->errlen > 0)
    snprintf(p->err, p->errlen, "out of memory while parsing a schema");
  return false;
}

/* The current token as an error message quotes it: at most MAX_QUOTE
 * bytes, with bytes outside printable ASCII written as \xNN. */
static void quote_token(const parser *p, char out[MAX_QUOTE * 4 + 4]) {
  const char *s = p->text + p->tok.start;
  size_t n = p->tok.len, k = 0;
  for (size_t i = 0; i < n && i < MAX_QUOTE; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f)
      out[k++] = (char)c;
    else
      k += (size_t)snprintf(out + k, 5, "\\x%02x", c);
  }
  if (n > MAX_QUOTE) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
}

/* "expected WHAT but got 'TOKEN'", or "... at end of input". */
static bool fail_expected(parser *p, const char *what) {
  if (p->tok.kind == TK_END)
    return fail_at(p, p->tok.start, "expected %s at end of input", what);
  char q[MAX_QUOTE * 4 + 4];
  quote_token(p, q);
  return fail_at(p, p->tok.start, "expected %s but got '%s'", what, q);
}

/* Scans a quoted string starting at s[i]; returns its length, or 0 after
 * recording an error.  Only \\, \" and \' are escapes, so a string means
 * the same to every reader; control characters are refused so that the
 * canonical text stays on one line. */
static size_t lex_string(parser *p, size_t i) {
  const char *s = p->text;
  char q = s[i];
  size_t j = i + 1;
  for (;;) {
    char c = s[j];
    if (c == '\0') {
      fail_at(p, i, "unterminated string literal");
      return 0;
    }
    if (c == q) return j + 1 - i;
    if (c == '\\') {
      char e = s[j + 1];
      if (e == '\\' || e == '"' || e == '\'') {
        j += 2;
        continue;
      }
      if (e == '\0') {
        fail_at(p, i, "unterminated string literal");
      } else if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f) {
        fail_at(p, j, "unsupported escape '\\%c' in string literal "
                      "(only \\\\, \\\" and \\' are allowed)", e);
      } else {
        fail_at(p, j, "unsupported escape in string literal "
                      "(only \\\\, \\\" and \\' are allowed)");
      }
      return 0;
    }
    if ((unsigned char)c < 0x20 || c == 0x7f) {
      fail_at(p, j, "control character 0x%02x in string literal",
              (unsigned)(unsigned char)c);
      return 0;
    }
    j++;
  }
}

/* Scans a number-like run starting at s[i].  It takes every character a
 * number could contain, so that "1e" or "2x" is one token that a default
 * refuses as a whole, rather than "1" followed by a confusing "e". */
static size_t lex_number(const char *s, size_t i) {
  size_t j = i;
  if (s[j] == '-') j++;
  while (is_ident_char(s[j]) || s[j] == '.' ||
         ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E')))
    j++;
  return j - i;
}

/* Reads the next token into p->tok.  A malformed string records its error
 * here and becomes TK_BAD, which no production accepts. */
static void advance(parser *p) {
  const char *s = p->text;
  size_t i = p->pos;
  while (is_space(s[i])) i++;
  token t = {TK_END, i, 0};
  char c = s[i];
  char c1 = c ? s[i + 1] : '\0';
  if (c == '\0') {
    t.kind = TK_END;
  } else if (is_ident_start(c)) {
    size_t j = i + 1;
    while (is_ident_char(s[j])) j++;
    t.kind = TK_IDENT;
    t.len = j - i;
  } else if (is_digit(c) || (c == '.' && is_digit(c1)) ||
             (c == '-' && is_digit(c1)) ||
             (c == '-' && c1 == '.' && is_digit(s[i + 2]))) {
    t.kind = TK_NUMBER;
    t.len = lex_number(s, i);
  } else if (c == '-' && c1 == '>') {
    t.kind = TK_ARROW;
    t.len = 2;
  } else if (c == ':' && c1 == ':') {
    t.kind = TK_SCOPE;
    t.len = 2;
  } else if (c == '"' || c == '\'') {
    t.len = lex_string(p, i);
    t.kind = t.len ? TK_STRING : TK_BAD;
    if (!t.len) t.len = 1;
  } else if (strchr("()[],*?!=.", c)) {
    t.kind = TK_PUNCT;
    t.len = 1;
  } else {
    t.kind = TK_BAD;
    t.len = 1;
  }
  p->tok = t;
  p->pos = t.start + t.len;
}

static bool at_punct(const parser *p, char c) {
  return p->tok.kind == TK_PUNCT && p->text[p->tok.start] == c;
}

static bool at_word(const parser *p, const char *word) {
  size_t n = strlen(word);
  return p->tok.kind == TK_IDENT && p->tok.len == n &&
         memcmp(p->text + p->tok.start, word, n) == 0;
}

/* ------------------------------------------------------------------------ */
/* Allocation helpers                                                       */
/* ------------------------------------------------------------------------ */

static char *dup_mem(parser *p, const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) {
    fail_oom(p);
    return NULL;
  }
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static char *dup_token(parser *p) {
  return dup_mem(p, p->text + p->tok.start, p->tok.len);
}

/* Grows an array to hold at least one more element: returns the new
 * array (the old one is then gone) or NULL (the old one is untouched). */
static void *grow_array(void *arr, size_t *cap, size_t elem) {
  size_t ncap = *cap ? *cap * 2 : 4;
  if (ncap < *cap || ncap > SIZE_MAX / elem) return NULL;
  void *n = realloc(arr, ncap * elem);
  if (n) *cap = ncap;
  return n;
}

/* Appends a zeroed argument to *arr (n used of cap) and returns it. */
static bp__arg *new_arg(parser *p, bp__arg **arr, size_t *n, size_t *cap) {
  if (*n == *cap) {
    bp__arg *grown = grow_array(*arr, cap, sizeof **arr);
    if (!grown) {
      fail_oom(p);
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
  free(a->name);
  free(a->alias_set);
  switch (a->default_value.tag) {
  case BP_TAG_STR: free((void *)a->default_value.u.str); break;
  case BP_TAG_INT_LIST: free((void *)a->default_value.u.ints); break;
  case BP_TAG_FLOAT_LIST: free((void *)a->default_value.u.floats); break;
  default: break;
  }
}

void bp__schema_free(bp__schema *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nargs; i++) arg_clear(&s->args[i]);
  for (size_t i = 0; i < s->nrets; i++) arg_clear(&s->rets[i]);
  free(s->args);
  free(s->rets);
  free(s->ns);
  free(s->name);
  free(s->overload);
  free(s);
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
static bool token_to_int(parser *p, int64_t *out) {
  const char *s = p->text + p->tok.start;
  size_t n = p->tok.len;
  bool neg = s[0] == '-';
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  uint64_t v = 0;
  for (size_t i = neg ? 1 : 0; i < n; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (limit - d) / 10) {
      char q[MAX_QUOTE * 4 + 4];
      quote_token(p, q);
      return fail_at(p, p->tok.start,
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
static bool token_to_double(parser *p, double *out) {
  char q[MAX_QUOTE * 4 + 4];
  if (p->tok.len > MAX_FLOAT_LEN)
    return fail_at(p, p->tok.start,
                   "float literal is too long (more than %d characters)",
                   MAX_FLOAT_LEN);
  if (!text_to_double(p->text + p->tok.start, p->tok.len, out)) {
    quote_token(p, q);
    return fail_at(p, p->tok.start, "float '%s' is out of range for a double",
                   q);
  }
  return true;
}

/* Decodes the current string token (escapes already checked by the lexer)
 * into a new NUL-terminated string. */
static char *token_to_string(parser *p, size_t *len) {
  const char *s = p->text + p->tok.start + 1;
  size_t n = p->tok.len - 2, k = 0;
  char *d = malloc(n + 1);
  if (!d) {
    fail_oom(p);
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
static bool parse_type(parser *p, bp__arg *a, const char *expected) {
  size_t col = p->tok.start;
  if (p->tok.kind != TK_IDENT) return fail_expected(p, expected);
  for (size_t i = 0; i < NELEMS(type_names) && !a->type; i++)
    if (at_word(p, type_names[i].name)) a->type = type_names[i].type;
  if (!a->type) {
    char q[MAX_QUOTE * 4 + 4];
    quote_token(p, q);
    for (size_t i = 0; i < NELEMS(pytorch_only_types); i++)
      if (at_word(p, pytorch_only_types[i]))
        return fail_at(p, col, "type '%s' is not supported (supported "
                               "types: " SUPPORTED_TYPES ")", q);
    return fail_at(p, col, "unknown type '%s' (supported types: "
                           SUPPORTED_TYPES ")", q);
  }
  const char *base = type_spelling(a->type);
  advance(p);

  if (at_punct(p, '(')) {
    size_t acol = p->tok.start;
    advance(p);
    if (p->tok.kind != TK_IDENT) return fail_expected(p, "an alias set name");
    if (!(a->alias_set = dup_token(p))) return false;
    advance(p);
    if (at_punct(p, '!')) {
      a->is_write = true;
      advance(p);
    }
    if (!at_punct(p, ')'))
      return fail_expected(p, a->is_write ? "')'" : "'!' or ')'");
    advance(p);
    /* Only tensors share storage, so only they can alias or be written. */
    if (a->type != BP__T_TENSOR)
      return fail_at(p, acol, "alias annotation '(%s%s)' is only valid on "
                              "Tensor types, not on '%s'",
                     a->alias_set, a->is_write ? "!" : "", base);
  }

  if (at_punct(p, '[')) {
    advance(p);
    if (p->tok.kind == TK_NUMBER) {
      const char *s = p->text + p->tok.start;
      int64_t n = 0;
      bool good = is_int_text(s, p->tok.len) && s[0] != '-';
      for (size_t i = 0; good && i < p->tok.len && n <= MAX_FIXED_LIST; i++)
        n = n * 10 + (s[i] - '0');
      if (!good || n < 1 || n > MAX_FIXED_LIST) {
        char q[MAX_QUOTE * 4 + 4];
        quote_token(p, q);
        return fail_at(p, p->tok.start, "list size must be a whole number "
                                        "from 1 to %d, but got '%s'",
                       MAX_FIXED_LIST, q);
      }
      a->list_size = n;
      advance(p);
    }
    if (!at_punct(p, ']'))
      return fail_expected(p, a->list_size >= 0 ? "']'" : "a list size or ']'");
    advance(p);
    a->is_list = true;
    /* bp_value has list tags for these three element types only. */
    if (a->type != BP__T_INT && a->type != BP__T_FLOAT &&
        a->type != BP__T_TENSOR)
      return fail_at(p, col, "lists of '%s' are not supported (only int, "
                             "SymInt, float and Tensor lists have a value "
                             "tag)", base);
  }

  if (at_punct(p, '?')) {
    a->optional = true;
    advance(p);
    /* A list whose elements may be None has no value tag. */
    if (at_punct(p, '['))
      return fail_at(p, p->tok.start, "lists of optional elements ('%s?[]') "
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
static bool fail_default(parser *p, const bp__arg *a, const char *what) {
  char ty[64];
  bp__arg_type_format(a, ty, sizeof ty);
  if (p->tok.kind == TK_END)
    return fail_at(p, p->tok.start,
                   "expected %s as the default of '%s %s' at end of input",
                   what, ty, a->name);
  char q[MAX_QUOTE * 4 + 4];
  quote_token(p, q);
  return fail_at(p, p->tok.start,
                 "expected %s as the default of '%s %s' but got '%s'", what,
                 ty, a->name, q);
}

/* What a default of this base type looks like, for messages. */
static const char *scalar_what(int type) {
  switch (type) {
  case BP__T_INT: return "an int";
  case BP__T_FLOAT: return "a float";
  case BP__T_BOOL: return "True or False";
  case BP__T_STR: return "a string";
  case BP__T_SCALAR_TYPE: return "a dtype name (" DTYPE_LIST ")";
  case BP__T_SCALAR: return "a number, True or False";
  default: return "None";
  }
}

/*
 * Reads the current token as one value of a's base type into *v (for a
 * list, one element).  Does not advance.  A list element's error names only
 * what was expected, since "the default of ..." would point at the list.
 */
static bool parse_scalar(parser *p, const bp__arg *a, bp_value *v,
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
    if (!at_word(p, "True") && !at_word(p, "False")) break;
    v->tag = BP_TAG_BOOL;
    v->u.b = at_word(p, "True");
    return true;
  case BP__T_STR: {
    if (p->tok.kind != TK_STRING) break;
    size_t len;
    char *str = token_to_string(p, &len);
    if (!str) return false;
    if (len > UINT32_MAX) {
      free(str);
      return fail_at(p, p->tok.start, "string literal is too long");
    }
    v->tag = BP_TAG_STR;
    v->len = (uint32_t)len;
    v->u.str = str;
    return true;
  }
  case BP__T_SCALAR:
    /* The literal says which kind of number: 1 is an int, 1.0 a float. */
    if (at_word(p, "True") || at_word(p, "False")) {
      v->tag = BP_TAG_BOOL;
      v->u.b = at_word(p, "True");
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
  case BP__T_SCALAR_TYPE:
    for (size_t i = 0; i < NELEMS(dtype_names); i++)
      if (at_word(p, dtype_names[i].name)) {
        v->tag = BP_TAG_SCALAR_TYPE;
        v->u.i = dtype_names[i].code;
        return true;
      }
    break;
  default:
    break;
  }
  const char *what = scalar_what(a->type);
  return in_list ? fail_expected(p, what) : fail_default(p, a, what);
}

/*
 * A list default: "[" [ scalar { "," scalar } ] "]", or for a fixed-size
 * list T[N] a single scalar that stands for N copies of itself (PyTorch's
 * `int[2] stride=1`).  Stored as the expanded list.  T[N] also takes an
 * empty list, which the op reads as "derived from another argument".
 */
static bool parse_list_default(parser *p, bp__arg *a) {
  bool ints = a->type == BP__T_INT;
  size_t elem = ints ? sizeof(int64_t) : sizeof(double);
  size_t col = p->tok.start, n = 0, cap = 0;
  void *items = NULL;
  bp_value v;

  if (!at_punct(p, '[')) {
    if (a->list_size < 0 || p->tok.kind != TK_NUMBER)
      return fail_default(p, a, a->list_size < 0
                                    ? "a list such as [0, 1]"
                                    : "a list such as [0, 1] or one number");
    if (!parse_scalar(p, a, &v, false)) return false;
    n = (size_t)a->list_size;
    if (!(items = malloc(n * elem))) return fail_oom(p);
    for (size_t i = 0; i < n; i++) {
      if (ints)
        ((int64_t *)items)[i] = v.u.i;
      else
        ((double *)items)[i] = v.u.f;
    }
  } else {
    advance(p);
    while (!at_punct(p, ']')) {
      if (!parse_scalar(p, a, &v, true)) goto fail;
      if (n == cap) {
        void *grown = grow_array(items, &cap, elem);
        if (!grown) {
          fail_oom(p);
          goto fail;
        }
        items = grown;
      }
      if (ints)
        ((int64_t *)items)[n++] = v.u.i;
      else
        ((double *)items)[n++] = v.u.f;
      advance(p);
      if (at_punct(p, ',')) {
        advance(p);
        if (at_punct(p, ']')) {
          fail_expected(p, scalar_what(a->type));
          goto fail;
        }
      } else if (!at_punct(p, ']')) {
        fail_expected(p, "',' or ']'");
        goto fail;
      }
    }
    /* (An empty default of a fixed-size list is PyTorch's "derived from
     * another argument", as max_pool2d's `int[2] stride=[]`.) */
    if (a->list_size >= 0 && n != 0 && n != (size_t)a->list_size) {
      char ty[64];
      bp__arg_type_format(a, ty, sizeof ty);
      fail_at(p, col, "the default of '%s %s' has %zu element%s but the "
                      "type has %" PRId64,
              ty, a->name, n, n == 1 ? "" : "s", a->list_size);
      goto fail;
    }
    if (n > UINT32_MAX) {
      fail_at(p, col, "list default has too many elements");
      goto fail;
    }
    /* An empty list still gets an array: the unboxed calling convention
     * passes None as a NULL pointer, so [] must not be NULL. */
    if (!items && !(items = malloc(elem))) return fail_oom(p);
  }
  a->default_value.tag = ints ? BP_TAG_INT_LIST : BP_TAG_FLOAT_LIST;
  a->default_value.len = (uint32_t)n;
  if (ints)
    a->default_value.u.ints = items;
  else
    a->default_value.u.floats = items;
  a->has_default = true;
  advance(p);
  return true;
fail:
  free(items);
  return false;
}

/* default = "None" | scalar | list, after the '='. */
static bool parse_default(parser *p, bp__arg *a) {
  char ty[64];
  bp__arg_type_format(a, ty, sizeof ty);
  size_t col = p->tok.start;
  /* A Tensor or Device has no literal syntax, so None is all there is. */
  if ((a->type == BP__T_TENSOR || a->type == BP__T_DEVICE) && !a->optional)
    return fail_at(p, col, "'%s %s' cannot have a default; only an "
                           "optional %s ('%s?') can, and only None",
                   ty, a->name, ty, ty);
  if (at_word(p, "None")) {
    if (!a->optional)
      return fail_at(p, col, "None is not a valid default for '%s %s' "
                             "because '%s' is not optional (write '%s?')",
                     ty, a->name, ty, ty);
    a->has_default = true;
    a->default_value.tag = BP_TAG_NONE;
    advance(p);
    return true;
  }
  if (a->type == BP__T_TENSOR || a->type == BP__T_DEVICE)
    return fail_default(p, a, "None");
  if (a->is_list) return parse_list_default(p, a);
  bp_value v;
  if (!parse_scalar(p, a, &v, false)) return false;
  a->default_value = v;
  a->has_default = true;
  advance(p);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Arguments and returns                                                    */
/* ------------------------------------------------------------------------ */

/* param = type ident [ "=" default ] */
static bool parse_param(parser *p, bp__arg *a, const char *expected,
                        size_t *name_col) {
  if (!parse_type(p, a, expected)) return false;
  if (p->tok.kind != TK_IDENT) return fail_expected(p, "an argument name");
  *name_col = p->tok.start;
  if (!(a->name = dup_token(p))) return false;
  advance(p);
  if (!at_punct(p, '=')) return true;
  advance(p);
  return parse_default(p, a);
}

/* params = "(" [ ( param | "*" ) { "," ( param | "*" ) } ] ")" */
static bool parse_params(parser *p, bp__schema *s) {
  size_t cap = 0, star_col = 0;
  bool star = false;
  size_t first_default = SIZE_MAX; /* the first positional with a default */
  advance(p);                      /* past '(' */
  if (at_punct(p, ')')) {
    advance(p);
    return true;
  }
  for (;;) {
    if (at_punct(p, '*')) {
      if (star)
        return fail_at(p, p->tok.start, "a second '*': keyword-only "
                                        "arguments are marked once");
      star = true;
      star_col = p->tok.start;
      s->npositional = s->nargs;
      advance(p);
      if (!at_punct(p, ',') && !at_punct(p, ')'))
        return fail_expected(p, "',' after '*'");
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
          return fail_at(p, name_col, "duplicate argument name '%s'",
                         a->name);
      /* Positional arguments are filled left to right, so once one may be
       * left out, all that follow must be too. */
      if (!star && a->has_default && first_default == SIZE_MAX)
        first_default = s->nargs - 1;
      if (!star && !a->has_default && first_default != SIZE_MAX)
        return fail_at(p, col, "positional argument '%s' has no default but "
                               "follows '%s', which has one (give it a "
                               "default, or move it before '%s' or after "
                               "'*')",
                       a->name, s->args[first_default].name,
                       s->args[first_default].name);
    }
    if (at_punct(p, ')')) break;
    if (!at_punct(p, ',')) return fail_expected(p, "',' or ')'");
    advance(p);
  }
  if (star && s->npositional == s->nargs)
    return fail_at(p, star_col, "'*' must be followed by at least one "
                                "keyword-only argument");
  if (!star) s->npositional = s->nargs;
  advance(p); /* past ')' */
  return true;
}

/* ret = type [ ident ] */
static bool parse_return(parser *p, bp__schema *s, size_t *cap,
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
    return fail_at(p, col, "return type '%s' is not supported (a return "
                           "must be Tensor, int, SymInt, float, bool or "
                           "ScalarType)", ty);
  }
  if (p->tok.kind != TK_IDENT) return true;
  size_t name_col = p->tok.start;
  if (!(r->name = dup_token(p))) return false;
  for (size_t i = 0; i + 1 < s->nrets; i++)
    if (s->rets[i].name && strcmp(s->rets[i].name, r->name) == 0)
      return fail_at(p, name_col, "duplicate return name '%s'", r->name);
  advance(p);
  return true;
}

/* returns = ret | "(" [ ret { "," ret } ] ")" */
static bool parse_returns(parser *p, bp__schema *s) {
  size_t cap = 0;
  if (!at_punct(p, '('))
    return parse_return(p, s, &cap, "a return type or '('");
  advance(p);
  if (at_punct(p, ')')) {
    advance(p);
    return true;
  }
  for (;;) {
    if (!parse_return(p, s, &cap,
                      s->nrets == 0 ? "a return type or ')'" : "a return type"))
      return false;
    if (at_punct(p, ')')) break;
    if (!at_punct(p, ',')) return fail_expected(p, "',' or ')'");
    advance(p);
  }
  advance(p);
  return true;
}

/* schema = [ ident "::" ] ident [ "." ident ] params "->" returns END */
static bool parse_schema(parser *p, bp__schema *s) {
  if (p->tok.kind != TK_IDENT) return fail_expected(p, "an operator name");
  char *first = dup_token(p);
  if (!first) return false;
  advance(p);
  if (p->tok.kind == TK_SCOPE) {
    s->ns = first;
    advance(p);
    if (p->tok.kind != TK_IDENT)
      return fail_expected(p, "an operator name after '::'");
    if (!(s->name = dup_token(p))) return false;
    advance(p);
  } else {
    s->name = first;
  }
  if (at_punct(p, '.')) {
    advance(p);
    if (p->tok.kind != TK_IDENT) return fail_expected(p, "an overload name");
    if (!(s->overload = dup_token(p))) return false;
    advance(p);
  } else if (!(s->overload = dup_mem(p, "", 0))) {
    return false;
  }
  if (!at_punct(p, '('))
    return fail_expected(p, s->overload[0] ? "'('"
                            : s->ns        ? "'.' or '('"
                                           : "'::', '.' or '('");
  if (!parse_params(p, s)) return false;
  if (p->tok.kind != TK_ARROW) return fail_expected(p, "'->'");
  advance(p);
  if (!parse_returns(p, s)) return false;
  if (p->tok.kind != TK_END) return fail_expected(p, "end of input");
  return true;
}

bp_status bp__schema_parse(const char *text, bp__schema **out, char *err,
                           size_t errlen) {
  parser p = {text ? text : "", 0, {TK_END, 0, 0}, err, errlen, BP_OK};
  if (err && errlen > 0) err[0] = '\0';
  if (!out) {
    /* A caller bug rather than a bad schema. */
    if (err && errlen > 0) snprintf(err, errlen, "no place for the schema");
    return BP_ERR_INVALID_ARGUMENT;
  }
  if (!text) {
    fail_at(&p, 0, "no schema text (NULL)");
    return p.status;
  }
  bp__schema *s = calloc(1, sizeof *s);
  if (!s) {
    fail_oom(&p);
    return p.status;
  }
  advance(&p);
  parse_schema(&p, s);
  if (p.status != BP_OK) {
    bp__schema_free(s);
    return p.status;
  }
  *out = s;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */
/* ------------------------------------------------------------------------ */

/* Appends to a caller's buffer, truncating, while counting the full
 * length. */
typedef struct writer {
  char *buf;
  size_t cap;
  size_t len;
} writer;

static void put_mem(writer *w, const char *s, size_t n) {
  if (w->cap > 0 && w->len < w->cap - 1) {
    size_t room = w->cap - 1 - w->len;
    memcpy(w->buf + w->len, s, n < room ? n : room);
  }
  w->len += n;
}

static void put(writer *w, const char *s) { put_mem(w, s, strlen(s)); }

static size_t finish(writer *w) {
  if (w->cap > 0) w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
  return w->len;
}

static void put_int(writer *w, int64_t v) {
  char b[24];
  snprintf(b, sizeof b, "%" PRId64, v);
  put(w, b);
}

static void put_float(writer *w, double v) {
  char b[48];
  double_to_text(v, b);
  put(w, b);
}

static void put_type(writer *w, const bp__arg *a) {
  put(w, type_spelling(a->type));
  if (a->alias_set) {
    put(w, "(");
    put(w, a->alias_set);
    if (a->is_write) put(w, "!");
    put(w, ")");
  }
  if (a->is_list) {
    put(w, "[");
    if (a->list_size >= 0) put_int(w, a->list_size);
    put(w, "]");
  }
  if (a->optional) put(w, "?");
}

/* Double quotes always, so that equal strings print equally. */
static void put_string(writer *w, const char *s) {
  put(w, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') put(w, "\\");
    put_mem(w, s, 1);
  }
  put(w, "\"");
}

static void put_default(writer *w, const bp_value *v) {
  switch (v->tag) {
  case BP_TAG_NONE: put(w, "None"); break;
  case BP_TAG_INT: put_int(w, v->u.i); break;
  case BP_TAG_FLOAT: put_float(w, v->u.f); break;
  case BP_TAG_BOOL: put(w, v->u.b ? "True" : "False"); break;
  case BP_TAG_STR: put_string(w, v->u.str); break;
  case BP_TAG_SCALAR_TYPE: {
    const char *name = dtype_name(v->u.i);
    if (name)
      put(w, name);
    else
      put_int(w, v->u.i); /* not made by the parser; printed, not hidden */
    break;
  }
  case BP_TAG_INT_LIST:
  case BP_TAG_FLOAT_LIST:
    put(w, "[");
    for (uint32_t i = 0; i < v->len; i++) {
      if (i > 0) put(w, ", ");
      if (v->tag == BP_TAG_INT_LIST)
        put_int(w, v->u.ints[i]);
      else
        put_float(w, v->u.floats[i]);
    }
    put(w, "]");
    break;
  default: put(w, "?"); break;
  }
}

static void put_arg(writer *w, const bp__arg *a) {
  put_type(w, a);
  if (a->name) {
    put(w, " ");
    put(w, a->name);
  }
  if (a->has_default) {
    put(w, "=");
    put_default(w, &a->default_value);
  }
}

size_t bp__arg_type_format(const bp__arg *a, char *buf, size_t buflen) {
  writer w = {buf, buflen, 0};
  if (a) put_type(&w, a);
  return finish(&w);
}

size_t bp__schema_format(const bp__schema *s, bool with_ns, char *buf,
                         size_t buflen) {
  writer w = {buf, buflen, 0};
  if (!s) return finish(&w);
  if (with_ns && s->ns) {
    put(&w, s->ns);
    put(&w, "::");
  }
  put(&w, s->name);
  if (s->overload && s->overload[0]) {
    put(&w, ".");
    put(&w, s->overload);
  }
  put(&w, "(");
  for (size_t i = 0; i < s->nargs; i++) {
    if (i > 0) put(&w, ", ");
    if (i == s->npositional) put(&w, "*, ");
    put_arg(&w, &s->args[i]);
  }
  put(&w, ") -> ");
  /* One unnamed return prints bare; a named one needs the parentheses,
   * since "-> Tensor x" would read back the same but looks like two. */
  bool bare = s->nrets == 1 && !s->rets[0].name;
  if (!bare) put(&w, "(");
  for (size_t i = 0; i < s->nrets; i++) {
    if (i > 0) put(&w, ", ");
    put_arg(&w, &s->rets[i]);
  }
  if (!bare) put(&w, ")");
  return finish(&w);
}
