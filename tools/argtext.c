/*
 * tools/argtext.c - schema parameters, numbers and lists as bp-run reads
 * them from its command line (argtext.h).
 */
#include "argtext.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

static const char *skip_ws(const char *p) {
  while (is_space(*p)) p++;
  return p;
}

/* The end of the item that starts at p: the next ',' or ')' (or the end)
 * outside brackets and quotes. */
static const char *item_end(const char *p) {
  int depth = 0;
  char quote = 0;
  for (; *p; p++) {
    if (quote) {
      if (*p == '\\' && p[1])
        p++;
      else if (*p == quote)
        quote = 0;
    } else if (*p == '"' || *p == '\'') {
      quote = *p;
    } else if (*p == '(' || *p == '[') {
      depth++;
    } else if ((*p == ')' || *p == ']') && depth > 0) {
      depth--;
    } else if ((*p == ',' || *p == ')') && depth == 0) {
      break;
    }
  }
  return p;
}

/* Reads one parameter, "Tensor(a!)? name=default", from [start, end). */
static void read_param(const char *start, const char *end, int kwonly, argtext_param *a) {
  memset(a, 0, sizeof *a);
  a->kwonly = kwonly;
  size_t b = 0;
  const char *q = start;
  while (q < end && is_alpha(*q)) {
    if (b + 1 < sizeof a->base) a->base[b++] = *q;
    q++;
  }
  /* Alias annotation, list and optional markers. */
  for (; q < end && *q != ' '; q++) {
    if (*q == '(') {
      while (q < end && *q != ')') q++;
    } else if (*q == '[') {
      a->list = 1;
    } else if (*q == '?') {
      a->optional = 1;
    }
  }
  q = skip_ws(q);
  size_t k = 0;
  while (q < end && *q != '=' && *q != ' ') {
    if (k + 1 < sizeof a->name) a->name[k++] = *q;
    q++;
  }
  q = skip_ws(q);
  a->has_default = q < end && *q == '=';
}

size_t argtext_params(const char *schema, argtext_param *out, size_t max) {
  const char *p = strchr(schema, '(');
  if (!p) return 0;
  p++;
  size_t n = 0;
  int kwonly = 0;
  while (*p && *p != ')') {
    const char *start = skip_ws(p);
    p = item_end(start);
    size_t len = (size_t)(p - start);
    if (len == 1 && *start == '*')
      kwonly = 1;
    else if (len > 0 && n < max)
      read_param(start, p, kwonly, &out[n++]);
    if (*p == ',') p++;
  }
  return n;
}

int argtext_tensor_results(const char *schema) {
  const char *p = strstr(schema, "->");
  if (!p) return 0;
  p = skip_ws(p + 2);
  int tuple = *p == '(';
  if (tuple) p++;
  int count = 0;
  while (*p && *p != ')') {
    const char *start = skip_ws(p);
    p = item_end(start);
    if (!strncmp(start, "Tensor", 6) && !is_alpha(start[6])) {
      const char *q = start + 6;
      if (*q == '(') q = strchr(q, ')') ? strchr(q, ')') + 1 : q; /* Tensor(a!) */
      if (*q == '[') return -1;
      count++;
    }
    if (!tuple) break;
    if (*p == ',') p++;
  }
  return count;
}

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

/* -?( D+ ( "." D* )? | "." D+ ) ( [eE] [+-]? D+ )?, the schema grammar's. */
static int is_float_text(const char *s) {
  size_t i = s[0] == '-' ? 1 : 0, d = 0;
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
  if (errno == ERANGE && isinf(v)) return ARGTEXT_RANGE;
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
