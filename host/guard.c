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

bp_status bp__guard_arm(const bp_device_iface *iface, bp_device d, void *base, size_t nbytes) {
  size_t tail = tail_bytes(nbytes);
  unsigned char *buf = malloc(tail > BP__GUARD_BYTES ? tail : BP__GUARD_BYTES);
  if (!buf) return bp__error(BP_ERR_OUT_OF_MEMORY, "alloc guard: out of memory");
  fill(buf, 0, BP__GUARD_BYTES);
  bp_status st = move(iface, d, base, buf, BP__GUARD_BYTES, true);
  if (!st) {
    fill(buf, BP__GUARD_BYTES + nbytes, tail);
    st = move(iface, d, (char *)base + BP__GUARD_BYTES + nbytes, buf, tail, true);
  }
  free(buf);
  return st;
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
  unsigned char *buf = malloc(len);
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
  free(buf);
}
