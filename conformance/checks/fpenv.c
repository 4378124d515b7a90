/*
 * conformance/checks/fpenv.c - host/fpenv, in a fresh process: every
 * thread that runs the plugin's work keeps denormals, as the calling
 * thread does (no flush to zero, no denormals-are-zero).  The probe is
 * large enough that a plugin splits it among its threads: 2^20 float32
 * denormals through core::add (x + x), core::mul (x * 1), core::neg and
 * core::abs, whichever the plugin has kernels of, whose exact results
 * are denormals too.
 *
 * It runs twice: first after a call made from a thread that had flush-
 * to-zero and denormals-are-zero set (a host built with -ffast-math), so
 * that worker threads started then and keeping that thread's state show;
 * then the probe proper, from a thread in the default state.
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "../procstate.h"
#include "checks.h"

#define PROBE_N (1 << 20)

/* Flush-to-zero and denormals-are-zero on the calling thread; false
 * where this machine has no such switch the certifier knows. */
static bool set_ftz(void) {
#if defined(__x86_64__) || defined(__i386__)
  uint32_t csr;
  __asm__ volatile("stmxcsr %0" : "=m"(csr));
  csr |= 0x8040u; /* FTZ (bit 15), DAZ (bit 6) */
  __asm__ volatile("ldmxcsr %0" : : "m"(csr));
  return true;
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  fpcr |= (uint64_t)1 << 24; /* FZ */
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
  return true;
#else
  return false;
#endif
}

enum { P_ADD, P_MUL, P_NEG, P_ABS, NPROBE };
static const char *const probe_name[NPROBE] = {"core::add", "core::mul", "core::neg", "core::abs"};

/* The k-th denormal of the probe, signed for neg and abs. */
static float denormal(int64_t k) {
  uint32_t bits = ((uint32_t)(k * 2654435761u) & 0x007fffffu) | 1u;
  if (k & 1) bits |= 0x80000000u;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static float expected(int p, float x) {
  switch (p) {
    case P_ADD: return x + x;
    case P_MUL: return x;
    case P_NEG: return -x;
    default: return fabsf(x);
  }
}

/* Calls probe p on the probe's inputs with the calling thread in state
 * env.  With check: 1 when the results are exact, 0 after a verdict;
 * without, 1 when called.  -1 when the plugin has no float32 kernel of
 * it. */
static int probe(cert_ctx *cx, int p, const fp_state *env, const fp_state *fp0, bool check) {
  const bp_op *op;
  bp_kernel_info ki;
  if (bp_op_find(probe_name[p], &op) != BP_OK ||
      !cert_plugin_kernel(cx, op, cx->put.device.type, &ki))
    return -1;
  bool f32 = !ki.dtypes;
  for (const int32_t *d = ki.dtypes; d && *d != BP_DTYPE_INVALID; d++) f32 |= *d == BP_FLOAT32;
  if (!f32) return -1;
  schema_info si;
  cert_op_schema_info(op, &si);
  int64_t n = PROBE_N;
  rt *x = rt_new(BP_FLOAT32, 1, &n);
  for (int64_t k = 0; k < n; k++) x->f[k] = denormal(k);
  sample s;
  memset(&s, 0, sizeof s);
  cert_add_tensor(&s, x, 0);
  if (p == P_ADD || p == P_MUL) {
    rt *y = rt_new(BP_FLOAT32, 1, &n);
    for (int64_t k = 0; k < n; k++) y->f[k] = p == P_ADD ? x->f[k] : 1.0;
    cert_add_tensor(&s, y, 0);
  }
  argset as;
  if (!cert_materialise(cx, &s, &si, M_PLAIN, &as)) {
    cert_verdict(cx, ST_FAIL, "certifier error: cannot build the denormal probe of %s: %s",
                 probe_name[p], bp_last_error());
    cert_argset_free(&as);
    cert_sample_free(&s);
    return 0;
  }
  cert_fp_state_set(env);
  bp_status st = bp_call(op, &as.st);
  cert_fp_state_set(fp0);
  if (st != BP_OK) {
    cert_verdict(cx, ST_FAIL, "host/fpenv: %s on %lld float32 denormals failed: %s", probe_name[p],
                 (long long)n, bp_last_error());
    cert_argset_free(&as);
    cert_sample_free(&s);
    return 0;
  }
  size_t len = 0;
  unsigned char *b = check ? cert_result_bytes(&as.st, &len) : NULL;
  bp_stack_release(&as.st);
  cert_argset_free(&as);
  int64_t first = -1, last = -1, bad = 0;
  for (int64_t k = 0; check && k < n; k++) {
    float got = 0, want = expected(p, denormal(k));
    if (b && len >= (size_t)n * 4) memcpy(&got, b + 4 * k, 4);
    if (memcmp(&got, &want, 4) == 0) continue;
    if (first < 0) first = k;
    last = k;
    bad++;
  }
  free(b);
  cert_sample_free(&s);
  if (bad) {
    cert_verdict(cx, ST_FAIL,
                 "host/fpenv: %s on %lld float32 denormals, called from a thread in the "
                 "default floating-point state: %lld result(s) wrong, between elements %lld "
                 "and %lld: a thread that runs the plugin's work flushes denormals to zero "
                 "(its flush-to-zero or denormals-are-zero is set, by the plugin or kept "
                 "from the thread that started it: the first calls came from a thread that "
                 "had both set)",
                 probe_name[p], (long long)n, (long long)bad, (long long)first, (long long)last);
    return 0;
  }
  return 1;
}

void cert_case_host_fpenv(cert_ctx *cx, const certify_case *c) {
  (void)c;
  fp_state fp0, ftz_state;
  cert_fp_state_get(&fp0);
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
  /* First the calls from a flushing thread (worker threads a plugin
   * starts lazily start here), then the probe proper. */
  bool ftz = set_ftz();
  cert_fp_state_get(&ftz_state);
  cert_fp_state_set(&fp0);
  for (int p = 0; ftz && p < NPROBE; p++)
    if (probe(cx, p, &ftz_state, &fp0, false) == 0) return;
  int ran = 0;
  for (int p = 0; p < NPROBE; p++) {
    int r = probe(cx, p, &fp0, &fp0, true);
    if (r == 0) return;
    ran += r > 0;
  }
  if (!ran) {
    cert_verdict(cx, ST_SKIP,
                 "the plugin has no float32 kernel of core::add, mul, neg or abs to probe "
                 "its threads' floating-point environment with");
    return;
  }
  cert_verdict(cx, ST_PASS,
               "%d probe(s) of %d float32 denormals each come back exact from a thread in "
               "the default state, after calls from a thread with flush-to-zero set: every "
               "thread that runs the plugin's work keeps denormals",
               ran, PROBE_N);
}
