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

static PyObject *s_data_ptr, *s_shape, *s_stride, *s_dtype, *s_is_cuda;
static PyObject *s_get_device, *s_device, *s_is_cpu;

static PyTypeObject *torch_tensor_type;
static PyObject *torch_dtypes;      /* {torch.dtype: bp code} */
static PyObject *torch_from_dlpack; /* torch._C._from_dlpack or alike */
static PyObject *torch_bool;        /* torch.bool, for the uint8 detour */
static PyObject *torch_stride_fn;   /* torch.Tensor.stride, unbound */
static PyObject *torch_data_ptr_fn; /* torch.Tensor.data_ptr, unbound */

/* by bp dtype code's index below: the torch dtype object (owned refs) */
#define NDT 11
static const int32_t dt_codes[NDT] = {BP_INT8, BP_INT16, BP_INT32, BP_INT64,
                                      BP_UINT8, BP_FLOAT16, BP_FLOAT32,
                                      BP_FLOAT64, BP_BFLOAT16, BP_BOOL, 0};
static PyObject *torch_dtype_of[NDT];

/* torch.is_grad_enabled where torch has no autograd fallback for ops
 * without derivatives (before 2.1): there the bridge warns instead. */
static PyObject *torch_grad_enabled_fn;
static PyObject *s_requires_grad;

static int intern_names(void) {
  if (s_data_ptr)
    return 0;
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_shape = PyUnicode_InternFromString("shape");
  s_stride = PyUnicode_InternFromString("stride");
  s_dtype = PyUnicode_InternFromString("dtype");
  s_is_cuda = PyUnicode_InternFromString("is_cuda");
  s_get_device = PyUnicode_InternFromString("get_device");
  s_device = PyUnicode_InternFromString("device");
  s_is_cpu = PyUnicode_InternFromString("is_cpu");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
  return s_requires_grad && s_data_ptr && s_shape && s_stride && s_dtype && s_is_cuda &&
                 s_get_device && s_device && s_is_cpu
             ? 0 : -1;
}

int bpy_torch_known(void) {
  return torch_tensor_type != NULL;
}

/* ---- arguments ---------------------------------------------------------- */

/* Registers torch (backplane.torch does, when imported) once the program
 * has imported torch itself, so that torch tensors are read by their data
 * pointers even when backplane.torch was never imported. */
static void torch_if_imported(void) {
  static int trying;
  if (torch_tensor_type || trying)
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

int bpy_is_torch_tensor(PyObject *obj) {
  if (!torch_tensor_type)
    torch_if_imported();
  if (!torch_tensor_type)
    return 0;
  return Py_TYPE(obj) == torch_tensor_type ||
         PyObject_TypeCheck(obj, torch_tensor_type);
}

static int torch_device_of(PyObject *obj, int meta, bp_device *dev,
                           const char *what) {
  if (meta) {
    /* A meta tensor has no device Backplane knows; a fake CUDA tensor
     * stands for cuda when a plugin drives it, else for the CPU. */
    PyObject *c = PyObject_GetAttr(obj, s_is_cuda);
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
  PyObject *c = PyObject_GetAttr(obj, s_is_cpu);
  if (!c)
    return -1;
  int cpu = PyObject_IsTrue(c);
  Py_DECREF(c);
  if (cpu) {
    *dev = BP_CPU;
    return 0;
  }
  c = PyObject_GetAttr(obj, s_is_cuda);
  if (!c)
    return -1;
  int cuda = PyObject_IsTrue(c);
  Py_DECREF(c);
  if (cuda) {
    PyObject *i = PyObject_CallMethodObjArgs(obj, s_get_device, NULL);
    if (!i)
      return -1;
    long idx = PyLong_AsLong(i);
    Py_DECREF(i);
    if (idx == -1 && PyErr_Occurred())
      return -1;
    int32_t code;
    if (bp_device_type_from_name("cuda", &code) != BP_OK) {
      PyErr_Format(bpy_error_class(BP_ERR_DEVICE),
                   "%s: a torch tensor on cuda:%ld, but no loaded plugin "
                   "drives cuda", what ? what : "tensor", idx);
      return -1;
    }
    *dev = bp_device_make(code, (int32_t)idx);
    return 0;
  }
  PyObject *d = PyObject_GetAttr(obj, s_device);
  PyObject *s = d ? PyObject_Str(d) : NULL;
  Py_XDECREF(d);
  if (!s)
    return -1;
  PyErr_Format(bpy_error_class(BP_ERR_DEVICE), "%s: a torch tensor on "
               "device '%U', which Backplane does not drive (cpu and cuda "
               "are bridged)", what ? what : "tensor", s);
  Py_DECREF(s);
  return -1;
}

int bpy_from_torch(PyObject *obj, const char *what, bpy_conv *conv,
                   bp_tensor **out) {
  bpy_conv none = {0, 0, 0};
  if (!conv)
    conv = &none;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  int32_t ndim = 0, nstrides = 0;
  PyObject *dt = PyObject_GetAttr(obj, s_dtype);
  if (!dt)
    return -1;
  PyObject *code = PyDict_GetItem(torch_dtypes, dt); /* borrowed */
  if (!code) {
    PyObject *s = PyObject_Str(dt);
    Py_DECREF(dt);
    if (s) {
      PyErr_Format(bpy_error_class(BP_ERR_TYPE),
                   "%s: torch dtype %U has no Backplane dtype",
                   what ? what : "tensor", s);
      Py_DECREF(s);
    }
    return -1;
  }
  Py_DECREF(dt);
  int32_t dtype = (int32_t)PyLong_AsLong(code);
  bp_device dev = BP_CPU;
  if (!conv->torch_cpu && torch_device_of(obj, conv->meta, &dev, what) < 0)
    return -1;
  PyObject *shape = PyObject_GetAttr(obj, s_shape);
  if (!shape)
    return -1;
  int rc = bpy_read_int64s(shape, sizes, BP_MAX_NDIM, &ndim, what, "its shape");
  Py_DECREF(shape);
  if (rc < 0)
    return -1;
  /* A plain torch.Tensor's methods are called unbound, which saves making
   * a bound method; a subclass may override them. */
  int plain = Py_TYPE(obj) == torch_tensor_type;
  PyObject *st = plain
      ? PyObject_CallFunctionObjArgs(torch_stride_fn, obj, NULL)
      : PyObject_CallMethodObjArgs(obj, s_stride, NULL);
  if (!st)
    return -1;
  rc = bpy_read_int64s(st, strides, BP_MAX_NDIM, &nstrides, what, "its strides");
  Py_DECREF(st);
  if (rc < 0)
    return -1;
  if (conv->meta)
    return bpy_wrap_blob(obj, dev, dtype, ndim, sizes, strides, &bpy_no_data,
                         what, out);
  if (torch_grad_enabled_fn && !conv->grad_inputs) {
    PyObject *g = PyObject_GetAttr(obj, s_requires_grad);
    if (!g)
      return -1;
    conv->grad_inputs = g == Py_True;
    Py_DECREF(g);
  }
  PyObject *p = plain
      ? PyObject_CallFunctionObjArgs(torch_data_ptr_fn, obj, NULL)
      : PyObject_CallMethodObjArgs(obj, s_data_ptr, NULL);
  if (!p)
    return -1;
  void *data = PyLong_AsVoidPtr(p);
  Py_DECREF(p);
  if (!data && PyErr_Occurred())
    return -1;
  /* No data: a meta tensor (torch may hand one to the CPU kernel beside
   * CPU tensors), which says so by its device. */
  if (!data && conv->torch_cpu &&
      torch_device_of(obj, conv->meta, &dev, what) < 0)
    return -1;
  return bpy_wrap_blob(obj, dev, dtype, ndim, sizes, strides, data, what, out);
}

/* ---- results and registration ------------------------------------------ */

PyObject *bpy_tensor_to_torch(bp_tensor *t) {
  torch_if_imported();
  if (!torch_from_dlpack || !torch_bool) {
    PyErr_SetString(PyExc_RuntimeError, "an Op made with torch=True returns "
                    "torch tensors, but torch is not imported (import "
                    "backplane.torch)");
    return NULL;
  }
  const bp_tensor_view *v = bp_tensor_get_view(t);
  PyObject *cap = bpy_tensor_capsule(t);
  if (!cap)
    return NULL;
  int is_bool = v->dtype == BP_BOOL;
  if (is_bool) {
    /* torch before 2.1 takes no bool through DLPack: import the bytes as
     * uint8 and view them as bool, which shares them. */
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    m->dl_tensor.dtype.code = kDLUInt;
  }
  PyObject *r = PyObject_CallFunctionObjArgs(torch_from_dlpack, cap, NULL);
  Py_DECREF(cap);
  if (r && is_bool) {
    PyObject *b = PyObject_CallMethod(r, "view", "O", torch_bool);
    Py_DECREF(r);
    r = b;
  }
  return r;
}

PyObject *bpy_torch_dtype(int32_t dtype) {
  for (int i = 0; i < NDT; i++)
    if (dt_codes[i] == dtype)
      return torch_dtype_of[i];
  return NULL;
}

PyObject *bpy_set_torch(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *tensor_type, *dtypes, *from_dlpack, *grad_enabled = Py_None;
  if (!PyArg_ParseTuple(args, "OO!O|O:set_torch", &tensor_type, &PyDict_Type,
                        &dtypes, &from_dlpack, &grad_enabled))
    return NULL;
  if (!PyType_Check(tensor_type) || !PyCallable_Check(from_dlpack)) {
    PyErr_SetString(PyExc_TypeError, "set_torch(Tensor type, {dtype: code}, "
                    "from_dlpack)");
    return NULL;
  }
  if (intern_names() < 0)
    return NULL;
  PyObject *stride_fn = PyObject_GetAttr(tensor_type, s_stride);
  PyObject *data_ptr_fn = PyObject_GetAttr(tensor_type, s_data_ptr);
  if (!stride_fn || !data_ptr_fn) {
    Py_XDECREF(stride_fn);
    Py_XDECREF(data_ptr_fn);
    return NULL;
  }
  Py_XDECREF(torch_grad_enabled_fn);
  torch_grad_enabled_fn = NULL;
  if (grad_enabled != Py_None) {
    Py_INCREF(grad_enabled);
    torch_grad_enabled_fn = grad_enabled;
  }
  Py_XDECREF(torch_stride_fn);
  Py_XDECREF(torch_data_ptr_fn);
  torch_stride_fn = stride_fn;
  torch_data_ptr_fn = data_ptr_fn;
  Py_INCREF(tensor_type);
  Py_INCREF(dtypes);
  Py_INCREF(from_dlpack);
  Py_XDECREF(torch_tensor_type);
  Py_XDECREF(torch_dtypes);
  Py_XDECREF(torch_from_dlpack);
  torch_tensor_type = (PyTypeObject *)tensor_type;
  torch_dtypes = dtypes;
  torch_from_dlpack = from_dlpack;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dtypes, &pos, &key, &value)) {
    long code = PyLong_AsLong(value);
    if (code == -1 && PyErr_Occurred())
      return NULL;
    for (int i = 0; i < NDT; i++)
      if (dt_codes[i] == code) {
        Py_INCREF(key);
        Py_XDECREF(torch_dtype_of[i]);
        torch_dtype_of[i] = key;
        if (code == BP_BOOL) {
          Py_INCREF(key);
          Py_XDECREF(torch_bool);
          torch_bool = key;
        }
      }
  }
  Py_RETURN_NONE;
}

int bpy_torch_dtype_code(PyObject *obj, int32_t *out) {
  torch_if_imported();
  if (!torch_dtypes)
    return 0;
  PyObject *code = PyDict_GetItemWithError(torch_dtypes, obj);
  if (!code) {
    PyErr_Clear(); /* absent or unhashable: not a torch dtype */
    return 0;
  }
  *out = (int32_t)PyLong_AsLong(code);
  return 1;
}

int bpy_torch_grad_warning(bpy_conv *conv, PyObject *op_name) {
  int had = conv->grad_inputs;
  conv->grad_inputs = 0;
  if (!had || !torch_grad_enabled_fn)
    return 0;
  PyObject *on = PyObject_CallFunctionObjArgs(torch_grad_enabled_fn, NULL);
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
