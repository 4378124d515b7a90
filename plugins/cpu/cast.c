/*
 * plugins/cpu/cast.c - the conversion side of the elementwise kernels:
 * cast, contiguous, fill_ and copy_, their copy, conversion and fill loops,
 * and the conversions other kernels call: cpu_cast_copy (elementwise.h),
 * which brings an input of elementwise.c's kernels to the result's dtype,
 * and cpu_cast_to (cpu.h).
 *
 * A loop per (source, destination) dtype pair converts by the rules of
 * core::cast (elementwise.h's CV_<dst> and LD_<src>); equal dtypes copy
 * the bits.  Like elementwise.c's, each loop has a plain indexed path for
 * contiguous operands and a strided one, and cpu_iter drives it.
 */
#include "elementwise.h"

/* One value of any dtype, in its storage type (fill_'s value). */
typedef union scalar {
#define X(tn, T) T tn;
  ALL_TYPES(X)
#undef X
} scalar;

/* ------------------------------------------------------------------------ */
/* Loops: copy, conversion, fill                                            */
/* ------------------------------------------------------------------------ */

/* copy_<tn>: (out, in) of one dtype. */
#define X(tn, T) UNARY_LOOP(CPU_CLONES, copy_##tn, T, T, ID, ID, a)
ALL_TYPES(X)
#undef X

/* cast_<src>_<dst>: (out of dst, in of src).  Compiled once, as the
 * conversions mostly serve another kernel, except that loops converting
 * float16 need F16C (see F16_CLONES). */
#define CAST_CLONES_f32 NO_CLONES
#define CAST_CLONES_f64 NO_CLONES
#define CAST_CLONES_f16 F16_CLONES
#define CAST_CLONES_bf16 NO_CLONES
#define CAST_CLONES_i8 NO_CLONES
#define CAST_CLONES_i16 NO_CLONES
#define CAST_CLONES_i32 NO_CLONES
#define CAST_CLONES_i64 NO_CLONES
#define CAST_CLONES_u8 NO_CLONES
#define CAST_CLONES_b8 NO_CLONES
#define CAST_LOOP(CLONES, sn, ST_, dn, DT_)                                                 \
  CLONES static void cast_##sn##_##dn(char **p, const int64_t *s, int64_t n, void *ctx) {   \
    (void)ctx;                                                                              \
    if (s[0] == (int64_t)sizeof(DT_) && s[1] == (int64_t)sizeof(ST_)) {                     \
      DT_ *o = PTR(DT_, p[0]);                                                              \
      const ST_ *x = CPTR(ST_, p[1]);                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = CV_##dn(LD_##sn(x[i]));                        \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      const char *px = p[1];                                                                \
      for (int64_t i = 0; i < n; i++, po += s[0], px += s[1])                               \
        *PTR(DT_, po) = CV_##dn(LD_##sn(*CPTR(ST_, px)));                                   \
    }                                                                                       \
  }
#define CAST_FROM(sn, ST_)                                                                  \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, f32, float)                                          \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, f64, double)                                         \
  CAST_LOOP(F16_CLONES, sn, ST_, f16, uint16_t)                                             \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, bf16, uint16_t)                                      \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, i8, int8_t)                                          \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, i16, int16_t)                                        \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, i32, int32_t)                                        \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, i64, int64_t)                                        \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, u8, uint8_t)                                         \
  CAST_LOOP(CAST_CLONES_##sn, sn, ST_, b8, uint8_t)
ALL_TYPES(CAST_FROM)

#define CAST_ROW(sn, ST_)                                                                   \
  [DT_##sn] = {cast_##sn##_f32, cast_##sn##_f64, cast_##sn##_f16, cast_##sn##_bf16,         \
               cast_##sn##_i8,  cast_##sn##_i16, cast_##sn##_i32, cast_##sn##_i64,          \
               cast_##sn##_u8,  cast_##sn##_b8},
static const cpu_loop_fn cast_loops[NDT][NDT] = {ALL_TYPES(CAST_ROW)};

static const cpu_loop_fn copy_loops[NDT] = {
#define X(tn, T) [DT_##tn] = copy_##tn,
    ALL_TYPES(X)
#undef X
};

/* The loop that converts src elements into dst elements, or NULL for an
 * unknown dtype.  Equal dtypes copy the bits (a float16 NaN keeps its
 * payload). */
static cpu_loop_fn convert_loop(int32_t src, int32_t dst) {
  int si = dt_index(src), di = dt_index(dst);
  if (si < 0 || di < 0) return NULL;
  return si == di ? copy_loops[si] : cast_loops[si][di];
}

/* fill_<tn>: (out), ctx is the value (a scalar union). */
#define X(tn, T)                                                                            \
  CPU_CLONES static void fill_##tn(char **p, const int64_t *s, int64_t n, void *ctx) {      \
    const T v = ((const scalar *)ctx)->tn;                                                  \
    if (s[0] == (int64_t)sizeof(T)) {                                                       \
      T *o = PTR(T, p[0]);                                                                  \
      for (int64_t i = 0; i < n; i++) o[i] = v;                                             \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      for (int64_t i = 0; i < n; i++, po += s[0]) *PTR(T, po) = v;                          \
    }                                                                                       \
  }
ALL_TYPES(X)
#undef X

/* ------------------------------------------------------------------------ */
/* Conversions for the other kernels                                        */
/* ------------------------------------------------------------------------ */

/* A contiguous copy of v converted to dtype, always a new tensor. */
bp_status cpu_cast_copy(const bp_tensor_view *v, int32_t dtype, bp_tensor **out) {
  cpu_loop_fn loop = convert_loop(v->dtype, dtype);
  if (!loop)
    return CPU_ERR(BP_ERR_UNSUPPORTED, "cpu: cannot convert %s to %s", bp_aux_dtype_name(v->dtype),
                   bp_aux_dtype_name(dtype));
  bp_tensor *t;
  bp_status st = cpu_host->tensor_empty(v->device, dtype, v->ndim, v->sizes, &t);
  if (st) return st;
  const bp_tensor_view *views[2] = {view_of(t), v};
  run(loop, 2, views, NULL);
  *out = t;
  return BP_OK;
}

bp_status cpu_cast_to(const bp_tensor *src, int32_t dtype, bp_tensor **out) {
  const bp_tensor_view *v = view_of(src);
  if (v->dtype == dtype && (v->flags & BP_VIEW_CONTIGUOUS)) {
    *out = cpu_host->tensor_retain((bp_tensor *)src);
    return BP_OK;
  }
  return cpu_cast_copy(v, dtype, out);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

static bp_status cast_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  const bp_tensor_view *vs = view_of(args[0].u.tensor);
  int64_t dt = args[1].u.i;
  cpu_loop_fn loop = dt >= INT32_MIN && dt <= INT32_MAX ? convert_loop(vs->dtype, (int32_t)dt)
                                                        : NULL;
  if (!loop)
    return CPU_ERR(BP_ERR_TYPE, "%s: argument #1 'dtype': %lld is not a dtype of the op set",
                   ctx->op_name, (long long)dt);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *views[2] = {view_of(out), vs};
  run(loop, 2, views, NULL);
  return bp_aux_return_tensor(rets, out);
}

static bp_status contiguous_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = view_of(self);
  if (vs->flags & BP_VIEW_CONTIGUOUS)
    return bp_aux_return_arg(ctx, rets, self);
  cpu_loop_fn loop = loop_for(copy_loops, vs->dtype);
  if (!loop) return unsupported(ctx, 0, vs->dtype);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  const bp_tensor_view *views[2] = {view_of(out), vs};
  run(loop, 2, views, NULL);
  return bp_aux_return_tensor(rets, out);
}

static bp_status fill_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = view_of(self);
  double value = args[1].u.f;
  scalar v;
  cpu_loop_fn loop;
  switch (dt_index(vs->dtype)) {
#define X(tn, T)                                                                            \
  case DT_##tn:                                                                             \
    v.tn = CV_##tn(value);                                                                  \
    loop = fill_##tn;                                                                       \
    break;
    ALL_TYPES(X)
#undef X
    default: return unsupported(ctx, 0, vs->dtype);
  }
  /* An expanded self (stride 0) repeats elements: fill each one once, so
   * that no two threads write the same memory. */
  int64_t sizes[BP_MAX_NDIM];
  bp_tensor_view distinct;
  bp_aux_distinct_view(vs, &distinct, sizes);
  const bp_tensor_view *views[1] = {&distinct};
  run(loop, 1, views, &v);
  return bp_aux_return_arg(ctx, rets, self);
}

static bp_status copy_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor, *src = args[1].u.tensor, *tmp = NULL;
  const bp_tensor_view *vs = view_of(self), *vr = view_of(src), *read;
  if (!convert_loop(vr->dtype, vs->dtype))
    return dt_index(vs->dtype) < 0 ? unsupported(ctx, 0, vs->dtype)
                                   : unsupported(ctx, 1, vr->dtype);
  /* src in host memory, and read in full before self is written where
   * the two overlap (the kit's opening of copy_). */
  st = bp_aux_copy_source(ctx, self, src, cpu_operand_cast, &tmp, &read);
  if (st) return st;
  if (read) {
    const bp_tensor_view *views[2] = {vs, read};
    run(convert_loop(read->dtype, vs->dtype), 2, views, NULL);
  }
  cpu_host->tensor_release(tmp);
  return bp_aux_return_arg(ctx, rets, self);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

/* cast, contiguous, fill_ and copy_, after cpu_register_elementwise's. */
bp_status cpu_register_cast(bp_library *lib) {
  static const struct {
    const char *op;
    bp_boxed_kernel fn;
  } own[] = {{"cast", cast_kernel}, {"contiguous", contiguous_kernel}, {"fill_", fill_kernel},
             {"copy_", copy_kernel}};
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof own / sizeof own[0]; i++)
    st = cpu_impl(lib, own[i].op, own[i].fn, NULL);
  return st;
}
