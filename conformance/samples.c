/*
 * conformance/samples.c - samples (sample.h): the random generator, the
 * arguments of one call of a core op (gen_core) or of any op from its
 * schema (gen_generic), and the float64 reference result of a core op's
 * sample (ref_core, over tests/cpu/ref.c).
 */
#define _GNU_SOURCE

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <backplane/host.h>

#include "cert.h"
#include "num.h"
#include "ref.h"
#include "sample.h"

/* ------------------------------------------------------------------------ */
/* Samples: the arguments of one call, and its reference result             */
/* ------------------------------------------------------------------------ */

/* splitmix64, seeded per case from --seed and the case's name. */
static uint64_t rng_state;
uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
double rng_uniform(double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng_next() >> 11) / 9007199254740992.0);
}
void rng_seed_name(const char *name) {
  uint64_t h = 1469598103934665603u;
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
  rng_state = cx.opt.seed ^ h;
}
void rng_reset(void) { rng_state = 0; }

/* Random values of r's dtype: floats in [lo, hi) rounded to the dtype,
 * integers in [lo, hi] clipped to the dtype's range, bools 0 or 1. */
void fill_rt(rt *r, double lo, double hi) {
  for (int64_t i = 0; i < r->numel; i++) {
    if (dt_is_float(r->dtype)) {
      r->f[i] = round_to(r->dtype, rng_uniform(lo, hi));
    } else if (r->dtype == BP_BOOL) {
      r->i[i] = (int64_t)(rng_next() & 1);
    } else {
      int64_t l = (int64_t)ceil(lo), h = (int64_t)floor(hi);
      if (l < dt_min(r->dtype)) l = dt_min(r->dtype);
      if (h > dt_max(r->dtype)) h = dt_max(r->dtype);
      r->i[i] = h < l ? l : l + (int64_t)(rng_next() % (uint64_t)(h - l + 1));
    }
  }
}

rt *rand_rt(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi) {
  rt *r = rt_new(dt, ndim, sizes);
  fill_rt(r, lo, hi);
  return r;
}

/* The sample kinds (enum sk), by name: the last part of a numerics case. */
const char *const sk_name[] = {"basic",     "shapes",   "empty", "broadcast",
                               "noncontig", "badshape"};

void sample_free(sample *s) {
  for (int i = 0; i < s->n; i++) rt_free(s->a[i].t);
  memset(s, 0, sizeof *s);
}

void add_tensor(sample *s, rt *t, bool nc) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_TENSOR;
  a->t = t;
  a->nc = nc && t->ndim > 0;
}
void add_float(sample *s, double f) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_FLOAT;
  a->f = f;
}
void add_int(sample *s, int64_t i) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_INT;
  a->i = i;
}
void add_list(sample *s, const int64_t *v, size_t n) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_INTLIST;
  memcpy(a->list, v, n * sizeof *v);
  a->nlist = n;
}
void add_dtype(sample *s, int32_t dt) {
  sarg *a = &s->a[s->n++];
  memset(a, 0, sizeof *a);
  a->k = AK_DTYPE;
  a->dt = dt;
}

/* The core ops the certifier has a reference for: how their samples are
 * made (kind), and which reference function gives the result (sub). */
const core_ref core_refs[] = {
    {"add", K_BINARY, RB_ADD},           {"add.out", K_ADD_OUT, RB_ADD},
    {"sub", K_BINARY, RB_SUB},           {"mul", K_BINARY, RB_MUL},
    {"div", K_BINARY, RB_DIV},           {"maximum", K_BINARY, RB_MAXIMUM},
    {"minimum", K_BINARY, RB_MINIMUM},   {"pow", K_BINARY, RB_POW},
    {"muladd", K_MULADD, 0},             {"neg", K_UNARY, RU_NEG},
    {"abs", K_UNARY, RU_ABS},            {"relu", K_UNARY, RU_RELU},
    {"exp", K_UNARY, RU_EXP},            {"log", K_UNARY, RU_LOG},
    {"sqrt", K_UNARY, RU_SQRT},          {"rsqrt", K_UNARY, RU_RSQRT},
    {"sigmoid", K_UNARY, RU_SIGMOID},    {"tanh", K_UNARY, RU_TANH},
    {"gelu", K_UNARY, RU_GELU},          {"where", K_WHERE, 0},
    {"sum", K_REDUCE, RR_SUM},           {"mean", K_REDUCE, RR_MEAN},
    {"amax", K_REDUCE, RR_AMAX},         {"amin", K_REDUCE, RR_AMIN},
    {"argmax", K_ARGMAX, 0},             {"matmul", K_MATMUL, 0},
    {"softmax", K_SOFTMAX, 0},           {"log_softmax", K_SOFTMAX, 1},
    {"layer_norm", K_LAYER_NORM, 0},     {"cast", K_CAST, 0},
    {"contiguous", K_CONTIGUOUS, 0},     {"fill_", K_FILL, 0},
    {"copy_", K_COPY, 0},
};
const size_t ncore_refs = sizeof core_refs / sizeof *core_refs;

int core_ref_index(const char *opname) {
  if (!is_core(opname)) return -1;
  for (size_t r = 0; r < ncore_refs; r++)
    if (strcmp(core_refs[r].name, opname + 6) == 0) return (int)r;
  return -1;
}

/* Whether a sample kind applies to a kind of op. */
bool sk_applies(enum kind kind, int sk) {
  if (sk == SK_BCAST)
    return kind == K_BINARY || kind == K_ADD_OUT || kind == K_MULADD || kind == K_WHERE ||
           kind == K_MATMUL || kind == K_COPY;
  if (sk == SK_BADSHAPE)
    return kind == K_BINARY || kind == K_ADD_OUT || kind == K_MULADD || kind == K_WHERE ||
           kind == K_MATMUL || kind == K_COPY || kind == K_LAYER_NORM;
  return true;
}

static const int64_t S23[] = {2, 3}, S5[] = {5}, S234[] = {2, 3, 4}, S03[] = {0, 3},
                     S213[] = {2, 1, 3}, S41[] = {4, 1}, S3[] = {3}, S4[] = {4}, S17[] = {1, 7};

/* The main input shape of a sample. */
static void main_shape(int sk, int variant, int32_t *nd, const int64_t **sz) {
  switch (sk) {
    case SK_SHAPES:
      if (variant == 0) *nd = 1, *sz = S5;
      else if (variant == 1) *nd = 3, *sz = S234;
      else *nd = 0, *sz = NULL;
      break;
    case SK_EMPTY: *nd = 2, *sz = S03; break;
    case SK_BCAST: *nd = 3, *sz = S213; break;
    default: *nd = 2, *sz = S23; break;
  }
}

/* The arguments of a core op's sample, of dtype dt. */
void gen_core(int r, int32_t dt, int sk, int variant, sample *s) {
  memset(s, 0, sizeof *s);
  enum kind kind = core_refs[r].kind;
  int sub = core_refs[r].sub;
  bool nc = sk == SK_NONCONTIG, fl = dt_is_float(dt);
  int32_t nd;
  const int64_t *sz;
  main_shape(sk, variant, &nd, &sz);
  switch (kind) {
    case K_BINARY:
    case K_ADD_OUT:
    case K_MULADD: {
      bool pw = sub == RB_POW && kind == K_BINARY;
      rt *a = rand_rt(dt, nd, sz, pw ? (fl ? 0.5 : -3) : -2, pw ? (fl ? 2 : 3) : 2);
      rt *b;
      if (sk == SK_BCAST) b = rand_rt(dt, 2, S41, pw && !fl ? 0 : -2, pw && !fl ? 3 : 2);
      else if (sk == SK_BADSHAPE) b = rand_rt(dt, 1, S4, -2, 2);
      else b = rand_rt(dt, nd, sz, pw && !fl ? 0 : -2, pw && !fl ? 3 : 2);
      add_tensor(s, a, nc);
      add_tensor(s, b, nc);
      if (kind == K_MULADD) {
        add_float(s, 0.5);
      } else if (kind == K_ADD_OUT || sub == RB_ADD || sub == RB_SUB) {
        add_float(s, fl ? 0.5 : 1.0);
      }
      if (kind == K_ADD_OUT) {
        int32_t on;
        int64_t os[BP_MAX_NDIM];
        if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &on, os)) on = 2, os[0] = 2, os[1] = 3;
        rt *o = rt_new(dt, on, os);
        add_tensor(s, o, nc);
      }
      break;
    }
    case K_UNARY: {
      bool pos = sub == RU_LOG || sub == RU_SQRT || sub == RU_RSQRT;
      add_tensor(s, rand_rt(dt, nd, sz, pos ? (fl ? 0.25 : 1) : -3, pos ? (fl ? 3 : 9) : 3), nc);
      break;
    }
    case K_WHERE:
      if (sk == SK_BCAST) {
        add_tensor(s, rand_rt(BP_BOOL, 2, S41, 0, 1), nc);
        add_tensor(s, rand_rt(dt, 3, S213, -2, 2), nc);
        add_tensor(s, rand_rt(dt, 1, S3, -2, 2), nc);
      } else {
        add_tensor(s, rand_rt(BP_BOOL, nd, sz, 0, 1), nc);
        add_tensor(s, rand_rt(dt, nd, sz, -2, 2), nc);
        add_tensor(s, rand_rt(dt, sk == SK_BADSHAPE ? 1 : nd, sk == SK_BADSHAPE ? S4 : sz, -2, 2),
                   nc);
      }
      break;
    case K_REDUCE: {
      const int64_t d[1] = {-1};
      add_tensor(s, rand_rt(dt, nd, sz, -2, 2), nc);
      add_list(s, d, 1);
      break;
    }
    case K_ARGMAX:
      add_tensor(s, rand_rt(dt, nd, sz, -5, 5), nc);
      add_int(s, -1);
      break;
    case K_MATMUL: {
      static const int64_t m34[] = {3, 4}, m42[] = {4, 2}, m32[] = {3, 2}, b2123[] = {2, 1, 2, 3},
                           b334[] = {3, 3, 4};
      int32_t na = 2, nb = 2;
      const int64_t *sa = S23, *sb = m34;
      if (sk == SK_EMPTY) sa = S03;
      if (sk == SK_SHAPES && variant == 0) na = 1, sa = S5, nb = 1, sb = S5;
      if (sk == SK_SHAPES && variant == 1) na = 3, sa = S234, sb = m42;
      if (sk == SK_SHAPES && variant == 2) na = 1, sa = S3, sb = m32;
      if (sk == SK_BCAST) na = 4, sa = b2123, nb = 3, sb = b334;
      if (sk == SK_BADSHAPE) sb = m42;
      add_tensor(s, rand_rt(dt, na, sa, -0.5, 0.5), nc);
      add_tensor(s, rand_rt(dt, nb, sb, -0.5, 0.5), nc);
      break;
    }
    case K_SOFTMAX:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_int(s, -1);
      break;
    case K_LAYER_NORM: {
      if (nd == 0) nd = 2, sz = S17;
      int64_t last = sk == SK_BADSHAPE ? 5 : sz[nd - 1];
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_list(s, &last, 1);
      break;
    }
    case K_CAST:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_dtype(s, sk == SK_BASIC ? dt : dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64);
      break;
    case K_CONTIGUOUS:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      break;
    case K_FILL:
      add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      add_float(s, fl ? 2.5 : dt == BP_BOOL ? 1.0 : 2.0);
      break;
    case K_COPY:
      if (sk == SK_BCAST || sk == SK_BADSHAPE) {
        add_tensor(s, rand_rt(dt, 2, S23, -3, 3), nc);
        add_tensor(s, rand_rt(dt, 1, sk == SK_BCAST ? S3 : S4, -3, 3), nc);
      } else {
        add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
        add_tensor(s, rand_rt(dt, nd, sz, -3, 3), nc);
      }
      break;
  }
}

static int64_t norm_dim(int64_t d, int32_t ndim) { return ndim == 0 ? 0 : d < 0 ? d + ndim : d; }

/* The reference result of a valid core sample; the tolerance scales. */
rt *ref_core(int r, const sample *s, double *rscale, double *ascale) {
  enum kind kind = core_refs[r].kind;
  int sub = core_refs[r].sub;
  const rt *a = s->a[0].t, *b = s->n > 1 ? s->a[1].t : NULL;
  *rscale = *ascale = 1;
  switch (kind) {
    case K_BINARY:
      return ref_binary(sub, a, b, s->n > 2 ? s->a[2].f : 1.0);
    case K_ADD_OUT:
      return ref_binary(sub, a, b, s->a[2].f);
    case K_MULADD:
      return ref_muladd(a, b, s->a[2].f);
    case K_UNARY:
      return ref_unary(sub, a);
    case K_WHERE:
      return ref_where(a, b, s->a[2].t);
    case K_REDUCE: {
      int64_t n = 1, d = norm_dim(s->a[1].list[0], a->ndim);
      rt *w = ref_reduce(sub, a, &d, a->ndim ? 1 : 0, false, BP_DTYPE_INVALID, &n);
      *rscale = sqrt((double)(n > 1 ? n : 1));
      if (sub == RR_SUM) *ascale = (double)(n > 1 ? n : 1);
      return w;
    }
    case K_ARGMAX:
      return ref_argmax(a, true, norm_dim(s->a[1].i, a->ndim), false);
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
    case K_LAYER_NORM:
      *rscale = sqrt((double)(s->a[1].list[0] > 1 ? s->a[1].list[0] : 1));
      return ref_layer_norm(a, 1, NULL, NULL, 1e-5);
    case K_CAST:
      return ref_cast(a, s->a[1].dt);
    case K_CONTIGUOUS:
      return ref_cast(a, a->dtype);
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

/* A generic sample from a schema (ops outside core): Tensor -> float32
 * [4, 5] (non-contiguous for SK_NONCONTIG), int -> 1, float -> 0.5,
 * bool -> false; arguments with defaults are left to their defaults.
 * Returns false with the reason when an argument cannot be generated. */
bool gen_generic(const schema_info *si, int sk, sample *s, char *why, size_t len) {
  static const int64_t s45[] = {4, 5};
  memset(s, 0, sizeof *s);
  for (int i = 0; i < si->n; i++) {
    const char *t = si->type[i];
    if (si->has_default[i]) {
      bool later = false;
      for (int j = i + 1; j < si->n; j++) later |= !si->has_default[j];
      if (!later) break;
    }
    if (s->n == 8) {
      snprintf(why, len, "more than 8 arguments");
      sample_free(s);
      return false;
    }
    if (strncmp(t, "Tensor", 6) == 0 && !strchr(t, '[') && !strchr(t, '?')) {
      add_tensor(s, rand_rt(BP_FLOAT32, 2, s45, -2, 2), sk == SK_NONCONTIG);
    } else if (strcmp(t, "int") == 0) {
      add_int(s, 1);
    } else if (strcmp(t, "float") == 0) {
      add_float(s, 0.5);
    } else if (strcmp(t, "bool") == 0) {
      sarg *a = &s->a[s->n++];
      memset(a, 0, sizeof *a);
      a->k = AK_BOOL;
    } else if (strcmp(t, "ScalarType") == 0) {
      add_dtype(s, BP_FLOAT32);
    } else if (t[strlen(t) - 1] == '?') {
      sarg *a = &s->a[s->n++];
      memset(a, 0, sizeof *a);
      a->k = AK_NONE;
    } else {
      /* (A truncated reason is still a reason.) */
      if (snprintf(why, len, "cannot generate argument %d '%s' of type %s", i, si->name[i], t) < 0)
        why[0] = '\0';
      sample_free(s);
      return false;
    }
  }
  return true;
}

const char *sample_desc(const sample *s, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->n && o < len; i++) {
    if (s->a[i].k != AK_TENSOR) continue;
    char sh[96];
    o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", o ? " " : "", dt_name(s->a[i].t->dtype),
                          shape_str(s->a[i].t->ndim, s->a[i].t->sizes, sh, sizeof sh),
                          s->a[i].nc ? "(strided)" : "");
  }
  return buf;
}

/* "[2, 3]" into buf. */
const char *shape_str(int32_t ndim, const int64_t *sizes, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "[");
  for (int32_t d = 0; d < ndim && o < len; d++)
    o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (o < len) snprintf(buf + o, len - o, "]");
  return buf;
}
