/*
 * conformance/tests/faulty/faults-oom.c - faults that only a host out of
 * memory shows, for the shim corpus (shim.h): each kernel is right
 * whenever the host's allocations succeed.  A plugin is built with one
 * -DFAULT_<NAME>; corpus.tsv lists them.
 */
#include <stdio.h>

#include "shim.h"

typedef int faults_oom_unit; /* the unit is never empty */

#if defined(FAULT_SOFTMAX_WS_UNCHECKED)
/* Stages its input in a contiguous workspace allocated through the host,
 * and never checks that allocation's status: with no memory, the
 * workspace's view is NULL and the kernel reads through it. */
SHIM_KERNEL(softmax_ws_unchecked) {
  const bp_tensor_view *a = SHIM_ARG(0);
  bp_tensor *ws = NULL;
  (void)shim_host->tensor_empty(a->device, a->dtype, a->ndim, a->sizes, &ws);
  const bp_tensor_view *w = shim_host->tensor_view(ws);
  if (w->numel > 0) (void)shim_host->tensor_copy(ws, args[0].u.tensor);
  SHIM_COPY_ARGS(av);
  av[0] = shim_tensor_arg(ws);
  bp_status st = shim_real(ctx, av, nargs, rets, nrets);
  shim_host->tensor_release(ws);
  return st;
}
const shim_fault shim_the_fault = {"softmax_ws_unchecked", "softmax", softmax_ws_unchecked, NULL,
                                   NULL};
#endif

#if defined(FAULT_MUL_OOM_BACKEND)
/* Reports a failed allocation as a device error of its own, the way a
 * vendor's kernel wraps its runtime's out-of-memory: the host's
 * BP_ERR_OUT_OF_MEMORY becomes BP_ERR_BACKEND "mul: device allocation
 * failed", which a framework cannot tell from a broken device (and so
 * does not free memory and retry). */
SHIM_KERNEL(mul_oom_backend) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st == BP_ERR_OUT_OF_MEMORY)
    return shim_host->set_error(BP_ERR_BACKEND, "mul: device allocation failed");
  return st;
}
const shim_fault shim_the_fault = {"mul_oom_backend", "mul", mul_oom_backend, NULL, NULL};
#endif

#if defined(FAULT_SUM_STAGE_LEAK)
/* Stages its input in a contiguous copy, then returns at once when the
 * result cannot be allocated, without releasing the copy: a tensor and its
 * memory leak with every call that runs out of memory.  Its other error
 * paths release the copy. */
SHIM_KERNEL(sum_stage_leak) {
  const bp_tensor_view *a = SHIM_ARG(0);
  bp_tensor *stage;
  bp_status st = shim_host->tensor_empty(a->device, a->dtype, a->ndim, a->sizes, &stage);
  if (st) return st;
  st = shim_host->tensor_copy(stage, args[0].u.tensor);
  if (st) {
    shim_host->tensor_release(stage);
    return st;
  }
  SHIM_COPY_ARGS(av);
  av[0] = shim_tensor_arg(stage);
  st = shim_real(ctx, av, nargs, rets, nrets);
  if (st == BP_ERR_OUT_OF_MEMORY) return st; /* the leak: `stage` */
  shim_host->tensor_release(stage);
  return st;
}
const shim_fault shim_the_fault = {"sum_stage_leak", "sum", sum_stage_leak, NULL, NULL};
#endif
