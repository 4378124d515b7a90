/*
 * conformance/cases.c - the case list (cx->cases): the entries of the
 * check table (checks/table.c), for the plugin and for each op, that
 * --ops selects.
 */
#define _GNU_SOURCE

#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "cert.h"
#include "num.h"
#include "sample.h"

/* registration/ops, when the plugin gives the certifier no op to check. */
static void case_no_ops(cert_ctx *cx, const certify_case *c) {
  (void)c;
  cert_verdict(cx, ST_FAIL,
               "registration: nothing to certify: the plugin has no kernel of a core op for "
               "%s, and no op of its own with a meta function",
               cx->probe.device);
}

/* Adds a case to cx->cases; the table grows as needed. */
certify_case *cert_add_case(cert_ctx *cx, const char *group, const char *name,
                            void (*fn)(cert_ctx *, const certify_case *), const char *op) {
  if (cx->cases.n == cx->cases.cap) {
    cx->cases.cap = cx->cases.cap ? 2 * cx->cases.cap : 256;
    cx->cases.v = realloc(cx->cases.v, cx->cases.cap * sizeof *cx->cases.v);
    if (!cx->cases.v) {
      perror("bp-certify");
      exit(2);
    }
  }
  certify_case *c = &cx->cases.v[cx->cases.n++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->group = group;
  c->fn = fn;
  c->timeout = cx->opt.timeout * (strcmp(group, "host-long") == 0 ? 10 : 1);
  snprintf(c->op, sizeof c->op, "%s", op ? op : "");
  return c;
}

/* Whether --ops selects a case of op: the glob matches the op's name, the
 * name without "core::", or the whole case name. */
bool cert_selected(cert_ctx *cx, const char *op, const char *casename) {
  if (!cx->opt.ops) return true;
  return fnmatch(cx->opt.ops, op, 0) == 0 ||
         (cert_is_core(op) && fnmatch(cx->opt.ops, op + 6, 0) == 0) ||
         fnmatch(cx->opt.ops, casename, 0) == 0;
}

/* The cases of one per-op check ck of op that --ops selects: "OP/NAME",
 * or for numerics (a core op, r its entry in core_refs) one per dtype of
 * dts and per sample kind that applies to the op, "OP/DTYPE/SAMPLE". */
static void add_op_check(cert_ctx *cx, const check_def *ck, const char *op, int r,
                         const int32_t *dts, int ndt) {
  char name[160];
  if (ck->scope == CHECK_OP_NUMERICS) {
    for (int d = 0; d < ndt; d++)
      for (int sk = SK_BASIC; sk < SK_BADSHAPE; sk++) {
        if (!cert_sk_applies(cert_core_refs[r].kind, sk)) continue;
        snprintf(name, sizeof name, "%s/%s/%s", op, dt_name(dts[d]), cert_sk_name[sk]);
        if (!cert_selected(cx, op, name)) continue;
        certify_case *c = cert_add_case(cx, ck->group, name, ck->fn, op);
        c->dt = dts[d];
        c->sk = sk;
      }
    return;
  }
  snprintf(name, sizeof name, "%s/%s", op, ck->name);
  if (cert_selected(cx, op, name))
    cert_add_case(cx, ck->group, name, ck->fn, op)->fresh = ck->fresh;
}

/* The cases of the ops, op by op, each op's in table order: first the
 * core ops the certifier has a reference for (all of them when the
 * plugin claims the core op set, else those it implements), with
 * numerics in the dtypes of the profile; then the plugin's other ops,
 * whose cases are the CHECK_OP and CHECK_OP_VENDOR ones, or without a
 * meta function the CHECK_OP_NOMETA ones. */
static void add_op_cases(cert_ctx *cx) {
  for (size_t i = 0; i < bp_op_count(); i++) {
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(bp_op_at(i), &oi) != BP_OK || !cert_is_core(oi.name)) continue;
    int r = cert_core_ref_index(oi.name);
    const probe_op *po = cert_probe_find(cx, oi.name);
    if (r < 0 || (cx->probe.op_set < 1 && !po)) continue;
    /* Every dtype in full, float32 in core.  A dtype the kernel does not
     * declare is still a case, which numerics reports as a SKIP with the
     * reason, so that the TAP, the certificate and the report say why it
     * was not checked. */
    int32_t dts[NUM_DTYPES];
    int ndt = 0;
    for (int d = 0; d < NUM_DTYPES; d++)
      if (cx->opt.full || all_dtypes[d] == BP_FLOAT32) dts[ndt++] = all_dtypes[d];
    for (size_t k = 0; k < cert_ncheck_table; k++)
      if (cert_check_table[k].scope == CHECK_OP_NUMERICS || cert_check_table[k].scope == CHECK_OP)
        add_op_check(cx, &cert_check_table[k], oi.name, r, dts, ndt);
  }
  for (size_t i = 0; i < cx->probe.nops; i++) {
    const probe_op *po = &cx->probe.ops[i];
    if (cert_is_core(po->name)) continue;
    check_scope scope = po->has_meta ? CHECK_OP : CHECK_OP_NOMETA;
    for (size_t k = 0; k < cert_ncheck_table; k++)
      if (cert_check_table[k].scope == scope ||
          (po->has_meta && cert_check_table[k].scope == CHECK_OP_VENDOR))
        add_op_check(cx, &cert_check_table[k], po->name, -1, NULL, 0);
  }
}

/* splitmix64 over *state: the shuffle's own stream, apart from the
 * samples' (which are seeded per case name, so that a case's inputs do
 * not depend on where it runs). */
static uint64_t shuffle_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Shuffles n items of size sz at v (Fisher-Yates). */
static void shuffle(void *v, size_t n, size_t sz, uint64_t *state) {
  char tmp[sizeof(certify_case) > 64 ? sizeof(certify_case) : 64], *b = v;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(shuffle_next(state) % i);
    memcpy(tmp, b + (i - 1) * sz, sz);
    memmove(b + (i - 1) * sz, b + j * sz, sz);
    memcpy(b + j * sz, tmp, sz);
  }
}

/* The op cases [first, first + n) in an order of the seed's: the ops in a
 * shuffled order, and each op's cases shuffled among themselves, so that
 * what one case leaves behind in a long-lived worker (a cache keyed by a
 * shape or a pointer, a pool's state) meets other cases on each seed. */
static void shuffle_op_cases(cert_ctx *cx, size_t first, size_t n) {
  if (n < 2) return;
  uint64_t state = cx->opt.seed * 0x2545f4914f6cdd1dull + 0x5851f42d4c957f2dull;
  certify_case *v = cx->cases.v + first;
  /* each op's run of cases shuffled, and the runs' starts */
  size_t *start = malloc((n + 1) * sizeof *start), nruns = 0;
  certify_case *out = malloc(n * sizeof *out);
  if (!start || !out) {
    perror("bp-certify");
    exit(2);
  }
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(v[i].op, v[i - 1].op) != 0) start[nruns++] = i;
  start[nruns] = n;
  for (size_t r = 0; r < nruns; r++)
    shuffle(v + start[r], start[r + 1] - start[r], sizeof *v, &state);
  size_t *order = malloc(nruns * sizeof *order);
  if (!order) {
    perror("bp-certify");
    exit(2);
  }
  for (size_t r = 0; r < nruns; r++) order[r] = r;
  shuffle(order, nruns, sizeof *order, &state);
  size_t at = 0;
  for (size_t r = 0; r < nruns; r++) {
    size_t len = start[order[r] + 1] - start[order[r]];
    memcpy(out + at, v + start[order[r]], len * sizeof *out);
    at += len;
  }
  memcpy(v, out, n * sizeof *out);
  free(order);
  free(out);
  free(start);
}

/* The case list, in the order of the check table: the plugin-wide checks
 * once each, and the per-op ones where the first of them stands, in the
 * seed's order (shuffle_op_cases).  The
 * core ops come from the host, which defines them before any plugin
 * loads; what the plugin registers comes from the probe, so the parent
 * never runs plugin code.  A plugin the probe could not load gets the
 * CHECK_PLUGIN cases alone. */
/* Whether check ck belongs to the profile: the hostile hosts' group
 * "host" to full and host, "host-long" to host alone, which runs only them
 * and the plugin-wide handshake.  With --ops, a hostile host's case runs
 * only when the glob matches its name (host/fork): each is a whole
 * process of its own. */
static bool in_profile(cert_ctx *cx, const check_def *ck) {
  bool host = strcmp(ck->group, "host") == 0, cycles = strcmp(ck->group, "host-long") == 0;
  if ((host || cycles) && cx->opt.ops && fnmatch(cx->opt.ops, ck->name, 0) != 0) return false;
  if (cx->opt.host) return host || cycles || ck->scope == CHECK_PLUGIN;
  return cycles ? false : host ? cx->opt.full : true;
}

void cert_build_cases(cert_ctx *cx) {
  bool ops_done = false;
  size_t before = 0;
  for (size_t k = 0; k < cert_ncheck_table; k++) {
    const check_def *ck = &cert_check_table[k];
    if (ck->scope != CHECK_PLUGIN && !cx->probe.loaded) continue;
    if (!in_profile(cx, ck)) continue;
    if (ck->scope == CHECK_PLUGIN || ck->scope == CHECK_DEVICE) {
      cert_add_case(cx, ck->group, ck->name, ck->fn, NULL)->fresh = ck->fresh;
      if (cx->opt.ops && fnmatch(cx->opt.ops, ck->name, 0) == 0) cx->ops_name_plugin_case = true;
    } else if (!ops_done) {
      before = cx->cases.n;
      add_op_cases(cx);
      cx->op_cases = cx->cases.n - before;
      shuffle_op_cases(cx, before, cx->op_cases);
      ops_done = true;
    }
  }
  /* Fail closed: a run that checks no op certifies nothing.  (A --ops
   * that selects none is bad usage, which main() reports.) */
  if (cx->probe.loaded && cx->op_cases == 0 && !cx->opt.ops && !cx->opt.host)
    cert_add_case(cx, "registration", "registration/ops", case_no_ops, NULL);
}
