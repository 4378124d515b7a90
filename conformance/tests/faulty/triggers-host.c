/*
 * conformance/tests/faulty/triggers-host.c - the triggers of the shim
 * corpus's faults that the hosts a plugin meets show (faults-host.c):
 * what the plugin changes in its host process, and what a SIGPROF timer,
 * a fork, a small stack, one allowed CPU, load cycles and a thread that
 * outlives the unload bring out (confirm.h).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confirm.h"

#define F32 BP_FLOAT32

/* Calls op on n float32 values in [lo, hi] (and, for add, the same
 * tensor twice): 0 when the result is exp's / the sum's / x + x within
 * tolerance, 1 when it differs or the call fails (why says), -1 when
 * the trigger cannot tell. */
static int big_call(const char *op, int64_t n, double lo, double hi, char *why, size_t len) {
  rt *x = rnd(F32, 1, &n, lo, hi);
  bp_tensor *a = mk(x, NULL, 0);
  call c;
  call_init(&c);
  arg_t(&c, a);
  rt *want;
  if (strcmp(op, "core::add") == 0) {
    arg_t(&c, a);
    want = ref_binary(RB_ADD, x, x, 1);
  } else {
    want = ref_unary(RU_EXP, x);
  }
  int r = check(op, &c, want, false, 1, 1, why, len);
  bp_tensor_release(a);
  rt_free(x);
  return r;
}

/* ------------------------------------------------------------------------ */
/* What the plugin changes in its host                                      */
/* ------------------------------------------------------------------------ */

static int t_setenv_omp(char *why, size_t len) {
  unsetenv("OMP_NUM_THREADS");
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  const char *v = getenv("OMP_NUM_THREADS");
  snprintf(why, len, "OMP_NUM_THREADS is %s after the load", v ? v : "unset");
  return v != NULL;
}

static int t_umask_at_load(char *why, size_t len) {
  mode_t before = umask(022);
  umask(022);
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  mode_t after = umask(before);
  snprintf(why, len, "the umask is %04o after the load (022 before)", (unsigned)after);
  return after != 022;
}

static int count_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

static int t_fd_left_open(char *why, size_t len) {
  int before = count_fds();
  if (!cycle(why, len)) return -1;
  int after = count_fds();
  snprintf(why, len, "%d descriptor(s) open before the load, %d after the unload", before, after);
  return after > before;
}

static int t_pins_caller(char *why, size_t len) {
  cpu_set_t before, after;
  if (sched_getaffinity(0, sizeof before, &before) != 0 || CPU_COUNT(&before) < 2) {
    snprintf(why, len, "needs a thread allowed two CPUs or more");
    return -1;
  }
  if (big_call("core::exp", 16, -1, 1, why, len) < 0) return -1;
  sched_getaffinity(0, sizeof after, &after);
  snprintf(why, len, "the calling thread may use %d CPU(s) after exp, %d before",
           CPU_COUNT(&after), CPU_COUNT(&before));
  return !CPU_EQUAL(&before, &after);
}

/* ------------------------------------------------------------------------ */
/* The hosts                                                                */
/* ------------------------------------------------------------------------ */

static int t_fpenv_worker_ftz(char *why, size_t len) {
  int64_t n = 1 << 17;
  rt *x = rt_new(F32, 1, &n);
  for (int64_t k = 0; k < n; k++) x->f[k] = 1e-40 * (double)(k % 7 + 1);
  bp_tensor *a = mk(x, NULL, 0);
  call c;
  call_init(&c);
  arg_t(&c, a);
  arg_t(&c, a);
  int r = check("core::add", &c, ref_binary(RB_ADD, x, x, 1), true, 1, 1, why, len);
  bp_tensor_release(a);
  rt_free(x);
  return r;
}

static void on_prof(int sig) { (void)sig; }

static int t_sigprof_sem_eintr(char *why, size_t len) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  timer_t tm;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
#ifdef SIGEV_THREAD_ID
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev._sigev_un._tid = (pid_t)gettid();
#else
  sev.sigev_notify = SIGEV_SIGNAL;
#endif
  sev.sigev_signo = SIGPROF;
  if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) return -1;
  struct itimerspec its = {{0, 50000}, {0, 50000}};
  timer_settime(tm, 0, &its, NULL);
  int r = 0;
  for (int k = 0; k < 8 && r == 0; k++) r = big_call("core::exp", 100003, -2, 2, why, len);
  timer_delete(tm);
  if (r == 0) snprintf(why, len, "8 calls of exp on 100003 elements under a SIGPROF timer are right");
  return r;
}

static int t_fork_no_atfork(char *why, size_t len) {
  if (big_call("core::exp", 1 << 17, -2, 2, why, len) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    char w[256];
    _exit(big_call("core::exp", 1 << 17, -2, 2, w, sizeof w) == 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  bool hung = WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
  snprintf(why, len, "a child forked after a call %s", hung ? "hangs in its next call"
                                                         : WIFEXITED(st) && !WEXITSTATUS(st)
                                                             ? "makes its next call"
                                                             : "fails its next call");
  return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

typedef struct job {
  char why[256];
  int r;
} job;

static void *sum_job(void *arg) {
  job *j = arg;
  int64_t n = 1 << 17;
  rt *x = rnd(F32, 1, &n, -1, 1);
  bp_tensor *a = mk(x, NULL, 0);
  call c;
  call_init(&c);
  arg_t(&c, a);
  j->r = run("core::sum", &c, NULL) == BP_OK ? 0 : 1;
  snprintf(j->why, sizeof j->why, "sum on a thread with a 256 KiB stack %s",
           j->r ? "failed" : "went through");
  bp_tensor_release(a);
  rt_free(x);
  return NULL;
}

static int t_stack_scratch(char *why, size_t len) {
  job j = {"", -1};
  pthread_attr_t at;
  pthread_t t;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 256 * 1024);
  if (pthread_create(&t, &at, sum_job, &j) != 0) return -1;
  pthread_join(t, NULL);
  snprintf(why, len, "%s", j.why);
  return j.r;
}

static int t_one_cpu_divide(char *why, size_t len) {
  cpu_set_t all, one;
  sched_getaffinity(0, sizeof all, &all);
  int last = -1;
  for (int k = 0; k < CPU_SETSIZE; k++)
    if (CPU_ISSET(k, &all)) last = k;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return -1;
  int r = big_call("core::exp", 1 << 17, -2, 2, why, len);
  if (r == 0) snprintf(why, len, "exp on a thread allowed one CPU is right");
  return r;
}

static int t_key_leak(char *why, size_t len) {
  pthread_key_t k0, k1;
  /* (the first cycles make the keys the host and the C library keep) */
  for (int i = 0; i < 3; i++)
    if (!cycle(why, len)) return -1;
  if (pthread_key_create(&k0, NULL) != 0) return -1;
  pthread_key_delete(k0);
  for (int i = 0; i < 20; i++)
    if (!cycle(why, len)) return -1;
  if (pthread_key_create(&k1, NULL) != 0) {
    snprintf(why, len, "no thread-specific key is left after 20 load cycles");
    return 1;
  }
  pthread_key_delete(k1);
  snprintf(why, len, "the next free key was %u after 3 load cycles and %u after 20 more", (unsigned)k0,
           (unsigned)k1);
  return k1 > k0;
}

typedef struct late {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stage;
  int r;
  char why[256];
} late;

static void *call_then_wait(void *arg) {
  late *l = arg;
  l->r = big_call("core::add", 64, -1, 1, l->why, sizeof l->why);
  pthread_mutex_lock(&l->mu);
  l->stage = 1;
  pthread_cond_broadcast(&l->cv);
  while (l->stage != 2) pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

static int t_tls_destructor(char *why, size_t len) {
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  late l = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, ""};
  pthread_t t;
  if (pthread_create(&t, NULL, call_then_wait, &l) != 0) return -1;
  pthread_mutex_lock(&l.mu);
  while (l.stage != 1) pthread_cond_wait(&l.cv, &l.mu);
  pthread_mutex_unlock(&l.mu);
  if (l.r != 0 || bp_plugin_unload(plugin) != BP_OK) return -1;
  pthread_mutex_lock(&l.mu);
  l.stage = 2;
  pthread_cond_broadcast(&l.cv);
  pthread_mutex_unlock(&l.mu);
  pthread_join(t, NULL);
  snprintf(why, len, "a thread that called add exits after the unload");
  return 0;
}

static int t_sum_pow2_partials(char *why, size_t len) {
  setenv("BP_CPU_THREADS", "3", 1);
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  int64_t n = 100003;
  rt *x = rnd(F32, 1, &n, 0.5, 1);
  bp_tensor *a = mk(x, NULL, 0);
  call c;
  call_init(&c);
  arg_t(&c, a);
  int64_t m = 0;
  rt *want = ref_reduce(RR_SUM, x, NULL, 0, false, BP_DTYPE_INVALID, &m);
  int r = check("core::sum", &c, want, false, 1, 1, why, len);
  bp_tensor_release(a);
  rt_free(x);
  return r;
}

/* The permissions of the mapping that holds address a ("r-xp"). */
static void perms_at(const void *a, char out[8]) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  snprintf(out, 8, "?");
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char p[8];
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && (uintptr_t)a >= lo && (uintptr_t)a < hi)
      snprintf(out, 8, "%s", p);
  }
  if (f) fclose(f);
}

static int t_hooks_libc(char *why, size_t len) {
  char before[8], after[8];
  const void *f = (const void *)(uintptr_t)&free;
  perms_at(f, before);
  if (!cycle(why, len)) return -1;
  perms_at(f, after);
  snprintf(why, len, "the page of free() is %s after a load and unload, %s before", after, before);
  return strcmp(before, after) != 0;
}

const trigger host_triggers[] = {
    {"setenv_omp", t_setenv_omp, T_NOLOAD},
    {"umask_at_load", t_umask_at_load, T_NOLOAD},
    {"fd_left_open", t_fd_left_open, T_NOLOAD},
    {"pins_caller", t_pins_caller, 0},
    {"fpenv_worker_ftz", t_fpenv_worker_ftz, 0},
    {"sigprof_sem_eintr", t_sigprof_sem_eintr, T_TSAN_SIGNAL},
    {"fork_no_atfork", t_fork_no_atfork, T_TSAN_FORK},
    {"stack_scratch", t_stack_scratch, 0},
    {"one_cpu_divide", t_one_cpu_divide, 0},
    {"key_leak", t_key_leak, T_NOLOAD},
    {"tls_destructor", t_tls_destructor, T_NOLOAD},
    {"sum_pow2_partials", t_sum_pow2_partials, T_NOLOAD},
    {"hooks_libc", t_hooks_libc, T_NOLOAD},
};
const size_t host_ntriggers = sizeof host_triggers / sizeof *host_triggers;
