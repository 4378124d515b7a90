/*
 * host/alloc.c - the one allocator of the host's own memory (alloc.h).
 *
 * With no test control armed, each function is the C library's plus one
 * relaxed load of a flag: no shared counter is written, so threads that
 * allocate never contend on a cache line.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static atomic_bool tracking; /* counts and injection armed (tests only) */
static atomic_long asked;    /* allocations asked for while tracking */
static atomic_long live;     /* blocks outstanding while tracking */
static atomic_long fail_at;  /* the value of `asked` that fails; 0: none */
static atomic_bool fail_sticky;

static inline bool armed(void) { return atomic_load_explicit(&tracking, memory_order_relaxed); }

bool bp__alloc_fails(void) {
  if (!armed()) return false;
  long n = atomic_fetch_add(&asked, 1) + 1;
  long f = atomic_load(&fail_at);
  return f > 0 && (n == f || (n > f && atomic_load(&fail_sticky)));
}

static inline void *counted(void *p) {
  if (p && armed()) atomic_fetch_add(&live, 1);
  return p;
}

void *bp__malloc(size_t n) {
  if (bp__alloc_fails()) return NULL;
  return counted(malloc(n ? n : 1));
}

void *bp__calloc(size_t n, size_t size) {
  if (bp__alloc_fails()) return NULL;
  return counted(calloc(n && size ? n : 1, n && size ? size : 1));
}

void *bp__realloc(void *p, size_t n) {
  if (!p) return bp__malloc(n);
  if (bp__alloc_fails()) return NULL;
  return realloc(p, n ? n : 1);
}

char *bp__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = bp__malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void bp__free(void *p) {
  if (p && armed()) atomic_fetch_sub(&live, 1);
  free(p);
}

void bp__alloc_test_track(bool on) { atomic_store(&tracking, on); }

void bp__alloc_test_fail(long n, bool sticky) {
  atomic_store(&fail_sticky, sticky);
  atomic_store(&fail_at, n > 0 ? atomic_load(&asked) + n : 0);
}

long bp__alloc_test_count(void) { return atomic_load(&asked); }
long bp__alloc_test_live(void) { return atomic_load(&live); }
