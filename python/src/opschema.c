/*
 * opschema.c - an Op's schema as the binder and Op.info use it: read
 * through the host's introspection (bp_op_get_arg/ret), copied, and cached
 * until the registry changes through this module; each user holds a
 * reference to the copy it uses.
 */
#include "op.h"

#include <string.h>

/* Advanced by every change to the registry made through this module. */
unsigned long bpy_registry_generation;

/* ---- the schema cache ----------------------------------------------------- */

void bpy_schema_release(op_schema *sc) {
  if (!sc || --sc->refs > 0)
    return;
  for (int32_t i = 0; i < sc->nargs; i++)
    Py_XDECREF(sc->args[i].name);
  for (int i = 0; i < sc->nowned; i++)
    PyMem_Free(sc->owned[i]);
  PyMem_Free(sc);
}

static void *keep_copy(op_schema *sc, const void *src, size_t n) {
  void *p = PyMem_Malloc(n ? n : 1);
  if (!p)
    return NULL;
  memcpy(p, src, n);
  sc->owned[sc->nowned++] = p;
  return p;
}

/* Replaces the host-owned pointers of `a` by copies. */
static int own_strings(op_schema *sc, bp_arg_info *a) {
  const char *s[3] = {a->name, a->type, a->alias_set};
  const char **dst[3] = {&a->name, &a->type, &a->alias_set};
  for (int i = 0; i < 3; i++)
    if (s[i] && !(*dst[i] = keep_copy(sc, s[i], strlen(s[i]) + 1)))
      return -1;
  bp_value *d = &a->default_value;
  if (!(a->flags & BP_ARG_HAS_DEFAULT))
    return 0;
  if (d->tag == BP_TAG_STR && d->u.str)
    return (d->u.str = keep_copy(sc, d->u.str, strlen(d->u.str) + 1)) ? 0
                                                                      : -1;
  if (d->tag == BP_TAG_INT_LIST && d->len)
    return (d->u.ints = keep_copy(sc, d->u.ints, d->len * sizeof(int64_t)))
               ? 0 : -1;
  if (d->tag == BP_TAG_FLOAT_LIST && d->len)
    return (d->u.floats = keep_copy(sc, d->u.floats, d->len * sizeof(double)))
               ? 0 : -1;
  return 0;
}

static op_schema *load_schema(bpy_state *ms, bpy_op *self) {
  bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  bp_status st = bp_op_get_info(self->op, &info);
  if (st != BP_OK)
    return bpy_raise(ms, st), NULL;
  if (!info.defined) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_NOT_FOUND),
                 "%U: the operator is "
                 "not defined now (the plugin that defined it was unloaded)",
                 self->name);
    return NULL;
  }
  if (info.nargs > MAX_ARGS || info.nrets > MAX_RETS) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_UNSUPPORTED),
                 "%U: %d arguments "
                 "and %d results; Python calls take at most %d and %d",
                 self->name, (int)info.nargs, (int)info.nrets, MAX_ARGS,
                 MAX_RETS);
    return NULL;
  }
  op_schema *sc = PyMem_Calloc(1, sizeof *sc);
  if (!sc)
    return (op_schema *)PyErr_NoMemory();
  sc->refs = 1;
  for (int32_t i = 0; i < info.nargs; i++) {
    bp_arg_info *a = &sc->args[i].info;
    a->struct_size = BP_ARG_INFO_STRUCT_SIZE;
    st = bp_op_get_arg(self->op, (size_t)i, a);
    if (st != BP_OK) {
      bpy_raise(ms, st);
      goto fail;
    }
    sc->nargs = i + 1;
    if (own_strings(sc, a) < 0 ||
        !(sc->args[i].name = PyUnicode_InternFromString(a->name)))
      goto fail;
  }
  for (int32_t i = 0; i < info.nrets; i++) {
    bp_arg_info *r = &sc->rets[i].info;
    r->struct_size = BP_ARG_INFO_STRUCT_SIZE;
    st = bp_op_get_ret(self->op, (size_t)i, r);
    if (st != BP_OK) {
      bpy_raise(ms, st);
      goto fail;
    }
    sc->nrets = i + 1;
    sc->alias_rets |= r->alias_set != NULL;
    if (own_strings(sc, r) < 0)
      goto fail;
  }
  sc->npos = info.npositional;
  return sc;
fail:
  if (!PyErr_Occurred())
    PyErr_NoMemory();
  bpy_schema_release(sc);
  return NULL;
}

op_schema *bpy_op_schema(bpy_state *ms, bpy_op *self) {
  if (!self->schema || self->gen != bpy_registry_generation + 1) {
    op_schema *sc = load_schema(ms, self);
    if (!sc)
      return NULL;
    bpy_schema_release(self->schema); /* calls in flight keep theirs */
    self->schema = sc;
    self->gen = bpy_registry_generation + 1;
  }
  self->schema->refs++;
  return self->schema;
}

/* ---- calls ---------------------------------------------------------------- */

/* The schema for a call (a reference) with args/kwargs bound to it, or
 * NULL with an exception set. */
