/*
 * tools/argtext.h - the text of bp-run's command line: numbers and lists
 * read from arguments.  Ints follow the schema grammar (docs/schemas.md);
 * floats take what both strtod and Python's float() take, as a user
 * types them, less hex and spaces:
 *
 *   int     -?[0-9]+                                   (int64)
 *   float   [+-]?( D+ ( "." D* )? | "." D+ ) ( [eE] [+-]? D+ )?
 *           [+-]?( inf | infinity | nan )              (any case)
 *
 * The schema grammar for defaults stays narrower (no sign '+', no inf or
 * nan).  A literal that overflows a double (1e400) is refused; one that
 * underflows reads as a subnormal or zero.  Nothing here prints or exits.
 */
#ifndef BP_TOOLS_ARGTEXT_H
#define BP_TOOLS_ARGTEXT_H

#include <stddef.h>
#include <stdint.h>

/* One argument of an op, as bp-run needs it (filled from
 * bp_op_get_arg()). */
typedef struct argtext_param {
  char name[64];
  char base[16];   /* "Tensor", "int", "float", ... */
  int list;        /* T[] or T[N] */
  int optional;    /* T? */
  int kwonly;      /* after '*' */
  int has_default; /* NAME=VALUE in the schema: may be left out */
} argtext_param;

/* Results of the number readers. */
enum { ARGTEXT_OK = 0, ARGTEXT_SYNTAX = -1, ARGTEXT_RANGE = -2 };

/* Reads s as an int64 or a double; returns ARGTEXT_OK, ARGTEXT_SYNTAX or
 * ARGTEXT_RANGE (an int outside int64, a float that overflows). */
int argtext_int(const char *s, int64_t *out);
int argtext_float(const char *s, double *out);

/* Splits a list written "1,2,3", "[1, 2]" or " [ 1,2 ] " into its items,
 * in place: text is modified, and the items, with the spaces around them
 * trimmed, point into it.  Returns a new array of *n item pointers, which
 * the caller frees, or NULL when out of memory.  "", "[]" and "[ ]" have
 * no items; an empty item ("1,,2") is an item "", which no reader takes. */
char **argtext_split_list(char *text, size_t *n);

#endif /* BP_TOOLS_ARGTEXT_H */
