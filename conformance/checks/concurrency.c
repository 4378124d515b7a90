/*
 * conformance/checks/concurrency.c - core::OP/concurrency (--profile
 * full): threads calling the op at once get the single-threaded result.
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

/* core::OP/concurrency: 4 threads call the op at once, each on its own
 * copy of the same arguments, and all get the single-threaded result. */
#define NTHREADS 4
#define NITER 16
static struct {
  const unsigned char *want;
  size_t len;
  pthread_mutex_t lock;
  char fail[400];
} conc = {NULL, 0, PTHREAD_MUTEX_INITIALIZER, ""};
static sample conc_sample;

/* The state above, as a fresh process has it (before each case in a
 * worker). */
void concurrency_reset(void) {
  conc.want = NULL;
  conc.len = 0;
  conc.fail[0] = '\0';
  memset(&conc_sample, 0, sizeof conc_sample);
}

static void *conc_thread(void *arg) {
  intptr_t id = (intptr_t)arg;
  for (int it = 0; it < NITER; it++) {
    argset as;
    char why[400] = "";
    if (!materialise(&conc_sample, &cx.cur.si, M_PLAIN, &as)) {
      snprintf(why, sizeof why, "thread %d: cannot build the arguments: %s", (int)id,
               bp_last_error());
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
    if (*why) {
      pthread_mutex_lock(&conc.lock);
      if (!*conc.fail) snprintf(conc.fail, sizeof conc.fail, "%s", why);
      pthread_mutex_unlock(&conc.lock);
      break;
    }
  }
  return NULL;
}

void case_concurrency(const certify_case *c) {
  if (!cx.opt.full) {
    verdict(ST_SKIP, "the concurrency check belongs to --profile full");
    return;
  }
  if (!op_setup(c)) return;
  if (cx.cur.oi.flags & BP_OP_NONDETERMINISTIC) {
    verdict(ST_SKIP, "%s is declared nondeterministic: results cannot be compared", c->op);
    return;
  }
  argset as;
  int got = call_sample(c, SK_BASIC, M_PLAIN, &conc_sample, &as, "concurrency");
  if (got == 0 || (got < 0 && all_refused(c, 1))) return;
  size_t len;
  unsigned char *want = result_bytes(&as.st, &len);
  bp_stack_release(&as.st);
  argset_free(&as);
  conc.want = want;
  conc.len = len;
  pthread_t th[NTHREADS];
  int started = 0;
  for (intptr_t i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, conc_thread, (void *)i) == 0) started++;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(want);
  sample_free(&conc_sample);
  if (started < NTHREADS)
    verdict(ST_FAIL, "concurrency: could start only %d of %d threads", started, NTHREADS);
  else if (*conc.fail)
    verdict(ST_FAIL, "concurrency: %s", conc.fail);
  else
    verdict(ST_PASS, "%d threads x %d calls gave the single-threaded result", NTHREADS, NITER);
}

