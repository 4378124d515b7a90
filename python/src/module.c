/*
 * module.c - the _backplane extension module: its methods and its types.
 */
#include "ext.h"

static PyObject *py_version(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyUnicode_FromString(bp_version());
}

static PyMethodDef module_methods[] = {
  {"version", py_version, METH_NOARGS,
   "version() -> str: the version of libbackplane."},
  {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_backplane",
  "The C core of the backplane package (over libbackplane).", -1,
  module_methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__backplane(void);

PyMODINIT_FUNC PyInit__backplane(void) {
  return PyModule_Create(&module_def);
}
