/* plugins/cpu/iter.c - strided, broadcasting iteration over tensors. */
#include "cpu.h"

void cpu_iter_init(cpu_iter *it, int nops, const bp_tensor_view *const *views, int32_t ndim,
                   const int64_t *shape) {
  it->nops = nops;
  it->numel = 1;
  for (int32_t d = 0; d < ndim; d++) it->numel *= shape[d];
  for (int i = 0; i < nops; i++) it->data[i] = (char *)views[i]->data;
  /* Broadcast each operand to the shape, dropping dimensions of size 1. */
  int n = 0;
  for (int32_t d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue;
    it->sizes[n] = shape[d];
    for (int i = 0; i < nops; i++) {
      const bp_tensor_view *v = views[i];
      int32_t dv = d - (ndim - v->ndim);
      it->strides[i][n] = dv >= 0 && v->sizes[dv] != 1 ? v->strides[dv] * v->itemsize : 0;
    }
    n++;
  }
  /* Merge an outer dimension into the next inner one wherever every
   * operand steps through both as through one. */
  int m = 0;
  for (int d = 0; d < n; d++) {
    if (m > 0) {
      bool merge = true;
      for (int i = 0; i < nops && merge; i++)
        merge = it->strides[i][m - 1] == it->strides[i][d] * it->sizes[d];
      if (merge) {
        it->sizes[m - 1] *= it->sizes[d];
        for (int i = 0; i < nops; i++) it->strides[i][m - 1] = it->strides[i][d];
        continue;
      }
    }
    it->sizes[m] = it->sizes[d];
    for (int i = 0; i < nops; i++) it->strides[i][m] = it->strides[i][d];
    m++;
  }
  it->ndim = m;
}

typedef struct run_ctx {
  const cpu_iter *it;
  cpu_loop_fn loop;
  void *ctx;
} run_ctx;

/* Runs the elements [begin, end) in row-major order of the iteration. */
static void run_range(void *p, int64_t begin, int64_t end) {
  const run_ctx *rc = p;
  const cpu_iter *it = rc->it;
  int nd = it->ndim, nops = it->nops;
  int64_t inner_strides[CPU_ITER_MAX_OPS];
  if (nd == 0) {
    char *ptrs[CPU_ITER_MAX_OPS];
    for (int i = 0; i < nops; i++) {
      ptrs[i] = it->data[i];
      inner_strides[i] = 0;
    }
    rc->loop(ptrs, inner_strides, 1, rc->ctx);
    return;
  }
  int64_t coord[BP_MAX_NDIM];
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; d--) {
    coord[d] = rem % it->sizes[d];
    rem /= it->sizes[d];
  }
  for (int i = 0; i < nops; i++) inner_strides[i] = it->strides[i][nd - 1];
  int64_t inner = it->sizes[nd - 1];
  for (int64_t idx = begin; idx < end;) {
    char *ptrs[CPU_ITER_MAX_OPS];
    for (int i = 0; i < nops; i++) {
      char *p0 = it->data[i];
      for (int d = 0; d < nd; d++) p0 += coord[d] * it->strides[i][d];
      ptrs[i] = p0;
    }
    int64_t run = inner - coord[nd - 1];
    if (run > end - idx) run = end - idx;
    rc->loop(ptrs, inner_strides, run, rc->ctx);
    idx += run;
    coord[nd - 1] += run;
    for (int d = nd - 1; d > 0 && coord[d] >= it->sizes[d]; d--) {
      coord[d] = 0;
      coord[d - 1]++;
    }
  }
}

void cpu_iter_run(const cpu_iter *it, cpu_loop_fn loop, void *ctx) {
  if (it->numel == 0) return;
  run_ctx rc = {it, loop, ctx};
  cpu_parallel_for(it->ndim == 0 ? 1 : it->numel, CPU_GRAIN, run_range, &rc);
}
