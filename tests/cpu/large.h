/*
 * tests/cpu/large.h - trials on tensors past the CPU plugin's parallel
 * grain (32768 elements), which its thread pool splits into chunks.
 */
#ifndef BP_TESTS_CPU_LARGE_H
#define BP_TESTS_CPU_LARGE_H

#include <stddef.h>
#include <stdint.h>

/* Random trials of every op family at 33 000 to 90 000 elements, for the
 * ndt dtypes in dts (trials.h, with set_large_shapes() on). */
void large_random(const int32_t *dts, size_t ndt, uint64_t base);

/* Targeted large cases: ties and NaN across the pool's chunks, sums of
 * every dtype over each dim of a transposed matrix, and matmul and
 * layer_norm with large results. */
void large_targeted(uint64_t base);

/* A whole case: both of the above, for the dtypes in dts, with
 * BP_CPU_THREADS set to `threads` (NULL: the pool's default size), which
 * the plugin reads when it loads (each case is a fresh process); the base
 * seeds of the targeted and of the random trials. */
void large_tensors_with(const char *threads, const int32_t *dts, size_t ndt, uint64_t targeted,
                        uint64_t random);

#endif /* BP_TESTS_CPU_LARGE_H */
