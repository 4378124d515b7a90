/*
 * plugins/cpu/softmax_wide.c - float32 softmax and log_softmax along a
 * dimension followed by many contiguous elements (dim 0 of a wide matrix),
 * reading the input in memory order.
 *
 * softmax_cols.c's buffer path reads a block of 64 columns at a time: runs
 * of 256 bytes a row apart, which the hardware prefetchers follow poorly.
 * Here each task owns a group of up to WIDE_MAX neighbouring columns (a
 * thread's share of the row) and reads it twice, each time as long runs in
 * memory order: the first pass keeps each column's running max and sum of
 * e^(x - max) (CHUNK rows at a time: their max from memory, then their
 * terms from L1 or L2, and a sum rescaled by e^(old - new) when the max
 * grows); the second pass writes the result, from the last row back to the
 * first, so that the rows the first pass read last are still in the
 * caches when it starts.
 */
#include <math.h>
#include <stdlib.h>

#include "softmax.h"

#define CHUNK 16 /* rows of a step of the first pass */

/* The column kernels, over w columns of one row (or chunk) at a time. */
static CPU_CLONES void wide_max(float *restrict cm, const float *restrict x, int64_t w) {
  for (int64_t c = 0; c < w; c++) cm[c] = x[c] > cm[c] ? x[c] : cm[c];
}

static CPU_CLONES CONTRACT void wide_exp_sum(float *restrict s, const float *restrict x,
                                             const float *restrict m, int64_t w) {
  for (int64_t c = 0; c < w; c++) s[c] += exp_f32(x[c] - m[c]);
}

static CPU_CLONES CONTRACT void wide_softmax(float *restrict y, const float *restrict x,
                                             const float *restrict m, const float *restrict inv,
                                             int64_t w) {
  for (int64_t c = 0; c < w; c++) y[c] = exp_f32(x[c] - m[c]) * inv[c];
}

static CPU_CLONES void wide_log_softmax(float *restrict y, const float *restrict x,
                                        const float *restrict m, const float *restrict lse,
                                        int64_t w) {
  for (int64_t c = 0; c < w; c++) y[c] = (x[c] - m[c]) - lse[c];
}

/* Workspace of one group: the running max, a chunk's max, a chunk's float
 * sums, the inverse sums (or log-sum-exp), a row of output, and the
 * running sums in double. */
typedef struct wide_space {
  float *m, *cm, *part, *inv, *y;
  double *sum;
} wide_space;

/* The sum of a chunk's terms in column c while the column's max is -inf:
 * each element is -inf (a term of 0) or NaN (NaN). */
static float masked_terms(const char *x, int64_t stride, int r, int64_t c) {
  for (int k = 0; k < r; k++) {
    float v = ((const float *)(x + k * stride))[c];
    if (v != v) return NAN;
  }
  return 0;
}

/* The two passes over the group of w columns at in and out. */
static void wide_group(const softmax_job *j, const char *in, char *out, int64_t w,
                       wide_space *ws) {
  int64_t len = j->len, xs = j->stride, ys = j->inner * 4;
  for (int64_t c = 0; c < w; c++) {
    ws->m[c] = -INFINITY;
    ws->sum[c] = 0;
  }
  for (int64_t l0 = 0; l0 < len; l0 += CHUNK) {
    int r = (int)(len - l0 < CHUNK ? len - l0 : CHUNK);
    const char *x = in + l0 * xs;
    for (int64_t c = 0; c < w; c++) ws->cm[c] = -INFINITY;
    for (int k = 0; k < r; k++) wide_max(ws->cm, (const float *)(x + k * xs), w);
    for (int64_t c = 0; c < w; c++)
      if (ws->cm[c] > ws->m[c]) {
        if (ws->sum[c] != 0) ws->sum[c] *= exp((double)ws->m[c] - (double)ws->cm[c]);
        ws->m[c] = ws->cm[c];
      }
    memset(ws->part, 0, (size_t)w * sizeof ws->part[0]);
    for (int k = 0; k < r; k++) wide_exp_sum(ws->part, (const float *)(x + k * xs), ws->m, w);
    /* A column that is all -inf or NaN so far summed e^(-inf - -inf), NaN,
     * for each -inf: those terms are 0 against a later finite max (an all
     * -inf column still comes out NaN below), and a NaN keeps it NaN. */
    for (int64_t c = 0; c < w; c++)
      ws->sum[c] += ws->m[c] == -INFINITY ? masked_terms(x, xs, r, c) : ws->part[c];
  }
  for (int64_t c = 0; c < w; c++)
    ws->inv[c] = (float)(j->log ? log(ws->sum[c]) : 1.0 / ws->sum[c]);
  for (int64_t l = len - 1; l >= 0; l--) {
    const float *x = (const float *)(in + l * xs);
    float *y = j->stream ? ws->y : (float *)(out + l * ys);
    if (j->log)
      wide_log_softmax(y, x, ws->m, ws->inv, w);
    else
      wide_softmax(y, x, ws->m, ws->inv, w);
    if (j->stream) cpu_stream_copy(out + l * ys, ws->y, (size_t)w * 4);
  }
}

/* The groups, in slices of per groups, each slice with its workspace (a
 * pool thread never allocates; see attention.c). */
typedef struct wide_job {
  softmax_job *j;
  int64_t group, groups, tasks, per;
  float *f;  /* per slice: 5 rows of group floats */
  double *d; /* per slice: group doubles */
} wide_job;

static void wide_slices(void *ctx, int64_t begin, int64_t end) {
  wide_job *wj = ctx;
  softmax_job *j = wj->j;
  int64_t g = wj->group;
  for (int64_t sl = begin; sl < end; sl++) {
    float *f = wj->f + sl * 5 * g;
    wide_space ws = {f, f + g, f + 2 * g, f + 3 * g, f + 4 * g, wj->d + sl * g};
    int64_t t1 = (sl + 1) * wj->per < wj->tasks ? (sl + 1) * wj->per : wj->tasks;
    for (int64_t t = sl * wj->per; t < t1; t++) {
      int64_t o = t / wj->groups, c0 = t % wj->groups * g;
      int64_t w = j->inner - c0 < g ? j->inner - c0 : g;
      wide_group(j, row_src(j, o * j->inner) + c0 * 4, row_dst(j, o * j->inner) + c0 * 4, w,
                 &ws);
    }
  }
  if (j->stream) cpu_stream_end();
}

void cpu_softmax_wide(softmax_job *j, int64_t outer) {
  int64_t threads = cpu_num_threads();
  /* A thread's share of each row when there are fewer outer slabs than
   * threads, in whole cache lines, within [WIDE_GROUP_MIN, WIDE_MAX]. */
  int64_t split = outer >= threads ? 1 : (threads + outer - 1) / outer;
  int64_t g = (j->inner + split - 1) / split;
  g = (g + 15) / 16 * 16;
  if (g < WIDE_GROUP_MIN) g = WIDE_GROUP_MIN;
  if (g > WIDE_MAX) g = WIDE_MAX;
  if (g > j->inner) g = j->inner;
  wide_job wj = {j, g, (j->inner + g - 1) / g, 0, 0, NULL, NULL};
  wj.tasks = outer * wj.groups;
  int64_t slices = wj.tasks < 2 * threads ? wj.tasks : 2 * threads;
  if (threads <= 1 || j->len * j->inner < CPU_GRAIN) slices = 1;
  wj.per = (wj.tasks + slices - 1) / slices;
  slices = (wj.tasks + wj.per - 1) / wj.per;
  wj.f = malloc((size_t)(slices * 5 * g) * sizeof(float));
  wj.d = malloc((size_t)(slices * g) * sizeof(double));
  if (!wj.f || !wj.d)
    atomic_store(&j->failed, true);
  else
    cpu_parallel_items(slices, wide_slices, &wj);
  free(wj.d);
  free(wj.f);
}
