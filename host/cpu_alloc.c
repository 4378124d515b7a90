/*
 * host/cpu_alloc.c - the host CPU device's caching allocator: large blocks
 * kept on free lists by size class, and advised as transparent huge pages
 * (device.c's CPU device allocates through it).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------------------ */
/* The CPU caching allocator                                                */
/* ------------------------------------------------------------------------ */

/*
 * Small blocks go straight to the C allocator, which is fast for them.
 * Large blocks are kept on free lists by size class when freed, so that
 * repeated calls that allocate results of the same size reuse memory whose
 * pages are already mapped instead of paying page faults every time.
 * Classes step by a quarter of a power of two (at most 25% waste).  The
 * cache holds at most `cache_limit` bytes (BP_CPU_CACHE_BYTES, default
 * 1 GiB; 0 disables it, the default under AddressSanitizer so that stale
 * pointers into freed blocks are still caught).
 *
 * Blocks of 2 MiB and more start on a 2 MiB boundary, span whole 2 MiB
 * units, and are advised as transparent huge pages (where the kernel's
 * setting is `madvise`, the common default, they are otherwise 4 KiB
 * pages).  A kernel that walks a large tensor across its rows (softmax
 * along dim 0 of a 4096 x 4096 float32 matrix reads 4 cache lines from each
 * of 4096 rows 16 KiB apart) otherwise misses the TLB on nearly every row.
 * BP_CPU_HUGEPAGES=0 turns this off.
 */
#define CPU_ALIGN 64
#define CPU_SMALL_MAX (32u * 1024u)
#define CPU_CLASSES 256

typedef struct cpu_block {
  struct cpu_block *next;
} cpu_block;

static pthread_mutex_t cpu_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_block *cpu_free_lists[CPU_CLASSES];
static size_t cpu_cached_bytes;
static size_t cpu_cache_limit;
static bool cpu_hugepages = true;
static pthread_once_t cpu_cache_once = PTHREAD_ONCE_INIT;

#if defined(__SANITIZE_ADDRESS__)
#define CPU_CACHE_DEFAULT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPU_CACHE_DEFAULT 0
#endif
#endif
#ifndef CPU_CACHE_DEFAULT
#define CPU_CACHE_DEFAULT ((size_t)1 << 30)
#endif

static void cpu_cache_init(void) {
  const char *env = getenv("BP_CPU_CACHE_BYTES");
  cpu_cache_limit = CPU_CACHE_DEFAULT;
  if (env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == '\0') cpu_cache_limit = (size_t)v;
  }
  const char *huge = getenv("BP_CPU_HUGEPAGES");
  if (huge && strcmp(huge, "0") == 0) cpu_hugepages = false;
}

#define CPU_HUGE ((size_t)2 << 20)

/* A new large block of `rounded` bytes (see above for huge pages). */
static void *cpu_alloc_large(size_t rounded) {
#if defined(MADV_HUGEPAGE)
  if (cpu_hugepages && rounded >= CPU_HUGE) {
    size_t n = (rounded + CPU_HUGE - 1) & ~(CPU_HUGE - 1);
    void *p = aligned_alloc(CPU_HUGE, n);
    if (p) (void)madvise(p, n, MADV_HUGEPAGE); /* advice only: 4 KiB pages if refused */
    return p;
  }
#endif
  return aligned_alloc(CPU_ALIGN, (rounded + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1));
}

/* The class of a large size and the rounded size it allocates. */
static int cpu_class(size_t n, size_t *rounded) {
  int p = 63 - __builtin_clzll((unsigned long long)n); /* 2^p <= n */
  size_t base = (size_t)1 << p;
  size_t step = base >> 2;
  size_t k = (n - base + step - 1) / step; /* 0 .. 4 */
  *rounded = base + k * step;
  int cls = p * 4 + (int)k;
  return cls < CPU_CLASSES ? cls : -1;
}

void *bp__cpu_alloc_bytes(size_t nbytes) {
  if (bp__alloc_fails()) return NULL; /* a test's injected failure (alloc.h) */
  if (nbytes <= CPU_SMALL_MAX) {
    size_t n = (nbytes + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
    return aligned_alloc(CPU_ALIGN, n);
  }
  pthread_once(&cpu_cache_once, cpu_cache_init);
  size_t rounded;
  int cls = cpu_class(nbytes, &rounded);
  if (cls < 0) return NULL;
  pthread_mutex_lock(&cpu_cache_lock);
  cpu_block *b = cpu_free_lists[cls];
  if (b) {
    cpu_free_lists[cls] = b->next;
    cpu_cached_bytes -= rounded;
  }
  pthread_mutex_unlock(&cpu_cache_lock);
  if (b) return b;
  return cpu_alloc_large(rounded);
}

void bp__cpu_free_bytes(void *p, size_t nbytes) {
  if (!p) return;
  if (nbytes <= CPU_SMALL_MAX) {
    free(p);
    return;
  }
  size_t rounded;
  int cls = cpu_class(nbytes, &rounded);
  pthread_mutex_lock(&cpu_cache_lock);
  if (cls >= 0 && cpu_cached_bytes + rounded <= cpu_cache_limit) {
    cpu_block *b = p;
    b->next = cpu_free_lists[cls];
    cpu_free_lists[cls] = b;
    cpu_cached_bytes += rounded;
    p = NULL;
  }
  pthread_mutex_unlock(&cpu_cache_lock);
  free(p);
}

static void cpu_free_kept(void *base, size_t total) { bp__cpu_free_bytes(base, total); }

void bp__device_release_kept(void) { bp__guard_release_kept(cpu_free_kept); }
