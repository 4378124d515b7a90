/*
 * device.c - devices as Python spells them: "cpu", "cuda:1", a (type,
 * index) pair or a torch.device, read into a bp_device and written back.
 */

#include "ext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int parse_device_str(bpy_state *ms, const char *s, bp_device *out) {
  char type[64];
  const char *colon = strchr(s, ':');
  size_t n = colon ? (size_t)(colon - s) : strlen(s);
  long index = 0;
  if (n == 0 || n >= sizeof type)
    goto bad;
  memcpy(type, s, n);
  type[n] = '\0';
  if (colon) {
    char *end;
    if (!colon[1])
      goto bad;
    index = strtol(colon + 1, &end, 10);
    if (*end || index < 0 || index > INT32_MAX)
      goto bad;
  }
  int32_t code;
  if (bp_device_type_from_name(type, &code) != BP_OK) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
                 "unknown device type '%s' in '%s' (no "
                 "loaded plugin registers it)",
                 type, s);
    return -1;
  }
  *out = bp_device_make(code, (int32_t)index);
  return 0;
bad:
  PyErr_Format(PyExc_ValueError, "'%s' is not a device (expected 'type' or "
               "'type:index', such as 'cpu' or 'cuda:1')", s);
  return -1;
}

int bpy_to_device(bpy_state *ms, PyObject *obj, bp_device *out) {
  if (PyTuple_Check(obj) && PyTuple_Size(obj) == 2) {
    PyObject *t = PyTuple_GetItem(obj, 0), *i = PyTuple_GetItem(obj, 1);
    long idx = PyLong_AsLong(i);
    if (idx == -1 && PyErr_Occurred())
      return -1;
    int32_t code;
    if (PyUnicode_Check(t)) {
      PyObject *b = PyUnicode_AsUTF8String(t);
      if (!b)
        return -1;
      bp_status st = (Py_ssize_t)strlen(PyBytes_AsString(b)) == PyBytes_Size(b)
                         ? bp_device_type_from_name(PyBytes_AsString(b), &code)
                         : BP_ERR_DEVICE; /* a NUL in the name */
      if (st != BP_OK) {
        PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
                     "unknown device type '%s'", PyBytes_AsString(b));
        Py_DECREF(b);
        return -1;
      }
      Py_DECREF(b);
    } else {
      long c = PyLong_AsLong(t);
      if (c == -1 && PyErr_Occurred())
        return -1;
      if (c < 0 || c > INT32_MAX) {
        PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
                     "device type code %ld is out of range (0 to %ld)", c,
                     (long)INT32_MAX);
        return -1;
      }
      code = (int32_t)c;
    }
    if (idx < 0 || idx > INT32_MAX) {
      PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
                   "device index %ld is out of range (0 to %ld)", idx,
                   (long)INT32_MAX);
      return -1;
    }
    *out = bp_device_make(code, (int32_t)idx);
    return 0;
  }
  PyObject *s = PyUnicode_Check(obj) ? (Py_INCREF(obj), obj)
                                     : PyObject_Str(obj); /* torch.device */
  if (!s)
    return -1;
  PyObject *b = PyUnicode_AsUTF8String(s);
  Py_DECREF(s);
  if (!b)
    return -1;
  if ((Py_ssize_t)strlen(PyBytes_AsString(b)) != PyBytes_Size(b)) {
    Py_DECREF(b);
    PyErr_SetString(bpy_error_class(ms, BP_ERR_DEVICE),
                    "unknown device: the name holds a NUL character");
    return -1;
  }
  int rc = parse_device_str(ms, PyBytes_AsString(b), out);
  Py_DECREF(b);
  return rc;
}

PyObject *bpy_device_str(bp_device d) {
  const char *name = bp_device_type_name(d.type);
  if (!name)
    return PyUnicode_FromFormat("device%d:%d", (int)d.type, (int)d.index);
  return PyUnicode_FromFormat("%s:%d", name, (int)d.index);
}
