/*
 * tests/fuzz/fuzz-schema.c - libFuzzer target for the schema parser.
 *
 * Any text either parses or is refused with a message; a schema that
 * parses prints a canonical text that parses again and prints the same
 * (the redefinition check compares these texts).  Run through run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *canonical(const bp__schema *s) {
  size_t len = bp__schema_format(s, true, NULL, 0);
  char *buf = malloc(len + 1);
  if (!buf) abort();
  bp__schema_format(s, true, buf, len + 1);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  bp__schema *s = NULL;
  char err[256];
  if (bp__schema_parse(text, &s, err, sizeof err) == BP_OK) {
    char *first = canonical(s);
    bp__schema *again = NULL;
    if (bp__schema_parse(first, &again, err, sizeof err) != BP_OK) abort();
    char *second = canonical(again);
    if (strcmp(first, second) != 0) abort();
    free(first);
    free(second);
    bp__schema_free(again);
    bp__schema_free(s);
  } else if (!err[0]) {
    abort(); /* a refusal always says why */
  }
  free(text);
  return 0;
}
