/* conformance/checks/hostrun.c - see hostrun.h. */
#define _GNU_SOURCE

#include "hostrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#define LARGE_PER_OP 1

/* FNV-1a over the bytes, never 0 (0 marks a failed call). */
static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h ? h : 1;
}

static bool declares_f32(const bp_kernel_info *ki) {
  if (!ki->dtypes) return true;
  for (const int32_t *p = ki->dtypes; *p != BP_DTYPE_INVALID; p++)
    if (*p == BP_FLOAT32) return true;
  return false;
}

/* Appends the samples of one op to oc: the first of its check set and
 * up to LARGE_PER_OP large ones. */
static void op_samples(cert_ctx *cx, op_calls *oc, int r, const bp_kernel_info *ki, bool large) {
  gen_opts o = {ki->dtypes, cx->opt.full, r < 0 ? oc->name : NULL};
  char why[300];
  size_t n = 0, nl = 0;
  sample *v = cert_check_set(r, &oc->si, &o, &n, why, sizeof why);
  sample *l = NULL;
  if (large && r >= 0 && declares_f32(ki)) l = cert_gen_core_set(r, BP_FLOAT32, SK_LARGE, &o, &nl);
  size_t keep = (v && n ? 1 : 0) + (nl < LARGE_PER_OP ? nl : LARGE_PER_OP);
  oc->v = keep ? calloc(keep, sizeof *oc->v) : NULL;
  oc->hash = keep ? calloc(keep, sizeof *oc->hash) : NULL;
  if (keep && (!oc->v || !oc->hash)) keep = 0;
  size_t k = 0;
  /* The samples move into oc->v; the rest are freed with their sets. */
  if (keep && v && n) {
    oc->v[k++] = v[0];
    memset(&v[0], 0, sizeof v[0]);
  }
  for (size_t i = 0; keep && i < nl && k < keep; i++) {
    oc->v[k++] = l[i];
    memset(&l[i], 0, sizeof l[i]);
  }
  oc->n = k;
  if (v) cert_sample_set_free(v, n);
  if (l) cert_sample_set_free(l, nl);
}

bool cert_host_run_build(cert_ctx *cx, host_run *hr, bool large) {
  memset(hr, 0, sizeof *hr);
  size_t cap = bp_op_count();
  hr->ops = calloc(cap ? cap : 1, sizeof *hr->ops);
  if (!hr->ops) {
    cert_verdict(cx, ST_FAIL, "certifier error: out of memory");
    return false;
  }
  for (size_t i = 0; i < cap; i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    bp_kernel_info ki;
    if (bp_op_get_info(op, &oi) != BP_OK || !oi.has_meta ||
        !cert_plugin_kernel(cx, op, cx->put.device.type, &ki))
      continue;
    op_calls *oc = &hr->ops[hr->nops];
    snprintf(oc->name, sizeof oc->name, "%s", oi.name);
    oc->op = op;
    oc->deterministic = !(oi.flags & BP_OP_NONDETERMINISTIC);
    cert_op_schema_info(op, &oc->si);
    op_samples(cx, oc, cert_core_ref_index(oi.name), &ki, large);
    if (oc->n) {
      hr->nops++;
      hr->nsamples += oc->n;
    } else {
      free(oc->v);
      free(oc->hash);
    }
  }
  return true;
}

void cert_host_run_free(host_run *hr) {
  for (size_t i = 0; i < hr->nops; i++) {
    cert_sample_set_free(hr->ops[i].v, hr->ops[i].n);
    free(hr->ops[i].hash);
  }
  free(hr->ops);
  memset(hr, 0, sizeof *hr);
}

bool cert_host_run_refind(host_run *hr, char *why, size_t len) {
  for (size_t i = 0; i < hr->nops; i++)
    if (bp_op_find(hr->ops[i].name, &hr->ops[i].op) != BP_OK) {
      snprintf(why, len, "%s is gone after the reload: %s", hr->ops[i].name, bp_last_error());
      return false;
    }
  return true;
}

/* One call: its results' hash, or 0 when it failed (the message in
 * err). */
static uint64_t call_hash(cert_ctx *cx, const op_calls *oc, const sample *s, char *err,
                          size_t len) {
  argset as;
  err[0] = '\0';
  if (!cert_materialise(cx, s, &oc->si, M_PLAIN, &as)) {
    snprintf(err, len, "certifier error: cannot build the arguments: %s", bp_last_error());
    cert_argset_free(&as);
    return 0;
  }
  uint64_t h = 0;
  if (bp_call(oc->op, &as.st) == BP_OK) {
    size_t n = 0;
    unsigned char *b = cert_result_bytes(&as.st, &n);
    h = hash_bytes(b, b ? n : 0);
    free(b);
    bp_stack_release(&as.st);
  } else {
    snprintf(err, len, "%s", bp_last_error());
    bp_clear_error();
  }
  cert_argset_free(&as);
  return h;
}

bool cert_host_run_calls(cert_ctx *cx, host_run *hr, bool record, size_t *ncalls, char *why,
                         size_t len) {
  char err[400], desc[300];
  for (size_t i = 0; i < hr->nops; i++) {
    op_calls *oc = &hr->ops[i];
    for (size_t k = 0; k < oc->n; k++) {
      uint64_t h = call_hash(cx, oc, &oc->v[k], err, sizeof err);
      (*ncalls)++;
      if (record) {
        oc->hash[k] = h;
        continue;
      }
      if (!oc->hash[k]) continue; /* it failed in the plain host too */
      if (!h) {
        snprintf(why, len, "%s on %s failed (it succeeds in a plain host): %s", oc->name,
                 cert_sample_desc(&oc->v[k], desc, sizeof desc), err);
        return false;
      }
      if (h != oc->hash[k] && oc->deterministic) {
        snprintf(why, len, "%s on %s gave a different result than the same call in a plain host",
                 oc->name, cert_sample_desc(&oc->v[k], desc, sizeof desc));
        return false;
      }
    }
  }
  return true;
}

bool cert_host_run_start(cert_ctx *cx, host_run *hr, bool large) {
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return false;
  cert_install_fault_handler(cx);
  if (!cert_host_run_build(cx, hr, large)) return false;
  size_t n = 0;
  char why[600];
  cert_host_run_calls(cx, hr, true, &n, why, sizeof why);
  return true;
}
