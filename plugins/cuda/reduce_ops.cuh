/*
 * plugins/cuda/reduce_ops.cuh - the reductions' functors, shared by the
 * kernels of reduce.cu and by tests/cuda/test-cuda-functors, which runs
 * them on the host (every member is __host__ __device__).
 *
 * A functor has an accumulator type A and
 *   init()          the empty accumulator;
 *   step(a, x, r)   a with the element x at reduced position r added;
 *   load(x, r)      an accumulator of that element alone;
 *   comb(a, b)      two accumulators combined;
 *   store(a, n)     the result of an accumulator of n elements.
 * The contract the kernels rely on: each accumulator is stepped through
 * its positions in increasing order, and accumulators are then combined
 * in any order (argmax breaks ties by position, so the first maximum wins
 * whatever the order).
 */
#ifndef BP_PLUGINS_CUDA_REDUCE_OPS_CUH
#define BP_PLUGINS_CUDA_REDUCE_OPS_CUH

#include <math.h>

#include <type_traits>

#include "kernels.cuh"

/* Accumulator types. */
template <class T> struct SumAcc {
  typedef uint64_t A;
  static CU_HD A ld(T x) { return (uint64_t)(int64_t)Tr<T>::ld(x); }
  static CU_HD T st(A a, int64_t) { return Tr<T>::st((typename Tr<T>::C)a); }
};
/* A sum to bool (sum(dtype=bool)) is whether the 64-bit sum is nonzero,
 * as cast converts an int64; not its low 8 bits, which are 0 for 256 true
 * elements. */
template <> struct SumAcc<b8> {
  typedef uint64_t A;
  static CU_HD A ld(b8 x) { return x.x != 0; }
  static CU_HD b8 st(A a, int64_t) {
    b8 r;
    r.x = (uint8_t)(a != 0);
    return r;
  }
};
template <> struct SumAcc<float> {
  typedef float A;
  static CU_HD A ld(float x) { return x; }
  static CU_HD float st(A a, int64_t) { return a; }
};
template <> struct SumAcc<double> {
  typedef double A;
  static CU_HD A ld(double x) { return x; }
  static CU_HD double st(A a, int64_t) { return a; }
};
template <> struct SumAcc<h16> {
  typedef float A;
  static CU_HD A ld(h16 x) { return Tr<h16>::ld(x); }
  static CU_HD h16 st(A a, int64_t) { return Tr<h16>::st(a); }
};
template <> struct SumAcc<bf16> {
  typedef float A;
  static CU_HD A ld(bf16 x) { return Tr<bf16>::ld(x); }
  static CU_HD bf16 st(A a, int64_t) { return Tr<bf16>::st(a); }
};

/* The reduction functors: A, init(), load(x, r), comb(a, b), store(a, n). */
/* step(a, x, r) is comb(a, load(x, r)), which an op may do faster. */
template <class T> struct SumOp {
  typedef typename SumAcc<T>::A A;
  CU_HD A step(A a, T x, int64_t) const { return a + SumAcc<T>::ld(x); }
  CU_HD A init() const { return (A)0; }
  CU_HD A load(T x, int64_t) const { return SumAcc<T>::ld(x); }
  CU_HD A comb(A a, A b) const { return a + b; }
  CU_HD T store(A a, int64_t) const { return SumAcc<T>::st(a, 0); }
};

template <class T> struct MeanOp {
  typedef typename SumAcc<T>::A A;
  CU_HD A step(A a, T x, int64_t) const { return a + SumAcc<T>::ld(x); }
  CU_HD A init() const { return (A)0; }
  CU_HD A load(T x, int64_t) const { return SumAcc<T>::ld(x); }
  CU_HD A comb(A a, A b) const { return a + b; }
  CU_HD T store(A a, int64_t n) const {
    return SumAcc<T>::st(a / (A)n, 0);
  }
};

template <class C> CU_HD C lowest() {
  if constexpr (std::is_floating_point<C>::value) return (C)-INFINITY;
  else if constexpr (std::is_same<C, uint8_t>::value) return 0;
  else return Lim<C>::min;
}
template <class C> CU_HD C highest() {
  if constexpr (std::is_floating_point<C>::value) return (C)INFINITY;
  else return Lim<C>::max;
}

template <class T, bool MAX> struct ExtOp {
  typedef typename Tr<T>::C A;
  CU_HD A init() const { return MAX ? lowest<A>() : highest<A>(); }
  CU_HD A load(T x, int64_t) const { return Tr<T>::ld(x); }
  CU_HD A comb(A a, A b) const {
    if (MAX) return (a > b || a != a) ? a : b;
    return (a < b || a != a) ? a : b;
  }
  CU_HD A step(A a, T x, int64_t) const { return comb(a, Tr<T>::ld(x)); }
  CU_HD T store(A a, int64_t) const { return Tr<T>::st(a); }
};

template <class C> struct ArgAcc {
  C v;
  int64_t i; /* -1: nothing yet */
};

/* argmax: the first index of the maximum; NaN counts as the maximum. */
template <class T> struct ArgOp {
  typedef ArgAcc<typename Tr<T>::C> A;
  CU_HD A init() const {
    A a;
    a.v = lowest<typename Tr<T>::C>();
    a.i = -1;
    return a;
  }
  CU_HD A load(T x, int64_t r) const {
    A a;
    a.v = Tr<T>::ld(x);
    a.i = r;
    return a;
  }
  CU_HD A comb(A a, A b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
    return a.i < b.i ? a : b;
  }
  /* Positions come in increasing order to one accumulator: only a
   * strictly larger value, or a first NaN, replaces the best so far.
   * The empty accumulator from init() holds the lowest value, which
   * nothing is strictly larger than; !(v <= best) is "larger, or v is
   * NaN", and a NaN best is never replaced.  So an accumulator that sees
   * only the lowest value stays empty (i = -1), which comb treats as
   * nothing and store as position 0: the same first index, since then
   * every position holds that value (one comparison an element fewer). */
  CU_HD A step(A a, T x, int64_t r) const {
    typename Tr<T>::C v = Tr<T>::ld(x);
    if (!(v <= a.v) && a.v == a.v) {
      a.v = v;
      a.i = r;
    }
    return a;
  }
  /* (stored by the launcher as int64) */
  CU_HD int64_t store(A a, int64_t) const { return a.i < 0 ? 0 : a.i; }
};

/* Out type of a functor's store. */
template <class Op, class T> struct OutOf {
  typedef T type;
};
template <class T> struct OutOf<ArgOp<T>, T> {
  typedef int64_t type;
};

#endif /* BP_PLUGINS_CUDA_REDUCE_OPS_CUH */
