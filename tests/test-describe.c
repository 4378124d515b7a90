/*
 * tests/test-describe.c - bp_describe(), the host described as text and
 * as JSON (what bp-info prints), and the words of listings:
 * bp_plugin_origin_str(), bp_plugin_state_str(), bp_kernel_kind_str().
 * Loads the test plugins good.so and escapes.so (whose every string
 * carries terminal escapes and forged lines).
 */
#define _XOPEN_SOURCE 700 /* realpath, mkdtemp */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loaderutil.h"

/* The output of one bp_describe(), and how it arrived. */
typedef struct sink {
  char *text;
  size_t len, cap;
  int calls;
  size_t largest; /* the largest piece */
  int stop_at;    /* return `stop_with` on this call (1-based), 0: never */
  int stop_with;
} sink;

static int collect(void *user, const char *text, size_t n) {
  sink *s = user;
  s->calls++;
  if (n > s->largest) s->largest = n;
  if (s->stop_at && s->calls == s->stop_at) return s->stop_with;
  if (s->len + n + 1 > s->cap) {
    size_t cap = 2 * (s->len + n + 1);
    char *grown = realloc(s->text, cap);
    if (!grown) return BP_ERR_OUT_OF_MEMORY;
    s->text = grown;
    s->cap = cap;
  }
  memcpy(s->text + s->len, text, n);
  s->len += n;
  s->text[s->len] = '\0';
  return 0;
}

static char *describe(int32_t format, const bp_describe_file *files, size_t nfiles) {
  sink s = {0};
  bp_describe_options o = {BP_DESCRIBE_OPTIONS_STRUCT_SIZE, format, 0, files, nfiles};
  bp_status st = bp_describe(&o, collect, &s);
  is_status(st, BP_OK);
  if (st != BP_OK) tap_diag("bp_describe: %s", bp_last_error());
  cmp_ok(s.largest, "<=", 4096);
  if (!s.text) s.text = calloc(1, 1);
  return s.text;
}

/* Whether any byte of s is a control character other than newline. */
static int has_raw_control(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if ((*p < 0x20 && *p != '\n') || *p == 0x7f) return 1;
  return 0;
}

/* Whether s is shaped as one JSON object: brackets balance outside
 * strings, strings end, and nothing but a newline follows the object. */
static int json_shaped(const char *s) {
  int depth = 0, in_str = 0;
  const char *p = s;
  if (*p != '{') return 0;
  for (; *p; p++) {
    if (in_str) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == '"') in_str = 0;
      else if ((unsigned char)*p < 0x20) return 0;
      continue;
    }
    if (*p == '"') in_str = 1;
    else if (*p == '{' || *p == '[') depth++;
    else if (*p == '}' || *p == ']') {
      if (--depth < 0) return 0;
      if (depth == 0) return strcmp(p + 1, "\n") == 0;
    }
  }
  return 0;
}

static void names(void) {
  is_str(bp_plugin_origin_str(BP_ORIGIN_EXPLICIT), "explicit");
  is_str(bp_plugin_origin_str(BP_ORIGIN_ENV), "BP_PLUGIN_PATH");
  is_str(bp_plugin_origin_str(BP_ORIGIN_INSTALLED), "installed");
  is_str(bp_plugin_origin_str(BP_ORIGIN_STATIC), "static");
  is_str(bp_plugin_state_str(BP_PLUGIN_LOADED), "loaded");
  is_str(bp_plugin_state_str(BP_PLUGIN_FAILED), "failed");
  is_str(bp_plugin_state_str(BP_PLUGIN_UNLOADED), "unloaded");
  is_str(bp_kernel_kind_str(BP_KERNEL_BOXED), "boxed");
  is_str(bp_kernel_kind_str(BP_KERNEL_UNBOXED), "unboxed (libffi)");
  is_str(bp_kernel_kind_str(BP_KERNEL_UNBOXED_FAST), "unboxed (fast path)");
  is_str(bp_kernel_kind_str(BP_KERNEL_STRUCTURED), "structured");
  const int32_t bad[] = {0, -1, 5, 99, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    is_str(bp_plugin_origin_str(bad[i]), "?");
    is_str(bp_plugin_state_str(bad[i]), "?");
    is_str(bp_kernel_kind_str(bad[i]), "?");
  }
}

static void bad_arguments(void) {
  sink s = {0};
  is_status(bp_describe(NULL, NULL, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "write is NULL");
  bp_describe_options o = {BP_DESCRIBE_OPTIONS_STRUCT_SIZE, 7, 0, NULL, 0};
  is_status(bp_describe(&o, collect, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "format 7");
  o = (bp_describe_options){4, BP_DESCRIBE_TEXT, 0, NULL, 0};
  is_status(bp_describe(&o, collect, &s), BP_ERR_VERSION);
  has_str(bp_last_error(), "struct_size is 4");
  bp_describe_file f = {BP_DESCRIBE_FILE_STRUCT_SIZE, NULL, NULL, BP_ORIGIN_ENV, 0, "hung"};
  o = (bp_describe_options){BP_DESCRIBE_OPTIONS_STRUCT_SIZE, BP_DESCRIBE_TEXT, 0, &f, 1};
  is_status(bp_describe(&o, collect, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "files[0] has no path");
  f = (bp_describe_file){8, "/x.so", NULL, BP_ORIGIN_ENV, 0, "hung"};
  is_status(bp_describe(&o, collect, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "files[0] has a struct_size less than");
  /* Nothing was written by the refused calls. */
  is_int(s.calls, 0);
  /* A shorter options struct from an older caller: format only. */
  o = (bp_describe_options){BP_STRUCT_SIZE(bp_describe_options, format), BP_DESCRIBE_JSON, 0,
                            &f, 1};
  is_status(bp_describe(&o, collect, &s), BP_OK);
  ok(s.text && s.text[0] == '{');
  free(s.text);
}

/* The text: every section, the plugins' records, escapes, and the
 * operator count the host reports. */
static void text(void) {
  bp_plugin *good = must_load("good");
  bp_plugin *nasty = must_load("escapes");
  if (!good || !nasty) return;
  (void)bp_plugin_load("/nonexistent/missing.so", NULL);
  char *t = describe(BP_DESCRIBE_TEXT, NULL, 0);
  char want[256];
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  snprintf(want, sizeof want, "Backplane %s (ABI %u.%u)\n\nPlugin search path:\n", bp_version(),
           major, minor);
  ok(strncmp(t, want, strlen(want)) == 0);
  snprintf(want, sizeof want, "\nPlugins: %zu\n", bp_plugin_count());
  has_str(t, want);
  snprintf(want, sizeof want, "\n  %s\n      found by    explicit\n      state       loaded\n",
           canon(test_plugin("good")));
  has_str(t, want);
  has_str(t, "  /nonexistent/missing.so\n      found by    explicit\n      state       failed\n"
             "      error       BP_ERR_LOAD: plugin '/nonexistent/missing.so': ");
  has_str(t, "\nDevices:\n  cpu:0  (code 1)  ");
  snprintf(want, sizeof want, "\nOperators: %zu\n", bp_op_count());
  has_str(t, want);
  has_str(t, "      kernel cpu        boxed                from good (priority ");
  /* escapes.so's strings arrive escaped, each on its line. */
  ok(!has_raw_control(t));
  has_str(t, "\\x1b[31mred\\x1b[0m \\x1b[2J\\x1b]0;pwned\\x07\\nok 999 - forged\\n1..999\\r"
             "\\u009b1m");
  ok(strstr(t, "\nok 999") == NULL);
  size_t n = strlen(t);
  ok(n > 0 && t[n - 1] == '\n');
  /* The same host, described again, reads the same; a description that
   * succeeds leaves the caller's last error as it was (the device codes
   * it probes and finds unregistered are no error of its own). */
  bp_clear_error();
  char *again = describe(BP_DESCRIBE_TEXT, NULL, 0);
  is_str(again, t);
  is_status(bp_last_status(), BP_OK);
  is_str(bp_last_error(), "");
  free(again);
  free(t);
}

static void json(void) {
  if (!must_load("good") || !must_load("escapes")) return;
  char *j = describe(BP_DESCRIBE_JSON, NULL, 0);
  ok(json_shaped(j));
  ok(!has_raw_control(j));
  char want[256];
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  snprintf(want, sizeof want, "{\n  \"version\": \"%s\",\n  \"abi\": \"%u.%u\",\n", bp_version(),
           major, minor);
  ok(strncmp(j, want, strlen(want)) == 0);
  snprintf(want, sizeof want, "{\"path\": \"%s\", \"origin\": \"explicit\", \"state\": \"loaded\"",
           canon(test_plugin("good")));
  has_str(j, want);
  has_str(j, "\"crashed\": false}");
  has_str(j, "\"kernels\": [{\"device\": \"cpu\", \"kind\": \"boxed\", \"plugin\": \"good\"");
  /* Control characters, newlines included, as \u escapes; escapes.so's
   * U+009B (C2 9B) is well-formed UTF-8, which JSON takes as it is. */
  has_str(j, "\\u001b[31mred\\u001b[0m \\u001b[2J\\u001b]0;pwned\\u0007\\u000aok 999 - "
             "forged\\u000a1..999\\u000d\xc2\x9b" "1m");
  /* One "name" per op. */
  size_t names = 0;
  for (const char *p = j; (p = strstr(p, "\n    {\"name\": ")); p++) names++;
  is_int(names, bp_op_count());
  free(j);
}

/* Files the caller tried in a child: one loaded, shown with the caller's
 * origin; one that crashed, listed after the host's plugins. */
static void files(void) {
  if (!must_load("good")) return;
  char good[PATH_MAX];
  snprintf(good, sizeof good, "%s", canon(test_plugin("good")));
  bp_describe_file f[2] = {
      {BP_DESCRIBE_FILE_STRUCT_SIZE, test_plugin("good"), good, BP_ORIGIN_ENV, 0, NULL},
      {BP_DESCRIBE_FILE_STRUCT_SIZE, "/plugins/crashy.so", NULL, BP_ORIGIN_INSTALLED, 0,
       "crashed in init (SIGSEGV)"},
  };
  char *t = describe(BP_DESCRIBE_TEXT, f, 2);
  char want[PATH_MAX + 128];
  snprintf(want, sizeof want, "\n  %s\n      found by    BP_PLUGIN_PATH\n", good);
  has_str(t, want);
  snprintf(want, sizeof want, "\nPlugins: %zu\n", bp_plugin_count() + 1);
  has_str(t, want);
  has_str(t, "  /plugins/crashy.so\n      found by    installed\n      state       failed\n"
             "      error       crashed in init (SIGSEGV) while loading in a child process; "
             "not loaded\n\nDevices:\n");
  free(t);
  char *j = describe(BP_DESCRIBE_JSON, f, 2);
  ok(json_shaped(j));
  has_str(j, "{\"path\": \"/plugins/crashy.so\", \"origin\": \"installed\", \"state\": "
             "\"failed\", \"name\": null, \"vendor\": null, \"version\": null, \"abi\": \"0.0\", "
             "\"op_set_version\": 0, \"status\": \"BP_ERR_LOAD\", \"error\": \"crashed in init "
             "(SIGSEGV)\", \"crashed\": true}\n  ],");
  free(j);
}

/* The writer stops the description: nothing more is written, and its
 * status comes back. */
static void writer_stops(void) {
  sink s = {.stop_at = 2, .stop_with = BP_ERR_OUT_OF_MEMORY};
  is_status(bp_describe(NULL, collect, &s), BP_ERR_OUT_OF_MEMORY);
  is_int(s.calls, 2);
  has_str(bp_last_error(), "the writer stopped the description (it returned 8)");
  free(s.text);
  sink odd = {.stop_at = 1, .stop_with = 12345};
  is_status(bp_describe(NULL, collect, &odd), BP_ERR_INTERNAL);
  is_int(odd.calls, 1);
  free(odd.text);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(names), TAP_CASE(bad_arguments), TAP_CASE(text),
      TAP_CASE(json),  TAP_CASE(files),         TAP_CASE(writer_stops),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
