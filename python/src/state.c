/*
 * state.c - finding the module state (ext.h's bpy_state) from what Python
 * hands a function: the module itself, or an object whose type the module
 * made.  The Limited API of 3.9 has no PyType_GetModule, so each type the
 * module makes carries its module as an attribute.
 */
#include "ext.h"

/* The module's definition (module.c), which tells our module from
 * another; set once, before the first module is made. */
static PyModuleDef *the_def;

void bpy_state_set_def(PyModuleDef *def) {
  the_def = def;
}

#define MODULE_ATTR "__bp_module__"

int bpy_type_set_module(PyTypeObject *type, PyObject *module) {
  return PyObject_SetAttrString((PyObject *)type, MODULE_ATTR, module);
}

/* The module of obj: obj itself, or the module a type of it was tied to
 * (bpy_type_set_module; a subclass made in Python inherits the tie).
 * Borrowed: the type keeps it alive; NULL with an exception set. */
static PyObject *module_of(PyObject *obj) {
  if (PyModule_Check(obj))
    return PyModule_GetDef(obj) == the_def ? obj : NULL;
  PyObject *tp = PyType_Check(obj) ? obj : (PyObject *)Py_TYPE(obj);
  PyObject *m = PyObject_GetAttrString(tp, MODULE_ATTR);
  if (!m)
    return NULL;
  Py_DECREF(m); /* the type holds it */
  if (PyModule_Check(m) && PyModule_GetDef(m) == the_def)
    return m;
  PyErr_SetString(PyExc_TypeError, "backplane: " MODULE_ATTR
                                   " of the type is not the "
                                   "_backplane module");
  return NULL;
}

bpy_state *bpy_state_of(PyObject *obj) {
  PyObject *m = module_of(obj);
  bpy_state *ms = m ? PyModule_GetState(m) : NULL;
  if (!m && !PyErr_Occurred())
    PyErr_SetString(PyExc_TypeError, "backplane: not the _backplane module");
  return ms;
}

