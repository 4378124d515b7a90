/*
 * ext.h - the shared declarations of the _backplane extension module.
 *
 * The extension is built against CPython's Limited API (Py_LIMITED_API is
 * 0x03090000, set by the build), so that one binary serves every CPython
 * from 3.9 on.  Only functions of the Stable ABI may be used here; the test
 * tests/python/test-stable-abi checks the built module's imports.
 */
#ifndef BP_PY_EXT_H
#define BP_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/host.h>

#endif /* BP_PY_EXT_H */
