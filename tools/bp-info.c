/*
 * tools/bp-info.c - describes a Backplane host: its version and ABI, where
 * it looks for plugins, every plugin it found (and why any failed), its
 * devices, and its operators with their kernels, in the manner of
 * vulkaninfo or clinfo.
 *
 *   bp-info [--json] [--no-discover] [--isolate | --no-isolate]
 *           [--timeout SECONDS] [PLUGIN.so ...]
 *
 * Plugins named on the command line are loaded first; then, unless
 * --no-discover is given, those in BP_PLUGIN_PATH and the installed plugin
 * directory.  With --isolate (the default when bp-info discovers plugins
 * or is given several files) each plugin is first loaded in a child
 * process (tools/isolate.h): one that crashes or hangs there (--timeout,
 * 10 s by default) is listed with what happened and left out, and the
 * others are loaded.  The exit status is 0 even when a plugin failed to
 * load (the listing says why), 1 when one crashed or hung, 2 for a usage
 * error.  The listing is libbackplane's bp_describe(), given what the
 * children found; text from plugins is printed escaped.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <config.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/host.h>

#include "isolate.h"
#include "termsafe.h"

/* ------------------------------------------------------------------------ */
/* Plugins, and isolating their loads                                       */
/* ------------------------------------------------------------------------ */

/* A plugin file that bp-info loads itself under --isolate, in the order
 * the host would: the files named, then BP_PLUGIN_PATH, then the installed
 * directory. */
typedef struct candidate {
  char *path;     /* as given, or DIR/NAME.so */
  char *canon;    /* its canonical path; NULL when it has none (missing) */
  int32_t origin; /* a bp_plugin_origin */
  char why[160];  /* not "": it crashed or hung in the child; not loaded */
} candidate;

static candidate *cands;
static size_t ncands;

static void add_candidate(const char *path, int32_t origin) {
  char buf[PATH_MAX];
  char *canon = realpath(path, buf) ? strdup(buf) : NULL;
  /* The host loads one file once, however it is reached. */
  for (size_t i = 0; canon && i < ncands; i++)
    if (cands[i].canon && !strcmp(cands[i].canon, canon)) {
      free(canon);
      return;
    }
  candidate *grown = realloc(cands, (ncands + 1) * sizeof *cands);
  char *copy = strdup(path);
  if (!grown || !copy) {
    fprintf(stderr, "bp-info: out of memory\n");
    exit(1);
  }
  cands = grown;
  cands[ncands++] = (candidate){copy, canon, origin, ""};
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds each "*.so" of dir, in name order, as bp_plugin_discover() finds
 * them. */
static void scan_dir(const char *dir, int32_t origin) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
    char **grown = realloc(names, (n + 1) * sizeof *names);
    if (!grown || !(grown[n] = strdup(e->d_name))) {
      free(grown ? grown : names);
      closedir(d);
      fprintf(stderr, "bp-info: out of memory\n");
      exit(1);
    }
    names = grown;
    n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) < sizeof path)
      add_candidate(path, origin);
    free(names[i]);
  }
  free(names);
}

/* BP_PLUGIN_PATH as the host reads it: not in a setuid or setgid
 * program. */
static const char *plugin_path_env(void) {
  if (getuid() != geteuid() || getgid() != getegid()) return NULL;
#ifdef HAVE_SECURE_GETENV
  return secure_getenv("BP_PLUGIN_PATH");
#else
  return getenv("BP_PLUGIN_PATH");
#endif
}

/* Probes every candidate in a child, then loads those that neither
 * crashed nor hung; returns how many did. */
static size_t load_isolated(double timeout_s) {
  size_t bad = 0;
  for (size_t i = 0; i < ncands; i++) {
    candidate *c = &cands[i];
    /* A file that is not there fails cleanly in the host's own load. */
    int r = c->canon ? isolate_probe(c->path, timeout_s, c->why, sizeof c->why) : 0;
    if (r < 0) {
      fprintf(stderr, "bp-info: %s: cannot load it in a child process (%s); loading it here\n",
              termsafe(c->path), c->why);
      c->why[0] = '\0';
    }
    bad += r > 0;
  }
  for (size_t i = 0; i < ncands; i++)
    if (!cands[i].why[0]) bp_plugin_load(cands[i].path, NULL);
  return bad;
}

/* Writes the description to stdout. */
static int write_stdout(void *user, const char *text, size_t n) {
  (void)user;
  return fwrite(text, 1, n, stdout) == n ? 0 : BP_ERR_BACKEND;
}

static int usage(FILE *f) {
  fprintf(f, "usage: bp-info [--json] [--no-discover] [--isolate | --no-isolate]\n"
             "               [--timeout SECONDS] [PLUGIN.so ...]\n"
             "--isolate (the default when discovering or given several plugins) loads each\n"
             "plugin in a child process first; one that crashes or hangs there (longer than\n"
             "--timeout, 10 s) is listed and left out.  Exit status: 0, or 1 when a plugin\n"
             "crashed or hung, 2 for a usage error.\n");
  return f == stderr ? 2 : 0;
}

int main(int argc, char **argv) {
  int json = 0, discover = 1, isolate = -1, nfiles = 0;
  double timeout_s = 10;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--no-discover")) {
      discover = 0;
    } else if (!strcmp(a, "--isolate")) {
      isolate = 1;
    } else if (!strcmp(a, "--no-isolate")) {
      isolate = 0;
    } else if (!strcmp(a, "--timeout")) {
      /* Digits and a point: no sign, exponent, hex or inf. */
      const char *t = i + 1 < argc ? argv[++i] : "";
      char *end = NULL;
      timeout_s = strspn(t, "0123456789.") == strlen(t) ? strtod(t, &end) : 0;
      if (end && *end) timeout_s = 0;
      if (!(timeout_s > 0 && timeout_s <= 86400)) {
        fprintf(stderr, "bp-info: --timeout needs seconds, more than 0 and at most 86400; got '%s'\n",
                termsafe(t));
        return usage(stderr);
      }
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      return usage(stdout);
    } else if (a[0] == '-') {
      fprintf(stderr, "bp-info: unknown option '%s'\n", termsafe(a));
      return usage(stderr);
    } else {
      argv[nfiles++] = argv[i]; /* the files, in order, at the front */
    }
  }
  if (isolate < 0) isolate = discover || nfiles > 1;
  size_t crashed = 0;
  if (isolate) {
    for (int i = 0; i < nfiles; i++) add_candidate(argv[i], BP_ORIGIN_EXPLICIT);
    const char *env = discover ? plugin_path_env() : NULL;
    char *copy = env && *env ? strdup(env) : NULL;
    char *save = NULL;
    for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save))
      scan_dir(dir, BP_ORIGIN_ENV);
    free(copy);
    if (discover) scan_dir(bp_plugin_dir(), BP_ORIGIN_INSTALLED);
    crashed = load_isolated(timeout_s);
  } else {
    /* Load failures are recorded and listed below, not fatal here. */
    for (int i = 0; i < nfiles; i++) bp_plugin_load(argv[i], NULL);
    if (discover && bp_plugin_discover(NULL) != BP_OK) {
      fprintf(stderr, "bp-info: %s\n", termsafe(bp_last_error()));
      return 1;
    }
  }
  /* bp-info's own record of each file it looked at: how it found it, and
   * why it left it out. */
  bp_describe_file *files = ncands ? calloc(ncands, sizeof *files) : NULL;
  if (ncands && !files) {
    fprintf(stderr, "bp-info: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < ncands; i++)
    files[i] = (bp_describe_file){BP_DESCRIBE_FILE_STRUCT_SIZE, cands[i].path, cands[i].canon,
                                  cands[i].origin, 0, cands[i].why};
  bp_describe_options opt = {BP_DESCRIBE_OPTIONS_STRUCT_SIZE,
                             json ? BP_DESCRIBE_JSON : BP_DESCRIBE_TEXT, 0, files, ncands};
  bp_status st = bp_describe(&opt, write_stdout, NULL);
  free(files);
  if (st != BP_OK || fflush(stdout) != 0) {
    fprintf(stderr, "bp-info: %s\n", st != BP_OK ? termsafe(bp_last_error()) : "cannot write");
    return 1;
  }
  for (size_t i = 0; i < ncands; i++)
    if (cands[i].why[0])
      fprintf(stderr, "bp-info: %s: %s; it was left out\n", termsafe(cands[i].path), cands[i].why);
  for (size_t i = 0; i < ncands; i++) {
    free(cands[i].path);
    free(cands[i].canon);
  }
  free(cands);
  return crashed ? 1 : 0;
}
