/*
 * host/plugin_probe.c - the opt-in probe of a plugin file in a child
 * process before the host loads it (BP_PLUGIN_PROBE=1).
 *
 * The checks of plugin_file.c and plugin_dyn.c refuse a file whose headers
 * and dynamic tables the dynamic linker would trip on, but no check can
 * read a plugin's code: a corrupt relocation target or a plugin whose
 * bp_plugin_init crashes still kills the process that loads it.  A host
 * that must survive any file (a long-running server that discovers
 * plugins from a directory others write to) sets BP_PLUGIN_PROBE=1: each
 * new file is then first loaded in a forked child, the whole load (dlopen,
 * bp_plugin_init, setup() registering into the child's copy of the host),
 * and the host loads it only if the child does not die.  A file that
 * probed clean is remembered by its path, size, modification time and a
 * hash of its bytes, so each version of a file is probed once per process.
 * The child has only the forking thread: a lock another thread held at the
 * fork stays held there, and a probe that needs it times out and refuses
 * the file, so a host should discover before its other threads call into
 * it (docs/host-guide.md).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A file that probed clean. */
typedef struct probed {
  char *path;
  uint64_t size, hash;
  int64_t mtime_ns;
} probed;

static probed *cache; /* under the loader's lock, as every caller holds it */
static size_t ncache, cache_cap;

#define PROBE_TIMEOUT_S 20.0

static bool probe_enabled(void) {
  const char *e = getenv("BP_PLUGIN_PROBE");
  return e && *e && strcmp(e, "0") != 0;
}

/* The file's size, modification time and a 64-bit FNV-1a hash of its
 * bytes taken 8 at a time (a change of any byte changes it, in practice);
 * false when it cannot be read. */
static bool identify(const char *path, probed *id) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  uint64_t h = 14695981039346656037ull;
  uint64_t buf[8192];
  for (ssize_t n; ok && (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      ok = errno == EINTR;
      continue;
    }
    size_t words = (size_t)n / 8, tail = (size_t)n % 8;
    for (size_t i = 0; i < words; i++) h = (h ^ buf[i]) * 1099511628211ull;
    if (tail) {
      uint64_t last = 0;
      memcpy(&last, (const unsigned char *)buf + words * 8, tail);
      h = (h ^ last ^ ((uint64_t)tail << 56)) * 1099511628211ull;
    }
  }
  close(fd);
  if (!ok) return false;
  id->size = (uint64_t)st.st_size;
  id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  id->hash = h;
  return true;
}

static bool known(const char *path, const probed *id) {
  for (size_t i = 0; i < ncache; i++)
    if (cache[i].size == id->size && cache[i].mtime_ns == id->mtime_ns &&
        cache[i].hash == id->hash && strcmp(cache[i].path, path) == 0)
      return true;
  return false;
}

static void remember(const char *path, const probed *id) {
  if (ncache == cache_cap) {
    size_t cap = cache_cap ? 2 * cache_cap : 8;
    probed *n = bp__realloc(cache, cap * sizeof *n);
    if (!n) return; /* it is probed again next time */
    cache = n;
    cache_cap = cap;
  }
  char *p = bp__strdup(path);
  if (!p) return;
  cache[ncache] = *id;
  cache[ncache++].path = p;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

bp_status bp__plugin_probe(const char *path, void (*load)(const char *path)) {
  if (!probe_enabled()) return BP_OK;
  probed id;
  if (!identify(path, &id))
    return bp__error(BP_ERR_LOAD, "plugin '%s': cannot read it to probe it: %s", path,
                     strerror(errno));
  if (known(path, &id)) return BP_OK;
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0)
    return bp__error(BP_ERR_LOAD, "plugin '%s': cannot fork to probe it (BP_PLUGIN_PROBE): %s",
                     path, strerror(errno));
  if (pid == 0) {
    load(path); /* whatever it returns: only a death matters */
    _exit(0);
  }
  int status = 0;
  double start = seconds();
  struct timespec nap = {0, 200000}; /* 0.2 ms, doubling to 20 ms */
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      return bp__error(BP_ERR_LOAD, "plugin '%s': lost its probe's child: %s", path,
                       strerror(errno));
    }
    if (seconds() - start > PROBE_TIMEOUT_S) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return bp__error(BP_ERR_LOAD, "plugin '%s': its probe in a child process did not finish in "
                       "%.0f s (its load hangs); it was not loaded "
                       "(BP_PLUGIN_PROBE)", path, PROBE_TIMEOUT_S);
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 20000000) nap.tv_nsec *= 2;
  }
  if (WIFSIGNALED(status))
    return bp__error(BP_ERR_LOAD, "plugin '%s': loading it in a child process killed the child "
                     "(signal %d, %s); it was not loaded (BP_PLUGIN_PROBE)",
                     path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return bp__error(BP_ERR_LOAD, "plugin '%s': loading it in a child process made the child exit "
                     "with status %d; it was not loaded (BP_PLUGIN_PROBE)",
                     path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  remember(path, &id);
  return BP_OK;
}
