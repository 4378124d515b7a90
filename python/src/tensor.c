/*
 * tensor.c - backplane.Tensor, a Python object over one bp_tensor
 * reference, and its DLPack export.
 *
 * A Tensor's metadata never changes (bp_tensor_view), so the attributes
 * are computed on demand from the view.  Export (__dlpack__) shares the
 * data: the capsule's DLManagedTensor holds a reference to the bp_tensor
 * until the consumer calls its deleter, or, when nobody consumed it, until
 * the capsule is collected.
 */
#include "ext.h"

#include <dlpack/dlpack.h>

PyObject *bpy_tensor_wrap(bpy_state *ms, bp_tensor *t) {
  if (!ms->tensor_type) {
    bpy_release(t);
    PyErr_SetString(PyExc_RuntimeError,
                    "backplane: the module was cleared "
                    "(the interpreter is exiting)");
    return NULL;
  }
  bpy_tensor *self = (bpy_tensor *)ms->tensor_alloc(ms->tensor_type, 0);
  if (!self) {
    bpy_release(t);
    return NULL;
  }
  self->t = t;
  self->readonly = 0;
  return (PyObject *)self;
}

static void tensor_dealloc(PyObject *o) {
  bpy_tensor *self = (bpy_tensor *)o;
  PyTypeObject *tp = Py_TYPE(o);
  bpy_release(self->t);
  self->t = NULL;
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static const bp_tensor_view *view_of(PyObject *o) {
  return bp_tensor_get_view(((bpy_tensor *)o)->t);
}

PyObject *bpy_int_tuple(const int64_t *v, int32_t n) {
  PyObject *tup = PyTuple_New(n);
  if (!tup)
    return NULL;
  for (int32_t i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SetItem(tup, i, x);
  }
  return tup;
}

static PyObject *get_shape(PyObject *o, void *closure) {
  (void)closure;
  const bp_tensor_view *v = view_of(o);
  return bpy_int_tuple(v->sizes, v->ndim);
}

static PyObject *get_strides(PyObject *o, void *closure) {
  (void)closure;
  const bp_tensor_view *v = view_of(o);
  return bpy_int_tuple(v->strides, v->ndim);
}

static PyObject *get_dtype(PyObject *o, void *closure) {
  (void)closure;
  return PyUnicode_FromString(bp_dtype_name(view_of(o)->dtype));
}

static PyObject *get_device(PyObject *o, void *closure) {
  (void)closure;
  return bpy_device_str(view_of(o)->device);
}

static PyObject *get_ndim(PyObject *o, void *closure) {
  (void)closure;
  return PyLong_FromLong(view_of(o)->ndim);
}

static PyObject *get_numel(PyObject *o, void *closure) {
  (void)closure;
  return PyLong_FromLongLong(view_of(o)->numel);
}

static PyObject *get_itemsize(PyObject *o, void *closure) {
  (void)closure;
  return PyLong_FromLongLong(view_of(o)->itemsize);
}

static PyObject *get_nbytes(PyObject *o, void *closure) {
  (void)closure;
  return PyLong_FromLongLong(bp_tensor_nbytes(((bpy_tensor *)o)->t));
}

static PyObject *get_data_ptr(PyObject *o, void *closure) {
  (void)closure;
  return PyLong_FromVoidPtr(view_of(o)->data);
}

static PyObject *get_is_contiguous(PyObject *o, void *closure) {
  (void)closure;
  return PyBool_FromLong(bp_tensor_is_contiguous(((bpy_tensor *)o)->t));
}

static PyObject *get_array_interface(PyObject *o, void *closure);

static PyGetSetDef tensor_getset[] = {
  {"shape", get_shape, NULL, "The sizes, a tuple of ints.", NULL},
  {"strides", get_strides, NULL,
   "The strides in elements (not bytes, unlike NumPy), a tuple.", NULL},
  {"dtype", get_dtype, NULL, "The dtype's name, such as 'float32'.", NULL},
  {"device", get_device, NULL, "The device, such as 'cpu:0'.", NULL},
  {"ndim", get_ndim, NULL, "The number of dimensions.", NULL},
  {"numel", get_numel, NULL, "The number of elements.", NULL},
  {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
  {"nbytes", get_nbytes, NULL, "Bytes of the elements.", NULL},
  {"data_ptr", get_data_ptr, NULL,
   "The address of the first element, an int.", NULL},
  {"is_contiguous", get_is_contiguous, NULL,
   "Whether the strides are row-major contiguous.", NULL},
  {"__array_interface__", get_array_interface, NULL,
   "NumPy's array interface, for CPU tensors.", NULL},
  {NULL, NULL, NULL, NULL, NULL}
};

/* ---- DLPack export ------------------------------------------------------ */

static void capsule_destructor(PyObject *cap) {
  /* A capsule that was consumed was renamed "used_dltensor": its new owner
   * calls the deleter.  An unconsumed one still owns its tensor. */
  if (!PyCapsule_IsValid(cap, "dltensor"))
    return;
  DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
  if (m && m->deleter)
    m->deleter(m);
}

PyObject *bpy_tensor_capsule(bpy_state *ms, bp_tensor *t) {
  DLManagedTensor *m = NULL;
  bp_status st = bp_tensor_to_dlpack(t, &m);
  if (st != BP_OK)
    return bpy_raise(ms, st);
  PyObject *cap = PyCapsule_New(m, "dltensor", capsule_destructor);
  if (!cap)
    m->deleter(m);
  return cap;
}

static PyObject *tensor_dlpack(PyObject *o, PyObject *args, PyObject *kw) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  static char *names[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None;
  PyObject *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", names,
                                   &stream, &max_version, &dl_device, &copy))
    return NULL;
  bp_tensor *t = ((bpy_tensor *)o)->t;
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if (dl_device != Py_None) {
    bp_device want;
    if (bpy_to_device(ms, dl_device, &want) < 0)
      return NULL;
    if (want.type != v->device.type || want.index != v->device.index) {
      PyObject *s = bpy_device_str(want);
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: the tensor is on %S, not on %S "
                   "(use .to(device) to copy it)",
                   get_device(o, NULL), s);
      Py_XDECREF(s);
      return NULL;
    }
  }
  if (copy == Py_True) {
    bp_tensor *c = NULL;
    bp_status st = bp_tensor_empty(v->device, v->dtype, v->ndim, v->sizes, &c);
    if (st == BP_OK)
      st = bp_tensor_copy(c, t);
    if (st != BP_OK) {
      bpy_release(c);
      return bpy_raise(ms, st);
    }
    PyObject *cap = bpy_tensor_capsule(ms, c);
    bpy_release(c);
    return cap;
  }
  /* Work on an asynchronous device was queued on this thread's current
   * stream; a consumer that names its own stream must see it finished. */
  if (stream != Py_None && v->device.type != BP_DEVICE_CPU) {
    bp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bp_device_synchronize(v->device);
    Py_END_ALLOW_THREADS if (st != BP_OK) return bpy_raise(ms, st);
  }
  (void)max_version; /* the legacy capsule serves every consumer version */
  return bpy_tensor_capsule(ms, t);
}

static PyObject *tensor_dlpack_device(PyObject *o, PyObject *noargs) {
  (void)noargs;
  const bp_tensor_view *v = view_of(o);
  int32_t type = v->device.type;
  /* Vendor device types export as kDLExtDev, as bp_tensor_to_dlpack does. */
  if (type >= BP_DEVICE_DYNAMIC_FIRST)
    type = BP_DEVICE_EXT_DEV;
  return Py_BuildValue("(ii)", (int)type, (int)v->device.index);
}

/* NumPy's array interface (version 3) for a CPU tensor: NumPy keeps the
 * Tensor as the array's base, so the memory lives as long as the array.
 * Unlike DLPack, it carries bool, which NumPy 1.x does not import. */
static PyObject *get_array_interface(PyObject *o, void *closure) {
  (void)closure;
  const bp_tensor_view *v = view_of(o);
  if (v->device.type != BP_DEVICE_CPU) {
    PyObject *d = get_device(o, NULL);
    PyErr_Format(PyExc_AttributeError,
                 "the tensor is on %S; NumPy reads only CPU memory (use "
                 ".to('cpu') first)", d);
    Py_XDECREF(d);
    return NULL;
  }
  const char *kind;
  switch (BP_DTYPE_DLPACK_CODE(v->dtype)) {
    case kDLInt: kind = "i"; break;
    case kDLUInt: kind = "u"; break;
    case kDLFloat: kind = "f"; break;
    case 6: kind = "b"; break; /* kDLBool */
    default:
      PyErr_Format(PyExc_AttributeError, "NumPy has no %s dtype (use "
                   "torch.from_dlpack, or convert it with an op first)",
                   bp_dtype_name(v->dtype));
      return NULL;
  }
  int one = 1;
  char order = v->itemsize == 1 ? '|' : *(const char *)&one ? '<' : '>';
  int64_t bytes[BP_MAX_NDIM];
  for (int32_t i = 0; i < v->ndim; i++)
    bytes[i] = v->strides[i] * v->itemsize;
  PyObject *strides = bpy_int_tuple(bytes, v->ndim);
  PyObject *shape = get_shape(o, NULL);
  PyObject *r = NULL;
  if (strides && shape)
    r = Py_BuildValue("{s:i,s:(NO),s:O,s:O,s:s#}", "version", 3, "data",
                      /* NumPy refuses NULL, which an empty tensor has */
                      PyLong_FromVoidPtr(v->data ? v->data : (void *)&one),
                      ((bpy_tensor *)o)->readonly ? Py_True : Py_False,
                      "shape", shape,
                      "strides", strides, "typestr",
                      (char[4]){order, kind[0],
                                (char)('0' + (int)v->itemsize), 0},
                      (Py_ssize_t)3);
  Py_XDECREF(strides);
  Py_XDECREF(shape);
  return r;
}

static PyObject *tensor_numpy(PyObject *o, PyObject *noargs) {
  (void)noargs;
  PyObject *ai = get_array_interface(o, NULL);
  if (!ai) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *m = v ? PyObject_Str(v) : NULL;
    if (m)
      PyErr_Format(PyExc_TypeError, "Tensor.numpy(): %U", m);
    else
      PyErr_Restore(t, v, tb), t = v = tb = NULL;
    Py_XDECREF(m);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return NULL;
  }
  Py_DECREF(ai);
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np)
    return NULL;
  PyObject *r = PyObject_CallMethod(np, "asarray", "O", o);
  Py_DECREF(np);
  return r;
}

/* NumPy asks __array__ when __array_interface__ is missing: the same
 * array, or the reason there is none (not a silent object array). */
static PyObject *tensor_array(PyObject *o, PyObject *args) {
  PyObject *dtype = Py_None;
  if (!PyArg_ParseTuple(args, "|O:__array__", &dtype))
    return NULL;
  PyObject *a = tensor_numpy(o, NULL);
  if (!a || dtype == Py_None)
    return a;
  PyObject *r = PyObject_CallMethod(a, "astype", "O", dtype);
  Py_DECREF(a);
  return r;
}

static PyObject *tensor_to(PyObject *o, PyObject *args) {
  bpy_state *ms = bpy_state_of(o);
  if (!ms)
    return NULL;
  PyObject *dev_obj;
  if (!PyArg_ParseTuple(args, "O:to", &dev_obj))
    return NULL;
  bp_device d;
  if (bpy_to_device(ms, dev_obj, &d) < 0)
    return NULL;
  bp_tensor *t = ((bpy_tensor *)o)->t;
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if (d.type == v->device.type && d.index == v->device.index) {
    Py_INCREF(o);
    return o;
  }
  bp_tensor *c = NULL;
  bp_status st = bp_tensor_empty(d, v->dtype, v->ndim, v->sizes, &c);
  if (st == BP_OK) {
    Py_BEGIN_ALLOW_THREADS
    st = bp_tensor_copy(c, t);
    Py_END_ALLOW_THREADS
  }
  if (st != BP_OK) {
    bpy_release(c);
    return bpy_raise(ms, st);
  }
  return bpy_tensor_wrap(ms, c);
}

static PyObject *tensor_repr(PyObject *o) {
  PyObject *shape = get_shape(o, NULL);
  PyObject *dev = get_device(o, NULL);
  PyObject *r = NULL;
  if (shape && dev)
    r = PyUnicode_FromFormat("backplane.Tensor(shape=%R, dtype='%s', "
                             "device='%U')", shape,
                             bp_dtype_name(view_of(o)->dtype), dev);
  Py_XDECREF(shape);
  Py_XDECREF(dev);
  return r;
}

static PyObject *tensor_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  (void)tp;
  (void)args;
  (void)kw;
  PyErr_SetString(PyExc_TypeError,
                  "backplane.Tensor cannot be created directly: use "
                  "backplane.from_dlpack(), backplane.empty() or an op");
  return NULL;
}

static PyMethodDef tensor_methods[] = {
  {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack,
   METH_VARARGS | METH_KEYWORDS,
   "__dlpack__(*, stream=None, max_version=None, dl_device=None, "
   "copy=None): a DLPack capsule sharing this tensor's memory."},
  {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
   "The DLPack (device_type, device_id) pair."},
  {"numpy", tensor_numpy, METH_NOARGS,
   "A NumPy array sharing this CPU tensor's memory (no copy)."},
  {"__array__", tensor_array, METH_VARARGS,
   "__array__(dtype=None): NumPy's conversion, as numpy() (a copy only "
   "when dtype differs)."},
  {"to", tensor_to, METH_VARARGS,
   "to(device): this tensor on another device (a copy; self when it is "
   "already there)."},
  {NULL, NULL, 0, NULL}
};

static PyType_Slot tensor_slots[] = {
  {Py_tp_dealloc, (void *)tensor_dealloc},
  {Py_tp_repr, (void *)tensor_repr},
  {Py_tp_getset, tensor_getset},
  {Py_tp_methods, tensor_methods},
  {Py_tp_new, (void *)tensor_new},
  {Py_tp_doc, (void *)
   "A tensor owned by Backplane: dtype, sizes, strides and device never "
   "change; the data may.  It speaks DLPack (__dlpack__), so NumPy and "
   "torch take it without a copy."},
  {0, NULL}
};

static PyType_Spec tensor_spec = {
  "backplane.Tensor", sizeof(bpy_tensor), 0, Py_TPFLAGS_DEFAULT, tensor_slots
};

int bpy_tensor_init_type(bpy_state *ms, PyObject *module) {
  ms->tensor_type = (PyTypeObject *)PyType_FromSpec(&tensor_spec);
  if (!ms->tensor_type || bpy_type_set_module(ms->tensor_type, module) < 0)
    return -1;
  ms->tensor_alloc = (allocfunc)PyType_GetSlot(ms->tensor_type, Py_tp_alloc);
  ms->tensor_free = (freefunc)PyType_GetSlot(ms->tensor_type, Py_tp_free);
  Py_INCREF(ms->tensor_type);
  if (PyModule_AddObject(module, "Tensor", (PyObject *)ms->tensor_type) < 0) {
    Py_DECREF(ms->tensor_type);
    return -1;
  }
  return 0;
}
