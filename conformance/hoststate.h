/*
 * conformance/hoststate.h - the rest of what a plugin could disturb in
 * the process that loads it, beside procstate.h's floating-point state,
 * signals, threads and mappings: the environment variables, the locale,
 * the working directory, the umask, the resource limits, the CPU
 * affinity of the calling thread and of the process's first thread, and
 * the open file descriptors, and the permissions of the host's
 * file-backed mappings (its programs' and libraries' code and data).
 *
 * The process checks take a snapshot before the plugin is loaded and
 * compare it after loading, after calls and after unloading (the file
 * descriptors and mappings after unloading only: a loaded device runtime
 * may hold its device files open).
 */
#ifndef BP_CONFORMANCE_HOSTSTATE_H
#define BP_CONFORMANCE_HOSTSTATE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t */
#endif
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#define HOSTSTATE_FDS 256

typedef struct host_state {
  char *env;            /* the environment, sorted, one variable a line (owned) */
  char locale[256];     /* setlocale(LC_ALL, NULL) */
  char cwd[PATH_MAX];   /* "" when getcwd failed */
  long umask;           /* from /proc/self/status; -1 when unknown */
  struct rlimit rl[RLIM_NLIMITS];
  bool have_aff;        /* the affinities were read */
  cpu_set_t aff;        /* of the calling thread */
  cpu_set_t aff_main;   /* of the process's first thread */
  int nfd;              /* open descriptors, -1 when unknown */
  int fd[HOSTSTATE_FDS];
  char fd_target[HOSTSTATE_FDS][80]; /* what each names (readlink), cut */
  struct host_map *maps; /* the file-backed mappings (owned), with HS_FDS */
  size_t nmaps;
} host_state;

/* What a snapshot holds and host_state_same compares: HS_FDS adds the
 * open descriptors and the file-backed mappings' permissions. */
enum { HS_NO_FDS = 0, HS_FDS = 1 };

/* Takes a snapshot; host_state_free releases it. */
void cert_host_state_get(host_state *out, int what);
void cert_host_state_free(host_state *s);

/* True when now equals before; else false with the first difference in
 * why ("the environment variable OMP_NUM_THREADS was set to '1'", "fd 7
 * (/proc/cpuinfo) was left open").  With HS_FDS the open descriptors are
 * compared too, and every address of a file-backed mapping that both
 * snapshots have must have kept its permissions ("/usr/lib/.../libc.so.6
 * at 0x7f..: r-xp became rwxp"). */
bool cert_host_state_same(const host_state *before, const host_state *now, int what, char *why,
                          size_t len);

#endif /* BP_CONFORMANCE_HOSTSTATE_H */
