/*
 * op.c - backplane's Op type: one operator overload, callable from Python.
 *
 * An Op binds Python arguments to the op's schema as Python binds a
 * function's: positionally up to the schema's `*`, then by keyword; what
 * is not given takes its default.  The schema is read through the host's
 * introspection (bp_op_get_arg/ret) and cached until the registry changes
 * through this module (a load, unload or discovery).  Tensor arguments
 * are converted without copies (convert.c); the GIL is released around
 * bp_call, so calls from several threads run in parallel.
 *
 * An Op made with torch=True is the one backplane.torch registers with
 * torch.library: it returns torch tensors, which share the results'
 * memory, and returns the very argument object for a result that aliases
 * a written argument (`Tensor(a!)`), as torch expects.
 */
#include "ext.h"

#include <string.h>

#define MAX_ARGS 32
#define MAX_RETS 8
#define ARENA 256  /* int64 / double list elements per call, on the C stack */

/* Calls whose tensor arguments hold fewer elements than this, all in CPU
 * memory, keep the GIL: releasing and taking it back costs about as much
 * as such a call (NumPy draws the same line, at 500 elements).  Every
 * other call releases it while the kernel runs. */
#define GIL_THRESHOLD 4096

typedef struct arg_desc {
  PyObject *name;        /* interned */
  bp_arg_info info;      /* host-owned strings; valid while defined */
} arg_desc;

typedef struct bpy_op {
  PyObject_HEAD
  const bp_op *op;
  PyObject *name;        /* "ns::name[.overload]" */
  int torch;             /* results as torch tensors */
  int torch_cpu;         /* called by torch for its CPU dispatch key */
  unsigned long gen;     /* bpy_registry_generation of the cache, +1 */
  int32_t nargs, nrets, npos;
  arg_desc args[MAX_ARGS];
  arg_desc rets[MAX_RETS];
} bpy_op;

PyTypeObject *bpy_op_type;
unsigned long bpy_registry_generation;

static void clear_cache(bpy_op *self) {
  for (int32_t i = 0; i < self->nargs; i++)
    Py_CLEAR(self->args[i].name);
  self->nargs = self->nrets = self->npos = 0;
  self->gen = 0;
}

/* (Re)reads the schema when the registry may have changed. */
static int refresh(bpy_op *self) {
  if (self->gen == bpy_registry_generation + 1)
    return 0;
  clear_cache(self);
  bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  bp_status st = bp_op_get_info(self->op, &info);
  if (st != BP_OK) {
    bpy_raise(st);
    return -1;
  }
  if (!info.defined) {
    PyErr_Format(bpy_error_class(BP_ERR_NOT_FOUND), "%U: the operator is "
                 "not defined now (the plugin that defined it was unloaded)",
                 self->name);
    return -1;
  }
  if (info.nargs > MAX_ARGS || info.nrets > MAX_RETS) {
    PyErr_Format(bpy_error_class(BP_ERR_UNSUPPORTED), "%U: %d arguments "
                 "and %d results; Python calls take at most %d and %d",
                 self->name, (int)info.nargs, (int)info.nrets, MAX_ARGS,
                 MAX_RETS);
    return -1;
  }
  for (int32_t i = 0; i < info.nargs; i++) {
    arg_desc *a = &self->args[i];
    a->info.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    st = bp_op_get_arg(self->op, (size_t)i, &a->info);
    if (st != BP_OK)
      return bpy_raise(st), -1;
    a->name = PyUnicode_InternFromString(a->info.name);
    if (!a->name)
      return -1;
    self->nargs = i + 1;
  }
  for (int32_t i = 0; i < info.nrets; i++) {
    arg_desc *r = &self->rets[i];
    r->info.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    st = bp_op_get_ret(self->op, (size_t)i, &r->info);
    if (st != BP_OK)
      return bpy_raise(st), -1;
  }
  self->nrets = info.nrets;
  self->npos = info.npositional;
  self->gen = bpy_registry_generation + 1;
  return 0;
}

/* ---- one call's temporaries --------------------------------------------- */

typedef struct call_state {
  bp_tensor *tensors[MAX_ARGS * 4];   /* references to release */
  int ntensors;
  bp_tensor **tensor_lists[MAX_ARGS]; /* PyMem arrays of list arguments */
  int nlists;
  PyObject *keep[MAX_ARGS];           /* str bytes objects */
  int nkeep;
  int64_t work;                       /* elements; huge for a device */
  int64_t arena[ARENA];
  size_t used;
  void *heap[MAX_ARGS];               /* list storage past the arena */
  int nheap;
} call_state;

static void release_state(call_state *cs) {
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

/* Prefixes the pending exception's message with the op and argument. */
static void arg_context(bpy_op *self, int32_t i) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  PyObject *msg = v ? PyObject_Str(v) : NULL;
  if (msg) {
    PyErr_Format(t, "%U(): argument '%s' (#%d, %s): %U", self->name,
                 self->args[i].info.name, (int)i, self->args[i].info.type,
                 msg);
    Py_DECREF(msg);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
  } else {
    PyErr_Restore(t, v, tb);
  }
}

static int to_int64(PyObject *o, int64_t *out) {
  if (PyFloat_Check(o)) {
    PyErr_SetString(PyExc_TypeError, "expected an int, got a float");
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
  if (PyUnicode_Check(o) || PyBytes_Check(o)) {
    PyErr_SetString(PyExc_TypeError, "expected a float, got a str");
    return -1;
  }
  *out = PyFloat_AsDouble(o);
  return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* A number list argument: a sequence, or one number for `T[N]` (repeated
 * N times) and `T[]` (a list of one), as torch takes them. */
static int to_number_list(call_state *cs, PyObject *o, const bp_arg_info *a,
                          bp_value *v) {
  int ints = a->tag == BP_TAG_INT_LIST;
  int scalar = PyLong_Check(o) || PyFloat_Check(o) || PyIndex_Check(o);
  Py_ssize_t n = scalar ? (a->list_size > 0 ? a->list_size : 1)
                        : PySequence_Size(o);
  if (n < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "expected a list of %s, got %s",
                 ints ? "ints" : "floats", "a non-sequence");
    return -1;
  }
  if (a->list_size >= 0 && n != a->list_size) {
    PyErr_Format(bpy_error_class(BP_ERR_INVALID_ARGUMENT),
                 "expected %d elements, got %zd", (int)a->list_size, n);
    return -1;
  }
  void *buf = scratch(cs, (size_t)n);
  if (!buf)
    return -1;
  for (Py_ssize_t k = 0; k < n; k++) {
    PyObject *x = scalar ? (Py_INCREF(o), o) : PySequence_GetItem(o, k);
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

static int to_tensor_list(call_state *cs, PyObject *o, const bp_arg_info *a,
                          bp_value *v) {
  Py_ssize_t n = PySequence_Size(o);
  if (n < 0 || PyUnicode_Check(o)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "expected a list of tensors");
    return -1;
  }
  if (a->list_size >= 0 && n != a->list_size) {
    PyErr_Format(bpy_error_class(BP_ERR_INVALID_ARGUMENT),
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
    int rc = bpy_to_tensor(x, NULL, (a->flags & BP_ARG_WRITTEN) != 0, &l[k]);
    Py_DECREF(x);
    if (rc == 0)
      count_work(cs, l[k]);
    if (rc < 0) {
      PyObject *t, *e, *tb;
      PyErr_Fetch(&t, &e, &tb);
      PyErr_NormalizeException(&t, &e, &tb);
      PyObject *m = e ? PyObject_Str(e) : NULL;
      if (m) {
        PyErr_Format(t, "element %zd: %U", k, m);
        Py_DECREF(m);
        Py_XDECREF(t);
        Py_XDECREF(e);
        Py_XDECREF(tb);
      } else {
        PyErr_Restore(t, e, tb);
      }
      return -1;
    }
  }
  v->tag = BP_TAG_TENSOR_LIST;
  v->len = (uint32_t)n;
  v->u.tensors = l;
  return 0;
}

/* Converts one given argument onto the stack slot v. */
static int to_value(call_state *cs, PyObject *o, const bp_arg_info *a,
                    bp_value *v) {
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
      if (bpy_to_tensor(o, NULL, (a->flags & BP_ARG_WRITTEN) != 0,
                        &v->u.tensor) < 0)
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
      return to_number_list(cs, o, a, v);
    case BP_TAG_TENSOR_LIST:
      return to_tensor_list(cs, o, a, v);
    case BP_TAG_SCALAR_TYPE: {
      int32_t dt;
      if (bpy_to_dtype(o, &dt) < 0)
        return -1;
      v->u.i = dt;
      return 0;
    }
    case BP_TAG_DEVICE:
      return bpy_to_device(o, &v->u.device);
    default:
      PyErr_Format(PyExc_TypeError, "the argument's type (tag %d) is not "
                   "supported from Python", (int)a->tag);
      return -1;
  }
}

/* Binds args/kwargs to schema order in bound[0 .. nargs-1] (borrowed;
 * NULL where not given). */
static int bind(bpy_op *self, PyObject *args, PyObject *kwargs,
                PyObject **bound) {
  Py_ssize_t npos = PyTuple_Size(args);
  if (npos > self->npos) {
    PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but "
                 "%zd were given", self->name, (int)self->npos,
                 self->npos == 1 ? "" : "s", npos);
    return -1;
  }
  for (int32_t i = 0; i < self->nargs; i++)
    bound[i] = i < npos ? PyTuple_GetItem(args, i) : NULL;
  if (kwargs && PyDict_Size(kwargs) > 0) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      int32_t i = 0;
      for (; i < self->nargs; i++)
        if (key == self->args[i].name)
          break;
      if (i == self->nargs)
        for (i = 0; i < self->nargs; i++) {
          int eq = PyObject_RichCompareBool(key, self->args[i].name, Py_EQ);
          if (eq < 0)
            return -1;
          if (eq)
            break;
        }
      if (i == self->nargs) {
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword "
                     "argument %R", self->name, key);
        return -1;
      }
      if (bound[i]) {
        PyErr_Format(PyExc_TypeError, "%U() got multiple values for "
                     "argument '%s'", self->name, self->args[i].info.name);
        return -1;
      }
      bound[i] = value;
    }
  }
  return 0;
}

/* Fills the stack with every argument, defaults included. */
static int push_args(bpy_op *self, PyObject **bound, call_state *cs,
                     bp_value *vals) {
  for (int32_t i = 0; i < self->nargs; i++) {
    const bp_arg_info *a = &self->args[i].info;
    if (bound[i]) {
      if (to_value(cs, bound[i], a, &vals[i]) < 0) {
        arg_context(self, i);
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
  PyObject *sz = PyTuple_New(rv->ndim), *sd = PyTuple_New(rv->ndim);
  for (int32_t d = 0; sz && sd && d < rv->ndim; d++) {
    PyTuple_SetItem(sz, d, PyLong_FromLongLong(rv->sizes[d]));
    PyTuple_SetItem(sd, d, PyLong_FromLongLong(rv->strides[d]));
  }
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
static PyObject *aliased_arg(bpy_op *self, int32_t r, PyObject **bound,
                             const bp_value *args, bp_tensor *res) {
  const bp_arg_info *ri = &self->rets[r].info;
  if (!ri->alias_set)
    return NULL;
  const bp_tensor_view *rv = bp_tensor_get_view(res);
  for (int32_t i = 0; i < self->nargs; i++) {
    const bp_arg_info *a = &self->args[i].info;
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
    if (self->torch && bpy_is_torch_tensor(bound[i]))
      return torch_view(bound[i], av, rv);
  }
  return NULL;
}

static PyObject *result_value(bpy_op *self, int32_t r, bp_value *v,
                              PyObject **bound, const bp_value *args) {
  switch (v->tag) {
    case BP_TAG_NONE:
      Py_RETURN_NONE;
    case BP_TAG_TENSOR: {
      bp_tensor *t = v->u.tensor;
      v->tag = BP_TAG_NONE; /* the reference moves out of the stack */
      PyObject *same = aliased_arg(self, r, bound, args, t);
      if (same || PyErr_Occurred()) {
        bpy_release(t);
        return same;
      }
      if (self->torch) {
        PyObject *o = bpy_tensor_to_torch(t);
        bpy_release(t);
        return o;
      }
      return bpy_tensor_wrap(t);
    }
    case BP_TAG_INT:
      return PyLong_FromLongLong(v->u.i);
    case BP_TAG_FLOAT:
      return PyFloat_FromDouble(v->u.f);
    case BP_TAG_BOOL:
      return PyBool_FromLong(v->u.b);
    case BP_TAG_SCALAR_TYPE:
      if (self->torch && bpy_torch_dtype((int32_t)v->u.i)) {
        PyObject *d = bpy_torch_dtype((int32_t)v->u.i);
        Py_INCREF(d);
        return d;
      }
      return PyUnicode_FromString(bp_dtype_name((int32_t)v->u.i));
    default:
      return PyErr_Format(bpy_error_class(BP_ERR_INTERNAL),
                          "%U: result #%d has tag %d, which Python calls do "
                          "not convert", self->name, (int)r, (int)v->tag);
  }
}

static PyObject *results(bpy_op *self, bp_stack *st, PyObject **bound,
                         const bp_value *args) {
  size_t n = st->top;
  if (n == 1)
    return result_value(self, 0, &st->values[0], bound, args);
  PyObject *tup = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; tup && i < n; i++) {
    PyObject *x = result_value(self, (int32_t)i, &st->values[i], bound, args);
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

static PyObject *op_call(PyObject *o, PyObject *args, PyObject *kwargs) {
  bpy_op *self = (bpy_op *)o;
  if (refresh(self) < 0)
    return NULL;
  PyObject *bound[MAX_ARGS];
  if (bind(self, args, kwargs, bound) < 0)
    return NULL;
  call_state cs;
  cs.ntensors = cs.nlists = cs.nkeep = cs.nheap = 0;
  cs.used = 0;
  cs.work = 0;
  bp_value vals[MAX_ARGS > MAX_RETS ? MAX_ARGS : MAX_RETS];
  bp_value saved[MAX_ARGS];
  PyObject *r = NULL;
  bpy_torch_on_cpu = self->torch_cpu;
  int pushed = push_args(self, bound, &cs, vals);
  bpy_torch_on_cpu = 0;
  if (pushed == 0) {
    memcpy(saved, vals, sizeof(bp_value) * (size_t)self->nargs);
    bp_stack st = BP_STACK_INIT(vals, sizeof vals / sizeof vals[0]);
    st.top = (size_t)self->nargs;
    bp_status rc;
    if (cs.work < GIL_THRESHOLD) {
      rc = bp_call(self->op, &st);
    } else {
      int held = bpy_holds_gil;
      bpy_holds_gil = 0;
      Py_BEGIN_ALLOW_THREADS
      rc = bp_call(self->op, &st);
      Py_END_ALLOW_THREADS
      bpy_holds_gil = held;
    }
    if (rc != BP_OK)
      bpy_raise(rc);
    else
      r = results(self, &st, bound, saved);
  }
  release_state(&cs);
  return r;
}

/* op.meta(*args, **kwargs): each result's (dtype, sizes, strides, device)
 * computed by the op's meta function, without running a kernel; None for
 * a result that is not a Tensor.  Tensor arguments may be torch meta or
 * fake tensors, which have no data. */
static PyObject *op_meta(PyObject *o, PyObject *args, PyObject *kwargs) {
  bpy_op *self = (bpy_op *)o;
  if (refresh(self) < 0)
    return NULL;
  PyObject *bound[MAX_ARGS];
  if (bind(self, args, kwargs, bound) < 0)
    return NULL;
  call_state cs;
  cs.ntensors = cs.nlists = cs.nkeep = cs.nheap = 0;
  cs.used = 0;
  cs.work = 0;
  bp_value vals[MAX_ARGS];
  PyObject *r = NULL;
  bpy_meta_mode = 1; /* torch tensors: metadata only (convert.c) */
  int pushed = push_args(self, bound, &cs, vals);
  bpy_meta_mode = 0;
  if (pushed == 0) {
    bp_stack st = BP_STACK_INIT(vals, MAX_ARGS);
    st.top = (size_t)self->nargs;
    bp_tensor_meta outs[MAX_RETS];
    for (int i = 0; i < MAX_RETS; i++)
      outs[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    bp_status rc = bp_op_meta(self->op, &st, outs, (size_t)self->nrets);
    if (rc != BP_OK) {
      bpy_raise(rc);
    } else {
      r = PyList_New(self->nrets);
      for (int32_t i = 0; r && i < self->nrets; i++) {
        PyObject *x;
        if (self->rets[i].info.tag != BP_TAG_TENSOR) {
          Py_INCREF(Py_None);
          x = Py_None;
        } else {
          PyObject *sz = PyTuple_New(outs[i].ndim);
          PyObject *sd = PyTuple_New(outs[i].ndim);
          for (int32_t d = 0; sz && sd && d < outs[i].ndim; d++) {
            PyTuple_SetItem(sz, d, PyLong_FromLongLong(outs[i].sizes[d]));
            PyTuple_SetItem(sd, d, PyLong_FromLongLong(outs[i].strides[d]));
          }
          PyObject *dev = bpy_device_str(outs[i].device);
          x = sz && sd && dev
                  ? Py_BuildValue("(sOOO)", bp_dtype_name(outs[i].dtype), sz,
                                  sd, dev)
                  : NULL;
          Py_XDECREF(sz);
          Py_XDECREF(sd);
          Py_XDECREF(dev);
        }
        if (!x)
          Py_CLEAR(r);
        else
          PyList_SetItem(r, i, x);
      }
    }
  }
  release_state(&cs);
  return r;
}

/* ---- construction and attributes ---------------------------------------- */

static PyObject *op_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *names[] = {"name", "torch", "torch_cpu", NULL};
  const char *name;
  int torch = 0, torch_cpu = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|pp:Op", names, &name, &torch,
                                   &torch_cpu))
    return NULL;
  const bp_op *op = NULL;
  bp_status st = bp_op_find(name, &op);
  if (st != BP_OK)
    return bpy_raise(st);
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  bpy_op *self = (bpy_op *)alloc(tp, 0);
  if (!self)
    return NULL;
  self->op = op;
  self->torch = torch || torch_cpu;
  self->torch_cpu = torch_cpu;
  self->gen = 0;
  self->nargs = self->nrets = self->npos = 0;
  self->name = PyUnicode_FromString(name);
  if (!self->name) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void op_dealloc(PyObject *o) {
  bpy_op *self = (bpy_op *)o;
  PyTypeObject *tp = Py_TYPE(o);
  clear_cache(self);
  Py_CLEAR(self->name);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static int info_of(bpy_op *self, bp_op_info *info) {
  info->struct_size = BP_OP_INFO_STRUCT_SIZE;
  bp_status st = bp_op_get_info(self->op, info);
  if (st != BP_OK) {
    bpy_raise(st);
    return -1;
  }
  return 0;
}

static PyObject *get_name(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((bpy_op *)o)->name;
  Py_INCREF(n);
  return n;
}

static PyObject *get_schema(PyObject *o, void *c) {
  (void)c;
  bp_op_info info;
  if (info_of((bpy_op *)o, &info) < 0)
    return NULL;
  if (!info.schema)
    Py_RETURN_NONE;
  return PyUnicode_FromString(info.schema);
}

static PyObject *get_op_doc(PyObject *o, void *c) {
  (void)c;
  bp_op_info info;
  if (info_of((bpy_op *)o, &info) < 0)
    return NULL;
  return PyUnicode_FromString(info.doc ? info.doc : "");
}

static PyObject *get_info(PyObject *o, void *c) {
  (void)c;
  bp_op_info info;
  if (info_of((bpy_op *)o, &info) < 0)
    return NULL;
  return Py_BuildValue(
      "{s:s,s:s,s:s,s:K,s:O,s:O,s:O,s:i,s:i,s:i}", "owner",
      info.owner ? info.owner : "", "schema", info.schema ? info.schema : "",
      "doc", info.doc ? info.doc : "", "flags",
      (unsigned long long)info.flags, "defined",
      info.defined ? Py_True : Py_False, "has_meta",
      info.has_meta ? Py_True : Py_False, "has_composite",
      info.has_composite ? Py_True : Py_False, "nargs", (int)info.nargs,
      "nrets", (int)info.nrets, "npositional", (int)info.npositional);
}

static PyObject *kind_str(int32_t k) {
  return PyUnicode_FromString(k == BP_KERNEL_BOXED ? "boxed"
                              : k == BP_KERNEL_UNBOXED ? "unboxed"
                              : k == BP_KERNEL_UNBOXED_FAST ? "unboxed-fast"
                                                            : "?");
}

static PyObject *get_kernels(PyObject *o, void *c) {
  (void)c;
  bpy_op *self = (bpy_op *)o;
  bp_op_info info;
  if (info_of(self, &info) < 0)
    return NULL;
  PyObject *list = PyList_New(0);
  for (int32_t i = 0; list && i < info.nkernels; i++) {
    bp_kernel_info k = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
    if (bp_op_get_kernel(self->op, (size_t)i, &k) != BP_OK)
      continue;
    PyObject *dts;
    if (k.dtypes) {
      dts = PyList_New(0);
      for (const int32_t *d = k.dtypes; dts && *d; d++) {
        PyObject *s = PyUnicode_FromString(bp_dtype_name(*d));
        if (!s || PyList_Append(dts, s) < 0)
          Py_CLEAR(dts);
        Py_XDECREF(s);
      }
    } else {
      Py_INCREF(Py_None);
      dts = Py_None;
    }
    const char *dev = bp_device_type_name(k.device_type);
    PyObject *kind = kind_str(k.kind);
    PyObject *d = dts && kind
        ? Py_BuildValue("{s:s,s:s,s:O,s:O,s:i,s:O,s:O}", "plugin",
                        k.plugin ? k.plugin : "", "device", dev ? dev : "?",
                        "kind", kind, "dtypes", dts, "priority",
                        (int)k.priority, "active",
                        k.active ? Py_True : Py_False, "enabled",
                        k.enabled ? Py_True : Py_False)
        : NULL;
    Py_XDECREF(dts);
    Py_XDECREF(kind);
    if (!d || PyList_Append(list, d) < 0)
      Py_CLEAR(list);
    Py_XDECREF(d);
  }
  return list;
}

/* A bp_value default as a Python value. */
static PyObject *default_value(const bp_value *v) {
  switch (v->tag) {
    case BP_TAG_NONE: Py_RETURN_NONE;
    case BP_TAG_INT: return PyLong_FromLongLong(v->u.i);
    case BP_TAG_FLOAT: return PyFloat_FromDouble(v->u.f);
    case BP_TAG_BOOL: return PyBool_FromLong(v->u.b);
    case BP_TAG_STR: return PyUnicode_FromString(v->u.str);
    case BP_TAG_SCALAR_TYPE:
      return PyUnicode_FromString(bp_dtype_name((int32_t)v->u.i));
    case BP_TAG_DEVICE: return bpy_device_str(v->u.device);
    case BP_TAG_INT_LIST:
    case BP_TAG_FLOAT_LIST: {
      PyObject *l = PyList_New(v->len);
      for (uint32_t i = 0; l && i < v->len; i++) {
        PyObject *x = v->tag == BP_TAG_INT_LIST
                          ? PyLong_FromLongLong(v->u.ints[i])
                          : PyFloat_FromDouble(v->u.floats[i]);
        if (!x)
          Py_CLEAR(l);
        else
          PyList_SetItem(l, i, x);
      }
      return l;
    }
    default:
      Py_RETURN_NONE;
  }
}

static PyObject *describe(const bp_arg_info *a) {
  PyObject *def = NULL;
  if (a->flags & BP_ARG_HAS_DEFAULT) {
    def = default_value(&a->default_value);
    if (!def)
      return NULL;
  }
  PyObject *d = Py_BuildValue(
      "{s:s,s:s,s:z,s:s,s:i,s:O,s:O,s:O,s:O,s:O}", "name", a->name, "type",
      a->type, "alias_set", a->alias_set, "tag", bp_tag_name(a->tag),
      "list_size", (int)a->list_size, "optional",
      (a->flags & BP_ARG_OPTIONAL) ? Py_True : Py_False, "kwarg_only",
      (a->flags & BP_ARG_KWARG_ONLY) ? Py_True : Py_False, "written",
      (a->flags & BP_ARG_WRITTEN) ? Py_True : Py_False, "has_default",
      def ? Py_True : Py_False, "default", def ? def : Py_None);
  Py_XDECREF(def);
  return d;
}

static PyObject *get_signature(PyObject *o, void *c) {
  (void)c;
  bpy_op *self = (bpy_op *)o;
  if (refresh(self) < 0)
    return NULL;
  PyObject *args = PyList_New(self->nargs), *rets = PyList_New(self->nrets);
  for (int32_t i = 0; args && rets && i < self->nargs; i++) {
    PyObject *d = describe(&self->args[i].info);
    if (!d)
      Py_CLEAR(args);
    else
      PyList_SetItem(args, i, d);
  }
  for (int32_t i = 0; args && rets && i < self->nrets; i++) {
    PyObject *d = describe(&self->rets[i].info);
    if (!d)
      Py_CLEAR(rets);
    else
      PyList_SetItem(rets, i, d);
  }
  PyObject *r = args && rets ? Py_BuildValue("(OO)", args, rets) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(rets);
  return r;
}

static PyGetSetDef op_getset[] = {
  {"name", get_name, NULL, "The op's full name, 'ns::name[.overload]'.",
   NULL},
  {"schema", get_schema, NULL, "The op's canonical schema text.", NULL},
  {"op_doc", get_op_doc, NULL, "The doc string the op was defined with.",
   NULL},
  {"info", get_info, NULL, "The op's description, a dict.", NULL},
  {"signature", get_signature, NULL,
   "(arguments, returns): lists of dicts with name, type, alias_set, "
   "tag, list_size, optional, kwarg_only, written, has_default, default.",
   NULL},
  {"kernels", get_kernels, NULL,
   "The op's kernels, dicts in precedence order per device type.", NULL},
  {NULL, NULL, NULL, NULL, NULL}
};

static PyMethodDef op_methods[] = {
  {"meta", (PyCFunction)(void (*)(void))op_meta, METH_VARARGS | METH_KEYWORDS,
   "meta(*args, **kwargs): each result's (dtype, sizes, strides, device) "
   "from the op's meta function, without running a kernel."},
  {NULL, NULL, 0, NULL}
};

static PyObject *op_repr(PyObject *o) {
  return PyUnicode_FromFormat("<backplane op %U>", ((bpy_op *)o)->name);
}

static PyType_Slot op_slots[] = {
  {Py_tp_new, (void *)op_new},
  {Py_tp_dealloc, (void *)op_dealloc},
  {Py_tp_call, (void *)op_call},
  {Py_tp_repr, (void *)op_repr},
  {Py_tp_getset, op_getset},
  {Py_tp_methods, op_methods},
  {Py_tp_doc, (void *)"Op(name, torch=False, torch_cpu=False): an operator overload by its "
   "full name ('core::add', 'core::add.out'), called like a function.  "
   "With torch=True it returns torch tensors (backplane.torch); torch_cpu "
   "is for its CPU dispatch key, where every tensor is on the CPU."},
  {0, NULL}
};

static PyType_Spec op_spec = {
  "backplane.Op", sizeof(bpy_op), 0,
  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, op_slots
};

int bpy_op_init_type(PyObject *module) {
  bpy_op_type = (PyTypeObject *)PyType_FromSpec(&op_spec);
  if (!bpy_op_type)
    return -1;
  Py_INCREF(bpy_op_type);
  if (PyModule_AddObject(module, "Op", (PyObject *)bpy_op_type) < 0) {
    Py_DECREF(bpy_op_type);
    return -1;
  }
  return 0;
}
