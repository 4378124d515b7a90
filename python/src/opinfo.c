/*
 * opinfo.c - what an Op tells about itself: name, schema, doc, info,
 * kernels and signature (its arguments and results with their defaults).
 */
#include "op.h"

static int info_of(bpy_state *ms, bpy_op *self, bp_op_info *info) {
  info->struct_size = BP_OP_INFO_STRUCT_SIZE;
  bp_status st = bp_op_get_info(self->op, info);
  if (st != BP_OK) {
    bpy_raise(ms, st);
    return -1;
  }
  return 0;
}

static PyObject *get_name(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((bpy_op *)o)->name;
  Py_INCREF(n);
  return n;
}

static PyObject *get_schema(PyObject *o, void *c) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  (void)c;
  bp_op_info info;
  if (info_of(ms, (bpy_op *)o, &info) < 0)
    return NULL;
  return bpy_str(info.schema);
}

static PyObject *get_op_doc(PyObject *o, void *c) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  (void)c;
  bp_op_info info;
  if (info_of(ms, (bpy_op *)o, &info) < 0)
    return NULL;
  return bpy_str(info.doc ? info.doc : "");
}

static PyObject *get_info(PyObject *o, void *c) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  (void)c;
  bp_op_info info;
  if (info_of(ms, (bpy_op *)o, &info) < 0)
    return NULL;
  PyObject *owner = bpy_str(info.owner), *schema = bpy_str(info.schema);
  PyObject *doc = bpy_str(info.doc ? info.doc : "");
  PyObject *r = owner && schema && doc
      ? Py_BuildValue("{s:O,s:O,s:O,s:K,s:O,s:O,s:O,s:i,s:i,s:i}", "owner",
                      owner, "schema", schema, "doc", doc, "flags",
                      (unsigned long long)info.flags, "defined",
                      info.defined ? Py_True : Py_False, "has_meta",
                      info.has_meta ? Py_True : Py_False, "has_composite",
                      info.has_composite ? Py_True : Py_False, "nargs",
                      (int)info.nargs, "nrets", (int)info.nrets,
                      "npositional", (int)info.npositional)
      : NULL;
  Py_XDECREF(owner);
  Py_XDECREF(schema);
  Py_XDECREF(doc);
  return r;
}

static PyObject *kind_str(int32_t k) {
  return PyUnicode_FromString(k == BP_KERNEL_BOXED ? "boxed"
                              : k == BP_KERNEL_UNBOXED ? "unboxed"
                              : k == BP_KERNEL_UNBOXED_FAST ? "unboxed-fast"
                              : k == BP_KERNEL_STRUCTURED ? "structured"
                                                          : "?");
}

static PyObject *get_kernels(PyObject *o, void *c) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  (void)c;
  bpy_op *self = (bpy_op *)o;
  bp_op_info info;
  if (info_of(ms, self, &info) < 0)
    return NULL;
  PyObject *list = PyList_New(0);
  for (int32_t i = 0; list && i < info.nkernels; i++) {
    bp_kernel_info k = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
    if (bp_op_get_kernel(self->op, (size_t)i, &k) != BP_OK)
      continue;
    PyObject *dts;
    if (k.dtypes) {
      dts = PyList_New(0);
      for (const int32_t *d = k.dtypes; dts && *d; d++) {
        const char *dn = bp_dtype_name(*d);
        PyObject *s = dn ? PyUnicode_FromString(dn)
                         : PyUnicode_FromFormat("dtype%d", (int)*d);
        if (bpy_list_add(dts, s) < 0)
          Py_CLEAR(dts);
      }
    } else {
      Py_INCREF(Py_None);
      dts = Py_None;
    }
    const char *dev = bp_device_type_name(k.device_type);
    PyObject *kind = kind_str(k.kind);
    PyObject *plugin = bpy_str(k.plugin ? k.plugin : "");
    PyObject *devname = dev ? bpy_str(dev)
                            : PyUnicode_FromFormat("type %d", (int)k.device_type);
    PyObject *d = dts && kind && plugin && devname
        ? Py_BuildValue("{s:O,s:O,s:i,s:O,s:O,s:i,s:O,s:O}", "plugin", plugin,
                        "device", devname, "device_type", (int)k.device_type,
                        "kind", kind, "dtypes", dts, "priority",
                        (int)k.priority, "active",
                        k.active ? Py_True : Py_False, "enabled",
                        k.enabled ? Py_True : Py_False)
        : NULL;
    Py_XDECREF(dts);
    Py_XDECREF(kind);
    Py_XDECREF(plugin);
    Py_XDECREF(devname);
    if (bpy_list_add(list, d) < 0)
      Py_CLEAR(list);
  }
  return list;
}

/* A bp_value default as a Python value. */
static PyObject *default_value(const bp_value *v) {
  switch (v->tag) {
    case BP_TAG_NONE: Py_RETURN_NONE;
    case BP_TAG_INT: return PyLong_FromLongLong(v->u.i);
    case BP_TAG_FLOAT: return PyFloat_FromDouble(v->u.f);
    case BP_TAG_BOOL: return PyBool_FromLong(v->u.b);
    case BP_TAG_STR: return bpy_str(v->u.str);
    case BP_TAG_SCALAR_TYPE:
      return PyUnicode_FromString(bp_dtype_name((int32_t)v->u.i));
    case BP_TAG_DEVICE: return bpy_device_str(v->u.device);
    case BP_TAG_INT_LIST:
    case BP_TAG_FLOAT_LIST: {
      PyObject *l = PyList_New(v->len);
      for (uint32_t i = 0; l && i < v->len; i++) {
        PyObject *x = v->tag == BP_TAG_INT_LIST
                          ? PyLong_FromLongLong(v->u.ints[i])
                          : PyFloat_FromDouble(v->u.floats[i]);
        if (!x)
          Py_CLEAR(l);
        else
          PyList_SetItem(l, i, x);
      }
      return l;
    }
    default:
      Py_RETURN_NONE;
  }
}

static PyObject *describe(const bp_arg_info *a) {
  PyObject *def = NULL;
  if (a->flags & BP_ARG_HAS_DEFAULT) {
    def = default_value(&a->default_value);
    if (!def)
      return NULL;
  }
  PyObject *d = Py_BuildValue(
      "{s:s,s:s,s:z,s:s,s:i,s:O,s:O,s:O,s:O,s:O}", "name", a->name, "type",
      a->type, "alias_set", a->alias_set, "tag", bp_tag_name(a->tag),
      "list_size", (int)a->list_size, "optional",
      (a->flags & BP_ARG_OPTIONAL) ? Py_True : Py_False, "kwarg_only",
      (a->flags & BP_ARG_KWARG_ONLY) ? Py_True : Py_False, "written",
      (a->flags & BP_ARG_WRITTEN) ? Py_True : Py_False, "has_default",
      def ? Py_True : Py_False, "default", def ? def : Py_None);
  Py_XDECREF(def);
  return d;
}

static PyObject *get_signature(PyObject *o, void *c) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  (void)c;
  op_schema *sc = bpy_op_schema(ms, (bpy_op *)o);
  if (!sc)
    return NULL;
  PyObject *args = PyList_New(sc->nargs), *rets = PyList_New(sc->nrets);
  for (int32_t i = 0; args && rets && i < sc->nargs; i++) {
    PyObject *d = describe(&sc->args[i].info);
    if (!d)
      Py_CLEAR(args);
    else
      PyList_SetItem(args, i, d);
  }
  for (int32_t i = 0; args && rets && i < sc->nrets; i++) {
    PyObject *d = describe(&sc->rets[i].info);
    if (!d)
      Py_CLEAR(rets);
    else
      PyList_SetItem(rets, i, d);
  }
  bpy_schema_release(sc);
  PyObject *r = args && rets ? Py_BuildValue("(OO)", args, rets) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(rets);
  return r;
}

PyGetSetDef bpy_op_getset[] = {
  {"name", get_name, NULL, "The op's full name, 'ns::name[.overload]'.",
   NULL},
  {"schema", get_schema, NULL, "The op's canonical schema text.", NULL},
  {"op_doc", get_op_doc, NULL, "The doc string the op was defined with.",
   NULL},
  {"info", get_info, NULL, "The op's description, a dict.", NULL},
  {"signature", get_signature, NULL,
   "(arguments, returns): lists of dicts with name, type, alias_set, "
   "tag, list_size, optional, kwarg_only, written, has_default, default.",
   NULL},
  {"kernels", get_kernels, NULL,
   "The op's kernels, dicts in precedence order per device type.", NULL},
  {NULL, NULL, NULL, NULL, NULL}
};
