/* conformance/hoststate.c - see hoststate.h. */
#include "hoststate.h"

#include <dirent.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The environment, sorted, one variable a line; NULL when out of memory. */
static char *env_text(void) {
  size_t n = 0, bytes = 1;
  for (char **e = environ; e && *e; e++, n++) bytes += strlen(*e) + 1;
  const char **v = malloc((n ? n : 1) * sizeof *v);
  char *out = malloc(bytes);
  if (!v || !out) {
    free(v);
    free(out);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) v[i] = environ[i];
  qsort(v, n, sizeof *v, cmp_str);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(v[i]);
    memcpy(out + o, v[i], l);
    out[o + l] = '\n';
    o += l + 1;
  }
  out[o] = '\0';
  free(v);
  return out;
}

static long read_umask(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long m = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Umask:", 6) == 0) m = strtol(line + 6, NULL, 8);
  fclose(f);
  return m;
}

typedef struct host_map {
  unsigned long lo, hi;
  char perms[5];
  char path[200];
} host_map;

/* The file-backed mappings, from /proc/self/maps. */
static void read_maps(host_state *s) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return;
  char line[512];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[8];
    int name = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &name) < 3 || !name ||
        line[name] != '/')
      continue;
    if (s->nmaps == cap) {
      cap = cap ? 2 * cap : 64;
      host_map *m = realloc(s->maps, cap * sizeof *m);
      if (!m) break;
      s->maps = m;
    }
    host_map *m = &s->maps[s->nmaps++];
    m->lo = lo;
    m->hi = hi;
    snprintf(m->perms, sizeof m->perms, "%.4s", perms);
    line[strcspn(line, "\n")] = '\0';
    snprintf(m->path, sizeof m->path, "%s", line + name);
  }
  fclose(f);
}

/* Every address that a file-backed mapping of b and one of n with the
 * same path both cover has the same permissions in each. */
static bool maps_same(const host_state *b, const host_state *n, char *why, size_t len) {
  for (size_t i = 0; i < b->nmaps; i++)
    for (size_t j = 0; j < n->nmaps; j++) {
      const host_map *x = &b->maps[i], *y = &n->maps[j];
      if (y->hi <= x->lo || y->lo >= x->hi || strcmp(x->path, y->path) != 0) continue;
      if (strcmp(x->perms, y->perms) == 0) continue;
      unsigned long at = x->lo > y->lo ? x->lo : y->lo;
      snprintf(why, len, "the host's mapping of %s at 0x%lx changed its permissions from %s to %s",
               x->path, at, x->perms, y->perms);
      return false;
    }
  return true;
}

static void read_fds(host_state *s) {
  DIR *d = opendir("/proc/self/fd");
  s->nfd = -1;
  if (!d) return;
  int own = dirfd(d);
  s->nfd = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd == own || s->nfd >= HOSTSTATE_FDS) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(path, s->fd_target[s->nfd], sizeof s->fd_target[0] - 1);
    s->fd_target[s->nfd][l > 0 ? l : 0] = '\0';
    s->fd[s->nfd++] = fd;
  }
  closedir(d);
}

void cert_host_state_get(host_state *out, int what) {
  memset(out, 0, sizeof *out);
  out->env = env_text();
  const char *loc = setlocale(LC_ALL, NULL);
  snprintf(out->locale, sizeof out->locale, "%s", loc ? loc : "?");
  if (!getcwd(out->cwd, sizeof out->cwd)) out->cwd[0] = '\0';
  out->umask = read_umask();
  for (int r = 0; r < RLIM_NLIMITS; r++)
    if (getrlimit(r, &out->rl[r]) != 0) memset(&out->rl[r], 0, sizeof out->rl[r]);
  out->have_aff = pthread_getaffinity_np(pthread_self(), sizeof out->aff, &out->aff) == 0 &&
                  sched_getaffinity(getpid(), sizeof out->aff_main, &out->aff_main) == 0;
  out->nfd = -1;
  if (what == HS_FDS) {
    read_fds(out);
    read_maps(out);
  }
}

void cert_host_state_free(host_state *s) {
  free(s->env);
  free(s->maps);
  s->env = NULL;
  s->maps = NULL;
  s->nmaps = 0;
}

/* The line of text (one variable) at p, into buf. */
static const char *line_at(const char *p, char *buf, size_t len) {
  size_t l = strcspn(p, "\n");
  if (l >= len) l = len - 1;
  memcpy(buf, p, l);
  buf[l] = '\0';
  return buf;
}

/* The first difference of two sorted environments into why. */
static void env_diff(const char *b, const char *n, char *why, size_t len) {
  char x[160], y[160];
  while (*b || *n) {
    size_t lb = strcspn(b, "\n"), ln = strcspn(n, "\n");
    if (lb == ln && memcmp(b, n, lb) == 0) {
      b += lb + (b[lb] != '\0');
      n += ln + (n[ln] != '\0');
      continue;
    }
    line_at(b, x, sizeof x);
    line_at(n, y, sizeof y);
    size_t kb = strcspn(x, "="), kn = strcspn(y, "=");
    if (*b && *n && kb == kn && memcmp(x, y, kb) == 0)
      snprintf(why, len, "the environment variable %.*s changed from '%s' to '%s'", (int)kb, x,
               x + kb + (x[kb] == '='), y + kn + (y[kn] == '='));
    else if (*n && (!*b || strcmp(y, x) < 0))
      snprintf(why, len, "the environment variable %.*s was set to '%s'", (int)kn, y,
               y + kn + (y[kn] == '='));
    else
      snprintf(why, len, "the environment variable %.*s was unset (it was '%s')", (int)kb, x,
               x + kb + (x[kb] == '='));
    return;
  }
  snprintf(why, len, "the environment changed");
}

static const char *const rlimit_name[] = {
    "RLIMIT_CPU",     "RLIMIT_FSIZE",   "RLIMIT_DATA",   "RLIMIT_STACK",      "RLIMIT_CORE",
    "RLIMIT_RSS",     "RLIMIT_NPROC",   "RLIMIT_NOFILE", "RLIMIT_MEMLOCK",    "RLIMIT_AS",
    "RLIMIT_LOCKS",   "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO",
    "RLIMIT_RTTIME"};

static void cpus_text(const cpu_set_t *s, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE && o + 8 < len; c++) {
    if (!CPU_ISSET(c, s)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, s)) e++;
    o += (size_t)snprintf(buf + o, len - o, e > c ? "%s%d-%d" : "%s%d", o ? "," : "", c, e);
    c = e;
  }
  if (!o) snprintf(buf, len, "none");
}

static bool fd_open(const host_state *s, int fd) {
  for (int i = 0; i < s->nfd; i++)
    if (s->fd[i] == fd) return true;
  return false;
}

static bool fds_same(const host_state *b, const host_state *n, char *why, size_t len) {
  if (b->nfd < 0 || n->nfd < 0) return true;
  for (int i = 0; i < n->nfd; i++)
    if (!fd_open(b, n->fd[i])) {
      snprintf(why, len, "file descriptor %d (%s) was opened and left open", n->fd[i],
               n->fd_target[i][0] ? n->fd_target[i] : "?");
      return false;
    }
  for (int i = 0; i < b->nfd; i++)
    if (!fd_open(n, b->fd[i])) {
      snprintf(why, len, "the host's file descriptor %d (%s) was closed", b->fd[i],
               b->fd_target[i][0] ? b->fd_target[i] : "?");
      return false;
    }
  return true;
}

bool cert_host_state_same(const host_state *b, const host_state *n, int what, char *why,
                          size_t len) {
  why[0] = '\0';
  if (b->env && n->env && strcmp(b->env, n->env) != 0) {
    env_diff(b->env, n->env, why, len);
    return false;
  }
  if (strcmp(b->locale, n->locale) != 0) {
    snprintf(why, len, "the locale changed from '%s' to '%s'", b->locale, n->locale);
    return false;
  }
  if (strcmp(b->cwd, n->cwd) != 0) {
    snprintf(why, len, "the working directory changed from '%s' to '%s'", b->cwd, n->cwd);
    return false;
  }
  if (b->umask >= 0 && n->umask >= 0 && b->umask != n->umask) {
    snprintf(why, len, "the umask changed from %04lo to %04lo", b->umask, n->umask);
    return false;
  }
  for (int r = 0; r < RLIM_NLIMITS; r++)
    if (b->rl[r].rlim_cur != n->rl[r].rlim_cur || b->rl[r].rlim_max != n->rl[r].rlim_max) {
      const char *name = r < (int)(sizeof rlimit_name / sizeof *rlimit_name) ? rlimit_name[r] : "a";
      snprintf(why, len, "the resource limit %s changed (soft %lld, hard %lld; it was %lld, %lld)",
               name, (long long)n->rl[r].rlim_cur, (long long)n->rl[r].rlim_max,
               (long long)b->rl[r].rlim_cur, (long long)b->rl[r].rlim_max);
      return false;
    }
  if (b->have_aff && n->have_aff) {
    char x[128], y[128];
    if (!CPU_EQUAL(&b->aff, &n->aff)) {
      cpus_text(&b->aff, x, sizeof x);
      cpus_text(&n->aff, y, sizeof y);
      snprintf(why, len, "the calling thread's CPU affinity changed from CPUs %s to %s", x, y);
      return false;
    }
    if (!CPU_EQUAL(&b->aff_main, &n->aff_main)) {
      cpus_text(&b->aff_main, x, sizeof x);
      cpus_text(&n->aff_main, y, sizeof y);
      snprintf(why, len, "the process's first thread's CPU affinity changed from CPUs %s to %s",
               x, y);
      return false;
    }
  }
  if (what == HS_FDS && !fds_same(b, n, why, len)) return false;
  if (what == HS_FDS && !maps_same(b, n, why, len)) return false;
  return true;
}
