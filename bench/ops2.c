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
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#include "../tools/clock.h"

#define N (16 * 1024 * 1024)
#define REPS 7

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

static bp_tensor *x, *y, *m, *mask, *rows, *perm, *gidx, *half1, *half2, *table, *eight, *img,
    *w7;
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
static void f_conv(bp_stack *s) {
  static const int64_t two[2] = {2, 2}, three[2] = {3, 3};
  bp_stack_push_tensor(s, img), bp_stack_push_tensor(s, w7), bp_stack_push_none(s);
  bp_stack_push_int_list(s, two, 2);
  bp_stack_push_int_list(s, three, 2);
}

/* One call of op on n values; its one Tensor result (owned). */
static bp_tensor *call_values(const char *name, const bp_value *vals, size_t n) {
  const bp_op *op;
  if (bp_op_find(name, &op)) die(name);
  bp_value slots[8];
  bp_stack s = BP_STACK_INIT(slots, 8);
  for (size_t i = 0; i < n; i++) slots[i] = vals[i];
  s.top = n;
  if (bp_call(op, &s)) die(name);
  return slots[0].u.tensor;
}

static bp_value tval(bp_tensor *t) {
  bp_value v = {.tag = BP_TAG_TENSOR};
  v.u.tensor = t;
  return v;
}

/* Causal attention on [12, L, 64] float32, fused (the plugin's kernel) and
 * composed as the host's composite composes it (matmul by key viewed
 * transposed, mul.Scalar, masked_fill of a causal mask, softmax, matmul);
 * medians of reps each, alternating. */
static void attention_rows(int64_t L, int reps) {
  int64_t qs[3] = {12, L, 64}, ks[3] = {12, 64, L}, kst[3] = {L * 64, 1, 64}, ms[2] = {L, L};
  bp_tensor *aq = filled(BP_FLOAT32, 3, qs, 21, 0), *ak = filled(BP_FLOAT32, 3, qs, 22, 0),
            *av = filled(BP_FLOAT32, 3, qs, 23, 0), *kt = NULL, *upper = NULL;
  if (bp_tensor_as_strided(ak, 3, ks, kst, 0, &kt)) die("as_strided");
  if (bp_tensor_empty(BP_CPU, BP_BOOL, 2, ms, &upper)) die("bp_tensor_empty");
  uint8_t *u = bp_tensor_get_view(upper)->data;
  for (int64_t i = 0; i < L; i++)
    for (int64_t j = 0; j < L; j++) u[i * L + j] = j > i;
  const bp_op *sdpa;
  if (bp_op_find("core::scaled_dot_product_attention", &sdpa)) die("sdpa");
  double tf[16], tc[16];
  for (int r = 0; r < reps && r < 16; r++) {
    bp_value slots[8];
    bp_stack s = BP_STACK_INIT(slots, 8);
    bp_stack_push_tensor(&s, aq), bp_stack_push_tensor(&s, ak), bp_stack_push_tensor(&s, av);
    bp_stack_push_none(&s), bp_stack_push_float(&s, 0.0), bp_stack_push_bool(&s, true);
    double t0 = now();
    if (bp_call(sdpa, &s)) die("sdpa");
    tf[r] = now() - t0;
    bp_stack_release(&s);
    t0 = now();
    bp_value mm[2] = {tval(aq), tval(kt)};
    bp_tensor *sc = call_values("core::matmul", mm, 2);
    bp_value ms2[2] = {tval(sc), {.tag = BP_TAG_FLOAT, .u.f = 0.125}};
    bp_tensor *sc2 = call_values("core::mul.Scalar", ms2, 2);
    bp_value mf[3] = {tval(sc2), tval(upper), {.tag = BP_TAG_FLOAT, .u.f = -INFINITY}};
    bp_tensor *sc3 = call_values("core::masked_fill", mf, 3);
    bp_value sm[2] = {tval(sc3), {.tag = BP_TAG_INT, .u.i = -1}};
    bp_tensor *p = call_values("core::softmax", sm, 2);
    bp_value pv[2] = {tval(p), tval(av)};
    bp_tensor *o = call_values("core::matmul", pv, 2);
    tc[r] = now() - t0;
    bp_tensor *all[] = {sc, sc2, sc3, p, o};
    for (size_t i = 0; i < 5; i++) bp_tensor_release(all[i]);
  }
  double f = median(tf, reps), c = median(tc, reps);
  printf("  attention, causal, 12 heads, L %-5lld d 64: fused %9.2f ms, composed %9.2f ms, "
         "%.2fx\n", (long long)L, f * 1e3, c * 1e3, c / f);
  bp_tensor *all[] = {aq, ak, av, kt, upper};
  for (size_t i = 0; i < 5; i++) bp_tensor_release(all[i]);
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

  int64_t ts[2] = {50257, 768}, e8 = 8, is[4] = {1, 3, 224, 224},
          ws[4] = {64, 3, 7, 7};
  table = filled(BP_FLOAT32, 2, ts, 10, 0);
  eight = filled(BP_INT64, 1, &e8, 11, 50257);
  img = filled(BP_FLOAT32, 4, is, 15, 0);
  w7 = filled(BP_FLOAT32, 4, ws, 16, 0);
  printf("single calls (median of %d)\n", 101);
  printf("  %-44s %9.2f us\n", "embedding: 8 rows of a [50257, 768] table",
         time_op("core::embedding", f_emb, 101) * 1e6);
  printf("  %-44s %9.2f us\n", "index_select: the same 8 rows",
         time_op("core::index_select", f_sel8, 101) * 1e6);
  attention_rows(1024, 7);
  attention_rows(4096, 3);
  printf("  %-44s %9.2f ms\n", "conv2d [1, 3, 224, 224] * [64, 3, 7, 7] s2 p3",
         time_op("core::conv2d", f_conv, 11) * 1e3);
  return 0;
}
