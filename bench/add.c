/*
 * bench/add.c - core::add through bp_call from C: the baseline against
 * which bench/python.py measures the Python package and the torch bridge.
 *
 *   add PLUGIN.so N [REPEATS]
 *
 * Adds two float32 tensors of N elements (values in [-1, 1)) with
 * core::add.  Each call allocates its result, which is released right
 * after it inside the timed loop, as a Python caller's result is when it
 * is dropped.  One timing runs a batch of calls, doubled until it lasts
 * 5 ms (one call for large N), as bench/python.py times Python's calls;
 * the report is the best of REPEATS timings (default 20) per call, and
 * GB/s counting the bytes read and written (3 N floats).  Its last line is
 * for programs to read:
 *
 *   add N=16777216 calls=1 repeats=20 best_ns=5210000.0 gbps=38.64
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <backplane/host.h>

#include "../tools/clock.h"

/* The shortest timing, in seconds. */
#define BATCH_S 0.005

static void die(const char *what) {
  fprintf(stderr, "add: %s: %s\n", what, bp_last_error());
  exit(1);
}

static bp_tensor *new_f32(int64_t n, unsigned seed) {
  bp_tensor *t;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t)) die("bp_tensor_empty");
  float *p = bp_tensor_get_view(t)->data;
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)(x >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
  }
  return t;
}

/* Seconds for `calls` calls of op(a, b), each result released. */
static double run(const bp_op *op, bp_tensor *a, bp_tensor *b, long calls) {
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  double t0 = now();
  for (long i = 0; i < calls; i++) {
    s.top = 0;
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    if (bp_call(op, &s) != BP_OK) die("core::add");
    bp_stack_release(&s);
  }
  return now() - t0;
}

static long parse_count(const char *s, const char *what, long min) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < min) {
    fprintf(stderr, "add: %s must be an integer >= %ld, got '%s'\n", what, min, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: add PLUGIN.so N [REPEATS]\n");
    return 2;
  }
  int64_t n = parse_count(argv[2], "N", 1);
  long repeats = argc > 3 ? parse_count(argv[3], "REPEATS", 1) : 20;
  if (bp_plugin_load(argv[1], NULL) != BP_OK) die(argv[1]);
  const bp_op *op;
  if (bp_op_find("core::add", &op) != BP_OK) die("core::add");
  bp_tensor *a = new_f32(n, 1), *b = new_f32(n, 2);

  /* One checked call, which also warms the allocator's cache. */
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  if (bp_call(op, &s) != BP_OK) die("core::add");
  const float *pa = bp_tensor_get_view(a)->data, *pb = bp_tensor_get_view(b)->data;
  const float *pr = bp_tensor_get_view(s.values[0].u.tensor)->data;
  if (pr[0] != pa[0] + pb[0] || pr[n - 1] != pa[n - 1] + pb[n - 1]) {
    fprintf(stderr, "add: core::add gave a wrong sum\n");
    return 1;
  }
  bp_stack_release(&s);

  long calls = 1;
  while (run(op, a, b, calls) < BATCH_S && calls < (1L << 30)) calls *= 2;
  double best = 1e30;
  for (long r = 0; r < repeats; r++) {
    double dt = run(op, a, b, calls) / (double)calls;
    if (dt < best) best = dt;
  }
  double gbps = 3.0 * (double)n * sizeof(float) / best * 1e-9;
  printf("core::add, float32, %lld elements: %.1f ns per call, %.2f GB/s "
         "(best of %ld timings of %ld call%s)\n",
         (long long)n, best * 1e9, gbps, repeats, calls, calls == 1 ? "" : "s");
  printf("add N=%lld calls=%ld repeats=%ld best_ns=%.1f gbps=%.2f\n", (long long)n, calls,
         repeats, best * 1e9, gbps);
  bp_tensor_release(a);
  bp_tensor_release(b);
  return 0;
}
