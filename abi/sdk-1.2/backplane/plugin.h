/*
 * backplane/plugin.h - everything a vendor needs to write a backend plugin.
 *
 * A plugin is a shared object that includes only the SDK headers and links
 * nothing from the host.  It exports exactly one symbol, bp_plugin_init().
 * The host dlopen()s it, calls bp_plugin_init() with a const table of host
 * functions (bp_host_api), and receives a const descriptor (bp_plugin_desc).
 * After checking the versions, the host calls the descriptor's setup(),
 * where the plugin registers its devices, operators, kernels and meta
 * functions through the table.
 *
 * VERSION NEGOTIATION
 *   host->abi_major/abi_minor say what the host implements; the descriptor's
 *   abi_major/abi_minor say what the plugin was compiled against.  A
 *   different major is refused by the host with a message that names both.
 *   Within one major, either side may be newer: the host reads only the
 *   descriptor fields that desc->struct_size covers, and the plugin must
 *   check BP_HOST_HAS(host, slot) before calling a slot that was appended
 *   after ABI 1.0 (slots of 1.0 are always present).  Fields appended
 *   after 1.0 are marked "Added in ABI 1.1".
 *
 * ERRORS
 *   Every callback returns a bp_status.  To explain a failure, call
 *   host->set_error() (or set_errorf()) and return its result.  Messages
 *   should name the plugin, the op, the argument, and the expected and
 *   actual values.  Nothing may unwind across the boundary: no C++
 *   exceptions, no longjmp.
 *
 * THREADING
 *   setup() and teardown() run once each, under the host's loader lock.
 *   Kernels, meta functions and device-interface functions may be called
 *   from any thread, concurrently, and must be thread-safe.
 *
 * Added in ABI 1.0 unless marked otherwise.
 */
#ifndef BACKPLANE_PLUGIN_H
#define BACKPLANE_PLUGIN_H

#include <backplane/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BP_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define BP_PRINTF_LIKE(fmt, args)
#endif

/* ------------------------------------------------------------------------ */
/* Handles that exist only during registration                              */
/* ------------------------------------------------------------------------ */

/* The loading plugin, as seen by the host.  Valid only inside setup(). */
typedef struct bp_registrar bp_registrar;

/* A library: the plugin's registrations for one namespace.  Valid only
 * inside setup(); the host owns it. */
typedef struct bp_library bp_library;

typedef struct bp_host_api bp_host_api;

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * What a kernel, meta function or fallback receives about the call.  The
 * host owns it; it is valid during the call only and must not be kept.
 */
typedef struct bp_kernel_ctx {
  size_t struct_size;
  const bp_host_api *host;  /* the host's function table */
  const bp_op *op;          /* the operator being called */
  const char *op_name;      /* "ns::name" or "ns::name.overload" */
  void *user_data;          /* from the bp_kernel_def, bp_op_def or
                               bp_fallback_def that registered the callee */
  int32_t device_type;      /* the device type the call was dispatched on;
                               BP_DEVICE_INVALID for a meta function */
  int32_t reserved;         /* zero */
} bp_kernel_ctx;

BP_ASSERT_LAST_FIELD(bp_kernel_ctx, reserved);
#define BP_KERNEL_CTX_STRUCT_SIZE BP_STRUCT_SIZE(bp_kernel_ctx, reserved)

/*
 * A boxed kernel.  `args` holds all `nargs` arguments of the schema, in
 * schema order, with defaults already filled in and every tag already
 * checked against the schema by the host (an optional argument may hold
 * BP_TAG_NONE).  Arguments are borrowed.
 *
 * On success the kernel writes `nrets` results into rets[0 .. nrets-1]:
 * a Tensor result is a new reference that passes to the caller (for a
 * result that aliases an input, as in `Tensor(a!) self -> Tensor(a!)`,
 * retain the input and return it).  On failure it writes nothing that needs
 * releasing, calls host->set_error() and returns its status.
 */
typedef bp_status (*bp_boxed_kernel)(const bp_kernel_ctx *ctx,
                                     const bp_value *args, size_t nargs,
                                     bp_value *rets, size_t nrets);

/*
 * An unboxed kernel: a plain C function whose real signature follows from
 * the operator's schema.  It is stored as this generic pointer type and
 * called by the host with exactly the derived signature:
 *
 *     bp_status kernel(const bp_kernel_ctx *ctx, ARGS..., RETS...);
 *
 * ARGS, one or two parameters per schema argument, in schema order:
 *     Tensor       bp_tensor *            Tensor?      bp_tensor * (NULL=None)
 *     int          int64_t                int?         const int64_t *
 *     float        double                 float?       const double *
 *     bool         bool                   bool?        const bool *
 *     str          const char *           str?         const char * (NULL=None)
 *     ScalarType   int32_t (bp_dtype)     ScalarType?  const int32_t *
 *     Device       const bp_device *      Device?      const bp_device *
 *     Scalar       const bp_value *       Scalar?      const bp_value * (NULL=None)
 *                  (tagged BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL; ABI 1.2)
 *     int[]        const int64_t *, size_t
 *     float[]      const double *, size_t
 *     Tensor[]     bp_tensor *const *, size_t
 *   (An optional list passes a NULL pointer and 0 for None.  Optional
 *   scalars are passed by pointer, NULL for None; the pointee is borrowed.)
 * RETS, one out-parameter per schema return, in order:
 *     Tensor -> bp_tensor **, int -> int64_t *, float -> double *,
 *     bool -> bool *, ScalarType -> int32_t *.
 *   Tensor results are new references, as for boxed kernels.
 *
 * The host prepares the call once, at registration, and refuses a schema
 * it cannot map.  docs/schemas.md gives the grammar and this mapping.
 */
typedef void (*bp_unboxed_kernel)(void);

/*
 * The metadata a meta function computes for one Tensor result.  For a
 * result that is not a Tensor, the host sets dtype to BP_DTYPE_INVALID and
 * the meta function leaves the entry alone.
 */
typedef struct bp_tensor_meta {
  size_t struct_size;
  bp_device device;
  int32_t dtype;                  /* a bp_dtype code */
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];   /* in elements */
} bp_tensor_meta;

BP_ASSERT_LAST_FIELD(bp_tensor_meta, strides);
#define BP_TENSOR_META_STRUCT_SIZE BP_STRUCT_SIZE(bp_tensor_meta, strides)

/*
 * A meta (shape) function: computes every Tensor result's device, dtype,
 * sizes and strides from the arguments' metadata, without reading or
 * writing tensor data.  It belongs to the operator, not to a kernel.  It
 * receives the same checked arguments as a boxed kernel, and fills
 * outs[0 .. nouts-1].  On bad input it returns the same status and message
 * the kernels would.
 */
typedef bp_status (*bp_meta_fn)(const bp_kernel_ctx *ctx, const bp_value *args,
                                size_t nargs, bp_tensor_meta *outs,
                                size_t nouts);

/* ------------------------------------------------------------------------ */
/* Registration records                                                     */
/* ------------------------------------------------------------------------ */

/* Library kinds, after torch.library.Library's "DEF", "FRAGMENT", "IMPL". */
typedef enum bp_library_kind {
  BP_LIBRARY_DEF = 1,       /* defines a namespace the plugin owns */
  BP_LIBRARY_FRAGMENT = 2,  /* adds defs to a namespace whose owner allows it */
  BP_LIBRARY_IMPL = 3       /* only implements ops that others defined */
} bp_library_kind;

/* Bits of bp_library_def.flags. */
#define BP_LIBRARY_ALLOW_FRAGMENTS (1u << 0)  /* DEF only: others may add */

typedef struct bp_library_def {
  size_t struct_size;
  const char *ns;     /* the namespace: [A-Za-z_][A-Za-z0-9_]*; copied */
  int32_t kind;       /* a bp_library_kind */
  uint32_t flags;     /* BP_LIBRARY_* */
} bp_library_def;

BP_ASSERT_LAST_FIELD(bp_library_def, flags);
#define BP_LIBRARY_DEF_STRUCT_SIZE BP_STRUCT_SIZE(bp_library_def, flags)

/* Bits of bp_op_def.flags. */
#define BP_OP_NONDETERMINISTIC (1u << 0)  /* results may differ run to run */
#define BP_OP_MIXED_DEVICES (1u << 1)     /* tensor args may be on different
                                             devices; the first tensor's
                                             device selects the kernel */

/* An operator definition, for host->def(). */
typedef struct bp_op_def {
  size_t struct_size;
  const char *schema;          /* "name.overload(ARGS) -> RETS"; a leading
                                  "ns::" must match the library; copied */
  uint64_t flags;              /* BP_OP_* */
  bp_meta_fn meta;             /* the op's meta function, or NULL */
  bp_boxed_kernel composite;   /* a device-agnostic kernel built on
                                  host->call, used when no device kernel or
                                  fallback applies; or NULL */
  void *user_data;             /* passed to meta and composite in ctx */
  const char *doc;             /* one line of documentation, or NULL; copied */
  const bp_extension *ext;
  /* Added in ABI 1.2. */
  uint32_t op_set_version;     /* the version of the `core` op set that
                                  added this op, for the host's own
                                  definitions of core ops (bp_op_info); any
                                  other definition must leave it 0, or it
                                  is refused */
  uint32_t reserved;           /* zero */
} bp_op_def;

BP_ASSERT_LAST_FIELD(bp_op_def, reserved);
#define BP_OP_DEF_STRUCT_SIZE BP_STRUCT_SIZE(bp_op_def, reserved)

/* Kernel priorities (bp_kernel_def.priority, ABI 1.1).  Several plugins
 * may implement one op for one device type; calls go to the kernel of the
 * highest priority (docs/vendor-guide.md, "Kernel precedence").  A
 * reference implementation declares BP_PRIORITY_REFERENCE, so that any
 * vendor kernel of the default priority wins over it. */
#define BP_PRIORITY_DEFAULT 0
#define BP_PRIORITY_REFERENCE (-100)

/*
 * Kernel flags (bp_kernel_def.flags).
 *
 * BP_KERNEL_DEF_STRUCTURED (ABI 1.2): a boxed kernel of an op whose
 * results are all plain Tensors (`-> Tensor`, `-> (Tensor, Tensor)`; no
 * alias, no list, no optional), in the manner of PyTorch's structured
 * kernels.  The host runs the op's meta function, allocates each result
 * on the call's device with the meta function's dtype, sizes and strides
 * (contiguous for the core op set), and puts it into rets[] before the
 * call: rets[j] is tagged BP_TAG_TENSOR and borrowed.  The kernel only
 * fills the results' data; it must leave rets[] as it found it, and on
 * failure it calls host->set_error() and returns its status, after which
 * the host releases the results.  The host has already refused every
 * argument error the meta function finds, so the kernel needs neither
 * op_meta nor tensor_empty.  Set the flag only when host->abi_minor >= 2:
 * an older host ignores it and would call the kernel as a plain boxed one.
 * A 1.2 host refuses a flag it does not know from a plugin of ABI 1.2 or
 * later, and a structured kernel of an op that does not qualify.
 */
#define BP_KERNEL_DEF_STRUCTURED (1u << 0)

/* A kernel for one operator and one device type, for host->impl().
 * Exactly one of `boxed` and `unboxed` is set. */
typedef struct bp_kernel_def {
  size_t struct_size;
  const char *op;              /* "name.overload", or "ns::name.overload";
                                  copied */
  int32_t device_type;         /* the device type it runs on */
  uint32_t flags;              /* BP_KERNEL_DEF_*: zero before ABI 1.2 */
  bp_boxed_kernel boxed;
  bp_unboxed_kernel unboxed;
  void *user_data;             /* passed in ctx */
  const int32_t *dtypes;       /* the dtypes it supports, ended by
                                  BP_DTYPE_INVALID; NULL for "every dtype
                                  the op allows"; copied.  The list
                                  covers every tensor the kernel reads or
                                  writes: its Tensor arguments and, when
                                  the op has a meta function, its
                                  results, whatever decides their dtype
                                  (a ScalarType argument such as dtype=,
                                  promotion, the op itself: argmax's
                                  int64).  The host enforces it: a call
                                  with a tensor of another dtype goes to
                                  the next kernel in precedence order
                                  that supports it, or to the op's
                                  composite, or fails with
                                  BP_ERR_UNSUPPORTED before this kernel
                                  runs */
  const bp_extension *ext;
  /* Added in ABI 1.1. */
  int32_t priority;            /* BP_PRIORITY_*, or any value: higher wins */
  int32_t reserved;            /* zero */
} bp_kernel_def;

BP_ASSERT_LAST_FIELD(bp_kernel_def, reserved);
#define BP_KERNEL_DEF_STRUCT_SIZE BP_STRUCT_SIZE(bp_kernel_def, reserved)

/* A boxed fallback for every op on one device type that has no kernel. */
typedef struct bp_fallback_def {
  size_t struct_size;
  int32_t device_type;
  uint32_t flags;              /* zero in ABI 1.0 */
  bp_boxed_kernel fn;
  void *user_data;
} bp_fallback_def;

BP_ASSERT_LAST_FIELD(bp_fallback_def, user_data);
#define BP_FALLBACK_DEF_STRUCT_SIZE BP_STRUCT_SIZE(bp_fallback_def, user_data)

/* ------------------------------------------------------------------------ */
/* Operator introspection (ABI 1.1)                                         */
/* ------------------------------------------------------------------------ */

/* Bits of bp_arg_info.flags. */
#define BP_ARG_OPTIONAL (1u << 0)     /* `T?`: may be None */
#define BP_ARG_LIST (1u << 1)         /* `T[]` or `T[N]` */
#define BP_ARG_KWARG_ONLY (1u << 2)   /* after the schema's `*` */
#define BP_ARG_HAS_DEFAULT (1u << 3)  /* default_value holds the default */
#define BP_ARG_WRITTEN (1u << 4)      /* `Tensor(a!)`: the op writes it */

/*
 * One argument or result of an operator's schema, as host->op_get_arg,
 * host->op_get_ret, bp_op_get_arg() and bp_op_get_ret() describe it.
 * Strings and the default's arrays are host-owned and valid while the op
 * stays defined (until the plugin that defined it unloads).
 */
typedef struct bp_arg_info {
  size_t struct_size;
  const char *name;        /* the argument's name; "" for an unnamed result */
  const char *type;        /* the type as the schema spells it, e.g.
                              "Tensor(a!)", "int[2]", "ScalarType?" */
  const char *alias_set;   /* "a" for Tensor(a) or Tensor(a!), else NULL */
  int32_t tag;             /* the bp_tag of a value of this type (for an
                              optional, of a value that is not None);
                              BP_TAG_SCALAR for Scalar, whose value carries
                              BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL */
  int32_t list_size;       /* N of `T[N]`, else -1 */
  uint32_t flags;          /* BP_ARG_* */
  int32_t reserved;        /* zero */
  bp_value default_value;  /* with BP_ARG_HAS_DEFAULT: the default, which
                              is BP_TAG_NONE for `=None` */
} bp_arg_info;

BP_ASSERT_LAST_FIELD(bp_arg_info, default_value);
#define BP_ARG_INFO_STRUCT_SIZE BP_STRUCT_SIZE(bp_arg_info, default_value)

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

/* Properties of one device, filled in by bp_device_iface.properties. */
typedef struct bp_device_props {
  size_t struct_size;      /* set by the host; fill only what it covers */
  char name[128];          /* NUL-terminated, e.g. "NVIDIA H100 80GB HBM3" */
  uint64_t total_memory;   /* bytes, 0 if unknown */
  int32_t arch_major;      /* e.g. CUDA compute capability, or 0 */
  int32_t arch_minor;
  int64_t compute_units;   /* multiprocessors, cores, ... or 0 */
} bp_device_props;

BP_ASSERT_LAST_FIELD(bp_device_props, compute_units);
#define BP_DEVICE_PROPS_STRUCT_SIZE \
  BP_STRUCT_SIZE(bp_device_props, compute_units)

/* Bits of bp_device_iface.flags. */
#define BP_DEVICE_HOST_VISIBLE (1u << 0)  /* the CPU may read/write memory */

/*
 * A device type's interface, registered by the plugin that drives it
 * through host->device_type().  The host keeps the pointer: the struct must
 * stay valid and unchanged until the plugin unloads (a static const object
 * is the usual choice).  Every function receives `user_data` first.
 * Required: count, alloc, free, copy, synchronize.  Streams and events are
 * optional (NULL when the device has none).
 *
 * Streams and events are opaque pointers owned by the plugin.  A NULL
 * stream means the device's default stream.
 */
typedef struct bp_device_iface {
  size_t struct_size;
  const char *name;   /* the type's name: [a-z][a-z0-9_]*, e.g. "cuda" */
  int32_t type;       /* a fixed bp_device_type code, or BP_DEVICE_INVALID
                         to have the host assign a runtime code by name */
  uint32_t flags;     /* BP_DEVICE_* */
  void *user_data;

  /* How many devices of this type exist (0 is valid: no hardware). */
  bp_status (*count)(void *user_data, int32_t *out_count);
  /* Properties of device `index`; may be NULL. */
  bp_status (*properties)(void *user_data, int32_t index,
                          bp_device_props *out_props);
  /* Allocates nbytes (nbytes > 0) on device `index`, aligned to at least
   * 64 bytes.  The host frees it with free() and the same nbytes. */
  bp_status (*alloc)(void *user_data, int32_t index, size_t nbytes,
                     void **out_ptr);
  void (*free)(void *user_data, int32_t index, void *ptr, size_t nbytes);
  /* Copies nbytes between two devices, at least one of them of this type;
   * the other may be the CPU.  Returns after the copy is complete as seen
   * from the host (it may be asynchronous only device to device). */
  bp_status (*copy)(void *user_data, void *dst, bp_device dst_device,
                    const void *src, bp_device src_device, size_t nbytes);
  /* Waits for all work on device `index` to finish. */
  bp_status (*synchronize)(void *user_data, int32_t index);

  bp_status (*stream_create)(void *user_data, int32_t index,
                             void **out_stream);
  bp_status (*stream_destroy)(void *user_data, int32_t index, void *stream);
  /* The calling thread's current stream on device `index`. */
  bp_status (*stream_get_current)(void *user_data, int32_t index,
                                  void **out_stream);
  bp_status (*stream_set_current)(void *user_data, int32_t index,
                                  void *stream);
  bp_status (*stream_synchronize)(void *user_data, int32_t index,
                                  void *stream);
  bp_status (*event_create)(void *user_data, int32_t index, void **out_event);
  bp_status (*event_destroy)(void *user_data, int32_t index, void *event);
  bp_status (*event_record)(void *user_data, int32_t index, void *event,
                            void *stream);
  bp_status (*stream_wait_event)(void *user_data, int32_t index,
                                 void *stream, void *event);
  bp_status (*event_synchronize)(void *user_data, int32_t index,
                                 void *event);
  const bp_extension *ext;
} bp_device_iface;

BP_ASSERT_LAST_FIELD(bp_device_iface, ext);
#define BP_DEVICE_IFACE_STRUCT_SIZE BP_STRUCT_SIZE(bp_device_iface, ext)

/* ------------------------------------------------------------------------ */
/* The host function table                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The host's functions, as a plugin sees them.  The table is const, owned
 * by the host, and valid until the plugin's teardown() returns.  Slots are
 * only ever appended; a slot added after ABI 1.0 may be NULL in an older
 * host, so check BP_HOST_HAS() first.  Registration slots work only inside
 * setup(); elsewhere they return BP_ERR_INVALID_ARGUMENT.
 */
struct bp_host_api {
  size_t struct_size;
  uint32_t abi_major;          /* the host's BP_ABI_VERSION_MAJOR */
  uint32_t abi_minor;          /* the host's BP_ABI_VERSION_MINOR */
  const char *host_version;    /* e.g. "libbackplane 0.1.0"; static */
  const bp_extension *ext;

  /* --- Errors (thread-local, like errno) ----------------------------- */

  /* Records `message` (copied; may be NULL) as the calling thread's error
   * for `status` and returns `status`, so `return host->set_error(...)`
   * reads naturally. */
  bp_status (*set_error)(bp_status status, const char *message);
  /* The same with a printf-style format. */
  bp_status (*set_errorf)(bp_status status, const char *format, ...)
      BP_PRINTF_LIKE(2, 3);
  /* The static name of a status code, e.g. "BP_ERR_TYPE". */
  const char *(*status_str)(bp_status status);
  /* The calling thread's last error message; host-owned, valid until the
   * next failing call on this thread.  Never NULL. */
  const char *(*last_error)(void);

  /* --- Registration (inside setup() only) ----------------------------- */

  /* Opens a library for a namespace.  *out is host-owned, valid during
   * setup().  A DEF of a namespace someone else owns fails with
   * BP_ERR_ALREADY_EXISTS; a FRAGMENT of a namespace whose owner did not
   * allow fragments fails with BP_ERR_UNSUPPORTED. */
  bp_status (*library)(bp_registrar *reg, const bp_library_def *def,
                       bp_library **out_lib);
  /* Defines an operator in a DEF or FRAGMENT library.  Defining the same
   * name again with a different schema fails with BP_ERR_ALREADY_EXISTS. */
  bp_status (*def)(bp_library *lib, const bp_op_def *def);
  /* Registers a kernel.  The op must be defined already (by this plugin,
   * the host or an earlier plugin).  Other plugins may register kernels
   * for the same op and device type: the host keeps them all and calls
   * one by precedence (the host's override, then priority, then load
   * order).  A second kernel from the same plugin for the same op and
   * device type fails with BP_ERR_ALREADY_EXISTS, and only that kernel is
   * refused.  An unboxed kernel whose schema cannot be mapped fails with
   * BP_ERR_UNSUPPORTED. */
  bp_status (*impl)(bp_library *lib, const bp_kernel_def *kernel);
  /* Registers the fallback of a device type (one per type). */
  bp_status (*fallback)(bp_registrar *reg, const bp_fallback_def *fallback);
  /* Registers a device type and its interface.  For iface->type ==
   * BP_DEVICE_INVALID the host assigns a runtime code, unique per name;
   * *out_type receives the code either way.  A code keeps its name for the
   * life of the process: the same name gets the same code when its plugin
   * loads again, and a code cannot be registered under another name. */
  bp_status (*device_type)(bp_registrar *reg, const bp_device_iface *iface,
                           int32_t *out_type);

  /* --- Tensors ---------------------------------------------------------- */

  /* A new contiguous tensor with uninitialised data from the device's
   * allocator; *out is a new reference. */
  bp_status (*tensor_empty)(bp_device device, int32_t dtype, int32_t ndim,
                            const int64_t *sizes, bp_tensor **out);
  /* The same with explicit element strides (non-negative; storage covers
   * the largest reachable element). */
  bp_status (*tensor_empty_strided)(bp_device device, int32_t dtype,
                                    int32_t ndim, const int64_t *sizes,
                                    const int64_t *strides, bp_tensor **out);
  /* A view of base's storage; *out is a new reference that keeps the
   * storage alive.  Fails with BP_ERR_SHAPE if it reaches outside it. */
  bp_status (*tensor_as_strided)(bp_tensor *base, int32_t ndim,
                                 const int64_t *sizes, const int64_t *strides,
                                 int64_t storage_offset, bp_tensor **out);
  /* Adds a reference and returns t.  NULL is returned unchanged. */
  bp_tensor *(*tensor_retain)(bp_tensor *t);
  /* Drops a reference; the last one frees the tensor.  NULL is a no-op. */
  void (*tensor_release)(bp_tensor *t);
  /* The tensor's metadata; host-owned, valid while t lives. */
  const bp_tensor_view *(*tensor_view)(const bp_tensor *t);
  /* Copies src's elements into dst (same dtype and sizes, any strides,
   * any devices: host memory or through the device interfaces). */
  bp_status (*tensor_copy)(bp_tensor *dst, const bp_tensor *src);

  /* --- Calling other operators (for composite kernels) ------------------ */

  /* Finds an operator by "ns::name" or "ns::name.overload". */
  bp_status (*op_find)(const char *name, const bp_op **out_op);
  /* Calls an operator with the arguments on `stack`; see bp_call(). */
  bp_status (*call)(const bp_op *op, bp_stack *stack);
  /*
   * Runs op's meta function on a kernel's checked arguments (as a boxed
   * kernel receives them) and fills outs[0 .. nouts-1] with each Tensor
   * result's device, dtype, sizes and strides.  A kernel of a `core` op
   * calls this to size its outputs, so that every backend agrees with the
   * op set.  Fails with BP_ERR_UNSUPPORTED when the op has no meta
   * function; on bad arguments it fails with the status and message the
   * op set specifies.  Each outs[i].struct_size must be set.
   */
  bp_status (*op_meta)(const bp_op *op, const bp_value *args, size_t nargs,
                       bp_tensor_meta *outs, size_t nouts);
  /* The version of the `core` op set the host defines (BP_CORE_OP_SET_VERSION
   * of the host's headers). */
  uint64_t core_op_set_version;

  /* --- Added in ABI 1.1: check BP_HOST_HAS() before use ---------------- */

  /* The name of a dtype ("float32", "bfloat16", ...), or NULL for a code
   * that is not a bp_dtype.  Static. */
  const char *(*dtype_name)(int32_t dtype);
  /* The code of a registered device type by name ("cpu", "cuda", or a
   * vendor's name); BP_ERR_NOT_FOUND when no such type is registered. */
  bp_status (*device_type_from_name)(const char *name, int32_t *out_type);
  /* Describes argument `index` (0 .. nargs-1) or result `index` of an op;
   * BP_ERR_NOT_FOUND past the end.  Set out_info->struct_size first. */
  bp_status (*op_get_arg)(const bp_op *op, size_t index, bp_arg_info *out_info);
  bp_status (*op_get_ret)(const bp_op *op, size_t index, bp_arg_info *out_info);
};

BP_ASSERT_LAST_FIELD(bp_host_api, op_get_ret);
#define BP_HOST_API_STRUCT_SIZE BP_STRUCT_SIZE(bp_host_api, op_get_ret)

/* True when the host's table has `slot` and it is not NULL. */
#define BP_HOST_HAS(host, slot) \
  (BP_HAS_FIELD(host, bp_host_api, slot) && (host)->slot != NULL)

/* ------------------------------------------------------------------------ */
/* The plugin descriptor and entry point                                    */
/* ------------------------------------------------------------------------ */

/*
 * What bp_plugin_init() returns: a descriptor that the plugin owns and that
 * stays valid until the plugin is unloaded (a static const object).
 */
typedef struct bp_plugin_desc {
  size_t struct_size;
  uint32_t abi_major;          /* BP_ABI_VERSION_MAJOR it was built with */
  uint32_t abi_minor;          /* BP_ABI_VERSION_MINOR it was built with */
  const char *name;            /* unique id: [a-z][a-z0-9_]*, e.g. "cpu" */
  const char *vendor;          /* free text, e.g. "Backplane" */
  const char *version;         /* the plugin's own version, e.g. "1.2.0" */
  uint32_t op_set_version;     /* the core op-set version it implements,
                                  0 for none */
  uint32_t flags;              /* zero in ABI 1.0 */
  /* Registers everything.  Required.  On failure, every registration made
   * so far is rolled back and the plugin is unloaded.  To leave a note for
   * the user on success (such as why no device was found), call
   * host->set_error(BP_OK, message) before returning BP_OK: hosts see it
   * in bp_plugin_info.error. */
  bp_status (*setup)(const bp_host_api *host, bp_registrar *reg);
  /* Called once before unload, after the host has removed the plugin's
   * registrations and no call is in flight; may be NULL. */
  void (*teardown)(const bp_host_api *host);
  const bp_extension *ext;
} bp_plugin_desc;

BP_ASSERT_LAST_FIELD(bp_plugin_desc, ext);
#define BP_PLUGIN_DESC_STRUCT_SIZE BP_STRUCT_SIZE(bp_plugin_desc, ext)

/* The name of the one symbol a plugin exports. */
#define BP_PLUGIN_ENTRY_SYMBOL "bp_plugin_init"

#if defined(_WIN32)
#define BP_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define BP_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define BP_PLUGIN_EXPORT
#endif

/* The type of the entry point. */
typedef const bp_plugin_desc *(*bp_plugin_init_fn)(const bp_host_api *host);

/*
 * The entry point every plugin defines.  It must do no more than check the
 * host's version and return its descriptor: registration happens in
 * setup().  It returns NULL to refuse the host, after host->set_error().
 */
BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_H */
