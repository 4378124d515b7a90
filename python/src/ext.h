/*
 * ext.h - the shared declarations of the _backplane extension module.
 *
 * The extension is built against CPython's Limited API (Py_LIMITED_API is
 * 0x03090000, set by the build), so that one binary serves every CPython
 * from 3.9 on.  Only functions of the Stable ABI as of 3.9 may be used
 * here; tests/python/test-stable-abi.py checks the built module's imports
 * against python/stable_abi.txt.
 *
 * The module keeps its state in the module object (bpy_state, below:
 * multi-phase initialisation, as CPython's xxlimited does), not in
 * process globals; what stays global is what belongs to the process:
 * libbackplane's registry generation (opschema.c), the runtime functions
 * found by dlsym (convert.c), and whether a thread holds the GIL (wrap.c).
 *
 * Files, from the top (none calls one above it): module.c (the module, its
 * state and its functions), op.c (the Op type: calling) over args.c (binding),
 * opinfo.c (Op.info) and opschema.c (the schema cache), convert.c (Python
 * objects to bp values: NumPy, DLPack, dtypes) over torchconv.c (torch's
 * side) and ndarray.c (NumPy arrays read in place), tensor.c (the Tensor
 * type and DLPack export), wrap.c (Python-owned memory as tensors; whether
 * the thread holds the GIL), device.c (devices as Python spells them),
 * errors.c (one exception class per bp_status), state.c (the module state,
 * found from a module or an object).
 */
#ifndef BP_PY_EXT_H
#define BP_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <backplane/host.h>

/* The symbol that the module exports; everything else is hidden. */
PyMODINIT_FUNC PyInit__backplane(void);

/* ---- module state (module.c; state.c finds it) --------------------------- */

#define BPY_NTORCH_DTYPES 11

/* What the module keeps, per module object (multi-phase init, as
 * CPython's xxlimited does): its types and exception classes, interned
 * names, and what backplane.torch registered.  Every function that needs
 * any of it takes it first, as `bpy_state *ms`; the entry points that
 * Python calls find it from their module or their object's type
 * (bpy_state_of).  Strong references, all; module.c's traverse and clear
 * visit each. */
typedef struct bpy_state {
  /* Object references only, up to tensor_alloc (module.c visits them as
   * an array). */
  PyTypeObject *tensor_type, *op_type;
  PyObject *base_error;
  PyObject *by_status[BP_STATUS_COUNT];
  /* numpy.ndarray once NumPy is imported (never imported here), or as
   * set_scalar_routing() gives it. */
  PyTypeObject *ndarray_type;
  PyObject *scalar_route; /* route(op, args, kwargs) -> the overload */
  PyObject *s_dlpack, *s_array_interface;
  /* torch, once registered (torchconv.c) */
  PyObject *s_data_ptr, *s_shape, *s_stride, *s_dtype, *s_is_cuda;
  PyObject *s_get_device, *s_device, *s_is_cpu, *s_requires_grad;
  PyTypeObject *torch_tensor_type;
  PyObject *torch_dtypes;      /* {torch.dtype: bp code} */
  PyObject *torch_from_dlpack; /* torch._C._from_dlpack or alike */
  PyObject *torch_bool;        /* torch.bool, for the uint8 detour */
  PyObject *torch_stride_fn;   /* torch.Tensor.stride, unbound */
  PyObject *torch_data_ptr_fn; /* torch.Tensor.data_ptr, unbound */
  PyObject *torch_dtype_of[BPY_NTORCH_DTYPES]; /* by dt_codes' index */
  /* torch.is_grad_enabled where torch has no autograd fallback for ops
   * without derivatives (before 2.1): there the bridge warns instead. */
  PyObject *torch_grad_enabled_fn;
  /* Not references: the Tensor type's slots. */
  allocfunc tensor_alloc;
  freefunc tensor_free;
  /* Whether NumPy's arrays may be read in place (ndarray.c): 0 not yet
   * checked, 1 checked and used, -1 refused. */
  int np_mirror;
} bpy_state;

/* The state of the module that obj is, or that made obj's type (or obj,
 * a type, or a base it inherits from); NULL with an exception set when
 * there is none. */
bpy_state *bpy_state_of(PyObject *obj);

/* Which PyModuleDef is the module's (module.c, at PyInit). */
void bpy_state_set_def(PyModuleDef *def);

/* Ties a type the module made to the module (its __bp_module__, a strong
 * reference that keeps the module alive while the type lives: the
 * Limited API of 3.9 has no PyType_GetModule).  0 or -1. */
int bpy_type_set_module(PyTypeObject *type, PyObject *module);

/* ---- errors.c ----------------------------------------------------------- */

/* Creates backplane's exception classes and adds them to the module. */
int bpy_errors_init(bpy_state *ms, PyObject *module);

/* Raises the exception class of `status` with the calling thread's last
 * Backplane error message; returns NULL (for `return bpy_raise(st);`). */
PyObject *bpy_raise(bpy_state *ms, bp_status status);

/* The exception class of a status (borrowed). */
PyObject *bpy_error_class(bpy_state *ms, bp_status status);

/* The same with an explicit message. */
PyObject *bpy_raise_msg(bpy_state *ms, bp_status status, const char *msg);

/* A str of bytes from the host or a plugin, which may not be UTF-8 (such
 * bytes come back as \\xNN); None for NULL. */
PyObject *bpy_str(const char *s);

/* ---- tensor.c ----------------------------------------------------------- */

typedef struct bpy_tensor {
  PyObject_HEAD
  bp_tensor *t;  /* owned reference, never NULL once constructed */
  /* Wraps memory its source would not let be written (a read-only NumPy
   * array, through from_dlpack): an op that writes it is refused, and
   * NumPy sees it read-only. */
  int readonly;
} bpy_tensor;

int bpy_tensor_init_type(bpy_state *ms, PyObject *module);

/* A new Tensor object that takes over the reference `t` (released on
 * failure too).  NULL with an exception set on failure. */
PyObject *bpy_tensor_wrap(bpy_state *ms, bp_tensor *t);

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
PyObject *bpy_tensor_capsule(bpy_state *ms, bp_tensor *t);

static inline int bpy_tensor_check(bpy_state *ms, PyObject *o) {
  return Py_TYPE(o) == ms->tensor_type ||
         PyObject_TypeCheck(o, ms->tensor_type);
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
int bpy_to_tensor(bpy_state *ms, PyObject *obj, const char *what, int writable,
                  bpy_conv *conv, bp_tensor **out);

/* Imports a DLPack capsule ("dltensor"); renames it "used_dltensor" on
 * success.  *out is a new reference. */
int bpy_from_capsule(bpy_state *ms, PyObject *capsule, bp_tensor **out);

/* Reads a dtype given as a name ("float32"), a NumPy dtype or scalar
 * type, a torch dtype, or a bp dtype code. */
int bpy_to_dtype(bpy_state *ms, PyObject *obj, int32_t *out);

/* Reads a device given as "cpu", "cuda:1", a (type, index) pair, or a
 * torch.device. */
int bpy_to_device(bpy_state *ms, PyObject *obj, bp_device *out);

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
int bpy_wrap_blob(bpy_state *ms, PyObject *owner, bp_device dev, int32_t dtype,
                  int32_t ndim, const int64_t *sizes, const int64_t *strides,
                  void *data, const char *what, bp_tensor **out);
int bpy_read_int64s(bpy_state *ms, PyObject *seq, int64_t *dst, int32_t max,
                    int32_t *n, const char *what, const char *field);

/* ---- ndarray.c ---------------------------------------------------------- */

/* A NumPy array's layout, read in place. */
typedef struct bpy_array {
  void *data; /* borrowed: the array keeps it */
  int32_t dtype, ndim;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM]; /* strides in elements */
} bpy_array;

/* Reads obj, an exact numpy.ndarray (Py_TYPE(obj) == ms->ndarray_type),
 * without asking NumPy: 1 when *out holds its layout; 0 when it must take
 * another way (the mirror of NumPy's layout is refused, or the array is
 * unaligned, not in native byte order, of a dtype Backplane lacks, with a
 * negative or partial stride, or read-only and `writable`).  Never
 * raises.  The first call checks the mirror against NumPy. */
int bpy_ndarray_read(bpy_state *ms, PyObject *obj, int writable,
                     bpy_array *out);

/* 1 when ms->ndarray_type is set and its arrays are read in place (checks
 * the mirror first if need be), else 0.  Never raises. */
int bpy_ndarray_mirror(bpy_state *ms);

/* ---- torchconv.c -------------------------------------------------------- */

/* Whether torch was registered. */
int bpy_torch_known(bpy_state *ms);

/* A torch tensor as a bp_tensor sharing its memory (*out a new ref), as
 * `conv` (may be NULL) says. */
int bpy_from_torch(bpy_state *ms, PyObject *obj, const char *what,
                   bpy_conv *conv, bp_tensor **out);

/* When conv->grad_inputs is set (a torch tensor required grad), warns that
 * the op has no derivative (when grad mode is on) and clears it.  -1 if
 * the warning became an exception. */
int bpy_torch_grad_warning(bpy_state *ms, bpy_conv *conv, PyObject *op_name);

/* 1 and *out when obj is a torch dtype, else 0 (no exception). */
int bpy_torch_dtype_code(bpy_state *ms, PyObject *obj, int32_t *out);

/* Whether `obj` is a torch.Tensor (registering torch first when the
 * program imported it). */
int bpy_is_torch_tensor(bpy_state *ms, PyObject *obj);

/* A torch tensor sharing t's memory (torch must be registered); new ref. */
PyObject *bpy_tensor_to_torch(bpy_state *ms, bp_tensor *t);

/* The torch dtype object for a bp dtype (borrowed), NULL if none. */
PyObject *bpy_torch_dtype(bpy_state *ms, int32_t dtype);

/* Registers torch: its Tensor type, {torch dtype: bp code}, and the
 * function that imports a DLPack capsule.  Module function set_torch. */
PyObject *bpy_set_torch(PyObject *self, PyObject *args);
/* op.c: set_scalar_routing(route, numpy.ndarray or None). */
PyObject *bpy_set_scalar_routing(PyObject *self, PyObject *args);

/* ---- op.c --------------------------------------------------------------- */

int bpy_op_init_type(bpy_state *ms, PyObject *module);

/* Bumped by every load, unload and discovery made through the module, so
 * that ops re-read their schemas. */
extern unsigned long bpy_registry_generation;

#endif /* BP_PY_EXT_H */
