/*
 * conformance/hints.h - sample hints (bp-certify --hints FILE): for an op
 * outside core, the values its generated samples give an argument.
 *
 * The file has one hint a line; blanks separate the words; '#' starts a
 * comment:
 *
 *   OP ARG range LO HI          a Tensor's elements drawn from [LO, HI]; an
 *                               int's or a float's value LO, HI and their
 *                               middle in turn
 *   OP ARG values V1 V2 ...     an int, float, Scalar, bool or str argument
 *                               takes each value in turn (at most 16)
 *
 * OP is the op's full name ("vnd::act"), ARG the argument's name in its
 * schema.  cert_hints_load() keeps the table for the process; the children the
 * certifier forks inherit it.
 */
#ifndef BP_CONFORMANCE_HINTS_H
#define BP_CONFORMANCE_HINTS_H

#include <stdbool.h>
#include <stddef.h>

#define HINT_MAX_VALUES 16

enum hint_kind { HINT_RANGE, HINT_VALUES };

typedef struct hint {
  char op[96], arg[64];
  enum hint_kind kind;
  double lo, hi;                      /* HINT_RANGE */
  int nvals;                          /* HINT_VALUES */
  const char *vals[HINT_MAX_VALUES];  /* HINT_VALUES: words of the file */
  int line;                           /* in the file, for messages */
} hint;

/* Reads FILE into the table; false with why (naming the line) when it
 * cannot be read or a line is not a hint. */
bool cert_hints_load(const char *path, char *why, size_t len);

/* The hint of op's argument arg, or NULL. */
const hint *cert_hint_find(const char *op, const char *arg);

/* The hints, for the report of those that name no op of the plugin. */
size_t cert_hints_count(void);
const hint *cert_hint_at(size_t i);

#endif /* BP_CONFORMANCE_HINTS_H */
