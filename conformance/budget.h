/*
 * conformance/budget.h - a child process's time limit (--timeout), kept
 * so that the machine's load does not move a verdict: the limit is spent
 * when the process has used that much CPU time, or has gone that long in
 * wall time without using any (asleep or blocked: a hang that waits).
 * Where the system does not report a process's CPU time, it is wall time.
 */
#ifndef BP_CERT_BUDGET_H
#define BP_CERT_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct cert_budget {
  pid_t pid;
  double t0;       /* when it started (wall, monotonic) */
  double cpu0;     /* the process's CPU time then */
  double cpu_seen; /* its CPU time when last read */
  double t_moved;  /* when its CPU time last moved */
  bool have_cpu;   /* its CPU time can be read */
} cert_budget;

/* The CPU time of process pid (every thread), in seconds; false where the
 * system does not say (or pid is gone). */
bool cert_budget_cpu(pid_t pid, double *seconds);

/* Starts counting for process pid, now. */
void cert_budget_start(cert_budget *b, pid_t pid);

/* Whether pid has spent limit: true fills why (n bytes) with the reason,
 * which begins "TIMEOUT after LIMIT s". */
bool cert_budget_spent(cert_budget *b, double limit, char *why, size_t n);

#endif
