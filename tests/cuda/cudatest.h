/*
 * tests/cuda/cudatest.h - helpers shared by the CUDA plugin's tests.
 *
 * CUDA does not survive fork(), and tap_main() runs every case in a child
 * process, so the parent never touches CUDA: cuda_probe() asks a child of
 * its own how many CUDA devices the plugin reports, and every case loads
 * the plugins itself.
 */
#ifndef BP_TESTS_CUDA_CUDATEST_H
#define BP_TESTS_CUDA_CUDATEST_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <backplane/host.h>

#include "tap.h"

/* $top_builddir/plugins/<name>/.libs/<name>.so */
static inline const char *plugin_path(const char *name) {
  static char buf[2][4096];
  static int next;
  char *b = buf[next++ % 2];
  const char *top = getenv("top_builddir");
  snprintf(b, sizeof buf[0], "%s/plugins/%s/.libs/%s.so", top ? top : ".", name, name);
  return b;
}

static inline bool plugin_built(const char *name) { return access(plugin_path(name), R_OK) == 0; }

/* Loads plugins/<name>, or fails the case with the host's message. */
static inline bp_plugin *load_plugin(const char *name) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_load(plugin_path(name), &p);
  if (st != BP_OK) {
    tap_diag("loading %s failed: %s: %s", plugin_path(name), bp_status_str(st), bp_last_error());
    ok(0);
    return NULL;
  }
  return p;
}

/*
 * The number of CUDA devices the plugin reports, found in a child process
 * (0 when the plugin is not built or the child fails), and in `reason`
 * (may be NULL) the plugin's note when there are none.
 */
static inline int cuda_probe(char *reason, size_t n) {
  int fds[2];
  if (reason && n) reason[0] = '\0';
  if (!plugin_built("cuda") || pipe(fds) != 0) return 0;
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    close(fds[0]);
    bp_plugin *p = NULL;
    int count = 0;
    if (bp_plugin_load(plugin_path("cuda"), &p) == BP_OK) {
      char note[512];
      snprintf(note, sizeof note, "%s", bp_last_error());
      if (bp_device_count(BP_DEVICE_CUDA, &count) != BP_OK) count = 0;
      if (write(fds[1], note, strlen(note)) < 0) count = 0;
    }
    _exit(count > 100 ? 100 : count);
  }
  close(fds[1]);
  if (reason && n) {
    ssize_t got = read(fds[0], reason, n - 1);
    reason[got > 0 ? got : 0] = '\0';
  }
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 0;
  return WEXITSTATUS(status);
}

#define CUDA0 bp_device_make(BP_DEVICE_CUDA, 0)

#endif /* BP_TESTS_CUDA_CUDATEST_H */
