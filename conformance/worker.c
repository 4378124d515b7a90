/*
 * conformance/worker.c - a worker: a child that loads the plugin once and
 * runs the cases the parent sends it, putting back between cases what a
 * case may change in its process.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <locale.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <backplane/host.h>

#include "cert.h"
#include "devtensor.h"
#include "procstate.h"
#include "sample.h"

/* ------------------------------------------------------------------------ */
/* The worker: one load of the plugin, then case after case                 */
/* ------------------------------------------------------------------------ */

/* What a case may change in its process, as the worker had it right after
 * loading the plugin (where a fresh process starts a case); put back
 * before every case. */
static struct {
  fenv_t fenv;       /* rounding mode, flush-to-zero, exception flags */
  fp_state fp;       /* the control state, MXCSR and x87 included */
  sig_state sig;     /* every signal's disposition */
  sigset_t mask;
  mode_t umask;
  int cwd;           /* the starting directory, or -1 */
  bool streams;      /* the device has a current stream to put back */
  bp_stream *stream; /* the one it had (NULL: the default); the plugin's */
  char **env;        /* copies of the environment's "NAME=value" strings */
  size_t nenv;
} saved;

extern char **environ;

/* Copies the environment into saved.env; false when out of memory. */
static bool save_env(void) {
  size_t n = 0;
  while (environ && environ[n]) n++;
  saved.env = calloc(n + 1, sizeof *saved.env);
  if (!saved.env) return false;
  for (size_t i = 0; i < n; i++)
    if (!(saved.env[i] = strdup(environ[i]))) return false;
  saved.nenv = n;
  return true;
}

/* Puts back the environment that save_env() copied, when a case changed
 * it (a kernel's setenv or putenv).  Each string is copied again, since
 * putenv() hands its argument to the environment, where a later case may
 * change it in place. */
static void restore_env(void) {
  size_t n = 0;
  bool same = environ != NULL || saved.nenv == 0;
  for (; same && environ && environ[n]; n++)
    same = n < saved.nenv && strcmp(environ[n], saved.env[n]) == 0;
  if (same && n == saved.nenv) return;
  clearenv();
  for (size_t i = 0; i < saved.nenv; i++) {
    char *copy = strdup(saved.env[i]);
    if (copy) putenv(copy); /* the environment keeps it */
  }
}

/* Puts back what an earlier case may have changed in this process, and
 * the certifier's own per-case state, as a fresh process has them.  The
 * live handles and device bytes are not reset: hygiene compares them
 * within its case. */
static void restore_state(cert_ctx *cx) {
  restore_env();
  fesetenv(&saved.fenv);
  cert_fp_state_set(&saved.fp);
  sigprocmask(SIG_SETMASK, &saved.mask, NULL);
  alarm(0);
  cert_sig_state_set(&saved.sig);
  cert_install_fault_handler(cx);
  umask(saved.umask);
  if (saved.cwd >= 0 && fchdir(saved.cwd) != 0) {
    /* The directory is gone; no case depends on it. */
  }
  setlocale(LC_ALL, "C");
  if (saved.streams) {
    bp_stream *cur = NULL;
    if (bp_stream_get_current(cx->put.device, &cur) != BP_OK || cur != saved.stream)
      bp_stream_set_current(cx->put.device, saved.stream);
  }
  bp_clear_error();
  errno = 0;
  cert_rng_reset();
  cx->cur.nrefused = 0;
  cx->cur.refusal[0] = '\0';
  for (size_t k = 0; k < cert_ncheck_table; k++)
    if (cert_check_table[k].reset) cert_check_table[k].reset();
}

/* The worker's life, on its end of the socket fd: load the plugin, say
 * "ready", then for each case index the parent sends, run that case,
 * whose verdict goes over fd, and say "done".  It ends when the parent
 * closes the socket, or with the plugin (a crash, a kill on timeout). */
void cert_worker_main(cert_ctx *cx, int fd) {
  dup2(STDERR_FILENO, STDOUT_FILENO);
  cert_install_fault_handler(cx);
  /* A plugin that does not load (or has no device type to test) is
   * reported by each case, in a fresh process: the worker says why
   * ("noload", then the reason) and ends, and the runner gives up on
   * workers. */
  cx->chan.fd = -1;
  /* What a case puts back is the process as it was before the plugin
   * loaded: a change the load made is the process check's to report, not
   * something later cases inherit. */
  fegetenv(&saved.fenv);
  cert_fp_state_get(&saved.fp);
  sigprocmask(SIG_SETMASK, NULL, &saved.mask);
  cert_sig_state_get(&saved.sig);
  cert_alloc_guard_open();
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) {
    char msg[1100];
    int n = snprintf(msg, sizeof msg, IPC_NOLOAD "%s\n",
                     cx->chan.unsent[0] ? cx->chan.unsent : "no reason given");
    cert_send_all(fd, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(0);
  }
  saved.umask = umask(022);
  umask(saved.umask);
  saved.cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  saved.streams = cx->put.plugin && bp_stream_get_current(cx->put.device, &saved.stream) == BP_OK;
  if (!save_env()) {
    static const char oom[] = IPC_NOLOAD "the worker ran out of memory copying its environment\n";
    cert_send_all(fd, oom, sizeof oom - 1);
    _exit(0);
  }
  cx->chan.fd = fd;
  if (!cert_send_all(fd, IPC_READY, IPC_LEN(IPC_READY))) _exit(0);
  for (;;) {
    char line[32];
    size_t n = 0;
    for (;;) {
      char ch;
      ssize_t got = read(fd, &ch, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) _exit(0); /* the parent is done with this worker */
      if (ch == '\n') break;
      if (n < sizeof line - 1) line[n++] = ch;
    }
    line[n] = '\0';
    char *end;
    unsigned long ci = strtoul(line, &end, 10);
    if (end == line || ci >= cx->cases.n) _exit(0);
    restore_state(cx);
    cert_verdict_begin(cx, cx->cases.v[ci].group);
    cx->cases.v[ci].fn(cx, &cx->cases.v[ci]);
    cert_verdict_end();
    if (!cert_send_all(fd, IPC_DONE, IPC_LEN(IPC_DONE))) _exit(0);
  }
}
