/*
 * host/rcu.c - grace periods: calls run without locks, unload waits for them.
 *
 * Every thread that calls into the registry has a reader record with a
 * sequence number that is odd while the thread is inside a call: the
 * outermost call increments it on entry and on exit, with plain stores.  An unloader first
 * unpublishes what it removes, then runs bp__synchronize(), which issues a
 * process-wide memory barrier (membarrier(2)) and waits until every reader
 * that was inside a call has left it.  After that, nothing can still use
 * the removed records or the plugin's code.
 *
 * membarrier makes the reader side cheap: the barrier that orders "I am in
 * a call" before "I read the dispatch table" is paid by the rare unloader,
 * not by every call.  Where membarrier is not available (old kernels,
 * valgrind), readers fall back to a full fence.
 *
 * Records are never freed: a thread that exits marks its record unused and
 * a later thread takes it over, so the unloader can walk the list without
 * a lock.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(HAVE_LINUX_MEMBARRIER_H)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

static _Atomic(bp__reader *) readers;
static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;
static bool have_membarrier;

__thread bp__reader *bp__tl_reader __attribute__((tls_model("initial-exec")));
bool bp__readers_fence = true;
#if defined(__SANITIZE_THREAD__)
atomic_uint bp__fence_word;
#endif

static void reader_exit_thread(void *p) {
  bp__reader *r = p;
  /* A thread only exits outside calls, so seq is even here; the next
   * owner continues from it. */
  r->depth = 0;
  atomic_store_explicit(&r->in_use, false, memory_order_release);
}

static void reader_init(void) {
  pthread_key_create(&reader_key, reader_exit_thread);
#if defined(HAVE_LINUX_MEMBARRIER_H) && defined(SYS_membarrier)
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
    have_membarrier = true;
#endif
  bp__readers_fence = !have_membarrier;
}

bp__reader *bp__reader_register(void) {
  pthread_once(&reader_once, reader_init);
  bp__reader *r;
  /* Reuse the record of a thread that has exited. */
  for (r = atomic_load_explicit(&readers, memory_order_acquire); r; r = r->next) {
    bool expected = false;
    if (atomic_compare_exchange_strong(&r->in_use, &expected, true)) break;
  }
  if (!r) {
    r = bp__calloc(1, sizeof *r);
    if (!r) return NULL;
    atomic_init(&r->in_use, true);
    bp__reader *head = atomic_load_explicit(&readers, memory_order_relaxed);
    do {
      r->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&readers, &head, r, memory_order_release,
                                                    memory_order_relaxed));
  }
  /* Fixed by reader_init(), before any reader exists. */
  r->fence = bp__readers_fence;
  pthread_setspecific(reader_key, r);
  bp__tl_reader = r;
  /* The thread's first call: its error buffer too, so that later calls,
   * failing ones included, allocate nothing. */
  bp__error_prepare();
  return r;
}

void bp__synchronize(void) {
  pthread_once(&reader_once, reader_init);
#if defined(HAVE_LINUX_MEMBARRIER_H) && defined(SYS_membarrier)
  if (have_membarrier)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  else
#endif
    BP__FULL_FENCE();
  bp__reader *self = bp__tl_reader;
  for (bp__reader *r = atomic_load_explicit(&readers, memory_order_acquire); r; r = r->next) {
    /* The calling thread may itself be inside a call (a kernel that
     * unloads a plugin); its own nesting cannot end while it waits. */
    if (r == self) continue;
    /* An odd sequence number means "inside a call"; any change means that
     * call is over. */
    uint64_t seq = atomic_load_explicit(&r->seq, memory_order_acquire);
    if (!(seq & 1)) continue;
    unsigned spins = 0;
    while (atomic_load_explicit(&r->seq, memory_order_acquire) == seq) {
      if (++spins < 64) {
        sched_yield();
      } else {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
      }
    }
  }
}
