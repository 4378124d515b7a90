/*
 * tests/schema-corpus.h - the schema corpora (schema-corpus.c), and the
 * helpers that the schema tests share.
 */
#ifndef BP_TESTS_SCHEMA_CORPUS_H
#define BP_TESTS_SCHEMA_CORPUS_H

#include <stdlib.h>
#include <string.h>

#include "../host/schema.h"
#include "tap.h"

/* A valid schema and its canonical text (NULL: the text is canonical). */
typedef struct valid_case {
  const char *text;
  const char *canon;
} valid_case;

/* An invalid schema, the column its message must give, and a phrase. */
typedef struct invalid_case {
  const char *text;
  int column;
  const char *phrase;
} invalid_case;

extern const valid_case valid_basic[];
extern const size_t n_valid_basic;
extern const valid_case valid_optional[];
extern const size_t n_valid_optional;
extern const valid_case valid_defaults[];
extern const size_t n_valid_defaults;
extern const valid_case valid_lists[];
extern const size_t n_valid_lists;
extern const valid_case valid_alias[];
extern const size_t n_valid_alias;
extern const valid_case valid_returns[];
extern const size_t n_valid_returns;
extern const invalid_case invalid_syntax[];
extern const size_t n_invalid_syntax;
extern const invalid_case invalid_semantic[];
extern const size_t n_invalid_semantic;

/* The helpers test-schema.c and test-schema-stress.c share. */

/* Parses text that must be valid; reports and returns NULL otherwise. */
static inline bp__schema *parse_ok(const char *text) {
  bp__schema *s = NULL;
  char err[256] = "";
  int st = bp__schema_parse(text, &s, err, sizeof err);
  if (!is_int(st, BP_OK)) {
    tap_diag("  schema: %s", text);
    tap_diag("  error: %s", err);
    return NULL;
  }
  ok(s != NULL);
  return s;
}

/* The canonical text of a schema, in a fresh buffer (or NULL). */
static inline char *format_new(const bp__schema *s, bool with_ns) {
  size_t n = bp__schema_format(s, with_ns, NULL, 0);
  char *buf = malloc(n + 1);
  if (!buf) return NULL;
  size_t m = bp__schema_format(s, with_ns, buf, n + 1);
  is_int(m, n);
  is_int(strlen(buf), n);
  return buf;
}

#endif /* BP_TESTS_SCHEMA_CORPUS_H */
