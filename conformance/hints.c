/*
 * conformance/hints.c - bp-certify --hints FILE: the table of sample
 * hints (hints.h), read once in the parent.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hints.h"

static hint *table;
static size_t ntable;

/* The next blank-separated word of *p (NUL-terminated in place), or NULL. */
static char *word(char **p) {
  char *s = *p;
  while (*s == ' ' || *s == '\t') s++;
  if (!*s) return NULL;
  char *w = s;
  while (*s && *s != ' ' && *s != '\t') s++;
  if (*s) *s++ = '\0';
  *p = s;
  return w;
}

static bool number(const char *w, double *out) {
  char *end;
  errno = 0;
  double v = strtod(w, &end);
  if (errno || end == w || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Parses one line (comment and newline gone) into h; false with why. */
static bool parse_line(char *text, int line, hint *h, char *why, size_t len) {
  memset(h, 0, sizeof *h);
  h->line = line;
  char *p = text, *op = word(&p), *arg = word(&p), *kind = word(&p);
  if (!op) return true; /* a blank line: h->op stays empty */
  if (!arg || !kind) {
    snprintf(why, len, "line %d: expected 'OP ARG range LO HI' or 'OP ARG values V...'", line);
    return false;
  }
  if (!strstr(op, "::") || strlen(op) >= sizeof h->op || strlen(arg) >= sizeof h->arg) {
    snprintf(why, len, "line %d: '%s' is not an op's full name (NS::NAME) or is too long", line,
             op);
    return false;
  }
  snprintf(h->op, sizeof h->op, "%s", op);
  snprintf(h->arg, sizeof h->arg, "%s", arg);
  if (strcmp(kind, "range") == 0) {
    char *lo = word(&p), *hi = word(&p), *extra = word(&p);
    h->kind = HINT_RANGE;
    if (!lo || !hi || extra || !number(lo, &h->lo) || !number(hi, &h->hi) || h->lo > h->hi) {
      snprintf(why, len, "line %d: range needs two finite numbers LO <= HI", line);
      return false;
    }
    return true;
  }
  if (strcmp(kind, "values") == 0) {
    h->kind = HINT_VALUES;
    for (char *v; (v = word(&p));) {
      if (h->nvals == HINT_MAX_VALUES) {
        snprintf(why, len, "line %d: more than %d values", line, HINT_MAX_VALUES);
        return false;
      }
      h->vals[h->nvals++] = strdup(v);
      if (!h->vals[h->nvals - 1]) {
        snprintf(why, len, "out of memory");
        return false;
      }
    }
    if (h->nvals == 0) {
      snprintf(why, len, "line %d: values needs at least one value", line);
      return false;
    }
    return true;
  }
  snprintf(why, len, "line %d: unknown hint '%s' (expected range or values)", line, kind);
  return false;
}

bool cert_hints_load(const char *path, char *why, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
    return false;
  }
  char buf[2048];
  int line = 0;
  bool ok = true;
  while (ok && fgets(buf, sizeof buf, f)) {
    line++;
    size_t n = strlen(buf);
    if (n && buf[n - 1] != '\n' && !feof(f)) {
      snprintf(why, len, "line %d: longer than %zu characters", line, sizeof buf - 2);
      ok = false;
      break;
    }
    char *hash = strchr(buf, '#');
    if (hash) *hash = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    hint h;
    if (!(ok = parse_line(buf, line, &h, why, len))) break;
    if (!h.op[0]) continue;
    if (cert_hint_find(h.op, h.arg)) {
      snprintf(why, len, "line %d: a second hint for %s's argument '%s'", line, h.op, h.arg);
      ok = false;
      break;
    }
    hint *t = realloc(table, (ntable + 1) * sizeof *t);
    if (!t) {
      snprintf(why, len, "out of memory");
      ok = false;
      break;
    }
    table = t;
    table[ntable++] = h;
  }
  if (ok && ferror(f)) {
    snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
    ok = false;
  }
  fclose(f);
  return ok;
}

const hint *cert_hint_find(const char *op, const char *arg) {
  for (size_t i = 0; op && i < ntable; i++)
    if (strcmp(table[i].op, op) == 0 && strcmp(table[i].arg, arg) == 0) return &table[i];
  return NULL;
}

size_t cert_hints_count(void) { return ntable; }

const hint *cert_hint_at(size_t i) { return i < ntable ? &table[i] : NULL; }
