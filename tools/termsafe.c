/*
 * tools/termsafe.c - escapes control characters and stray bytes in text
 * from outside the program before a tool writes it to a terminal or into
 * a TAP line (termsafe.h says which bytes and how).
 */
#include "termsafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t termsafe_utf8_len(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  unsigned char c = s[0];
  size_t n;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  /* Stops at the first byte that is not a continuation, the NUL included. */
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
      (c == 0xf4 && s[1] >= 0x90))
    return 0;
  return n;
}

/* Appends the n bytes at p to out, keeping count in *len. */
static void put(char *out, size_t size, size_t *len, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++, (*len)++)
    if (*len + 1 < size) out[*len] = p[i];
}

size_t termsafe_escape(const char *s, char *out, size_t size) {
  const unsigned char *p = (const unsigned char *)(s ? s : "(null)");
  size_t len = 0;
  while (*p) {
    unsigned char c = *p;
    size_t n = termsafe_utf8_len((const char *)p);
    char esc[8];
    if (c == '\n' || c == '\r' || c == '\t') {
      esc[0] = '\\';
      esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
      put(out, size, &len, esc, 2);
    } else if (c < 0x20 || c == 0x7f || n == 0) {
      snprintf(esc, sizeof esc, "\\x%02x", c);
      put(out, size, &len, esc, 4);
    } else if (c == 0xc2 && p[1] < 0xa0) {
      /* U+0080..U+009F, the C1 controls (CSI is U+009B). */
      snprintf(esc, sizeof esc, "\\u%04x", (unsigned)p[1]);
      put(out, size, &len, esc, 6);
    } else {
      put(out, size, &len, (const char *)p, n);
    }
    p += n ? n : 1;
  }
  if (size) out[len < size ? len : size - 1] = '\0';
  return len;
}

#define RING 8

const char *termsafe(const char *s) {
  static _Thread_local char *ring[RING];
  static _Thread_local size_t cap[RING];
  static _Thread_local unsigned next;
  unsigned k = next++ % RING;
  size_t need = termsafe_escape(s, NULL, 0) + 1;
  if (need > cap[k]) {
    char *grown = realloc(ring[k], need);
    if (!grown) return "(unprintable: out of memory)";
    ring[k] = grown;
    cap[k] = need;
  }
  termsafe_escape(s, ring[k], cap[k]);
  return ring[k];
}
