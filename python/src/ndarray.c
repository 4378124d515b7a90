/*
 * ndarray.c - a NumPy array's layout, read in place.
 *
 * Through the buffer protocol, NumPy builds a format string and fills a
 * Py_buffer on every request: about 900 instructions, more than a third of
 * a call of core.add on small arrays.  NumPy's ABI fixes the head of its
 * array and dtype objects (the fields of PyArrayObject_fields up to flags,
 * and of PyArray_Descr up to type_num: the same from NumPy 1.7 through
 * 2.x, which kept type_num in place when it widened the dtype's flags),
 * and extensions that do not compile against NumPy's headers read them
 * through a mirror of that head, as pybind11 does.  So does this file.
 *
 * The mirror is trusted only once it is checked.  The first time an array
 * arrives, small probe arrays are made through NumPy's Python API and what
 * the mirror reads of them is compared with what their
 * __array_interface__ says: the data pointer, shape, strides, every dtype
 * Backplane maps, the byte order and the writeable flag.  If anything
 * disagrees (a NumPy whose layout changed), the mirror is never used and
 * every array takes the buffer protocol or DLPack, as before.
 *
 * Only what the mirror reads safely is taken here: an exact
 * numpy.ndarray, aligned, in native byte order, of a dtype Backplane has,
 * with non-negative strides that are whole elements, and writeable when
 * the op writes it.  Everything else returns 0, and the caller takes its
 * other ways, which also word the errors.
 */

#include "ext.h"

#include <string.h>

/* The head of NumPy's PyArrayObject_fields. */
typedef struct np_array {
  PyObject ob_base; /* PyObject_HEAD */
  char *data;
  int nd;
  Py_ssize_t *dimensions;
  Py_ssize_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
} np_array;

/* The head of NumPy's PyArray_Descr. */
typedef struct np_descr {
  PyObject ob_base; /* PyObject_HEAD */
  PyTypeObject *typeobj;
  char kind;
  char type;
  char byteorder;
  char flags_1x; /* NumPy 1.x's flags, 2.x's _former_flags */
  int type_num;
} np_descr;

/* NumPy's flag bits and type numbers (numpy/ndarraytypes.h). */
#define NP_ALIGNED 0x0100u
#define NP_WRITEABLE 0x0400u
#define NP_WARN_ON_WRITE 0x80000000u

enum {
  NP_BOOL = 0,
  NP_BYTE = 1,
  NP_UBYTE = 2,
  NP_SHORT = 3,
  NP_INT = 5,
  NP_LONG = 7,
  NP_LONGLONG = 9,
  NP_FLOAT = 11,
  NP_DOUBLE = 12,
  NP_HALF = 23
};

/* The Backplane dtype of a NumPy type number, or -1. */
static int32_t dtype_of(int type_num) {
  switch (type_num) {
    case NP_BOOL:
      return BP_BOOL;
    case NP_BYTE:
      return BP_INT8;
    case NP_UBYTE:
      return BP_UINT8;
    case NP_SHORT:
      return sizeof(short) == 2 ? BP_INT16 : -1;
    case NP_INT:
      return sizeof(int) == 4 ? BP_INT32 : -1;
    case NP_LONG:
      return sizeof(long) == 8 ? BP_INT64 : sizeof(long) == 4 ? BP_INT32 : -1;
    case NP_LONGLONG:
      return sizeof(long long) == 8 ? BP_INT64 : -1;
    case NP_FLOAT:
      return BP_FLOAT32;
    case NP_DOUBLE:
      return BP_FLOAT64;
    case NP_HALF:
      return BP_FLOAT16;
    default:
      return -1;
  }
}

static int native_order(char order) {
  static const int one = 1;
  char native = *(const unsigned char *)&one ? '<' : '>';
  return order == '=' || order == '|' || order == native;
}

/* ---- the check of the mirror ------------------------------------------- */

/* 0 when obj's __array_interface__ gives the same data pointer, shape and
 * strides (in bytes) as the mirror reads; -1 otherwise (no exception). */
static int same_as_interface(PyObject *obj) {
  const np_array *a = (const np_array *)obj;
  PyObject *ai = PyObject_GetAttrString(obj, "__array_interface__");
  int ok = ai && PyDict_Check(ai);
  PyObject *data = ok ? PyDict_GetItemString(ai, "data") : NULL;
  PyObject *shape = ok ? PyDict_GetItemString(ai, "shape") : NULL;
  PyObject *strides = ok ? PyDict_GetItemString(ai, "strides") : NULL;
  ok = data && shape && PyTuple_Check(data) && PyTuple_Size(data) == 2 &&
       PyTuple_Check(shape) && PyTuple_Size(shape) == a->nd && a->nd >= 0;
  if (ok) {
    void *p = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    ok = p == (void *)a->data && PyObject_IsTrue(PyTuple_GetItem(data, 1)) ==
                                     !((unsigned)a->flags & NP_WRITEABLE);
  }
  for (Py_ssize_t i = 0; ok && i < a->nd; i++)
    ok = PyLong_AsSsize_t(PyTuple_GetItem(shape, i)) == a->dimensions[i];
  /* strides is None for a C-contiguous array */
  if (ok && strides && strides != Py_None) {
    ok = PyTuple_Check(strides) && PyTuple_Size(strides) == a->nd;
    for (Py_ssize_t i = 0; ok && i < a->nd; i++)
      ok = PyLong_AsSsize_t(PyTuple_GetItem(strides, i)) == a->strides[i];
  }
  Py_XDECREF(ai);
  PyErr_Clear();
  return ok ? 0 : -1;
}

/* np.zeros(shape, dtype=name) as a new reference, or NULL. */
static PyObject *probe_array(bpy_state *ms, PyObject *np, PyObject *shape,
                             const char *name) {
  PyObject *a = PyObject_CallMethod(np, "zeros", "Os", shape, name);
  if (a && Py_TYPE(a) != ms->ndarray_type)
    Py_CLEAR(a);
  return a;
}

/* 0 when a 1-element array of each dtype Backplane maps reads as that
 * dtype, with its itemsize as stride, and a non-native one reads as not
 * native. */
static int check_dtypes(bpy_state *ms, PyObject *np) {
  static const struct {
    const char *name;
    int32_t dtype;
  } map[] = {
      {"bool", BP_BOOL},
      {"int8", BP_INT8},
      {"uint8", BP_UINT8},
      {"int16", BP_INT16},
      {"int32", BP_INT32},
      {"int64", BP_INT64},
      {"longlong", BP_INT64},
      {"float16", BP_FLOAT16},
      {"float32", BP_FLOAT32},
      {"float64", BP_FLOAT64},
      {NULL, -1}, /* float32 in the other byte order */
      {"uint16", -1},
  };
  static const int one = 1;
  const char *swapped = *(const unsigned char *)&one ? ">f4" : "<f4";
  PyObject *shape = Py_BuildValue("(i)", 1);
  int rc = shape ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < sizeof map / sizeof map[0]; i++) {
    PyObject *a =
        probe_array(ms, np, shape, map[i].name ? map[i].name : swapped);
    const np_array *v = (const np_array *)a;
    const np_descr *d = a ? (const np_descr *)v->descr : NULL;
    int32_t want = map[i].dtype;
    if (!d || v->nd != 1 || v->dimensions[0] != 1 || same_as_interface(a) < 0)
      rc = -1;
    else if (want < 0)
      rc = dtype_of(d->type_num) >= 0 && native_order(d->byteorder) ? -1 : 0;
    else
      rc = dtype_of(d->type_num) == want && native_order(d->byteorder) &&
                   v->strides[0] == (Py_ssize_t)bp_dtype_size(want)
               ? 0
               : -1;
    Py_XDECREF(a);
  }
  Py_XDECREF(shape);
  return rc;
}

/* 0 when a strided view of a float32 matrix, np.zeros((3, 5))[::2, 1:],
 * reads as such, writeable and aligned, and no longer writeable once its
 * flags say so. */
static int check_view(bpy_state *ms, PyObject *np) {
  PyObject *shape = Py_BuildValue("(ii)", 3, 5);
  PyObject *base = shape ? probe_array(ms, np, shape, "float32") : NULL;
  PyObject *two = PyLong_FromLong(2), *one = PyLong_FromLong(1);
  PyObject *s0 = two ? PySlice_New(Py_None, Py_None, two) : NULL;
  PyObject *s1 = one ? PySlice_New(one, Py_None, Py_None) : NULL;
  PyObject *key = s0 && s1 ? PyTuple_Pack(2, s0, s1) : NULL;
  PyObject *view = base && key ? PyObject_GetItem(base, key) : NULL;
  int rc = -1;
  if (view && Py_TYPE(view) == ms->ndarray_type) {
    const np_array *v = (const np_array *)view;
    const np_array *b = (const np_array *)base;
    const np_descr *d = (const np_descr *)v->descr;
    unsigned need = NP_ALIGNED | NP_WRITEABLE;
    rc = v->nd == 2 && v->dimensions[0] == 2 && v->dimensions[1] == 4 &&
                 v->strides[0] == 40 && v->strides[1] == 4 &&
                 v->data == b->data + 4 && v->base == base &&
                 dtype_of(d->type_num) == BP_FLOAT32 &&
                 ((unsigned)v->flags & need) == need &&
                 same_as_interface(view) == 0
             ? 0
             : -1;
    PyObject *flags = rc == 0 ? PyObject_GetAttrString(view, "flags") : NULL;
    if (!flags || PyObject_SetAttrString(flags, "writeable", Py_False) < 0 ||
        ((unsigned)v->flags & NP_WRITEABLE) || same_as_interface(view) < 0)
      rc = -1;
    Py_XDECREF(flags);
  }
  Py_XDECREF(view);
  Py_XDECREF(key);
  Py_XDECREF(s1);
  Py_XDECREF(s0);
  Py_XDECREF(one);
  Py_XDECREF(two);
  Py_XDECREF(base);
  Py_XDECREF(shape);
  return rc;
}

/* Checks the mirror against the NumPy that made ms->ndarray_type, once per
 * module; 1 when it may be used, else -1.  Never raises. */
static int check_mirror(bpy_state *ms) {
  if (ms->np_mirror)
    return ms->np_mirror;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
  PyObject *np = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
  int ok = np && check_dtypes(ms, np) == 0 && check_view(ms, np) == 0;
  PyErr_Clear();
  PyErr_Restore(t, v, tb);
  ms->np_mirror = ok ? 1 : -1;
  return ms->np_mirror;
}

int bpy_ndarray_mirror(bpy_state *ms) {
  return ms->ndarray_type && check_mirror(ms) == 1;
}

/* ---- reading an array --------------------------------------------------- */

int bpy_ndarray_read(bpy_state *ms, PyObject *obj, int writable,
                     bpy_array *out) {
  if (ms->np_mirror != 1 && check_mirror(ms) != 1)
    return 0;
  const np_array *a = (const np_array *)obj;
  unsigned flags = (unsigned)a->flags;
  unsigned need = NP_ALIGNED | (writable ? NP_WRITEABLE : 0);
  if ((flags & need) != need || (writable && (flags & NP_WARN_ON_WRITE)) ||
      a->nd < 0 || a->nd > BP_MAX_NDIM)
    return 0;
  const np_descr *d = (const np_descr *)a->descr;
  int32_t dtype = dtype_of(d->type_num);
  if (dtype < 0 || !native_order(d->byteorder))
    return 0;
  Py_ssize_t item = (Py_ssize_t)bp_dtype_size(dtype);
  for (int i = 0; i < a->nd; i++) {
    Py_ssize_t s = a->strides[i];
    if (s < 0 || s % item != 0)
      return 0;
    out->sizes[i] = a->dimensions[i];
    out->strides[i] = s / item;
  }
  out->data = a->data;
  out->dtype = dtype;
  out->ndim = a->nd;
  return 1;
}
