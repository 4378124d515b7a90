/*
 * conformance/sample_sort.c - the sample sets of topk and sort (op set 2):
 * slices of every length around the kernels' thresholds (topk's k up to
 * and past 64, where the reference plugin changes algorithm), every dim
 * and layout, and values with NaN, infinities, signed zeros and many ties,
 * whose order the op set fixes (docs/op-set.md: by value, NaN above every
 * number, equal values by index).
 *
 * Both results are copies of self's elements and their indices: they
 * compare bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

/* One sample on x (layout lx) along dim: topk with k and largest, or sort
 * with descending = largest. */
static sample *one(slist *L, const char *label, rt *x, int lx, int64_t dim, int64_t k,
                   bool largest) {
  sample *s = cert_gen_next(L, label);
  s->exact = true;
  cert_add_tensor(s, x, lx);
  if (kind_of(L) == K_TOPK) {
    cert_add_int(s, k);
    cert_add_int(s, dim);
    cert_add_bool(s, largest);
    cert_add_bool(s, true);
  } else {
    cert_add_int(s, dim);
    cert_add_bool(s, largest);
  }
  return s;
}

/* Values drawn from a few, so that ties are common: small integers, and
 * for floats NaN, the infinities and both zeros among them. */
static void tied(rt *x, int32_t dt) {
  static const double fv[] = {-1, 0, 1, 2, NAN, INFINITY, -INFINITY, -0.0};
  for (int64_t j = 0; j < x->numel; j++) {
    uint64_t r = cert_rng_next();
    if (dt_is_float(dt))
      x->f[j] = fv[r % (r % 3 ? 4 : 8)];
    else
      x->i[j] = dt == BP_BOOL ? (int64_t)(r & 1) : (int64_t)(r % 4);
  }
}

static sample *valid(slist *L, const char *label, int32_t nd, const int64_t *sz, int lx,
                     int64_t dim, int64_t k, bool largest, bool ties) {
  rt *x = cert_gen_input(L, 0, L->dt, nd, sz);
  if (ties) tied(x, L->dt);
  if (cert_lay_is_expanded(lx)) cert_gen_make_expandable(x, lx);
  return one(L, label, x, lx, dim, k, largest);
}

/* topk's sample s with sorted=False: the k results may come in any order
 * (the numerics check puts them in the reference's before comparing). */
static void unsorted(slist *L, sample *s) {
  if (kind_of(L) != K_TOPK) return;
  s->a[4].i = 0;
  size_t n = strlen(s->label);
  snprintf(s->label + n, sizeof s->label - n, ", sorted=False");
}

static void set_basic(slist *L) {
  static const int64_t s23[] = {2, 3};
  valid(L, "basic", 2, s23, L_CONTIG, -1, 2, true, false);
}

/* Lengths of dim around the algorithms' thresholds, with k small, at 64
 * and 65, and the whole length; ranks 0 to 5. */
static void set_sizes(slist *L) {
  static const int64_t lens[] = {0, 1, 2, 3, 7, 16, 17, 63, 64, 65, 66, 129, 1000};
  char label[96];
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    int64_t n = lens[i], sz[2] = {3, n};
    const int64_t ks[] = {n < 3 ? n : 3, n < 64 ? n : 64, n < 65 ? n : 65, n};
    for (size_t j = 0; j < (kind_of(L) == K_TOPK ? 4u : 1u); j++) {
      snprintf(label, sizeof label, "length %lld, k %lld", (long long)n, (long long)ks[j]);
      valid(L, label, 2, sz, L_CONTIG, 1, ks[j], (i + j) % 2 == 0, i % 3 == 1);
    }
  }
  static const struct {
    int32_t n;
    int64_t s[5];
  } ranks[] = {{0, {0}}, {1, {6}}, {3, {2, 3, 4}}, {4, {2, 3, 1, 4}}, {5, {2, 1, 3, 2, 3}}};
  for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
    snprintf(label, sizeof label, "rank %d", (int)ranks[i].n);
    valid(L, label, ranks[i].n, ranks[i].s, L_CONTIG, -1, ranks[i].n ? 2 : 1, i % 2 == 0, false);
  }
  static const int64_t none[1] = {0};
  rt *x0 = cert_gen_input(L, 0, L->dt, 0, none);
  if (kind_of(L) == K_TOPK) one(L, "0-dim, k 0 (its element, as PyTorch)", x0, L_CONTIG, 0, 0, 1);
  else rt_free(x0);
}

static void set_layouts(slist *L) {
  static const int64_t s3[] = {5, 7, 9}, s4[] = {2, 3, 5, 7};
  char label[64];
  for (int lay = 1; lay < L_KINDS; lay++) {
    bool cl = lay == L_CHANNELS_LAST;
    snprintf(label, sizeof label, "argument 0 %s", cert_lay_name[lay]);
    valid(L, label, cl ? 4 : 3, cl ? s4 : s3, lay, 1, 4, lay % 2 == 0, lay % 3 == 0);
  }
}

static void set_dims(slist *L) {
  static const int64_t s4[] = {3, 4, 2, 5};
  char label[64];
  for (int64_t dim = -4; dim < 4; dim++)
    for (int largest = 0; largest < 2; largest++) {
      snprintf(label, sizeof label, "dim %lld, %s", (long long)dim,
               largest ? "largest" : "smallest");
      int64_t n = s4[dim < 0 ? dim + 4 : dim];
      sample *v = valid(L, label, 4, s4, L_CONTIG, dim, n > 2 ? n - 1 : n, largest, dim % 2 == 0);
      if (dim == -1 || dim == 2) unsorted(L, v);
    }
}

/* Ties everywhere, NaN, the infinities and both zeros; the integer
 * extremes. */
static void set_values(slist *L) {
  static const int64_t s[] = {4, 67};
  char label[64];
  for (int largest = 0; largest < 2; largest++) {
    for (int64_t k = 1; k <= 67; k += 33) {
      snprintf(label, sizeof label, "tied and special values, k %lld, %s", (long long)k,
               largest ? "largest" : "smallest");
      valid(L, label, 2, s, L_CONTIG, 1, k, largest, true);
      if (kind_of(L) != K_TOPK) continue; /* (sort has no k and no sorted=False) */
      snprintf(label, sizeof label, "tied and special values, k %lld, %s", (long long)k + 7,
               largest ? "largest" : "smallest");
      unsorted(L, valid(L, label, 2, s, L_CONTIG, 1, k + 7, largest, true));
    }
    if (dt_is_float(L->dt)) {
      /* ties among NaNs of every pattern, negative ones among them: each
       * is above every number */
      rt *x = cert_gen_input(L, 0, L->dt, 2, s);
      tied(x, L->dt);
      for (int64_t j = 0; j < x->numel; j++)
        if (x->f[j] != x->f[j]) x->f[j] = cert_gen_nan_payload(L->dt, (int)(j % NPAYLOAD));
      snprintf(label, sizeof label, "tied values with NaN payloads, k 67, %s",
               largest ? "largest" : "smallest");
      one(L, label, x, L_CONTIG, 1, 67, largest);
    }
    rt *x = cert_gen_input(L, 0, L->dt, 2, s);
    if (!dt_is_float(L->dt))
      for (int64_t j = 0; j < x->numel; j += 3) x->i[j] = j % 2 ? dt_max(L->dt) : dt_min(L->dt);
    snprintf(label, sizeof label, "extremes, along dim 0, %s", largest ? "largest" : "smallest");
    one(L, label, x, L_CONTIG, 0, 3, largest);
  }
}

static void set_large(slist *L) {
  /* sampling's topk of a vocabulary, and many slices of a matrix */
  static const int64_t vocab[] = {2, 50257}, big[] = {331, 317};
  valid(L, "[331, 317] along 1", 2, big, L_CONTIG, 1, kind_of(L) == K_TOPK ? 40 : 317, true,
        false);
  valid(L, "[2, 50257], k 50", 2, vocab, L_CONTIG, 1, 50, true, false);
  if (kind_of(L) == K_TOPK)
    unsorted(L, valid(L, "[2, 50257], k 50", 2, vocab, L_CONTIG, 1, 50, true, false));
  valid(L, "[331, 317] transposed along 0", 2, big, L_TRANSPOSED, 0,
        kind_of(L) == K_TOPK ? 300 : 331, false, true);
}

/* What the op set refuses: a dim out of range, k out of range. */
static void set_bad(slist *L) {
  static const int64_t s23[] = {2, 3};
  one(L, "dim 2 of a 2-D tensor", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 2, 1, true);
  one(L, "dim -3 of a 2-D tensor", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, -3, 1, true);
  if (kind_of(L) == K_TOPK) {
    one(L, "k 4 of a dim of 3", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 1, 4, true);
    one(L, "k -1", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 1, -1, false);
  }
}

bool cert_gen_sort_set(slist *L, int sk) {
  enum kind k = kind_of(L);
  if (k != K_TOPK && k != K_SORT) return false;
  switch (sk) {
    case SK_BASIC: set_basic(L); break;
    case SK_SIZES: set_sizes(L); break;
    case SK_LAYOUTS: set_layouts(L); break;
    case SK_DIMS: set_dims(L); break;
    case SK_VALUES: set_values(L); break;
    case SK_LARGE: set_large(L); break;
    case SK_BADSHAPE: set_bad(L); break;
    default: break;
  }
  return true;
}
