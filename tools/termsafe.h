/*
 * tools/termsafe.h - text from outside the program (a plugin's vendor,
 * version, note or error message, an op's doc, a file name, a .npy
 * header) made safe to write to a terminal or into one TAP line.
 *
 * A terminal acts on control characters: ESC starts sequences that move
 * the cursor, recolour or retitle the window, or rewrite lines already
 * shown, and a newline inside a TAP line starts a new, forged, test point.
 * The escaped text shows each such byte instead of sending it:
 *
 *   newline, carriage return, tab      \n  \r  \t
 *   other C0 controls and DEL          \x1b  \x7f  (two hex digits)
 *   C1 controls U+0080..U+009F         \u009b      (UTF-8 C2 80..C2 9F)
 *   a byte that is not part of
 *   well-formed UTF-8                  \xff
 *
 * Everything else, well-formed UTF-8 included, is copied unchanged (a
 * backslash too: the escapes are for reading, not for decoding back).
 * Newlines that a tool writes itself, to end its own lines, never go
 * through these functions.
 */
#ifndef BP_TOOLS_TERMSAFE_H
#define BP_TOOLS_TERMSAFE_H

#include <stddef.h>

/* Writes the escaped form of s into out (size bytes, NUL-terminated when
 * size > 0, truncated where it does not fit) and returns the length of the
 * whole escaped text, as snprintf() does.  A NULL s reads as "(null)". */
size_t termsafe_escape(const char *s, char *out, size_t size);

/* The escaped form of s, for printing.  The string belongs to this module
 * and stays valid until eight more calls on the same thread, so that one
 * printf() can take up to eight of them.  A NULL s gives "(null)"; if
 * memory runs out, the result is "(unprintable: out of memory)". */
const char *termsafe(const char *s);

/* The length (1 to 4) of the well-formed UTF-8 sequence that starts at s,
 * or 0 when none does (a stray continuation byte, an overlong form, a
 * surrogate, a code point past U+10FFFF, or a sequence cut short).  For
 * writers of other escaped forms, such as bp-info's JSON. */
size_t termsafe_utf8_len(const char *s);

#endif /* BP_TOOLS_TERMSAFE_H */
