/*
 * module.c - the _backplane extension module: plugins, devices, ops by
 * name, tensors from DLPack, and the registration of torch.
 *
 * The package backplane (python/backplane/) wraps these in its Python
 * API; they are not meant to be called directly.
 */
#include "ext.h"

#include <stddef.h>
#include <string.h>

static void registry_changed(void) {
  bpy_registry_generation++;
}

static PyObject *py_version(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyUnicode_FromString(bp_version());
}

static PyObject *py_abi_version(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  uint32_t major = 0, minor = 0;
  bp_abi_version(&major, &minor);
  return Py_BuildValue("(II)", major, minor);
}

static PyObject *py_load(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *path_obj;
  if (!PyArg_ParseTuple(args, "O&:load", PyUnicode_FSConverter, &path_obj))
    return NULL;
  bp_plugin *p = NULL;
  bp_status st;
  const char *path = PyBytes_AsString(path_obj);
  Py_BEGIN_ALLOW_THREADS
  st = bp_plugin_load(path, &p);
  Py_END_ALLOW_THREADS
  Py_DECREF(path_obj);
  registry_changed();
  if (st != BP_OK)
    return bpy_raise(ms, st);
  for (size_t i = 0, n = bp_plugin_count(); i < n; i++)
    if (bp_plugin_at(i) == p)
      return PyLong_FromSize_t(i);
  return bpy_raise_msg(ms, BP_ERR_INTERNAL,
                       "load: the loaded plugin is not "
                       "among the host's plugins");
}

static PyObject *py_discover(PyObject *self, PyObject *noargs) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  (void)noargs;
  size_t loaded = 0;
  bp_status st;
  Py_BEGIN_ALLOW_THREADS
  st = bp_plugin_discover(&loaded);
  Py_END_ALLOW_THREADS
  registry_changed();
  if (st != BP_OK)
    return bpy_raise(ms, st);
  return PyLong_FromSize_t(loaded);
}

static bp_plugin *plugin_arg(PyObject *args, const char *fmt) {
  Py_ssize_t index;
  if (!PyArg_ParseTuple(args, fmt, &index))
    return NULL;
  bp_plugin *p = index >= 0 ? bp_plugin_at((size_t)index) : NULL;
  if (!p)
    PyErr_Format(PyExc_IndexError, "no plugin #%zd (the host knows %zu)",
                 index, bp_plugin_count());
  return p;
}

static PyObject *py_unload(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  bp_plugin *p = plugin_arg(args, "n:unload");
  if (!p)
    return NULL;
  bp_status st;
  Py_BEGIN_ALLOW_THREADS
  st = bp_plugin_unload(p);
  Py_END_ALLOW_THREADS
  registry_changed();
  if (st != BP_OK)
    return bpy_raise(ms, st);
  Py_RETURN_NONE;
}

static PyObject *py_plugin_count(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyLong_FromSize_t(bp_plugin_count());
}

static PyObject *py_plugin_info(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  bp_plugin *p = plugin_arg(args, "n:plugin_info");
  if (!p)
    return NULL;
  bp_plugin_info i = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
  bp_status st = bp_plugin_get_info(p, &i);
  if (st != BP_OK)
    return bpy_raise(ms, st);
  PyObject *d = PyDict_New();
  if (!d)
    return NULL;
  struct { const char *k; PyObject *v; } items[] = {
    {"path", bpy_str(i.path)},
    {"name", bpy_str(i.name)},
    {"vendor", bpy_str(i.vendor)},
    {"version", bpy_str(i.version)},
    {"abi", Py_BuildValue("(II)", i.abi_major, i.abi_minor)},
    {"op_set_version", PyLong_FromUnsignedLong(i.op_set_version)},
    {"origin", PyUnicode_FromString(bp_plugin_origin_str(i.origin))},
    {"state", PyUnicode_FromString(bp_plugin_state_str(i.state))},
    {"status", PyUnicode_FromString(bp_status_str(i.status))},
    {"error", bpy_str(i.error)},
  };
  int ok = 1;
  for (size_t k = 0; k < sizeof items / sizeof items[0]; k++) {
    if (!items[k].v || PyDict_SetItemString(d, items[k].k, items[k].v) < 0)
      ok = 0;
    Py_XDECREF(items[k].v);
  }
  if (!ok) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

static PyObject *device_dict(bp_device dev) {
  bp_device_props props = {.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE};
  if (bp_device_properties(dev, &props) != BP_OK)
    PyOS_snprintf(props.name, sizeof props.name, "(%s)", bp_last_error());
  props.name[sizeof props.name - 1] = '\0';
  PyObject *label = bpy_device_str(dev);
  PyObject *name = bpy_str(props.name);
  PyObject *d = label && name
      ? Py_BuildValue("{s:O,s:i,s:i,s:O,s:K,s:L,s:(ii)}", "device", label,
                      "type", (int)dev.type, "index", (int)dev.index, "name",
                      name, "total_memory",
                      (unsigned long long)props.total_memory, "compute_units",
                      (long long)props.compute_units, "arch",
                      (int)props.arch_major, (int)props.arch_minor)
      : NULL;
  Py_XDECREF(label);
  Py_XDECREF(name);
  return d;
}

/* Device-type codes in order: the fixed ones, then runtime vendor codes
 * (assigned upwards from BP_DEVICE_DYNAMIC_FIRST), as bp-info lists them. */
static int32_t next_type(int32_t type) {
  type++;
  return type == 64 ? BP_DEVICE_DYNAMIC_FIRST : type;
}

#define LAST_TYPE (BP_DEVICE_DYNAMIC_FIRST + 64)

static PyObject *py_devices(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  PyObject *list = PyList_New(0);
  for (int32_t type = 1; list && type < LAST_TYPE; type = next_type(type)) {
    int32_t count = 0;
    if (bp_device_count(type, &count) != BP_OK)
      continue;
    for (int32_t i = 0; list && i < count; i++) {
      PyObject *d = device_dict(bp_device_make(type, i));
      if (bpy_list_add(list, d) < 0)
        Py_CLEAR(list);
    }
  }
  return list;
}

static PyObject *py_device_types(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  PyObject *list = PyList_New(0);
  for (int32_t type = 1; list && type < LAST_TYPE; type = next_type(type)) {
    int32_t count = 0;
    if (bp_device_count(type, &count) != BP_OK)
      continue;
    PyObject *name = bpy_str(bp_device_type_name(type));
    PyObject *t = name ? Py_BuildValue("(iOi)", (int)type, name, (int)count)
                       : NULL;
    Py_XDECREF(name);
    if (bpy_list_add(list, t) < 0)
      Py_CLEAR(list);
  }
  return list;
}

static PyObject *py_op_names(PyObject *self, PyObject *args) {
  (void)self;
  int all = 0;
  if (!PyArg_ParseTuple(args, "|p:op_names", &all))
    return NULL;
  PyObject *list = PyList_New(0);
  for (size_t i = 0, n = bp_op_count(); list && i < n; i++) {
    bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    if (bp_op_get_info(bp_op_at(i), &info) != BP_OK ||
        (!info.defined && !all))
      continue;
    PyObject *s = bpy_str(info.name);
    if (bpy_list_add(list, s) < 0)
      Py_CLEAR(list);
  }
  return list;
}

static PyObject *py_ndarray_in_place(PyObject *self, PyObject *noargs) {
  (void)noargs;
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  return PyBool_FromLong(bpy_ndarray_mirror(ms));
}

static PyObject *py_live_tensor_count(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyLong_FromLongLong(bp_live_tensor_count());
}

static PyObject *py_from_dlpack(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *obj;
  if (!PyArg_ParseTuple(args, "O:from_dlpack", &obj))
    return NULL;
  if (bpy_tensor_check(ms, obj)) {
    Py_INCREF(obj);
    return obj;
  }
  /* As writable memory where the source allows it; else read-only (a
   * read-only or broadcast NumPy array), which the Tensor remembers. */
  bp_tensor *t = NULL;
  int readonly = 0;
  int once = PyCapsule_CheckExact(obj); /* a capsule is consumed once */
  if (bpy_to_tensor(ms, obj, "from_dlpack", !once, NULL, &t) < 0) {
    if (once)
      return NULL;
    PyErr_Clear(); /* read-only, or refused again, with its reason, below */
    if (bpy_to_tensor(ms, obj, "from_dlpack", 0, NULL, &t) < 0)
      return NULL;
    readonly = 1;
  }
  PyObject *r = bpy_tensor_wrap(ms, t);
  if (r)
    ((bpy_tensor *)r)->readonly = readonly;
  return r;
}

static PyObject *py_empty(PyObject *self, PyObject *args, PyObject *kw) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  static char *names[] = {"shape", "dtype", "device", NULL};
  PyObject *shape, *dtype_obj = NULL, *device_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:empty", names, &shape,
                                   &dtype_obj, &device_obj))
    return NULL;
  int64_t sizes[BP_MAX_NDIM];
  int32_t n = 0;
  if (bpy_read_int64s(ms, shape, sizes, BP_MAX_NDIM, &n, "empty", "shape") < 0)
    return NULL;
  int32_t dtype = BP_FLOAT32;
  bp_device dev = BP_CPU;
  if (dtype_obj && dtype_obj != Py_None &&
      bpy_to_dtype(ms, dtype_obj, &dtype) < 0)
    return NULL;
  if (device_obj && device_obj != Py_None &&
      bpy_to_device(ms, device_obj, &dev) < 0)
    return NULL;
  bp_tensor *t = NULL;
  bp_status st = bp_tensor_empty(dev, dtype, n, n ? sizes : NULL, &t);
  if (st != BP_OK)
    return bpy_raise(ms, st);
  return bpy_tensor_wrap(ms, t);
}

static PyObject *py_dtype_code(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *obj;
  int32_t code;
  if (!PyArg_ParseTuple(args, "O:dtype_code", &obj) ||
      bpy_to_dtype(ms, obj, &code) < 0)
    return NULL;
  return PyLong_FromLong(code);
}

static PyObject *py_device_synchronize(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *obj;
  bp_device d;
  if (!PyArg_ParseTuple(args, "O:synchronize", &obj) ||
      bpy_to_device(ms, obj, &d) < 0)
    return NULL;
  bp_status st;
  Py_BEGIN_ALLOW_THREADS
  st = bp_device_synchronize(d);
  Py_END_ALLOW_THREADS if (st != BP_OK) return bpy_raise(ms, st);
  Py_RETURN_NONE;
}

static PyObject *py_plugin_dir(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyUnicode_FromString(bp_plugin_dir());
}

/* to_torch(tensor): a backplane.Tensor as a torch.Tensor, sharing memory
 * (bool through the uint8 detour that torch before 2.1 needs). */
static PyObject *py_to_torch(PyObject *self, PyObject *arg) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  if (!bpy_tensor_check(ms, arg))
    return PyErr_Format(PyExc_TypeError, "to_torch: expected a "
                        "backplane.Tensor, got %R", (PyObject *)Py_TYPE(arg));
  return bpy_tensor_to_torch(ms, ((bpy_tensor *)arg)->t);
}

/* Text that bp_describe() writes, gathered in one buffer. */
typedef struct text_buf {
  char *p;
  size_t len, cap;
} text_buf;

static int text_append(void *user, const char *text, size_t n) {
  text_buf *b = user;
  if (b->len + n > b->cap) {
    size_t cap = 2 * (b->len + n);
    char *grown = PyMem_Realloc(b->p, cap);
    if (!grown)
      return BP_ERR_OUT_OF_MEMORY;
    b->p = grown;
    b->cap = cap;
  }
  memcpy(b->p + b->len, text, n);
  b->len += n;
  return 0;
}

/* describe(json=False): the host as bp-info describes it (bp_describe),
 * as text or JSON; a str. */
static PyObject *py_describe(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  int json = 0;
  if (!PyArg_ParseTuple(args, "|p:describe", &json))
    return NULL;
  bp_describe_options o = {BP_DESCRIBE_OPTIONS_STRUCT_SIZE,
                           json ? BP_DESCRIBE_JSON : BP_DESCRIBE_TEXT, 0, NULL, 0};
  text_buf b = {NULL, 0, 0};
  bp_status st = bp_describe(&o, text_append, &b);
  PyObject *r = NULL;
  if (st == BP_ERR_OUT_OF_MEMORY)
    PyErr_NoMemory();
  else if (st != BP_OK)
    bpy_raise(ms, st);
  else /* the text is UTF-8: bp_describe escapes what is not */
    r = PyUnicode_DecodeUTF8(b.p ? b.p : "", (Py_ssize_t)b.len, "surrogateescape");
  PyMem_Free(b.p);
  return r;
}

/* escape(s): s (str, its stray bytes as surrogateescape's lone
 * surrogates) as bp_text_escape() escapes it for a terminal. */
static PyObject *py_escape(PyObject *self, PyObject *arg) {
  (void)self;
  PyObject *bytes = PyUnicode_AsEncodedString(arg, "utf-8", "surrogateescape");
  if (!bytes)
    return NULL;
  const char *s = PyBytes_AsString(bytes);
  if (!s || (size_t)PyBytes_Size(bytes) != strlen(s)) {
    Py_DECREF(bytes);
    return s ? PyErr_Format(PyExc_ValueError, "escape: the text has a NUL character") : NULL;
  }
  size_t n = bp_text_escape(s, NULL, 0) + 1;
  char *buf = PyMem_Malloc(n);
  PyObject *r = NULL;
  if (!buf) {
    PyErr_NoMemory();
  } else {
    bp_text_escape(s, buf, n);
    r = PyUnicode_FromString(buf);
    PyMem_Free(buf);
  }
  Py_DECREF(bytes);
  return r;
}

static PyMethodDef module_methods[] = {
  {"describe", py_describe, METH_VARARGS,
   "describe(json=False): the host as bp-info describes it, text or JSON."},
  {"escape", py_escape, METH_O,
   "escape(s): s escaped for a terminal as Backplane's tools escape text."},
  {"to_torch", py_to_torch, METH_O,
   "to_torch(tensor): a backplane.Tensor as a torch.Tensor, zero copy."},
  {"version", py_version, METH_NOARGS, "The version of libbackplane."},
  {"abi_version", py_abi_version, METH_NOARGS,
   "The (major, minor) ABI version libbackplane implements."},
  {"load", py_load, METH_VARARGS, "load(path) -> plugin index."},
  {"discover", py_discover, METH_NOARGS,
   "discover() -> the number of plugins this call loaded."},
  {"unload", py_unload, METH_VARARGS, "unload(plugin index)."},
  {"plugin_count", py_plugin_count, METH_NOARGS,
   "The number of plugins the host knows, loaded or not."},
  {"plugin_info", py_plugin_info, METH_VARARGS,
   "plugin_info(index) -> dict."},
  {"plugin_dir", py_plugin_dir, METH_NOARGS,
   "The installed plugin directory."},
  {"devices", py_devices, METH_NOARGS, "Every device, as dicts."},
  {"op_names", py_op_names, METH_VARARGS,
   "op_names(all=False): the names of the defined ops (all: also those "
   "whose plugin was unloaded)."},
  {"device_types", py_device_types, METH_NOARGS,
   "Every registered device type: (code, name, device count)."},
  {"ndarray_in_place", py_ndarray_in_place, METH_NOARGS,
   "Whether NumPy arrays are read in place (once NumPy is imported and "
   "its layout checked), not through the buffer protocol or DLPack."},
  {"live_tensor_count", py_live_tensor_count, METH_NOARGS,
   "The number of live bp_tensor handles in the process."},
  {"from_dlpack", py_from_dlpack, METH_VARARGS,
   "from_dlpack(obj) -> Tensor sharing obj's memory."},
  {"empty", (PyCFunction)(void (*)(void))py_empty,
   METH_VARARGS | METH_KEYWORDS,
   "empty(shape, dtype='float32', device='cpu') -> an uninitialised "
   "contiguous Tensor."},
  {"dtype_code", py_dtype_code, METH_VARARGS,
   "dtype_code(dtype) -> the bp_dtype code."},
  {"synchronize", py_device_synchronize, METH_VARARGS,
   "synchronize(device): waits for the device's queued work."},
  {"set_scalar_routing", bpy_set_scalar_routing, METH_VARARGS,
   "set_scalar_routing(route, ndarray_type): how ops with a Scalar overload "
   "route calls (used by backplane)."},
  {"set_torch", bpy_set_torch, METH_VARARGS,
   "set_torch(Tensor, {dtype: code}, from_dlpack): used by "
   "backplane.torch."},
  {NULL, NULL, 0, NULL}
};

/* ---- the module and its state ---------------------------------------- */

/* The state's object references, as an array. */
#define NREFS (offsetof(bpy_state, tensor_alloc) / sizeof(PyObject *))

static PyObject **state_refs(PyObject *m) {
  return (PyObject **)PyModule_GetState(m);
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  PyObject **refs = state_refs(m);
  for (size_t i = 0; refs && i < NREFS; i++)
    Py_VISIT(refs[i]);
  return 0;
}

static int module_clear(PyObject *m) {
  PyObject **refs = state_refs(m);
  for (size_t i = 0; refs && i < NREFS; i++)
    Py_CLEAR(refs[i]);
  return 0;
}

static void module_free(void *m) {
  module_clear((PyObject *)m);
}

static int module_exec(PyObject *m) {
  bpy_state *ms = PyModule_GetState(m);
  if (!ms)
    return -1;
  bpy_convert_init();
  if (bpy_errors_init(ms, m) < 0 || bpy_tensor_init_type(ms, m) < 0 ||
      bpy_op_init_type(ms, m) < 0)
    return -1;
  return 0;
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, (void *)module_exec},
                                          {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_backplane",
    "The C core of the backplane package (over libbackplane).",
    sizeof(bpy_state),
    module_methods,
    module_slots,
    module_traverse,
    module_clear,
    module_free};

/* Multi-phase initialisation (PEP 489): the state lives in the module
 * object, zeroed when it is made, and module_exec fills it. */
PyMODINIT_FUNC PyInit__backplane(void) {
  bpy_state_set_def(&module_def);
  return PyModuleDef_Init(&module_def);
}
