/*
 * host/schema_lex.c - the schema lexer (one token of lookahead, errors
 * with their column) and locale-independent number conversion.
 *
 * Nothing here has mutable static state: safe from any number of threads.
 */
#include "schema_lex.h"
#include "dtype.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool bp__lex_text_to_double(const char *s, size_t n, double *out) {
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
void bp__lex_double_to_text(double v, char out[48]) {
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
    if (bp__lex_text_to_double(out, strlen(out), &back) && back == v) break;
  }
  if (!strpbrk(out, ".eEin")) strcat(out, ".0"); /* "in": inf and nan */
}

/* ------------------------------------------------------------------------ */
/* Lexer                                                                    */
/* ------------------------------------------------------------------------ */




/* Records the first failure: "column N: " + the formatted message. */
bool bp__lex_fail(bp__parser *p, size_t at, const char *fmt, ...) {
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

bool bp__lex_oom(bp__parser *p) {
  if (p->status != BP_OK) return false;
  p->status = BP_ERR_OUT_OF_MEMORY;
  if (p->err && p->errlen > 0)
    snprintf(p->err, p->errlen, "out of memory while parsing a schema");
  return false;
}

/* The current token as an error message quotes it: at most MAX_QUOTE
 * bytes, with bytes outside printable ASCII written as \xNN. */
void bp__lex_quote(const bp__parser *p, char out[MAX_QUOTE * 4 + 4]) {
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
bool bp__lex_expected(bp__parser *p, const char *what) {
  if (p->tok.kind == TK_END)
    return bp__lex_fail(p, p->tok.start, "expected %s at end of input", what);
  char q[MAX_QUOTE * 4 + 4];
  bp__lex_quote(p, q);
  return bp__lex_fail(p, p->tok.start, "expected %s but got '%s'", what, q);
}

/* Scans a quoted string starting at s[i]; returns its length, or 0 after
 * recording an error.  Only \\, \" and \' are escapes, so a string means
 * the same to every reader; control characters are refused so that the
 * canonical text stays on one line. */
static size_t lex_string(bp__parser *p, size_t i) {
  const char *s = p->text;
  char q = s[i];
  size_t j = i + 1;
  for (;;) {
    char c = s[j];
    if (c == '\0') {
      bp__lex_fail(p, i, "unterminated string literal");
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
        bp__lex_fail(p, i, "unterminated string literal");
      } else if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f) {
        bp__lex_fail(p, j, "unsupported escape '\\%c' in string literal "
                      "(only \\\\, \\\" and \\' are allowed)", e);
      } else {
        bp__lex_fail(p, j, "unsupported escape in string literal "
                      "(only \\\\, \\\" and \\' are allowed)");
      }
      return 0;
    }
    if ((unsigned char)c < 0x20 || c == 0x7f) {
      bp__lex_fail(p, j, "control character 0x%02x in string literal",
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
void bp__lex_advance(bp__parser *p) {
  const char *s = p->text;
  size_t i = p->pos;
  while (is_space(s[i])) i++;
  bp__token t = {TK_END, i, 0};
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

bool bp__lex_at_punct(const bp__parser *p, char c) {
  return p->tok.kind == TK_PUNCT && p->text[p->tok.start] == c;
}

bool bp__lex_at_word(const bp__parser *p, const char *word) {
  size_t n = strlen(word);
  return p->tok.kind == TK_IDENT && p->tok.len == n &&
         memcmp(p->text + p->tok.start, word, n) == 0;
}

/* ------------------------------------------------------------------------ */
/* The vocabulary: type and dtype names                                     */
/* ------------------------------------------------------------------------ */

/* The canonical spelling of a base type (SymInt prints as int). */
const char *bp__schema_type_spelling(int type) {
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

/* The dtype names are dtype.c's table (bp__dtype_at). */
const char *bp__schema_dtype_name(int64_t code) {
  const char *name;
  int32_t c;
  for (size_t i = 0; bp__dtype_at(i, &c, &name); i++)
    if (c == code) return name;
  return NULL;
}

bool bp__lex_at_dtype(bp__parser *p, int32_t *code) {
  const char *name;
  int32_t c;
  for (size_t i = 0; bp__dtype_at(i, &c, &name); i++)
    if (bp__lex_at_word(p, name)) {
      *code = c;
      return true;
    }
  return false;
}
