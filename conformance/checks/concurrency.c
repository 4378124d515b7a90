/*
 * conformance/checks/concurrency.c - OP/concurrency, in both profiles:
 * threads calling the op at once get the single-threaded result.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* core::OP/concurrency: NTHREADS threads call the op at once, each on its
 * own copy of the same arguments, NITER times, and every result is the
 * single-threaded one: on a small sample (many calls in flight at once)
 * and on a large one, which takes the kernel's threaded or blocked path. */
#define NTHREADS 8
static struct {
  const sample *s;
  int iters;
  const unsigned char *want;
  size_t len;
  pthread_mutex_t lock;
  char fail[400];
} conc = {NULL, 0, NULL, 0, PTHREAD_MUTEX_INITIALIZER, ""};

/* The state above, as a fresh process has it (before each case in a
 * worker). */
void concurrency_reset(void) {
  conc.s = NULL;
  conc.iters = 0;
  conc.want = NULL;
  conc.len = 0;
  conc.fail[0] = '\0';
}

static void *conc_thread(void *arg) {
  intptr_t id = (intptr_t)arg;
  for (int it = 0; it < conc.iters; it++) {
    argset as;
    char why[400] = "";
    if (!materialise(conc.s, &cx.cur.si, M_PLAIN, &as)) {
      snprintf(why, sizeof why, "thread %d: certifier error: cannot build the arguments: %s",
               (int)id, bp_last_error());
    } else if (bp_call(cx.cur.op, &as.st) != BP_OK) {
      snprintf(why, sizeof why, "thread %d, call %d failed: %s", (int)id, it, bp_last_error());
    } else {
      size_t len;
      unsigned char *b = result_bytes(&as.st, &len);
      long at = len == conc.len ? first_diff(b, conc.want, len) : 0;
      if (at >= 0)
        snprintf(why, sizeof why,
                 "thread %d, call %d: the result differs from the single-threaded one (byte %ld)",
                 (int)id, it, at);
      free(b);
      bp_stack_release(&as.st);
    }
    argset_free(&as);
    pthread_mutex_lock(&conc.lock);
    if (*why && !*conc.fail) snprintf(conc.fail, sizeof conc.fail, "%s", why);
    bool stop = *conc.fail != '\0';
    pthread_mutex_unlock(&conc.lock);
    if (stop) break;
  }
  return NULL;
}

/* Runs the threads on s; 1 when all agree, -1 when the op refused s
 * (outside core), 0 after a verdict. */
static int race(const sample *s, int iters) {
  argset as;
  int got = call_on(s, M_PLAIN, &as, "concurrency");
  if (got <= 0) return got;
  size_t len;
  unsigned char *want = result_bytes(&as.st, &len);
  bp_stack_release(&as.st);
  argset_free(&as);
  conc.s = s;
  conc.iters = iters;
  conc.want = want;
  conc.len = len;
  pthread_t th[NTHREADS];
  int started = 0;
  for (intptr_t i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, conc_thread, (void *)i) == 0) started++;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(want);
  char desc[300];
  sample_desc(s, desc, sizeof desc);
  if (started < NTHREADS) {
    verdict(ST_FAIL, "concurrency: certifier error: could start only %d of %d threads", started,
            NTHREADS);
    return 0;
  }
  if (*conc.fail) {
    verdict(ST_FAIL, "concurrency: %s: %s", desc, conc.fail);
    return 0;
  }
  return guard_ok("bounds", s) ? 1 : 0;
}

void case_concurrency(const certify_case *c) {
  if (!op_setup(c)) return;
  if (cx.cur.oi.flags & BP_OP_NONDETERMINISTIC) {
    verdict(ST_SKIP, "%s is declared nondeterministic: results cannot be compared", c->op);
    return;
  }
  size_t n, nl = 0;
  sample *set = op_check_set(&n), *large = NULL;
  if (!set) return;
  size_t pick = 0; /* a length past a vector loop's tail, when there is one */
  for (size_t k = 0; k < n; k++)
    if (strcmp(set[k].label, "length 129") == 0) pick = k;
  int small = race(&set[pick], 24);
  if (cx.cur.r >= 0 && small > 0) {
    gen_opts o = op_gen_opts();
    large = gen_core_set(cx.cur.r, BP_FLOAT32, SK_LARGE, &o, &nl);
  }
  int big = nl ? race(&large[0], 3) : 1;
  sample_set_free(set, n);
  sample_set_free(large, nl);
  if (small == 0 || big == 0) return;
  if (small < 0 && all_refused(c, 1)) return;
  verdict(ST_PASS, "%d threads gave the single-threaded result: 24 calls each on a small sample%s",
          NTHREADS, nl ? ", 3 each on a large one" : "");
}
