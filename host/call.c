/*
 * host/call.c - the dispatcher: argument checks, device and kernel
 * selection (declared dtypes included: a kernel that declares a list
 * serves only calls whose arguments and results it declares; the rest of
 * that routing is call_dtypes.c), and the one function that calls a
 * kernel of any kind (invoke).
 *
 * Everything the call path needs is derived from the schema once, when the
 * op is defined (bp__op_prepare, unboxed.c): the expected tag of each argument, which
 * arguments carry tensors, how each is passed to an unboxed kernel, the
 * ffi_cif, and the fast-path signature.  A call then checks tags, finds
 * the device, loads one pointer from the op's dispatch table and calls.  It
 * takes no lock and allocates nothing.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Argument checks                                                          */
/* ------------------------------------------------------------------------ */

static const char *arg_name(const bp_op *op, uint32_t i) {
  return op->schema->args[i].name ? op->schema->args[i].name : "?";
}

static void type_spelling(const bp_op *op, uint32_t i, char *buf, size_t n) {
  bp__arg_type_format(&op->schema->args[i], buf, n);
}

static bp_status bad_tag(const bp_op *op, uint32_t i, const bp_value *v) {
  char want[64];
  type_spelling(op, i, want, sizeof want);
  if (v->tag >= BP_TAG_COUNT)
    return bp__error(BP_ERR_TYPE, "%s: argument #%u '%s': expected %s, got an invalid tag %u",
                     op->name, i, arg_name(op, i), want, v->tag);
  return bp__error(BP_ERR_TYPE, "%s: argument #%u '%s': expected %s, got %s", op->name, i,
                   arg_name(op, i), want, bp_tag_name((int32_t)v->tag));
}

/* Checks (and, for int-as-float, converts) every argument's tag. */
static bp_status check_args(const bp_op *op, bp_value *args) {
  for (uint32_t i = 0; i < op->nargs; i++) {
    bp_value *v = &args[i];
    uint32_t want = op->arg_tag[i];
    if (BP__UNLIKELY(v->tag != want)) {
      if (v->tag == BP_TAG_NONE && op->arg_optional[i]) continue;
      if (want == BP_TAG_FLOAT && v->tag == BP_TAG_INT) {
        v->u.f = (double)v->u.i;
        v->tag = BP_TAG_FLOAT;
        continue;
      }
      /* A Scalar is an int, a float or a bool, as its own tag says. */
      if (want == BP_TAG_SCALAR &&
          (v->tag == BP_TAG_INT || v->tag == BP_TAG_FLOAT || v->tag == BP_TAG_BOOL))
        continue;
      return bad_tag(op, i, v);
    }
    if (BP__UNLIKELY(want == BP_TAG_SCALAR))
      return bp__error(BP_ERR_TYPE, "%s: argument #%u '%s': expected Scalar, got the tag "
                       "BP_TAG_SCALAR, which only describes argument types (a Scalar value "
                       "carries BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL)",
                       op->name, i, arg_name(op, i));
    if (BP__UNLIKELY(want == BP_TAG_TENSOR && !v->u.tensor))
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%u '%s': the tensor is NULL",
                       op->name, i, arg_name(op, i));
    /* A value written directly (not pushed) may hold NULL where the push
     * functions refuse it; kernels and meta functions must not see it. */
    if (BP__UNLIKELY(want == BP_TAG_STR && !v->u.str))
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%u '%s': the string is NULL",
                       op->name, i, arg_name(op, i));
    if ((want == BP_TAG_INT_LIST || want == BP_TAG_FLOAT_LIST || want == BP_TAG_TENSOR_LIST) &&
        v->len > 0) {
      if (BP__UNLIKELY(!v->u.ints))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: argument #%u '%s': the list of %u elements is NULL", op->name, i,
                         arg_name(op, i), v->len);
      if (want == BP_TAG_TENSOR_LIST)
        for (uint32_t e = 0; e < v->len; e++)
          if (BP__UNLIKELY(!v->u.tensors[e]))
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: argument #%u '%s': element %u of the list is NULL", op->name, i,
                             arg_name(op, i), e);
    }
    /* T[N] holds N elements, or none: PyTorch's "derived from another
     * argument" (max_pool2d's stride=[]). */
    if (BP__UNLIKELY(op->arg_list_size[i] >= 0 && v->len != (uint32_t)op->arg_list_size[i] &&
                     v->len != 0)) {
      char want_s[64];
      type_spelling(op, i, want_s, sizeof want_s);
      return bp__error(BP_ERR_SHAPE, "%s: argument #%u '%s': expected %s, got a list of %u",
                       op->name, i, arg_name(op, i), want_s, v->len);
    }
  }
  return BP_OK;
}

static void device_label(bp_device d, char *buf, size_t n) {
  const char *name = bp_device_type_name(d.type);
  if (name)
    snprintf(buf, n, "%s:%d", name, (int)d.index);
  else
    snprintf(buf, n, "device type %d:%d", (int)d.type, (int)d.index);
}

static bool same_device(bp_device a, bp_device b) { return a.type == b.type && a.index == b.index; }

/* The device a call dispatches on: that of the tensor arguments, which must
 * agree unless the op allows mixing; else a Device argument; else the CPU. */
static bp_status pick_device(const bp_op *op, const bp_value *args, bp_device *out) {
  bool have = false;
  bp_device dev = {BP_DEVICE_CPU, 0};
  uint32_t first = 0;
  for (uint32_t j = 0; j < op->ntensor_args; j++) {
    uint32_t i = op->tensor_args[j];
    const bp_value *v = &args[i];
    size_t count = v->tag == BP_TAG_TENSOR ? 1 : v->tag == BP_TAG_TENSOR_LIST ? v->len : 0;
    for (size_t e = 0; e < count; e++) {
      const bp_tensor *t = v->tag == BP_TAG_TENSOR ? v->u.tensor : v->u.tensors[e];
      bp_device d = t->view.device;
      if (!have) {
        dev = d;
        have = true;
        first = i;
      } else if (BP__UNLIKELY(!same_device(d, dev)) && !(op->flags & BP_OP_MIXED_DEVICES)) {
        char a[48], b[48];
        device_label(d, a, sizeof a);
        device_label(dev, b, sizeof b);
        return bp__error(BP_ERR_DEVICE,
                         "%s: argument #%u '%s' is on %s but argument #%u '%s' is on %s; the op "
                         "does not allow mixed devices", op->name, i, arg_name(op, i), a, first,
                         arg_name(op, first), b);
      }
    }
  }
  if (!have && op->device_arg >= 0 && args[op->device_arg].tag == BP_TAG_DEVICE)
    dev = args[op->device_arg].u.device;
  *out = dev;
  return BP_OK;
}

static bp_status no_kernel(const bp_op *op, bp_device dev) {
  char devs[256], label[48];
  device_label(dev, label, sizeof label);
  /* A kernel that is there now came while the call looked: a plugin was
   * being loaded, reloaded or enabled on another thread. */
  int ds = bp__device_slot(dev.type);
  if (ds >= 0 && atomic_load_explicit(&op->dispatch[ds], memory_order_acquire))
    return bp__error(BP_ERR_NOT_FOUND, "%s: no kernel for %s when the call was dispatched (a "
                     "plugin was being loaded, unloaded or enabled on another thread; there is "
                     "one now)", op->name, label);
  char owner[128], off[192] = "";
  if (ds >= 0 && bp__op_kernel_disabled(op, ds, owner, sizeof owner))
    snprintf(off, sizeof off, " (plugin '%s' has one, disabled by bp_set_kernel_enabled)", owner);
  size_t n = bp__op_kernel_devices(op, devs, sizeof devs);
  if (n == 0)
    return bp__error(BP_ERR_NOT_FOUND, "%s: no kernel for %s%s, and the op has no %skernels on "
                     "any device", op->name, label, off, *off ? "enabled " : "");
  return bp__error(BP_ERR_NOT_FOUND, "%s: no kernel for %s%s; kernels exist for: %s", op->name,
                   label, off, devs);
}

/*
 * Puts the call's arguments in schema order in `out` (or leaves them in
 * place when the stack already holds exactly nargs positional values),
 * filling defaults and placing keyword arguments.
 */
static bp_status gather_args(const bp_op *op, bp_value *values, size_t top,
                             const char *const *kwnames, size_t nkw, bp_value *scratch,
                             bp_value **out) {
  if (nkw == 0 && top == op->nargs) {
    *out = values;
    return BP_OK;
  }
  size_t npos = top - nkw;
  if (nkw > 0 && npos > op->npositional)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: takes %u positional argument%s but %zu were given (the rest are "
                     "keyword-only)", op->name, op->npositional, op->npositional == 1 ? "" : "s",
                     npos);
  if (npos > op->nargs)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: takes %u argument%s but %zu were given", op->name,
                     op->nargs, op->nargs == 1 ? "" : "s", npos);
  bool filled[BP__MAX_ARGS] = {false};
  for (size_t i = 0; i < npos; i++) {
    scratch[i] = values[i];
    filled[i] = true;
  }
  for (size_t k = 0; k < nkw; k++) {
    const char *name = kwnames[k];
    if (!name)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: keyword name #%zu is NULL", op->name, k);
    uint32_t i = 0;
    while (i < op->nargs && strcmp(arg_name(op, i), name) != 0) i++;
    if (i == op->nargs)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: unexpected keyword argument '%s'", op->name, name);
    if (filled[i])
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: argument #%u '%s' was given twice", op->name, i,
                       name);
    scratch[i] = values[npos + k];
    filled[i] = true;
  }
  for (uint32_t i = 0; i < op->nargs; i++) {
    if (filled[i]) continue;
    if (!op->schema->args[i].has_default)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: missing argument #%u '%s'", op->name, i,
                       arg_name(op, i));
    scratch[i] = op->schema->args[i].default_value;
  }
  *out = scratch;
  return BP_OK;
}

/* A kernel's results must match the schema: anything else is a plugin bug
 * that would otherwise reach the caller as a wrong value. */
static bp_status check_results(const bp_op *op, const bp__kernel *k, bp_value *rets) {
  for (uint32_t j = 0; j < op->nrets; j++) {
    bool bad_tag_ = rets[j].tag != op->ret_tag[j];
    if (BP__LIKELY(!bad_tag_ && (rets[j].tag != BP_TAG_TENSOR || rets[j].u.tensor))) continue;
    for (uint32_t r = 0; r < op->nrets; r++)
      if (rets[r].tag == BP_TAG_TENSOR) bp_tensor_release(rets[r].u.tensor);
    char dbuf[48];
    device_label(bp_device_make(k->ctx.device_type, 0), dbuf, sizeof dbuf);
    if (bad_tag_)
      return bp__error(BP_ERR_INTERNAL,
                       "%s: the kernel (plugin '%s') returned %s for result #%u, expected %s",
                       op->name, k->owner->name ? k->owner->name : "?",
                       bp_tag_name((int32_t)rets[j].tag), j, bp_tag_name(op->ret_tag[j]));
    return bp__error(BP_ERR_INTERNAL, "%s: the kernel (plugin '%s') returned BP_OK and a NULL tensor "
                     "for result #%u", op->name, k->owner->name ? k->owner->name : "?", j);
  }
  return BP_OK;
}

/* Calls deeper than this are refused (a composite that calls itself). */
#define MAX_DEPTH 64

__attribute__((noinline, cold)) static bp_status fail_kernel(const bp_op *op, const bp__kernel *k,
                                                             bp_status st) {
  bp_status norm = bp__status_from_plugin((int)st, op->name);
  if (norm == st && bp_last_status() != st)
    bp__error(st, "%s: the kernel (plugin '%s') failed with %s and gave no message", op->name,
              k->owner->name ? k->owner->name : "?", bp_status_str(st));
  /* A composite whose inner op has no kernel: the message names the op
   * called, not only the one inside it. */
  size_t n = strlen(op->name);
  const char *msg = bp_last_error();
  if (k->kind == BP__ENTRY_COMPOSITE && norm == BP_ERR_NOT_FOUND &&
      !(strncmp(msg, op->name, n) == 0 && msg[n] == ':')) {
    char why[512];
    snprintf(why, sizeof why, "%s", msg);
    bp__error(norm, "%s: no kernel for it on this device, and its composite calls an op that "
              "cannot run: %s", op->name, why);
  }
  return norm;
}

/*
 * The fast path's argument scan, for ops with no list arguments: every tag
 * exactly as the schema says, every string and tensor non-NULL, and every
 * tensor on the first tensor's device.  Anything else (None for an optional, an int for a
 * float, a device mismatch) returns -1 and the call takes the general
 * path, which accepts or explains it.  Returns the device slot.
 */
static inline bool scan_one(const bp_op *op, const bp_value *args, uint32_t i, uint64_t dev,
                            uint32_t *bits) {
  const bp_value *v = &args[i];
  if (BP__UNLIKELY(v->tag != op->arg_tag32[i])) return false;
  if (v->tag == BP_TAG_TENSOR) {
    uint64_t d;
    if (BP__UNLIKELY(!v->u.tensor)) return false;
    memcpy(&d, &v->u.tensor->view.device, sizeof d);
    if (BP__UNLIKELY(d != dev)) return false;
    *bits |= v->u.tensor->dtype_bit;
  } else if (BP__UNLIKELY(v->tag == BP_TAG_STR && !v->u.str)) {
    return false;
  }
  return true;
}

/* Also leaves in *out_bits the dtype bits of every tensor argument, for
 * the kernel's declared dtypes. */
static inline int fast_scan(const bp_op *op, const bp_value *args, uint32_t *out_bits) {
  const bp_value *first = (const bp_value *)((const char *)args + op->first_tensor_off);
  if (BP__UNLIKELY(first->tag != BP_TAG_TENSOR || !first->u.tensor)) return -1;
  uint64_t dev;
  memcpy(&dev, &first->u.tensor->view.device, sizeof dev);
  uint32_t bits = first->u.tensor->dtype_bit;
  /* Unrolled for the common argument counts: the loop's own bookkeeping
   * would cost as much as the checks. */
  uint32_t n = op->nargs;
  switch (n) {
    default:
      for (uint32_t i = n - 1; i >= 4; i--)
        if (!scan_one(op, args, i, dev, &bits)) return -1;
      /* fallthrough */
    case 4:
      if (!scan_one(op, args, 3, dev, &bits)) return -1;
      /* fallthrough */
    case 3:
      if (!scan_one(op, args, 2, dev, &bits)) return -1;
      /* fallthrough */
    case 2:
      if (!scan_one(op, args, 1, dev, &bits)) return -1;
      /* fallthrough */
    case 1:
      /* Argument 0 is usually the first tensor, checked above. */
      if (op->tensor_args[0] != 0 && !scan_one(op, args, 0, dev, &bits)) return -1;
      /* fallthrough */
    case 0:
      break;
  }
  *out_bits = bits;
  return first->u.tensor->device_slot;
}

/* The general path: keyword arguments, defaults, conversions, lists, and
 * every error message.  Leaves the kernel in *out_k and the arguments (in
 * place or in `scratch`) in *out_args. */
static bp_status prepare_general(const bp_op *op, bp_stack *stack, size_t top,
                                 const char *const *kwnames, size_t nkw, bp_value *scratch,
                                 bp_value **out_args, const bp__kernel **out_k) {
  if (BP__UNLIKELY(nkw > top))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %zu keyword names but only %zu values",
                     op->name, nkw, top);
  bp_value *args;
  bp_status st = gather_args(op, stack->values, top, kwnames, nkw, scratch, &args);
  if (st) return st;
  st = check_args(op, args);
  if (st) return st;
  bp_device dev = {BP_DEVICE_CPU, 0};
  st = pick_device(op, args, &dev);
  if (st) return st;
  int ds = bp__device_slot(dev.type);
  const bp__kernel *k =
      ds >= 0 ? atomic_load_explicit(&op->dispatch[ds], memory_order_acquire) : NULL;
  if (BP__UNLIKELY(!k)) return no_kernel(op, dev);
  uint32_t bits = bp__arg_dtype_bits(op, args);
  if (BP__UNLIKELY(k->dtype_refused) &&
      ((bits & k->dtype_refused) || !bp__results_declared(op, k, args)) &&
      !(k = bp__kernel_for_dtypes(op, k, args, bits)))
    return bp_last_status();
  *out_args = args;
  *out_k = k;
  return BP_OK;
}

__attribute__((noinline, cold)) static bp_status bad_call(const bp_op *op, bp_stack *stack) {
  if (stack) stack->top = 0;
  return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_call: %s",
                   !op ? "op is NULL" : !stack ? "stack is NULL" : "the stack is not initialised "
                   "(use BP_STACK_INIT) or is corrupt");
}

/*
 * A structured kernel (BP_KERNEL_DEF_STRUCTURED): the host runs the meta
 * function, allocates each result as it says, and the kernel fills them.
 * On success rets[] holds the new references; on failure nothing stays
 * allocated.
 */
static bp_status call_rerouted(const bp_op *op, const bp__kernel *k, const bp_value *args,
                               bp_value *rets, uint32_t nrets);

/* The error of result #j's allocation, which names the op. */
__attribute__((noinline, cold)) static bp_status alloc_failed(const bp_op *op, uint32_t j,
                                                              bp_status st) {
  char why[256];
  snprintf(why, sizeof why, "%s", bp_last_error());
  return bp__error(st, "%s: result #%u could not be allocated: %s", op->name, j, why);
}

__attribute__((noinline)) static bp_status call_structured(const bp_op *op, const bp__kernel *k,
                                                           const bp_value *args, bp_value *rets,
                                                           uint32_t nrets) {
  bp_tensor_meta m[BP__MAX_RETS];
  bp_tensor *t[BP__MAX_RETS];
  bp_status st;
  if (BP__LIKELY(nrets == 1)) {
    /* The common case, without the loops. */
    m[0].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    st = bp__run_meta(op, args, m, 1);
    /* A result of a dtype the kernel does not declare: another kernel
     * serves the call (the fast path leaves this check to here, where the
     * meta function runs anyway). */
    if (BP__UNLIKELY(k->dtype_refused) && st == BP_OK &&
        (bp__dtype_bit(m[0].dtype) & k->dtype_refused))
      return call_rerouted(op, k, args, rets, nrets);
    if (BP__UNLIKELY(st != BP_OK)) return st;
    st = bp_tensor_empty_strided(m[0].device, m[0].dtype, m[0].ndim, m[0].sizes, m[0].strides,
                                 &t[0]);
    if (BP__UNLIKELY(st != BP_OK)) return alloc_failed(op, 0, st);
    rets[0].tag = BP_TAG_TENSOR;
    rets[0].len = 0;
    rets[0].u.tensor = t[0];
    st = k->boxed(&k->ctx, args, op->nargs, rets, 1);
    if (BP__LIKELY(st == BP_OK && rets[0].tag == BP_TAG_TENSOR && rets[0].u.tensor == t[0]))
      return BP_OK;
    bp_tensor_release(t[0]);
    if (st) return st;
    return bp__error(BP_ERR_INTERNAL,
                     "%s: the structured kernel (plugin '%s') replaced result #0, which the host "
                     "allocated for it to fill", op->name, k->owner->name ? k->owner->name : "?");
  }
  for (uint32_t j = 0; j < nrets; j++) m[j].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  st = bp__run_meta(op, args, m, nrets);
  if (st) return st;
  for (uint32_t j = 0; j < nrets && k->dtype_refused; j++)
    if (op->ret_tag[j] == BP_TAG_TENSOR && (bp__dtype_bit(m[j].dtype) & k->dtype_refused))
      return call_rerouted(op, k, args, rets, nrets);
  for (uint32_t j = 0; j < nrets; j++) {
    st = bp_tensor_empty_strided(m[j].device, m[j].dtype, m[j].ndim, m[j].sizes, m[j].strides,
                                 &t[j]);
    if (st) {
      for (uint32_t r = 0; r < j; r++) bp_tensor_release(t[r]);
      return alloc_failed(op, j, st);
    }
    rets[j].tag = BP_TAG_TENSOR;
    rets[j].len = 0;
    rets[j].u.tensor = t[j];
  }
  st = k->boxed(&k->ctx, args, op->nargs, rets, nrets);
  uint32_t changed = nrets;
  for (uint32_t j = 0; j < nrets && changed == nrets; j++)
    if (rets[j].tag != BP_TAG_TENSOR || rets[j].u.tensor != t[j]) changed = j;
  if (BP__LIKELY(st == BP_OK && changed == nrets)) return BP_OK;
  for (uint32_t j = 0; j < nrets; j++) bp_tensor_release(t[j]);
  if (st) return st;
  return bp__error(BP_ERR_INTERNAL,
                   "%s: the structured kernel (plugin '%s') replaced result #%u, which the host "
                   "allocated for it to fill", op->name, k->owner->name ? k->owner->name : "?",
                   changed);
}

/*
 * The .out and in-place forms (core_out.c): when the kernel that would serve
 * op on args is structured, calls it with dst as its one result, which the
 * caller has checked has the layout op's meta function gives, and sets *ran.
 * Else leaves *ran false and returns BP_OK, and the caller computes op the
 * ordinary way.  Called inside a call (a read section), with args that op's
 * meta function accepted.
 */
bp_status bp__call_structured_into(const bp_op *op, const bp_value *args, bp_tensor *dst,
                                   bool *ran) {
  *ran = false;
  if (op->nrets != 1 || !atomic_load_explicit(&op->defined, memory_order_acquire)) return BP_OK;
  bp_device dev = {BP_DEVICE_CPU, 0};
  if (pick_device(op, args, &dev) != BP_OK) return BP_OK;
  int ds = bp__device_slot(dev.type);
  const bp__kernel *k =
      ds >= 0 ? atomic_load_explicit(&op->dispatch[ds], memory_order_acquire) : NULL;
  /* dst is the kernel's result: its dtype must be declared too. */
  uint32_t bits = bp__arg_dtype_bits(op, args) | dst->dtype_bit;
  while (k && (bits & k->dtype_refused)) k = atomic_load_explicit(&k->next, memory_order_acquire);
  if (!k || k->kind != BP_KERNEL_STRUCTURED) return BP_OK;
  bp__reader *r = bp__tl_reader;
  const bp_op *prev_op = r ? r->checked_op : NULL;
  const bp_value *prev_args = r ? r->checked_args : NULL;
  if (r) {
    r->checked_op = op;
    r->checked_args = args;
  }
  bp_value ret = {.tag = BP_TAG_TENSOR, .len = 0, .u.tensor = dst};
  bp_status st = k->boxed(&k->ctx, args, op->nargs, &ret, 1);
  if (r) {
    r->checked_op = prev_op;
    r->checked_args = prev_args;
  }
  if (st != BP_OK) return fail_kernel(op, k, st);
  *ran = true;
  if (ret.tag == BP_TAG_TENSOR && ret.u.tensor == dst) return BP_OK;
  if (ret.tag == BP_TAG_TENSOR && ret.u.tensor) bp_tensor_release(ret.u.tensor);
  return bp__error(BP_ERR_INTERNAL,
                   "%s: the structured kernel (plugin '%s') replaced its result, which it was "
                   "given to fill", op->name, k->owner->name ? k->owner->name : "?");
}

/*
 * The one dispatcher: calls entry k (a kernel of any kind, a fallback or a
 * composite) with checked arguments and moves its results onto the stack.
 * Every kind leaves each result's tag, len and value in rets[], so that
 * the checks that follow treat them alike.
 */
/* A structured kernel k whose result would have a dtype it does not
 * declare: the next kernel that declares the call's dtypes, results
 * included, or the op's composite, fills rets instead; or the error that
 * none does. */
__attribute__((noinline, cold)) static bp_status call_rerouted(const bp_op *op,
                                                               const bp__kernel *k,
                                                               const bp_value *args,
                                                               bp_value *rets, uint32_t nrets) {
  const bp__kernel *k2 = bp__kernel_for_dtypes(op, k, args, bp__arg_dtype_bits(op, args));
  if (!k2) return bp_last_status();
  bp_status st;
  if (k2->kind == BP_KERNEL_STRUCTURED) {
    st = call_structured(op, k2, args, rets, nrets);
  } else if (k2->kind == BP_KERNEL_UNBOXED) {
    st = bp__call_ffi(op, k2, args, rets);
  } else if (k2->kind == BP_KERNEL_UNBOXED_FAST) {
    bp_tensor *o[2] = {NULL, NULL};
    st = k2->fast(k2->unboxed, &k2->ctx, args, o);
    for (uint32_t j = 0; j < nrets && j < 2; j++) {
      rets[j].tag = BP_TAG_TENSOR;
      rets[j].len = 0;
      rets[j].u.tensor = o[j];
    }
  } else if (k2->kind == BP__ENTRY_FALLBACK) {
    bp_kernel_ctx ctx = k2->ctx;
    ctx.op = op;
    ctx.op_name = op->name;
    st = k2->boxed(&ctx, args, op->nargs, rets, nrets);
  } else {
    st = k2->boxed(&k2->ctx, args, op->nargs, rets, nrets);
  }
  return st == BP_OK ? st : fail_kernel(op, k2, st);
}

__attribute__((always_inline)) static inline bp_status invoke(const bp_op *op, const bp__kernel *k,
                                                              const bp_value *args,
                                                              bp_stack *stack) {
  bp_value rets[BP__MAX_RETS];
  bp_status st;
  uint32_t nrets = op->nrets;
  if (BP__LIKELY(k->kind == BP_KERNEL_BOXED)) {
    st = k->boxed(&k->ctx, args, op->nargs, rets, nrets);
  } else if (BP__LIKELY(k->kind == BP_KERNEL_UNBOXED_FAST)) {
    bp_tensor *o[2] = {NULL, NULL};
    st = k->fast(k->unboxed, &k->ctx, args, o);
    if (BP__UNLIKELY(st != BP_OK)) return fail_kernel(op, k, st);
    /* Every result is a Tensor: only NULL can be wrong. */
    if (BP__LIKELY(nrets == 1 && o[0] != NULL)) {
      stack->values[0].tag = BP_TAG_TENSOR;
      stack->values[0].len = 0;
      stack->values[0].u.tensor = o[0];
      stack->top = 1;
      return BP_OK;
    }
    rets[0].tag = rets[1].tag = BP_TAG_TENSOR;
    rets[0].len = rets[1].len = 0;
    rets[0].u.tensor = o[0];
    rets[1].u.tensor = o[1];
  } else if (k->kind == BP_KERNEL_STRUCTURED) {
    st = call_structured(op, k, args, rets, nrets);
  } else if (k->kind == BP_KERNEL_UNBOXED) {
    st = bp__call_ffi(op, k, args, rets);
  } else if (k->kind == BP__ENTRY_COMPOSITE) {
    st = k->boxed(&k->ctx, args, op->nargs, rets, nrets);
  } else if (k->kind == BP__ENTRY_FALLBACK) {
    /* A fallback serves every op: give it this op in its context. */
    bp_kernel_ctx ctx = k->ctx;
    ctx.op = op;
    ctx.op_name = op->name;
    st = k->boxed(&ctx, args, op->nargs, rets, nrets);
  } else {
    return bp__error(BP_ERR_INTERNAL, "%s: dispatch entry of unknown kind %d", op->name, k->kind);
  }
  if (BP__UNLIKELY(st != BP_OK)) return fail_kernel(op, k, st);
  if (BP__LIKELY(nrets == 1)) {
    if (BP__UNLIKELY(rets[0].tag != op->ret_tag32[0] ||
                     (rets[0].tag == BP_TAG_TENSOR && !rets[0].u.tensor)))
      return check_results(op, k, rets);
    /* Tag and value apart: the kernel stored them separately, and one
     * 16-byte load of both would wait for the stores to retire (no store
     * forwarding into a wider load).  A result that is not a list has len
     * 0, written with the tag as one 8-byte word. */
    bp_value *v = &stack->values[0];
    struct {
      uint32_t tag, len;
    } tag_len = {rets[0].tag, 0};
    memcpy(v, &tag_len, sizeof tag_len);
    v->u.i = rets[0].u.i;
  } else {
    st = check_results(op, k, rets);
    if (st) return st;
    for (uint32_t j = 0; j < nrets; j++) stack->values[j] = rets[j];
  }
  stack->top = nrets;
  return BP_OK;
}

/*
 * Everything the fast path does not handle: keyword arguments, defaults,
 * conversions, lists, nested calls, and every error.  Called inside the
 * read section that call() entered, which it leaves.
 */
__attribute__((noinline)) static bp_status call_general(const bp_op *op, bp_stack *stack,
                                                        size_t top, const char *const *kwnames,
                                                        size_t nkw, bp__reader *r, bool nested) {
  bp_status st;
  stack->top = 0;
  if (!r) return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_call: out of memory");
  if (!stack->values && stack->capacity) {
    bp__read_exit(r, nested);
    return bad_call(op, stack);
  }
  if (!atomic_load_explicit(&op->defined, memory_order_acquire)) {
    st = bp__error(BP_ERR_NOT_FOUND,
                   "%s: the op is not defined (the plugin that defined it was unloaded)", op->name);
  } else if (nested && r->depth >= MAX_DEPTH) {
    st = bp__error(BP_ERR_INVALID_ARGUMENT, "%s: calls are nested more than %d deep", op->name,
                   MAX_DEPTH);
  } else if (stack->capacity < op->nrets) {
    st = bp__error(BP_ERR_OVERFLOW, "%s: the stack's capacity %zu cannot hold the %u results",
                   op->name, stack->capacity, op->nrets);
  } else {
    bp_value scratch[BP__MAX_ARGS], *args = NULL;
    const bp__kernel *k = NULL;
    if (nested) r->depth++;
    st = prepare_general(op, stack, top, kwnames, nkw, scratch, &args, &k);
    if (!st) {
      const bp_op *prev_op = r->checked_op;
      const bp_value *prev_args = r->checked_args;
      r->checked_op = op;
      r->checked_args = args;
      st = invoke(op, k, args, stack);
      r->checked_op = prev_op;
      r->checked_args = prev_args;
    }
    if (nested) r->depth--;
  }
  bp__read_exit(r, nested);
  return st;
}

/* Puts the defaults of trailing arguments left off into the stack's free
 * slots, when the fast path can then take the call; returns the new top. */
__attribute__((noinline)) static size_t fill_defaults(const bp_op *op, bp_stack *stack,
                                                      size_t top) {
  if (op->fast_nargs != op->nargs || top >= op->nargs || top < op->min_args ||
      stack->capacity < op->nargs)
    return top;
  for (size_t i = top; i < op->nargs; i++) stack->values[i] = op->schema->args[i].default_value;
  return op->nargs;
}

/* Whether a stack can be read at all; the fast path checks the rest (its
 * values pointer) where it reads it, and call_general() all of it. */
static inline bool stack_ok(const bp_stack *stack) {
  return stack->struct_size >= BP_STACK_STRUCT_SIZE && stack->top <= stack->capacity;
}

BP_API bp_status bp_call(const bp_op *op, bp_stack *stack) {
  /* Two tests, not one: GCC would otherwise combine the NULL tests with
   * setcc and or, two instructions more per call. */
  if (BP__UNLIKELY(!op)) return bad_call(op, stack);
  if (BP__UNLIKELY(!stack || !stack_ok(stack))) return bad_call(op, stack);
  /* stack->top is set when the call returns: the results' count, or 0
   * (call_general() empties it first). */
  size_t top = stack->top;
  /* The read section of bp__read_enter(), written out: the outermost call
   * knows its sequence number and leaves with s + 2. */
  bp__reader *r = bp__tl_reader;
  if (BP__UNLIKELY(!r)) {
    bool nested = false;
    r = bp__read_enter(&nested);
    return call_general(op, stack, top, NULL, 0, r, nested);
  }
  uint_fast64_t s = atomic_load_explicit(&r->seq, memory_order_relaxed);
  if (BP__UNLIKELY(s & 1)) return call_general(op, stack, top, NULL, 0, r, true);
  atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
  if (BP__UNLIKELY(r->fence))
    BP__FULL_FENCE();
  else
    atomic_signal_fence(memory_order_seq_cst);
  /* The fast path: a plain outermost call with the schema's arguments in
   * order (trailing defaults may be left off), exact tags, one device. */
  /* `defined` is loaded first: its acquire orders the reads of the
   * definition (nrets and the rest), which a load may rewrite while the op
   * is undefined.  (fast_nargs >= nrets, and top <= capacity: the results
   * fit.) */
  if (BP__LIKELY(atomic_load_explicit(&op->defined, memory_order_acquire) && stack->values)) {
    if (BP__UNLIKELY(top != op->fast_nargs)) top = fill_defaults(op, stack, top);
    if (top == op->fast_nargs) {
      uint32_t bits = 0;
      int ds = fast_scan(op, stack->values, &bits);
      const bp__kernel *k = BP__LIKELY(ds >= 0)
                                ? atomic_load_explicit(&op->dispatch[ds], memory_order_acquire)
                                : NULL;
      /* A dtype the kernel does not declare, or results it must have
       * checked first (BP__RESULTS_BIT), take the general path, which
       * finds the next kernel that does or explains. */
      if (BP__LIKELY(k != NULL && !((bits | BP__RESULTS_BIT) & k->dtype_refused))) {
        /* For op_meta from the kernel; left as is afterwards (see
         * bp__op_meta_args).  The fence keeps the two stores plain. */
        r->checked_args = stack->values;
        atomic_signal_fence(memory_order_relaxed);
        r->checked_op = op;
        bp_status st = invoke(op, k, stack->values, stack);
        if (BP__UNLIKELY(st != BP_OK)) stack->top = 0;
        atomic_store_explicit(&r->seq, s + 2, memory_order_release);
        return st;
      }
    }
  }
  return call_general(op, stack, top, NULL, 0, r, false);
}

BP_API bp_status bp_call_kw(const bp_op *op, bp_stack *stack, const char *const *kwnames,
                            size_t nkw) {
  if (nkw == 0) return bp_call(op, stack);
  if (!kwnames) {
    if (stack) stack->top = 0;
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_call_kw: kwnames is NULL for %zu keywords", nkw);
  }
  if (!op || !stack || !stack_ok(stack)) return bad_call(op, stack);
  size_t top = stack->top;
  stack->top = 0;
  bool nested = false;
  bp__reader *r = bp__read_enter(&nested);
  return call_general(op, stack, top, kwnames, nkw, r, nested);
}

bp_status bp__op_meta_args(const bp_op *op, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  if (!op || (!args && nargs) || !outs)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "op_meta: %s is NULL",
                     !op ? "op" : !outs ? "outs" : "args");
  bool nested = false;
  bp__reader *r = bp__read_enter(&nested);
  if (!r) return bp__error(BP_ERR_OUT_OF_MEMORY, "op_meta: out of memory");
  bp_status st;
  bp_value copy[BP__MAX_ARGS];
  if (!atomic_load_explicit(&op->defined, memory_order_acquire)) {
    st = bp__error(BP_ERR_NOT_FOUND, "%s: the op is not defined", op->name);
  } else if (nargs != op->nargs) {
    st = bp__error(BP_ERR_INVALID_ARGUMENT, "%s: op_meta got %zu arguments, the schema has %u",
                   op->name, nargs, op->nargs);
  } else if (nested && args == r->checked_args && op == r->checked_op) {
    /* Inside a call (a kernel asking), these are that call's arguments:
     * every call sets the pair before its kernel runs, and a nested call
     * restores it after. */
    /* The running kernel's own arguments, checked by this call already. */
    st = bp__run_meta(op, args, outs, nouts);
  } else {
    /* Anything else is checked (on a copy) so that a plugin's mistake
     * cannot reach the meta function. */
    if (nargs) memcpy(copy, args, nargs * sizeof *copy);
    st = check_args(op, copy);
    if (!st) st = bp__run_meta(op, copy, outs, nouts);
  }
  bp__read_exit(r, nested);
  return st;
}

BP_API bp_status bp_op_meta(const bp_op *op, const bp_stack *stack, bp_tensor_meta *outs,
                            size_t nouts) {
  if (!op || !stack || !outs)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_meta: %s is NULL",
                     !op ? "op" : !stack ? "stack" : "outs");
  if (stack->struct_size < BP_STACK_STRUCT_SIZE || stack->top > stack->capacity ||
      (!stack->values && stack->capacity))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_meta: the stack is not initialised or is corrupt");
  bool nested = false;
  bp__reader *r = bp__read_enter(&nested);
  if (!r) return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_op_meta: out of memory");
  bp_status st;
  bp_value copy[BP__MAX_ARGS], scratch[BP__MAX_ARGS], *args;
  if (!atomic_load_explicit(&op->defined, memory_order_acquire)) {
    st = bp__error(BP_ERR_NOT_FOUND, "%s: the op is not defined", op->name);
  } else if (stack->top > BP__MAX_ARGS) {
    st = bp__error(BP_ERR_INVALID_ARGUMENT, "%s: takes %u arguments but %zu were given", op->name,
                   op->nargs, stack->top);
  } else if (!op->meta) {
    st = bp__error(BP_ERR_UNSUPPORTED, "%s: the op has no meta function", op->name);
  } else {
    /* The caller's stack is const here: work on a copy. */
    if (stack->top) memcpy(copy, stack->values, stack->top * sizeof *copy);
    st = gather_args(op, copy, stack->top, NULL, 0, scratch, &args);
    if (!st) st = check_args(op, args);
    if (!st) st = bp__run_meta(op, args, outs, nouts);
  }
  bp__read_exit(r, nested);
  return st;
}
