/*
 * conformance/verdict.c - a case's verdict, written by the child to the
 * parent (cx->chan), and the fault handler that turns a fault into one:
 * an access to a protected region (devtensor.c) names the argument, any
 * other fault is a CRASH.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cert.h"

/* ------------------------------------------------------------------------ */
/* Verdicts, written by the child                                           */
/* ------------------------------------------------------------------------ */

const char *const cert_status_name[] = {"pass", "fail", "skip", "crash", "timeout"};

void cert_send_verdict(cert_ctx *cx, enum status st, char *detail) {
  /* The detail is one line of a TAP point (a '#' in it is escaped where
   * the TAP line is printed, and kept in the JSON and HTML). */
  for (char *p = detail; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
  if (cx->chan.fd < 0) {
    snprintf(cx->chan.unsent, sizeof cx->chan.unsent, "%s", detail);
    return;
  }
  char buf[1100];
  int n = snprintf(buf, sizeof buf, "%s\n%s\n", cert_status_name[st], detail);
  if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
  for (int off = 0; off < n;) {
    ssize_t w = write(cx->chan.fd, buf + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (int)w;
  }
}

char cert_verdict_prefix[128];

void cert_verdict(cert_ctx *cx, enum status st, const char *fmt, ...) {
  char detail[1024];
  size_t o = (size_t)snprintf(detail, sizeof detail, "%s", cert_verdict_prefix);
  va_list ap;
  va_start(ap, fmt);
  int n = (int)o + vsnprintf(detail + o, sizeof detail - o, fmt, ap);
  va_end(ap);
  /* A pass says which samples it left out for their results' dtypes. */
  if (st == ST_PASS && cx->cur.nundeclared > 0 && n >= 0 && (size_t)n < sizeof detail)
    snprintf(detail + n, sizeof detail - (size_t)n, LEFT_OUT_MARK "%d sample(s) whose %s",
             cx->cur.nundeclared, cx->cur.undeclared);
  cert_send_verdict(cx, st, detail);
}

/* ------------------------------------------------------------------------ */
/* Protected memory and the fault handler (host-visible devices)            */
/* ------------------------------------------------------------------------ */

/* The protected regions (struct region, cert.h) that protected_tensor()
 * made and their tensors still hold. */
static region regions[16];

/* The check group of the case running in this process, or NULL. */
static const char *cur_group;

int cert_region_add(const region *r) {
  for (int i = 0; i < 16; i++) {
    if (regions[i].used) continue;
    regions[i] = *r;
    regions[i].used = true;
    return i;
  }
  return -1;
}

void cert_region_remove(int i) { regions[i].used = false; }

/* The context the fault handler reports through: a signal handler takes
 * no argument, so cert_install_fault_handler() leaves it here. */
static cert_ctx *fault_cx;

static void on_fault(int sig, siginfo_t *si, void *uc_) {
  (void)uc_;
  cert_ctx *cx = fault_cx;
  uintptr_t a = (uintptr_t)si->si_addr;
  for (int i = 0; i < 16; i++) {
    const region *r = &regions[i];
    if (!r->used || a < r->map_lo || a >= r->map_hi) continue;
    char msg[300];
    if (a >= r->data_lo && a < r->data_hi && !r->readonly)
      break; /* a writable page cannot fault: not ours */
    if (a >= r->data_lo && a < r->data_hi)
      snprintf(msg, sizeof msg,
               "honesty: the kernel wrote to argument %d '%s', which its schema does not declare "
               "mutable (read-only page; byte %ld of the argument)",
               r->arg, r->name, (long)(a - r->elems_lo));
    else if (a < r->data_lo)
      snprintf(msg, sizeof msg,
               "bounds: the kernel touched %ld bytes before argument %d '%s' (guard page)",
               (long)(r->elems_lo - a), r->arg, r->name);
    else
      snprintf(msg, sizeof msg,
               "bounds: the kernel touched byte %ld past the end of argument %d '%s' (guard page)",
               (long)(a - r->elems_hi), r->arg, r->name);
    cert_send_verdict(cx, ST_FAIL, msg);
    _exit(0);
  }
  /* No one to tell (a worker loading the plugin): die of the signal, so
   * that the parent sees it. */
  if (cx->chan.fd < 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    signal(sig, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  /* Not ours: a crash.  It is reported here rather than by dying of the
   * signal, because a sanitizer runtime may own the default action. */
  char msg[200];
  if (sig == SIGABRT)
    snprintf(msg, sizeof msg, "CRASH signal %d (SIGABRT: abort() was called) during the %s check",
             sig, cur_group ? cur_group : "?");
  else
    snprintf(msg, sizeof msg, "CRASH signal %d (%s, address %p) during the %s check", sig,
             sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                                                                                 : "SIGILL",
             si->si_addr, cur_group ? cur_group : "?");
  cert_send_verdict(cx, ST_CRASH, msg);
  _exit(0);
}

/* exit() inside a case: the plugin ended the process, which a host never
 * forgives; on_exit() runs this before the process goes (the certifier
 * itself ends its children with _exit(), which runs no handler). */
static void exit_trap(int status, void *arg) {
  cert_ctx *cx = arg;
  if (!cur_group) return;
  char msg[160];
  snprintf(msg, sizeof msg, "CRASH exit(%d) was called during the %s check: the plugin ended the "
                            "process",
           status, cur_group);
  cert_send_verdict(cx, ST_CRASH, msg);
}

void cert_verdict_begin(cert_ctx *cx, const char *group) {
  static bool trapped;
  if (!trapped) trapped = on_exit(exit_trap, cx) == 0;
  cur_group = group;
  cx->cur.nundeclared = 0;
  cx->cur.undeclared[0] = '\0';
}

void cert_verdict_end(void) { cur_group = NULL; }

void cert_install_fault_handler(cert_ctx *cx) {
  struct sigaction sa;
  fault_cx = cx;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
  sigaction(SIGILL, &sa, NULL);
  sigaction(SIGABRT, &sa, NULL);
}
