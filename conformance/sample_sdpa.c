/*
 * conformance/sample_sdpa.c - the sample sets of scaled_dot_product_attention
 * (op set 2): query and key lengths on both sides of the blocks a fused
 * kernel uses (64), causal with L != S, bool and float masks that
 * broadcast, rows that remove every key (NaN), grouped-query and broadcast
 * batch dims, E != Ev, strided inputs, large scores, and the shapes and
 * arguments the op set refuses.
 *
 * Results are compared with the float64 composition within matmul's
 * tolerance for each of the two products (samples.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

typedef struct attn {
  int32_t nd;
  int64_t b, kb, hq, hk, L, S, E, Ev; /* batch (query's, key's) and heads: dims 0, 1 of rank 4 */
} attn;

static void shape_of(const attn *a, int which, int64_t *sz) {
  /* which: 0 query, 1 key, 2 value */
  int64_t h = which == 0 ? a->hq : a->hk, rows = which == 0 ? a->L : a->S,
          cols = which == 2 ? a->Ev : a->E;
  int32_t k = 0;
  if (a->nd == 4) sz[k++] = which == 0 ? a->b : a->kb;
  if (a->nd >= 3) sz[k++] = h;
  sz[k++] = rows;
  sz[k++] = cols;
}

/* A sample: q, k, v in layouts lq, lk, lv; mask (owned) or NULL; causal;
 * scale (NAN for None). */
static sample *one(slist *L, const char *label, const attn *a, int lq, int lk, int lv, rt *mask,
                   bool causal, double scale) {
  sample *s = cert_gen_next(L, label);
  int64_t sz[3][4];
  for (int w = 0; w < 3; w++) {
    shape_of(a, w, sz[w]);
    rt *t = cert_gen_input(L, w, L->dt, a->nd, sz[w]);
    int lay = w == 0 ? lq : w == 1 ? lk : lv;
    if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(t, lay);
    cert_add_tensor(s, t, lay);
  }
  if (mask)
    cert_add_tensor(s, mask, L_CONTIG);
  else
    cert_add_none(s);
  cert_add_float(s, 0.0);
  cert_add_bool(s, causal);
  if (scale == scale) cert_add_float(s, scale);
  return s;
}

static attn attn_shape(int32_t nd, int64_t b, int64_t hq, int64_t hk, int64_t Lq, int64_t S,
                  int64_t E, int64_t Ev) {
  attn a = {nd, b, b, hq, hk, Lq, S, E, Ev};
  return a;
}

/* A bool mask of nd dims (sizes sz), each element kept with probability
 * 3/4; row `none` (or -1) removes every key. */
static rt *bool_mask(int32_t nd, const int64_t *sz, int64_t none) {
  rt *m = rt_new(BP_BOOL, nd, sz);
  int64_t S = sz[nd - 1];
  for (int64_t j = 0; j < m->numel; j++) m->i[j] = (cert_rng_next() & 3) != 0;
  if (none >= 0 && nd >= 2)
    for (int64_t j = 0; j < m->numel; j++)
      if (j / S % sz[nd - 2] == none) m->i[j] = 0;
  return m;
}

static rt *float_mask(const slist *L, int32_t nd, const int64_t *sz, bool with_inf) {
  rt *m = rt_new(L->dt, nd, sz);
  for (int64_t j = 0; j < m->numel; j++) {
    uint64_t r = cert_rng_next();
    m->f[j] = round_to(L->dt, with_inf && r % 5 == 0 ? -INFINITY : (double)(r % 9) * 0.25 - 1);
  }
  return m;
}

static void set_basic(slist *L) {
  attn a = attn_shape(4, 2, 3, 3, 5, 7, 8, 8);
  one(L, "basic", &a, L_CONTIG, L_CONTIG, L_CONTIG, NULL, false, NAN);
}

/* Lengths on both sides of 64, causal with L != S, E != Ev. */
static void set_sizes(slist *L) {
  static const int64_t lens[][2] = {{1, 1}, {1, 65}, {63, 64}, {64, 64}, {65, 130},
                                    {130, 65}, {5, 9},  {9, 5},   {2, 200}};
  char label[96];
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
    for (int causal = 0; causal < 2; causal++) {
      attn a = attn_shape(3, 1, 2, 2, lens[i][0], lens[i][1], 16, i % 3 == 0 ? 24 : 16);
      snprintf(label, sizeof label, "L %lld, S %lld, E 16, Ev %lld%s", (long long)a.L,
               (long long)a.S, (long long)a.Ev, causal ? ", causal" : "");
      one(L, label, &a, L_CONTIG, L_CONTIG, L_CONTIG, NULL, causal, NAN);
    }
  static const int64_t evs[] = {1, 64, 70};
  for (size_t i = 0; i < 3; i++) {
    attn a = attn_shape(2, 1, 1, 1, 33, 70, 8, evs[i]);
    snprintf(label, sizeof label, "rank 2, Ev %lld", (long long)evs[i]);
    one(L, label, &a, L_CONTIG, L_CONTIG, L_CONTIG, NULL, false, NAN);
  }
}

static void set_layouts(slist *L) {
  static const int lays[] = {L_TRANSPOSED, L_STEP, L_OFFSET};
  char label[64];
  for (int w = 0; w < 3; w++)
    for (size_t i = 0; i < 3; i++) {
      attn a = attn_shape(4, 2, 2, 2, 70, 66, 12, 12);
      snprintf(label, sizeof label, "argument %d %s", w, cert_lay_name[lays[i]]);
      one(L, label, &a, w == 0 ? lays[i] : L_CONTIG, w == 1 ? lays[i] : L_CONTIG,
          w == 2 ? lays[i] : L_CONTIG, NULL, i == 1, NAN);
    }
}

/* Masks that broadcast, grouped-query heads, a key batch of 1, scale. */
static void set_broadcast(slist *L) {
  attn a = attn_shape(4, 2, 4, 2, 70, 90, 16, 16);
  int64_t full[2] = {70, 90}, row[2] = {1, 90}, heads[4] = {1, 4, 1, 90};
  one(L, "grouped-query heads (4 by 2)", &a, 0, 0, 0, NULL, false, NAN);
  one(L, "grouped-query heads, causal", &a, 0, 0, 0, NULL, true, NAN);
  one(L, "bool mask [L, S], a row of none", &a, 0, 0, 0, bool_mask(2, full, 3), false, NAN);
  one(L, "bool mask [1, S]", &a, 0, 0, 0, bool_mask(2, row, -1), false, NAN);
  one(L, "float mask [1, H, 1, S] with -inf", &a, 0, 0, 0, float_mask(L, 4, heads, true), false,
      NAN);
  one(L, "float mask [S], scale 0.3", &a, 0, 0, 0, float_mask(L, 1, &full[1], false), false, 0.3);
  attn c = attn_shape(4, 3, 2, 1, 20, 30, 8, 8);
  c.kb = 1;
  one(L, "key and value of one batch entry and one head", &c, 0, 0, 0, NULL, true, NAN);
}

/* Large scores: softmax must subtract its maximum. */
static void set_values(slist *L) {
  attn a = attn_shape(3, 1, 2, 2, 40, 50, 8, 8);
  sample *s = one(L, "scores in the hundreds", &a, 0, 0, 0, NULL, false, 30.0);
  (void)s;
  one(L, "scale 0", &a, 0, 0, 0, NULL, true, 0.0);
}

static void set_large(slist *L) {
  attn a = attn_shape(4, 1, 12, 12, 256, 256, 64, 64);
  one(L, "12 heads, L 256, d 64, causal", &a, 0, 0, 0, NULL, true, NAN);
  attn d = attn_shape(4, 1, 12, 4, 1, 1024, 64, 64);
  one(L, "a decoding step: L 1, S 1024, grouped heads", &d, 0, 0, 0, NULL, false, NAN);
}

/* What the op set refuses. */
static void set_bad(slist *L) {
  attn a = attn_shape(3, 1, 2, 2, 5, 7, 8, 8);
  int64_t full[2] = {5, 7}, wrong[2] = {5, 6};
  sample *s = one(L, "dropout_p 0.5", &a, 0, 0, 0, NULL, false, NAN);
  s->a[4].f = 0.5;
  one(L, "a mask with is_causal", &a, 0, 0, 0, bool_mask(2, full, -1), true, NAN);
  one(L, "a mask that does not broadcast", &a, 0, 0, 0, bool_mask(2, wrong, -1), false, NAN);
  attn e = a;
  e.Ev = 8;
  s = one(L, "key's E differs from query's", &e, 0, 0, 0, NULL, false, NAN);
  int64_t kz[3] = {2, 7, 9};
  rt_free(s->a[1].t);
  s->a[1].t = cert_gen_input(L, 1, L->dt, 3, kz);
  attn h = attn_shape(3, 1, 3, 2, 5, 7, 8, 8);
  one(L, "3 query heads by 2 key heads", &h, 0, 0, 0, NULL, false, NAN);
}

bool cert_gen_sdpa_set(slist *L, int sk) {
  if (kind_of(L) != K_SDPA) return false;
  switch (sk) {
    case SK_BASIC: set_basic(L); break;
    case SK_SIZES: set_sizes(L); break;
    case SK_LAYOUTS: set_layouts(L); break;
    case SK_BROADCAST: set_broadcast(L); break;
    case SK_VALUES: set_values(L); break;
    case SK_LARGE: set_large(L); break;
    case SK_BADSHAPE: set_bad(L); break;
    default: break;
  }
  return true;
}
