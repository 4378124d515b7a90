/* conformance/ref/ref2.c - see ref.h: the reference of the ops of op set 2 that
 * are not plain unary ops (those are ref_unary's). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>

#include "num.h"

const char *const ref_cmpop_name[6] = {"eq", "ne", "lt", "le", "gt", "ge"};

int32_t ref_promote_scalar(int32_t dt, const ref_scalar *s) {
  if (s->kind == REF_S_FLOAT) return dt_is_float(dt) ? dt : BP_FLOAT32;
  if (s->kind == REF_S_INT) return dt == BP_BOOL ? BP_INT64 : dt;
  return dt;
}

rt *ref_scalar_rt(int32_t dt, const ref_scalar *s) {
  rt *src = rt_new(s->kind == REF_S_FLOAT ? BP_FLOAT64 : BP_INT64, 0, NULL);
  if (s->kind == REF_S_FLOAT) src->f[0] = s->f;
  else src->i[0] = s->kind == REF_S_BOOL ? (s->i != 0) : s->i;
  rt *o = ref_cast(src, dt);
  rt_free(src);
  return o;
}

/* The value of element k of an rt as a double (exact for the integers
 * the tests use), and whether it is NaN. */
static double val(const rt *a, int64_t k) {
  return dt_is_float(a->dtype) ? a->f[k] : (double)a->i[k];
}

rt *ref_compare(int op, const rt *a, const rt *b) {
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &n, sizes)) return NULL;
  int32_t dt = dt_promote(a->dtype, b->dtype);
  rt *ca = ref_cast(a, dt), *cb = ref_cast(b, dt);
  rt *o = rt_new(BP_BOOL, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  bool fl = dt_is_float(dt);
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    int64_t ka = ref_bidx(ca, n, idx), kb = ref_bidx(cb, n, idx);
    /* (int64 values compare exactly as integers, not as doubles) */
#define CMP(x, y)                                                                           \
  (op == RC_EQ ? (x) == (y) : op == RC_NE ? (x) != (y) : op == RC_LT ? (x) < (y)           \
   : op == RC_LE ? (x) <= (y) : op == RC_GT ? (x) > (y) : (x) >= (y))
    bool r = fl ? CMP(ca->f[ka], cb->f[kb]) : CMP(ca->i[ka], cb->i[kb]);
#undef CMP
    o->i[k] = r;
  }
  rt_free(ca);
  rt_free(cb);
  return o;
}

rt *ref_compare_scalar(int op, const rt *a, const ref_scalar *s) {
  rt *b = ref_scalar_rt(ref_promote_scalar(a->dtype, s), s);
  rt *o = ref_compare(op, a, b);
  rt_free(b);
  return o;
}

rt *ref_logical(bool or, const rt *a, const rt *b) {
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &n, sizes)) return NULL;
  rt *o = rt_new(BP_BOOL, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    /* NaN is true: it is not 0. */
    bool x = val(a, ref_bidx(a, n, idx)) != 0, y = val(b, ref_bidx(b, n, idx)) != 0;
    o->i[k] = or ? (x || y) : (x && y);
  }
  return o;
}

rt *ref_logical_not(const rt *a) {
  rt *o = rt_new(BP_BOOL, a->ndim, a->sizes);
  for (int64_t k = 0; k < a->numel; k++) o->i[k] = val(a, k) == 0;
  return o;
}

rt *ref_isnan(const rt *a) {
  rt *o = rt_new(BP_BOOL, a->ndim, a->sizes);
  for (int64_t k = 0; k < a->numel; k++) o->i[k] = dt_is_float(a->dtype) && isnan(a->f[k]);
  return o;
}

rt *ref_masked_fill(const rt *a, const rt *mask, const ref_scalar *value) {
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, mask->ndim, mask->sizes, &n, sizes)) return NULL;
  rt *v = ref_scalar_rt(a->dtype, value);
  rt *o = rt_new(a->dtype, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    bool m = mask->i[ref_bidx(mask, n, idx)] != 0;
    int64_t ka = ref_bidx(a, n, idx);
    o->f[k] = m ? v->f[0] : a->f[ka];
    o->i[k] = m ? v->i[0] : a->i[ka];
  }
  rt_free(v);
  return o;
}

rt *ref_clamp(const rt *a, const ref_scalar *lo, const ref_scalar *hi) {
  int32_t dt = ref_promote_scalar(ref_promote_scalar(a->dtype, lo), hi);
  rt *o = ref_cast(a, dt);
  const ref_scalar *b[2] = {lo, hi};
  for (int j = 0; j < 2; j++) {
    if (b[j]->kind == REF_S_NONE) continue;
    rt *s = ref_scalar_rt(dt, b[j]);
    for (int64_t k = 0; k < o->numel; k++) {
      if (dt_is_float(dt)) {
        double x = o->f[k], y = s->f[0];
        if (isnan(x) || isnan(y)) o->f[k] = NAN;
        else o->f[k] = j == 0 ? (x < y ? y : x) : (x > y ? y : x);
      } else {
        int64_t x = o->i[k], y = s->i[0];
        o->i[k] = j == 0 ? (x < y ? y : x) : (x > y ? y : x);
      }
    }
    rt_free(s);
  }
  return o;
}

rt *ref_binary_scalar(int op, const rt *a, const ref_scalar *s, double alpha) {
  int32_t dt = ref_promote_scalar(a->dtype, s);
  if (op == RB_DIV && !dt_is_float(dt)) dt = BP_FLOAT32;
  rt *b = ref_scalar_rt(dt, s);
  rt *o = ref_binary(op, a, b, alpha);
  rt_free(b);
  return o;
}

rt *ref_index_select(const rt *a, int64_t dim, const rt *index) {
  int32_t d = a->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + a->ndim : dim);
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t k = 0; k < a->ndim; k++) sizes[k] = a->sizes[k];
  if (a->ndim > 0) sizes[d] = index->numel;
  rt *o = rt_new(a->dtype, a->ndim, sizes);
  int64_t idx[BP_MAX_NDIM] = {0}, src[BP_MAX_NDIM];
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(o->ndim, sizes, idx)) {
    for (int32_t j = 0; j < a->ndim; j++) src[j] = idx[j];
    if (a->ndim > 0) src[d] = index->i[idx[d]];
    int64_t flat = 0;
    for (int32_t j = 0; j < a->ndim; j++) flat = flat * a->sizes[j] + src[j];
    o->f[k] = a->f[flat];
    o->i[k] = a->i[flat];
  }
  return o;
}

rt *ref_gather(const rt *a, int64_t dim, const rt *index) {
  int32_t d = a->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + a->ndim : dim);
  rt *o = rt_new(a->dtype, index->ndim, index->sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(o->ndim, o->sizes, idx)) {
    int64_t flat = 0;
    for (int32_t j = 0; j < a->ndim; j++)
      flat = flat * a->sizes[j] + (j == d ? index->i[k] : idx[j]);
    o->f[k] = a->f[flat];
    o->i[k] = a->i[flat];
  }
  return o;
}

rt *ref_embedding(const rt *weight, const rt *indices) {
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t k = 0; k < indices->ndim; k++) sizes[k] = indices->sizes[k];
  int64_t dim = weight->sizes[1];
  sizes[indices->ndim] = dim;
  rt *o = rt_new(weight->dtype, indices->ndim + 1, sizes);
  for (int64_t k = 0; k < indices->numel; k++)
    for (int64_t j = 0; j < dim; j++) {
      o->f[k * dim + j] = weight->f[indices->i[k] * dim + j];
      o->i[k * dim + j] = weight->i[indices->i[k] * dim + j];
    }
  return o;
}

rt *ref_cumsum(const rt *a, int64_t dim, int32_t dtype, int64_t *n_out) {
  int32_t dt = dtype != BP_DTYPE_INVALID ? dtype : dt_is_float(a->dtype) ? a->dtype : BP_INT64;
  rt *c = ref_cast(a, dt), *o = rt_new(dt, a->ndim, a->sizes);
  int32_t d = a->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + a->ndim : dim);
  int64_t outer = 1, n = a->ndim ? a->sizes[d] : 1, inner = 1;
  for (int32_t j = 0; j < d; j++) outer *= a->sizes[j];
  for (int32_t j = d + 1; j < a->ndim; j++) inner *= a->sizes[j];
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++) {
      double f = 0;
      uint64_t u = 0;
      for (int64_t k = 0; k < n; k++) {
        int64_t at = (p * n + k) * inner + i;
        if (dt_is_float(dt)) {
          f += c->f[at];
          o->f[at] = round_to(dt, f);
        } else if (dt == BP_BOOL) {
          u |= c->i[at] != 0;
          o->i[at] = (int64_t)u;
        } else {
          u += (uint64_t)c->i[at];
          o->i[at] = wrap_int(dt, (int64_t)u);
        }
      }
    }
  rt_free(c);
  *n_out = n;
  return o;
}

/* Whether element x comes strictly before y in the order (integers by
 * their int64 values, which a double would round). */
static bool sort_before(const rt *a, int64_t x, int64_t y, bool descending) {
  if (!dt_is_float(a->dtype)) return descending ? a->i[x] > a->i[y] : a->i[x] < a->i[y];
  double fx = a->f[x], fy = a->f[y];
  bool nx = isnan(fx), ny = isnan(fy);
  if (nx || ny) return descending ? nx && !ny : ny && !nx;
  return descending ? fx > fy : fx < fy;
}

/* Sorts positions order[lo .. hi-1] of the slice at element `base`, step
 * `step`, stably. */
static void sort_range(const rt *a, int64_t *order, int64_t *tmp, int64_t lo, int64_t hi,
                       int64_t base, int64_t step, bool descending) {
  if (hi - lo < 2) return;
  int64_t mid = lo + (hi - lo) / 2;
  sort_range(a, order, tmp, lo, mid, base, step, descending);
  sort_range(a, order, tmp, mid, hi, base, step, descending);
  int64_t x = lo, y = mid, o = lo;
  while (x < mid && y < hi)
    tmp[o++] = sort_before(a, base + order[y] * step, base + order[x] * step, descending)
                   ? order[y++]
                   : order[x++];
  while (x < mid) tmp[o++] = order[x++];
  while (y < hi) tmp[o++] = order[y++];
  for (int64_t j = lo; j < hi; j++) order[j] = tmp[j];
}

rt *ref_topk(const rt *a, int64_t dim, int64_t k, bool descending, rt **indices) {
  int32_t d = a->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + a->ndim : dim);
  int64_t sizes[BP_MAX_NDIM], outer = 1, n = a->ndim ? a->sizes[d] : 1, inner = 1;
  for (int32_t j = 0; j < a->ndim; j++) sizes[j] = a->sizes[j];
  if (a->ndim == 0) k = 1;
  else sizes[d] = k;
  for (int32_t j = 0; j < d; j++) outer *= a->sizes[j];
  for (int32_t j = d + 1; j < a->ndim; j++) inner *= a->sizes[j];
  rt *v = rt_new(a->dtype, a->ndim, sizes), *ix = rt_new(BP_INT64, a->ndim, sizes);
  int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  int64_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++) {
      /* a top-down merge sort of the positions: stable */
      for (int64_t e = 0; e < n; e++) order[e] = e;
      sort_range(a, order, tmp, 0, n, p * n * inner + i, inner, descending);
      for (int64_t r = 0; r < k; r++) {
        int64_t from = (p * n + order[r]) * inner + i, to = (p * k + r) * inner + i;
        if (dt_is_float(a->dtype)) v->f[to] = a->f[from];
        else v->i[to] = a->i[from];
        ix->i[to] = order[r];
      }
    }
  free(order);
  free(tmp);
  *indices = ix;
  return v;
}

/* The offset in t (row-major, rank nd or less, broadcast) of batch entry
 * idx[0 .. nb) and rows r, c of its last two dims; key heads map query
 * head h to h / (out heads / t's heads). */
static int64_t sdpa_at(const rt *t, int32_t nb, const int64_t *idx, const int64_t *out_sizes,
                       int64_t r, int64_t c) {
  int64_t off = 0, stride = 1;
  int32_t tn = t->ndim;
  int64_t tr = tn >= 2 ? t->sizes[tn - 2] : 1, tc = tn >= 1 ? t->sizes[tn - 1] : 1;
  off += (tc == 1 ? 0 : c) * stride;
  stride *= tc;
  if (tn >= 2) {
    off += (tr == 1 ? 0 : r) * stride;
    stride *= tr;
  }
  for (int32_t d = nb - 1, td = tn - 3; d >= 0 && td >= 0; d--, td--) {
    int64_t ts = t->sizes[td], i = idx[d];
    if (ts == 1) i = 0;
    else if (ts != out_sizes[d]) i /= out_sizes[d] / ts; /* grouped heads */
    off += i * stride;
    stride *= ts;
  }
  return off;
}

rt *ref_sdpa(const rt *q, const rt *k, const rt *v, const rt *mask, bool causal, double scale) {
  int32_t nd = q->ndim, nb = nd - 2;
  int64_t L = q->sizes[nd - 2], E = q->sizes[nd - 1], S = k->sizes[nd - 2], Ev = v->sizes[nd - 1];
  int64_t sizes[BP_MAX_NDIM], batch = 1;
  for (int32_t d = 0; d < nb; d++) {
    sizes[d] = q->sizes[d] == 1 ? k->sizes[d] : q->sizes[d];
    batch *= sizes[d];
  }
  sizes[nd - 2] = L;
  sizes[nd - 1] = Ev;
  if (scale != scale) scale = 1.0 / sqrt((double)E);
  rt *o = rt_new(q->dtype, nd, sizes);
  double *w = malloc((size_t)(S > 0 ? S : 1) * sizeof *w);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t i = 0; i < L; i++) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < S; j++) {
        double s = 0;
        for (int64_t e = 0; e < E; e++)
          s += q->f[sdpa_at(q, nb, idx, sizes, i, e)] * k->f[sdpa_at(k, nb, idx, sizes, j, e)];
        s *= scale;
        if (causal && j > i) s = -INFINITY;
        if (mask) {
          int64_t mo = sdpa_at(mask, nb, idx, sizes, i, j);
          if (mask->dtype == BP_BOOL) {
            if (!mask->i[mo]) s = -INFINITY;
          } else {
            s += mask->f[mo];
          }
        }
        w[j] = s;
        if (s > mx) mx = s;
      }
      double sum = 0;
      for (int64_t j = 0; j < S; j++) {
        w[j] = mx == -INFINITY ? 0 : exp(w[j] - mx);
        sum += w[j];
      }
      for (int64_t c = 0; c < Ev; c++) {
        double acc = 0;
        for (int64_t j = 0; j < S; j++) acc += w[j] * v->f[sdpa_at(v, nb, idx, sizes, j, c)];
        /* every score removed: NaN; no keys at all: the empty sum, 0 */
        o->f[(b * L + i) * Ev + c] = round_to(q->dtype, sum > 0 ? acc / sum : S == 0 ? 0 : NAN);
      }
    }
    for (int32_t d = nb - 1; d >= 0; d--) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  free(w);
  return o;
}
