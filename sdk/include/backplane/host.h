/*
 * backplane/host.h - the API of libbackplane, for programs that embed it.
 *
 * A host (a framework, a runtime, a test tool) links libbackplane through
 * `pkg-config backplane`.  It creates tensors, pushes arguments on a boxed
 * stack, finds operators and calls them; libbackplane loads the plugins
 * that implement them.  The host CPU device (BP_DEVICE_CPU, index 0) is
 * built in and works before any plugin is loaded.
 *
 * CONVENTIONS
 *   - Functions that can fail return a bp_status; BP_OK is 0.  On failure
 *     the calling thread's error message names the problem; read it with
 *     bp_last_error().  Out-parameters come last and are written only on
 *     success.
 *   - Every handle has a create/release pair, and release(NULL) is a no-op.
 *   - Functions are thread-safe unless their comment says otherwise.
 *
 * Added in ABI 1.0 unless marked otherwise.
 */
#ifndef BACKPLANE_HOST_H
#define BACKPLANE_HOST_H

#include <backplane/abi.h>
#include <backplane/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define BP_API __declspec(dllimport)
#elif defined(__GNUC__)
#define BP_API __attribute__((visibility("default")))
#else
#define BP_API
#endif

/* DLPack's managed tensor (<dlpack/dlpack.h>); only pointers to it are
 * used here, so this header does not need DLPack's. */
struct DLManagedTensor;

/* ------------------------------------------------------------------------ */
/* Versions and errors                                                      */
/* ------------------------------------------------------------------------ */

/* The library's version, e.g. "0.1.0".  Static. */
BP_API const char *bp_version(void);

/* The ABI version the library implements (its BP_ABI_VERSION_*).  Either
 * pointer may be NULL. */
BP_API void bp_abi_version(uint32_t *out_major, uint32_t *out_minor);

/* The static name of a status code ("BP_OK", "BP_ERR_TYPE", ...), or
 * "BP_ERR_UNKNOWN" for a code outside the set. */
BP_API const char *bp_status_str(bp_status status);

/* The calling thread's last error message: library-owned, valid until the
 * next call that fails on this thread.  Never NULL; "" when none. */
BP_API const char *bp_last_error(void);

/* The status that went with bp_last_error(), BP_OK when none. */
BP_API bp_status bp_last_status(void);

/* Forgets the calling thread's last error. */
BP_API void bp_clear_error(void);

/* ------------------------------------------------------------------------ */
/* Dtypes and devices                                                       */
/* ------------------------------------------------------------------------ */

/* The name of a dtype ("float32", "bfloat16", "bool", ...), or NULL for a
 * code that is not a bp_dtype.  Static. */
BP_API const char *bp_dtype_name(int32_t dtype);

/* Parses a dtype name as bp_dtype_name() spells it. */
BP_API bp_status bp_dtype_from_name(const char *name, int32_t *out_dtype);

/* Bytes per element of a dtype, 0 for a code that is not a bp_dtype. */
BP_API size_t bp_dtype_size(int32_t dtype);

/* The name of a device type ("cpu", "cuda", or a vendor's registered
 * name), or NULL when the code is unknown.  Library-owned, valid while the
 * type stays registered. */
BP_API const char *bp_device_type_name(int32_t type);

/* The code of a registered device type by its name ("cpu", "cuda", or a
 * vendor's registered name).  BP_ERR_NOT_FOUND when no type of that name
 * is registered now.  Added in ABI 1.1. */
BP_API bp_status bp_device_type_from_name(const char *name, int32_t *out_type);

/* How many devices of a registered type exist. */
BP_API bp_status bp_device_count(int32_t type, int32_t *out_count);

/* Properties of one device.  Set out_props->struct_size (to
 * BP_DEVICE_PROPS_STRUCT_SIZE) before the call; only what it covers is
 * written. */
BP_API bp_status bp_device_properties(bp_device device,
                                      bp_device_props *out_props);

/* The BP_DEVICE_* flags of a registered device type, such as
 * BP_DEVICE_HOST_VISIBLE when the CPU may read and write its memory.
 * out_flags must not be NULL; an unregistered type is BP_ERR_DEVICE. */
BP_API bp_status bp_device_type_flags(int32_t type, uint32_t *out_flags);

/* The bytes that live tensor storages hold on a registered device type
 * (all its devices), as the host allocated them: for leak checks.  A
 * plugin's own caches are not counted.  out_bytes must not be NULL; an
 * unregistered type is BP_ERR_DEVICE. */
BP_API bp_status bp_device_memory_in_use(int32_t type, int64_t *out_bytes);

/* The host CPU device, {BP_DEVICE_CPU, 0}. */
#define BP_CPU bp_device_make(BP_DEVICE_CPU, 0)

/* ------------------------------------------------------------------------ */
/* Synchronisation, streams and events                                      */
/* ------------------------------------------------------------------------ */

/*
 * Work on an asynchronous device (a GPU) is queued on streams.  Each thread
 * has a current stream per device, on which that device's kernels run;
 * NULL stands for the device's default stream.  Events mark a point in a
 * stream, for another stream to wait on or for the host to wait for.
 *
 * Streams and events are opaque handles owned by the plugin that drives
 * the device.  They are created and destroyed through these functions, on
 * the device they belong to, and must be destroyed before that plugin is
 * unloaded: bp_plugin_unload() refuses (BP_ERR_BUSY) while any is alive.
 * A device type without streams or events (such as the CPU) answers
 * BP_ERR_UNSUPPORTED; bp_device_synchronize() works on every device.
 */
typedef struct bp_stream bp_stream;
typedef struct bp_event bp_event;

/* Waits until all work queued on the device has finished. */
BP_API bp_status bp_device_synchronize(bp_device device);

/* Creates a stream on the device; *out_stream (not NULL) receives a new
 * handle that the caller owns and destroys with bp_stream_destroy(). */
BP_API bp_status bp_stream_create(bp_device device, bp_stream **out_stream);

/* Destroys a stream made by bp_stream_create() on the same device, after
 * its queued work.  A thread whose current stream it was goes back to the
 * default stream.  NULL is a no-op. */
BP_API bp_status bp_stream_destroy(bp_device device, bp_stream *stream);

/* The calling thread's current stream on the device in *out_stream (not
 * NULL); NULL there is the default stream.  The handle is borrowed. */
BP_API bp_status bp_stream_get_current(bp_device device,
                                       bp_stream **out_stream);

/* Makes `stream` (NULL: the default stream) the calling thread's current
 * stream on the device; the stream is borrowed and must outlive its use. */
BP_API bp_status bp_stream_set_current(bp_device device, bp_stream *stream);

/* Waits until all work queued on `stream` (NULL: the default) finished. */
BP_API bp_status bp_stream_synchronize(bp_device device, bp_stream *stream);

/* Creates an event on the device; *out_event (not NULL) receives a new
 * handle that the caller owns and destroys with bp_event_destroy(). */
BP_API bp_status bp_event_create(bp_device device, bp_event **out_event);

/* Destroys an event made by bp_event_create().  NULL is a no-op. */
BP_API bp_status bp_event_destroy(bp_device device, bp_event *event);

/* Records `event` at the current end of `stream` (NULL: the default). */
BP_API bp_status bp_event_record(bp_device device, bp_event *event,
                                 bp_stream *stream);

/* Makes future work on `stream` (NULL: the default) wait until `event`
 * has completed, without blocking the host. */
BP_API bp_status bp_stream_wait_event(bp_device device, bp_stream *stream,
                                      bp_event *event);

/* Blocks the host until `event` has completed. */
BP_API bp_status bp_event_synchronize(bp_device device, bp_event *event);

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Creates a contiguous tensor with uninitialised data, allocated by the
 * device's allocator.  ndim is 0 .. BP_MAX_NDIM; sizes (NULL when ndim is
 * 0) must be non-negative, and a size of 0 gives an empty tensor.  Fails
 * with BP_ERR_OVERFLOW when the byte size does not fit.  *out is a new
 * reference: release it with bp_tensor_release().
 */
BP_API bp_status bp_tensor_empty(bp_device device, int32_t dtype,
                                 int32_t ndim, const int64_t *sizes,
                                 bp_tensor **out);

/* The same with explicit element strides, which must be non-negative.  The
 * storage covers exactly the elements the strides reach. */
BP_API bp_status bp_tensor_empty_strided(bp_device device, int32_t dtype,
                                         int32_t ndim, const int64_t *sizes,
                                         const int64_t *strides,
                                         bp_tensor **out);

/*
 * A view of base's storage with other sizes, strides and offset (all in
 * elements).  Fails with BP_ERR_SHAPE if the view reaches outside the
 * storage, and with BP_ERR_OVERFLOW when its offset or its elements' bytes
 * (numel times the itemsize) do not fit in int64.  *out is a new reference
 * and keeps the storage alive; base may be released independently.
 */
BP_API bp_status bp_tensor_as_strided(bp_tensor *base, int32_t ndim,
                                      const int64_t *sizes,
                                      const int64_t *strides,
                                      int64_t storage_offset,
                                      bp_tensor **out);

/* Called once when a tensor made by bp_tensor_from_blob() dies. */
typedef void (*bp_blob_deleter)(void *deleter_ctx, void *data);

/*
 * Wraps memory that the caller owns as a tensor, without copying.  strides
 * may be NULL for contiguous.  `data` must hold every element the strides
 * reach and stay valid until `deleter` (may be NULL) is called with
 * `deleter_ctx` and `data`, once, when the last reference dies.  `data`
 * must be aligned to the dtype's size when the tensor has elements, since
 * kernels load whole elements (else BP_ERR_INVALID_ARGUMENT).  Fails
 * with BP_ERR_OVERFLOW when the elements' bytes (numel times the itemsize)
 * do not fit in int64.  If this call fails, the deleter is not called and
 * the caller still owns data.
 */
BP_API bp_status bp_tensor_from_blob(bp_device device, int32_t dtype,
                                     int32_t ndim, const int64_t *sizes,
                                     const int64_t *strides, void *data,
                                     bp_blob_deleter deleter,
                                     void *deleter_ctx, bp_tensor **out);

/* Adds a reference and returns t; NULL is returned unchanged. */
BP_API bp_tensor *bp_tensor_retain(bp_tensor *t);

/* Drops a reference; the last one frees the tensor, and its storage when no
 * view still uses it.  NULL is a no-op. */
BP_API void bp_tensor_release(bp_tensor *t);

/* The tensor's metadata: library-owned, valid and unchanged while t lives.
 * NULL for a NULL tensor. */
BP_API const bp_tensor_view *bp_tensor_get_view(const bp_tensor *t);

/* Whether t has row-major contiguous strides (size-1 and empty dimensions
 * match any stride, as in PyTorch). */
BP_API bool bp_tensor_is_contiguous(const bp_tensor *t);

/* Number of elements; bytes of those elements (numel * itemsize). */
BP_API int64_t bp_tensor_numel(const bp_tensor *t);
BP_API int64_t bp_tensor_nbytes(const bp_tensor *t);

/* Copies src's elements into dst: same dtype and sizes, any strides, any
 * two devices whose interfaces can copy between them.  dst may not hold
 * several elements at one address (a stride 0 in a dimension of size > 1):
 * BP_ERR_INVALID_ARGUMENT. */
BP_API bp_status bp_tensor_copy(bp_tensor *dst, const bp_tensor *src);

/* The number of live tensor handles in the process, for leak checks. */
BP_API int64_t bp_live_tensor_count(void);

/* ------------------------------------------------------------------------ */
/* DLPack                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Exports t without copying: *out shares t's data and metadata arrays and
 * holds a reference to t until the consumer calls (*out)->deleter(*out),
 * exactly once.  The exported dtype uses DLPack's codes (bool as code 6,
 * kDLBool); vendor device types export as kDLExtDev.
 */
BP_API bp_status bp_tensor_to_dlpack(bp_tensor *t,
                                     struct DLManagedTensor **out);

/*
 * Imports a DLPack tensor without copying.  On success Backplane owns src
 * and calls src->deleter(src) when the returned tensor dies; on failure
 * the caller still owns src.  NULL strides mean contiguous.  Only one lane
 * and the dtypes of bp_dtype are accepted.  Fails with BP_ERR_OVERFLOW when
 * the elements' bytes (numel times the itemsize) do not fit in int64.
 */
BP_API bp_status bp_tensor_from_dlpack(struct DLManagedTensor *src,
                                       bp_tensor **out);

/* ------------------------------------------------------------------------ */
/* The boxed stack                                                          */
/* ------------------------------------------------------------------------ */

/*
 * Pushing onto a full stack fails with BP_ERR_OVERFLOW.  Push functions
 * store what they are given and take no references: strings, lists and
 * tensors stay owned by the caller and must outlive the call they are
 * arguments to.
 */
BP_API bp_status bp_stack_push_none(bp_stack *s);
BP_API bp_status bp_stack_push_tensor(bp_stack *s, bp_tensor *t);
BP_API bp_status bp_stack_push_int(bp_stack *s, int64_t v);
BP_API bp_status bp_stack_push_float(bp_stack *s, double v);
BP_API bp_status bp_stack_push_bool(bp_stack *s, bool v);
BP_API bp_status bp_stack_push_str(bp_stack *s, const char *v);
BP_API bp_status bp_stack_push_int_list(bp_stack *s, const int64_t *v,
                                        size_t n);
BP_API bp_status bp_stack_push_float_list(bp_stack *s, const double *v,
                                          size_t n);
BP_API bp_status bp_stack_push_tensor_list(bp_stack *s, bp_tensor *const *v,
                                           size_t n);
BP_API bp_status bp_stack_push_scalar_type(bp_stack *s, int32_t dtype);
BP_API bp_status bp_stack_push_device(bp_stack *s, bp_device d);

/*
 * Reading slot `idx`: 0 is the bottom, -1 the top.  A slot that does not
 * exist, or holds another tag, fails with a message such as
 *     stack slot #2: expected float, got Tensor
 * Pointers read out are borrowed from the stack's value.  bp_stack_get_float
 * also accepts an int, as a float argument does.
 */
BP_API bp_status bp_stack_get_tensor(const bp_stack *s, int64_t idx,
                                     bp_tensor **out);
BP_API bp_status bp_stack_get_int(const bp_stack *s, int64_t idx,
                                  int64_t *out);
BP_API bp_status bp_stack_get_float(const bp_stack *s, int64_t idx,
                                    double *out);
BP_API bp_status bp_stack_get_bool(const bp_stack *s, int64_t idx, bool *out);
BP_API bp_status bp_stack_get_str(const bp_stack *s, int64_t idx,
                                  const char **out);
BP_API bp_status bp_stack_get_int_list(const bp_stack *s, int64_t idx,
                                       const int64_t **out, size_t *out_n);
BP_API bp_status bp_stack_get_float_list(const bp_stack *s, int64_t idx,
                                         const double **out, size_t *out_n);
BP_API bp_status bp_stack_get_tensor_list(const bp_stack *s, int64_t idx,
                                          bp_tensor *const **out,
                                          size_t *out_n);
BP_API bp_status bp_stack_get_scalar_type(const bp_stack *s, int64_t idx,
                                          int32_t *out);
BP_API bp_status bp_stack_get_device(const bp_stack *s, int64_t idx,
                                     bp_device *out);

/* The tag of slot idx, or -1 when there is no such slot. */
BP_API int32_t bp_stack_tag(const bp_stack *s, int64_t idx);

/* The name of a tag as schemas spell it ("Tensor", "int", "float[]", ...),
 * or "?" for an unknown tag.  Static. */
BP_API const char *bp_tag_name(int32_t tag);

/* Drops the top n values (all of them if n > top) without releasing. */
BP_API void bp_stack_pop(bp_stack *s, size_t n);

/* Releases every Tensor on the stack and empties it.  Use it on results,
 * which the caller owns; never on borrowed arguments. */
BP_API void bp_stack_release(bp_stack *s);

/* ------------------------------------------------------------------------ */
/* Plugins                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A plugin known to the host: loaded, failed to load, or unloaded.  The
 * handle is library-owned and stays valid for the life of the process, so
 * that a failed attempt can still be described.
 */
typedef struct bp_plugin bp_plugin;

/* How a plugin was found. */
typedef enum bp_plugin_origin {
  BP_ORIGIN_EXPLICIT = 1,   /* a path given to bp_plugin_load() */
  BP_ORIGIN_ENV = 2,        /* a directory in BP_PLUGIN_PATH */
  BP_ORIGIN_INSTALLED = 3,  /* the installed plugin directory */
  BP_ORIGIN_STATIC = 4      /* linked into the host: bp_plugin_register() */
} bp_plugin_origin;

/* States of a plugin. */
typedef enum bp_plugin_state {
  BP_PLUGIN_LOADED = 1,
  BP_PLUGIN_FAILED = 2,     /* the last load attempt failed; see error */
  BP_PLUGIN_UNLOADED = 3
} bp_plugin_state;

/*
 * A description of a plugin.  Strings are library-owned and valid until
 * the next load or unload of the same plugin; any may be NULL when the load
 * failed before the plugin described itself.
 */
typedef struct bp_plugin_info {
  size_t struct_size;
  const char *path;        /* canonical path; "(static)" for bp_plugin_register */
  const char *name;        /* the descriptor's name */
  const char *vendor;
  const char *version;
  uint32_t abi_major;      /* the ABI the plugin was built against */
  uint32_t abi_minor;
  uint32_t op_set_version; /* the core op-set version it implements */
  int32_t origin;          /* a bp_plugin_origin */
  int32_t state;           /* a bp_plugin_state */
  int32_t status;          /* why the last attempt failed, BP_OK if it did not */
  const char *error;       /* the failure message; for a loaded plugin, the
                              note its setup() left, if any (such as why it
                              found no devices); "" when none */
} bp_plugin_info;

BP_ASSERT_LAST_FIELD(bp_plugin_info, error);
#define BP_PLUGIN_INFO_STRUCT_SIZE BP_STRUCT_SIZE(bp_plugin_info, error)

/*
 * Loads the plugin at `path` (dlopen with RTLD_NOW | RTLD_LOCAL), checks
 * its ABI version and descriptor, and runs its setup().  Loading a path
 * whose canonical form is already loaded returns the loaded plugin and does
 * nothing else.  A failure is recorded against the path (see
 * bp_plugin_info) and affects no other plugin; the message names the file
 * and the reason.  *out_plugin may be NULL when the handle is not wanted.
 */
BP_API bp_status bp_plugin_load(const char *path, bp_plugin **out_plugin);

/*
 * Registers a plugin that is linked into the host: `init` plays the role
 * of the plugin's bp_plugin_init.  `label` names it in messages and
 * listings.  Otherwise as bp_plugin_load().
 */
BP_API bp_status bp_plugin_register(bp_plugin_init_fn init, const char *label,
                                    bp_plugin **out_plugin);

/*
 * Loads every plugin found in the directories of BP_PLUGIN_PATH (a
 * colon-separated list; ignored when the process runs with elevated
 * privileges) and then in the installed plugin directory.  A file is a
 * candidate when its name ends in ".so".  A plugin that fails does not
 * stop the others; every attempt is recorded.  *out_loaded (may be NULL)
 * receives the number loaded by this call.  Returns BP_OK unless it could
 * not run at all, or BP_ERR_OUT_OF_MEMORY when it had no memory to list a
 * directory (the plugins of the directories before it stay loaded).
 */
BP_API bp_status bp_plugin_discover(size_t *out_loaded);

/* The installed plugin directory, $(pkglibdir)/plugins.  Static. */
BP_API const char *bp_plugin_dir(void);

/*
 * Unloads a plugin: removes all of its registrations at once, waits until
 * no call into it is in flight (kernels, and device, stream and event
 * calls), runs its teardown() and closes it.  Fails
 * with BP_ERR_BUSY, changing nothing, while tensors on its device types are
 * alive, or when called from inside a call (a kernel).  Op handles stay
 * valid: calls to the plugin's ops fail with BP_ERR_NOT_FOUND until a
 * plugin defines them again.
 */
BP_API bp_status bp_plugin_unload(bp_plugin *plugin);

/* The plugins known to the host, loaded or not, in the order first seen;
 * bp_plugin_at() returns NULL past the end. */
BP_API size_t bp_plugin_count(void);
BP_API bp_plugin *bp_plugin_at(size_t index);

/* Describes a plugin.  Set out_info->struct_size first. */
BP_API bp_status bp_plugin_get_info(const bp_plugin *plugin,
                                    bp_plugin_info *out_info);

/* ------------------------------------------------------------------------ */
/* Operators                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Finds an operator by "ns::name" or "ns::name.overload".  The handle is
 * valid for the life of the process: resolve it once and keep it.  An op
 * whose defining plugin unloads stays findable but fails calls with
 * BP_ERR_NOT_FOUND until it is defined again.
 */
BP_API bp_status bp_op_find(const char *name, const bp_op **out_op);

/*
 * Calls an operator.  The stack holds the arguments in schema order,
 * positionally (kwarg-only arguments too, in their schema positions);
 * trailing arguments that have defaults may be left off.  Arguments are
 * borrowed.  The device of the tensor arguments selects the kernel: the
 * device type's kernel if there is one and it is enabled, else the device
 * type's fallback, else the op's composite kernel.  Tensors on different
 * devices are an error unless the op allows it.
 *
 * On success the stack holds the results instead, values[0 .. nrets-1],
 * and each Tensor among them is a new reference the caller owns (release
 * it, or bp_stack_release() the stack).  On failure the stack holds no
 * values (top is 0) and bp_last_error() names the op, the argument, and
 * the expected and actual values.  The stack's capacity must hold the
 * larger of the schema's argument and result counts.
 *
 * The call takes no lock and, after the calling thread's first call, makes
 * no heap allocation in libbackplane.
 */
BP_API bp_status bp_call(const bp_op *op, bp_stack *stack);

/*
 * Like bp_call(), with keyword arguments: the top `nkw` values of the stack
 * are the arguments named by kwnames[0 .. nkw-1] (kwnames[i] names the
 * value at values[top - nkw + i]); the values below them are positional
 * and may not go past the '*' of the schema.  Arguments not given take
 * their defaults.
 */
BP_API bp_status bp_call_kw(const bp_op *op, bp_stack *stack,
                            const char *const *kwnames, size_t nkw);

/*
 * Runs the op's meta function on the arguments on `stack` (as bp_call()
 * takes them; the stack is not changed): fills outs[0 .. nrets-1] with each
 * Tensor result's device, dtype, sizes and strides.  Set each
 * outs[i].struct_size first.  Fails with BP_ERR_UNSUPPORTED when the op has
 * no meta function.
 */
BP_API bp_status bp_op_meta(const bp_op *op, const bp_stack *stack,
                            bp_tensor_meta *outs, size_t nouts);

/*
 * Disables or re-enables the kernels of `op` for a device type (all of
 * them, when several plugins provide one).  While they are disabled, calls
 * dispatch as if they were absent (to the fallback or the composite).
 * Fails with BP_ERR_NOT_FOUND when there is no such kernel.
 */
BP_API bp_status bp_set_kernel_enabled(const bp_op *op, int32_t device_type,
                                       bool enabled);

/*
 * KERNEL PRECEDENCE.  Several plugins may provide a kernel for one op and
 * one device type (a vendor's tuned kernels beside the reference).  Each
 * call goes to the first of them, in this order, that is enabled and
 * declares the dtypes of the call's tensors (its arguments and results):
 *   1. the kernel of the plugin chosen by bp_set_kernel_provider() for the
 *      op (or for every op) and the device type;
 *   2. kernels of the plugins named in the environment variable
 *      BP_PREFER_PLUGINS (a comma-separated list of plugin names, read when
 *      libbackplane starts; the first named wins);
 *   3. the highest bp_kernel_def.priority;
 *   4. the kernel registered first.
 * Unloading a plugin hands its ops to the next kernel in that order.
 */

/*
 * Chooses the plugin whose kernel serves `op` (NULL: every op) on a device
 * type, ahead of priorities.  `plugin` is a plugin name (copied; at most
 * 64 characters); NULL removes the choice.  The choice stays when the
 * plugin unloads and applies again when it comes back; while it provides
 * no kernel, precedence decides.  Fails
 * with BP_ERR_NOT_FOUND when `op` is given and no loaded plugin of that name
 * has a kernel for it on the device type.  Added in ABI 1.1.
 */
BP_API bp_status bp_set_kernel_provider(const bp_op *op, int32_t device_type,
                                        const char *plugin);

/* Kinds of kernel. */
typedef enum bp_kernel_kind {
  BP_KERNEL_BOXED = 1,
  BP_KERNEL_UNBOXED = 2,      /* called through libffi */
  BP_KERNEL_UNBOXED_FAST = 3, /* called through a specialised trampoline */
  BP_KERNEL_STRUCTURED = 4    /* boxed, filling the results the host
                                 allocated (BP_KERNEL_DEF_STRUCTURED;
                                 ABI 1.2) */
} bp_kernel_kind;

/*
 * A description of an operator.  Strings are library-owned and valid until
 * the next plugin load or unload.
 */
typedef struct bp_op_info {
  size_t struct_size;
  const char *name;        /* "ns::name" or "ns::name.overload" */
  const char *schema;      /* canonical schema text; NULL when undefined */
  const char *doc;         /* "" when none */
  const char *owner;       /* the defining plugin's name; "host" for the host */
  uint64_t flags;          /* BP_OP_* */
  int32_t defined;         /* 1 when defined, 0 when its definer unloaded */
  int32_t has_meta;
  int32_t has_composite;
  int32_t nkernels;        /* registered kernels, enabled or not, every
                              candidate of every device type */
  /* Added in ABI 1.1; 0 when the op is not defined. */
  int32_t nargs;           /* arguments: bp_op_get_arg(0 .. nargs-1) */
  int32_t nrets;           /* results: bp_op_get_ret(0 .. nrets-1) */
  int32_t npositional;     /* arguments before the schema's `*` */
  int32_t reserved;        /* zero */
  /* Added in ABI 1.2. */
  uint32_t op_set_version; /* for an op of the `core` op set, the version
                              of the op set that added it (1, 2, ...): a
                              plugin that implements op set N has kernels
                              for every core op of version <= N; 0 for
                              every other op */
  uint32_t reserved2;      /* zero */
} bp_op_info;

BP_ASSERT_LAST_FIELD(bp_op_info, reserved2);
#define BP_OP_INFO_STRUCT_SIZE BP_STRUCT_SIZE(bp_op_info, reserved2)

/* A description of one kernel of an operator. */
typedef struct bp_kernel_info {
  size_t struct_size;
  const char *plugin;      /* the registering plugin's name */
  const int32_t *dtypes;   /* as registered, BP_DTYPE_INVALID-terminated;
                              NULL for "every dtype the op allows" */
  int32_t device_type;
  int32_t kind;            /* a bp_kernel_kind */
  int32_t enabled;
  int32_t reserved;
  /* Added in ABI 1.1. */
  int32_t priority;        /* as registered (BP_PRIORITY_DEFAULT from a 1.0
                              plugin) */
  int32_t active;          /* 1 for the kernel that calls on its device type
                              go to first (see KERNEL PRECEDENCE), else 0 */
} bp_kernel_info;

BP_ASSERT_LAST_FIELD(bp_kernel_info, active);
#define BP_KERNEL_INFO_STRUCT_SIZE BP_STRUCT_SIZE(bp_kernel_info, active)

/* Describes an op; set out_info->struct_size first. */
BP_API bp_status bp_op_get_info(const bp_op *op, bp_op_info *out_info);

/* Describes the op's index-th kernel (0 .. nkernels-1): by device type,
 * and for one device type in precedence order, the active one first. */
BP_API bp_status bp_op_get_kernel(const bp_op *op, size_t index,
                                  bp_kernel_info *out_info);

/* Describes argument `index` (0 .. nargs-1) or result `index`
 * (0 .. nrets-1) of a defined op: name, type, flags, list size, alias set
 * and default (see bp_arg_info).  BP_ERR_NOT_FOUND past the end or when
 * the op is not defined.  Set out_info->struct_size first.  Added in ABI
 * 1.1. */
BP_API bp_status bp_op_get_arg(const bp_op *op, size_t index,
                               bp_arg_info *out_info);
BP_API bp_status bp_op_get_ret(const bp_op *op, size_t index,
                               bp_arg_info *out_info);

/* The operators known to the host, in the order first defined;
 * bp_op_at() returns NULL past the end. */
BP_API size_t bp_op_count(void);
BP_API const bp_op *bp_op_at(size_t index);

/* ------------------------------------------------------------------------ */
/* Describing the host (ABI 1.3)                                            */
/* ------------------------------------------------------------------------ */

/* The static words that listings use for a plugin's origin ("explicit",
 * "BP_PLUGIN_PATH", "installed", "static"), a plugin's state ("loaded",
 * "failed", "unloaded") and a kernel's kind ("boxed", "unboxed (libffi)",
 * "unboxed (fast path)", "structured"), as bp_status_str() names a
 * status; "?" for a code outside the set.  Added in ABI 1.3. */
BP_API const char *bp_plugin_origin_str(int32_t origin);
BP_API const char *bp_plugin_state_str(int32_t state);
BP_API const char *bp_kernel_kind_str(int32_t kind);

/*
 * Text from outside the program (a plugin's name, vendor, note or error
 * message, an op's doc, a path) made safe to write to a terminal or into
 * one line of a log.  A terminal acts on control characters (ESC starts
 * sequences that move the cursor or rewrite what is shown) and a newline
 * starts a new, perhaps forged, line; the escaped text shows such bytes
 * instead of sending them:
 *
 *   newline, carriage return, tab      \n  \r  \t
 *   other C0 controls and DEL          \x1b  \x7f  (two hex digits)
 *   C1 controls U+0080..U+009F         \u009b      (UTF-8 C2 80..C2 9F)
 *   a byte that is not part of
 *   well-formed UTF-8                  \xff
 *
 * Everything else, well-formed UTF-8 included, is copied unchanged (a
 * backslash too: the escapes are for reading, not for decoding back).
 * Writes the escaped form of s into out (size bytes; NUL-terminated when
 * size > 0, truncated where it does not fit; out may be NULL when size is
 * 0) and returns the length of the whole escaped text, as snprintf()
 * does.  A NULL s reads as "(null)".  Allocates nothing.  Added in ABI
 * 1.3.
 */
BP_API size_t bp_text_escape(const char *s, char *out, size_t size);

/* Formats of bp_describe(). */
typedef enum bp_describe_format {
  BP_DESCRIBE_TEXT = 0, /* for people: sections, one item per line */
  BP_DESCRIBE_JSON = 1  /* one JSON object (docs/host-guide.md) */
} bp_describe_format;

/*
 * A plugin file that the caller tried itself, in a child process, before
 * the host loaded it (bp-info --isolate does so, so that a plugin that
 * crashes or hangs while loading is listed rather than ending the
 * process): where the caller found it, and what happened in the child.
 * The strings are the caller's and are read during the call only.
 */
typedef struct bp_describe_file {
  size_t struct_size;
  const char *path;      /* as found (never NULL) */
  const char *canonical; /* its canonical path, or NULL */
  int32_t origin;        /* how the caller found it (a bp_plugin_origin) */
  int32_t reserved;      /* 0 */
  const char *failure;   /* NULL or "": it loaded in the child, and the
                            caller then loaded it with bp_plugin_load(); the
                            listing gives the host's record of it this
                            origin.  Otherwise what happened in the child
                            ("crashed in init (SIGSEGV)", "hung"): it was not
                            loaded, and is listed as a failed plugin after
                            the host's, with "crashed": true in JSON. */
} bp_describe_file;

BP_ASSERT_LAST_FIELD(bp_describe_file, failure);
#define BP_DESCRIBE_FILE_STRUCT_SIZE BP_STRUCT_SIZE(bp_describe_file, failure)

typedef struct bp_describe_options {
  size_t struct_size;
  int32_t format;                /* a bp_describe_format */
  int32_t reserved;              /* 0 */
  const bp_describe_file *files; /* may be NULL */
  size_t nfiles;
} bp_describe_options;

BP_ASSERT_LAST_FIELD(bp_describe_options, nfiles);
#define BP_DESCRIBE_OPTIONS_STRUCT_SIZE BP_STRUCT_SIZE(bp_describe_options, nfiles)

/* Receives bp_describe()'s output: n bytes at text (not NUL-terminated),
 * in order, in pieces of at most 4 KiB.  Returns 0 to go on; any other
 * value stops the description, and bp_describe() returns it as its status
 * (a bp_status, e.g. BP_ERR_OUT_OF_MEMORY; BP_ERR_INTERNAL if it is
 * none). */
typedef int (*bp_describe_write_fn)(void *user, const char *text, size_t n);

/*
 * Describes the host as bp-info prints it: the version and ABI, the plugin
 * search path, every plugin the host knows (and why any failed, with
 * options->files' failures after them), the devices of every device type,
 * and every operator with its kernels in precedence order.  Text from
 * plugins and paths is escaped (bp_text_escape() in the text format; in
 * JSON, each byte that is not well-formed UTF-8 becomes U+FFFD).  options
 * may be NULL (text, no files).  Starts the host as bp_op_count() does
 * (and returns its failure); loads nothing and allocates nothing.  Other
 * threads may call ops meanwhile, but must not load or unload plugins:
 * it reads the plugins' strings, which live until then (bp_plugin_info).
 * Added in ABI 1.3.
 */
BP_API bp_status bp_describe(const bp_describe_options *options,
                             bp_describe_write_fn write, void *user);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_HOST_H */
