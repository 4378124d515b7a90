/* tests/tap.c - see tap.h. */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"
#include "../tools/clock.h" /* now() */

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit codes a case's child uses to report its outcome. */
enum { TAP_EXIT_PASS = 0, TAP_EXIT_FAIL = 1, TAP_EXIT_SKIP = 77 };

static bool case_failed;
static bool in_child;
static int skip_fd = -1; /* write end of the pipe that carries a skip reason */
static char skip_reason[512];

void tap_diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("# ", stdout);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  fflush(stdout);
}

static bool fail_at(const char *file, int line, const char *what) {
  case_failed = true;
  tap_diag("  Failed: %s", what);
  tap_diag("  at %s:%d", file, line);
  return false;
}

bool tap_ok(bool cond, const char *expr, const char *file, int line) {
  return cond ? true : fail_at(file, line, expr);
}

bool tap_is_int(long long got, long long want, const char *gexpr,
                const char *wexpr, const char *file, int line) {
  if (got == want) return true;
  fail_at(file, line, gexpr);
  tap_diag("         got: %lld", got);
  tap_diag("    expected: %lld (%s)", want, wexpr);
  return false;
}

bool tap_is_str(const char *got, const char *want, const char *gexpr,
                const char *wexpr, const char *file, int line) {
  if (got == want || (got && want && strcmp(got, want) == 0)) return true;
  fail_at(file, line, gexpr);
  tap_diag("         got: %s%s%s", got ? "'" : "", got ? got : "NULL", got ? "'" : "");
  tap_diag("    expected: %s%s%s (%s)", want ? "'" : "", want ? want : "NULL",
           want ? "'" : "", wexpr);
  return false;
}

bool tap_has_str(const char *hay, const char *needle, const char *hexpr,
                 const char *file, int line) {
  if (hay && needle && strstr(hay, needle)) return true;
  fail_at(file, line, hexpr);
  tap_diag("         got: %s%s%s", hay ? "'" : "", hay ? hay : "NULL", hay ? "'" : "");
  tap_diag("    expected to contain: '%s'", needle ? needle : "NULL");
  return false;
}

bool tap_cmp_int(long long a, const char *op, long long b, const char *aexpr,
                 const char *bexpr, const char *file, int line) {
  bool r;
  if (!strcmp(op, "==")) r = a == b;
  else if (!strcmp(op, "!=")) r = a != b;
  else if (!strcmp(op, "<")) r = a < b;
  else if (!strcmp(op, "<=")) r = a <= b;
  else if (!strcmp(op, ">")) r = a > b;
  else if (!strcmp(op, ">=")) r = a >= b;
  else {
    fail_at(file, line, "cmp_ok with an unknown operator");
    tap_diag("    operator: '%s'", op);
    return false;
  }
  if (r) return true;
  fail_at(file, line, aexpr);
  tap_diag("    %lld (%s)", a, aexpr);
  tap_diag("        %s", op);
  tap_diag("    %lld (%s)", b, bexpr);
  return false;
}

bool tap_is_double(double got, double want, double tol, const char *gexpr,
                   const char *wexpr, const char *file, int line) {
  if ((isnan(got) && isnan(want)) || got == want || fabs(got - want) <= tol)
    return true;
  fail_at(file, line, gexpr);
  tap_diag("         got: %.17g", got);
  tap_diag("    expected: %.17g (%s), tolerance %g", want, wexpr, tol);
  return false;
}

void tap_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(skip_reason, sizeof skip_reason, fmt, ap);
  va_end(ap);
  if (in_child) {
    if (skip_fd >= 0) {
      ssize_t w = write(skip_fd, skip_reason, strlen(skip_reason));
      (void)w;
    }
    fflush(stdout);
    exit(TAP_EXIT_SKIP);
  }
  /* In-process mode: the runner checks skip_reason after the case. */
  fflush(stdout);
  exit(TAP_EXIT_SKIP);
}

int tap_skip_all(const char *reason) {
  printf("1..0 # SKIP %s\n", reason);
  fflush(stdout);
  return 0;
}

/*
 * The watchdog counts CPU time, which a busy machine does not stretch: a
 * case is stopped when the CPU time of its process and every process it
 * started passes the timeout, or when they use none for as many seconds
 * of wall time (a hang that sleeps or waits).  Where /proc cannot be read,
 * the timeout is wall time.
 */

/* The processes of /proc: pid, parent, CPU seconds; in[] marks root and
 * its live descendants.  Returns the count, 0 when /proc cannot be read or
 * root is not there. */
enum { TREE_MAX = 4096 };
static pid_t tree_pid[TREE_MAX], tree_ppid[TREE_MAX];
static double tree_secs[TREE_MAX];
static bool tree_in[TREE_MAX];

static size_t tree_scan(pid_t root) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  size_t n = 0;
  long hz = sysconf(_SC_CLK_TCK);
  struct dirent *e;
  while ((e = readdir(d)) && n < TREE_MAX) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
    long ppid;
    unsigned long long ut, st, cut, cst;
    if (!p || sscanf(p + 2, "%*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %llu %llu",
                     &ppid, &ut, &st, &cut, &cst) != 5)
      continue;
    tree_pid[n] = (pid_t)pid;
    tree_ppid[n] = (pid_t)ppid;
    /* (root's reaped children count too) */
    tree_secs[n] = (double)(ut + st + (pid == root ? cut + cst : 0)) / (double)(hz > 0 ? hz : 100);
    tree_in[n] = pid == root;
    n++;
  }
  closedir(d);
  bool found = false;
  for (size_t i = 0; i < n; i++) found |= tree_in[i];
  if (!found) return 0;
  for (bool more = true; more;) { /* descendants, to a fixpoint */
    more = false;
    for (size_t i = 0; i < n; i++) {
      if (tree_in[i]) continue;
      for (size_t j = 0; j < n; j++)
        if (tree_in[j] && tree_pid[j] == tree_ppid[i]) {
          tree_in[i] = more = true;
          break;
        }
    }
  }
  return n;
}

/* Seconds of CPU time used by root and its descendants, or -1. */
static double tree_cpu(pid_t root) {
  size_t n = tree_scan(root);
  if (n == 0) return -1;
  double total = 0;
  for (size_t i = 0; i < n; i++)
    if (tree_in[i]) total += tree_secs[i];
  return total;
}

/* Kills root and every process it started. */
static void tree_kill(pid_t root) {
  size_t n = tree_scan(root);
  for (size_t i = 0; i < n; i++)
    if (tree_in[i] && tree_pid[i] != root) kill(tree_pid[i], SIGKILL);
  kill(root, SIGKILL);
}

static int run_in_child(const tap_case *c, unsigned timeout, char *reason,
                        size_t reasonlen, char *verdict, size_t verdictlen) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(verdict, verdictlen, " # CRASH pipe: %s", strerror(errno));
    return TAP_EXIT_FAIL;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(verdict, verdictlen, " # CRASH fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return TAP_EXIT_FAIL;
  }
  if (pid == 0) {
    close(fds[0]);
    skip_fd = fds[1];
    in_child = true;
    c->fn();
    fflush(stdout);
    exit(case_failed ? TAP_EXIT_FAIL : TAP_EXIT_PASS);
  }
  close(fds[1]);
  size_t got = 0;
  bool open_pipe = true;
  int status = 0;
  const char *why = NULL;
  double start = now(), progress = start, last_cpu = 0;
  for (;;) {
    if (open_pipe) {
      struct pollfd pfd = {fds[0], POLLIN, 0};
      if (poll(&pfd, 1, 500) > 0) {
        ssize_t r = read(fds[0], reason + got, reasonlen - 1 - got);
        if (r > 0) got += (size_t)r;
        else if (r == 0 || errno != EINTR) open_pipe = false;
      }
    } else {
      struct timespec ts = {0, 500000000};
      nanosleep(&ts, NULL);
    }
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    double t = now(), used = tree_cpu(pid);
    if (used < 0) {
      if (t - start > timeout) why = "s";
    } else if (used > timeout) {
      why = "s of CPU time";
    } else if (used > last_cpu + 0.005) {
      last_cpu = used;
      progress = t;
    } else if (t - progress > timeout) {
      why = "s without progress (no CPU time used in that time: asleep or blocked)";
    }
    if (why) {
      tree_kill(pid);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
  }
  reason[got] = '\0';
  close(fds[0]);
  if (why) {
    snprintf(verdict, verdictlen, " # TIMEOUT after %u %s", timeout, why);
    return TAP_EXIT_FAIL;
  }
  if (WIFSIGNALED(status)) {
    snprintf(verdict, verdictlen, " # CRASH signal %d", WTERMSIG(status));
    return TAP_EXIT_FAIL;
  }
  int code = WEXITSTATUS(status);
  if (code != TAP_EXIT_PASS && code != TAP_EXIT_FAIL && code != TAP_EXIT_SKIP) {
    snprintf(verdict, verdictlen, " # CRASH exit status %d", code);
    return TAP_EXIT_FAIL;
  }
  return code;
}

int tap_main(const tap_case *cases, size_t n) {
  const char *only = getenv("TAP_ONLY");
  const char *nofork = getenv("TAP_NOFORK");
  const char *t = getenv("TAP_TIMEOUT");
  unsigned timeout = t ? (unsigned)strtoul(t, NULL, 10) : 120;
  if (timeout == 0) timeout = 120;
  size_t planned = 0;
  for (size_t i = 0; i < n; i++)
    if (!only || !strcmp(only, cases[i].name)) planned++;
  printf("1..%zu\n", planned);
  fflush(stdout);
  int failures = 0;
  size_t num = 0;
  for (size_t i = 0; i < n; i++) {
    const tap_case *c = &cases[i];
    if (only && strcmp(only, c->name)) continue;
    num++;
    char reason[512] = "";
    char verdict[128] = "";
    int code;
    if (nofork && *nofork == '1') {
      case_failed = false;
      c->fn();
      code = case_failed ? TAP_EXIT_FAIL : TAP_EXIT_PASS;
    } else {
      case_failed = false;
      code = run_in_child(c, timeout, reason, sizeof reason, verdict, sizeof verdict);
    }
    if (code == TAP_EXIT_SKIP)
      printf("ok %zu - %s # SKIP %s\n", num, c->name, reason[0] ? reason : "(no reason)");
    else if (code == TAP_EXIT_PASS)
      printf("ok %zu - %s\n", num, c->name);
    else {
      printf("not ok %zu - %s%s\n", num, c->name, verdict);
      failures++;
    }
    fflush(stdout);
  }
  return failures ? 1 : 0;
}
