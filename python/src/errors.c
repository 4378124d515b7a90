/*
 * errors.c - backplane.Error and one subclass per bp_status.
 *
 * Each class carries the status as class attributes `status` (the code)
 * and `status_name` ("BP_ERR_TYPE"); the message is the host's own.  Where
 * a Python built-in exception means the same thing, the class derives from
 * it as well, so that `except TypeError` still catches a wrong dtype.
 */
#include "ext.h"

typedef struct error_class {
  bp_status status;
  const char *name;     /* the class name, in module backplane */
  const char *builtin;  /* a second base among the builtins, or NULL */
} error_class;

static const error_class classes[] = {
  {BP_ERR_INVALID_ARGUMENT, "InvalidArgumentError", "ValueError"},
  {BP_ERR_TYPE, "DtypeError", "TypeError"},
  {BP_ERR_SHAPE, "ShapeError", "ValueError"},
  {BP_ERR_DEVICE, "DeviceError", NULL},
  {BP_ERR_NOT_FOUND, "NotFoundError", "LookupError"},
  {BP_ERR_ALREADY_EXISTS, "AlreadyExistsError", NULL},
  {BP_ERR_UNSUPPORTED, "UnsupportedError", "NotImplementedError"},
  {BP_ERR_OUT_OF_MEMORY, "OutOfMemoryError", "MemoryError"},
  {BP_ERR_OVERFLOW, "SizeOverflowError", "OverflowError"},
  {BP_ERR_VERSION, "VersionError", NULL},
  {BP_ERR_SCHEMA, "SchemaError", NULL},
  {BP_ERR_LOAD, "LoadError", "ImportError"},
  {BP_ERR_BUSY, "BusyError", NULL},
  {BP_ERR_BACKEND, "BackendError", NULL},
  {BP_ERR_INTERNAL, "InternalError", NULL},
};

#define NCLASSES (sizeof classes / sizeof classes[0])

static int set_status_attrs(PyObject *cls, bp_status st) {
  PyObject *code = PyLong_FromLong((long)st);
  PyObject *name = PyUnicode_FromString(bp_status_str(st));
  int rc = -1;
  if (code && name && PyObject_SetAttrString(cls, "status", code) == 0 &&
      PyObject_SetAttrString(cls, "status_name", name) == 0)
    rc = 0;
  Py_XDECREF(code);
  Py_XDECREF(name);
  return rc;
}

static PyObject *make_class(bpy_state *ms, PyObject *module,
                            const error_class *c) {
  char qualified[80];
  PyOS_snprintf(qualified, sizeof qualified, "backplane.%s", c->name);
  PyObject *bases;
  if (c->builtin) {
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
    PyObject *b = builtins ? PyDict_GetItemString(builtins, c->builtin)
                           : NULL;
    if (!b) {
      PyErr_Format(PyExc_RuntimeError, "no builtin %s", c->builtin);
      return NULL;
    }
    bases = PyTuple_Pack(2, ms->base_error, b);
  } else {
    bases = PyTuple_Pack(1, ms->base_error);
  }
  if (!bases)
    return NULL;
  PyObject *cls = PyErr_NewException(qualified, bases, NULL);
  Py_DECREF(bases);
  if (!cls)
    return NULL;
  if (set_status_attrs(cls, c->status) < 0 ||
      PyModule_AddObject(module, c->name, cls) < 0) {
    Py_DECREF(cls);
    return NULL;
  }
  return cls; /* the module holds the reference PyModule_AddObject stole */
}

int bpy_errors_init(bpy_state *ms, PyObject *module) {
  ms->base_error = PyErr_NewExceptionWithDoc(
      "backplane.Error",
      "A Backplane call failed.  The class tells the status (class "
      "attributes `status` and `status_name`); the message is the host's, "
      "and names the op, the argument, and what was expected.",
      NULL, NULL);
  if (!ms->base_error)
    return -1;
  Py_INCREF(ms->base_error);
  if (PyModule_AddObject(module, "Error", ms->base_error) < 0) {
    Py_DECREF(ms->base_error);
    return -1;
  }
  for (size_t i = 0; i < NCLASSES; i++) {
    PyObject *cls = make_class(ms, module, &classes[i]);
    if (!cls)
      return -1;
    Py_INCREF(cls); /* the state's own reference */
    ms->by_status[classes[i].status] = cls;
  }
  return 0;
}

PyObject *bpy_error_class(bpy_state *ms, bp_status status) {
  PyObject *cls = NULL;
  if ((int)status > 0 && (int)status < BP_STATUS_COUNT)
    cls = ms->by_status[status];
  /* RuntimeError once the module was cleared (at interpreter exit). */
  return cls ? cls : ms->base_error ? ms->base_error : PyExc_RuntimeError;
}

/* Whether msg + i starts "bp_name: ", a C function's name that a host
 * message begins a part with; its length, or 0. */
static size_t c_name_at(const char *msg, size_t i) {
  if (strncmp(msg + i, "bp_", 3) != 0 || (i > 0 && msg[i - 1] != ' '))
    return 0;
  size_t j = i + 3;
  while ((msg[j] >= 'a' && msg[j] <= 'z') ||
         (msg[j] >= '0' && msg[j] <= '9') || msg[j] == '_')
    j++;
  return msg[j] == ':' && msg[j + 1] == ' ' ? j + 2 - i : 0;
}

PyObject *bpy_raise_msg(bpy_state *ms, bp_status status, const char *msg) {
  PyObject *cls = bpy_error_class(ms, status);
  if (!msg || !*msg)
    msg = bp_status_str(status);
  /* A Python user calls no C function: the names that begin the host's
   * messages ("bp_op_find: ") are left out, at the start and after ": ". */
  char clean[1024];
  size_t n = 0;
  for (size_t i = 0; strlen(msg) < sizeof clean && msg[i];) {
    size_t skip =
        (i == 0 || (i >= 2 && msg[i - 2] == ':')) ? c_name_at(msg, i) : 0;
    if (skip)
      i += skip;
    else
      clean[n++] = msg[i++];
  }
  clean[n] = '\0';
  if (n)
    msg = clean;
  /* The host's messages may hold bytes from plugins that are not UTF-8. */
  PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg),
                                        "backslashreplace");
  if (!text)
    return NULL;
  PyErr_SetObject(cls, text);
  Py_DECREF(text);
  return NULL;
}

PyObject *bpy_raise(bpy_state *ms, bp_status status) {
  return bpy_raise_msg(ms, status, bp_last_error());
}

PyObject *bpy_str(const char *s) {
  if (!s)
    Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "backslashreplace");
}
