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

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cert.h"

cert_ctx cx = {
    .opt = {.profile = "core", .jobs = 1, .timeout = 10.0, .seed = 1, .isolation = ISO_WORKER},
    .chan = {.fd = -1},
};

int main(int argc, char **argv) {
  parse_args(argc, argv);
  /* The probe needs a loaded plugin only for what it registered; a plugin
   * that does not load gets the handshake and registration cases. */
  run_probe();
  build_cases();
  if (cx.opt.list) {
    for (size_t i = 0; i < cx.cases.n; i++) printf("%s\n", cx.cases.v[i].name);
    return 0;
  }
  if (cx.probe.no_device) {
    /* Nothing can be certified on a device that is not there (a GPU
     * plugin on a machine without one): one clear line, no certificate,
     * and the Automake "skipped" status. */
    char why[900];
    int tlen = (int)strcspn(cx.probe.device, ":");
    snprintf(why, sizeof why, "%s does not exist: there %s %ld %.*s device%s%s%s%s",
             cx.probe.device, cx.probe.device_count == 1 ? "is" : "are", cx.probe.device_count,
             tlen, cx.probe.device, cx.probe.device_count == 1 ? "" : "s",
             cx.probe.note[0] ? " (the plugin's note: " : "", cx.probe.note,
             cx.probe.note[0] ? ")" : "");
    printf("1..0 # SKIP cannot certify: %s\n", why);
    fprintf(stderr, "bp-certify: cannot certify: %s; nothing was checked%s\n", why,
            cx.opt.json || cx.opt.html ? ", and no certificate or report was written" : "");
    return 77;
  }
  printf("1..%zu\n", cx.cases.n);
  printf("# bp-certify %s, plugin %s, profile %s, device %s, seed %llu, jobs %ld, isolation %s\n",
         CERTIFY_VERSION, cx.opt.plugin, cx.opt.profile, cx.probe.loaded ? cx.probe.device : "?",
         (unsigned long long)cx.opt.seed, cx.opt.jobs, isolation_name[cx.opt.isolation]);
  run_all();
  if (cx.run.nreruns)
    printf("# %zu case(s) that did not pass in a shared worker were rerun alone in a fresh "
           "process: %zu verdict(s) changed\n",
           cx.run.nreruns, cx.run.nchanged);
  printf("# %zu passed, %zu failed, %zu skipped: %s\n", cx.run.npassed, cx.run.nfailed,
         cx.run.nskipped, cx.run.nfailed ? "does NOT conform" : "conforms");
  bool ok = true;
  if (cx.opt.json) ok &= write_json(cx.opt.json);
  if (cx.opt.html) ok &= write_html(cx.opt.html);
  if (!ok) return 1;
  return cx.run.nfailed ? 1 : 0;
}
