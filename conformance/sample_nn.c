/*
 * conformance/sample_nn.c - the sample sets of the layers of op set 2:
 * cat (every dim, negative dims, empty tensors among the inputs, the
 * skipped [0], mixed dtypes, each input in every layout), linear
 * (in_features about the vector lengths, inputs of every rank, with and
 * without bias), rms_norm (normalized over 1 to 3 dims, eps None and
 * given, rows near 0) and batch_norm (inference: inputs of rank 2 to 5,
 * each statistic in every layout, a variance of 0), and the arguments
 * the op set refuses.
 *
 * cat's results are its inputs' elements, converted as cast converts:
 * they compare bit for bit.  linear takes matmul's tolerance for its
 * in_features, the norms layer_norm's (samples.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

/* ---- cat ----------------------------------------------------------------- */

/* cat of n tensors of L's dtype (dts[i] when dts is given), tensor i of
 * rank nd and sizes sz[i], in layout lays[i] (NULL: contiguous); dim, or
 * its default when has_dim is false. */
static sample *cat(slist *L, const char *label, int n, int32_t nd, const int64_t (*sz)[5],
                   const int *lays, const int32_t *dts, int64_t dim, bool has_dim) {
  sample *s = cert_gen_next(L, label);
  rt *ts[SAMPLE_MAX_LIST];
  for (int i = 0; i < n; i++) {
    /* a [0] is 1-dimensional whatever the others' rank */
    bool legacy = sz[i][0] == 0 && sz[i][1] < 0;
    ts[i] = cert_gen_input(L, 0, dts ? dts[i] : L->dt, legacy ? 1 : nd, sz[i]);
    if (lays && cert_lay_is_expanded(lays[i])) cert_gen_make_expandable(ts[i], lays[i]);
  }
  cert_add_tensor_list(s, ts, lays, n);
  if (has_dim) cert_add_int(s, dim);
  s->exact = true;
  return s;
}

/* [0], skipped by cat: a first size of 0 and -1 after it. */
#define LEGACY {0, -1, 0, 0, 0}

static void cat_basic(slist *L) {
  static const int64_t sz[2][5] = {{2, 3}, {1, 3}};
  cat(L, "basic", 2, 2, sz, NULL, NULL, 0, false);
}

/* Lengths along dim around the vector loops (labelled as the sizes class
 * labels lengths, so the other checks take some), 1 to 6 inputs, and
 * ranks 1 to 5. */
static void cat_sizes(slist *L) {
  static const int64_t lens[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129};
  char label[64];
  for (size_t j = 0; j < sizeof lens / sizeof *lens; j++) {
    int64_t n = lens[j];
    const int64_t sz[3][5] = {{3, n}, {3, n + 1}, {3, n / 2}};
    snprintf(label, sizeof label, "length %lld", (long long)n);
    cat(L, label, 3, 2, sz, NULL, NULL, j % 2 ? 1 : -1, true);
  }
  for (int n = 1; n <= SAMPLE_MAX_LIST; n++) {
    int64_t sz[SAMPLE_MAX_LIST][5];
    for (int i = 0; i < n; i++) sz[i][0] = 1 + (i * 3) % 4, sz[i][1] = 5;
    snprintf(label, sizeof label, "%d input%s", n, n > 1 ? "s" : "");
    cat(L, label, n, 2, (const int64_t(*)[5])sz, NULL, NULL, 0, n % 2 == 0);
  }
  static const struct {
    int32_t nd;
    int64_t s[5];
  } ranks[] = {{1, {5}}, {2, {3, 4}}, {3, {2, 3, 5}}, {4, {2, 3, 1, 4}}, {5, {2, 1, 3, 2, 3}}};
  for (size_t j = 0; j < sizeof ranks / sizeof *ranks; j++) {
    int64_t sz[2][5];
    memcpy(sz[0], ranks[j].s, sizeof sz[0]);
    memcpy(sz[1], ranks[j].s, sizeof sz[1]);
    sz[1][ranks[j].nd - 1] += 2;
    snprintf(label, sizeof label, "rank %d", (int)ranks[j].nd);
    cat(L, label, 2, ranks[j].nd, (const int64_t(*)[5])sz, NULL, NULL, -1, true);
  }
}

static void cat_layouts(slist *L) {
  static const int64_t s3[3][5] = {{5, 7, 9}, {5, 7, 9}, {5, 7, 9}},
                       s4[3][5] = {{2, 3, 5, 7}, {2, 3, 5, 7}, {2, 3, 5, 7}};
  char label[64];
  for (int i = 0; i < 3; i++)
    for (int lay = 1; lay < L_KINDS; lay++) {
      int lays[3] = {0, 0, 0};
      lays[i] = lay;
      bool cl = lay == L_CHANNELS_LAST;
      snprintf(label, sizeof label, "argument 0 (tensor %d) %s", i, cert_lay_name[lay]);
      cat(L, label, 3, cl ? 4 : 3, cl ? s4 : s3, lays, NULL, (lay + i) % 3, true);
    }
}

/* Every dim and its negative, each with inputs of three sizes along it;
 * empty inputs: a middle one of size 0 along dim, the skipped [0] first,
 * in the middle and last, all of them empty, and inputs empty in another
 * dim. */
static void cat_dims(slist *L) {
  char label[64];
  for (int64_t dim = -4; dim < 4; dim++) {
    int64_t sz[3][5];
    int32_t d = (int32_t)(dim < 0 ? dim + 4 : dim);
    for (int i = 0; i < 3; i++) {
      static const int64_t base[4] = {3, 4, 2, 5};
      memcpy(sz[i], base, sizeof base);
      sz[i][d] = 1 + i * 2;
    }
    snprintf(label, sizeof label, "dim %lld", (long long)dim);
    cat(L, label, 3, 4, (const int64_t(*)[5])sz, NULL, NULL, dim, true);
  }
  static const struct {
    int n;
    int32_t nd;
    int64_t sz[4][5];
    int64_t dim;
    const char *what;
  } cases[] = {
      {3, 2, {{2, 3}, {2, 0}, {2, 4}}, 1, "a middle input of size 0 along dim 1"},
      {4, 3, {{0, 3, 2}, {2, 3, 2}, {0, 3, 2}, {1, 3, 2}}, 0, "inputs of size 0 along dim 0"},
      {3, 2, {{2, 3}, LEGACY, {2, 4}}, -1, "a [0] in the middle, dim -1"},
      {3, 2, {LEGACY, {3, 2}, {3, 5}}, 1, "a [0] first, dim 1"},
      {3, 3, {{4, 2, 2}, {1, 2, 2}, LEGACY}, 0, "a [0] last"},
      {4, 2, {{2, 3}, LEGACY, {2, 0}, {2, 2}}, 1, "a [0] and a size 0 along dim 1"},
      {2, 1, {LEGACY, LEGACY}, 0, "every input [0]"},
      {2, 2, {{0, 3}, {0, 4}}, 1, "inputs empty in another dim"},
      {1, 2, {{3, 4}}, -2, "one input"},
  };
  for (size_t j = 0; j < sizeof cases / sizeof *cases; j++)
    cat(L, cases[j].what, cases[j].n, cases[j].nd, cases[j].sz, NULL, NULL, cases[j].dim, true);
}

/* Mixed dtypes: each declared partner before and after the case's
 * dtype, and as a [0] that only takes part in the promotion. */
static void cat_promotion(slist *L) {
  static const int64_t sz[2][5] = {{3, 67}, {2, 67}}, sk[3][5] = {{3, 5}, LEGACY, {1, 5}};
  char label[64];
  for (int d = 0; d < NUM_DTYPES; d++) {
    int32_t x = all_dtypes[d];
    if (x == L->dt || !cert_gen_declared(L, x)) continue;
    int32_t a[2] = {L->dt, x}, b[2] = {x, L->dt}, c[3] = {L->dt, x, L->dt};
    snprintf(label, sizeof label, "with %s", dt_name(x));
    cat(L, label, 2, 2, sz, NULL, a, 0, true);
    snprintf(label, sizeof label, "%s with", dt_name(x));
    cat(L, label, 2, 2, sz, NULL, b, 0, true);
    snprintf(label, sizeof label, "a [0] of %s", dt_name(x));
    cat(L, label, 3, 2, sk, NULL, c, 0, true);
  }
}

static void cat_values(slist *L) {
  static const int64_t sz[3][5] = {{4, 67}, {1, 67}, {2, 67}};
  for (int64_t dim = 0; dim < 2; dim++) {
    sample *s = cat(L, dim ? "special values, dim 1" : "special values", 3, 2, sz, NULL, NULL,
                    dim, true);
    if (dim) { /* along dim 1: the same number of rows */
      for (int i = 0; i < 3; i++) {
        rt_free(s->a[0].l->t[i]);
        int64_t rows[2] = {4, 67 - i * 20};
        s->a[0].l->t[i] = cert_gen_input(L, 0, L->dt, 2, rows);
        s->a[0].l->lay[i] = cert_lay_make(0, 2, rows);
      }
    }
    for (int i = 0; i < 3; i++) cert_gen_sprinkle(s->a[0].l->t[i], 2, true, true);
  }
}

static void cat_large(slist *L) {
  static const int64_t rows[3][5] = {{100, 400}, {1, 400}, {200, 400}},
                       cols[3][5] = {{300, 150}, {300, 1}, {300, 250}};
  cat(L, "[100 + 1 + 200, 400] along 0", 3, 2, rows, NULL, NULL, 0, true);
  int lays[3] = {L_TRANSPOSED, 0, L_TRANSPOSED};
  cat(L, "[300, 150 + 1 + 250] along 1, transposed", 3, 2, cols, lays, NULL, 1, true);
}

/* What the op set refuses: no tensors, a 0-dim one, sizes or ranks that
 * differ off dim, a dim out of range. */
static void cat_bad(slist *L) {
  static const int64_t fit[2][5] = {{2, 3}, {3, 3}}, rank[2][5] = {{2, 3}, {2, 3, 1}},
                       zero[2][5] = {{2, 3}, {0}};
  cat(L, "no tensors", 0, 2, fit, NULL, NULL, 0, true);
  sample *s = cat(L, "a 0-dim tensor", 2, 2, zero, NULL, NULL, 0, true);
  rt_free(s->a[0].l->t[1]);
  s->a[0].l->t[1] = cert_gen_input(L, 0, L->dt, 0, NULL);
  s->a[0].l->lay[1] = cert_lay_make(0, 0, NULL);
  cat(L, "[2, 3] and [3, 3] along dim 1", 2, 2, fit, NULL, NULL, 1, true);
  s = cat(L, "[2, 3] and [2, 3, 1]", 2, 2, rank, NULL, NULL, 0, true);
  rt_free(s->a[0].l->t[1]);
  s->a[0].l->t[1] = cert_gen_input(L, 0, L->dt, 3, rank[1]);
  s->a[0].l->lay[1] = cert_lay_make(0, 3, rank[1]);
  cat(L, "dim 2 of 2-D tensors", 2, 2, fit, NULL, NULL, 2, true);
  cat(L, "dim -3 of 2-D tensors", 2, 2, fit, NULL, NULL, -3, true);
}

/* ---- linear --------------------------------------------------------------- */

/* linear of x (rank nd, sizes xs ending in in_features) by a weight of
 * out features, with a bias or not; layouts lx, lw, lb. */
static sample *linear(slist *L, const char *label, int32_t nd, const int64_t *xs, int64_t out,
                      bool bias, int lx, int lw, int lb) {
  sample *s = cert_gen_next(L, label);
  int64_t ws[2] = {out, xs[nd - 1]};
  rt *x = cert_gen_input(L, 0, L->dt, nd, xs), *w = cert_gen_input(L, 1, L->dt, 2, ws);
  if (cert_lay_is_expanded(lx)) cert_gen_make_expandable(x, lx);
  if (cert_lay_is_expanded(lw)) cert_gen_make_expandable(w, lw);
  cert_add_tensor(s, x, lx);
  cert_add_tensor(s, w, lw);
  if (bias) {
    rt *b = cert_gen_input(L, 2, L->dt, 1, &out);
    if (cert_lay_is_expanded(lb)) cert_gen_make_expandable(b, lb);
    cert_add_tensor(s, b, lb);
  }
  return s;
}

static void linear_sets(slist *L, int sk) {
  char label[64];
  static const int64_t s23[2] = {2, 3};
  switch (sk) {
    case SK_BASIC: linear(L, "basic", 2, s23, 4, true, 0, 0, 0); break;
    case SK_SIZES: {
      /* in_features through the lengths a vector loop ends on, out
       * features through some; inputs of rank 1 to 4 and an empty batch */
      static const int64_t ins[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                    127, 128, 129, 255, 256, 257, 1023, 1024, 1025};
      static const int64_t outs[] = {1, 5, 7, 8, 9, 17, 33, 65};
      for (size_t j = 0; j < sizeof ins / sizeof *ins; j++) {
        int64_t xs[2] = {3, ins[j]};
        snprintf(label, sizeof label, "in_features %lld", (long long)ins[j]);
        linear(L, label, 2, xs, outs[j % 8], j % 2 == 0, 0, 0, 0);
      }
      static const struct {
        int32_t nd;
        int64_t s[4];
      } ranks[] = {{1, {7}}, {3, {2, 3, 7}}, {4, {2, 1, 3, 7}}, {2, {0, 7}}};
      for (size_t j = 0; j < sizeof ranks / sizeof *ranks; j++) {
        snprintf(label, sizeof label, "%s of rank %d",
                 ranks[j].s[0] ? "an input" : "an empty batch", (int)ranks[j].nd);
        linear(L, label, ranks[j].nd, ranks[j].s, 5, j % 2 == 0, 0, 0, 0);
      }
      break;
    }
    case SK_LAYOUTS: {
      static const int64_t s3[3] = {5, 7, 9};
      for (int arg = 0; arg < 3; arg++)
        for (int lay = 1; lay < L_KINDS; lay++) {
          snprintf(label, sizeof label, "argument %d %s", arg, cert_lay_name[lay]);
          linear(L, label, 3, s3, 6, true, arg == 0 ? lay : 0, arg == 1 ? lay : 0,
                 arg == 2 ? lay : 0);
        }
      break;
    }
    case SK_VALUES: {
      static const int64_t xs[2] = {5, 33};
      sample *s = linear(L, "a NaN and an infinity", 2, xs, 6, true, 0, 0, 0);
      s->a[0].t->f[7] = NAN;
      s->a[0].t->f[40] = INFINITY;
      s = linear(L, "zeros and ones", 2, xs, 6, false, 0, 0, 0);
      for (int64_t j = 0; j < s->a[0].t->numel; j++) s->a[0].t->f[j] = (double)(j % 2);
      for (int64_t j = 0; j < s->a[1].t->numel; j++) s->a[1].t->f[j] = j % 3 ? 0.0 : -0.0;
      break;
    }
    case SK_LARGE: {
      static const int64_t a[2] = {512, 257}, b[3] = {8, 64, 300};
      linear(L, "[512, 257] by [263, 257]", 2, a, 263, true, 0, 0, 0);
      linear(L, "[8, 64, 300] by [129, 300], transposed", 3, b, 129, false, 0, L_TRANSPOSED, 0);
      break;
    }
    case SK_BADSHAPE: {
      static const int64_t s4[2] = {2, 4};
      sample *s = linear(L, "in_features 3 by a weight of 4", 2, s23, 4, false, 0, 0, 0);
      rt_free(s->a[1].t);
      s->a[1].t = cert_gen_input(L, 1, L->dt, 2, s4);
      s->a[1].lay = cert_lay_make(0, 2, s4);
      s = linear(L, "a 1-D weight", 2, s23, 1, false, 0, 0, 0);
      s->a[1].t->ndim = 1;
      s->a[1].t->sizes[0] = 3;
      s->a[1].lay = cert_lay_make(0, 1, s->a[1].t->sizes);
      s = linear(L, "a bias of 3 for 4 out_features", 2, s23, 4, true, 0, 0, 0);
      s->a[2].t->numel = 3;
      s->a[2].t->sizes[0] = 3;
      s->a[2].lay = cert_lay_make(0, 1, s->a[2].t->sizes);
      s = linear(L, "a 0-dim input", 1, s23 + 1, 4, false, 0, 0, 0);
      s->a[0].t->ndim = 0;
      s->a[0].t->numel = 1;
      s->a[0].lay = cert_lay_make(0, 0, NULL);
      s = linear(L, "a float64 weight", 2, s23, 4, false, 0, 0, 0);
      rt *w = ref_cast(s->a[1].t, L->dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64);
      rt_free(s->a[1].t);
      s->a[1].t = w;
      break;
    }
    default: break;
  }
}

/* ---- rms_norm -------------------------------------------------------------- */

/* rms_norm of x (layout lx) over its last nn dims, with a weight (layout
 * lw) or not, eps (NAN: None, left to its default when no weight). */
static sample *rms(slist *L, const char *label, rt *x, int lx, int64_t nn, bool weight, int lw,
                   double eps) {
  sample *s = cert_gen_next(L, label);
  int64_t ns[BP_MAX_NDIM];
  if (nn > x->ndim) nn = x->ndim;
  for (int64_t j = 0; j < nn; j++) ns[j] = x->sizes[x->ndim - nn + j];
  if (cert_lay_is_expanded(lx)) cert_gen_make_expandable(x, lx);
  cert_add_tensor(s, x, lx);
  cert_add_list(s, ns, (size_t)nn);
  if (weight) {
    rt *w = cert_rand_rt(x->dtype, (int32_t)nn, ns, 0.5, 1.5);
    if (cert_lay_is_expanded(lw)) cert_gen_make_expandable(w, lw);
    cert_add_tensor(s, w, lw);
  } else if (eps == eps) {
    cert_add_none(s);
  }
  if (eps == eps)
    cert_add_float(s, eps);
  else if (weight && (nn & 1))
    cert_add_none(s); /* None given, or left to its default */
  return s;
}

static rt *input(slist *L, int32_t nd, const int64_t *sz) {
  return cert_gen_input(L, 0, L->dt, nd, sz);
}

static void rms_sets(slist *L, int sk) {
  char label[64];
  static const int64_t s23[2] = {2, 3}, s3[3] = {3, 4, 5}, s67[3] = {3, 67, 5},
                       big[2] = {331, 317}, m[2] = {4, 67};
  rt *x;
  switch (sk) {
    case SK_BASIC: rms(L, "basic", input(L, 2, s23), 0, 1, false, 0, NAN); break;
    case SK_SIZES: {
      static const int64_t lens[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                     127, 128, 129, 255, 256, 257, 1023, 1024, 1025};
      for (size_t j = 0; j < sizeof lens / sizeof *lens; j++) {
        int64_t sz[2] = {3, lens[j]};
        snprintf(label, sizeof label, "length %lld", (long long)lens[j]);
        rms(L, label, input(L, 2, sz), 0, 1, j & 1, 0, j % 3 ? NAN : 1e-5);
      }
      static const struct {
        int32_t nd;
        int64_t s[5];
      } ranks[] = {{1, {5}}, {3, {2, 3, 5}}, {4, {2, 3, 1, 4}}, {5, {2, 1, 3, 2, 3}},
                   {2, {0, 3}}};
      for (size_t j = 0; j < sizeof ranks / sizeof *ranks; j++) {
        snprintf(label, sizeof label, "rank %d%s", (int)ranks[j].nd,
                 ranks[j].s[0] ? "" : ", no rows");
        rms(L, label, input(L, ranks[j].nd, ranks[j].s), 0, ranks[j].nd > 1 ? 2 : 1, true, 0,
            NAN);
      }
      break;
    }
    case SK_LAYOUTS: {
      static const int64_t s4[4] = {2, 3, 5, 7};
      for (int arg = 0; arg < 2; arg++)
        for (int lay = 1; lay < L_KINDS; lay++) {
          bool cl = lay == L_CHANNELS_LAST;
          snprintf(label, sizeof label, "argument %d %s", arg ? 2 : 0, cert_lay_name[lay]);
          x = cl ? input(L, 4, s4) : input(L, 3, s67);
          rms(L, label, x, arg ? 0 : lay, arg ? 2 : 1, true, arg ? lay : 0, NAN);
        }
      break;
    }
    case SK_DIMS:
      for (int64_t nn = 1; nn <= 3; nn++)
        for (int w = 0; w < 2; w++) {
          snprintf(label, sizeof label, "normalized over %lld dims%s", (long long)nn,
                   w ? ", weight" : "");
          rms(L, label, input(L, 3, nn == 2 ? s67 : s3), 0, nn, w, 0, NAN);
        }
      rms(L, "eps 1e-3", input(L, 3, s3), 0, 1, true, 0, 1e-3);
      rms(L, "eps 0", input(L, 3, s3), 0, 2, false, 0, 0.0);
      break;
    case SK_VALUES: {
      /* rows whose mean square is near eps, or 0; constant rows; far
       * from 0 (whose squares float32 still holds); NaN and inf */
      x = cert_rand_rt(L->dt, 2, m, -1e-3, 1e-3);
      rms(L, "rows near 0", x, 0, 1, false, 0, NAN);
      x = cert_rand_rt(L->dt, 2, m, -0.1, 0.1);
      rms(L, "rows near 0, eps 0.01", x, 0, 1, true, 0, 1e-2);
      x = rt_new(L->dt, 2, m);
      for (int64_t j = 67; j < x->numel; j++) x->f[j] = j % 2 ? 0.0 : -0.0;
      rms(L, "zero rows", x, 0, 1, true, 0, NAN);
      x = rt_new(L->dt, 2, m);
      for (int64_t j = 0; j < x->numel; j++) x->f[j] = round_to(L->dt, 3.25);
      rms(L, "constant rows", x, 0, 1, false, 0, NAN);
      double far = L->dt == BP_FLOAT16 ? 100 : 1e15;
      x = cert_rand_rt(L->dt, 2, m, far / 2, far);
      rms(L, "rows far from 0", x, 0, 1, false, 0, NAN);
      x = input(L, 2, m);
      x->f[5] = NAN;
      x->f[80] = INFINITY;
      rms(L, "NaN and inf", x, 0, 1, true, 0, NAN);
      break;
    }
    case SK_LARGE: rms(L, "[331, 317]", input(L, 2, big), 0, 1, true, 0, NAN); break;
    case SK_BADSHAPE: {
      static const int64_t s234[3] = {2, 3, 4}, s223[3] = {2, 2, 3};
      sample *s = rms(L, "normalized_shape [5] of [2, 3, 4]", input(L, 3, s234), 0, 1, false, 0,
                      NAN);
      s->a[1].list[0] = 5;
      s = rms(L, "normalized_shape [6] of [2, 2, 3]", input(L, 3, s223), 0, 1, false, 0, NAN);
      s->a[1].list[0] = 6;
      s = rms(L, "a weight of shape [2]", input(L, 3, s234), 0, 1, true, 0, NAN);
      s->a[2].t->sizes[0] = 2;
      s->a[2].t->numel = 2;
      s->a[2].lay = cert_lay_make(0, 1, s->a[2].t->sizes);
      rms(L, "eps -1", input(L, 3, s234), 0, 1, false, 0, -1.0);
      break;
    }
    default: break;
  }
}

/* ---- batch_norm ------------------------------------------------------------- */

/* batch_norm in inference of x [N, C, ...] (layout lx), with weight and
 * bias (affine 1), neither (0), the weight alone (2) or the bias alone
 * (3); the statistic `which` (1 weight .. 4 running_var) in layout lv. */
static sample *bn(slist *L, const char *label, rt *x, int lx, int affine, int which, int lv,
                  double eps) {
  sample *s = cert_gen_next(L, label);
  int64_t c = x->sizes[1];
  if (cert_lay_is_expanded(lx)) cert_gen_make_expandable(x, lx);
  cert_add_tensor(s, x, lx);
  for (int i = 1; i <= 4; i++) {
    if ((i == 1 && (affine == 0 || affine == 3)) || (i == 2 && (affine == 0 || affine == 2))) {
      cert_add_none(s);
      continue;
    }
    rt *v =
        i == 1 ? cert_rand_rt(x->dtype, 1, &c, 0.5, 1.5) : cert_gen_input(L, i, x->dtype, 1, &c);
    int lay = i == which ? lv : 0;
    if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(v, lay);
    cert_add_tensor(s, v, lay);
  }
  cert_add_bool(s, false); /* training */
  cert_add_float(s, 0.1);  /* momentum: no effect in inference */
  cert_add_float(s, eps);
  cert_add_bool(s, false); /* cudnn_enabled */
  return s;
}

static void bn_sets(slist *L, int sk) {
  char label[64];
  static const int64_t s4[4] = {2, 3, 4, 4}, m[3] = {2, 4, 67};
  rt *x;
  switch (sk) {
    case SK_BASIC:
      bn(L, "basic", input(L, 4, s4), 0, true, 0, 0, 1e-5);
      /* each of the affine pair alone */
      bn(L, "weight without bias", input(L, 4, s4), 0, 2, 0, 0, 1e-5);
      bn(L, "bias without weight", input(L, 4, s4), 0, 3, 0, 0, 1e-5);
      break;
    case SK_SIZES: {
      static const int64_t lens[] = {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 129};
      for (size_t j = 0; j < sizeof lens / sizeof *lens; j++) {
        int64_t sz[3] = {2, 3, lens[j]};
        snprintf(label, sizeof label, "length %lld", (long long)lens[j]);
        bn(L, label, input(L, 3, sz), 0, (int)(j % 4), 0, 0, j % 3 ? 1e-5 : 1e-3);
      }
      static const struct {
        int32_t nd;
        int64_t s[5];
      } ranks[] = {{2, {4, 3}}, {4, {2, 3, 1, 4}}, {5, {2, 3, 2, 3, 4}}, {2, {0, 5}},
                   {3, {2, 1, 9}}};
      for (size_t j = 0; j < sizeof ranks / sizeof *ranks; j++) {
        snprintf(label, sizeof label, "rank %d, %lld channel%s", (int)ranks[j].nd,
                 (long long)ranks[j].s[1], ranks[j].s[1] > 1 ? "s" : "");
        bn(L, label, input(L, ranks[j].nd, ranks[j].s), 0, j % 2 == 0, 0, 0, 1e-5);
      }
      break;
    }
    case SK_LAYOUTS: {
      static const int64_t s3[3] = {5, 7, 9};
      for (int arg = 0; arg <= 4; arg++)
        for (int lay = 1; lay < L_KINDS; lay++) {
          bool cl = lay == L_CHANNELS_LAST;
          snprintf(label, sizeof label, "argument %d %s", arg, cert_lay_name[lay]);
          x = cl || arg ? input(L, 4, s4) : input(L, 3, s3);
          bn(L, label, x, arg ? 0 : lay, true, arg, lay, 1e-5);
        }
      break;
    }
    case SK_VALUES: {
      x = input(L, 3, m);
      cert_gen_sprinkle(x, 3, true, false);
      bn(L, "special values in the input", x, 0, true, 0, 0, 1e-5);
      sample *s = bn(L, "a variance of 0 with eps 0", input(L, 3, m), 0, true, 0, 0, 0.0);
      s->a[4].t->f[1] = 0.0;
      x = cert_rand_rt(L->dt, 3, m, 9.5, 10.5);
      s = bn(L, "inputs near their mean of 10", x, 0, false, 0, 0, 1e-5);
      for (int64_t c = 0; c < 4; c++) s->a[3].t->f[c] = round_to(L->dt, 10.0);
      break;
    }
    case SK_LARGE: {
      static const int64_t big[4] = {8, 16, 32, 33};
      bn(L, "[8, 16, 32, 33]", input(L, 4, big), 0, true, 0, 0, 1e-5);
      break;
    }
    case SK_BADSHAPE: {
      static const int64_t s1[1] = {6};
      sample *s = bn(L, "training=True", input(L, 4, s4), 0, true, 0, 0, 1e-5);
      s->a[5].i = 1;
      s = bn(L, "running_mean None", input(L, 4, s4), 0, true, 0, 0, 1e-5);
      rt_free(s->a[3].t);
      s->a[3] = (sarg){.k = AK_NONE};
      s = bn(L, "a weight of 2 for 3 channels", input(L, 4, s4), 0, true, 0, 0, 1e-5);
      s->a[1].t->sizes[0] = 2;
      s->a[1].t->numel = 2;
      s->a[1].lay = cert_lay_make(0, 1, s->a[1].t->sizes);
      s = bn(L, "a 1-D input", input(L, 4, s4), 0, false, 0, 0, 1e-5);
      rt_free(s->a[0].t);
      s->a[0].t = input(L, 1, s1);
      s->a[0].lay = cert_lay_make(0, 1, s1);
      bn(L, "eps -1", input(L, 4, s4), 0, true, 0, 0, -1.0);
      s = bn(L, "a float64 running_var", input(L, 4, s4), 0, true, 0, 0, 1e-5);
      rt *v = ref_cast(s->a[4].t, L->dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64);
      rt_free(s->a[4].t);
      s->a[4].t = v;
      break;
    }
    default: break;
  }
}

bool cert_gen_nn_set(slist *L, int sk) {
  switch (kind_of(L)) {
    case K_CAT:
      switch (sk) {
        case SK_BASIC: cat_basic(L); break;
        case SK_SIZES: cat_sizes(L); break;
        case SK_LAYOUTS: cat_layouts(L); break;
        case SK_DIMS: cat_dims(L); break;
        case SK_PROMOTION: cat_promotion(L); break;
        case SK_VALUES: cat_values(L); break;
        case SK_LARGE: cat_large(L); break;
        case SK_BADSHAPE: cat_bad(L); break;
        default: break;
      }
      return true;
    case K_LINEAR: linear_sets(L, sk); return true;
    case K_RMS_NORM: rms_sets(L, sk); return true;
    case K_BATCH_NORM: bn_sets(L, sk); return true;
    default: return false;
  }
}
