/*
 * host/registry.c - the tables of namespaces, operators, kernels and
 * fallbacks, and the dispatch tables the call path reads; register.c holds
 * the registration entry points that fill them during a plugin's setup().
 *
 * Every mutation happens under one mutex.  The call path never takes it: it
 * reads an op's `defined` flag and its published dispatch table with
 * acquire loads.  Registrations made during a plugin's setup() are staged
 * (visible to the registry, not to calls) and published together by
 * bp__registry_commit(); unload unpublishes a plugin's registrations
 * together, and the records are freed after a grace period.
 *
 * Ops are never freed: a handle from bp_op_find() stays valid for the life
 * of the process.  An op whose definer unloads keeps its name and schema
 * (so that a redefinition can be checked against kernels other plugins
 * still hold) and fails calls until it is defined again.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

void bp__registry_lock(void) { pthread_mutex_lock(&reg_lock); }
void bp__registry_unlock(void) { pthread_mutex_unlock(&reg_lock); }

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

static bp_op **ops;          /* in order of first definition */
static size_t nops, ops_cap;
static bp_op **op_hash;      /* open addressing, power-of-two size */
static size_t op_hash_cap;

static bp__ns_entry *namespaces;
static size_t nns, ns_cap;

static bp__kernel *fallbacks[BP__DEVICE_SLOTS];

static uint64_t hash_str(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

bp_op *bp__op_lookup_n(const char *name, size_t n) {
  if (!op_hash_cap) return NULL;
  for (size_t i = hash_str(name, n) & (op_hash_cap - 1);; i = (i + 1) & (op_hash_cap - 1)) {
    bp_op *op = op_hash[i];
    if (!op) return NULL;
    if (strncmp(op->name, name, n) == 0 && op->name[n] == '\0') return op;
  }
}

static bool op_hash_insert(bp_op *op) {
  if ((nops + 1) * 2 > op_hash_cap) {
    size_t cap = op_hash_cap ? op_hash_cap * 2 : 64;
    bp_op **h = bp__calloc(cap, sizeof *h);
    if (!h) return false;
    for (size_t i = 0; i < op_hash_cap; i++) {
      if (!op_hash[i]) continue;
      size_t j = hash_str(op_hash[i]->name, strlen(op_hash[i]->name)) & (cap - 1);
      while (h[j]) j = (j + 1) & (cap - 1);
      h[j] = op_hash[i];
    }
    bp__free(op_hash);
    op_hash = h;
    op_hash_cap = cap;
  }
  size_t j = hash_str(op->name, strlen(op->name)) & (op_hash_cap - 1);
  while (op_hash[j]) j = (j + 1) & (op_hash_cap - 1);
  op_hash[j] = op;
  return true;
}

bp_op *bp__op_create(const char *name, size_t ns_len) {
  if (nops == ops_cap) {
    size_t cap = ops_cap ? ops_cap * 2 : 64;
    bp_op **n = bp__realloc(ops, cap * sizeof *n);
    if (!n) return NULL;
    ops = n;
    ops_cap = cap;
  }
  bp_op *op = bp__calloc(1, sizeof *op);
  if (!op) return NULL;
  op->name = bp__strdup(name);
  if (!op->name || !op_hash_insert(op)) {
    bp__free(op->name);
    bp__free(op);
    return NULL;
  }
  op->ns_len = ns_len;
  op->fast_sig = -1;
  op->device_arg = -1;
  ops[nops++] = op;
  return op;
}

bp__ns_entry *bp__ns_find(const char *ns) {
  for (size_t i = 0; i < nns; i++)
    if (strcmp(namespaces[i].ns, ns) == 0) return &namespaces[i];
  return NULL;
}

bool bp__ns_add(const char *ns, bp__plugin *owner, bool allow_fragments) {
  if (nns == ns_cap) {
    size_t cap = ns_cap ? ns_cap * 2 : 16;
    bp__ns_entry *n = bp__realloc(namespaces, cap * sizeof *n);
    if (!n) return false;
    namespaces = n;
    ns_cap = cap;
  }
  char *copy = bp__strdup(ns);
  if (!copy) return false;
  namespaces[nns].ns = copy;
  namespaces[nns].owner = owner;
  namespaces[nns].allow_fragments = allow_fragments;
  nns++;
  return true;
}

bp__kernel *bp__fallback_at(int slot) { return fallbacks[slot]; }

void bp__fallback_set(int slot, bp__kernel *k) { fallbacks[slot] = k; }

const char *bp__plugin_label(const bp__plugin *p) {
  if (!p) return "(none)";
  if (p->name) return p->name;
  return p->label ? p->label : p->path;
}

static bool live(const bp__kernel *k) { return bp__kernel_live(k); }

/* Recomputes one op's published dispatch table: for each device slot, the
 * first kernel in precedence order, else the device's fallback, else the
 * op's composite. */
static void rebuild_op(bp_op *op) {
  bp__kernel *composite = live(op->composite) ? op->composite : NULL;
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__kernel *k = op->registered[s] ? bp__precedence_order(op, s) : NULL;
    bp__kernel *e = k ? k : live(fallbacks[s]) ? fallbacks[s] : composite;
    atomic_store_explicit(&op->dispatch[s], e, memory_order_release);
  }
}

static void rebuild_all(void) {
  for (size_t i = 0; i < nops; i++) rebuild_op(ops[i]);
}

void bp__registry_rebuild_all(void) { rebuild_all(); }

void bp__registry_rebuild_op(bp_op *op) { rebuild_op(op); }

bool bp__valid_ident(const char *s) {
  if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Commit, remove                                                           */
/* ------------------------------------------------------------------------ */

void bp__registry_commit(bp__plugin *p) {
  pthread_mutex_lock(&reg_lock);
  p->loading = false;
  /* Tables first: an op must not be visible before its kernels are. */
  rebuild_all();
  for (size_t i = 0; i < nops; i++)
    if (ops[i]->def_owner == p) atomic_store_explicit(&ops[i]->defined, true, memory_order_release);
  pthread_mutex_unlock(&reg_lock);
}

/* Garbage is chained through next_reg, which only the registry lock's
 * holder reads and which a removed kernel no longer needs: removing
 * allocates nothing, so an unload cannot fail for memory. */
static void push_garbage(bp__kernel **g, bp__kernel *k) {
  k->next_reg = *g;
  *g = k;
}

static void free_kernel(bp__kernel *k) {
  if (!k) return;
  bp__free(k->dtypes);
  bp__free(k);
}

void bp__registry_remove(bp__plugin *p, bp__kernel **garbage) {
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < nops; i++) {
    bp_op *op = ops[i];
    if (op->def_owner == p) {
      /* Unpublishing `defined` is enough: meta and the schema stay as they
       * are for calls already past the check, until the grace period ends
       * and a redefinition may replace them. */
      atomic_store_explicit(&op->defined, false, memory_order_release);
      op->def_owner = NULL;
      /* The composite belongs to the definition. */
      if (op->composite) push_garbage(garbage, op->composite);
      op->composite = NULL;
    }
    for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
      for (bp__kernel **pk = &op->registered[s]; *pk;) {
        bp__kernel *k = *pk;
        if (k->owner != p) {
          pk = &k->next_reg;
          continue;
        }
        *pk = k->next_reg;
        push_garbage(garbage, k);
      }
    }
  }
  for (int s = 0; s < BP__DEVICE_SLOTS; s++)
    if (fallbacks[s] && fallbacks[s]->owner == p) {
      push_garbage(garbage, fallbacks[s]);
      fallbacks[s] = NULL;
    }
  for (size_t i = 0; i < nns;) {
    if (namespaces[i].owner == p) {
      bp__free(namespaces[i].ns);
      namespaces[i] = namespaces[--nns];
    } else {
      i++;
    }
  }
  rebuild_all();
  pthread_mutex_unlock(&reg_lock);
}

void bp__registry_free_garbage(bp__kernel *garbage) {
  while (garbage) {
    bp__kernel *next = garbage->next_reg;
    free_kernel(garbage);
    garbage = next;
  }
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

bp_status bp__op_find(const char *name, const bp_op **out_op) {
  if (!name || !out_op)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_find: %s is NULL", !name ? "name" : "out_op");
  pthread_mutex_lock(&reg_lock);
  bp_op *op = bp__op_lookup_n(name, strlen(name));
  pthread_mutex_unlock(&reg_lock);
  if (!op) {
    if (!strstr(name, "::"))
      return bp__error(BP_ERR_NOT_FOUND, "bp_op_find: '%s' has no namespace (write 'ns::%s')", name,
                       name);
    return bp__error(BP_ERR_NOT_FOUND, "bp_op_find: no op '%s' is defined", name);
  }
  *out_op = op;
  return BP_OK;
}

size_t bp__op_count(void) {
  pthread_mutex_lock(&reg_lock);
  size_t n = nops;
  pthread_mutex_unlock(&reg_lock);
  return n;
}

const bp_op *bp__op_at(size_t index) {
  pthread_mutex_lock(&reg_lock);
  const bp_op *op = index < nops ? ops[index] : NULL;
  pthread_mutex_unlock(&reg_lock);
  return op;
}

