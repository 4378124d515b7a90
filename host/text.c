/*
 * host/text.c - text from outside the program (a plugin's strings, an
 * op's doc, a path) made safe to show: bp_text_escape() for a terminal or
 * one line of a log, and the JSON string form that bp_describe() writes.
 * Both read the text one character at a time with bp__utf8_len(), so the
 * two forms agree on what a character is.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

size_t bp__utf8_len(const char *str) {
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

size_t bp__text_escape_one(const char *s, char esc[8], size_t *used) {
  const unsigned char *p = (const unsigned char *)s;
  unsigned char c = *p;
  size_t n = bp__utf8_len(s);
  *used = n ? n : 1;
  if (c == '\n' || c == '\r' || c == '\t') {
    esc[0] = '\\';
    esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    return 2;
  }
  if (c < 0x20 || c == 0x7f || n == 0) {
    snprintf(esc, 8, "\\x%02x", c);
    return 4;
  }
  if (c == 0xc2 && p[1] < 0xa0) {
    /* U+0080..U+009F, the C1 controls (CSI is U+009B). */
    snprintf(esc, 8, "\\u%04x", (unsigned)p[1]);
    return 6;
  }
  memcpy(esc, s, n);
  return n;
}

size_t bp_text_escape(const char *s, char *out, size_t size) {
  const char *p = s ? s : "(null)";
  size_t len = 0;
  while (*p) {
    char esc[8];
    size_t used, n = bp__text_escape_one(p, esc, &used);
    for (size_t i = 0; i < n; i++, len++)
      if (out && len + 1 < size) out[len] = esc[i];
    p += used;
  }
  if (size && out) out[len < size ? len : size - 1] = '\0';
  return len;
}
