/*
 * tests/cuda/test-cuda-host.cu - the CUDA plugin's host-side logic, run on
 * the host (built by nvcc, as the plugin is; no GPU needed).
 *
 * The overlap test of copy_ and add.out (plugins/cuda/overlap.h) is run on
 * views of one byte buffer: whenever two views share a byte, it must say
 * that they may.
 *
 * The reductions' launch plan (plugins/cuda/reduce_plan.h) is checked for
 * output counts up to past 2^32: the row kernel's launches cover every
 * output once, each within gridDim.x's limit, and slices cover the reduced
 * range within gridDim.y's.
 *
 * matmul's table of cuBLAS handles (plugins/cuda/blas_handles.h) is run
 * with handles of the test's own: each (device, stream) pair gets a handle
 * bound to its stream once, two streams never share one, and a stream's
 * destruction and the unload destroy exactly theirs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "blas_handles.h"
#include "kernels.cuh" /* CU_THREADS (plugins/cuda/cuda.h) */
#include "overlap.h"
#include "reduce_plan.h"

extern "C" {
#include "tap.h"
}

#include "hostrng.h"

/* ------------------------------------------------------------------------ */
/* Overlap of views                                                         */
/* ------------------------------------------------------------------------ */

/* A view of `base` + `off` bytes: itemsize isz, up to 2 dimensions. */
struct TView {
  bp_tensor_view v;
  int64_t sizes[2], strides[2];
};
static void tview(TView *t, unsigned char *base, int64_t off, int64_t isz, int ndim,
                  const int64_t *sizes, const int64_t *strides) {
  memset(t, 0, sizeof *t);
  t->v.struct_size = sizeof t->v;
  t->v.data = base + off;
  t->v.device = bp_device_make(BP_DEVICE_CUDA, 0);
  t->v.dtype = isz == 2 ? BP_FLOAT16 : isz == 4 ? BP_FLOAT32 : isz == 8 ? BP_INT64 : BP_UINT8;
  t->v.ndim = ndim;
  t->v.numel = 1;
  for (int d = 0; d < ndim; d++) {
    t->sizes[d] = sizes[d];
    t->strides[d] = strides[d];
    t->v.numel *= sizes[d];
  }
  t->v.sizes = t->sizes;
  t->v.strides = t->strides;
  t->v.itemsize = isz;
}

/* Marks the bytes a view's elements cover in mark[] (offsets from base). */
static void mark_bytes(const TView *t, const unsigned char *base, unsigned char *mark, int bit) {
  int64_t n0 = t->v.ndim > 0 ? t->sizes[0] : 1, n1 = t->v.ndim > 1 ? t->sizes[1] : 1;
  int64_t s0 = t->v.ndim > 0 ? t->strides[0] : 0, s1 = t->v.ndim > 1 ? t->strides[1] : 0;
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++) {
      int64_t at = ((const unsigned char *)t->v.data - base) + (i * s0 + j * s1) * t->v.itemsize;
      for (int64_t k = 0; k < t->v.itemsize; k++) mark[at + k] |= (unsigned char)bit;
    }
}

static void overlap_of_views(void) {
  static unsigned char buf[4096];
  /* A float16 view whose k-th element lies inside an int64 view's (k+1)-th:
   * 18 + 16 k falls in [16 (k + 1), 16 (k + 1) + 8). */
  TView h, l;
  int64_t n3[1] = {3}, s8[1] = {8}, s2[1] = {2};
  tview(&h, buf, 18, 2, 1, n3, s8);
  tview(&l, buf, 0, 8, 1, n3, s2);
  ok(cu_may_overlap(&h.v, &l.v));
  ok(cu_may_overlap(&l.v, &h.v));
  ok(!cu_same_view(&h.v, &l.v));
  /* The even and odd float32 elements of one buffer do not overlap. */
  TView ev, od;
  int64_t n8[1] = {8};
  tview(&ev, buf, 0, 4, 1, n8, s2);
  tview(&od, buf, 4, 4, 1, n8, s2);
  ok(!cu_may_overlap(&ev.v, &od.v));
  ok(!cu_may_overlap(&od.v, &ev.v));
  ok(cu_may_overlap(&ev.v, &ev.v));
  ok(cu_same_view(&ev.v, &ev.v));
  /* A matrix and its transpose overlap and are not the same view. */
  TView m, mt;
  int64_t n44[2] = {4, 4}, s41[2] = {4, 1}, s14[2] = {1, 4};
  tview(&m, buf, 0, 4, 2, n44, s41);
  tview(&mt, buf, 0, 4, 2, n44, s14);
  ok(cu_may_overlap(&m.v, &mt.v));
  ok(!cu_same_view(&m.v, &mt.v));
  /* Another device, or an empty view, never overlaps. */
  TView other = m;
  other.v.sizes = other.sizes;
  other.v.strides = other.strides;
  other.v.device = bp_device_make(BP_DEVICE_CUDA, 1);
  ok(!cu_may_overlap(&m.v, &other.v));
  TView e;
  int64_t n0[1] = {0};
  tview(&e, buf, 0, 4, 1, n0, s2);
  ok(!cu_may_overlap(&m.v, &e.v));
  /* Random views of one buffer: whenever they share a byte, the test must
   * say that they may (it may also say so when they do not). */
  static const int64_t isz[] = {1, 2, 4, 8};
  int missed = 0, shared = 0;
  for (int t = 0; t < 20000; t++) {
    TView a, b;
    TView *vs[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
      int64_t is = isz[rnd() % 4], nd = 1 + rnd() % 2, sz[2], st[2];
      for (int d = 0; d < nd; d++) {
        sz[d] = 1 + rnd() % 6;
        st[d] = (int64_t)(rnd() % 9); /* 0 (broadcast) to 8 elements */
      }
      tview(vs[k], buf, (int64_t)(rnd() % 96), is, (int)nd, sz, st);
    }
    static unsigned char mark[4096];
    memset(mark, 0, 512);
    mark_bytes(&a, buf, mark, 1);
    mark_bytes(&b, buf, mark, 2);
    bool share = false;
    for (int i = 0; i < 512 && !share; i++) share = mark[i] == 3;
    shared += share;
    if (share && (!cu_may_overlap(&a.v, &b.v) || !cu_may_overlap(&b.v, &a.v)) && missed++ < 3)
      tap_diag("views at +%lld (itemsize %lld) and +%lld (itemsize %lld) share a byte; the test "
               "says they do not",
               (long long)((unsigned char *)a.v.data - buf), (long long)a.v.itemsize,
               (long long)((unsigned char *)b.v.data - buf), (long long)b.v.itemsize);
  }
  cmp_ok(shared, ">", 1000);
  is_int(missed, 0);
}

/* Plans a reduction of nout outputs of nred elements each, as reduce.cu
 * does, and checks its geometry; returns the number of faults (each
 * reported). */
static int check_reduce_plan(int64_t nout, int64_t nred, bool contiguous_kept, int64_t slice) {
  const int64_t sms = 132;
  RPlan p;
  memset(&p, 0, sizeof p);
  p.nk = 1;
  p.ksize[0] = nout;
  p.kstride[0] = contiguous_kept ? 1 : 2; /* rows unless the kept dim is contiguous */
  p.nr = 1;
  p.rsize[0] = nred;
  p.rstride[0] = contiguous_kept ? nout : 1;
  p.nout = nout;
  p.nred = nred;
  bool columns = cu_reduce_split(&p, sms, slice);
  int faults = 0;
  static int reported;
  char what[200];
#define PLAN_FAULT(...)                                                                     \
  do {                                                                                      \
    snprintf(what, sizeof what, __VA_ARGS__);                                               \
    if (reported++ < 8)                                                                     \
      tap_diag("nout %lld, nred %lld%s, slice %lld: %s", (long long)nout, (long long)nred,  \
               contiguous_kept ? " (contiguous kept dim)" : "", (long long)slice, what);    \
    faults++;                                                                               \
  } while (0)
  if (columns != (contiguous_kept && nout >= 32)) PLAN_FAULT("columns is %d", (int)columns);
  if (p.splits < 1 || p.splits > CU_GRID_Y_MAX) PLAN_FAULT("%d slices", p.splits);
  if (p.chunk < 1 || (int64_t)p.splits * p.chunk < nred ||
      (nred > 0 && (int64_t)(p.splits - 1) * p.chunk >= nred))
    PLAN_FAULT("%d slices of %lld do not cover the reduced range once", p.splits,
               (long long)p.chunk);
  if (columns) {
    int64_t gx = (nout + CU_THREADS - 1) / CU_THREADS;
    if (gx > CU_GRID_X_MAX) PLAN_FAULT("the column kernel's grid has %lld blocks", (long long)gx);
    if (p.splits > 1 && nout > CU_GRID_X_MAX)
      PLAN_FAULT("the combining kernel's grid has %lld blocks", (long long)nout);
    return faults;
  }
  if (p.splits > 1 && nout > CU_GRID_X_MAX)
    PLAN_FAULT("%d slices of %lld outputs need more than one launch", p.splits, (long long)nout);
  int64_t covered = 0, n;
  int launches = 0;
  for (int64_t base = 0; base < nout && launches < 16; base += n, launches++) {
    n = cu_rows_launch(&p, base);
    if (n < 1 || n > CU_GRID_X_MAX) {
      PLAN_FAULT("a launch at output %lld has %lld blocks along x", (long long)base, (long long)n);
      break;
    }
    covered += n;
  }
  if (covered != nout)
    PLAN_FAULT("the row kernel's %d launches reach %lld outputs", launches, (long long)covered);
#undef PLAN_FAULT
  return faults;
}

static void reduction_plan_within_grid_limits(void) {
  static const int64_t nouts[] = {1,
                                  7,
                                  131,
                                  528,
                                  65536,
                                  CU_GRID_X_MAX,
                                  CU_GRID_X_MAX + 1,
                                  (INT64_C(1) << 32) + 5,
                                  INT64_C(3) << 32};
  static const int64_t nreds[] = {0, 1, 2, 31, 4096, 5000, INT64_C(1) << 20, INT64_C(1) << 33};
  static const int64_t slices[] = {0, 4096, 1 << 20};
  int faults = 0;
  for (size_t i = 0; i < sizeof nouts / sizeof nouts[0]; i++)
    for (size_t j = 0; j < sizeof nreds / sizeof nreds[0]; j++)
      for (size_t k = 0; k < sizeof slices / sizeof slices[0]; k++)
        for (int c = 0; c < 2; c++)
          faults += check_reduce_plan(nouts[i], nreds[j], c == 1, slices[k]);
  is_int(faults, 0);
  /* Past gridDim.x's limit the row kernel takes more than one launch. */
  RPlan p;
  memset(&p, 0, sizeof p);
  p.nk = 1;
  p.ksize[0] = p.nout = (INT64_C(1) << 32) + 5;
  p.kstride[0] = 2;
  p.nr = 1;
  p.rsize[0] = p.nred = 2;
  p.rstride[0] = 1;
  ok(!cu_reduce_split(&p, 132, 0));
  is_int(p.splits, 1);
  is_int(cu_rows_launch(&p, 0), CU_GRID_X_MAX);
  is_int(cu_rows_launch(&p, 2 * CU_GRID_X_MAX), 7);
}

/* finish=pdl launches the combining kernel with PDL only where the image
 * the device runs holds its griddepcontrol.wait (compute_90 or later): an
 * H100 running a build for sm_80 or sm_86 (from their PTX) must not, nor
 * a GPU before 9.0. */
static void pdl_only_with_the_wait(void) {
  ok(cu_reduce_pdl(9, 90));   /* H100, the default build's sm_90 */
  ok(cu_reduce_pdl(10, 90));  /* B200 from the compute_90 PTX */
  ok(cu_reduce_pdl(10, 100));
  ok(!cu_reduce_pdl(9, 80));  /* H100, a build for sm_80 alone */
  ok(!cu_reduce_pdl(9, 86));
  ok(!cu_reduce_pdl(12, 89));
  ok(!cu_reduce_pdl(8, 80));  /* A100 */
  ok(!cu_reduce_pdl(8, 0));
  ok(!cu_reduce_pdl(0, 0));   /* properties that could not be read */
}

/* ------------------------------------------------------------------------ */
/* cuBLAS handles (blas_handles.h), with fake handles                       */
/* ------------------------------------------------------------------------ */

/* A fake handle: the pair it was made for, and whether it was destroyed. */
struct fake_handle {
  int32_t device;
  void *stream;
  bool destroyed;
};

static struct {
  fake_handle made[64];
  int nmade, ndestroyed;
  int fail_next; /* create's next status, when nonzero */
  bool bad_destroy; /* a destroy of a handle with the wrong device or twice */
} fk;

static int fake_create(void *ud, int32_t device, void *stream, void **out) {
  (void)ud;
  if (fk.fail_next) {
    int rc = fk.fail_next;
    fk.fail_next = 0;
    return rc;
  }
  if (fk.nmade == 64) return 99;
  fake_handle *h = &fk.made[fk.nmade++];
  h->device = device;
  h->stream = stream;
  h->destroyed = false;
  *out = h;
  return 0;
}

static void fake_destroy(void *ud, int32_t device, void *handle) {
  (void)ud;
  fake_handle *h = (fake_handle *)handle;
  if (h->destroyed || h->device != device) fk.bad_destroy = true;
  h->destroyed = true;
  fk.ndestroyed++;
}

static void *get_handle(cu_blas_table *t, int32_t dev, uintptr_t stream) {
  void *h = NULL;
  int rc = cu_blas_get(t, dev, (void *)stream, fake_create, fake_destroy, NULL, &h);
  return rc == 0 ? h : NULL;
}

/* A GEMM on a stream must run with a handle of that stream's own, bound to
 * it when made: a handle shared by two streams (the plugin once had one per
 * device, its stream switched before each GEMM) shares its workspace
 * between GEMMs that run at the same time. */
static void blas_handle_per_stream(void) {
  memset(&fk, 0, sizeof fk);
  cu_blas_table t = {NULL, 0, 0};
  /* Device 0: the default stream and two others; device 1: the default. */
  void *d0 = get_handle(&t, 0, 0), *s1 = get_handle(&t, 0, 0x1000),
       *s2 = get_handle(&t, 0, 0x2000), *d1 = get_handle(&t, 1, 0);
  ok(d0 && s1 && s2 && d1);
  ok(d0 != s1 && d0 != s2 && s1 != s2 && d0 != d1);
  is_int(fk.nmade, 4);
  /* Each handle was made for its pair, and is found again for it only. */
  for (int i = 0; i < fk.nmade; i++) {
    void *again = get_handle(&t, fk.made[i].device, (uintptr_t)fk.made[i].stream);
    ok(again == &fk.made[i]);
  }
  ok(get_handle(&t, 0, 0x1000) == s1);
  ok(((fake_handle *)s1)->stream == (void *)0x1000);
  ok(((fake_handle *)s2)->stream == (void *)0x2000);
  is_int(fk.nmade, 4);
  is_int(t.n, 4);

  /* A failed creation adds nothing, and the next call tries again. */
  fk.fail_next = 13;
  void *h = NULL;
  is_int(cu_blas_get(&t, 0, (void *)0x3000, fake_create, fake_destroy, NULL, &h), 13);
  is_int(t.n, 4);
  void *s3 = get_handle(&t, 0, 0x3000);
  ok(s3 != NULL && s3 != s1);
  is_int(t.n, 5);

  /* Destroying stream 0x1000 of device 0 destroys its handle alone; the
   * same stream value on device 1 has none. */
  is_int(cu_blas_forget(&t, 1, false, (void *)0x1000, fake_destroy, NULL), 0);
  is_int(cu_blas_forget(&t, 0, false, (void *)0x1000, fake_destroy, NULL), 1);
  ok(((fake_handle *)s1)->destroyed);
  ok(!((fake_handle *)s2)->destroyed && !((fake_handle *)d0)->destroyed);
  is_int(t.n, 4);
  /* A new stream at the same address gets a new handle. */
  void *s1b = get_handle(&t, 0, 0x1000);
  ok(s1b != NULL && s1b != s1);

  /* Many streams: the table grows and keeps every pair apart. */
  for (uintptr_t k = 1; k <= 40; k++) ok(get_handle(&t, 2, k * 16) != NULL);
  ok(get_handle(&t, 2, 16) != get_handle(&t, 2, 32));
  is_int(t.n, 45);

  /* Unload destroys every live handle once, and empties the table. */
  int before = fk.ndestroyed;
  is_int(cu_blas_forget(&t, -1, true, NULL, fake_destroy, NULL), 45);
  is_int(fk.ndestroyed - before, 45);
  is_int(t.n, 0);
  ok(t.e == NULL);
  ok(!fk.bad_destroy);
  for (int i = 0; i < fk.nmade; i++) ok(fk.made[i].destroyed);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(overlap_of_views),
      TAP_CASE(reduction_plan_within_grid_limits),
      TAP_CASE(pdl_only_with_the_wait),
      TAP_CASE(blas_handle_per_stream),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
