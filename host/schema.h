/*
 * host/schema.h - operator schemas: PyTorch's grammar, a documented subset.
 *
 * Internal to libbackplane; never installed.  A schema is parsed once, at
 * registration, into a bp__schema that owns all of its strings and default
 * values.  docs/schemas.md gives the grammar.
 */
#ifndef BP_HOST_SCHEMA_H
#define BP_HOST_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include <backplane/abi.h>

/* The base type of an argument or return. */
typedef enum bp__type {
  BP__T_TENSOR = 1,       /* Tensor */
  BP__T_INT = 2,          /* int, SymInt */
  BP__T_FLOAT = 3,        /* float */
  BP__T_BOOL = 4,         /* bool */
  BP__T_STR = 5,          /* str */
  BP__T_SCALAR_TYPE = 6,  /* ScalarType */
  BP__T_DEVICE = 7,       /* Device */
  BP__T_SCALAR = 8        /* Scalar: an int, a float or a bool (ABI 1.2) */
} bp__type;

/* One argument or return. */
typedef struct bp__arg {
  char *name;            /* owned; NULL for an unnamed return */
  int type;              /* bp__type */
  bool is_list;          /* T[] or T[N] */
  int64_t list_size;     /* N of T[N]; -1 for T[] */
  bool optional;         /* T? or T[]? (a Tensor? list element is refused) */
  bool kwarg_only;       /* declared after the bare '*' */
  char *alias_set;       /* owned; "a" in Tensor(a) / Tensor(a!); NULL */
  bool is_write;         /* the '!' of Tensor(a!) */
  bool has_default;
  /*
   * The default, when has_default.  Its tag is the one a caller would push
   * (BP_TAG_NONE for `=None`); strings and list arrays point into memory the
   * schema owns.  `int[2] x=1` is expanded to the list [1, 1].  A float
   * argument's integer default (`float c=1`) is stored as BP_TAG_FLOAT.
   */
  bp_value default_value;
  int32_t value_tag;     /* the bp_tag a present value has: BP_TAG_TENSOR for
                            Tensor and Tensor?, BP_TAG_INT_LIST for int[] ...;
                            BP_TAG_SCALAR for Scalar, whose value has
                            BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL */
} bp__arg;

typedef struct bp__schema {
  char *ns;              /* owned; NULL when the text had no "ns::" */
  char *name;            /* owned; the op name without namespace/overload */
  char *overload;        /* owned; "" when none */
  bp__arg *args;         /* owned array of nargs */
  size_t nargs;
  size_t npositional;    /* arguments before '*' */
  bp__arg *rets;         /* owned array of nrets */
  size_t nrets;
} bp__schema;

/*
 * Parses `text`.  On success *out is a new schema (free it with
 * bp__schema_free).  On failure returns BP_ERR_SCHEMA (BP_ERR_OUT_OF_MEMORY
 * if allocation failed), writes nothing to *out, and writes a
 * NUL-terminated message into err[0 .. errlen-1] of the form
 *     column 17: expected ')' or ',' but got 'x'
 * (columns count from 1; "at end of input" replaces "got ..." at the end).
 * Does not touch the thread's error state.
 */
bp_status bp__schema_parse(const char *text, bp__schema **out, char *err,
                           size_t errlen);

/* Frees a schema and everything it owns.  NULL is a no-op. */
void bp__schema_free(bp__schema *s);

/*
 * Writes the canonical text of a schema into buf (at most buflen bytes,
 * NUL-terminated, truncated if needed) and returns the length it needed,
 * excluding the NUL.  `with_ns` chooses whether "ns::" is printed.  Two
 * schemas that mean the same print the same, so redefinition checks compare
 * these strings.
 */
size_t bp__schema_format(const bp__schema *s, bool with_ns, char *buf,
                         size_t buflen);

/* The spelling of an argument's type, e.g. "Tensor(a!)", "int[2]", "float?"
 * into buf as bp__schema_format does. */
size_t bp__arg_type_format(const bp__arg *a, char *buf, size_t buflen);

#endif /* BP_HOST_SCHEMA_H */
