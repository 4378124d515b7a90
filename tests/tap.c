/* tests/tap.c - see tap.h. */
#define _POSIX_C_SOURCE 200809L
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
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
    signal(SIGALRM, SIG_DFL);
    alarm(timeout);
    c->fn();
    fflush(stdout);
    exit(case_failed ? TAP_EXIT_FAIL : TAP_EXIT_PASS);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while ((r = read(fds[0], reason + got, reasonlen - 1 - got)) > 0) got += (size_t)r;
  reason[got] = '\0';
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGALRM)
      snprintf(verdict, verdictlen, " # TIMEOUT after %u s", timeout);
    else
      snprintf(verdict, verdictlen, " # CRASH signal %d", sig);
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
