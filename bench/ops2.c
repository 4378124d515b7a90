/*
 * bench/ops2.c - the ops of op set 2 on the CPU plugin, against the
 * machine's triad measured in the same run.
 *
 *   ops2 [PLUGIN.so]
 *
 * Every figure is the median of REPS calls through bp_call, the result
 * allocated by the call.  Rows in GB/s count the bytes read and written,
 * and are given as a fraction of the triad a[i] = b[i] * c[i] + d[i] over
 * 16M float32 elements on as many threads as the plugin uses
 * (BP_CPU_THREADS, else the online CPUs).  Kernel rows are the plugin's
 * kernels; composite rows are the host's composites over them
 * (docs/op-set.md, "Host composites").  Then single calls that models make
 * (an 8-row embedding lookup, causal attention, ResNet-18's first
 * convolution), in milliseconds.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#define N (16 * 1024 * 1024)
#define REPS 7

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what) {
  fprintf(stderr, "ops2: %s: %s\n", what, bp_last_error());
  exit(1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* ---- the triad ---------------------------------------------------------- */

typedef struct part {
  float *a;
  const float *b, *c, *d;
  int64_t lo, hi;
} part;

static void *triad_part(void *arg) {
  part *p = arg;
  for (int64_t i = p->lo; i < p->hi; i++) p->a[i] = p->b[i] * p->c[i] + p->d[i];
  return NULL;
}

static double triad(int nthreads) {
  float *a = malloc(4 * (size_t)N), *b = malloc(4 * (size_t)N), *c = malloc(4 * (size_t)N),
        *d = malloc(4 * (size_t)N);
  if (!a || !b || !c || !d) exit(1);
  for (int64_t i = 0; i < N; i++) a[i] = 0, b[i] = 1, c[i] = 2, d[i] = 3;
  double t[REPS];
  part parts[64];
  pthread_t th[64];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    for (int k = 0; k < nthreads; k++) {
      parts[k] = (part){a, b, c, d, (int64_t)N * k / nthreads, (int64_t)N * (k + 1) / nthreads};
      pthread_create(&th[k], NULL, triad_part, &parts[k]);
    }
    for (int k = 0; k < nthreads; k++) pthread_join(th[k], NULL);
    t[r] = now() - t0;
  }
  free(a), free(b), free(c), free(d);
  return 16.0 * N / median(t, REPS) * 1e-9;
}

/* ---- calls ---------------------------------------------------------------- */

/* Median seconds of op on the stack that fill() pushes. */
static double time_op(const char *name, void (*fill)(bp_stack *), int reps) {
  const bp_op *op;
  if (bp_op_find(name, &op)) die(name);
  bp_value slots[12];
  bp_stack s = BP_STACK_INIT(slots, 12);
  double t[128];
  if (reps > 128) reps = 128;
  for (int r = 0; r < reps; r++) {
    s.top = 0;
    fill(&s);
    double t0 = now();
    if (bp_call(op, &s)) die(name);
    t[r] = now() - t0;
    bp_stack_release(&s);
  }
  return median(t, reps);
}

static bp_tensor *filled(int32_t dt, int32_t ndim, const int64_t *sizes, uint32_t seed,
                         int64_t modulo) {
  bp_tensor *t;
  if (bp_tensor_empty(BP_CPU, dt, ndim, sizes, &t)) die("bp_tensor_empty");
  const bp_tensor_view *v = bp_tensor_get_view(t);
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < v->numel; i++) {
    x = x * 1664525u + 1013904223u;
    if (dt == BP_FLOAT32) ((float *)v->data)[i] = (float)(x >> 8) / 8388608.0f - 1.0f;
    else if (dt == BP_INT64) ((int64_t *)v->data)[i] = (int64_t)(x >> 4) % modulo;
    else ((uint8_t *)v->data)[i] = (uint8_t)(x >> 31);
  }
  return t;
}

static bp_tensor *x, *y, *m, *mask, *rows, *perm, *gidx, *half1, *half2, *table, *eight, *q,
    *k, *v, *img, *w7;
static double triad_gbs;

static void f_eq(bp_stack *s) { bp_stack_push_tensor(s, x), bp_stack_push_tensor(s, y); }
static void f_lt(bp_stack *s) { bp_stack_push_tensor(s, x), bp_stack_push_float(s, 0.5); }
static void f_sel(bp_stack *s) {
  bp_stack_push_tensor(s, rows), bp_stack_push_int(s, 0), bp_stack_push_tensor(s, perm);
}
static void f_gather(bp_stack *s) {
  bp_stack_push_tensor(s, m), bp_stack_push_int(s, 1), bp_stack_push_tensor(s, gidx);
}
static void f_cum1(bp_stack *s) { bp_stack_push_tensor(s, m), bp_stack_push_int(s, 1); }
static void f_cum0(bp_stack *s) { bp_stack_push_tensor(s, m), bp_stack_push_int(s, 0); }
static void f_cat(bp_stack *s) {
  static bp_tensor *l[2];
  l[0] = half1, l[1] = half2;
  bp_stack_push_tensor_list(s, l, 2);
}
static void f_fill(bp_stack *s) {
  bp_stack_push_tensor(s, x), bp_stack_push_tensor(s, mask), bp_stack_push_float(s, 0.0);
}
static void f_emb(bp_stack *s) { bp_stack_push_tensor(s, table), bp_stack_push_tensor(s, eight); }
static void f_sel8(bp_stack *s) {
  bp_stack_push_tensor(s, table), bp_stack_push_int(s, 0), bp_stack_push_tensor(s, eight);
}
static void f_sdpa(bp_stack *s) {
  bp_stack_push_tensor(s, q), bp_stack_push_tensor(s, k), bp_stack_push_tensor(s, v);
  bp_stack_push_none(s), bp_stack_push_float(s, 0.0), bp_stack_push_bool(s, true);
}
static void f_conv(bp_stack *s) {
  static const int64_t two[2] = {2, 2}, three[2] = {3, 3};
  bp_stack_push_tensor(s, img), bp_stack_push_tensor(s, w7), bp_stack_push_none(s);
  bp_stack_push_int_list(s, two, 2);
  bp_stack_push_int_list(s, three, 2);
}

static void row(const char *what, const char *how, double t, double bytes) {
  double gbs = bytes / t * 1e-9;
  printf("  %-34s %-9s %8.2f ms %7.1f GB/s %6.2f\n", what, how, t * 1e3, gbs, gbs / triad_gbs);
}

int main(int argc, char **argv) {
  if (argc > 1 && bp_plugin_load(argv[1], NULL)) die(argv[1]);
  if (argc <= 1 && bp_plugin_discover(NULL)) die("discover");
  const char *env = getenv("BP_CPU_THREADS");
  int threads = env && atoi(env) > 0 ? atoi(env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads > 64) threads = 64;
  double t1 = triad(1);
  triad_gbs = triad(threads);
  printf("triad, 16M float32: %.1f GB/s on 1 thread, %.1f GB/s on %d (the baseline)\n", t1,
         triad_gbs, threads);
  printf("  %-34s %-9s %11s %12s %6s\n", "", "", "median", "", "x triad");

  int64_t n = N, sq[2] = {4096, 4096}, h = N / 2, rs[2] = {N / 64, 64}, np = N / 64;
  x = filled(BP_FLOAT32, 1, &n, 1, 0);
  y = filled(BP_FLOAT32, 1, &n, 2, 0);
  mask = filled(BP_BOOL, 1, &n, 3, 0);
  m = filled(BP_FLOAT32, 2, sq, 4, 0);
  rows = filled(BP_FLOAT32, 2, rs, 5, 0);
  perm = filled(BP_INT64, 1, &np, 6, N / 64);
  gidx = filled(BP_INT64, 2, sq, 7, 4096);
  half1 = filled(BP_FLOAT32, 1, &h, 8, 0);
  half2 = filled(BP_FLOAT32, 1, &h, 9, 0);
  double fb = 4.0 * N;
  row("eq(x, y) -> bool", "kernel", time_op("core::eq", f_eq, REPS), 2 * fb + N);
  row("lt.Scalar(x, 0.5)", "composite", time_op("core::lt.Scalar", f_lt, REPS), fb + N);
  row("index_select [256K, 64] rows", "kernel", time_op("core::index_select", f_sel, REPS),
      2 * fb + 8.0 * N / 64);
  row("gather [4096, 4096] dim 1", "kernel", time_op("core::gather", f_gather, REPS),
      2 * fb + 8.0 * N);
  row("cumsum [4096, 4096] dim 1", "kernel", time_op("core::cumsum", f_cum1, REPS), 2 * fb);
  row("cumsum [4096, 4096] dim 0", "kernel", time_op("core::cumsum", f_cum0, REPS), 2 * fb);
  row("cat([8M, 8M])", "composite", time_op("core::cat", f_cat, REPS), 2 * fb);
  row("masked_fill(x, mask, 0)", "composite", time_op("core::masked_fill", f_fill, REPS),
      2 * fb + N);

  int64_t ts[2] = {50257, 768}, e8 = 8, qs[3] = {12, 1024, 64}, is[4] = {1, 3, 224, 224},
          ws[4] = {64, 3, 7, 7};
  table = filled(BP_FLOAT32, 2, ts, 10, 0);
  eight = filled(BP_INT64, 1, &e8, 11, 50257);
  q = filled(BP_FLOAT32, 3, qs, 12, 0);
  k = filled(BP_FLOAT32, 3, qs, 13, 0);
  v = filled(BP_FLOAT32, 3, qs, 14, 0);
  img = filled(BP_FLOAT32, 4, is, 15, 0);
  w7 = filled(BP_FLOAT32, 4, ws, 16, 0);
  printf("single calls (median of %d)\n", 101);
  printf("  %-44s %9.2f us\n", "embedding: 8 rows of a [50257, 768] table",
         time_op("core::embedding", f_emb, 101) * 1e6);
  printf("  %-44s %9.2f us\n", "index_select: the same 8 rows",
         time_op("core::index_select", f_sel8, 101) * 1e6);
  printf("  %-44s %9.2f ms\n", "attention, causal, 12 heads, L 1024, d 64",
         time_op("core::scaled_dot_product_attention", f_sdpa, 11) * 1e3);
  printf("  %-44s %9.2f ms\n", "conv2d [1, 3, 224, 224] * [64, 3, 7, 7] s2 p3",
         time_op("core::conv2d", f_conv, 11) * 1e3);
  return 0;
}
