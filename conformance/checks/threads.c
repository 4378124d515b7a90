/*
 * conformance/checks/threads.c - host/threads (--profile host, with
 * --threads-env NAME): the plugin's work split among other numbers of
 * threads than the machine's.  For each of 1, 3 and 7 threads, in one
 * fresh process: NAME is set, the plugin loaded, and the large float32
 * samples of every core op it has a kernel of (sizes that no small thread
 * count divides) checked against the float64 reference, as numerics
 * does; then the plugin is unloaded, so the next load reads the next
 * count.  A reduction that combines its threads' partial results as if
 * their count were a power of two shows here.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

static const int thread_counts[] = {1, 3, 7};

/* The large float32 samples of every core op with a kernel of the plugin,
 * against the reference; the number checked, or -1 after a verdict. */
static long check_large(cert_ctx *cx) {
  long checked = 0;
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    bp_kernel_info ki;
    const bp_op *op = bp_op_at(i);
    if (bp_op_get_info(op, &oi) != BP_OK || !cert_is_core(oi.name) ||
        cert_core_ref_index(oi.name) < 0 || !cert_plugin_kernel(cx, op, cx->put.device.type, &ki))
      continue;
    certify_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s/float32/large", oi.name);
    snprintf(c.op, sizeof c.op, "%s", oi.name);
    c.dt = BP_FLOAT32;
    c.sk = SK_LARGE;
    if (!cert_op_setup(cx, &c) || !cert_declares(cx, BP_FLOAT32)) continue;
    gen_opts o = cert_op_gen_opts(cx);
    size_t n = 0;
    sample *v = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_LARGE, &o, &n);
    for (size_t k = 0; k < n; k++) {
      int got = cert_numerics_one(cx, &c, &v[k]);
      if (got == 0) {
        cert_sample_set_free(v, n);
        return -1;
      }
      checked += got > 0;
    }
    cert_sample_set_free(v, n);
  }
  return checked;
}

void cert_case_host_threads(cert_ctx *cx, const certify_case *c) {
  (void)c;
  const char *env = cx->opt.threads_env;
  if (!env) {
    cert_verdict(cx, ST_SKIP, "no --threads-env names the plugin's thread-count setting");
    return;
  }
  long checked = 0;
  for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; t++) {
    char val[16];
    snprintf(val, sizeof val, "%d", thread_counts[t]);
    setenv(env, val, 1);
    snprintf(cert_verdict_prefix, sizeof cert_verdict_prefix, "host/threads: with %s=%s: ", env,
             val);
    cx->put.plugin = NULL;
    if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
    long got = check_large(cx);
    if (got < 0) return;
    checked += got;
    bp_status st = bp_plugin_unload(cx->put.plugin);
    cx->put.plugin = NULL;
    if (st != BP_OK) {
      cert_verdict(cx, ST_FAIL, "bp_plugin_unload failed: %s", bp_last_error());
      return;
    }
  }
  cert_verdict_prefix[0] = '\0';
  unsetenv(env);
  cert_verdict(cx, ST_PASS,
               "with %s set to 1, 3 and 7, %ld large float32 samples match the float64 "
               "reference",
               env, checked);
}
