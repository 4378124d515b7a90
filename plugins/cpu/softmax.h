/*
 * plugins/cpu/softmax.h - what softmax.c and softmax_cols.c share: the
 * plan of a softmax call, where its rows start, and the column paths.
 */
#ifndef BP_PLUGINS_CPU_SOFTMAX_H
#define BP_PLUGINS_CPU_SOFTMAX_H

#include <stdatomic.h>

#include "cpu.h"
#include "vmath.h"

/* softmax's exponent x - max is never positive, so the cheaper form of
 * vmath.h's exp does (subnormal results are 0, within the tolerance). */
#define exp_f32 vm_exp_neg_f32

typedef struct softmax_job {
  bool log;
  int32_t dt;
  int64_t isz;
  const char *in;
  char *out;
  int32_t ndim;           /* the other dimensions, outermost first */
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM]; /* input, in bytes */
  int64_t len, stride;    /* the softmax dimension: length, input stride */
  int64_t inner;          /* elements after it, the output's stride along it */
  bool stream;            /* the result is written with non-temporal stores */
  atomic_bool failed;
} softmax_job;

/* Rows of a strided softmax dimension gathered and computed together. */
#define ROWS 16

static inline const char *row_src(const softmax_job *j, int64_t r) {
  const char *src = j->in;
  for (int32_t d = j->ndim - 1; d >= 0; d--) {
    src += r % j->sizes[d] * j->strides[d];
    r /= j->sizes[d];
  }
  return src;
}

/* Row r is (outer o, inner i): its output starts at element o*len*inner + i
 * and steps by inner. */
static inline char *row_dst(const softmax_job *j, int64_t r) {
  return j->out + (r / j->inner * j->len * j->inner + r % j->inner) * j->isz;
}

/* The column paths (softmax_cols.c), for softmax along a dimension
 * followed by contiguous ones: blocks of COLS neighbouring columns read
 * twice (cpu_softmax_cols), or of BUF_COLS columns copied through a buffer
 * of at most BUF_MAX bytes (cpu_softmax_cols_buf).  Each runs the blocks
 * [begin, end) of a cpu_parallel_for whose ctx is the job. */
#define COLS 128
#define BUF_COLS 64
#define BUF_MAX ((int64_t)2 << 20)
void cpu_softmax_cols_buf(void *ctx, int64_t begin, int64_t end);
void cpu_softmax_cols(void *ctx, int64_t begin, int64_t end);

#endif /* BP_PLUGINS_CPU_SOFTMAX_H */
