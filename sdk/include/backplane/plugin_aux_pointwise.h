/*
 * backplane/plugin_aux_pointwise.h - pointwise kernels of the plugin helper
 * kit, written as their scalar expression.  Part of <backplane/plugin_aux.h>,
 * which includes it: include that header, not this one.  Header-only, like
 * the rest of the kit (it uses only ABI 1.0 host slots).
 *
 *     BP_AUX_POINTWISE_KERNEL(add_kernel, 2, (self, other, alpha), self + alpha * other)
 *     BP_AUX_POINTWISE_KERNEL(relu_kernel, 1, (self), bp_aux_max(self, 0))
 *
 * defines the kernels of core::add and core::relu for every dtype: the kit
 * reads the arguments, converts the inputs to the result's dtype, plans the
 * broadcast iteration, evaluates the expression per element in the compute
 * type and stores it, and releases its temporaries, as PyTorch's
 * cpu_kernel(iter, lambda) does.
 */
#ifndef BACKPLANE_PLUGIN_AUX_POINTWISE_H
#define BACKPLANE_PLUGIN_AUX_POINTWISE_H

#ifndef BACKPLANE_PLUGIN_AUX_INSIDE
#error "include <backplane/plugin_aux.h>, which includes this file"
#endif

/* ------------------------------------------------------------------------ */
/* Comparisons in the compute types                                         */
/* ------------------------------------------------------------------------ */

/*
 * The compute types of bp_aux_load are float, double and uint64_t (every
 * integer dtype and bool, signed ones sign-extended), so that +, - and *
 * wrap as the op set's integer results do, with no undefined overflow.
 * A comparison of two uint64_t, though, is unsigned: -1 > 0.  These read
 * a uint64_t as the signed value it holds, and leave float and double as
 * they are, so one expression serves every dtype:
 *
 *   bp_aux_signed(x)  x as int64_t for a uint64_t, x itself for float or
 *                     double: `bp_aux_signed(x) < 0`, `x / ...` by sign;
 *   bp_aux_max(a, b)  the larger, NaN if either is NaN (torch.maximum);
 *   bp_aux_min(a, b)  the smaller, NaN if either is NaN (torch.minimum).
 *
 * The type is the first argument's; the second is converted to it, so
 * bp_aux_max(x, 0) is relu in every dtype (relu(-0.0) is +0.0).  uint8
 * and bool load as 0..255 and 0..1, which read the same signed.
 * Type-generic: _Generic in C, overloads in C++.
 */
static inline int64_t bp_aux_signed_u64_(uint64_t v) {
  return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1; /* no implementation-defined cast */
}
static inline float bp_aux_signed_f32_(float v) { return v; }
static inline double bp_aux_signed_f64_(double v) { return v; }
#define BP_AUX_MINMAX_(sfx, C, S)                                                    \
  static inline C bp_aux_max_##sfx##_(C a, C b) {                                     \
    return a != a || (S)a > (S)b ? a : b;                                            \
  }                                                                                  \
  static inline C bp_aux_min_##sfx##_(C a, C b) { return a != a || (S)a < (S)b ? a : b; }
BP_AUX_MINMAX_(f32, float, float)
BP_AUX_MINMAX_(f64, double, double)
#undef BP_AUX_MINMAX_
static inline uint64_t bp_aux_max_u64_(uint64_t a, uint64_t b) {
  return bp_aux_signed_u64_(a) > bp_aux_signed_u64_(b) ? a : b;
}
static inline uint64_t bp_aux_min_u64_(uint64_t a, uint64_t b) {
  return bp_aux_signed_u64_(a) < bp_aux_signed_u64_(b) ? a : b;
}

/* A Scalar argument, held for each compute type (see bp_aux_map). */
typedef struct bp_aux_scalar {
  double f;   /* the value, for float and double */
  uint64_t u; /* the value converted to the result's integer dtype as core::cast
                 converts it, then loaded (for uint64_t) */
} bp_aux_scalar;
static inline void bp_aux_scalar_get_f32_(float *out, const bp_aux_scalar *s) { *out = (float)s->f; }
static inline void bp_aux_scalar_get_f64_(double *out, const bp_aux_scalar *s) { *out = s->f; }
static inline void bp_aux_scalar_get_u64_(uint64_t *out, const bp_aux_scalar *s) { *out = s->u; }

#ifdef __cplusplus
} /* extern "C" */
static inline int64_t bp_aux_signed(uint64_t v) { return bp_aux_signed_u64_(v); }
static inline float bp_aux_signed(float v) { return v; }
static inline double bp_aux_signed(double v) { return v; }
static inline float bp_aux_max(float a, float b) { return bp_aux_max_f32_(a, b); }
static inline double bp_aux_max(double a, double b) { return bp_aux_max_f64_(a, b); }
static inline uint64_t bp_aux_max(uint64_t a, uint64_t b) { return bp_aux_max_u64_(a, b); }
static inline float bp_aux_min(float a, float b) { return bp_aux_min_f32_(a, b); }
static inline double bp_aux_min(double a, double b) { return bp_aux_min_f64_(a, b); }
static inline uint64_t bp_aux_min(uint64_t a, uint64_t b) { return bp_aux_min_u64_(a, b); }
static inline void bp_aux_scalar_get_(float *o, const bp_aux_scalar *s) { bp_aux_scalar_get_f32_(o, s); }
static inline void bp_aux_scalar_get_(double *o, const bp_aux_scalar *s) { bp_aux_scalar_get_f64_(o, s); }
static inline void bp_aux_scalar_get_(uint64_t *o, const bp_aux_scalar *s) { bp_aux_scalar_get_u64_(o, s); }
extern "C" {
#else
#define bp_aux_signed(x) \
  _Generic((x), uint64_t: bp_aux_signed_u64_, float: bp_aux_signed_f32_, double: bp_aux_signed_f64_)(x)
#define bp_aux_max(a, b) \
  _Generic((a), uint64_t: bp_aux_max_u64_, float: bp_aux_max_f32_, double: bp_aux_max_f64_)(a, b)
#define bp_aux_min(a, b) \
  _Generic((a), uint64_t: bp_aux_min_u64_, float: bp_aux_min_f32_, double: bp_aux_min_f64_)(a, b)
#define bp_aux_scalar_get_(o, s)                                                        \
  _Generic((o), float *: bp_aux_scalar_get_f32_, double *: bp_aux_scalar_get_f64_,        \
           uint64_t *: bp_aux_scalar_get_u64_)(o, s)
#endif

/* ------------------------------------------------------------------------ */
/* The plumbing of a pointwise kernel                                       */
/* ------------------------------------------------------------------------ */

/*
 * What a pointwise kernel needs before its loop, and releases after it.
 * bp_aux_map_begin(ctx, m, args, nin, nargs, out), for a kernel that fills
 * `out` (a structured kernel's result):
 *   - arguments #0 .. #nin-1 must be Tensors: each is converted to out's
 *     dtype (bp_aux_to_dtype: a new reference to it when it has that
 *     dtype already, else a contiguous copy), so that an op computes in
 *     its result's dtype as the op set's promotion says;
 *   - arguments #nin .. #nargs-1 must be numbers (int, float, bool or a
 *     Scalar holding one): each is kept in m->scalars[i] (by argument
 *     index) for every compute type: the value as a double for float and
 *     double, and for uint64_t the value converted to out's dtype as
 *     core::cast converts it (saturating a float), then loaded;
 *   - the iteration m->it is planned over out (operand 0) and the
 *     converted inputs (operands 1 .. nin), broadcast to out's shape.
 * At most 7 arguments (nin >= 1).  On failure it has recorded the error
 * and holds nothing that bp_aux_map_end would not release.
 * bp_aux_map_end(ctx, m, st) releases the converted inputs and returns
 * st, so a kernel ends with `return bp_aux_map_end(ctx, &m, st);`.
 * Converting reads the data through host pointers: the device must be
 * host-visible (the CPU, or BP_DEVICE_HOST_VISIBLE).
 */
typedef struct bp_aux_map {
  bp_aux_iter it;                                  /* out, then the inputs */
  int32_t dtype;                                   /* out's dtype */
  int nin;                                         /* Tensor inputs */
  bp_tensor *in[BP_AUX_ITER_MAX_OPS];              /* converted inputs, owned */
  bp_aux_scalar scalars[BP_AUX_ITER_MAX_OPS];      /* by argument index */
} bp_aux_map;

static inline bp_status bp_aux_map_scalar_(const bp_kernel_ctx *ctx, bp_aux_map *m,
                                           const bp_value *v, size_t i) {
  int64_t iv = v->tag == BP_TAG_INT ? v->u.i : 0;
  uint8_t bv = v->tag == BP_TAG_BOOL && v->u.b;
  double fv = v->tag == BP_TAG_FLOAT ? v->u.f : 0;
  int32_t src = v->tag == BP_TAG_INT ? BP_INT64 : v->tag == BP_TAG_BOOL ? BP_BOOL : BP_FLOAT64;
  const void *p = v->tag == BP_TAG_INT ? (const void *)&iv
                  : v->tag == BP_TAG_BOOL ? (const void *)&bv : (const void *)&fv;
  if (v->tag != BP_TAG_INT && v->tag != BP_TAG_FLOAT && v->tag != BP_TAG_BOOL)
    return ctx->host->set_errorf(BP_ERR_TYPE, "%s: argument #%u: expected a number (int, float "
                                 "or bool), got %s", ctx->op_name, (unsigned)i,
                                 bp_aux_tag_name(v->tag));
  m->scalars[i].f = v->tag == BP_TAG_INT ? (double)iv : v->tag == BP_TAG_BOOL ? (double)bv : fv;
  if (bp_aux_dtype_is_float(m->dtype)) return BP_OK;
  BP_AUX_DISPATCH(m->dtype, T, return bp_aux_unsupported_dtype(ctx, 0, m->dtype), {
    T x;
    bp_aux_convert(m->dtype, &x, src, p);
    m->scalars[i].u = (uint64_t)bp_aux_load(x);
  })
  return BP_OK;
}

static inline bp_status bp_aux_map_begin(const bp_kernel_ctx *ctx, bp_aux_map *m,
                                         const bp_value *args, int nin, int nargs,
                                         bp_tensor *out) {
  const bp_tensor_view *views[BP_AUX_ITER_MAX_OPS];
  bp_status st = BP_OK;
  memset(m, 0, sizeof *m);
  views[0] = ctx->host->tensor_view(out);
  m->dtype = views[0]->dtype;
  m->nin = nin;
  if (nin < 1 || nargs < nin || nargs > BP_AUX_ITER_MAX_OPS - 1)
    return ctx->host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: a pointwise kernel takes 1 to 7 "
                                 "arguments, 1 or more of them Tensors (%d of %d)",
                                 ctx->op_name, nin, nargs);
  for (int i = 0; i < nin && st == BP_OK; i++) {
    bp_tensor *t;
    st = bp_aux_arg_tensor(ctx, args, (size_t)i, &t);
    if (st == BP_OK) st = bp_aux_to_dtype(ctx, t, m->dtype, &m->in[i]);
    if (st == BP_OK) views[i + 1] = ctx->host->tensor_view(m->in[i]);
  }
  for (int i = nin; i < nargs && st == BP_OK; i++)
    st = bp_aux_map_scalar_(ctx, m, &args[i], (size_t)i);
  return st != BP_OK ? st : bp_aux_iter_init(ctx, &m->it, nin + 1, views);
}

static inline bp_status bp_aux_map_end(const bp_kernel_ctx *ctx, bp_aux_map *m, bp_status st) {
  for (int i = 0; i < BP_AUX_ITER_MAX_OPS; i++)
    if (m->in[i]) ctx->host->tensor_release(m->in[i]);
  memset(m->in, 0, sizeof m->in);
  return st;
}

/* Whether every operand of a run steps by `size` bytes: contiguous. */
static inline bool bp_aux_run_dense_(const bp_aux_run *r, int nops, int64_t size) {
  for (int i = 0; i < nops; i++)
    if (r->strides[i] != size) return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Pointwise kernels                                                        */
/* ------------------------------------------------------------------------ */

/*
 * BP_AUX_POINTWISE_KERNEL(name, nin, (names...), expression) defines the
 * kernel pair `name` and `name##_fill` of BP_AUX_STRUCTURED_KERNEL (register
 * them with BP_AUX_IMPL_STRUCTURED) for a pointwise op whose result has
 * the broadcast shape of its Tensor arguments and the dtype it computes in
 * (add, mul, relu, where, ...; the op's meta function, which the host runs
 * first, decides both and checks every argument):
 *
 *   names       one name per leading argument of the schema, in order, at
 *               most 7: the first `nin` are the Tensor inputs, the rest
 *               number arguments (alpha);
 *   expression  the result of one element, in terms of those names.
 *
 * Each name is an element (or the number) as the compute type C of the
 * result's dtype, read through bp_aux_load: float (float32, float16,
 * bfloat16), double (float64) or uint64_t (the integers and bool, where
 * +, - and * wrap; compare with bp_aux_signed, bp_aux_max, bp_aux_min).
 * The expression may also use ctx, args, out, the storage type T and C;
 * its value is converted to C and stored with bp_aux_store (rounded for
 * the 16-bit floats, wrapped to the width for integers, != 0 for bool).
 * It runs on the calling thread, element by element, each element read
 * before it is written, so `out` may be an input (x.add_(y)).
 *
 * BP_AUX_POINTWISE_FLOAT_KERNEL is the same for the four floating dtypes
 * alone (the expression may call <math.h> functions); any other result
 * dtype fails with BP_ERR_UNSUPPORTED.  Declare the dtypes a kernel takes
 * when you register it, so that no other reaches it.
 */
#define BP_AUX_POINTWISE_KERNEL(name, nin, names, ...) \
  BP_AUX_POINTWISE_KERNEL_IN_(name, BP_AUX_PW_ALL_, nin, names, __VA_ARGS__)
#define BP_AUX_POINTWISE_FLOAT_KERNEL(name, nin, names, ...) \
  BP_AUX_POINTWISE_KERNEL_IN_(name, BP_AUX_PW_FLOATS_, nin, names, __VA_ARGS__)

#define BP_AUX_POINTWISE_KERNEL_IN_(name, CASES, nin, names, ...)                              \
  static inline bp_status name##_impl_(const bp_kernel_ctx *ctx, const bp_value *args,         \
                                       bp_tensor *out) {                                       \
    bp_aux_map m_;                                                                             \
    bp_status st_ = bp_aux_map_begin(ctx, &m_, args, nin, BP_AUX_NARG_ names, out);            \
    if (st_ == BP_OK) {                                                                        \
      switch (m_.dtype) {                                                                      \
        CASES(BP_AUX_PW_CASE_, (nin, names, __VA_ARGS__))                                      \
        default: st_ = bp_aux_unsupported_dtype(ctx, 0, m_.dtype); break;                      \
      }                                                                                        \
    }                                                                                          \
    return bp_aux_map_end(ctx, &m_, st_);                                                      \
  }                                                                                            \
  BP_AUX_STRUCTURED_KERNEL(name, name##_impl_)

/*
 * BP_AUX_POINTWISE_OUT_KERNEL(name, kernel, nin) defines `name`, a boxed
 * kernel for the .out form of the op of the BP_AUX_POINTWISE_KERNEL
 * `kernel` (nin Tensor inputs), whose written Tensor is its last argument,
 * as in add.out(self, other, *, alpha, out): it checks the arguments with
 * the op's meta function (bp_aux_check_args: out's shape and dtype),
 * refuses an out that overlaps an input without being exactly it
 * (bp_aux_check_out_overlap), fills out with kernel's expression and
 * returns it.  Register it with bp_aux_impl_dtypes.
 */
#define BP_AUX_POINTWISE_OUT_KERNEL(name, kernel, nin) \
  BP_AUX_OUT_KERNEL(name, kernel##_impl_, nin)

/* The dtypes: code, storage type, compute type. */
#define BP_AUX_PW_FLOATS_(X, p)                     \
  X(BP_FLOAT32, float, float, p)                    \
  X(BP_FLOAT64, double, double, p)                  \
  X(BP_FLOAT16, bp_aux_float16, float, p)           \
  X(BP_BFLOAT16, bp_aux_bfloat16, float, p)
#define BP_AUX_PW_ALL_(X, p)                        \
  BP_AUX_PW_FLOATS_(X, p)                           \
  X(BP_INT8, int8_t, uint64_t, p)                   \
  X(BP_INT16, int16_t, uint64_t, p)                 \
  X(BP_INT32, int32_t, uint64_t, p)                 \
  X(BP_INT64, int64_t, uint64_t, p)                 \
  X(BP_UINT8, uint8_t, uint64_t, p)                 \
  X(BP_BOOL, bp_aux_bool, uint64_t, p)
#define BP_AUX_PW_CASE_(code, TT, CC, p) \
  case code: {                           \
    typedef TT T;                        \
    typedef CC C;                        \
    BP_AUX_PW_BODY_ p                    \
  } break;

/* One dtype's loops: contiguous runs indexed (so that they vectorise),
 * others through the run's byte strides. */
#define BP_AUX_PW_BODY_(nin, names, ...)                                                      \
  C sc_[BP_AUX_ITER_MAX_OPS];                                                                 \
  bp_aux_run r_;                                                                              \
  for (int i_ = 0; i_ < BP_AUX_ITER_MAX_OPS; i_++) bp_aux_scalar_get_(&sc_[i_], &m_.scalars[i_]); \
  for (bp_aux_iter_start(&m_.it, 0, m_.it.numel, &r_); bp_aux_iter_next(&m_.it, &r_);) {      \
    if (bp_aux_run_dense_(&r_, (nin) + 1, (int64_t)sizeof(T))) {                              \
      for (int64_t k_ = 0; k_ < r_.n; k_++) {                                                 \
        BP_AUX_EACH_(BP_AUX_PW_DENSE_, nin, BP_AUX_UNPAREN_ names)                            \
        bp_aux_store((T *)(void *)r_.ptrs[0] + k_, (C)(__VA_ARGS__));                         \
      }                                                                                       \
    } else {                                                                                  \
      for (int64_t k_ = 0; k_ < r_.n; k_++) {                                                 \
        BP_AUX_EACH_(BP_AUX_PW_STRIDED_, nin, BP_AUX_UNPAREN_ names)                          \
        bp_aux_store(BP_AUX_AT(T, r_, 0, k_), (C)(__VA_ARGS__));                              \
      }                                                                                       \
    }                                                                                         \
  }

/* Name #i: input i (operand i + 1) for i < nin, else number argument #i. */
#define BP_AUX_PW_DENSE_(nin, i, name) \
  C name = (i) < (nin) ? bp_aux_load(((T *)(void *)r_.ptrs[(i) + 1])[k_]) : sc_[i];
#define BP_AUX_PW_STRIDED_(nin, i, name) \
  C name = (i) < (nin) ? bp_aux_load(*BP_AUX_AT(T, r_, (i) + 1, k_)) : sc_[i];

/* f(x, 0, a) f(x, 1, b) ... for up to 7 names, and their count. */
#define BP_AUX_UNPAREN_(...) __VA_ARGS__
#define BP_AUX_CAT3_(a, b, c) BP_AUX_CAT3I_(a, b, c)
#define BP_AUX_CAT3I_(a, b, c) a##b##c
#define BP_AUX_NARG_(...) BP_AUX_NARGI_(__VA_ARGS__, 7, 6, 5, 4, 3, 2, 1, 0)
#define BP_AUX_NARGI_(_1, _2, _3, _4, _5, _6, _7, n, ...) n
#define BP_AUX_EACH_(f, x, ...) \
  BP_AUX_CAT3_(BP_AUX_EACH, BP_AUX_NARG_(__VA_ARGS__), _)(f, x, __VA_ARGS__)
#define BP_AUX_EACH1_(f, x, a) f(x, 0, a)
#define BP_AUX_EACH2_(f, x, a, b) f(x, 0, a) f(x, 1, b)
#define BP_AUX_EACH3_(f, x, a, b, c) BP_AUX_EACH2_(f, x, a, b) f(x, 2, c)
#define BP_AUX_EACH4_(f, x, a, b, c, d) BP_AUX_EACH3_(f, x, a, b, c) f(x, 3, d)
#define BP_AUX_EACH5_(f, x, a, b, c, d, e) BP_AUX_EACH4_(f, x, a, b, c, d) f(x, 4, e)
#define BP_AUX_EACH6_(f, x, a, b, c, d, e, g) BP_AUX_EACH5_(f, x, a, b, c, d, e) f(x, 5, g)
#define BP_AUX_EACH7_(f, x, a, b, c, d, e, g, h) BP_AUX_EACH6_(f, x, a, b, c, d, e, g) f(x, 6, h)

#endif /* BACKPLANE_PLUGIN_AUX_POINTWISE_H */
