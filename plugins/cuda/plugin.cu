/*
 * plugins/cuda/plugin.cu - the CUDA reference plugin: entry point, setup,
 * and the two device types it registers.
 *
 *   "cuda" (BP_DEVICE_CUDA)            device memory of each GPU
 *   "cuda_host" (BP_DEVICE_CUDA_HOST)  pinned host memory (cudaHostAlloc),
 *                                      host-visible, one device
 *
 * The allocator caches freed blocks: a block remembers the stream that was
 * current when it was allocated, and a freed block is reused only by an
 * allocation on that same stream, where work is ordered, so reuse needs no
 * synchronisation.  Cached blocks go back to CUDA when an allocation fails
 * (after the device synchronises), when their stream is destroyed, and at
 * unload.
 *
 * Streams: the handle is the cudaStream_t itself; NULL is the device's
 * default (legacy) stream.  Each thread has a current stream per device,
 * kept thread-locally; kernels launch on it.
 *
 * With no driver or no GPU the plugin still loads: both types report 0
 * devices, and setup leaves the reason as the thread's message (with
 * status BP_OK), which bp_last_error() returns after bp_plugin_load().
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda.h"

const bp_host_api *cu_host;
int cu_ndevices;
cu_device_info cu_devices[CU_MAX_DEVICES];

/* Why there are no devices, or "" (set at setup). */
static char no_device_reason[256];

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

bp_status cu_check(cudaError_t err, const char *what) {
  if (err == cudaSuccess) return BP_OK;
  /* The runtime also keeps err as the thread's last error, which the next
   * op's launch check (cu_launched) would report as its own: cleared
   * here, as it is now a status.  (An error that corrupts the context
   * stays: CUDA returns it from every later call.) */
  cudaGetLastError();
  bp_status st = err == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND;
  return CU_ERR(st, "cuda: %s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

bp_status cu_launched(const char *what) { return cu_check(cudaGetLastError(), what); }

/* ------------------------------------------------------------------------ */
/* Current device and stream                                                */
/* ------------------------------------------------------------------------ */

/* The calling thread's current stream per device (NULL: the default). */
static thread_local cudaStream_t current_stream[CU_MAX_DEVICES];

static bp_status check_index(int32_t index, const char *fn) {
  if (index < 0 || index >= cu_ndevices)
    return CU_ERR(BP_ERR_DEVICE, "cuda: %s: device index %d is out of range (%d devices)", fn,
                  (int)index, cu_ndevices);
  return BP_OK;
}

static bp_status set_device(int32_t index) {
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur == index) return BP_OK;
  return cu_check(cudaSetDevice(index), "cudaSetDevice");
}

bp_status cu_enter(int32_t index, cudaStream_t *out_stream) {
  bp_status st = check_index(index, "kernel");
  if (!st) st = set_device(index);
  if (st) return st;
  *out_stream = current_stream[index];
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* The caching allocator                                                    */
/* ------------------------------------------------------------------------ */

/* A block from cudaMalloc: live (in the table) or cached (in a list). */
typedef struct block {
  void *ptr;
  size_t size;          /* the rounded size actually allocated */
  int32_t device;
  cudaStream_t stream;  /* the stream it is reused on */
  struct block *next;   /* in the cache list */
} block;

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static block *cached;          /* freed blocks, newest first */
static block **live;           /* open-addressing table of live blocks by ptr */
static size_t live_cap, live_count;
static uint64_t stat_mallocs, stat_reuses;

/* Rounds a request to one of 4 sizes per power of two (at least 512
 * bytes), so that freed blocks fit later requests of about the same
 * size while wasting at most a quarter. */
static size_t round_size(size_t n) {
  if (n <= 512) return 512;
  size_t p = 512;
  while (p < n / 2 && p < ((size_t)1 << 62)) p <<= 1;
  /* p < n <= 2p: steps of p/4 */
  size_t q = p / 4;
  return (n + q - 1) / q * q;
}

static size_t hash_ptr(const void *p, size_t cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= UINT64_C(0x9e3779b97f4a7c15);
  return (size_t)(x >> 20) & (cap - 1);
}

/* Inserts b into the live table (alloc_lock held).  Returns false when
 * the table cannot grow. */
static bool live_insert(block *b) {
  if ((live_count + 1) * 2 > live_cap) {
    size_t ncap = live_cap ? live_cap * 2 : 256;
    block **nt = (block **)calloc(ncap, sizeof *nt);
    if (!nt) return false;
    for (size_t i = 0; i < live_cap; i++)
      if (live[i]) {
        size_t h = hash_ptr(live[i]->ptr, ncap);
        while (nt[h]) h = (h + 1) & (ncap - 1);
        nt[h] = live[i];
      }
    free(live);
    live = nt;
    live_cap = ncap;
  }
  size_t h = hash_ptr(b->ptr, live_cap);
  while (live[h]) h = (h + 1) & (live_cap - 1);
  live[h] = b;
  live_count++;
  return true;
}

/* Removes and returns the live block of ptr, or NULL (alloc_lock held). */
static block *live_remove(const void *ptr) {
  if (!live_cap) return NULL;
  size_t h = hash_ptr(ptr, live_cap);
  while (live[h] && live[h]->ptr != ptr) h = (h + 1) & (live_cap - 1);
  block *b = live[h];
  if (!b) return NULL;
  live[h] = NULL;
  live_count--;
  /* Re-insert the rest of the cluster (linear probing deletion). */
  for (size_t j = (h + 1) & (live_cap - 1); live[j]; j = (j + 1) & (live_cap - 1)) {
    block *m = live[j];
    live[j] = NULL;
    size_t k = hash_ptr(m->ptr, live_cap);
    while (live[k]) k = (k + 1) & (live_cap - 1);
    live[k] = m;
  }
  return b;
}

/* Frees the cached blocks of `device` (all devices for -1) whose stream is
 * `stream` (any stream when any_stream).  alloc_lock held; the caller has
 * made sure no work still uses them. */
static void release_cached(int32_t device, bool any_stream, cudaStream_t stream) {
  for (block **pp = &cached; *pp;) {
    block *b = *pp;
    if ((device < 0 || b->device == device) && (any_stream || b->stream == stream)) {
      *pp = b->next;
      int cur = -1;
      cudaGetDevice(&cur);
      if (cur != b->device) cudaSetDevice(b->device);
      cudaFree(b->ptr);
      free(b);
    } else {
      pp = &b->next;
    }
  }
}

static bp_status cuda_alloc(void *ud, int32_t index, size_t nbytes, void **out_ptr) {
  (void)ud;
  bp_status st = check_index(index, "alloc");
  if (!st) st = set_device(index);
  if (st) return st;
  cudaStream_t stream = current_stream[index];
  size_t size = round_size(nbytes);
  pthread_mutex_lock(&alloc_lock);
  block *b = NULL;
  for (block **pp = &cached; *pp; pp = &(*pp)->next)
    if ((*pp)->device == index && (*pp)->stream == stream && (*pp)->size == size) {
      b = *pp;
      *pp = b->next;
      stat_reuses++;
      break;
    }
  if (!b) {
    b = (block *)calloc(1, sizeof *b);
    if (!b) {
      pthread_mutex_unlock(&alloc_lock);
      return CU_ERR(BP_ERR_OUT_OF_MEMORY, "cuda: alloc: out of host memory");
    }
    cudaError_t err = cudaMalloc(&b->ptr, size);
    if (err == cudaErrorMemoryAllocation) {
      /* Give the cache back and try once more.  The failure is also the
       * thread's last CUDA error, which a successful retry would not
       * clear: cleared here, or the next op's launch check (cu_launched)
       * would report this handled failure as its own. */
      cudaGetLastError();
      cudaDeviceSynchronize();
      release_cached(index, true, NULL);
      err = cudaMalloc(&b->ptr, size);
    }
    if (err != cudaSuccess) {
      pthread_mutex_unlock(&alloc_lock);
      free(b);
      /* Now a status with its own message (size and device, which
       * cu_check's lacks): cleared as the last error, as cu_check does. */
      cudaGetLastError();
      return CU_ERR(err == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND,
                    "cuda: alloc: cudaMalloc of %zu bytes on cuda:%d failed: %s", size, (int)index,
                    cudaGetErrorString(err));
    }
    b->size = size;
    b->device = index;
    b->stream = stream;
    stat_mallocs++;
  }
  if (!live_insert(b)) {
    b->next = cached;
    cached = b;
    pthread_mutex_unlock(&alloc_lock);
    return CU_ERR(BP_ERR_OUT_OF_MEMORY, "cuda: alloc: out of host memory");
  }
  pthread_mutex_unlock(&alloc_lock);
  *out_ptr = b->ptr;
  return BP_OK;
}

static void cuda_free(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud;
  (void)index;
  (void)nbytes;
  if (!ptr) return;
  pthread_mutex_lock(&alloc_lock);
  block *b = live_remove(ptr);
  if (b) {
    b->next = cached;
    cached = b;
  }
  pthread_mutex_unlock(&alloc_lock);
}

/* ------------------------------------------------------------------------ */
/* "cuda": count, properties, copy, synchronize                             */
/* ------------------------------------------------------------------------ */

static bp_status cuda_count(void *ud, int32_t *out_count) {
  (void)ud;
  *out_count = cu_ndevices;
  return BP_OK;
}

static bp_status cuda_properties(void *ud, int32_t index, bp_device_props *out) {
  (void)ud;
  bp_status st = check_index(index, "properties");
  if (st) return st;
  cudaDeviceProp p;
  st = cu_check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  if (st) return st;
  if (BP_HAS_FIELD(out, bp_device_props, name)) {
    size_t n = strnlen(p.name, sizeof out->name - 1);
    memcpy(out->name, p.name, n);
    out->name[n] = '\0';
  }
  if (BP_HAS_FIELD(out, bp_device_props, total_memory)) out->total_memory = p.totalGlobalMem;
  if (BP_HAS_FIELD(out, bp_device_props, arch_minor)) {
    out->arch_major = p.major;
    out->arch_minor = p.minor;
  }
  if (BP_HAS_FIELD(out, bp_device_props, compute_units)) out->compute_units = p.multiProcessorCount;
  return BP_OK;
}

static bool is_cuda(bp_device d) { return d.type == BP_DEVICE_CUDA; }

/*
 * Copies between a CUDA device and host memory (pageable or pinned: with
 * unified addressing cudaMemcpyDefault handles both), or between two CUDA
 * devices.  Runs on the calling thread's current stream of the CUDA side
 * and waits for it, except device to device on one device, which stays
 * ordered on the stream without waiting.  Between two devices it runs on
 * the destination's stream, which does not order it after the source
 * device's work (cudaMemcpyPeerAsync waits for no other device), so the
 * source device's current stream, which may still be writing src, is
 * waited for first.
 */
static bp_status cuda_copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                           size_t nbytes) {
  (void)ud;
  int32_t index = is_cuda(dd) ? dd.index : sd.index;
  bp_status st = check_index(index, "copy");
  if (!st && is_cuda(dd) && is_cuda(sd)) st = check_index(sd.index, "copy");
  if (!st) st = set_device(index);
  if (st) return st;
  cudaStream_t s = current_stream[index];
  if (is_cuda(dd) && is_cuda(sd)) {
    if (dd.index == sd.index)
      return cu_check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s),
                      "copy: cudaMemcpyAsync device to device");
    st = set_device(sd.index);
    if (!st)
      st = cu_check(cudaStreamSynchronize(current_stream[sd.index]),
                    "copy: cudaStreamSynchronize of the source device's stream");
    if (!st) st = set_device(index);
    if (!st)
      st = cu_check(cudaMemcpyPeerAsync(dst, dd.index, src, sd.index, nbytes, s),
                    "copy: cudaMemcpyPeerAsync");
  } else {
    st = cu_check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, s),
                  is_cuda(dd) ? "copy: cudaMemcpyAsync host to device"
                              : "copy: cudaMemcpyAsync device to host");
  }
  if (!st) st = cu_check(cudaStreamSynchronize(s), "copy: cudaStreamSynchronize");
  return st;
}

static bp_status cuda_synchronize(void *ud, int32_t index) {
  (void)ud;
  bp_status st = check_index(index, "synchronize");
  if (!st) st = set_device(index);
  if (!st) st = cu_check(cudaDeviceSynchronize(), "synchronize: cudaDeviceSynchronize");
  return st;
}

/* ------------------------------------------------------------------------ */
/* Streams and events                                                       */
/* ------------------------------------------------------------------------ */

static bp_status cuda_stream_create(void *ud, int32_t index, void **out_stream) {
  (void)ud;
  bp_status st = check_index(index, "stream_create");
  if (!st) st = set_device(index);
  if (st) return st;
  cudaStream_t s;
  st = cu_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream_create");
  if (!st) *out_stream = (void *)s;
  return st;
}

static bp_status cuda_stream_destroy(void *ud, int32_t index, void *stream) {
  (void)ud;
  bp_status st = check_index(index, "stream_destroy");
  if (!st && !stream)
    st = CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: stream_destroy: the default stream (NULL) "
                                         "cannot be destroyed");
  if (!st) st = set_device(index);
  if (st) return st;
  cudaStream_t s = (cudaStream_t)stream;
  st = cu_check(cudaStreamSynchronize(s), "stream_destroy: cudaStreamSynchronize");
  if (st) return st;
  /* matmul's cuBLAS handle of the stream goes with it. */
  cu_matmul_stream_destroyed(index, s);
  pthread_mutex_lock(&alloc_lock);
  release_cached(index, false, s);
  /* Live blocks of the stream are reused on the default stream later. */
  for (size_t i = 0; i < live_cap; i++)
    if (live[i] && live[i]->stream == s) live[i]->stream = NULL;
  pthread_mutex_unlock(&alloc_lock);
  if (current_stream[index] == s) current_stream[index] = NULL;
  return cu_check(cudaStreamDestroy(s), "stream_destroy: cudaStreamDestroy");
}

static bp_status cuda_stream_get_current(void *ud, int32_t index, void **out_stream) {
  (void)ud;
  bp_status st = check_index(index, "stream_get_current");
  if (!st) *out_stream = (void *)current_stream[index];
  return st;
}

static bp_status cuda_stream_set_current(void *ud, int32_t index, void *stream) {
  (void)ud;
  bp_status st = check_index(index, "stream_set_current");
  if (!st) current_stream[index] = (cudaStream_t)stream;
  return st;
}

static bp_status cuda_stream_synchronize(void *ud, int32_t index, void *stream) {
  (void)ud;
  bp_status st = check_index(index, "stream_synchronize");
  if (!st) st = set_device(index);
  if (!st) st = cu_check(cudaStreamSynchronize((cudaStream_t)stream), "stream_synchronize");
  return st;
}

static bp_status cuda_event_create(void *ud, int32_t index, void **out_event) {
  (void)ud;
  bp_status st = check_index(index, "event_create");
  if (!st) st = set_device(index);
  if (st) return st;
  cudaEvent_t e;
  st = cu_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event_create");
  if (!st) *out_event = (void *)e;
  return st;
}

static bp_status cuda_event_destroy(void *ud, int32_t index, void *event) {
  (void)ud;
  bp_status st = check_index(index, "event_destroy");
  if (!st && !event) st = CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: event_destroy: event is NULL");
  if (!st) st = set_device(index);
  if (!st) st = cu_check(cudaEventDestroy((cudaEvent_t)event), "event_destroy");
  return st;
}

static bp_status cuda_event_record(void *ud, int32_t index, void *event, void *stream) {
  (void)ud;
  bp_status st = check_index(index, "event_record");
  if (!st && !event) st = CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: event_record: event is NULL");
  if (!st) st = set_device(index);
  if (!st)
    st = cu_check(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "event_record");
  return st;
}

static bp_status cuda_stream_wait_event(void *ud, int32_t index, void *stream, void *event) {
  (void)ud;
  bp_status st = check_index(index, "stream_wait_event");
  if (!st && !event)
    st = CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: stream_wait_event: event is NULL");
  if (!st) st = set_device(index);
  if (!st)
    st = cu_check(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0),
                  "stream_wait_event");
  return st;
}

static bp_status cuda_event_synchronize(void *ud, int32_t index, void *event) {
  (void)ud;
  bp_status st = check_index(index, "event_synchronize");
  if (!st && !event)
    st = CU_ERR(BP_ERR_INVALID_ARGUMENT, "cuda: event_synchronize: event is NULL");
  if (!st) st = set_device(index);
  if (!st) st = cu_check(cudaEventSynchronize((cudaEvent_t)event), "event_synchronize");
  return st;
}

static const bp_device_iface cuda_iface = {
    BP_DEVICE_IFACE_STRUCT_SIZE,
    "cuda",
    BP_DEVICE_CUDA,
    0,
    NULL,
    cuda_count,
    cuda_properties,
    cuda_alloc,
    cuda_free,
    cuda_copy,
    cuda_synchronize,
    cuda_stream_create,
    cuda_stream_destroy,
    cuda_stream_get_current,
    cuda_stream_set_current,
    cuda_stream_synchronize,
    cuda_event_create,
    cuda_event_destroy,
    cuda_event_record,
    cuda_stream_wait_event,
    cuda_event_synchronize,
    NULL,
};

/* ------------------------------------------------------------------------ */
/* "cuda_host": pinned host memory                                          */
/* ------------------------------------------------------------------------ */

static bp_status host_count(void *ud, int32_t *out_count) {
  (void)ud;
  *out_count = cu_ndevices > 0 ? 1 : 0;
  return BP_OK;
}

static bp_status host_alloc(void *ud, int32_t index, size_t nbytes, void **out_ptr) {
  (void)ud;
  if (index != 0 || cu_ndevices == 0)
    return CU_ERR(BP_ERR_DEVICE, "cuda_host: alloc: device index %d is out of range (%d devices)",
                  (int)index, cu_ndevices > 0 ? 1 : 0);
  void *p = NULL;
  bp_status st = cu_check(cudaHostAlloc(&p, nbytes, cudaHostAllocPortable),
                          "cuda_host alloc: cudaHostAlloc");
  if (!st) *out_ptr = p;
  return st;
}

static void host_free(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud;
  (void)index;
  (void)nbytes;
  if (ptr) cudaFreeHost(ptr);
}

/* Both sides are host memory here (a copy with "cuda" goes through the
 * "cuda" type's copy). */
static bp_status host_copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                           size_t nbytes) {
  (void)ud;
  (void)dd;
  (void)sd;
  memmove(dst, src, nbytes);
  return BP_OK;
}

static bp_status host_synchronize(void *ud, int32_t index) {
  (void)ud;
  (void)index;
  return BP_OK;
}

static const bp_device_iface host_iface = {
    BP_DEVICE_IFACE_STRUCT_SIZE,
    "cuda_host",
    BP_DEVICE_CUDA_HOST,
    BP_DEVICE_HOST_VISIBLE,
    NULL,
    host_count,
    NULL,
    host_alloc,
    host_free,
    host_copy,
    host_synchronize,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL,
};

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */
/* ------------------------------------------------------------------------ */

/* Grid-stride kernels launch at most this many waves of resident blocks
 * (BP_CUDA_WAVES, for benchmarks; default 1: one block per resident slot,
 * each looping over its share). */
static int grid_waves = 1;

/* Reads BP_CUDA_WAVES: an integer from 1 to 64.  A malformed value fails
 * the load with a message that names it. */
static bp_status read_waves(void) {
  grid_waves = 1;
  const char *v = getenv("BP_CUDA_WAVES");
  if (!v || !*v) return BP_OK;
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < 1 || n > 64)
    return CU_ERR(BP_ERR_INVALID_ARGUMENT,
                  "cuda: BP_CUDA_WAVES: expected an integer from 1 to 64, got '%s'", v);
  grid_waves = (int)n;
  return BP_OK;
}

/* Counts the devices; without any, records why. */
static void probe_devices(void) {
  cu_ndevices = 0;
  no_device_reason[0] = '\0';
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    /* Kept as the note below, not as the thread's last CUDA error, which
     * a later launch check of this thread would otherwise report.  (An
     * error such as cudaErrorInsufficientDriver stays: every later call
     * returns it, and with 0 devices no kernel runs.) */
    cudaGetLastError();
    snprintf(no_device_reason, sizeof no_device_reason,
             "cuda: 0 devices: cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(err),
             cudaGetErrorName(err));
    return;
  }
  if (n == 0) {
    snprintf(no_device_reason, sizeof no_device_reason, "cuda: 0 devices: no CUDA GPU was found");
    return;
  }
  if (n > CU_MAX_DEVICES) n = CU_MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    int sms = 0, per_sm = 0, major = 0;
    /* A property that cannot be read keeps its fallback (1 SM, 8 blocks
     * an SM, no PDL); the failure is not left as the thread's last CUDA
     * error, which the next op's launch check would report as its own. */
    bool failed = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, i) != cudaSuccess;
    failed |= cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, i) !=
              cudaSuccess;
    failed |= cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, i) != cudaSuccess;
    if (failed) cudaGetLastError();
    cu_devices[i].sm_count = sms;
    cu_devices[i].cc_major = major;
    cu_devices[i].max_blocks = sms * (per_sm > 0 ? per_sm / CU_THREADS : 8) * grid_waves;
  }
  cu_ndevices = n;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  if (!BP_HOST_HAS(host, op_meta))
    return host->set_error(BP_ERR_VERSION, "cuda: the host lacks op_meta, which the kernels need");
  if (host->core_op_set_version < BP_CORE_OP_SET_VERSION)
    return host->set_errorf(BP_ERR_VERSION,
                            "cuda: the host defines core op set %llu, this plugin implements %d",
                            (unsigned long long)host->core_op_set_version, BP_CORE_OP_SET_VERSION);
  bp_status st = read_waves();
  if (st) return st;
  probe_devices();
  int32_t type;
  st = host->device_type(reg, &cuda_iface, &type);
  if (!st) st = host->device_type(reg, &host_iface, &type);
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib = NULL;
  if (!st) st = host->library(reg, &ld, &lib);
  if (!st) st = cu_register_binary(lib);
  if (!st) st = cu_register_unary(lib);
  if (!st) st = cu_register_compare(lib);
  if (!st) st = cu_register_elementwise(lib);
  if (!st) st = cu_register_reduce(lib);
  if (!st) st = cu_register_nn(lib);
  if (!st) st = cu_register_index(lib);
  if (!st) st = cu_register_scan(lib);
  if (!st) st = cu_register_sort(lib);
  if (!st) st = cu_register_matmul(lib);
  if (st) return st;
  if (cu_ndevices == 0) {
    const char *v = getenv("BP_CUDA_VERBOSE");
    if (v && *v && strcmp(v, "0") != 0) fprintf(stderr, "%s\n", no_device_reason);
    /* A note, not a failure: the load succeeds. */
    host->set_error(BP_OK, no_device_reason);
  }
  return BP_OK;
}

static void teardown(const bp_host_api *host) {
  (void)host;
  cu_matmul_shutdown();
  pthread_mutex_lock(&alloc_lock);
  if (cu_ndevices > 0) {
    for (int i = 0; i < cu_ndevices; i++) {
      if (cudaSetDevice(i) == cudaSuccess) cudaDeviceSynchronize();
    }
    release_cached(-1, true, NULL);
  }
  /* The host frees every tensor before a plugin unloads; a block still
   * live would be a leak of the host's. */
  for (size_t i = 0; i < live_cap; i++) free(live[i]);
  free(live);
  live = NULL;
  live_cap = live_count = 0;
  pthread_mutex_unlock(&alloc_lock);
  const char *v = getenv("BP_CUDA_VERBOSE");
  if (v && *v && strcmp(v, "0") != 0)
    fprintf(stderr, "cuda: allocator: %llu cudaMalloc calls, %llu reuses; matmul: %s\n",
            (unsigned long long)stat_mallocs, (unsigned long long)stat_reuses, cu_matmul_path());
}

static const bp_plugin_desc desc = {
    BP_PLUGIN_DESC_STRUCT_SIZE,
    BP_ABI_VERSION_MAJOR,
    BP_ABI_VERSION_MINOR,
    "cuda",
    "Backplane",
    "0.1.0",
    BP_CORE_OP_SET_VERSION,
    0,
    setup,
    teardown,
    NULL,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  if (!host || host->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  cu_host = host;
  return &desc;
}
