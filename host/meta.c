/*
 * host/meta.c - running an op's meta function: the results' dtypes, shapes
 * and strides for checked arguments, each checked in turn.  The call path
 * (call.c) and the dtype routing (call_dtypes.c) both use it.
 */
#include "internal.h"

#include <string.h>

/* Runs the meta function on checked arguments; the caller is in a read
 * section and op is defined. */
bp_status bp__run_meta(const bp_op *op, const bp_value *args, bp_tensor_meta *outs,
                          size_t nouts) {
  bp_meta_fn meta = op->meta;
  if (!meta) return bp__error(BP_ERR_UNSUPPORTED, "%s: the op has no meta function", op->name);
  if (nouts < op->nrets)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: outs has %zu entries for %u results", op->name,
                     nouts, op->nrets);
  for (uint32_t j = 0; j < op->nrets; j++)
    if (outs[j].struct_size < BP_TENSOR_META_STRUCT_SIZE)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: outs[%u].struct_size is %zu, expected %zu",
                       op->name, j, outs[j].struct_size, (size_t)BP_TENSOR_META_STRUCT_SIZE);
  for (uint32_t j = 0; j < op->nrets; j++) {
    size_t sz = outs[j].struct_size;
    memset(&outs[j], 0, sizeof outs[j]);
    outs[j].struct_size = sz;
    outs[j].dtype = BP_DTYPE_INVALID;
  }
  bp_status st = meta(&op->meta_ctx, args, op->nargs, outs, op->nrets);
  if (st) {
    bp_status norm = bp__status_from_plugin((int)st, op->name);
    if (norm == st && bp_last_status() != st)
      bp__error(st, "%s: the meta function failed with %s and gave no message", op->name,
                bp_status_str(st));
    return norm;
  }
  for (uint32_t j = 0; j < op->nrets; j++) {
    if (op->ret_tag[j] != BP_TAG_TENSOR) continue;
    if (!bp_dtype_name(outs[j].dtype) || outs[j].ndim < 0 || outs[j].ndim > BP_MAX_NDIM)
      return bp__error(BP_ERR_INTERNAL,
                       "%s: the meta function left result #%u without a valid dtype and ndim "
                       "(dtype %d, ndim %d)", op->name, j, (int)outs[j].dtype, (int)outs[j].ndim);
  }
  return BP_OK;
}
