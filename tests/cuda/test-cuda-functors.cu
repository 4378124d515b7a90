/*
 * tests/cuda/test-cuda-functors.cu - the CUDA plugin's reduction functors
 * (plugins/cuda/reduce_ops.cuh), run on the host.  Needs nvcc, not a GPU.
 *
 * The kernels rely on one contract (see reduce_ops.cuh): each accumulator
 * is stepped through its positions in increasing order, and accumulators
 * are then combined in any order.  Every trial here deals the positions of
 * a random input out to a random number of accumulators (each in
 * increasing order, as the kernels' threads and slices get them), some
 * started by load() and some by init(), combines them, and empty ones, in
 * a random order, and compares the stored result with a direct reference:
 *   argmax      the first position of the maximum; the first NaN if any;
 *               0 when every position holds the dtype's lowest value;
 *   amax, amin  NaN if any element is NaN, else the maximum (minimum);
 *   sum         integers wrap exactly; to bool, whether any element is
 *               true; floating within a rounding bound;
 *   mean        the sum divided by the count.
 * Inputs are drawn from palettes of edge values (NaN, infinities, signed
 * zeros, the integer limits) so that ties and NaN orders are common.
 *
 * The elementwise functors (plugins/cuda/elementwise_ops.cuh) are run on
 * the host against the CPU plugin, through bp_call, over every pair of
 * edge values of each dtype: every unary op, every binary op (add and sub
 * with alpha 1 and another), the comparisons of op set 2 (bit for bit),
 * and cast between every two dtypes.  As the
 * CUDA kernels do, the inputs are first converted to the CPU result's
 * dtype with the cast functor; results must match within twice the op
 * set's tolerance, integers and bools exactly.  Only the functors run
 * here: the kernels' indexing and launches need a GPU (test-cuda-ops).
 *
 * test-cuda-host.cu runs the plugin's host-side logic: the overlap test,
 * the reductions' launch plan and the table of cuBLAS handles.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <backplane/host.h>

#include "elementwise_ops.cuh"
#include "reduce_ops.cuh"
#include "reduce_plan.h"

extern "C" {
#include "tap.h"
}

#define TRIALS 3000
#define MAXN 48

#include "hostrng.h"

/* Edge-value palettes, as the compute type of each storage type. */
template <class T> struct Pal;
template <> struct Pal<float> {
  static float pick() {
    static const float v[] = {NAN,  -INFINITY, INFINITY, -1.0f,    0.0f,     -0.0f,
                              1.0f, 2.0f,      -FLT_MAX, FLT_MAX, 0.5f, -2.0f};
    return v[rnd() % (sizeof v / sizeof v[0])];
  }
  static float ld(float x) { return x; }
};
template <> struct Pal<double> {
  static double pick() {
    static const double v[] = {NAN, -INFINITY, INFINITY, -1.0, 0.0,      -0.0,
                               1.0, 2.0,       -DBL_MAX, DBL_MAX, 0.25, -3.0};
    return v[rnd() % (sizeof v / sizeof v[0])];
  }
  static double ld(double x) { return x; }
};
template <> struct Pal<h16> {
  /* float16 bit patterns: NaN, -inf, inf, -1, 0, -0, 1, 2, -65504, 65504. */
  static h16 pick() {
    static const uint16_t v[] = {0x7e00, 0xfc00, 0x7c00, 0xbc00, 0x0000,
                                 0x8000, 0x3c00, 0x4000, 0xfbff, 0x7bff};
    h16 r;
    r.x = v[rnd() % (sizeof v / sizeof v[0])];
    return r;
  }
  static float ld(h16 x) { return Tr<h16>::ld(x); }
};
template <class I> struct PalInt {
  static I pick() {
    const I v[] = {Lim<I>::min, (I)(Lim<I>::min + 1), (I)-1, 0, 1, 7, (I)(Lim<I>::max - 1),
                   Lim<I>::max};
    return v[rnd() % (sizeof v / sizeof v[0])];
  }
  static I ld(I x) { return x; }
};
template <> struct Pal<int8_t> : PalInt<int8_t> {};
template <> struct Pal<int32_t> : PalInt<int32_t> {};
template <> struct Pal<int64_t> : PalInt<int64_t> {};
template <> struct Pal<uint8_t> {
  static uint8_t pick() {
    static const uint8_t v[] = {0, 1, 2, 7, 254, 255};
    return v[rnd() % (sizeof v / sizeof v[0])];
  }
  static uint8_t ld(uint8_t x) { return x; }
};

/* Runs op over x[0..n) as the kernels may: positions dealt out in order to
 * k accumulators, each begun by init() or by load() of its first position,
 * then all of them and some empty ones combined in a random order. */
template <class Op, class T> static typename Op::A run(const Op &op, const T *x, int n) {
  typedef typename Op::A A;
  A acc[16];
  bool begun[16];
  int k = 1 + (int)(rnd() % 6), extra = (int)(rnd() % 3);
  bool use_load = rnd() % 2;
  for (int i = 0; i < k + extra; i++) {
    acc[i] = op.init();
    begun[i] = false;
  }
  for (int r = 0; r < n; r++) {
    int j = (int)(rnd() % (uint32_t)k);
    if (use_load && !begun[j])
      acc[j] = op.load(x[r], r);
    else
      acc[j] = op.step(acc[j], x[r], r);
    begun[j] = true;
  }
  /* Combine a random pair (either order) until one is left. */
  int m = k + extra;
  while (m > 1) {
    int a = (int)(rnd() % (uint32_t)m), b = (int)(rnd() % (uint32_t)(m - 1));
    if (b >= a) b++;
    acc[a] = op.comb(acc[a], acc[b]);
    acc[b] = acc[--m];
  }
  return acc[0];
}

template <class T> static void fill(T *x, int n) {
  for (int i = 0; i < n; i++) x[i] = Pal<T>::pick();
}

template <class C> static bool is_nan(C v) { return v != v; }

/* argmax: the first NaN, else the first maximum; 0 for an empty input. */
template <class T> static int64_t ref_argmax(const T *x, int n) {
  typedef typename Tr<T>::C C;
  int64_t best = 0;
  for (int i = 0; i < n; i++) {
    C v = Pal<T>::ld(x[i]), b = Pal<T>::ld(x[best]);
    if (is_nan(b)) break;
    if (is_nan(v) || v > b) best = i;
  }
  return best;
}

template <class T> static int check_argmax(const char *name) {
  T x[MAXN];
  int bad = 0;
  for (int t = 0; t < TRIALS; t++) {
    int n = (int)(rnd() % (MAXN + 1));
    fill(x, n);
    ArgOp<T> op;
    int64_t got = op.store(run(op, x, n), n), want = ref_argmax(x, n);
    if (got != want && bad++ < 3) {
      tap_diag("argmax %s trial %d: n %d, got %lld, want %lld", name, t, n, (long long)got,
               (long long)want);
      for (int i = 0; i < n; i++) tap_diag("  x[%d] = %g", i, (double)Pal<T>::ld(x[i]));
    }
  }
  return bad;
}

static void argmax_first_position(void) {
  is_int(check_argmax<float>("float32"), 0);
  is_int(check_argmax<double>("float64"), 0);
  is_int(check_argmax<h16>("float16"), 0);
  is_int(check_argmax<int8_t>("int8"), 0);
  is_int(check_argmax<int32_t>("int32"), 0);
  is_int(check_argmax<int64_t>("int64"), 0);
  is_int(check_argmax<uint8_t>("uint8"), 0);
}

/* amax (MAX) or amin: NaN if any NaN, else the extreme; for an empty
 * input the identity (the lowest or highest value). */
template <class T, bool MAX> static int check_extreme(const char *name) {
  typedef typename Tr<T>::C C;
  T x[MAXN];
  int bad = 0;
  for (int t = 0; t < TRIALS; t++) {
    int n = (int)(rnd() % (MAXN + 1));
    fill(x, n);
    ExtOp<T, MAX> op;
    C got = Pal<T>::ld(op.store(run(op, x, n), n));
    C want = MAX ? lowest<C>() : highest<C>();
    bool nan = false;
    for (int i = 0; i < n; i++) {
      C v = Pal<T>::ld(x[i]);
      nan = nan || is_nan(v);
      if (MAX ? v > want : v < want) want = v;
    }
    bool same = nan ? is_nan(got) : got == want;
    if (!same && bad++ < 3)
      tap_diag("%s %s trial %d: n %d, got %g, want %s%g", MAX ? "amax" : "amin", name, t, n,
               (double)got, nan ? "NaN, not " : "", (double)want);
  }
  return bad;
}

static void extremes_propagate_nan(void) {
  is_int((check_extreme<float, true>("float32")), 0);
  is_int((check_extreme<float, false>("float32")), 0);
  is_int((check_extreme<double, true>("float64")), 0);
  is_int((check_extreme<double, false>("float64")), 0);
  is_int((check_extreme<h16, true>("float16")), 0);
  is_int((check_extreme<int8_t, false>("int8")), 0);
  is_int((check_extreme<int64_t, true>("int64")), 0);
  is_int((check_extreme<uint8_t, false>("uint8")), 0);
}

/* Integer sums wrap, whatever the order. */
template <class T> static int check_int_sum(const char *name) {
  T x[MAXN];
  int bad = 0;
  for (int t = 0; t < TRIALS; t++) {
    int n = (int)(rnd() % (MAXN + 1));
    fill(x, n);
    SumOp<T> op;
    T got = op.store(run(op, x, n), n);
    uint64_t w = 0;
    for (int i = 0; i < n; i++) w += (uint64_t)(int64_t)x[i];
    T want = (T)w;
    if (got != want && bad++ < 3)
      tap_diag("sum %s trial %d: n %d, got %lld, want %lld", name, t, n, (long long)got,
               (long long)want);
  }
  return bad;
}

/* Floating sums and means of finite values within a rounding bound; any
 * NaN, or infinities of both signs, give NaN. */
template <class T> static int check_float_sum(const char *name, double eps) {
  T x[MAXN];
  int bad = 0;
  for (int t = 0; t < TRIALS; t++) {
    int n = 1 + (int)(rnd() % MAXN);
    for (int i = 0; i < n; i++) x[i] = (T)((double)(int)(rnd() % 2001 - 1000) / 8.0);
    if (rnd() % 4 == 0) x[rnd() % n] = (T)(rnd() % 2 ? NAN : INFINITY);
    if (rnd() % 8 == 0) x[rnd() % n] = (T)-INFINITY;
    double ref = 0, mag = 0;
    for (int i = 0; i < n; i++) {
      ref += (double)x[i];
      mag += fabs((double)x[i]);
    }
    SumOp<T> sum;
    MeanOp<T> mean;
    double got = (double)sum.store(run(sum, x, n), n);
    double gotm = (double)mean.store(run(mean, x, n), n);
    bool same = isnan(ref)   ? isnan(got) && isnan(gotm)
                : isinf(ref) ? got == ref && gotm == ref
                             : fabs(got - ref) <= eps * mag && fabs(gotm - ref / n) <= eps * mag;
    if (!same && bad++ < 3)
      tap_diag("sum/mean %s trial %d: n %d, got %g and %g, want %g and %g", name, t, n, got, gotm,
               ref, ref / n);
  }
  return bad;
}

/* A sum to bool (sum(dtype=bool)) is whether its int64 sum is nonzero, as
 * cast converts it: true for any number of true elements, 256 included. */
static int check_bool_sum(void) {
  static b8 x[600];
  static const int counts[] = {0, 1, 2, 255, 256, 257, 512, 513, 600};
  int bad = 0;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    for (int i = 0; i < 600; i++) x[i].x = 0;
    for (int i = 0; i < counts[c]; i++) x[(i * 7) % 600].x = 1; /* 7 is prime to 600 */
    SumOp<b8> op;
    for (int t = 0; t < 8; t++) {
      b8 got = op.store(run(op, x, 600), 600);
      if (got.x != (counts[c] != 0) && bad++ < 3)
        tap_diag("sum to bool of %d true elements: got %d, want %d", counts[c], got.x,
                 counts[c] != 0);
    }
  }
  return bad;
}

static void sums_and_means(void) {
  is_int(check_bool_sum(), 0);
  is_int(check_int_sum<int32_t>("int32"), 0);
  is_int(check_int_sum<int64_t>("int64"), 0);
  is_int(check_float_sum<float>("float32", 1e-6), 0);
  is_int(check_float_sum<double>("float64", 1e-15), 0);
}

/* ------------------------------------------------------------------------ */
/* Elementwise functors against the CPU plugin                              */
/* ------------------------------------------------------------------------ */

static const int32_t dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16, BP_INT8,
                                 BP_INT16,   BP_INT32,   BP_INT64,   BP_UINT8,    BP_BOOL};
#define NDT (sizeof dtypes / sizeof dtypes[0])

/* Calls f.template operator()<T>() with T the storage type of dt. */
template <class F> static void with_type(int32_t dt, F &&f) {
  switch (dt) {
    case BP_FLOAT32: f((float *)0); break;
    case BP_FLOAT64: f((double *)0); break;
    case BP_FLOAT16: f((h16 *)0); break;
    case BP_BFLOAT16: f((bf16 *)0); break;
    case BP_INT8: f((int8_t *)0); break;
    case BP_INT16: f((int16_t *)0); break;
    case BP_INT32: f((int32_t *)0); break;
    case BP_INT64: f((int64_t *)0); break;
    case BP_UINT8: f((uint8_t *)0); break;
    default: f((b8 *)0); break;
  }
}

/* The edge values of a dtype, stored: the floating ones as cast converts a
 * float64 (so out-of-range values become infinities), integers at and
 * near their limits. */
static const double fpal[] = {NAN,  -INFINITY, INFINITY, -0.0, 0.0,  1.0,   -1.0,  0.5,   -0.5,
                              2.0,  -2.0,      3.75,     -3.75, 100., -100., 1e-3,  -1e-3, 65504.,
                              7e4,  -1e10,     1e10,     6.0,  -6.0,  0.1,  -0.1,  127.0, 3e38};
#define NFPAL (sizeof fpal / sizeof fpal[0])

template <class T> static int edge_values(T *out) {
  int n = 0;
  if constexpr (Tr<T>::is_float) {
    for (size_t i = 0; i < NFPAL; i++) out[n++] = Cv<T>::f(fpal[i]);
  } else if constexpr (std::is_same<T, b8>::value) {
    out[n++] = Cv<b8>::f((int64_t)0);
    out[n++] = Cv<b8>::f((int64_t)1);
  } else {
    const int64_t lo = Lim<T>::min, hi = Lim<T>::max;
    const int64_t v[] = {lo, lo + 1, -3, -2, -1, 0, 1, 2, 3, 5, 7, 31, 64, hi - 1, hi};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
      if (v[i] >= lo && v[i] <= hi) out[n++] = (T)v[i];
  }
  return n;
}

/* A stored value as a double, for comparisons and messages. */
template <class T> static double as_double(T x) { return (double)lv(x); }

/* Whether got matches the CPU's want for dtype T: within twice the op
 * set's tolerance for floating types, exactly otherwise. */
template <class T> static bool close(T got, T want) {
  double g = as_double(got), w = as_double(want);
  if (!Tr<T>::is_float) return g == w;
  if ((g != g) || (w != w)) return (g != g) && (w != w);
  if (g == w) return true;
  double rtol = 1.3e-6, atol = 1e-5;
  if (std::is_same<T, double>::value) rtol = atol = 1e-7;
  if (std::is_same<T, h16>::value) rtol = 1e-3;
  if (std::is_same<T, bf16>::value) rtol = 1.6e-2;
  return fabs(g - w) <= 2 * (atol + rtol * fabs(w));
}

static bp_plugin *cpu_plugin(void) {
  const char *top = getenv("top_builddir");
  char path[4096];
  snprintf(path, sizeof path, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  bp_plugin *p = NULL;
  if (bp_plugin_load(path, &p) != BP_OK) {
    tap_diag("loading %s: %s", path, bp_last_error());
    return NULL;
  }
  return p;
}

static bp_tensor *cpu_tensor(int32_t dt, int64_t n, const void *data) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(bp_device_make(BP_DEVICE_CPU, 0), dt, 1, &n, &t) != BP_OK) return NULL;
  memcpy(bp_tensor_get_view(t)->data, data, (size_t)n * bp_dtype_size(dt));
  return t;
}

/* op(ins..., scalars...) on the CPU plugin: the result, or NULL if the op
 * refuses these dtypes (the functors are then not asked). */
static bp_tensor *cpu_call(const char *op, bp_tensor *a, bp_tensor *b, const char *str,
                           int nfloat, double f, int32_t cast_to) {
  const bp_op *h = NULL;
  if (bp_op_find(op, &h) != BP_OK) return NULL;
  bp_value vals[6];
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 6, 0};
  bp_stack_push_tensor(&s, a);
  if (b) bp_stack_push_tensor(&s, b);
  if (str) bp_stack_push_str(&s, str);
  if (nfloat) bp_stack_push_float(&s, f);
  if (cast_to >= 0) bp_stack_push_scalar_type(&s, cast_to);
  bp_tensor *out = NULL;
  if (bp_call(h, &s) == BP_OK) bp_stack_get_tensor(&s, 0, &out);
  if (out) bp_tensor_retain(out);
  bp_stack_release(&s);
  return out;
}

/* Compares n results of functor-computed values with the CPU's. */
template <class O> static int compare(const char *what, const O *got, const bp_tensor *cpu,
                                      int64_t n, const double *a, const double *b) {
  const O *want = (const O *)bp_tensor_get_view(cpu)->data;
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (!close(got[i], want[i]) && bad++ < 3)
      tap_diag("%s: element %lld (%g%s%g): functor %.9g, CPU plugin %.9g", what, (long long)i,
               a[i], b ? ", " : "", b ? b[i] : 0.0, as_double(got[i]), as_double(want[i]));
  return bad;
}

enum { NOP = -1 };

struct UnCase {
  const char *name, *str;
  int op;
};
static const UnCase un_cases[] = {
    {"core::neg", NULL, U_NEG},         {"core::abs", NULL, U_ABS},
    {"core::relu", NULL, U_RELU},       {"core::exp", NULL, U_EXP},
    {"core::log", NULL, U_LOG},         {"core::sqrt", NULL, U_SQRT},
    {"core::rsqrt", NULL, U_RSQRT},     {"core::sigmoid", NULL, U_SIGMOID},
    {"core::tanh", NULL, U_TANH},       {"core::gelu", "none", U_GELU},
    {"core::gelu", "tanh", U_GELU_TANH}, {"core::sin", NULL, U_SIN},
    {"core::cos", NULL, U_COS},         {"core::erf", NULL, U_ERF},
    {"core::silu", NULL, U_SILU}};

template <int OP, class O> static O apply_un(O x) {
  if constexpr (Tr<O>::is_float || OP == U_NEG || OP == U_ABS || OP == U_RELU)
    return Un<OP, O>()(x);
  else
    return x; /* (not reached: integer results only for neg, abs and relu) */
}

template <class O> static O un_dispatch(int op, O x) {
  switch (op) {
    case U_NEG: return apply_un<U_NEG, O>(x);
    case U_ABS: return apply_un<U_ABS, O>(x);
    case U_RELU: return apply_un<U_RELU, O>(x);
    case U_EXP: return apply_un<U_EXP, O>(x);
    case U_LOG: return apply_un<U_LOG, O>(x);
    case U_SQRT: return apply_un<U_SQRT, O>(x);
    case U_RSQRT: return apply_un<U_RSQRT, O>(x);
    case U_SIGMOID: return apply_un<U_SIGMOID, O>(x);
    case U_TANH: return apply_un<U_TANH, O>(x);
    case U_GELU: return apply_un<U_GELU, O>(x);
    case U_SIN: return apply_un<U_SIN, O>(x);
    case U_COS: return apply_un<U_COS, O>(x);
    case U_ERF: return apply_un<U_ERF, O>(x);
    case U_SILU: return apply_un<U_SILU, O>(x);
    default: return apply_un<U_GELU_TANH, O>(x);
  }
}

static void unary_functors_match_cpu(void) {
  bp_plugin *p = cpu_plugin();
  ok(p != NULL);
  if (!p) return;
  int compared = 0, bad = 0;
  for (size_t c = 0; c < sizeof un_cases / sizeof un_cases[0]; c++)
    for (size_t d = 0; d < NDT; d++)
      with_type(dtypes[d], [&](auto *tp) {
        typedef std::remove_pointer_t<decltype(tp)> T;
        T in[64];
        int n = edge_values(in);
        double ad[64];
        for (int i = 0; i < n; i++) ad[i] = as_double(in[i]);
        bp_tensor *a = cpu_tensor(dtypes[d], n, in);
        bp_tensor *out = cpu_call(un_cases[c].name, a, NULL, un_cases[c].str, 0, 0, -1);
        if (out) {
          with_type(bp_tensor_get_view(out)->dtype, [&](auto *op) {
            typedef std::remove_pointer_t<decltype(op)> O;
            if constexpr (!std::is_same<O, b8>::value) {
              O got[64];
              for (int i = 0; i < n; i++)
                got[i] = un_dispatch<O>(un_cases[c].op, CastF<O, T>()(in[i]));
              char what[96];
              snprintf(what, sizeof what, "%s(%s%s%s)", un_cases[c].name,
                       bp_dtype_name(dtypes[d]), un_cases[c].str ? ", " : "",
                       un_cases[c].str ? un_cases[c].str : "");
              bad += compare(what, got, out, n, ad, NULL);
              compared++;
            }
          });
        }
        bp_tensor_release(out);
        bp_tensor_release(a);
      });
  tap_diag("%d op and dtype combinations compared", compared);
  cmp_ok(compared, ">=", 50);
  is_int(bad, 0);
  is_int(bp_plugin_unload(p), BP_OK);
}

struct BinCase {
  const char *name;
  int op;       /* B_*; add and sub with alpha 1 use op - 1 */
  int nfloat;   /* 1: a float argument (alpha or c) */
  double f;
  int bool_op;  /* for a bool result */
};
static const BinCase bin_cases[] = {
    {"core::add", B_ADD, 1, 1.0, B_OR},     {"core::add", B_ADD, 1, 3.0, B_OR},
    {"core::sub", B_SUB, 1, 1.0, NOP},      {"core::sub", B_SUB, 1, -2.0, NOP},
    {"core::mul", B_MUL, 0, 0, B_AND},      {"core::div", B_DIV, 0, 0, NOP},
    {"core::maximum", B_MAX, 0, 0, B_OR},   {"core::minimum", B_MIN, 0, 0, B_AND},
    {"core::pow", B_POW, 0, 0, NOP},        {"core::muladd", B_MULADD, 1, 0.5, NOP}};

template <int OP, class O> static O apply_bin(double alpha, O x, O y) {
  Bin<OP, O> f;
  if constexpr (std::is_same<O, b8>::value) {
    if constexpr (OP == B_OR || OP == B_AND) return f(x, y);
    return x;
  } else if constexpr (Tr<O>::is_float) {
    f.al = (decltype(f.al))alpha;
    return f(x, y);
  } else if constexpr (OP == B_DIV || OP == B_MULADD || OP == B_OR || OP == B_AND) {
    return x; /* (not reached: no integer result) */
  } else {
    f.al = (decltype(f.al))cu_sat<O>(alpha);
    return f(x, y);
  }
}

template <class O> static O bin_dispatch(int op, double alpha, O x, O y) {
  switch (op) {
    case B_ADD1: return apply_bin<B_ADD1, O>(alpha, x, y);
    case B_ADD: return apply_bin<B_ADD, O>(alpha, x, y);
    case B_SUB1: return apply_bin<B_SUB1, O>(alpha, x, y);
    case B_SUB: return apply_bin<B_SUB, O>(alpha, x, y);
    case B_MUL: return apply_bin<B_MUL, O>(alpha, x, y);
    case B_DIV: return apply_bin<B_DIV, O>(alpha, x, y);
    case B_MAX: return apply_bin<B_MAX, O>(alpha, x, y);
    case B_MIN: return apply_bin<B_MIN, O>(alpha, x, y);
    case B_POW: return apply_bin<B_POW, O>(alpha, x, y);
    case B_MULADD: return apply_bin<B_MULADD, O>(alpha, x, y);
    case B_OR: return apply_bin<B_OR, O>(alpha, x, y);
    default: return apply_bin<B_AND, O>(alpha, x, y);
  }
}

/* The operands of each element, for messages. */
static double bin_ad[64 * 64], bin_bd[64 * 64];

static void binary_functors_match_cpu(void) {
  bp_plugin *p = cpu_plugin();
  ok(p != NULL);
  if (!p) return;
  int compared = 0, bad = 0;
  for (size_t c = 0; c < sizeof bin_cases / sizeof bin_cases[0]; c++)
    for (size_t d = 0; d < NDT; d++)
      with_type(dtypes[d], [&](auto *tp) {
        typedef std::remove_pointer_t<decltype(tp)> T;
        T v[64], x[64 * 64], y[64 * 64];
        int m = edge_values(v), n = m * m;
        for (int i = 0; i < n; i++) {
          x[i] = v[i / m];
          y[i] = v[i % m];
          bin_ad[i] = as_double(x[i]);
          bin_bd[i] = as_double(y[i]);
        }
        bp_tensor *a = cpu_tensor(dtypes[d], n, x), *b = cpu_tensor(dtypes[d], n, y);
        const BinCase &bc = bin_cases[c];
        bp_tensor *out = cpu_call(bc.name, a, b, NULL, bc.nfloat, bc.f, -1);
        if (out) {
          int32_t od = bp_tensor_get_view(out)->dtype;
          with_type(od, [&](auto *op) {
            typedef std::remove_pointer_t<decltype(op)> O;
            static O got[64 * 64];
            int code = bc.op;
            if ((code == B_ADD || code == B_SUB) && bc.f == 1.0) code -= 1;
            if (od == BP_BOOL) code = bc.bool_op;
            for (int i = 0; i < n; i++)
              got[i] = bin_dispatch<O>(code, bc.f, CastF<O, T>()(x[i]), CastF<O, T>()(y[i]));
            char what[96];
            int k = snprintf(what, sizeof what, "%s(%s, %s", bc.name, bp_dtype_name(dtypes[d]),
                             bp_dtype_name(dtypes[d]));
            if (bc.nfloat)
              snprintf(what + k, sizeof what - (size_t)k, ", %g)", bc.f);
            else
              snprintf(what + k, sizeof what - (size_t)k, ")");
            bad += compare(what, got, out, n, bin_ad, bin_bd);
            compared++;
          });
        }
        bp_tensor_release(out);
        bp_tensor_release(a);
        bp_tensor_release(b);
      });
  tap_diag("%d op and dtype combinations compared", compared);
  cmp_ok(compared, ">=", 70);
  is_int(bad, 0);
  is_int(bp_plugin_unload(p), BP_OK);
}

/* The comparisons (op set 2) over every pair of edge values of each dtype,
 * against the CPU plugin's kernels: bit for bit. */
template <class T> static b8 cmp_dispatch(int op, T x, T y) {
  switch (op) {
    case C_EQ: return CmpF<C_EQ, T>()(x, y);
    case C_NE: return CmpF<C_NE, T>()(x, y);
    case C_LT: return CmpF<C_LT, T>()(x, y);
    case C_LE: return CmpF<C_LE, T>()(x, y);
    case C_GT: return CmpF<C_GT, T>()(x, y);
    default: return CmpF<C_GE, T>()(x, y);
  }
}

/* The comparisons' op names, in C_* order.  At file scope: a function's
 * static array that only a generic lambda reads is "set but not used" to
 * the host compiler behind nvcc (gcc 12). */
static const char *const cmp_names[] = {"core::eq", "core::ne", "core::lt",
                                        "core::le", "core::gt", "core::ge"};

static void compare_functors_match_cpu(void) {
  bp_plugin *p = cpu_plugin();
  ok(p != NULL);
  if (!p) return;
  int compared = 0, bad = 0;
  for (int c = 0; c < 6; c++)
    for (size_t d = 0; d < NDT; d++)
      with_type(dtypes[d], [&](auto *tp) {
        typedef std::remove_pointer_t<decltype(tp)> T;
        T v[64], x[64 * 64], y[64 * 64];
        int m = edge_values(v), n = m * m;
        for (int i = 0; i < n; i++) {
          x[i] = v[i / m];
          y[i] = v[i % m];
          bin_ad[i] = as_double(x[i]);
          bin_bd[i] = as_double(y[i]);
        }
        bp_tensor *a = cpu_tensor(dtypes[d], n, x), *b = cpu_tensor(dtypes[d], n, y);
        bp_tensor *out = cpu_call(cmp_names[c], a, b, NULL, 0, 0, -1);
        if (out && bp_tensor_get_view(out)->dtype == BP_BOOL) {
          static b8 got[64 * 64];
          for (int i = 0; i < n; i++) got[i] = cmp_dispatch<T>(c, x[i], y[i]);
          char what[96];
          snprintf(what, sizeof what, "%s(%s, %s)", cmp_names[c],
                   bp_dtype_name(dtypes[d]), bp_dtype_name(dtypes[d]));
          bad += compare(what, got, out, n, bin_ad, bin_bd);
          compared++;
        }
        bp_tensor_release(out);
        bp_tensor_release(a);
        bp_tensor_release(b);
      });
  tap_diag("%d comparison and dtype combinations compared", compared);
  is_int(compared, 6 * (int)NDT);
  is_int(bad, 0);
  is_int(bp_plugin_unload(p), BP_OK);
}

static void cast_functor_matches_cpu(void) {
  bp_plugin *p = cpu_plugin();
  ok(p != NULL);
  if (!p) return;
  int compared = 0, bad = 0;
  for (size_t s = 0; s < NDT; s++)
    for (size_t d = 0; d < NDT; d++)
      with_type(dtypes[s], [&](auto *sp) {
        typedef std::remove_pointer_t<decltype(sp)> S;
        S in[64];
        int n = edge_values(in);
        double ad[64];
        for (int i = 0; i < n; i++) ad[i] = as_double(in[i]);
        bp_tensor *a = cpu_tensor(dtypes[s], n, in);
        bp_tensor *out = cpu_call("core::cast", a, NULL, NULL, 0, 0, dtypes[d]);
        ok(out != NULL);
        if (out) {
          with_type(dtypes[d], [&](auto *dp) {
            typedef std::remove_pointer_t<decltype(dp)> D;
            D got[64];
            for (int i = 0; i < n; i++) got[i] = CastF<D, S>()(in[i]);
            char what[96];
            snprintf(what, sizeof what, "cast %s to %s", bp_dtype_name(dtypes[s]),
                     bp_dtype_name(dtypes[d]));
            bad += compare(what, got, out, n, ad, NULL);
            compared++;
          });
        }
        bp_tensor_release(out);
        bp_tensor_release(a);
      });
  is_int(compared, (int)(NDT * NDT));
  is_int(bad, 0);
  is_int(bp_plugin_unload(p), BP_OK);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(argmax_first_position),
      TAP_CASE(extremes_propagate_nan),
      TAP_CASE(sums_and_means),
      TAP_CASE(unary_functors_match_cpu),
      TAP_CASE(binary_functors_match_cpu), TAP_CASE(compare_functors_match_cpu),
      TAP_CASE(cast_functor_matches_cpu),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
