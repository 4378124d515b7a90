/*
 * host/device.c - the device-type registry and the built-in CPU device.
 *
 * Device types live in a fixed table of slots so that the allocation path
 * finds a type with one indexed load and no lock.  Registration and
 * unregistration take `registry_lock`; readers only load the slot's
 * atomic pointers.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The CPU device interface                                                 */
/* ------------------------------------------------------------------------ */

static bp_status cpu_count(void *ud, int32_t *out) {
  (void)ud;
  *out = 1;
  return BP_OK;
}

static bp_status cpu_properties(void *ud, int32_t index, bp_device_props *p) {
  (void)ud;
  (void)index;
  char name[sizeof p->name] = "host CPU";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        char *colon = strchr(line, ':');
        if (colon) {
          colon++;
          while (*colon == ' ' || *colon == '\t') colon++;
          colon[strcspn(colon, "\n")] = '\0';
          snprintf(name, sizeof name, "%s", colon);
        }
        break;
      }
    }
    fclose(f);
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  /* Fill only what the caller's struct_size covers. */
  if (BP_HAS_FIELD(p, bp_device_props, name)) snprintf(p->name, sizeof p->name, "%s", name);
  if (BP_HAS_FIELD(p, bp_device_props, total_memory))
    p->total_memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  if (BP_HAS_FIELD(p, bp_device_props, arch_major)) p->arch_major = 0;
  if (BP_HAS_FIELD(p, bp_device_props, arch_minor)) p->arch_minor = 0;
  if (BP_HAS_FIELD(p, bp_device_props, compute_units)) p->compute_units = cpus > 0 ? cpus : 1;
  return BP_OK;
}

static bp_status cpu_alloc(void *ud, int32_t index, size_t nbytes, void **out) {
  (void)ud;
  (void)index;
  void *p = bp__cpu_alloc_bytes(nbytes);
  if (!p) return bp__error(BP_ERR_OUT_OF_MEMORY, "cpu: cannot allocate %zu bytes", nbytes);
  *out = p;
  return BP_OK;
}

static void cpu_free(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud;
  (void)index;
  bp__cpu_free_bytes(ptr, nbytes);
}

static bp_status cpu_copy(void *ud, void *dst, bp_device dd, const void *src,
                          bp_device sd, size_t nbytes) {
  (void)ud;
  (void)dd;
  (void)sd;
  memmove(dst, src, nbytes);
  return BP_OK;
}

static bp_status cpu_synchronize(void *ud, int32_t index) {
  (void)ud;
  (void)index;
  return BP_OK;
}

static const bp_device_iface cpu_iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "cpu",
    .type = BP_DEVICE_CPU,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = cpu_count,
    .properties = cpu_properties,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
};

/* ------------------------------------------------------------------------ */
/* The registry                                                             */
/* ------------------------------------------------------------------------ */

bp__device_type bp__cpu_type = {
    .type = BP_DEVICE_CPU,
    .name = "cpu",
    .iface = &cpu_iface,
    .owner = NULL,
    .registered = &cpu_iface,
};

/* The fixed DLPack names, used when such a type is not registered. */
static const char *const fixed_names[] = {
    [BP_DEVICE_CPU] = "cpu",         [BP_DEVICE_CUDA] = "cuda",
    [BP_DEVICE_CUDA_HOST] = "cuda_host", [BP_DEVICE_OPENCL] = "opencl",
    [BP_DEVICE_VULKAN] = "vulkan",   [BP_DEVICE_METAL] = "metal",
    [BP_DEVICE_VPI] = "vpi",         [BP_DEVICE_ROCM] = "rocm",
    [BP_DEVICE_ROCM_HOST] = "rocm_host", [BP_DEVICE_EXT_DEV] = "ext_dev",
    [BP_DEVICE_CUDA_MANAGED] = "cuda_managed", [BP_DEVICE_ONEAPI] = "oneapi",
    [BP_DEVICE_WEBGPU] = "webgpu",   [BP_DEVICE_HEXAGON] = "hexagon",
    [BP_DEVICE_MAIA] = "maia",
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(bp__device_type *) slots[BP__DEVICE_SLOTS] = {
    [BP_DEVICE_CPU] = &bp__cpu_type,
};
/* Device counts, cached at registration: the count does not change while
 * a type stays registered, and the allocation path checks indices. */
static int32_t slot_counts[BP__DEVICE_SLOTS] = {[BP_DEVICE_CPU] = 1};

bp__device_type *bp__device_lookup(int32_t type) {
  int s = bp__device_slot(type);
  if (s < 0) return NULL;
  bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_acquire);
  if (!dt || !atomic_load_explicit(&dt->iface, memory_order_acquire)) return NULL;
  return dt;
}

BP_API const char *bp_device_type_name(int32_t type) {
  int s = bp__device_slot(type);
  if (s < 0) return NULL;
  bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_acquire);
  if (dt) return dt->name;
  if (type < (int32_t)(sizeof fixed_names / sizeof fixed_names[0])) return fixed_names[type];
  return NULL;
}

BP_API bp_status bp_device_type_from_name(const char *name, int32_t *out_type) {
  if (!name || !out_type)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_device_type_from_name: %s is NULL",
                     !name ? "name" : "out_type");
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_acquire);
    if (dt && atomic_load_explicit(&dt->iface, memory_order_acquire) && !strcmp(dt->name, name)) {
      *out_type = dt->type;
      return BP_OK;
    }
  }
  return bp__error(BP_ERR_NOT_FOUND, "bp_device_type_from_name: no device type named '%s' is "
                   "registered", name);
}

const char *bp__device_type_label(int32_t type, char *buf, size_t n) {
  const char *name = bp_device_type_name(type);
  if (name) return name;
  snprintf(buf, n, "device type %d", (int)type);
  return buf;
}

bp_status bp__device_check(bp_device device, const char *what,
                           bp__device_type **out) {
  bp__device_type *dt = bp__device_lookup(device.type);
  char buf[32];
  if (!dt)
    return bp__error(BP_ERR_DEVICE, "%s: %s is not registered (no plugin provides it)",
                     what, bp__device_type_label(device.type, buf, sizeof buf));
  int32_t count = slot_counts[bp__device_slot(device.type)];
  if (device.index < 0 || device.index >= count)
    return bp__error(BP_ERR_DEVICE, "%s: device %s:%d does not exist (%d device%s of that type)",
                     what, dt->name, (int)device.index, (int)count, count == 1 ? "" : "s");
  *out = dt;
  return BP_OK;
}

BP_API bp_status bp_device_count(int32_t type, int32_t *out_count) {
  if (!out_count) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_device_count: out_count is NULL");
  bp__device_type *dt = bp__device_lookup(type);
  char buf[32];
  if (!dt)
    return bp__error(BP_ERR_DEVICE, "bp_device_count: %s is not registered",
                     bp__device_type_label(type, buf, sizeof buf));
  *out_count = slot_counts[bp__device_slot(type)];
  return BP_OK;
}

static bp_status device_type_flags_in(int32_t type, uint32_t *out_flags) {
  if (!out_flags)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_device_type_flags: out_flags is NULL");
  bp__device_type *dt = bp__device_lookup(type);
  char buf[32];
  if (!dt)
    return bp__error(BP_ERR_DEVICE, "bp_device_type_flags: %s is not registered",
                     bp__device_type_label(type, buf, sizeof buf));
  const bp_device_iface *iface = atomic_load_explicit(&dt->iface, memory_order_acquire);
  if (!iface)
    return bp__error(BP_ERR_DEVICE, "bp_device_type_flags: device type '%s' is being unloaded",
                     dt->name);
  *out_flags = iface->flags;
  return BP_OK;
}

BP_API bp_status bp_device_memory_in_use(int32_t type, int64_t *out_bytes) {
  if (!out_bytes)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_device_memory_in_use: out_bytes is NULL");
  bp__device_type *dt = bp__device_lookup(type);
  char buf[32];
  if (!dt)
    return bp__error(BP_ERR_DEVICE, "bp_device_memory_in_use: %s is not registered",
                     bp__device_type_label(type, buf, sizeof buf));
  *out_bytes = (int64_t)atomic_load_explicit(&dt->live_bytes, memory_order_relaxed);
  return BP_OK;
}

static bp_status device_properties_in(bp_device device, bp_device_props *out_props) {
  if (!out_props)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_device_properties: out_props is NULL");
  if (out_props->struct_size < BP_STRUCT_SIZE(bp_device_props, name))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "bp_device_properties: out_props->struct_size is %zu, expected at least %zu "
                     "(set it to BP_DEVICE_PROPS_STRUCT_SIZE)",
                     out_props->struct_size, BP_STRUCT_SIZE(bp_device_props, name));
  bp__device_type *dt;
  bp_status st = bp__device_check(device, "bp_device_properties", &dt);
  if (st) return st;
  const bp_device_iface *iface = atomic_load_explicit(&dt->iface, memory_order_acquire);
  if (!iface)
    return bp__error(BP_ERR_DEVICE, "bp_device_properties: device type '%s' is being unloaded",
                     dt->name);
  size_t caller_size = out_props->struct_size;
  memset(out_props, 0, caller_size);
  out_props->struct_size = caller_size;
  if (!iface->properties) {
    snprintf(out_props->name, sizeof out_props->name, "%s:%d", dt->name, (int)device.index);
    return BP_OK;
  }
  st = iface->properties(iface->user_data, device.index, out_props);
  out_props->struct_size = caller_size;
  if (st) return bp__plugin_failed(st, dt->name, "properties()");
  out_props->name[sizeof out_props->name - 1] = '\0';
  return BP_OK;
}

static bool valid_type_name(const char *s) {
  if (!s || !islower((unsigned char)s[0])) return false;
  size_t n = 0;
  for (; s[n]; n++)
    if (!islower((unsigned char)s[n]) && !isdigit((unsigned char)s[n]) && s[n] != '_') return false;
  return n < sizeof(((bp__device_type *)0)->name);
}

bp_status bp__device_register(bp__plugin *owner, const bp_device_iface *iface,
                              int32_t *out_type) {
  if (!iface) return bp__error(BP_ERR_INVALID_ARGUMENT, "device_type: iface is NULL");
  if (iface->struct_size < BP_STRUCT_SIZE(bp_device_iface, synchronize))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "device_type: iface->struct_size is %zu, expected at least %zu "
                     "(the ABI 1.0 size is %zu)",
                     iface->struct_size, BP_STRUCT_SIZE(bp_device_iface, synchronize),
                     (size_t)BP_DEVICE_IFACE_STRUCT_SIZE);
  if (!valid_type_name(iface->name))
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "device_type: name '%s' is not a valid device type name "
                     "([a-z][a-z0-9_]*, at most 31 characters)",
                     iface->name ? iface->name : "(null)");
  const char *missing = !iface->count ? "count" : !iface->alloc ? "alloc"
                      : !iface->free ? "free" : !iface->copy ? "copy"
                      : !iface->synchronize ? "synchronize" : NULL;
  if (missing)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "device_type '%s': required slot '%s' is NULL", iface->name, missing);
  int32_t count = 0;
  bp_status st = iface->count(iface->user_data, &count);
  if (st) return bp__plugin_failed(st, iface->name, "count()");
  if (count < 0)
    return bp__error(BP_ERR_BACKEND, "device_type '%s': count() reported %d devices",
                     iface->name, (int)count);

  pthread_mutex_lock(&registry_lock);
  int slot = -1;
  int32_t type = iface->type;
  if (type == BP_DEVICE_INVALID) {
    /* A vendor type: reuse the code this name had before, else take the
     * first never-used dynamic slot. */
    for (int s = BP__DEVICE_FIXED_SLOTS; s < BP__DEVICE_SLOTS; s++) {
      bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
      if (dt && strcmp(dt->name, iface->name) == 0) { slot = s; break; }
      if (!dt && slot < 0) slot = s;
    }
    if (slot < 0) {
      pthread_mutex_unlock(&registry_lock);
      return bp__error(BP_ERR_UNSUPPORTED, "device_type '%s': all %d vendor device-type codes are in use",
                       iface->name, BP__DEVICE_DYNAMIC_SLOTS);
    }
    type = BP_DEVICE_DYNAMIC_FIRST + (slot - BP__DEVICE_FIXED_SLOTS);
  } else {
    slot = (type > 0 && type < BP__DEVICE_FIXED_SLOTS) ? type : -1;
    if (slot < 0) {
      pthread_mutex_unlock(&registry_lock);
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "device_type '%s': type code %d is neither a DLPack code (1..%d) nor "
                       "BP_DEVICE_INVALID (for a runtime code)",
                       iface->name, (int)type, BP__DEVICE_FIXED_SLOTS - 1);
    }
  }
  /* A name must not already stand for another registered type. */
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (s != slot && dt && dt->registered && strcmp(dt->name, iface->name) == 0) {
      pthread_mutex_unlock(&registry_lock);
      return bp__error(BP_ERR_ALREADY_EXISTS, "device_type '%s': the name is already registered as code %d",
                       iface->name, (int)dt->type);
    }
  }
  bp__device_type *dt = atomic_load_explicit(&slots[slot], memory_order_relaxed);
  if (dt && dt->registered) {
    pthread_mutex_unlock(&registry_lock);
    return bp__error(BP_ERR_ALREADY_EXISTS, "device_type '%s': code %d is already registered as '%s'",
                     iface->name, (int)type, dt->name);
  }
  /* A code keeps its name for the life of the process: names are read
   * without locks, so they are written once, before the entry is
   * published. */
  if (dt && strcmp(dt->name, iface->name) != 0) {
    pthread_mutex_unlock(&registry_lock);
    return bp__error(BP_ERR_ALREADY_EXISTS,
                     "device_type '%s': code %d was registered earlier as '%s', and a code keeps "
                     "its name for the life of the process", iface->name, (int)type, dt->name);
  }
  if (!dt) {
    dt = bp__calloc(1, sizeof *dt);
    if (!dt) {
      pthread_mutex_unlock(&registry_lock);
      return bp__error(BP_ERR_OUT_OF_MEMORY, "device_type '%s': out of memory", iface->name);
    }
    dt->type = type;
    snprintf(dt->name, sizeof dt->name, "%s", iface->name);
    atomic_store_explicit(&slots[slot], dt, memory_order_release);
  }
  dt->owner = owner;
  dt->registered = iface;
  slot_counts[slot] = count;
  atomic_store_explicit(&dt->iface, iface, memory_order_release);
  pthread_mutex_unlock(&registry_lock);
  if (out_type) *out_type = type;
  return BP_OK;
}

int64_t bp__device_live_for_owner(bp__plugin *owner, const char **out_name) {
  int64_t total = 0;
  pthread_mutex_lock(&registry_lock);
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (dt && dt->owner == owner) {
      int64_t n = (int64_t)atomic_load(&dt->live_tensors);
      if (n > 0 && out_name && total == 0) *out_name = dt->name;
      total += n;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return total;
}

int64_t bp__device_handles_for_owner(bp__plugin *owner, const char **out_name) {
  int64_t total = 0;
  pthread_mutex_lock(&registry_lock);
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (dt && dt->owner == owner) {
      int64_t n = (int64_t)atomic_load(&dt->live_handles);
      if (n > 0 && out_name && total == 0) *out_name = dt->name;
      total += n;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return total;
}

/* Unload runs in three steps so that a tensor created concurrently with the
 * check for live tensors is never stranded: hide the types (new
 * allocations fail), wait for a grace period, check again, and then either
 * forget them or restore them. */
void bp__device_hide_owner(bp__plugin *owner) {
  pthread_mutex_lock(&registry_lock);
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (dt && dt->owner == owner) atomic_store_explicit(&dt->iface, NULL, memory_order_release);
  }
  pthread_mutex_unlock(&registry_lock);
}

void bp__device_restore_owner(bp__plugin *owner) {
  pthread_mutex_lock(&registry_lock);
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (dt && dt->owner == owner)
      atomic_store_explicit(&dt->iface, dt->registered, memory_order_release);
  }
  pthread_mutex_unlock(&registry_lock);
}

void bp__device_forget_owner(bp__plugin *owner) {
  pthread_mutex_lock(&registry_lock);
  for (int s = 0; s < BP__DEVICE_SLOTS; s++) {
    bp__device_type *dt = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (dt && dt->owner == owner) {
      atomic_store_explicit(&dt->iface, NULL, memory_order_release);
      dt->registered = NULL;
      dt->owner = NULL;
      slot_counts[s] = 0;
    }
  }
  pthread_mutex_unlock(&registry_lock);
}

/* Allocation and free use the interface as registered, not the published
 * pointer: a tensor counted against the type (as every caller's is) keeps
 * the plugin loaded even while an unload attempt has it hidden. */
bp_status bp__device_alloc(bp__device_type *dt, int32_t index, size_t nbytes, void **out) {
  if (nbytes == 0) {
    *out = NULL;
    return BP_OK;
  }
  const bp_device_iface *iface = dt->registered;
  void *p = NULL;
  bool guard = bp__guard_enabled();
  size_t total = guard ? bp__guard_total(nbytes) : nbytes;
  bp_status st = BP_OK;
  /* A host-CPU block freed last comes back first (guard.c). */
  if (guard && dt == &bp__cpu_type) p = bp__guard_reuse_cpu(total);
  if (!p) st = iface->alloc(iface->user_data, index, total, &p);
  if (st) {
    char what[64];
    snprintf(what, sizeof what, "alloc(%zu bytes) on device %d", nbytes, (int)index);
    return bp__plugin_failed(st, dt->name, what);
  }
  if (!p)
    return bp__error(BP_ERR_BACKEND, "device '%s:%d': alloc(%zu) returned BP_OK and a NULL pointer",
                     dt->name, (int)index, nbytes);
  if (guard) {
    bp_device d = {dt->type, index};
    st = bp__guard_arm(iface, d, p, nbytes);
    if (st) {
      iface->free(iface->user_data, index, p, total);
      return st;
    }
    p = (char *)p + BP__GUARD_BYTES;
  }
  atomic_fetch_add_explicit(&dt->live_bytes, (int_fast64_t)nbytes, memory_order_relaxed);
  *out = p;
  return BP_OK;
}

void bp__device_free(bp__device_type *dt, int32_t index, void *ptr, size_t nbytes) {
  if (!ptr) return;
  const bp_device_iface *iface = dt->registered;
  atomic_fetch_sub_explicit(&dt->live_bytes, (int_fast64_t)nbytes, memory_order_relaxed);
  if (bp__guard_enabled()) {
    bp_device d = {dt->type, index};
    void *base = (char *)ptr - BP__GUARD_BYTES;
    bp__guard_check(iface, dt->name, d, base, nbytes);
    if (dt == &bp__cpu_type && bp__guard_keep_cpu(base, bp__guard_total(nbytes))) return;
    iface->free(iface->user_data, index, base, bp__guard_total(nbytes));
    return;
  }
  iface->free(iface->user_data, index, ptr, nbytes);
}

/* ------------------------------------------------------------------------ */
/* Synchronisation, streams and events                                      */
/* ------------------------------------------------------------------------ */

/* The interface of a registered `device` for the public function `what`. */
static bp_status device_iface_for(bp_device device, const char *what, bp__device_type **out_dt,
                                  const bp_device_iface **out_iface) {
  bp__device_type *dt;
  bp_status st = bp__device_check(device, what, &dt);
  if (st) return st;
  const bp_device_iface *iface = atomic_load_explicit(&dt->iface, memory_order_acquire);
  if (!iface)
    return bp__error(BP_ERR_DEVICE, "%s: device type '%s' is being unloaded", what, dt->name);
  *out_dt = dt;
  *out_iface = iface;
  return BP_OK;
}

/* Gets the interface into `dt`/`iface` and returns BP_ERR_UNSUPPORTED
 * unless the plugin's struct covers `slot` and sets it. */
#define GET_IFACE_WITH(what, slot, feature)                                              \
  bp__device_type *dt;                                                                   \
  const bp_device_iface *iface;                                                          \
  bp_status st = device_iface_for(device, what, &dt, &iface);                            \
  if (st) return st;                                                                     \
  if (!BP_HAS_FIELD(iface, bp_device_iface, slot) || !iface->slot)                       \
    return bp__error(BP_ERR_UNSUPPORTED, "%s: device type '%s' has no %s", what, dt->name, \
                     feature)

static bp_status device_failed(bp_status st, bp__device_type *dt, bp_device device,
                               const char *fn) {
  char what[64];
  snprintf(what, sizeof what, "%s on device %d", fn, (int)device.index);
  return bp__plugin_failed(st, dt->name, what);
}

static bp_status device_synchronize_in(bp_device device) {
  bp__device_type *dt;
  const bp_device_iface *iface;
  bp_status st = device_iface_for(device, "bp_device_synchronize", &dt, &iface);
  if (st) return st;
  st = iface->synchronize(iface->user_data, device.index);
  return st ? device_failed(st, dt, device, "synchronize()") : BP_OK;
}

static bp_status stream_create_in(bp_device device, bp_stream **out_stream) {
  if (!out_stream)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stream_create: out_stream is NULL");
  *out_stream = NULL;
  GET_IFACE_WITH("bp_stream_create", stream_create, "streams");
  void *s = NULL;
  st = iface->stream_create(iface->user_data, device.index, &s);
  if (st) return device_failed(st, dt, device, "stream_create()");
  if (!s)
    return bp__error(BP_ERR_BACKEND, "device '%s:%d': stream_create() returned BP_OK and NULL",
                     dt->name, (int)device.index);
  atomic_fetch_add_explicit(&dt->live_handles, 1, memory_order_relaxed);
  *out_stream = s;
  return BP_OK;
}

static bp_status stream_destroy_in(bp_device device, bp_stream *stream) {
  if (!stream) return BP_OK;
  GET_IFACE_WITH("bp_stream_destroy", stream_destroy, "streams");
  st = iface->stream_destroy(iface->user_data, device.index, stream);
  if (st) return device_failed(st, dt, device, "stream_destroy()");
  atomic_fetch_sub_explicit(&dt->live_handles, 1, memory_order_relaxed);
  return BP_OK;
}

static bp_status stream_get_current_in(bp_device device, bp_stream **out_stream) {
  if (!out_stream)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stream_get_current: out_stream is NULL");
  *out_stream = NULL;
  GET_IFACE_WITH("bp_stream_get_current", stream_get_current, "streams");
  void *s = NULL;
  st = iface->stream_get_current(iface->user_data, device.index, &s);
  if (st) return device_failed(st, dt, device, "stream_get_current()");
  *out_stream = s;
  return BP_OK;
}

static bp_status stream_set_current_in(bp_device device, bp_stream *stream) {
  GET_IFACE_WITH("bp_stream_set_current", stream_set_current, "streams");
  st = iface->stream_set_current(iface->user_data, device.index, stream);
  return st ? device_failed(st, dt, device, "stream_set_current()") : BP_OK;
}

static bp_status stream_synchronize_in(bp_device device, bp_stream *stream) {
  GET_IFACE_WITH("bp_stream_synchronize", stream_synchronize, "streams");
  st = iface->stream_synchronize(iface->user_data, device.index, stream);
  return st ? device_failed(st, dt, device, "stream_synchronize()") : BP_OK;
}

static bp_status event_create_in(bp_device device, bp_event **out_event) {
  if (!out_event)
    return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_event_create: out_event is NULL");
  *out_event = NULL;
  GET_IFACE_WITH("bp_event_create", event_create, "events");
  void *e = NULL;
  st = iface->event_create(iface->user_data, device.index, &e);
  if (st) return device_failed(st, dt, device, "event_create()");
  if (!e)
    return bp__error(BP_ERR_BACKEND, "device '%s:%d': event_create() returned BP_OK and NULL",
                     dt->name, (int)device.index);
  atomic_fetch_add_explicit(&dt->live_handles, 1, memory_order_relaxed);
  *out_event = e;
  return BP_OK;
}

static bp_status event_destroy_in(bp_device device, bp_event *event) {
  if (!event) return BP_OK;
  GET_IFACE_WITH("bp_event_destroy", event_destroy, "events");
  st = iface->event_destroy(iface->user_data, device.index, event);
  if (st) return device_failed(st, dt, device, "event_destroy()");
  atomic_fetch_sub_explicit(&dt->live_handles, 1, memory_order_relaxed);
  return BP_OK;
}

static bp_status event_record_in(bp_device device, bp_event *event, bp_stream *stream) {
  if (!event) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_event_record: event is NULL");
  GET_IFACE_WITH("bp_event_record", event_record, "events");
  st = iface->event_record(iface->user_data, device.index, event, stream);
  return st ? device_failed(st, dt, device, "event_record()") : BP_OK;
}

static bp_status stream_wait_event_in(bp_device device, bp_stream *stream, bp_event *event) {
  if (!event) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_stream_wait_event: event is NULL");
  GET_IFACE_WITH("bp_stream_wait_event", stream_wait_event, "events");
  st = iface->stream_wait_event(iface->user_data, device.index, stream, event);
  return st ? device_failed(st, dt, device, "stream_wait_event()") : BP_OK;
}

static bp_status event_synchronize_in(bp_device device, bp_event *event) {
  if (!event) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_event_synchronize: event is NULL");
  GET_IFACE_WITH("bp_event_synchronize", event_synchronize, "events");
  st = iface->event_synchronize(iface->user_data, device.index, event);
  return st ? device_failed(st, dt, device, "event_synchronize()") : BP_OK;
}

/* ------------------------------------------------------------------------ */
/* The public device calls, each inside a read section                      */
/* ------------------------------------------------------------------------ */

/*
 * These calls run plugin code (or read the plugin's interface) without a
 * tensor that would keep the plugin loaded, so each runs inside a read
 * section: an unload, which hides the device type and then waits for read
 * sections to end, never closes the plugin under them.  One that starts
 * after the type is hidden finds it unregistered.
 */
#define IN_READ_SECTION(fn, call)                                                 \
  do {                                                                           \
    bool nested_ = false;                                                        \
    bp__reader *r_ = bp__read_enter(&nested_);                                   \
    if (!r_) return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);    \
    bp_status st_ = (call);                                                      \
    bp__read_exit(r_, nested_);                                                  \
    return st_;                                                                  \
  } while (0)

BP_API bp_status bp_device_type_flags(int32_t type, uint32_t *out_flags) {
  IN_READ_SECTION("bp_device_type_flags", device_type_flags_in(type, out_flags));
}

BP_API bp_status bp_device_properties(bp_device device, bp_device_props *out_props) {
  IN_READ_SECTION("bp_device_properties", device_properties_in(device, out_props));
}

BP_API bp_status bp_device_synchronize(bp_device device) {
  IN_READ_SECTION("bp_device_synchronize", device_synchronize_in(device));
}

BP_API bp_status bp_stream_create(bp_device device, bp_stream **out_stream) {
  IN_READ_SECTION("bp_stream_create", stream_create_in(device, out_stream));
}

BP_API bp_status bp_stream_destroy(bp_device device, bp_stream *stream) {
  IN_READ_SECTION("bp_stream_destroy", stream_destroy_in(device, stream));
}

BP_API bp_status bp_stream_get_current(bp_device device, bp_stream **out_stream) {
  IN_READ_SECTION("bp_stream_get_current", stream_get_current_in(device, out_stream));
}

BP_API bp_status bp_stream_set_current(bp_device device, bp_stream *stream) {
  IN_READ_SECTION("bp_stream_set_current", stream_set_current_in(device, stream));
}

BP_API bp_status bp_stream_synchronize(bp_device device, bp_stream *stream) {
  IN_READ_SECTION("bp_stream_synchronize", stream_synchronize_in(device, stream));
}

BP_API bp_status bp_event_create(bp_device device, bp_event **out_event) {
  IN_READ_SECTION("bp_event_create", event_create_in(device, out_event));
}

BP_API bp_status bp_event_destroy(bp_device device, bp_event *event) {
  IN_READ_SECTION("bp_event_destroy", event_destroy_in(device, event));
}

BP_API bp_status bp_event_record(bp_device device, bp_event *event, bp_stream *stream) {
  IN_READ_SECTION("bp_event_record", event_record_in(device, event, stream));
}

BP_API bp_status bp_stream_wait_event(bp_device device, bp_stream *stream, bp_event *event) {
  IN_READ_SECTION("bp_stream_wait_event", stream_wait_event_in(device, stream, event));
}

BP_API bp_status bp_event_synchronize(bp_device device, bp_event *event) {
  IN_READ_SECTION("bp_event_synchronize", event_synchronize_in(device, event));
}
