/*
 * torchconv.c - torch tensors to and from Backplane, without copies.
 *
 * backplane.torch registers torch (set_torch): its Tensor type, its
 * dtypes, and the function that imports a DLPack capsule.  A torch tensor
 * argument is read by its data pointer, sizes, strides, dtype and device,
 * and wrapped with bp_tensor_from_blob holding a reference to it; a
 * result goes to torch as a DLPack capsule.  Reading the metadata costs
 * less than torch's own DLPack export (torch.utils.dlpack.to_dlpack).
 */
#include "ext.h"

#include <dlpack/dlpack.h>

/* The bp dtype codes that torch has, by their index in
 * bpy_state.torch_dtype_of. */
#define NDT BPY_NTORCH_DTYPES
static const int32_t dt_codes[NDT] = {
    BP_INT8,    BP_INT16,   BP_INT32,    BP_INT64, BP_UINT8, BP_FLOAT16,
    BP_FLOAT32, BP_FLOAT64, BP_BFLOAT16, BP_BOOL,  0};

static int intern_names(bpy_state *ms) {
  if (ms->s_data_ptr)
    return 0;
  ms->s_data_ptr = PyUnicode_InternFromString("data_ptr");
  ms->s_shape = PyUnicode_InternFromString("shape");
  ms->s_stride = PyUnicode_InternFromString("stride");
  ms->s_dtype = PyUnicode_InternFromString("dtype");
  ms->s_is_cuda = PyUnicode_InternFromString("is_cuda");
  ms->s_get_device = PyUnicode_InternFromString("get_device");
  ms->s_device = PyUnicode_InternFromString("device");
  ms->s_is_cpu = PyUnicode_InternFromString("is_cpu");
  ms->s_requires_grad = PyUnicode_InternFromString("requires_grad");
  return ms->s_requires_grad && ms->s_data_ptr && ms->s_shape && ms->s_stride &&
                 ms->s_dtype && ms->s_is_cuda && ms->s_get_device &&
                 ms->s_device && ms->s_is_cpu
             ? 0
             : -1;
}

int bpy_torch_known(bpy_state *ms) {
  return ms->torch_tensor_type != NULL;
}

/* ---- arguments ---------------------------------------------------------- */

/* Registers torch (backplane.torch does, when imported) once the program
 * has imported torch itself, so that torch tensors are read by their data
 * pointers even when backplane.torch was never imported. */
static void torch_if_imported(bpy_state *ms) {
  static int trying;
  if (ms->torch_tensor_type || trying)
    return;
  PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
  PyObject *torch = mods ? PyDict_GetItemString(mods, "torch") : NULL;
  if (!torch || torch == Py_None || !PyObject_HasAttrString(torch, "Tensor"))
    return;
  trying = 1;
  PyObject *m = PyImport_ImportModule("backplane.torch");
  trying = 0;
  if (!m)
    PyErr_Clear(); /* without the bridge, DLPack still works */
  Py_XDECREF(m);
}

int bpy_is_torch_tensor(bpy_state *ms, PyObject *obj) {
  if (!ms->torch_tensor_type)
    torch_if_imported(ms);
  if (!ms->torch_tensor_type)
    return 0;
  return Py_TYPE(obj) == ms->torch_tensor_type ||
         PyObject_TypeCheck(obj, ms->torch_tensor_type);
}

static int torch_device_of(bpy_state *ms, PyObject *obj, int meta,
                           bp_device *dev, const char *what) {
  if (meta) {
    /* A meta tensor has no device Backplane knows; a fake CUDA tensor
     * stands for cuda when a plugin drives it, else for the CPU. */
    PyObject *c = PyObject_GetAttr(obj, ms->s_is_cuda);
    int cuda = c ? PyObject_IsTrue(c) : -1;
    Py_XDECREF(c);
    if (cuda < 0)
      return -1;
    int32_t code;
    *dev = BP_CPU;
    if (cuda && bp_device_type_from_name("cuda", &code) == BP_OK)
      *dev = bp_device_make(code, 0);
    return 0;
  }
  PyObject *c = PyObject_GetAttr(obj, ms->s_is_cpu);
  if (!c)
    return -1;
  int cpu = PyObject_IsTrue(c);
  Py_DECREF(c);
  if (cpu) {
    *dev = BP_CPU;
    return 0;
  }
  c = PyObject_GetAttr(obj, ms->s_is_cuda);
  if (!c)
    return -1;
  int cuda = PyObject_IsTrue(c);
  Py_DECREF(c);
  if (cuda) {
    PyObject *i = PyObject_CallMethodObjArgs(obj, ms->s_get_device, NULL);
    if (!i)
      return -1;
    long idx = PyLong_AsLong(i);
    Py_DECREF(i);
    if (idx == -1 && PyErr_Occurred())
      return -1;
    int32_t code;
    if (bp_device_type_from_name("cuda", &code) != BP_OK) {
      PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
                   "%s: a torch tensor on cuda:%ld, but no loaded plugin "
                   "drives cuda",
                   what ? what : "tensor", idx);
      return -1;
    }
    *dev = bp_device_make(code, (int32_t)idx);
    return 0;
  }
  PyObject *d = PyObject_GetAttr(obj, ms->s_device);
  PyObject *s = d ? PyObject_Str(d) : NULL;
  Py_XDECREF(d);
  if (!s)
    return -1;
  PyErr_Format(bpy_error_class(ms, BP_ERR_DEVICE),
               "%s: a torch tensor on "
               "device '%U', which Backplane does not drive (cpu and cuda "
               "are bridged)",
               what ? what : "tensor", s);
  Py_DECREF(s);
  return -1;
}

int bpy_from_torch(bpy_state *ms, PyObject *obj, const char *what,
                   bpy_conv *conv, bp_tensor **out) {
  bpy_conv none = {0, 0, 0};
  if (!conv)
    conv = &none;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  int32_t ndim = 0, nstrides = 0;
  PyObject *dt = PyObject_GetAttr(obj, ms->s_dtype);
  if (!dt)
    return -1;
  PyObject *code = PyDict_GetItem(ms->torch_dtypes, dt); /* borrowed */
  if (!code) {
    PyObject *s = PyObject_Str(dt);
    Py_DECREF(dt);
    if (s) {
      PyErr_Format(bpy_error_class(ms, BP_ERR_TYPE),
                   "%s: torch dtype %U has no Backplane dtype",
                   what ? what : "tensor", s);
      Py_DECREF(s);
    }
    return -1;
  }
  Py_DECREF(dt);
  int32_t dtype = (int32_t)PyLong_AsLong(code);
  bp_device dev = BP_CPU;
  if (!conv->torch_cpu && torch_device_of(ms, obj, conv->meta, &dev, what) < 0)
    return -1;
  PyObject *shape = PyObject_GetAttr(obj, ms->s_shape);
  if (!shape)
    return -1;
  int rc =
      bpy_read_int64s(ms, shape, sizes, BP_MAX_NDIM, &ndim, what, "its shape");
  Py_DECREF(shape);
  if (rc < 0)
    return -1;
  /* A plain torch.Tensor's methods are called unbound, which saves making
   * a bound method; a subclass may override them. */
  int plain = Py_TYPE(obj) == ms->torch_tensor_type;
  PyObject *st =
      plain ? PyObject_CallFunctionObjArgs(ms->torch_stride_fn, obj, NULL)
            : PyObject_CallMethodObjArgs(obj, ms->s_stride, NULL);
  if (!st)
    return -1;
  rc = bpy_read_int64s(ms, st, strides, BP_MAX_NDIM, &nstrides, what,
                       "its strides");
  Py_DECREF(st);
  if (rc < 0)
    return -1;
  if (conv->meta)
    return bpy_wrap_blob(ms, obj, dev, dtype, ndim, sizes, strides,
                         &bpy_no_data, what, out);
  if (ms->torch_grad_enabled_fn && !conv->grad_inputs) {
    PyObject *g = PyObject_GetAttr(obj, ms->s_requires_grad);
    if (!g)
      return -1;
    conv->grad_inputs = g == Py_True;
    Py_DECREF(g);
  }
  PyObject *p =
      plain ? PyObject_CallFunctionObjArgs(ms->torch_data_ptr_fn, obj, NULL)
            : PyObject_CallMethodObjArgs(obj, ms->s_data_ptr, NULL);
  if (!p)
    return -1;
  void *data = PyLong_AsVoidPtr(p);
  Py_DECREF(p);
  if (!data && PyErr_Occurred())
    return -1;
  /* No data: a meta tensor (torch may hand one to the CPU kernel beside
   * CPU tensors), which says so by its device. */
  if (!data && conv->torch_cpu &&
      torch_device_of(ms, obj, conv->meta, &dev, what) < 0)
    return -1;
  return bpy_wrap_blob(ms, obj, dev, dtype, ndim, sizes, strides, data, what,
                       out);
}

/* ---- results and registration ------------------------------------------ */

PyObject *bpy_tensor_to_torch(bpy_state *ms, bp_tensor *t) {
  torch_if_imported(ms);
  if (!ms->torch_from_dlpack || !ms->torch_bool) {
    PyErr_SetString(PyExc_RuntimeError, "an Op made with torch=True returns "
                    "torch tensors, but torch is not imported (import "
                    "backplane.torch)");
    return NULL;
  }
  const bp_tensor_view *v = bp_tensor_get_view(t);
  PyObject *cap = bpy_tensor_capsule(ms, t);
  if (!cap)
    return NULL;
  int is_bool = v->dtype == BP_BOOL;
  if (is_bool) {
    /* torch before 2.1 takes no bool through DLPack: import the bytes as
     * uint8 and view them as bool, which shares them. */
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    m->dl_tensor.dtype.code = kDLUInt;
  }
  PyObject *r = PyObject_CallFunctionObjArgs(ms->torch_from_dlpack, cap, NULL);
  Py_DECREF(cap);
  if (r && is_bool) {
    PyObject *b = PyObject_CallMethod(r, "view", "O", ms->torch_bool);
    Py_DECREF(r);
    r = b;
  }
  return r;
}

PyObject *bpy_torch_dtype(bpy_state *ms, int32_t dtype) {
  for (int i = 0; i < NDT; i++)
    if (dt_codes[i] == dtype)
      return ms->torch_dtype_of[i];
  return NULL;
}

PyObject *bpy_set_torch(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *tensor_type, *dtypes, *from_dlpack, *grad_enabled = Py_None;
  if (!PyArg_ParseTuple(args, "OO!O|O:set_torch", &tensor_type, &PyDict_Type,
                        &dtypes, &from_dlpack, &grad_enabled))
    return NULL;
  if (!PyType_Check(tensor_type) || !PyCallable_Check(from_dlpack)) {
    PyErr_SetString(PyExc_TypeError, "set_torch(Tensor type, {dtype: code}, "
                    "from_dlpack)");
    return NULL;
  }
  if (intern_names(ms) < 0)
    return NULL;
  PyObject *stride_fn = PyObject_GetAttr(tensor_type, ms->s_stride);
  PyObject *data_ptr_fn = PyObject_GetAttr(tensor_type, ms->s_data_ptr);
  if (!stride_fn || !data_ptr_fn) {
    Py_XDECREF(stride_fn);
    Py_XDECREF(data_ptr_fn);
    return NULL;
  }
  Py_XDECREF(ms->torch_grad_enabled_fn);
  ms->torch_grad_enabled_fn = NULL;
  if (grad_enabled != Py_None) {
    Py_INCREF(grad_enabled);
    ms->torch_grad_enabled_fn = grad_enabled;
  }
  Py_XDECREF(ms->torch_stride_fn);
  Py_XDECREF(ms->torch_data_ptr_fn);
  ms->torch_stride_fn = stride_fn;
  ms->torch_data_ptr_fn = data_ptr_fn;
  Py_INCREF(tensor_type);
  Py_INCREF(dtypes);
  Py_INCREF(from_dlpack);
  Py_XDECREF(ms->torch_tensor_type);
  Py_XDECREF(ms->torch_dtypes);
  Py_XDECREF(ms->torch_from_dlpack);
  ms->torch_tensor_type = (PyTypeObject *)tensor_type;
  ms->torch_dtypes = dtypes;
  ms->torch_from_dlpack = from_dlpack;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dtypes, &pos, &key, &value)) {
    long code = PyLong_AsLong(value);
    if (code == -1 && PyErr_Occurred())
      return NULL;
    for (int i = 0; i < NDT; i++)
      if (dt_codes[i] == code) {
        Py_INCREF(key);
        Py_XDECREF(ms->torch_dtype_of[i]);
        ms->torch_dtype_of[i] = key;
        if (code == BP_BOOL) {
          Py_INCREF(key);
          Py_XDECREF(ms->torch_bool);
          ms->torch_bool = key;
        }
      }
  }
  Py_RETURN_NONE;
}

int bpy_torch_dtype_code(bpy_state *ms, PyObject *obj, int32_t *out) {
  torch_if_imported(ms);
  if (!ms->torch_dtypes)
    return 0;
  PyObject *code = PyDict_GetItemWithError(ms->torch_dtypes, obj);
  if (!code) {
    PyErr_Clear(); /* absent or unhashable: not a torch dtype */
    return 0;
  }
  *out = (int32_t)PyLong_AsLong(code);
  return 1;
}

int bpy_torch_grad_warning(bpy_state *ms, bpy_conv *conv, PyObject *op_name) {
  int had = conv->grad_inputs;
  conv->grad_inputs = 0;
  if (!had || !ms->torch_grad_enabled_fn)
    return 0;
  PyObject *on = PyObject_CallFunctionObjArgs(ms->torch_grad_enabled_fn, NULL);
  if (!on)
    return -1;
  int enabled = PyObject_IsTrue(on);
  Py_DECREF(on);
  if (enabled <= 0)
    return enabled;
  return PyErr_WarnFormat(PyExc_UserWarning, 1, "%U has no derivative: its "
                          "results do not require grad although an input "
                          "does, and no gradient flows through it (use "
                          "torch.no_grad() or detach() to say so)", op_name);
}
