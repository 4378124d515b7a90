/*
 * host/internal.h - libbackplane's private declarations.  Never installed.
 *
 * Internal non-static symbols use the bp__ prefix and hidden visibility
 * (the library is built with -fvisibility=hidden; only BP_API functions are
 * exported).
 *
 * The modules call downwards only (tests/test-layering.sh checks that no
 * two call each other, even through others), from the top:
 *   describe.c    the host described as text or JSON (bp-info's listing)
 *   api.c         the entry points that start the host: load, find
 *   init.c        the start: the core op set, once
 *   core*.c       the core op set: a built-in plugin, defined through the
 *                 host table
 *   loader.c      plugins: files, records, setup() and teardown
 *   hostapi.c     the host table a plugin's setup() and kernels get
 *   select.c      the host's choice among kernels
 *   call.c        the call path
 *   introspect.c  what can be asked about an op and its kernels
 *   register.c    the registration entry points of a plugin's setup()
 *   registry.c    ops, kernels and dispatch tables (registry.h: what it
 *                 gives register.c)
 *   unboxed.c, precedence.c, optexts.c, meta.c, call_dtypes.c, schema*.c,
 *   tensor.c, device.c, guard.c, rcu.c, error.c, alloc.c, text.c ...
 *                 the leaves they stand on
 */
#ifndef BP_HOST_INTERNAL_H
#define BP_HOST_INTERNAL_H

#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ffi.h>

#include <backplane/host.h>

#include "alloc.h"
#include "schema.h"

#if defined(__GNUC__)
#define BP__LIKELY(x) __builtin_expect(!!(x), 1)
#define BP__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BP__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define BP__LIKELY(x) (x)
#define BP__UNLIKELY(x) (x)
#define BP__PRINTF(fmt, args)
#endif

/* ------------------------------------------------------------------------ */
/* Errors (error.c)                                                         */
/* ------------------------------------------------------------------------ */

/* Records the thread's error and returns `status`. */
bp_status bp__error(bp_status status, const char *fmt, ...) BP__PRINTF(2, 3);
bp_status bp__error_str(bp_status status, const char *message);
/* Allocates the calling thread's error message buffer, if not yet done,
 * so that its first error allocates nothing (called with the thread's
 * first call, which registers its reader record). */
void bp__error_prepare(void);

/* The thread's error, kept across a step that may record one the caller
 * must not see (a meta function run only to route a call): a successful
 * call leaves the last error as it was.  Keeping costs nothing when no
 * error is set; restoring frees the copy. */
typedef struct bp__kept_error {
  bp_status status;
  char *message; /* a copy, or NULL */
} bp__kept_error;
void bp__error_keep(bp__kept_error *k);
void bp__error_restore(bp__kept_error *k);

/* Maps a status a plugin returned to one of this version's codes: an
 * unknown code becomes BP_ERR_INTERNAL with a message naming it. */
bp_status bp__status_from_plugin(int status, const char *who);

/* For a failure status from a plugin's callback: maps it as above, and
 * when the plugin recorded no message, records one naming `who` and
 * `what` (e.g. "alloc(64 bytes)"). */
bp_status bp__plugin_failed(int status, const char *who, const char *what);

/* ------------------------------------------------------------------------ */
/* Devices (device.c)                                                       */
/* ------------------------------------------------------------------------ */

/* Slots of the device-type table: fixed DLPack codes use slots
 * 0 .. BP__DEVICE_FIXED_SLOTS-1 directly; runtime vendor codes
 * BP_DEVICE_DYNAMIC_FIRST + k use slot BP__DEVICE_FIXED_SLOTS + k. */
#define BP__DEVICE_FIXED_SLOTS 64
#define BP__DEVICE_DYNAMIC_SLOTS 64
#define BP__DEVICE_SLOTS (BP__DEVICE_FIXED_SLOTS + BP__DEVICE_DYNAMIC_SLOTS)

struct bp_plugin;

/* A registered device type.  Entries are never freed: an unloaded type
 * keeps its entry with iface == NULL, so that a stale code fails cleanly
 * and the same name gets the same code when it comes back. */
typedef struct bp__device_type {
  int32_t type;
  char name[32];
  _Atomic(const bp_device_iface *) iface;  /* NULL while unregistered */
  struct bp_plugin *owner;                 /* NULL for built-ins */
  const bp_device_iface *registered;       /* kept while hidden for unload */
  atomic_int_fast64_t live_tensors;        /* storages alive on it */
  atomic_int_fast64_t live_bytes;          /* bytes they hold */
  atomic_int_fast64_t live_handles;        /* streams and events alive */
} bp__device_type;

/* The slot of a type code, or -1 when the code cannot be registered. */
static inline int bp__device_slot(int32_t type) {
  if (type > 0 && type < BP__DEVICE_FIXED_SLOTS) return type;
  if (type >= BP_DEVICE_DYNAMIC_FIRST && type < BP_DEVICE_DYNAMIC_FIRST + BP__DEVICE_DYNAMIC_SLOTS)
    return BP__DEVICE_FIXED_SLOTS + (type - BP_DEVICE_DYNAMIC_FIRST);
  return -1;
}

/* A device type's name for messages, or "device type N" in buf (n bytes)
 * when the code is unknown. */
const char *bp__device_type_label(int32_t type, char *buf, size_t n);

/* The entry of a registered (iface != NULL) type, or NULL. */
bp__device_type *bp__device_lookup(int32_t type);

/* The host CPU's device type, {BP_DEVICE_CPU, 0} only: built in, owned by
 * no plugin, never hidden or replaced. */
extern bp__device_type bp__cpu_type;

/* Streams and events alive on the device types `owner` registered; the
 * name of one such type in *out_name. */
int64_t bp__device_handles_for_owner(struct bp_plugin *owner, const char **out_name);

/* Like bp__device_lookup() for a full device: also checks the index
 * against the device count.  On failure records an error naming `what`. */
bp_status bp__device_check(bp_device device, const char *what,
                           bp__device_type **out);

/* Registers `iface` for `owner` (NULL: built in).  See host->device_type. */
bp_status bp__device_register(struct bp_plugin *owner,
                              const bp_device_iface *iface,
                              int32_t *out_type);

/* Allocates/frees storage bytes on a device, keeping the per-type
 * accounting.  nbytes may be 0 (no allocation; *out = NULL). */
bp_status bp__device_alloc(bp__device_type *dt, int32_t index, size_t nbytes,
                           void **out);
void bp__device_free(bp__device_type *dt, int32_t index, void *ptr,
                     size_t nbytes);

/* Guarded allocations (guard.c; BP_ALLOC_GUARD=1): canary bytes before and
 * after every device block, checked when it is freed. */
#define BP__GUARD_BYTES ((size_t)256)
bool bp__guard_enabled(void);
/* The bytes to allocate for a block of nbytes, canaries included; the
 * block itself starts BP__GUARD_BYTES into the allocation. */
size_t bp__guard_total(size_t nbytes);
/* Writes the canaries around the block of nbytes at base + BP__GUARD_BYTES. */
bp_status bp__guard_arm(const bp_device_iface *iface, bp_device d, void *base,
                        size_t nbytes);
/* Checks them, and reports a damaged one (see guard.c). */
void bp__guard_check(const bp_device_iface *iface, const char *type_name,
                     bp_device d, void *base, size_t nbytes);
/* Freed addresses reused on purpose (guard.c): a tensor handle block of n
 * bytes freed last, and a host-CPU allocation of `total` bytes (canaries
 * included) freed last, or NULL; keeping one instead of freeing it (false:
 * free it); and freeing all that is kept (at each plugin unload), the CPU
 * allocations through free_cpu. */
void *bp__guard_reuse_handle(size_t n);
bool bp__guard_keep_handle(void *p, size_t n);
void *bp__guard_reuse_cpu(size_t total);
bool bp__guard_keep_cpu(void *base, size_t total);
void bp__guard_release_kept(void (*free_cpu)(void *base, size_t total));
/* A release of a handle whose count was not positive (guard.c): with the
 * guard, reported and the process aborted. */
void bp__guard_bad_release(const void *t);
/* Frees what the guard keeps (device.c, which knows the CPU's free). */
void bp__device_release_kept(void);

/* ------------------------------------------------------------------------ */
/* Tensors (tensor.c)                                                       */
/* ------------------------------------------------------------------------ */

/*
 * Shared storage.  A fresh tensor embeds its storage in the same allocation
 * (`embedded`); the block is freed when both the tensor and every view of
 * the storage are gone.  Storage from bp_tensor_from_blob() or DLPack has a
 * deleter instead of an allocator.
 */
typedef struct bp__storage {
  atomic_int_fast64_t refcount;
  bp__device_type *dt;        /* the owning device type (accounting) */
  bp_device device;
  void *data;
  size_t nbytes;
  bp_blob_deleter deleter;    /* NULL: memory came from dt's allocator */
  void *deleter_ctx;
  struct bp_tensor *embedded_in;  /* the tensor block holding this, or NULL */
  bool inline_data;           /* data lives in embedded_in->inline_data */
} bp__storage;

/* Host tensors of at most this many bytes keep their data inside the
 * tensor's own allocation: one malloc per small tensor instead of two, and
 * no aligned allocation, which glibc makes slow. */
#define BP__INLINE_BYTES 64

struct bp_tensor {
  atomic_int_fast64_t refcount;
  bp__storage *storage;
  int32_t device_slot;        /* bp__device_slot(view.device.type), cached
                                 for the dispatcher */
  uint32_t dtype_bit;         /* bp__dtype_bit(view.dtype), likewise */
  bp_tensor_view view;
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];
  bp__storage own_storage;    /* used when storage == &own_storage */
  /* Room for BP__INLINE_BYTES at a 64-byte boundary inside a block that
   * malloc aligns to 16. */
  unsigned char inline_data[BP__INLINE_BYTES + 48];
  /* Set once the tensor's references are gone but its embedded storage is
   * still used by views; the last storage release then frees the block. */
  atomic_bool dead;
};

/* The [lo, hi) byte offsets that a view with elements reaches in its
 * storage (strides are never negative). */
static inline void bp__view_span(const bp_tensor_view *v, int64_t *lo, int64_t *hi) {
  int64_t reach = 0;
  for (int32_t d = 0; d < v->ndim; d++) reach += (v->sizes[d] - 1) * v->strides[d];
  *lo = v->storage_offset * v->itemsize;
  *hi = (v->storage_offset + reach + 1) * v->itemsize;
}

/* The metadata view, without a NULL check (hot path). */
static inline const bp_tensor_view *bp__view(const bp_tensor *t) {
  return &t->view;
}

/* ------------------------------------------------------------------------ */
/* Grace periods (rcu.c)                                                    */
/* ------------------------------------------------------------------------ */

typedef struct bp__reader {
  /* Odd while the owning thread is inside a call; advances by one on entry
   * to and exit from the outermost call. */
  atomic_uint_fast64_t seq;
  uint64_t depth;             /* nested calls below the outermost one */
  /* The arguments of the kernel running on this thread, already checked
   * against op: op_meta on exactly these skips checking them again. */
  const bp_op *checked_op;
  const bp_value *checked_args;
  atomic_bool in_use;
  bool fence;                 /* bp__readers_fence, copied at registration */
  struct bp__reader *next;
} bp__reader;

extern __thread bp__reader *bp__tl_reader __attribute__((tls_model("initial-exec")));
/* True when readers must fence (membarrier(2) is unavailable). */
extern bool bp__readers_fence;

/* A full memory barrier.  ThreadSanitizer models no fences, so in a
 * --enable-sanitizers=thread build the barrier is a sequentially consistent
 * read-modify-write of one shared word instead, which it sees and which is a
 * full barrier on x86-64. */
#if defined(__SANITIZE_THREAD__)
extern atomic_uint bp__fence_word;
#define BP__FULL_FENCE() \
  ((void)atomic_fetch_add_explicit(&bp__fence_word, 0, memory_order_seq_cst))
#else
#define BP__FULL_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif

bp__reader *bp__reader_register(void);

/* Waits until every thread that was inside a read section when this was
 * called (other than the caller) has left it. */
void bp__synchronize(void);

/* Whether the calling thread is inside a read section. */
static inline bool bp__in_read_section(void) {
  bp__reader *r = bp__tl_reader;
  return r && (atomic_load_explicit(&r->seq, memory_order_relaxed) & 1);
}

/*
 * Enters a read section; returns NULL only if out of memory.  *nested says
 * whether the thread was already inside one (a kernel calling the host);
 * only the outermost entry and exit publish anything.
 */
static inline bp__reader *bp__read_enter(bool *nested) {
  bp__reader *r = bp__tl_reader;
  if (BP__UNLIKELY(!r)) {
    r = bp__reader_register();
    if (!r) return NULL;
  }
  uint_fast64_t s = atomic_load_explicit(&r->seq, memory_order_relaxed);
  *nested = s & 1;
  if (BP__LIKELY(!*nested)) {
    atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
    /* Order "inside" before the reads that follow.  With membarrier(2) the
     * unloader pays for that barrier and a compiler barrier suffices. */
    if (BP__UNLIKELY(r->fence))
      BP__FULL_FENCE();
    else
      atomic_signal_fence(memory_order_seq_cst);
  }
  return r;
}

static inline void bp__read_exit(bp__reader *r, bool nested) {
  if (BP__LIKELY(!nested))
    atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* Plugins, ops and kernels (loader.c, registry.c, call.c)                  */
/* ------------------------------------------------------------------------ */

/* Limits of a schema that the call path keeps in fixed arrays. */
#define BP__MAX_ARGS 32
#define BP__MAX_RETS 8
#define BP__MAX_FFI_ARGS (1 + 2 * BP__MAX_ARGS + BP__MAX_RETS)

struct bp_plugin {
  char *path;                 /* canonical path, or "(static)" */
  char *label;                /* for static plugins */
  char *name, *vendor, *version;
  uint32_t abi_major, abi_minor, op_set_version;
  int32_t origin, state, status;
  char *error;                /* "" when none */
  void *dl;                   /* dlopen handle; NULL for static */
  const bp_plugin_desc *desc;
  size_t desc_size;           /* the descriptor's struct_size */
  bool loading;               /* inside setup(): registrations are staged */
  struct bp_registrar *registrar; /* made at the first setup(), never freed */
  bp_plugin_init_fn static_init;  /* for bp_plugin_register() */
  const bp_host_api *host;    /* the table its setup() gets, and its kernels */
  bool builtin;               /* the host's own (bp__host_plugin) */
};
typedef struct bp_plugin bp__plugin;

/* The pseudo-plugin that owns the host's own registrations. */
extern bp__plugin bp__host_plugin;

typedef bp_status (*bp__fast_fn)(bp_unboxed_kernel fn, const bp_kernel_ctx *ctx,
                                 const bp_value *args, bp_tensor **outs);

/* Kinds of dispatch-table entry (beyond bp_kernel_kind). */
#define BP__ENTRY_FALLBACK 10
#define BP__ENTRY_COMPOSITE 11

/* A registered kernel, fallback or composite.  Immutable once published,
 * but for `next` (and `enabled`, which calls do not read); freed only after
 * a grace period. */
typedef struct bp__kernel {
  bp_kernel_ctx ctx;          /* what the kernel receives (fallbacks get a
                                 copy with the op filled in) */
  int kind;                   /* bp_kernel_kind or BP__ENTRY_* */
  uint32_t dtype_refused;     /* bp__dtype_bit()s of the dtypes it does not
                                 declare; 0 when it declares no list */
  bp_boxed_kernel boxed;
  bp_unboxed_kernel unboxed;
  bp__fast_fn fast;
  bp__plugin *owner;
  int32_t *dtypes;            /* owned copy, or NULL */
  int32_t priority;           /* bp_kernel_def.priority */
  bool enabled;               /* changed under the registry lock */
  uint64_t seq;               /* registration order, for ties */
  /* The next candidate for the same op and device type in precedence
   * order (enabled and committed), for a call whose dtypes this kernel
   * does not declare; NULL at the end.  Rewritten by each rebuild. */
  _Atomic(struct bp__kernel *) next;
  struct bp__kernel *next_reg; /* every kernel of the slot (registry lock) */
} bp__kernel;

/* A dtype's bit in bp__kernel.dtype_refused and bp_tensor.dtype_bit: one
 * per dtype of bp_dtype, and bit 31 for any other code.  Bit 30 is no
 * dtype's: set in a kernel's dtype_refused, it sends the fast path's calls
 * to the general path, which checks their results' dtypes too. */
#define BP__RESULTS_BIT (1u << 30)
static inline uint32_t bp__dtype_bit(int32_t dt) {
  switch (dt) {
    case BP_INT8: return 1u << 0;
    case BP_INT16: return 1u << 1;
    case BP_INT32: return 1u << 2;
    case BP_INT64: return 1u << 3;
    case BP_UINT8: return 1u << 4;
    case BP_FLOAT16: return 1u << 5;
    case BP_FLOAT32: return 1u << 6;
    case BP_FLOAT64: return 1u << 7;
    case BP_BFLOAT16: return 1u << 8;
    case BP_BOOL: return 1u << 9;
    default: return 1u << 31;
  }
}

/* How a schema argument is passed to an unboxed kernel. */
enum {
  BP__M_TENSOR = 1,  /* bp_tensor *, NULL for None */
  BP__M_I64,         /* int64_t */
  BP__M_F64,         /* double */
  BP__M_BOOL,        /* bool */
  BP__M_I32,         /* int32_t (ScalarType) */
  BP__M_STR,         /* const char *, NULL for None */
  BP__M_OPT_I64,     /* const int64_t *, NULL for None */
  BP__M_OPT_F64,
  BP__M_OPT_BOOL,
  BP__M_OPT_I32,
  BP__M_DEVICE,      /* const bp_device *, NULL for None */
  BP__M_LIST,        /* pointer, size_t */
  BP__M_SCALAR       /* const bp_value *, NULL for None (ABI 1.2) */
};

struct bp_op {
  char *name;                 /* "ns::name[.overload]"; permanent */
  size_t ns_len;              /* length of the "ns" prefix */
  atomic_bool defined;        /* published definition */
  /* The definition: changed only while !defined, under the registry lock. */
  bp__schema *schema;
  char *schema_text;          /* canonical, with namespace */
  char *doc;
  uint64_t flags;
  uint32_t op_set_version;    /* a core op's op-set version; 0 for others */
  bp_meta_fn meta;
  bp_kernel_ctx meta_ctx;
  bp__kernel *composite;
  bp__plugin *def_owner;      /* NULL when undefined */
  /* Derived from the schema for the call path. */
  uint32_t nargs, nrets, npositional;
  uint32_t min_args;          /* arguments before the trailing defaulted ones */
  uint8_t arg_tag[BP__MAX_ARGS];
  uint32_t arg_tag32[BP__MAX_ARGS];     /* the same, as wide as bp_value.tag,
                                           for the fast path's compares */
  bool arg_optional[BP__MAX_ARGS];
  int16_t arg_list_size[BP__MAX_ARGS];  /* N of T[N], -1 otherwise */
  uint8_t arg_marshal[BP__MAX_ARGS];    /* BP__M_* */
  uint8_t ret_tag[BP__MAX_RETS];
  uint32_t ret_tag32[BP__MAX_RETS];     /* the same, as wide as bp_value.tag */
  uint8_t ntensor_args;
  uint8_t tensor_args[BP__MAX_ARGS];    /* Tensor, Tensor?, Tensor[] args */
  int8_t device_arg;                    /* first Device argument, or -1 */
  int16_t fast_sig;                     /* fast-path signature (0 .. 362), or -1 */
  uint32_t first_tensor_off;            /* tensor_args[0] in bytes of bp_value */
  uint32_t fast_nargs;                  /* nargs when calls may take the fast
                                           path (no list arguments, at least
                                           one Tensor), else UINT32_MAX */
  bool cif_ok;
  bool ffi_inplace;                     /* every argument passed as stored */
  ffi_cif cif;
  ffi_type *ffi_types[BP__MAX_FFI_ARGS];
  unsigned nffi;
  /* The spelling of each argument's and result's type, for
   * bp_op_get_arg/ret: pointers into type_block (owned). */
  char *type_block;
  const char *arg_type_text[BP__MAX_ARGS + BP__MAX_RETS];
  /* Kernels by device slot, every candidate in a list through next_reg
   * (registry lock), and the published dispatch table the call path reads:
   * the first candidate in precedence order, else the fallback, else the
   * composite. */
  bp__kernel *registered[BP__DEVICE_SLOTS];
  _Atomic(bp__kernel *) dispatch[BP__DEVICE_SLOTS];
};

/* Kernel precedence (precedence.c), under the registry lock: orders the
 * candidates of op's device slot s and links them through `next`; returns
 * the first, or NULL when none is enabled and committed. */
bp__kernel *bp__precedence_order(const bp_op *op, int s);
/* More candidates than this for one op and device type are not ordered. */
#define BP__MAX_CANDIDATES 64
/* The longest plugin name (loader.c checks names against it). */
#define BP__PLUGIN_NAME_MAX 64
/* All live kernels of (op, slot), disabled ones too, in precedence order
 * into out[0 .. n-1]; returns n (at most cap). */
size_t bp__precedence_sorted(const bp_op *op, int slot, bp__kernel **out, size_t cap);
/* Records (plugin non-NULL) or forgets the host's choice of plugin for
 * (op, slot), op NULL meaning every op; the caller rebuilds. */
bp_status bp__precedence_choose(const bp_op *op, int slot, const char *plugin);
/* Whether k's plugin is named `plugin`. */
bool bp__precedence_named(const bp__kernel *k, const char *plugin);
/* Whether k counts: registered by a plugin whose setup() has returned. */
static inline bool bp__kernel_live(const bp__kernel *k) { return k && !k->owner->loading; }
/* Builds the type spellings of op->schema into op->type_block and
 * op->arg_type_text (optexts.c); false when out of memory. */
bool bp__op_type_texts(bp_op *op);

/* Checks that `path` is a regular file holding an ELF shared object for
 * this machine whose headers and segments lie inside the file, before
 * dlopen() maps it (plugin_file.c).  Records an error naming the file. */
bp_status bp__plugin_file_check(const char *path);
/* With BP_PLUGIN_PROBE=1 (plugin_probe.c): runs load(path), the loader's
 * whole load, in a forked child first, and refuses the file, naming the
 * signal, when that kills the child; BP_OK when the mode is off or the
 * child survives (a file that probed clean is remembered). */
bp_status bp__plugin_probe(const char *path, void (*load)(const char *path));
/* The host CPU device's caching allocator (cpu_alloc.c): blocks of nbytes
 * (64-byte aligned), NULL when out of memory; a block is freed with the
 * size it was allocated with. */
void *bp__cpu_alloc_bytes(size_t nbytes);
void bp__cpu_free_bytes(void *p, size_t nbytes);
/* Checks what the dynamic loader will trust in a 64-bit ELF file open at
 * fd (plugin_dyn.c): the dynamic section, symbol, string, hash, relocation
 * and version tables and the init arrays, every index and offset in range.
 * textrel_ok: relocations may write to non-writable segments. */
bp_status bp__plugin_dyn_check(const char *path, int fd, uint64_t size, uint64_t phoff,
                               unsigned phnum, bool textrel_ok);

/* The host's start (init.c): defines the core op set once, before the
 * first lookup or load, which call it (api.c); a failure is returned,
 * with its message, to every caller. */
bp_status bp__ensure_init(void);
/* The core op set's built-in plugin (core.c): its setup(), which sees
 * only the host table. */
bp_status bp__core_setup(const bp_host_api *h, bp_registrar *reg);
/* The entry points of api.c, without the start: the loader's (loader.c)
 * and the registry's lookups (registry.c). */
bp_status bp__plugin_load(const char *path, bp_plugin **out_plugin);
bp_status bp__plugin_register(bp_plugin_init_fn init, const char *label, bp_plugin **out_plugin);
bp_status bp__plugin_discover(size_t *out_loaded);
bp_status bp__op_find(const char *name, const bp_op **out_op);
size_t bp__op_count(void);
const bp_op *bp__op_at(size_t index);
/* Runs the setup() of a plugin built into the host, for the host's own
 * registrations (loader.c). */
bp_status bp__builtin_setup(bp_status (*setup)(const bp_host_api *, bp_registrar *));
/* PyTorch's type promotion among the op set's dtypes. */
int32_t bp__promote(int32_t a, int32_t b);

/* Runs op's meta function on a full, schema-ordered argument array. */
bp_status bp__op_meta_args(const bp_op *op, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts);

/* The .out and in-place forms (call.c, tensor.c): op's structured kernel
 * filling dst, when that is the kernel a call would take (*ran says), and
 * the resize of an empty `out` to a contiguous shape. */
bp_status bp__call_structured_into(const bp_op *op, const bp_value *args, bp_tensor *dst,
                                   bool *ran);
bp_status bp__tensor_resize_empty(bp_tensor *t, int32_t ndim, const int64_t *sizes,
                                  const char *who);

/* The per-op call plan, the fast-path table and the libffi call
 * (unboxed.c). */
bp_status bp__op_prepare(bp_op *op);
bp__fast_fn bp__fast_lookup(int sig);
bp_status bp__call_ffi(const bp_op *op, const bp__kernel *k, const bp_value *args,
                       bp_value *rets);

/* The registry (registry.c).  bp__registry_lock guards every mutation. */
void bp__registry_lock(void);
void bp__registry_unlock(void);
/* Recomputes every op's or one op's dispatch table (registry lock held). */
void bp__registry_rebuild_all(void);
void bp__registry_rebuild_op(bp_op *op);
/* Live kernels of op on every device type (registry lock held), and
 * the names of the device types with an enabled one (takes the lock);
 * introspect.c. */
size_t bp__op_kernel_count(const bp_op *op);
/* "[2, 3]" into buf (truncated to n bytes); returns buf.  tensor.c. */
const char *bp__shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t n);
size_t bp__op_kernel_devices(const bp_op *op, char *buf, size_t n);
/* Whether op has a live kernel for device slot `slot` that is disabled
 * (bp_set_kernel_enabled); its plugin's name goes into buf. */
bool bp__op_kernel_disabled(const bp_op *op, int slot, char *buf, size_t n);

/* op's meta function on checked arguments (meta.c); the caller is in a
 * read section and op is defined. */
bp_status bp__run_meta(const bp_op *op, const bp_value *args, bp_tensor_meta *outs,
                       size_t nouts);
/* Routing on dtypes (call_dtypes.c).  The dtype bits of every tensor
 * argument, lists included; of every tensor result, from the meta
 * function (false when not known before the call: no meta function, or
 * one that refuses the arguments; the last error is left as it was); and
 * the first kernel from k on in precedence order that declares both, else
 * the op's composite, else NULL with an error naming the op, the plugin
 * and the dtype. */
uint32_t bp__arg_dtype_bits(const bp_op *op, const bp_value *args);
bool bp__result_dtype_bits(const bp_op *op, const bp_value *args, uint32_t *out);
const bp__kernel *bp__kernel_for_dtypes(const bp_op *op, const bp__kernel *k,
                                        const bp_value *args, uint32_t bits);
/* Whether kernel k, which declares a dtype list, declares the dtype of
 * every result of a call on args too (the caller checked the arguments'). */
static inline bool bp__results_declared(const bp_op *op, const bp__kernel *k,
                                        const bp_value *args) {
  uint32_t rbits;
  return !bp__result_dtype_bits(op, args, &rbits) || !(rbits & k->dtype_refused);
}
/* A plugin's name for messages: its name, label or path. */
const char *bp__plugin_label(const bp__plugin *p);
/* Publishes what a plugin staged in setup() (dispatch tables and defs). */
void bp__registry_commit(bp__plugin *p);
/* Removes all of p's registrations and unpublishes them; the records to
 * free after the grace period are chained onto *garbage (through
 * next_reg; no allocation), freed by bp__registry_free_garbage. */
void bp__registry_remove(bp__plugin *p, bp__kernel **garbage);
void bp__registry_free_garbage(bp__kernel *garbage);
/* The library/registration entry points of the host table (register.c). */
bp_status bp__reg_library(bp_registrar *reg, const bp_library_def *def, bp_library **out);
bp_status bp__reg_def(bp_library *lib, const bp_op_def *def);
bp_status bp__reg_impl(bp_library *lib, const bp_kernel_def *kernel);
bp_status bp__reg_fallback(bp_registrar *reg, const bp_fallback_def *fallback);
bp_status bp__reg_device_type(bp_registrar *reg, const bp_device_iface *iface, int32_t *out);

/*
 * A plugin's registrar and its libraries are handed to setup() and valid
 * only there, but a plugin may keep them by mistake: using one later must
 * fail cleanly.  So a plugin's registrar lives as long as its record (for
 * the process) and its libraries are never freed; each setup() starts a
 * new generation, and a library of an older one is refused.  A setup()
 * that opens a namespace an older one opened with the same kind gets that
 * record back (so reloads allocate no new ones).
 */
struct bp_registrar {
  bp__plugin *plugin;
  bool active;                /* only inside setup() */
  uint64_t generation;        /* advances with each setup() */
  struct bp_library *libs;    /* every library opened through it */
};

struct bp_library {
  bp_registrar *reg;
  char *ns;
  int32_t kind;
  uint64_t generation;        /* the registrar's when it was opened */
  struct bp_library *next;
};

/* Device-type ownership changes for unload (device.c): hide a plugin's
 * types from new allocations, bring them back, or forget them. */
void bp__device_hide_owner(bp__plugin *owner);
void bp__device_restore_owner(bp__plugin *owner);
void bp__device_forget_owner(bp__plugin *owner);
/* Live tensors on the device types of `owner`; names one in *out_name. */
int64_t bp__device_live_for_owner(bp__plugin *owner, const char **out_name);

/* ------------------------------------------------------------------------ */
/* Misc                                                                     */
/* ------------------------------------------------------------------------ */

/* Multiplies with an overflow check: false on overflow. */
static inline bool bp__mul_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* The host function table handed to plugins (plugin.c). */
extern const bp_host_api bp__host_api;

/* BP_PLUGIN_PATH as discovery reads it: NULL in a setuid or setgid
 * program (loader.c). */
const char *bp__plugin_path_env(void);

/* Text from outside (text.c): the length (1 to 4) of the well-formed
 * UTF-8 sequence at s, 0 when none starts there; and the escaped form of
 * the character at s (bp_text_escape's rules) in esc, its length
 * returned and the bytes of s it stands for in *used. */
size_t bp__utf8_len(const char *s);
size_t bp__text_escape_one(const char *s, char esc[8], size_t *used);

#endif /* BP_HOST_INTERNAL_H */
