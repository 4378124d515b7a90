/* conformance/procstate.c - see procstate.h. */
#define _GNU_SOURCE
#include "procstate.h"

#include <dirent.h>
#include <fenv.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cert_fp_state_get(fp_state *out) {
  memset(out, 0, sizeof *out);
  out->round = fegetround();
#if defined(__x86_64__) || defined(__i386__)
  uint32_t csr;
  uint16_t cw;
  __asm__ volatile("stmxcsr %0" : "=m"(csr));
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  out->simd_ctrl = csr & ~0x3fu; /* bits 0-5 are the exception flags */
  out->x87_ctrl = cw;
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  out->simd_ctrl = (uint32_t)fpcr;
#endif
}

void cert_fp_state_set(const fp_state *s) {
  fesetround(s->round);
#if defined(__x86_64__) || defined(__i386__)
  uint32_t csr;
  __asm__ volatile("stmxcsr %0" : "=m"(csr));
  csr = (csr & 0x3fu) | s->simd_ctrl;
  __asm__ volatile("ldmxcsr %0" : : "m"(csr));
  uint16_t cw = (uint16_t)s->x87_ctrl;
  __asm__ volatile("fldcw %0" : : "m"(cw));
#elif defined(__aarch64__)
  uint64_t fpcr = s->simd_ctrl;
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#endif
}

static const char *round_name(int r) {
  switch (r) {
    case FE_TONEAREST: return "to nearest";
#ifdef FE_UPWARD
    case FE_UPWARD: return "upward";
#endif
#ifdef FE_DOWNWARD
    case FE_DOWNWARD: return "downward";
#endif
#ifdef FE_TOWARDZERO
    case FE_TOWARDZERO: return "toward zero";
#endif
    default: return "unknown";
  }
}

bool cert_fp_state_same(const fp_state *b, const fp_state *n, char *why, size_t len) {
  size_t o = 0;
  why[0] = '\0';
  if (b->round != n->round)
    o += (size_t)snprintf(why + o, len - o, "rounding mode %s (was %s); ", round_name(n->round),
                          round_name(b->round));
#if defined(__x86_64__) || defined(__i386__)
  uint32_t d = b->simd_ctrl ^ n->simd_ctrl;
  if (d & 0x8000u && o < len)
    o += (size_t)snprintf(why + o, len - o, "flush to zero %s; ",
                          n->simd_ctrl & 0x8000u ? "on (was off)" : "off (was on)");
  if (d & 0x40u && o < len)
    o += (size_t)snprintf(why + o, len - o, "denormals are zero %s; ",
                          n->simd_ctrl & 0x40u ? "on (was off)" : "off (was on)");
  if (d & 0x1f80u && o < len)
    o += (size_t)snprintf(why + o, len - o, "SSE exceptions trapped: mask 0x%x (was 0x%x); ",
                          (n->simd_ctrl >> 7) & 0x3fu, (b->simd_ctrl >> 7) & 0x3fu);
  if (d & 0x6000u && b->round == n->round && o < len)
    o += (size_t)snprintf(why + o, len - o, "SSE rounding control 0x%x (was 0x%x); ",
                          (n->simd_ctrl >> 13) & 3u, (b->simd_ctrl >> 13) & 3u);
  if (b->x87_ctrl != n->x87_ctrl && o < len)
    o += (size_t)snprintf(why + o, len - o, "x87 control word 0x%x (was 0x%x); ",
                          n->x87_ctrl, b->x87_ctrl);
#else
  if (b->simd_ctrl != n->simd_ctrl && o < len)
    o += (size_t)snprintf(why + o, len - o, "FPCR 0x%x (was 0x%x); ", n->simd_ctrl,
                          b->simd_ctrl);
#endif
  if (o >= 2 && o < len) why[o - 2] = '\0';
  return o == 0;
}

void cert_sig_state_get(sig_state *out) {
  memset(out, 0, sizeof *out);
  for (int s = 1; s < SIGSTATE_MAX && s < NSIG; s++) sigaction(s, NULL, &out->act[s]);
  sigprocmask(SIG_SETMASK, NULL, &out->mask);
}

void cert_sig_state_set(const sig_state *s) {
  for (int n = 1; n < SIGSTATE_MAX && n < NSIG; n++) {
    if (n == SIGKILL || n == SIGSTOP) continue;
    struct sigaction cur;
    if (sigaction(n, NULL, &cur) != 0) continue;
    if (memcmp(&cur, &s->act[n], sizeof cur) != 0) sigaction(n, &s->act[n], NULL);
  }
}

static const char *disp(const struct sigaction *a, char *buf, size_t len) {
  if (!(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL) return "default";
  if (!(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN) return "ignored";
  snprintf(buf, len, "handler %p", a->sa_flags & SA_SIGINFO ? (void *)a->sa_sigaction
                                                           : (void *)a->sa_handler);
  return buf;
}

bool cert_sig_state_same(const sig_state *b, const sig_state *n, char *why, size_t len) {
  for (int s = 1; s < SIGSTATE_MAX && s < NSIG; s++) {
    const struct sigaction *x = &b->act[s], *y = &n->act[s];
    bool info = (x->sa_flags & SA_SIGINFO) != 0;
    void *hx = info ? (void *)x->sa_sigaction : (void *)x->sa_handler;
    void *hy = (y->sa_flags & SA_SIGINFO) ? (void *)y->sa_sigaction : (void *)y->sa_handler;
    if (hx != hy || (x->sa_flags & SA_SIGINFO) != (y->sa_flags & SA_SIGINFO)) {
      char b1[48], b2[48];
      snprintf(why, len, "signal %d (%s): %s, was %s", s, strsignal(s), disp(y, b1, sizeof b1),
               disp(x, b2, sizeof b2));
      return false;
    }
  }
  for (int s = 1; s < SIGSTATE_MAX && s < NSIG; s++)
    if (sigismember(&b->mask, s) != sigismember(&n->mask, s)) {
      snprintf(why, len, "signal %d (%s) is %s in the signal mask", s, strsignal(s),
               sigismember(&n->mask, s) ? "now blocked" : "no longer blocked");
      return false;
    }
  return true;
}

int cert_proc_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int cert_proc_thread_ids(long *tids, int max) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.' && n < max) tids[n++] = strtol(e->d_name, NULL, 10);
  closedir(d);
  return n;
}

void cert_proc_new_threads(const long *tids, int n, char *buf, size_t len) {
  long now[256];
  int m = cert_proc_thread_ids(now, 256);
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < m && o + 1 < len; i++) {
    bool old = false;
    for (int j = 0; j < n && !old; j++) old = tids[j] == now[i];
    if (old) continue;
    char path[64], comm[64] = "?";
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", now[i]);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(comm, sizeof comm, f)) snprintf(comm, sizeof comm, "?");
      comm[strcspn(comm, "\n")] = '\0';
      fclose(f);
    }
    o += (size_t)snprintf(buf + o, len - o, "%s%ld (%s)", o ? ", " : "", now[i], comm);
  }
}

bool cert_map_state_get(const char *path, map_state *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return false;
  char real[PATH_MAX] = "";
  if (path && !realpath(path, real)) real[0] = '\0';
  char line[PATH_MAX + 128];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
    /* The brk heap grows with malloc and never shrinks much: not a
     * mapping anyone leaked. */
    if (strstr(line, "[heap]") || strstr(line, "[stack]")) continue;
    out->count++;
    out->bytes += (long long)(hi - lo);
    char *name = strchr(line, '/');
    if (name && real[0]) {
      name[strcspn(name, "\n")] = '\0';
      if (strcmp(name, real) == 0) out->from_path += (long long)(hi - lo);
    }
  }
  fclose(f);
  return true;
}

bool cert_map_state_meaningful(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

bool cert_proc_threads_meaningful(void) {
#if defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

bool cert_built_with_tsan(void) { return !cert_proc_threads_meaningful(); }
