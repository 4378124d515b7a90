/*
 * conformance/checks/unordered.c - topk with sorted=False gives its k
 * results along dim in an order of the kernel's choosing.  Before the
 * numerics compare, the results are put in the reference's order: by
 * value as the op orders them (NaN above every number, largest first when
 * largest), ties by index.  Then the compare checks exactly what it checks
 * for sorted=True: the same k values, and indices that pick them.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"
#include "num.h"

/* A result read back as a row-major rt (owned), or NULL. */
static rt *read_back(const bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  size_t len = 0;
  unsigned char *b = cert_tensor_bytes(t, &len);
  if (!b) return NULL;
  rt *r = rt_new(v->dtype, v->ndim, v->sizes);
  size_t item = bp_dtype_size(v->dtype);
  for (int64_t j = 0; j < r->numel; j++) {
    if (dt_is_float(v->dtype)) r->f[j] = load_f(b + (size_t)j * item, v->dtype);
    else r->i[j] = load_i(b + (size_t)j * item, v->dtype);
  }
  free(b);
  return r;
}

/* A new CPU tensor holding r's values (NULL when out of memory). */
static bp_tensor *written(const rt *r) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, r->dtype, r->ndim, r->sizes, &t) != BP_OK) return NULL;
  const bp_tensor_view *v = bp_tensor_get_view(t);
  size_t item = bp_dtype_size(r->dtype);
  for (int64_t j = 0; j < r->numel; j++) {
    unsigned char *p = (unsigned char *)v->data + (size_t)j * item;
    if (dt_is_float(r->dtype)) store_f(p, r->dtype, r->f[j]);
    else store_i(p, r->dtype, r->i[j]);
  }
  return t;
}

bool cert_in_reference_order(cert_ctx *cx, const sample *s, bp_stack *st, const char *desc) {
  if (cert_core_refs[cx->cur.r].kind != K_TOPK || s->n <= 4 || s->a[4].i != 0) return true;
  bp_tensor *tv = NULL, *ti = NULL;
  if (st->top < 2 || bp_stack_get_tensor(st, 0, &tv) != BP_OK ||
      bp_stack_get_tensor(st, 1, &ti) != BP_OK)
    return true; /* the compare names what is missing */
  rt *v = read_back(tv), *ix = read_back(ti);
  if (!v || !ix || ix->dtype != BP_INT64 || v->ndim != ix->ndim || v->numel != ix->numel) {
    rt_free(v);
    rt_free(ix);
    return true; /* the compare names the dtype or the shape */
  }
  int32_t nd = v->ndim;
  int64_t dim = s->a[2].i;
  int32_t d = nd == 0 ? 0 : (int32_t)(dim < 0 ? dim + nd : dim);
  int64_t k = nd ? v->sizes[d] : 1, outer = 1, inner = 1;
  for (int32_t j = 0; j < d; j++) outer *= v->sizes[j];
  for (int32_t j = d + 1; j < nd; j++) inner *= v->sizes[j];
  /* First by index (insertion sort of each slice), so that the stable
   * sort by value that follows leaves ties in index order. */
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t a = 1; a < k; a++)
        for (int64_t b = a; b > 0; b--) {
          int64_t x = (p * k + b) * inner + i, y = (p * k + b - 1) * inner + i;
          if (ix->i[y] <= ix->i[x]) break;
          int64_t ti_ = ix->i[x];
          ix->i[x] = ix->i[y], ix->i[y] = ti_;
          if (dt_is_float(v->dtype)) {
            double tf = v->f[x];
            v->f[x] = v->f[y], v->f[y] = tf;
          } else {
            int64_t tn = v->i[x];
            v->i[x] = v->i[y], v->i[y] = tn;
          }
        }
  /* Then by value, as the reference sorts: its positions give the order. */
  rt *pos = NULL;
  rt *sorted = ref_topk(v, d, k, s->a[3].i != 0, &pos);
  rt *six = rt_new(BP_INT64, nd, ix->sizes);
  for (int64_t p = 0; p < outer; p++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t r = 0; r < k; r++) {
        int64_t to = (p * k + r) * inner + i;
        six->i[to] = ix->i[(p * k + pos->i[to]) * inner + i];
      }
  bp_tensor *nv = written(sorted), *ni = written(six);
  rt_free(v);
  rt_free(ix);
  rt_free(pos);
  rt_free(sorted);
  rt_free(six);
  if (!nv || !ni) {
    bp_tensor_release(nv);
    bp_tensor_release(ni);
    cert_verdict(cx, ST_FAIL,
                 "numerics: certifier error: cannot order the results of %s (sorted=False): "
                 "%s",
                 desc, bp_last_error());
    return false;
  }
  bp_tensor_release(st->values[0].u.tensor);
  bp_tensor_release(st->values[1].u.tensor);
  st->values[0].u.tensor = nv;
  st->values[1].u.tensor = ni;
  return true;
}
