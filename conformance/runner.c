/*
 * conformance/runner.c - the runner: each of the --jobs slots keeps a
 * worker (worker.c) and hands it cases one at a time, or runs each case
 * in a fresh process of its own (--isolation case, and the reruns of the
 * cases that did not pass in a worker); a crash or a hang becomes that
 * case's CRASH or TIMEOUT verdict.  It prints the verdicts in case
 * order, as TAP, and keeps the totals in cx->run.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "cert.h"
#include "termsafe.h"
#include "devtensor.h"
#include "clock.h" /* now(): seconds on the monotonic clock (tools/) */

/* ------------------------------------------------------------------------ */
/* The clock, and the pipes and sockets to the children                     */
/* ------------------------------------------------------------------------ */

/* Whether a verdict counts as a failure (FAIL, CRASH, TIMEOUT). */
bool cert_failed_status(enum status s) { return s == ST_FAIL || s == ST_CRASH || s == ST_TIMEOUT; }

/* Reads what fd has, without blocking, onto buf (n bytes so far, kept
 * NUL-terminated); false at EOF, on an error, or when buf is full. */
static bool read_avail(int fd, char *buf, size_t *n, size_t cap) {
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return true;
    if (*n + 1 >= cap) return false;
    ssize_t got = read(fd, buf + *n, cap - 1 - *n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    *n += (size_t)got;
    buf[*n] = '\0';
  }
}

/* Reads one case's record in buf (n bytes): the first verdict, a status
 * line and a detail line (a line that names no status counts as "fail"),
 * into *st and detail, with *have saying whether one came.  Returns the
 * bytes through a worker's IPC_DONE line, or 0 when none has come. */
static size_t parse_record(const char *buf, size_t n, bool *have, enum status *st, char *detail,
                           size_t dlen) {
  const char *p = buf, *end = buf + n;
  bool want_detail = false;
  enum status cur = ST_FAIL;
  *have = false;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    int len = (int)(nl - p);
    if (want_detail) {
      if (!*have) {
        *have = true;
        *st = cur;
        snprintf(detail, dlen, "%.*s", len, p);
      }
      want_detail = false;
    } else if (len + 1 == (int)IPC_LEN(IPC_DONE) && memcmp(p, IPC_DONE, (size_t)len) == 0) {
      return (size_t)(nl + 1 - buf);
    } else {
      cur = ST_FAIL;
      for (int s = 0; s <= ST_CRASH; s++)
        if ((int)strlen(cert_status_name[s]) == len &&
            memcmp(p, cert_status_name[s], (size_t)len) == 0)
          cur = (enum status)s;
      want_detail = true;
    }
    p = nl + 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The runner                                                               */
/* ------------------------------------------------------------------------ */

/* One of the --jobs slots: its worker (worker isolation), and the case it
 * runs, in that worker or in a fresh process of its own. */
typedef struct slot {
  pid_t wpid;       /* the worker, or 0 */
  int wfd;          /* the parent's end of its socket; -1 once closed */
  bool ready;       /* it has loaded the plugin */
  size_t wcases;    /* cases it has finished */
  size_t wlast;     /* the last of them, when wcases > 0 */
  double wt0;       /* when it started; once its socket closed, when that was */
  proc_budget wb;   /* its time to load the plugin, or, socket closed, to end */
  char wbuf[4096];  /* what it sent that is not yet used */
  size_t wn;
  bool busy;        /* a case is running */
  size_t ci;        /* which */
  bool child;       /* in a fresh process (cpid, cfd), not in the worker */
  pid_t cpid;
  int cfd;          /* -1 at EOF */
  double t0;        /* when the case began */
  proc_budget cb;   /* the case's time limit (in the worker or the child) */
  char cbuf[2048];
  size_t cn;
} slot;

/* The runner's state, its own: the slots, and the cases' progress. */
static struct {
  slot *slots;
  size_t nslots;
  bool use_workers;   /* still handing cases to workers */
  size_t *rerun_q, rq_head, rq_tail;
  bool *finished;
  size_t ndone;
  pid_t *zombies;     /* killed workers not yet reaped */
  size_t nzombies, capzombies;
  bool progress;      /* a progress line on stderr (a terminal) */
} rs;

/* In a new child: closes the parent's ends of the other slots' pipes and
 * sockets, so that a worker sees its socket close when the parent closes
 * its end, and not only when every later child has ended. */
static void close_inherited(void) {
  for (size_t k = 0; k < rs.nslots; k++) {
    if (rs.slots[k].wpid && rs.slots[k].wfd >= 0) close(rs.slots[k].wfd);
    if (rs.slots[k].busy && rs.slots[k].child && rs.slots[k].cfd >= 0) close(rs.slots[k].cfd);
  }
}

static void reap_zombies(bool block) {
  for (size_t i = 0; i < rs.nzombies;) {
    int wst;
    if (waitpid(rs.zombies[i], &wst, block ? 0 : WNOHANG) == 0) {
      i++;
      continue;
    }
    rs.zombies[i] = rs.zombies[--rs.nzombies];
  }
}

/* Kills a slot's worker; it is reaped later, so that a slow exit (a GPU
 * context torn down) does not hold up the other slots. */
static void kill_worker(slot *s) {
  if (!s->wpid) return;
  if (s->wfd >= 0) close(s->wfd);
  kill(s->wpid, SIGKILL);
  int wst;
  if (waitpid(s->wpid, &wst, WNOHANG) == 0) {
    if (rs.nzombies == rs.capzombies) {
      size_t cap = rs.capzombies ? 2 * rs.capzombies : 16;
      pid_t *grown = realloc(rs.zombies, cap * sizeof *grown);
      if (grown) rs.zombies = grown, rs.capzombies = cap;
    }
    if (rs.nzombies < rs.capzombies) rs.zombies[rs.nzombies++] = s->wpid;
    else waitpid(s->wpid, &wst, 0);
  }
  s->wpid = 0;
  s->wfd = -1;
  s->ready = false;
  s->wcases = 0;
  s->wn = 0;
}

/* Stops handing cases to workers: the remaining cases run alone in fresh
 * processes.  The reason becomes a TAP diagnostic and goes into the
 * certificate. */
static void fallback(cert_ctx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fallback(cert_ctx *cx, const char *fmt, ...) {
  if (!rs.use_workers) return;
  rs.use_workers = false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cx->run.fallback_why, sizeof cx->run.fallback_why, fmt, ap);
  va_end(ap);
  printf("# worker isolation off: %s; the remaining cases run alone in fresh processes\n",
         termsafe(cx->run.fallback_why));
  fflush(stdout);
}

/* Sets a case's verdict.  One from a shared worker that is not a pass or
 * a skip is kept aside, and the case queued to run again alone in a fresh
 * process, whose verdict is the one reported. */
static void set_verdict(cert_ctx *cx, size_t ci, bool in_worker, enum status st, const char *detail,
                        double seconds) {
  certify_case *c = &cx->cases.v[ci];
  c->status = st;
  snprintf(c->detail, sizeof c->detail, "%s", detail);
  c->seconds = seconds;
  if (in_worker && cert_failed_status(st)) {
    c->rerun = true;
    c->worker_status = st;
    snprintf(c->worker_detail, sizeof c->worker_detail, "%s", detail);
    rs.rerun_q[rs.rq_tail++] = ci;
    cx->run.nreruns++;
    return;
  }
  if (c->rerun) c->alone_status = st;
  if (c->rerun && !cert_failed_status(st)) {
    /* It fails only after other cases in a long-lived process: a host is
     * one, so the failure stands.  Only the certifier's own trouble in
     * the worker is excused, and the excuse names it. */
    if (strstr(c->worker_detail, "certifier error")) {
      c->excused = true;
      cx->run.nchanged++;
    } else {
      char prev[240] = "";
      if (c->worker_after)
        snprintf(prev, sizeof prev, " after %zu other case(s), the last %s", c->worker_after,
                 cx->cases.v[c->worker_prev].name);
      c->status = c->worker_status;
      snprintf(c->detail, sizeof c->detail,
               "depends on earlier calls: %s in a long-lived worker%s (%.400s); %s alone in a "
               "fresh process",
               cert_status_name[c->worker_status], prev, c->worker_detail, cert_status_name[st]);
      cx->run.ndepends++;
    }
  } else if (c->rerun && st != c->worker_status) {
    cx->run.nchanged++;
  }
  rs.finished[ci] = true;
  rs.ndone++;
}

/* Runs case ci in a fresh process of its own (the case path). */
static void start_child(cert_ctx *cx, slot *s, size_t ci) {
  certify_case *c = &cx->cases.v[ci];
  char why[300];
  int fds[2];
  s->ci = ci;
  s->cn = 0;
  s->cbuf[0] = '\0';
  s->t0 = now();
  if (pipe(fds) != 0) {
    snprintf(why, sizeof why, "pipe: %s", strerror(errno));
    set_verdict(cx, ci, false, ST_FAIL, why, 0);
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, sizeof why, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    set_verdict(cx, ci, false, ST_FAIL, why, 0);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    close_inherited();
    cx->chan.fd = fds[1];
    /* Whatever the plugin prints must not break the TAP stream. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    cert_install_fault_handler(cx);
    cert_alloc_guard_open();
    cert_verdict_begin(cx, c->group);
    c->fn(cx, c);
    cert_verdict_end();
    close(cx->chan.fd);
    /* _exit: the plugin's atexit handlers are its own business, not the
     * verdict's; a hang in them would be a false TIMEOUT. */
    _exit(0);
  }
  close(fds[1]);
  budget_start(&s->cb, pid);
  s->busy = true;
  s->child = true;
  s->cpid = pid;
  s->cfd = fds[0];
}

/* Starts a slot's worker; false (and worker isolation off) when it
 * cannot be started. */
static bool start_worker(cert_ctx *cx, slot *s) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    fallback(cx, "socketpair: %s", strerror(errno));
    return false;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    fallback(cx, "fork: %s", strerror(errno));
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    close_inherited();
    cert_worker_main(cx, sv[1]);
  }
  close(sv[1]);
  s->wpid = pid;
  s->wfd = sv[0];
  s->ready = false;
  s->wcases = 0;
  s->wt0 = now();
  budget_start(&s->wb, pid);
  s->wn = 0;
  s->wbuf[0] = '\0';
  cx->run.nworkers++;
  return true;
}

/* Gives a free slot its next piece of work: a rerun first (it holds up
 * the output), else the next case, in its worker or alone. */
static void schedule(cert_ctx *cx, slot *s, size_t *next) {
  if (s->busy) return;
  if (!rs.use_workers && s->wpid) kill_worker(s);
  if (rs.rq_head < rs.rq_tail) {
    start_child(cx, s, rs.rerun_q[rs.rq_head++]);
    return;
  }
  if (*next >= cx->cases.n) return;
  if (!rs.use_workers || cx->cases.v[*next].fresh) {
    start_child(cx, s, (*next)++);
    return;
  }
  if (!s->wpid) {
    /* No more workers than there are cases left for them. */
    size_t idle = 0, left = 0;
    for (size_t k = 0; k < rs.nslots; k++) idle += rs.slots[k].wpid && !rs.slots[k].busy;
    for (size_t i = *next; i < cx->cases.n && left <= idle; i++) left += !cx->cases.v[i].fresh;
    if (left > idle) start_worker(cx, s);
    return;
  }
  if (!s->ready || s->wfd < 0) return;
  char line[32];
  int n = snprintf(line, sizeof line, "%zu\n", *next);
  s->ci = *next;
  s->child = false;
  s->t0 = now();
  budget_start(&s->cb, s->wpid);
  /* What ran in this worker before, should the case fail only there. */
  cx->cases.v[*next].worker_after = s->wcases;
  cx->cases.v[*next].worker_prev = s->wcases ? s->wlast : 0;
  if (!cert_send_all(s->wfd, line, (size_t)n)) {
    /* It ended while idle; a fresh one takes the case. */
    kill_worker(s);
    return;
  }
  s->busy = true;
  (*next)++;
}

/* The worker of s has ended (exit status wst): its case, if it had one,
 * gets the verdict it sent before the end, or CRASH. */
static void worker_ended(cert_ctx *cx, slot *s, int wst) {
  char how[64];
  if (WIFSIGNALED(wst)) snprintf(how, sizeof how, "signal %d", WTERMSIG(wst));
  else snprintf(how, sizeof how, "status %d", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  if (s->busy && !s->child) {
    bool have;
    enum status st = ST_FAIL;
    char detail[1024];
    parse_record(s->wbuf, s->wn, &have, &st, detail, sizeof detail);
    if (!have && WIFSIGNALED(wst)) {
      st = ST_CRASH;
      snprintf(detail, sizeof detail, "CRASH signal %d", WTERMSIG(wst));
    } else if (!have) {
      st = ST_FAIL;
      snprintf(detail, sizeof detail,
               "the case exited (%s) without a verdict (a sanitizer's report on stderr, or the "
               "plugin ending the process)",
               how);
    }
    s->busy = false;
    set_verdict(cx, s->ci, true, st, detail, now() - s->t0);
  } else if (s->wcases == 0) {
    /* One that cannot get through its first case would never make
     * progress: fall back. */
    fallback(cx, "a worker ended (%s) %s", how,
             s->ready ? "before it ran a case" : "while loading the plugin");
  }
  s->wpid = 0;
  s->wfd = -1;
  s->ready = false;
  s->wcases = 0;
  s->wn = 0;
}

static void service_worker(cert_ctx *cx, slot *s) {
  if (s->wfd >= 0 && !read_avail(s->wfd, s->wbuf, &s->wn, sizeof s->wbuf)) {
    close(s->wfd);
    s->wfd = -1;
    s->wt0 = now();
    budget_start(&s->wb, s->wpid);
    /* A last line cut short still counts. */
    if (s->wn && s->wbuf[s->wn - 1] != '\n' && s->wn + 1 < sizeof s->wbuf) {
      s->wbuf[s->wn++] = '\n';
      s->wbuf[s->wn] = '\0';
    }
  }
  const size_t nl = IPC_LEN(IPC_NOLOAD), rl = IPC_LEN(IPC_READY);
  if (!s->ready && s->wn >= nl && memcmp(s->wbuf, IPC_NOLOAD, nl) == 0) {
    char *end = memchr(s->wbuf + nl, '\n', s->wn - nl);
    if (end || s->wfd < 0) {
      int len = end ? (int)(end - (s->wbuf + nl)) : (int)(s->wn - nl);
      fallback(cx, "a worker could not load the plugin (%.*s)", len, s->wbuf + nl);
      kill_worker(s);
      return;
    }
  }
  if (!s->ready && s->wn >= rl && memcmp(s->wbuf, IPC_READY, rl) == 0) {
    s->ready = true;
    memmove(s->wbuf, s->wbuf + rl, s->wn - rl + 1);
    s->wn -= rl;
  }
  bool in_case = s->busy && !s->child;
  if (in_case) {
    bool have;
    enum status st = ST_FAIL;
    char detail[1024];
    size_t used = parse_record(s->wbuf, s->wn, &have, &st, detail, sizeof detail);
    if (used) {
      memmove(s->wbuf, s->wbuf + used, s->wn - used + 1);
      s->wn -= used;
      s->busy = false;
      s->wcases++;
      s->wlast = s->ci;
      if (!have) {
        st = ST_FAIL;
        snprintf(detail, sizeof detail, "the case ended without a verdict");
      }
      set_verdict(cx, s->ci, true, st, detail, now() - s->t0);
      /* It may hold what the case left behind: a fresh worker goes on. */
      if (cert_failed_status(st)) kill_worker(s);
      return;
    }
  }
  if (s->wfd < 0) {
    /* Its socket closed: it is ending, by a crash or an exit. */
    int wst = 0;
    pid_t w = waitpid(s->wpid, &wst, WNOHANG);
    if (w == 0 && budget_spent(&s->wb, 2.0) == BUDGET_LEFT) return;
    if (w == 0) {
      kill(s->wpid, SIGKILL);
      waitpid(s->wpid, &wst, 0);
    }
    worker_ended(cx, s, wst);
    return;
  }
  char detail[160];
  int how;
  double limit = in_case ? cx->cases.v[s->ci].timeout : cx->opt.timeout;
  if (in_case && (how = budget_spent(&s->cb, limit)) != BUDGET_LEFT) {
    snprintf(detail, sizeof detail, "TIMEOUT after %g s%s", limit, budget_how(how));
    kill_worker(s);
    s->busy = false;
    set_verdict(cx, s->ci, true, ST_TIMEOUT, detail, now() - s->t0);
  } else if (!s->ready && budget_spent(&s->wb, cx->opt.timeout) != BUDGET_LEFT) {
    kill_worker(s);
    fallback(cx, "a worker did not load the plugin within %g s", cx->opt.timeout);
  }
}

static void service_child(cert_ctx *cx, slot *s) {
  if (s->cfd >= 0 && !read_avail(s->cfd, s->cbuf, &s->cn, sizeof s->cbuf)) {
    close(s->cfd);
    s->cfd = -1;
  }
  int wst = 0;
  double limit = cx->cases.v[s->ci].timeout;
  int how = budget_spent(&s->cb, limit);
  bool timed_out = how != BUDGET_LEFT;
  pid_t w = s->cfd < 0 ? waitpid(s->cpid, &wst, WNOHANG) : 0;
  if (w == 0 && !timed_out) return;
  if (w == 0) {
    kill(s->cpid, SIGKILL);
    waitpid(s->cpid, &wst, 0);
  }
  if (s->cfd >= 0) close(s->cfd);
  s->cfd = -1;
  s->busy = false;
  double seconds = now() - s->t0;
  char detail[1024];
  if (w == 0) {
    snprintf(detail, sizeof detail, "TIMEOUT after %g s%s", limit, budget_how(how));
    set_verdict(cx, s->ci, false, ST_TIMEOUT, detail, seconds);
    return;
  }
  /* A verdict sent before a crash (the fault handler's) stands. */
  if (s->cn && s->cbuf[s->cn - 1] != '\n' && s->cn + 1 < sizeof s->cbuf) {
    s->cbuf[s->cn++] = '\n';
    s->cbuf[s->cn] = '\0';
  }
  bool have;
  enum status st = ST_FAIL;
  parse_record(s->cbuf, s->cn, &have, &st, detail, sizeof detail);
  if (!have && WIFSIGNALED(wst)) {
    st = ST_CRASH;
    snprintf(detail, sizeof detail, "CRASH signal %d", WTERMSIG(wst));
  } else if (!have) {
    st = ST_FAIL;
    snprintf(detail, sizeof detail,
             "the case exited (status %d) without a verdict (a sanitizer's report on stderr, or "
             "the plugin ending the process)",
             WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  }
  set_verdict(cx, s->ci, false, st, detail, seconds);
}

/* s for a TAP line: termsafe's escapes, and each '#' as "\#" (a run of
 * backslashes just before it doubled, so that the run stays whole), which
 * a TAP reader takes as part of the text, never as the start of a
 * directive ("# SKIP").  Into buf (n bytes), truncated where it does not
 * fit.  The JSON certificate and the HTML report keep the text as is. */
const char *cert_tap_text(const char *s, char *buf, size_t n) {
  const char *t = termsafe(s);
  size_t o = 0, run = 0;
  for (; *t; t++) {
    size_t need = *t == '#' ? run + 2 : 1;
    if (o + need >= n) break;
    for (size_t k = 0; *t == '#' && k <= run; k++) buf[o++] = '\\';
    buf[o++] = *t;
    run = *t == '\\' ? run + 1 : 0;
  }
  buf[o] = '\0';
  return buf;
}

static void print_case(cert_ctx *cx, size_t i) {
  certify_case *c = &cx->cases.v[i];
  char name[400], detail[2400];
  cert_tap_text(c->name, name, sizeof name);
  cert_tap_text(c->detail, detail, sizeof detail);
  switch (c->status) {
    case ST_PASS:
      cx->run.npassed++;
      printf("ok %zu - %s\n", i + 1, name);
      break;
    case ST_SKIP:
      cx->run.nskipped++;
      printf("ok %zu - %s # SKIP %s\n", i + 1, name, detail);
      break;
    default:
      cx->run.nfailed++;
      printf("not ok %zu - %s # %s\n", i + 1, name, detail);
      break;
  }
  /* Names and details may quote the plugin: escaped, each TAP line stays
   * one line and no control character reaches the terminal. */
  if (c->excused)
    printf(
        "# %s: %s in a shared worker (%s), excused as the certifier's own error; rerun alone "
        "in a fresh process: %s\n",
        termsafe(c->name), cert_status_name[c->worker_status], termsafe(c->worker_detail),
        cert_status_name[c->status]);
  else if (c->status == ST_PASS && strstr(c->detail, LEFT_OUT_MARK))
    printf("# %s: left out: %s\n", termsafe(c->name),
           termsafe(strstr(c->detail, LEFT_OUT_MARK) + strlen(LEFT_OUT_MARK)));
  if (c->rerun && c->status != c->worker_status && !c->excused)
    printf("# %s: %s in a shared worker (%s); rerun alone in a fresh process: %s\n",
           termsafe(c->name), cert_status_name[c->worker_status], termsafe(c->worker_detail),
           cert_status_name[c->status]);
  fflush(stdout);
}

static void show_progress(cert_ctx *cx, size_t done, size_t cur, double t0) {
  if (!rs.progress) return;
  double el = now() - t0, eta = done ? el / (double)done * (double)(cx->cases.n - done) : 0;
  fprintf(stderr, "\r\033[K[%zu/%zu] %.60s  failures %zu  ETA %.0fs", done, cx->cases.n,
          cur < cx->cases.n ? termsafe(cx->cases.v[cur].name) : "", cx->run.nfailed, eta);
  fflush(stderr);
}

/* Ends the idle workers: each exits when its socket closes; one that has
 * not within --timeout is killed. */
static void stop_workers(cert_ctx *cx) {
  for (size_t k = 0; k < rs.nslots; k++)
    if (rs.slots[k].wpid && rs.slots[k].wfd >= 0) {
      close(rs.slots[k].wfd);
      rs.slots[k].wfd = -1;
    }
  double t0 = now();
  for (size_t k = 0; k < rs.nslots; k++) {
    slot *s = &rs.slots[k];
    int wst;
    while (s->wpid && waitpid(s->wpid, &wst, WNOHANG) == 0) {
      if (now() - t0 > cx->opt.timeout) {
        kill(s->wpid, SIGKILL);
        waitpid(s->wpid, &wst, 0);
        break;
      }
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    s->wpid = 0;
  }
  reap_zombies(true);
}

/* Runs every case, --jobs at a time, printing in case order. */
void cert_run_all(cert_ctx *cx) {
  rs.progress = isatty(STDERR_FILENO) != 0;
  rs.nslots = (size_t)cx->opt.jobs;
  rs.slots = calloc(rs.nslots, sizeof *rs.slots);
  rs.finished = calloc(cx->cases.n ? cx->cases.n : 1, sizeof *rs.finished);
  rs.rerun_q = calloc(cx->cases.n ? cx->cases.n : 1, sizeof *rs.rerun_q);
  struct pollfd *pf = calloc(2 * rs.nslots, sizeof *pf);
  if (!rs.slots || !rs.finished || !rs.rerun_q || !pf) {
    perror("bp-certify");
    exit(2);
  }
  for (size_t k = 0; k < rs.nslots; k++) rs.slots[k].wfd = rs.slots[k].cfd = -1;
  rs.use_workers = cx->opt.isolation == ISO_WORKER;
  size_t next = 0, printed = 0;
  double t0 = now();
  while (printed < cx->cases.n) {
    for (size_t k = 0; k < rs.nslots; k++) schedule(cx, &rs.slots[k], &next);
    size_t np = 0;
    for (size_t k = 0; k < rs.nslots; k++) {
      const slot *s = &rs.slots[k];
      if (s->wpid && s->wfd >= 0) pf[np++] = (struct pollfd){s->wfd, POLLIN, 0};
      if (s->busy && s->child && s->cfd >= 0) pf[np++] = (struct pollfd){s->cfd, POLLIN, 0};
    }
    if (np) {
      poll(pf, (nfds_t)np, 20);
    } else {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    for (size_t k = 0; k < rs.nslots; k++) {
      if (rs.slots[k].wpid) service_worker(cx, &rs.slots[k]);
      if (rs.slots[k].busy && rs.slots[k].child) service_child(cx, &rs.slots[k]);
    }
    reap_zombies(false);
    while (printed < cx->cases.n && rs.finished[printed]) print_case(cx, printed++);
    show_progress(cx, rs.ndone, next < cx->cases.n ? next : cx->cases.n - 1, t0);
  }
  if (rs.progress) fputs("\r\033[K", stderr);
  stop_workers(cx);
  free(rs.slots);
  rs.slots = NULL;
  rs.nslots = 0;
  free(rs.finished);
  free(rs.rerun_q);
  free(pf);
  free(rs.zombies);
}
