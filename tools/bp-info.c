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
 * error.  Text from plugins is printed escaped (tools/termsafe.h).
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
#include "names.h"

static int json;

/* Writes s as a JSON string.  Paths, plugin strings and messages are bytes
 * from outside; JSON text is UTF-8, so each byte that is not part of a
 * well-formed UTF-8 sequence is written as U+FFFD. */
static void json_str(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned char c = *p;
    size_t n = termsafe_utf8_len((const char *)p);
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else if (n == 0)
      fputs("\\ufffd", stdout);
    else
      fwrite(p, 1, n, stdout);
    p += n ? n : 1;
  }
  putchar('"');
}

static const char *device_label(int32_t type, char *buf, size_t n) {
  const char *name = bp_device_type_name(type);
  if (name) return name;
  snprintf(buf, n, "type %d", (int)type);
  return buf;
}

static void print_header(void) {
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  const char *env = getenv("BP_PLUGIN_PATH");
  if (json) {
    printf("{\n  \"version\": ");
    json_str(bp_version());
    printf(",\n  \"abi\": \"%u.%u\",\n  \"plugin_path\": ", major, minor);
    json_str(env ? env : "");
    printf(",\n  \"plugin_dir\": ");
    json_str(bp_plugin_dir());
  } else {
    printf("Backplane %s (ABI %u.%u)\n\n", bp_version(), major, minor);
    printf("Plugin search path:\n");
    printf("  BP_PLUGIN_PATH     %s\n", env && *env ? termsafe(env) : "(not set)");
    printf("  installed          %s\n", termsafe(bp_plugin_dir()));
  }
}

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

/* How the plugin at path was found: bp-info's own record when it loaded
 * the file for the host's discovery, else the host's. */
static int32_t origin_of(const bp_plugin_info *p) {
  for (size_t i = 0; p->path && i < ncands; i++)
    if ((cands[i].canon && !strcmp(cands[i].canon, p->path)) || !strcmp(cands[i].path, p->path))
      return cands[i].origin;
  return p->origin;
}

static void print_plugin(const bp_plugin_info *p, int first, int crashed) {
  if (json) {
    printf("%s\n    {\"path\": ", first ? "" : ",");
    json_str(p->path);
    printf(", \"origin\": \"%s\", \"state\": \"%s\", \"name\": ", bp_tool_origin_name(origin_of(p)),
           bp_tool_state_name(p->state));
    json_str(p->name);
    printf(", \"vendor\": ");
    json_str(p->vendor);
    printf(", \"version\": ");
    json_str(p->version);
    printf(", \"abi\": \"%u.%u\", \"op_set_version\": %u, \"status\": \"%s\", \"error\": ",
           p->abi_major, p->abi_minor, p->op_set_version, bp_status_str((bp_status)p->status));
    json_str(p->error);
    printf(", \"crashed\": %s}", crashed ? "true" : "false");
    return;
  }
  printf("  %s\n", termsafe(p->path));
  printf("      found by    %s\n", bp_tool_origin_name(origin_of(p)));
  printf("      state       %s\n", bp_tool_state_name(p->state));
  if (p->name)
    printf("      name        %s %s (%s), ABI %u.%u, op set %u\n", termsafe(p->name),
           termsafe(p->version), p->vendor && *p->vendor ? termsafe(p->vendor) : "no vendor",
           p->abi_major, p->abi_minor, p->op_set_version);
  if (crashed)
    printf("      error       %s while loading in a child process; not loaded\n", p->error);
  else if (p->state == BP_PLUGIN_FAILED)
    printf("      error       %s: %s\n", bp_status_str((bp_status)p->status), termsafe(p->error));
  else if (p->error && *p->error)
    printf("      note        %s\n", termsafe(p->error));
}

static void print_plugins(void) {
  size_t n = bp_plugin_count(), ncrashed = 0;
  for (size_t i = 0; i < ncands; i++) ncrashed += cands[i].why[0] != '\0';
  if (json)
    printf(",\n  \"plugins\": [");
  else
    printf("\nPlugins: %zu\n", n + ncrashed);
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    bp_plugin_info p;
    p.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
    if (bp_plugin_get_info(bp_plugin_at(i), &p) != BP_OK) continue;
    print_plugin(&p, first, 0);
    first = 0;
  }
  /* Those that crashed or hung in the child, which the host never saw. */
  for (size_t i = 0; i < ncands; i++) {
    if (!cands[i].why[0]) continue;
    bp_plugin_info p;
    memset(&p, 0, sizeof p);
    p.path = cands[i].canon ? cands[i].canon : cands[i].path;
    p.origin = cands[i].origin;
    p.state = BP_PLUGIN_FAILED;
    p.status = BP_ERR_LOAD;
    p.error = cands[i].why;
    print_plugin(&p, first, 1);
    first = 0;
  }
  if (json) printf("%s]", first ? "" : "\n  ");
}

/* ------------------------------------------------------------------------ */
/* Devices and operators                                                    */
/* ------------------------------------------------------------------------ */

/* Device types are codes 1..63 (DLPack) and the runtime vendor range. */
static void print_devices(void) {
  if (json)
    printf(",\n  \"devices\": [");
  else
    printf("\nDevices:\n");
  int first = 1;
  for (int32_t type = 1; type < BP_DEVICE_DYNAMIC_FIRST + 64; type++) {
    if (type == 64) type = BP_DEVICE_DYNAMIC_FIRST;
    int32_t count;
    if (bp_device_count(type, &count) != BP_OK) continue;
    for (int32_t i = 0; i < count; i++) {
      bp_device_props p;
      memset(&p, 0, sizeof p);
      p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
      bp_device d = bp_device_make(type, i);
      if (bp_device_properties(d, &p) != BP_OK) snprintf(p.name, sizeof p.name, "(%s)", bp_last_error());
      p.name[sizeof p.name - 1] = '\0';
      if (json) {
        printf("%s\n    {\"type\": ", first ? "" : ",");
        json_str(bp_device_type_name(type));
        printf(", \"code\": %d, \"index\": %d, \"name\": ", (int)type, (int)i);
        json_str(p.name);
        printf(", \"total_memory\": %llu, \"compute_units\": %lld, \"arch\": \"%d.%d\"}",
               (unsigned long long)p.total_memory, (long long)p.compute_units, (int)p.arch_major,
               (int)p.arch_minor);
      } else {
        printf("  %s:%d  (code %d)  %s\n", termsafe(bp_device_type_name(type)), (int)i, (int)type,
               termsafe(p.name));
        /* Zero means "not reported" for each property. */
        if (p.total_memory) printf("      memory         %.1f GiB\n", (double)p.total_memory / (1 << 30));
        if (p.compute_units) printf("      compute units  %lld\n", (long long)p.compute_units);
        if (p.arch_major) printf("      architecture   %d.%d\n", (int)p.arch_major, (int)p.arch_minor);
      }
      first = 0;
    }
    if (count == 0 && !json)
      printf("  %s  (code %d)  no devices\n", termsafe(bp_device_type_name(type)), (int)type);
  }
  if (json) printf("%s]", first ? "" : "\n  ");
}

static void print_ops(void) {
  size_t n = bp_op_count();
  if (json)
    printf(",\n  \"ops\": [");
  else
    printf("\nOperators: %zu\n", n);
  for (size_t i = 0; i < n; i++) {
    bp_op_info o;
    memset(&o, 0, sizeof o);
    o.struct_size = BP_OP_INFO_STRUCT_SIZE;
    const bp_op *op = bp_op_at(i);
    if (bp_op_get_info(op, &o) != BP_OK) continue;
    if (json) {
      printf("%s\n    {\"name\": ", i ? "," : "");
      json_str(o.name);
      printf(", \"schema\": ");
      json_str(o.schema);
      printf(", \"owner\": ");
      json_str(o.owner);
      printf(", \"doc\": ");
      json_str(o.doc);
      printf(", \"nondeterministic\": %s, \"mixed_devices\": %s",
             (o.flags & BP_OP_NONDETERMINISTIC) ? "true" : "false",
             (o.flags & BP_OP_MIXED_DEVICES) ? "true" : "false");
      printf(", \"defined\": %s, \"meta\": %s, \"composite\": %s, \"kernels\": [",
             o.defined ? "true" : "false", o.has_meta ? "true" : "false",
             o.has_composite ? "true" : "false");
    } else {
      printf("  %s\n", termsafe(o.schema ? o.schema : o.name));
      if (!o.defined) printf("      (not defined: its plugin was unloaded)\n");
      if (o.doc && *o.doc) printf("      %s\n", termsafe(o.doc));
      printf("      defined by %s; meta function: %s%s%s%s\n", termsafe(o.owner), o.has_meta ? "yes" : "no",
             o.has_composite ? "; composite kernel" : "",
             (o.flags & BP_OP_NONDETERMINISTIC) ? "; nondeterministic" : "",
             (o.flags & BP_OP_MIXED_DEVICES) ? "; mixed devices" : "");
    }
    for (int32_t k = 0; k < o.nkernels; k++) {
      bp_kernel_info ki;
      memset(&ki, 0, sizeof ki);
      ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK) continue;
      char buf[32];
      if (json) {
        printf("%s{\"device\": ", k ? ", " : "");
        json_str(device_label(ki.device_type, buf, sizeof buf));
        printf(", \"kind\": \"%s\", \"plugin\": ", bp_tool_kind_name(ki.kind));
        json_str(ki.plugin);
        printf(", \"enabled\": %s, \"priority\": %d, \"active\": %s, \"dtypes\": ",
               ki.enabled ? "true" : "false", (int)ki.priority, ki.active ? "true" : "false");
        if (ki.dtypes) {
          putchar('[');
          for (const int32_t *d = ki.dtypes; *d != BP_DTYPE_INVALID; d++) {
            if (d != ki.dtypes) printf(", ");
            json_str(bp_dtype_name(*d));
          }
          printf("]}");
        } else {
          printf("null}");
        }
      } else {
        /* Every candidate for a device type is listed, the one calls go
         * to first marked active (see KERNEL PRECEDENCE in host.h). */
        printf("      kernel %-10s %-20s from %s (priority %d, %s); dtypes: ",
               termsafe(device_label(ki.device_type, buf, sizeof buf)), bp_tool_kind_name(ki.kind),
               termsafe(ki.plugin), (int)ki.priority,
               !ki.enabled ? "disabled" : ki.active ? "active" : "next in line");
        if (!ki.dtypes) printf("all the op allows");
        for (const int32_t *d = ki.dtypes; d && *d != BP_DTYPE_INVALID; d++)
          printf("%s%s", d != ki.dtypes ? ", " : "", bp_dtype_name(*d) ? bp_dtype_name(*d) : "?");
        putchar('\n');
      }
    }
    if (json) printf("]}");
  }
  if (json) printf("%s]\n}\n", n ? "\n  " : "");
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
  int discover = 1, isolate = -1, nfiles = 0;
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
  print_header();
  print_plugins();
  print_devices();
  print_ops();
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
