/*
 * tests/test-alloc-guard.c - guarded device allocations (host/guard.c).
 *
 * With BP_ALLOC_GUARD=1, every device block has canaries before and after
 * it, checked when it is freed; a damaged one is reported as one line on
 * the descriptor BP_ALLOC_GUARD_FD names.  bp-certify relies on this to
 * catch a kernel that writes outside a result or scratch tensor it
 * allocated itself.  Each case here writes through a tensor's data
 * pointer where a faulty kernel would, releases it, and reads the report.
 * The guard also poisons every fresh block, hands freed addresses back on
 * purpose, and reports a release of a handle already freed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <backplane/host.h>

#include "tap.h"

static int report_fd = -1; /* the read end of the report pipe */

/* What the guard reported since the last call ("" for nothing). */
static const char *reports(void) {
  static char buf[4096];
  ssize_t n = read(report_fd, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static bp_tensor *empty(int64_t n) {
  bp_tensor *t = NULL;
  is_int(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t), BP_OK);
  return t;
}

static void untouched_block_is_quiet(void) {
  reports();
  bp_tensor *t = empty(7);
  float *d = bp_tensor_get_view(t)->data;
  for (int i = 0; i < 7; i++) d[i] = (float)i; /* every element, nothing more */
  bp_tensor_release(t);
  is_str(reports(), "");
}

static void write_just_past_the_end(void) {
  reports();
  bp_tensor *t = empty(7); /* 28 bytes: small enough to be inline unguarded */
  unsigned char *d = bp_tensor_get_view(t)->data;
  d[28] = 0;
  bp_tensor_release(t);
  has_str(reports(), "a block of 28 bytes had its canary overwritten at byte 0 past its end");
}

static void write_before_the_start(void) {
  reports();
  bp_tensor *t = empty(100);
  unsigned char *d = bp_tensor_get_view(t)->data;
  d[-3] ^= 0xff;
  bp_tensor_release(t);
  has_str(reports(), "a block of 400 bytes had its canary overwritten 3 byte(s) before its start");
}

static void write_far_past_a_rounded_end(void) {
  reports();
  bp_tensor *t = empty(16); /* 64 bytes: the tail canary starts right at the end */
  unsigned char *d = bp_tensor_get_view(t)->data;
  d[64 + 200] ^= 1;
  bp_tensor_release(t);
  has_str(reports(), "a block of 64 bytes had its canary overwritten at byte 200 past its end");
}

static void accounting_counts_the_block_only(void) {
  int64_t before = 0, during = 0, after = 0;
  is_int(bp_device_memory_in_use(BP_DEVICE_CPU, &before), BP_OK);
  bp_tensor *t = empty(1000);
  is_int(bp_device_memory_in_use(BP_DEVICE_CPU, &during), BP_OK);
  is_int(during - before, 4000);
  bp_tensor_release(t);
  is_int(bp_device_memory_in_use(BP_DEVICE_CPU, &after), BP_OK);
  is_int(after, before);
  is_str(reports(), "");
}

static void data_stays_aligned(void) {
  for (int64_t n = 1; n < 40; n += 3) {
    bp_tensor *t = empty(n);
    ok(((uintptr_t)bp_tensor_get_view(t)->data & 63) == 0);
    bp_tensor_release(t);
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif

/* Every fresh block is poisoned before anyone sees it: 0xff bytes, or the
 * byte BP_ALLOC_POISON names, read at each allocation. */
static void fresh_blocks_are_poisoned(void) {
  const struct {
    const char *env;
    unsigned char byte;
  } want[] = {{NULL, 0xff}, {"0", 0x00}, {"0x5a", 0x5a}, {"90", 90}, {"300", 0xff}};
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    if (want[w].env) setenv("BP_ALLOC_POISON", want[w].env, 1);
    else unsetenv("BP_ALLOC_POISON");
    bp_tensor *t = empty(100 + (int64_t)w); /* a size not freed before: a new block */
    const unsigned char *d = bp_tensor_get_view(t)->data;
    size_t bad = 0;
    for (size_t i = 0; i < (100 + w) * 4; i++) bad += d[i] != want[w].byte;
    is_int((long long)bad, 0);
    bp_tensor_release(t);
  }
  unsetenv("BP_ALLOC_POISON");
  is_str(reports(), "");
}

/* The handle and the CPU block freed last come back to the next
 * allocation of their size, in the reverse order of their frees. */
static void freed_addresses_come_back(void) {
#if defined(ASAN)
  tap_skip("AddressSanitizer's quarantine keeps freed addresses from coming back");
#else
  bp_tensor *a = empty(33), *b = empty(33);
  uintptr_t ha = (uintptr_t)a, hb = (uintptr_t)b;
  uintptr_t da = (uintptr_t)bp_tensor_get_view(a)->data;
  uintptr_t db = (uintptr_t)bp_tensor_get_view(b)->data;
  bp_tensor_release(b);
  bp_tensor_release(a);
  bp_tensor *c = empty(33), *d = empty(33);
  ok((uintptr_t)c == ha && (uintptr_t)d == hb);
  ok((uintptr_t)bp_tensor_get_view(c)->data == da && (uintptr_t)bp_tensor_get_view(d)->data == db);
  bp_tensor_release(c);
  bp_tensor_release(d);
  is_str(reports(), "");
#endif
}

/* A release of a handle already freed is reported, and aborts: the guard
 * keeps the block, where the C library would have caught a double free. */
static void release_after_free_aborts(void) {
#if defined(ASAN)
  tap_skip("AddressSanitizer reports the use after free itself");
#else
  reports();
  pid_t pid = fork();
  if (pid == 0) {
    bp_tensor *t = empty(5);
    bp_tensor_release(t);
    bp_tensor_release(t);
    _exit(0);
  }
  int st = 0;
  ok(pid > 0 && waitpid(pid, &st, 0) == pid);
  ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
  has_str(reports(), "was released after it was freed (one release too many); aborting");
#endif
}

static const tap_case cases[] = {
    TAP_CASE(untouched_block_is_quiet),    TAP_CASE(write_just_past_the_end),
    TAP_CASE(write_before_the_start),      TAP_CASE(write_far_past_a_rounded_end),
    TAP_CASE(accounting_counts_the_block_only), TAP_CASE(data_stays_aligned),
    TAP_CASE(fresh_blocks_are_poisoned),   TAP_CASE(freed_addresses_come_back),
    TAP_CASE(release_after_free_aborts),
};

int main(void) {
  int fds[2];
  if (pipe2(fds, O_NONBLOCK) != 0) return tap_skip_all("pipe2 failed");
  report_fd = fds[0];
  char fd[16];
  snprintf(fd, sizeof fd, "%d", fds[1]);
  /* Before the first allocation: the guard is decided once a process. */
  setenv("BP_ALLOC_GUARD", "1", 1);
  setenv("BP_ALLOC_GUARD_FD", fd, 1);
  return tap_main(cases, TAP_NCASES(cases));
}
