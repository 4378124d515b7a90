/*
 * conformance/checks/cycles.c - host/cycles (--profile host), in a fresh
 * process: a thousand cycles of load, calls, unload, as a host that
 * discovers and drops plugins for the life of a long process does.  Each
 * cycle's calls (every op's first check sample) are made by a new host
 * thread, which exits only after the unload, so that anything the plugin
 * left on it (a thread-specific destructor, a TLS block) runs after its
 * code is gone; each must give the first cycle's results.  Between the
 * 20th cycle and the last nothing may grow: open file descriptors,
 * threads, thread-specific keys (pthread_key_create), mappings and heap
 * memory.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "../procstate.h"
#include "hostrun.h"

#define CYCLES 1000
#define WARM 20
/* Heap growth from the 20th cycle to the last that is not a leak: the
 * allocator's own bookkeeping moves a little. */
#define HEAP_SLACK (256 * 1024)

typedef struct usage {
  int fds, threads;
  long key;
  map_state maps;
  long long heap;
} usage;

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = -1; /* the directory's own */
  while (readdir(d)) n++;
  closedir(d);
  return n - 2; /* . and .. */
}

static void usage_get(usage *u) {
  u->fds = count_fds();
  u->threads = cert_proc_threads();
  pthread_key_t k;
  u->key = -1;
  if (pthread_key_create(&k, NULL) == 0) {
    u->key = (long)k;
    pthread_key_delete(k);
  }
  cert_map_state_get(NULL, &u->maps);
  struct mallinfo2 mi = mallinfo2();
  u->heap = (long long)(mi.uordblks + mi.hblkhd);
}

/* The host thread of one cycle: makes the calls, then waits for the
 * unload before it exits. */
typedef struct cycle_thread {
  cert_ctx *cx;
  host_run *hr;
  bool record;
  size_t n;
  bool same;
  char why[700];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stage; /* 0 calling, 1 called, 2 may exit */
} cycle_thread;

static void *cycle_main(void *arg) {
  cycle_thread *t = arg;
  t->same = cert_host_run_calls(t->cx, t->hr, t->record, &t->n, t->why, sizeof t->why);
  pthread_mutex_lock(&t->mu);
  t->stage = 1;
  pthread_cond_broadcast(&t->cv);
  while (t->stage != 2) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

/* One cycle; false after a verdict. */
static bool cycle(cert_ctx *cx, host_run *hr, int k, size_t *calls) {
  char why[700];
  cx->put.plugin = NULL;
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return false;
  if (k == 1) {
    if (!cert_host_run_build(cx, hr, false)) return false;
  } else if (!cert_host_run_refind(hr, why, sizeof why)) {
    cert_verdict(cx, ST_FAIL, "host/cycles: cycle %d: %s", k, why);
    return false;
  }
  cycle_thread t = {
      cx, hr, k == 1, 0, true, "", PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  pthread_t th;
  if (pthread_create(&th, NULL, cycle_main, &t) != 0) {
    cert_verdict(cx, ST_FAIL, "host/cycles: cycle %d: a host thread cannot be started", k);
    return false;
  }
  pthread_mutex_lock(&t.mu);
  while (t.stage != 1) pthread_cond_wait(&t.cv, &t.mu);
  pthread_mutex_unlock(&t.mu);
  bp_status st = bp_plugin_unload(cx->put.plugin);
  cx->put.plugin = NULL;
  pthread_mutex_lock(&t.mu);
  t.stage = 2;
  pthread_cond_broadcast(&t.cv);
  pthread_mutex_unlock(&t.mu);
  pthread_join(th, NULL);
  *calls += t.n;
  if (!t.same) {
    cert_verdict(cx, ST_FAIL, "host/cycles: cycle %d of load, calls, unload: %s", k, t.why);
    return false;
  }
  if (st != BP_OK) {
    cert_verdict(cx, ST_FAIL, "host/cycles: cycle %d: bp_plugin_unload failed: %s", k,
                 bp_last_error());
    return false;
  }
  return true;
}

/* Whether u grew from u0 (between cycles `from` and `to`): false after
 * a verdict.  With heap, the heap too. */
static bool no_growth(cert_ctx *cx, const usage *u0, const usage *u, int from, int to, bool heap) {
  const int span = to - from;
  if (u0->fds >= 0 && u->fds > u0->fds) {
    cert_verdict(cx, ST_FAIL,
                 "host/cycles: %d more file descriptor(s) open after cycle %d than after "
                 "cycle %d: each load, call and unload leaves descriptors open",
                 u->fds - u0->fds, to, from);
    return false;
  }
  if (cert_proc_threads_meaningful() && u0->threads > 0 && u->threads > u0->threads) {
    cert_verdict(cx, ST_FAIL, "host/cycles: %d more thread(s) after cycle %d than after cycle %d",
                 u->threads - u0->threads, to, from);
    return false;
  }
  if (u0->key >= 0 && (u->key > u0->key || u->key < 0)) {
    if (u->key < 0)
      cert_verdict(cx, ST_FAIL,
                   "host/cycles: after cycle %d no thread-specific key is left "
                   "(pthread_key_create fails): the plugin's loads used them up",
                   to);
    else
      cert_verdict(cx, ST_FAIL,
                   "host/cycles: thread-specific keys leak: the next free pthread key was "
                   "%ld after cycle %d and %ld after cycle %d (about %.2f a cycle; a process "
                   "has 1024)",
                   u0->key, from, u->key, to, (double)(u->key - u0->key) / span);
    return false;
  }
  if (cert_map_state_meaningful() && u->maps.count > u0->maps.count) {
    cert_verdict(cx, ST_FAIL,
                 "host/cycles: %ld more mapping(s) (%lld bytes) after cycle %d than after "
                 "cycle %d",
                 u->maps.count - u0->maps.count, u->maps.bytes - u0->maps.bytes, to, from);
    return false;
  }
  if (heap && cert_map_state_meaningful() && u->heap - u0->heap > HEAP_SLACK) {
    cert_verdict(cx, ST_FAIL,
                 "host/cycles: the heap grew by %lld bytes from cycle %d to cycle %d (about "
                 "%lld bytes a cycle)",
                 u->heap - u0->heap, from, to, (u->heap - u0->heap) / span);
    return false;
  }
  return true;
}

void cert_case_host_cycles(cert_ctx *cx, const certify_case *c) {
  cert_rng_seed_name(cx, c->name);
  host_run hr;
  memset(&hr, 0, sizeof hr);
  usage u0 = {0}, u;
  size_t calls = 0;
  for (int k = 1; k <= CYCLES; k++) {
    if (!cycle(cx, &hr, k, &calls)) {
      cert_host_run_free(&hr);
      return;
    }
    if (k == WARM) usage_get(&u0);
    /* Every 100 cycles what may not grow at all, so that a leak shows
     * early; the heap, which moves a little, over the whole run. */
    if (k > WARM && (k - WARM) % 100 == 0 && k < CYCLES) {
      usage_get(&u);
      if (!no_growth(cx, &u0, &u, WARM, k, false)) {
        cert_host_run_free(&hr);
        return;
      }
    }
  }
  cert_host_run_free(&hr);
  usage_get(&u);
  if (!no_growth(cx, &u0, &u, WARM, CYCLES, true)) return;
  cert_verdict(cx, ST_PASS,
               "%d cycles of load, %zu calls in all on host threads that exit after the "
               "unload, unload: no file descriptor, thread, key, mapping or heap growth "
               "from cycle %d on%s",
               CYCLES, calls, WARM,
               cert_map_state_meaningful()
                   ? ""
                   : " (mappings, heap and threads not measured: a sanitizer "
                     "runtime keeps its own)");
}
