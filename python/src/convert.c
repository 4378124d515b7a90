/*
 * convert.c - Python objects to and from Backplane values, without copies.
 *
 * Tensors come in five ways, fastest first:
 *   - a backplane.Tensor: a new reference to its bp_tensor;
 *   - a NumPy array: its layout read in place (ndarray.c) and wrapped with
 *     bp_tensor_from_blob, which holds a reference to the array;
 *   - a torch.Tensor (once backplane.torch registered torch): its data
 *     pointer, sizes, strides, dtype and device are read and wrapped with
 *     bp_tensor_from_blob, which holds a reference to the torch tensor;
 *   - anything with __dlpack__ (NumPy arrays, CuPy, JAX, ...): the capsule
 *     is imported with bp_tensor_from_dlpack, whose deleter is the
 *     producer's;
 *   - a read-only NumPy array or a NumPy bool array, which NumPy will not
 *     export through DLPack: __array_interface__, wrapped like a torch
 *     tensor.
 * A NumPy array that ndarray.c does not take (or every array, when the
 * running NumPy's layout fails ndarray.c's check) goes, on CPython 3.11
 * and later, through the buffer protocol instead of DLPack, which costs
 * about half as much: 3.11 made
 * PyObject_GetBuffer, PyBuffer_Release and the Py_buffer struct part of the
 * Stable ABI.  This module targets 3.9, whose Limited API lacks them, so
 * it finds them at run time (dlsym), only on an interpreter whose version
 * guarantees them, and mirrors the struct below.
 * Torch's side is in torchconv.c.
 * In every case the source stays alive while any bp_tensor uses its
 * memory, and is released when the last one dies (DLPack's deleter rule).
 */

#include "ext.h"

#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

static int intern_names(bpy_state *ms) {
  if (ms->s_dlpack)
    return 0;
  ms->s_dlpack = PyUnicode_InternFromString("__dlpack__");
  ms->s_array_interface = PyUnicode_InternFromString("__array_interface__");
  return ms->s_dlpack && ms->s_array_interface ? 0 : -1;
}

/* ---- errors ------------------------------------------------------------- */

static const char *type_name(PyObject *o) {
  /* tp_name is not in the Limited API; __name__ through the type is. */
  static char buf[96];
  PyObject *n = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
  const char *s = "object";
  PyObject *b = n ? PyUnicode_AsUTF8String(n) : NULL;
  if (b) {
    PyOS_snprintf(buf, sizeof buf, "%s", PyBytes_AsString(b));
    s = buf;
  }
  Py_XDECREF(b);
  Py_XDECREF(n);
  PyErr_Clear();
  return s;
}

static int arg_error(PyObject *exc, const char *what, const char *msg) {
  if (what)
    PyErr_Format(exc, "%s: %s", what, msg);
  else
    PyErr_SetString(exc, msg);
  return -1;
}

/* ---- NumPy's __array_interface__ (read-only and bool arrays) ----------- */

static int dtype_from_typestr(const char *ts, int32_t *out) {
  /* "<f4", "|b1", "=i8": byte order, kind, itemsize */
  static const struct { char kind; int size; int32_t code; } map[] = {
    {'b', 1, BP_BOOL}, {'i', 1, BP_INT8}, {'i', 2, BP_INT16},
    {'i', 4, BP_INT32}, {'i', 8, BP_INT64}, {'u', 1, BP_UINT8},
    {'f', 2, BP_FLOAT16}, {'f', 4, BP_FLOAT32}, {'f', 8, BP_FLOAT64},
  };
  if (strlen(ts) < 3)
    return -1;
  int little = 1;
  const unsigned char *probe = (const unsigned char *)&little;
  char native = probe[0] ? '<' : '>';
  if (ts[0] != '|' && ts[0] != '=' && ts[0] != native)
    return -1;
  int size = atoi(ts + 2);
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].kind == ts[1] && map[i].size == size) {
      *out = map[i].code;
      return 0;
    }
  return -1;
}

static int from_array_interface(bpy_state *ms, PyObject *obj, PyObject *ai,
                                const char *what, int writable,
                                bp_tensor **out) {
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  int32_t ndim = 0, nstrides = 0;
  if (!PyDict_Check(ai))
    return arg_error(PyExc_TypeError, what,
                     "__array_interface__ is not a dict");
  PyObject *typestr = PyDict_GetItemString(ai, "typestr");
  PyObject *data = PyDict_GetItemString(ai, "data");
  PyObject *shape = PyDict_GetItemString(ai, "shape");
  PyObject *strd = PyDict_GetItemString(ai, "strides");
  if (!typestr || !data || !shape || !PyTuple_Check(data) ||
      PyTuple_Size(data) != 2)
    return arg_error(PyExc_TypeError, what,
                     "__array_interface__ lacks typestr, data or shape");
  if (!PyUnicode_Check(typestr))
    return arg_error(PyExc_TypeError, what,
                     "__array_interface__'s typestr is not a str");
  PyObject *tsb = PyUnicode_AsUTF8String(typestr);
  if (!tsb)
    return -1;
  int32_t dtype = 0;
  int bad = dtype_from_typestr(PyBytes_AsString(tsb), &dtype);
  if (bad) {
    char ts[32];
    PyOS_snprintf(ts, sizeof ts, "%s", PyBytes_AsString(tsb));
    Py_DECREF(tsb);
    PyErr_Format(bpy_error_class(ms, BP_ERR_TYPE),
                 "%s: array element type '%s' has no "
                 "Backplane dtype (native byte order bool, int8-64, uint8, "
                 "float16-64 do)",
                 what ? what : "tensor", ts);
    return -1;
  }
  Py_DECREF(tsb);
  if (writable && PyObject_IsTrue(PyTuple_GetItem(data, 1)))
    return arg_error(bpy_error_class(ms, BP_ERR_INVALID_ARGUMENT), what,
                     "the array is read-only, and the op writes it");
  void *ptr = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
  if (!ptr && PyErr_Occurred())
    return -1;
  if (bpy_read_int64s(ms, shape, sizes, BP_MAX_NDIM, &ndim, what, "its shape") <
      0)
    return -1;
  const int64_t *sp = NULL;
  if (strd && strd != Py_None) {
    if (bpy_read_int64s(ms, strd, strides, BP_MAX_NDIM, &nstrides, what,
                        "its strides") < 0)
      return -1;
    if (nstrides != ndim) {
      char m[120];
      PyOS_snprintf(m, sizeof m, "__array_interface__ has %d strides for "
                    "%d dimensions", (int)nstrides, (int)ndim);
      return arg_error(bpy_error_class(ms, BP_ERR_SHAPE), what, m);
    }
    int64_t item = (int64_t)bp_dtype_size(dtype);
    for (int32_t i = 0; i < nstrides; i++) {
      if (strides[i] % item != 0 || strides[i] < 0) {
        char m[160];
        PyOS_snprintf(m, sizeof m, "the stride of %lld bytes in dimension "
                      "%d is negative or not a multiple of the item size; "
                      "copy the array first", (long long)strides[i], (int)i);
        return arg_error(bpy_error_class(ms, BP_ERR_SHAPE), what, m);
      }
      strides[i] /= item;
    }
    sp = strides;
  }
  /* The tensor holds obj and the interface dict both: the dict may be what
   * keeps the data alive (a NumPy scalar's is a temporary array, held only
   * by the dict's "__ref"). */
  PyObject *owner = PyTuple_Pack(2, obj, ai);
  if (!owner)
    return -1;
  int rc = bpy_wrap_blob(ms, owner, BP_CPU, dtype, ndim, sizes, sp, ptr, what,
                         out);
  Py_DECREF(owner);
  return rc;
}

/* ---- the buffer protocol (CPython >= 3.11) ------------------------------ */

/* Py_buffer, as the Stable ABI fixed it in 3.11. */
typedef struct stable_buffer {
  void *buf;
  PyObject *obj;
  Py_ssize_t len;
  Py_ssize_t itemsize;
  int readonly;
  int ndim;
  char *format;
  Py_ssize_t *shape;
  Py_ssize_t *strides;
  Py_ssize_t *suboffsets;
  void *internal;
} stable_buffer;

#define BUF_WRITABLE 0x0001
#define BUF_RECORDS_RO 0x001c  /* PyBUF_STRIDES | PyBUF_FORMAT */

static int (*get_buffer)(PyObject *, stable_buffer *, int);
static void (*release_buffer)(stable_buffer *);

void bpy_convert_init(void) {
  int major = 0, minor = 0;
  if (sscanf(Py_GetVersion(), "%d.%d", &major, &minor) != 2 ||
      major * 100 + minor < 311)
    return;
  get_buffer = (int (*)(PyObject *, stable_buffer *, int))dlsym(
      RTLD_DEFAULT, "PyObject_GetBuffer");
  release_buffer = (void (*)(stable_buffer *))dlsym(RTLD_DEFAULT,
                                                    "PyBuffer_Release");
  if (!get_buffer || !release_buffer)
    get_buffer = NULL;
}

/* numpy.ndarray once NumPy is imported (it is never imported here). */
static int is_ndarray(bpy_state *ms, PyObject *obj) {
  if (!ms->ndarray_type) {
    PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
    PyObject *np = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
    PyObject *t = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
    if (!t) {
      PyErr_Clear();
      return 0;
    }
    if (!PyType_Check(t)) {
      Py_DECREF(t);
      return 0;
    }
    ms->ndarray_type = (PyTypeObject *)t; /* kept in the module state */
  }
  return Py_TYPE(obj) == ms->ndarray_type;
}

static int dtype_from_format(const char *f, Py_ssize_t itemsize,
                             int32_t *out) {
  if (*f == '@' || *f == '=' || *f == '<' ||
      (*f == '>' && itemsize == 1) || *f == '|')
    f++;
  if (f[0] == '\0' || f[1] != '\0')
    return -1;
  switch (f[0]) {
    case '?': *out = BP_BOOL; break;
    case 'b': *out = BP_INT8; break;
    case 'B': *out = BP_UINT8; break;
    case 'e': *out = BP_FLOAT16; break;
    case 'f': *out = BP_FLOAT32; break;
    case 'd': *out = BP_FLOAT64; break;
    case 'h': case 'i': case 'l': case 'q':
      *out = itemsize == 2 ? BP_INT16 : itemsize == 4 ? BP_INT32
             : itemsize == 8 ? BP_INT64 : 0;
      return *out ? 0 : -1;
    default:
      return -1;
  }
  return (Py_ssize_t)bp_dtype_size(*out) == itemsize ? 0 : -1;
}

/* 1 when done (or failed, with an exception), 0 to take another way. */
static int from_buffer(bpy_state *ms, PyObject *obj, int writable,
                       bp_tensor **out, int *rc) {
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  stable_buffer b;
  if (get_buffer(obj, &b, BUF_RECORDS_RO | (writable ? BUF_WRITABLE : 0)) <
      0) {
    PyErr_Clear(); /* DLPack or __array_interface__ will say why */
    return 0;
  }
  int32_t dtype = 0;
  int usable = b.ndim <= BP_MAX_NDIM && b.format &&
               dtype_from_format(b.format, b.itemsize, &dtype) == 0;
  for (int i = 0; usable && i < b.ndim; i++) {
    sizes[i] = b.shape[i];
    usable = b.strides[i] >= 0 && b.strides[i] % b.itemsize == 0;
    strides[i] = b.strides[i] / (b.itemsize ? b.itemsize : 1);
  }
  /* The tensor keeps the array itself alive, as the DLPack path does; the
   * buffer view is only the way to read its layout.  (NumPy refuses to
   * resize an array that other objects reference.) */
  if (usable)
    *rc = bpy_wrap_blob(ms, obj, BP_CPU, dtype, b.ndim, sizes, strides, b.buf,
                        NULL, out);
  release_buffer(&b);
  return usable;
}

/* ---- DLPack ------------------------------------------------------------- */

int bpy_from_capsule(bpy_state *ms, PyObject *cap, bp_tensor **out) {
  if (!PyCapsule_IsValid(cap, "dltensor")) {
    PyErr_SetString(PyExc_ValueError,
                    "from_dlpack: the capsule is not an unconsumed "
                    "'dltensor' capsule (each capsule is consumed once)");
    return -1;
  }
  DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
  if (!m)
    return -1;
  bp_status st = bp_tensor_from_dlpack(m, out);
  if (st != BP_OK) {
    bpy_raise(ms, st);
    return -1;
  }
  if (PyCapsule_SetName(cap, "used_dltensor") < 0) {
    /* cannot happen for a valid capsule; the tensor owns m now */
    bp_tensor_release(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

int bpy_to_tensor(bpy_state *ms, PyObject *obj, const char *what, int writable,
                  bpy_conv *conv, bp_tensor **out) {
  if (intern_names(ms) < 0)
    return -1;
  if (bpy_tensor_check(ms, obj)) {
    if (writable && ((bpy_tensor *)obj)->readonly)
      return arg_error(bpy_error_class(ms, BP_ERR_INVALID_ARGUMENT), what,
                       "the tensor wraps a read-only array, and the op "
                       "writes it");
    *out = bp_tensor_retain(((bpy_tensor *)obj)->t);
    return 0;
  }
  if (bpy_torch_known(ms) && bpy_is_torch_tensor(ms, obj))
    return bpy_from_torch(ms, obj, what, conv, out);
  if (is_ndarray(ms, obj)) {
    bpy_array a;
    int brc;
    if (bpy_ndarray_read(ms, obj, writable, &a))
      return bpy_wrap_blob(ms, obj, BP_CPU, a.dtype, a.ndim, a.sizes, a.strides,
                           a.data, what, out);
    if (get_buffer && from_buffer(ms, obj, writable, out, &brc))
      return brc;
  }
  if (!bpy_torch_known(ms) && bpy_is_torch_tensor(ms, obj))
    return bpy_from_torch(ms, obj, what, conv, out);
  if (PyCapsule_CheckExact(obj))
    return bpy_from_capsule(ms, obj, out);
  PyObject *cap = PyObject_CallMethodObjArgs(obj, ms->s_dlpack, NULL);
  if (cap) {
    int rc = bpy_from_capsule(ms, cap, out);
    Py_DECREF(cap);
    return rc;
  }
  /* NumPy exports neither read-only nor bool arrays through DLPack. */
  if (PyErr_ExceptionMatches(PyExc_BufferError) ||
      PyErr_ExceptionMatches(PyExc_AttributeError) ||
      PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *ai = PyObject_GetAttr(obj, ms->s_array_interface);
    if (ai) {
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
      int rc = from_array_interface(ms, obj, ai, what, writable, out);
      Py_DECREF(ai);
      return rc;
    }
    PyErr_Clear();
    if (t && PyErr_GivenExceptionMatches(t, PyExc_AttributeError)) {
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
      char m[256];
      PyOS_snprintf(m, sizeof m, "expected a tensor (backplane.Tensor, a "
                    "NumPy array, a torch tensor, or an object with "
                    "__dlpack__), got %s", type_name(obj));
      return arg_error(PyExc_TypeError, what, m);
    }
    PyErr_Restore(t, v, tb);
  }
  return -1;
}

/* ---- dtypes and devices ------------------------------------------------- */

int bpy_to_dtype(bpy_state *ms, PyObject *obj, int32_t *out) {
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {
    long c = PyLong_AsLong(obj);
    if (c == -1 && PyErr_Occurred())
      return -1;
    if (!bp_dtype_name((int32_t)c)) {
      PyErr_Format(bpy_error_class(ms, BP_ERR_TYPE),
                   "%ld is not a Backplane dtype code", c);
      return -1;
    }
    *out = (int32_t)c;
    return 0;
  }
  if (!PyUnicode_Check(obj) && bpy_torch_dtype_code(ms, obj, out))
    return 0;
  PyObject *name = NULL;
  if (PyUnicode_Check(obj)) {
    name = obj;
    Py_INCREF(name);
  } else {
    /* NumPy: np.float32, np.dtype('float32'), 'f4' ... through np.dtype */
    PyObject *np = PyImport_ImportModule("numpy");
    if (np) {
      PyObject *d = PyObject_CallMethod(np, "dtype", "O", obj);
      Py_DECREF(np);
      if (d) {
        name = PyObject_GetAttrString(d, "name");
        Py_DECREF(d);
      }
    }
    if (!name) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "expected a dtype (a name such as "
                   "'float32', a NumPy or torch dtype), got %s",
                   type_name(obj));
      return -1;
    }
  }
  PyObject *b = PyUnicode_AsUTF8String(name);
  Py_DECREF(name);
  if (!b)
    return -1;
  const char *s = PyBytes_AsString(b);
  if ((Py_ssize_t)strlen(s) != PyBytes_Size(b)) {
    Py_DECREF(b);
    PyErr_SetString(bpy_error_class(ms, BP_ERR_TYPE),
                    "unknown dtype: the name holds a NUL character");
    return -1;
  }
  if (strncmp(s, "torch.", 6) == 0)
    s += 6;
  bp_status st = bp_dtype_from_name(s, out);
  if (st != BP_OK) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_TYPE),
                 "unknown dtype '%s' (Backplane has "
                 "bool, uint8, int8, int16, int32, int64, float16, bfloat16, "
                 "float32, float64)",
                 s);
    Py_DECREF(b);
    return -1;
  }
  Py_DECREF(b);
  return 0;
}
