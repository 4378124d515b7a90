/*
 * tools/isolate.c - a plugin's load, tried first in a child process
 * (isolate.h).  The child writes one byte to a pipe as it enters each
 * stage; the parent reads them until the child ends or the deadline
 * passes, and reports the last stage with the way the child ended.
 */
#define _POSIX_C_SOURCE 200809L
#include "isolate.h"

#include "budget.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

/* The stages, in order, as the bytes the child writes. */
enum { STAGE_OPEN = 'o', STAGE_INIT = 'i', STAGE_SETUP = 's', STAGE_DONE = 'd' };

static int stage_fd = -1;
static bp_plugin_init_fn real_init;

static void enter(char stage) {
  while (write(stage_fd, &stage, 1) < 0 && errno == EINTR) {
  }
}

/* Stands in for the plugin's bp_plugin_init, so that the child can tell
 * its init from what the host does after it. */
static const bp_plugin_desc *staged_init(const bp_host_api *host) {
  enter(STAGE_INIT);
  const bp_plugin_desc *d = real_init(host);
  enter(STAGE_SETUP);
  return d;
}

/* A crash ends the child by its signal, which the parent names: not by a
 * handler the tool's runtime installed (a sanitizer's reports and exits
 * with a status), and without a core file. */
static void die_of_faults(void) {
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
    sigaction(fatal[i], &sa, NULL);
    sigaddset(&set, fatal[i]);
  }
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

static _Noreturn void child(const char *path) {
  /* Whatever the plugin prints goes to stderr, away from the listing. */
  dup2(STDERR_FILENO, STDOUT_FILENO);
  die_of_faults();
  enter(STAGE_OPEN);
  /* Only a regular file is opened here: the host refuses anything else
   * (a FIFO, a device, a directory) without opening it, and says why. */
  struct stat sb;
  void *dl = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  real_init = dl ? (bp_plugin_init_fn)(uintptr_t)dlsym(dl, BP_PLUGIN_ENTRY_SYMBOL) : NULL;
  /* A file that does not open or has no entry point fails cleanly: the
   * parent's own load says why. */
  if (real_init) bp_plugin_register(staged_init, path, NULL);
  enter(STAGE_DONE);
  _exit(0);
}

static const char *stage_name(char stage) {
  switch (stage) {
    case STAGE_INIT: return "init";
    case STAGE_SETUP: return "setup";
    default: return "dlopen";
  }
}

static const char *signal_name(int sig, char *buf, size_t len) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},
               {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
               {SIGSYS, "SIGSYS"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"},
               {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGINT, "SIGINT"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig) return names[i].name;
  snprintf(buf, len, "signal %d", sig);
  return buf;
}

int isolate_probe(const char *path, double timeout_s, char *why, size_t len) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, len, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, len, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    stage_fd = fds[1];
    child(path);
  }
  close(fds[1]);
  /* Reads stages until the pipe closes (the child and anything it
   * started have ended) or the child itself has ended, or time is up. */
  char last = 0;
  int wst = 0, ended = 0;
  /* The limit is the child's CPU time, or wall time in which it uses
   * none (budget.h): a busy machine does not make a slow load a hang. */
  proc_budget budget;
  budget_start(&budget, pid);
  int spent = BUDGET_LEFT;
  int eof = 0;
  for (;;) {
    if ((spent = budget_spent(&budget, timeout_s)) != BUDGET_LEFT) break;
    /* After the end of file only the child's end is awaited (the plugin
     * may have closed the pipe and gone on). */
    struct pollfd p = {eof ? -1 : fds[0], POLLIN, 0};
    int ready = poll(&p, 1, eof ? 10 : 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      char buf[16];
      ssize_t got = read(fds[0], buf, sizeof buf);
      if (got > 0) {
        last = buf[got - 1];
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      eof = 1;
    }
    /* Nothing new, or end of file: has the child ended? */
    if (waitpid(pid, &wst, WNOHANG) == pid) {
      ended = 1;
      break;
    }
  }
  close(fds[0]);
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &wst, 0);
    if (last != STAGE_DONE) {
      snprintf(why, len, "timed out after %g s in %s%s", timeout_s, stage_name(last),
               spent == BUDGET_CPU ? " (of CPU time)" : spent == BUDGET_STALL ? " (asleep or blocked)" : "");
      return 1;
    }
  }
  if (last == STAGE_DONE) return 0;
  char buf[24];
  if (WIFSIGNALED(wst))
    snprintf(why, len, "crashed in %s (%s)", stage_name(last), signal_name(WTERMSIG(wst), buf, sizeof buf));
  else
    snprintf(why, len, "exited with status %d in %s", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1,
             stage_name(last));
  return 1;
}
