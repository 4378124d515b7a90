/*
 * op.h - the private declarations of the Op type (op.c), its argument
 * binding and result conversion (args.c), its descriptions (opinfo.c) and
 * its schema cache (opschema.c).
 */
#ifndef BP_PY_OP_H
#define BP_PY_OP_H

#include "ext.h"

#define MAX_ARGS 32
#define MAX_RETS 8
#define ARENA 256  /* int64 / double list elements per call, on the C stack */

/* Calls whose tensor arguments hold fewer elements than this, all in CPU
 * memory, keep the GIL: releasing and taking it back costs about as much
 * as such a call (NumPy draws the same line, at 500 elements).  Every
 * other call releases it while the kernel runs. */
#define GIL_THRESHOLD 4096

/* One argument or result.  `info`'s strings and default lists are the
 * schema's own copies, so that they outlive the plugin that defined the op
 * (a call in flight may read them after another thread unloaded it). */
typedef struct op_arg {
  PyObject *name;        /* interned */
  bp_arg_info info;
} op_arg;

/* An op's schema as the module read it.  Shared by the calls that use it;
 * counted references, taken and dropped with the GIL held. */
typedef struct op_schema {
  long refs;
  int32_t nargs, nrets, npos;
  int alias_rets;        /* some result has an alias set */
  op_arg args[MAX_ARGS];
  op_arg rets[MAX_RETS];
  void *owned[(MAX_ARGS + MAX_RETS) * 4];  /* the copies, PyMem blocks */
  int nowned;
} op_schema;

typedef struct bpy_op {
  PyObject_HEAD bpy_state
      *ms; /* its module's (its type keeps the module alive) */
  const bp_op *op;
  PyObject *name;        /* "ns::name[.overload]" */
  int torch;             /* results as torch tensors */
  int torch_cpu;         /* called by torch for its CPU dispatch key */
  unsigned long gen;     /* bpy_registry_generation of `schema`, + 1 */
  op_schema *schema;     /* a reference, or NULL */
  PyObject *scalar_op;   /* the .Scalar overload calls with a number
                          * `other` go to (op._set_scalar), or NULL */
} bpy_op;

/* The schema for a call (opschema.c): a new reference (release it with
 * bpy_schema_release), or NULL with an exception set. */
op_schema *bpy_op_schema(bpy_state *ms, bpy_op *self);
void bpy_schema_release(op_schema *sc);

/* One call's temporaries. */
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
  bpy_conv conv;                      /* how torch tensors convert */
} call_state;

static inline void bpy_call_state_init(call_state *cs) {
  cs->ntensors = cs->nlists = cs->nkeep = cs->nheap = 0;
  cs->used = 0;
  cs->work = 0;
  cs->conv = (bpy_conv){0, 0, 0};
}

/* args.c: binds args/kwargs to schema order in bound[0 .. nargs-1]
 * (borrowed; NULL where not given). */
int bpy_bind(const bpy_op *self, const op_schema *sc, PyObject *args,
             PyObject *kwargs, PyObject **bound);

/* args.c: fills vals with every argument, defaults included. */
int bpy_push_args(bpy_state *ms, const bpy_op *self, const op_schema *sc,
                  PyObject **bound, call_state *cs, bp_value *vals);

/* args.c: releases what a call converted. */
void bpy_release_state(call_state *cs);

/* args.c: the call's results as a Python value (one, a tuple, or None);
 * moves each Tensor out of the stack. */
PyObject *bpy_results(bpy_state *ms, const bpy_op *self, const op_schema *sc,
                      bp_stack *st, PyObject **bound, const bp_value *args);

/* opinfo.c */
extern PyGetSetDef bpy_op_getset[];

#endif /* BP_PY_OP_H */
