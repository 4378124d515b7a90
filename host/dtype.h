/*
 * host/dtype.h - the host's one table of dtype codes and names (dtype.c),
 * which bp_dtype_name(), bp_dtype_from_name() and the schema lexer's
 * ScalarType defaults all read.
 */
#ifndef BP_HOST_DTYPE_H
#define BP_HOST_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entry i of the table (0 .. one less than the number of dtypes): its code
 * and its name (static); false past the end. */
bool bp__dtype_at(size_t i, int32_t *code, const char **name);

#endif
