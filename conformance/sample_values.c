/*
 * conformance/sample_values.c - value classes: the usual range of each op's
 * arguments, the special values of each dtype (NaN, infinities, signed
 * zeros, the largest and smallest finite values, denormals, integer
 * extremes), the edges of each function's range, and the sets of the
 * `values` sample class and of the errors check's bad arguments.  (The
 * ranges and special values themselves are sample_gen.c's.)
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample_int.h"
#include "num.h"

/* Values near the edges of exp's range, computed in float32 (or float64),
 * and of the dtype's own: around each edge, a few ulps either side. */
static void edges(rt *t) {
  static const double e32[] = {88.72, 88.7228, 88.73, -87.33, -87.34, -103.28, -103.98, -104.0,
                               11.09, 11.1,    -17.33, -24.9, 9.01,   -9.01,   20.0,    -20.0,
                               44.4,  -44.4,   -745.2, 709.78, 710.0, -708.4};
  size_t ne = sizeof e32 / sizeof *e32;
  for (int64_t k = 0; k < t->numel; k++) {
    double e = e32[(size_t)k % ne];
    double jitter = (double)((int64_t)(cert_rng_next() % 9) - 4) * fabs(e) * 6e-8;
    if (dt_is_float(t->dtype)) t->f[k] = round_to(t->dtype, e + jitter);
    else t->i[k] = wrap_int(t->dtype, (int64_t)e);
  }
}

/* ---- The values class ----------------------------------------------------- */

/* A table of every pair of special values: a [N, 1] against b [N]. */
static void pair_table(slist *L, const char *label, int variant) {
  double fv[NSPECIAL];
  int64_t iv[NSPECIAL_I];
  bool muladd = cert_core_refs[L->r].kind == K_MULADD;
  for (int i = 0; i < NSPECIAL; i++)
    fv[i] =
        dt_is_float(L->dt) ? cert_gen_special_f(L->dt, muladd && cert_gen_is_big(i) ? 5 : i) : 0;
  for (int i = 0; i < NSPECIAL_I; i++) iv[i] = L->dt == BP_BOOL ? 0 : cert_gen_special_i(L->dt, i);
  cert_gen_pair_table(L, label, variant, fv, iv, dt_is_float(L->dt) ? NSPECIAL : NSPECIAL_I);
}

/* A Scalar of a sample: its kind ('i' int, 'f' float, 'n' None) and value. */
typedef struct sv {
  char c;
  double f;
  int64_t i;
} sv;

static void add_sv(sample *s, const sv *v) {
  if (v->c == 'n')
    cert_add_none(s);
  else if (v->c == 'i')
    cert_add_int(s, v->i);
  else
    cert_add_float(s, v->f);
}

static const char *sv_str(const sv *v, char *buf, size_t len) {
  if (v->c == 'n') snprintf(buf, len, "None");
  else if (v->c == 'i') snprintf(buf, len, "%lld", (long long)v->i);
  else snprintf(buf, len, "%g", v->f);
  return buf;
}

/* isnan and logical_not: every special value, NaN of both signs among
 * them; masked_fill: the special values as the value, and in self; clamp:
 * special values in self and as bounds. */
static void scalar_ops_values(slist *L) {
  enum kind k = kind_of(L);
  int32_t dt = L->dt;
  bool fl = dt_is_float(dt);
  int64_t v67[1] = {67}, all[1] = {fl ? NSPECIAL + 1 : NSPECIAL_I};
  if (k == K_BOOL_UNARY) {
    rt *x = cert_gen_input(L, 0, dt, 1, all);
    for (int i = 0; i < all[0]; i++) {
      if (fl)
        x->f[i] = i < NSPECIAL ? cert_gen_special_f(dt, i) : -NAN;
      else if (dt != BP_BOOL)
        x->i[i] = cert_gen_special_i(dt, i);
    }
    cert_gen_on(L, "every special value", x, 0);
    x = cert_gen_input(L, 0, dt, 1, v67);
    cert_gen_sprinkle(x, 2, true, true);
    cert_gen_on(L, "special values", x, 0);
    return;
  }
  sv vals[8];
  int nv = 0;
  if (fl) {
    /* NaN, the infinities, -0.0, the largest finite values, a denormal */
    static const int sp[] = {0, 1, 2, 4, 7, 8, 11};
    for (size_t j = 0; j < sizeof sp / sizeof *sp; j++)
      vals[nv++] = (sv){'f', cert_gen_special_f(dt, sp[j]), 0};
  } else if (dt != BP_BOOL) {
    vals[nv++] = (sv){'i', 0, dt_min(dt)};
    vals[nv++] = (sv){'i', 0, dt_max(dt)};
    vals[nv++] = (sv){'f', dt_min(dt) < 0 ? -2.9 : 2.9, 0}; /* truncated */
  }
  char label[64], b1[32], b2[32];
  if (k == K_MASKED_FILL) {
    int64_t m[2] = {4, 67};
    for (int j = 0; j < nv; j++) {
      rt *x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 3, true, true);
      snprintf(label, sizeof label, "special values, value %s", sv_str(&vals[j], b1, 32));
      sample *s = cert_gen_next(L, label);
      cert_add_tensor(s, x, L_CONTIG);
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, 1, &m[1], 0, 1), L_CONTIG);
      add_sv(s, &vals[j]);
      s->exact = true;
    }
    return;
  }
  /* clamp: (min, max) */
  sv b[8][2];
  int nb = 0;
  const sv none = {'n', 0, 0};
  if (fl) {
    double mx = cert_gen_special_f(dt, 7);
    const double pairs[][2] = {{-INFINITY, INFINITY}, {-0.0, 0.0}, {-mx, mx}, {1, -1}};
    for (size_t j = 0; j < sizeof pairs / sizeof *pairs; j++) {
      b[nb][0] = (sv){'f', pairs[j][0], 0};
      b[nb++][1] = (sv){'f', pairs[j][1], 0};
    }
    b[nb][0] = (sv){'f', NAN, 0}, b[nb++][1] = none;
    b[nb][0] = none, b[nb++][1] = (sv){'f', NAN, 0};
    b[nb][0] = (sv){'f', 0.0, 0}, b[nb++][1] = none;
  } else if (dt != BP_BOOL) {
    b[nb][0] = vals[0], b[nb++][1] = vals[1];
    b[nb][0] = vals[1], b[nb++][1] = none;
    b[nb][0] = none, b[nb++][1] = vals[0];
  }
  for (int j = 0; j < nb; j++) {
    rt *x = cert_gen_input(L, 0, dt, 1, v67);
    cert_gen_sprinkle(x, 2, true, true);
    snprintf(label, sizeof label, "special values, min %s, max %s", sv_str(&b[j][0], b1, 32),
             sv_str(&b[j][1], b2, 32));
    sample *s = cert_gen_next(L, label);
    cert_add_tensor(s, x, L_CONTIG);
    add_sv(s, &b[j][0]);
    add_sv(s, &b[j][1]);
    s->exact = s->zero_ties = true;
  }
}

void cert_gen_values(slist *L) {
  enum kind k = kind_of(L);
  int sub = cert_core_refs[L->r].sub;
  int32_t dt = L->dt;
  bool fl = dt_is_float(dt);
  int64_t v67[1] = {67}, m[2] = {4, 67};
  /* sum and mean may accumulate in float32 or wider: no value that
   * overflows one and not the other */
  bool acc_ok = !(k == K_REDUCE && (sub == RR_SUM || sub == RR_MEAN));
  switch (k) {
    case K_BINARY:
    case K_ADD_OUT:
    case K_MULADD:
    case K_WHERE:
    case K_COMPARE:
    case K_LOGICAL:
      pair_table(L, "every pair of special values", 0);
      pair_table(L, "every pair of special values", 1);
      break;
    case K_UNARY: {
      rt *x = cert_gen_input(L, 0, dt, 1, v67);
      cert_gen_sprinkle(x, 2, true, true);
      cert_gen_on(L, "special values", x, 0);
      x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 3, false, acc_ok);
      cert_gen_on(L, "special values, no NaN", x, 1);
      x = rt_new(dt, 1, v67);
      edges(x);
      cert_gen_on(L, "edges of exp's range", x, 0);
      x = rt_new(dt, 1, v67);
      edges(x);
      cert_gen_on(L, "edges of exp's range", x, 1);
      break;
    }
    case K_REDUCE:
    case K_ARGMAX: {
      rt *x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 3, false, acc_ok);
      cert_gen_on(L, "special values, no NaN", x, -1);
      x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 3, false, acc_ok);
      cert_gen_on(L, "special values, no NaN", x, 0);
      x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 9, true, acc_ok);
      cert_gen_on(L, "special values", x, -1);
      if (fl) {
        /* a long run that a narrow accumulator cannot hold */
        int64_t lng[2] = {3, 5000};
        cert_gen_on(L, "5000 values in [0.5, 1.5]", cert_rand_rt(dt, 2, lng, 0.5, 1.5), -1);
        x = rt_new(dt, 2, m);
        for (int64_t j = 0; j < x->numel; j++)
          x->f[j] = (cert_rng_next() & 1) ? 0.0 : -0.0; /* ties of signed zeros */
        cert_gen_on(L, "signed zeros", x, -1);
        x = rt_new(dt, 2, m);
        for (int64_t j = 0; j < x->numel; j++)
          x->f[j] = round_to(dt, cert_gen_denorm_min(dt) * (double)(1 + j % 7));
        cert_gen_on(L, "denormals", x, -1);
      } else if (dt != BP_BOOL) {
        int64_t lng[2] = {3, 1000};
        x = rt_new(dt, 2, lng);
        for (int64_t j = 0; j < x->numel; j++) x->i[j] = cert_gen_special_i(dt, (int)(j % 2));
        cert_gen_on(L, "integer extremes, 1000 each row", x, -1);
      }
      break;
    }
    case K_SOFTMAX: {
      double big = dt == BP_FLOAT16 ? 6e4 : dt == BP_FLOAT64 ? 1e5 : 1e4;
      rt *x = cert_rand_rt(dt, 2, m, -big, big);
      cert_gen_on(L, "large magnitudes", x, -1);
      x = cert_rand_rt(dt, 2, m, -big, big);
      cert_gen_on(L, "large magnitudes", x, 0);
      x = cert_gen_input(L, 0, dt, 2, m);
      for (int64_t j = 0; j < 67; j++) x->f[j] = -INFINITY;      /* a row of -inf */
      for (int64_t j = 67; j < 134; j += 3) x->f[j] = -INFINITY; /* some -inf */
      x->f[140] = INFINITY;
      x->f[210] = NAN;
      cert_gen_on(L, "infinities and NaN", x, -1);
      x = rt_new(dt, 2, m);
      for (int64_t j = 0; j < x->numel; j++) x->f[j] = round_to(dt, 7.0);
      cert_gen_on(L, "equal values", x, -1);
      break;
    }
    case K_LAYER_NORM: {
      double off = dt == BP_FLOAT64 ? 1e4 : 10;
      rt *x = cert_rand_rt(dt, 2, m, off - 1, off + 1);
      cert_gen_on(L, "rows far from 0", x, -1);
      x = rt_new(dt, 2, m);
      for (int64_t j = 0; j < x->numel; j++) x->f[j] = round_to(dt, 3.25);
      cert_gen_on(L, "constant rows", x, -1);
      x = cert_gen_input(L, 0, dt, 2, m);
      x->f[5] = NAN;
      x->f[80] = INFINITY;
      cert_gen_on(L, "NaN and inf", x, -1);
      break;
    }
    case K_MATMUL: {
      int64_t sa[2] = {5, 33}, sb[2] = {33, 6};
      sample *s = cert_gen_next(L, "a NaN and an infinity");
      rt *a = cert_gen_input(L, 0, dt, 2, sa), *b = cert_gen_input(L, 1, dt, 2, sb);
      a->f[7] = NAN;
      a->f[40] = INFINITY;
      b->f[3 * 6 + 2] = 0; /* inf times 0 */
      cert_add_tensor(s, a, L_CONTIG);
      cert_add_tensor(s, b, L_CONTIG);
      s = cert_gen_next(L, "zeros and ones");
      a = rt_new(dt, 2, sa);
      b = rt_new(dt, 2, sb);
      for (int64_t j = 0; j < a->numel; j++) a->f[j] = (double)(j % 2);
      for (int64_t j = 0; j < b->numel; j++) b->f[j] = j % 3 ? 0.0 : -0.0;
      cert_add_tensor(s, a, L_CONTIG);
      cert_add_tensor(s, b, L_CONTIG);
      break;
    }
    case K_CAST:
      for (int d = 0; d < NUM_DTYPES; d++) {
        int32_t to = all_dtypes[d];
        char label[64];
        snprintf(label, sizeof label, "special values to %s", dt_name(to));
        rt *x = cert_gen_input(L, 0, dt, 1, v67);
        cert_gen_sprinkle(x, 2, true, true);
        if (fl) {
          static const double edge[] = {0.9,   -0.9,   1.5,   127.5,  128.0,  -128.5, -129.0,
                                        255.5, 256.0,  32767.5, 32768, -32769, 2147483647.0,
                                        2147483648.0, -2147483649.0, 9.2e18, -9.3e18, 1e30,
                                        65519, 65520,  1e5,   2.98e-8, 3e-8};
          for (size_t j = 0; j < sizeof edge / sizeof *edge; j++)
            x->f[40 + j % 27] = round_to(dt, edge[j]);
        }
        sample *s = cert_gen_next(L, label);
        cert_add_tensor(s, x, L_CONTIG);
        cert_add_dtype(s, to);
        s->exact = true;
      }
      break;
    case K_FILL:
      for (int j = 1; j < GEN_NFILL; j++) {
        char label[64];
        snprintf(label, sizeof label, "value %g", cert_gen_fill_value(dt, j));
        sample *s = cert_gen_next(L, label);
        cert_add_tensor(s, cert_gen_input(L, 0, dt, 1, v67), L_CONTIG);
        cert_add_float(s, cert_gen_fill_value(dt, j));
        s->exact = true;
      }
      break;
    case K_COPY:
      for (int d = 0; d < NUM_DTYPES; d++) {
        int32_t from = all_dtypes[d];
        if (!cert_gen_declared(L, from)) continue;
        char label[64];
        snprintf(label, sizeof label, "special values from %s", dt_name(from));
        rt *x = cert_gen_input(L, 1, from, 1, v67);
        cert_gen_sprinkle(x, 2, true, true);
        sample *s = cert_gen_next(L, label);
        cert_add_tensor(s, cert_gen_input(L, 0, dt, 1, v67), L_CONTIG);
        cert_add_tensor(s, x, L_CONTIG);
        s->exact = true;
      }
      break;
    case K_CONTIGUOUS: {
      rt *x = cert_gen_input(L, 0, dt, 2, m);
      cert_gen_sprinkle(x, 2, true, true);
      sample *s = cert_gen_next(L, "special values, transposed");
      cert_add_tensor(s, x, L_TRANSPOSED);
      s->exact = true;
      break;
    }
    case K_CUMSUM: {
      /* NaN and infinities carry on from where they enter; integer
       * extremes wrap */
      rt *x = cert_gen_input(L, 0, dt, 2, m);
      if (fl) {
        x->f[5] = NAN;
        x->f[67 + 3] = INFINITY;
        x->f[67 + 9] = -INFINITY;
        x->f[134 + 1] = INFINITY;
        x->f[134 + 2] = -INFINITY;
      } else {
        for (int64_t j = 0; j < x->numel; j += 2) x->i[j] = cert_gen_special_i(dt, (int)(j % 4));
      }
      cert_gen_on(L, "special values", x, -1);
      x = cert_gen_input(L, 0, dt, 2, m);
      if (!fl)
        for (int64_t j = 0; j < x->numel; j++) x->i[j] = dt_max(dt);
      cert_gen_on(L, fl ? "random values, dim 0" : "the largest value, wrapping", x, fl ? 0 : -1);
      break;
    }
    case K_INDEX_SELECT:
    case K_GATHER:
    case K_EMBEDDING: break; /* sample_index.c's */
    case K_TOPK:
    case K_SORT: break; /* sample_sort.c's */
    case K_SDPA: break; /* sample_sdpa.c's */
    case K_BOOL_UNARY:
    case K_MASKED_FILL:
    case K_CLAMP: scalar_ops_values(L); break;
    case K_CAT:
    case K_LINEAR:
    case K_RMS_NORM:
    case K_BATCH_NORM: break; /* sample_nn.c's */
    case K_CONV2D:
    case K_MAX_POOL:
    case K_AVG_POOL:
    case K_ADAPTIVE_POOL: break; /* sample_conv.c's */
  }
  cert_gen_value_edges(L);
}
