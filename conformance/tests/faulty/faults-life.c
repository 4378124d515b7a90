/*
 * conformance/tests/faulty/faults-life.c - faults of what a successful
 * call leaves behind, for the shim corpus (shim.h): results that are
 * loans rather than values (lifetime), and a success that still reports
 * an error or prints (hygiene).  A plugin is built with one
 * -DFAULT_<NAME>; corpus.tsv lists them.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"

typedef int faults_life_unit; /* the unit is never empty */

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                 */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_SIGMOID_ARENA)
/* To save an allocation per call, a float32 result of up to 1 KiB is
 * written into an arena allocated at load and handed out as a view of
 * its start: a bump allocator reset at every call.  The caller's result
 * is overwritten by the next small call's. */
#define ARENA_FLOATS 256
static bp_tensor *arena;
static void arena_setup(void) {
  int64_t n = ARENA_FLOATS;
  if (shim_host->tensor_empty(bp_device_make(BP_DEVICE_CPU, 0), BP_FLOAT32, 1, &n, &arena))
    arena = NULL;
}
static void arena_teardown(void) {
  shim_host->tensor_release(arena);
  arena = NULL;
}
SHIM_KERNEL(sigmoid_arena) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  bp_tensor *r = rets[0].u.tensor;
  const bp_tensor_view *v = shim_view(r);
  if (!arena || v->dtype != BP_FLOAT32 || v->numel == 0 || v->numel > ARENA_FLOATS) return BP_OK;
  bp_tensor *slot;
  int64_t strides[BP_MAX_NDIM], s = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) strides[d] = s, s *= v->sizes[d];
  if (shim_host->tensor_as_strided(arena, v->ndim, v->sizes, strides, 0, &slot)) return BP_OK;
  if (shim_host->tensor_copy(slot, r) != BP_OK) {
    shim_host->tensor_release(slot);
    return BP_OK;
  }
  shim_host->tensor_release(r);
  rets[0].u.tensor = slot;
  return BP_OK;
}
const shim_fault shim_the_fault = {"sigmoid_arena", "sigmoid", sigmoid_arena, arena_setup,
                                   arena_teardown};
#endif

#if defined(FAULT_MATMUL_BETA_ONE)
/* A 2-D float32 product calls the GEMM with beta = 1 on the result it has
 * just allocated: C = A B + C, adding to whatever the memory held, which
 * is zeros when it comes fresh from the system. */
SHIM_KERNEL(matmul_beta_one) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *a = SHIM_ARG(0), *b = SHIM_ARG(1), *r = SHIM_RET();
  if (a->ndim != 2 || b->ndim != 2 || r->dtype != BP_FLOAT32) return BP_OK;
  bp_tensor *c;
  if (shim_alloc_result(ctx, args, nargs, &c) != BP_OK) return BP_OK;
  const bp_tensor_view *o = shim_view(c);
  /* both contiguous: the meta function's layout */
  for (int64_t k = 0; k < o->numel; k++) ((float *)o->data)[k] += ((const float *)r->data)[k];
  shim_host->tensor_release(rets[0].u.tensor);
  return shim_return(rets, c);
}
const shim_fault shim_the_fault = {"matmul_beta_one", "matmul", matmul_beta_one, NULL, NULL};
#endif

#if defined(FAULT_MATMUL_PACK_CACHE)
/* A 2-D float32 `other` is packed row-major once and the copy kept, keyed
 * by the tensor's data pointer and shape (a weight cache, as inference
 * libraries keep): a later `other` at the same address and of the same
 * shape uses the copy, whatever its values now are. */
static pthread_mutex_t pack_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *pack_key;
static int64_t pack_sizes[2], pack_strides[2];
static float *packed;
static void pack_teardown(void) {
  free(packed);
  packed = NULL;
  pack_key = NULL;
}
SHIM_KERNEL(matmul_pack_cache) {
  const bp_tensor_view *b = SHIM_ARG(1);
  if (SHIM_ARG(0)->ndim != 2 || b->ndim != 2 || b->dtype != BP_FLOAT32 || b->numel == 0)
    return shim_real(ctx, args, nargs, rets, nrets);
  bp_tensor *copy;
  bp_status st = shim_host->tensor_empty(b->device, BP_FLOAT32, 2, b->sizes, &copy);
  if (st) return st;
  float *dst = shim_view(copy)->data;
  pthread_mutex_lock(&pack_lock);
  bool hit = pack_key == b->data && pack_sizes[0] == b->sizes[0] && pack_sizes[1] == b->sizes[1] &&
             pack_strides[0] == b->strides[0] && pack_strides[1] == b->strides[1];
  if (!hit) {
    float *grown = realloc(packed, (size_t)b->numel * sizeof *packed);
    if (grown) {
      packed = grown;
      const float *src = b->data;
      for (int64_t i = 0; i < b->sizes[0]; i++)
        for (int64_t j = 0; j < b->sizes[1]; j++)
          packed[i * b->sizes[1] + j] = src[i * b->strides[0] + j * b->strides[1]];
      pack_key = b->data;
      for (int d = 0; d < 2; d++) pack_sizes[d] = b->sizes[d], pack_strides[d] = b->strides[d];
    }
  }
  bool have = packed && pack_key == b->data;
  if (have) memcpy(dst, packed, (size_t)b->numel * sizeof *dst);
  pthread_mutex_unlock(&pack_lock);
  if (!have) {
    shim_host->tensor_release(copy);
    return shim_real(ctx, args, nargs, rets, nrets);
  }
  SHIM_COPY_ARGS(av);
  av[1] = shim_tensor_arg(copy);
  st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(copy);
  return st;
}
const shim_fault shim_the_fault = {"matmul_pack_cache", "matmul", matmul_pack_cache, NULL,
                                   pack_teardown};
#endif

/* ------------------------------------------------------------------------ */
/* Hygiene                                                                  */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_SOFTMAX_STALE_ERROR)
/* Its fast path takes inputs whose last dim is contiguous; for any other
 * it records why with set_error(), takes the general path, and returns
 * BP_OK with the error still set. */
SHIM_KERNEL(softmax_stale_error) {
  const bp_tensor_view *x = SHIM_ARG(0);
  if (x->ndim > 0 && x->sizes[x->ndim - 1] > 1 && x->strides[x->ndim - 1] != 1)
    shim_host->set_errorf(BP_ERR_UNSUPPORTED, "%s: fast path: the last dim has stride %lld, not 1",
                          ctx->op_name, (long long)x->strides[x->ndim - 1]);
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"softmax_stale_error", "softmax", softmax_stale_error, NULL,
                                   NULL};
#endif

#if defined(FAULT_LAYER_NORM_PRINTF)
/* A debug line left in the path for rows longer than 64 elements. */
SHIM_KERNEL(layer_norm_printf) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  const bp_tensor_view *x = SHIM_ARG(0);
  int64_t row = 1;
  for (uint32_t i = 0; i < args[1].len; i++) row *= args[1].u.ints[i];
  if (!st && row > 64)
    printf("layer_norm: %lld rows of %lld\n", (long long)(x->numel / row), (long long)row);
  return st;
}
const shim_fault shim_the_fault = {"layer_norm_printf", "layer_norm", layer_norm_printf, NULL,
                                   NULL};
#endif
