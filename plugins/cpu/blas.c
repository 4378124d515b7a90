/*
 * plugins/cpu/blas.c - the CBLAS library that matmul hands float32 and
 * float64 GEMMs to, found at run time (no link dependency) at the first
 * matmul after the plugin's setup: $BP_BLAS_LIBRARY if set ("none" for no
 * BLAS), else the first of libopenblas.so.0, libblis.so.4, libcblas.so.3
 * that loads.  The plugin's teardown closes it, and with it the library's
 * own threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

#include "cpu.h"

/* ------------------------------------------------------------------------ */
/* Loading BLAS                                                             */
/* ------------------------------------------------------------------------ */

static struct {
  cpu_sgemm_fn sgemm;
  cpu_dgemm_fn dgemm;
  void *handle; /* the library, closed at teardown */
} blas;

/* blas_load() has run since the plugin was set up (under blas_lock). */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool blas_loaded;

/*
 * OpenBLAS picks its kernels by CPU model at load, and a build that does
 * not know the CPU (a new model, or one a hypervisor disguises) falls back
 * to a much slower kernel set even when AVX2 or AVX-512 is there: Prescott
 * ran at 46-80 GFLOP/s where the plugin's own kernel ran at 85-176.  Its
 * OPENBLAS_CORETYPE variable overrides the choice, but only from the
 * environment, and the plugin never sets it: a setenv() while another
 * thread reads the environment (the host's own getenv, OpenBLAS's) is a
 * use-after-free in glibc, and bp-certify's concurrency check, whose eight
 * threads make a fresh process's first matmul, crashed on it (SIGSEGV at
 * address 0, twice in seven long-tier runs of the certifier's corpus on a
 * busy 2-CPU machine).  So the plugin asks OpenBLAS which kernels it
 * chose, and on a CPU with AVX2 and FMA it uses neither an OpenBLAS that
 * chose an older set than Haswell's nor another BLAS: its own kernel is
 * the faster there.  A user who sets OPENBLAS_CORETYPE before the process
 * starts decides for OpenBLAS.
 */
static bool blas_too_old(void *h) {
#if defined(__x86_64__) && defined(__GNUC__)
  char *(*corename)(void);
  *(void **)&corename = dlsym(h, "openblas_get_corename");
  /* not OpenBLAS, or the user's choice */
  if (!corename || getenv("OPENBLAS_CORETYPE")) return false;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
  const char *name = corename();
  static const char *const good[] = {"haswell",    "zen",         "skylakex", "sapphirerapids",
                                     "cooperlake", "steamroller", "excavator"};
  for (size_t i = 0; name && i < sizeof good / sizeof good[0]; i++)
    if (strcasecmp(name, good[i]) == 0) return false;
  return true;
#else
  (void)h;
  return false;
#endif
}

static void blas_load(void) {
  static const char *const defaults[] = {"libopenblas.so.0", "libblis.so.4", "libcblas.so.3"};
  const char *env = getenv("BP_BLAS_LIBRARY");
  const char *const *names = defaults;
  size_t count = sizeof defaults / sizeof defaults[0];
  if (env && *env) {
    if (strcmp(env, "none") == 0) return;
    names = &env;
    count = 1;
  }
  for (size_t i = 0; i < count; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    if (blas_too_old(h)) { /* the plugin's kernel, not another BLAS */
      dlclose(h);
      return;
    }
    /* POSIX allows converting dlsym's result to a function pointer. */
    cpu_sgemm_fn s;
    cpu_dgemm_fn d;
    *(void **)&s = dlsym(h, "cblas_sgemm");
    *(void **)&d = dlsym(h, "cblas_dgemm");
    if (!s || !d) {
      dlclose(h);
      continue;
    }
    /* Use as many threads as the pool does (OpenBLAS and BLIS). */
    void (*set_threads)(int);
    *(void **)&set_threads = dlsym(h, "openblas_set_num_threads");
    if (!set_threads) *(void **)&set_threads = dlsym(h, "bli_thread_set_num_threads");
    if (set_threads) set_threads(cpu_num_threads());
    blas.sgemm = s;
    blas.dgemm = d;
    blas.handle = h; /* open until the plugin's teardown */
    return;
  }
}

/* Loads BLAS at the first matmul after the plugin was set up. */
static void blas_ensure(void) {
  if (atomic_load_explicit(&blas_loaded, memory_order_acquire)) return;
  pthread_mutex_lock(&blas_lock);
  if (!atomic_load_explicit(&blas_loaded, memory_order_relaxed)) {
    blas_load();
    atomic_store_explicit(&blas_loaded, true, memory_order_release);
  }
  pthread_mutex_unlock(&blas_lock);
}

/* Closes the BLAS library, whose own threads go with it: a host that
 * unloads the plugin keeps no thread or mapping of it.  The next load
 * of the plugin opens it again. */
void cpu_blas_shutdown(void) {
  pthread_mutex_lock(&blas_lock);
  if (blas.handle) {
    /* OpenBLAS stops its threads itself when it is unloaded, but a
     * library stays loaded while anything else holds it (another user in
     * the process, a sanitizer runtime): stop them now either way.  It
     * starts them again at its next call. */
    void (*stop)(void);
    *(void **)&stop = dlsym(blas.handle, "blas_thread_shutdown_");
    if (stop) stop();
    dlclose(blas.handle);
  }
  memset(&blas, 0, sizeof blas);
  atomic_store_explicit(&blas_loaded, false, memory_order_release);
  pthread_mutex_unlock(&blas_lock);
}

/* Calls into the BLAS take turns.  A GEMM large enough for OpenBLAS to
 * thread goes through its one thread server, and OpenBLAS 0.3.21's
 * pthread build (Debian 12's) crashed when several threads called it at
 * once: eight threads making the same float32 [257, 515] x [515, 263]
 * GEMM at once (bp-certify's concurrency case under ASan, where the BLAS
 * takes every large GEMM) died of SIGSEGV in about 1 run in 100, and in
 * none of 100 with BP_BLAS_LIBRARY=none.  The BLAS threads each GEMM
 * itself, so a host's threads lose little by waiting for one another. */
static pthread_mutex_t blas_call_lock = PTHREAD_MUTEX_INITIALIZER;
/* A child forked while another thread held the lock gets it free (only
 * the forking thread goes on there). */
static pthread_once_t blas_fork_once = PTHREAD_ONCE_INIT;
static void blas_after_fork_child(void) { pthread_mutex_init(&blas_call_lock, NULL); }
static void blas_fork_setup(void) { pthread_atfork(NULL, NULL, blas_after_fork_child); }

static void locked_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc) {
  pthread_once(&blas_fork_once, blas_fork_setup);
  pthread_mutex_lock(&blas_call_lock);
  blas.sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  pthread_mutex_unlock(&blas_call_lock);
}
static void locked_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                         const double *a, int lda, const double *b, int ldb, double beta,
                         double *c, int ldc) {
  pthread_once(&blas_fork_once, blas_fork_setup);
  pthread_mutex_lock(&blas_call_lock);
  blas.dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  pthread_mutex_unlock(&blas_call_lock);
}

void cpu_blas(cpu_sgemm_fn *sgemm, cpu_dgemm_fn *dgemm) {
  blas_ensure();
  *sgemm = blas.sgemm ? locked_sgemm : NULL;
  *dgemm = blas.dgemm ? locked_dgemm : NULL;
}
