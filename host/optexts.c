/*
 * host/optexts.c - the type spellings an op record keeps for introspection
 * (bp_op_get_arg/ret), built once when the registry defines the op.
 */
#include "internal.h"

#include <stdlib.h>

bool bp__op_type_texts(bp_op *op) {
  const bp__schema *s = op->schema;
  size_t total = 0;
  for (size_t i = 0; i < s->nargs; i++) total += bp__arg_type_format(&s->args[i], NULL, 0) + 1;
  for (size_t j = 0; j < s->nrets; j++) total += bp__arg_type_format(&s->rets[j], NULL, 0) + 1;
  char *block = bp__malloc(total ? total : 1);
  if (!block) return false;
  char *w = block;
  for (size_t i = 0; i < s->nargs + s->nrets; i++) {
    const bp__arg *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
    size_t n = bp__arg_type_format(a, w, (size_t)(block + total - w));
    op->arg_type_text[i] = w;
    w += n + 1;
  }
  bp__free(op->type_block);
  op->type_block = block;
  return true;
}
