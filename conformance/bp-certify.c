/*
 * conformance/bp-certify.c - certifies a Backplane plugin against the ABI
 * rules and the `core` op set (docs/op-set.md), printing TAP and
 * optionally writing a JSON certificate.
 *
 * Every case runs in a forked child that loads the plugin itself, so that
 * a crash or a hang in the plugin becomes a CRASH or TIMEOUT verdict for
 * that case only, and no case sees state left behind by another.  The
 * child reports "<status>\n<detail>\n" over a pipe.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <backplane/host.h>

#include "certify.h"
#include "num.h"
#include "ref.h"

#define CERTIFY_VERSION "0.1.0"

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

static struct {
  const char *plugin;
  const char *device;  /* "TYPE[:INDEX]" as given, or NULL */
  const char *profile; /* "core" or "full" */
  const char *ops;     /* fnmatch glob, or NULL for all */
  const char *json;
  long jobs;
  double timeout;
  uint64_t seed;
  bool list;
} opt = {NULL, NULL, "core", NULL, NULL, 1, 10.0, 1, false};

static void usage(FILE *to) {
  fprintf(to,
          "usage: bp-certify PLUGIN.so [--device TYPE[:INDEX]] [--profile core|full]\n"
          "                  [--ops GLOB] [--json FILE] [--jobs N] [--timeout S]\n"
          "                  [--seed N] [--list]\n");
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
                                             "--jobs",   "--timeout", "--seed"};
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
    } else if (strcmp(name, "--ops") == 0) {
      opt.ops = val;
    } else if (strcmp(name, "--json") == 0) {
      if (!*val) bad_usage("--json: empty file name");
      opt.json = val;
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
    } else {
      char *end;
      errno = 0;
      unsigned long long s = strtoull(val, &end, 0);
      if (errno || end == val || *end || val[0] == '-')
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

static void verdict(enum status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(enum status st, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  /* The detail is one line of a TAP point. */
  for (char *p = detail; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '#') *p = ' ';
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

/* ------------------------------------------------------------------------ */
/* Plugin access inside a child                                             */
/* ------------------------------------------------------------------------ */

static bp_plugin *the_plugin;
static bp_plugin_info the_info;
static bp_device the_device;

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

/* The device under test: --device when given, else the device type for
 * which the plugin registered most of its kernels, else the CPU. */
static bool pick_device(void) {
  if (opt.device) {
    const char *colon = strchr(opt.device, ':');
    size_t tlen = colon ? (size_t)(colon - opt.device) : strlen(opt.device);
    int32_t index = colon ? (int32_t)strtol(colon + 1, NULL, 10) : 0;
    /* Fixed codes first, then the runtime-assigned vendor range. */
    for (int32_t code = 1; code < BP_DEVICE_DYNAMIC_FIRST + 256; code++) {
      const char *n = bp_device_type_name(code);
      if (n && strlen(n) == tlen && strncmp(n, opt.device, tlen) == 0) {
        the_device = bp_device_make(code, index);
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
  return true;
}

static const char *device_name(int32_t type) {
  const char *n = bp_device_type_name(type);
  return n ? n : "?";
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
  else if (the_info.op_set_version < 1)
    verdict(ST_FAIL, "op_set_version is %u; the core profile needs >= 1",
            the_info.op_set_version);
  else
    verdict(ST_PASS, "ABI %u.%u (host %u.%u), op set %u", the_info.abi_major,
            the_info.abi_minor, major, minor, the_info.op_set_version);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static void case_profile(const char *arg) {
  (void)arg;
  if (!load_plugin() || !pick_device()) return;
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
    verdict(ST_FAIL, "%s has no kernel for %s", first, device_name(the_device.type));
  else if (nmissing)
    verdict(ST_FAIL, "%s has no kernel for %s (%zu of %zu core ops missing)", first,
            device_name(the_device.type), nmissing, ncore);
  else
    verdict(ST_PASS, "%zu core ops have kernels for %s", ncore, device_name(the_device.type));
}

static void case_schemas(const char *arg) {
  (void)arg;
  if (!load_plugin()) return;
  size_t nown = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(bp_op_at(i), &oi) != BP_OK || !oi.owner ||
        strcmp(oi.owner, the_info.name) != 0)
      continue;
    nown++;
    if (!oi.defined || !oi.schema) {
      verdict(ST_FAIL, "%s is owned by the plugin but has no schema", oi.name);
      return;
    }
  }
  verdict(ST_PASS, "%zu ops of its own, all with schemas", nown);
}

/* ------------------------------------------------------------------------ */
/* Numerics smoke                                                           */
/* ------------------------------------------------------------------------ */

/* splitmix64, seeded per case from --seed and the op's name. */
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

/* A reference input: float32 values in [lo, hi), rounded to float32. */
static rt *rand_rt(int32_t ndim, const int64_t *sizes, double lo, double hi) {
  rt *r = rt_new(BP_FLOAT32, ndim, sizes);
  for (int64_t i = 0; i < r->numel; i++) r->f[i] = round_to(BP_FLOAT32, rng_uniform(lo, hi));
  return r;
}

/* Tensors made here, released at the end of the case. */
static bp_tensor *made[16];
static int nmade;

/* A tensor on the device under test holding r's values, staged through a
 * CPU tensor so that any device with copies works. */
static bp_tensor *to_device(const rt *r) {
  bp_tensor *host = NULL, *dev = NULL;
  if (bp_tensor_empty(BP_CPU, r->dtype, r->ndim, r->sizes, &host) != BP_OK) return NULL;
  const bp_tensor_view *v = bp_tensor_get_view(host);
  for (int64_t i = 0; i < r->numel; i++) {
    char *p = (char *)v->data + i * v->itemsize;
    if (dt_is_float(r->dtype))
      store_f(p, r->dtype, r->f[i]);
    else
      store_i(p, r->dtype, r->i[i]);
  }
  if (the_device.type == BP_DEVICE_CPU && the_device.index == 0) {
    dev = host;
  } else {
    if (bp_tensor_empty(the_device, r->dtype, r->ndim, r->sizes, &dev) != BP_OK ||
        bp_tensor_copy(dev, host) != BP_OK) {
      bp_tensor_release(dev);
      dev = NULL;
    }
    bp_tensor_release(host);
  }
  if (dev && nmade < 16) made[nmade++] = dev;
  return dev;
}

/* Compares a result (on any device) with the reference; writes a reason
 * into why and returns false on a mismatch.  rtol is scaled by sqrt(n) and
 * atol by atol_n for reductions over n elements, as the op set says. */
static bool compare(bp_tensor *got, const rt *want, double rscale, double ascale, char *why,
                    size_t whylen) {
  const bp_tensor_view *gv = bp_tensor_get_view(got);
  if (gv->dtype != want->dtype) {
    snprintf(why, whylen, "result dtype %s, expected %s", dt_name(gv->dtype),
             dt_name(want->dtype));
    return false;
  }
  if (gv->ndim != want->ndim ||
      (gv->ndim && memcmp(gv->sizes, want->sizes, (size_t)gv->ndim * sizeof(int64_t)) != 0)) {
    snprintf(why, whylen, "result shape differs from the reference");
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
  int64_t bad = 0, first = -1;
  double max_abs = 0, max_rel = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    const char *p = (const char *)hv->data + i * hv->itemsize;
    if (dt_is_float(want->dtype)) {
      double g = load_f(p, want->dtype), w = want->f[i];
      if (isnan(g) && isnan(w)) continue;
      double d = fabs(g - w);
      if (!(d <= atol + rtol * fabs(w)) && !(g == w)) {
        if (bad++ == 0) first = i;
        if (d > max_abs || isnan(d)) max_abs = d;
        if (w != 0 && d / fabs(w) > max_rel) max_rel = d / fabs(w);
      }
    } else if (load_i(p, want->dtype) != want->i[i]) {
      if (bad++ == 0) first = i;
    }
  }
  bp_tensor_release(host);
  if (bad) {
    snprintf(why, whylen,
             "%lld of %lld elements mismatch (first at flat index %lld; max abs error %g, "
             "max rel error %g; rtol %g atol %g)",
             (long long)bad, (long long)want->numel, (long long)first, max_abs, max_rel, rtol,
             atol);
    return false;
  }
  return true;
}

/* The bytes of t's elements in row-major order, copied to the CPU, so
 * that two states of a tensor on any device compare bytewise; NULL when
 * they cannot be read.  The caller frees the result. */
static unsigned char *tensor_bytes(bp_tensor *t, size_t *len) {
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

/* What the certifier needs of a schema's arguments: each one's name, and
 * whether it is annotated (a!), that is, the op may write to it. */
typedef struct schema_args {
  int n;
  char name[12][32];
  bool mutated[12];
} schema_args;

static void parse_schema_args(const char *schema, schema_args *out) {
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
    for (const char *q = start; q + 1 < nbeg; q++)
      if (q[0] == '!' && q[1] == ')') out->mutated[i] = true;
  }
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

/* When set, case_numerics builds its arguments and then checks the error
 * paths instead of the numerics. */
static bool errors_mode;

/* The numerics case of one core op: small float32 inputs (a [2, 3] by [3]
 * broadcast for binary ops), one call, the reference, and the meta
 * function's view of the result.  The same case checks that the call
 * leaves its non-(a!) inputs alone, gives bitwise the same result when
 * repeated (unless the op is declared nondeterministic), and releases
 * every tensor handle it made.  Failures name the check that failed. */
static void case_numerics(const char *opname) {
  size_t r;
  for (r = 0; r < sizeof refs / sizeof *refs; r++)
    if (strcmp(refs[r].name, opname + 6) == 0) break;
  if (r == sizeof refs / sizeof *refs) {
    verdict(ST_SKIP, "no reference in this version");
    return;
  }
  if (!load_plugin() || !pick_device()) return;
  const bp_op *op;
  if (bp_op_find(opname, &op) != BP_OK) {
    verdict(ST_FAIL, "%s: %s", opname, bp_last_error());
    return;
  }
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  if (bp_op_get_info(op, &oi) != BP_OK) {
    verdict(ST_FAIL, "%s: %s", opname, bp_last_error());
    return;
  }
  schema_args sa;
  parse_schema_args(oi.schema, &sa);
  /* Handles alive now belong to the host and the plugin's setup; the case
   * must end with exactly as many. */
  int64_t live0 = bp_live_tensor_count();
  /* Seeded from --seed and the op name, so that one case reproduces alone. */
  rng_state = opt.seed;
  for (const char *p = opname; *p; p++) rng_state = rng_state * 131 + (unsigned char)*p;

  const int64_t s23[2] = {2, 3}, s3[1] = {3}, s34[2] = {3, 4};
  /* List arguments are borrowed by the stack, so they live as long as it. */
  const int64_t dims[1] = {1}, norm[1] = {3};
  bp_value slots[8];
  bp_stack st = BP_STACK_INIT(slots, 8);
  rt *a = NULL, *b = NULL, *c = NULL, *want = NULL;
  double rscale = 1, ascale = 1;
  bp_tensor *inplace = NULL; /* the tensor an in-place or out= op must return */
  bool ok = true;
  enum kind kind = refs[r].kind;
  int sub = refs[r].sub;

  switch (kind) {
    case K_BINARY:
    case K_ADD_OUT:
    case K_MULADD:
      /* pow gets positive bases so that the result stays real. */
      a = rand_rt(2, s23, sub == RB_POW && kind == K_BINARY ? 0.5 : -2, 2);
      b = rand_rt(1, s3, -2, 2);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_tensor(&st, to_device(b)) == BP_OK;
      if (kind == K_MULADD) {
        ok = ok && bp_stack_push_float(&st, 0.5) == BP_OK;
        want = ref_muladd(a, b, 0.5);
      } else {
        want = ref_binary(sub, a, b, 1.0);
      }
      if (kind == K_ADD_OUT) {
        rt *zero = rt_new(BP_FLOAT32, 2, s23);
        inplace = to_device(zero);
        rt_free(zero);
        ok = ok && bp_stack_push_float(&st, 1.0) == BP_OK &&
             bp_stack_push_tensor(&st, inplace) == BP_OK;
      }
      break;
    case K_UNARY: {
      bool positive = sub == RU_LOG || sub == RU_SQRT || sub == RU_RSQRT;
      a = rand_rt(2, s23, positive ? 0.25 : -3, 3);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK;
      want = ref_unary(sub, a);
      break;
    }
    case K_WHERE: {
      c = rt_new(BP_BOOL, 2, s23);
      for (int64_t i = 0; i < c->numel; i++) c->i[i] = (int64_t)(rng_next() & 1);
      a = rand_rt(2, s23, -2, 2);
      b = rand_rt(1, s3, -2, 2);
      ok = bp_stack_push_tensor(&st, to_device(c)) == BP_OK &&
           bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_tensor(&st, to_device(b)) == BP_OK;
      want = ref_where(c, a, b);
      break;
    }
    case K_REDUCE: {
      int64_t n = 1;
      a = rand_rt(2, s23, -2, 2);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_int_list(&st, dims, 1) == BP_OK;
      want = ref_reduce(sub, a, dims, 1, false, BP_DTYPE_INVALID, &n);
      rscale = sqrt((double)n);
      if (sub == RR_SUM) ascale = (double)n;
      break;
    }
    case K_ARGMAX:
      a = rand_rt(2, s23, -2, 2);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_int(&st, 1) == BP_OK;
      want = ref_argmax(a, true, 1, false);
      break;
    case K_MATMUL: {
      int64_t k = 1;
      a = rand_rt(2, s23, -2, 2);
      b = rand_rt(2, s34, -2, 2);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_tensor(&st, to_device(b)) == BP_OK;
      want = ref_matmul(a, b, &k);
      rscale = sqrt((double)k);
      ascale = (double)k;
      break;
    }
    case K_SOFTMAX:
      a = rand_rt(2, s23, -3, 3);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_int(&st, -1) == BP_OK;
      want = ref_softmax(a, -1, sub != 0);
      rscale = sqrt(3.0);
      break;
    case K_LAYER_NORM:
      a = rand_rt(2, s23, -3, 3);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_int_list(&st, norm, 1) == BP_OK;
      want = ref_layer_norm(a, 1, NULL, NULL, 1e-5);
      rscale = sqrt(3.0);
      break;
    case K_CAST:
      a = rand_rt(2, s23, -3, 3);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK &&
           bp_stack_push_scalar_type(&st, BP_FLOAT64) == BP_OK;
      want = ref_cast(a, BP_FLOAT64);
      break;
    case K_CONTIGUOUS:
      a = rand_rt(2, s23, -3, 3);
      ok = bp_stack_push_tensor(&st, to_device(a)) == BP_OK;
      want = ref_cast(a, BP_FLOAT32);
      break;
    case K_FILL:
      a = rand_rt(2, s23, -3, 3);
      inplace = to_device(a);
      ok = bp_stack_push_tensor(&st, inplace) == BP_OK && bp_stack_push_float(&st, 2.5) == BP_OK;
      want = rt_new(BP_FLOAT32, 2, s23);
      for (int64_t i = 0; i < want->numel; i++) want->f[i] = 2.5;
      break;
    case K_COPY:
      a = rand_rt(2, s23, -3, 3);
      b = rand_rt(2, s23, -3, 3);
      inplace = to_device(a);
      ok = bp_stack_push_tensor(&st, inplace) == BP_OK &&
           bp_stack_push_tensor(&st, to_device(b)) == BP_OK;
      want = ref_cast(b, BP_FLOAT32);
      break;
  }

  char why[600] = "", fail[800] = "";
  bp_tensor_meta meta;
  memset(&meta, 0, sizeof meta);
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  /* The arguments, kept so that the call can be made again: bp_call
   * replaces them with the results, and the stack holds them by value. */
  bp_value saved[8];
  size_t nsaved = st.top;
  memcpy(saved, slots, sizeof saved);
  unsigned char *snap[8] = {NULL}, *first = NULL, *second = NULL;
  size_t snaplen[8] = {0}, firstlen = 0, secondlen = 0;
  bool verdict_given = false;
  if (!ok || nmade == 0) {
    verdict(ST_FAIL, "cannot build the arguments on %s: %s", device_name(the_device.type),
            bp_last_error());
    verdict_given = true;
    goto out;
  }
  if (errors_mode) {
    /* One argument too many (padded with None past the schema's count,
     * which the host checks before any tag), and an int where the first
     * Tensor is due.  Each must fail cleanly, with a message. */
    bp_value eslots[16];
    bp_stack es = BP_STACK_INIT(eslots, 16);
    memcpy(eslots, saved, sizeof saved);
    es.top = nsaved;
    while (es.top < (size_t)sa.n + 1 && bp_stack_push_none(&es) == BP_OK) {
    }
    bp_clear_error();
    if (bp_call(op, &es) == BP_OK) {
      snprintf(fail, sizeof fail, "wrong-count: a call with %zu arguments (schema has %d) succeeded",
               (size_t)sa.n + 1, sa.n);
      bp_stack_release(&es);
      goto out;
    }
    if (!bp_last_error() || !*bp_last_error()) {
      snprintf(fail, sizeof fail, "wrong-count: the call failed without a message");
      goto out;
    }
    memcpy(eslots, saved, sizeof saved);
    es.top = nsaved;
    size_t t;
    for (t = 0; t < nsaved && eslots[t].tag != BP_TAG_TENSOR; t++) {
    }
    if (t < nsaved) {
      eslots[t].tag = BP_TAG_INT;
      eslots[t].len = 0;
      eslots[t].u.i = 1;
      bp_clear_error();
      if (bp_call(op, &es) == BP_OK) {
        snprintf(fail, sizeof fail, "wrong-tag: an int as argument %zu '%s' was accepted", t,
                 t < (size_t)sa.n ? sa.name[t] : "?");
        bp_stack_release(&es);
        goto out;
      }
      if (!bp_last_error() || !*bp_last_error()) {
        snprintf(fail, sizeof fail, "wrong-tag: the call failed without a message");
        goto out;
      }
    }
    goto out;
  }
  if (bp_op_meta(op, &st, &meta, 1) != BP_OK) {
    snprintf(fail, sizeof fail, "the meta function refused the arguments: %s", bp_last_error());
    goto out;
  }
  for (size_t i = 0; i < nsaved && i < 8; i++)
    if (saved[i].tag == BP_TAG_TENSOR && !(i < (size_t)sa.n && sa.mutated[i]))
      snap[i] = tensor_bytes(saved[i].u.tensor, &snaplen[i]);
  if (bp_call(op, &st) != BP_OK) {
    snprintf(fail, sizeof fail, "the call failed: %s", bp_last_error());
    goto out;
  }
  bp_tensor *res = NULL;
  if (st.top < 1 || bp_stack_get_tensor(&st, 0, &res) != BP_OK) {
    snprintf(fail, sizeof fail, "the call returned no tensor");
    bp_stack_release(&st);
    goto out;
  }
  const bp_tensor_view *rv = bp_tensor_get_view(res);
  if (inplace && res != inplace) {
    snprintf(fail, sizeof fail, "returned a new tensor instead of its (a!) argument");
  } else if (rv->dtype != meta.dtype || rv->ndim != meta.ndim ||
             (rv->ndim && (memcmp(rv->sizes, meta.sizes, (size_t)rv->ndim * 8) != 0 ||
                           memcmp(rv->strides, meta.strides, (size_t)rv->ndim * 8) != 0))) {
    snprintf(fail, sizeof fail,
             "result disagrees with bp_op_meta: dtype %s ndim %d, meta says %s ndim %d",
             dt_name(rv->dtype), rv->ndim, dt_name(meta.dtype), meta.ndim);
  } else if (rv->device.type != meta.device.type || rv->device.index != meta.device.index) {
    snprintf(fail, sizeof fail, "result is on device %s:%d, bp_op_meta says %s:%d",
             device_name(rv->device.type), rv->device.index, device_name(meta.device.type),
             meta.device.index);
  } else if (!compare(res, want, rscale, ascale, why, sizeof why)) {
    snprintf(fail, sizeof fail, "numerics: %s", why);
  }
  if (!*fail) {
    for (size_t i = 0; i < nsaved && i < 8 && !*fail; i++) {
      if (!snap[i]) continue;
      size_t len = 0;
      unsigned char *now_bytes = tensor_bytes(saved[i].u.tensor, &len);
      long at = now_bytes && len == snaplen[i] ? first_diff(snap[i], now_bytes, len) : 0;
      if (at >= 0)
        snprintf(fail, sizeof fail, "inputs-unchanged: argument %zu '%s' was modified (byte %ld)",
                 i, i < (size_t)sa.n ? sa.name[i] : "?", at);
      free(now_bytes);
    }
  }
  if (!*fail) first = tensor_bytes(res, &firstlen);
  bp_stack_release(&st);
  if (!*fail && !(oi.flags & BP_OP_NONDETERMINISTIC)) {
    /* The same arguments again; for an (a!) argument that is its state
     * after the first call, which an in-place op of the op set writes the
     * same way twice. */
    bp_value rslots[8];
    bp_stack rs = BP_STACK_INIT(rslots, 8);
    memcpy(rslots, saved, sizeof saved);
    rs.top = nsaved;
    bp_tensor *res2 = NULL;
    if (bp_call(op, &rs) != BP_OK) {
      snprintf(fail, sizeof fail, "repeatability: the second call failed: %s", bp_last_error());
    } else if (rs.top < 1 || bp_stack_get_tensor(&rs, 0, &res2) != BP_OK) {
      snprintf(fail, sizeof fail, "repeatability: the second call returned no tensor");
      bp_stack_release(&rs);
    } else {
      second = tensor_bytes(res2, &secondlen);
      long at = first && second && firstlen == secondlen ? first_diff(first, second, firstlen) : 0;
      if (at >= 0)
        snprintf(fail, sizeof fail,
                 "repeatability: a second identical call gave a different result (byte %ld)", at);
      bp_stack_release(&rs);
    }
  }
out:
  for (int i = 0; i < nmade; i++) bp_tensor_release(made[i]);
  nmade = 0;
  for (int i = 0; i < 8; i++) free(snap[i]);
  free(first);
  free(second);
  rt_free(a);
  rt_free(b);
  rt_free(c);
  rt_free(want);
  if (verdict_given) return;
  if (!*fail) {
    int64_t live = bp_live_tensor_count();
    if (live != live0)
      snprintf(fail, sizeof fail, "hygiene: %lld tensor handle(s) leaked", (long long)(live - live0));
  }
  if (*fail)
    verdict(ST_FAIL, "%s", fail);
  else if (errors_mode)
    verdict(ST_PASS, "a wrong argument count and a wrong tag fail with a message");
  else
    verdict(ST_PASS, "matches the reference and bp_op_meta; inputs unchanged; repeatable; "
                     "no leaked handles");
}

static void case_errors(const char *opname) {
  errors_mode = true;
  case_numerics(opname);
}

/* ------------------------------------------------------------------------ */
/* Cases and the runner                                                     */
/* ------------------------------------------------------------------------ */

typedef struct certify_case {
  char name[160];
  const char *group;
  void (*fn)(const char *arg);
  char arg[128];
  enum status status;
  char detail[1024];
  double seconds;
} certify_case;

static certify_case *cases;
static size_t ncases, capcases;

static void add_case(const char *group, const char *name, void (*fn)(const char *),
                     const char *arg) {
  if (ncases == capcases) {
    capcases = capcases ? 2 * capcases : 64;
    cases = realloc(cases, capcases * sizeof *cases);
    if (!cases) {
      perror("bp-certify");
      exit(2);
    }
  }
  certify_case *c = &cases[ncases++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s/%s", group, name);
  c->group = group;
  c->fn = fn;
  snprintf(c->arg, sizeof c->arg, "%s", arg ? arg : "");
}

/* The case list.  The core ops come from the host, which defines them
 * before any plugin loads, so listing never runs plugin code. */
static void build_cases(void) {
  add_case("handshake", "exports", case_exports, NULL);
  add_case("handshake", "imports", case_imports, NULL);
  add_case("handshake", "loads", case_loads, NULL);
  add_case("handshake", "version", case_version, NULL);
  add_case("registration", "profile", case_profile, NULL);
  add_case("registration", "schemas", case_schemas, NULL);
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(bp_op_at(i), &oi) != BP_OK || !is_core(oi.name)) continue;
    if (opt.ops && fnmatch(opt.ops, oi.name, 0) != 0 && fnmatch(opt.ops, oi.name + 6, 0) != 0)
      continue;
    add_case("numerics", "", case_numerics, oi.name);
    snprintf(cases[ncases - 1].name, sizeof cases[ncases - 1].name, "%s/float32/basic",
             oi.name);
    add_case("errors", "", case_errors, oi.name);
    snprintf(cases[ncases - 1].name, sizeof cases[ncases - 1].name, "%s/errors", oi.name);
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs one case in a child under the watchdog and fills its verdict. */
static void run_case(certify_case *c) {
  int fds[2];
  double t0 = now();
  if (pipe(fds) != 0) {
    c->status = ST_FAIL;
    snprintf(c->detail, sizeof c->detail, "pipe: %s", strerror(errno));
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    c->status = ST_FAIL;
    snprintf(c->detail, sizeof c->detail, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    verdict_fd = fds[1];
    /* Whatever the plugin prints must not break the TAP stream. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    c->fn(c->arg);
    close(verdict_fd);
    /* _exit: the plugin's atexit handlers are its own business, not the
     * verdict's; a hang in them would be a false TIMEOUT. */
    _exit(0);
  }
  close(fds[1]);
  char buf[2048];
  size_t n = 0;
  bool timed_out = false;
  for (;;) {
    double left = opt.timeout - (now() - t0);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue; /* re-checks the deadline */
    ssize_t got = read(fds[0], buf + n, sizeof buf - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* EOF: the child finished or died */
    n += (size_t)got;
    if (n == sizeof buf - 1) break;
  }
  close(fds[0]);
  buf[n] = '\0';
  int wst = 0;
  if (timed_out) {
    kill(pid, SIGKILL);
    waitpid(pid, &wst, 0);
    c->status = ST_TIMEOUT;
    snprintf(c->detail, sizeof c->detail, "TIMEOUT after %g s", opt.timeout);
  } else {
    /* The pipe closes before exit; give the child the rest of the budget
     * to finish, then kill it. */
    pid_t w;
    while ((w = waitpid(pid, &wst, WNOHANG)) == 0 && now() - t0 < opt.timeout) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    if (w == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &wst, 0);
      c->status = ST_TIMEOUT;
      snprintf(c->detail, sizeof c->detail, "TIMEOUT after %g s (while exiting)", opt.timeout);
    } else if (WIFSIGNALED(wst)) {
      c->status = ST_CRASH;
      snprintf(c->detail, sizeof c->detail, "CRASH signal %d", WTERMSIG(wst));
    } else {
      char *nl = strchr(buf, '\n');
      c->status = ST_FAIL;
      if (!nl) {
        snprintf(c->detail, sizeof c->detail, "the case exited (status %d) without a verdict",
                 WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
      } else {
        *nl = '\0';
        char *detail = nl + 1;
        char *end = strchr(detail, '\n');
        if (end) *end = '\0';
        for (int s = 0; s < 3; s++)
          if (strcmp(buf, status_name[s]) == 0) c->status = (enum status)s;
        snprintf(c->detail, sizeof c->detail, "%s", detail);
      }
    }
  }
  c->seconds = now() - t0;
}

/* ------------------------------------------------------------------------ */
/* The certificate                                                          */
/* ------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p == '\t')
      fputs("\\t", f);
    else if (*p < 0x20 || *p == 0x7f)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

/* What a child learned about the plugin, for the certificate. */
static struct {
  bool loaded;
  char name[128], vendor[128], version[64], device[64];
  unsigned abi_major, abi_minor, op_set;
} probe;

static void probe_child(const char *arg) {
  (void)arg;
  if (bp_plugin_load(opt.plugin, &the_plugin) != BP_OK) return;
  the_info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(the_plugin, &the_info) != BP_OK || !the_info.name) return;
  char buf[1024];
  pick_device();
  int n = snprintf(buf, sizeof buf, "%s\n%s\n%s\n%u\n%u\n%u\n%s:%d\n", the_info.name,
                   the_info.vendor ? the_info.vendor : "", the_info.version ? the_info.version : "",
                   the_info.abi_major, the_info.abi_minor, the_info.op_set_version,
                   device_name(the_device.type), the_device.index);
  if (n > 0 && write(verdict_fd, buf, (size_t)n) < 0) _exit(1);
}

/* Runs probe_child under the watchdog; its output replaces the verdict. */
static void run_probe(void) {
  /* The probe sends seven lines rather than a verdict, so it has its own
   * small runner; alarm() is its watchdog. */
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
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
    probe_child(NULL);
    _exit(0);
  }
  close(fds[1]);
  char buf[1024];
  size_t n = 0;
  ssize_t got;
  while (n < sizeof buf - 1 && ((got = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0 ||
                                (got < 0 && errno == EINTR)))
    if (got > 0) n += (size_t)got;
  close(fds[0]);
  buf[n] = '\0';
  int wst;
  waitpid(pid, &wst, 0);
  char *line[7];
  char *p = buf;
  for (int i = 0; i < 7; i++) {
    char *nl = strchr(p, '\n');
    if (!nl) return;
    *nl = '\0';
    line[i] = p;
    p = nl + 1;
  }
  probe.loaded = true;
  snprintf(probe.name, sizeof probe.name, "%s", line[0]);
  snprintf(probe.vendor, sizeof probe.vendor, "%s", line[1]);
  snprintf(probe.version, sizeof probe.version, "%s", line[2]);
  probe.abi_major = (unsigned)strtoul(line[3], NULL, 10);
  probe.abi_minor = (unsigned)strtoul(line[4], NULL, 10);
  probe.op_set = (unsigned)strtoul(line[5], NULL, 10);
  snprintf(probe.device, sizeof probe.device, "%s", line[6]);
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

static bool write_json(const char *path, size_t passed, size_t failed, size_t skipped) {
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
  fputs(", \"backplane\": ", f);
  json_str(f, bp_version());
  fputs("},\n  \"profile\": ", f);
  json_str(f, opt.profile);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"results\": [", (unsigned long long)opt.seed);
  for (size_t i = 0; i < ncases; i++) {
    fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    json_str(f, cases[i].name);
    fputs(", \"group\": ", f);
    json_str(f, cases[i].group);
    fputs(", \"status\": ", f);
    json_str(f, status_name[cases[i].status]);
    fputs(", \"detail\": ", f);
    json_str(f, cases[i].detail);
    fprintf(f, ", \"seconds\": %.3f}", cases[i].seconds);
  }
  fprintf(f,
          "\n  ],\n  \"summary\": {\"passed\": %zu, \"failed\": %zu, \"skipped\": %zu},\n"
          "  \"conforms\": %s\n}\n",
          passed, failed, skipped, failed == 0 ? "true" : "false");
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "bp-certify: error writing %s\n", path);
  return ok;
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  build_cases();
  if (opt.list) {
    for (size_t i = 0; i < ncases; i++) printf("%s\n", cases[i].name);
    return 0;
  }
  printf("1..%zu\n", ncases);
  printf("# bp-certify %s, plugin %s, profile %s, seed %llu\n", CERTIFY_VERSION, opt.plugin,
         opt.profile, (unsigned long long)opt.seed);
  if (strcmp(opt.profile, "full") == 0)
    printf("# note: profile 'full' runs the same checks as 'core' in this version\n");
  if (opt.jobs > 1) printf("# note: cases run one at a time in this version (--jobs ignored)\n");
  size_t passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < ncases; i++) {
    certify_case *c = &cases[i];
    run_case(c);
    switch (c->status) {
      case ST_PASS:
        passed++;
        printf("ok %zu - %s\n", i + 1, c->name);
        break;
      case ST_SKIP:
        skipped++;
        printf("ok %zu - %s # SKIP %s\n", i + 1, c->name, c->detail);
        break;
      default:
        failed++;
        printf("not ok %zu - %s # %s\n", i + 1, c->name, c->detail);
        break;
    }
    fflush(stdout);
  }
  printf("# %zu passed, %zu failed, %zu skipped: %s\n", passed, failed, skipped,
         failed ? "does NOT conform" : "conforms");
  if (opt.json) {
    run_probe();
    if (!write_json(opt.json, passed, failed, skipped)) return 1;
  }
  return failed ? 1 : 0;
}
