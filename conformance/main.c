/*
 * conformance/main.c - bp-certify: certifies a Backplane plugin against
 * the ABI rules and the `core` op set (docs/op-set.md), printing TAP and
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
 * a worker ends each case with "done\n" (ipc.h).  The parent prints the
 * verdicts in case order.
 *
 * cert.h lists the modules; docs/certification.md describes every check
 * and the two profiles.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cert.h"
#include "hints.h"
#include "termsafe.h"

/* Bad usage found after parsing: exit 2 with the reason, which may quote
 * the plugin (its device types and ops), escaped. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "bp-certify: %s\n", termsafe(msg));
  exit(2);
}

/* A certificate or report path must be writable before anything runs; it
 * is emptied now, so that a stale certificate never outlives a run that
 * did not finish. */
static void check_writable(const char *opt, const char *path) {
  if (!path) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) usage_error("%s: cannot write '%s': %s", opt, path, strerror(errno));
  close(fd);
}

/* The ops the plugin has kernels of, for a message: "core::add, ...". */
static void op_names(cert_ctx *cx, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cx->probe.nops && o + 1 < len; i++)
    o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", cx->probe.ops[i].name);
  if (o >= len && len > 4) memcpy(buf + len - 4, "...", 4);
}

int main(int argc, char **argv) {
  /* The run's one context, which every module is handed (static: its
   * case list and probe are large, and forked children inherit it). */
  static cert_ctx ctx;
  cert_ctx *cx = &ctx;
  cert_ctx_init(cx);
  /* Before the host's first allocation: OP/oom counts and fails them. */
  bp__alloc_test_track(true);
  cert_parse_args(cx, argc, argv);
  check_writable("--json", cx->opt.json);
  check_writable("--html", cx->opt.html);
  /* Every device block libbackplane allocates, in every process of the
   * run, gets canaries that are checked when it is freed (host/guard.c). */
  setenv("BP_ALLOC_GUARD", "1", 1);
  /* Every process of the run starts from the same signal dispositions,
   * whoever started the certifier: a shell ignores SIGINT and SIGQUIT in
   * the commands it runs in the background, which would hide a plugin
   * that ignores them (the process check compares the dispositions
   * before and after). */
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  /* The probe needs a loaded plugin only for what it registered; a plugin
   * that does not load gets the handshake and registration cases, and
   * registration/probe fails. */
  cert_run_probe(cx);
  if (cx->probe.bad_device)
    usage_error("--device %s: the plugin registers no such device type (its device types: %s)",
                cx->opt.device, cx->probe.device_types[0] ? cx->probe.device_types : "none");
  cert_build_cases(cx);
  if (cx->opt.ops && cx->probe.loaded && cx->op_cases == 0 && !cx->ops_name_plugin_case) {
    char names[600];
    op_names(cx, names, sizeof names);
    usage_error("--ops '%s' matches no op of the plugin (its ops: %s)", cx->opt.ops,
                names[0] ? names : "none");
  }
  if (cx->opt.list) {
    for (size_t i = 0; i < cx->cases.n; i++) printf("%s\n", termsafe(cx->cases.v[i].name));
    return 0;
  }
  if (cx->probe.no_device) {
    /* Nothing can be certified on a device that is not there (a GPU
     * plugin on a machine without one): one failing test point that says
     * why, no certificate, and status 1.  Never 77, the status that test
     * drivers count as skipped: a run that checked nothing certified
     * nothing, and must not pass for one that did. */
    char why[900];
    int tlen = (int)strcspn(cx->probe.device, ":");
    snprintf(why, sizeof why, "%.64s does not exist: there %s %ld %.*s device%s%s%.512s%s",
             cx->probe.device, cx->probe.device_count == 1 ? "is" : "are", cx->probe.device_count,
             tlen, cx->probe.device, cx->probe.device_count == 1 ? "" : "s",
             cx->probe.note[0] ? " (the plugin's note: " : "", cx->probe.note,
             cx->probe.note[0] ? ")" : "");
    /* The empty files that check_writable() left are no certificate. */
    if (cx->opt.json) unlink(cx->opt.json);
    if (cx->opt.html) unlink(cx->opt.html);
    char line[2400];
    printf("1..1\nnot ok 1 - device/exists # cannot certify: %s\n",
           cert_tap_text(why, line, sizeof line));
    fprintf(stderr, "bp-certify: cannot certify: %s; nothing was checked%s\n", termsafe(why),
            cx->opt.json || cx->opt.html ? ", and no certificate or report was written" : "");
    return 1;
  }
  printf("1..%zu\n", cx->cases.n);
  printf("# bp-certify %s, plugin %s, profile %s, device %s, seed %llu, jobs %ld, isolation %s\n",
         CERTIFY_VERSION, termsafe(cx->opt.plugin), cx->opt.profile,
         cx->probe.loaded ? termsafe(cx->probe.device) : "?", (unsigned long long)cx->opt.seed,
         cx->opt.jobs, cert_isolation_name[cx->opt.isolation]);
  if (cx->opt.reference)
    printf("# reference kernels for the plugin's own ops: %s\n", termsafe(cx->opt.reference));
  if (cx->opt.hints) {
    printf("# sample hints: %s (%zu)\n", termsafe(cx->opt.hints), cert_hints_count());
    /* A hint of an op the plugin lacks is most likely a misspelt name. */
    for (size_t i = 0; i < cert_hints_count(); i++) {
      const hint *h = cert_hint_at(i);
      if (!cert_probe_find(cx, h->op))
        printf("# --hints line %d: the plugin has no op '%s'; the hint is not used\n", h->line,
               termsafe(h->op));
    }
  }
  cert_tap_requires(cx);
  cert_run_all(cx);
  if (cx->run.nreruns)
    printf(
        "# %zu case(s) that did not pass in a shared worker were rerun alone in a fresh "
        "process: %zu verdict(s) changed\n",
        cx->run.nreruns, cx->run.nchanged);
  if (cx->run.ndepends)
    printf(
        "# %zu failure(s) showed only after earlier calls in a shared worker: they stand "
        "(\"depends on earlier calls\")\n",
        cx->run.ndepends);
  char scope[400] = "";
  const char *prof = cx->opt.full   ? ""
                     : cx->opt.host ? "profile host: the hostile-host checks alone"
                                    : "profile core";
  if (cx->opt.ops || !cx->opt.full)
    snprintf(scope, sizeof scope, " (%s%s%s%s%s)", prof, cx->opt.ops && !cx->opt.full ? ", " : "",
             cx->opt.ops ? "only the ops --ops '" : "", cx->opt.ops ? cx->opt.ops : "",
             cx->opt.ops ? "' selects" : "");
  printf("# %zu passed, %zu failed, %zu skipped: %s%s\n", cx->run.npassed, cx->run.nfailed,
         cx->run.nskipped, cx->run.nfailed ? "does NOT conform" : "conforms",
         cx->run.nfailed ? "" : scope);
  bool ok = true;
  if (cx->opt.json) ok &= cert_write_json(cx, cx->opt.json);
  if (cx->opt.html) ok &= cert_write_html(cx, cx->opt.html);
  if (!ok) return 1;
  return cx->run.nfailed ? 1 : 0;
}
