/*
 * plugins/cpu/pool.c - a small thread pool for cpu_parallel_for.
 *
 * Workers start on the first parallel job.  One job runs at a time; a
 * caller that finds the pool busy, or that is itself a pool task, runs its
 * work inline, so the pool never deadlocks and never oversubscribes.  A
 * forked child starts with no workers (pthread_atfork), as the threads do
 * not survive fork.  Each job carries its caller's floating-point
 * environment (rounding, flush to zero, denormals are zero), which the
 * workers take on before they run it: a worker would otherwise keep the
 * environment of whichever thread started the pool.
 */
#define _GNU_SOURCE
#include <fenv.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu.h"

#define MAX_THREADS 256

typedef struct job {
  void (*fn)(void *ctx, int64_t begin, int64_t end);
  void *ctx;
  int64_t n, chunk;
  atomic_int_fast64_t next;     /* next chunk to take */
  atomic_int_fast64_t pending;  /* chunks not yet finished */
  fenv_t env;                   /* the caller's floating-point environment */
} job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_t workers[MAX_THREADS];
static int nworkers;
static bool started, stopping;
static uint64_t generation;
static job *current;
static int nthreads = -1;
static int active; /* workers that took `current` and have not finished it */
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Marks pool workers and callers running a job, so nested parallel_for
 * runs inline.  A pthread key rather than _Thread_local: LeakSanitizer
 * cannot read a dlopen'ed module's TLS in threads still alive at exit. */
static pthread_key_t task_key;
/* Whether task_key exists: made before the pool's first job, deleted at
 * teardown, so that a host that loads, calls and unloads the plugin again
 * and again does not use up the process's keys (glibc has 1024: every
 * library's pthread_key_create failed after about 1,020 cycles).  Written
 * under `lock`. */
static atomic_bool key_live;

static bool in_task(void) {
  return atomic_load_explicit(&key_live, memory_order_acquire) &&
         pthread_getspecific(task_key) != NULL;
}
static void set_in_task(bool on) {
  if (atomic_load_explicit(&key_live, memory_order_acquire))
    pthread_setspecific(task_key, on ? (void *)&task_key : NULL);
}

static void after_fork_child(void) {
  /* Only the forking thread exists in the child. */
  pthread_mutex_init(&lock, NULL);
  pthread_mutex_init(&job_lock, NULL);
  pthread_cond_init(&work_cv, NULL);
  pthread_cond_init(&done_cv, NULL);
  nworkers = 0;
  active = 0;
  started = stopping = false;
  current = NULL;
}

static void init_once(void) {
  const char *env = getenv("BP_CPU_THREADS");
  long n = env && *env ? strtol(env, NULL, 10) : 0;
  if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > MAX_THREADS) n = MAX_THREADS;
  nthreads = (int)n;
  pthread_atfork(NULL, NULL, after_fork_child);
}

int cpu_num_threads(void) {
  pthread_once(&once, init_once);
  return nthreads;
}

/* Takes and runs chunks of j until none are left. */
static void work_on(job *j) {
  for (;;) {
    int64_t c = atomic_fetch_add(&j->next, 1);
    int64_t begin = c * j->chunk;
    if (begin >= j->n) return;
    int64_t end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
    j->fn(j->ctx, begin, end);
    if (atomic_fetch_sub(&j->pending, 1) == 1) {
      pthread_mutex_lock(&lock);
      pthread_cond_broadcast(&done_cv);
      pthread_mutex_unlock(&lock);
    }
  }
}

static void *worker_main(void *arg) {
  (void)arg;
  set_in_task(true);
  uint64_t seen = 0;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!stopping && (generation == seen || !current)) pthread_cond_wait(&work_cv, &lock);
    if (stopping) break;
    seen = generation;
    job *j = current;
    /* The job lives on the caller's stack: the caller waits for `active`
     * to drop, not only for the chunks, before it returns. */
    active++;
    pthread_mutex_unlock(&lock);
    fesetenv(&j->env);
    work_on(j);
    pthread_mutex_lock(&lock);
    if (--active == 0) pthread_cond_broadcast(&done_cv);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void start_workers(void) {
  for (int i = 0; i < nthreads - 1; i++) {
    if (pthread_create(&workers[nworkers], NULL, worker_main, NULL) != 0) break;
    nworkers++;
  }
  started = true;
}

/* Runs fn over [0, n) on the pool in pieces of `chunk` items, which the
 * threads take as they come free. */
static void run_job(int64_t n, int64_t chunk, void (*fn)(void *ctx, int64_t begin, int64_t end),
                    void *ctx) {
  job j;
  j.fn = fn;
  j.ctx = ctx;
  j.n = n;
  j.chunk = chunk;
  fegetenv(&j.env);
  atomic_init(&j.next, 0);
  atomic_init(&j.pending, (n + j.chunk - 1) / j.chunk);
  pthread_mutex_lock(&lock);
  if (!atomic_load_explicit(&key_live, memory_order_relaxed) &&
      pthread_key_create(&task_key, NULL) == 0)
    atomic_store_explicit(&key_live, true, memory_order_release);
  if (!started) start_workers();
  current = &j;
  generation++;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&lock);
  set_in_task(true);
  work_on(&j);
  set_in_task(false);
  pthread_mutex_lock(&lock);
  while (atomic_load(&j.pending) > 0 || active > 0) pthread_cond_wait(&done_cv, &lock);
  current = NULL;
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&job_lock);
}

void cpu_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                      void *ctx) {
  if (n <= 0) return;
  int t = cpu_num_threads();
  if (grain < 1) grain = 1;
  if (t <= 1 || n <= grain || in_task() || pthread_mutex_trylock(&job_lock) != 0) {
    fn(ctx, 0, n);
    return;
  }
  int64_t chunks = n / grain < t ? n / grain : t;
  if (chunks < 2) chunks = 2;
  run_job(n, (n + chunks - 1) / chunks, fn, ctx);
}

void cpu_parallel_items(int64_t n, void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx) {
  if (n <= 0) return;
  if (cpu_num_threads() <= 1 || n == 1 || in_task() || pthread_mutex_trylock(&job_lock) != 0) {
    fn(ctx, 0, n);
    return;
  }
  run_job(n, 1, fn, ctx);
}

void cpu_pool_shutdown(void) {
  pthread_mutex_lock(&lock);
  stopping = true;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < nworkers; i++) pthread_join(workers[i], NULL);
  pthread_mutex_lock(&lock);
  nworkers = 0;
  started = stopping = false;
  if (atomic_load_explicit(&key_live, memory_order_relaxed)) {
    atomic_store_explicit(&key_live, false, memory_order_release);
    pthread_key_delete(task_key);
  }
  pthread_mutex_unlock(&lock);
}
