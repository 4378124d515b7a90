/*
 * plugins/cpu/layer_norm.h - what layer_norm.c and layer_norm_cols.c
 * share: the plan of a layer_norm call and the column paths.
 */
#ifndef BP_PLUGINS_CPU_LAYER_NORM_H
#define BP_PLUGINS_CPU_LAYER_NORM_H

#include <stdatomic.h>

#include "cpu.h"

typedef struct norm_job {
  int32_t dt;
  int64_t isz;
  const char *in;
  char *out;
  int64_t n;         /* elements per row */
  double eps;
  int32_t nlead;     /* leading (row) dimensions */
  int64_t lsizes[BP_MAX_NDIM], lstrides[BP_MAX_NDIM]; /* bytes */
  int32_t ntrail;    /* trailing (normalised) dimensions; 0 when contiguous */
  int64_t tsizes[BP_MAX_NDIM], tstrides[BP_MAX_NDIM];
  const void *w, *b; /* contiguous float (or double for float64), or NULL */
  int32_t vdim;      /* a leading dimension of stride 1 (neighbouring rows), or -1 */
  bool stream;       /* the result is written with non-temporal stores */
  atomic_bool failed;
} norm_job;

/* Normalises a row x of n elements of the computing type (float, or
 * double for float64), contiguous, into y (which may be x), or when y is
 * NULL streams the result to dst (float32 and float64).  ahead: the next
 * row, prefetched during the second pass, or NULL. */
void cpu_norm_row(const norm_job *j, const void *x, void *y, void *dst, const void *ahead);

/* Runs the rows of a job whose vdim is set (neighbouring rows that are
 * neighbours in memory), `outer` groups of lsizes[vdim] rows, in blocks of
 * neighbouring rows on the pool (layer_norm_cols.c).  Sets j->failed when
 * out of memory. */
void cpu_norm_cols(norm_job *j, int64_t outer);

#endif /* BP_PLUGINS_CPU_LAYER_NORM_H */
