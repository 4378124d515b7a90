/*
 * wrap.c - memory that a Python object owns, seen as a bp_tensor that keeps
 * the object alive (convert.c's NumPy and buffer paths, torchconv.c's torch
 * path); reading a Python sequence of ints (shapes, strides); and whether
 * the thread holds the GIL, which those tensors' deleters read (the host
 * calls them from whichever thread drops the last reference, with nothing
 * of the call that made them).  What steers a call's conversion is in its
 * call state (bpy_conv), not here.
 */

#include "ext.h"

_Thread_local int bpy_holds_gil;

/* ---- sources that keep Python objects alive ----------------------------- */

static void pyobj_deleter(void *ctx, void *data) {
  (void)data;
  if (bpy_holds_gil) {
    Py_DECREF((PyObject *)ctx);
    return;
  }
  if (!Py_IsInitialized())
    return; /* at exit: leak rather than touch a finalized interpreter */
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)ctx);
  PyGILState_Release(g);
}

_Alignas(64) char bpy_no_data; /* aligned for every dtype */

int bpy_wrap_blob(bpy_state *ms, PyObject *owner, bp_device dev, int32_t dtype,
                  int32_t ndim, const int64_t *sizes, const int64_t *strides,
                  void *data, const char *what, bp_tensor **out) {
  if (!data) {
    /* Only an empty tensor may have no data: its address is never read.
     * Any other would be read and written at address 0 and on. */
    int64_t numel = 1;
    for (int32_t i = 0; i < ndim && numel; i++)
      numel = sizes[i] > 0 ? (numel > INT64_MAX / sizes[i] ? INT64_MAX
                                                            : numel * sizes[i])
                           : 0;
    if (numel) {
      PyErr_Format(bpy_error_class(ms, BP_ERR_INVALID_ARGUMENT),
                   "%s: the array's data pointer is NULL, but it has %lld "
                   "elements",
                   what ? what : "tensor", (long long)numel);
      return -1;
    }
    data = &bpy_no_data;
  }
  Py_INCREF(owner);
  bp_status st = bp_tensor_from_blob(dev, dtype, ndim, sizes, strides, data,
                                     pyobj_deleter, owner, out);
  if (st != BP_OK) {
    Py_DECREF(owner);
    if (what) {
      char msg[640];
      PyOS_snprintf(msg, sizeof msg, "%s: %s", what, bp_last_error());
      bpy_raise_msg(ms, st, msg);
    } else {
      bpy_raise(ms, st);
    }
    return -1;
  }
  return 0;
}

/* An int, or anything with __index__ (a NumPy integer); never a float. */
static int index_value(PyObject *x, int64_t *out) {
  if (PyLong_CheckExact(x)) {
    *out = PyLong_AsLongLong(x);
  } else {
    PyObject *ix = PyNumber_Index(x);
    if (!ix)
      return -1;
    *out = PyLong_AsLongLong(ix);
    Py_DECREF(ix);
  }
  return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

int bpy_read_int64s(bpy_state *ms, PyObject *seq, int64_t *dst, int32_t max,
                    int32_t *n, const char *what, const char *field) {
  if (PyTuple_Check(seq)) { /* torch.Size, stride(), NumPy's shape */
    Py_ssize_t len = PyTuple_Size(seq);
    if (len <= max) {
      for (Py_ssize_t i = 0; i < len; i++)
        if (index_value(PyTuple_GetItem(seq, i), &dst[i]) < 0)
          return -1;
      *n = (int32_t)len;
      return 0;
    }
  }
  Py_ssize_t len = PySequence_Size(seq);
  if (len < 0)
    return -1;
  if (len > max) {
    /* ShapeError, as for a NumPy array of too many dimensions */
    PyErr_Format(bpy_error_class(ms, BP_ERR_SHAPE),
                 "%s: %zd dimensions in %s; "
                 "Backplane allows at most %d",
                 what ? what : "tensor", len, field, (int)max);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *x = PySequence_GetItem(seq, i);
    if (!x)
      return -1;
    int rc = index_value(x, &dst[i]);
    Py_DECREF(x);
    if (rc < 0)
      return -1;
  }
  *n = (int32_t)len;
  return 0;
}
