/*
 * conformance/bp-certify.c - certifies a Backplane plugin against the ABI
 * rules and the `core` op set (docs/op-set.md), printing TAP and
 * optionally writing a JSON certificate and an HTML report.
 *
 * The parent never loads the plugin: a GPU context, for one, cannot be
 * inherited across fork.  With --isolation case, every case runs in a
 * forked child that loads the plugin itself, so that a crash or a hang
 * becomes a CRASH or TIMEOUT verdict for that case only, and no case sees
 * state left behind by another.  With --isolation worker (the default),
 * each of the --jobs slots keeps a forked worker that loads the plugin
 * once and runs the cases the parent hands it, one at a time, putting
 * back the per-process state a case may change in between; a case that
 * does not pass in a worker is rerun alone in a fresh child, and that
 * verdict is the one reported.  A case reports "<status>\n<detail>\n";
 * a worker ends each case with "done\n".  The parent prints the verdicts
 * in case order.
 *
 * docs/certification.md describes every check and the two profiles.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <fnmatch.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <backplane/host.h>

#include "certify.h"
#include "num.h"
#include "ref.h"

#define CERTIFY_VERSION "0.3.0"

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

/* How cases are kept apart: a fresh process each, or long-lived workers. */
enum isolation { ISO_WORKER, ISO_CASE };
static const char *const isolation_name[] = {"worker", "case"};

static struct {
  const char *plugin;
  const char *device;  /* "TYPE[:INDEX]" as given, or NULL */
  const char *profile; /* "core" or "full" */
  const char *ops;     /* fnmatch glob, or NULL for all */
  const char *json;
  const char *html;
  long jobs;
  double timeout;
  uint64_t seed;
  bool list;
  bool full;
  enum isolation isolation;
} opt = {NULL, NULL, "core", NULL, NULL, NULL, 1, 10.0, 1, false, false, ISO_WORKER};

static void usage(FILE *to) {
  fprintf(to,
          "usage: bp-certify PLUGIN.so [--device TYPE[:INDEX]] [--profile core|full]\n"
          "                  [--ops GLOB] [--json FILE] [--html FILE] [--jobs N]\n"
          "                  [--timeout S] [--seed N] [--isolation worker|case] [--list]\n");
}

static void bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bad_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bp-certify: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  usage(stderr);
  exit(2);
}

static bool parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static void parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (strcmp(a, "--list") == 0) {
      opt.list = true;
      continue;
    }
    if (a[0] != '-') {
      if (opt.plugin) bad_usage("more than one plugin given ('%s' and '%s')", opt.plugin, a);
      opt.plugin = a;
      continue;
    }
    static const char *const with_value[] = {"--device", "--profile", "--ops",  "--json",
                                             "--html",   "--jobs",    "--timeout", "--seed",
                                             "--isolation"};
    const char *val = NULL;
    size_t k;
    for (k = 0; k < sizeof with_value / sizeof *with_value; k++) {
      size_t len = strlen(with_value[k]);
      if (strncmp(a, with_value[k], len) != 0) continue;
      if (a[len] == '=') {
        val = a + len + 1;
        break;
      }
      if (a[len] == '\0') {
        if (i + 1 >= argc) bad_usage("%s needs a value", with_value[k]);
        val = argv[++i];
        break;
      }
    }
    if (!val) bad_usage("unknown option '%s'", a);
    const char *name = with_value[k];
    if (strcmp(name, "--device") == 0) {
      /* TYPE is a name ("cpu", "cuda", a vendor's); it is resolved once the
       * plugin has registered its device types. */
      const char *colon = strchr(val, ':');
      size_t tlen = colon ? (size_t)(colon - val) : strlen(val);
      long idx;
      if (tlen == 0) bad_usage("--device: empty device type in '%s'", val);
      if (colon && !parse_long(colon + 1, 0, INT32_MAX, &idx))
        bad_usage("--device: bad index in '%s' (expected TYPE[:INDEX], INDEX >= 0)", val);
      opt.device = val;
    } else if (strcmp(name, "--profile") == 0) {
      if (strcmp(val, "core") != 0 && strcmp(val, "full") != 0)
        bad_usage("--profile: expected 'core' or 'full', got '%s'", val);
      opt.profile = val;
      opt.full = strcmp(val, "full") == 0;
    } else if (strcmp(name, "--ops") == 0) {
      opt.ops = val;
    } else if (strcmp(name, "--json") == 0) {
      if (!*val) bad_usage("--json: empty file name");
      opt.json = val;
    } else if (strcmp(name, "--html") == 0) {
      if (!*val) bad_usage("--html: empty file name");
      opt.html = val;
    } else if (strcmp(name, "--jobs") == 0) {
      if (!parse_long(val, 1, 1024, &opt.jobs))
        bad_usage("--jobs: expected an integer 1 .. 1024, got '%s'", val);
    } else if (strcmp(name, "--timeout") == 0) {
      char *end;
      errno = 0;
      double t = strtod(val, &end);
      if (errno || end == val || *end || !(t > 0) || t > 86400)
        bad_usage("--timeout: expected seconds > 0, got '%s'", val);
      opt.timeout = t;
    } else if (strcmp(name, "--isolation") == 0) {
      if (strcmp(val, "worker") == 0) opt.isolation = ISO_WORKER;
      else if (strcmp(val, "case") == 0) opt.isolation = ISO_CASE;
      else bad_usage("--isolation: expected 'worker' or 'case', got '%s'", val);
    } else {
      char *end;
      errno = 0;
      /* Decimal digits only: strtoull itself would skip blanks, wrap a
       * negative number and read a leading 0 as octal. */
      unsigned long long s = strtoull(val, &end, 10);
      if (errno || end == val || *end || !(val[0] >= '0' && val[0] <= '9'))
        bad_usage("--seed: expected a non-negative integer, got '%s'", val);
      opt.seed = s;
    }
  }
  if (!opt.plugin) bad_usage("no plugin given");
}

/* ------------------------------------------------------------------------ */
/* Verdicts, written by the child                                           */
/* ------------------------------------------------------------------------ */

enum status { ST_PASS, ST_FAIL, ST_SKIP, ST_CRASH, ST_TIMEOUT };
static const char *const status_name[] = {"pass", "fail", "skip", "crash", "timeout"};

/* The child's end of the pipe. */
static int verdict_fd = -1;
/* The last verdict's detail when there was no pipe to send it on (a
 * worker loading the plugin). */
static char unsent[1024];

static void send_verdict(enum status st, char *detail) {
  /* The detail is one line of a TAP point. */
  for (char *p = detail; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '#' || *p == '\t') *p = ' ';
  if (verdict_fd < 0) {
    snprintf(unsent, sizeof unsent, "%s", detail);
    return;
  }
  char buf[1100];
  int n = snprintf(buf, sizeof buf, "%s\n%s\n", status_name[st], detail);
  if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
  for (int off = 0; off < n;) {
    ssize_t w = write(verdict_fd, buf + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (int)w;
  }
}

static void verdict(enum status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(enum status st, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  send_verdict(st, detail);
}

/* ------------------------------------------------------------------------ */
/* Protected memory and the fault handler (host-visible devices)            */
/* ------------------------------------------------------------------------ */

/* A read-only input between two PROT_NONE guard pages.  A write into the
 * data pages is a schema-honesty failure, an access to a guard page a
 * bounds failure; the handler names the argument and ends the case. */
typedef struct region {
  uintptr_t map_lo, data_lo, data_hi, map_hi; /* guard | data pages | guard */
  uintptr_t elems_lo, elems_hi;               /* the elements themselves */
  int arg;
  char name[32];
  bool readonly; /* the data pages are read-only (an input) */
  bool used;
} region;

static region regions[16];

static void on_fault(int sig, siginfo_t *si, void *uc_) {
  (void)uc_;
  uintptr_t a = (uintptr_t)si->si_addr;
  for (int i = 0; i < 16; i++) {
    const region *r = &regions[i];
    if (!r->used || a < r->map_lo || a >= r->map_hi) continue;
    char msg[300];
    if (a >= r->data_lo && a < r->data_hi && !r->readonly)
      break; /* a writable page cannot fault: not ours */
    if (a >= r->data_lo && a < r->data_hi)
      snprintf(msg, sizeof msg,
               "honesty: the kernel wrote to argument %d '%s', which its schema does not declare "
               "mutable (read-only page; byte %ld of the argument)",
               r->arg, r->name, (long)(a - r->elems_lo));
    else if (a < r->data_lo)
      snprintf(msg, sizeof msg,
               "bounds: the kernel touched %ld bytes before argument %d '%s' (guard page)",
               (long)(r->elems_lo - a), r->arg, r->name);
    else
      snprintf(msg, sizeof msg,
               "bounds: the kernel touched byte %ld past the end of argument %d '%s' (guard page)",
               (long)(a - r->elems_hi), r->arg, r->name);
    send_verdict(ST_FAIL, msg);
    _exit(0);
  }
  /* Not ours: a crash.  It is reported here rather than by dying of the
   * signal, because a sanitizer runtime may own the default action. */
  char msg[120];
  snprintf(msg, sizeof msg, "CRASH signal %d (address %p)", sig, si->si_addr);
  send_verdict(ST_CRASH, msg);
  _exit(0);
}

static void install_fault_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);
  sigaction(SIGILL, &sa, NULL);
}

/* ------------------------------------------------------------------------ */
/* Plugin access inside a child                                             */
/* ------------------------------------------------------------------------ */

static bp_plugin *the_plugin;
static bp_plugin_info the_info;
static bp_device the_device;
/* Whether the CPU may touch the device's memory.  Only the host CPU device
 * counts as host visible (bp_device_type_flags could say so of others, but
 * the checks that write through host pointers are kept to the CPU);
 * BP_CERTIFY_DEVICE_PATH=1 forces the device path even there. */
static bool host_visible;

/* Loads the plugin; on failure gives a FAIL verdict and returns false. */
static bool load_plugin(void) {
  if (bp_plugin_load(opt.plugin, &the_plugin) != BP_OK) {
    verdict(ST_FAIL, "plugin does not load: %s", bp_last_error());
    return false;
  }
  the_info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(the_plugin, &the_info) != BP_OK || !the_info.name) {
    verdict(ST_FAIL, "bp_plugin_get_info failed: %s", bp_last_error());
    return false;
  }
  return true;
}

static bool is_core(const char *name) { return strncmp(name, "core::", 6) == 0; }

/* Whether the plugin registered an enabled kernel of op for device type. */
static bool plugin_kernel(const bp_op *op, int32_t type, bp_kernel_info *out) {
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  if (bp_op_get_info(op, &oi) != BP_OK) return false;
  for (int32_t k = 0; k < oi.nkernels; k++) {
    bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
    if (bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK && ki.device_type == type && ki.enabled &&
        ki.plugin && strcmp(ki.plugin, the_info.name) == 0) {
      if (out) *out = ki;
      return true;
    }
  }
  return false;
}

/* The device under test: --device when given, else the device type for
 * which the plugin registered most of its kernels, else the CPU. */
static bool pick_device(void) {
  const char *force = getenv("BP_CERTIFY_DEVICE_PATH");
  if (opt.device) {
    const char *colon = strchr(opt.device, ':');
    size_t tlen = colon ? (size_t)(colon - opt.device) : strlen(opt.device);
    int32_t index = colon ? (int32_t)strtol(colon + 1, NULL, 10) : 0;
    /* Fixed codes first, then the runtime-assigned vendor range. */
    for (int32_t code = 1; code < BP_DEVICE_DYNAMIC_FIRST + 256; code++) {
      const char *n = bp_device_type_name(code);
      if (n && strlen(n) == tlen && strncmp(n, opt.device, tlen) == 0) {
        the_device = bp_device_make(code, index);
        host_visible = code == BP_DEVICE_CPU && !(force && *force == '1');
        return true;
      }
    }
    verdict(ST_FAIL, "--device %s: no such device type is registered", opt.device);
    return false;
  }
  int32_t best = BP_DEVICE_CPU, best_n = 0;
  int32_t types[64], counts[64];
  int nt = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK) continue;
    for (int32_t k = 0; k < oi.nkernels; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK || !ki.plugin ||
          strcmp(ki.plugin, the_info.name) != 0)
        continue;
      int t;
      for (t = 0; t < nt && types[t] != ki.device_type; t++) {
      }
      if (t == nt) {
        if (nt == 64) continue;
        types[nt] = ki.device_type;
        counts[nt++] = 0;
      }
      if (++counts[t] > best_n) best_n = counts[t], best = types[t];
    }
  }
  the_device = bp_device_make(best, 0);
  host_visible = best == BP_DEVICE_CPU && !(force && *force == '1');
  return true;
}

static const char *device_name(int32_t type) {
  const char *n = bp_device_type_name(type);
  return n ? n : "?";
}

/* "[2, 3]" into buf. */
static const char *shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "[");
  for (int32_t d = 0; d < ndim && o < len; d++)
    o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (o < len) snprintf(buf + o, len - o, "]");
  return buf;
}
/* ------------------------------------------------------------------------ */
/* Handshake                                                                */
/* ------------------------------------------------------------------------ */

static void case_exports(const char *arg) {
  (void)arg;
  elf_syms syms;
  char err[256];
  if (!elf_read_dynsyms(opt.plugin, &syms, err, sizeof err)) {
    verdict(ST_FAIL, "%s", err);
    return;
  }
  char extra[512] = "";
  size_t nextra = 0, len = 0;
  bool has_init = false;
  for (size_t i = 0; i < syms.n; i++) {
    if (!syms.v[i].defined) continue;
    if (strcmp(syms.v[i].name, "bp_plugin_init") == 0) {
      has_init = true;
      continue;
    }
    if (nextra++ < 5 && len < sizeof extra)
      len += (size_t)snprintf(extra + len, sizeof extra - len, "%s%s", len ? ", " : "",
                              syms.v[i].name);
  }
  elf_syms_free(&syms);
  if (!has_init)
    verdict(ST_FAIL, "bp_plugin_init is not exported");
  else if (nextra)
    verdict(ST_FAIL, "%zu symbols exported besides bp_plugin_init: %s%s", nextra, extra,
            nextra > 5 ? ", ..." : "");
  else
    verdict(ST_PASS, "exports only bp_plugin_init");
}

static void case_imports(const char *arg) {
  (void)arg;
  elf_syms syms;
  char err[256];
  if (!elf_read_dynsyms(opt.plugin, &syms, err, sizeof err)) {
    verdict(ST_FAIL, "%s", err);
    return;
  }
  char bad[512] = "";
  size_t nbad = 0, len = 0;
  for (size_t i = 0; i < syms.n; i++) {
    if (syms.v[i].defined || strncmp(syms.v[i].name, "bp_", 3) != 0) continue;
    if (nbad++ < 5 && len < sizeof bad)
      len += (size_t)snprintf(bad + len, sizeof bad - len, "%s%s", len ? ", " : "",
                              syms.v[i].name);
  }
  elf_syms_free(&syms);
  if (nbad)
    verdict(ST_FAIL, "imports %zu bp_ symbols (reach the host through its table): %s%s",
            nbad, bad, nbad > 5 ? ", ..." : "");
  else
    verdict(ST_PASS, "no bp_ imports");
}

static void case_loads(const char *arg) {
  (void)arg;
  if (load_plugin())
    verdict(ST_PASS, "%s %s (%s)", the_info.name, the_info.version ? the_info.version : "?",
            the_info.vendor ? the_info.vendor : "?");
}

static void case_version(const char *arg) {
  (void)arg;
  if (!load_plugin()) return;
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  if (the_info.abi_major != major)
    verdict(ST_FAIL, "plugin ABI %u.%u, host ABI %u.%u: majors differ", the_info.abi_major,
            the_info.abi_minor, major, minor);
  else
    verdict(ST_PASS, "ABI %u.%u (host %u.%u), op set %u", the_info.abi_major,
            the_info.abi_minor, major, minor, the_info.op_set_version);
}

/* handshake/names: the descriptor's name is a valid identifier
 * ([a-z][a-z0-9_]*, as device and namespace names are), and it gives a
 * vendor and a version. */
static void case_names(const char *arg) {
  (void)arg;
  if (!load_plugin()) return;
  const char *n = the_info.name;
  bool ok = n[0] >= 'a' && n[0] <= 'z';
  for (const char *p = n; ok && *p; p++)
    ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
  if (!ok)
    verdict(ST_FAIL, "plugin name '%s' is not [a-z][a-z0-9_]*", n);
  else if (!the_info.vendor || !*the_info.vendor)
    verdict(ST_FAIL, "plugin '%s' gives no vendor", n);
  else if (!the_info.version || !*the_info.version)
    verdict(ST_FAIL, "plugin '%s' gives no version", n);
  else
    verdict(ST_PASS, "name '%s', vendor '%s', version '%s'", n, the_info.vendor,
            the_info.version);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static void case_profile(const char *arg) {
  (void)arg;
  if (!load_plugin() || !pick_device()) return;
  if (the_info.op_set_version == 0) {
    verdict(ST_PASS, "claims no core op set (op_set_version 0): its own ops are certified on "
                     "the generic checks");
    return;
  }
  size_t ncore = 0, nmissing = 0;
  const char *first = NULL;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK || !is_core(oi.name)) continue;
    ncore++;
    bool found = false;
    for (int32_t k = 0; k < oi.nkernels && !found; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      found = bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK &&
              ki.device_type == the_device.type && ki.enabled && ki.plugin &&
              strcmp(ki.plugin, the_info.name) == 0;
    }
    if (!found && nmissing++ == 0) first = oi.name;
  }
  if (ncore == 0)
    verdict(ST_FAIL, "the host defines no core:: ops");
  else if (nmissing == 1)
    verdict(ST_FAIL, "claims core op set %u, but %s has no kernel for %s", the_info.op_set_version,
            first, device_name(the_device.type));
  else if (nmissing)
    verdict(ST_FAIL, "claims core op set %u, but %s has no kernel for %s (%zu of %zu core ops "
            "missing)", the_info.op_set_version, first, device_name(the_device.type), nmissing,
            ncore);
  else
    verdict(ST_PASS, "%zu core ops have kernels for %s", ncore, device_name(the_device.type));
}

static void case_schemas(const char *arg) {
  (void)arg;
  if (!load_plugin()) return;
  size_t nown = 0, nimpl = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(op, &oi) != BP_OK) continue;
    bool own = oi.owner && strcmp(oi.owner, the_info.name) == 0;
    int32_t mine = 0;
    for (int32_t k = 0; k < oi.nkernels; k++) {
      bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK || !ki.plugin ||
          strcmp(ki.plugin, the_info.name) != 0)
        continue;
      /* One kernel per op and device type. */
      for (int32_t k2 = k + 1; k2 < oi.nkernels; k2++) {
        bp_kernel_info k2i = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
        if (bp_op_get_kernel(op, (size_t)k2, &k2i) == BP_OK && k2i.device_type == ki.device_type &&
            k2i.plugin && strcmp(k2i.plugin, the_info.name) == 0) {
          verdict(ST_FAIL, "%s has two kernels for device type %s", oi.name,
                  device_name(ki.device_type));
          return;
        }
      }
      mine++;
    }
    if (!own && !mine) continue;
    if (own) nown++;
    nimpl += (size_t)mine;
    if (!oi.defined || !oi.schema) {
      verdict(ST_FAIL, "%s: the plugin %s it, but it has no definition (schema)", oi.name,
              own ? "owns" : "implements");
      return;
    }
    if (own && is_core(oi.name)) {
      verdict(ST_FAIL, "%s: a plugin may not define ops in the core namespace", oi.name);
      return;
    }
  }
  verdict(ST_PASS, "%zu ops of its own, %zu kernels, all on defined ops with schemas", nown, nimpl);
}

/* ------------------------------------------------------------------------ */
/* Samples: the arguments of one call, and its reference result             */
/* ------------------------------------------------------------------------ */

/* splitmix64, seeded per case from --seed and the case's name. */
static uint64_t rng_state;
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
static double rng_uniform(double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng_next() >> 11) / 9007199254740992.0);
}
static void rng_seed_name(const char *name) {
  uint64_t h = 1469598103934665603u;
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
  rng_state = opt.seed ^ h;
}

/* Random values of r's dtype: floats in [lo, hi) rounded to the dtype,
 * integers in [lo, hi] clipped to the dtype's range, bools 0 or 1. */
static void fill_rt(rt *r, double lo, double hi) {
  for (int64_t i = 0; i < r->numel; i++) {
    if (dt_is_float(r->dtype)) {
      r->f[i] = round_to(r->dtype, rng_uniform(lo, hi));
    } else if (r->dtype == BP_BOOL) {
      r->i[i] = (int64_t)(rng_next() & 1);
    } else {
      int64_t l = (int64_t)ceil(lo), h = (int64_t)floor(hi);
      if (l < dt_min(r->dtype)) l = dt_min(r->dtype);
      if (h > dt_max(r->dtype)) h = dt_max(r->dtype);
      r->i[i] = h < l ? l : l + (int64_t)(rng_next() % (uint64_t)(h - l + 1));
    }
  }
}

static rt *rand_rt(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi) {
  rt *r = rt_new(dt, ndim, sizes);
  fill_rt(r, lo, hi);
  return r;
}

/* Sample kinds: the test points of numerics, and the inputs of the other
 * checks. */
enum sk { SK_BASIC, SK_SHAPES, SK_EMPTY, SK_BCAST, SK_NONCONTIG, SK_BADSHAPE, SK_COUNT };
static const char *const sk_name[] = {"basic",     "shapes",   "empty", "broadcast",
                                      "noncontig", "badshape"};
#define SHAPE_VARIANTS 3

enum argk { AK_TENSOR, AK_FLOAT, AK_INT, AK_BOOL, AK_INTLIST, AK_DTYPE, AK_NONE, AK_STR };

typedef struct sarg {
  int k;
  rt *t;           /* AK_TENSOR: the values (owned) */
  bool nc;         /* AK_TENSOR: lay it out non-contiguously */
  double f;        /* AK_FLOAT */
  int64_t i;       /* AK_INT, AK_BOOL */
  int64_t list[4]; /* AK_INTLIST */
  size_t nlist;
  int32_t dt;      /* AK_DTYPE */
  const char *s;   /* AK_STR: static */
} sarg;

typedef struct sample {
  int n;
  sarg a[8];
} sample;

static void sample_free(sample *s) {
  for (int i = 0; i < s->n; i++) rt_free(s->a[i].t);
  memset(s, 0, sizeof *s);
}

static void add_tensor(sample *s, rt *t, bool nc) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_TENSOR;
  a->t = t;
  a->nc = nc && t->ndim > 0;
}
static void add_float(sample *s, double f) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_FLOAT;
  a->f = f;
}
static void add_int(sample *s, int64_t i) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_INT;
  a->i = i;
}
static void add_list(sample *s, const int64_t *v, size_t n) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_INTLIST;
  memcpy(a->list, v, n * sizeof *v);
  a->nlist = n;
}
static void add_dtype(sample *s, int32_t dt) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_DTYPE;
  a->dt = dt;
}

enum kind { K_BINARY, K_ADD_OUT, K_MULADD, K_UNARY, K_WHERE, K_REDUCE, K_ARGMAX, K_MATMUL,
            K_SOFTMAX, K_LAYER_NORM, K_CAST, K_CONTIGUOUS, K_FILL, K_COPY };

static const struct {
  const char *name; /* without "core::" */
  enum kind kind;
  int sub;          /* the ref_binop, ref_unop, ref_redop, or log for softmax */
} refs[] = {
    {"add", K_BINARY, RB_ADD},           {"add.out", K_ADD_OUT, RB_ADD},
    {"sub", K_BINARY, RB_SUB},           {"mul", K_BINARY, RB_MUL},
    {"div", K_BINARY, RB_DIV},           {"maximum", K_BINARY, RB_MAXIMUM},
    {"minimum", K_BINARY, RB_MINIMUM},   {"pow", K_BINARY, RB_POW},
    {"muladd", K_MULADD, 0},             {"neg", K_UNARY, RU_NEG},
    {"abs", K_UNARY, RU_ABS},            {"relu", K_UNARY, RU_RELU},
    {"exp", K_UNARY, RU_EXP},            {"log", K_UNARY, RU_LOG},
    {"sqrt", K_UNARY, RU_SQRT},          {"rsqrt", K_UNARY, RU_RSQRT},
    {"sigmoid", K_UNARY, RU_SIGMOID},    {"tanh", K_UNARY, RU_TANH},
    {"gelu", K_UNARY, RU_GELU},          {"where", K_WHERE, 0},
    {"sum", K_REDUCE, RR_SUM},           {"mean", K_REDUCE, RR_MEAN},
    {"amax", K_REDUCE, RR_AMAX},         {"amin", K_REDUCE, RR_AMIN},
    {"argmax", K_ARGMAX, 0},             {"matmul", K_MATMUL, 0},
    {"softmax", K_SOFTMAX, 0},           {"log_softmax", K_SOFTMAX, 1},
    {"layer_norm", K_LAYER_NORM, 0},     {"cast", K_CAST, 0},
    {"contiguous", K_CONTIGUOUS, 0},     {"fill_", K_FILL, 0},
    {"copy_", K_COPY, 0},
};
#define NREFS (sizeof refs / sizeof *refs)

static int ref_index(const char *opname) {
  if (!is_core(opname)) return -1;
  for (size_t r = 0; r < NREFS; r++)
    if (strcmp(refs[r].name, opname + 6) == 0) return (int)r;
  return -1;
}

/* Whether a sample kind applies to a kind of op. */
static bool sk_applies(enum kind kind, int sk) {
  if (sk == SK_BCAST)
    return kind == K_BINARY || kind == K_ADD_OUT || kind == K_MULADD || kind == K_WHERE ||
           kind == K_MATMUL || kind == K_COPY;
  if (sk == SK_BADSHAPE)
    return kind == K_BINARY || kind == K_ADD_OUT || kind == K_MULADD || kind == K_WHERE ||
           kind == K_MATMUL || kind == K_COPY || kind == K_LAYER_NORM;
  return true;
}

static const int64_t S23[] = {2, 3}, S5[] = {5}, S234[] = {2, 3, 4}, S03[] = {0, 3},
                     S213[] = {2, 1, 3}, S41[] = {4, 1}, S3[] = {3}, S4[] = {4}, S17[] = {1, 7};

/* The main input shape of a sample. */
static void main_shape(int sk, int variant, int32_t *nd, const int64_t **sz) {
  switch (sk) {
    case SK_SHAPES:
      if (variant == 0) *nd = 1, *sz = S5;
      else if (variant == 1) *nd = 3, *sz = S234;
      else *nd = 0, *sz = NULL;
      break;
    case SK_EMPTY: *nd = 2, *sz = S03; break;
    case SK_BCAST: *nd = 3, *sz = S213; break;
    default: *nd = 2, *sz = S23; break;
  }
}

/* The arguments of a core op's sample, of dtype dt. */
static void gen_core(int r, int32_t dt, int sk, int variant, sample *s) {
  memset(s, 0, sizeof *s);
  enum kind kind = refs[r].kind;
  int sub = refs[r].sub;
  bool nc = sk == SK_NONCONTIG, fl = dt_is_float(dt);
  int32_t nd;
  const int64_t *sz;
  main_shape(sk, variant, &nd, &sz);
  switch (kind) {
    case K_BINARY:
    case K_ADD_OUT:
    case K_MULADD: {
      bool pw = sub == RB_POW && kind == K_BINARY;
      rt *a = rand_rt(dt, nd, sz, pw ? (fl ? 0.5 : -3) : -2, pw ? (fl ? 2 : 3) : 2);
      rt *b;
      if (sk == SK_BCAST) b = rand_rt(dt, 2, S41, pw && !fl ? 0 : -2, pw && !fl ? 3 : 2);
      else if (sk == SK_BADSHAPE) b = rand_rt(dt, 1, S4, -2, 2);
      else b = rand_rt(dt, nd, sz, pw && !fl ? 0 : -2, pw && !fl ? 3 : 2);
      add_tensor(s, a, nc);
      add_tensor(s, b, nc);
      if (kind == K_MULADD) {
        add_float(s, 0.5);
      } else if (kind == K_ADD_OUT || sub == RB_ADD || sub == RB_SUB) {
        add_float(s, fl ? 0.5 : 1.0);
      }
      if (kind == K_ADD_OUT) {
        int32_t on;
        int64_t os[BP_MAX_NDIM];
        if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &on, os)) on = 2, os[0] = 2, os[1] = 3;
        rt *o = rt_new(dt, on, os);
        add_tensor(s, o, nc);
      }
      break;
    }
    case K_UNARY: {
      bool pos = sub == RU_LOG || sub == RU_SQRT || sub == RU_RSQRT;
      add_tensor(s, rand_rt(dt, nd, sz, pos ? (fl ? 0.25 : 1) : -3, pos ? (fl ? 3 : 9) : 3), nc);
      break;
    }
    case K_WHERE:
      if (sk == SK_BCAST) {
        add_tensor(s, rand_rt(BP_BOOL, 2, S41, 0, 1), nc);
        add_tensor(s, rand_rt(dt, 3, S213, -2, 2), nc);
        add_tensor(s, rand_rt(dt, 1, S3, -2, 2), nc);
      } else {
        add_tensor(s, rand_rt(BP_BOOL, nd, sz, 0, 1), nc);
        add_tensor(s, rand_rt(dt, nd, sz, -2, 2), nc);
        add_tensor(s, rand_rt(dt, sk == SK_BADSHAPE ? 1 : nd, sk == SK_BADSHAPE ? S4 : sz, -2, 2),
                   nc);
      }
      break;
    case K_REDUCE: {
      const int64_t d[1] = {-1};
      add_tensor(s, rand_rt(dt, nd, sz, -2, 2), nc);
      add_list(s, d, 1);
      break;
    }
    case K_ARGMAX:
      add_tensor(s, rand_rt(dt, nd, sz, -5, 5), nc);
      add_int(s, -1);
      break;
    case K_MATMUL: {
      static const int64_t m34[] = {3, 4}, m42[] = {4, 2}, m32[] = {3, 2}, b2123[] = {2, 1, 2, 3},
                           b334[] = {3, 3, 4};
      int32_t na = 2, nb = 2;
      const int64_t *sa = S23, *sb = m34;
      if (sk == SK_EMPTY) sa = S03;
      if (sk == SK_SHAPES && variant == 0) na = 1, sa = S5, nb = 1, sb = S5;
      if (sk == SK_SHAPES && variant == 1) na = 3, sa = S234, sb = m42;
      if (sk == SK_SHAPES && variant == 2) na = 1, sa = S3, sb = m32;
      if (sk == SK_BCAST) na = 4, sa = b2123, nb = 3, sb = b334;
      if (sk == SK_BADSHAPE) sb = m42;
      add_tensor(s, rand_rt(dt, na, sa, -0.5, 0.5), nc);
      add_tensor(s, rand_rt(dt, nb, sb, -0.5, 0.5), nc);
      break;
    }
    case K_SOFTMAX:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_int(s, -1);
      break;
    case K_LAYER_NORM: {
      if (nd == 0) nd = 2, sz = S17;
      int64_t last = sk == SK_BADSHAPE ? 5 : sz[nd - 1];
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_list(s, &last, 1);
      break;
    }
    case K_CAST:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_dtype(s, sk == SK_BASIC ? dt : dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64);
      break;
    case K_CONTIGUOUS:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      break;
    case K_FILL:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_float(s, fl ? 2.5 : dt == BP_BOOL ? 1.0 : 2.0);
      break;
    case K_COPY:
      if (sk == SK_BCAST || sk == SK_BADSHAPE) {
        add_tensor(s, rand_rt(dt, 2, S23, -3, 3), nc);
        add_tensor(s, rand_rt(dt, 1, sk == SK_BCAST ? S3 : S4, -3, 3), nc);
      } else {
        add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
        add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      }
      break;
  }
}

static int64_t norm_dim(int64_t d, int32_t ndim) { return ndim == 0 ? 0 : d < 0 ? d + ndim : d; }

/* The reference result of a valid core sample; the tolerance scales. */
static rt *ref_core(int r, const sample *s, double *rscale, double *ascale) {
  enum kind kind = refs[r].kind;
  int sub = refs[r].sub;
  const rt *a = s->a[0].t, *b = s->n > 1 ? s->a[1].t : NULL;
  *rscale = *ascale = 1;
  switch (kind) {
    case K_BINARY:
      return ref_binary(sub, a, b, s->n > 2 ? s->a[2].f : 1.0);
    case K_ADD_OUT:
      return ref_binary(sub, a, b, s->a[2].f);
    case K_MULADD:
      return ref_muladd(a, b, s->a[2].f);
    case K_UNARY:
      return ref_unary(sub, a);
    case K_WHERE:
      return ref_where(a, b, s->a[2].t);
    case K_REDUCE: {
      int64_t n = 1, d = norm_dim(s->a[1].list[0], a->ndim);
      rt *w = ref_reduce(sub, a, &d, a->ndim ? 1 : 0, false, BP_DTYPE_INVALID, &n);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      if (sub == RR_SUM) *ascale = (double)(n > 1 ? n : 1);
      return w;
    }
    case K_ARGMAX:
      return ref_argmax(a, true, norm_dim(s->a[1].i, a->ndim), false);
    case K_MATMUL: {
      int64_t k = 1;
      rt *w = ref_matmul(a, b, &k);
      *rscale = sqrt((double)(k > 1 ? k : 1));
      return w;
    }
    case K_SOFTMAX: {
      int64_t d = norm_dim(s->a[1].i, a->ndim);
      *rscale = sqrt((double)(a->ndim && a->sizes[d] > 1 ? a->sizes[d] : 1));
      return ref_softmax(a, d, sub != 0);
    }
    case K_LAYER_NORM:
      *rscale = sqrt((double)(s->a[1].list[0] > 1 ? s->a[1].list[0] : 1));
      return ref_layer_norm(a, 1, NULL, NULL, 1e-5);
    case K_CAST:
      return ref_cast(a, s->a[1].dt);
    case K_CONTIGUOUS:
      return ref_cast(a, a->dtype);
    case K_FILL: {
      rt *w = rt_new(a->dtype, a->ndim, a->sizes);
      for (int64_t i = 0; i < w->numel; i++) {
        if (dt_is_float(w->dtype)) w->f[i] = round_to(w->dtype, s->a[1].f);
        else w->i[i] = float_to_int(w->dtype, s->a[1].f);
      }
      return w;
    }
    case K_COPY: {
      rt *e = ref_expand(b, a->ndim, a->sizes);
      rt *w = ref_cast(e, a->dtype);
      rt_free(e);
      return w;
    }
  }
  return NULL;
}

/* What the certifier needs of a schema: each argument's name and type,
 * whether it is annotated (a!), its alias letter, and whether it has a
 * default; and the results' alias letters. */
typedef struct schema_info {
  int n;
  char name[12][32];
  char type[12][48];
  bool mutated[12];
  bool has_default[12];
  char alias[12];
  int nret;
  char ret_alias[4];
} schema_info;

static char alias_of(const char *start, const char *end) {
  for (const char *q = start; q + 1 < end; q++)
    if (q[0] == '(' && q[1] >= 'a' && q[1] <= 'z') return q[1];
  return 0;
}

static void parse_schema(const char *schema, schema_info *out) {
  memset(out, 0, sizeof *out);
  const char *p = schema ? strchr(schema, '(') : NULL;
  if (!p) return;
  p++;
  while (*p && *p != ')' && out->n < 12) {
    /* One argument runs to the next ',' or ')' outside brackets; the
     * (a!) of its type and a list default are nested. */
    const char *start = p;
    int depth = 0;
    for (; *p && !(depth == 0 && (*p == ',' || *p == ')')); p++) {
      if (*p == '(' || *p == '[') depth++;
      if ((*p == ')' || *p == ']') && depth > 0) depth--;
    }
    const char *end = p;
    if (*p == ',') p++;
    while (start < end && *start == ' ') start++;
    if (end - start == 1 && *start == '*') continue; /* not a slot */
    const char *eq = memchr(start, '=', (size_t)(end - start));
    const char *nend = eq ? eq : end;
    while (nend > start && nend[-1] == ' ') nend--;
    const char *nbeg = nend;
    while (nbeg > start && nbeg[-1] != ' ') nbeg--;
    int i = out->n++;
    snprintf(out->name[i], sizeof out->name[i], "%.*s", (int)(nend - nbeg), nbeg);
    const char *tend = nbeg;
    while (tend > start && tend[-1] == ' ') tend--;
    snprintf(out->type[i], sizeof out->type[i], "%.*s", (int)(tend - start), start);
    out->has_default[i] = eq != NULL;
    out->alias[i] = alias_of(start, nbeg);
    for (const char *q = start; q + 1 < nbeg; q++)
      if (q[0] == '!' && q[1] == ')') out->mutated[i] = true;
  }
  const char *arrow = strstr(p, "->");
  if (!arrow) return;
  /* Results: "Tensor", "Tensor(a!)", "(Tensor, Tensor)". */
  for (const char *q = strstr(arrow, "Tensor"); q && out->nret < 4; q = strstr(q, "Tensor")) {
    q += 6;
    out->ret_alias[out->nret++] = *q == '(' ? q[1] : 0;
  }
}

/* A generic sample from a schema (ops outside core): Tensor -> float32
 * [4, 5] (non-contiguous for SK_NONCONTIG), int -> 1, float -> 0.5,
 * bool -> false; arguments with defaults are left to their defaults.
 * Returns false with the reason when an argument cannot be generated. */
static bool gen_generic(const schema_info *si, int sk, sample *s, char *why, size_t len) {
  static const int64_t s45[] = {4, 5};
  memset(s, 0, sizeof *s);
  for (int i = 0; i < si->n; i++) {
    const char *t = si->type[i];
    if (si->has_default[i]) {
      bool later = false;
      for (int j = i + 1; j < si->n; j++) later |= !si->has_default[j];
      if (!later) break;
    }
    if (s->n == 8) {
      snprintf(why, len, "more than 8 arguments");
      sample_free(s);
      return false;
    }
    if (strncmp(t, "Tensor", 6) == 0 && !strchr(t, '[') && !strchr(t, '?')) {
      add_tensor(s, rand_rt(BP_FLOAT32, 2, s45, -2, 2), sk == SK_NONCONTIG);
    } else if (strcmp(t, "int") == 0) {
      add_int(s, 1);
    } else if (strcmp(t, "float") == 0) {
      add_float(s, 0.5);
    } else if (strcmp(t, "bool") == 0) {
      sarg *a = &s->a[s->n++];
      memset(a, 0, sizeof *a);
      a->k = AK_BOOL;
    } else if (strcmp(t, "ScalarType") == 0) {
      add_dtype(s, BP_FLOAT32);
    } else if (t[strlen(t) - 1] == '?') {
      sarg *a = &s->a[s->n++];
      memset(a, 0, sizeof *a);
      a->k = AK_NONE;
    } else {
      /* (A truncated reason is still a reason.) */
      if (snprintf(why, len, "cannot generate argument %d '%s' of type %s", i, si->name[i], t) < 0)
        why[0] = '\0';
      sample_free(s);
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Tensors on the device under test                                         */
/* ------------------------------------------------------------------------ */

enum mode { M_PLAIN, M_GUARD, M_PROTECT };
#define CANARY 16 /* elements of canary before and after a guarded buffer */

/* The tensors of one materialised sample, and what is needed to check
 * their canaries. */
typedef struct argset {
  /* The stack borrows the tensors of made[]; after a call it holds the
   * results, which the caller owns and releases (bp_stack_release). */
  bp_value slots[16];
  bp_stack st;
  size_t nargs;
  bp_tensor *made[8];  /* one per tensor argument, owned */
  int made_arg[8];     /* its argument index */
  bp_tensor *base[8];  /* the guarded storage of made[i] (owned), or NULL */
  int64_t span[8];     /* elements of the view's reach */
  int nmade;
} argset;

static void argset_free(argset *as) {
  for (int i = 0; i < as->nmade; i++) {
    bp_tensor_release(as->made[i]);
    bp_tensor_release(as->base[i]);
  }
  as->nmade = 0;
}

/* One byte of the canary pattern. */
static unsigned char canary_byte(size_t i) { return (unsigned char)(0xA5u ^ (i * 29u)); }

/* The deleter context of a tensor made by protected_tensor(): malloc'd
 * there, owned by the tensor, and freed with the mapping by unmap_blob()
 * when libbackplane drops the tensor's last reference. */
typedef struct blob_ctx {
  void *map;   /* the whole mapping, guard pages included */
  size_t len;
  int region;  /* its entry in regions[], or -1 */
} blob_ctx;

static void unmap_blob(void *ctx_, void *data) {
  (void)data;
  blob_ctx *c = ctx_;
  if (c->region >= 0) regions[c->region].used = false;
  munmap(c->map, c->len);
  free(c);
}

/* A CPU tensor of v's values in its own mapping between PROT_NONE guard
 * pages, registered for the fault handler: read-only for an input
 * (M_PROTECT), or a 1-D base of `pre` canary elements, the view's reach
 * and `pre` more (M_GUARD), whose view the caller makes.  The data ends
 * where the upper guard page begins, rounded to 64 bytes. */
static bp_tensor *protected_tensor(const rt *v, const int64_t *strides, int64_t span, int64_t pre,
                                   bool readonly, int arg, const char *name) {
  size_t item = bp_dtype_size(v->dtype);
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  int64_t total = pre + span + pre;
  size_t bytes = (size_t)total * item, rounded = (bytes + 63) & ~(size_t)63;
  size_t pages = rounded ? (rounded + ps - 1) / ps : 1, len = (pages + 2) * ps;
  char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return NULL;
  char *data = map + ps + pages * ps - rounded;
  memset(map + ps, 0x5A, pages * ps);
  for (size_t b = 0; b < bytes; b++) ((unsigned char *)data)[b] = canary_byte(b);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < v->numel; k++) {
    int64_t off = pre;
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * strides[d];
    char *p = data + off * (int64_t)item;
    if (dt_is_float(v->dtype)) store_f(p, v->dtype, v->f[k]);
    else store_i(p, v->dtype, v->i[k]);
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
  mprotect(map, ps, PROT_NONE);
  if (readonly) mprotect(map + ps, pages * ps, PROT_READ);
  mprotect(map + ps + pages * ps, ps, PROT_NONE);
  blob_ctx *c = malloc(sizeof *c);
  if (!c) {
    munmap(map, len);
    return NULL;
  }
  c->map = map;
  c->len = len;
  c->region = -1;
  bp_tensor *t = NULL;
  bp_status st = readonly ? bp_tensor_from_blob(BP_CPU, v->dtype, v->ndim, v->sizes, strides, data,
                                                unmap_blob, c, &t)
                          : bp_tensor_from_blob(BP_CPU, v->dtype, 1, &total, NULL, data,
                                                unmap_blob, c, &t);
  if (st != BP_OK) {
    munmap(map, len);
    free(c);
    return NULL;
  }
  for (int i = 0; i < 16; i++) {
    if (regions[i].used) continue;
    region *r = &regions[i];
    r->map_lo = (uintptr_t)map;
    r->data_lo = (uintptr_t)(map + ps);
    r->data_hi = (uintptr_t)(map + ps + pages * ps);
    r->map_hi = (uintptr_t)(map + len);
    r->elems_lo = (uintptr_t)(data + pre * (int64_t)item);
    r->elems_hi = (uintptr_t)(data + (pre + span) * (int64_t)item);
    r->readonly = readonly;
    r->arg = arg;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->used = true;
    c->region = i;
    break;
  }
  return t;
}

/* A tensor on the device under test with v's values: contiguous, or with
 * every stride doubled (nc); with CANARY elements of canary before and
 * after (M_GUARD); read-only between guard pages (M_PROTECT, inputs on a
 * host-visible device).  Data is staged through a CPU tensor. */
static bool make_tensor(argset *as, const rt *v, bool nc, int mode, bool writable, int arg,
                        const char *name) {
  int64_t strides[BP_MAX_NDIM], span = v->numel ? 1 : 0, acc = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    strides[d] = acc * (nc ? 2 : 1);
    acc *= v->sizes[d] > 0 ? v->sizes[d] : 1;
  }
  if (v->numel)
    for (int32_t d = 0; d < v->ndim; d++) span += (v->sizes[d] - 1) * strides[d];
  bp_tensor *t = NULL, *base = NULL;
  if (mode == M_PROTECT && host_visible && !writable) {
    t = protected_tensor(v, strides, span, 0, true, arg, name);
    if (!t) return false;
  } else if (mode == M_GUARD && host_visible) {
    /* Canaries, and guard pages beyond them. */
    base = protected_tensor(v, strides, span, CANARY, false, arg, name);
    if (!base) return false;
    if (bp_tensor_as_strided(base, v->ndim, v->sizes, strides, CANARY, &t) != BP_OK) {
      bp_tensor_release(base);
      return false;
    }
  } else {
    int64_t pre = mode == M_GUARD ? CANARY : 0, n = pre + span + pre;
    bp_tensor *stage = NULL;
    if (bp_tensor_empty(BP_CPU, v->dtype, 1, &n, &stage) != BP_OK) return false;
    const bp_tensor_view *sv = bp_tensor_get_view(stage);
    size_t item = (size_t)sv->itemsize;
    for (size_t b = 0; b < (size_t)n * item; b++) ((unsigned char *)sv->data)[b] = canary_byte(b);
    int64_t idx[BP_MAX_NDIM] = {0};
    for (int64_t k = 0; k < v->numel; k++) {
      int64_t off = pre;
      for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * strides[d];
      char *p = (char *)sv->data + off * (int64_t)item;
      if (dt_is_float(v->dtype)) store_f(p, v->dtype, v->f[k]);
      else store_i(p, v->dtype, v->i[k]);
      for (int32_t d = v->ndim - 1; d >= 0; d--) {
        if (++idx[d] < v->sizes[d]) break;
        idx[d] = 0;
      }
    }
    if (the_device.type == BP_DEVICE_CPU && the_device.index == 0) {
      base = stage;
    } else {
      if (bp_tensor_empty(the_device, v->dtype, 1, &n, &base) != BP_OK ||
          bp_tensor_copy(base, stage) != BP_OK) {
        bp_tensor_release(base);
        bp_tensor_release(stage);
        return false;
      }
      bp_tensor_release(stage);
    }
    if (bp_tensor_as_strided(base, v->ndim, v->sizes, strides, pre, &t) != BP_OK) {
      bp_tensor_release(base);
      return false;
    }
    if (mode != M_GUARD) {
      bp_tensor_release(base);
      base = NULL;
    }
  }
  as->made[as->nmade] = t;
  as->made_arg[as->nmade] = arg;
  as->base[as->nmade] = base;
  as->span[as->nmade] = span;
  as->nmade++;
  return true;
}

/* Pushes a sample's arguments, making its tensors in `mode`. */
static bool materialise(const sample *s, const schema_info *si, int mode, argset *as) {
  memset(as, 0, sizeof *as);
  as->st = (bp_stack)BP_STACK_INIT(as->slots, 16);
  for (int i = 0; i < s->n; i++) {
    const sarg *a = &s->a[i];
    bp_status st = BP_OK;
    switch (a->k) {
      case AK_TENSOR:
        if (!make_tensor(as, a->t, a->nc, mode, i < si->n && si->mutated[i], i,
                         i < si->n ? si->name[i] : "?"))
          return false;
        st = bp_stack_push_tensor(&as->st, as->made[as->nmade - 1]);
        break;
      case AK_FLOAT: st = bp_stack_push_float(&as->st, a->f); break;
      case AK_INT: st = bp_stack_push_int(&as->st, a->i); break;
      case AK_BOOL: st = bp_stack_push_bool(&as->st, a->i != 0); break;
      case AK_INTLIST: st = bp_stack_push_int_list(&as->st, a->list, a->nlist); break;
      case AK_DTYPE: st = bp_stack_push_scalar_type(&as->st, a->dt); break;
      case AK_NONE: st = bp_stack_push_none(&as->st); break;
      case AK_STR: st = bp_stack_push_str(&as->st, a->s); break;
    }
    if (st != BP_OK) return false;
  }
  as->nargs = as->st.top;
  return true;
}

/* The bytes of t's elements in row-major order, copied to the CPU, so
 * that two states of a tensor on any device compare bytewise; NULL when
 * they cannot be read.  The caller frees the result. */
static unsigned char *tensor_bytes(const bp_tensor *t, size_t *len) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  bp_tensor *host = NULL;
  if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &host) != BP_OK ||
      bp_tensor_copy(host, t) != BP_OK) {
    bp_tensor_release(host);
    return NULL;
  }
  const bp_tensor_view *hv = bp_tensor_get_view(host);
  *len = (size_t)(hv->numel * hv->itemsize);
  unsigned char *bytes = malloc(*len ? *len : 1);
  if (bytes) memcpy(bytes, hv->data, *len);
  bp_tensor_release(host);
  return bytes;
}

/* Index of the first differing byte of two snapshots, or -1. */
static long first_diff(const unsigned char *x, const unsigned char *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return (long)i;
  return -1;
}
/* ------------------------------------------------------------------------ */
/* Per-op checks                                                            */
/* ------------------------------------------------------------------------ */

typedef struct certify_case certify_case;
struct certify_case {
  char name[160];
  const char *group; /* the check group: handshake, numerics, honesty, ... */
  void (*fn)(const certify_case *c);
  char op[96];       /* the op under test, or "" */
  int32_t dt;        /* numerics: the dtype */
  int sk;            /* numerics: the sample kind */
  enum status status;
  char detail[1024];
  double seconds;
  /* Worker isolation: the case did not pass in a shared worker, so it was
   * rerun alone; this is what the worker gave. */
  bool rerun;
  enum status worker_status;
  char worker_detail[1024];
};

static const bp_op *cur_op;
static bp_op_info cur_oi;
static schema_info cur_si;
static int cur_r; /* index into refs, -1 outside core */
static bp_kernel_info cur_ki;
static bool cur_has_kernel;

/* Loads the plugin and finds the case's op; false after a verdict. */
static bool op_setup(const certify_case *c) {
  rng_seed_name(c->name);
  if (!load_plugin() || !pick_device()) return false;
  install_fault_handler();
  cur_oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_find(c->op, &cur_op) != BP_OK || bp_op_get_info(cur_op, &cur_oi) != BP_OK) {
    verdict(ST_FAIL, "%s: %s", c->op, bp_last_error());
    return false;
  }
  parse_schema(cur_oi.schema, &cur_si);
  cur_r = ref_index(c->op);
  cur_has_kernel = plugin_kernel(cur_op, the_device.type, &cur_ki);
  if (!cur_has_kernel) {
    verdict(ST_SKIP, "%s has no kernel for %s (see registration/profile)", c->op,
            device_name(the_device.type));
    return false;
  }
  return true;
}

/* The float32 sample of kind sk of the current op (core or generic). */
static bool get_sample(int sk, sample *s, char *why, size_t len) {
  if (cur_r >= 0) {
    gen_core(cur_r, BP_FLOAT32, sk, 0, s);
    return true;
  }
  return gen_generic(&cur_si, sk, s, why, len);
}

static bool declares(int32_t dt) {
  if (!cur_ki.dtypes) return true;
  for (const int32_t *p = cur_ki.dtypes; *p != BP_DTYPE_INVALID; p++)
    if (*p == dt) return true;
  return false;
}

/* Compares a result (on any device) with the reference; writes a reason
 * into why and returns false on a mismatch: the mismatch count, the worst
 * element (index, got, expected) and the largest errors. */
static bool compare(const bp_tensor *got, const rt *want, double rscale, double ascale, char *why,
                    size_t whylen) {
  const bp_tensor_view *gv = bp_tensor_get_view(got);
  char b1[96], b2[96];
  if (gv->dtype != want->dtype) {
    snprintf(why, whylen, "result dtype %s, expected %s", dt_name(gv->dtype),
             dt_name(want->dtype));
    return false;
  }
  if (gv->ndim != want->ndim ||
      (gv->ndim && memcmp(gv->sizes, want->sizes, (size_t)gv->ndim * sizeof(int64_t)) != 0)) {
    snprintf(why, whylen, "result shape %s, expected %s", shape_str(gv->ndim, gv->sizes, b1, 96),
             shape_str(want->ndim, want->sizes, b2, 96));
    return false;
  }
  bp_tensor *host = NULL;
  if (bp_tensor_empty(BP_CPU, gv->dtype, gv->ndim, gv->sizes, &host) != BP_OK ||
      bp_tensor_copy(host, got) != BP_OK) {
    snprintf(why, whylen, "cannot copy the result to the CPU: %s", bp_last_error());
    bp_tensor_release(host);
    return false;
  }
  const bp_tensor_view *hv = bp_tensor_get_view(host);
  double rtol, atol;
  dt_tolerance(want->dtype, &rtol, &atol);
  rtol *= rscale;
  atol *= ascale;
  int64_t bad = 0, worst = -1;
  double max_abs = 0, max_rel = 0, worst_excess = -1, wg = 0, ww = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    const char *p = (const char *)hv->data + i * hv->itemsize;
    double g, w;
    if (dt_is_float(want->dtype)) {
      g = load_f(p, want->dtype), w = want->f[i];
      if (isnan(g) && isnan(w)) continue;
      if (g == w) continue;
      double d = fabs(g - w);
      if (d <= atol + rtol * fabs(w)) continue;
      double excess = isnan(d) ? INFINITY : d - (atol + rtol * fabs(w));
      if (d > max_abs || isnan(d)) max_abs = d;
      if (w != 0 && d / fabs(w) > max_rel) max_rel = d / fabs(w);
      if (excess > worst_excess) worst_excess = excess, worst = i, wg = g, ww = w;
    } else {
      int64_t gi = load_i(p, want->dtype);
      if (gi == want->i[i]) continue;
      double d = fabs((double)gi - (double)want->i[i]);
      if (d > max_abs) max_abs = d, worst = i, wg = (double)gi, ww = (double)want->i[i];
    }
    bad++;
  }
  bp_tensor_release(host);
  if (bad) {
    snprintf(why, whylen,
             "%lld of %lld elements mismatch; worst at flat index %lld: got %.9g, expected %.9g; "
             "max abs error %g, max rel error %g (rtol %g, atol %g)",
             (long long)bad, (long long)want->numel, (long long)worst, wg, ww, max_abs, max_rel,
             rtol, atol);
    return false;
  }
  return true;
}

static const char *sample_desc(const sample *s, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->n && o < len; i++) {
    if (s->a[i].k != AK_TENSOR) continue;
    char sh[96];
    o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", o ? " " : "", dt_name(s->a[i].t->dtype),
                          shape_str(s->a[i].t->ndim, s->a[i].t->sizes, sh, sizeof sh),
                          s->a[i].nc ? "(strided)" : "");
  }
  return buf;
}

/* core::OP/DTYPE/SAMPLE: numerics against the float64 reference. */
static void case_numerics(const certify_case *c) {
  if (!op_setup(c)) return;
  if (!declares(c->dt)) {
    if (c->dt == BP_FLOAT32 && the_info.op_set_version >= 1) {
      verdict(ST_FAIL, "numerics: the plugin claims core op set %u, which needs float32, but the "
                       "kernel does not declare it",
              the_info.op_set_version);
      return;
    }
    verdict(ST_SKIP, "the kernel does not declare %s", dt_name(c->dt));
    return;
  }
  int nvar = c->sk == SK_SHAPES ? SHAPE_VARIANTS : 1, checked = 0;
  for (int v = 0; v < nvar; v++) {
    sample s;
    argset as;
    char desc[300], why[600];
    gen_core(cur_r, c->dt, c->sk, v, &s);
    sample_desc(&s, desc, sizeof desc);
    if (!materialise(&s, &cur_si, M_PLAIN, &as)) {
      verdict(ST_FAIL, "cannot build the arguments (%s) on %s: %s", desc,
              device_name(the_device.type), bp_last_error());
      return;
    }
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    bp_status ms = bp_op_meta(cur_op, &as.st, meta, 1);
    if (ms == BP_ERR_TYPE && v == 0) {
      verdict(ST_SKIP, "%s does not take %s (%s)", c->op, dt_name(c->dt), bp_last_error());
      /* A worker goes on after a skip: nothing may stay behind. */
      argset_free(&as);
      sample_free(&s);
      return;
    }
    if (ms == BP_ERR_SHAPE && c->sk == SK_EMPTY && refs[cur_r].kind == K_ARGMAX) {
      /* The op set: argmax of nothing fails with BP_ERR_SHAPE. */
      bp_status cs = bp_call(cur_op, &as.st);
      if (cs != BP_ERR_SHAPE) {
        verdict(ST_FAIL, "numerics: argmax of an empty tensor (%s) gave %s, expected BP_ERR_SHAPE",
                desc, bp_status_str(cs));
        return;
      }
      verdict(ST_PASS, "refuses an empty input with BP_ERR_SHAPE, as the op set says");
      argset_free(&as);
      sample_free(&s);
      return;
    }
    if (ms != BP_OK) {
      verdict(ST_FAIL, "the meta function refused the sample %s: %s", desc, bp_last_error());
      return;
    }
    double rscale, ascale;
    rt *want = ref_core(cur_r, &s, &rscale, &ascale);
    if (bp_call(cur_op, &as.st) != BP_OK) {
      verdict(ST_FAIL, "numerics: the call on %s failed: %s", desc, bp_last_error());
      return;
    }
    bp_tensor *res = NULL;
    if (as.st.top < 1 || bp_stack_get_tensor(&as.st, 0, &res) != BP_OK) {
      verdict(ST_FAIL, "numerics: the call on %s returned no tensor", desc);
      return;
    }
    if (!compare(res, want, rscale, ascale, why, sizeof why)) {
      verdict(ST_FAIL, "numerics: %s: %s", desc, why);
      return;
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    rt_free(want);
    sample_free(&s);
    checked++;
  }
  double rtol, atol;
  dt_tolerance(c->dt, &rtol, &atol);
  verdict(ST_PASS, "%d sample(s) match the float64 reference (rtol %g, atol %g)", checked, rtol,
          atol);
}

/* The samples the other checks use. */
static const int check_samples[] = {SK_BASIC, SK_NONCONTIG};
#define NCHECK_SAMPLES 2

/* An op outside core may refuse a generated sample (a layout or a value
 * it does not take) with a clean error: that sample is left out of the
 * check.  A core op must take every sample. */
static int nrefused;
static char refusal[300];

/* After a failed call: true (the sample is left out) for an op outside
 * core, false after a FAIL verdict for a core op. */
static bool refused(int sk, const char *check) {
  if (cur_r >= 0) {
    verdict(ST_FAIL, "%s: the call on sample %s failed: %s", check, sk_name[sk], bp_last_error());
    return false;
  }
  nrefused++;
  snprintf(refusal, sizeof refusal, "%s (sample %s)", bp_last_error(), sk_name[sk]);
  return true;
}

/* True after a SKIP verdict when the op refused every sample. */
static bool all_refused(const certify_case *c, int nsamples) {
  if (nrefused < nsamples) return false;
  verdict(ST_SKIP, "%s refused every generated sample: %s", c->op, refusal);
  return true;
}

/* Builds sample sk in mode and calls the op: 1 when the call succeeded,
 * -1 when an op outside core refused the sample, 0 after a verdict. */
static int call_sample(const certify_case *c, int sk, int mode, sample *s, argset *as,
                       const char *check) {
  char why[300];
  (void)c;
  if (!get_sample(sk, s, why, sizeof why)) {
    verdict(ST_SKIP, "%s", why);
    return 0;
  }
  if (!materialise(s, &cur_si, mode, as)) {
    verdict(ST_FAIL, "%s: cannot build the arguments of sample %s on %s: %s", check, sk_name[sk],
            device_name(the_device.type), bp_last_error());
    return 0;
  }
  if (bp_call(cur_op, &as->st) != BP_OK) {
    if (!refused(sk, check)) return 0;
    argset_free(as);
    sample_free(s);
    return -1;
  }
  return 1;
}

/* core::OP/meta: every result agrees with bp_op_meta on the same
 * arguments: dtype, sizes, strides and device. */
static void case_meta(const certify_case *c) {
  if (!op_setup(c)) return;
  if (!cur_oi.has_meta) {
    verdict(ST_FAIL, "meta: %s has no meta function", c->op);
    return;
  }
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    char why[300];
    if (!get_sample(sk, &s, why, sizeof why)) {
      verdict(ST_SKIP, "%s", why);
      return;
    }
    if (!materialise(&s, &cur_si, M_PLAIN, &as)) {
      verdict(ST_FAIL, "meta: cannot build sample %s: %s", sk_name[sk], bp_last_error());
      return;
    }
    size_t nret = cur_si.nret ? (size_t)cur_si.nret : 1;
    bp_tensor_meta meta[4];
    for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    if (bp_op_meta(cur_op, &as.st, meta, nret) != BP_OK) {
      verdict(ST_FAIL, "meta: the meta function refused sample %s: %s", sk_name[sk],
              bp_last_error());
      return;
    }
    if (bp_call(cur_op, &as.st) != BP_OK) {
      if (!refused(sk, "meta")) return;
      argset_free(&as);
      sample_free(&s);
      continue;
    }
    for (size_t i = 0; i < nret && i < as.st.top; i++) {
      bp_tensor *res;
      if (bp_stack_get_tensor(&as.st, (int64_t)i, &res) != BP_OK) continue;
      const bp_tensor_view *rv = bp_tensor_get_view(res);
      const bp_tensor_meta *m = &meta[i];
      char g1[96], g2[96], m1[96], m2[96];
      if (rv->dtype != m->dtype) {
        verdict(ST_FAIL, "meta: sample %s: result %zu has dtype %s, bp_op_meta says %s",
                sk_name[sk], i, dt_name(rv->dtype), dt_name(m->dtype));
        return;
      }
      if (rv->ndim != m->ndim ||
          (rv->ndim && (memcmp(rv->sizes, m->sizes, (size_t)rv->ndim * 8) != 0 ||
                        memcmp(rv->strides, m->strides, (size_t)rv->ndim * 8) != 0))) {
        verdict(ST_FAIL,
                "meta: sample %s: result %zu has sizes %s strides %s, bp_op_meta says sizes %s "
                "strides %s",
                sk_name[sk], i, shape_str(rv->ndim, rv->sizes, g1, 96),
                shape_str(rv->ndim, rv->strides, g2, 96), shape_str(m->ndim, m->sizes, m1, 96),
                shape_str(m->ndim, m->strides, m2, 96));
        return;
      }
      if (rv->device.type != m->device.type || rv->device.index != m->device.index) {
        verdict(ST_FAIL, "meta: sample %s: result %zu is on %s:%d, bp_op_meta says %s:%d",
                sk_name[sk], i, device_name(rv->device.type), rv->device.index,
                device_name(m->device.type), m->device.index);
        return;
      }
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "results agree with bp_op_meta (dtype, sizes, strides, device) on %d samples",
          NCHECK_SAMPLES - nrefused);
}

/* The byte range a view reaches: [lo, hi), empty for 0 elements. */
static void view_range(const bp_tensor_view *v, uintptr_t *lo, uintptr_t *hi) {
  if (v->numel == 0) {
    *lo = *hi = 0;
    return;
  }
  int64_t mn = 0, mx = 0;
  for (int32_t d = 0; d < v->ndim; d++) {
    int64_t e = (v->sizes[d] - 1) * v->strides[d];
    if (e < 0) mn += e;
    else mx += e;
  }
  *lo = (uintptr_t)v->data + (uintptr_t)(mn * v->itemsize);
  *hi = (uintptr_t)v->data + (uintptr_t)((mx + 1) * v->itemsize);
}

static bool overlaps(const bp_tensor *a, const bp_tensor *b) {
  const bp_tensor_view *va = bp_tensor_get_view(a), *vb = bp_tensor_get_view(b);
  if (va->device.type != vb->device.type || va->device.index != vb->device.index) return false;
  uintptr_t al, ah, bl, bh;
  view_range(va, &al, &ah);
  view_range(vb, &bl, &bh);
  return al < ah && bl < bh && al < bh && bl < ah;
}

/* core::OP/honesty: inputs the schema does not mark (a!) are unchanged
 * (byte compare; on host-visible memory also read-only pages, so the
 * faulting write is named), results alias inputs or each other only as
 * declared, and an (a!) argument that the op returns is returned. */
static void case_honesty(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    char why[300];
    if (!get_sample(sk, &s, why, sizeof why)) {
      verdict(ST_SKIP, "%s", why);
      return;
    }
    if (!materialise(&s, &cur_si, M_PROTECT, &as)) {
      verdict(ST_FAIL, "honesty: cannot build sample %s: %s", sk_name[sk], bp_last_error());
      return;
    }
    unsigned char *snap[8] = {NULL};
    size_t snaplen[8] = {0};
    for (int i = 0; i < as.nmade; i++)
      if (!cur_si.mutated[as.made_arg[i]]) snap[i] = tensor_bytes(as.made[i], &snaplen[i]);
    if (bp_call(cur_op, &as.st) != BP_OK) {
      if (!refused(sk, "honesty")) return;
      for (int i = 0; i < 8; i++) free(snap[i]);
      argset_free(&as);
      sample_free(&s);
      continue;
    }
    for (int i = 0; i < as.nmade; i++) {
      if (!snap[i]) continue;
      size_t len = 0;
      unsigned char *now_bytes = tensor_bytes(as.made[i], &len);
      long at = now_bytes && len == snaplen[i] ? first_diff(snap[i], now_bytes, len) : 0;
      free(now_bytes);
      free(snap[i]);
      snap[i] = NULL;
      if (at >= 0) {
        int a = as.made_arg[i];
        verdict(ST_FAIL,
                "honesty: sample %s: argument %d '%s' was modified (byte %ld), but the schema "
                "does not declare it mutable",
                sk_name[sk], a, cur_si.name[a], at);
        return;
      }
    }
    for (size_t j = 0; j < as.st.top; j++) {
      bp_tensor *res;
      if (bp_stack_get_tensor(&as.st, (int64_t)j, &res) != BP_OK) continue;
      char ra = j < 4 ? cur_si.ret_alias[j] : 0;
      for (int i = 0; i < as.nmade; i++) {
        int a = as.made_arg[i];
        bool declared = ra && cur_si.alias[a] == ra;
        if (declared && cur_si.mutated[a] && res != as.made[i] &&
            bp_tensor_get_view(res)->data != bp_tensor_get_view(as.made[i])->data) {
          verdict(ST_FAIL,
                  "honesty: sample %s: result %zu must be argument %d '%s' (declared %s), but "
                  "the op returned another tensor",
                  sk_name[sk], j, a, cur_si.name[a], cur_si.type[a]);
          return;
        }
        if (!declared && overlaps(res, as.made[i])) {
          verdict(ST_FAIL,
                  "honesty: sample %s: result %zu aliases argument %d '%s', which the schema "
                  "does not declare (no shared alias annotation)",
                  sk_name[sk], j, a, cur_si.name[a]);
          return;
        }
      }
      for (size_t j2 = j + 1; j2 < as.st.top; j2++) {
        bp_tensor *r2;
        if (bp_stack_get_tensor(&as.st, (int64_t)j2, &r2) != BP_OK) continue;
        if (overlaps(res, r2) && !(ra && j2 < 4 && cur_si.ret_alias[j2] == ra)) {
          verdict(ST_FAIL, "honesty: sample %s: results %zu and %zu alias each other", sk_name[sk],
                  j, j2);
          return;
        }
      }
    }
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  if (host_visible)
    verdict(ST_PASS, "inputs unchanged (read-only pages and byte compare); aliasing as declared");
  else
    verdict(ST_PASS, "inputs unchanged (byte compare; read-only pages skipped: the device is not "
                     "host-visible); aliasing as declared");
}

/* core::OP/bounds: canaries before and after every tensor argument (an
 * as_strided view inside a larger allocation) survive the call. */
static void case_bounds(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    int got = call_sample(c, sk, M_GUARD, &s, &as, "bounds");
    if (got == 0) return;
    if (got < 0) continue;
    bp_stack_release(&as.st);
    for (int i = 0; i < as.nmade; i++) {
      size_t len = 0;
      unsigned char *b = tensor_bytes(as.base[i], &len);
      if (!b) {
        verdict(ST_FAIL, "bounds: cannot read back argument %d: %s", as.made_arg[i],
                bp_last_error());
        return;
      }
      size_t item = (size_t)bp_tensor_get_view(as.base[i])->itemsize;
      size_t pre = CANARY * item, post = (size_t)(CANARY + as.span[i]) * item;
      int a = as.made_arg[i];
      for (size_t x = 0; x < pre; x++)
        if (b[x] != canary_byte(x)) {
          verdict(ST_FAIL,
                  "bounds: sample %s: the canary %zu byte(s) before argument %d '%s' was "
                  "overwritten",
                  sk_name[sk], pre - x, a, cur_si.name[a]);
          free(b);
          return;
        }
      for (size_t x = post; x < len; x++)
        if (b[x] != canary_byte(x)) {
          verdict(ST_FAIL,
                  "bounds: sample %s: the canary after argument %d '%s' was overwritten (byte "
                  "+%zu past its last element)",
                  sk_name[sk], a, cur_si.name[a], x - post);
          free(b);
          return;
        }
      free(b);
    }
    argset_free(&as);
    sample_free(&s);
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "canaries of %d elements before and after every argument intact", CANARY);
}

/* core::OP/hygiene: live tensor handles, and the bytes their storages
 * hold on the device under test, are the same after each call. */
static void case_hygiene(const certify_case *c) {
  if (!op_setup(c)) return;
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    sample s;
    argset as;
    int64_t live0 = bp_live_tensor_count(), bytes0 = 0, bytes1 = 0;
    bool have_bytes = bp_device_memory_in_use(the_device.type, &bytes0) == BP_OK;
    int got = call_sample(c, sk, M_PLAIN, &s, &as, "hygiene");
    if (got == 0) return;
    if (got < 0) continue;
    bp_stack_release(&as.st);
    argset_free(&as);
    sample_free(&s);
    int64_t live1 = bp_live_tensor_count();
    if (live1 != live0) {
      verdict(ST_FAIL, "hygiene: sample %s: %lld tensor handle(s) leaked (%lld live before the "
                       "case, %lld after)",
              sk_name[sk], (long long)(live1 - live0), (long long)live0, (long long)live1);
      return;
    }
    if (have_bytes && bp_device_memory_in_use(the_device.type, &bytes1) == BP_OK &&
        bytes1 != bytes0) {
      verdict(ST_FAIL, "hygiene: sample %s: %lld byte(s) of %s memory still held after the "
                       "case (%lld before, %lld after)",
              sk_name[sk], (long long)(bytes1 - bytes0), device_name(the_device.type),
              (long long)bytes0, (long long)bytes1);
      return;
    }
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "no tensor handle leaked, and %s memory in use is back where it was",
          device_name(the_device.type));
}

/* The bytes of every result on the stack, concatenated (owned). */
static unsigned char *result_bytes(const bp_stack *st, size_t *len) {
  unsigned char *all = NULL;
  *len = 0;
  for (size_t i = 0; i < st->top; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(st, (int64_t)i, &t) != BP_OK) continue;
    size_t n = 0;
    unsigned char *b = tensor_bytes(t, &n);
    if (!b) continue;
    unsigned char *grown = realloc(all, *len + n + 1);
    if (!grown) {
      free(b);
      break;
    }
    all = grown;
    memcpy(all + *len, b, n);
    *len += n;
    free(b);
  }
  if (!all) all = calloc(1, 1);
  return all;
}

/* core::OP/repeatability: two calls on equal fresh arguments give
 * bitwise equal results, unless the op is declared nondeterministic. */
static void case_repeat(const certify_case *c) {
  if (!op_setup(c)) return;
  if (cur_oi.flags & BP_OP_NONDETERMINISTIC) {
    verdict(ST_SKIP, "%s is declared nondeterministic (BP_OP_NONDETERMINISTIC)", c->op);
    return;
  }
  for (int k = 0; k < NCHECK_SAMPLES; k++) {
    int sk = check_samples[k];
    unsigned char *r[2] = {NULL, NULL};
    size_t len[2];
    bool skip = false;
    for (int t = 0; t < 2 && !skip; t++) {
      sample s;
      argset as;
      rng_seed_name(c->name);
      int got = call_sample(c, sk, M_PLAIN, &s, &as, "repeatability");
      if (got == 0) return;
      if (got < 0) {
        skip = true;
        break;
      }
      r[t] = result_bytes(&as.st, &len[t]);
      bp_stack_release(&as.st);
      argset_free(&as);
      sample_free(&s);
    }
    if (skip) {
      free(r[0]);
      continue;
    }
    long at = len[0] == len[1] ? first_diff(r[0], r[1], len[0]) : 0;
    free(r[0]);
    free(r[1]);
    if (at >= 0) {
      verdict(ST_FAIL, "repeatability: sample %s: a second identical call gave a different "
                       "result (byte %ld)",
              sk_name[sk], at);
      return;
    }
  }
  if (all_refused(c, NCHECK_SAMPLES)) return;
  verdict(ST_PASS, "bitwise equal results from repeated calls");
}

/* core::OP/concurrency: 4 threads call the op at once, each on its own
 * copy of the same arguments, and all get the single-threaded result. */
#define NTHREADS 4
#define NITER 16
static struct {
  const unsigned char *want;
  size_t len;
  pthread_mutex_t lock;
  char fail[400];
} conc = {NULL, 0, PTHREAD_MUTEX_INITIALIZER, ""};
static sample conc_sample;

static void *conc_thread(void *arg) {
  intptr_t id = (intptr_t)arg;
  for (int it = 0; it < NITER; it++) {
    argset as;
    char why[400] = "";
    if (!materialise(&conc_sample, &cur_si, M_PLAIN, &as)) {
      snprintf(why, sizeof why, "thread %d: cannot build the arguments: %s", (int)id,
               bp_last_error());
    } else if (bp_call(cur_op, &as.st) != BP_OK) {
      snprintf(why, sizeof why, "thread %d, call %d failed: %s", (int)id, it, bp_last_error());
    } else {
      size_t len;
      unsigned char *b = result_bytes(&as.st, &len);
      long at = len == conc.len ? first_diff(b, conc.want, len) : 0;
      if (at >= 0)
        snprintf(why, sizeof why,
                 "thread %d, call %d: the result differs from the single-threaded one (byte %ld)",
                 (int)id, it, at);
      free(b);
      bp_stack_release(&as.st);
    }
    argset_free(&as);
    if (*why) {
      pthread_mutex_lock(&conc.lock);
      if (!*conc.fail) snprintf(conc.fail, sizeof conc.fail, "%s", why);
      pthread_mutex_unlock(&conc.lock);
      break;
    }
  }
  return NULL;
}

static void case_concurrency(const certify_case *c) {
  if (!opt.full) {
    verdict(ST_SKIP, "the concurrency check belongs to --profile full");
    return;
  }
  if (!op_setup(c)) return;
  if (cur_oi.flags & BP_OP_NONDETERMINISTIC) {
    verdict(ST_SKIP, "%s is declared nondeterministic: results cannot be compared", c->op);
    return;
  }
  argset as;
  int got = call_sample(c, SK_BASIC, M_PLAIN, &conc_sample, &as, "concurrency");
  if (got == 0 || (got < 0 && all_refused(c, 1))) return;
  size_t len;
  unsigned char *want = result_bytes(&as.st, &len);
  bp_stack_release(&as.st);
  argset_free(&as);
  conc.want = want;
  conc.len = len;
  pthread_t th[NTHREADS];
  int started = 0;
  for (intptr_t i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, conc_thread, (void *)i) == 0) started++;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(want);
  sample_free(&conc_sample);
  if (started < NTHREADS)
    verdict(ST_FAIL, "concurrency: could start only %d of %d threads", started, NTHREADS);
  else if (*conc.fail)
    verdict(ST_FAIL, "concurrency: %s", conc.fail);
  else
    verdict(ST_PASS, "%d threads x %d calls gave the single-threaded result", NTHREADS, NITER);
}

/* Calls with the stack of `as` and expects a clean failure; false after a
 * verdict naming `what`. */
static bool expect_failure(argset *as, const char *what) {
  bp_clear_error();
  if (bp_call(cur_op, &as->st) == BP_OK) {
    verdict(ST_FAIL, "errors: %s succeeded", what);
    bp_stack_release(&as->st);
    return false;
  }
  if (!*bp_last_error()) {
    verdict(ST_FAIL, "errors: %s failed without a message", what);
    return false;
  }
  return true;
}

/* core::OP/errors: a wrong argument count, a wrong tag, a dtype the op or
 * the kernel does not take, a shape that does not fit and a tensor on
 * another device each give a non-OK status and a message, never a crash. */
static void case_errors(const certify_case *c) {
  if (!op_setup(c)) return;
  sample s;
  argset as;
  char why[300], what[400], done[300] = "";
  size_t dl = 0;
  if (!get_sample(SK_BASIC, &s, why, sizeof why)) {
    verdict(ST_SKIP, "%s", why);
    return;
  }
  if (!materialise(&s, &cur_si, M_PLAIN, &as)) {
    verdict(ST_FAIL, "errors: cannot build the arguments: %s", bp_last_error());
    return;
  }
  bp_value saved[16];
  memcpy(saved, as.slots, sizeof saved);
  /* One argument too many (None past the schema's count). */
  while (as.st.top < (size_t)cur_si.n + 1 && bp_stack_push_none(&as.st) == BP_OK) {
  }
  snprintf(what, sizeof what, "a call with %d arguments (the schema has %d)", cur_si.n + 1,
           cur_si.n);
  if (!expect_failure(&as, what)) return;
  dl += (size_t)snprintf(done + dl, sizeof done - dl, "count");
  /* An int where the first Tensor is due. */
  memcpy(as.slots, saved, sizeof saved);
  as.st.top = as.nargs;
  size_t t;
  for (t = 0; t < as.nargs && as.slots[t].tag != BP_TAG_TENSOR; t++) {
  }
  if (t < as.nargs) {
    as.slots[t].tag = BP_TAG_INT;
    as.slots[t].len = 0;
    as.slots[t].u.i = 1;
    snprintf(what, sizeof what, "an int as argument %zu '%s'", t, cur_si.name[t]);
    if (!expect_failure(&as, what)) return;
    dl += (size_t)snprintf(done + dl, sizeof done - dl, ", tag");
  }
  memcpy(as.slots, saved, sizeof saved);
  as.st.top = as.nargs;
  /* A tensor on the CPU among tensors on another device. */
  if (the_device.type != BP_DEVICE_CPU && !(cur_oi.flags & BP_OP_MIXED_DEVICES) &&
      as.nmade >= 2 && strcmp(c->op, "core::copy_") != 0) {
    bp_tensor *cpu = NULL;
    const bp_tensor_view *v = bp_tensor_get_view(as.made[1]);
    if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &cpu) == BP_OK &&
        bp_tensor_copy(cpu, as.made[1]) == BP_OK) {
      as.slots[as.made_arg[1]].u.tensor = cpu;
      snprintf(what, sizeof what, "argument %d '%s' on the CPU, the others on %s", as.made_arg[1],
               cur_si.name[as.made_arg[1]], device_name(the_device.type));
      bool ok = expect_failure(&as, what);
      bp_tensor_release(cpu);
      if (!ok) return;
      dl += (size_t)snprintf(done + dl, sizeof done - dl, ", device");
    } else {
      bp_tensor_release(cpu);
    }
  }
  argset_free(&as);
  sample_free(&s);
  /* A dtype the kernel does not declare, or the op does not take. */
  if (cur_r >= 0 || cur_ki.dtypes) {
    for (int d = 0; d < NUM_DTYPES; d++) {
      int32_t dt = all_dtypes[d];
      bool bad = !declares(dt);
      if (cur_r >= 0) {
        gen_core(cur_r, dt, SK_BASIC, 0, &s);
      } else {
        if (!gen_generic(&cur_si, SK_BASIC, &s, why, sizeof why)) break;
        for (int i = 0; i < s.n; i++)
          if (s.a[i].k == AK_TENSOR) {
            rt *x = ref_cast(s.a[i].t, dt);
            rt_free(s.a[i].t);
            s.a[i].t = x;
          }
      }
      if (!materialise(&s, &cur_si, M_PLAIN, &as)) {
        argset_free(&as);
        sample_free(&s);
        continue;
      }
      bp_tensor_meta meta[4];
      for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
      if (!bad && cur_r >= 0 && bp_op_meta(cur_op, &as.st, meta, 1) == BP_ERR_TYPE) bad = true;
      if (bad) {
        snprintf(what, sizeof what, "a call with %s arguments (%s)", dt_name(dt),
                 declares(dt) ? "the op does not take it" : "the kernel does not declare it");
        if (!expect_failure(&as, what)) return;
        dl += (size_t)snprintf(done + dl, sizeof done - dl, ", dtype %s", dt_name(dt));
        argset_free(&as);
        sample_free(&s);
        break;
      }
      argset_free(&as);
      sample_free(&s);
    }
  }
  /* Shapes that do not fit. */
  if (cur_r >= 0 && sk_applies(refs[cur_r].kind, SK_BADSHAPE)) {
    gen_core(cur_r, BP_FLOAT32, SK_BADSHAPE, 0, &s);
    char desc[300];
    sample_desc(&s, desc, sizeof desc);
    if (materialise(&s, &cur_si, M_PLAIN, &as)) {
      snprintf(what, sizeof what, "a call with mismatched shapes (%s)", desc);
      if (!expect_failure(&as, what)) return;
      dl += (size_t)snprintf(done + dl, sizeof done - dl, ", shape");
    }
    argset_free(&as);
    sample_free(&s);
  }
  verdict(ST_PASS, "clean failures with messages: %s", done);
}

/* device/synchronize: bp_device_synchronize works on the device. */
static void case_sync(const certify_case *c) {
  (void)c;
  if (!load_plugin() || !pick_device()) return;
  if (bp_device_synchronize(the_device) != BP_OK) {
    verdict(ST_FAIL, "device: bp_device_synchronize(%s:%d) failed: %s", device_name(the_device.type),
            the_device.index, bp_last_error());
    return;
  }
  verdict(ST_PASS, "bp_device_synchronize(%s:%d) succeeds", device_name(the_device.type),
          the_device.index);
}

/* device/streams: the optional streams and events, when the device has
 * them: create, make current, run an op on it, record, wait, synchronize
 * and destroy. */
static void case_streams(const certify_case *c) {
  (void)c;
  if (!opt.full) {
    verdict(ST_SKIP, "the device-feature check belongs to --profile full");
    return;
  }
  if (!load_plugin() || !pick_device()) return;
  const char *dn = device_name(the_device.type);
  bp_stream *s1 = NULL, *s2 = NULL, *cur = NULL;
  bp_event *ev = NULL;
  bp_status st = bp_stream_create(the_device, &s1);
  bp_status est = bp_event_create(the_device, &ev);
  if (st == BP_ERR_UNSUPPORTED && est == BP_ERR_UNSUPPORTED) {
    verdict(ST_SKIP, "%s declares no streams or events (BP_ERR_UNSUPPORTED)", dn);
    return;
  }
#define STEP(call, what)                                                                     \
  do {                                                                                       \
    if ((call) != BP_OK) {                                                                   \
      verdict(ST_FAIL, "device: %s on %s failed: %s", what, dn, bp_last_error());            \
      return;                                                                                \
    }                                                                                        \
  } while (0)
  if (st == BP_ERR_UNSUPPORTED) {
    /* Events on the default stream only. */
    STEP(est, "bp_event_create");
    STEP(bp_event_record(the_device, ev, NULL), "bp_event_record on the default stream");
    STEP(bp_event_synchronize(the_device, ev), "bp_event_synchronize");
    STEP(bp_event_destroy(the_device, ev), "bp_event_destroy");
    verdict(ST_PASS, "%s: events on the default stream work (no streams declared)", dn);
    return;
  }
  STEP(st, "bp_stream_create");
  STEP(bp_stream_create(the_device, &s2), "a second bp_stream_create");
  STEP(bp_stream_set_current(the_device, s1), "bp_stream_set_current");
  STEP(bp_stream_get_current(the_device, &cur), "bp_stream_get_current");
  if (cur != s1) {
    verdict(ST_FAIL, "device: bp_stream_get_current on %s did not return the stream just set", dn);
    return;
  }
  /* Some work on the stream: core::add when the plugin has it. */
  const bp_op *add;
  if (bp_op_find("core::add", &add) == BP_OK && plugin_kernel(add, the_device.type, NULL)) {
    static const int64_t sz[2] = {64, 64};
    rt *a = rand_rt(BP_FLOAT32, 2, sz, -1, 1);
    argset as;
    memset(&as, 0, sizeof as);
    as.st = (bp_stack)BP_STACK_INIT(as.slots, 16);
    if (!make_tensor(&as, a, false, M_PLAIN, false, 0, "self")) {
      verdict(ST_FAIL, "device: cannot make a tensor on %s: %s", dn, bp_last_error());
      return;
    }
    bp_stack_push_tensor(&as.st, as.made[0]);
    bp_stack_push_tensor(&as.st, as.made[0]);
    STEP(bp_call(add, &as.st), "core::add on a created stream");
    bp_stack_release(&as.st);
    argset_free(&as);
    rt_free(a);
  }
  if (est == BP_ERR_UNSUPPORTED) {
    STEP(bp_stream_synchronize(the_device, s1), "bp_stream_synchronize");
  } else {
    STEP(est, "bp_event_create");
    STEP(bp_event_record(the_device, ev, s1), "bp_event_record");
    STEP(bp_stream_wait_event(the_device, s2, ev), "bp_stream_wait_event");
    STEP(bp_event_synchronize(the_device, ev), "bp_event_synchronize");
    STEP(bp_stream_synchronize(the_device, s2), "bp_stream_synchronize");
    STEP(bp_event_destroy(the_device, ev), "bp_event_destroy");
  }
  STEP(bp_stream_set_current(the_device, NULL), "bp_stream_set_current(NULL)");
  STEP(bp_stream_destroy(the_device, s1), "bp_stream_destroy");
  STEP(bp_stream_destroy(the_device, s2), "bp_stream_destroy of the second stream");
#undef STEP
  verdict(ST_PASS, "%s: streams%s work: create, current, a call, %ssynchronize, destroy", dn,
          est == BP_ERR_UNSUPPORTED ? "" : " and events",
          est == BP_ERR_UNSUPPORTED ? "" : "record, wait, ");
}

static void case_nometa(const certify_case *c) {
  (void)c;
  verdict(ST_SKIP, "no meta function: the generic checks need one to know the results");
}

/* ------------------------------------------------------------------------ */
/* The probe: what the plugin registers, learned in a child                 */
/* ------------------------------------------------------------------------ */

typedef struct probe_op {
  char name[96];
  bool has_meta;
  bool any_dtype;
  int32_t dtypes[16];
  int ndtypes;
} probe_op;

static struct {
  bool loaded;
  char name[128], vendor[128], version[64], device[64], device_name[128];
  unsigned abi_major, abi_minor, op_set;
  /* The device under test does not exist: how many of its type there
   * are, and the plugin's setup note (why, often). */
  bool no_device;
  long device_count;
  char note[512];
  probe_op *ops;
  size_t nops;
} probe;

/* Writes s as one field of a probe line: a backslash, tab, newline or
 * carriage return becomes a backslash escape, so that whatever bytes a
 * plugin puts in its vendor or version (or a device name) cannot split the
 * tab-separated line, and probe_unescape() gives them back. */
static void probe_field(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '\\': fputs("\\\\", f); break;
      case '\t': fputs("\\t", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      default: fputc(*s, f); break;
    }
  }
}

/* Copies the probe field src into dst (len bytes, truncated), undoing
 * probe_field()'s escapes. */
static void probe_unescape(char *dst, size_t len, const char *src) {
  size_t n = 0;
  for (; *src && n + 1 < len; src++) {
    char c = *src;
    if (c == '\\' && src[1]) {
      src++;
      c = *src == 't' ? '\t' : *src == 'n' ? '\n' : *src == 'r' ? '\r' : *src;
    }
    dst[n++] = c;
  }
  dst[n] = '\0';
}

static void probe_child(void) {
  if (bp_plugin_load(opt.plugin, &the_plugin) != BP_OK) return;
  the_info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(the_plugin, &the_info) != BP_OK || !the_info.name) return;
  if (!pick_device()) return;
  bp_device_props props;
  memset(&props, 0, sizeof props);
  props.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  if (bp_device_properties(the_device, &props) != BP_OK) props.name[0] = '\0';
  props.name[sizeof props.name - 1] = '\0';
  int32_t count = 0;
  if (bp_device_count(the_device.type, &count) != BP_OK) count = 0;
  /* The note goes on one tab-separated line. */
  char note[512];
  snprintf(note, sizeof note, "%s", the_info.error ? the_info.error : "");
  for (char *q = note; *q; q++)
    if (*q == '\t' || *q == '\n' || *q == '\r') *q = ' ';
  FILE *f = fdopen(verdict_fd, "w");
  if (!f) return;
  probe_field(f, the_info.name);
  fputc('\t', f);
  probe_field(f, the_info.vendor ? the_info.vendor : "");
  fputc('\t', f);
  probe_field(f, the_info.version ? the_info.version : "");
  fprintf(f, "\t%u\t%u\t%u\t", the_info.abi_major, the_info.abi_minor,
          the_info.op_set_version);
  probe_field(f, device_name(the_device.type));
  fprintf(f, ":%d\t", the_device.index);
  probe_field(f, props.name);
  fprintf(f, "\t%d\t", the_device.index < count ? -1 : (int)count);
  probe_field(f, note);
  fputc('\n', f);
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    bp_kernel_info ki;
    if (bp_op_get_info(op, &oi) != BP_OK || !plugin_kernel(op, the_device.type, &ki)) continue;
    fputs("op\t", f);
    probe_field(f, oi.name);
    fprintf(f, "\t%d\t", oi.has_meta ? 1 : 0);
    if (!ki.dtypes) fputs("*", f);
    for (const int32_t *p = ki.dtypes; p && *p != BP_DTYPE_INVALID; p++)
      fprintf(f, "%s%d", p == ki.dtypes ? "" : ",", (int)*p);
    fputc('\n', f);
  }
  fclose(f);
}

static double now(void);

/* Runs probe_child in a child, under alarm() there and a deadline here;
 * fills `probe`. */
static void run_probe(void) {
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    verdict_fd = fds[1];
    dup2(STDERR_FILENO, STDOUT_FILENO);
    alarm((unsigned)ceil(opt.timeout));
    probe_child();
    _exit(0);
  }
  close(fds[1]);
  /* The parent's own watchdog: the child's alarm() is no use against a
   * plugin that ignores SIGALRM, and a process the plugin started may
   * hold the pipe open after the probe has ended. */
  double deadline = now() + opt.timeout;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n + 1 >= cap) {
      char *g = realloc(buf, cap *= 2);
      if (!g) break;
      buf = g;
    }
    double left = deadline - now();
    if (left <= 0) break;
    struct pollfd p = {fds[0], POLLIN, 0};
    int ready = poll(&p, 1, left < 0.05 ? (int)(left * 1000) + 1 : 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      int wst;
      if (waitpid(pid, &wst, WNOHANG) == pid) {
        pid = 0; /* ended, and everything it wrote has been read */
        break;
      }
      continue;
    }
    ssize_t got = read(fds[0], buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(fds[0]);
  if (pid > 0) {
    int wst;
    kill(pid, SIGKILL); /* harmless when it has already ended */
    waitpid(pid, &wst, 0);
  }
  if (!buf) return;
  buf[n] = '\0';
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *field[10] = {NULL};
    int nf = 0;
    for (char *p = line; nf < 10;) {
      field[nf++] = p;
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = '\0';
      p = tab + 1;
    }
    if (!probe.loaded) {
      if (nf < 8) break;
      probe.loaded = true;
      probe_unescape(probe.name, sizeof probe.name, field[0]);
      probe_unescape(probe.vendor, sizeof probe.vendor, field[1]);
      probe_unescape(probe.version, sizeof probe.version, field[2]);
      probe.abi_major = (unsigned)strtoul(field[3], NULL, 10);
      probe.abi_minor = (unsigned)strtoul(field[4], NULL, 10);
      probe.op_set = (unsigned)strtoul(field[5], NULL, 10);
      probe_unescape(probe.device, sizeof probe.device, field[6]);
      probe_unescape(probe.device_name, sizeof probe.device_name, field[7]);
      /* field[8]: -1 when the device exists, else the count of its type. */
      if (nf >= 10 && field[8][0] != '-') {
        probe.no_device = true;
        probe.device_count = strtol(field[8], NULL, 10);
        probe_unescape(probe.note, sizeof probe.note, field[9]);
      }
      continue;
    }
    if (nf < 4 || strcmp(field[0], "op") != 0) continue;
    probe_op *grown = realloc(probe.ops, (probe.nops + 1) * sizeof *probe.ops);
    if (!grown) break;
    probe.ops = grown;
    probe_op *po = &probe.ops[probe.nops++];
    memset(po, 0, sizeof *po);
    probe_unescape(po->name, sizeof po->name, field[1]);
    po->has_meta = field[2][0] == '1';
    po->any_dtype = field[3][0] == '*';
    for (char *p = field[3]; !po->any_dtype && *p && po->ndtypes < 16;) {
      po->dtypes[po->ndtypes++] = (int32_t)strtol(p, &p, 10);
      if (*p == ',') p++;
    }
  }
  free(buf);
}

static const probe_op *probe_find(const char *name) {
  for (size_t i = 0; i < probe.nops; i++)
    if (strcmp(probe.ops[i].name, name) == 0) return &probe.ops[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Cases and the runner                                                     */
/* ------------------------------------------------------------------------ */

static certify_case *cases;
static size_t ncases, capcases;

static certify_case *add_case(const char *group, const char *name, void (*fn)(const certify_case *),
                              const char *op) {
  if (ncases == capcases) {
    capcases = capcases ? 2 * capcases : 256;
    cases = realloc(cases, capcases * sizeof *cases);
    if (!cases) {
      perror("bp-certify");
      exit(2);
    }
  }
  certify_case *c = &cases[ncases++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->group = group;
  c->fn = fn;
  snprintf(c->op, sizeof c->op, "%s", op ? op : "");
  return c;
}

static void handshake_exports(const certify_case *c) { (void)c, case_exports(NULL); }
static void handshake_imports(const certify_case *c) { (void)c, case_imports(NULL); }
static void handshake_loads(const certify_case *c) { (void)c, case_loads(NULL); }
static void handshake_version(const certify_case *c) { (void)c, case_version(NULL); }
static void handshake_names(const certify_case *c) { (void)c, case_names(NULL); }
static void registration_profile(const certify_case *c) { (void)c, case_profile(NULL); }
static void registration_schemas(const certify_case *c) { (void)c, case_schemas(NULL); }

/* Whether --ops selects a case of op: the glob matches the op's name, the
 * name without "core::", or the whole case name. */
static bool selected(const char *op, const char *casename) {
  if (!opt.ops) return true;
  return fnmatch(opt.ops, op, 0) == 0 || (is_core(op) && fnmatch(opt.ops, op + 6, 0) == 0) ||
         fnmatch(opt.ops, casename, 0) == 0;
}

static const struct {
  const char *group;
  void (*fn)(const certify_case *);
} op_checks[] = {
    {"meta", case_meta},           {"honesty", case_honesty},
    {"bounds", case_bounds},       {"hygiene", case_hygiene},
    {"repeatability", case_repeat}, {"errors", case_errors},
    {"concurrency", case_concurrency},
};
#define NOP_CHECKS (sizeof op_checks / sizeof *op_checks)

static void add_op_checks(const char *op) {
  char name[160];
  for (size_t k = 0; k < NOP_CHECKS; k++) {
    snprintf(name, sizeof name, "%s/%s", op, op_checks[k].group);
    if (selected(op, name)) add_case(op_checks[k].group, name, op_checks[k].fn, op);
  }
}

/* The case list.  The core ops come from the host, which defines them
 * before any plugin loads; what the plugin registers comes from the probe,
 * so the parent never runs plugin code. */
static void build_cases(void) {
  add_case("handshake", "handshake/exports", handshake_exports, NULL);
  add_case("handshake", "handshake/imports", handshake_imports, NULL);
  add_case("handshake", "handshake/loads", handshake_loads, NULL);
  add_case("handshake", "handshake/version", handshake_version, NULL);
  add_case("handshake", "handshake/names", handshake_names, NULL);
  add_case("registration", "registration/profile", registration_profile, NULL);
  add_case("registration", "registration/schemas", registration_schemas, NULL);
  if (!probe.loaded) return;
  char name[160];
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(bp_op_at(i), &oi) != BP_OK || !is_core(oi.name)) continue;
    int r = ref_index(oi.name);
    const probe_op *po = probe_find(oi.name);
    if (r < 0 || (probe.op_set < 1 && !po)) continue;
    int32_t dts[NUM_DTYPES];
    int ndt = 0;
    if (!opt.full) {
      dts[ndt++] = BP_FLOAT32;
    } else {
      for (int d = 0; d < NUM_DTYPES; d++) {
        bool ok = !po || po->any_dtype;
        for (int k = 0; po && k < po->ndtypes; k++) ok |= po->dtypes[k] == all_dtypes[d];
        if (ok) dts[ndt++] = all_dtypes[d];
      }
    }
    for (int d = 0; d < ndt; d++)
      for (int sk = SK_BASIC; sk <= SK_NONCONTIG; sk++) {
        if (!sk_applies(refs[r].kind, sk)) continue;
        snprintf(name, sizeof name, "%s/%s/%s", oi.name, dt_name(dts[d]), sk_name[sk]);
        if (!selected(oi.name, name)) continue;
        certify_case *c = add_case("numerics", name, case_numerics, oi.name);
        c->dt = dts[d];
        c->sk = sk;
      }
    add_op_checks(oi.name);
  }
  for (size_t i = 0; i < probe.nops; i++) {
    const probe_op *po = &probe.ops[i];
    if (is_core(po->name)) continue;
    if (po->has_meta) {
      add_op_checks(po->name);
    } else {
      snprintf(name, sizeof name, "%s/generic", po->name);
      if (selected(po->name, name)) add_case("meta", name, case_nometa, po->name);
    }
  }
  add_case("device", "device/synchronize", case_sync, NULL);
  add_case("device", "device/streams", case_streams, NULL);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool failed_status(enum status s) { return s == ST_FAIL || s == ST_CRASH || s == ST_TIMEOUT; }

/* Writes all of buf to the socket or pipe fd; false once the other end is
 * gone (without SIGPIPE on a socket). */
static bool send_all(int fd, const char *buf, size_t n) {
  while (n) {
    ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    buf += w;
    n -= (size_t)w;
  }
  return true;
}

/* Reads what fd has, without blocking, onto buf (n bytes so far, kept
 * NUL-terminated); false at EOF, on an error, or when buf is full. */
static bool read_avail(int fd, char *buf, size_t *n, size_t cap) {
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return true;
    if (*n + 1 >= cap) return false;
    ssize_t got = read(fd, buf + *n, cap - 1 - *n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    *n += (size_t)got;
    buf[*n] = '\0';
  }
}

/* Reads one case's record in buf (n bytes): the first verdict, a status
 * line and a detail line (a line that names no status counts as "fail"),
 * into *st and detail, with *have saying whether one came.  Returns the
 * bytes through a worker's "done" line, or 0 when none has come. */
static size_t parse_record(const char *buf, size_t n, bool *have, enum status *st, char *detail,
                           size_t dlen) {
  const char *p = buf, *end = buf + n;
  bool want_detail = false;
  enum status cur = ST_FAIL;
  *have = false;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    int len = (int)(nl - p);
    if (want_detail) {
      if (!*have) {
        *have = true;
        *st = cur;
        snprintf(detail, dlen, "%.*s", len, p);
      }
      want_detail = false;
    } else if (len == 4 && memcmp(p, "done", 4) == 0) {
      return (size_t)(nl + 1 - buf);
    } else {
      cur = ST_FAIL;
      for (int s = 0; s <= ST_CRASH; s++)
        if ((int)strlen(status_name[s]) == len && memcmp(p, status_name[s], (size_t)len) == 0)
          cur = (enum status)s;
      want_detail = true;
    }
    p = nl + 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The worker: one load of the plugin, then case after case                 */
/* ------------------------------------------------------------------------ */

/* What a case may change in its process, as the worker had it right after
 * loading the plugin (where a fresh process starts a case); put back
 * before every case. */
static struct {
  fenv_t fenv;       /* rounding mode, flush-to-zero, exception flags */
  sigset_t mask;
  mode_t umask;
  int cwd;           /* the starting directory, or -1 */
  bool streams;      /* the device has a current stream to put back */
  bp_stream *stream; /* the one it had (NULL: the default); the plugin's */
  char **env;        /* copies of the environment's "NAME=value" strings */
  size_t nenv;
} saved;

extern char **environ;

/* Copies the environment into saved.env; false when out of memory. */
static bool save_env(void) {
  size_t n = 0;
  while (environ && environ[n]) n++;
  saved.env = calloc(n + 1, sizeof *saved.env);
  if (!saved.env) return false;
  for (size_t i = 0; i < n; i++)
    if (!(saved.env[i] = strdup(environ[i]))) return false;
  saved.nenv = n;
  return true;
}

/* Puts back the environment that save_env() copied, when a case changed
 * it (a kernel's setenv or putenv).  Each string is copied again, since
 * putenv() hands its argument to the environment, where a later case may
 * change it in place. */
static void restore_env(void) {
  size_t n = 0;
  bool same = environ != NULL || saved.nenv == 0;
  for (; same && environ && environ[n]; n++)
    same = n < saved.nenv && strcmp(environ[n], saved.env[n]) == 0;
  if (same && n == saved.nenv) return;
  clearenv();
  for (size_t i = 0; i < saved.nenv; i++) {
    char *copy = strdup(saved.env[i]);
    if (copy) putenv(copy); /* the environment keeps it */
  }
}

/* Puts back what an earlier case may have changed in this process, and
 * the certifier's own per-case state, as a fresh process has them.  The
 * live handles and device bytes are not reset: hygiene compares them
 * within its case. */
static void restore_state(void) {
  restore_env();
  fesetenv(&saved.fenv);
  sigprocmask(SIG_SETMASK, &saved.mask, NULL);
  alarm(0);
  install_fault_handler();
  umask(saved.umask);
  if (saved.cwd >= 0 && fchdir(saved.cwd) != 0) {
    /* The directory is gone; no case depends on it. */
  }
  setlocale(LC_ALL, "C");
  if (saved.streams) {
    bp_stream *cur = NULL;
    if (bp_stream_get_current(the_device, &cur) != BP_OK || cur != saved.stream)
      bp_stream_set_current(the_device, saved.stream);
  }
  bp_clear_error();
  errno = 0;
  rng_state = 0;
  nrefused = 0;
  refusal[0] = '\0';
  conc.want = NULL;
  conc.len = 0;
  conc.fail[0] = '\0';
  memset(&conc_sample, 0, sizeof conc_sample);
}

/* The worker's life, on its end of the socket fd: load the plugin, say
 * "ready", then for each case index the parent sends, run that case,
 * whose verdict goes over fd, and say "done".  It ends when the parent
 * closes the socket, or with the plugin (a crash, a kill on timeout). */
static void worker_main(int fd) __attribute__((noreturn));
static void worker_main(int fd) {
  dup2(STDERR_FILENO, STDOUT_FILENO);
  install_fault_handler();
  /* A plugin that does not load (or has no device type to test) is
   * reported by each case, in a fresh process: the worker says why
   * ("noload", then the reason) and ends, and the runner gives up on
   * workers. */
  verdict_fd = -1;
  if (!load_plugin() || !pick_device()) {
    char msg[1100];
    int n = snprintf(msg, sizeof msg, "noload\n%s\n", unsent[0] ? unsent : "no reason given");
    send_all(fd, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(0);
  }
  fegetenv(&saved.fenv);
  sigprocmask(SIG_SETMASK, NULL, &saved.mask);
  saved.umask = umask(022);
  umask(saved.umask);
  saved.cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  saved.streams = the_plugin && bp_stream_get_current(the_device, &saved.stream) == BP_OK;
  if (!save_env()) {
    static const char oom[] = "noload\nthe worker ran out of memory copying its environment\n";
    send_all(fd, oom, sizeof oom - 1);
    _exit(0);
  }
  verdict_fd = fd;
  if (!send_all(fd, "ready\n", 6)) _exit(0);
  for (;;) {
    char line[32];
    size_t n = 0;
    for (;;) {
      char ch;
      ssize_t got = read(fd, &ch, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) _exit(0); /* the parent is done with this worker */
      if (ch == '\n') break;
      if (n < sizeof line - 1) line[n++] = ch;
    }
    line[n] = '\0';
    char *end;
    unsigned long ci = strtoul(line, &end, 10);
    if (end == line || ci >= ncases) _exit(0);
    restore_state();
    cases[ci].fn(&cases[ci]);
    if (!send_all(fd, "done\n", 5)) _exit(0);
  }
}

/* ------------------------------------------------------------------------ */
/* The runner                                                               */
/* ------------------------------------------------------------------------ */

/* One of the --jobs slots: its worker (worker isolation), and the case it
 * runs, in that worker or in a fresh process of its own. */
typedef struct slot {
  pid_t wpid;       /* the worker, or 0 */
  int wfd;          /* the parent's end of its socket; -1 once closed */
  bool ready;       /* it has loaded the plugin */
  size_t wcases;    /* cases it has finished */
  double wt0;       /* when it started; once its socket closed, when that was */
  char wbuf[4096];  /* what it sent that is not yet used */
  size_t wn;
  bool busy;        /* a case is running */
  size_t ci;        /* which */
  bool child;       /* in a fresh process (cpid, cfd), not in the worker */
  pid_t cpid;
  int cfd;          /* -1 at EOF */
  double t0;        /* when the case began */
  char cbuf[2048];
  size_t cn;
} slot;

static slot *slots;
static size_t nslots;
static bool use_workers;            /* still handing cases to workers */
static char fallback_why[300];      /* why not any more, or "" */
static size_t *rerun_q, rq_head, rq_tail;
static bool *finished;
static size_t ndone, nworkers, nreruns, nchanged;
static pid_t *zombies;              /* killed workers not yet reaped */
static size_t nzombies, capzombies;

/* In a new child: closes the parent's ends of the other slots' pipes and
 * sockets, so that a worker sees its socket close when the parent closes
 * its end, and not only when every later child has ended. */
static void close_inherited(void) {
  for (size_t k = 0; k < nslots; k++) {
    if (slots[k].wpid && slots[k].wfd >= 0) close(slots[k].wfd);
    if (slots[k].busy && slots[k].child && slots[k].cfd >= 0) close(slots[k].cfd);
  }
}

static void reap_zombies(bool block) {
  for (size_t i = 0; i < nzombies;) {
    int wst;
    if (waitpid(zombies[i], &wst, block ? 0 : WNOHANG) == 0) {
      i++;
      continue;
    }
    zombies[i] = zombies[--nzombies];
  }
}

/* Kills a slot's worker; it is reaped later, so that a slow exit (a GPU
 * context torn down) does not hold up the other slots. */
static void kill_worker(slot *s) {
  if (!s->wpid) return;
  if (s->wfd >= 0) close(s->wfd);
  kill(s->wpid, SIGKILL);
  int wst;
  if (waitpid(s->wpid, &wst, WNOHANG) == 0) {
    if (nzombies == capzombies) {
      size_t cap = capzombies ? 2 * capzombies : 16;
      pid_t *grown = realloc(zombies, cap * sizeof *grown);
      if (grown) zombies = grown, capzombies = cap;
    }
    if (nzombies < capzombies) zombies[nzombies++] = s->wpid;
    else waitpid(s->wpid, &wst, 0);
  }
  s->wpid = 0;
  s->wfd = -1;
  s->ready = false;
  s->wcases = 0;
  s->wn = 0;
}

/* Stops handing cases to workers: the remaining cases run alone in fresh
 * processes.  The reason becomes a TAP diagnostic and goes into the
 * certificate. */
static void fallback(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fallback(const char *fmt, ...) {
  if (!use_workers) return;
  use_workers = false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fallback_why, sizeof fallback_why, fmt, ap);
  va_end(ap);
  printf("# worker isolation off: %s; the remaining cases run alone in fresh processes\n",
         fallback_why);
  fflush(stdout);
}

/* Sets a case's verdict.  One from a shared worker that is not a pass or
 * a skip is kept aside, and the case queued to run again alone in a fresh
 * process, whose verdict is the one reported. */
static void set_verdict(size_t ci, bool in_worker, enum status st, const char *detail,
                        double seconds) {
  certify_case *c = &cases[ci];
  c->status = st;
  snprintf(c->detail, sizeof c->detail, "%s", detail);
  c->seconds = seconds;
  if (in_worker && failed_status(st)) {
    c->rerun = true;
    c->worker_status = st;
    snprintf(c->worker_detail, sizeof c->worker_detail, "%s", detail);
    rerun_q[rq_tail++] = ci;
    nreruns++;
    return;
  }
  if (c->rerun && st != c->worker_status) nchanged++;
  finished[ci] = true;
  ndone++;
}

/* Runs case ci in a fresh process of its own (the case path). */
static void start_child(slot *s, size_t ci) {
  certify_case *c = &cases[ci];
  char why[300];
  int fds[2];
  s->ci = ci;
  s->cn = 0;
  s->cbuf[0] = '\0';
  s->t0 = now();
  if (pipe(fds) != 0) {
    snprintf(why, sizeof why, "pipe: %s", strerror(errno));
    set_verdict(ci, false, ST_FAIL, why, 0);
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, sizeof why, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    set_verdict(ci, false, ST_FAIL, why, 0);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    close_inherited();
    verdict_fd = fds[1];
    /* Whatever the plugin prints must not break the TAP stream. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    install_fault_handler();
    c->fn(c);
    close(verdict_fd);
    /* _exit: the plugin's atexit handlers are its own business, not the
     * verdict's; a hang in them would be a false TIMEOUT. */
    _exit(0);
  }
  close(fds[1]);
  s->busy = true;
  s->child = true;
  s->cpid = pid;
  s->cfd = fds[0];
}

/* Starts a slot's worker; false (and worker isolation off) when it
 * cannot be started. */
static bool start_worker(slot *s) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    fallback("socketpair: %s", strerror(errno));
    return false;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    fallback("fork: %s", strerror(errno));
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    close_inherited();
    worker_main(sv[1]);
  }
  close(sv[1]);
  s->wpid = pid;
  s->wfd = sv[0];
  s->ready = false;
  s->wcases = 0;
  s->wt0 = now();
  s->wn = 0;
  s->wbuf[0] = '\0';
  nworkers++;
  return true;
}

/* Gives a free slot its next piece of work: a rerun first (it holds up
 * the output), else the next case, in its worker or alone. */
static void schedule(slot *s, size_t *next) {
  if (s->busy) return;
  if (!use_workers && s->wpid) kill_worker(s);
  if (rq_head < rq_tail) {
    start_child(s, rerun_q[rq_head++]);
    return;
  }
  if (*next >= ncases) return;
  if (!use_workers) {
    start_child(s, (*next)++);
    return;
  }
  if (!s->wpid) {
    /* No more workers than there are cases left for them. */
    size_t idle = 0;
    for (size_t k = 0; k < nslots; k++) idle += slots[k].wpid && !slots[k].busy;
    if (ncases - *next > idle) start_worker(s);
    return;
  }
  if (!s->ready || s->wfd < 0) return;
  char line[32];
  int n = snprintf(line, sizeof line, "%zu\n", *next);
  s->ci = *next;
  s->child = false;
  s->t0 = now();
  if (!send_all(s->wfd, line, (size_t)n)) {
    /* It ended while idle; a fresh one takes the case. */
    kill_worker(s);
    return;
  }
  s->busy = true;
  (*next)++;
}

/* The worker of s has ended (exit status wst): its case, if it had one,
 * gets the verdict it sent before the end, or CRASH. */
static void worker_ended(slot *s, int wst) {
  char how[64];
  if (WIFSIGNALED(wst)) snprintf(how, sizeof how, "signal %d", WTERMSIG(wst));
  else snprintf(how, sizeof how, "status %d", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  if (s->busy && !s->child) {
    bool have;
    enum status st = ST_FAIL;
    char detail[1024];
    parse_record(s->wbuf, s->wn, &have, &st, detail, sizeof detail);
    if (!have && WIFSIGNALED(wst)) {
      st = ST_CRASH;
      snprintf(detail, sizeof detail, "CRASH signal %d", WTERMSIG(wst));
    } else if (!have) {
      st = ST_FAIL;
      snprintf(detail, sizeof detail, "the case exited (%s) without a verdict", how);
    }
    s->busy = false;
    set_verdict(s->ci, true, st, detail, now() - s->t0);
  } else if (s->wcases == 0) {
    /* One that cannot get through its first case would never make
     * progress: fall back. */
    fallback("a worker ended (%s) %s", how,
             s->ready ? "before it ran a case" : "while loading the plugin");
  }
  s->wpid = 0;
  s->wfd = -1;
  s->ready = false;
  s->wcases = 0;
  s->wn = 0;
}

static void service_worker(slot *s) {
  if (s->wfd >= 0 && !read_avail(s->wfd, s->wbuf, &s->wn, sizeof s->wbuf)) {
    close(s->wfd);
    s->wfd = -1;
    s->wt0 = now();
    /* A last line cut short still counts. */
    if (s->wn && s->wbuf[s->wn - 1] != '\n' && s->wn + 1 < sizeof s->wbuf) {
      s->wbuf[s->wn++] = '\n';
      s->wbuf[s->wn] = '\0';
    }
  }
  if (!s->ready && s->wn >= 7 && memcmp(s->wbuf, "noload\n", 7) == 0) {
    char *end = memchr(s->wbuf + 7, '\n', s->wn - 7);
    if (end || s->wfd < 0) {
      int len = end ? (int)(end - (s->wbuf + 7)) : (int)(s->wn - 7);
      fallback("a worker could not load the plugin (%.*s)", len, s->wbuf + 7);
      kill_worker(s);
      return;
    }
  }
  if (!s->ready && s->wn >= 6 && memcmp(s->wbuf, "ready\n", 6) == 0) {
    s->ready = true;
    memmove(s->wbuf, s->wbuf + 6, s->wn - 6 + 1);
    s->wn -= 6;
  }
  bool in_case = s->busy && !s->child;
  if (in_case) {
    bool have;
    enum status st = ST_FAIL;
    char detail[1024];
    size_t used = parse_record(s->wbuf, s->wn, &have, &st, detail, sizeof detail);
    if (used) {
      memmove(s->wbuf, s->wbuf + used, s->wn - used + 1);
      s->wn -= used;
      s->busy = false;
      s->wcases++;
      if (!have) {
        st = ST_FAIL;
        snprintf(detail, sizeof detail, "the case ended without a verdict");
      }
      set_verdict(s->ci, true, st, detail, now() - s->t0);
      /* It may hold what the case left behind: a fresh worker goes on. */
      if (failed_status(st)) kill_worker(s);
      return;
    }
  }
  if (s->wfd < 0) {
    /* Its socket closed: it is ending, by a crash or an exit. */
    int wst = 0;
    pid_t w = waitpid(s->wpid, &wst, WNOHANG);
    if (w == 0 && now() - s->wt0 < 2.0) return;
    if (w == 0) {
      kill(s->wpid, SIGKILL);
      waitpid(s->wpid, &wst, 0);
    }
    worker_ended(s, wst);
    return;
  }
  if (in_case && now() - s->t0 > opt.timeout) {
    kill_worker(s);
    s->busy = false;
    char detail[64];
    snprintf(detail, sizeof detail, "TIMEOUT after %g s", opt.timeout);
    set_verdict(s->ci, true, ST_TIMEOUT, detail, now() - s->t0);
  } else if (!s->ready && now() - s->wt0 > opt.timeout) {
    kill_worker(s);
    fallback("a worker did not load the plugin within %g s", opt.timeout);
  }
}

static void service_child(slot *s) {
  if (s->cfd >= 0 && !read_avail(s->cfd, s->cbuf, &s->cn, sizeof s->cbuf)) {
    close(s->cfd);
    s->cfd = -1;
  }
  int wst = 0;
  bool timed_out = now() - s->t0 > opt.timeout;
  pid_t w = s->cfd < 0 ? waitpid(s->cpid, &wst, WNOHANG) : 0;
  if (w == 0 && !timed_out) return;
  if (w == 0) {
    kill(s->cpid, SIGKILL);
    waitpid(s->cpid, &wst, 0);
  }
  if (s->cfd >= 0) close(s->cfd);
  s->cfd = -1;
  s->busy = false;
  double seconds = now() - s->t0;
  char detail[1024];
  if (w == 0) {
    snprintf(detail, sizeof detail, "TIMEOUT after %g s", opt.timeout);
    set_verdict(s->ci, false, ST_TIMEOUT, detail, seconds);
    return;
  }
  /* A verdict sent before a crash (the fault handler's) stands. */
  if (s->cn && s->cbuf[s->cn - 1] != '\n' && s->cn + 1 < sizeof s->cbuf) {
    s->cbuf[s->cn++] = '\n';
    s->cbuf[s->cn] = '\0';
  }
  bool have;
  enum status st = ST_FAIL;
  parse_record(s->cbuf, s->cn, &have, &st, detail, sizeof detail);
  if (!have && WIFSIGNALED(wst)) {
    st = ST_CRASH;
    snprintf(detail, sizeof detail, "CRASH signal %d", WTERMSIG(wst));
  } else if (!have) {
    st = ST_FAIL;
    snprintf(detail, sizeof detail, "the case exited (status %d) without a verdict",
             WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  }
  set_verdict(s->ci, false, st, detail, seconds);
}

static size_t npassed, nfailed, nskipped;
static bool progress;

static void print_case(size_t i) {
  certify_case *c = &cases[i];
  switch (c->status) {
    case ST_PASS:
      npassed++;
      printf("ok %zu - %s\n", i + 1, c->name);
      break;
    case ST_SKIP:
      nskipped++;
      printf("ok %zu - %s # SKIP %s\n", i + 1, c->name, c->detail);
      break;
    default:
      nfailed++;
      printf("not ok %zu - %s # %s\n", i + 1, c->name, c->detail);
      break;
  }
  if (c->rerun && c->status != c->worker_status)
    printf("# %s: %s in a shared worker (%s); rerun alone in a fresh process: %s\n", c->name,
           status_name[c->worker_status], c->worker_detail, status_name[c->status]);
  fflush(stdout);
}

static void show_progress(size_t done, size_t cur, double t0) {
  if (!progress) return;
  double el = now() - t0, eta = done ? el / (double)done * (double)(ncases - done) : 0;
  fprintf(stderr, "\r\033[K[%zu/%zu] %.60s  failures %zu  ETA %.0fs", done, ncases,
          cur < ncases ? cases[cur].name : "", nfailed, eta);
  fflush(stderr);
}

/* Ends the idle workers: each exits when its socket closes; one that has
 * not within --timeout is killed. */
static void stop_workers(void) {
  for (size_t k = 0; k < nslots; k++)
    if (slots[k].wpid && slots[k].wfd >= 0) {
      close(slots[k].wfd);
      slots[k].wfd = -1;
    }
  double t0 = now();
  for (size_t k = 0; k < nslots; k++) {
    slot *s = &slots[k];
    int wst;
    while (s->wpid && waitpid(s->wpid, &wst, WNOHANG) == 0) {
      if (now() - t0 > opt.timeout) {
        kill(s->wpid, SIGKILL);
        waitpid(s->wpid, &wst, 0);
        break;
      }
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    s->wpid = 0;
  }
  reap_zombies(true);
}

/* Runs every case, --jobs at a time, printing in case order. */
static void run_all(void) {
  nslots = (size_t)opt.jobs;
  slots = calloc(nslots, sizeof *slots);
  finished = calloc(ncases ? ncases : 1, sizeof *finished);
  rerun_q = calloc(ncases ? ncases : 1, sizeof *rerun_q);
  struct pollfd *pf = calloc(2 * nslots, sizeof *pf);
  if (!slots || !finished || !rerun_q || !pf) {
    perror("bp-certify");
    exit(2);
  }
  for (size_t k = 0; k < nslots; k++) slots[k].wfd = slots[k].cfd = -1;
  use_workers = opt.isolation == ISO_WORKER;
  size_t next = 0, printed = 0;
  double t0 = now();
  while (printed < ncases) {
    for (size_t k = 0; k < nslots; k++) schedule(&slots[k], &next);
    size_t np = 0;
    for (size_t k = 0; k < nslots; k++) {
      const slot *s = &slots[k];
      if (s->wpid && s->wfd >= 0) pf[np++] = (struct pollfd){s->wfd, POLLIN, 0};
      if (s->busy && s->child && s->cfd >= 0) pf[np++] = (struct pollfd){s->cfd, POLLIN, 0};
    }
    if (np) {
      poll(pf, (nfds_t)np, 20);
    } else {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    for (size_t k = 0; k < nslots; k++) {
      if (slots[k].wpid) service_worker(&slots[k]);
      if (slots[k].busy && slots[k].child) service_child(&slots[k]);
    }
    reap_zombies(false);
    while (printed < ncases && finished[printed]) print_case(printed++);
    show_progress(ndone, next < ncases ? next : ncases - 1, t0);
  }
  if (progress) fputs("\r\033[K", stderr);
  stop_workers();
  free(slots);
  slots = NULL;
  nslots = 0;
  free(finished);
  free(rerun_q);
  free(pf);
  free(zombies);
}

/* ------------------------------------------------------------------------ */
/* The certificate and the report                                           */
/* ------------------------------------------------------------------------ */

static const char *const groups[] = {"handshake", "registration", "numerics", "meta",
                                     "honesty",   "bounds",       "hygiene",  "repeatability",
                                     "errors",    "concurrency",  "device"};
#define NGROUPS (sizeof groups / sizeof *groups)

/* The length of the well-formed UTF-8 sequence at p (1 to 4 bytes), or 0
 * when the bytes there are not one: a stray or missing continuation byte
 * (a string cut short), an overlong form, a surrogate, or past U+10FFFF. */
static int utf8_len(const unsigned char *p) {
  unsigned c = p[0], cp, min;
  int n;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) n = 2, cp = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0) n = 3, cp = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0; /* the terminating NUL included */
    cp = cp << 6 | (p[i] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/* s as a JSON string.  The strings come from the plugin (its vendor,
 * version, messages) and the command line, as any bytes: a byte that is
 * not part of well-formed UTF-8 becomes U+FFFD, so the file is always
 * valid JSON. */
static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      fprintf(f, "\\%c", *p);
    } else if (*p == '\n') {
      fputs("\\n", f);
    } else if (*p == '\t') {
      fputs("\\t", f);
    } else if (*p < 0x20 || *p == 0x7f) {
      fprintf(f, "\\u%04x", *p);
    } else if (*p >= 0x80) {
      int n = utf8_len(p);
      if (n == 0) {
        fputs("\\ufffd", f);
      } else {
        fwrite(p, 1, (size_t)n, f);
        p += n - 1;
      }
    } else {
      fputc(*p, f);
    }
  }
  fputc('"', f);
}
static void cpu_model(char *out, size_t len) {
  struct utsname u;
  snprintf(out, len, "%s", uname(&u) == 0 ? u.machine : "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *v = strchr(line, ':');
    if (!v) continue;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = '\0';
    snprintf(out, len, "%s", v);
    break;
  }
  fclose(f);
}

/* s in single quotes for a POSIX shell, into out (len bytes, truncated):
 * each ' inside becomes '\''. */
static const char *shell_quote(const char *s, char *out, size_t len) {
  size_t n = 0;
  if (len < 3) return "''";
  out[n++] = '\'';
  for (; *s && n + 6 < len; s++) {
    if (*s == '\'') {
      memcpy(out + n, "'\\''", 4);
      n += 4;
    } else {
      out[n++] = *s;
    }
  }
  out[n++] = '\'';
  out[n] = '\0';
  return out;
}

/* The command line that reruns one case alone, in a fresh process as
 * its reported verdict was obtained (in either isolation). */
static void repro(const certify_case *c, char *out, size_t len) {
  char plugin[400], dev[200], name[200];
  snprintf(out, len, "bp-certify %s%s%s --profile %s --ops %s --seed %llu --isolation case",
           shell_quote(opt.plugin, plugin, sizeof plugin), opt.device ? " --device " : "",
           opt.device ? shell_quote(opt.device, dev, sizeof dev) : "", opt.profile,
           shell_quote(c->name, name, sizeof name), (unsigned long long)opt.seed);
}

static bool write_json(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bp-certify: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  char sha[65] = "";
  bool have_sha = sha256_file(opt.plugin, sha);
  struct utsname u;
  char os[400] = "unknown", cpu[256];
  if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
  cpu_model(cpu, sizeof cpu);

  fputs("{\n  \"certifier\": {\"name\": \"bp-certify\", \"version\": ", f);
  json_str(f, CERTIFY_VERSION);
  fputs("},\n  \"plugin\": {\"path\": ", f);
  json_str(f, opt.plugin);
  fputs(", \"sha256\": ", f);
  json_str(f, have_sha ? sha : NULL);
  fputs(", \"name\": ", f);
  json_str(f, probe.loaded ? probe.name : NULL);
  fputs(", \"vendor\": ", f);
  json_str(f, probe.loaded ? probe.vendor : NULL);
  fputs(", \"version\": ", f);
  json_str(f, probe.loaded ? probe.version : NULL);
  fputs(", \"abi\": ", f);
  if (probe.loaded) {
    char abi[32];
    snprintf(abi, sizeof abi, "%u.%u", probe.abi_major, probe.abi_minor);
    json_str(f, abi);
    fprintf(f, ", \"op_set_version\": %u},\n", probe.op_set);
  } else {
    fputs("null, \"op_set_version\": null},\n", f);
  }
  fputs("  \"host\": {\"os\": ", f);
  json_str(f, os);
  fputs(", \"cpu\": ", f);
  json_str(f, cpu);
  fputs(", \"device\": ", f);
  json_str(f, opt.device ? opt.device : probe.loaded ? probe.device : NULL);
  fputs(", \"device_name\": ", f);
  json_str(f, probe.loaded && probe.device_name[0] ? probe.device_name : NULL);
  fputs(", \"backplane\": ", f);
  json_str(f, bp_version());
  fputs("},\n  \"profile\": ", f);
  json_str(f, opt.profile);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"isolation\": {\"mode\": \"%s\", \"workers\": %zu, "
             "\"reruns\": %zu, \"changed\": %zu, \"fallback\": ",
          (unsigned long long)opt.seed, isolation_name[opt.isolation], nworkers, nreruns, nchanged);
  json_str(f, fallback_why[0] ? fallback_why : NULL);
  fputs("},\n  \"checks\": {", f);
  for (size_t g = 0; g < NGROUPS; g++) {
    size_t cnt[5] = {0};
    double secs = 0;
    for (size_t i = 0; i < ncases; i++)
      if (strcmp(cases[i].group, groups[g]) == 0) cnt[cases[i].status]++, secs += cases[i].seconds;
    size_t bad = cnt[ST_FAIL] + cnt[ST_CRASH] + cnt[ST_TIMEOUT];
    fprintf(f, "%s\n    ", g ? "," : "");
    json_str(f, groups[g]);
    fprintf(f,
            ": {\"status\": \"%s\", \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, "
            "\"seconds\": %.3f}",
            bad ? "fail" : cnt[ST_PASS] ? "pass" : "skip", cnt[ST_PASS], bad, cnt[ST_SKIP], secs);
  }
  fputs("\n  },\n  \"results\": [", f);
  for (size_t i = 0; i < ncases; i++) {
    fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    json_str(f, cases[i].name);
    fputs(", \"group\": ", f);
    json_str(f, cases[i].group);
    fputs(", \"op\": ", f);
    json_str(f, cases[i].op[0] ? cases[i].op : NULL);
    fputs(", \"status\": ", f);
    json_str(f, status_name[cases[i].status]);
    fputs(", \"detail\": ", f);
    json_str(f, cases[i].detail);
    fprintf(f, ", \"seconds\": %.3f", cases[i].seconds);
    if (cases[i].rerun) {
      fputs(", \"worker\": {\"status\": ", f);
      json_str(f, status_name[cases[i].worker_status]);
      fputs(", \"detail\": ", f);
      json_str(f, cases[i].worker_detail);
      fputc('}', f);
    }
    fputc('}', f);
  }
  fprintf(f,
          "\n  ],\n  \"summary\": {\"passed\": %zu, \"failed\": %zu, \"skipped\": %zu},\n"
          "  \"conforms\": %s\n}\n",
          npassed, nfailed, nskipped, nfailed == 0 ? "true" : "false");
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "bp-certify: error writing %s\n", path);
  return ok;
}

static void html_str(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

/* One matrix cell: the worst status of the cases of op in group (and
 * dtype, for numerics), linked to the first failure. */
static void html_cell(FILE *f, const char *op, const char *group, const char *dtname) {
  size_t n = 0, first_bad = (size_t)-1;
  bool pass = false, bad = false;
  char prefix[160];
  snprintf(prefix, sizeof prefix, "%s/%s/", op, dtname ? dtname : "");
  for (size_t i = 0; i < ncases; i++) {
    const certify_case *c = &cases[i];
    if (strcmp(c->op, op) != 0 || strcmp(c->group, group) != 0) continue;
    if (dtname && strncmp(c->name, prefix, strlen(prefix)) != 0) continue;
    n++;
    if (c->status == ST_PASS) pass = true;
    if (failed_status(c->status)) {
      if (!bad) first_bad = i;
      bad = true;
    }
  }
  if (!n) {
    fputs("<td class=na></td>", f);
  } else if (bad) {
    fprintf(f, "<td class=fail><a href=\"#case%zu\">%s</a></td>", first_bad + 1,
            status_name[cases[first_bad].status]);
  } else {
    fprintf(f, "<td class=%s>%s</td>", pass ? "pass" : "skip", pass ? "pass" : "skip");
  }
}

static bool write_html(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bp-certify: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bp-certify: ", f);
  html_str(f, probe.loaded ? probe.name : opt.plugin);
  fputs("</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #999;padding:2px 5px;font-size:12px}"
        ".pass{background:#9d9}.fail{background:#e77}.skip{background:#ddd}.na{background:#fff}"
        "code{white-space:pre-wrap}</style></head><body>\n<h1>bp-certify ",
        f);
  fputs(CERTIFY_VERSION, f);
  fputs(": ", f);
  html_str(f, opt.plugin);
  fprintf(f, "</h1>\n<p>Profile %s, seed %llu, isolation %s, device ", opt.profile,
          (unsigned long long)opt.seed, isolation_name[opt.isolation]);
  html_str(f, probe.loaded ? probe.device : "?");
  fprintf(f, ". %zu passed, %zu failed, %zu skipped: <b>%s</b>.</p>\n", npassed, nfailed,
          nskipped, nfailed ? "does NOT conform" : "conforms");
  /* Plugin-wide checks. */
  fputs("<h2>Plugin</h2>\n<table><tr><th>check</th><th>result</th><th>detail</th></tr>\n", f);
  for (size_t i = 0; i < ncases; i++) {
    const certify_case *c = &cases[i];
    if (c->op[0]) continue;
    fprintf(f, "<tr><td>%s</td><td class=%s>", c->name,
            failed_status(c->status) ? "fail" : c->status == ST_PASS ? "pass" : "skip");
    if (failed_status(c->status)) fprintf(f, "<a href=\"#case%zu\">%s</a>", i + 1, status_name[c->status]);
    else fputs(status_name[c->status], f);
    fputs("</td><td>", f);
    html_str(f, c->detail);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  /* The matrix: ops x (dtypes of numerics, then the other groups). */
  bool dt_used[NUM_DTYPES] = {false};
  for (size_t i = 0; i < ncases; i++)
    if (strcmp(cases[i].group, "numerics") == 0)
      for (int d = 0; d < NUM_DTYPES; d++) dt_used[d] |= cases[i].dt == all_dtypes[d];
  fputs("<h2>Ops</h2>\n<table><tr><th>op</th>", f);
  for (int d = 0; d < NUM_DTYPES; d++)
    if (dt_used[d]) fprintf(f, "<th>numerics<br>%s</th>", dt_name(all_dtypes[d]));
  for (size_t k = 0; k < NOP_CHECKS; k++) fprintf(f, "<th>%s</th>", op_checks[k].group);
  fputs("</tr>\n", f);
  for (size_t i = 0; i < ncases; i++) {
    const certify_case *c = &cases[i];
    if (!c->op[0]) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) seen = strcmp(cases[j].op, c->op) == 0;
    if (seen) continue;
    fputs("<tr><th>", f);
    html_str(f, c->op);
    fputs("</th>", f);
    for (int d = 0; d < NUM_DTYPES; d++)
      if (dt_used[d]) html_cell(f, c->op, "numerics", dt_name(all_dtypes[d]));
    for (size_t k = 0; k < NOP_CHECKS; k++) html_cell(f, c->op, op_checks[k].group, NULL);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<h2>Failures</h2>\n", f);
  for (size_t i = 0; i < ncases; i++) {
    const certify_case *c = &cases[i];
    if (!failed_status(c->status)) continue;
    char cmd[700];
    repro(c, cmd, sizeof cmd);
    fprintf(f, "<h3 id=\"case%zu\">%zu. ", i + 1, i + 1);
    html_str(f, c->name);
    fprintf(f, ": %s</h3>\n<p>", status_name[c->status]);
    html_str(f, c->detail);
    if (c->rerun && (c->status != c->worker_status || strcmp(c->detail, c->worker_detail) != 0)) {
      fprintf(f, "</p>\n<p>In a shared worker it gave %s (", status_name[c->worker_status]);
      html_str(f, c->worker_detail);
      fputs("); the verdict above is its rerun alone in a fresh process.", f);
    } else if (c->rerun) {
      fputs("</p>\n<p>The same in a shared worker and alone in a fresh process.", f);
    }
    fputs("</p>\n<p>Reproduce: <code>", f);
    html_str(f, cmd);
    fputs("</code></p>\n", f);
  }
  if (!nfailed) fputs("<p>None.</p>\n", f);
  if (nchanged) {
    fputs("<h2>Reruns that changed a verdict</h2>\n<p>These cases did not pass in a shared worker "
          "and gave another verdict alone in a fresh process, which stands.</p>\n<ul>\n",
          f);
    for (size_t i = 0; i < ncases; i++) {
      const certify_case *c = &cases[i];
      if (!c->rerun || c->status == c->worker_status) continue;
      fputs("<li>", f);
      html_str(f, c->name);
      fprintf(f, ": %s in a worker (", status_name[c->worker_status]);
      html_str(f, c->worker_detail);
      fprintf(f, "), %s alone</li>\n", status_name[c->status]);
    }
    fputs("</ul>\n", f);
  }
  fputs("</body></html>\n", f);
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "bp-certify: error writing %s\n", path);
  return ok;
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  /* The probe needs a loaded plugin only for what it registered; a plugin
   * that does not load gets the handshake and registration cases. */
  run_probe();
  build_cases();
  if (opt.list) {
    for (size_t i = 0; i < ncases; i++) printf("%s\n", cases[i].name);
    return 0;
  }
  if (probe.no_device) {
    /* Nothing can be certified on a device that is not there (a GPU
     * plugin on a machine without one): one clear line, no certificate,
     * and the Automake "skipped" status. */
    char why[900];
    int tlen = (int)strcspn(probe.device, ":");
    snprintf(why, sizeof why, "%s does not exist: there %s %ld %.*s device%s%s%s%s",
             probe.device, probe.device_count == 1 ? "is" : "are", probe.device_count, tlen,
             probe.device, probe.device_count == 1 ? "" : "s",
             probe.note[0] ? " (the plugin's note: " : "", probe.note, probe.note[0] ? ")" : "");
    printf("1..0 # SKIP cannot certify: %s\n", why);
    fprintf(stderr, "bp-certify: cannot certify: %s; nothing was checked%s\n", why,
            opt.json || opt.html ? ", and no certificate or report was written" : "");
    return 77;
  }
  progress = isatty(STDERR_FILENO) != 0;
  printf("1..%zu\n", ncases);
  printf("# bp-certify %s, plugin %s, profile %s, device %s, seed %llu, jobs %ld, isolation %s\n",
         CERTIFY_VERSION, opt.plugin, opt.profile, probe.loaded ? probe.device : "?",
         (unsigned long long)opt.seed, opt.jobs, isolation_name[opt.isolation]);
  run_all();
  if (nreruns)
    printf("# %zu case(s) that did not pass in a shared worker were rerun alone in a fresh "
           "process: %zu verdict(s) changed\n",
           nreruns, nchanged);
  printf("# %zu passed, %zu failed, %zu skipped: %s\n", npassed, nfailed, nskipped,
         nfailed ? "does NOT conform" : "conforms");
  bool ok = true;
  if (opt.json) ok &= write_json(opt.json);
  if (opt.html) ok &= write_html(opt.html);
  if (!ok) return 1;
  return nfailed ? 1 : 0;
}
