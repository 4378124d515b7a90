/*
 * plugins/cuda/elementwise_ops.cuh - the elementwise ops' functors, shared
 * by the kernels of elementwise.cu, binary.cu, unary.cu and compare.cu and
 * by tests/cuda/test-cuda-functors, which runs them on the host against
 * the CPU plugin (every member is __host__ __device__).
 *
 * Each functor maps storage values to a storage value in the op's compute
 * type (Tr<T>::C): Bin<OP, T> the binary ops (al: add and sub's alpha,
 * muladd's scalar), Un<OP, T> the unary ops, CastF<D, S> core::cast,
 * CopyF and WhereF.  Integers wrap in Tr<T>::U.
 */
#ifndef BP_PLUGINS_CUDA_ELEMENTWISE_OPS_CUH
#define BP_PLUGINS_CUDA_ELEMENTWISE_OPS_CUH

#include <math.h>

#include "kernels.cuh"

/* Binary op codes: B_ADD and B_SUB scale the second operand by al; B_ADD1
 * and B_SUB1 are their alpha = 1 forms. */
enum {
  B_ADD1, B_ADD, B_SUB1, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW, B_MULADD, B_OR, B_AND
};

CU_HD float cu_pow(float a, float b) { return powf(a, b); }
CU_HD double cu_pow(double a, double b) { return pow(a, b); }

/* Integer pow: wrapping repeated multiplication by squaring; a negative
 * exponent gives 0 except for bases 1 and -1. */
CU_HD int64_t cu_ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)base;
  for (uint64_t k = (uint64_t)e; k; k >>= 1) {
    if (k & 1u) r *= b;
    b *= b;
  }
  return (int64_t)r;
}

/* Floating binary ops, in the compute type C. */
template <int OP, class T, bool F = Tr<T>::is_float> struct Bin {
  typedef typename Tr<T>::C C;
  C al;
  CU_HD T operator()(T x, T y) const {
    const C a = Tr<T>::ld(x), b = Tr<T>::ld(y);
    C r;
    if (OP == B_ADD1) r = a + b;
    else if (OP == B_ADD) r = a + al * b;
    else if (OP == B_SUB1) r = a - b;
    else if (OP == B_SUB) r = a - al * b;
    else if (OP == B_MUL) r = a * b;
    else if (OP == B_DIV) r = a / b;
    else if (OP == B_MAX) r = (a > b || a != a) ? a : b;
    else if (OP == B_MIN) r = (a < b || a != a) ? a : b;
    else if (OP == B_POW) r = cu_pow(a, b);
    else r = a * b + al; /* B_MULADD */
    return Tr<T>::st(r);
  }
};

/* Integer (and bool) binary ops, wrapping in the unsigned type U. */
template <int OP, class T> struct Bin<OP, T, false> {
  typedef typename Tr<T>::C C;
  typedef typename Tr<T>::U U;
  U al;
  CU_HD T operator()(T x, T y) const {
    const C a = Tr<T>::ld(x), b = Tr<T>::ld(y);
    C r;
    if (OP == B_ADD1) r = (C)((U)a + (U)b);
    else if (OP == B_ADD) r = (C)((U)a + al * (U)b);
    else if (OP == B_SUB1) r = (C)((U)a - (U)b);
    else if (OP == B_SUB) r = (C)((U)a - al * (U)b);
    else if (OP == B_MUL) r = (C)((U)a * (U)b);
    else if (OP == B_MAX) r = a > b ? a : b;
    else if (OP == B_MIN) r = a < b ? a : b;
    else if (OP == B_POW) r = (C)cu_ipow((int64_t)a, (int64_t)b);
    else if (OP == B_OR) r = (C)((a != 0) | (b != 0));
    else r = (C)((a != 0) & (b != 0)); /* B_AND */
    return Tr<T>::st(r);
  }
};

enum {
  U_NEG, U_ABS, U_RELU, U_SQRT, U_RSQRT, U_EXP, U_LOG, U_SIGMOID, U_TANH, U_GELU, U_GELU_TANH,
  /* op set 2 */
  U_SIN, U_COS, U_ERF, U_SILU
};

#define SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define SQRT_1_2 0.70710678118654752440084436210485

CU_HD float m_sqrt(float a) { return sqrtf(a); }
CU_HD double m_sqrt(double a) { return sqrt(a); }
CU_HD float m_exp(float a) { return expf(a); }
CU_HD double m_exp(double a) { return exp(a); }
CU_HD float m_log(float a) { return logf(a); }
CU_HD double m_log(double a) { return log(a); }
CU_HD float m_tanh(float a) { return tanhf(a); }
CU_HD double m_tanh(double a) { return tanh(a); }
/* gelu "none".  float: x/2 (1 + erf(x/sqrt2)), as written in the op set
 * (and as PyTorch's CUDA kernel computes it).  erff takes about half the
 * instructions of erfcf, with which the float32 kernel was close to
 * compute-bound on an H100 (90 PTX instructions an element against 47).
 * For negative x the sum cancels, so the relative error grows there, but
 * the absolute error stays under 1e-6 for every x (4.5e-7 over [-12, 12]
 * with a float erf within 1 ulp; CUDA's is within 2), a tenth of float32's
 * atol of 1e-5.  double keeps x/2 erfc(-x/sqrt2), without the cancellation,
 * as the CPU plugin computes every dtype. */
CU_HD float m_gelu(float a) {
  return 0.5f * a * (1.0f + erff(a * (float)SQRT_1_2));
}
CU_HD double m_gelu(double a) { return 0.5 * a * erfc(-a * SQRT_1_2); }
CU_HD float m_sin(float a) { return sinf(a); }
CU_HD double m_sin(double a) { return sin(a); }
CU_HD float m_cos(float a) { return cosf(a); }
CU_HD double m_cos(double a) { return cos(a); }
CU_HD float m_erf(float a) { return erff(a); }
CU_HD double m_erf(double a) { return erf(a); }
CU_HD float m_fabs(float a) { return fabsf(a); }
CU_HD double m_fabs(double a) { return fabs(a); }

template <int OP, class T, bool F = Tr<T>::is_float> struct Un {
  typedef typename Tr<T>::C C;
  CU_HD T operator()(T x) const {
    const C a = Tr<T>::ld(x);
    C r;
    if (OP == U_NEG) r = -a;
    else if (OP == U_ABS) r = m_fabs(a);
    else if (OP == U_RELU) r = !(a <= (C)0) ? a : (C)0;
    else if (OP == U_SQRT) r = m_sqrt(a);
    else if (OP == U_RSQRT) r = (C)1 / m_sqrt(a);
    else if (OP == U_EXP) r = m_exp(a);
    else if (OP == U_LOG) r = m_log(a);
    else if (OP == U_SIGMOID) r = (C)1 / ((C)1 + m_exp(-a));
    else if (OP == U_TANH) r = m_tanh(a);
    else if (OP == U_GELU) r = m_gelu(a);
    else if (OP == U_SIN) r = m_sin(a);
    else if (OP == U_COS) r = m_cos(a);
    else if (OP == U_ERF) r = m_erf(a);
    else if (OP == U_SILU) /* as the CPU plugin: x e^x in double below -80 */
      r = a >= (C)-80 ? a / ((C)1 + m_exp(-a)) : (C)((double)a * m_exp((double)a));
    else /* U_GELU_TANH */
      r = a / ((C)1 + m_exp((C)-2 * (C)SQRT_2_OVER_PI * (a + (C)0.044715 * a * a * a)));
    return Tr<T>::st(r);
  }
};

template <int OP, class T> struct Un<OP, T, false> {
  typedef typename Tr<T>::U U;
  CU_HD T operator()(T a) const {
    const bool is_signed = (T)-1 < (T)0;
    if (OP == U_NEG) return (T)((U)0 - (U)a);
    if (OP == U_ABS) return is_signed && a < 0 ? (T)((U)0 - (U)a) : a;
    return a > 0 ? a : (T)0; /* U_RELU */
  }
};

template <class D, class S> struct CastF {
  CU_HD D operator()(S x) const { return Cv<D>::f(lv(x)); }
};

template <class T> struct CopyF {
  CU_HD T operator()(T x) const { return x; }
};

template <class T> struct WhereF {
  CU_HD T operator()(b8 c, T x, T y) const { return c.x ? x : y; }
};

/* Comparisons (op set 2): bool of two operands of one dtype T, compared
 * in the compute type (exact for float16 and bfloat16 in float; NaN is
 * unequal to everything and never ordered, as IEEE says). */
enum { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE };

template <int OP, class T> struct CmpF {
  CU_HD b8 operator()(T x, T y) const {
    const typename Tr<T>::C a = Tr<T>::ld(x), b = Tr<T>::ld(y);
    bool r;
    if (OP == C_EQ) r = a == b;
    else if (OP == C_NE) r = a != b;
    else if (OP == C_LT) r = a < b;
    else if (OP == C_LE) r = a <= b;
    else if (OP == C_GT) r = a > b;
    else r = a >= b;
    b8 o;
    o.x = (uint8_t)r;
    return o;
  }
};

#endif /* BP_PLUGINS_CUDA_ELEMENTWISE_OPS_CUH */
