/*
 * tools/termsafe.c - text from outside the program, escaped by the host's
 * bp_text_escape(), in buffers that one printf() can take several of.
 */
#include "termsafe.h"

#include <stdlib.h>
#include <string.h>

#define RING 8

const char *termsafe(const char *s) {
  static _Thread_local char *ring[RING];
  static _Thread_local size_t cap[RING];
  static _Thread_local unsigned next;
  unsigned k = next++ % RING;
  size_t need = bp_text_escape(s, NULL, 0) + 1;
  if (need > cap[k]) {
    char *grown = realloc(ring[k], need);
    if (!grown) return "(unprintable: out of memory)";
    ring[k] = grown;
    cap[k] = need;
  }
  bp_text_escape(s, ring[k], cap[k]);
  return ring[k];
}
