/*
 * plugins/cpu/reduce_cols.c - the column path of the reductions
 * (reduce.h): when the innermost kept dimension is contiguous in the input
 * (sum(dim=0) of a matrix), a block of neighbouring outputs is reduced
 * together, each reduced position adding a contiguous slice of the input
 * to a block of lanes.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"

/* Column path: lanes[j] op= x[j] for j < w. */
static CPU_CLONES void cols_add_f32(float *acc, const float *x, int64_t w) {
  for (int64_t j = 0; j < w; j++) acc[j] += x[j];
}
static CPU_CLONES void cols_add_f64(double *acc, const double *x, int64_t w) {
  for (int64_t j = 0; j < w; j++) acc[j] += x[j];
}
static CPU_CLONES void cols_add_i64(uint64_t *acc, const int64_t *x, int64_t w) {
  for (int64_t j = 0; j < w; j++) acc[j] += (uint64_t)x[j];
}

#define DEFINE_COLS_EXTREME(name, T)                                                     \
  static CPU_CLONES void name(T *m, const T *x, int64_t w, bool want_max) {              \
    if (want_max)                                                                        \
      for (int64_t j = 0; j < w; j++) m[j] = (x[j] > m[j] || x[j] != x[j]) ? x[j] : m[j];  \
    else                                                                                 \
      for (int64_t j = 0; j < w; j++) m[j] = (x[j] < m[j] || x[j] != x[j]) ? x[j] : m[j];  \
  }

DEFINE_COLS_EXTREME(cols_extreme_f32, float)
DEFINE_COLS_EXTREME(cols_extreme_f64, double)
DEFINE_COLS_EXTREME(cols_extreme_i64, int64_t)

/* ------------------------------------------------------------------------ */
/* The column path                                                          */
/* ------------------------------------------------------------------------ */

/* Lanes of a block of COLS outputs. */
typedef struct cols {
  union {
    float f32[COLS];
    double f64[COLS];
    uint64_t u64[COLS];
    int64_t i64[COLS];
  } acc;
  double total[COLS]; /* float sums, flushed from acc every COL_FLUSH rows */
  int64_t idx[COLS];  /* argmax */
  part res[COLS];     /* the results of one block */
  int64_t tmp[COLS];  /* a converted row */
} cols;

/* argmax lanes: take x[j] where it is greater, or the first NaN. */
#define DEFINE_COLS_ARGMAX(name, T)                                                      \
  static CPU_CLONES void name(T *m, int64_t *idx, const T *x, int64_t w, int64_t r) {    \
    for (int64_t j = 0; j < w; j++) {                                                    \
      bool take = x[j] > m[j] || (x[j] != x[j] && m[j] == m[j]);                           \
      m[j] = take ? x[j] : m[j];                                                         \
      idx[j] = take ? r : idx[j];                                                        \
    }                                                                                    \
  }

DEFINE_COLS_ARGMAX(cols_argmax_f32, float)
DEFINE_COLS_ARGMAX(cols_argmax_f64, double)
DEFINE_COLS_ARGMAX(cols_argmax_i64, int64_t)

/* Folds one reduced position r (a contiguous slice x of w elements) into
 * the lanes. */
static void cols_fold(const plan *p, cols *c, const void *x, int64_t w, int64_t r, bool first) {
  bool want_max = p->op != OP_AMIN;
  if (first && p->op != OP_SUM && p->op != OP_MEAN) {
    memcpy(&c->acc, x, (size_t)w * (p->acc == ACC_F32 ? 4 : 8));
    if (p->op == OP_ARGMAX)
      for (int64_t j = 0; j < w; j++) c->idx[j] = r;
    return;
  }
  switch (p->op) {
    case OP_SUM:
    case OP_MEAN:
      switch (p->acc) {
        case ACC_F32: cols_add_f32(c->acc.f32, x, w); break;
        case ACC_F64: cols_add_f64(c->acc.f64, x, w); break;
        default: cols_add_i64(c->acc.u64, x, w); break;
      }
      break;
    case OP_ARGMAX:
      switch (p->acc) {
        case ACC_F32: cols_argmax_f32(c->acc.f32, c->idx, x, w, r); break;
        case ACC_F64: cols_argmax_f64(c->acc.f64, c->idx, x, w, r); break;
        default: cols_argmax_i64(c->acc.i64, c->idx, x, w, r); break;
      }
      break;
    default:
      switch (p->acc) {
        case ACC_F32: cols_extreme_f32(c->acc.f32, x, w, want_max); break;
        case ACC_F64: cols_extreme_f64(c->acc.f64, x, w, want_max); break;
        default: cols_extreme_i64(c->acc.i64, x, w, want_max); break;
      }
      break;
  }
}

/* Adds the float lanes of a sum into its double totals and clears them. */
static void cols_flush(const plan *p, cols *c, int64_t w) {
  if (p->acc == ACC_F32) {
    for (int64_t j = 0; j < w; j++) c->total[j] += c->acc.f32[j];
    memset(c->acc.f32, 0, (size_t)w * sizeof c->acc.f32[0]);
  } else {
    for (int64_t j = 0; j < w; j++) c->total[j] += c->acc.f64[j];
    memset(c->acc.f64, 0, (size_t)w * sizeof c->acc.f64[0]);
  }
}

/* Reduces reduced positions [rb, re) of the w outputs whose first element
 * is at base into out[0 .. w). */
static void reduce_cols(const plan *p, cols *c, const char *base, int64_t w, int64_t rb,
                        int64_t re, part *out) {
  bool sum = p->op == OP_SUM || p->op == OP_MEAN, float_sum = sum && p->acc != ACC_I64;
  if (sum) {
    memset(c->acc.u64, 0, (size_t)w * sizeof c->acc.u64[0]);
    memset(c->total, 0, (size_t)w * sizeof c->total[0]);
  }
  int nr = p->nr;
  int64_t coord[BP_MAX_NDIM], rem = rb, off = 0;
  for (int d = nr - 1; d >= 0 && rb < re; d--) {
    coord[d] = rem % p->rsize[d];
    rem /= p->rsize[d];
    off += coord[d] * p->rstride[d];
  }
  for (int64_t r = rb; r < re; r++) {
    cols_fold(p, c, cpu_reduce_load(p, base + off, p->isz, w, c->tmp), w, r, r == rb);
    if (float_sum && ((r - rb + 1) % COL_FLUSH == 0 || r + 1 == re)) cols_flush(p, c, w);
    /* Step to the next reduced position. */
    for (int d = nr - 1; d >= 0; d--) {
      off += p->rstride[d];
      if (++coord[d] < p->rsize[d] || d == 0) break;
      off -= coord[d] * p->rstride[d];
      coord[d] = 0;
    }
  }
  for (int64_t j = 0; j < w; j++) {
    part *st = &out[j];
    memset(st, 0, sizeof *st);
    st->seen = re > rb;
    if (sum) {
      if (p->acc == ACC_I64)
        st->u = c->acc.u64[j];
      else
        st->f = c->total[j];
    } else if (st->seen) {
      switch (p->acc) {
        case ACC_F32: st->f = c->acc.f32[j]; break;
        case ACC_F64: st->f = c->acc.f64[j]; break;
        default: st->i = c->acc.i64[j]; break;
      }
      st->idx = c->idx[j];
    }
  }
}

/* Column tasks: t = ((outer * nblk) + blk) * pieces + k. */
typedef struct col_job {
  const plan *p;
  int64_t inner, nblk; /* the innermost kept dimension, in blocks of COLS */
  part *parts;         /* NULL when pieces == 1: results are stored */
  atomic_bool failed;  /* a task could not allocate its lanes */
} col_job;

static void cols_run(void *ctx, int64_t begin, int64_t end) {
  col_job *j = ctx;
  const plan *p = j->p;
  /* The lanes are too large for the stack of whatever thread calls. */
  cols *c = malloc(sizeof *c);
  if (!c) {
    atomic_store(&j->failed, true);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    int64_t k = t % p->pieces, blk = t / p->pieces % j->nblk, outer = t / p->pieces / j->nblk;
    int64_t first = outer * j->inner + blk * COLS;
    int64_t w = j->inner - blk * COLS < COLS ? j->inner - blk * COLS : COLS;
    reduce_cols(p, c, cpu_reduce_output_base(p, first), w, p->nred * k / p->pieces,
                p->nred * (k + 1) / p->pieces, j->parts ? j->parts + t * COLS : c->res);
    if (!j->parts)
      for (int64_t i = 0; i < w; i++) cpu_reduce_store(p, first + i, &c->res[i]);
  }
  free(c);
}

/* The column path: outputs in blocks along the innermost kept dimension,
 * which is contiguous in the input. */
bp_status cpu_reduce_columns(plan *p) {
  int64_t threads = cpu_num_threads();
  col_job j;
  j.p = p;
  j.inner = p->ksize[p->nk - 1];
  j.nblk = (j.inner + COLS - 1) / COLS;
  j.parts = NULL;
  atomic_init(&j.failed, false);
  int64_t tasks = p->nout / j.inner * j.nblk, width = j.inner < COLS ? j.inner : COLS;
  int64_t per = p->nred * width; /* elements per task */
  /* Too few blocks for the threads: split the reduced range too, which
   * also makes each thread read whole rows of memory in order.  Only into
   * as many pieces as fill the threads: each piece of a block keeps COLS
   * partial results, so a piece per thread for every block needed up to
   * threads times the memory. */
  p->pieces = 1;
  if (tasks < threads && per >= 4 * CPU_GRAIN) {
    p->pieces = (threads + tasks - 1) / tasks;
    if (p->pieces > p->nred) p->pieces = p->nred;
  }
  if (p->pieces > 1) {
    j.parts = malloc((size_t)(tasks * p->pieces * COLS) * sizeof *j.parts);
    if (!j.parts) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: out of memory in a reduction");
  }
  cpu_parallel_for(tasks * p->pieces, per >= CPU_GRAIN ? 1 : CPU_GRAIN / (per ? per : 1),
                   cols_run, &j);
  if (!atomic_load(&j.failed) && j.parts) {
    for (int64_t t = 0; t < tasks; t++) {
      int64_t first = t / j.nblk * j.inner + t % j.nblk * COLS;
      int64_t w = j.inner - t % j.nblk * COLS < COLS ? j.inner - t % j.nblk * COLS : COLS;
      for (int64_t i = 0; i < w; i++) {
        part st = j.parts[t * p->pieces * COLS + i];
        for (int64_t k = 1; k < p->pieces; k++)
          cpu_reduce_combine(p, &st, &j.parts[(t * p->pieces + k) * COLS + i]);
        cpu_reduce_store(p, first + i, &st);
      }
    }
  }
  free(j.parts);
  if (atomic_load(&j.failed))
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: out of memory in a reduction");
  return BP_OK;
}

