/*
 * host/unboxed.c - what the dispatcher needs to call unboxed kernels: the
 * per-op call plan derived from the schema once, when the op is defined
 * (bp__op_prepare: the expected tags, which arguments carry tensors, how
 * each is passed, the ffi_cif and the fast-path signature), the fast-path
 * trampolines, and the libffi call.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The fast path: trampolines for common unboxed signatures                 */
/* ------------------------------------------------------------------------ */

/*
 * A trampoline casts the kernel to its exact C type and calls it directly,
 * with no libffi.  Signatures covered: up to 4 arguments, each a Tensor
 * (bp_tensor *), an int (int64_t) or a float (double), and 0 to 2 Tensor
 * results.  Each trampoline is generated below; the signature index is
 * base-3 over the arguments (T=0, I=1, F=2, first argument most
 * significant), offset by the count, times 3 plus the number of results.
 */
#define FT_T bp_tensor *
#define FT_I int64_t
#define FT_F double
#define FV_T(k) a[k].u.tensor
#define FV_I(k) a[k].u.i
#define FV_F(k) a[k].u.f
#define RT_0
#define RT_1 , bp_tensor **
#define RT_2 , bp_tensor **, bp_tensor **
#define RV_0
#define RV_1 , &o[0]
#define RV_2 , &o[0], &o[1]

#define FP_SIG(name) \
  static bp_status name(bp_unboxed_kernel fn, const bp_kernel_ctx *c, const bp_value *a, bp_tensor **o)

#define FP0(R)                                                             \
  FP_SIG(fp0_##R) {                                                        \
    (void)a;                                                               \
    (void)o;                                                               \
    return ((bp_status(*)(const bp_kernel_ctx * RT_##R)) fn)(c RV_##R);    \
  }
#define FP1(A, R)                                                                  \
  FP_SIG(fp1_##A##_##R) {                                                          \
    (void)o;                                                                       \
    return ((bp_status(*)(const bp_kernel_ctx *, FT_##A RT_##R)) fn)(c, FV_##A(0) RV_##R); \
  }
#define FP2(A, B, R)                                                                      \
  FP_SIG(fp2_##A##B##_##R) {                                                              \
    (void)o;                                                                              \
    return ((bp_status(*)(const bp_kernel_ctx *, FT_##A, FT_##B RT_##R)) fn)(            \
        c, FV_##A(0), FV_##B(1) RV_##R);                                                  \
  }
#define FP3(A, B, C, R)                                                                   \
  FP_SIG(fp3_##A##B##C##_##R) {                                                           \
    (void)o;                                                                              \
    return ((bp_status(*)(const bp_kernel_ctx *, FT_##A, FT_##B, FT_##C RT_##R)) fn)(    \
        c, FV_##A(0), FV_##B(1), FV_##C(2) RV_##R);                                       \
  }
#define FP4(A, B, C, D, R)                                                                       \
  FP_SIG(fp4_##A##B##C##D##_##R) {                                                               \
    (void)o;                                                                                     \
    return ((bp_status(*)(const bp_kernel_ctx *, FT_##A, FT_##B, FT_##C, FT_##D RT_##R)) fn)(   \
        c, FV_##A(0), FV_##B(1), FV_##C(2), FV_##D(3) RV_##R);                                   \
  }

/* Enumerations in signature-index order. */
#define EACH_R(M, ...) M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2)
#define EACH0(M) M(0) M(1) M(2)
#define EACH1(M) EACH_R(M, T) EACH_R(M, I) EACH_R(M, F)
#define EACH2_(M, A) EACH_R(M, A, T) EACH_R(M, A, I) EACH_R(M, A, F)
#define EACH2(M) EACH2_(M, T) EACH2_(M, I) EACH2_(M, F)
#define EACH3__(M, A, B) EACH_R(M, A, B, T) EACH_R(M, A, B, I) EACH_R(M, A, B, F)
#define EACH3_(M, A) EACH3__(M, A, T) EACH3__(M, A, I) EACH3__(M, A, F)
#define EACH3(M) EACH3_(M, T) EACH3_(M, I) EACH3_(M, F)
#define EACH4___(M, A, B, C) EACH_R(M, A, B, C, T) EACH_R(M, A, B, C, I) EACH_R(M, A, B, C, F)
#define EACH4__(M, A, B) EACH4___(M, A, B, T) EACH4___(M, A, B, I) EACH4___(M, A, B, F)
#define EACH4_(M, A) EACH4__(M, A, T) EACH4__(M, A, I) EACH4__(M, A, F)
#define EACH4(M) EACH4_(M, T) EACH4_(M, I) EACH4_(M, F)

EACH0(FP0)
EACH1(FP1)
EACH2(FP2)
EACH3(FP3)
EACH4(FP4)

#define REF0(R) fp0_##R,
#define REF1(A, R) fp1_##A##_##R,
#define REF2(A, B, R) fp2_##A##B##_##R,
#define REF3(A, B, C, R) fp3_##A##B##C##_##R,
#define REF4(A, B, C, D, R) fp4_##A##B##C##D##_##R,

static const bp__fast_fn fast_table[] = {EACH0(REF0) EACH1(REF1) EACH2(REF2) EACH3(REF3) EACH4(REF4)};

/* bp_op.fast_sig holds every index of the table: 3 * (1 + 3 + 9 + 27 + 81)
 * of them, past what an int8_t holds. */
BP_STATIC_ASSERT(sizeof fast_table / sizeof fast_table[0] == 363, "one trampoline per signature");

/* Offsets of each argument count's block of signatures, in units of 3. */
static const int fast_base[5] = {0, 1, 4, 13, 40};

bp__fast_fn bp__fast_lookup(int sig) {
  if (sig < 0 || (size_t)sig >= sizeof fast_table / sizeof fast_table[0]) return NULL;
  return fast_table[sig];
}

/* ------------------------------------------------------------------------ */
/* Preparing an op                                                          */
/* ------------------------------------------------------------------------ */

static ffi_type *size_type(void) {
  return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
}

bp_status bp__op_prepare(bp_op *op) {
  const bp__schema *s = op->schema;
  op->nargs = (uint32_t)s->nargs;
  op->nrets = (uint32_t)s->nrets;
  op->npositional = (uint32_t)s->npositional;
  op->ntensor_args = 0;
  op->device_arg = -1;
  unsigned nffi = 0;
  op->ffi_types[nffi++] = &ffi_type_pointer; /* ctx */
  bool fast = s->nargs <= 4 && s->nrets <= 2;
  bool inplace = true;
  int code = 0;
  for (size_t i = 0; i < s->nargs; i++) {
    const bp__arg *a = &s->args[i];
    op->arg_tag[i] = (uint8_t)a->value_tag;
    op->arg_tag32[i] = (uint32_t)a->value_tag;
    op->arg_optional[i] = a->optional;
    op->arg_list_size[i] = (int16_t)(a->is_list && a->list_size >= 0 ? a->list_size : -1);
    if (a->type == BP__T_TENSOR) op->tensor_args[op->ntensor_args++] = (uint8_t)i;
    if (a->type == BP__T_DEVICE && op->device_arg < 0) op->device_arg = (int8_t)i;
    uint8_t m;
    if (a->is_list) {
      m = BP__M_LIST;
    } else {
      switch (a->type) {
        case BP__T_TENSOR: m = BP__M_TENSOR; break;
        case BP__T_INT: m = a->optional ? BP__M_OPT_I64 : BP__M_I64; break;
        case BP__T_FLOAT: m = a->optional ? BP__M_OPT_F64 : BP__M_F64; break;
        case BP__T_BOOL: m = a->optional ? BP__M_OPT_BOOL : BP__M_BOOL; break;
        case BP__T_SCALAR_TYPE: m = a->optional ? BP__M_OPT_I32 : BP__M_I32; break;
        case BP__T_STR: m = BP__M_STR; break;
        case BP__T_DEVICE: m = BP__M_DEVICE; break;
        case BP__T_SCALAR: m = BP__M_SCALAR; break;
        default: return bp__error(BP_ERR_INTERNAL, "op '%s': argument #%zu has unknown type %d",
                                  op->name, i, a->type);
      }
    }
    op->arg_marshal[i] = m;
    switch (m) {
      case BP__M_I64: op->ffi_types[nffi++] = &ffi_type_sint64; break;
      case BP__M_F64: op->ffi_types[nffi++] = &ffi_type_double; break;
      case BP__M_BOOL: op->ffi_types[nffi++] = &ffi_type_uint8; break;
      case BP__M_I32: op->ffi_types[nffi++] = &ffi_type_sint32; break;
      case BP__M_LIST:
        op->ffi_types[nffi++] = &ffi_type_pointer;
        op->ffi_types[nffi++] = size_type();
        break;
      default: op->ffi_types[nffi++] = &ffi_type_pointer; break;
    }
    if (!(m == BP__M_I64 || m == BP__M_F64 || m == BP__M_BOOL ||
          (m == BP__M_TENSOR && !a->optional)))
      inplace = false;
    /* Fast-path digits: plain Tensor, int and float only. */
    int digit = m == BP__M_TENSOR && !a->optional ? 0 : m == BP__M_I64 ? 1 : m == BP__M_F64 ? 2 : -1;
    if (digit < 0) fast = false;
    code = code * 3 + (digit < 0 ? 0 : digit);
  }
  for (size_t j = 0; j < s->nrets; j++) {
    const bp__arg *r = &s->rets[j];
    op->ret_tag[j] = (uint8_t)r->value_tag;
    op->ret_tag32[j] = (uint32_t)r->value_tag;
    if (r->type != BP__T_TENSOR) fast = inplace = false;
    op->ffi_types[nffi++] = &ffi_type_pointer;
  }
  op->nffi = nffi;
  op->ffi_inplace = inplace;
  op->min_args = (uint32_t)s->nargs;
  while (op->min_args > 0 && s->args[op->min_args - 1].has_default) op->min_args--;
  bool scan_ok = op->ntensor_args > 0;
  /* The scan compares each tag with the schema's; a Scalar's value has
   * one of three tags, which the general path checks. */
  for (size_t i = 0; i < s->nargs; i++)
    if (s->args[i].is_list || s->args[i].type == BP__T_SCALAR) scan_ok = false;
  /* The fast path relies on a stack that holds the arguments holding the
   * results too. */
  if (s->nrets > s->nargs) scan_ok = false;
  op->fast_nargs = scan_ok ? op->nargs : UINT32_MAX;
  op->first_tensor_off = op->ntensor_args ? (uint32_t)(op->tensor_args[0] * sizeof(bp_value)) : 0;
  op->fast_sig = fast ? (int16_t)((fast_base[s->nargs] + code) * 3 + (int)s->nrets) : -1;
  op->cif_ok = ffi_prep_cif(&op->cif, FFI_DEFAULT_ABI, nffi, &ffi_type_sint, op->ffi_types) == FFI_OK;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Unboxed calls                                                            */
/* ------------------------------------------------------------------------ */

typedef union ffi_slot {
  void *p;
  int64_t i;
  double f;
  bool b;
  int32_t i32;
  size_t z;
} ffi_slot;

typedef union ret_slot {
  bp_tensor *t;
  int64_t i;
  double f;
  bool b;
  int32_t i32;
} ret_slot;

/* The common case: every argument is passed as the value it already is
 * (a non-optional Tensor, int, float or bool) and every result is a
 * Tensor, so libffi reads arguments in place. */
static bp_status call_ffi_inplace(const bp_op *op, const bp__kernel *k, const bp_value *args,
                                  bp_value *rets) {
  void *avalues[1 + BP__MAX_ARGS + BP__MAX_RETS];
  bp_tensor *out[BP__MAX_RETS];
  bp_tensor **outp[BP__MAX_RETS];
  const bp_kernel_ctx *ctx = &k->ctx;
  uint32_t na = op->nargs, nr = op->nrets;
  avalues[0] = &ctx;
  for (uint32_t i = 0; i < na; i++) avalues[1 + i] = (void *)&args[i].u;
  for (uint32_t j = 0; j < nr; j++) {
    out[j] = NULL;
    outp[j] = &out[j];
    avalues[1 + na + j] = &outp[j];
  }
  ffi_arg rc = 0;
  ffi_call((ffi_cif *)&op->cif, (void (*)(void))k->unboxed, &rc, avalues);
  bp_status st = (bp_status)(int)rc;
  if (st) return st;
  for (uint32_t j = 0; j < nr; j++) {
    rets[j].tag = BP_TAG_TENSOR;
    rets[j].len = 0;
    rets[j].u.tensor = out[j];
  }
  return BP_OK;
}

/* What an empty list argument points at when the caller gave no array. */
static const int64_t empty_list;

bp_status bp__call_ffi(const bp_op *op, const bp__kernel *k, const bp_value *args,
                       bp_value *rets) {
  if (op->ffi_inplace) return call_ffi_inplace(op, k, args, rets);
  ffi_slot vals[BP__MAX_FFI_ARGS + BP__MAX_ARGS];
  ret_slot out[BP__MAX_RETS];
  void *avalues[BP__MAX_FFI_ARGS + BP__MAX_ARGS];
  const bp_kernel_ctx *ctx = &k->ctx;
  unsigned n = 0;
  avalues[n++] = &ctx;
  for (uint32_t i = 0; i < op->nargs; i++) {
    const bp_value *v = &args[i];
    bool none = v->tag == BP_TAG_NONE;
    /* Where the C type is the stored type, libffi reads the value in
     * place; otherwise it reads a converted copy in vals. */
    switch (op->arg_marshal[i]) {
      case BP__M_I64: avalues[n] = (void *)&v->u.i; break;
      case BP__M_F64: avalues[n] = (void *)&v->u.f; break;
      case BP__M_BOOL: avalues[n] = (void *)&v->u.b; break;
      case BP__M_TENSOR:
        if (none) {
          vals[n].p = NULL;
          avalues[n] = &vals[n];
        } else {
          avalues[n] = (void *)&v->u.tensor;
        }
        break;
      case BP__M_I32:
        vals[n].i32 = (int32_t)v->u.i;
        avalues[n] = &vals[n];
        break;
      case BP__M_STR:
        vals[n].p = none ? NULL : (void *)v->u.str;
        avalues[n] = &vals[n];
        break;
      case BP__M_OPT_I64:
      case BP__M_OPT_F64:
      case BP__M_OPT_BOOL:
      case BP__M_DEVICE:
        vals[n].p = none ? NULL : (void *)&v->u;
        avalues[n] = &vals[n];
        break;
      case BP__M_SCALAR:
        /* The value itself: its tag says int, float or bool. */
        vals[n].p = none ? NULL : (void *)v;
        avalues[n] = &vals[n];
        break;
      case BP__M_OPT_I32:
        /* The int32 lives in the slot after the pointer to it. */
        vals[n + 1].i32 = (int32_t)v->u.i;
        vals[n].p = none ? NULL : &vals[n + 1].i32;
        avalues[n] = &vals[n];
        n++; /* the extra slot is not an argument */
        avalues[n] = NULL;
        break;
      case BP__M_LIST:
        /* NULL stands for None only: an empty list pushed as (NULL, 0) is
         * passed as a non-NULL pointer (docs/schemas.md). */
        vals[n].p = none ? NULL : v->u.ints ? (void *)v->u.ints : (void *)&empty_list;
        avalues[n] = &vals[n];
        n++;
        vals[n].z = none ? 0 : v->len;
        avalues[n] = &vals[n];
        break;
      default: break;
    }
    n++;
  }
  for (uint32_t j = 0; j < op->nrets; j++) {
    out[j].i = 0;
    vals[n].p = &out[j];
    avalues[n] = &vals[n];
    n++;
  }
  /* Compact out the OPT_I32 helper slots (rare) so that avalues lines up
   * with the cif. */
  if (BP__UNLIKELY(n != op->nffi)) {
    unsigned w = 0;
    for (unsigned r = 0; r < n; r++)
      if (avalues[r]) avalues[w++] = avalues[r];
  }
  ffi_arg rc = 0;
  ffi_call((ffi_cif *)&op->cif, (void (*)(void))k->unboxed, &rc, avalues);
  bp_status st = (bp_status)(int)rc;
  if (st) return st;
  for (uint32_t j = 0; j < op->nrets; j++) {
    bp_value *r = &rets[j];
    r->tag = op->ret_tag[j];
    r->len = 0;
    switch (r->tag) {
      case BP_TAG_TENSOR: r->u.tensor = out[j].t; break;
      case BP_TAG_INT: r->u.i = out[j].i; break;
      case BP_TAG_FLOAT: r->u.f = out[j].f; break;
      case BP_TAG_BOOL: r->u.b = out[j].b; break;
      case BP_TAG_SCALAR_TYPE: r->u.i = out[j].i32; break;
      default: break;
    }
  }
  return BP_OK;
}

