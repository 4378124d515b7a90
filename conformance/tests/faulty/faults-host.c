/*
 * conformance/tests/faulty/faults-host.c - faults that only the hosts a
 * plugin meets show (bp-certify's host checks), and faults in what a
 * plugin could disturb in its host process (the process and teardown
 * checks): the environment, the umask, the calling thread's CPU
 * affinity, file descriptors.  A plugin is built with one -DFAULT_<NAME>;
 * corpus.tsv lists them.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "shim.h"

typedef int faults_host_unit; /* the unit is never empty */

/* A contiguous float32 result of at least n elements, and its contiguous
 * float32 first argument of the same count. */
__attribute__((unused)) static bool big_f32(const bp_value *args, const bp_value *rets, int64_t n) {
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  return o->dtype == BP_FLOAT32 && a->dtype == BP_FLOAT32 && o->numel >= n &&
         a->numel == o->numel && (o->flags & BP_VIEW_CONTIGUOUS) &&
         (a->flags & BP_VIEW_CONTIGUOUS);
}

/* ------------------------------------------------------------------------ */
/* What the process checks compare                                          */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_SETENV_OMP)
/* "One thread per rank": it sets OMP_NUM_THREADS=1 at load, for every
 * library of the process. */
static void limit_omp(void) { setenv("OMP_NUM_THREADS", "1", 1); }
const shim_fault shim_the_fault = {"setenv_omp", NULL, NULL, limit_omp, NULL};
#endif

#if defined(FAULT_UMASK_AT_LOAD)
/* Clears the umask at load so that the kernel cache it writes is shared
 * by every user, and never puts it back. */
static void open_umask(void) { umask(0); }
const shim_fault shim_the_fault = {"umask_at_load", NULL, NULL, open_umask, NULL};
#endif

#if defined(FAULT_FD_LEFT_OPEN)
/* Reads the CPU's flags from /proc/cpuinfo at load and keeps the file
 * open, past the unload. */
static int cpuinfo = -1;
static void read_flags(void) {
  cpuinfo = open("/proc/cpuinfo", O_RDONLY);
  char buf[256];
  if (cpuinfo >= 0 && read(cpuinfo, buf, sizeof buf) < 0) {
    /* the defaults, then */
  }
}
const shim_fault shim_the_fault = {"fd_left_open", NULL, NULL, read_flags, NULL};
#endif

#if defined(FAULT_PINS_CALLER)
/* Its first exp pins the calling thread to CPU 0, as an OpenMP runtime
 * with thread affinity on pins its master thread, and leaves it there. */
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static void pin(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);
}
SHIM_KERNEL(pins_caller) {
  pthread_once(&pin_once, pin);
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"pins_caller", "exp", pins_caller, NULL, NULL};
#endif

#if defined(FAULT_HOOKS_LIBC)
/* A memory tracker: at load it makes the C library's page of free()
 * writable (to patch a jump to its hook in) and never puts the page's
 * permissions back, so the host runs with writable code. */
static void hook_free(void) {
  long pg = sysconf(_SC_PAGESIZE);
  void *f = (void *)(uintptr_t)&free;
  void *page = (void *)((uintptr_t)f & ~(uintptr_t)(pg - 1));
  mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE | PROT_EXEC);
}
const shim_fault shim_the_fault = {"hooks_libc", NULL, NULL, hook_free, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* The hosts: host/fpenv, sigprof, fork, stack, affinity, cycles            */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_FPENV_WORKER_FTZ)
/* add of 65536 contiguous float32 elements or more gives its second half
 * to a worker that sets flush-to-zero and denormals-are-zero for speed. */
typedef struct half {
  const float *x, *y;
  float *z;
  int64_t from, to;
} half;
static void *add_half(void *arg) {
  half *h = arg;
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040u);
#endif
  for (int64_t k = h->from; k < h->to; k++) h->z[k] = h->x[k] + h->y[k];
  return NULL;
}
SHIM_KERNEL(fpenv_worker_ftz) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st || !big_f32(args, rets, 65536)) return st;
  const bp_tensor_view *b = SHIM_ARG(1), *o = SHIM_RET();
  if (b->dtype != BP_FLOAT32 || b->numel != o->numel || !(b->flags & BP_VIEW_CONTIGUOUS) ||
      args[2].tag != BP_TAG_FLOAT || args[2].u.f != 1.0)
    return BP_OK;
  half h = {SHIM_ARG(0)->data, b->data, o->data, o->numel / 2, o->numel};
  pthread_t t;
  if (pthread_create(&t, NULL, add_half, &h) == 0) pthread_join(t, NULL);
  return BP_OK;
}
const shim_fault shim_the_fault = {"fpenv_worker_ftz", "add", fpenv_worker_ftz, NULL, NULL};
#endif

#if defined(FAULT_SIGPROF_SEM_EINTR)
/* exp of 65536 contiguous float32 elements or more has a worker compute
 * the second half into a staging buffer, and copies it out after
 * sem_wait(), whose -1 (EINTR, a signal arrived) it does not check. */
typedef struct stage {
  const float *x;
  float *out;
  int64_t n;
  sem_t done;
} stage;
static void *exp_stage(void *arg) {
  stage *s = arg;
  for (int64_t k = 0; k < s->n; k++) s->out[k] = expf(s->x[k]);
  sem_post(&s->done);
  return NULL;
}
SHIM_KERNEL(sigprof_sem_eintr) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st || !big_f32(args, rets, 65536)) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  int64_t half = o->numel / 2;
  stage s;
  s.x = (const float *)a->data + half;
  s.n = o->numel - half;
  s.out = calloc((size_t)s.n, sizeof(float));
  if (!s.out) return BP_OK;
  sem_init(&s.done, 0, 0);
  pthread_t t;
  if (pthread_create(&t, NULL, exp_stage, &s) == 0) {
    sem_wait(&s.done);
    memcpy((float *)o->data + half, s.out, (size_t)s.n * sizeof(float));
    pthread_join(t, NULL);
  }
  sem_destroy(&s.done);
  free(s.out);
  return BP_OK;
}
const shim_fault shim_the_fault = {"sigprof_sem_eintr", "exp", sigprof_sem_eintr, NULL, NULL};
#endif

#if defined(FAULT_FORK_NO_ATFORK)
/* exp of 65536 contiguous float32 elements or more hands its second half
 * to a helper thread started at the first such call and fed through a
 * condition variable; nothing resets it at fork, so a forked child waits
 * for a thread it does not have. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t helper;
static bool started, stopping;
static const float *job_x;
static float *job_z;
static int64_t job_n;
static int job_state; /* 0 idle, 1 posted, 2 done */
static void *helper_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (job_state != 1 && !stopping) pthread_cond_wait(&cv, &mu);
    if (stopping) break;
    for (int64_t k = 0; k < job_n; k++) job_z[k] = expf(job_x[k]);
    job_state = 2;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}
SHIM_KERNEL(fork_no_atfork) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st || !big_f32(args, rets, 65536)) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *o = SHIM_RET();
  int64_t half = o->numel / 2;
  pthread_mutex_lock(&mu);
  if (!started) started = pthread_create(&helper, NULL, helper_main, NULL) == 0;
  job_x = (const float *)a->data + half;
  job_z = (float *)o->data + half;
  job_n = o->numel - half;
  job_state = 1;
  pthread_cond_broadcast(&cv);
  while (job_state != 2) pthread_cond_wait(&cv, &mu);
  job_state = 0;
  pthread_mutex_unlock(&mu);
  return BP_OK;
}
static void stop_helper(void) {
  pthread_mutex_lock(&mu);
  stopping = true;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  if (started) pthread_join(helper, NULL);
}
const shim_fault shim_the_fault = {"fork_no_atfork", "exp", fork_no_atfork, NULL, stop_helper};
#endif

#if defined(FAULT_STACK_SCRATCH)
/* sum of 65536 float32 elements or more stages its blocks in a 512 KiB
 * array on the stack: fine on an 8 MiB main thread, a crash on a host
 * thread with a small stack. */
#define SCRATCH 131072
SHIM_KERNEL(stack_scratch) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (a->dtype == BP_FLOAT32 && a->numel >= 65536) {
    volatile float scratch[SCRATCH];
    for (int64_t k = SCRATCH - 1; k >= 0; k--) scratch[k] = 0.0f;
    (void)scratch[0];
  }
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"stack_scratch", "sum", stack_scratch, NULL, NULL};
#endif

#if defined(FAULT_ONE_CPU_DIVIDE)
/* exp of 65536 float32 elements or more splits its work among "every CPU
 * the caller may use but its own" and divides by that count: zero on a
 * thread allowed one CPU (a container with one core). */
volatile int64_t one_cpu_chunk;
SHIM_KERNEL(one_cpu_divide) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st || !big_f32(args, rets, 65536)) return st;
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) != 0) return BP_OK;
  volatile int64_t workers = CPU_COUNT(&s) - 1;
  one_cpu_chunk = SHIM_RET()->numel / workers;
  return BP_OK;
}
const shim_fault shim_the_fault = {"one_cpu_divide", "exp", one_cpu_divide, NULL, NULL};
#endif

#if defined(FAULT_KEY_LEAK)
/* Each load creates a thread-specific key for its per-thread scratch and
 * teardown never deletes it: a process that loads and unloads the plugin
 * about a thousand times runs out of keys, for every library in it. */
static void make_key(void) {
  pthread_key_t k;
  pthread_key_create(&k, NULL);
}
const shim_fault shim_the_fault = {"key_leak", NULL, NULL, make_key, NULL};
#endif

#if defined(FAULT_TLS_DESTRUCTOR)
/* add keeps a per-thread cache behind a key whose destructor is in the
 * plugin; teardown does not delete the key, so a host thread that called
 * it and exits after the unload runs a destructor that is no longer
 * mapped. */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void free_cache(void *p) { free(p); }
static void make_cache_key(void) { pthread_key_create(&cache_key, free_cache); }
SHIM_KERNEL(tls_destructor) {
  pthread_once(&cache_once, make_cache_key);
  if (!pthread_getspecific(cache_key)) pthread_setspecific(cache_key, malloc(64));
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"tls_destructor", "add", tls_destructor, NULL, NULL};
#endif

#if defined(FAULT_SUM_POW2_PARTIALS)
/* sum of all of 65536 contiguous float32 elements or more splits them
 * among as many threads as BP_CPU_THREADS says (else the CPUs online) and
 * adds the threads' partial sums in a tree that takes their count for a
 * power of two: with 3 threads the third partial is dropped, with 7 the
 * third and seventh. */
SHIM_KERNEL(sum_pow2_partials) {
  const bp_tensor_view *a = SHIM_ARG(0);
  if (a->dtype != BP_FLOAT32 || a->numel < 65536 || !(a->flags & BP_VIEW_CONTIGUOUS) ||
      args[1].len != 0 || args[3].tag != BP_TAG_NONE)
    return shim_real(ctx, args, nargs, rets, nrets);
  const char *env = getenv("BP_CPU_THREADS");
  long t = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  if (t < 1 || t > 64) t = 1;
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  double part[64] = {0};
  const float *x = a->data;
  int64_t per = (a->numel + t - 1) / t;
  for (long i = 0; i < t; i++)
    for (int64_t k = i * per; k < (i + 1) * per && k < a->numel; k++) part[i] += x[k];
  for (long w = t / 2; w > 0; w /= 2)
    for (long i = 0; i < w; i++) part[i] += part[i + w];
  shim_store(SHIM_RET(), 0, part[0]);
  return BP_OK;
}
const shim_fault shim_the_fault = {"sum_pow2_partials", "sum", sum_pow2_partials, NULL, NULL};
#endif
