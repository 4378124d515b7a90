/*
 * plugins/cuda/reduce_plan.h - how reduce.cu shares a planned reduction
 * out among blocks: the column or the row kernel, the slices of each
 * output's reduced range, and the row kernel's launches, which keep within
 * the grid's limits (gridDim.x at most 2^31 - 1, gridDim.y at most 65535).
 * Host code, also run by tests/cuda/test-cuda-functors.
 */
#ifndef BP_PLUGINS_CUDA_REDUCE_PLAN_H
#define BP_PLUGINS_CUDA_REDUCE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/abi.h>

/* The plan, passed to kernels by value.  Strides in elements. */
struct RPlan {
  int nk, nr;
  int64_t ksize[BP_MAX_NDIM], kstride[BP_MAX_NDIM];
  int64_t rsize[BP_MAX_NDIM], rstride[BP_MAX_NDIM];
  int64_t nout, nred;
  int64_t chunk; /* reduced elements per slice (rows) */
  int splits;    /* slices per output */
  int64_t obase; /* the output of the row kernel's block x = 0 */
};

#define CU_GRID_X_MAX INT64_C(2147483647)
#define CU_GRID_Y_MAX INT64_C(65535)

/*
 * Plans p->splits and p->chunk (p->nout and p->nred set) for a device of
 * `sms` SMs; `slice` is BP_CUDA_REDUCE's slice=N, 0 for the default.
 * Returns whether the column kernel runs (the innermost kept dimension is
 * contiguous and has at least 32 outputs).  Splits stay within gridDim.y.
 */
static inline bool cu_reduce_split(RPlan *p, int64_t sms, int64_t slice) {
  bool columns = p->nk > 0 && p->kstride[p->nk - 1] == 1 && p->ksize[p->nk - 1] >= 32;
  int64_t splits = 1;
  if (columns) {
    /* Enough threads to fill the GPU: about 2048 per SM. */
    int64_t want = (sms * 2048 + p->nout - 1) / p->nout, most = (p->nred + 31) / 32;
    splits = want < most ? want : most;
    if (splits > CU_GRID_Y_MAX) splits = CU_GRID_Y_MAX;
    if (splits < 1) splits = 1;
    p->chunk = (p->nred + splits - 1) / splits;
  } else {
    if (p->nout < sms * 4) {
      int64_t want = (sms * 8 + p->nout - 1) / p->nout, most = (p->nred + 8191) / 8192;
      if (slice > 0) {
        want = (p->nred + slice - 1) / slice;
        most = (p->nred + 4095) / 4096; /* slices are at least 4096 elements */
      }
      splits = want < most ? want : most;
      if (splits > CU_GRID_Y_MAX) splits = CU_GRID_Y_MAX;
      if (splits < 1) splits = 1;
    }
    /* Slices of whole 4096-element blocks keep vector loads aligned. */
    p->chunk = (p->nred + splits - 1) / splits;
    if (splits > 1) p->chunk = (p->chunk + 4095) / 4096 * 4096;
  }
  if (p->chunk < 1) p->chunk = 1;
  splits = (p->nred + p->chunk - 1) / p->chunk;
  if (splits < 1) splits = 1;
  p->splits = (int)splits;
  return columns;
}

/* The row kernel's blocks along x in the launch whose first output is
 * `base` (a block per output): the outputs left, at most gridDim.x's
 * limit, so that a reduction to more outputs takes several launches. */
static inline int64_t cu_rows_launch(const RPlan *p, int64_t base) {
  int64_t left = p->nout - base;
  return left < CU_GRID_X_MAX ? left : CU_GRID_X_MAX;
}

/* Whether the kernel that combines the slices may be launched with
 * programmatic dependent launch (BP_CUDA_REDUCE finish=pdl) on a device of
 * compute capability major `cc_major` running an image whose PTX
 * architecture is `ptx_version` (cudaFuncAttributes::ptxVersion: 90 for
 * compute_90).  The kernel's griddepcontrol.wait, without which it could
 * read the partials before they are written, exists only in images built
 * for compute_90 or later, and a device of 9.0 or later may run an older
 * one (a build for sm_80 alone runs on an H100 from the compute_80 PTX). */
static inline bool cu_reduce_pdl(int cc_major, int ptx_version) {
  return cc_major >= 9 && ptx_version >= 90;
}

#endif /* BP_PLUGINS_CUDA_REDUCE_PLAN_H */
