/*
 * conformance/sample_index.c - the sample sets of the gathers of op set 2
 * (index_select, gather, embedding): the index tensors, their edge cases
 * (an empty index, repeated indices, the last valid index, int32
 * indices), and the indices out of range that a kernel must refuse.
 *
 * Results are copies of self's elements: they compare bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

/* An int64 (or int32) index tensor of shape (nd, sz), values in [0, bound). */
static rt *rand_index(int32_t dt, int32_t nd, const int64_t *sz, int64_t bound) {
  rt *r = rt_new(dt, nd, sz);
  for (int64_t k = 0; k < r->numel; k++)
    r->i[k] = bound > 0 ? (int64_t)(cert_rng_next() % (uint64_t)bound) : 0;
  return r;
}

/* A sample of the op on self x (layout lx) along dim with index ix (layout
 * li); embedding takes x as its weight and ignores dim. */
static sample *one(slist *L, const char *label, rt *x, int lx, int64_t dim, rt *ix, int li) {
  sample *s = cert_gen_next(L, label);
  s->exact = true;
  cert_add_tensor(s, x, lx);
  if (kind_of(L) == K_EMBEDDING) {
    cert_add_tensor(s, ix, li);
    return s;
  }
  cert_add_int(s, dim);
  cert_add_tensor(s, ix, li);
  return s;
}

/* The index argument of a valid sample for self x along dim: index_select
 * and embedding take a list of n indices, gather an index of x's rank with
 * n along dim and x's sizes elsewhere. */
static rt *index_for(slist *L, const rt *x, int64_t dim, int64_t n, int32_t idt) {
  int32_t d = x->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + x->ndim : dim);
  int64_t bound = x->ndim == 0 ? 1 : x->sizes[d];
  if (kind_of(L) != K_GATHER) {
    int64_t one_n[1] = {n};
    return rand_index(idt, x->ndim == 0 && kind_of(L) == K_INDEX_SELECT ? 0 : 1, one_n, bound);
  }
  int64_t sz[BP_MAX_NDIM];
  for (int32_t j = 0; j < x->ndim; j++) sz[j] = j == d ? n : x->sizes[j];
  return rand_index(idt, x->ndim, sz, bound);
}

static void valid(slist *L, const char *label, int32_t nd, const int64_t *sz, int lx,
                  int64_t dim, int64_t n, int li, int32_t idt) {
  rt *x = cert_gen_input(L, 0, L->dt, nd, sz);
  if (cert_lay_is_expanded(lx)) cert_gen_make_expandable(x, lx);
  rt *ix = index_for(L, x, dim, n, idt);
  if (cert_lay_is_expanded(li)) cert_gen_make_expandable(ix, li);
  one(L, label, x, lx, dim, ix, li);
}

/* Every case's self is 2-dimensional at least for embedding (a weight). */
static void set_basic(slist *L) {
  static const int64_t s45[] = {4, 5};
  valid(L, "basic", 2, s45, L_CONTIG, kind_of(L) == K_EMBEDDING ? 0 : 1, 3, L_CONTIG, BP_INT64);
}

static void set_sizes(slist *L) {
  char label[64];
  static const int64_t lens[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    int64_t sz[2] = {lens[i] + 1, lens[i]};
    snprintf(label, sizeof label, "length %lld", (long long)lens[i]);
    /* rows of length n, n + 1 of them, n indices */
    valid(L, label, 2, sz, L_CONTIG, 0, lens[i], L_CONTIG, BP_INT64);
  }
  static const struct {
    int32_t n;
    int64_t s[5];
  } ranks[] = {{0, {0}}, {1, {6}}, {3, {2, 3, 4}}, {4, {2, 3, 1, 4}}, {5, {2, 1, 3, 2, 3}}};
  for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
    if (kind_of(L) == K_EMBEDDING && ranks[i].n != 2) {
      /* embedding's weight is 2-D: the rank is the indices' */
      int64_t w[2] = {7, 3}, isz[5] = {2, 1, 3, 2, 3};
      int32_t ni = ranks[i].n;
      snprintf(label, sizeof label, "rank %d", (int)ni);
      rt *x = cert_gen_input(L, 0, L->dt, 2, w), *ix = rand_index(BP_INT64, ni, isz, 7);
      one(L, label, x, L_CONTIG, 0, ix, L_CONTIG);
      continue;
    }
    snprintf(label, sizeof label, "rank %d", (int)ranks[i].n);
    valid(L, label, ranks[i].n, ranks[i].s, L_CONTIG, -1, ranks[i].n ? 2 : 1, L_CONTIG, BP_INT64);
  }
  /* gather of a 0-dim self with a 1-dim index (PyTorch takes self as one
   * element): n copies of it */
  for (int64_t n = 0; n < 4 && kind_of(L) == K_GATHER; n += 1 + (n > 0)) {
    int64_t none[1] = {0}, len[1] = {n};
    snprintf(label, sizeof label, "rank 0, an index of %lld", (long long)n);
    one(L, label, cert_gen_input(L, 0, L->dt, 0, none), L_CONTIG, 0,
        rand_index(BP_INT64, 1, len, 1), L_CONTIG);
  }
}

static void set_layouts(slist *L) {
  static const int64_t s3[] = {5, 7, 9}, s4[] = {2, 3, 5, 7}, w[] = {9, 6};
  char label[64];
  bool emb = kind_of(L) == K_EMBEDDING;
  for (int arg = 0; arg < 2; arg++)
    for (int lay = 1; lay < L_KINDS; lay++) {
      const int64_t *sz = lay == L_CHANNELS_LAST ? s4 : emb ? w : s3;
      int32_t nd = lay == L_CHANNELS_LAST ? 4 : emb ? 2 : 3;
      if (emb && lay == L_CHANNELS_LAST) continue;
      snprintf(label, sizeof label, "argument %d %s",
               arg == 0 ? 0
               : emb    ? 1
                        : 2,
               cert_lay_name[lay]);
      if (arg == 0) {
        valid(L, label, nd, sz, lay, 1, 4, L_CONTIG, BP_INT64);
      } else if (kind_of(L) == K_GATHER) {
        valid(L, label, nd, sz, L_CONTIG, 1, 6, lay, BP_INT64);
      } else if (lay == L_TRANSPOSED || lay == L_STEP || lay == L_OFFSET || lay == L_EXPANDED) {
        /* a list of indices, laid out as a view (every other element, an
         * offset, a broadcast value) */
        rt *x = cert_gen_input(L, 0, L->dt, nd, sz);
        int64_t n[2] = {3, 4};
        rt *ix = rand_index(BP_INT64, emb ? 2 : 1, emb ? n : &n[1], sz[emb ? 0 : 1]);
        if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(ix, lay);
        one(L, label, x, L_CONTIG, 1, ix, lay);
      }
    }
}

static void set_dims(slist *L) {
  if (kind_of(L) == K_EMBEDDING) return;
  static const int64_t s4[] = {3, 4, 2, 5};
  char label[64];
  for (int64_t dim = -4; dim < 4; dim++) {
    snprintf(label, sizeof label, "dim %lld", (long long)dim);
    valid(L, label, 4, s4, L_CONTIG, dim, 3, L_CONTIG, BP_INT64);
  }
}

/* The index edge cases, and self's special values copied as they are. */
static void set_values(slist *L) {
  static const int64_t s = 6, sz[2] = {6, 5};
  bool g = kind_of(L) == K_GATHER;
  const struct {
    const char *label;
    int64_t n;
    int64_t v[8];
  } cases[] = {{"an empty index", 0, {0}},
               {"repeated indices", 6, {2, 2, 2, 0, 0, 2}},
               {"the last valid index", 3, {s - 1, 0, s - 1}},
               {"every index once, reversed", 6, {5, 4, 3, 2, 1, 0}}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int32_t idt = 0; idt < 2; idt++) {
      char label[64];
      snprintf(label, sizeof label, "%s (%s)", cases[c].label, idt ? "int32" : "int64");
      rt *x = cert_gen_input(L, 0, L->dt, 2, sz);
      cert_fill_rt(x, -1e4, 1e4);
      if (dt_is_float(L->dt)) {
        static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 5e-324};
        for (int j = 0; j < 5 && j < x->numel; j++) x->f[j * 7 % x->numel] = round_to(L->dt, sp[j]);
      }
      int64_t isz[2] = {g ? cases[c].n : cases[c].n, sz[1]};
      rt *ix = rt_new(idt ? BP_INT32 : BP_INT64, g ? 2 : 1, isz);
      for (int64_t k = 0; k < ix->numel; k++) ix->i[k] = cases[c].v[g ? k / sz[1] : k];
      one(L, label, x, L_CONTIG, 0, ix, L_CONTIG);
    }
}

static void set_large(slist *L) {
  /* a vocabulary-sized table, and a gather over many rows */
  int64_t table[2] = {50257, 64}, big[2] = {331, 317};
  if (kind_of(L) == K_GATHER) {
    valid(L, "[331, 317] along 1", 2, big, L_CONTIG, 1, 200, L_CONTIG, BP_INT64);
    valid(L, "[331, 317] transposed along 0", 2, big, L_TRANSPOSED, 0, 300, L_CONTIG, BP_INT64);
  } else {
    /* (the first is the one the concurrency check copies to each thread:
     * of the other ops' size) */
    if (kind_of(L) == K_INDEX_SELECT)
      valid(L, "[331, 317] along 1", 2, big, L_CONTIG, 1, 500, L_CONTIG, BP_INT32);
    valid(L, "a [50257, 64] table, 1000 rows", 2, table, L_CONTIG, 0, 1000, L_CONTIG, BP_INT64);
  }
}

/* Shapes the op set refuses, then indices out of range, which the meta
 * function cannot see and the kernel must refuse (s->refuse). */
static void set_bad(slist *L) {
  static const int64_t s23[] = {2, 3}, s3[] = {3}, s22[] = {2, 2}, s1[] = {1};
  enum kind k = kind_of(L);
  sample *s;
  if (k == K_INDEX_SELECT) {
    s = one(L, "a 2-dimensional index", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 0,
            rand_index(BP_INT64, 2, s22, 2), L_CONTIG);
  } else if (k == K_GATHER) {
    s = one(L, "an index of another rank", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 0,
            rand_index(BP_INT64, 1, s3, 2), L_CONTIG);
    static const int64_t s24[] = {2, 4};
    s = one(L, "an index larger than self off dim", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG,
            0, rand_index(BP_INT64, 2, s24, 2), L_CONTIG);
    /* a 0-dim self has one element: index 1 is out of range */
    int64_t none[1] = {0};
    rt *ix = rt_new(BP_INT64, 1, s3);
    for (int64_t j = 0; j < 3; j++) ix->i[j] = j == 2;
    s = one(L, "index 1 of a 0-dim self", cert_gen_input(L, 0, L->dt, 0, none), L_CONTIG, 0, ix,
            L_CONTIG);
    s->refuse = BP_ERR_INVALID_ARGUMENT;
  } else {
    s = one(L, "a 1-dimensional weight", cert_gen_input(L, 0, L->dt, 1, s3), L_CONTIG, 0,
            rand_index(BP_INT64, 1, s1, 3), L_CONTIG);
  }
  rt *fl = rt_new(BP_FLOAT32, 1, s1);
  s = one(L, "a float index", cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG, 0, fl, L_CONTIG);
  (void)s;
  /* out of range: the size itself, -1, a huge index, an empty dim */
  const struct {
    const char *label;
    int64_t v;
    bool empty;
  } oor[] = {{"index == the size (2)", 2, false}, {"index -1", -1, false},
             {"index 2^40", (int64_t)1 << 40, false}, {"index 0 of an empty dim", 0, true}};
  for (size_t c = 0; c < sizeof oor / sizeof *oor; c++) {
    int64_t xs[2] = {oor[c].empty ? 0 : 2, 3};
    int64_t is[2] = {1, 3};
    rt *ix = rt_new(BP_INT64, k == K_GATHER ? 2 : 1, is);
    for (int64_t j = 0; j < ix->numel; j++) ix->i[j] = j == ix->numel - 1 ? oor[c].v : 0;
    if (oor[c].empty) ix->i[0] = 0;
    s = one(L, oor[c].label, cert_gen_input(L, 0, L->dt, 2, xs), L_CONTIG, 0, ix, L_CONTIG);
    s->refuse = BP_ERR_INVALID_ARGUMENT;
  }
}

bool cert_gen_index_set(slist *L, int sk) {
  enum kind k = kind_of(L);
  if (k != K_INDEX_SELECT && k != K_GATHER && k != K_EMBEDDING) return false;
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
