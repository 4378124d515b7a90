/*
 * host/call_dtypes.c - routing a call on its dtypes: a kernel that declares
 * a dtype list (bp_kernel_def.dtypes) serves only calls whose tensors it
 * declares, its arguments' and its results' alike; any other call goes to
 * the next kernel in precedence order that declares them, or to the op's
 * composite, or fails with a message that names the op, the plugin and the
 * dtype.  call.c checks the common case inline and comes here for the
 * rest.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *arg_name(const bp_op *op, uint32_t i) {
  return op->schema->args[i].name ? op->schema->args[i].name : "?";
}

/* "cpu" for a device type (its name, or its number). */
static void type_label(int32_t type, char *buf, size_t n) {
  const char *name = bp_device_type_name(type);
  if (name)
    snprintf(buf, n, "%s", name);
  else
    snprintf(buf, n, "device type %d", (int)type);
}

/* The dtype bits of every tensor argument (lists included). */
uint32_t bp__arg_dtype_bits(const bp_op *op, const bp_value *args) {
  uint32_t bits = 0;
  for (uint32_t j = 0; j < op->ntensor_args; j++) {
    const bp_value *v = &args[op->tensor_args[j]];
    if (v->tag == BP_TAG_TENSOR)
      bits |= v->u.tensor->dtype_bit;
    else if (v->tag == BP_TAG_TENSOR_LIST)
      for (uint32_t e = 0; e < v->len; e++) bits |= v->u.tensors[e]->dtype_bit;
  }
  return bits;
}

/*
 * The dtype bits of the call's tensor results, as the op's meta function
 * gives them.  A kernel's declared dtypes cover its results as well as its
 * arguments: whatever decides a result's dtype (a ScalarType argument such
 * as sum's dtype=, the op's promotion, the op itself, as argmax's int64),
 * a kernel is never asked for a result of a dtype it does not declare.
 * Returns false when the dtypes are not known before the call: the op has
 * no meta function (its kernel decides its results), or the meta function
 * refuses the arguments (the kernel then gives the op's error).  The
 * thread's last error is left as it was.
 */
bool bp__result_dtype_bits(const bp_op *op, const bp_value *args, uint32_t *out) {
  *out = 0;
  if (!op->meta || op->nrets > BP__MAX_RETS) return false;
  bp_tensor_meta outs[BP__MAX_RETS];
  for (uint32_t j = 0; j < op->nrets; j++) outs[j].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp__kept_error kept;
  bp__error_keep(&kept);
  if (bp__run_meta(op, args, outs, op->nrets) != BP_OK) {
    bp__error_restore(&kept);
    return false;
  }
  bp__free(kept.message);
  for (uint32_t j = 0; j < op->nrets; j++)
    if (op->ret_tag[j] == BP_TAG_TENSOR) *out |= bp__dtype_bit(outs[j].dtype);
  return true;
}

/* No candidate kernel declares the dtypes of the call: names the first
 * argument whose dtype the first kernel lacks, and what it declares. */
__attribute__((noinline, cold)) static bp_status no_dtype(const bp_op *op, const bp__kernel *k,
                                                          const bp_value *args) {
  char declared[160] = "", label[48];
  size_t len = 0;
  for (const int32_t *d = k->dtypes; d && *d != BP_DTYPE_INVALID && len < sizeof declared; d++) {
    int w = snprintf(declared + len, sizeof declared - len, "%s%s", len ? ", " : "",
                     bp_dtype_name(*d));
    if (w > 0) len += (size_t)w;
  }
  type_label(k->ctx.device_type, label, sizeof label);
  for (uint32_t j = 0; j < op->ntensor_args; j++) {
    uint32_t i = op->tensor_args[j];
    const bp_value *v = &args[i];
    size_t count = v->tag == BP_TAG_TENSOR ? 1 : v->tag == BP_TAG_TENSOR_LIST ? v->len : 0;
    for (size_t e = 0; e < count; e++) {
      const bp_tensor *t = v->tag == BP_TAG_TENSOR ? v->u.tensor : v->u.tensors[e];
      if (!(t->dtype_bit & k->dtype_refused)) continue;
      return bp__error(BP_ERR_UNSUPPORTED,
                       "%s: argument #%u '%s' is %s, which the kernel for %s (plugin '%s') does "
                       "not support (it declares %s), and no other kernel for %s does", op->name,
                       i, arg_name(op, i), bp_dtype_name(t->view.dtype), label,
                       k->owner->name ? k->owner->name : "?", declared, label);
    }
  }
  bp_tensor_meta outs[BP__MAX_RETS];
  for (uint32_t j = 0; j < op->nrets; j++) outs[j].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  if (op->meta && op->nrets <= BP__MAX_RETS && bp__run_meta(op, args, outs, op->nrets) == BP_OK)
    for (uint32_t j = 0; j < op->nrets; j++) {
      if (op->ret_tag[j] != BP_TAG_TENSOR || !(bp__dtype_bit(outs[j].dtype) & k->dtype_refused))
        continue;
      return bp__error(BP_ERR_UNSUPPORTED,
                       "%s: result #%u would be %s, which the kernel for %s (plugin '%s') does "
                       "not support (it declares %s), and no other kernel for %s does", op->name,
                       j, bp_dtype_name(outs[j].dtype), label,
                       k->owner->name ? k->owner->name : "?", declared, label);
    }
  return bp__error(BP_ERR_INTERNAL, "%s: no kernel declares the call's dtypes", op->name);
}

/* The first kernel from k on, in precedence order, that declares the
 * dtypes in `bits`; else the op's composite, which serves every dtype
 * (a plugin's kernel for some dtypes leaves it the others); NULL (with an
 * error) when there is neither. */
const bp__kernel *bp__kernel_for_dtypes(const bp_op *op, const bp__kernel *k,
                                        const bp_value *args, uint32_t bits) {
  const bp__kernel *first = k;
  uint32_t rbits = 0;
  bool have_rbits = false, known = false;
  for (; k; k = atomic_load_explicit(&k->next, memory_order_acquire)) {
    if (bits & k->dtype_refused) continue;
    if (!k->dtype_refused) return k;
    if (!have_rbits) {
      known = bp__result_dtype_bits(op, args, &rbits);
      have_rbits = true;
    }
    if (!known || !(rbits & k->dtype_refused)) return k;
  }
  if (op->composite && bp__kernel_live(op->composite)) return op->composite;
  /* When the op set refuses the dtypes anyway, its error is the one every
   * backend gives; only dtypes the op takes are "not supported". */
  bp_tensor_meta outs[BP__MAX_RETS];
  for (uint32_t j = 0; j < op->nrets; j++) outs[j].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  if (!op->meta || bp__run_meta(op, args, outs, op->nrets) == BP_OK) no_dtype(op, first, args);
  return NULL;
}

