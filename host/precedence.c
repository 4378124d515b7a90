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
 * walks (call.c).  Everything here runs under the registry lock.
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
  char plugin[65];
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
#define MAX_CANDIDATES 64

bp__kernel *bp__precedence_order(const bp_op *op, int s) {
  bp__kernel *v[MAX_CANDIDATES];
  size_t n = sorted(op, s, true, v, MAX_CANDIDATES);
  for (size_t i = 0; i < n; i++)
    atomic_store_explicit(&v[i]->next, i + 1 < n ? v[i + 1] : NULL, memory_order_release);
  return n ? v[0] : NULL;
}

BP_API bp_status bp_set_kernel_provider(const bp_op *cop, int32_t device_type,
                                        const char *plugin) {
  bp_op *op = (bp_op *)cop; /* handles are const to callers; the registry owns them */
  int slot = bp__device_slot(device_type);
  char dbuf[32];
  if (slot < 0)
    return bp__error(BP_ERR_DEVICE, "bp_set_kernel_provider: %s cannot have kernels",
                     bp__device_type_label(device_type, dbuf, sizeof dbuf));
  if (plugin && (!*plugin || strlen(plugin) >= sizeof choices[0].plugin))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_set_kernel_provider: the plugin name is %s",
                     *plugin ? "too long" : "empty");
  bp_status st = BP_OK;
  bp__registry_lock();
  if (op && plugin) {
    bool found = false;
    for (const bp__kernel *k = op->registered[slot]; k && !found; k = k->next_reg)
      found = bp__kernel_live(k) && named(k, plugin);
    if (!found) {
      st = bp__error(BP_ERR_NOT_FOUND,
                     "bp_set_kernel_provider: no loaded plugin named '%s' has a kernel for '%s' "
                     "on %s", plugin, op->name,
                     bp__device_type_label(device_type, dbuf, sizeof dbuf));
      goto out;
    }
  }
  size_t i = 0;
  while (i < nchoices && !(choices[i].op == op && choices[i].slot == slot)) i++;
  if (!plugin) {
    if (i < nchoices) choices[i] = choices[--nchoices];
  } else {
    if (i == nchoices) {
      if (nchoices == choices_cap) {
        size_t cap = choices_cap ? 2 * choices_cap : 8;
        provider_choice *nc = bp__realloc(choices, cap * sizeof *nc);
        if (!nc) {
          st = bp__error(BP_ERR_OUT_OF_MEMORY, "bp_set_kernel_provider: out of memory");
          goto out;
        }
        choices = nc;
        choices_cap = cap;
      }
      nchoices++;
    }
    choices[i].op = op;
    choices[i].slot = slot;
    snprintf(choices[i].plugin, sizeof choices[i].plugin, "%s", plugin);
  }
  if (op)
    bp__registry_rebuild_op(op);
  else
    bp__registry_rebuild_all();
out:
  bp__registry_unlock();
  return st;
}

BP_API bp_status bp_set_kernel_enabled(const bp_op *cop, int32_t device_type, bool enabled) {
  if (!cop) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_set_kernel_enabled: op is NULL");
  bp_op *op = (bp_op *)cop;
  int slot = bp__device_slot(device_type);
  char dbuf[32];
  bool any = false;
  bp__registry_lock();
  for (bp__kernel *k = slot >= 0 ? op->registered[slot] : NULL; k; k = k->next_reg) {
    if (!bp__kernel_live(k)) continue;
    k->enabled = enabled;
    any = true;
  }
  if (any) bp__registry_rebuild_op(op);
  bp__registry_unlock();
  if (!any)
    return bp__error(BP_ERR_NOT_FOUND, "bp_set_kernel_enabled: op '%s' has no kernel for %s",
                     op->name, bp__device_type_label(device_type, dbuf, sizeof dbuf));
  return BP_OK;
}

BP_API bp_status bp_op_get_kernel(const bp_op *op, size_t index, bp_kernel_info *out) {
  if (!op || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_kernel: %s is NULL", !op ? "op" : "out_info");
  if (out->struct_size < BP_STRUCT_SIZE(bp_kernel_info, plugin))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_get_kernel: out_info->struct_size is %zu",
                     out->struct_size);
  bp_kernel_info info;
  memset(&info, 0, sizeof info);
  size_t seen = 0;
  bool found = false;
  bp__registry_lock();
  for (int s = 0; s < BP__DEVICE_SLOTS && !found; s++) {
    if (!op->registered[s]) continue;
    bp__kernel *v[MAX_CANDIDATES];
    size_t n = sorted(op, s, false, v, MAX_CANDIDATES);
    if (index >= seen + n) {
      seen += n;
      continue;
    }
    const bp__kernel *k = v[index - seen];
    seen = index + 1;
    found = true;
    info.plugin = bp__plugin_label(k->owner);
    info.dtypes = k->dtypes;
    info.device_type = k->ctx.device_type;
    info.kind = k->kind;
    info.enabled = k->enabled;
    info.priority = k->priority;
    info.active = atomic_load_explicit(&op->dispatch[s], memory_order_relaxed) == k;
  }
  bp__registry_unlock();
  if (!found)
    return bp__error(BP_ERR_NOT_FOUND, "bp_op_get_kernel: op '%s' has %zu kernel%s, index %zu is past them",
                     op->name, seen, seen == 1 ? "" : "s", index);
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = n;
  memcpy(out, &info, n);
  return BP_OK;
}

size_t bp__op_kernel_count(const bp_op *op) {
  size_t n = 0;
  for (int s = 0; s < BP__DEVICE_SLOTS; s++)
    for (const bp__kernel *k = op->registered[s]; k; k = k->next_reg) n += bp__kernel_live(k);
  return n;
}

/* The device types that have an enabled kernel for op, for "no kernel"
 * messages; called from the call path's error branch. */
size_t bp__op_kernel_devices(const bp_op *op, char *buf, size_t n) {
  size_t len = 0, count = 0;
  char dbuf[32];
  buf[0] = '\0';
  bp__registry_lock();
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    const bp__kernel *k = op->registered[s];
    while (k && !(bp__kernel_live(k) && k->enabled)) k = k->next_reg;
    if (!k) continue;
    int w = snprintf(buf + len, n - len, "%s%s", count ? ", " : "",
                     bp__device_type_label(k->ctx.device_type, dbuf, sizeof dbuf));
    if (w > 0 && (size_t)w < n - len) len += (size_t)w;
    count++;
  }
  bp__registry_unlock();
  return count;
}
