/*
 * plugins/cpu/vmath.h - float32 exp and tanh that vectorise.
 *
 * libm's expf is a call per element, so a loop over it stays scalar.  The
 * functions here are branch-free straight-line code (the range checks are
 * selects, the clamps minimum and maximum), so GCC vectorises the loops that
 * call them under CPU_CLONES, with FMA where CONTRACT allows it.  Used by
 * elementwise.c (exp, sigmoid, tanh, gelu's tanh form, for float32, float16
 * and bfloat16) and nn.c (softmax, log_softmax).
 */
#ifndef BACKPLANE_CPU_VMATH_H
#define BACKPLANE_CPU_VMATH_H

#include <stdint.h>

#include <backplane/plugin_aux.h>

/* The ISO C mode the project builds in rounds a*b + c twice; the loops
 * that evaluate a polynomial are a third faster with FMA, which is no less
 * accurate, and GCC can allow it per function. */
#if defined(__GNUC__) && !defined(__clang__)
#define CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define CONTRACT
#endif

/* Inlined into each loop (and each clone of it), or the loop would call
 * them per element and stay scalar; GCC left vm_tanh_f32 out of line. */
#if defined(__GNUC__)
#define VM_INLINE static inline __attribute__((always_inline))
#else
#define VM_INLINE static inline
#endif

/* A float's bits and back: bp_aux_bits_to_f32 and bp_aux_f32_to_bits of
 * <backplane/plugin_aux.h>, memcpy that compiles to a register move. */
#define vm_bits_to_f32 bp_aux_bits_to_f32
#define vm_f32_to_bits bp_aux_f32_to_bits

/* c ? a : b, through a mask: GCC leaves a loop with a float ?: scalar
 * ("control flow in loop"), but vectorises this as a blend. */
VM_INLINE float vm_select(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)c;
  return vm_bits_to_f32((vm_f32_to_bits(a) & m) | (vm_f32_to_bits(b) & ~m));
}

/*
 * e^r for |r| <= ln2/2, within about 1 ulp: Cephes' expf polynomial.
 * x = n ln2 + r: n = round(x / ln2) comes back in *n as n + 256 (so that it
 * is unsigned for every n the callers use), r by Cody and Waite's two-part
 * ln2, exact with FMA and nearly so without.
 */
VM_INLINE float vm_exp_core(float x, uint32_t *nb) {
  const float shifter = 0x1.8p23f; /* adding it rounds to an integer */
  float t = x * 1.44269504088896341f + shifter;
  float n = t - shifter;
  *nb = vm_f32_to_bits(t) - vm_f32_to_bits(shifter) + 256u;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

/*
 * e^x for x <= 0 only (softmax's x - max), the cheaper form: one scale
 * 2^n, and results that would be subnormal (x < -87.33654) are 0.  -inf
 * gives 0 and NaN stays NaN.
 */
VM_INLINE float vm_exp_neg_f32(float x) {
  uint32_t nb;
  float y = vm_exp_core(x, &nb) * vm_bits_to_f32((nb - 256u + 127u) << 23);
  /* 0 below the range, through a mask: with a branch, GCC computes y only
   * where it is kept, and the AVX2 loops stayed scalar */
  uint32_t keep = 0u - (uint32_t)!(x < -87.33654f);
  return vm_bits_to_f32(vm_f32_to_bits(y) & keep);
}

/*
 * e^x for every float x, within 1.03 ulp (checked against double exp for
 * all 2^32 inputs: 1.023 ulp with FMA, 0.992 without).  x is clamped to
 * [-104, 89] by selects that keep NaN, and the scale 2^n is applied as two
 * factors 2^n1 2^n2 (n1 = floor(n/2), both normal for n in [-150, 128]),
 * so that:
 *   - above 88.7228 (n = 128) the second product overflows to +inf, as
 *     does +inf (clamped to 89);
 *   - results below 2^-126 are correctly rounded subnormals, rounded once
 *     by the second product; below about -103.97 they are 0, as is -inf;
 *   - NaN goes through the arithmetic and stays NaN.
 */
VM_INLINE float vm_exp_f32(float x) {
  x = vm_select(x > 89.0f, 89.0f, x); /* NaN compares false and stays */
  x = vm_select(x < -104.0f, -104.0f, x);
  uint32_t nb;
  float p = vm_exp_core(x, &nb);
  uint32_t n1b = nb >> 1; /* floor(n/2) + 128 */
  float s1 = vm_bits_to_f32((n1b - 1u) << 23);      /* 2^n1: n1 + 127 = n1b - 1 */
  float s2 = vm_bits_to_f32((nb - n1b - 1u) << 23); /* 2^(n - n1) */
  return p * s1 * s2;
}

/*
 * tanh x, within 1.33 ulp (all 2^32 inputs, with FMA or without): Cephes' tanhf, with both of
 * its branches computed on |x| and one selected, and x's sign put back on
 * the result (so that -0 stays -0).  For |x| < 0.625 an odd polynomial,
 * |x| + |x|^3 P(x^2); above, 1 - 2 / (e^(2|x|) + 1), with |x| clamped to
 * 9.1, where the result already rounds to 1: e^(2|x|) is then at most
 * e^18.2, so one scale 2^n does, with no range checks.  NaN goes through
 * the second branch and stays NaN.
 */
VM_INLINE float vm_tanh_f32(float x) {
  uint32_t sign = vm_f32_to_bits(x) & 0x80000000u;
  float ax = vm_bits_to_f32(vm_f32_to_bits(x) & 0x7fffffffu);
  float z = ax * ax;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = p * z * ax + ax;
  float c = vm_select(ax > 9.1f, 9.1f, ax); /* NaN compares false and stays */
  uint32_t nb;
  float e = vm_exp_core(2.0f * c, &nb) * vm_bits_to_f32((nb - 256u + 127u) << 23);
  float big = 1.0f - 2.0f / (e + 1.0f);
  return vm_bits_to_f32(vm_f32_to_bits(vm_select(ax < 0.625f, small, big)) | sign);
}

#endif
