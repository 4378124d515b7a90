/*
 * tools/argtext.c - numbers and lists as bp-run reads them from its
 * command line (argtext.h).
 */
#include "argtext.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }


int argtext_int(const char *s, int64_t *out) {
  size_t i = s[0] == '-' ? 1 : 0;
  if (!s[i]) return ARGTEXT_SYNTAX;
  for (size_t k = i; s[k]; k++)
    if (!is_digit(s[k])) return ARGTEXT_SYNTAX;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE) return ARGTEXT_RANGE;
  *out = v;
  return ARGTEXT_OK;
}

/* Case-insensitive equality of s and lower-case word. */
static int same_word(const char *s, const char *word) {
  for (; *word; s++, word++)
    if ((*s | 0x20) != *word) return 0;
  return *s == '\0';
}

/* [+-]? ( D+ ( "." D* )? | "." D+ ) ( [eE] [+-]? D+ )?, or [+-]? followed
 * by inf, infinity or nan in any case: what both strtod and Python's
 * float() take, less hex and spaces. */
static int is_float_text(const char *s) {
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0, d = 0;
  if (same_word(s + i, "inf") || same_word(s + i, "infinity") || same_word(s + i, "nan"))
    return 1;
  while (is_digit(s[i])) i++, d++;
  if (s[i] == '.') {
    i++;
    while (is_digit(s[i])) i++, d++;
  }
  if (d == 0) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    i++;
    if (s[i] == '+' || s[i] == '-') i++;
    size_t e = 0;
    while (is_digit(s[i])) i++, e++;
    if (e == 0) return 0;
  }
  return s[i] == '\0';
}

int argtext_float(const char *s, double *out) {
  if (!is_float_text(s)) return ARGTEXT_SYNTAX;
  errno = 0;
  double v = strtod(s, NULL);
  /* An overflowing literal is refused; "inf" itself is not one. */
  if (errno == ERANGE && isinf(v)) return ARGTEXT_RANGE;
  /* strtod's NaN may carry either sign bit: a plain "nan" is the
   * positive quiet NaN, as Python's float("nan") is, and "-nan" the
   * negative one. */
  if (isnan(v)) v = s[0] == '-' ? -NAN : NAN;
  *out = v;
  return ARGTEXT_OK;
}

/* Trims the spaces around [p, end) in place; returns the new start. */
static char *trim(char *p, char *end) {
  while (p < end && is_space(*p)) p++;
  while (end > p && is_space(end[-1])) end--;
  *end = '\0';
  return p;
}

char **argtext_split_list(char *text, size_t *n) {
  char *body = trim(text, text + strlen(text));
  size_t len = strlen(body);
  if (len >= 2 && body[0] == '[' && body[len - 1] == ']') {
    body[len - 1] = '\0';
    body = trim(body + 1, body + len - 1);
  }
  size_t count = *body ? 1 : 0;
  for (const char *c = body; *c; c++) count += *c == ',';
  char **items = malloc((count ? count : 1) * sizeof *items);
  if (!items) return NULL;
  for (size_t i = 0; i < count; i++) {
    char *comma = strchr(body, ',');
    char *end = comma ? comma : body + strlen(body);
    char *next = comma ? comma + 1 : end;
    items[i] = trim(body, end);
    body = next;
  }
  *n = count;
  return items;
}
