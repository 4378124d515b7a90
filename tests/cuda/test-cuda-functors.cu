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
 *   sum         integers wrap exactly; floating within a rounding bound;
 *   mean        the sum divided by the count.
 * Inputs are drawn from palettes of edge values (NaN, infinities, signed
 * zeros, the integer limits) so that ties and NaN orders are common.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "reduce_ops.cuh"

extern "C" {
#include "tap.h"
}

#define TRIALS 3000
#define MAXN 48

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

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

static void sums_and_means(void) {
  is_int(check_int_sum<int32_t>("int32"), 0);
  is_int(check_int_sum<int64_t>("int64"), 0);
  is_int(check_float_sum<float>("float32", 1e-6), 0);
  is_int(check_float_sum<double>("float64", 1e-15), 0);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(argmax_first_position),
      TAP_CASE(extremes_propagate_nan),
      TAP_CASE(sums_and_means),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
