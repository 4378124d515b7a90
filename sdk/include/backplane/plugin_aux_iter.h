/*
 * backplane/plugin_aux_iter.h - the strided, broadcasting iterator of the
 * plugin helper kit, its conversion of a tensor to another dtype, a
 * kernel's operands in the dtype it computes in, and the overlap tests of
 * two views.  Part of <backplane/plugin_aux.h>, which
 * includes it: include that header, not this one.
 */
#ifndef BACKPLANE_PLUGIN_AUX_ITER_H
#define BACKPLANE_PLUGIN_AUX_ITER_H

#ifndef BACKPLANE_PLUGIN_AUX_INSIDE
#error "include <backplane/plugin_aux.h>, which includes this file"
#endif

/* ------------------------------------------------------------------------ */
/* Strided, broadcasting iteration                                          */
/* ------------------------------------------------------------------------ */

#define BP_AUX_ITER_MAX_OPS 8

/*
 * An iteration over up to 8 operands broadcast to one shape, planned once
 * and walked as 1-D inner loops, as PyTorch's TensorIterator does:
 *   1. each operand is broadcast to the shape (stride 0 where it is), and
 *      dimensions of size 1 are dropped;
 *   2. the dimensions are ordered by stride, operand 0's first (a stride of
 *      0 tells nothing; the next operand decides), so that a transposed
 *      operand 0 (usually the output) is walked in memory order;
 *   3. neighbours that every operand steps through as one are merged, so
 *      the innermost run is as long as possible.
 * Strides are in bytes.  A 0-dim iteration has ndim 0 and one element; an
 * empty one numel 0 and no runs.  The visiting order is row-major in the
 * planned dimensions, not the tensors': a loop must not depend on it.
 */
typedef struct bp_aux_iter {
  int nops;
  int ndim;                                           /* planned dimensions */
  int64_t numel;                                      /* elements in all */
  int64_t sizes[BP_MAX_NDIM];                         /* innermost last */
  int64_t strides[BP_AUX_ITER_MAX_OPS][BP_MAX_NDIM];  /* in bytes */
  int64_t elsize[BP_AUX_ITER_MAX_OPS];                /* bytes per element */
  char *data[BP_AUX_ITER_MAX_OPS];                    /* first elements */
} bp_aux_iter;

static inline int64_t bp_aux_abs64_(int64_t v) { return v < 0 ? -v : v; }

/* Whether planned dimension a (outer) should move inwards past b. */
static inline bool bp_aux_iter_swap_(const bp_aux_iter *it, int a, int b) {
  for (int i = 0; i < it->nops; i++) {
    int64_t sa = bp_aux_abs64_(it->strides[i][a]), sb = bp_aux_abs64_(it->strides[i][b]);
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sa < sb;
  }
  return false;
}

/* Plans the iteration of `nops` (<= 8) views over `shape`, to which each
 * must broadcast (the meta function has checked it).  Cannot fail. */
static inline void bp_aux_iter_plan(bp_aux_iter *it, int nops, const bp_tensor_view *const *views,
                                    int32_t ndim, const int64_t *shape) {
  it->nops = nops;
  it->ndim = 0;
  it->numel = 1;
  for (int i = 0; i < nops; i++) {
    it->data[i] = (char *)views[i]->data;
    it->elsize[i] = views[i]->itemsize;
  }
  /* An empty iteration does nothing; its other sizes may be so large that
   * their product, or a stride in bytes, would overflow. */
  for (int32_t d = 0; d < ndim; d++)
    if (shape[d] == 0) {
      it->numel = 0;
      return;
    }
  int n = 0;
  for (int32_t d = 0; d < ndim; d++) {
    it->numel *= shape[d];
    if (shape[d] == 1) continue;
    it->sizes[n] = shape[d];
    for (int i = 0; i < nops; i++) {
      const bp_tensor_view *v = views[i];
      int32_t dv = d - (ndim - v->ndim);
      it->strides[i][n] = dv >= 0 && v->sizes[dv] != 1 ? v->strides[dv] * v->itemsize : 0;
    }
    n++;
  }
  for (int d = 1; d < n; d++) /* a stable insertion sort */
    for (int e = d; e > 0 && bp_aux_iter_swap_(it, e - 1, e); e--) {
      int64_t t = it->sizes[e];
      it->sizes[e] = it->sizes[e - 1];
      it->sizes[e - 1] = t;
      for (int i = 0; i < nops; i++) {
        t = it->strides[i][e];
        it->strides[i][e] = it->strides[i][e - 1];
        it->strides[i][e - 1] = t;
      }
    }
  int m = 0;
  for (int d = 0; d < n; d++) {
    bool merge = m > 0;
    for (int i = 0; i < nops && merge; i++)
      merge = it->strides[i][m - 1] == it->strides[i][d] * it->sizes[d];
    if (merge) {
      it->sizes[m - 1] *= it->sizes[d];
      for (int i = 0; i < nops; i++) it->strides[i][m - 1] = it->strides[i][d];
      continue;
    }
    it->sizes[m] = it->sizes[d];
    for (int i = 0; i < nops; i++) it->strides[i][m] = it->strides[i][d];
    m++;
  }
  it->ndim = m;
}

/* Plans the iteration of `nops` views over the shape they broadcast to
 * (numpy's rules).  BP_ERR_SHAPE when they do not, or when operand 0 (which
 * is written) does not have that shape; BP_ERR_INVALID_ARGUMENT for more
 * than 8 operands. */
static inline bp_status bp_aux_iter_init(const bp_kernel_ctx *ctx, bp_aux_iter *it, int nops,
                                         const bp_tensor_view *const *views) {
  int64_t shape[BP_MAX_NDIM];
  int32_t ndim = 0;
  memset(it, 0, sizeof *it); /* on failure, an iteration with no elements */
  if (nops < 1 || nops > BP_AUX_ITER_MAX_OPS)
    return ctx->host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: %d operands to iterate over "
                                 "(1 to 8)", ctx->op_name, nops);
  for (int i = 0; i < nops; i++)
    if (views[i]->ndim > ndim) ndim = views[i]->ndim;
  for (int32_t d = 0; d < ndim; d++) shape[d] = 1;
  for (int i = 0; i < nops; i++)
    for (int32_t d = 0; d < views[i]->ndim; d++) {
      int64_t s = views[i]->sizes[d], *t = &shape[d + ndim - views[i]->ndim];
      if (s != 1 && *t != 1 && s != *t)
        return ctx->host->set_errorf(BP_ERR_SHAPE, "%s: operand %d does not broadcast with the "
                                     "others (size %lld against %lld)", ctx->op_name, i,
                                     (long long)s, (long long)*t);
      if (s != 1) *t = s;
    }
  for (int32_t d = 0; d < ndim; d++)
    if (views[0]->ndim != ndim || views[0]->sizes[d] != shape[d])
      return ctx->host->set_errorf(BP_ERR_SHAPE, "%s: operand 0 does not have the broadcast shape "
                                   "of the others", ctx->op_name);
  bp_aux_iter_plan(it, nops, views, ndim, shape);
  return BP_OK;
}

/*
 * One 1-D inner loop: n elements, operand i's first at ptrs[i] and the
 * next strides[i] bytes further on (itemsize when it is contiguous there,
 * 0 when it is broadcast).  Walk the elements [begin, end) of an iteration
 * (in its planned order; [0, it->numel) for all) as runs:
 *
 *     bp_aux_run r;
 *     for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r);)
 *       for (int64_t k = 0; k < r.n; k++)
 *         *BP_AUX_AT(float, r, 0, k) = *BP_AUX_AT(float, r, 1, k) * 2;
 *
 * Disjoint ranges may be walked on different threads at once.
 */
typedef struct bp_aux_run {
  char *ptrs[BP_AUX_ITER_MAX_OPS];
  int64_t strides[BP_AUX_ITER_MAX_OPS];
  int64_t n;
  int64_t pos_, end_, coord_[BP_MAX_NDIM]; /* private */
} bp_aux_run;

/* Operand k's element i of a run, as a T *. */
#define BP_AUX_AT(T, run, k, i) ((T *)(void *)((run).ptrs[k] + (i) * (run).strides[k]))

static inline void bp_aux_iter_start(const bp_aux_iter *it, int64_t begin, int64_t end,
                                     bp_aux_run *r) {
  int nd = it->ndim;
  int64_t rem = begin;
  r->n = 0;
  r->pos_ = begin;
  r->end_ = end < it->numel ? end : it->numel;
  for (int d = nd - 1; d >= 0; d--) {
    r->coord_[d] = rem % it->sizes[d];
    rem /= it->sizes[d];
  }
  for (int i = 0; i < it->nops; i++) r->strides[i] = nd > 0 ? it->strides[i][nd - 1] : 0;
}

/* Moves to the next run; false when the range is done. */
static inline bool bp_aux_iter_next(const bp_aux_iter *it, bp_aux_run *r) {
  int nd = it->ndim;
  if (r->n > 0 && nd > 0) { /* step past the last run */
    r->coord_[nd - 1] += r->n;
    for (int d = nd - 1; d > 0 && r->coord_[d] >= it->sizes[d]; d--) {
      r->coord_[d] = 0;
      r->coord_[d - 1]++;
    }
  }
  if (r->pos_ >= r->end_) return false;
  for (int i = 0; i < it->nops; i++) {
    char *p = it->data[i];
    for (int d = 0; d < nd; d++) p += r->coord_[d] * it->strides[i][d];
    r->ptrs[i] = p;
  }
  int64_t run = nd > 0 ? it->sizes[nd - 1] - r->coord_[nd - 1] : 1;
  r->n = run < r->end_ - r->pos_ ? run : r->end_ - r->pos_;
  r->pos_ += r->n;
  return true;
}

/*
 * A copy of src's elements as `dtype` (bp_aux_convert), always a new
 * contiguous tensor on src's device (*out), filled on the calling thread
 * through the data pointers: the device must be host-visible (the CPU, or
 * BP_DEVICE_HOST_VISIBLE).
 */
static inline bp_status bp_aux_copy_to_dtype(const bp_kernel_ctx *ctx, bp_tensor *src,
                                             int32_t dtype, bp_tensor **out) {
  const bp_tensor_view *v = ctx->host->tensor_view(src);
  if (bp_aux_dtype_size(dtype) == 0 || bp_aux_dtype_size(v->dtype) == 0)
    return ctx->host->set_errorf(BP_ERR_UNSUPPORTED, "%s: cannot convert %s to %s", ctx->op_name,
                                 bp_aux_dtype_name(v->dtype), bp_aux_dtype_name(dtype));
  bp_tensor *t;
  bp_status st = ctx->host->tensor_empty(v->device, dtype, v->ndim, v->sizes, &t);
  if (st != BP_OK) return st;
  const bp_tensor_view *views[2] = {ctx->host->tensor_view(t), v};
  bp_aux_iter it;
  bp_aux_run r;
  bp_aux_iter_plan(&it, 2, views, v->ndim, v->sizes);
  for (bp_aux_iter_start(&it, 0, it.numel, &r); bp_aux_iter_next(&it, &r);)
    for (int64_t k = 0; k < r.n; k++)
      bp_aux_convert(dtype, BP_AUX_AT(char, r, 0, k), v->dtype, BP_AUX_AT(const char, r, 1, k));
  *out = t;
  return BP_OK;
}

/* src's elements as `dtype`: a new reference to src itself when it has
 * that dtype (any strides), else bp_aux_copy_to_dtype's copy. */
static inline bp_status bp_aux_to_dtype(const bp_kernel_ctx *ctx, bp_tensor *src, int32_t dtype,
                                        bp_tensor **out) {
  if (ctx->host->tensor_view(src)->dtype == dtype) {
    *out = ctx->host->tensor_retain(src);
    return BP_OK;
  }
  return bp_aux_copy_to_dtype(ctx, src, dtype, out);
}

/* ------------------------------------------------------------------------ */
/* Operands in the dtype a kernel computes in                              */
/* ------------------------------------------------------------------------ */

/* A conversion of src to dtype on src's device: *out a new reference (the
 * caller releases it).  bp_aux_to_dtype is one, for host-visible devices;
 * a plugin with device memory passes its own. */
typedef bp_status (*bp_aux_cast_fn)(const bp_kernel_ctx *ctx, bp_tensor *src, int32_t dtype,
                                    bp_tensor **out);

/*
 * The operands of an elementwise kernel in the dtype it computes in, as a
 * NumPy ufunc's inner loop receives them: views[0] is the output and
 * views[first + i] input i, its own view when it has the dtype (any
 * strides) and else that of a converted temporary in temps[first + i].
 * Release with bp_aux_operands_release (also after a failed init).
 */
typedef struct bp_aux_operands {
  const bp_tensor_view *views[BP_AUX_ITER_MAX_OPS];
  bp_tensor *temps[BP_AUX_ITER_MAX_OPS]; /* owned; NULL where none */
} bp_aux_operands;

static inline void bp_aux_operands_release(const bp_kernel_ctx *ctx, bp_aux_operands *o) {
  for (int i = 0; i < BP_AUX_ITER_MAX_OPS; i++) {
    if (o->temps[i]) ctx->host->tensor_release(o->temps[i]);
    o->temps[i] = NULL;
  }
}

/* Sets o->views[0] to out and o->views[first + i] to ts[i] (i < n) in
 * dtype, converting with cast (NULL: bp_aux_to_dtype) where an input has
 * another dtype.  On failure the temporaries made so far are released. */
static inline bp_status bp_aux_operands_init(const bp_kernel_ctx *ctx, bp_aux_operands *o,
                                             bp_aux_cast_fn cast, const bp_tensor_view *out,
                                             int first, bp_tensor *const *ts, int n,
                                             int32_t dtype) {
  for (int i = 0; i < BP_AUX_ITER_MAX_OPS; i++) o->views[i] = NULL, o->temps[i] = NULL;
  if (first < 1 || n < 0 || first + n > BP_AUX_ITER_MAX_OPS)
    return ctx->host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: %d inputs from operand %d do not "
                                 "fit the %d operands of bp_aux_operands", ctx->op_name, n, first,
                                 BP_AUX_ITER_MAX_OPS);
  o->views[0] = out;
  for (int i = first; i < first + n; i++) {
    const bp_tensor_view *v = ctx->host->tensor_view(ts[i - first]);
    if (v->dtype != dtype) {
      bp_status st = (cast ? cast : bp_aux_to_dtype)(ctx, ts[i - first], dtype, &o->temps[i]);
      if (st != BP_OK) {
        o->temps[i] = NULL;
        bp_aux_operands_release(ctx, o);
        return st;
      }
      v = ctx->host->tensor_view(o->temps[i]);
    }
    o->views[i] = v;
  }
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Overlap                                                                  */
/* ------------------------------------------------------------------------ */

/* Whether two views address exactly the same elements in the same order. */
static inline bool bp_aux_same_view(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || (a->sizes[d] > 1 && a->strides[d] != b->strides[d]))
      return false;
  return true;
}

/* The first and one past the last byte of a non-empty view. */
static inline uintptr_t bp_aux_span_(const bp_tensor_view *v, bool end) {
  int64_t reach = 0;
  for (int32_t d = 0; end && d < v->ndim; d++)
    if (v->sizes[d] > 1) reach += (v->sizes[d] - 1) * v->strides[d];
  return (uintptr_t)v->data + (uintptr_t)(end ? (reach + 1) * v->itemsize : 0);
}

/* gcd(g, the byte strides of v's dimensions that are longer than 1). */
static inline uint64_t bp_aux_gcd_(uint64_t g, const bp_tensor_view *v) {
  for (int32_t d = 0; d < v->ndim; d++) {
    uint64_t b = v->sizes[d] > 1 ? (uint64_t)(v->strides[d] * v->itemsize) : 0;
    while (b) {
      uint64_t t = g % b;
      g = b;
      b = t;
    }
  }
  return g;
}

/*
 * Whether two views may share a byte (copy_ from an overlapping source,
 * add.out into an input).  Views on different devices, or whose byte spans
 * are apart, do not.  Otherwise an element of a starts a multiple of g (the
 * gcd of both views' byte strides) plus d away from one of b's, which rules
 * out interleaved views (the even and odd elements of a buffer); they meet
 * when d < b's itemsize or g - d < a's.  It may say yes wrongly, never no.
 */
static inline bool bp_aux_may_overlap(const bp_tensor_view *a, const bp_tensor_view *b) {
  if (a->numel == 0 || b->numel == 0) return false;
  if (a->device.type != b->device.type || a->device.index != b->device.index) return false;
  uintptr_t alo = bp_aux_span_(a, false), blo = bp_aux_span_(b, false);
  if (bp_aux_span_(a, true) <= blo || bp_aux_span_(b, true) <= alo) return false;
  uint64_t g = bp_aux_gcd_(bp_aux_gcd_(0, a), b);
  if (g == 0) return true; /* two single elements whose spans meet */
  int64_t diff = (int64_t)((intptr_t)alo - (intptr_t)blo) % (int64_t)g; /* a - b mod g */
  if (diff < 0) diff += (int64_t)g;
  return diff < b->itemsize || (int64_t)g - diff < a->itemsize;
}
/* For a reduction: the dimensions d of v with reduced[d] == want (the
 * kept ones, or the reduced ones; bp_aux_arg_reduce_dims gives
 * `reduced`), leaving out those of size 1, into sizes and strides (in
 * elements, as v's), outermost first; returns how many. */
static inline int bp_aux_dims_where(const bp_tensor_view *v, const bool *reduced, bool want,
                                    int64_t *sizes, int64_t *strides) {
  int n = 0;
  for (int32_t d = 0; d < v->ndim; d++) {
    if (reduced[d] != want || v->sizes[d] == 1) continue;
    sizes[n] = v->sizes[d];
    strides[n] = v->strides[d];
    n++;
  }
  return n;
}

/* Merges each of n dimensions (outermost first) into the one outside it
 * where memory allows (that one's stride is this one's size times its
 * stride), in place; returns how many are left. */
static inline int bp_aux_coalesce_dims(int n, int64_t *sizes, int64_t *strides) {
  int m = 0;
  for (int d = 0; d < n; d++) {
    if (m > 0 && strides[m - 1] == strides[d] * sizes[d]) {
      sizes[m - 1] *= sizes[d];
      strides[m - 1] = strides[d];
      continue;
    }
    sizes[m] = sizes[d];
    strides[m] = strides[d];
    m++;
  }
  return m;
}

/* The view of v's distinct elements, for a kernel that writes v (fill_):
 * an expanded dimension (stride 0, size > 1) counts once, so that no
 * element is written twice (by two threads).  *out gets v with `sizes`
 * (room for v->ndim values, which out->sizes then points to) in place of
 * v's sizes, and their product as its numel. */
static inline void bp_aux_distinct_view(const bp_tensor_view *v, bp_tensor_view *out,
                                        int64_t *sizes) {
  *out = *v;
  /* An empty tensor's other sizes may have a product past int64 (it has
   * no elements): it keeps numel 0.  Otherwise each product is at most
   * v's numel. */
  out->numel = v->numel == 0 ? 0 : 1;
  for (int32_t d = 0; d < v->ndim; d++) {
    sizes[d] = v->strides[d] == 0 && v->sizes[d] > 1 ? 1 : v->sizes[d];
    if (v->numel != 0) out->numel *= sizes[d];
  }
  out->sizes = sizes;
}

/*
 * The opening of a copy_ kernel (self = src, any device): what to read.
 * *read is NULL when there is nothing to do (src is self's very view, or
 * self has no elements).  Otherwise *read is the view to copy from, on
 * self's device: src's own, or that of *tmp (a new reference the caller
 * releases, else NULL):
 *   - src on another device is first brought to self's device, through
 *     the host's device interfaces (tensor_empty and tensor_copy);
 *   - src that overlaps self in memory is first copied, in self's dtype,
 *     by `copy` (a conversion that always makes a new tensor; NULL:
 *     bp_aux_copy_to_dtype), so that all of src is read before any of self
 *     is written.
 */
static inline bp_status bp_aux_copy_source(const bp_kernel_ctx *ctx, bp_tensor *self,
                                           bp_tensor *src, bp_aux_cast_fn copy, bp_tensor **tmp,
                                           const bp_tensor_view **read) {
  const bp_tensor_view *vs = ctx->host->tensor_view(self), *vr = ctx->host->tensor_view(src);
  bp_status st = BP_OK;
  *tmp = NULL;
  *read = NULL;
  if (vs->numel == 0 || (vr->device.type == vs->device.type &&
                         vr->device.index == vs->device.index && bp_aux_same_view(vs, vr)))
    return BP_OK;
  if (vr->device.type != vs->device.type || vr->device.index != vs->device.index) {
    st = ctx->host->tensor_empty(vs->device, vr->dtype, vr->ndim, vr->sizes, tmp);
    if (st == BP_OK) st = ctx->host->tensor_copy(*tmp, src);
  } else if (bp_aux_may_overlap(vs, vr)) {
    st = (copy ? copy : bp_aux_copy_to_dtype)(ctx, src, vs->dtype, tmp);
    if (st == BP_OK && *tmp == src) { /* a "copy" that returned src itself */
      ctx->host->tensor_release(*tmp);
      *tmp = NULL;
      st = ctx->host->set_errorf(BP_ERR_INTERNAL, "%s: the staging copy of an overlapping "
                                 "argument #1 is the argument itself", ctx->op_name);
    }
  } else {
    *read = vr;
    return BP_OK;
  }
  if (st != BP_OK) {
    if (*tmp) ctx->host->tensor_release(*tmp);
    *tmp = NULL;
    return st;
  }
  *read = ctx->host->tensor_view(*tmp);
  return BP_OK;
}

/* For an op that writes its Tensor argument #out (add.out): records
 * BP_ERR_INVALID_ARGUMENT, naming both, when that tensor may overlap one of
 * the Tensor arguments #0 .. #nin-1 without being exactly it. */
static inline bp_status bp_aux_check_out_overlap(const bp_kernel_ctx *ctx, const bp_value *args,
                                                 size_t out, size_t nin) {
  const bp_tensor_view *vo = ctx->host->tensor_view(args[out].u.tensor);
  for (size_t i = 0; i < nin; i++) {
    if (args[i].tag != BP_TAG_TENSOR) continue;
    const bp_tensor_view *vi = ctx->host->tensor_view(args[i].u.tensor);
    if (bp_aux_may_overlap(vo, vi) && !bp_aux_same_view(vo, vi)) {
      const char *in_name = bp_aux_arg_name(ctx, i);
      return bp_aux_arg_errorf(ctx, BP_ERR_INVALID_ARGUMENT, out, "overlaps argument #%u%s%s%s "
                               "in memory (it may only be exactly that tensor)", (unsigned)i,
                               *in_name ? " '" : "", in_name, *in_name ? "'" : "");
    }
  }
  return BP_OK;
}

#endif /* BACKPLANE_PLUGIN_AUX_ITER_H */
