/*
 * host/guard.c - guarded device allocations, for certifying kernels.
 *
 * With BP_ALLOC_GUARD=1 in the environment (read once, at the first
 * allocation of the process), every block that libbackplane allocates
 * from a device, on any device type, gets BP__GUARD_BYTES of canary before
 * it and at least as many after it (the tail is padded so that the next
 * guard starts 64-byte aligned).  The canaries are written when the block
 * is allocated and checked when it is freed: a kernel that writes before
 * or past a result or a scratch tensor it allocated through the host is
 * caught, whichever device it runs on.  Canaries on a device the CPU
 * cannot address are written and read through the device's copy().
 *
 * A damaged canary is reported as one line, written with one write(), to
 * the file descriptor that BP_ALLOC_GUARD_FD names when the block is freed
 * (standard error when it is unset); the block is then freed as usual.
 * bp-certify reads that descriptor after each call.
 *
 * The guard also makes two things that a kernel must not rely on happen on
 * purpose, so that a kernel that does rely on them fails where it is
 * certified rather than where it is used:
 *   - every block is poisoned before anyone sees it: filled with the byte
 *     BP_ALLOC_POISON names (0 to 255, decimal or 0x hex; read at each
 *     allocation, so a process may change it between calls), 0xff when it
 *     is unset: NaN in every float dtype, -1 in the signed integers.  A
 *     kernel that reads its result before writing it (that accumulates
 *     into it without clearing it) gives a result that depends on it;
 *   - freed addresses come back: the last tensor handles and host-CPU
 *     blocks freed are kept, and the next allocation of the same size
 *     takes the one freed last.  A kernel that keeps something keyed by a
 *     tensor's address (a handle or a data pointer) past that tensor's
 *     life then meets a new tensor at the old address.  (Not in an
 *     AddressSanitizer build, whose quarantine exists to keep freed
 *     addresses from coming back.)  Unloading a plugin frees what is kept.
 *     A kept handle is marked freed, so that a release of it (one release
 *     too many, which the C library would otherwise catch as a double
 *     free) is reported and aborts the process.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool guard_on;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void guard_init(void) {
  const char *env = getenv("BP_ALLOC_GUARD");
  guard_on = env && strcmp(env, "1") == 0;
}

bool bp__guard_enabled(void) {
  pthread_once(&guard_once, guard_init);
  return guard_on;
}

/* The tail canary: from the block's end to the next multiple of 64, and
 * BP__GUARD_BYTES more. */
static size_t tail_bytes(size_t nbytes) { return (64 - nbytes % 64) % 64 + BP__GUARD_BYTES; }

size_t bp__guard_total(size_t nbytes) { return BP__GUARD_BYTES + nbytes + tail_bytes(nbytes); }

static unsigned char canary(size_t i) { return (unsigned char)(0x5Cu ^ (i * 131u)); }

/* The poison of a fresh block: BP_ALLOC_POISON, or 0xff. */
static unsigned char poison_byte(void) {
  const char *env = getenv("BP_ALLOC_POISON");
  if (!env || !*env) return 0xff;
  char *end;
  long v = strtol(env, &end, 0);
  return *end == '\0' && v >= 0 && v <= 255 ? (unsigned char)v : 0xff;
}

/* Fills buf with the canary of [from, from + n) of a block's mapping. */
static void fill(unsigned char *buf, size_t from, size_t n) {
  for (size_t i = 0; i < n; i++) buf[i] = canary(from + i);
}

static const bp_device cpu0 = {BP_DEVICE_CPU, 0};

/* Copies n bytes between the host buffer `host` and device memory `dev`;
 * to_device says which way. */
static bp_status move(const bp_device_iface *iface, bp_device d, void *dev, unsigned char *host,
                      size_t n, bool to_device) {
  if (iface->flags & BP_DEVICE_HOST_VISIBLE && d.type == BP_DEVICE_CPU) {
    if (to_device) memcpy(dev, host, n);
    else memcpy(host, dev, n);
    return BP_OK;
  }
  return to_device ? iface->copy(iface->user_data, dev, d, host, cpu0, n)
                   : iface->copy(iface->user_data, host, cpu0, dev, d, n);
}

/* Fills the block of nbytes at dev with the poison. */
static bp_status poison(const bp_device_iface *iface, bp_device d, unsigned char *dev,
                        size_t nbytes) {
  unsigned char byte = poison_byte();
  if (iface->flags & BP_DEVICE_HOST_VISIBLE && d.type == BP_DEVICE_CPU) {
    memset(dev, byte, nbytes);
    return BP_OK;
  }
  size_t chunk = nbytes < 65536 ? nbytes : 65536;
  unsigned char *buf = bp__malloc(chunk ? chunk : 1);
  if (!buf) return bp__error(BP_ERR_OUT_OF_MEMORY, "alloc guard: out of memory");
  memset(buf, byte, chunk);
  bp_status st = BP_OK;
  for (size_t off = 0; off < nbytes && !st; off += chunk)
    st = move(iface, d, dev + off, buf, nbytes - off < chunk ? nbytes - off : chunk, true);
  bp__free(buf);
  return st;
}

bp_status bp__guard_arm(const bp_device_iface *iface, bp_device d, void *base, size_t nbytes) {
  size_t tail = tail_bytes(nbytes);
  unsigned char *buf = bp__malloc(tail > BP__GUARD_BYTES ? tail : BP__GUARD_BYTES);
  if (!buf) return bp__error(BP_ERR_OUT_OF_MEMORY, "alloc guard: out of memory");
  fill(buf, 0, BP__GUARD_BYTES);
  bp_status st = move(iface, d, base, buf, BP__GUARD_BYTES, true);
  if (!st) {
    fill(buf, BP__GUARD_BYTES + nbytes, tail);
    st = move(iface, d, (char *)base + BP__GUARD_BYTES + nbytes, buf, tail, true);
  }
  bp__free(buf);
  if (!st) st = poison(iface, d, (unsigned char *)base + BP__GUARD_BYTES, nbytes);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Freed addresses, reused on purpose                                       */
/* ------------------------------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define GUARD_REUSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_REUSE 0
#endif
#endif
#ifndef GUARD_REUSE
#define GUARD_REUSE 1
#endif

/* What is kept: a few blocks of each kind, the last freed last. */
#define KEEP_BLOCKS 64
#define KEEP_BYTES ((size_t)64 << 20)

typedef struct kept {
  void *p;
  size_t n;
} kept;

static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static kept kept_handles[KEEP_BLOCKS], kept_cpu[KEEP_BLOCKS];
static size_t nkept_handles, nkept_cpu, kept_cpu_bytes;

/* The block of n bytes freed last, taken from v; NULL when none. */
static void *take(kept *v, size_t *nv, size_t n, size_t *bytes) {
  void *p = NULL;
  pthread_mutex_lock(&keep_lock);
  for (size_t i = *nv; i-- > 0;) {
    if (v[i].n != n) continue;
    p = v[i].p;
    memmove(&v[i], &v[i + 1], (*nv - i - 1) * sizeof *v);
    (*nv)--;
    if (bytes) *bytes -= n;
    break;
  }
  pthread_mutex_unlock(&keep_lock);
  return p;
}

/* Keeps p (n bytes) in v; false when v is full (the caller frees it). */
static bool keep(kept *v, size_t *nv, void *p, size_t n, size_t *bytes) {
  bool done = false;
  pthread_mutex_lock(&keep_lock);
  if (*nv < KEEP_BLOCKS && (!bytes || *bytes + n <= KEEP_BYTES)) {
    v[(*nv)++] = (kept){p, n};
    if (bytes) *bytes += n;
    done = true;
  }
  pthread_mutex_unlock(&keep_lock);
  return done;
}

void *bp__guard_reuse_handle(size_t n) {
  if (!GUARD_REUSE || !bp__guard_enabled()) return NULL;
  return take(kept_handles, &nkept_handles, n, NULL);
}

bool bp__guard_keep_handle(void *p, size_t n) {
  if (!GUARD_REUSE || !bp__guard_enabled()) return false;
  return keep(kept_handles, &nkept_handles, p, n, NULL);
}

void *bp__guard_reuse_cpu(size_t total) {
  if (!GUARD_REUSE) return NULL;
  return take(kept_cpu, &nkept_cpu, total, &kept_cpu_bytes);
}

bool bp__guard_keep_cpu(void *base, size_t total) {
  if (!GUARD_REUSE) return false;
  return keep(kept_cpu, &nkept_cpu, base, total, &kept_cpu_bytes);
}

void bp__guard_release_kept(void (*free_cpu)(void *base, size_t total)) {
  pthread_mutex_lock(&keep_lock);
  for (size_t i = 0; i < nkept_handles; i++) bp__free(kept_handles[i].p);
  for (size_t i = 0; i < nkept_cpu; i++) free_cpu(kept_cpu[i].p, kept_cpu[i].n);
  nkept_handles = nkept_cpu = 0;
  kept_cpu_bytes = 0;
  pthread_mutex_unlock(&keep_lock);
}

/* Writes one report line to BP_ALLOC_GUARD_FD (or standard error). */
static void report(const char *line) {
  const char *env = getenv("BP_ALLOC_GUARD_FD");
  int fd = STDERR_FILENO;
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v >= 0 && v < 65536) fd = (int)v;
  }
  size_t n = strlen(line);
  while (n) {
    ssize_t w = write(fd, line, n);
    if (w <= 0) return;
    line += w;
    n -= (size_t)w;
  }
}

void bp__guard_check(const bp_device_iface *iface, const char *type_name, bp_device d, void *base,
                     size_t nbytes) {
  size_t tail = tail_bytes(nbytes);
  size_t len = tail > BP__GUARD_BYTES ? tail : BP__GUARD_BYTES;
  unsigned char *buf = bp__malloc(len);
  if (!buf) return;
  char line[300];
  if (move(iface, d, base, buf, BP__GUARD_BYTES, false) == BP_OK) {
    size_t first = BP__GUARD_BYTES;
    for (size_t i = 0; i < BP__GUARD_BYTES; i++)
      if (buf[i] != canary(i)) {
        first = i;
        break;
      }
    if (first < BP__GUARD_BYTES) {
      snprintf(line, sizeof line,
               "backplane alloc guard: %s:%d: a block of %zu bytes had its canary overwritten "
               "%zu byte(s) before its start\n",
               type_name, (int)d.index, nbytes, BP__GUARD_BYTES - first);
      report(line);
    }
  }
  if (move(iface, d, (char *)base + BP__GUARD_BYTES + nbytes, buf, tail, false) == BP_OK) {
    for (size_t i = 0; i < tail; i++)
      if (buf[i] != canary(BP__GUARD_BYTES + nbytes + i)) {
        snprintf(line, sizeof line,
                 "backplane alloc guard: %s:%d: a block of %zu bytes had its canary overwritten "
                 "at byte %zu past its end\n",
                 type_name, (int)d.index, nbytes, i);
        report(line);
        break;
      }
  }
  bp__free(buf);
}

void bp__guard_bad_release(const void *t) {
  /* Without the guard the block may be anyone's by now: nothing to say. */
  if (!bp__guard_enabled()) return;
  char line[200];
  snprintf(line, sizeof line,
           "backplane alloc guard: the tensor handle %p was released after it was freed (one "
           "release too many); aborting\n", t);
  report(line);
  abort();
}
