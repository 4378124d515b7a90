/*
 * backplane/abi.h - the definitions that plugins and hosts share.
 *
 * This header is part of the Backplane SDK.  It defines the ABI version, the
 * status codes, the dtype and device-type codes, the tagged values of the
 * boxed stack, and the rules that every struct crossing the plugin boundary
 * follows.  It declares no functions: plugins reach the host only through the
 * function table in <backplane/plugin.h>, and hosts call libbackplane through
 * <backplane/host.h>.
 *
 * It compiles as C11 and as C++11 or later.
 *
 * VERSIONING
 *   BP_ABI_VERSION_MAJOR changes only for an incompatible change: a field
 *   moved, removed or retyped, a table slot reordered, a code renumbered.  A
 *   host refuses a plugin whose major differs from its own.
 *
 *   BP_ABI_VERSION_MINOR changes for every compatible addition: a field
 *   appended to a struct, a slot appended to a table, a new status code, tag,
 *   dtype or flag.  Within one major, either side may be newer.  Each side
 *   reads a field of the other's struct only when that struct's struct_size
 *   covers it (BP_HAS_FIELD), and treats a NULL function slot as "not
 *   supported".
 *
 * STRUCT RULES (every struct that crosses the boundary, except the frozen
 * value types bp_device and bp_value, which never change size)
 *   - The first field is `size_t struct_size`.  The writer sets it to
 *     BP_STRUCT_SIZE(type, last_field) for the version it was compiled
 *     against; each struct has a BP_<TYPE>_STRUCT_SIZE macro for that.
 *   - Fields are only ever appended.  Released layouts are frozen by the
 *     baseline in abi/ of the source tree.
 *   - Fields are 8 bytes wide, or pairs of 4-byte fields, so no struct has
 *     padding and sizeof(type) == BP_STRUCT_SIZE(type, last_field); a static
 *     assertion below each struct checks that its declared last field is last.
 *   - Extensible structs carry `const bp_extension *ext`, a chain of optional
 *     extension structs, NULL when there is none.
 *
 * Added in ABI 1.0 unless marked otherwise.
 */
#ifndef BACKPLANE_ABI_H
#define BACKPLANE_ABI_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

/* The ABI version this header describes.  See VERSIONING above. */
#define BP_ABI_VERSION_MAJOR 1
#define BP_ABI_VERSION_MINOR 2

/* The version of the `core` op set these headers describe (docs/op-set.md).
 * A plugin states the version it implements in bp_plugin_desc. */
#define BP_CORE_OP_SET_VERSION 2

/* ------------------------------------------------------------------------ */
/* Struct-size helpers                                                      */
/* ------------------------------------------------------------------------ */

#if defined(__cplusplus)
#define BP_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define BP_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* The size a writer records in struct_size when `last` is its last field. */
#define BP_STRUCT_SIZE(type, last) \
  (offsetof(type, last) + sizeof(((type *)0)->last))

/* True when the struct at `ptr` (whose writer set struct_size) covers
 * `field`.  Read a field only when this holds. */
#define BP_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= BP_STRUCT_SIZE(type, field))

/* Asserts that `last` is the last field of `type` and that no padding
 * follows it.  Every crossing struct is followed by one of these. */
#define BP_ASSERT_LAST_FIELD(type, last)                         \
  BP_STATIC_ASSERT(sizeof(type) == BP_STRUCT_SIZE(type, last),    \
                   #type ": '" #last "' is not the last field, "  \
                   "or the struct has padding")

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Every function that can fail returns a bp_status.  BP_OK is 0.  The set is
 * closed within a major version: a host that receives a code it does not
 * know (from a newer or a buggy plugin) reports BP_ERR_INTERNAL instead.
 * Codes are appended only, in minor versions.  The detailed message of a
 * failure is kept per thread by the host (bp_last_error() for hosts,
 * host->set_error() for plugins).
 */
typedef enum bp_status {
  BP_OK = 0,                    /* success */
  BP_ERR_INVALID_ARGUMENT = 1,  /* a bad value: NULL, out-of-range, malformed */
  BP_ERR_TYPE = 2,              /* wrong value tag or wrong dtype */
  BP_ERR_SHAPE = 3,             /* sizes, strides or ndim do not fit */
  BP_ERR_DEVICE = 4,            /* wrong, mixed or missing device */
  BP_ERR_NOT_FOUND = 5,         /* no such op, kernel, plugin, file or symbol */
  BP_ERR_ALREADY_EXISTS = 6,    /* a conflicting registration */
  BP_ERR_UNSUPPORTED = 7,       /* a feature, slot or dtype is not supported */
  BP_ERR_OUT_OF_MEMORY = 8,     /* an allocation failed */
  BP_ERR_OVERFLOW = 9,          /* size arithmetic overflowed */
  BP_ERR_VERSION = 10,          /* incompatible ABI or op-set version */
  BP_ERR_SCHEMA = 11,           /* an operator schema does not parse */
  BP_ERR_LOAD = 12,             /* a plugin could not be loaded */
  BP_ERR_BUSY = 13,             /* a resource is still in use */
  BP_ERR_BACKEND = 14,          /* a device runtime reported a failure */
  BP_ERR_INTERNAL = 15          /* an invariant broke: a bug, here or there */
} bp_status;

/* One past the largest status code of this version. */
#define BP_STATUS_COUNT 16

/* ------------------------------------------------------------------------ */
/* Data types                                                               */
/* ------------------------------------------------------------------------ */

/*
 * A dtype code packs a DLPack type code and its bit width:
 * (DLDataTypeCode << 8) | bits, with one lane.  Codes never change.
 */
#define BP_DTYPE_PACK(dlpack_code, bits) (((dlpack_code) << 8) | (bits))

typedef enum bp_dtype {
  BP_DTYPE_INVALID = 0,
  BP_INT8 = BP_DTYPE_PACK(0, 8),
  BP_INT16 = BP_DTYPE_PACK(0, 16),
  BP_INT32 = BP_DTYPE_PACK(0, 32),
  BP_INT64 = BP_DTYPE_PACK(0, 64),
  BP_UINT8 = BP_DTYPE_PACK(1, 8),
  BP_FLOAT16 = BP_DTYPE_PACK(2, 16),
  BP_FLOAT32 = BP_DTYPE_PACK(2, 32),
  BP_FLOAT64 = BP_DTYPE_PACK(2, 64),
  BP_BFLOAT16 = BP_DTYPE_PACK(4, 16),
  BP_BOOL = BP_DTYPE_PACK(6, 8)  /* DLPack kDLBool, one byte, 0 or 1 */
} bp_dtype;

/* The DLPack type code and bit width of a dtype code. */
#define BP_DTYPE_DLPACK_CODE(dt) (((uint32_t)(dt) >> 8) & 0xffu)
#define BP_DTYPE_BITS(dt) ((uint32_t)(dt) & 0xffu)

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Device-type codes are DLPack's DLDeviceType values and never change.
 * Vendor device types are registered by name when their plugin loads and get
 * a runtime code at or above BP_DEVICE_DYNAMIC_FIRST; several can coexist.
 * Runtime codes are valid for the life of the process, not across processes.
 */
typedef enum bp_device_type {
  BP_DEVICE_INVALID = 0,
  BP_DEVICE_CPU = 1,
  BP_DEVICE_CUDA = 2,
  BP_DEVICE_CUDA_HOST = 3,
  BP_DEVICE_OPENCL = 4,
  BP_DEVICE_VULKAN = 7,
  BP_DEVICE_METAL = 8,
  BP_DEVICE_VPI = 9,
  BP_DEVICE_ROCM = 10,
  BP_DEVICE_ROCM_HOST = 11,
  BP_DEVICE_EXT_DEV = 12,
  BP_DEVICE_CUDA_MANAGED = 13,
  BP_DEVICE_ONEAPI = 14,
  BP_DEVICE_WEBGPU = 15,
  BP_DEVICE_HEXAGON = 16,
  BP_DEVICE_MAIA = 17,
  BP_DEVICE_DYNAMIC_FIRST = 256  /* first runtime-assigned vendor code */
} bp_device_type;

/*
 * A device: its type code and its index among the devices of that type.
 * Laid out like DLPack's DLDevice.  A frozen value type: 8 bytes forever,
 * passed by value, with no struct_size.
 */
typedef struct bp_device {
  int32_t type;   /* a bp_device_type code, or a runtime vendor code */
  int32_t index;  /* 0 for the host CPU */
} bp_device;

BP_STATIC_ASSERT(sizeof(bp_device) == 8, "bp_device is frozen at 8 bytes");

/* A bp_device value (usable in C and C++ expressions alike). */
static inline bp_device bp_device_make(int32_t type, int32_t index) {
  bp_device d;
  d.type = type;
  d.index = index;
  return d;
}

/* ------------------------------------------------------------------------ */
/* Opaque handles                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A tensor: an opaque, reference-counted handle owned by the host.  Its
 * metadata (dtype, sizes, strides, offset, device) never changes after
 * creation; its data may.  Storage comes from the owning device's allocator
 * and is shared between a tensor and its views.
 */
typedef struct bp_tensor bp_tensor;

/* An operator, resolved once by name and valid for the life of the host.
 * If the plugin that defined it unloads, calls fail with BP_ERR_NOT_FOUND. */
typedef struct bp_op bp_op;

/* ------------------------------------------------------------------------ */
/* Extension chain                                                          */
/* ------------------------------------------------------------------------ */

/*
 * The base of every optional extension struct.  An extensible struct points
 * at the first extension through its `ext` field; each extension starts with
 * this header and points at the next.  A reader skips types it does not
 * know.  Extension type codes are assigned in this header, append-only.
 */
typedef struct bp_extension {
  size_t struct_size;              /* of the whole extension struct */
  uint64_t type;                   /* BP_EXT_* code */
  const struct bp_extension *next; /* the next extension, or NULL */
} bp_extension;

BP_ASSERT_LAST_FIELD(bp_extension, next);
#define BP_EXTENSION_STRUCT_SIZE BP_STRUCT_SIZE(bp_extension, next)

/* No extension types are defined in ABI 1.0. */

/* ------------------------------------------------------------------------ */
/* Tensor metadata view                                                     */
/* ------------------------------------------------------------------------ */

/* Bits of bp_tensor_view.flags. */
#define BP_VIEW_CONTIGUOUS (1u << 0)  /* row-major contiguous strides */
#define BP_VIEW_DENSE (1u << 1)       /* no gaps or overlap, any order */

/*
 * The metadata of a tensor, in the order of DLPack's DLTensor where the two
 * share fields.  The host owns it: it lives exactly as long as the tensor
 * and never changes, so it may be read without locks.  `sizes` and
 * `strides` point into host memory with `ndim` entries (NULL when ndim is
 * 0).  Strides are in elements, never NULL for ndim > 0.
 */
typedef struct bp_tensor_view {
  size_t struct_size;
  void *data;              /* the element at index (0, ..., 0) */
  bp_device device;
  int32_t dtype;           /* a bp_dtype code */
  int32_t ndim;            /* 0 for a scalar tensor */
  const int64_t *sizes;
  const int64_t *strides;
  int64_t storage_offset;  /* in elements from storage_base */
  int64_t numel;           /* product of sizes; 1 when ndim is 0 */
  int64_t itemsize;        /* bytes per element */
  uint64_t flags;          /* BP_VIEW_* */
  void *storage_base;      /* start of the shared storage */
  uint64_t storage_nbytes; /* bytes of the shared storage */
} bp_tensor_view;

BP_ASSERT_LAST_FIELD(bp_tensor_view, storage_nbytes);
#define BP_TENSOR_VIEW_STRUCT_SIZE \
  BP_STRUCT_SIZE(bp_tensor_view, storage_nbytes)

/* The most dimensions a tensor may have. */
#define BP_MAX_NDIM 16

/* ------------------------------------------------------------------------ */
/* Boxed values                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Value tags.  Codes never change; new tags are appended in minor versions.
 * An optional argument (`Tensor?`, `int?`, ...) holds either its tag or
 * BP_TAG_NONE.
 *
 * A `Scalar` argument (ABI 1.2) is a number: its value carries
 * BP_TAG_INT, BP_TAG_FLOAT or BP_TAG_BOOL, which says which kind of number
 * it is (a `Scalar?` may also be BP_TAG_NONE).  BP_TAG_SCALAR itself never
 * tags a value: it names the argument type in bp_arg_info.tag.
 */
typedef enum bp_tag {
  BP_TAG_NONE = 0,
  BP_TAG_TENSOR = 1,       /* u.tensor */
  BP_TAG_INT = 2,          /* u.i */
  BP_TAG_FLOAT = 3,        /* u.f */
  BP_TAG_BOOL = 4,         /* u.b */
  BP_TAG_STR = 5,          /* u.str, NUL-terminated, len = strlen */
  BP_TAG_INT_LIST = 6,     /* u.ints, len elements */
  BP_TAG_FLOAT_LIST = 7,   /* u.floats, len elements */
  BP_TAG_TENSOR_LIST = 8,  /* u.tensors, len elements, none NULL */
  BP_TAG_SCALAR_TYPE = 9,  /* u.i holds a bp_dtype code */
  BP_TAG_DEVICE = 10,      /* u.device */
  /* Added in ABI 1.2. */
  BP_TAG_SCALAR = 11       /* describes a Scalar argument; no value has it */
} bp_tag;

/* One past the largest tag of this version. */
#define BP_TAG_COUNT 12

/*
 * A tagged value: one slot of the boxed stack.  A frozen value type: 16
 * bytes forever, with no struct_size; new kinds of value get new tags.
 *
 * OWNERSHIP, the same everywhere: a value never owns what it points to.
 * Arguments are borrowed from the caller for the duration of a call
 * (tensors, strings and list arrays included).  Results are the exception
 * that the call documents: a Tensor result is a new reference that the
 * receiver must release exactly once.
 */
typedef struct bp_value {
  uint32_t tag;  /* a bp_tag */
  uint32_t len;  /* element count of a list, byte length of a string */
  union {
    int64_t i;
    double f;
    bool b;
    bp_tensor *tensor;
    const char *str;
    const int64_t *ints;
    const double *floats;
    bp_tensor *const *tensors;
    bp_device device;
  } u;
} bp_value;

BP_STATIC_ASSERT(sizeof(bp_value) == 16, "bp_value is frozen at 16 bytes");

/*
 * A boxed stack: caller-owned storage of `capacity` values, of which the
 * first `top` are live.  Hosts push arguments, call, and read results from
 * the same stack (see bp_call() in <backplane/host.h>); composite kernels do
 * the same through host->call.  The stack never allocates: the caller
 * provides `values`, usually an array on its own C stack:
 *
 *     bp_value slots[8];
 *     bp_stack st = BP_STACK_INIT(slots, 8);
 */
typedef struct bp_stack {
  size_t struct_size;
  bp_value *values;  /* caller-owned array of `capacity` values */
  size_t capacity;
  size_t top;        /* number of live values, values[0] .. values[top-1] */
} bp_stack;

BP_ASSERT_LAST_FIELD(bp_stack, top);
#define BP_STACK_STRUCT_SIZE BP_STRUCT_SIZE(bp_stack, top)

/* An initializer for an empty stack over `array` of `cap` values. */
#define BP_STACK_INIT(array, cap) { BP_STACK_STRUCT_SIZE, (array), (cap), 0 }

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_ABI_H */
