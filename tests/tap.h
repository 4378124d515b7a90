/*
 * tests/tap.h - a small TAP producer for Backplane's tests.
 *
 * A test program is a list of cases.  tap_main() prints the plan first,
 * then runs each case in a child process with a watchdog, so a crash or a
 * hang becomes one failed test point and the run goes on:
 *
 *     ok 3 - tensor_zero_size
 *     not ok 4 - tensor_overflow # CRASH signal 11
 *     ok 5 - dlpack_cuda # SKIP no CUDA device
 *
 * Inside a case, the assertion macros print a diagnostic with the file, the
 * line and both sides when they fail, mark the case failed, and continue.
 * TAP_NOFORK=1 runs cases in-process (for gdb); TAP_TIMEOUT=S sets the
 * watchdog (default 120 s of CPU time of the case's process and those it
 * starts, or as many seconds in which they use none; a busy machine does
 * not stretch either); TAP_ONLY=name runs one case.
 */
#ifndef BP_TESTS_TAP_H
#define BP_TESTS_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tap_case {
  const char *name;
  void (*fn)(void);
} tap_case;

#define TAP_CASE(fn) { #fn, fn }
#define TAP_NCASES(arr) (sizeof(arr) / sizeof((arr)[0]))

/* Runs the cases and returns the exit status for main(). */
int tap_main(const tap_case *cases, size_t n);

/* Prints "1..0 # SKIP reason" and returns the exit status for main(). */
int tap_skip_all(const char *reason);

/* Ends the current case as skipped with `reason` (printf-style). */
void tap_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints a "# " diagnostic line (printf-style). */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Assertion back ends; use the macros below. */
bool tap_ok(bool cond, const char *expr, const char *file, int line);
bool tap_is_int(long long got, long long want, const char *gexpr,
                const char *wexpr, const char *file, int line);
bool tap_is_str(const char *got, const char *want, const char *gexpr,
                const char *wexpr, const char *file, int line);
bool tap_has_str(const char *hay, const char *needle, const char *hexpr,
                 const char *file, int line);
bool tap_cmp_int(long long a, const char *op, long long b, const char *aexpr,
                 const char *bexpr, const char *file, int line);
bool tap_is_double(double got, double want, double tol, const char *gexpr,
                   const char *wexpr, const char *file, int line);

/* ok(cond): cond holds. */
#define ok(cond) tap_ok(!!(cond), #cond, __FILE__, __LINE__)
/* is_int(got, want): integers equal; prints both. */
#define is_int(got, want) \
  tap_is_int((long long)(got), (long long)(want), #got, #want, __FILE__, __LINE__)
/* is_str(got, want): strings equal (NULL-safe); prints both. */
#define is_str(got, want) tap_is_str((got), (want), #got, #want, __FILE__, __LINE__)
/* has_str(hay, needle): needle occurs in hay; prints both. */
#define has_str(hay, needle) tap_has_str((hay), (needle), #hay, __FILE__, __LINE__)
/* cmp_ok(a, op, b): e.g. cmp_ok(n, "<=", 4); prints both. */
#define cmp_ok(a, op, b) \
  tap_cmp_int((long long)(a), (op), (long long)(b), #a, #b, __FILE__, __LINE__)
/* is_double(got, want, tol): |got - want| <= tol (NaN equals NaN). */
#define is_double(got, want, tol) \
  tap_is_double((got), (want), (tol), #got, #want, __FILE__, __LINE__)

/* is_status(expr, want): a bp_status equals want; prints both names and
 * the thread's last error.  Needs <backplane/host.h>. */
#define is_status(expr, want)                                              \
  do {                                                                     \
    int tap_st_ = (int)(expr);                                             \
    if (!tap_is_str(bp_status_str((bp_status)tap_st_),                     \
                    bp_status_str((bp_status)(want)), #expr, #want,        \
                    __FILE__, __LINE__))                                   \
      tap_diag("  last error: %s", bp_last_error());                      \
  } while (0)

#endif /* BP_TESTS_TAP_H */
