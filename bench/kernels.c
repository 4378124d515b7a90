/*
 * bench/kernels.c - what the CPU plugin's kernels achieve, against the
 * machine's own limits measured in the same run.
 *
 *   kernels [--no-matmul] [PLUGIN.so]
 *
 * Loads the CPU plugin from the path given (else through BP_PLUGIN_PATH and
 * the installed plugin directory) and uses only the public host API.  Every
 * figure is the best of several repetitions:
 *
 *   - baselines: memcpy of a 64 MiB float32 tensor (into memory already
 *     touched, and into freshly allocated memory, which the kernels' results
 *     are), and a triad a[i] = b[i] * c[i] + d[i] on 1 thread and on as many
 *     threads as the plugin uses (BP_CPU_THREADS, else the online CPUs);
 *     each row's "x triad" is against that triad run again, on arrays of
 *     its own, just before each of the row's calls (the best of them);
 *     GB/s counts the bytes read and written, for the triad as for the
 *     kernels (neither counts the reads a store to a line not in the cache
 *     makes), and the kernels' results come from the host's cache of freed
 *     blocks after the first call, so they are warm like the triad's;
 *   - core::add, core::muladd, core::relu, core::sum, core::exp,
 *     core::sigmoid, core::tanh and core::gelu (approximate="tanh") of 16M
 *     float32 elements in [-1, 1) through bp_call, the result allocated by
 *     the call, in GB/s counting the bytes read and written;
 *   - strided operands on the same data as a 4096 x 4096 matrix: core::add
 *     with one and with two transposed operands and with a broadcast row,
 *     and core::contiguous of a transposed view (a transposing copy);
 *   - core::softmax and core::log_softmax of a 4096 x 4096 float32 matrix
 *     along each dimension, and core::layer_norm of it and of its
 *     transpose (whose normalised elements are 16 KiB apart);
 *   - core::matmul of float32 n x n matrices in GFLOP/s, against
 *     cblas_sgemm called directly in the same library the plugin loaded
 *     (so with the same OPENBLAS_CORETYPE), and against the plugin's own
 *     kernel (BP_BLAS_LIBRARY=none), which needs a fresh process: the
 *     benchmark runs itself again with --matmul-only for that;
 *   - the time of one call of core::add on 1-element tensors, allocation of
 *     the result and its release included.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#include "../tools/clock.h"

#define N_ELEMS (16 * 1024 * 1024)
#define REPS 7
#define MAX_THREADS 256

static void die(const char *what) {
  fprintf(stderr, "kernels: %s: %s\n", what, bp_last_error());
  exit(1);
}

/* The thread count the plugin uses: BP_CPU_THREADS, else the online CPUs. */
static int plugin_threads(void) {
  const char *env = getenv("BP_CPU_THREADS");
  long n = env && *env ? strtol(env, NULL, 10) : 0;
  if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static bp_tensor *new_f32(int32_t ndim, const int64_t *sizes, unsigned seed) {
  bp_tensor *t;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, ndim, sizes, &t)) die("bp_tensor_empty");
  float *p = bp_tensor_get_view(t)->data;
  int64_t n = bp_tensor_numel(t);
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)(x >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
  }
  return t;
}

static const bp_op *find_op(const char *name) {
  const bp_op *op;
  if (bp_op_find(name, &op)) die(name);
  return op;
}

/* ------------------------------------------------------------------------ */
/* Baselines                                                                */
/* ------------------------------------------------------------------------ */

/* The triad on a team of threads that wait at a barrier between runs. */
typedef struct team {
  int nthreads;
  pthread_barrier_t start, done;
  float *a;
  const float *b, *c, *d;
  int64_t n;
  int stop;
} team;

static team triad_team;
static pthread_t team_threads[MAX_THREADS];

/* 8 floats at a time whatever the compiler's vectoriser decides at the
 * build's optimisation level, so the baseline is a fair SIMD loop. */
typedef float v8sf __attribute__((vector_size(32)));

static void triad_part(int t, int nthreads) {
  team *tm = &triad_team;
  int64_t lo = tm->n * t / nthreads / 8 * 8, hi = tm->n * (t + 1) / nthreads / 8 * 8;
  if (t == nthreads - 1) hi = tm->n;
  int64_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    v8sf b, c, d;
    memcpy(&b, tm->b + i, sizeof b);
    memcpy(&c, tm->c + i, sizeof c);
    memcpy(&d, tm->d + i, sizeof d);
    b = b * c + d;
    memcpy(tm->a + i, &b, sizeof b);
  }
  for (; i < hi; i++) tm->a[i] = tm->b[i] * tm->c[i] + tm->d[i];
}

static void *triad_worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (;;) {
    pthread_barrier_wait(&triad_team.start);
    if (triad_team.stop) return NULL;
    triad_part(t, triad_team.nthreads);
    pthread_barrier_wait(&triad_team.done);
  }
}

/* Starts a team of nthreads (the caller is thread 0) for the triad
 * a = b * c + d on N_ELEMS elements. */
static void team_start(int nthreads, float *a, const float *b, const float *c, const float *d) {
  team *tm = &triad_team;
  tm->nthreads = nthreads;
  tm->a = a;
  tm->b = b;
  tm->c = c;
  tm->d = d;
  tm->n = N_ELEMS;
  tm->stop = 0;
  pthread_barrier_init(&tm->start, NULL, (unsigned)nthreads);
  pthread_barrier_init(&tm->done, NULL, (unsigned)nthreads);
  for (int t = 1; t < nthreads; t++)
    pthread_create(&team_threads[t], NULL, triad_worker, (void *)(intptr_t)t);
}

/* The time of one triad on the team. */
static double team_triad(void) {
  team *tm = &triad_team;
  double t0 = now();
  if (tm->nthreads > 1) pthread_barrier_wait(&tm->start);
  triad_part(0, tm->nthreads);
  if (tm->nthreads > 1) pthread_barrier_wait(&tm->done);
  return now() - t0;
}

static void team_stop(void) {
  team *tm = &triad_team;
  tm->stop = 1;
  if (tm->nthreads > 1) pthread_barrier_wait(&tm->start);
  for (int t = 1; t < tm->nthreads; t++) pthread_join(team_threads[t], NULL);
  pthread_barrier_destroy(&tm->start);
  pthread_barrier_destroy(&tm->done);
}

/* Best time of the triad on nthreads threads. */
static double time_triad(int nthreads, float *a, const float *b, const float *c, const float *d) {
  team_start(nthreads, a, b, c, d);
  double best = 1e30;
  for (int r = 0; r < REPS; r++) {
    double dt = team_triad();
    if (dt < best) best = dt;
  }
  team_stop();
  return best;
}

static double time_memcpy(void *dst, const void *src, size_t n, int fresh) {
  double best = 1e30;
  for (int r = 0; r < REPS; r++) {
    void *d = dst;
    double t0 = now();
    if (fresh && !(d = malloc(n))) return NAN;
    memcpy(d, src, n);
    __asm__ volatile("" : : "r"(d) : "memory"); /* the copy is used */
    double dt = now() - t0;
    if (fresh) free(d);
    if (dt < best) best = dt;
  }
  return best;
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */
/* ------------------------------------------------------------------------ */

/* What to push for one call. */
typedef struct call {
  const char *op;
  bp_tensor *t[3];
  int nt;
  int kind; /* 0: tensors only, 1: + float c, 2: + int dim, 3: + dims list,
               4: layer_norm, 5: + approximate="tanh" */
  double f;
  int64_t i;
} call;

static void push(bp_stack *s, const call *c) {
  s->top = 0;
  for (int k = 0; k < c->nt && c->kind != 4; k++) bp_stack_push_tensor(s, c->t[k]);
  switch (c->kind) {
    case 1: bp_stack_push_float(s, c->f); break;
    case 2: bp_stack_push_int(s, c->i); break;
    case 3: bp_stack_push_int_list(s, NULL, 0); break;
    case 4: {
      static int64_t last;
      last = bp_tensor_get_view(c->t[0])->sizes[1];
      bp_stack_push_tensor(s, c->t[0]);
      bp_stack_push_int_list(s, &last, 1);
      bp_stack_push_tensor(s, c->t[1]);
      bp_stack_push_tensor(s, c->t[2]);
      break;
    }
    case 5: bp_stack_push_str(s, "tanh"); break;
    default: break;
  }
}

/* The best triad time of the last time_call while the team ran. */
static double last_triad;
static bool team_running;

/* Best time of one call, or a negative number when the call fails (its
 * message is copied to err).  While the triad's team runs, each call is
 * preceded by a triad, and last_triad is the best of those: a row is then
 * compared with the machine's bandwidth at the time it ran, which on a
 * shared machine drifts between rows by more than the rows differ. */
static double time_call(const call *c, int reps, char *err, size_t errlen) {
  const bp_op *op = find_op(c->op);
  bp_value slots[8];
  bp_stack s = BP_STACK_INIT(slots, 8);
  double best = 1e30;
  last_triad = 1e30;
  for (int r = 0; r < reps; r++) {
    if (team_running) {
      double tt = team_triad();
      if (tt < last_triad) last_triad = tt;
    }
    push(&s, c);
    double t0 = now();
    bp_status st = bp_call(op, &s);
    double dt = now() - t0;
    if (st) {
      snprintf(err, errlen, "%s", bp_last_error());
      return -1;
    }
    bp_stack_release(&s);
    if (dt < best) best = dt;
  }
  return best;
}

/* ------------------------------------------------------------------------ */
/* matmul                                                                   */
/* ------------------------------------------------------------------------ */

static const int MM_SIZES[] = {256, 1024, 2048};
#define MM_COUNT 3

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

/* The BLAS library the plugin loaded (it is in the process by now), found
 * as the plugin looks for it. */
static void *loaded_blas(const char **name) {
  static const char *const defaults[] = {"libopenblas.so.0", "libblis.so.4", "libcblas.so.3"};
  const char *env = getenv("BP_BLAS_LIBRARY");
  if (env && *env) {
    *name = env;
    return strcmp(env, "none") ? dlopen(env, RTLD_NOW | RTLD_NOLOAD) : NULL;
  }
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
    void *h = dlopen(defaults[i], RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      *name = defaults[i];
      return h;
    }
  }
  *name = "none";
  return NULL;
}

static int mm_reps(int n) { return n >= 2048 ? 3 : n >= 1024 ? 5 : 20; }

/* GFLOP/s of core::matmul at each size; 0 where it fails. */
static void time_matmul(double *gflops) {
  for (int i = 0; i < MM_COUNT; i++) {
    int64_t n = MM_SIZES[i], sizes[2] = {n, n};
    call c = {"core::matmul", {new_f32(2, sizes, 1), new_f32(2, sizes, 2), NULL}, 2, 0, 0, 0};
    char err[256];
    double t = time_call(&c, mm_reps((int)n), err, sizeof err);
    gflops[i] = t > 0 ? 2.0 * (double)(n * n * n) / t * 1e-9 : 0;
    if (t < 0) fprintf(stderr, "kernels: core::matmul: %s\n", err);
    bp_tensor_release(c.t[0]);
    bp_tensor_release(c.t[1]);
  }
}

/* GFLOP/s of cblas_sgemm called directly; 0 where there is none. */
static void time_sgemm(void *lib, double *gflops) {
  sgemm_fn sgemm = NULL;
  if (lib) *(void **)&sgemm = dlsym(lib, "cblas_sgemm");
  for (int i = 0; i < MM_COUNT; i++) {
    gflops[i] = 0;
    if (!sgemm) continue;
    int n = MM_SIZES[i];
    int64_t sizes[2] = {n, n};
    bp_tensor *a = new_f32(2, sizes, 1), *b = new_f32(2, sizes, 2), *c = new_f32(2, sizes, 3);
    double best = 1e30;
    for (int r = 0; r < mm_reps(n); r++) {
      double t0 = now();
      sgemm(101, 111, 111, n, n, n, 1.0f, bp_tensor_get_view(a)->data, n,
            bp_tensor_get_view(b)->data, n, 0.0f, bp_tensor_get_view(c)->data, n);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    gflops[i] = 2.0 * (double)n * n * n / best * 1e-9;
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
  }
}

/* Runs this program again with BP_BLAS_LIBRARY=none and --matmul-only,
 * which prints one GFLOP/s figure per size. */
static void time_portable(const char *self, const char *plugin, double *gflops) {
  for (int i = 0; i < MM_COUNT; i++) gflops[i] = 0;
  int fd[2];
  if (pipe(fd)) return;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    setenv("BP_BLAS_LIBRARY", "none", 1);
    char *args[] = {(char *)self, (char *)"--matmul-only", (char *)plugin, NULL};
    execv("/proc/self/exe", args);
    execv(self, args);
    _exit(127);
  }
  close(fd[1]);
  FILE *f = fdopen(fd[0], "r");
  for (int i = 0; f && i < MM_COUNT; i++)
    if (fscanf(f, "%lf", &gflops[i]) != 1) break;
  if (f) fclose(f);
  if (pid > 0) waitpid(pid, NULL, 0);
}

/* ------------------------------------------------------------------------ */
/* Report                                                                   */
/* ------------------------------------------------------------------------ */

/* The baselines' GB/s that rows are compared with. */
static double copy_gbs, triad_gbs;

static void row(const char *name, double t, double bytes, const char *err) {
  if (t < 0) {
    printf("  %-22s n/a (%s)\n", name, err);
    return;
  }
  double gbs = bytes / t * 1e-9;
  double triad = team_running ? 4.0 * (double)N_ELEMS * sizeof(float) / last_triad * 1e-9
                              : triad_gbs;
  printf("  %-22s %8.2f ms %8.1f GB/s %9.2f %9.2f\n", name, t * 1e3, gbs, gbs / copy_gbs,
         gbs / triad);
}

static void header(const char *title) {
  printf("%s\n  %-22s %11s %13s %9s %9s\n", title, "", "time", "", "x memcpy", "x triad");
}

static void load(const char *plugin) {
  if (plugin) {
    if (bp_plugin_load(plugin, NULL)) die(plugin);
  } else {
    size_t n = 0;
    if (bp_plugin_discover(&n) || n == 0)
      die("no plugin found (give its path, or set BP_PLUGIN_PATH)");
  }
}

/* The matmul table: the plugin first, so that it has loaded its BLAS. */
static void report_matmul(const char *self, const char *plugin) {
  double g_plugin[MM_COUNT], g_blas[MM_COUNT], g_portable[MM_COUNT];
  time_matmul(g_plugin);
  const char *blas_name;
  void *lib = loaded_blas(&blas_name);
  time_sgemm(lib, g_blas);
  time_portable(self, plugin ? plugin : "", g_portable);
  const char *coretype = getenv("OPENBLAS_CORETYPE");
  printf("core::matmul float32, GFLOP/s (BLAS: %s%s%s%s)\n", blas_name,
         coretype ? ", OPENBLAS_CORETYPE=" : "", coretype ? coretype : "",
         coretype ? " from the environment" : "");
  printf("  %6s %10s %12s %10s %10s %10s\n", "n", "core", "cblas_sgemm", "portable", "core/cblas",
         "port/cblas");
  for (int i = 0; i < MM_COUNT; i++) {
    printf("  %6d %10.1f %12.1f %10.1f", MM_SIZES[i], g_plugin[i], g_blas[i], g_portable[i]);
    if (g_blas[i] > 0)
      printf(" %10.2f %10.2f\n", g_plugin[i] / g_blas[i], g_portable[i] / g_blas[i]);
    else
      printf(" %10s %10s\n", "-", "-");
  }
  printf("\n");
}

/* An array for the triad run beside each row: on 2 MiB pages where the
 * kernel grants them, as the host's CPU allocator asks for its large blocks
 * (host/device.c), so that the rows and the triad meet the TLB alike. */
static float *huge_alloc(size_t bytes) {
  size_t n = (bytes + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
  float *p = aligned_alloc((size_t)2 << 20, n);
#if defined(MADV_HUGEPAGE)
  if (p) (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

int main(int argc, char **argv) {
  bool matmul_only = argc > 1 && strcmp(argv[1], "--matmul-only") == 0;
  bool no_matmul = argc > 1 && strcmp(argv[1], "--no-matmul") == 0;
  int first = matmul_only || no_matmul ? 2 : 1;
  const char *plugin = argc > first ? argv[first] : NULL;
  load(plugin);
  if (matmul_only) {
    double g[MM_COUNT];
    time_matmul(g);
    for (int i = 0; i < MM_COUNT; i++) printf("%.3f\n", g[i]);
    return 0;
  }
  int threads = plugin_threads();
  size_t bytes = (size_t)N_ELEMS * sizeof(float);
  int64_t n1[1] = {N_ELEMS};
  printf("Backplane CPU kernels: %d thread%s, float32, best of %d\n\n", threads,
         threads == 1 ? "" : "s", REPS);

  /* Baselines. */
  bp_tensor *x = new_f32(1, n1, 1), *y = new_f32(1, n1, 2), *z = new_f32(1, n1, 3),
            *w = new_f32(1, n1, 4);
  float *xa = bp_tensor_get_view(x)->data, *ya = bp_tensor_get_view(y)->data,
        *za = bp_tensor_get_view(z)->data, *wa = bp_tensor_get_view(w)->data;
  double t_copy = time_memcpy(wa, xa, bytes, 0), t_copy_fresh = time_memcpy(NULL, xa, bytes, 1);
  double t_triad1 = time_triad(1, wa, xa, ya, za);
  double t_triad = time_triad(threads, wa, xa, ya, za);
  copy_gbs = 2.0 * (double)bytes / t_copy * 1e-9;
  triad_gbs = 4.0 * (double)bytes / t_triad * 1e-9;
  printf("baselines (64 MiB per array; GB/s counts bytes read + written)\n");
  printf("  %-22s %8.2f ms %8.1f GB/s\n", "memcpy", t_copy * 1e3, copy_gbs);
  printf("  %-22s %8.2f ms %8.1f GB/s\n", "memcpy, fresh dst", t_copy_fresh * 1e3,
         2.0 * (double)bytes / t_copy_fresh * 1e-9);
  printf("  %-22s %8.2f ms %8.1f GB/s\n", "triad, 1 thread", t_triad1 * 1e3,
         4.0 * (double)bytes / t_triad1 * 1e-9);
  char tname[64];
  snprintf(tname, sizeof tname, "triad, %d threads", threads);
  printf("  %-22s %8.2f ms %8.1f GB/s\n\n", tname, t_triad * 1e3, triad_gbs);
  printf("The x triad column compares each row with the triad run just before each of its\n"
         "calls (the best of those), not with the one above.\n\n");
  float *ta = huge_alloc(bytes), *tb = huge_alloc(bytes), *tc = huge_alloc(bytes),
        *td = huge_alloc(bytes);
  if (!ta || !tb || !tc || !td) die("malloc");
  memcpy(tb, xa, bytes);
  memcpy(tc, ya, bytes);
  memcpy(td, za, bytes);
  memcpy(ta, wa, bytes);
  team_start(threads, ta, tb, tc, td);
  team_running = true;

  /* Elementwise and sum: 16M elements, results allocated by the call. */
  char err[512] = "";
  header("elementwise and sum, 16M elements (ratios: to memcpy's and to the triad's GB/s)");
  call add = {"core::add", {x, y, NULL}, 2, 0, 0, 0};
  call muladd = {"core::muladd", {x, y, NULL}, 2, 1, 0.5, 0};
  call relu = {"core::relu", {x, NULL, NULL}, 1, 0, 0, 0};
  call sum = {"core::sum", {x, NULL, NULL}, 1, 3, 0, 0};
  row("core::add", time_call(&add, REPS, err, sizeof err), 3.0 * (double)bytes, err);
  row("core::muladd", time_call(&muladd, REPS, err, sizeof err), 3.0 * (double)bytes, err);
  row("core::relu", time_call(&relu, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("core::sum", time_call(&sum, REPS, err, sizeof err), (double)bytes, err);
  call ex = {"core::exp", {x, NULL, NULL}, 1, 0, 0, 0};
  call sigmoid = {"core::sigmoid", {x, NULL, NULL}, 1, 0, 0, 0};
  call tanh_ = {"core::tanh", {x, NULL, NULL}, 1, 0, 0, 0};
  call gelu = {"core::gelu", {x, NULL, NULL}, 1, 5, 0, 0};
  row("core::exp", time_call(&ex, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("core::sigmoid", time_call(&sigmoid, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("core::tanh", time_call(&tanh_, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("gelu(tanh)", time_call(&gelu, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  printf("\n");

  /* Strided operands: the same 16M elements as a 4096 x 4096 matrix, with
   * transposed views of it (strides {1, 4096}) and a broadcast row. */
  int64_t sq[2] = {4096, 4096}, last[1] = {4096};
  bp_tensor *xm = NULL, *ym = NULL, *yt = NULL, *xt = NULL, *rowv = NULL, *rowb = NULL;
  if (bp_tensor_as_strided(x, 2, sq, (int64_t[]){4096, 1}, 0, &xm) ||
      bp_tensor_as_strided(y, 2, sq, (int64_t[]){4096, 1}, 0, &ym) ||
      bp_tensor_as_strided(y, 2, sq, (int64_t[]){1, 4096}, 0, &yt) ||
      bp_tensor_as_strided(x, 2, sq, (int64_t[]){1, 4096}, 0, &xt))
    die("bp_tensor_as_strided");
  rowv = new_f32(1, last, 10);
  if (bp_tensor_as_strided(rowv, 2, sq, (int64_t[]){0, 1}, 0, &rowb))
    die("bp_tensor_as_strided");
  header("strided operands, 4096 x 4096 (b.T: a transposed view; r: a broadcast row)");
  call add_m = {"core::add", {xm, ym, NULL}, 2, 0, 0, 0};
  call add_t = {"core::add", {xm, yt, NULL}, 2, 0, 0, 0};
  call add_tt = {"core::add", {xt, yt, NULL}, 2, 0, 0, 0};
  call add_tr = {"core::add", {xt, rowb, NULL}, 2, 0, 0, 0};
  call contig_t = {"core::contiguous", {yt, NULL, NULL}, 1, 0, 0, 0};
  row("add(a, b)", time_call(&add_m, REPS, err, sizeof err), 3.0 * (double)bytes, err);
  row("add(a, b.T)", time_call(&add_t, REPS, err, sizeof err), 3.0 * (double)bytes, err);
  row("add(a.T, b.T)", time_call(&add_tt, REPS, err, sizeof err), 3.0 * (double)bytes, err);
  row("add(a.T, r)", time_call(&add_tr, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("contiguous(b.T)", time_call(&contig_t, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  printf("\n");

  /* nn ops on 4096 x 4096. */
  bp_tensor *m = new_f32(2, sq, 5), *gamma = new_f32(1, last, 6), *beta = new_f32(1, last, 7);
  header("4096 x 4096 (GB/s counts the input read and the result written)");
  call softmax = {"core::softmax", {m, NULL, NULL}, 1, 2, 0, 1};
  call log_softmax = {"core::log_softmax", {m, NULL, NULL}, 1, 2, 0, 1};
  call softmax0 = {"core::softmax", {m, NULL, NULL}, 1, 2, 0, 0};
  call layer_norm = {"core::layer_norm", {m, gamma, beta}, 3, 4, 0, 0};
  row("softmax(dim=-1)", time_call(&softmax, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("log_softmax(dim=-1)", time_call(&log_softmax, REPS, err, sizeof err), 2.0 * (double)bytes,
      err);
  call log_softmax0 = {"core::log_softmax", {m, NULL, NULL}, 1, 2, 0, 0};
  bp_tensor *mt;
  if (bp_tensor_as_strided(m, 2, sq, (int64_t[]){1, 4096}, 0, &mt)) die("bp_tensor_as_strided");
  call layer_norm_t = {"core::layer_norm", {mt, gamma, beta}, 3, 4, 0, 0};
  row("softmax(dim=0)", time_call(&softmax0, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("log_softmax(dim=0)", time_call(&log_softmax0, REPS, err, sizeof err), 2.0 * (double)bytes,
      err);
  row("layer_norm(w, b)", time_call(&layer_norm, REPS, err, sizeof err), 2.0 * (double)bytes, err);
  row("layer_norm(m.T, w, b)", time_call(&layer_norm_t, REPS, err, sizeof err),
      2.0 * (double)bytes, err);
  printf("\n");

  team_running = false;
  team_stop();
  free(ta);
  free(tb);
  free(tc);
  free(td);

  if (!no_matmul) report_matmul(argv[0], plugin);
  /* The cost of a call on 1-element tensors, allocation included. */
  int64_t one[1] = {1};
  bp_tensor *s1 = new_f32(1, one, 8), *s2 = new_f32(1, one, 9);
  call tiny = {"core::add", {s1, s2, NULL}, 2, 0, 0, 0};
  const bp_op *add_op = find_op("core::add");
  bp_value slots[8];
  bp_stack st = BP_STACK_INIT(slots, 8);
  double best = 1e30;
  bool ok = true;
  for (int r = 0; r < REPS && ok; r++) {
    const int calls = 200000;
    double t0 = now();
    for (int i = 0; i < calls && ok; i++) {
      push(&st, &tiny);
      ok = bp_call(add_op, &st) == BP_OK;
      if (ok) bp_stack_release(&st);
    }
    double dt = (now() - t0) / calls;
    if (dt < best) best = dt;
  }
  if (ok)
    printf("core::add of 1-element tensors, result allocated and released: %.1f ns per call "
           "(target <= 150)\n", best * 1e9);
  else
    printf("core::add of 1-element tensors: n/a (%s)\n", bp_last_error());

  bp_tensor *all[] = {x, y, z, w, m, gamma, beta, s1, s2, xm, ym, yt, xt, rowv, rowb, mt};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) bp_tensor_release(all[i]);
  return 0;
}
