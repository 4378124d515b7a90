/*
 * op.c - backplane's Op type: one operator overload, callable from Python.
 *
 * An Op binds Python arguments to the op's schema as Python binds a
 * function's (args.c).  The schema is read through the host's
 * introspection (bp_op_get_arg/ret), copied, and cached until the registry
 * changes through this module (a load, unload or discovery); each call
 * holds a reference to the copy it uses.  Tensor arguments are converted
 * without copies (convert.c).  The GIL is released around bp_call unless
 * the call is small (GIL_THRESHOLD), so calls from several threads run in
 * parallel.
 *
 * An Op made with torch=True is the one backplane.torch registers with
 * torch.library: it returns torch tensors, which share the results'
 * memory, and returns the very argument object for a result that aliases
 * a written argument (`Tensor(a!)`), as torch expects.
 */
#include "op.h"

#include <string.h>

static op_schema *bind_call(bpy_state *ms, bpy_op *self, PyObject *args,
                            PyObject *kwargs, PyObject **bound) {
  op_schema *sc = bpy_op_schema(ms, self);
  if (sc && bpy_bind(self, sc, args, kwargs, bound) < 0) {
    bpy_schema_release(sc);
    sc = NULL;
  }
  return sc;
}

/* Scalar routing (an op with a .Scalar overload, backplane.ops.core.mul):
 * set by _backplane.set_scalar_routing. */

PyObject *bpy_set_scalar_routing(PyObject *self, PyObject *args) {
  bpy_state *ms = bpy_state_of(self);
  if (!ms)
    return NULL;
  PyObject *route, *nd;
  if (!PyArg_ParseTuple(args, "OO:set_scalar_routing", &route, &nd))
    return NULL;
  if (nd != Py_None && !PyType_Check(nd))
    return PyErr_Format(PyExc_TypeError,
                        "set_scalar_routing: expected "
                        "numpy.ndarray or None, got %R",
                        nd);
  PyObject *old = ms->scalar_route;
  Py_INCREF(route);
  ms->scalar_route = route;
  Py_XDECREF(old);
  /* numpy.ndarray, which convert.c also finds once NumPy is imported. */
  if (nd != Py_None) {
    PyTypeObject *was = ms->ndarray_type;
    Py_INCREF(nd);
    ms->ndarray_type = (PyTypeObject *)nd;
    if ((PyTypeObject *)nd != was)
      ms->np_mirror = 0; /* checked again against the new type */
    Py_XDECREF(was);
  }
  Py_RETURN_NONE;
}

/* The overload a call of an op with a .Scalar overload goes to (a new
 * reference): the .Scalar one for a Python int, float or bool `other`, the
 * op itself for a tensor, else what the Python route says (out=, NumPy
 * scalars). */
static PyObject *scalar_target(bpy_state *ms, bpy_op *self, PyObject *args,
                               PyObject *kwargs) {
  PyObject *other = PyTuple_Size(args) >= 2 ? PyTuple_GetItem(args, 1)
                    : kwargs ? PyDict_GetItemString(kwargs, "other") : NULL;
  int out = kwargs && PyDict_GetItemString(kwargs, "out") != NULL;
  if (!out) {
    PyObject *to = NULL;
    if (!other ||
        (ms->ndarray_type &&
         PyObject_TypeCheck(other, (PyTypeObject *)ms->ndarray_type)) ||
        bpy_tensor_check(ms, other) || bpy_is_torch_tensor(ms, other))
      to = (PyObject *)self;
    else if (PyFloat_Check(other) || PyLong_Check(other))
      to = self->scalar_op;
    if (to) {
      Py_INCREF(to);
      return to;
    }
  }
  if (!ms->scalar_route) {
    Py_INCREF((PyObject *)self);
    return (PyObject *)self;
  }
  return PyObject_CallFunctionObjArgs(ms->scalar_route, (PyObject *)self, args,
                                      kwargs ? kwargs : Py_None, NULL);
}

static PyObject *op_call(PyObject *o, PyObject *args, PyObject *kwargs) {
  bpy_state *ms = ((bpy_op *)o)->ms;
  bpy_op *self = (bpy_op *)o;
  if (self->scalar_op) {
    PyObject *target = scalar_target(ms, self, args, kwargs);
    if (!target)
      return NULL;
    if (target != o) {
      PyObject *r = PyObject_Call(target, args, kwargs);
      Py_DECREF(target);
      return r;
    }
    Py_DECREF(target);
  }
  PyObject *bound[MAX_ARGS];
  op_schema *sc = bind_call(ms, self, args, kwargs, bound);
  if (!sc)
    return NULL;
  PyObject *r = NULL;
  call_state cs;
  bpy_call_state_init(&cs);
  bp_value vals[MAX_ARGS > MAX_RETS ? MAX_ARGS : MAX_RETS];
  bp_value saved[MAX_ARGS];
  cs.conv.torch_cpu = self->torch_cpu;
  int pushed = bpy_push_args(ms, self, sc, bound, &cs, vals);
  if (pushed == 0 && self->torch &&
      bpy_torch_grad_warning(ms, &cs.conv, self->name) < 0)
    pushed = -1;
  if (pushed == 0) {
    /* The results overwrite the arguments; a result in an alias set is
     * matched against them afterwards (args.c). */
    if (sc->alias_rets)
      memcpy(saved, vals, sizeof(bp_value) * (size_t)sc->nargs);
    bp_stack st = BP_STACK_INIT(vals, sizeof vals / sizeof vals[0]);
    st.top = (size_t)sc->nargs;
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
      bpy_raise(ms, rc);
    else
      r = bpy_results(ms, self, sc, &st, bound, saved);
  }
  bpy_release_state(&cs);
  bpy_schema_release(sc);
  return r;
}

static PyObject *meta_result(const bp_tensor_meta *m) {
  PyObject *sz = bpy_int_tuple(m->sizes, m->ndim);
  PyObject *sd = bpy_int_tuple(m->strides, m->ndim);
  PyObject *dev = bpy_device_str(m->device);
  const char *dt = bp_dtype_name(m->dtype);
  PyObject *x = sz && sd && dev
                    ? Py_BuildValue("(sOOO)", dt ? dt : "?", sz, sd, dev)
                    : NULL;
  Py_XDECREF(sz);
  Py_XDECREF(sd);
  Py_XDECREF(dev);
  return x;
}

/* op.meta(*args, **kwargs): each result's (dtype, sizes, strides, device)
 * computed by the op's meta function, without running a kernel; None for
 * a result that is not a Tensor.  Tensor arguments may be torch meta or
 * fake tensors, which have no data. */
static PyObject *op_meta(PyObject *o, PyObject *args, PyObject *kwargs) {
  bpy_state *ms = ((bpy_op *)o)->ms;
  bpy_op *self = (bpy_op *)o;
  PyObject *bound[MAX_ARGS];
  op_schema *sc = bind_call(ms, self, args, kwargs, bound);
  if (!sc)
    return NULL;
  PyObject *r = NULL;
  call_state cs;
  bpy_call_state_init(&cs);
  bp_value vals[MAX_ARGS];
  cs.conv.meta = 1; /* torch tensors: metadata only (torchconv.c) */
  int pushed = bpy_push_args(ms, self, sc, bound, &cs, vals);
  if (pushed == 0) {
    bp_stack st = BP_STACK_INIT(vals, MAX_ARGS);
    st.top = (size_t)sc->nargs;
    bp_tensor_meta outs[MAX_RETS];
    for (int i = 0; i < MAX_RETS; i++)
      outs[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    bp_status rc = bp_op_meta(self->op, &st, outs, (size_t)sc->nrets);
    if (rc != BP_OK)
      bpy_raise(ms, rc);
    else
      r = PyList_New(sc->nrets);
    for (int32_t i = 0; r && i < sc->nrets; i++) {
      PyObject *x = sc->rets[i].info.tag == BP_TAG_TENSOR
                        ? meta_result(&outs[i])
                        : (Py_INCREF(Py_None), Py_None);
      if (!x)
        Py_CLEAR(r);
      else
        PyList_SetItem(r, i, x);
    }
  }
  bpy_release_state(&cs);
  bpy_schema_release(sc);
  return r;
}

/* ---- construction --------------------------------------------------------- */

static PyObject *op_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  bpy_state *ms = bpy_state_of((PyObject *)tp);
  if (!ms)
    return NULL;
  static char *names[] = {"name", "torch", "torch_cpu", NULL};
  const char *name;
  int torch = 0, torch_cpu = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|pp:Op", names, &name, &torch,
                                   &torch_cpu))
    return NULL;
  const bp_op *op = NULL;
  bp_status st = bp_op_find(name, &op);
  if (st != BP_OK)
    return bpy_raise(ms, st);
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  bpy_op *self = (bpy_op *)alloc(tp, 0);
  if (!self)
    return NULL;
  self->ms = ms;
  self->op = op;
  self->torch = torch || torch_cpu;
  self->torch_cpu = torch_cpu;
  self->gen = 0;
  self->schema = NULL;
  self->scalar_op = NULL;
  self->name = PyUnicode_FromString(name);
  if (!self->name) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

/* op._set_scalar(overload): calls whose `other` is a number go to the
 * given .Scalar overload (see scalar_target). */
static PyObject *op_set_scalar(PyObject *o, PyObject *arg) {
  bpy_op *self = (bpy_op *)o;
  Py_INCREF(arg);
  Py_XDECREF(self->scalar_op);
  self->scalar_op = arg;
  Py_RETURN_NONE;
}

static void op_dealloc(PyObject *o) {
  bpy_op *self = (bpy_op *)o;
  PyTypeObject *tp = Py_TYPE(o);
  bpy_schema_release(self->schema);
  self->schema = NULL;
  Py_CLEAR(self->name);
  Py_CLEAR(self->scalar_op);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static PyMethodDef op_methods[] = {
  {"_set_scalar", op_set_scalar, METH_O,
   "_set_scalar(overload): calls whose `other` is a number go to it."},
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
  {Py_tp_getset, bpy_op_getset},
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

int bpy_op_init_type(bpy_state *ms, PyObject *module) {
  ms->op_type = (PyTypeObject *)PyType_FromSpec(&op_spec);
  if (!ms->op_type || bpy_type_set_module(ms->op_type, module) < 0)
    return -1;
  Py_INCREF(ms->op_type);
  if (PyModule_AddObject(module, "Op", (PyObject *)ms->op_type) < 0) {
    Py_DECREF(ms->op_type);
    return -1;
  }
  return 0;
}
