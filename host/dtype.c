/*
 * host/dtype.c - the dtypes: the one table of their codes and names, and
 * bp_dtype_name(), bp_dtype_from_name() and bp_dtype_size().
 */
#include "dtype.h"
#include "internal.h"

#include <string.h>


static const struct {
  int32_t code;
  const char *name;
} dtype_table[] = {
    {BP_FLOAT32, "float32"}, {BP_FLOAT64, "float64"}, {BP_FLOAT16, "float16"},
    {BP_BFLOAT16, "bfloat16"}, {BP_INT8, "int8"}, {BP_INT16, "int16"},
    {BP_INT32, "int32"}, {BP_INT64, "int64"}, {BP_UINT8, "uint8"},
    {BP_BOOL, "bool"},
};
#define NDTYPES (sizeof dtype_table / sizeof dtype_table[0])

bool bp__dtype_at(size_t i, int32_t *code, const char **name) {
  if (i >= NDTYPES) return false;
  *code = dtype_table[i].code;
  *name = dtype_table[i].name;
  return true;
}

BP_API const char *bp_dtype_name(int32_t dtype) {
  for (size_t i = 0; i < NDTYPES; i++)
    if (dtype_table[i].code == dtype) return dtype_table[i].name;
  return NULL;
}

BP_API bp_status bp_dtype_from_name(const char *name, int32_t *out_dtype) {
  if (!name || !out_dtype)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_dtype_from_name: %s is NULL",
                     !name ? "name" : "out_dtype");
  for (size_t i = 0; i < NDTYPES; i++)
    if (strcmp(dtype_table[i].name, name) == 0) {
      *out_dtype = dtype_table[i].code;
      return BP_OK;
    }
  return bp__error(BP_ERR_TYPE,
                   "unknown dtype '%s' (expected one of float32, float64, float16, bfloat16, "
                   "int8, int16, int32, int64, uint8, bool)", name);
}

BP_API size_t bp_dtype_size(int32_t dtype) {
  /* Every tensor made asks this, several times: no table search. */
  return bp__dtype_bit(dtype) != 1u << 31 ? BP_DTYPE_BITS(dtype) / 8 : 0;
}
