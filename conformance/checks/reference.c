/*
 * conformance/checks/reference.c - OP/reference: an op outside core that
 * has a composite (bp_op_def.composite, built on other ops through
 * host->call) has a reference for its kernel.  Each of the op's generic
 * samples (every layout, and a larger shape) runs through the plugin's
 * kernel and again through the composite, with the op's kernels for the
 * device disabled (bp_set_kernel_enabled), on equal fresh arguments; the
 * results must agree: integer and bool ones exactly, float ones within
 * eight times the op set's tolerance for their dtype (the two paths round
 * in different orders).  The composite runs on the same device, over the
 * plugin's kernels of other ops, which their own cases certify.
 *
 * An op without a composite gets a SKIP that says so: the certificate
 * then shows that its values were checked by nothing but its own
 * repeatability, and its meta, honesty, bounds, lifetime and aliasing
 * cases.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

#define MAXR 8

/* The results of a call: each tensor's view (dtype, shape) and bytes. */
typedef struct results {
  size_t n;
  int32_t dtype[MAXR], ndim[MAXR];
  int64_t sizes[MAXR][BP_MAX_NDIM];
  unsigned char *bytes[MAXR];
  size_t len[MAXR];
} results;

static void results_take(results *r, bp_stack *st) {
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < st->top && r->n < MAXR; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(st, (int64_t)i, &t) != BP_OK) continue;
    const bp_tensor_view *v = bp_tensor_get_view(t);
    r->dtype[r->n] = v->dtype;
    r->ndim[r->n] = v->ndim;
    if (v->ndim > 0) /* (a 0-dim view may have no sizes array) */
      memcpy(r->sizes[r->n], v->sizes, (size_t)v->ndim * sizeof v->sizes[0]);
    r->bytes[r->n] = cert_tensor_bytes(t, &r->len[r->n]);
    r->n++;
  }
  bp_stack_release(st);
}

static void results_free(results *r) {
  for (size_t i = 0; i < r->n; i++) free(r->bytes[i]);
}

/* Whether the kernel's results k agree with the composite's c; else what
 * differs, in why. */
static bool agree(const results *k, const results *c, const char *ref, char *why, size_t len) {
  if (k->n != c->n) {
    snprintf(why, len, "the kernel gives %zu tensor result(s), %s %zu", k->n, ref, c->n);
    return false;
  }
  for (size_t i = 0; i < k->n; i++) {
    char ks[80], cs[80];
    if (k->dtype[i] != c->dtype[i] || k->ndim[i] != c->ndim[i] ||
        memcmp(k->sizes[i], c->sizes[i], (size_t)k->ndim[i] * sizeof k->sizes[i][0]) != 0) {
      snprintf(why, len, "result %zu is %s%s from the kernel, %s%s from %s", i,
               bp_dtype_name(k->dtype[i]), cert_shape_str(k->ndim[i], k->sizes[i], ks, sizeof ks),
               bp_dtype_name(c->dtype[i]), cert_shape_str(c->ndim[i], c->sizes[i], cs, sizeof cs),
               ref);
      return false;
    }
    if (!k->bytes[i] || !c->bytes[i] || k->len[i] != c->len[i]) {
      snprintf(why, len, "certifier error: cannot read result %zu", i);
      return false;
    }
    size_t item = bp_dtype_size(k->dtype[i]), n = item ? k->len[i] / item : 0;
    bool fl = dt_is_float(k->dtype[i]);
    double rtol = 0, atol = 0;
    if (fl) dt_tolerance(k->dtype[i], &rtol, &atol);
    size_t bad = 0, worst = 0;
    double worst_excess = -1, wk = 0, wc = 0;
    for (size_t e = 0; e < n; e++) {
      const unsigned char *pk = k->bytes[i] + e * item, *pc = c->bytes[i] + e * item;
      double excess = cert_excess_8x(k->dtype[i], pk, pc);
      if (excess <= 0) continue;
      if (bad++ == 0 || excess > worst_excess) {
        worst_excess = excess, worst = e;
        if (fl) wk = load_f(pk, k->dtype[i]), wc = load_f(pc, k->dtype[i]);
      }
    }
    if (bad) {
      if (fl)
        snprintf(why, len, "result %zu: %zu of %zu elements differ from %s's; worst at flat "
                           "index %zu: the kernel gives %.9g, %s %.9g (8x the %s tolerance: "
                           "rtol %g, atol %g)",
                 i, bad, n, ref, worst, wk, ref, wc, bp_dtype_name(k->dtype[i]), rtol, atol);
      else
        snprintf(why, len, "result %zu: %zu of %zu elements differ from %s's, the first at flat "
                           "index %zu", i, bad, n, ref, worst);
      return false;
    }
  }
  return true;
}

/* One sample through the kernel and through the composite: 1 when they
 * agree, -1 when either path refused the sample, 0 after a verdict. */
static int one(cert_ctx *cx, const sample *s, int32_t dev) {
  argset as;
  int got = cert_call_on(cx, s, M_PLAIN, &as, "reference");
  if (got <= 0) return got;
  results k, c;
  results_take(&k, &as.st);
  cert_argset_free(&as);
  if (bp_set_kernel_enabled(cx->cur.op, dev, false) != BP_OK) {
    results_free(&k);
    cert_verdict(cx, ST_FAIL, "reference: certifier error: cannot disable %s's kernels for %s: %s",
                 cx->cur.oi.name, cert_device_name(dev), bp_last_error());
    return 0;
  }
  got = cert_call_on(cx, s, M_PLAIN, &as, "reference");
  bp_set_kernel_enabled(cx->cur.op, dev, true);
  if (got <= 0) {
    results_free(&k);
    return got;
  }
  results_take(&c, &as.st);
  cert_argset_free(&as);
  char why[400], desc[300];
  bool ok = agree(&k, &c, "the composite", why, sizeof why);
  results_free(&k);
  results_free(&c);
  if (ok) return 1;
  cert_verdict(cx, ST_FAIL, "reference: %s: the kernel and the op's composite disagree: %s",
               cert_sample_desc(s, desc, sizeof desc), why);
  return 0;
}

/* ---- --reference: a plugin with reference kernels of the plugin's ops -- */

/* The reference plugin, loaded for one case, and its kernel of the op. */
typedef struct refplug {
  bp_plugin *p;
  char name[96];
  bp_kernel_info ki;
  int32_t type; /* the device type of that kernel */
} refplug;

/* Its kernel of the current op for device type `type`, if any. */
static bool ref_kernel(cert_ctx *cx, refplug *r, int32_t type) {
  bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  if (bp_op_get_info(cx->cur.op, &oi) != BP_OK) return false;
  for (int32_t k = 0; k < oi.nkernels; k++) {
    bp_kernel_info ki = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
    if (bp_op_get_kernel(cx->cur.op, (size_t)k, &ki) == BP_OK && ki.device_type == type &&
        ki.enabled && ki.plugin && strcmp(ki.plugin, r->name) == 0) {
      r->ki = ki;
      r->type = type;
      return true;
    }
  }
  return false;
}

/* Loads --reference and finds its kernel of the current op, on the device
 * type under test or else on the CPU: 1 when it has one, -1 when it has
 * none (and is unloaded again), 0 after a verdict. */
static int ref_load(cert_ctx *cx, refplug *r) {
  memset(r, 0, sizeof *r);
  if (bp_plugin_load(cx->opt.reference, &r->p) != BP_OK) {
    cert_verdict(cx, ST_FAIL,
                 "reference: the reference plugin %s does not load beside the plugin: %s",
                 cx->opt.reference, bp_last_error());
    return 0;
  }
  if (r->p == cx->put.plugin) { /* (the same file: loading it again returned it) */
    cert_verdict(cx, ST_FAIL, "reference: the reference plugin %s is the plugin under test itself",
                 cx->opt.reference);
    return 0;
  }
  bp_plugin_info pi = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
  if (bp_plugin_get_info(r->p, &pi) != BP_OK || !pi.name ||
      strcmp(pi.name, cx->put.info.name) == 0) {
    cert_verdict(
        cx, ST_FAIL, "reference: the reference plugin %s %s", cx->opt.reference,
        pi.name ? "has the name of the plugin under test: the host cannot tell their kernels apart"
                : "has no name");
    bp_plugin_unload(r->p);
    return 0;
  }
  snprintf(r->name, sizeof r->name, "%s", pi.name);
  /* (loading invalidated the strings of the op's and the kernel's info) */
  bp_op_get_info(cx->cur.op, &cx->cur.oi);
  cert_plugin_kernel(cx, cx->cur.op, cx->put.device.type, &cx->cur.ki);
  if (ref_kernel(cx, r, cx->put.device.type) || ref_kernel(cx, r, BP_DEVICE_CPU)) return 1;
  bp_plugin_unload(r->p);
  bp_op_get_info(cx->cur.op, &cx->cur.oi);
  cert_plugin_kernel(cx, cx->cur.op, cx->put.device.type, &cx->cur.ki);
  return -1;
}

static void ref_unload(cert_ctx *cx, refplug *r) {
  bp_set_kernel_provider(cx->cur.op, cx->put.device.type, NULL);
  bp_set_kernel_provider(cx->cur.op, r->type, NULL);
  bp_clear_error();
  bp_plugin_unload(r->p);
}

/* Whether the reference's kernel declares every dtype of the call on as,
 * its results' included: else the host would send the call elsewhere. */
static bool ref_declares(cert_ctx *cx, const refplug *r, const argset *as) {
  if (!r->ki.dtypes) return true;
  for (size_t i = 0; i < as->st.top; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(&as->st, (int64_t)i, &t) == BP_OK &&
        !cert_dtypes_have(r->ki.dtypes, bp_tensor_get_view(t)->dtype))
      return false;
  }
  bp_clear_error();
  int32_t dts[4];
  size_t nret = cert_result_dtypes(cx, as, dts, 4);
  for (size_t j = 0; j < nret; j++)
    if (dts[j] != BP_DTYPE_INVALID && !cert_dtypes_have(r->ki.dtypes, dts[j])) return false;
  return true;
}

/* One sample through the plugin's kernel and the reference's: 1 when
 * they agree, -1 when the kernel refused the sample, -2 when the
 * reference did or does not declare its dtypes, 0 after a verdict. */
static int one_ref(cert_ctx *cx, const sample *s, const refplug *r) {
  argset as;
  int32_t put = cx->put.device.type;
  if (bp_set_kernel_provider(cx->cur.op, put, cx->put.info.name) != BP_OK) {
    cert_verdict(cx, ST_FAIL,
                 "reference: certifier error: cannot choose the plugin's kernel of %s: %s",
                 cx->cur.oi.name, bp_last_error());
    return 0;
  }
  int got = cert_call_on(cx, s, M_PLAIN, &as, "reference");
  if (got <= 0) return got;
  results k, c;
  results_take(&k, &as.st);
  cert_argset_free(&as);
  /* The reference's call, on its kernel's device type (the CPU, when it
   * has none for the device under test), through its kernel. */
  bp_device saved = cx->put.device;
  bool saved_visible = cx->put.host_visible;
  if (r->type != put) {
    cx->put.device = bp_device_make(r->type, 0);
    cx->put.host_visible = true;
  }
  char desc[300], why[400];
  int ret = 1;
  if (bp_set_kernel_provider(cx->cur.op, r->type, r->name) != BP_OK) {
    cert_verdict(cx, ST_FAIL, "reference: certifier error: cannot choose %s's kernel of %s: %s",
                 r->name, cx->cur.oi.name, bp_last_error());
    ret = 0;
  } else if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as)) {
    cert_verdict(
        cx, ST_FAIL, "reference: certifier error: cannot build the arguments of %s on %s: %s",
        cert_sample_desc(s, desc, sizeof desc), cert_device_name(r->type), bp_last_error());
    ret = 0;
  } else if (!ref_declares(cx, r, &as) || bp_call(cx->cur.op, &as.st) != BP_OK) {
    bp_clear_error();
    ret = -2;
  } else {
    results_take(&c, &as.st);
    char what[160];
    snprintf(what, sizeof what, "the reference plugin %s", r->name);
    if (!agree(&k, &c, what, why, sizeof why)) {
      cert_verdict(cx, ST_FAIL,
                   "reference: %s: the kernel and the reference plugin %s disagree: %s",
                   cert_sample_desc(s, desc, sizeof desc), r->name, why);
      ret = 0;
    }
    results_free(&c);
  }
  cert_argset_free(&as);
  results_free(&k);
  cx->put.device = saved;
  cx->put.host_visible = saved_visible;
  return ret;
}

/* OP/reference against --reference's kernel. */
static void against_plugin(cert_ctx *cx, const certify_case *c, refplug *r) {
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  size_t checked = 0, refused_ref = 0;
  for (size_t k = 0; k < n; k++) {
    int got = one_ref(cx, &set[k], r);
    if (got == 0) {
      cert_sample_set_free(set, n);
      return;
    }
    checked += got > 0;
    refused_ref += got == -2;
  }
  cert_sample_set_free(set, n);
  if (checked == 0 && refused_ref) {
    cert_verdict(cx, ST_SKIP,
                 "the reference plugin %s refused or does not declare the dtypes of each of "
                 "the %zu sample(s) that %s's kernel took: nothing to compare",
                 r->name, refused_ref, c->op);
    return;
  }
  if (cert_all_refused(cx, c, n)) return;
  cert_verdict(cx, ST_PASS,
               "the kernel agrees with the reference plugin %s's kernel (on %s) on %zu "
               "sample(s) (8x the op set's tolerance)%s",
               r->name, cert_device_name(r->type), checked,
               refused_ref ? "; the reference refused or does not declare the others" : "");
}

void cert_case_reference(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  if (cx->opt.reference) {
    refplug r;
    int got = ref_load(cx, &r);
    if (got == 0) return;
    if (got > 0) {
      against_plugin(cx, c, &r);
      ref_unload(cx, &r);
      return;
    }
    if (!cx->cur.oi.has_composite) {
      cert_verdict(cx, ST_SKIP,
                   "the reference plugin %s has no kernel of %s (for %s%s), and %s has no "
                   "composite (bp_op_def.composite): its values are checked only for "
                   "repeatability, and its meta, honesty, bounds, lifetime and aliasing by "
                   "their cases",
                   cx->opt.reference, c->op, cert_device_name(cx->put.device.type),
                   cx->put.device.type == BP_DEVICE_CPU ? "" : " or cpu", c->op);
      return;
    }
  }
  if (!cx->cur.oi.has_composite) {
    cert_verdict(cx, ST_SKIP,
                 "%s has no composite (bp_op_def.composite) and no reference plugin was given "
                 "(--reference) to check its kernel against: its values are checked only for "
                 "repeatability, and its meta, honesty, bounds, lifetime and aliasing by "
                 "their cases",
                 c->op);
    return;
  }
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  size_t checked = 0;
  for (size_t k = 0; k < n; k++) {
    int r = one(cx, &set[k], cx->put.device.type);
    if (r == 0) {
      cert_sample_set_free(set, n);
      return;
    }
    checked += r > 0;
  }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  cert_verdict(cx, ST_PASS,
               "the kernel agrees with the op's composite on %zu sample(s) (8x the op set's "
               "tolerance)",
               checked);
}
