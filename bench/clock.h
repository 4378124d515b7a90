/*
 * bench/clock.h - the benchmarks' one clock: seconds on CLOCK_MONOTONIC.
 * (Each benchmark defines _POSIX_C_SOURCE before including it.)
 */
#ifndef BP_BENCH_CLOCK_H
#define BP_BENCH_CLOCK_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif /* BP_BENCH_CLOCK_H */
