/*
 * tools/budget.h - a child process's time limit (bp-certify's and
 * bp-info's --timeout), kept
 * so that the machine's load does not move a verdict: the limit is spent
 * when the process has used that much CPU time, or has gone that long in
 * wall time without using any (asleep or blocked: a hang that waits).
 * Where the system does not report a process's CPU time, it is wall time.
 */
#ifndef BP_TOOLS_BUDGET_H
#define BP_TOOLS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct proc_budget {
  pid_t pid;
  double t0;       /* when it started (wall, monotonic) */
  double cpu0;     /* the process's CPU time then */
  double cpu_seen; /* its CPU time when last read */
  double t_moved;  /* when its CPU time last moved */
  bool have_cpu;   /* its CPU time can be read */
} proc_budget;

/* The CPU time of process pid (every thread), in seconds; false where the
 * system does not say (or pid is gone). */
bool budget_cpu(pid_t pid, double *seconds);

/* Starts counting for process pid, now. */
void budget_start(proc_budget *b, pid_t pid);

/* How a limit was spent. */
enum { BUDGET_LEFT = 0, BUDGET_CPU, BUDGET_STALL, BUDGET_WALL };

/* Whether pid has spent limit: BUDGET_LEFT while it has not, else how:
 * BUDGET_CPU (that much CPU time), BUDGET_STALL (that much wall time
 * without any CPU time) or BUDGET_WALL (that much wall time, where CPU
 * time cannot be read). */
int budget_spent(proc_budget *b, double limit);

/* The words that follow "after LIMIT s" for how (budget_spent's result):
 * " of CPU time", " without progress (...)" or "". */
const char *budget_how(int how);

#endif
