/*
 * conformance/sample_gen.c - what the sample-set generators share
 * (sample_int.h): the list being built, each op's usual range of values
 * and each dtype's special values, the layouts' values,
 * and the two sample shapes every value class uses (a table of every pair
 * of values, and one call on given values).  The generators
 * (sample_sets.c, sample_values.c, sample_edges.c and the per-kind files)
 * stand on it and it calls none of them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_int.h"
#include "num.h"

/* ---- The list being built ------------------------------------------------ */

sample *cert_gen_next(slist *L, const char *label) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 32;
    sample *g = realloc(L->v, cap * sizeof *g);
    if (!g) abort(); /* the certifier's own memory: nothing to report to */
    L->v = g;
    L->cap = cap;
  }
  sample *s = &L->v[L->n++];
  memset(s, 0, sizeof *s);
  snprintf(s->label, sizeof s->label, "%s", label);
  return s;
}

bool cert_gen_declared(const slist *L, int32_t dt) {
  if (!L->o->declared) return true;
  for (const int32_t *p = L->o->declared; *p != BP_DTYPE_INVALID; p++)
    if (*p == dt) return true;
  return false;
}

rt *cert_gen_input(const slist *L, int arg, int32_t dt, int32_t nd, const int64_t *sz) {
  double lo, hi;
  enum kind k = kind_of(L);
  cert_gen_domain(k, sub_of(L), arg, dt, &lo, &hi);
  rt *r = cert_rand_rt(dt, nd, sz, lo, hi);
  if (k == K_LOGICAL || k == K_BOOL_UNARY) {
    /* what a value's truth depends on: zeros of both signs among the
     * others, and NaN (true, and isnan's) */
    for (int64_t j = 0; j < r->numel; j++) {
      uint64_t u = cert_rng_next() % 8;
      if (u < 2 && dt_is_float(dt)) r->f[j] = u ? -0.0 : 0.0;
      else if (u < 2) r->i[j] = 0;
      else if (u == 2 && dt_is_float(dt)) r->f[j] = NAN;
    }
  }
  return r;
}

/* ---- Ranges and special values ------------------------------------------ */

void cert_gen_domain(enum kind kind, int sub, int arg, int32_t dt, double *lo, double *hi) {
  bool fl = dt_is_float(dt);
  *lo = fl ? -2 : -50;
  *hi = fl ? 2 : 50;
  switch (kind) {
    case K_UNARY:
      if (sub == RU_LOG || sub == RU_SQRT || sub == RU_RSQRT) *lo = fl ? 0.25 : 1, *hi = fl ? 3 : 9;
      else if (fl) *lo = -3, *hi = 3;
      break;
    case K_BINARY:
      if (sub == RB_POW && arg == 0) *lo = fl ? 0.5 : -3, *hi = fl ? 2 : 3;
      if (sub == RB_POW && arg == 1) *lo = fl ? -2 : 0, *hi = fl ? 2 : 3;
      break;
    case K_ARGMAX: *lo = -5, *hi = 5; break;
    case K_MATMUL:
    case K_CONV2D:
    case K_LINEAR: *lo = -0.5, *hi = 0.5; break; /* sums of products */
    case K_BATCH_NORM:
      if (arg == 4) *lo = 0.5, *hi = 2; /* running_var */
      break;
    case K_SOFTMAX:
    case K_LAYER_NORM: *lo = -3, *hi = 3; break;
    case K_CUMSUM: *lo = fl ? -2 : -5, *hi = fl ? 2 : 5; break;
    default: break;
  }
}

bool cert_gen_exact(enum kind kind, int sub) {
  switch (kind) {
    case K_BINARY: return sub != RB_POW && sub != RB_ADD && sub != RB_SUB;
    case K_UNARY: return sub == RU_NEG || sub == RU_ABS || sub == RU_RELU || sub == RU_SQRT;
    case K_REDUCE: return sub == RR_AMAX || sub == RR_AMIN;
    case K_WHERE:
    case K_COMPARE:
    case K_LOGICAL:
    case K_BOOL_UNARY:
    case K_MASKED_FILL:
    case K_CLAMP:
    case K_CAT:
    case K_MAX_POOL:
    case K_ARGMAX:
    case K_CAST:
    case K_CONTIGUOUS:
    case K_FILL:
    case K_COPY: return true;
    default: return false;
  }
}

/* The values fill_ writes: plain, then the special ones. */
static const double fill_values[] = {2.5,  2.0,     NAN,   INFINITY, -INFINITY, -0.0,   1e39,
                                     65520, 300.7,  -1.5,  -129.0,   1e-45,     9.3e18, -9.3e18};
#define NFILL (sizeof fill_values / sizeof *fill_values)
_Static_assert(NFILL == GEN_NFILL, "GEN_NFILL is the count of fill_values");

double cert_gen_fill_value(int32_t dt, int variant) {
  if (variant <= 0) return dt_is_float(dt) ? 2.5 : dt == BP_BOOL ? 1.0 : 2.0;
  return fill_values[(size_t)variant % NFILL];
}

void cert_gen_make_expandable(rt *t, int lay) {
  int32_t d = cert_lay_expandable(lay, t->ndim, t->sizes);
  if (d < 0) return;
  int64_t inner = 1;
  for (int32_t j = d + 1; j < t->ndim; j++) inner *= t->sizes[j];
  int64_t span = inner * t->sizes[d];
  for (int64_t k = 0; k < t->numel; k++) {
    int64_t src = k / span * span + k % inner; /* the same element at index 0 of dim d */
    t->f[k] = t->f[src];
    t->i[k] = t->i[src];
  }
}

rt *cert_gen_for_layout(int32_t dt, const shape *sh, int lay, enum kind kind, int sub) {
  double lo, hi;
  cert_gen_domain(kind, sub, 0, dt, &lo, &hi);
  rt *t = cert_rand_rt(dt, sh->n, sh->s, lo, hi);
  if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(t, lay);
  return t;
}

/* ---- Special values ------------------------------------------------------ */

static double fmax_of(int32_t dt) {
  switch (dt) {
    case BP_FLOAT64: return DBL_MAX;
    case BP_FLOAT16: return 65504.0;
    case BP_BFLOAT16: return 3.3895313892515355e38;
    default: return FLT_MAX;
  }
}
static double fmin_normal(int32_t dt) {
  return dt == BP_FLOAT64 ? DBL_MIN : dt == BP_FLOAT16 ? 6.103515625e-05 : FLT_MIN;
}
double cert_gen_denorm_min(int32_t dt) {
  switch (dt) {
    case BP_FLOAT64: return 4.9406564584124654e-324;
    case BP_FLOAT16: return 5.960464477539063e-08;
    case BP_BFLOAT16: return 9.183549615799121e-41;
    default: return 1.401298464324817e-45;
  }
}

/* The i-th special value of float dtype dt (i < NSPECIAL); NaN first. */
double cert_gen_special_f(int32_t dt, int i) {
  double mx = fmax_of(dt), mn = fmin_normal(dt), dn = cert_gen_denorm_min(dt);
  const double v[NSPECIAL] = {NAN, INFINITY, -INFINITY, 0.0,      -0.0,    1.0,    -1.0,
                              mx,  -mx,      mn,        -mn,      dn,      mn / 3, -dn * 5,
                              0.5, mx / 7,   mn * 3};
  return round_to(dt, v[i]);
}

/* The i-th special value of integer dtype dt (i < NSPECIAL_I). */
int64_t cert_gen_special_i(int32_t dt, int i) {
  int64_t lo = dt_min(dt), hi = dt_max(dt);
  const int64_t v[NSPECIAL_I] = {lo, hi, lo + 1, hi - 1, 0, 1, lo < 0 ? -1 : 2, hi / 2};
  return v[i];
}

/* Fills t with special values of its dtype, one element in `every`
 * (the rest from the usual range, already there); NaN only when nan.
 * `big`: the largest finite values too, which overflow an accumulator
 * (whose width the op set leaves open for sum and mean) or an
 * intermediate product (muladd). */
bool cert_gen_is_big(int i) { return i == 7 || i == 8 || i == 15; }

void cert_gen_sprinkle(rt *t, int every, bool nan, bool big) {
  bool fl = dt_is_float(t->dtype);
  for (int64_t k = 0; k < t->numel; k++) {
    if ((int)(cert_rng_next() % (uint64_t)every) != 0) continue;
    if (fl) {
      int i = (int)(cert_rng_next() % NSPECIAL);
      while ((i == 0 && !nan) || (!big && cert_gen_is_big(i)))
        i = 1 + (int)(cert_rng_next() % (NSPECIAL - 1));
      t->f[k] = cert_gen_special_f(t->dtype, i);
    } else if (t->dtype != BP_BOOL) {
      t->i[k] = cert_gen_special_i(t->dtype, (int)(cert_rng_next() % NSPECIAL_I));
    }
  }
}

/* ---- Two sample shapes ----------------------------------------------------- */

void cert_gen_pair_table(slist *L, const char *label, int variant, const double *fv,
                         const int64_t *iv, int n) {
  bool fl = dt_is_float(L->dt);
  int64_t sa[2] = {n, 1}, sb[1] = {n};
  rt *a = rt_new(L->dt, 2, sa), *b = rt_new(L->dt, 1, sb);
  for (int i = 0; i < n; i++) {
    if (fl) a->f[i] = b->f[i] = fv[i];
    else if (L->dt == BP_BOOL) a->i[i] = b->i[i] = i & 1;
    else a->i[i] = b->i[i] = iv[i];
  }
  if (cert_core_refs[L->r].sub == RB_POW && cert_core_refs[L->r].kind == K_BINARY) {
    /* the exponents that matter to pow */
    static const double pe[] = {0, -0.0, 1, -1, 2, 0.5, -0.5, 3, -3, 1e3, -1e3, INFINITY,
                                -INFINITY, NAN, 2.5, 62, 63};
    static const int64_t pi[] = {0, 1, 2, 3, 5, -1, -2, 62, 63, 7};
    for (int i = 0; i < n; i++) {
      if (fl) b->f[i] = round_to(L->dt, pe[i % 17]);
      else if (L->dt != BP_BOOL) b->i[i] = wrap_int(L->dt, pi[i % 10]);
    }
  }
  sample *s = cert_gen_next(L, label);
  enum kind k = kind_of(L);
  if (k == K_WHERE) {
    int64_t sc[2] = {n, n};
    cert_add_tensor(s, cert_rand_rt(BP_BOOL, 2, sc, 0, 1), L_CONTIG);
  }
  cert_add_tensor(s, a, L_CONTIG);
  cert_add_tensor(s, b, L_CONTIG);
  s->exact = cert_gen_exact(k, cert_core_refs[L->r].sub);
  s->zero_ties = k == K_BINARY &&
                 (cert_core_refs[L->r].sub == RB_MAXIMUM || cert_core_refs[L->r].sub == RB_MINIMUM);
  if (k == K_MULADD) cert_add_float(s, variant ? 0.5 : -2.0);
  if (k == K_ADD_OUT || (k == K_BINARY && (cert_core_refs[L->r].sub == RB_ADD ||
                                           cert_core_refs[L->r].sub == RB_SUB))) {
    cert_add_float(s, 1.0);
    s->exact = true;
  }
  if (k == K_ADD_OUT) {
    int64_t so[2] = {n, n};
    cert_add_tensor(s, rt_new(L->dt, 2, so), L_CONTIG);
  }
}

void cert_gen_on(slist *L, const char *label, rt *x, int64_t dim) {
  enum kind k = kind_of(L);
  int sub = cert_core_refs[L->r].sub;
  sample *s = cert_gen_next(L, label);
  s->exact = cert_gen_exact(k, sub);
  s->zero_ties = k == K_REDUCE && (sub == RR_AMAX || sub == RR_AMIN);
  cert_add_tensor(s, x, L_CONTIG);
  switch (k) {
    case K_UNARY:
      if (sub == RU_GELU) cert_add_str(s, dim ? "tanh" : "none");
      break;
    case K_REDUCE:
      cert_add_list(s, &dim, x->ndim ? 1 : 0);
      break;
    case K_ARGMAX:
      cert_add_int(s, dim);
      break;
    case K_SOFTMAX:
    case K_CUMSUM:
      cert_add_int(s, dim);
      break;
    case K_LAYER_NORM: {
      int64_t last = x->sizes[x->ndim - 1];
      cert_add_list(s, &last, 1);
      break;
    }
    case K_CONTIGUOUS: break;
    default: break;
  }
}
