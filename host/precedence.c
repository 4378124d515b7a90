/*
 * host/precedence.c - which of several kernels for one op and device type
 * a call goes to, and the host's say in it.
 *
 * Several plugins may register a kernel for the same op and device type: a
 * vendor's tuned kernels beside the reference, say.  The registry keeps
 * them all (bp_op.registered, a list) and orders the enabled, committed
 * ones (see KERNEL PRECEDENCE in <backplane/host.h>):
 *   1. the plugin chosen by bp_set_kernel_provider() for the op, then for
 *      every op, on that device type;
 *   2. plugins named in BP_PREFER_PLUGINS, the first named first;
 *   3. higher bp_kernel_def.priority;
 *   4. earlier registration.
 * The first is published in the op's dispatch table; each kernel's `next`
 * links the rest, which a call whose dtypes the first does not declare
 * walks (call.c).  Everything here runs under the registry lock, which
 * its callers hold (registry.c, select.c, introspect.c): this file calls
 * nothing above it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A host's choice of provider: for `op` (NULL: every op) on device slot
 * `slot`, the plugin named `plugin`. */
typedef struct provider_choice {
  const bp_op *op;
  int slot;
  char plugin[BP__PLUGIN_NAME_MAX + 1];
} provider_choice;

static provider_choice *choices;
static size_t nchoices, choices_cap;

/* BP_PREFER_PLUGINS, split at commas; read once. */
#define MAX_PREFER 16
static char prefer_names[MAX_PREFER][65];
static size_t nprefer;
static bool prefer_read;

static void read_prefer(void) {
  if (prefer_read) return;
  prefer_read = true;
  /* Like BP_PLUGIN_PATH, not honoured with elevated privileges. */
  if (getuid() != geteuid() || getgid() != getegid()) return;
  const char *env = getenv("BP_PREFER_PLUGINS");
  if (!env) return;
  while (*env && nprefer < MAX_PREFER) {
    size_t n = strcspn(env, ",");
    while (n > 0 && (*env == ' ' || *env == '\t')) env++, n--;
    size_t m = n;
    while (m > 0 && (env[m - 1] == ' ' || env[m - 1] == '\t')) m--;
    if (m > 0 && m < sizeof prefer_names[0]) {
      memcpy(prefer_names[nprefer], env, m);
      prefer_names[nprefer][m] = '\0';
      nprefer++;
    }
    env += n;
    if (*env == ',') env++;
  }
}

static bool named(const bp__kernel *k, const char *name) {
  return k->owner->name && strcmp(k->owner->name, name) == 0;
}

/* 0 when the host chose k's plugin for (op, slot), 1 when it chose it for
 * every op on the slot, 2 otherwise. */
static int choice_rank(const bp_op *op, int slot, const bp__kernel *k) {
  int best = 2;
  for (size_t i = 0; i < nchoices; i++) {
    const provider_choice *c = &choices[i];
    if (c->slot != slot || !named(k, c->plugin)) continue;
    if (c->op == op) return 0;
    if (!c->op) best = 1;
  }
  return best;
}

static size_t prefer_rank(const bp__kernel *k) {
  for (size_t i = 0; i < nprefer; i++)
    if (named(k, prefer_names[i])) return i;
  return MAX_PREFER;
}

/* Whether a goes before b. */
static bool before(const bp_op *op, int slot, const bp__kernel *a, const bp__kernel *b) {
  int ca = choice_rank(op, slot, a), cb = choice_rank(op, slot, b);
  if (ca != cb) return ca < cb;
  size_t pa = prefer_rank(a), pb = prefer_rank(b);
  if (pa != pb) return pa < pb;
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->seq < b->seq;
}

/* Sorts the live kernels of (op, slot), enabled ones only when `enabled`,
 * into out[0 .. n-1]; returns n (at most cap). */
static size_t sorted(const bp_op *op, int slot, bool enabled, bp__kernel **out, size_t cap) {
  size_t n = 0;
  read_prefer();
  for (bp__kernel *k = op->registered[slot]; k && n < cap; k = k->next_reg) {
    if (!bp__kernel_live(k) || (enabled && !k->enabled)) continue;
    size_t i = n++;
    while (i > 0 && before(op, slot, k, out[i - 1])) {
      out[i] = out[i - 1];
      i--;
    }
    out[i] = k;
  }
  return n;
}

/* More candidates than this for one op and device type are not ordered. */

bp__kernel *bp__precedence_order(const bp_op *op, int s) {
  bp__kernel *v[BP__MAX_CANDIDATES];
  size_t n = sorted(op, s, true, v, BP__MAX_CANDIDATES);
  for (size_t i = 0; i < n; i++)
    atomic_store_explicit(&v[i]->next, i + 1 < n ? v[i + 1] : NULL, memory_order_release);
  return n ? v[0] : NULL;
}

bp_status bp__precedence_choose(const bp_op *op, int slot, const char *plugin) {
  size_t i = 0;
  while (i < nchoices && !(choices[i].op == op && choices[i].slot == slot)) i++;
  if (!plugin) {
    if (i < nchoices) choices[i] = choices[--nchoices];
    return BP_OK;
  }
  if (i == nchoices) {
    if (nchoices == choices_cap) {
      size_t cap = choices_cap ? 2 * choices_cap : 8;
      provider_choice *nc = bp__realloc(choices, cap * sizeof *nc);
      if (!nc) return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_set_kernel_provider: out of memory");
      choices = nc;
      choices_cap = cap;
    }
    nchoices++;
  }
  choices[i].op = op;
  choices[i].slot = slot;
  snprintf(choices[i].plugin, sizeof choices[i].plugin, "%s", plugin);
  return BP_OK;
}

bool bp__precedence_named(const bp__kernel *k, const char *plugin) { return named(k, plugin); }

size_t bp__precedence_sorted(const bp_op *op, int slot, bp__kernel **out, size_t cap) {
  return sorted(op, slot, false, out, cap);
}
