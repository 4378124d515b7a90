/*
 * host/registry.h - what registry.c's tables give register.c's entry
 * points.  Every function here is called with the registry lock held
 * (bp__registry_lock).
 */
#ifndef BP_HOST_REGISTRY_H
#define BP_HOST_REGISTRY_H

#include "internal.h"

/* A namespace and the plugin that defines it. */
typedef struct bp__ns_entry {
  char *ns;
  bp__plugin *owner;
  bool allow_fragments;
} bp__ns_entry;

/* The op named by the first n bytes of name, or NULL. */
bp_op *bp__op_lookup_n(const char *name, size_t n);
/* A new undefined op named `name` (copied), whose namespace is its first
 * ns_len bytes; NULL when out of memory. */
bp_op *bp__op_create(const char *name, size_t ns_len);
/* The namespace ns, or NULL; adds one (ns copied), false when out of
 * memory. */
bp__ns_entry *bp__ns_find(const char *ns);
bool bp__ns_add(const char *ns, bp__plugin *owner, bool allow_fragments);
/* The fallback kernel of a device slot, or NULL; replaces it. */
bp__kernel *bp__fallback_at(int slot);
void bp__fallback_set(int slot, bp__kernel *k);
/* Whether s is an identifier: [A-Za-z_][A-Za-z0-9_]*. */
bool bp__valid_ident(const char *s);

#endif /* BP_HOST_REGISTRY_H */
