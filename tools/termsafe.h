/*
 * tools/termsafe.h - text from outside the program (a plugin's vendor,
 * version, note or error message, an op's doc, a file name, a .npy
 * header) made safe to write to a terminal or into one TAP line, by the
 * host's bp_text_escape() (<backplane/host.h> says which bytes it escapes
 * and how: control characters, the C1 controls and bytes that are not
 * well-formed UTF-8).
 *
 * Newlines that a tool writes itself, to end its own lines, never go
 * through it.
 */
#ifndef BP_TOOLS_TERMSAFE_H
#define BP_TOOLS_TERMSAFE_H

#include <backplane/host.h>

/* The escaped form of s, for printing.  The string belongs to this module
 * and stays valid until eight more calls on the same thread, so that one
 * printf() can take up to eight of them.  A NULL s gives "(null)"; if
 * memory runs out, the result is "(unprintable: out of memory)". */
const char *termsafe(const char *s);

#endif /* BP_TOOLS_TERMSAFE_H */
