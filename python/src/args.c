/*
 * args.c - an Op call's arguments and results: binding Python arguments to
 * the schema (positionally up to `*`, then by keyword, defaults for the
 * rest), converting each to a bp_value, and converting the results back.
 */
#include "op.h"

#include <string.h>

/* ---- one call's temporaries --------------------------------------------- */


void bpy_release_state(call_state *cs) {
  int saved = bpy_holds_gil;
  bpy_holds_gil = 1;
  for (int i = 0; i < cs->ntensors; i++)
    bp_tensor_release(cs->tensors[i]);
  for (int i = 0; i < cs->nlists; i++) {
    bp_tensor **l = cs->tensor_lists[i];
    for (size_t k = 0; l[k]; k++)
      bp_tensor_release(l[k]);
    PyMem_Free(l);
  }
  for (int i = 0; i < cs->nkeep; i++)
    Py_DECREF(cs->keep[i]);
  for (int i = 0; i < cs->nheap; i++)
    PyMem_Free(cs->heap[i]);
  bpy_holds_gil = saved;
}

static void count_work(call_state *cs, const bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  cs->work += v->device.type == BP_DEVICE_CPU ? v->numel : GIL_THRESHOLD;
}

static void *scratch(call_state *cs, size_t n) {
  if (cs->used + n <= ARENA) {
    void *p = &cs->arena[cs->used];
    cs->used += n;
    return p;
  }
  void *p = PyMem_Malloc(n * 8 + 8);
  if (!p) {
    PyErr_NoMemory();
    return NULL;
  }
  cs->heap[cs->nheap++] = p;
  return p;
}

/* Raises the exception (t, v, tb), which it takes, again as t(msg), msg
 * the old message with `prefix` (taken, may be NULL) before it.  An
 * exception class whose constructor takes more than a message
 * (UnicodeEncodeError) is raised as it was. */
static void reraise_prefixed(PyObject *t, PyObject *v, PyObject *tb,
                             PyObject *prefix) {
  PyErr_NormalizeException(&t, &v, &tb);
  PyObject *old = v ? PyObject_Str(v) : NULL;
  PyObject *msg = old && prefix ? PyUnicode_Concat(prefix, old) : NULL;
  PyObject *e = msg ? PyObject_CallFunctionObjArgs(t, msg, NULL) : NULL;
  Py_XDECREF(old);
  Py_XDECREF(msg);
  Py_XDECREF(prefix);
  if (e && PyObject_TypeCheck(e, (PyTypeObject *)t)) {
    PyErr_SetObject(t, e);
    Py_DECREF(e);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return;
  }
  Py_XDECREF(e);
  PyErr_Clear();
  PyErr_Restore(t, v, tb);
}

/* Prefixes the pending exception's message with the op and argument. */
static void arg_context(const bpy_op *self, const op_schema *sc, int32_t i) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  reraise_prefixed(t, v, tb,
                   PyUnicode_FromFormat("%U(): argument '%s' (#%d, %s): ",
                                        self->name, sc->args[i].info.name,
                                        (int)i, sc->args[i].info.type));
}

static int to_int64(PyObject *o, int64_t *out) {
  if (PyFloat_Check(o) || PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "expected an int, got a %s",
                 PyBool_Check(o) ? "bool" : "float");
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i)
    return -1;
  *out = PyLong_AsLongLong(i);
  Py_DECREF(i);
  return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int to_double(PyObject *o, double *out) {
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "expected a float, got a %s",
                 PyBool_Check(o) ? "bool" : "str");
    return -1;
  }
  *out = PyFloat_AsDouble(o);
  return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* A Scalar argument (ABI 1.2), as torch reads a Python number: a bool is a
 * bool, an int an int, a float a float; a NumPy scalar (or 0-d array) by
 * its dtype's kind.  The value's tag says which. */
static int to_scalar(PyObject *o, bp_value *v) {
  static const char want[] = "expected a number (int, float or bool)";
  if (PyBool_Check(o)) {
    v->tag = BP_TAG_BOOL;
    v->u.b = o == Py_True;
    return 0;
  }
  if (PyLong_Check(o)) {
    v->tag = BP_TAG_INT;
    return to_int64(o, &v->u.i);
  }
  if (PyFloat_Check(o)) {
    v->tag = BP_TAG_FLOAT;
    v->u.f = PyFloat_AsDouble(o);
    return 0;
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s, got a str", want);
    return -1;
  }
  /* NumPy: a scalar or a 0-d array, by its dtype's kind. */
  PyObject *dt = PyObject_GetAttrString(o, "dtype");
  PyObject *kind = dt ? PyObject_GetAttrString(dt, "kind") : NULL;
  PyObject *nd = kind ? PyObject_GetAttrString(o, "ndim") : NULL;
  Py_XDECREF(dt);
  PyErr_Clear();
  long ndim = nd ? PyLong_AsLong(nd) : -1;
  Py_XDECREF(nd);
  PyErr_Clear();
  char k = 0;
  if (kind && PyUnicode_Check(kind) && PyUnicode_GetLength(kind) == 1)
    k = (char)PyUnicode_ReadChar(kind, 0);
  Py_XDECREF(kind);
  if (!k || ndim != 0) {
    PyErr_Format(PyExc_TypeError, "%s%s", want,
                 k && ndim > 0 ? ", got an array with dimensions" : "");
    return -1;
  }
  int r = 0;
  if (k == 'b') {
    int t = PyObject_IsTrue(o);
    v->tag = BP_TAG_BOOL;
    v->u.b = t > 0;
    r = t < 0 ? -1 : 0;
  } else if (k == 'i' || k == 'u') {
    v->tag = BP_TAG_INT;
    r = to_int64(o, &v->u.i);
  } else if (k == 'f') {
    v->tag = BP_TAG_FLOAT;
    r = to_double(o, &v->u.f);
  } else {
    PyErr_Format(PyExc_TypeError, "%s, got a NumPy scalar of kind '%c'", want, k);
    return -1;
  }
  return r;
}

/* A number list argument: a sequence, or one number for `T[N]` (repeated
 * N times) and `T[]` (a list of one), as torch takes them. */
static int to_number_list(bpy_state *ms, call_state *cs, PyObject *o,
                          const bp_arg_info *a, bp_value *v) {
  int ints = a->tag == BP_TAG_INT_LIST;
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) {
    PyErr_Format(PyExc_TypeError, "expected a list of %s, got a str",
                 ints ? "ints" : "floats");
    return -1;
  }
  /* A sequence (a list, a tuple, a 1-D NumPy array) is a list; anything
   * else must be one number. */
  Py_ssize_t n = PySequence_Check(o) ? PySequence_Size(o) : -1;
  int scalar = n < 0;
  if (scalar) {
    PyErr_Clear();
    if (!PyLong_Check(o) && !PyFloat_Check(o) && !PyIndex_Check(o)) {
      PyErr_Format(PyExc_TypeError, "expected a list of %s or one number",
                   ints ? "ints" : "floats");
      return -1;
    }
    n = a->list_size > 0 ? a->list_size : 1;
  }
  /* T[N] takes N elements, one (repeated N times, as torch takes
   * kernel_size=[3]) or none (torch's "derived from another argument"). */
  int repeat = !scalar && a->list_size > 1 && n == 1;
  if (repeat)
    n = a->list_size;
  if (a->list_size >= 0 && n != a->list_size && n != 0) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_INVALID_ARGUMENT),
                 "expected %d elements, got %zd", (int)a->list_size, n);
    return -1;
  }
  void *buf = scratch(cs, (size_t)n);
  if (!buf)
    return -1;
  for (Py_ssize_t k = 0; k < n; k++) {
    PyObject *x = scalar ? (Py_INCREF(o), o)
                         : PySequence_GetItem(o, repeat ? 0 : k);
    if (!x)
      return -1;
    int rc = ints ? to_int64(x, (int64_t *)buf + k)
                  : to_double(x, (double *)buf + k);
    Py_DECREF(x);
    if (rc < 0)
      return -1;
  }
  v->tag = (uint32_t)a->tag;
  v->len = (uint32_t)n;
  if (ints)
    v->u.ints = buf;
  else
    v->u.floats = buf;
  return 0;
}

static int to_tensor_list(bpy_state *ms, call_state *cs, PyObject *o,
                          const bp_arg_info *a, bp_value *v) {
  Py_ssize_t n = PySequence_Size(o);
  if (n < 0 || PyUnicode_Check(o)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "expected a list of tensors");
    return -1;
  }
  if (a->list_size >= 0 && n != a->list_size) {
    PyErr_Format(bpy_error_class(ms, BP_ERR_INVALID_ARGUMENT),
                 "expected %d tensors, got %zd", (int)a->list_size, n);
    return -1;
  }
  bp_tensor **l = PyMem_Calloc((size_t)n + 1, sizeof *l);
  if (!l) {
    PyErr_NoMemory();
    return -1;
  }
  cs->tensor_lists[cs->nlists++] = l; /* NULL-terminated as it fills */
  for (Py_ssize_t k = 0; k < n; k++) {
    PyObject *x = PySequence_GetItem(o, k);
    if (!x)
      return -1;
    int rc = bpy_to_tensor(ms, x, NULL, (a->flags & BP_ARG_WRITTEN) != 0,
                           &cs->conv, &l[k]);
    Py_DECREF(x);
    if (rc == 0)
      count_work(cs, l[k]);
    if (rc < 0) {
      PyObject *t, *e, *tb;
      PyErr_Fetch(&t, &e, &tb);
      reraise_prefixed(t, e, tb, PyUnicode_FromFormat("element %zd: ", k));
      return -1;
    }
  }
  v->tag = BP_TAG_TENSOR_LIST;
  v->len = (uint32_t)n;
  v->u.tensors = l;
  return 0;
}

/* Converts one given argument onto the stack slot v. */
static int to_value(bpy_state *ms, call_state *cs, PyObject *o,
                    const bp_arg_info *a, bp_value *v) {
  memset(v, 0, sizeof *v);
  if (o == Py_None) {
    if (a->flags & BP_ARG_OPTIONAL) {
      v->tag = BP_TAG_NONE;
      return 0;
    }
    PyErr_SetString(PyExc_TypeError, "None given, but the argument is not "
                    "optional");
    return -1;
  }
  v->tag = (uint32_t)a->tag;
  switch (a->tag) {
    case BP_TAG_TENSOR:
      if (bpy_to_tensor(ms, o, NULL, (a->flags & BP_ARG_WRITTEN) != 0,
                        &cs->conv, &v->u.tensor) < 0)
        return -1;
      cs->tensors[cs->ntensors++] = v->u.tensor;
      count_work(cs, v->u.tensor);
      return 0;
    case BP_TAG_INT:
      return to_int64(o, &v->u.i);
    case BP_TAG_FLOAT:
      return to_double(o, &v->u.f);
    case BP_TAG_BOOL:
      if (!PyBool_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected a bool (True or False)");
        return -1;
      }
      v->u.b = o == Py_True;
      return 0;
    case BP_TAG_STR: {
      if (!PyUnicode_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected a str");
        return -1;
      }
      PyObject *b = PyUnicode_AsUTF8String(o);
      if (!b)
        return -1;
      cs->keep[cs->nkeep++] = b;
      v->u.str = PyBytes_AsString(b);
      v->len = (uint32_t)PyBytes_Size(b);
      if (strlen(v->u.str) != v->len) {
        PyErr_SetString(PyExc_ValueError, "the str holds a NUL character");
        return -1;
      }
      return 0;
    }
    case BP_TAG_INT_LIST:
    case BP_TAG_FLOAT_LIST:
      return to_number_list(ms, cs, o, a, v);
    case BP_TAG_TENSOR_LIST:
      return to_tensor_list(ms, cs, o, a, v);
    case BP_TAG_SCALAR_TYPE: {
      int32_t dt;
      if (bpy_to_dtype(ms, o, &dt) < 0)
        return -1;
      v->u.i = dt;
      return 0;
    }
    case BP_TAG_DEVICE:
      return bpy_to_device(ms, o, &v->u.device);
    case BP_TAG_SCALAR:
      return to_scalar(o, v);
    default:
      PyErr_Format(PyExc_TypeError, "the argument's type (tag %d) is not "
                   "supported from Python", (int)a->tag);
      return -1;
  }
}

/* Binds args/kwargs to schema order in bound[0 .. nargs-1] (borrowed;
 * NULL where not given). */
int bpy_bind(const bpy_op *self, const op_schema *sc, PyObject *args,
             PyObject *kwargs, PyObject **bound) {
  Py_ssize_t npos = PyTuple_Size(args);
  if (npos > sc->npos) {
    PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but "
                 "%zd were given", self->name, (int)sc->npos,
                 sc->npos == 1 ? "" : "s", npos);
    return -1;
  }
  for (int32_t i = 0; i < sc->nargs; i++)
    bound[i] = i < npos ? PyTuple_GetItem(args, i) : NULL;
  if (kwargs && PyDict_Size(kwargs) > 0) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      int32_t i = 0;
      for (; i < sc->nargs; i++)
        if (key == sc->args[i].name)
          break;
      if (i == sc->nargs)
        for (i = 0; i < sc->nargs; i++) {
          int eq = PyObject_RichCompareBool(key, sc->args[i].name, Py_EQ);
          if (eq < 0)
            return -1;
          if (eq)
            break;
        }
      if (i == sc->nargs) {
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword "
                     "argument %R", self->name, key);
        return -1;
      }
      if (bound[i]) {
        PyErr_Format(PyExc_TypeError, "%U() got multiple values for "
                     "argument '%s'", self->name, sc->args[i].info.name);
        return -1;
      }
      bound[i] = value;
    }
  }
  return 0;
}

/* Fills the stack with every argument, defaults included. */
int bpy_push_args(bpy_state *ms, const bpy_op *self, const op_schema *sc,
                  PyObject **bound, call_state *cs, bp_value *vals) {
  for (int32_t i = 0; i < sc->nargs; i++) {
    const bp_arg_info *a = &sc->args[i].info;
    if (bound[i]) {
      if (to_value(ms, cs, bound[i], a, &vals[i]) < 0) {
        arg_context(self, sc, i);
        return -1;
      }
    } else if (a->flags & BP_ARG_HAS_DEFAULT) {
      vals[i] = a->default_value;
    } else {
      PyErr_Format(PyExc_TypeError, "%U() missing required argument '%s' "
                   "(#%d, %s)", self->name, a->name, (int)i, a->type);
      return -1;
    }
  }
  return 0;
}

static int same_view(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->data != b->data || a->ndim != b->ndim || a->dtype != b->dtype)
    return 0;
  for (int32_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] ||
        (a->sizes[d] > 1 && a->strides[d] != b->strides[d]))
      return 0;
  return 1;
}

/* A torch view of `arg` (a torch tensor) with res's geometry, for a result
 * that lies in an argument's storage: torch must know it is a view. */
static PyObject *torch_view(PyObject *arg, const bp_tensor_view *av,
                            const bp_tensor_view *rv) {
  PyObject *off = PyObject_CallMethod(arg, "storage_offset", NULL);
  if (!off)
    return NULL;
  long long base = PyLong_AsLongLong(off);
  Py_DECREF(off);
  if (base == -1 && PyErr_Occurred())
    return NULL;
  long long delta = ((const char *)rv->data - (const char *)av->data) /
                    (rv->itemsize ? rv->itemsize : 1);
  PyObject *sz = bpy_int_tuple(rv->sizes, rv->ndim);
  PyObject *sd = bpy_int_tuple(rv->strides, rv->ndim);
  PyObject *r = sz && sd ? PyObject_CallMethod(arg, "as_strided", "OOL", sz,
                                               sd, base + delta)
                         : NULL;
  Py_XDECREF(sz);
  Py_XDECREF(sd);
  return r;
}

/* For a result in an argument's alias set (`Tensor(a)`, `Tensor(a!)`)
 * that shares that argument's memory: the argument object itself when the
 * result is the same view (always, for a written argument), or, for torch,
 * a torch view of it.  NULL (no exception) when the result is separate. */
static PyObject *aliased_arg(bpy_state *ms, const bpy_op *self,
                             const op_schema *sc, int32_t r, PyObject **bound,
                             const bp_value *args, bp_tensor *res) {
  const bp_arg_info *ri = &sc->rets[r].info;
  if (!ri->alias_set)
    return NULL;
  const bp_tensor_view *rv = bp_tensor_get_view(res);
  for (int32_t i = 0; i < sc->nargs; i++) {
    const bp_arg_info *a = &sc->args[i].info;
    if (!bound[i] || !a->alias_set || strcmp(a->alias_set, ri->alias_set) ||
        args[i].tag != BP_TAG_TENSOR)
      continue;
    const bp_tensor_view *av = bp_tensor_get_view(args[i].u.tensor);
    if (av->storage_base != rv->storage_base)
      continue;
    if (same_view(av, rv) ||
        ((ri->flags & BP_ARG_WRITTEN) && av->data == rv->data)) {
      Py_INCREF(bound[i]);
      return bound[i];
    }
    if (self->torch && bpy_is_torch_tensor(ms, bound[i]))
      return torch_view(bound[i], av, rv);
  }
  return NULL;
}

/* Whether a result shares the memory of a read-only Tensor argument (a
 * view of it), which makes the result read-only too. */
static int shares_readonly(bpy_state *ms, const op_schema *sc,
                           PyObject **bound, const bp_value *args,
                           bp_tensor *res) {
  const bp_tensor_view *rv = bp_tensor_get_view(res);
  for (int32_t i = 0; i < sc->nargs; i++)
    if (bound[i] && args[i].tag == BP_TAG_TENSOR &&
        bpy_tensor_check(ms, bound[i]) && ((bpy_tensor *)bound[i])->readonly &&
        bp_tensor_get_view(args[i].u.tensor)->storage_base == rv->storage_base)
      return 1;
  return 0;
}

static PyObject *result_value(bpy_state *ms, const bpy_op *self,
                              const op_schema *sc, int32_t r, bp_value *v,
                              PyObject **bound, const bp_value *args) {
  switch (v->tag) {
    case BP_TAG_NONE:
      Py_RETURN_NONE;
    case BP_TAG_TENSOR: {
      bp_tensor *t = v->u.tensor;
      v->tag = BP_TAG_NONE; /* the reference moves out of the stack */
      PyObject *same = aliased_arg(ms, self, sc, r, bound, args, t);
      if (same || PyErr_Occurred()) {
        bpy_release(t);
        return same;
      }
      if (self->torch) {
        PyObject *o = bpy_tensor_to_torch(ms, t);
        bpy_release(t);
        return o;
      }
      int readonly = shares_readonly(ms, sc, bound, args, t);
      PyObject *o = bpy_tensor_wrap(ms, t);
      if (o)
        ((bpy_tensor *)o)->readonly = readonly;
      return o;
    }
    case BP_TAG_INT:
      return PyLong_FromLongLong(v->u.i);
    case BP_TAG_FLOAT:
      return PyFloat_FromDouble(v->u.f);
    case BP_TAG_BOOL:
      return PyBool_FromLong(v->u.b);
    case BP_TAG_SCALAR_TYPE:
      if (self->torch && bpy_torch_dtype(ms, (int32_t)v->u.i)) {
        PyObject *d = bpy_torch_dtype(ms, (int32_t)v->u.i);
        Py_INCREF(d);
        return d;
      }
      return PyUnicode_FromString(bp_dtype_name((int32_t)v->u.i));
    default:
      return PyErr_Format(bpy_error_class(ms, BP_ERR_INTERNAL),
                          "%U: result #%d has tag %d, which Python calls do "
                          "not convert",
                          self->name, (int)r, (int)v->tag);
  }
}

PyObject *bpy_results(bpy_state *ms, const bpy_op *self, const op_schema *sc,
                      bp_stack *st, PyObject **bound, const bp_value *args) {
  size_t n = st->top;
  if (n == 1)
    return result_value(ms, self, sc, 0, &st->values[0], bound, args);
  PyObject *tup = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; tup && i < n; i++) {
    PyObject *x =
        result_value(ms, self, sc, (int32_t)i, &st->values[i], bound, args);
    if (!x)
      Py_CLEAR(tup);
    else
      PyTuple_SetItem(tup, (Py_ssize_t)i, x);
  }
  if (!tup)
    bp_stack_release(st);
  else if (n == 0) {
    Py_DECREF(tup);
    Py_RETURN_NONE;
  }
  return tup;
}
