/*
 * tests/tap-selftest.c - cases that the TAP harness's watchdog must stop
 * (tests/test-tap.sh runs it with TAP_TIMEOUT=2 and reads its verdicts):
 * one that burns CPU, one that sleeps, one whose child burns CPU while it
 * waits, one that sleeps less than the timeout several times while a
 * child works, and one that passes.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static volatile unsigned long sink;

static void burn(double seconds) {
  clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
  while (clock() < end) sink++;
}

static void spins(void) { burn(1e6); }

static void sleeps(void) { sleep(1000); }

static void child_spins(void) {
  pid_t pid = fork();
  if (pid == 0) {
    burn(1e6);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
}

/* 3 s of a child's work, more than the timeout in wall time, far less in
 * CPU time than the timeout at each step: must pass. */
static void child_works(void) {
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 6; i++) {
      burn(0.05);
      struct timespec ts = {0, 400000000};
      nanosleep(&ts, NULL);
    }
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void passes(void) { ok(1 + 1 == 2); }

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(spins), TAP_CASE(sleeps), TAP_CASE(child_spins), TAP_CASE(child_works),
      TAP_CASE(passes),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
