/* conformance/samples.c - see sample.h: sample values, the sample type, and the
 * reference result of a core sample.  The sets per class are in
 * sample_sets.c, sample_values.c and sample_bad.c. */
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Random numbers ---------------------------------------------------- */

static uint64_t rng_state;

void cert_rng_seed_name(cert_ctx *cx, const char *name) {
  uint64_t h = 1469598103934665603u;
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
  rng_state = cx->opt.seed ^ h;
}

void cert_rng_reset(void) { rng_state = 0; }

uint64_t cert_rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double cert_rng_uniform(double lo, double hi) {
  return lo + (hi - lo) * ((double)(cert_rng_next() >> 11) / 9007199254740992.0);
}

/* ---- Samples ------------------------------------------------------------ */

void cert_sample_free(sample *s) {
  for (int i = 0; i < s->n; i++) {
    rt_free(s->a[i].t);
    if (s->a[i].l)
      for (int j = 0; j < s->a[i].l->n; j++) rt_free(s->a[i].l->t[j]);
    free(s->a[i].l);
  }
  memset(s, 0, sizeof *s);
}

static sarg *add_arg(sample *s, int k) {
  sarg *a = &s->a[s->n < SAMPLE_MAX_ARGS ? s->n++ : SAMPLE_MAX_ARGS - 1];
  memset(a, 0, sizeof *a);
  a->k = k;
  return a;
}

void cert_add_tensor(sample *s, rt *t, int lay_kind) {
  sarg *a = add_arg(s, AK_TENSOR);
  a->t = t;
  a->lay = cert_lay_make(t->ndim > 0 ? lay_kind : L_CONTIG, t->ndim, t->sizes);
}
void cert_add_float(sample *s, double f) { add_arg(s, AK_FLOAT)->f = f; }
void cert_add_int(sample *s, int64_t i) { add_arg(s, AK_INT)->i = i; }
void cert_add_bool(sample *s, bool b) { add_arg(s, AK_BOOL)->i = b; }
void cert_add_dtype(sample *s, int32_t dt) { add_arg(s, AK_DTYPE)->dt = dt; }
void cert_add_none(sample *s) { add_arg(s, AK_NONE); }
void cert_add_str(sample *s, const char *str) { add_arg(s, AK_STR)->s = str; }
void cert_add_tensor_list(sample *s, rt *const *ts, const int *lays, int n) {
  sarg *a = add_arg(s, AK_TENSORLIST);
  a->l = calloc(1, sizeof *a->l);
  if (!a->l) abort(); /* the certifier's own memory */
  if (n > SAMPLE_MAX_LIST) n = SAMPLE_MAX_LIST;
  a->l->n = n;
  for (int j = 0; j < n; j++) {
    rt *t = ts[j];
    a->l->t[j] = t;
    a->l->lay[j] = cert_lay_make(t->ndim > 0 && lays ? lays[j] : L_CONTIG, t->ndim, t->sizes);
  }
}
void cert_add_list(sample *s, const int64_t *v, size_t n) {
  sarg *a = add_arg(s, AK_INTLIST);
  if (n > BP_MAX_NDIM) n = BP_MAX_NDIM;
  if (n) memcpy(a->list, v, n * sizeof *v);
  a->nlist = n;
}

void cert_fill_rt(rt *r, double lo, double hi) {
  for (int64_t i = 0; i < r->numel; i++) {
    if (dt_is_float(r->dtype)) {
      r->f[i] = round_to(r->dtype, cert_rng_uniform(lo, hi));
    } else if (r->dtype == BP_BOOL) {
      r->i[i] = (int64_t)(cert_rng_next() & 1);
    } else {
      int64_t l = (int64_t)ceil(lo), h = (int64_t)floor(hi);
      if (l < dt_min(r->dtype)) l = dt_min(r->dtype);
      if (h > dt_max(r->dtype)) h = dt_max(r->dtype);
      r->i[i] = h < l ? l : l + (int64_t)(cert_rng_next() % ((uint64_t)(h - l) + 1));
    }
  }
}

rt *cert_rand_rt(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi) {
  rt *r = rt_new(dt, ndim, sizes);
  cert_fill_rt(r, lo, hi);
  return r;
}

const char *cert_shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "[");
  for (int32_t d = 0; d < ndim && o < len; d++)
    o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (o < len) snprintf(buf + o, len - o, "]");
  return buf;
}

const char *cert_sample_desc(const sample *s, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = '\0';
  if (s->label[0]) o += (size_t)snprintf(buf, len, "%s: ", s->label);
  for (int i = 0; i < s->n && o < len; i++) {
    const sarg *a = &s->a[i];
    char sh[160];
    switch (a->k) {
      case AK_TENSOR:
        o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s%s%s", i ? ", " : "", dt_name(a->t->dtype),
                              cert_shape_str(a->t->ndim, a->t->sizes, sh, sizeof sh),
                              a->lay.kind ? "(" : "", a->lay.kind ? cert_lay_name[a->lay.kind] : "",
                              a->lay.kind ? ")" : "");
        break;
      case AK_FLOAT: o += (size_t)snprintf(buf + o, len - o, ", %g", a->f); break;
      case AK_INT: o += (size_t)snprintf(buf + o, len - o, ", %lld", (long long)a->i); break;
      case AK_BOOL: o += (size_t)snprintf(buf + o, len - o, ", %s", a->i ? "True" : "False"); break;
      case AK_INTLIST:
        o += (size_t)snprintf(buf + o, len - o, ", %s",
                              cert_shape_str((int32_t)a->nlist, a->list, sh, sizeof sh));
        break;
      case AK_DTYPE: o += (size_t)snprintf(buf + o, len - o, ", %s", dt_name(a->dt)); break;
      case AK_NONE: o += (size_t)snprintf(buf + o, len - o, ", None"); break;
      case AK_STR: o += (size_t)snprintf(buf + o, len - o, ", '%s'", a->s); break;
      case AK_TENSORLIST:
        o += (size_t)snprintf(buf + o, len - o, "%s[", i ? ", " : "");
        for (int j = 0; j < a->l->n && o < len; j++) {
          int lk = a->l->lay[j].kind;
          o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s%s%s", j ? ", " : "",
                                dt_name(a->l->t[j]->dtype),
                                cert_shape_str(a->l->t[j]->ndim, a->l->t[j]->sizes, sh, sizeof sh),
                                lk ? "(" : "", lk ? cert_lay_name[lk] : "", lk ? ")" : "");
        }
        if (o < len) o += (size_t)snprintf(buf + o, len - o, "]");
        break;
    }
  }
  return buf;
}

/* ---- The core ops -------------------------------------------------------- */

const core_ref cert_core_refs[] = {
    {"add", K_BINARY, RB_ADD},
    {"add.out", K_ADD_OUT, RB_ADD},
    {"sub", K_BINARY, RB_SUB},
    {"mul", K_BINARY, RB_MUL},
    {"div", K_BINARY, RB_DIV},
    {"maximum", K_BINARY, RB_MAXIMUM},
    {"minimum", K_BINARY, RB_MINIMUM},
    {"pow", K_BINARY, RB_POW},
    {"muladd", K_MULADD, 0},
    {"neg", K_UNARY, RU_NEG},
    {"abs", K_UNARY, RU_ABS},
    {"relu", K_UNARY, RU_RELU},
    {"exp", K_UNARY, RU_EXP},
    {"log", K_UNARY, RU_LOG},
    {"sqrt", K_UNARY, RU_SQRT},
    {"rsqrt", K_UNARY, RU_RSQRT},
    {"sigmoid", K_UNARY, RU_SIGMOID},
    {"tanh", K_UNARY, RU_TANH},
    {"gelu", K_UNARY, RU_GELU},
    {"where", K_WHERE, 0},
    {"sin", K_UNARY, RU_SIN},
    {"cos", K_UNARY, RU_COS},
    {"erf", K_UNARY, RU_ERF},
    {"silu", K_UNARY, RU_SILU},
    {"sum", K_REDUCE, RR_SUM},
    {"mean", K_REDUCE, RR_MEAN},
    {"amax", K_REDUCE, RR_AMAX},
    {"amin", K_REDUCE, RR_AMIN},
    {"argmax", K_ARGMAX, 0},
    {"matmul", K_MATMUL, 0},
    {"softmax", K_SOFTMAX, 0},
    {"log_softmax", K_SOFTMAX, 1},
    {"layer_norm", K_LAYER_NORM, 0},
    {"cast", K_CAST, 0},
    {"contiguous", K_CONTIGUOUS, 0},
    {"fill_", K_FILL, 0},
    {"copy_", K_COPY, 0},
    {"eq", K_COMPARE, RC_EQ},
    {"ne", K_COMPARE, RC_NE},
    {"lt", K_COMPARE, RC_LT},
    {"le", K_COMPARE, RC_LE},
    {"gt", K_COMPARE, RC_GT},
    {"ge", K_COMPARE, RC_GE},
    {"index_select", K_INDEX_SELECT, 0},
    {"gather", K_GATHER, 0},
    {"embedding", K_EMBEDDING, 0},
    {"cumsum", K_CUMSUM, 0},
    {"topk", K_TOPK, 0},
    {"sort", K_SORT, 0},
    {"scaled_dot_product_attention", K_SDPA, 0},
    {"logical_and", K_LOGICAL, 0},
    {"logical_or", K_LOGICAL, 1},
    {"logical_not", K_BOOL_UNARY, 0},
    {"isnan", K_BOOL_UNARY, 1},
    {"masked_fill", K_MASKED_FILL, 0},
    {"clamp", K_CLAMP, 0},
    {"cat", K_CAT, 0},
    {"linear", K_LINEAR, 0},
    {"rms_norm", K_RMS_NORM, 0},
    {"batch_norm", K_BATCH_NORM, 0},
    {"conv2d", K_CONV2D, 0},
    {"max_pool2d", K_MAX_POOL, 0},
    {"avg_pool2d", K_AVG_POOL, 0},
    {"adaptive_avg_pool2d", K_ADAPTIVE_POOL, 0},
};
const size_t cert_ncore_refs = sizeof cert_core_refs / sizeof *cert_core_refs;

int cert_core_ref_index(const char *opname) {
  if (strncmp(opname, "core::", 6) != 0) return -1;
  for (size_t r = 0; r < cert_ncore_refs; r++)
    if (strcmp(cert_core_refs[r].name, opname + 6) == 0) return (int)r;
  return -1;
}

const char *const cert_sk_name[SK_COUNT] = {"basic",     "sizes",  "layouts", "broadcast", "dims",
                                            "promotion", "values", "large",   "badshape"};

bool cert_sk_applies(enum kind kind, int sk) {
  bool elementwise2 = kind == K_BINARY || kind == K_ADD_OUT || kind == K_MULADD ||
                      kind == K_WHERE || kind == K_COMPARE || kind == K_LOGICAL ||
                      kind == K_MASKED_FILL;
  bool along = kind == K_REDUCE || kind == K_ARGMAX || kind == K_SOFTMAX || kind == K_CUMSUM ||
               kind == K_LAYER_NORM || kind == K_TOPK || kind == K_SORT || kind == K_CAT ||
               kind == K_RMS_NORM;
  bool layer = kind == K_CONV2D || kind == K_MAX_POOL || kind == K_AVG_POOL ||
               kind == K_ADAPTIVE_POOL || kind == K_LINEAR || kind == K_BATCH_NORM;
  switch (sk) {
    case SK_BROADCAST: return elementwise2 || kind == K_MATMUL || kind == K_COPY || kind == K_SDPA;
    case SK_DIMS: return along || kind == K_INDEX_SELECT || kind == K_GATHER;
    /* (the Scalar ops: a Scalar of each kind, which promotes weakly) */
    case SK_PROMOTION:
      return elementwise2 || kind == K_CAST || kind == K_COPY || kind == K_CAT || kind == K_CLAMP;
    case SK_BADSHAPE:
      return elementwise2 || kind == K_MATMUL || kind == K_COPY || kind == K_LAYER_NORM ||
             kind == K_INDEX_SELECT || kind == K_GATHER || kind == K_EMBEDDING ||
             kind == K_TOPK || kind == K_SORT || kind == K_SDPA || kind == K_CLAMP ||
             kind == K_CAT || kind == K_RMS_NORM || layer;
    default: return true;
  }
}

/* ---- The reference ------------------------------------------------------- */

static int64_t norm_dim(int64_t d, int32_t ndim) { return ndim == 0 ? 0 : d < 0 ? d + ndim : d; }

/* The argument of schema position i, or NULL when the sample leaves it to
 * its default. */
static const sarg *arg(const sample *s, int i) { return i < s->n ? &s->a[i] : NULL; }

/* topk's or sort's two results: values, and *indices. */
static rt *ref_topk_sort(const sample *s, bool topk, rt **indices) {
  const rt *a = s->a[0].t;
  const sarg *dim = arg(s, topk ? 2 : 1), *desc = arg(s, topk ? 3 : 2);
  int64_t d = dim ? dim->i : -1, n = a->ndim ? a->sizes[norm_dim(d, a->ndim)] : 1;
  return ref_topk(a, d, topk ? s->a[1].i : n, desc ? desc->i != 0 : topk, indices);
}

/* A Scalar argument (absent or None: REF_S_NONE). */
static ref_scalar scalar_of(const sarg *a) {
  ref_scalar v = {REF_S_NONE, 0, 0};
  if (a && a->k == AK_INT) v.kind = REF_S_INT, v.i = a->i;
  else if (a && a->k == AK_BOOL) v.kind = REF_S_BOOL, v.i = a->i;
  else if (a && a->k == AK_FLOAT) v.kind = REF_S_FLOAT, v.f = a->f;
  return v;
}

/* An int[2] argument as (height, width): one value for both, and an
 * absent or empty one `dflt` (NULL: 0). */
static void pair_of(const sarg *a, const int64_t *dflt, int64_t *out) {
  if (a && a->k == AK_INTLIST && a->nlist > 0) {
    out[0] = a->list[0];
    out[1] = a->list[a->nlist - 1];
  } else {
    out[0] = dflt ? dflt[0] : 0;
    out[1] = dflt ? dflt[1] : 0;
  }
}

/* A Tensor? argument, or NULL. */
static const rt *opt_t(const sample *s, int i) {
  const sarg *a = arg(s, i);
  return a && a->k == AK_TENSOR ? a->t : NULL;
}

/* The slack of a result of dtype dt whose definition rounds terms of
 * magnitude terms[i] `rounds` times on the way to element i (when run op
 * by op in dt, as the host's composites do): an ulp of the term for each
 * (terms is freed). */
static rt *slack_of(rt *terms, int32_t dt, double rounds) {
  if (!terms) return NULL;
  for (int64_t i = 0; i < terms->numel; i++) terms->f[i] = rounds * dt_ulp(dt, terms->f[i]);
  return terms;
}

/* The layers and pools of op set 2 (sample_conv.c, sample_nn.c). */
static rt *ref_layer(enum kind kind, const sample *s, double *rscale, rt **slack) {
  const rt *a = s->a[0].t;
  static const int64_t ones[2] = {1, 1};
  int64_t k[2], st[2], p[2], d[2], n = 1;
  rt *terms = NULL, *w = NULL;
  switch (kind) {
    case K_CONV2D: {
      /* matmul's tolerance for C / groups * KH * KW products */
      const sarg *g = arg(s, 6);
      pair_of(arg(s, 3), ones, st);
      pair_of(arg(s, 4), NULL, p);
      pair_of(arg(s, 5), ones, d);
      /* with a bias: the sum may be rounded before it is added */
      w = ref_conv2d(a, s->a[1].t, opt_t(s, 2), st, p, d, g && g->k == AK_INT ? g->i : 1, &n,
                     &terms);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      *slack = slack_of(terms, a->dtype, 1);
      return w;
    }
    case K_MAX_POOL: {
      const sarg *cm = arg(s, 5);
      pair_of(arg(s, 1), NULL, k);
      pair_of(arg(s, 2), k, st);
      pair_of(arg(s, 3), NULL, p);
      pair_of(arg(s, 4), ones, d);
      return ref_max_pool2d(a, k, st, p, d, cm && cm->i);
    }
    case K_AVG_POOL: {
      /* mean's tolerance over a window */
      const sarg *cm = arg(s, 4), *cip = arg(s, 5), *dv = arg(s, 6);
      pair_of(arg(s, 1), NULL, k);
      pair_of(arg(s, 2), k, st);
      pair_of(arg(s, 3), NULL, p);
      *rscale = sqrt((double)(k[0] * k[1]));
      return ref_avg_pool2d(a, k, st, p, cm && cm->i, !cip || cip->i,
                            dv && dv->k == AK_INT ? dv->i : 0);
    }
    case K_ADAPTIVE_POOL: {
      pair_of(arg(s, 1), NULL, k);
      w = ref_adaptive_avg_pool2d(a, k, &n);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      return w;
    }
    case K_LINEAR: {
      n = s->a[1].t->sizes[1];
      *rscale = sqrt((double)(n > 1 ? n : 1));
      w = ref_linear(a, s->a[1].t, opt_t(s, 2), &terms);
      *slack = slack_of(terms, a->dtype, 1);
      return w;
    }
    case K_RMS_NORM: {
      /* layer_norm's: rtol grows with the normalized elements */
      const sarg *eps = arg(s, 3);
      for (size_t j = 0; j < s->a[1].nlist; j++) n *= s->a[1].list[j];
      *rscale = sqrt((double)(n > 1 ? n : 1));
      return ref_rms_norm(a, (int32_t)s->a[1].nlist, opt_t(s, 2),
                          eps && eps->k == AK_FLOAT ? eps->f : NAN);
    }
    case K_BATCH_NORM:
      /* five steps (sub, rsqrt, mul, mul, add), each rounded op by op */
      w = ref_batch_norm(a, opt_t(s, 1), opt_t(s, 2), s->a[3].t, s->a[4].t, s->a[7].f, &terms);
      *slack = slack_of(terms, a->dtype, 5);
      return w;
    case K_CAT: {
      const tlist *l = s->a[0].l;
      const sarg *dim = arg(s, 1);
      return ref_cat((const rt *const *)l->t, l->n, dim && dim->k == AK_INT ? dim->i : 0);
    }
    default: return NULL;
  }
}

rt *cert_ref_core2(int r, const sample *s) {
  enum kind kind = cert_core_refs[r].kind;
  if (kind != K_TOPK && kind != K_SORT) return NULL;
  rt *indices = NULL;
  rt_free(ref_topk_sort(s, kind == K_TOPK, &indices));
  return indices;
}

rt *cert_ref_core(int r, const sample *s, double *rscale, double *ascale, rt **slack) {
  enum kind kind = cert_core_refs[r].kind;
  int sub = cert_core_refs[r].sub;
  const rt *a = s->a[0].t, *b = s->n > 1 ? s->a[1].t : NULL;
  *rscale = *ascale = 1;
  *slack = NULL;
  switch (kind) {
    case K_BINARY: {
      const sarg *al = arg(s, 2);
      return ref_binary(sub, a, b, al && al->k == AK_FLOAT ? al->f : 1.0);
    }
    case K_ADD_OUT: return ref_binary(sub, a, b, s->a[2].f);
    case K_MULADD: return ref_muladd(a, b, s->a[2].f);
    case K_UNARY: {
      const sarg *ap = arg(s, 1);
      if (sub == RU_GELU && ap && ap->k == AK_STR && strcmp(ap->s, "tanh") == 0)
        return ref_unary(RU_GELU_TANH, a);
      return ref_unary(sub, a);
    }
    case K_WHERE: return ref_where(a, b, s->a[2].t);
    case K_COMPARE: return ref_compare(sub, a, b);
    case K_CUMSUM: {
      const sarg *dt = arg(s, 2);
      int64_t n = 1;
      rt *w = ref_cumsum(a, s->a[1].i, dt && dt->k == AK_DTYPE ? dt->dt : BP_DTYPE_INVALID, &n);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      *ascale = (double)(n > 1 ? n : 1);
      return w;
    }
    case K_TOPK:
    case K_SORT: {
      rt *indices = NULL, *values = ref_topk_sort(s, kind == K_TOPK, &indices);
      rt_free(indices);
      return values;
    }
    case K_SDPA: {
      /* two products and a softmax: matmul's tolerance for each */
      const sarg *mk = arg(s, 3), *causal = arg(s, 5), *sc = arg(s, 6);
      int64_t E = a->sizes[a->ndim - 1], S = b->sizes[b->ndim - 2];
      *rscale = sqrt((double)(E > 1 ? E : 1)) + sqrt((double)(S > 1 ? S : 1));
      *ascale = sqrt((double)(S > 1 ? S : 1));
      return ref_sdpa(a, b, s->a[2].t, mk && mk->k == AK_TENSOR ? mk->t : NULL,
                      causal && causal->i != 0, sc && sc->k == AK_FLOAT ? sc->f : NAN);
    }
    case K_LOGICAL: return ref_logical(sub != 0, a, b);
    case K_BOOL_UNARY: return sub ? ref_isnan(a) : ref_logical_not(a);
    case K_MASKED_FILL: {
      ref_scalar v = scalar_of(arg(s, 2));
      return ref_masked_fill(a, b, &v);
    }
    case K_CLAMP: {
      ref_scalar lo = scalar_of(arg(s, 1)), hi = scalar_of(arg(s, 2));
      return ref_clamp(a, &lo, &hi);
    }
    case K_CAT:
    case K_LINEAR:
    case K_RMS_NORM:
    case K_BATCH_NORM:
    case K_CONV2D:
    case K_MAX_POOL:
    case K_AVG_POOL:
    case K_ADAPTIVE_POOL: return ref_layer(kind, s, rscale, slack);
    case K_INDEX_SELECT: return ref_index_select(a, s->a[1].i, s->a[2].t);
    case K_GATHER: return ref_gather(a, s->a[1].i, s->a[2].t);
    case K_EMBEDDING: return ref_embedding(a, s->a[1].t);
    case K_REDUCE: {
      const sarg *dl = arg(s, 1), *kd = arg(s, 2), *dt = arg(s, 3);
      int64_t dims[BP_MAX_NDIM], n = 1;
      size_t nd = dl ? dl->nlist : 0;
      for (size_t j = 0; j < nd; j++) dims[j] = norm_dim(dl->list[j], a->ndim);
      if (a->ndim == 0) nd = 0;
      rt *w = ref_reduce(sub, a, dims, nd, kd && kd->i, dt && dt->k == AK_DTYPE ? dt->dt
                                                                               : BP_DTYPE_INVALID,
                         &n);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      if (sub == RR_SUM) *ascale = (double)(n > 1 ? n : 1);
      return w;
    }
    case K_ARGMAX: {
      const sarg *d = arg(s, 1), *kd = arg(s, 2);
      bool has = d && d->k == AK_INT;
      return ref_argmax(a, has, has ? norm_dim(d->i, a->ndim) : 0, kd && kd->i);
    }
    case K_MATMUL: {
      int64_t k = 1;
      rt *w = ref_matmul(a, b, &k);
      *rscale = sqrt((double)(k > 1 ? k : 1));
      return w;
    }
    case K_SOFTMAX: {
      int64_t d = norm_dim(s->a[1].i, a->ndim);
      *rscale = sqrt((double)(a->ndim && a->sizes[d] > 1 ? a->sizes[d] : 1));
      return ref_softmax(a, d, sub != 0);
    }
    case K_LAYER_NORM: {
      const sarg *w = arg(s, 2), *bb = arg(s, 3), *eps = arg(s, 4);
      int64_t n = 1;
      for (size_t j = 0; j < s->a[1].nlist; j++) n *= s->a[1].list[j];
      *rscale = sqrt((double)(n > 1 ? n : 1));
      return ref_layer_norm(a, (int32_t)s->a[1].nlist, w && w->k == AK_TENSOR ? w->t : NULL,
                            bb && bb->k == AK_TENSOR ? bb->t : NULL,
                            eps && eps->k == AK_FLOAT ? eps->f : 1e-5);
    }
    case K_CAST: return ref_cast(a, s->a[1].dt);
    case K_CONTIGUOUS: return ref_cast(a, a->dtype);
    case K_FILL: {
      rt *w = rt_new(a->dtype, a->ndim, a->sizes);
      for (int64_t i = 0; i < w->numel; i++) {
        if (dt_is_float(w->dtype)) w->f[i] = round_to(w->dtype, s->a[1].f);
        else w->i[i] = float_to_int(w->dtype, s->a[1].f);
      }
      return w;
    }
    case K_COPY: {
      rt *e = ref_expand(b, a->ndim, a->sizes);
      rt *w = ref_cast(e, a->dtype);
      rt_free(e);
      return w;
    }
  }
  return NULL;
}

/* ---- The samples of the other checks -------------------------------------- */

void cert_sample_set_free(sample *v, size_t n) {
  for (size_t i = 0; i < n; i++) cert_sample_free(&v[i]);
  free(v);
}
