/*
 * bench/discover.c - how long bp_plugin_discover() takes for a directory of
 * many plugins, against dlopen() of the same files alone, in the same run.
 *
 *   discover PLUGIN.so [N]   copies PLUGIN.so (bench/many-plugin.c) N times
 *                            (default 200) into a temporary directory as
 *                            bench_p000.so ..., then times, in fresh child
 *                            processes, (a) dlopen + dlsym of every copy and
 *                            (b) bp_plugin_discover() over the directory
 *                            (file checks, dlopen, version negotiation,
 *                            setup, registration).  Best of 5 each.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#include "../tools/clock.h" /* now() */

static double now_ms(void) { return now() * 1e3; }

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  if (!in || !out) {
    if (in) fclose(in);
    if (out) fclose(out);
    return -1;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  return fclose(out);
}

/* Runs one timing in a child (a fresh process: nothing loaded yet) and
 * returns its milliseconds, or -1. */
static double in_child(int which, const char *dir, int n) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    double ms = -1;
    if (which == 0) {
      double t0 = now_ms();
      int ok = 0;
      for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bench_p%03d.so", dir, i);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        ok += h && dlsym(h, "bp_plugin_init");
      }
      ms = ok == n ? now_ms() - t0 : -1;
    } else {
      setenv("BP_PLUGIN_PATH", dir, 1);
      bp_op_count(); /* the core op set, defined once per process, is not timed */
      size_t loaded = 0;
      double t0 = now_ms();
      bp_status st = bp_plugin_discover(&loaded);
      ms = now_ms() - t0;
      if (st || loaded != (size_t)n) {
        fprintf(stderr, "discover: loaded %zu of %d: %s\n", loaded, n, bp_last_error());
        ms = -1;
      }
    }
    if (write(fd[1], &ms, sizeof ms) != (ssize_t)sizeof ms) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  double ms = -1;
  if (read(fd[0], &ms, sizeof ms) != (ssize_t)sizeof ms) ms = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: discover PLUGIN.so [N]\n");
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 1 || n > 999) n = 200;
  char dir[] = "/tmp/bp-discover-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  for (int i = 0; i < n; i++) {
    char to[4096];
    snprintf(to, sizeof to, "%s/bench_p%03d.so", dir, i);
    if (copy_file(argv[1], to) != 0) {
      fprintf(stderr, "discover: cannot copy %s\n", argv[1]);
      return 1;
    }
  }
  double best[2] = {1e30, 1e30};
  for (int rep = 0; rep < 5; rep++)
    for (int w = 0; w < 2; w++) {
      double ms = in_child(w, dir, n);
      if (ms < 0) {
        fprintf(stderr, "discover: a run failed\n");
        return 1;
      }
      if (ms < best[w]) best[w] = ms;
    }
  printf("Plugin discovery, %d plugins, best of 5 (fresh process each)\n\n", n);
  printf("%-34s %9s %9s\n", "", "ms", "x dlopen");
  printf("%-34s %9.2f %9.2f\n", "dlopen + dlsym of each file", best[0], 1.0);
  printf("%-34s %9.2f %9.2f\n", "bp_plugin_discover()", best[1], best[1] / best[0]);
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_p%03d.so", dir, i);
    unlink(path);
  }
  rmdir(dir);
  return 0;
}
