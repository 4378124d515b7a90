/*
 * host/internal.h - libbackplane's private declarations.  Never installed.
 *
 * Internal non-static symbols use the bp__ prefix and hidden visibility
 * (the library is built with -fvisibility=hidden; only BP_API functions are
 * exported).
 */
#ifndef BP_HOST_INTERNAL_H
#define BP_HOST_INTERNAL_H

#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/host.h>

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

/* Maps a status a plugin returned to one of this version's codes: an
 * unknown code becomes BP_ERR_INTERNAL with a message naming it. */
bp_status bp__status_from_plugin(int status, const char *who);

/* ------------------------------------------------------------------------ */
/* Devices (device.c)                                                       */
/* ------------------------------------------------------------------------ */

/* Slots of the device-type table: fixed DLPack codes use slots
 * 0 .. BP__DEVICE_FIXED_SLOTS-1 directly; runtime vendor codes
 * BP_DEVICE_DYNAMIC_FIRST + k use slot BP__DEVICE_FIXED_SLOTS + k. */
#define BP__DEVICE_FIXED_SLOTS 64
#define BP__DEVICE_DYNAMIC_SLOTS 64
#define BP__DEVICE_SLOTS (BP__DEVICE_FIXED_SLOTS + BP__DEVICE_DYNAMIC_SLOTS)

struct bp__plugin;

/* A registered device type.  Entries are never freed: an unloaded type
 * keeps its entry with iface == NULL, so that a stale code fails cleanly
 * and the same name gets the same code when it comes back. */
typedef struct bp__device_type {
  int32_t type;
  char name[32];
  _Atomic(const bp_device_iface *) iface;  /* NULL while unregistered */
  struct bp__plugin *owner;                /* NULL for built-ins */
  atomic_int_fast64_t live_tensors;        /* storages alive on it */
  atomic_int_fast64_t live_bytes;          /* bytes they hold */
} bp__device_type;

/* The slot of a type code, or -1 when the code cannot be registered. */
int bp__device_slot(int32_t type);

/* The entry of a registered (iface != NULL) type, or NULL. */
bp__device_type *bp__device_lookup(int32_t type);

/* Like bp__device_lookup() for a full device: also checks the index
 * against the device count.  On failure records an error naming `what`. */
bp_status bp__device_check(bp_device device, const char *what,
                           bp__device_type **out);

/* Registers `iface` for `owner` (NULL: built in).  See host->device_type. */
bp_status bp__device_register(struct bp__plugin *owner,
                              const bp_device_iface *iface,
                              int32_t *out_type);

/* Unregisters every device type `owner` registered.  Fails with BP_ERR_BUSY
 * (and changes nothing) while any of them has live tensors. */
bp_status bp__device_unregister_owner(struct bp__plugin *owner);

/* Allocates/frees storage bytes on a device, keeping the per-type
 * accounting.  nbytes may be 0 (no allocation; *out = NULL). */
bp_status bp__device_alloc(bp__device_type *dt, int32_t index, size_t nbytes,
                           void **out);
void bp__device_free(bp__device_type *dt, int32_t index, void *ptr,
                     size_t nbytes);

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
} bp__storage;

struct bp_tensor {
  atomic_int_fast64_t refcount;
  bp__storage *storage;
  bp_tensor_view view;
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];
  bp__storage own_storage;    /* used when storage == &own_storage */
  /* Set once the tensor's references are gone but its embedded storage is
   * still used by views; the last storage release then frees the block. */
  atomic_bool dead;
};

/* The metadata view, without a NULL check (hot path). */
static inline const bp_tensor_view *bp__view(const bp_tensor *t) {
  return &t->view;
}

/* ------------------------------------------------------------------------ */
/* Misc                                                                     */
/* ------------------------------------------------------------------------ */

/* Multiplies with an overflow check: false on overflow. */
static inline bool bp__mul_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* The host function table handed to plugins (plugin.c). */
extern const bp_host_api bp__host_api;

#endif /* BP_HOST_INTERNAL_H */
