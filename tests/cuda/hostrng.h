/*
 * tests/cuda/hostrng.h - the host tests' random numbers: a fixed-seed
 * xorshift, so that every run draws the same trials.
 */
#ifndef BP_TESTS_CUDA_HOSTRNG_H
#define BP_TESTS_CUDA_HOSTRNG_H

#include <stdint.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

#endif /* BP_TESTS_CUDA_HOSTRNG_H */
