/*
 * conformance/report.c - the JSON certificate (--json) and the HTML
 * report (--html) of a run, and the command line that reruns one case.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <backplane/host.h>

#include "cert.h"
#include "elfsha.h"
#include "num.h"
#include "termsafe.h"

/* ------------------------------------------------------------------------ */
/* The certificate and the report                                           */
/* ------------------------------------------------------------------------ */

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
static void repro(cert_ctx *cx, const certify_case *c, char *out, size_t len) {
  char plugin[400], dev[200], name[200], ref[400], hints[400];
  snprintf(out, len, "bp-certify %s%s%s%s%s%s%s --profile %s --ops %s --seed %llu --isolation case",
           shell_quote(cx->opt.plugin, plugin, sizeof plugin), cx->opt.device ? " --device " : "",
           cx->opt.device ? shell_quote(cx->opt.device, dev, sizeof dev) : "",
           cx->opt.reference ? " --reference " : "",
           cx->opt.reference ? shell_quote(cx->opt.reference, ref, sizeof ref) : "",
           cx->opt.hints ? " --hints " : "",
           cx->opt.hints ? shell_quote(cx->opt.hints, hints, sizeof hints) : "", cx->opt.profile,
           shell_quote(c->name, name, sizeof name), (unsigned long long)cx->opt.seed);
}

/* ", \"KEY\": {\"path\", \"sha256\"}" of an input file, or null. */
static void json_file(FILE *f, const char *key, const char *path) {
  fprintf(f, ",\n  \"%s\": ", key);
  if (!path) {
    fputs("null", f);
    return;
  }
  char sha[65] = "";
  bool have = cert_sha256_file(path, sha);
  fputs("{\"path\": ", f);
  json_str(f, path);
  fputs(", \"sha256\": ", f);
  json_str(f, have ? sha : NULL);
  fputs("}", f);
}

/* The symbol versions the plugin needs of each library, read from its
 * file (.gnu.version_r): ", \"requires\": [{\"file\", \"newest\",
 * \"versions\"}, ...]", or null when the file cannot be read. */
static void json_requires(cert_ctx *cx, FILE *f) {
  static elf_binary b;
  char err[256];
  fputs(", \"requires\": ", f);
  if (!cert_elf_read_binary(cx->opt.plugin, &b, err, sizeof err)) {
    fputs("null", f);
    return;
  }
  fputs("[", f);
  for (size_t i = 0; i < b.nneeds; i++) {
    const elf_needs *lib = &b.needs[i];
    fputs(i ? ", {\"file\": " : "{\"file\": ", f);
    json_str(f, lib->file);
    fputs(", \"newest\": ", f);
    json_str(f, lib->nversions ? lib->versions[lib->newest] : NULL);
    fputs(", \"versions\": [", f);
    for (size_t v = 0; v < lib->nversions; v++) {
      if (v) fputs(", ", f);
      json_str(f, lib->versions[v]);
    }
    fputs("]}", f);
  }
  fputs("]", f);
}

void cert_tap_requires(cert_ctx *cx) {
  static elf_binary b;
  char err[256], text[1200];
  if (!cert_elf_read_binary(cx->opt.plugin, &b, err, sizeof err)) return;
  if (cert_elf_needs_text(&b, text, sizeof text) == 0) return;
  printf("# the plugin needs the symbol versions %s\n", termsafe(text));
}

bool cert_write_json(cert_ctx *cx, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bp-certify: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  char sha[65] = "";
  bool have_sha = cert_sha256_file(cx->opt.plugin, sha);
  struct utsname u;
  char os[400] = "unknown", cpu[256];
  if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
  cpu_model(cpu, sizeof cpu);

  fputs("{\n  \"certifier\": {\"name\": \"bp-certify\", \"version\": ", f);
  json_str(f, CERTIFY_VERSION);
  fputs("},\n  \"plugin\": {\"path\": ", f);
  json_str(f, cx->opt.plugin);
  fputs(", \"sha256\": ", f);
  json_str(f, have_sha ? sha : NULL);
  fputs(", \"name\": ", f);
  json_str(f, cx->probe.loaded ? cx->probe.name : NULL);
  fputs(", \"vendor\": ", f);
  json_str(f, cx->probe.loaded ? cx->probe.vendor : NULL);
  fputs(", \"version\": ", f);
  json_str(f, cx->probe.loaded ? cx->probe.version : NULL);
  fputs(", \"abi\": ", f);
  if (cx->probe.loaded) {
    char abi[32];
    snprintf(abi, sizeof abi, "%u.%u", cx->probe.abi_major, cx->probe.abi_minor);
    json_str(f, abi);
    fprintf(f, ", \"op_set_version\": %u", cx->probe.op_set);
  } else {
    fputs("null, \"op_set_version\": null", f);
  }
  json_requires(cx, f);
  fputs("}", f);
  /* --reference: the plugin whose kernels the op's own were compared with
   * (OP/reference); --hints: the values its samples took */
  json_file(f, "reference", cx->opt.reference);
  json_file(f, "hints", cx->opt.hints);
  fputs(",\n  \"host\": {\"os\": ", f);
  json_str(f, os);
  fputs(", \"cpu\": ", f);
  json_str(f, cpu);
  fputs(", \"device\": ", f);
  json_str(f, cx->opt.device ? cx->opt.device : cx->probe.loaded ? cx->probe.device : NULL);
  fputs(", \"device_name\": ", f);
  json_str(f, cx->probe.loaded && cx->probe.device_name[0] ? cx->probe.device_name : NULL);
  fputs(", \"backplane\": ", f);
  json_str(f, bp_version());
  fputs("},\n  \"profile\": ", f);
  json_str(f, cx->opt.profile);
  /* Every option that narrows the run, so that a partial run never reads
   * as a full one. */
  fputs(",\n  \"selection\": {\"profile\": ", f);
  json_str(f, cx->opt.profile);
  fputs(", \"ops\": ", f);
  json_str(f, cx->opt.ops);
  fputs(", \"device\": ", f);
  json_str(f, cx->opt.device);
  fprintf(f, ", \"seed\": %llu, \"complete\": %s}", (unsigned long long)cx->opt.seed,
          cx->opt.full && !cx->opt.ops ? "true" : "false");
  fprintf(f,
          ",\n  \"seed\": %llu,\n  \"isolation\": {\"mode\": \"%s\", \"workers\": %zu, "
          "\"reruns\": %zu, \"changed\": %zu, \"depends\": %zu, \"fallback\": ",
          (unsigned long long)cx->opt.seed, cert_isolation_name[cx->opt.isolation],
          cx->run.nworkers, cx->run.nreruns, cx->run.nchanged, cx->run.ndepends);
  json_str(f, cx->run.fallback_why[0] ? cx->run.fallback_why : NULL);
  fputs("},\n  \"checks\": {", f);
  /* One entry per check group, in the order of the check table. */
  for (size_t k = 0, g = 0; k < cert_ncheck_table; k++) {
    if (!cert_check_group_first(k)) continue;
    const char *group = cert_check_table[k].group;
    size_t cnt[5] = {0};
    double secs = 0;
    for (size_t i = 0; i < cx->cases.n; i++)
      if (strcmp(cx->cases.v[i].group, group) == 0)
        cnt[cx->cases.v[i].status]++, secs += cx->cases.v[i].seconds;
    size_t bad = cnt[ST_FAIL] + cnt[ST_CRASH] + cnt[ST_TIMEOUT];
    fprintf(f, "%s\n    ", g++ ? "," : "");
    json_str(f, group);
    fprintf(f,
            ": {\"status\": \"%s\", \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, "
            "\"seconds\": %.3f}",
            bad ? "fail" : cnt[ST_PASS] ? "pass" : "skip", cnt[ST_PASS], bad, cnt[ST_SKIP], secs);
  }
  fputs("\n  },\n  \"results\": [", f);
  for (size_t i = 0; i < cx->cases.n; i++) {
    fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    json_str(f, cx->cases.v[i].name);
    fputs(", \"group\": ", f);
    json_str(f, cx->cases.v[i].group);
    fputs(", \"op\": ", f);
    json_str(f, cx->cases.v[i].op[0] ? cx->cases.v[i].op : NULL);
    fputs(", \"status\": ", f);
    json_str(f, cert_status_name[cx->cases.v[i].status]);
    fputs(", \"detail\": ", f);
    json_str(f, cx->cases.v[i].detail);
    fprintf(f, ", \"seconds\": %.3f", cx->cases.v[i].seconds);
    if (cx->cases.v[i].rerun) {
      fputs(", \"worker\": {\"status\": ", f);
      json_str(f, cert_status_name[cx->cases.v[i].worker_status]);
      fputs(", \"detail\": ", f);
      json_str(f, cx->cases.v[i].worker_detail);
      fputc('}', f);
      if (cx->cases.v[i].excused)
        fputs(", \"excused\": \"the certifier's own error in the shared worker\"", f);
      else if (cert_failed_status(cx->cases.v[i].status) &&
               !cert_failed_status(cx->cases.v[i].alone_status) &&
               strncmp(cx->cases.v[i].detail, "depends on earlier calls", 24) == 0)
        fprintf(f, ", \"depends_on_earlier_calls\": true, \"alone\": {\"status\": \"%s\"}",
                cert_status_name[cx->cases.v[i].alone_status]);
    }
    fputc('}', f);
  }
  fprintf(f,
          "\n  ],\n  \"summary\": {\"passed\": %zu, \"failed\": %zu, \"skipped\": %zu},\n"
          "  \"complete\": %s,\n  \"conforms\": %s\n}\n",
          cx->run.npassed, cx->run.nfailed, cx->run.nskipped,
          cx->opt.full && !cx->opt.ops ? "true" : "false", cx->run.nfailed == 0 ? "true" : "false");
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
static void html_cell(cert_ctx *cx, FILE *f, const char *op, const char *group,
                      const char *dtname) {
  size_t n = 0, first_bad = (size_t)-1, first_skip = (size_t)-1;
  bool pass = false, bad = false;
  char prefix[160];
  snprintf(prefix, sizeof prefix, "%s/%s/", op, dtname ? dtname : "");
  for (size_t i = 0; i < cx->cases.n; i++) {
    const certify_case *c = &cx->cases.v[i];
    if (strcmp(c->op, op) != 0 || strcmp(c->group, group) != 0) continue;
    if (dtname && strncmp(c->name, prefix, strlen(prefix)) != 0) continue;
    n++;
    if (c->status == ST_PASS) pass = true;
    if (c->status == ST_SKIP && first_skip == (size_t)-1) first_skip = i;
    if (cert_failed_status(c->status)) {
      if (!bad) first_bad = i;
      bad = true;
    }
  }
  if (!n) {
    fputs("<td class=na></td>", f);
  } else if (bad) {
    fprintf(f, "<td class=fail><a href=\"#case%zu\">%s</a></td>", first_bad + 1,
            cert_status_name[cx->cases.v[first_bad].status]);
  } else if (pass) {
    fputs("<td class=pass>pass</td>", f);
  } else {
    /* Every case skipped: say why (the first one's reason), so that a
     * dtype the kernel does not declare is not a blank. */
    fputs("<td class=skip>skip<br><small>", f);
    html_str(f, cx->cases.v[first_skip].detail);
    fputs("</small></td>", f);
  }
}

/* The dtypes that the cases of the numerics group `group` ran in. */
static void dtypes_used(cert_ctx *cx, const char *group, bool used[NUM_DTYPES]) {
  for (int d = 0; d < NUM_DTYPES; d++) used[d] = false;
  for (size_t i = 0; i < cx->cases.n; i++)
    if (strcmp(cx->cases.v[i].group, group) == 0)
      for (int d = 0; d < NUM_DTYPES; d++) used[d] |= cx->cases.v[i].dt == all_dtypes[d];
}

/* Whether entry k of the check table has a column of the matrix: the
 * first CHECK_OP or CHECK_OP_VENDOR entry of its group. */
static bool per_op(size_t k) {
  return cert_check_table[k].scope == CHECK_OP || cert_check_table[k].scope == CHECK_OP_VENDOR;
}
static bool op_column(size_t k) {
  if (!per_op(k)) return false;
  for (size_t j = 0; j < k; j++)
    if (per_op(j) && strcmp(cert_check_table[j].group, cert_check_table[k].group) == 0)
      return false;
  return true;
}

bool cert_write_html(cert_ctx *cx, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bp-certify: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bp-certify: ", f);
  html_str(f, cx->probe.loaded ? cx->probe.name : cx->opt.plugin);
  fputs("</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #999;padding:2px 5px;font-size:12px}"
        ".pass{background:#9d9}.fail{background:#e77}.skip{background:#ddd}.na{background:#fff}"
        "code{white-space:pre-wrap}</style></head><body>\n<h1>bp-certify ",
        f);
  fputs(CERTIFY_VERSION, f);
  fputs(": ", f);
  html_str(f, cx->opt.plugin);
  fprintf(f, "</h1>\n<p>Profile %s, seed %llu, isolation %s, device ", cx->opt.profile,
          (unsigned long long)cx->opt.seed, cert_isolation_name[cx->opt.isolation]);
  html_str(f, cx->probe.loaded ? cx->probe.device : "?");
  fprintf(f, ". %zu passed, %zu failed, %zu skipped: <b>%s</b>.</p>\n", cx->run.npassed,
          cx->run.nfailed, cx->run.nskipped, cx->run.nfailed ? "does NOT conform" : "conforms");
  if (!cx->opt.full || cx->opt.ops) {
    fputs("<p><b>A partial run:</b> ", f);
    if (!cx->opt.full)
      fputs(cx->opt.host ? "the host profile (the hostile-host checks alone), not full"
                         : "the core profile, not full",
            f);
    if (!cx->opt.full && cx->opt.ops) fputs("; ", f);
    if (cx->opt.ops) {
      fputs("only the ops that --ops '", f);
      html_str(f, cx->opt.ops);
      fputs("' selects", f);
    }
    fputs(".</p>\n", f);
  }
  /* Plugin-wide checks. */
  fputs("<h2>Plugin</h2>\n<table><tr><th>check</th><th>result</th><th>detail</th></tr>\n", f);
  for (size_t i = 0; i < cx->cases.n; i++) {
    const certify_case *c = &cx->cases.v[i];
    if (c->op[0]) continue;
    fprintf(f, "<tr><td>%s</td><td class=%s>", c->name,
            cert_failed_status(c->status) ? "fail"
            : c->status == ST_PASS        ? "pass"
                                          : "skip");
    if (cert_failed_status(c->status))
      fprintf(f, "<a href=\"#case%zu\">%s</a>", i + 1, cert_status_name[c->status]);
    else
      fputs(cert_status_name[c->status], f);
    fputs("</td><td>", f);
    html_str(f, c->detail);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  /* The matrix: ops x the per-op checks, in the order of the check table:
   * numerics a column per dtype its cases ran in, each other group one. */
  fputs("<h2>Ops</h2>\n<table><tr><th>op</th>", f);
  for (size_t k = 0; k < cert_ncheck_table; k++) {
    const check_def *ck = &cert_check_table[k];
    if (ck->scope == CHECK_OP_NUMERICS) {
      bool used[NUM_DTYPES];
      dtypes_used(cx, ck->group, used);
      for (int d = 0; d < NUM_DTYPES; d++)
        if (used[d]) fprintf(f, "<th>%s<br>%s</th>", ck->group, dt_name(all_dtypes[d]));
    } else if (op_column(k)) {
      fprintf(f, "<th>%s</th>", ck->group);
    }
  }
  fputs("</tr>\n", f);
  for (size_t i = 0; i < cx->cases.n; i++) {
    const certify_case *c = &cx->cases.v[i];
    if (!c->op[0]) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) seen = strcmp(cx->cases.v[j].op, c->op) == 0;
    if (seen) continue;
    fputs("<tr><th>", f);
    html_str(f, c->op);
    fputs("</th>", f);
    for (size_t k = 0; k < cert_ncheck_table; k++) {
      const check_def *ck = &cert_check_table[k];
      if (ck->scope == CHECK_OP_NUMERICS) {
        bool used[NUM_DTYPES];
        dtypes_used(cx, ck->group, used);
        for (int d = 0; d < NUM_DTYPES; d++)
          if (used[d]) html_cell(cx, f, c->op, ck->group, dt_name(all_dtypes[d]));
      } else if (op_column(k)) {
        html_cell(cx, f, c->op, ck->group, NULL);
      }
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<h2>Failures</h2>\n", f);
  for (size_t i = 0; i < cx->cases.n; i++) {
    const certify_case *c = &cx->cases.v[i];
    if (!cert_failed_status(c->status)) continue;
    char cmd[700];
    repro(cx, c, cmd, sizeof cmd);
    fprintf(f, "<h3 id=\"case%zu\">%zu. ", i + 1, i + 1);
    html_str(f, c->name);
    fprintf(f, ": %s</h3>\n<p>", cert_status_name[c->status]);
    html_str(f, c->detail);
    if (c->rerun && cert_failed_status(c->status) && !cert_failed_status(c->alone_status) &&
        strncmp(c->detail, "depends on earlier calls", 24) == 0) {
      fprintf(f,
              "</p>\n<p>It failed in a shared worker, after other cases, and gave %s alone in "
              "a fresh process: the failure stands, since a host is a long-lived process.",
              cert_status_name[c->alone_status]);
    } else if (c->rerun &&
               (c->status != c->worker_status || strcmp(c->detail, c->worker_detail) != 0)) {
      fprintf(f, "</p>\n<p>In a shared worker it gave %s (", cert_status_name[c->worker_status]);
      html_str(f, c->worker_detail);
      fputs("); the verdict above is its rerun alone in a fresh process.", f);
    } else if (c->rerun) {
      fputs("</p>\n<p>The same in a shared worker and alone in a fresh process.", f);
    }
    fputs("</p>\n<p>Reproduce: <code>", f);
    html_str(f, cmd);
    fputs("</code></p>\n", f);
  }
  if (!cx->run.nfailed) fputs("<p>None.</p>\n", f);
  if (cx->run.nchanged) {
    fputs("<h2>Reruns that changed a verdict</h2>\n<p>These cases did not pass in a shared worker "
          "and gave another verdict alone in a fresh process, which stands.</p>\n<ul>\n",
          f);
    for (size_t i = 0; i < cx->cases.n; i++) {
      const certify_case *c = &cx->cases.v[i];
      if (!c->rerun || c->status == c->worker_status) continue;
      fputs("<li>", f);
      html_str(f, c->name);
      fprintf(f, ": %s in a worker (", cert_status_name[c->worker_status]);
      html_str(f, c->worker_detail);
      fprintf(f, "), %s alone</li>\n", cert_status_name[c->status]);
    }
    fputs("</ul>\n", f);
  }
  fputs("</body></html>\n", f);
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "bp-certify: error writing %s\n", path);
  return ok;
}
