/*
 * tools/budget.c - time limits that the machine's load does not move
 * (budget.h), for bp-certify's cases and bp-info's isolated loads.
 *
 * A wall-clock limit fails a correct plugin on a busy machine: a case
 * that takes 1 s alone takes 10 s beside eight other busy processes.  So
 * the limit is kept in the process's own CPU time, which the load does
 * not stretch, and a process that uses no CPU time at all for the limit
 * in wall time is stopped too: that is a hang that sleeps or waits (a
 * deadlock, a lost wake-up), and a runnable process, however busy the
 * machine, is given some CPU time within seconds.  Linux reports a
 * process's CPU time in /proc/PID/stat; elsewhere the limit is wall time.
 */
#define _GNU_SOURCE

#include "budget.h"
#include "clock.h" /* now() */

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The CPU time of process pid, all its threads (live and ended), in
 * seconds; false where the system does not say. */
bool budget_cpu(pid_t pid, double *seconds) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
   * majflt cmajflt utime stime ...: comm may hold spaces and
   * parentheses, so the fields are counted from its last ')'. */
  const char *p = strrchr(buf, ')');
  unsigned long long ut, st;
  if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return false;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return false;
  *seconds = (double)(ut + st) / (double)hz;
  return true;
}

void budget_start(proc_budget *b, pid_t pid) {
  b->pid = pid;
  b->t0 = b->t_moved = now();
  b->have_cpu = budget_cpu(pid, &b->cpu0);
  b->cpu_seen = b->cpu0;
}

int budget_spent(proc_budget *b, double limit) {
  double t = now(), cpu;
  if (!b->have_cpu || !budget_cpu(b->pid, &cpu)) {
    /* No CPU time to read (another system, or the process is gone and
     * its end is the caller's to see): wall time. */
    return t - b->t0 > limit ? BUDGET_WALL : BUDGET_LEFT;
  }
  if (cpu > b->cpu_seen) {
    b->cpu_seen = cpu;
    b->t_moved = t;
  }
  if (cpu - b->cpu0 > limit) return BUDGET_CPU;
  if (t - b->t_moved > limit) return BUDGET_STALL;
  return BUDGET_LEFT;
}

const char *budget_how(int how) {
  switch (how) {
    case BUDGET_CPU: return " of CPU time";
    case BUDGET_STALL: return " without progress (no CPU time used in that time: asleep or blocked)";
    default: return "";
  }
}
