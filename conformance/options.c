/*
 * conformance/options.c - bp-certify's command line: usage, and the
 * options it sets in cx->opt.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cert.h"
#include "hints.h"

const char *const cert_isolation_name[] = {"worker", "case"};

static void usage(FILE *to) {
  fprintf(to,
          "usage: bp-certify PLUGIN.so [--device TYPE[:INDEX]] [--profile core|full|host]\n"
          "                  [--threads-env NAME] [--ops GLOB] [--json FILE] [--html FILE]\n"
          "                  [--jobs N] [--timeout S] [--seed N] [--isolation worker|case]\n"
          "                  [--reference REF.so] [--hints FILE] [--list]\n");
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

void cert_parse_args(cert_ctx *cx, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (strcmp(a, "--list") == 0) {
      cx->opt.list = true;
      continue;
    }
    if (a[0] != '-') {
      if (cx->opt.plugin)
        bad_usage("more than one plugin given ('%s' and '%s')", cx->opt.plugin, a);
      cx->opt.plugin = a;
      continue;
    }
    static const char *const with_value[] = {"--device",      "--profile", "--ops",
                                             "--threads-env", "--json",    "--html",
                                             "--jobs",        "--timeout", "--seed",
                                             "--isolation",   "--reference", "--hints"};
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
      cx->opt.device = val;
    } else if (strcmp(name, "--profile") == 0) {
      if (strcmp(val, "core") != 0 && strcmp(val, "full") != 0 && strcmp(val, "host") != 0)
        bad_usage("--profile: expected 'core', 'full' or 'host', got '%s'", val);
      cx->opt.profile = val;
      cx->opt.full = strcmp(val, "full") == 0;
      cx->opt.host = strcmp(val, "host") == 0;
    } else if (strcmp(name, "--ops") == 0) {
      cx->opt.ops = val;
    } else if (strcmp(name, "--threads-env") == 0) {
      bool ok = (val[0] >= 'A' && val[0] <= 'Z') || (val[0] >= 'a' && val[0] <= 'z') || val[0] == '_';
      for (const char *q = val; ok && *q; q++)
        ok = (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
             *q == '_';
      if (!ok) bad_usage("--threads-env: expected an environment variable's name, got '%s'", val);
      cx->opt.threads_env = val;
    } else if (strcmp(name, "--json") == 0) {
      if (!*val) bad_usage("--json: empty file name");
      cx->opt.json = val;
    } else if (strcmp(name, "--html") == 0) {
      if (!*val) bad_usage("--html: empty file name");
      cx->opt.html = val;
    } else if (strcmp(name, "--jobs") == 0) {
      if (!parse_long(val, 1, 1024, &cx->opt.jobs))
        bad_usage("--jobs: expected an integer 1 .. 1024, got '%s'", val);
    } else if (strcmp(name, "--timeout") == 0) {
      char *end;
      errno = 0;
      double t = strtod(val, &end);
      if (errno || end == val || *end || !(t > 0) || t > 86400)
        bad_usage("--timeout: expected seconds > 0, got '%s'", val);
      cx->opt.timeout = t;
    } else if (strcmp(name, "--reference") == 0) {
      if (!*val) bad_usage("--reference: empty file name");
      cx->opt.reference = val;
    } else if (strcmp(name, "--hints") == 0) {
      char why[300];
      if (!*val) bad_usage("--hints: empty file name");
      if (cx->opt.hints) bad_usage("--hints given twice");
      if (!cert_hints_load(val, why, sizeof why)) bad_usage("--hints %s: %s", val, why);
      cx->opt.hints = val;
    } else if (strcmp(name, "--isolation") == 0) {
      if (strcmp(val, "worker") == 0)
        cx->opt.isolation = ISO_WORKER;
      else if (strcmp(val, "case") == 0)
        cx->opt.isolation = ISO_CASE;
      else bad_usage("--isolation: expected 'worker' or 'case', got '%s'", val);
    } else {
      char *end;
      errno = 0;
      /* Decimal digits only: strtoull itself would skip blanks, wrap a
       * negative number and read a leading 0 as octal. */
      unsigned long long s = strtoull(val, &end, 10);
      if (errno || end == val || *end || !(val[0] >= '0' && val[0] <= '9'))
        bad_usage("--seed: expected a non-negative integer, got '%s'", val);
      cx->opt.seed = s;
    }
  }
  if (!cx->opt.plugin) bad_usage("no plugin given");
}
