/*
 * tools/clock.h - the project's one clock: seconds on CLOCK_MONOTONIC, for
 * the tools, the certifier, the benchmarks and the tests.  (A file that
 * includes it defines _POSIX_C_SOURCE or _GNU_SOURCE first.)
 */
#ifndef BP_TOOLS_CLOCK_H
#define BP_TOOLS_CLOCK_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif /* BP_TOOLS_CLOCK_H */
