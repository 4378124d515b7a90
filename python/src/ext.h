/*
 * ext.h - the shared declarations of the _backplane extension module.
 *
 * The extension is built against CPython's Limited API (Py_LIMITED_API is
 * 0x03090000, set by the build), so that one binary serves every CPython
 * from 3.9 on.  Only functions of the Stable ABI as of 3.9 may be used
 * here; tests/python/test-stable-abi.py checks the built module's imports
 * against python/stable_abi.txt.
 *
 * Files, from the top (none calls one above it): module.c (the module and
 * its functions), op.c (the Op type: calling) over args.c (binding),
 * opinfo.c (Op.info) and opschema.c (the schema cache), convert.c (Python
 * objects to bp values: NumPy, DLPack, dtypes) over torchconv.c (torch's
 * side), tensor.c (the Tensor type and DLPack export), wrap.c (Python-owned
 * memory as tensors; whether the thread holds the GIL), device.c (devices
 * as Python spells them), errors.c (one exception class per bp_status).
 */
#ifndef BP_PY_EXT_H
#define BP_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/host.h>

/* The symbol that the module exports; everything else is hidden. */
PyMODINIT_FUNC PyInit__backplane(void);

/* ---- errors.c ----------------------------------------------------------- */

/* Creates backplane's exception classes and adds them to the module. */
int bpy_errors_init(PyObject *module);

/* Raises the exception class of `status` with the calling thread's last
 * Backplane error message; returns NULL (for `return bpy_raise(st);`). */
PyObject *bpy_raise(bp_status status);

/* The exception class of a status (borrowed). */
PyObject *bpy_error_class(bp_status status);

/* The same with an explicit message. */
PyObject *bpy_raise_msg(bp_status status, const char *msg);

/* A str of bytes from the host or a plugin, which may not be UTF-8 (such
 * bytes come back as \\xNN); None for NULL. */
PyObject *bpy_str(const char *s);

/* ---- tensor.c ----------------------------------------------------------- */

typedef struct bpy_tensor {
  PyObject_HEAD
  bp_tensor *t;  /* owned reference, never NULL once constructed */
} bpy_tensor;

extern PyTypeObject *bpy_tensor_type;

int bpy_tensor_init_type(PyObject *module);

/* A new Tensor object that takes over the reference `t` (released on
 * failure too).  NULL with an exception set on failure. */
PyObject *bpy_tensor_wrap(bp_tensor *t);

/* A tuple of the n ints of v; NULL with an exception set on failure. */
PyObject *bpy_int_tuple(const int64_t *v, int32_t n);

/* Appends item to list and drops the reference to item; -1 (exception
 * set) when item is NULL or the append fails. */
static inline int bpy_list_add(PyObject *list, PyObject *item) {
  if (!item)
    return -1;
  int rc = PyList_Append(list, item);
  Py_DECREF(item);
  return rc;
}

/* A DLPack capsule ("dltensor") exporting t; the capsule holds a
 * reference until it is consumed or collected. */
PyObject *bpy_tensor_capsule(bp_tensor *t);

static inline int bpy_tensor_check(PyObject *o) {
  return Py_TYPE(o) == bpy_tensor_type ||
         PyObject_TypeCheck(o, bpy_tensor_type);
}

/* ---- convert.c ---------------------------------------------------------- */

/* Finds what the running interpreter offers beyond the 3.9 Limited API. */
void bpy_convert_init(void);

/* How one call converts torch tensors: set by the Op that makes the call
 * (op.c), in its call state, and read down the conversion.  NULL stands
 * for the defaults (all 0). */
typedef struct bpy_conv {
  /* Op.meta: torch tensors are converted by their metadata alone (meta
   * and fake tensors have no data). */
  int meta;
  /* The Op that torch calls for its CPU dispatch key, where every tensor
   * argument is a dense CPU tensor: taken to be on the CPU without asking
   * them. */
  int torch_cpu;
  /* Set by the conversion when a torch tensor requires grad (and torch
   * has no autograd fallback); bpy_torch_grad_warning() reads it. */
  int grad_inputs;
} bpy_conv;

/* Turns a Backplane Tensor, a NumPy array, a torch tensor or any object
 * with __dlpack__ into a bp_tensor without copying; *out is a new
 * reference.  `what` names the argument in error messages (may be NULL).
 * With `writable`, read-only sources are refused.  `conv` (may be NULL)
 * says how the call converts torch tensors.  0 or -1 (exception set). */
int bpy_to_tensor(PyObject *obj, const char *what, int writable,
                  bpy_conv *conv, bp_tensor **out);

/* Imports a DLPack capsule ("dltensor"); renames it "used_dltensor" on
 * success.  *out is a new reference. */
int bpy_from_capsule(PyObject *capsule, bp_tensor **out);

/* Reads a dtype given as a name ("float32"), a NumPy dtype or scalar
 * type, a torch dtype, or a bp dtype code. */
int bpy_to_dtype(PyObject *obj, int32_t *out);

/* Reads a device given as "cpu", "cuda:1", a (type, index) pair, or a
 * torch.device. */
int bpy_to_device(PyObject *obj, bp_device *out);

/* "cpu:0", "cuda:1": a new str. */
PyObject *bpy_device_str(bp_device d);

/* Set by code that holds the GIL while it releases tensors, so that the
 * deleters of Python-owned memory need not ask for it (wrap.c).  The one
 * flag that stays per thread: the host calls those deleters, with no way
 * to pass a call's state, from whichever thread drops the last
 * reference. */
extern _Thread_local int bpy_holds_gil;

/* Releases a bp_tensor while holding the GIL. */
static inline void bpy_release(bp_tensor *t) {
  int saved = bpy_holds_gil;
  bpy_holds_gil = 1;
  bp_tensor_release(t);
  bpy_holds_gil = saved;
}

/* wrap.c, for convert.c and torchconv.c: wraps memory that `owner` keeps
 * alive (a reference is held until the last bp_tensor over it dies);
 * reads a sequence of at most `max` ints. */
/* A NULL data pointer is refused unless the tensor is empty; &bpy_no_data
 * stands for the data of a tensor that is never read (meta mode). */
extern char bpy_no_data;
int bpy_wrap_blob(PyObject *owner, bp_device dev, int32_t dtype,
                  int32_t ndim, const int64_t *sizes, const int64_t *strides,
                  void *data, const char *what, bp_tensor **out);
int bpy_read_int64s(PyObject *seq, int64_t *dst, int32_t max, int32_t *n,
                    const char *what, const char *field);

/* ---- torchconv.c -------------------------------------------------------- */

/* Whether torch was registered. */
int bpy_torch_known(void);

/* A torch tensor as a bp_tensor sharing its memory (*out a new ref), as
 * `conv` (may be NULL) says. */
int bpy_from_torch(PyObject *obj, const char *what, bpy_conv *conv,
                   bp_tensor **out);

/* When conv->grad_inputs is set (a torch tensor required grad), warns that
 * the op has no derivative (when grad mode is on) and clears it.  -1 if
 * the warning became an exception. */
int bpy_torch_grad_warning(bpy_conv *conv, PyObject *op_name);

/* 1 and *out when obj is a torch dtype, else 0 (no exception). */
int bpy_torch_dtype_code(PyObject *obj, int32_t *out);

/* Whether `obj` is a torch.Tensor (registering torch first when the
 * program imported it). */
int bpy_is_torch_tensor(PyObject *obj);

/* A torch tensor sharing t's memory (torch must be registered); new ref. */
PyObject *bpy_tensor_to_torch(bp_tensor *t);

/* The torch dtype object for a bp dtype (borrowed), NULL if none. */
PyObject *bpy_torch_dtype(int32_t dtype);

/* Registers torch: its Tensor type, {torch dtype: bp code}, and the
 * function that imports a DLPack capsule.  Module function set_torch. */
PyObject *bpy_set_torch(PyObject *self, PyObject *args);
/* op.c: set_scalar_routing(route, numpy.ndarray or None). */
PyObject *bpy_set_scalar_routing(PyObject *self, PyObject *args);

/* ---- op.c --------------------------------------------------------------- */

extern PyTypeObject *bpy_op_type;

int bpy_op_init_type(PyObject *module);

/* Bumped by every load, unload and discovery made through the module, so
 * that ops re-read their schemas. */
extern unsigned long bpy_registry_generation;

#endif /* BP_PY_EXT_H */
