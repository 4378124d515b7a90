/*
 * host/register.c - the registration entry points a plugin's setup()
 * calls through the host table (library, def, impl, fallback,
 * device_type): each checks what it is given, names what is wrong, and
 * stages the registration in registry.c's tables under the registry lock,
 * for bp__registry_commit to publish.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bp_status check_reg(const bp_registrar *reg, const char *what) {
  if (!reg) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: registrar is NULL", what);
  if (!reg->active)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': %s called outside setup(); registration is only allowed there",
                     bp__plugin_label(reg->plugin), what);
  return BP_OK;
}

bp_status bp__reg_library(bp_registrar *reg, const bp_library_def *def, bp_library **out) {
  bp_status st = check_reg(reg, "library");
  if (st) return st;
  const char *who = bp__plugin_label(reg->plugin);
  if (!def || !out)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': library: %s is NULL", who,
                     !def ? "def" : "out_lib");
  if (def->struct_size < BP_STRUCT_SIZE(bp_library_def, flags))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': library: def->struct_size is %zu, expected at least %zu", who,
                     def->struct_size, BP_STRUCT_SIZE(bp_library_def, flags));
  if (!bp__valid_ident(def->ns))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': library: namespace '%s' is not an identifier", who,
                     def->ns ? def->ns : "(null)");
  if (def->kind < BP_LIBRARY_DEF || def->kind > BP_LIBRARY_IMPL)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': library '%s': kind %d is not DEF (1), FRAGMENT (2) or IMPL (3)",
                     who, def->ns, (int)def->kind);
  /* Libraries are never freed (see internal.h), so a record that an
   * earlier setup() opened with the same namespace and kind is reused:
   * reloading a plugin allocates none, and a handle kept from that setup()
   * becomes this one, which may do the same things. */
  bp_library *lib = NULL;
  for (bp_library *l = reg->libs; l && !lib; l = l->next)
    if (l->generation != reg->generation && l->kind == def->kind && strcmp(l->ns, def->ns) == 0)
      lib = l;
  const bool reused = lib != NULL;
  char *ns = NULL;
  if (!reused) {
    lib = bp__calloc(1, sizeof *lib);
    ns = bp__strdup(def->ns);
    if (!lib || !ns) {
      bp__free(lib);
      bp__free(ns);
      return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': library '%s': out of memory", who,
                       def->ns);
    }
  }
  bp__registry_lock();
  bp__ns_entry *e = bp__ns_find(def->ns);
  if (def->kind == BP_LIBRARY_DEF) {
    if (e && e->owner != reg->plugin) {
      st = bp__error(BP_ERR_ALREADY_EXISTS,
                     "plugin '%s': namespace '%s' is already defined by plugin '%s'; to register "
                     "kernels for its ops, open it with kind BP_LIBRARY_IMPL", who, def->ns,
                     bp__plugin_label(e->owner));
    } else if (!e) {
      if (!bp__ns_add(def->ns, reg->plugin, (def->flags & BP_LIBRARY_ALLOW_FRAGMENTS) != 0))
        st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': library '%s': out of memory", who, def->ns);
    } else if (def->flags & BP_LIBRARY_ALLOW_FRAGMENTS) {
      e->allow_fragments = true;
    }
  } else if (def->kind == BP_LIBRARY_FRAGMENT) {
    if (!e)
      st = bp__error(BP_ERR_NOT_FOUND,
                     "plugin '%s': cannot add a fragment to namespace '%s': no plugin defines it",
                     who, def->ns);
    else if (e->owner != reg->plugin && !e->allow_fragments)
      st = bp__error(BP_ERR_UNSUPPORTED,
                     "plugin '%s': namespace '%s' (defined by plugin '%s') does not accept fragments",
                     who, def->ns, bp__plugin_label(e->owner));
  }
  bp__registry_unlock();
  if (st) {
    if (!reused) {
      bp__free(lib);
      bp__free(ns);
    }
    return st;
  }
  lib->generation = reg->generation;
  if (!reused) {
    lib->reg = reg;
    lib->ns = ns;
    lib->kind = def->kind;
    lib->next = reg->libs;
    reg->libs = lib;
  }
  *out = lib;
  return BP_OK;
}

static bp_status check_lib(const bp_library *lib, const char *what) {
  if (!lib) return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: library is NULL", what);
  bp_status st = check_reg(lib->reg, what);
  if (st) return st;
  if (lib->generation != lib->reg->generation)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': %s called with a library from an earlier setup(); libraries "
                     "are valid only in the setup() that opened them",
                     bp__plugin_label(lib->reg->plugin), what);
  return BP_OK;
}

/* Resolves "name[.overload]" or "ns::name[.overload]" in lib's namespace
 * into "ns::name[.overload]" in buf. */
static bp_status qualify(const bp_library *lib, const char *op, char *buf, size_t n,
                         const char *what) {
  const char *who = bp__plugin_label(lib->reg->plugin);
  if (!op || !*op)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': %s: op name is empty", who, what);
  const char *sep = strstr(op, "::");
  if (sep) {
    size_t nl = (size_t)(sep - op);
    if (nl != strlen(lib->ns) || strncmp(op, lib->ns, nl) != 0)
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "plugin '%s': %s: op '%s' is not in the library's namespace '%s'", who, what,
                       op, lib->ns);
    if ((size_t)snprintf(buf, n, "%s", op) >= n)
      return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': %s: op name '%s' is too long", who,
                       what, op);
  } else if ((size_t)snprintf(buf, n, "%s::%s", lib->ns, op) >= n) {
    return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': %s: op name '%s' is too long", who, what,
                     op);
  }
  return BP_OK;
}

static bool op_has_foreign_kernels(const bp_op *op, const bp__plugin *p, const bp__plugin **who) {
  for (int s = 0; s < BP__DEVICE_SLOTS; s++)
    for (const bp__kernel *k = op->registered[s]; k; k = k->next_reg)
      if (k->owner != p) {
        *who = k->owner;
        return true;
      }
  return false;
}

static bp__kernel *kernel_new(bp__plugin *owner, const bp_op *op, int kind, void *user_data,
                              int32_t device_type) {
  bp__kernel *k = bp__calloc(1, sizeof *k);
  if (!k) return NULL;
  k->ctx.struct_size = BP_KERNEL_CTX_STRUCT_SIZE;
  k->ctx.host = owner->host;
  k->ctx.op = op;
  k->ctx.op_name = op ? op->name : NULL;
  k->ctx.user_data = user_data;
  k->ctx.device_type = device_type;
  k->kind = kind;
  k->owner = owner;
  k->enabled = true;
  k->dtype_refused = 0;
  return k;
}

bp_status bp__reg_def(bp_library *lib, const bp_op_def *def) {
  bp_status st = check_lib(lib, "def");
  if (st) return st;
  bp__plugin *p = lib->reg->plugin;
  const char *who = bp__plugin_label(p);
  if (!def) return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': def: def is NULL", who);
  if (def->struct_size < BP_STRUCT_SIZE(bp_op_def, schema))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': def: def->struct_size is %zu, expected at least %zu", who,
                     def->struct_size, BP_STRUCT_SIZE(bp_op_def, schema));
  if (lib->kind == BP_LIBRARY_IMPL)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': def '%s': library '%s' is an IMPL library; defining needs DEF or "
                     "FRAGMENT", who, def->schema ? def->schema : "(null)", lib->ns);
  if (!def->schema)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': def in '%s': schema is NULL", who, lib->ns);
  /* Fields past schema exist only if the plugin's struct covers them. */
  uint64_t flags = BP_HAS_FIELD(def, bp_op_def, flags) ? def->flags : 0;
  bp_meta_fn meta = BP_HAS_FIELD(def, bp_op_def, meta) ? def->meta : NULL;
  bp_boxed_kernel composite = BP_HAS_FIELD(def, bp_op_def, composite) ? def->composite : NULL;
  void *ud = BP_HAS_FIELD(def, bp_op_def, user_data) ? def->user_data : NULL;
  const char *doc = BP_HAS_FIELD(def, bp_op_def, doc) ? def->doc : NULL;
  uint32_t since = BP_HAS_FIELD(def, bp_op_def, op_set_version) ? def->op_set_version : 0;
  /* Only the host's own core library says which op-set version an op
   * belongs to: a plugin cannot make its op a core op. */
  if (since && !(p->builtin && strcmp(lib->ns, "core") == 0))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': def '%s': op_set_version is %u, but only the host's core "
                     "library sets it (leave it 0)", who, def->schema, since);
  if (since > BP_CORE_OP_SET_VERSION)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': def '%s': op_set_version %u is past this host's core op set %d",
                     who, def->schema, since, BP_CORE_OP_SET_VERSION);
  if (flags & ~(uint64_t)(BP_OP_NONDETERMINISTIC | BP_OP_MIXED_DEVICES))
    return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': def '%s': unknown flags 0x%llx", who,
                     def->schema, (unsigned long long)flags);

  char err[256];
  bp__schema *schema = NULL;
  st = bp__schema_parse(def->schema, &schema, err, sizeof err);
  if (st)
    return bp__error(st, "plugin '%s': def in '%s': schema '%s': %s", who, lib->ns, def->schema, err);
  if (schema->ns && strcmp(schema->ns, lib->ns) != 0) {
    st = bp__error(BP_ERR_INVALID_ARGUMENT,
                   "plugin '%s': def '%s': namespace '%s' is not the library's namespace '%s'", who,
                   def->schema, schema->ns, lib->ns);
    bp__schema_free(schema);
    return st;
  }
  if (!schema->ns) {
    schema->ns = bp__strdup(lib->ns);
    if (!schema->ns) {
      bp__schema_free(schema);
      return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': def: out of memory", who);
    }
  }
  if (schema->nargs > BP__MAX_ARGS || schema->nrets > BP__MAX_RETS) {
    st = bp__error(BP_ERR_UNSUPPORTED,
                   "plugin '%s': def '%s': %zu arguments and %zu returns exceed the limits of %d and %d",
                   who, def->schema, schema->nargs, schema->nrets, BP__MAX_ARGS, BP__MAX_RETS);
    bp__schema_free(schema);
    return st;
  }
  char name[512];
  if ((size_t)snprintf(name, sizeof name, "%s::%s%s%s", lib->ns, schema->name,
                       schema->overload[0] ? "." : "", schema->overload) >= sizeof name) {
    /* impl() and bp_op_find() could never name a truncated op. */
    st = bp__error(BP_ERR_INVALID_ARGUMENT,
                   "plugin '%s': def in '%s': op name '%s::%s%s%s' is too long (at most %zu "
                   "characters with its namespace)", who, lib->ns, lib->ns, schema->name,
                   schema->overload[0] ? "." : "", schema->overload, sizeof name - 1);
    bp__schema_free(schema);
    return st;
  }
  size_t tlen = bp__schema_format(schema, true, NULL, 0);
  char *text = bp__malloc(tlen + 1);
  char *doc_copy = bp__strdup(doc ? doc : "");
  bp__kernel *comp = NULL;
  if (text) bp__schema_format(schema, true, text, tlen + 1);

  bp__registry_lock();
  bp_op *op = bp__op_lookup_n(name, strlen(name));
  const bp__plugin *other = NULL;
  if (!text || !doc_copy) {
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': def '%s': out of memory", who, name);
  } else if (!op && !(op = bp__op_create(name, strlen(lib->ns)))) {
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': def '%s': out of memory", who, name);
  } else if (op->def_owner) {
    st = op->def_owner == p
             ? bp__error(BP_ERR_ALREADY_EXISTS, "plugin '%s': op '%s' is defined twice", who, name)
             : bp__error(BP_ERR_ALREADY_EXISTS, "plugin '%s': op '%s' is already defined by plugin '%s'",
                         who, name, bp__plugin_label(op->def_owner));
  } else if (op->schema_text && strcmp(op->schema_text, text) != 0 &&
             op_has_foreign_kernels(op, p, &other)) {
    st = bp__error(BP_ERR_ALREADY_EXISTS,
                   "plugin '%s': op '%s' is being redefined as '%s', but plugin '%s' still has "
                   "kernels for its earlier schema '%s'", who, name, text, bp__plugin_label(other),
                   op->schema_text);
  } else if (composite && !(comp = kernel_new(p, op, BP__ENTRY_COMPOSITE, ud, BP_DEVICE_INVALID))) {
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': def '%s': out of memory", who, name);
  }
  if (st) {
    bp__registry_unlock();
    bp__free(text);
    bp__free(doc_copy);
    bp__schema_free(schema);
    return st;
  }
  /* The op is undefined here, so no call reads these fields. */
  bp__schema *old_schema = op->schema;
  char *old_text = op->schema_text;
  op->schema = schema;
  op->schema_text = text;
  st = bp__op_prepare(op);
  if (!st && !bp__op_type_texts(op))
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': def '%s': out of memory", who, name);
  if (st) {
    op->schema = old_schema;
    op->schema_text = old_text;
    if (old_schema) bp__op_prepare(op);
    bp__registry_unlock();
    bp__free(text);
    bp__free(doc_copy);
    bp__free(comp);
    bp__schema_free(schema);
    return st;
  }
  bp__schema_free(old_schema);
  bp__free(old_text);
  bp__free(op->doc);
  op->doc = doc_copy;
  op->flags = flags;
  op->op_set_version = since;
  op->meta = meta;
  op->meta_ctx.struct_size = BP_KERNEL_CTX_STRUCT_SIZE;
  op->meta_ctx.host = p->host;
  op->meta_ctx.op = op;
  op->meta_ctx.op_name = op->name;
  op->meta_ctx.user_data = ud;
  op->meta_ctx.device_type = BP_DEVICE_INVALID;
  if (comp) comp->boxed = composite;
  op->composite = comp;
  op->def_owner = p;
  if (!p->loading) {
    atomic_store_explicit(&op->defined, true, memory_order_release);
    bp__registry_rebuild_op(op);
  }
  bp__registry_unlock();
  return BP_OK;
}

static bp_status copy_dtypes(const int32_t *in, int32_t **out, const char *who, const char *op) {
  *out = NULL;
  if (!in) return BP_OK;
  size_t n = 0;
  while (in[n] != BP_DTYPE_INVALID) {
    if (!bp_dtype_name(in[n]))
      return bp__error(BP_ERR_TYPE, "plugin '%s': impl '%s': dtypes[%zu] = %d is not a bp_dtype",
                       who, op, n, (int)in[n]);
    if (++n > 64)
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "plugin '%s': impl '%s': dtypes has no BP_DTYPE_INVALID terminator in 64 entries",
                       who, op);
  }
  *out = bp__malloc((n + 1) * sizeof **out);
  if (!*out) return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': impl '%s': out of memory", who, op);
  memcpy(*out, in, (n + 1) * sizeof **out);
  return BP_OK;
}

static bool has_kernel_from(const bp_op *op, int slot, const bp__plugin *p) {
  for (const bp__kernel *k = op->registered[slot]; k; k = k->next_reg)
    if (k->owner == p) return true;
  return false;
}

static uint32_t dtype_mask(const int32_t *dtypes) {
  if (!dtypes) return UINT32_MAX;
  uint32_t m = 0;
  for (const int32_t *d = dtypes; *d != BP_DTYPE_INVALID; d++) m |= bp__dtype_bit(*d);
  return m;
}

/* Registration order of kernels (registry lock). */
static uint64_t kernel_seq;

/* Whether op can have a structured kernel: a meta function, and results
 * that are all plain Tensors (no alias, list or optional).  Else says why
 * into why. */
static bool structured_ok(const bp_op *op, char *why, size_t n) {
  if (!op->meta) {
    snprintf(why, n, "'%s' has none", op->name);
    return false;
  }
  if (op->nrets == 0) {
    snprintf(why, n, "'%s' returns nothing", op->name);
    return false;
  }
  for (size_t j = 0; j < op->schema->nrets; j++) {
    const bp__arg *r = &op->schema->rets[j];
    if (r->type != BP__T_TENSOR || r->is_list || r->optional || r->alias_set) {
      snprintf(why, n, "result #%zu of '%s' is not (%s)", j, op->schema_text,
               r->alias_set ? "it aliases an argument" : "it is not a plain Tensor");
      return false;
    }
  }
  return true;
}

bp_status bp__reg_impl(bp_library *lib, const bp_kernel_def *kd) {
  bp_status st = check_lib(lib, "impl");
  if (st) return st;
  bp__plugin *p = lib->reg->plugin;
  const char *who = bp__plugin_label(p);
  if (!kd) return bp__error(BP_ERR_INVALID_ARGUMENT, "plugin '%s': impl: kernel is NULL", who);
  if (kd->struct_size < BP_STRUCT_SIZE(bp_kernel_def, user_data))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': impl: kernel->struct_size is %zu, expected at least %zu", who,
                     kd->struct_size, BP_STRUCT_SIZE(bp_kernel_def, user_data));
  char name[512], dbuf[32];
  st = qualify(lib, kd->op, name, sizeof name, "impl");
  if (st) return st;
  const char *dev = bp__device_type_label(kd->device_type, dbuf, sizeof dbuf);
  if ((kd->boxed == NULL) == (kd->unboxed == NULL))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': impl '%s' for %s: set exactly one of boxed and unboxed (%s given)",
                     who, name, dev, kd->boxed ? "both" : "neither");
  int slot = bp__device_slot(kd->device_type);
  if (slot < 0)
    return bp__error(BP_ERR_DEVICE, "plugin '%s': impl '%s': %s cannot have kernels", who, name, dev);
  if (!bp_device_type_name(kd->device_type))
    return bp__error(BP_ERR_DEVICE,
                     "plugin '%s': impl '%s': device type %d is not registered: no plugin "
                     "registered a device type with that code (register one with "
                     "host->device_type() and use the code it returns)",
                     who, name, (int)kd->device_type);
  /* Flags: a plugin built before ABI 1.2 could not know any, so what it
   * left there is ignored, as its host did. */
  uint32_t kflags = p->abi_minor >= 2 ? kd->flags : 0;
  if (kflags & ~(uint32_t)BP_KERNEL_DEF_STRUCTURED)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': impl '%s' for %s: unknown flags 0x%x (this host knows 0x%x)", who,
                     name, dev, (unsigned)(kflags & ~(uint32_t)BP_KERNEL_DEF_STRUCTURED),
                     (unsigned)BP_KERNEL_DEF_STRUCTURED);
  bool structured = (kflags & BP_KERNEL_DEF_STRUCTURED) != 0;
  if (structured && !kd->boxed)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': impl '%s' for %s: BP_KERNEL_DEF_STRUCTURED is for boxed kernels, "
                     "and this one is unboxed", who, name, dev);
  int32_t *dtypes = NULL;
  st = copy_dtypes(BP_HAS_FIELD(kd, bp_kernel_def, dtypes) ? kd->dtypes : NULL, &dtypes, who, name);
  if (st) return st;

  bp__registry_lock();
  bp_op *op = bp__op_lookup_n(name, strlen(name));
  bp__kernel *k = NULL;
  char why[160];
  if (!op || !op->def_owner) {
    st = bp__error(BP_ERR_NOT_FOUND,
                   "plugin '%s': impl '%s' for %s: the op is not defined (define it first, or load "
                   "the plugin that defines it)", who, name, dev);
  } else if (has_kernel_from(op, slot, p)) {
    st = bp__error(BP_ERR_ALREADY_EXISTS,
                   "plugin '%s': impl '%s' for %s: the plugin registered a kernel for it already "
                   "(only this second kernel is refused)", who, name, dev);
  } else if (structured && !structured_ok(op, why, sizeof why)) {
    st = bp__error(BP_ERR_INVALID_ARGUMENT,
                   "plugin '%s': impl '%s' for %s: BP_KERNEL_DEF_STRUCTURED needs an op with a meta "
                   "function whose results are all plain Tensors, and %s", who, name, dev, why);
  } else if (kd->unboxed && !op->cif_ok) {
    st = bp__error(BP_ERR_UNSUPPORTED,
                   "plugin '%s': impl '%s': the schema '%s' cannot be called unboxed; register a "
                   "boxed kernel", who, name, op->schema_text);
  } else if (!(k = kernel_new(p, op,
                              structured  ? BP_KERNEL_STRUCTURED
                              : kd->boxed ? BP_KERNEL_BOXED
                                          : BP_KERNEL_UNBOXED,
                              kd->user_data, kd->device_type))) {
    st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': impl '%s': out of memory", who, name);
  }
  if (st) {
    bp__registry_unlock();
    bp__free(dtypes);
    return st;
  }
  k->boxed = kd->boxed;
  k->unboxed = kd->unboxed;
  k->dtypes = dtypes;
  k->dtype_refused = ~dtype_mask(dtypes);
  /* BP__RESULTS_BIT stays only where the call's result dtypes must be
   * checked before the kernel runs: a kernel that declares a list, for an
   * op whose meta function gives them.  A structured kernel checks them
   * itself where the host runs the meta function anyway (call.c). */
  if (structured || !op->meta) k->dtype_refused &= ~BP__RESULTS_BIT;
  k->priority = BP_HAS_FIELD(kd, bp_kernel_def, priority) ? kd->priority : BP_PRIORITY_DEFAULT;
  k->seq = ++kernel_seq;
  if (k->unboxed && op->fast_sig >= 0) {
    const char *off = getenv("BP_DISABLE_FASTPATH");
    if (!off || !*off || *off == '0') {
      k->fast = bp__fast_lookup(op->fast_sig);
      if (k->fast) k->kind = BP_KERNEL_UNBOXED_FAST;
    }
  }
  k->next_reg = op->registered[slot];
  op->registered[slot] = k;
  if (!p->loading) bp__registry_rebuild_op(op);
  bp__registry_unlock();
  return BP_OK;
}

bp_status bp__reg_fallback(bp_registrar *reg, const bp_fallback_def *fd) {
  bp_status st = check_reg(reg, "fallback");
  if (st) return st;
  const char *who = bp__plugin_label(reg->plugin);
  char dbuf[32];
  if (!fd || fd->struct_size < BP_STRUCT_SIZE(bp_fallback_def, fn) || !fd->fn)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "plugin '%s': fallback: %s", who,
                     !fd ? "fallback is NULL"
                         : !fd->fn ? "fn is NULL" : "struct_size is too small");
  int slot = bp__device_slot(fd->device_type);
  const char *dev = bp__device_type_label(fd->device_type, dbuf, sizeof dbuf);
  if (slot < 0)
    return bp__error(BP_ERR_DEVICE, "plugin '%s': fallback: %s cannot have a fallback", who, dev);
  if (!bp_device_type_name(fd->device_type))
    return bp__error(BP_ERR_DEVICE,
                     "plugin '%s': fallback: device type %d is not registered: no plugin "
                     "registered a device type with that code (register one with "
                     "host->device_type() and use the code it returns)",
                     who, (int)fd->device_type);
  bp__kernel *k = kernel_new(reg->plugin, NULL, BP__ENTRY_FALLBACK,
                             BP_HAS_FIELD(fd, bp_fallback_def, user_data) ? fd->user_data : NULL,
                             fd->device_type);
  if (!k) return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': fallback: out of memory", who);
  k->boxed = fd->fn;
  bp__registry_lock();
  if (bp__fallback_at(slot)) {
    st = bp__error(BP_ERR_ALREADY_EXISTS, "plugin '%s': fallback for %s: plugin '%s' already has one",
                   who, dev, bp__plugin_label(bp__fallback_at(slot)->owner));
    bp__registry_unlock();
    bp__free(k);
    return st;
  }
  bp__fallback_set(slot, k);
  if (!reg->plugin->loading) bp__registry_rebuild_all();
  bp__registry_unlock();
  return BP_OK;
}

bp_status bp__reg_device_type(bp_registrar *reg, const bp_device_iface *iface, int32_t *out) {
  bp_status st = check_reg(reg, "device_type");
  if (st) return st;
  st = bp__device_register(reg->plugin, iface, out);
  if (st) {
    /* Prefix the plugin so the message says who asked. */
    char msg[800];
    snprintf(msg, sizeof msg, "%s", bp_last_error());
    return bp__error(st, "plugin '%s': %s", bp__plugin_label(reg->plugin), msg);
  }
  return BP_OK;
}

