/*
 * conformance/tests/faulty/shim.h - the faulty-plugin shim over the
 * reference CPU plugin.
 *
 * Each plugin of the shim corpus is the CPU plugin (compiled once into
 * libcpuref.la, its entry point renamed cpuref_plugin_init) plus shim.c
 * plus one fault, chosen with one -DFAULT_<NAME> macro from the
 * faults-*.c files.  The shim gives the CPU plugin a proxy copy of the
 * host table whose `impl` slot swaps the kernel of the fault's op for the
 * fault's kernel; that kernel reaches the real one through shim_real().
 * A fault may also hook load (setup) and teardown.
 *
 * A fault is written like a vendor bug: it misbehaves only in a subtle
 * region of the input space and calls the real kernel everywhere else.
 */
#ifndef BP_FAULTY_SHIM_H
#define BP_FAULTY_SHIM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

/* One fault: the plugin's name, the CPU plugin's op it wraps ("add",
 * "add.out", ...; NULL for none) and the kernel that replaces it, and
 * optional hooks that run after the CPU plugin's setup and before its
 * teardown. */
typedef struct shim_fault {
  const char *name;
  const char *op;
  bp_boxed_kernel kernel;
  void (*on_setup)(void);
  void (*on_teardown)(void);
} shim_fault;

/* A fault that defines this true has its kernel registered as structured
 * (over a structured CPU kernel): the host hands it results to fill, which
 * may be arguments of the call (the .out and in-place forms of pointwise
 * ops), and shim_real() fills them too.  shim.c's weak default is false. */
extern bool shim_fault_structured;

/* A fault that defines this (to a list ended by BP_DTYPE_INVALID) has a
 * whole kernel of its own, declaring those dtypes (the host's composite
 * serves the others), as a vendor writes one for an op the host would
 * otherwise compose: the shim registers it in the CPU plugin's core
 * library when the CPU plugin has no kernel for the op (conv2d, the
 * pools, cat, clamp, ...), or puts it in place of the CPU kernel when
 * there is one.  It never calls shim_real().  shim.c's weak default is
 * NULL. */
extern const int32_t *shim_fault_dtypes;

/* A fault may define an op of its own outside core, in namespace
 * "faulty", with a CPU kernel declaring float32 (the fault) and a
 * composite over core ops (its reference, which bp-certify's OP/reference
 * case checks the kernel against).  shim.c's weak default is NULL. */
typedef struct shim_vendor_op {
  const char *schema; /* "axpby(Tensor a, ...) -> Tensor" */
  const char *name;   /* "axpby" */
  bp_meta_fn meta;
  bp_boxed_kernel kernel, composite;
} shim_vendor_op;
extern const shim_vendor_op *shim_fault_vendor_op;

/* Defined by the one fault the plugin is built with. */
extern const shim_fault shim_the_fault;

/* The host's real table (kernels get it as ctx->host too). */
extern const bp_host_api *shim_host;

/* The signature of a fault's kernel. */
#define SHIM_KERNEL(name)                                                                   \
  static bp_status name(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,       \
                        bp_value *rets, size_t nrets)

/* Calls the CPU plugin's kernel of the wrapped op (args may be a copy). */
bp_status shim_real(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                    bp_value *rets, size_t nrets);

/* Calls any op ("core::cast") through the host with nargs arguments and
 * one Tensor result. */
bp_status shim_call(const char *op, const bp_value *args, size_t nargs, bp_tensor **out);

/* A Tensor value (borrowed) and a result slot (owned). */
bp_value shim_tensor_arg(bp_tensor *t);
bp_status shim_return(bp_value *rets, bp_tensor *t);

/* The view of a tensor argument or result. */
const bp_tensor_view *shim_view(const bp_tensor *t);
#define SHIM_ARG(i) shim_view(args[i].u.tensor)
#define SHIM_RET() shim_view(rets[0].u.tensor)

/* A view of t's storage with other sizes and strides (row-major when
 * strides is NULL) at element offset `offset`; a new reference. */
bp_status shim_restride(bp_tensor *t, const int64_t *strides, int64_t offset, bp_tensor **out);

/* A contiguous copy of v whose elements keep their bytes but are read as
 * `dtype` (of the same width): int8 bits seen as uint8. */
bp_status shim_reinterpret(const bp_tensor_view *v, int32_t dtype, bp_tensor **out);

/* Elements: the offset (in elements) of index idx of a result of ndim
 * dims in v, broadcast NumPy-style; the next row-major index (false after
 * the last); an element as double (any dtype) and stored from a double
 * (rounded, or truncated and wrapped for integers). */
int64_t shim_at(const bp_tensor_view *v, int32_t ndim, const int64_t *idx);
bool shim_next(int32_t ndim, const int64_t *sizes, int64_t *idx);
double shim_load(const bp_tensor_view *v, int64_t off);
void shim_store(const bp_tensor_view *v, int64_t off, double x);
int64_t shim_load_int(const bp_tensor_view *v, int64_t off);
void shim_store_int(const bp_tensor_view *v, int64_t off, int64_t x);
bool shim_is_float(int32_t dtype);

/* The op's result (the first), allocated as its meta function says. */
bp_status shim_alloc_result(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor **out);

/* A copy of the arguments that a fault may change: `av`. */
#define SHIM_COPY_ARGS(av)                                                                  \
  bp_value av[16];                                                                          \
  memcpy(av, args, (nargs < 16 ? nargs : 16) * sizeof *args)

/* x rounded to float16 and back (a float16 accumulator). */
float shim_round_f16(float x);

/* The 1-D slices of v along dimension d, one by one: the offset of each
 * slice's first element in v and in a contiguous tensor of v's shape.
 * Along d, v steps v->strides[d] and the contiguous one rows->out_step. */
typedef struct shim_rows {
  const bp_tensor_view *v;
  int32_t d;
  int64_t idx[BP_MAX_NDIM], sizes[BP_MAX_NDIM], out_strides[BP_MAX_NDIM];
  int64_t left, len, out_step;
} shim_rows;
void shim_rows_init(shim_rows *r, const bp_tensor_view *v, int32_t d);
bool shim_rows_next(shim_rows *r, int64_t *in_off, int64_t *out_off);

/* A dim argument in range [-n, n) (n >= 1 for a 0-dim tensor) made
 * non-negative. */
int32_t shim_norm_dim(int64_t dim, int32_t ndim);

#endif /* BP_FAULTY_SHIM_H */
