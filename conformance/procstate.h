/*
 * conformance/procstate.h - the per-process state a plugin must leave as
 * it found it: the floating-point control state (rounding mode, flush to
 * zero, denormals are zero, trapped exceptions), the disposition of every
 * signal, the signal mask, the number of threads, and what is mapped.
 *
 * The process checks take a snapshot before the plugin is loaded and
 * compare against it after loading, after calls and after unloading.
 */
#ifndef BP_CONFORMANCE_PROCSTATE_H
#define BP_CONFORMANCE_PROCSTATE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The floating-point control state (not the exception flags, which any
 * computation may raise). */
typedef struct fp_state {
  int round;          /* fegetround() */
  uint32_t simd_ctrl; /* x86 MXCSR without its flag bits; AArch64 FPCR */
  uint32_t x87_ctrl;  /* x86 x87 control word, else 0 */
} fp_state;

void cert_fp_state_get(fp_state *out);
/* "" when equal, else what differs ("rounding mode 0x400 (was 0), flush
 * to zero on (was off)") into why. */
bool cert_fp_state_same(const fp_state *before, const fp_state *now, char *why, size_t len);
/* Puts a snapshot back (what a fresh process would have). */
void cert_fp_state_set(const fp_state *s);

#define SIGSTATE_MAX 65
typedef struct sig_state {
  struct sigaction act[SIGSTATE_MAX]; /* by signal number; [0] unused */
  sigset_t mask;
} sig_state;

void cert_sig_state_get(sig_state *out);
/* Puts every disposition back (not the mask). */
void cert_sig_state_set(const sig_state *s);
/* False with the first difference in why: which signal, and how. */
bool cert_sig_state_same(const sig_state *before, const sig_state *now, char *why, size_t len);

/* The threads of this process (/proc/self/task), or -1. */
int cert_proc_threads(void);

/* The ids of this process's threads into tids (at most max); their count,
 * or -1. */
int cert_proc_thread_ids(long *tids, int max);
/* "1234 (name), ..." for the threads now running that are not among
 * tids[0 .. n-1], into buf. */
void cert_proc_new_threads(const long *tids, int n, char *buf, size_t len);

/* What is mapped, but the brk heap and the stack: the number of mappings,
 * their total size, and the size mapped from `path` (0 when path is NULL
 * or not mapped). */
typedef struct map_state {
  long count;
  long long bytes;
  long long from_path;
} map_state;
bool cert_map_state_get(const char *path, map_state *out);

/* Whether the mappings tell anything: not in a process whose sanitizer
 * runtime (ASan, TSan) maps memory of its own as it goes. */
bool cert_map_state_meaningful(void);
/* Whether the thread count tells anything: not under ThreadSanitizer,
 * whose runtime starts a thread of its own when the first one starts. */
bool cert_proc_threads_meaningful(void);
/* Whether this is a ThreadSanitizer build, whose runtime cannot start a
 * thread in a child forked from a threaded process. */
bool cert_built_with_tsan(void);

#endif /* BP_CONFORMANCE_PROCSTATE_H */
