/*
 * plugins/cuda/blas_handles.h - the cuBLAS handles of matmul, one per
 * (device, stream) pair.  Host code, also run by tests/cuda/test-cuda-functors
 * with handles of its own.
 *
 * Why one per stream: each thread launches on its own current stream, so
 * two threads may run GEMMs on two streams at the same time.  With one
 * handle per device, each call would first point the handle at its
 * stream (cublasSetStream), and the two GEMMs would then use the same
 * workspace, the handle's default one (cublasSetStream "unconditionally
 * resets the cuBLAS library workspace back to the default workspace
 * pool"), while they execute concurrently on the GPU.  A lock around
 * cublasSetStream and the GEMM would only order the two submissions on
 * the host: the kernels would still overlap on the GPU, both using that
 * workspace.  The cuBLAS documentation ("Thread Safety", "Results
 * reproducibility", cublasSetStream, cublasSetWorkspace) advises against
 * sharing a handle between threads that change its configuration, and
 * gives two ways to run on several concurrent streams: a workspace per
 * stream (cublasSetWorkspace) or a handle per stream.  The plugin takes
 * the second: a handle is created for a (device, stream) pair the first
 * time a GEMM runs there, bound to that stream once, and never changed,
 * so that threads on the same stream may share it (their GEMMs are
 * ordered on the stream, and so are their uses of its workspace).
 *
 * A pair's handle is destroyed when its stream is (the stream's handle
 * may be reused by a later cudaStreamCreate), and all of them at unload.
 * As with the stream itself, no thread may still be running a matmul on
 * a stream that is being destroyed.  The table itself is not locked:
 * matmul.cu holds its lock around these functions, and not around the
 * GEMM, which uses the handle it was given.
 */
#ifndef BP_PLUGINS_CUDA_BLAS_HANDLES_H
#define BP_PLUGINS_CUDA_BLAS_HANDLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct cu_blas_entry {
  int32_t device;
  void *stream; /* the cudaStream_t (NULL: the default stream) */
  void *handle; /* the cublasHandle_t */
} cu_blas_entry;

typedef struct cu_blas_table {
  cu_blas_entry *e;
  size_t n, cap;
} cu_blas_table;

/* Creates the handle of (device, stream) into *out, bound to the stream;
 * returns 0 or a nonzero cublasStatus_t. */
typedef int (*cu_blas_create_fn)(void *ud, int32_t device, void *stream, void **out);
/* Destroys a handle that cu_blas_create_fn made for (device, stream). */
typedef void (*cu_blas_destroy_fn)(void *ud, int32_t device, void *handle);

/* cu_blas_get's result when the table cannot grow (no host memory). */
#define CU_BLAS_NO_MEMORY (-1)

/*
 * The handle of (device, stream) in *out: the table's, or a new one made
 * by create and added.  Returns 0, create's nonzero status (nothing is
 * added), or CU_BLAS_NO_MEMORY (the new handle is destroyed again).
 */
static inline int cu_blas_get(cu_blas_table *t, int32_t device, void *stream,
                              cu_blas_create_fn create, cu_blas_destroy_fn destroy, void *ud,
                              void **out) {
  for (size_t i = 0; i < t->n; i++)
    if (t->e[i].device == device && t->e[i].stream == stream) {
      *out = t->e[i].handle;
      return 0;
    }
  void *h = NULL;
  int rc = create(ud, device, stream, &h);
  if (rc != 0) return rc;
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 8;
    cu_blas_entry *ne = (cu_blas_entry *)realloc(t->e, ncap * sizeof *ne);
    if (!ne) {
      destroy(ud, device, h);
      return CU_BLAS_NO_MEMORY;
    }
    t->e = ne;
    t->cap = ncap;
  }
  t->e[t->n].device = device;
  t->e[t->n].stream = stream;
  t->e[t->n].handle = h;
  t->n++;
  *out = h;
  return 0;
}

/*
 * Destroys and removes the handles of `device` (every device when it is
 * negative) whose stream is `stream` (any stream when any_stream).
 * Returns how many were destroyed.  With device < 0 and any_stream, the
 * table is left empty and its memory freed.
 */
static inline size_t cu_blas_forget(cu_blas_table *t, int32_t device, bool any_stream,
                                    void *stream, cu_blas_destroy_fn destroy, void *ud) {
  size_t kept = 0, gone = 0;
  for (size_t i = 0; i < t->n; i++) {
    cu_blas_entry e = t->e[i];
    if ((device < 0 || e.device == device) && (any_stream || e.stream == stream)) {
      destroy(ud, e.device, e.handle);
      gone++;
    } else {
      t->e[kept++] = e;
    }
  }
  t->n = kept;
  if (t->n == 0) {
    free(t->e);
    t->e = NULL;
    t->cap = 0;
  }
  return gone;
}

#endif /* BP_PLUGINS_CUDA_BLAS_HANDLES_H */
