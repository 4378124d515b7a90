/*
 * plugins/cuda/elementwise.cu - binary, unary, where, muladd, cast,
 * contiguous, fill_, copy_ and add.out.
 *
 * Each op is a functor over storage types (elementwise_ops.cuh, which
 * tests also run on the host), run by one of a few grid-stride
 * kernels: a vectorised one for contiguous operands of one shape (16-byte
 * loads and stores where the pointers allow), a contiguous one where an
 * operand is a broadcast scalar ("tensor op scalar"), and a strided one
 * that computes every operand's offset from the element's index.  The
 * geometry (cu_geo_init, planned by bp_aux_iter_plan of
 * <backplane/plugin_aux.h>) broadcasts, drops size-1 dimensions, orders
 * the rest by the output's strides and merges them, so most views end up
 * on the first two.
 *
 * Type promotion: the meta function gives the result dtype; an input of
 * another dtype is first converted to it (cu_cast_to), so the op kernels
 * see operands of one dtype, as in the CPU plugin.
 */
#include <math.h>
#include <stdio.h>

#include "elementwise_ops.cuh"

/* ------------------------------------------------------------------------ */
/* Geometry                                                                 */
/* ------------------------------------------------------------------------ */

void cu_geo_init(Geo *g, int nops, const bp_tensor_view *const *views, int32_t ndim,
                 const int64_t *shape) {
  bp_aux_iter it;
  bp_aux_iter_plan(&it, nops, views, ndim, shape);
  g->ndim = it.ndim;
  g->numel = it.numel;
  for (int d = 0; d < it.ndim; d++) {
    g->sizes[d] = it.sizes[d];
    for (int i = 0; i < CU_MAX_OPS; i++)
      g->strides[i][d] = i < nops ? it.strides[i][d] / it.elsize[i] : 0; /* bytes to elements */
  }
}

bool cu_geo_contiguous(const Geo *g, int k) {
  return g->ndim == 0 || (g->ndim == 1 && g->strides[k][0] == 1);
}

bool cu_geo_scalar(const Geo *g, int k) {
  for (int d = 0; d < g->ndim; d++)
    if (g->strides[k][d] != 0) return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* Elements per vector access: 16 bytes of the output, 2 to 8 elements. */
template <class O> struct VecN {
  static const int n = 16 / sizeof(O) < 2 ? 2 : 16 / sizeof(O) > 8 ? 8 : 16 / sizeof(O);
};

template <class T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

/* out[i] = f(a[i]) with N-element vector accesses; the tail (n % N) too. */
template <class F, class O, class A, int N>
__global__ void k_map1_vec(F f, O *o, const A *a, int64_t n) {
  int64_t nv = n / N;
  CU_GRID_LOOP(i, nv) {
    Vec<A, N> x = reinterpret_cast<const Vec<A, N> *>(a)[i];
    Vec<O, N> r;
#pragma unroll
    for (int k = 0; k < N; k++) r.v[k] = f(x.v[k]);
    reinterpret_cast<Vec<O, N> *>(o)[i] = r;
  }
  CU_GRID_LOOP(j, n - nv * N) o[nv * N + j] = f(a[nv * N + j]);
}

template <class F, class O, class A> __global__ void k_map1_strided(F f, O *o, const A *a, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[2];
    geo_offsets<2>(g, i, off);
    o[off[0]] = f(a[off[1]]);
  }
}

/* out[i] = f(a[i], b[i]) with N-element vector accesses; SA (SB): a (b) is
 * one broadcast element. */
template <class F, class O, class A, class B, int N, bool SA, bool SB>
__global__ void k_map2_vec(F f, O *o, const A *a, const B *b, int64_t n) {
  int64_t nv = n / N;
  const A a0 = a[0];
  const B b0 = b[0];
  CU_GRID_LOOP(i, nv) {
    Vec<A, N> x;
    Vec<B, N> y;
    if (!SA) x = reinterpret_cast<const Vec<A, N> *>(a)[i];
    if (!SB) y = reinterpret_cast<const Vec<B, N> *>(b)[i];
    Vec<O, N> r;
#pragma unroll
    for (int k = 0; k < N; k++) r.v[k] = f(SA ? a0 : x.v[k], SB ? b0 : y.v[k]);
    reinterpret_cast<Vec<O, N> *>(o)[i] = r;
  }
  CU_GRID_LOOP(j, n - nv * N) {
    int64_t e = nv * N + j;
    o[e] = f(SA ? a0 : a[e], SB ? b0 : b[e]);
  }
}

template <class F, class O, class A, class B>
__global__ void k_map2_strided(F f, O *o, const A *a, const B *b, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[3];
    geo_offsets<3>(g, i, off);
    o[off[0]] = f(a[off[1]], b[off[2]]);
  }
}

template <class F, class O, class A, class B, class C>
__global__ void k_map3_strided(F f, O *o, const A *a, const B *b, const C *c, Geo g) {
  CU_GRID_LOOP(i, g.numel) {
    int64_t off[4];
    geo_offsets<4>(g, i, off);
    o[off[0]] = f(a[off[1]], b[off[2]], c[off[3]]);
  }
}

/* The value is converted on the device, by the rules of cast. */
template <class T> __global__ void k_fill(T *o, double value, Geo g) {
  const T v = Cv<T>::f(value);
  if (g.ndim <= 1) {
    int64_t s = g.ndim ? g.strides[0][0] : 0;
    CU_GRID_LOOP(i, g.numel) o[i * s] = v;
  } else {
    CU_GRID_LOOP(i, g.numel) {
      int64_t off[1];
      geo_offsets<1>(g, i, off);
      o[off[0]] = v;
    }
  }
}

static bool aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

/* A launch: the device, its current stream and the geometry. */
struct Launch {
  int32_t dev;
  cudaStream_t s;
  Geo g;
  void *p[CU_MAX_OPS];
};

static bp_status launch_init(Launch *L, int nops, const bp_tensor_view *const *views) {
  L->dev = views[0]->device.index;
  bp_status st = cu_enter(L->dev, &L->s);
  if (st) return st;
  cu_geo_init(&L->g, nops, views, views[0]->ndim, views[0]->sizes);
  for (int i = 0; i < nops; i++) L->p[i] = views[i]->data;
  return BP_OK;
}

/* VEC false leaves out the vectorised kernel (conversions between two
 * dtypes other than two floating ones, which mostly serve other kernels:
 * with it they were a third of the plugin's size). */
template <class F, class O, class A, bool VEC = true> static void map1(const Launch &L, F f) {
  O *o = (O *)L.p[0];
  const A *a = (const A *)L.p[1];
  int64_t n = L.g.numel;
  if (n == 0) return;
  if (VEC && cu_geo_contiguous(&L.g, 0) && cu_geo_contiguous(&L.g, 1)) {
    const int N = VecN<O>::n;
    if (aligned(o, sizeof(O) * N) && aligned(a, sizeof(A) * N)) {
      k_map1_vec<F, O, A, N>
          <<<cu_blocks(L.dev, n / N + 1, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, n);
      return;
    }
  }
  k_map1_strided<F, O, A><<<cu_blocks(L.dev, n, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, L.g);
}

template <class F, class O, class A, class B> static void map2(const Launch &L, F f) {
  O *o = (O *)L.p[0];
  const A *a = (const A *)L.p[1];
  const B *b = (const B *)L.p[2];
  int64_t n = L.g.numel;
  if (n == 0) return;
  if (cu_geo_contiguous(&L.g, 0)) {
    bool ca = cu_geo_contiguous(&L.g, 1), cb = cu_geo_contiguous(&L.g, 2);
    bool sa = !ca && cu_geo_scalar(&L.g, 1), sb = !cb && cu_geo_scalar(&L.g, 2);
    const int N = VecN<O>::n;
    /* Both broadcast (a single element) goes the strided way. */
    if ((ca || sa) && (cb || sb) && !(sa && sb) && aligned(o, sizeof(O) * N) &&
        (sa || aligned(a, sizeof(A) * N)) && (sb || aligned(b, sizeof(B) * N))) {
      unsigned blocks = cu_blocks(L.dev, n / N + 1, CU_THREADS);
      if (ca && cb)
        k_map2_vec<F, O, A, B, N, false, false><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      else if (ca)
        k_map2_vec<F, O, A, B, N, false, true><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      else
        k_map2_vec<F, O, A, B, N, true, false><<<blocks, CU_THREADS, 0, L.s>>>(f, o, a, b, n);
      return;
    }
  }
  k_map2_strided<F, O, A, B>
      <<<cu_blocks(L.dev, n, CU_THREADS), CU_THREADS, 0, L.s>>>(f, o, a, b, L.g);
}

/* ------------------------------------------------------------------------ */
/* Conversion                                                               */
/* ------------------------------------------------------------------------ */

/* Runs dst = convert(src) over a launch of (dst, src). */
template <class D> static bool convert_to(const Launch &L, int32_t src_dt) {
  bool ok = true;
  CU_SWITCH_ALL(src_dt, ok = false, {
    if constexpr (std::is_same<D, scalar_t>::value)
      map1<CopyF<D>, D, D>(L, CopyF<D>());
    else if constexpr (Tr<D>::is_float && Tr<scalar_t>::is_float)
      map1<CastF<D, scalar_t>, D, scalar_t, true>(L, CastF<D, scalar_t>());
    else
      map1<CastF<D, scalar_t>, D, scalar_t, false>(L, CastF<D, scalar_t>());
  });
  return ok;
}

/* dst (any strides) = src converted, broadcast to dst's shape.  `who`
 * names the op in messages ("core::cast"; no "cuda: " prefix). */
static bp_status convert(const bp_tensor_view *dst, const bp_tensor_view *src, const char *who) {
  const bp_tensor_view *views[2] = {dst, src};
  Launch L;
  bp_status st = launch_init(&L, 2, views);
  if (st) return st;
  bool ok = true;
  CU_SWITCH_ALL(dst->dtype, ok = false, ok = convert_to<scalar_t>(L, src->dtype));
  if (!ok)
    return CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: cannot convert %s to %s", who,
                  bp_aux_dtype_name(src->dtype), bp_aux_dtype_name(dst->dtype));
  return cu_launched(who);
}

bp_status cu_cast_to(const bp_tensor *src, int32_t dtype, const char *op, bp_tensor **out) {
  const bp_tensor_view *v = cu_view(src);
  if (v->dtype == dtype && (v->flags & BP_VIEW_CONTIGUOUS)) {
    *out = cu_host->tensor_retain((bp_tensor *)src);
    return BP_OK;
  }
  bp_tensor *t;
  bp_status st = cu_host->tensor_empty(v->device, dtype, v->ndim, v->sizes, &t);
  if (st) return st;
  char who[160];
  snprintf(who, sizeof who, "%s (converting an input to %s)", op, bp_aux_dtype_name(dtype));
  st = convert(cu_view(t), v, who);
  if (st) {
    cu_host->tensor_release(t);
    return st;
  }
  *out = t;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static bp_status unsupported(const bp_kernel_ctx *ctx, int argi, const char *arg, int32_t dt) {
  return CU_ERR(BP_ERR_UNSUPPORTED,
                "cuda: %s: argument #%d '%s': the CUDA plugin has no kernel for %s",
                ctx->op_name, argi, arg, bp_aux_dtype_name(dt));
}

/* Inputs converted to one dtype (temporaries where needed). */
struct Inputs {
  const bp_tensor_view *views[CU_MAX_OPS];
  bp_tensor *temps[CU_MAX_OPS];
  Inputs() { memset(temps, 0, sizeof temps); }
  ~Inputs() {
    for (int i = 0; i < CU_MAX_OPS; i++) cu_host->tensor_release(temps[i]);
  }
};

/* views[0] = out; views[first + i] = ts[i] converted to dtype (for the op
 * named `op`). */
static bp_status inputs_init(Inputs *in, const char *op, const bp_tensor_view *out, int first,
                             bp_tensor *const *ts, int n, int32_t dtype) {
  in->views[0] = out;
  for (int i = first; i < first + n; i++) {
    const bp_tensor_view *v = cu_view(ts[i - first]);
    if (v->dtype != dtype) {
      bp_status st = cu_cast_to(ts[i - first], dtype, op, &in->temps[i]);
      if (st) return st;
      v = cu_view(in->temps[i]);
    }
    in->views[i] = v;
  }
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Binary ops                                                               */
/* ------------------------------------------------------------------------ */

/* What a binary kernel's user_data says. */
struct BinaryOp {
  int op;       /* B_* with alpha; the alpha-free form is op - 1 for add/sub */
  bool scalar;  /* argument #2 is a float: alpha or c */
  bool ints;    /* integers supported */
  int bool_op;  /* B_OR or B_AND for bool, or -1 */
};

static const BinaryOp op_add = {B_ADD, true, true, B_OR};
static const BinaryOp op_sub = {B_SUB, true, true, -1};
static const BinaryOp op_mul = {B_MUL, false, true, B_AND};
static const BinaryOp op_div = {B_DIV, false, false, -1};
static const BinaryOp op_maximum = {B_MAX, false, true, B_OR};
static const BinaryOp op_minimum = {B_MIN, false, true, B_AND};
static const BinaryOp op_pow = {B_POW, false, true, -1};
static const BinaryOp op_muladd = {B_MULADD, true, false, -1};

template <int OP, class T> static void run_bin(const Launch &L, double alpha) {
  Bin<OP, T> f;
  if constexpr (Tr<T>::is_float)
    f.al = (decltype(f.al))alpha;
  else
    f.al = (decltype(f.al))cu_sat<T>(alpha);
  map2<Bin<OP, T>, T, T, T>(L, f);
}

/* Integer ops for an integer T; false when op has none. */
template <class T> static bool bin_int(const Launch &L, int op, double alpha) {
  switch (op) {
    case B_ADD1: run_bin<B_ADD1, T>(L, alpha); return true;
    case B_ADD: run_bin<B_ADD, T>(L, alpha); return true;
    case B_SUB1: run_bin<B_SUB1, T>(L, alpha); return true;
    case B_SUB: run_bin<B_SUB, T>(L, alpha); return true;
    case B_MUL: run_bin<B_MUL, T>(L, alpha); return true;
    case B_MAX: run_bin<B_MAX, T>(L, alpha); return true;
    case B_MIN: run_bin<B_MIN, T>(L, alpha); return true;
    case B_POW: run_bin<B_POW, T>(L, alpha); return true;
    default: return false;
  }
}

template <class T> static bool bin_float(const Launch &L, int op, double alpha) {
  switch (op) {
    case B_ADD1: run_bin<B_ADD1, T>(L, alpha); return true;
    case B_ADD: run_bin<B_ADD, T>(L, alpha); return true;
    case B_SUB1: run_bin<B_SUB1, T>(L, alpha); return true;
    case B_SUB: run_bin<B_SUB, T>(L, alpha); return true;
    case B_MUL: run_bin<B_MUL, T>(L, alpha); return true;
    case B_DIV: run_bin<B_DIV, T>(L, alpha); return true;
    case B_MAX: run_bin<B_MAX, T>(L, alpha); return true;
    case B_MIN: run_bin<B_MIN, T>(L, alpha); return true;
    case B_POW: run_bin<B_POW, T>(L, alpha); return true;
    case B_MULADD: run_bin<B_MULADD, T>(L, alpha); return true;
    default: return false;
  }
}

/* out = a op b; out already sized. */
static bp_status run_binary(const bp_kernel_ctx *ctx, const BinaryOp *op, bp_tensor *out,
                            bp_tensor *a, bp_tensor *b, double alpha) {
  const bp_tensor_view *vo = cu_view(out);
  int32_t dt = vo->dtype;
  int code = op->op;
  if ((code == B_ADD || code == B_SUB) && alpha == 1.0) code -= 1;
  const char *arg0 = op == &op_muladd ? "a" : "self";
  if (dt == BP_BOOL) {
    if (op->bool_op < 0 || (op->scalar && alpha != 1.0)) return unsupported(ctx, 0, arg0, dt);
    code = op->bool_op;
  } else if (!bp_aux_dtype_is_float(dt) && !op->ints) {
    return unsupported(ctx, 0, arg0, dt);
  }
  bp_tensor *ts[2] = {a, b};
  Inputs in;
  bp_status st = inputs_init(&in, ctx->op_name, vo, 1, ts, 2, dt);
  if (st) return st;
  if (vo->numel == 0) return BP_OK;
  Launch L;
  st = launch_init(&L, 3, in.views);
  if (st) return st;
  bool ok = false;
  switch (dt) {
    case BP_FLOAT32: ok = bin_float<float>(L, code, alpha); break;
    case BP_FLOAT64: ok = bin_float<double>(L, code, alpha); break;
    case BP_FLOAT16: ok = bin_float<h16>(L, code, alpha); break;
    case BP_BFLOAT16: ok = bin_float<bf16>(L, code, alpha); break;
    case BP_INT8: ok = bin_int<int8_t>(L, code, alpha); break;
    case BP_INT16: ok = bin_int<int16_t>(L, code, alpha); break;
    case BP_INT32: ok = bin_int<int32_t>(L, code, alpha); break;
    case BP_INT64: ok = bin_int<int64_t>(L, code, alpha); break;
    case BP_UINT8: ok = bin_int<uint8_t>(L, code, alpha); break;
    case BP_BOOL:
      ok = true;
      if (code == B_OR)
        map2<Bin<B_OR, b8>, b8, b8, b8>(L, Bin<B_OR, b8>());
      else
        map2<Bin<B_AND, b8>, b8, b8, b8>(L, Bin<B_AND, b8>());
      break;
    default: break;
  }
  if (!ok) return unsupported(ctx, 0, arg0, dt);
  return cu_launched(ctx->op_name);
}

static bp_status binary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const BinaryOp *op = (const BinaryOp *)ctx->user_data;
  double alpha = op->scalar ? args[2].u.f : 1.0;
  return run_binary(ctx, op, out, args[0].u.tensor, args[1].u.tensor, alpha);
}
BP_AUX_STRUCTURED_KERNEL(binary_kernel, binary_impl)

static bp_status add_out_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (!st) st = bp_aux_check_out_overlap(ctx, args, 3, 2); /* out may be self or other */
  if (st) return st;
  bp_tensor *out = args[3].u.tensor;
  st = run_binary(ctx, &op_add, out, args[0].u.tensor, args[1].u.tensor, args[2].u.f);
  if (st) return st;
  return bp_aux_return_arg(ctx, rets, out);
}

/* ------------------------------------------------------------------------ */
/* Unary ops                                                                */
/* ------------------------------------------------------------------------ */

struct UnaryOp {
  int op;
  bool ints; /* neg, abs and relu also take integers */
};

static const UnaryOp op_neg = {U_NEG, true}, op_abs = {U_ABS, true}, op_relu = {U_RELU, true},
                     op_exp = {U_EXP, false}, op_log = {U_LOG, false},
                     op_sqrt = {U_SQRT, false}, op_rsqrt = {U_RSQRT, false},
                     op_sigmoid = {U_SIGMOID, false}, op_tanh = {U_TANH, false},
                     op_gelu = {U_GELU, false}, op_sin = {U_SIN, false},
                     op_cos = {U_COS, false}, op_erf = {U_ERF, false},
                     op_silu = {U_SILU, false};

template <int OP, class T> static void run_un(const Launch &L) { map1<Un<OP, T>, T, T>(L, Un<OP, T>()); }

template <class T> static bool un_float(const Launch &L, int op) {
  switch (op) {
    case U_NEG: run_un<U_NEG, T>(L); return true;
    case U_ABS: run_un<U_ABS, T>(L); return true;
    case U_RELU: run_un<U_RELU, T>(L); return true;
    case U_SQRT: run_un<U_SQRT, T>(L); return true;
    case U_RSQRT: run_un<U_RSQRT, T>(L); return true;
    case U_EXP: run_un<U_EXP, T>(L); return true;
    case U_LOG: run_un<U_LOG, T>(L); return true;
    case U_SIGMOID: run_un<U_SIGMOID, T>(L); return true;
    case U_TANH: run_un<U_TANH, T>(L); return true;
    case U_GELU: run_un<U_GELU, T>(L); return true;
    case U_GELU_TANH: run_un<U_GELU_TANH, T>(L); return true;
    case U_SIN: run_un<U_SIN, T>(L); return true;
    case U_COS: run_un<U_COS, T>(L); return true;
    case U_ERF: run_un<U_ERF, T>(L); return true;
    case U_SILU: run_un<U_SILU, T>(L); return true;
    default: return false;
  }
}

template <class T> static bool un_int(const Launch &L, int op) {
  switch (op) {
    case U_NEG: run_un<U_NEG, T>(L); return true;
    case U_ABS: run_un<U_ABS, T>(L); return true;
    case U_RELU: run_un<U_RELU, T>(L); return true;
    default: return false;
  }
}

static bp_status unary_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const UnaryOp *op = (const UnaryOp *)ctx->user_data;
  int code = op->op;
  if (op == &op_gelu && strcmp(args[1].u.str, "tanh") == 0) code = U_GELU_TANH;
  bp_status st = BP_OK;
  const bp_tensor_view *vo = cu_view(out);
  bool ok = false;
  {
    Inputs in;
    st = inputs_init(&in, ctx->op_name, vo, 1, &args[0].u.tensor, 1, vo->dtype);
    Launch L;
    if (!st && vo->numel > 0) st = launch_init(&L, 2, in.views);
    if (!st && vo->numel == 0) ok = true;
    if (!st && vo->numel > 0) {
      switch (vo->dtype) {
        case BP_FLOAT32: ok = un_float<float>(L, code); break;
        case BP_FLOAT64: ok = un_float<double>(L, code); break;
        case BP_FLOAT16: ok = un_float<h16>(L, code); break;
        case BP_BFLOAT16: ok = un_float<bf16>(L, code); break;
        case BP_INT8: ok = un_int<int8_t>(L, code); break;
        case BP_INT16: ok = un_int<int16_t>(L, code); break;
        case BP_INT32: ok = un_int<int32_t>(L, code); break;
        case BP_INT64: ok = un_int<int64_t>(L, code); break;
        case BP_UINT8: ok = un_int<uint8_t>(L, code); break;
        default: break;
      }
      if (ok) st = cu_launched(ctx->op_name);
    }
  }
  if (!st && !ok) st = unsupported(ctx, 0, "self", vo->dtype);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(unary_kernel, unary_impl)

/* ------------------------------------------------------------------------ */
/* Comparisons (op set 2)                                                   */
/* ------------------------------------------------------------------------ */

template <class T> static void run_cmp(const Launch &L, int op) {
  switch (op) {
    case C_EQ: map2<CmpF<C_EQ, T>, b8, T, T>(L, CmpF<C_EQ, T>()); break;
    case C_NE: map2<CmpF<C_NE, T>, b8, T, T>(L, CmpF<C_NE, T>()); break;
    case C_LT: map2<CmpF<C_LT, T>, b8, T, T>(L, CmpF<C_LT, T>()); break;
    case C_LE: map2<CmpF<C_LE, T>, b8, T, T>(L, CmpF<C_LE, T>()); break;
    case C_GT: map2<CmpF<C_GT, T>, b8, T, T>(L, CmpF<C_GT, T>()); break;
    default: map2<CmpF<C_GE, T>, b8, T, T>(L, CmpF<C_GE, T>()); break;
  }
}

/* out (bool) = self op other, in their promoted dtype.  user_data holds
 * the C_* code. */
static bp_status compare_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  int op = (int)(intptr_t)ctx->user_data;
  const bp_tensor_view *vo = cu_view(out);
  int32_t dt = bp_aux_promote(cu_view(args[0].u.tensor)->dtype, cu_view(args[1].u.tensor)->dtype);
  bp_tensor *ts[2] = {args[0].u.tensor, args[1].u.tensor};
  Inputs in;
  bp_status st = inputs_init(&in, ctx->op_name, vo, 1, ts, 2, dt);
  if (st) return st;
  if (vo->numel == 0) return BP_OK;
  Launch L;
  st = launch_init(&L, 3, in.views);
  if (st) return st;
  bool ok = true;
  CU_SWITCH_ALL(dt, ok = false, run_cmp<scalar_t>(L, op));
  if (!ok) return unsupported(ctx, 0, "self", dt);
  return cu_launched(ctx->op_name);
}
BP_AUX_STRUCTURED_KERNEL(compare_kernel, compare_impl)

/* ------------------------------------------------------------------------ */
/* where, cast, contiguous, fill_, copy_                                    */
/* ------------------------------------------------------------------------ */

static bp_status where_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *vo = cu_view(out);
  bool ok = true;
  {
    Inputs in;
    bp_tensor *ts[2] = {args[1].u.tensor, args[2].u.tensor};
    st = inputs_init(&in, ctx->op_name, vo, 2, ts, 2, vo->dtype);
    if (!st && vo->numel > 0) {
      in.views[1] = cu_view(args[0].u.tensor);
      Launch L;
      st = launch_init(&L, 4, in.views);
      if (!st) {
        unsigned blocks = cu_blocks(L.dev, L.g.numel, CU_THREADS);
        CU_SWITCH_ALL(vo->dtype, ok = false, {
          k_map3_strided<WhereF<scalar_t>, scalar_t, b8, scalar_t, scalar_t>
              <<<blocks, CU_THREADS, 0, L.s>>>(WhereF<scalar_t>(), (scalar_t *)L.p[0],
                                               (const b8 *)L.p[1], (const scalar_t *)L.p[2],
                                               (const scalar_t *)L.p[3], L.g);
        });
        if (ok) st = cu_launched(ctx->op_name);
      }
    }
  }
  if (!st && !ok) st = unsupported(ctx, 1, "self", vo->dtype);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(where_kernel, where_impl)

static bool known_dtype(int64_t dt) {
  switch (dt) {
    case BP_FLOAT32: case BP_FLOAT64: case BP_FLOAT16: case BP_BFLOAT16: case BP_INT8:
    case BP_INT16: case BP_INT32: case BP_INT64: case BP_UINT8: case BP_BOOL: return true;
    default: return false;
  }
}

static bp_status cast_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  const bp_tensor_view *vs = cu_view(args[0].u.tensor);
  int64_t dt = args[1].u.i;
  if (!known_dtype(dt) || !known_dtype(vs->dtype))
    return CU_ERR(BP_ERR_TYPE, "cuda: %s: argument #1 'dtype': %lld is not a dtype of the op set",
                  ctx->op_name, (long long)dt);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  if (vs->numel > 0) st = convert(cu_view(out), vs, ctx->op_name);
  return bp_aux_finish(ctx, st, rets, out);
}

static bp_status contiguous_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = cu_view(self);
  if (vs->flags & BP_VIEW_CONTIGUOUS) return bp_aux_return_arg(ctx, rets, self);
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, "self", vs->dtype);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  if (vs->numel > 0) st = convert(cu_view(out), vs, ctx->op_name);
  return bp_aux_finish(ctx, st, rets, out);
}

static bp_status fill_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = cu_view(self);
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, "self", vs->dtype);
  if (vs->numel == 0) return bp_aux_return_arg(ctx, rets, self);
  /* Each distinct element once: a stride-0 dimension counts as size 1. */
  int64_t sizes[BP_MAX_NDIM];
  bp_tensor_view distinct = *vs;
  for (int32_t d = 0; d < vs->ndim; d++)
    sizes[d] = vs->strides[d] == 0 && vs->sizes[d] > 1 ? 1 : vs->sizes[d];
  distinct.sizes = sizes;
  const bp_tensor_view *views[1] = {&distinct};
  Launch L;
  st = launch_init(&L, 1, views);
  if (st) return st;
  double value = args[1].u.f;
  unsigned blocks = cu_blocks(L.dev, L.g.numel, CU_THREADS);
  CU_SWITCH_ALL(vs->dtype, (void)0, {
    k_fill<scalar_t><<<blocks, CU_THREADS, 0, L.s>>>((scalar_t *)L.p[0], value, L.g);
  });
  st = cu_launched(ctx->op_name);
  if (st) return st;
  return bp_aux_return_arg(ctx, rets, self);
}

static bp_status copy_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor, *src = args[1].u.tensor, *tmp = NULL;
  const bp_tensor_view *vs = cu_view(self), *vr = cu_view(src);
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, "self", vs->dtype);
  if (!known_dtype(vr->dtype)) return unsupported(ctx, 1, "src", vr->dtype);
  if (vs->numel == 0) return bp_aux_return_arg(ctx, rets, self);
  if (vr->device.type != vs->device.type || vr->device.index != vs->device.index) {
    /* Bring src to self's device through the devices' interfaces. */
    st = cu_host->tensor_empty(vs->device, vr->dtype, vr->ndim, vr->sizes, &tmp);
    if (!st) st = cu_host->tensor_copy(tmp, src);
  } else if (bp_aux_same_view(vs, vr)) {
    return bp_aux_return_arg(ctx, rets, self);
  } else if (bp_aux_may_overlap(vs, vr)) {
    /* Read all of src before writing any of self. */
    st = cu_host->tensor_empty(vs->device, vr->dtype, vr->ndim, vr->sizes, &tmp);
    if (!st) st = convert(cu_view(tmp), vr, ctx->op_name);
  }
  if (!st) st = convert(vs, tmp ? cu_view(tmp) : vr, ctx->op_name);
  cu_host->tensor_release(tmp);
  if (st) return st;
  return bp_aux_return_arg(ctx, rets, self);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

bp_status cu_register_elementwise(bp_library *lib) {
  static const struct {
    const char *op;
    const void *data;
  } binary[] = {
      {"add", &op_add},         {"sub", &op_sub},         {"mul", &op_mul},
      {"div", &op_div},         {"maximum", &op_maximum}, {"minimum", &op_minimum},
      {"pow", &op_pow},         {"muladd", &op_muladd},
  },
    unary[] = {
        {"neg", &op_neg},     {"abs", &op_abs},         {"exp", &op_exp},   {"log", &op_log},
        {"sqrt", &op_sqrt},   {"rsqrt", &op_rsqrt},     {"relu", &op_relu},
        {"sigmoid", &op_sigmoid}, {"tanh", &op_tanh},   {"gelu", &op_gelu},
        {"sin", &op_sin},     {"cos", &op_cos},         {"erf", &op_erf},   {"silu", &op_silu},
    };
  static const struct {
    const char *op;
    bp_boxed_kernel fn;
  } own[] = {
      {"add.out", add_out_kernel},       {"cast", cast_kernel}, {"contiguous", contiguous_kernel},
      {"fill_", fill_kernel},            {"copy_", copy_kernel},
  };
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof binary / sizeof binary[0]; i++)
    st = CU_IMPL_STRUCTURED(lib, binary[i].op, binary_kernel, binary[i].data);
  for (size_t i = 0; !st && i < sizeof unary / sizeof unary[0]; i++)
    st = CU_IMPL_STRUCTURED(lib, unary[i].op, unary_kernel, unary[i].data);
  if (!st) st = CU_IMPL_STRUCTURED(lib, "where", where_kernel, NULL);
  static const char *const compare[] = {"eq", "ne", "lt", "le", "gt", "ge"}; /* C_* order */
  for (int i = 0; !st && i < 6; i++)
    st = CU_IMPL_STRUCTURED(lib, compare[i], compare_kernel, (const void *)(intptr_t)i);
  for (size_t i = 0; !st && i < sizeof own / sizeof own[0]; i++)
    st = cu_impl(lib, own[i].op, own[i].fn, NULL);
  return st;
}
