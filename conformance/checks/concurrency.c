/*
 * conformance/checks/concurrency.c - OP/concurrency, in both profiles:
 * threads calling the op at once get the single-threaded result.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* OP/concurrency: NTHREADS threads call the op at once, each on its own
 * copy of the same arguments, NITER times, and every result is the
 * single-threaded one: on a small sample (many calls in flight at once)
 * and on a large one, which takes the kernel's threaded or blocked path.
 * The case runs in a fresh process, and the threads call first, before
 * any single-threaded call: a kernel whose lazy one-time set-up races
 * shows it only when its first calls are concurrent.  Each thread keeps
 * its first result and compares its later ones with it; the first ones
 * are then compared with the single-threaded result.  On the large sample
 * the odd threads' first calls are made while the even threads' are
 * computing, so that a lazy set-up that rebuilds shared state per thread
 * tramples on calls in flight. */
#define NTHREADS 8
static struct {
  const sample *s;
  int iters;
  bool stagger;        /* odd threads make their first call late */
  atomic_bool calling; /* an even thread has made its first call */
  unsigned char *first[NTHREADS]; /* each thread's first result */
  size_t len[NTHREADS];
  pthread_mutex_t lock;
  char fail[400];
} conc = {NULL, 0, false, false, {NULL}, {0}, PTHREAD_MUTEX_INITIALIZER, ""};

/* The state above, as a fresh process has it (before each case in a
 * worker). */
void cert_concurrency_reset(void) {
  conc.s = NULL;
  conc.iters = 0;
  for (int i = 0; i < NTHREADS; i++) conc.first[i] = NULL, conc.len[i] = 0;
  conc.fail[0] = '\0';
}

/* All the threads start their first calls together. */
static pthread_barrier_t start_line;

/* What a thread is handed: the run's context and its number. */
typedef struct conc_arg {
  cert_ctx *cx;
  int id;
} conc_arg;

static void *conc_thread(void *arg_) {
  const conc_arg *arg = arg_;
  cert_ctx *cx = arg->cx;
  int id = arg->id;
  for (int it = 0; it < conc.iters; it++) {
    argset as;
    char why[400] = "";
    bool made = cert_materialise(cx, conc.s, &cx->cur.si, M_PLAIN, &as);
    if (it == 0) pthread_barrier_wait(&start_line);
    /* Staggered: the odd threads' first calls (and any lazy set-up they
     * run) come while the even threads' first calls are computing. */
    if (it == 0 && conc.stagger && (id & 1)) {
      while (!atomic_load(&conc.calling)) sched_yield();
      struct timespec late = {0, 300 * 1000};
      nanosleep(&late, NULL);
    } else if (it == 0 && conc.stagger) {
      atomic_store(&conc.calling, true);
    }
    if (!made) {
      snprintf(why, sizeof why, "thread %d: certifier error: cannot build the arguments: %s",
               (int)id, bp_last_error());
    } else if (bp_call(cx->cur.op, &as.st) != BP_OK) {
      snprintf(why, sizeof why, "thread %d, call %d failed: %s", (int)id, it, bp_last_error());
    } else {
      size_t len;
      unsigned char *b = cert_result_bytes(&as.st, &len);
      if (it == 0) {
        conc.first[id] = b;
        conc.len[id] = len;
        b = NULL;
      } else {
        long at = len == conc.len[id] ? cert_first_diff(b, conc.first[id], len) : 0;
        if (at >= 0)
          snprintf(why, sizeof why,
                   "thread %d, call %d: the result differs from the thread's first one (byte "
                   "%ld)",
                   (int)id, it, at);
      }
      free(b);
      bp_stack_release(&as.st);
    }
    cert_argset_free(&as);
    pthread_mutex_lock(&conc.lock);
    if (*why && !*conc.fail) snprintf(conc.fail, sizeof conc.fail, "%s", why);
    bool stop = *conc.fail != '\0';
    pthread_mutex_unlock(&conc.lock);
    if (stop) break;
  }
  return NULL;
}

static void free_firsts(void) {
  for (int i = 0; i < NTHREADS; i++) {
    free(conc.first[i]);
    conc.first[i] = NULL;
  }
}

/* Runs the threads on s, then the single-threaded call; 1 when all agree,
 * -1 when the op refused s (outside core), 0 after a verdict. */
static int race(cert_ctx *cx, const sample *s, int iters, bool stagger) {
  char desc[300];
  cert_sample_desc(s, desc, sizeof desc);
  argset as;
  /* An op outside core may refuse the sample: then no thread runs. */
  if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as) || cert_op_set_refuses(cx, &as)) {
    cert_argset_free(&as);
    return -1;
  }
  cert_argset_free(&as);
  conc.s = s;
  conc.iters = iters;
  conc.stagger = stagger;
  atomic_store(&conc.calling, false);
  conc.fail[0] = '\0';
  pthread_t th[NTHREADS];
  conc_arg args[NTHREADS];
  int started = 0;
  if (pthread_barrier_init(&start_line, NULL, NTHREADS) != 0) {
    cert_verdict(cx, ST_FAIL, "concurrency: certifier error: pthread_barrier_init failed");
    return 0;
  }
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (conc_arg){cx, i};
    if (pthread_create(&th[started], NULL, conc_thread, &args[i]) == 0) started++;
  }
  if (started < NTHREADS) {
    /* The barrier may wait for threads that never started. */
    for (int i = 0; i < started; i++) pthread_cancel(th[i]);
  }
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start_line);
  if (started < NTHREADS) {
    free_firsts();
    cert_verdict(cx, ST_FAIL, "concurrency: certifier error: could start only %d of %d threads",
                 started, NTHREADS);
    return 0;
  }
  if (*conc.fail) {
    free_firsts();
    if (cx->cur.r < 0 && strstr(conc.fail, "failed:"))
      return cert_refused(cx, s, "concurrency") ? -1 : 0;
    cert_verdict(cx, ST_FAIL, "concurrency: %s: %s", desc, conc.fail);
    return 0;
  }
  int got = cert_call_on(cx, s, M_PLAIN, &as, "concurrency");
  if (got <= 0) {
    free_firsts();
    return got;
  }
  size_t len;
  unsigned char *want = cert_result_bytes(&as.st, &len);
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  int bad = -1;
  long at = -1;
  for (int i = 0; i < NTHREADS && bad < 0; i++) {
    at = conc.len[i] == len ? cert_first_diff(conc.first[i], want, len) : 0;
    if (at >= 0) bad = i;
  }
  free(want);
  free_firsts();
  if (bad >= 0) {
    cert_verdict(cx, ST_FAIL,
                 "concurrency: %s: thread %d's first call, made while the other threads "
                 "called too, differs from the single-threaded result (byte %ld)",
                 desc, bad, at);
    return 0;
  }
  return cert_guard_ok(cx, "bounds", s) ? 1 : 0;
}

void cert_case_concurrency(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  if (cx->cur.oi.flags & BP_OP_NONDETERMINISTIC) {
    cert_verdict(cx, ST_SKIP, "%s is declared nondeterministic: results cannot be compared", c->op);
    return;
  }
  size_t n, nl = 0;
  sample *set = cert_op_check_set(cx, &n), *large = NULL;
  if (!set) return;
  size_t pick = 0; /* a length past a vector loop's tail, when there is one */
  for (size_t k = 0; k < n; k++)
    if (strcmp(set[k].label, "length 129") == 0) pick = k;
  int small = race(cx, &set[pick], 24, false);
  if (cx->cur.r >= 0 && small > 0) {
    gen_opts o = cert_op_gen_opts(cx);
    large = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_LARGE, &o, &nl);
    nl = cert_keep_declared(cx, large, nl);
  }
  /* Large: the odd threads' first calls staggered behind the even ones'. */
  int big = nl ? race(cx, &large[0], 3, true) : 1;
  cert_sample_set_free(set, n);
  cert_sample_set_free(large, nl);
  if (small == 0 || big == 0) return;
  if (small < 0 && cert_all_refused(cx, c, 1)) return;
  cert_verdict(cx, ST_PASS,
               "%d threads gave the single-threaded result: 24 calls each on a small sample%s",
               NTHREADS, nl ? ", 3 each on a large one (first calls staggered)" : "");
}
