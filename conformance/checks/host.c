/*
 * conformance/checks/host.c - the hosts a plugin will meet: each case
 * runs, in a fresh process, the calls of hostrun.h in a plain host and
 * again under one real condition of the processes that load plugins, and
 * the results must be the same:
 *   host/sigprof   a profiler's SIGPROF interval timer, whose handler has
 *                  no SA_RESTART, fires at the calling thread every 100 us
 *                  during the calls (made three times);
 *   host/fork      the host forks after calls; the child's calls (and the
 *                  parent's) work;
 *   host/stack     the calls run on a host thread with a 256 KiB stack;
 *   host/affinity  the plugin is loaded and first called on a thread
 *                  restricted to one CPU (the last it may use);
 *   host/locale    the plugin is loaded and called again under a locale
 *                  whose decimal point is a comma: its schemas and results
 *                  are those of the C locale;
 *   host/fpenv     the threads that run the plugin's work keep denormals
 *                  (no flush to zero), also after a first call made from a
 *                  thread that had flush-to-zero set.
 * cycles.c has host/cycles (--profile host).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#include "../../tools/budget.h"
#include "../procstate.h"
#include "hostrun.h"

#ifndef sigev_notify_thread_id /* (the C library's headers may lack it) */
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* ------------------------------------------------------------------------ */
/* host/sigprof                                                             */
/* ------------------------------------------------------------------------ */

#define SIGPROF_NS 100000 /* the timer's period */
#define SIGPROF_PASSES 3

static volatile sig_atomic_t prof_signals;
static void on_prof(int sig) {
  (void)sig;
  prof_signals++;
}

void cert_case_host_sigprof(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  host_run hr;
  if (!cert_host_run_start(cx, &hr, true)) return;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a slow system call returns EINTR */
  sigaction(SIGPROF, &sa, &old);
  timer_t tm;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  /* At the calling thread, as a sampling profiler's per-thread timer
   * does: a wait of its in a plugin's call is what a signal interrupts. */
#ifdef SIGEV_THREAD_ID
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_notify_thread_id = (pid_t)gettid();
#else
  sev.sigev_notify = SIGEV_SIGNAL;
#endif
  sev.sigev_signo = SIGPROF;
  if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) {
    cert_verdict(cx, ST_FAIL, "certifier error: timer_create: %s", strerror(errno));
    cert_host_run_free(&hr);
    return;
  }
  struct itimerspec its = {{0, SIGPROF_NS}, {0, SIGPROF_NS}};
  timer_settime(tm, 0, &its, NULL);
  size_t n = 0;
  char why[700];
  prof_signals = 0;
  /* A signal interrupts a wait only when it lands in one: the calls run
   * SIGPROF_PASSES times. */
  bool same = true;
  for (int p = 0; p < SIGPROF_PASSES && same; p++)
    same = cert_host_run_calls(cx, &hr, false, &n, why, sizeof why);
  long got = prof_signals;
  timer_delete(tm);
  sigaction(SIGPROF, &old, NULL);
  cert_host_run_free(&hr);
  if (!same) {
    cert_verdict(cx, ST_FAIL,
                 "host/sigprof: under a SIGPROF timer every %d us (a handler without "
                 "SA_RESTART; %ld signals so far), %s",
                 SIGPROF_NS / 1000, got, why);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "%zu calls give the same results while a SIGPROF timer fires at the calling "
               "thread every %d us (handler without SA_RESTART; %ld signals arrived)",
               n, SIGPROF_NS / 1000, got);
}

/* ------------------------------------------------------------------------ */
/* host/fork                                                                */
/* ------------------------------------------------------------------------ */

#define STALL_S 5.0

/* Reads the child's message from fd until it closes, while watching its
 * budget: false when it stalled (a hang) or spent the case's time. */
static bool read_child(cert_ctx *cx, pid_t pid, int fd, char *msg, size_t len) {
  proc_budget b, stall;
  budget_start(&b, pid);
  budget_start(&stall, pid);
  size_t o = 0;
  msg[0] = '\0';
  for (;;) {
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    struct timeval tv = {0, 100000};
    int r = select(fd + 1, &rd, NULL, NULL, &tv);
    if (r > 0) {
      ssize_t got = read(fd, msg + o, len - 1 - o);
      if (got <= 0) break;
      o += (size_t)got;
      msg[o] = '\0';
      if (o + 1 >= len) break;
      continue;
    }
    if (r < 0 && errno != EINTR) break;
    /* 5 s asleep without CPU time is a hang, whatever --timeout says;
     * the child's CPU time counts against --timeout. */
    if (budget_spent(&stall, STALL_S) == BUDGET_STALL || budget_spent(&b, cx->opt.timeout))
      return false;
  }
  return true;
}

void cert_case_host_fork(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  if (cert_built_with_tsan()) {
    cert_verdict(cx, ST_SKIP,
                 "a ThreadSanitizer build of bp-certify cannot start threads in a child "
                 "forked from a threaded process (the sanitizer's own limit): the release and "
                 "AddressSanitizer builds run this check");
    return;
  }
  host_run hr;
  if (!cert_host_run_start(cx, &hr, true)) return;
  int p[2];
  if (pipe(p) != 0) {
    cert_verdict(cx, ST_FAIL, "certifier error: pipe: %s", strerror(errno));
    cert_host_run_free(&hr);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    size_t n = 0;
    char why[700];
    bool same = cert_host_run_calls(cx, &hr, false, &n, why, sizeof why);
    if (same) snprintf(why, sizeof why, "ok %zu", n);
    ssize_t w = write(p[1], why, strlen(why));
    _exit(same && w > 0 ? 0 : 1);
  }
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    cert_verdict(cx, ST_FAIL, "certifier error: fork: %s", strerror(errno));
    cert_host_run_free(&hr);
    return;
  }
  char msg[800];
  bool done = read_child(cx, pid, p[0], msg, sizeof msg);
  close(p[0]);
  if (!done) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!done) {
    cert_verdict(cx, ST_FAIL,
                 "host/fork: in a child forked after calls, the plugin's next calls hang "
                 "(asleep without CPU time for %g s: waiting for a thread that fork did not "
                 "copy?)",
                 STALL_S);
    cert_host_run_free(&hr);
    return;
  }
  if (WIFSIGNALED(status)) {
    cert_verdict(cx, ST_FAIL,
                 "host/fork: in a child forked after calls, the plugin's next calls crash "
                 "(signal %d, %s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    cert_host_run_free(&hr);
    return;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strncmp(msg, "ok ", 3) != 0) {
    cert_verdict(cx, ST_FAIL, "host/fork: in a child forked after calls: %s",
                 msg[0] ? msg : "no answer");
    cert_host_run_free(&hr);
    return;
  }
  size_t n = 0;
  char why[700];
  bool same = cert_host_run_calls(cx, &hr, false, &n, why, sizeof why);
  cert_host_run_free(&hr);
  if (!same) {
    cert_verdict(cx, ST_FAIL, "host/fork: in the parent, after a fork: %s", why);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "after a fork, %s calls in the child and %zu in the parent give the results "
               "of the calls before it",
               msg + 3, n);
}

/* ------------------------------------------------------------------------ */
/* host/stack                                                               */
/* ------------------------------------------------------------------------ */

#define SMALL_STACK (256 * 1024)

typedef struct thread_job {
  cert_ctx *cx;
  host_run *hr;
  size_t n;
  bool same;
  char why[700];
} thread_job;

static void *run_job(void *arg) {
  thread_job *j = arg;
  j->same = cert_host_run_calls(j->cx, j->hr, false, &j->n, j->why, sizeof j->why);
  return NULL;
}

void cert_case_host_stack(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  host_run hr;
  if (!cert_host_run_start(cx, &hr, true)) return;
  thread_job j = {cx, &hr, 0, false, ""};
  pthread_attr_t at;
  pthread_t t;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, SMALL_STACK);
  /* A stack overflow crashes the case, which its TAP line then says. */
  int e = pthread_create(&t, &at, run_job, &j);
  pthread_attr_destroy(&at);
  if (e != 0) {
    cert_verdict(cx, ST_FAIL, "certifier error: pthread_create: %s", strerror(e));
    cert_host_run_free(&hr);
    return;
  }
  pthread_join(t, NULL);
  cert_host_run_free(&hr);
  if (!j.same) {
    cert_verdict(cx, ST_FAIL, "host/stack: on a host thread with a %d KiB stack, %s",
                 SMALL_STACK / 1024, j.why);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "%zu calls on a host thread with a %d KiB stack give the results of the main "
               "thread's",
               j.n, SMALL_STACK / 1024);
}

/* ------------------------------------------------------------------------ */
/* host/affinity                                                            */
/* ------------------------------------------------------------------------ */

void cert_case_host_affinity(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  cpu_set_t all, one;
  if (sched_getaffinity(0, sizeof all, &all) != 0) {
    cert_verdict(cx, ST_SKIP, "the CPU affinity cannot be read here: %s", strerror(errno));
    return;
  }
  int last = -1;
  for (int k = 0; k < CPU_SETSIZE; k++)
    if (CPU_ISSET(k, &all)) last = k;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  /* Loaded, and its threads started, on one CPU: the last allowed, so a
   * plugin that assumes CPUs 0 .. n-1 shows it. */
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
    cert_verdict(cx, ST_SKIP, "the CPU affinity cannot be restricted here");
    return;
  }
  host_run hr;
  bool ok = cert_host_run_start(cx, &hr, true);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
  if (!ok) return;
  size_t n = 0;
  char why[700];
  bool same = cert_host_run_calls(cx, &hr, false, &n, why, sizeof why);
  cert_host_run_free(&hr);
  if (!same) {
    cert_verdict(cx, ST_FAIL,
                 "host/affinity: the plugin was loaded and first called on a thread "
                 "restricted to CPU %d; with every CPU allowed again, %s",
                 last, why);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "%zu calls made on a thread restricted to CPU %d give the results made with "
               "every CPU allowed",
               n, last);
}

/* ------------------------------------------------------------------------ */
/* host/locale                                                              */
/* ------------------------------------------------------------------------ */

static const char *const comma_locales[] = {
    "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8", "ru_RU.utf8",
    "es_ES.UTF-8", "es_ES.utf8", "it_IT.UTF-8", "it_IT.utf8", "nl_NL.UTF-8", "pt_BR.UTF-8",
    "de_DE",       "fr_FR",      NULL};

/* Sets a locale whose decimal point is a comma; its name, or NULL. */
static const char *set_comma_locale(void) {
  for (int i = 0; comma_locales[i]; i++)
    if (setlocale(LC_ALL, comma_locales[i]) && strcmp(localeconv()->decimal_point, ",") == 0)
      return comma_locales[i];
  setlocale(LC_ALL, "C");
  return NULL;
}

/* The schema texts of the ops in hr, one a line (owned). */
static char *schemas(const host_run *hr) {
  size_t cap = 1;
  for (size_t i = 0; i < hr->nops; i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(hr->ops[i].op, &oi) == BP_OK && oi.schema) cap += strlen(oi.schema) + 1;
  }
  char *s = calloc(cap, 1);
  for (size_t i = 0, o = 0; s && i < hr->nops; i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(hr->ops[i].op, &oi) != BP_OK || !oi.schema) continue;
    o += (size_t)snprintf(s + o, cap - o, "%s\n", oi.schema);
  }
  return s;
}

/* The first line where a and b differ, into why. */
static void line_diff(const char *a, const char *b, char *why, size_t len) {
  while (*a && *b) {
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
    if (la != lb || memcmp(a, b, la) != 0) {
      snprintf(why, len, "'%.*s' became '%.*s'", (int)(la < 200 ? la : 200), a,
               (int)(lb < 200 ? lb : 200), b);
      return;
    }
    a += la + (a[la] != '\0');
    b += lb + (b[lb] != '\0');
  }
  snprintf(why, len, "the list of schemas changed");
}

void cert_case_host_locale(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  const char *loc = set_comma_locale();
  if (!loc) {
    cert_verdict(cx, ST_SKIP,
                 "no locale whose decimal point is a comma is installed (tried de_DE.UTF-8, "
                 "fr_FR.UTF-8, ru_RU.UTF-8 and others; generate one with localedef, and "
                 "point LOCPATH at it)");
    return;
  }
  /* The schemas as registered under the C locale ... */
  setlocale(LC_ALL, "C");
  host_run hr;
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
  cert_install_fault_handler(cx);
  if (!cert_host_run_build(cx, &hr, true)) return;
  char *s0 = schemas(&hr), why[700];
  bool ok = bp_plugin_unload(cx->put.plugin) == BP_OK;
  cx->put.plugin = NULL;
  /* ... and under the comma's; then the calls under both, in that load
   * (a plugin may choose its paths by measurement at load, so results
   * are compared within one load). */
  setlocale(LC_ALL, loc);
  if (!ok || !cert_load_plugin(cx) || !cert_pick_device(cx)) {
    if (!ok) cert_verdict(cx, ST_FAIL, "host/locale: bp_plugin_unload failed: %s", bp_last_error());
    setlocale(LC_ALL, "C");
    free(s0);
    cert_host_run_free(&hr);
    return;
  }
  ok = cert_host_run_refind(&hr, why, sizeof why);
  char *s1 = ok ? schemas(&hr) : NULL;
  if (ok && s0 && s1 && strcmp(s0, s1) != 0) {
    char d[600];
    line_diff(s0, s1, d, sizeof d);
    snprintf(why, sizeof why, "a schema the plugin registers differs from the C locale's: %s", d);
    ok = false;
  }
  size_t n = 0;
  if (ok) {
    setlocale(LC_ALL, "C");
    cert_host_run_calls(cx, &hr, true, &n, why, sizeof why);
    setlocale(LC_ALL, loc);
    n = 0;
    ok = cert_host_run_calls(cx, &hr, false, &n, why, sizeof why);
  }
  setlocale(LC_ALL, "C");
  free(s0);
  free(s1);
  cert_host_run_free(&hr);
  if (!ok) {
    cert_verdict(cx, ST_FAIL,
                 "host/locale: loaded and called under the locale %s (decimal comma), "
                 "against the C locale: %s",
                 loc, why);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "loaded and called under the locale %s (decimal comma), the plugin registers "
               "the C locale's schemas and %zu calls give its results",
               loc, n);
}
