/*
 * tests/test-termsafe.c - bp_text_escape() and tools/termsafe.c over it,
 * which the tools run every string from a plugin through before it
 * reaches a terminal or a TAP line: control characters, C1 controls and
 * stray bytes come out as visible escapes, and well-formed UTF-8 comes
 * out unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "termsafe.h"

static void plain_text_is_unchanged(void) {
  is_str(termsafe("cpu 0.1.0 (Backplane)"), "cpu 0.1.0 (Backplane)");
  is_str(termsafe(""), "");
  is_str(termsafe("back\\slash"), "back\\slash");
  is_str(termsafe(NULL), "(null)");
}

static void controls_are_escaped(void) {
  is_str(termsafe("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  is_str(termsafe("a\nok 999 - forged\r\tb"), "a\\nok 999 - forged\\r\\tb");
  is_str(termsafe("\x01\x07\x1f\x7f"), "\\x01\\x07\\x1f\\x7f");
  /* An OSC sequence that would retitle the window, ended by BEL. */
  is_str(termsafe("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
}

static void utf8_is_kept_and_c1_escaped(void) {
  is_str(termsafe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  /* U+009B (CSI) and U+0085 (NEL) as UTF-8; U+00A0 is not a control. */
  is_str(termsafe("\xc2\x9b" "2J \xc2\x85 \xc2\xa0"), "\\u009b2J \\u0085 \xc2\xa0");
}

static void stray_bytes_are_escaped(void) {
  /* 8-bit C1 (a lone 0x9b), a lone lead byte, an overlong '/', a
   * surrogate, a code point past U+10FFFF, and a sequence cut short. */
  is_str(termsafe("\x9b" "2J"), "\\x9b2J");
  is_str(termsafe("\xc3x"), "\\xc3x");
  is_str(termsafe("\xc0\xaf"), "\\xc0\\xaf");
  is_str(termsafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  is_str(termsafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  is_str(termsafe("\xe2\x82"), "\\xe2\\x82");
}

static void escape_reports_the_full_length(void) {
  char buf[8];
  size_t n = bp_text_escape("ab\x1b[0m", buf, sizeof buf);
  is_int(n, 9); /* ab \x1b [0m */
  is_str(buf, "ab\\x1b[");
  is_int(bp_text_escape("\n", NULL, 0), 2);
  char one[1] = {'x'};
  bp_text_escape("abc", one, 1);
  is_int(one[0], 0);
}

static void results_survive_eight_calls(void) {
  char want[8][8];
  const char *got[8];
  for (int i = 0; i < 8; i++) {
    snprintf(want[i], sizeof want[i], "s%d", i);
    got[i] = termsafe(want[i]);
  }
  for (int i = 0; i < 8; i++) is_str(got[i], want[i]);
  /* A long string grows its buffer. */
  char big[5000];
  memset(big, '\x1b', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  is_int(strlen(termsafe(big)), 4 * (sizeof big - 1));
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(plain_text_is_unchanged),   TAP_CASE(controls_are_escaped),
      TAP_CASE(utf8_is_kept_and_c1_escaped), TAP_CASE(stray_bytes_are_escaped),
      TAP_CASE(escape_reports_the_full_length), TAP_CASE(results_survive_eight_calls),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
