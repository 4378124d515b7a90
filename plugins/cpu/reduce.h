/*
 * plugins/cpu/reduce.h - what the reductions' two paths share: the plan
 * of a call, a running or partial result, and the steps both take
 * (reduce.c: the plan, the row path and these steps; reduce_cols.c: the
 * column path).
 */
#ifndef BP_CPU_REDUCE_H
#define BP_CPU_REDUCE_H

#include "cpu.h"

enum { OP_SUM = 1, OP_MEAN, OP_AMAX, OP_AMIN, OP_ARGMAX };

/* What elements are converted to while they are combined. */
enum { ACC_F32, ACC_F64, ACC_I64 };

#define LANES 32      /* independent accumulators of the vector kernels */
#define BLOCK 4096    /* elements summed in float lanes per double addition */
#define CHUNK 1024    /* elements converted into a buffer at a time */
#define COLS 4096     /* outputs reduced together on the column path */
#define COL_FLUSH 128 /* column rows summed in lanes per double addition */

typedef struct plan {
  int op, acc;
  int32_t in_dt;   /* the input's dtype */
  int32_t conv_dt; /* the dtype each element is converted to first */
  int32_t out_dt;
  int64_t isz, osz;
  const char *in;
  char *out;
  int nk, nr;                           /* kept and reduced dimensions */
  int64_t ksize[BP_MAX_NDIM], kstride[BP_MAX_NDIM]; /* outermost first; bytes */
  int64_t rsize[BP_MAX_NDIM], rstride[BP_MAX_NDIM];
  int64_t nout, nred;
  int64_t pieces; /* parts each output's reduced range is split into */
} plan;

/* The running or partial result of one output's reduction. */
typedef struct part {
  double f;   /* float accumulators: the sum, or the max/min (NaN sticks) */
  uint64_t u; /* integer sum, wrapping */
  int64_t i;  /* integer max/min */
  int64_t idx; /* argmax: flat index of the best element */
  bool seen;  /* max/min/argmax: f or i holds a value */
  bool done;  /* argmax found a NaN: nothing later can win */
} part;

/* n contiguous elements of the accumulator's type: the input itself when
 * it can be read in place, else a converted copy in buf (room for n
 * elements of 8 bytes). */
const void *cpu_reduce_load(const plan *p, const char *src, int64_t stride, int64_t n,
                            void *buf);
/* Folds the partial result x, which covers later elements, into st. */
void cpu_reduce_combine(const plan *p, part *st, const part *x);
/* Writes the final result of output o. */
void cpu_reduce_store(const plan *p, int64_t o, const part *st);
/* The input address of output o's first element. */
const char *cpu_reduce_output_base(const plan *p, int64_t o);

/* The column path (reduce_cols.c): when the innermost kept dimension is
 * contiguous in the input, blocks of COLS neighbouring outputs reduced
 * together. */
bp_status cpu_reduce_columns(plan *p);

#endif /* BP_CPU_REDUCE_H */
