/*
 * conformance/checks/teardown.c - teardown/unload, in a fresh process:
 * load the plugin, call each of its ops, unload it, and go on in the same
 * process, three times.  After each unload the plugin's threads are gone,
 * the floating-point environment and the signal dispositions are as they
 * were before the first load, and the process keeps working (libbackplane
 * answers, the ops' host definitions stay); from the second cycle on, an
 * unload leaves no more mapped memory than the one before it did.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/host.h>

#include "../hoststate.h"
#include "../procstate.h"
#include "checks.h"

#define CYCLES 3

/* Calls every op the plugin has a kernel of on its first check sample;
 * the number of calls made, or -1 after a verdict. */
static long call_each_op(cert_ctx *cx) {
  long calls = 0;
  gen_opts o = {NULL, false, NULL};
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    bp_kernel_info ki;
    if (bp_op_get_info(op, &oi) != BP_OK || !oi.has_meta ||
        !cert_plugin_kernel(cx, op, cx->put.device.type, &ki))
      continue;
    cx->cur.op = op;
    cx->cur.oi = oi;
    cx->cur.ki = ki;
    cx->cur.r = cert_core_ref_index(oi.name);
    cert_op_schema_info(op, &cx->cur.si);
    o.declared = ki.dtypes;
    char why[300];
    size_t n = 0;
    sample *v = cert_check_set(cx->cur.r, &cx->cur.si, &o, &n, why, sizeof why);
    if (!v || !n) continue;
    argset as;
    if (cert_materialise(cx, &v[0], &cx->cur.si, M_PLAIN, &as)) {
      if (bp_call(op, &as.st) == BP_OK) bp_stack_release(&as.st);
      calls++;
    }
    cert_argset_free(&as);
    cert_sample_set_free(v, n);
  }
  return calls;
}

/* Waits up to a second for the process to be back to `threads` threads;
 * the count it has then. */
static int settle_threads(int threads) {
  int now_threads = cert_proc_threads();
  for (int i = 0; i < 100 && now_threads > threads; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    now_threads = cert_proc_threads();
  }
  return now_threads;
}

void cert_case_teardown(cert_ctx *cx, const certify_case *c) {
  (void)c;
  fp_state fp0, fp;
  sig_state sig0, sig;
  map_state prev = {0, 0, 0}, m;
  char why[400];
  /* (static: a verdict returns early, and the snapshot stays reachable) */
  static host_state hs0, hs;
  cert_fp_state_get(&fp0);
  cert_sig_state_get(&sig0);
  cert_host_state_get(&hs0, HS_FDS);
  int threads0 = cert_proc_threads();
  long tids0[256];
  int ntids0 = cert_proc_thread_ids(tids0, 256);
  long calls = 0;
  for (int cycle = 1; cycle <= CYCLES; cycle++) {
    cx->put.plugin = NULL;
    if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
    long got = call_each_op(cx);
    calls += got;
    bp_status st = bp_plugin_unload(cx->put.plugin);
    if (st != BP_OK) {
      cert_verdict(cx, ST_FAIL, "teardown: cycle %d: bp_plugin_unload failed after %ld calls: %s",
                   cycle, got, bp_last_error());
      return;
    }
    cx->put.plugin = NULL;
    int threads = settle_threads(threads0);
    if (cert_proc_threads_meaningful() && threads0 > 0 && threads > threads0) {
      char names[300];
      cert_proc_new_threads(tids0, ntids0, names, sizeof names);
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: %d thread(s) the plugin started still run after "
                   "bp_plugin_unload (%d before the load, %d after the unload): %s",
                   cycle, threads - threads0, threads0, threads, names);
      return;
    }
    cert_fp_state_get(&fp);
    if (!cert_fp_state_same(&fp0, &fp, why, sizeof why)) {
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: after bp_plugin_unload the floating-point "
                   "environment differs from before the load: %s",
                   cycle, why);
      return;
    }
    cert_sig_state_get(&sig);
    if (!cert_sig_state_same(&sig0, &sig, why, sizeof why)) {
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: after bp_plugin_unload a signal differs from before "
                   "the load: %s",
                   cycle, why);
      return;
    }
    cert_host_state_get(&hs, HS_FDS);
    bool same = cert_host_state_same(&hs0, &hs, HS_FDS, why, sizeof why);
    cert_host_state_free(&hs);
    if (!same) {
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: after bp_plugin_unload the process differs from "
                   "before the load: %s",
                   cycle, why);
      return;
    }
    /* The process goes on: the host still answers, and its definitions
     * of the core ops outlive the plugin's kernels. */
    const bp_op *add = NULL;
    bp_tensor *t = NULL;
    int64_t four = 4;
    if (bp_op_find("core::add", &add) != BP_OK ||
        bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &four, &t) != BP_OK) {
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: after bp_plugin_unload the host no longer works: %s", cycle,
                   bp_last_error());
      return;
    }
    bp_tensor_release(t);
    if (!cert_map_state_meaningful() || !cert_map_state_get(cx->opt.plugin, &m)) continue;
    if (cycle >= 3 && (m.count > prev.count || m.bytes > prev.bytes)) {
      cert_verdict(cx, ST_FAIL,
                   "teardown: cycle %d: each load and unload leaves memory mapped: %ld "
                   "mapping(s) and %lld byte(s) more than after the cycle before",
                   cycle, m.count - prev.count, m.bytes - prev.bytes);
      return;
    }
    prev = m;
  }
  cert_host_state_free(&hs0);
  cert_verdict(
      cx, ST_PASS,
      "%d cycles of load, %ld calls in all, unload: %s left behind, the "
      "floating-point environment, signals, file descriptors, environment, locale, "
      "working directory, umask, limits and affinity as before, and the host goes on",
      CYCLES, calls,
      !cert_proc_threads_meaningful() ? "no mapping or thread measured (a sanitizer runtime maps "
                                        "memory and starts a thread of its own)"
      : cert_map_state_meaningful()   ? "no thread or mapping"
                                      : "no thread (mappings not measured: a sanitizer runtime "
                                        "maps memory of its own)");
}
