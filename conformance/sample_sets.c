/*
 * conformance/sample_sets.c - the sample sets of the numerics check: for a
 * core op, a dtype and a sample class, the list of calls to make.
 *
 * The sets are chosen for coverage, not count: every length a vector loop
 * or an unrolled loop can end on, every layout of every tensor argument,
 * every broadcast pattern, every dim, every promotion partner, the value
 * classes where kernels go wrong (docs/certification.md), and a few inputs
 * large enough for threaded and blocked paths.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"
#include "num.h"

#define next cert_gen_next

/* ---- The Scalars of masked_fill and clamp ------------------------------ */

/* Pushes Scalar v as the kind c names: 'i' an int, 'f' a float, 'b' a
 * bool, 'n' None. */
static void add_scalar(sample *s, char c, double v) {
  switch (c) {
    case 'i':
      cert_add_int(s, (int64_t)v);
      break;
    case 'b':
      cert_add_bool(s, v != 0);
      break;
    case 'n':
      cert_add_none(s);
      break;
    default:
      cert_add_float(s, v);
      break;
  }
}

/* masked_fill's value, variant v of self's dtype dt: plain and of each
 * kind (an int, a float truncated for an integer self, a bool). */
static const char *fill_scalar(sample *s, int32_t dt, int v) {
  static const struct {
    char c;
    double f, i, b; /* the value for a float, an integer and a bool self */
    const char *what;
  } t[] = {{'f', 2.5, 2.75, 0.5, "a float value"},
           {'i', 3, 7, 5, "an int value"},
           {'f', -0.0, -1.5, 0, "a float value of -0.0 (-1.5 for integers)"},
           {'b', 1, 1, 1, "a bool value"},
           {'i', -7, 0, 0, "an int value of -7 (0 for integers)"}};
  int j = v % 5;
  double x = dt_is_float(dt) ? t[j].f : dt == BP_BOOL ? t[j].b : t[j].i;
  if (x < 0 && dt_min(dt) == 0 && !dt_is_float(dt)) x = -x; /* uint8 holds no negative */
  add_scalar(s, t[j].c, x);
  return t[j].what;
}

/* clamp's min and max, variant v for self's dtype dt: both, either one,
 * an int or a float, min above max. */
static const char *clamp_scalars(sample *s, int32_t dt, int v) {
  static const struct {
    char cmin, cmax;
    double fmin, fmax; /* for a float self */
    double imin, imax; /* for an integer or bool self */
    const char *what;
  } t[] = {{'f', 'f', -1, 1, -2.5, 7.5, "float min and max"},
           {'n', 'f', 0, 0.5, 0, 7, "max only"},
           {'f', 'n', -0.5, 0, -3, 0, "min only"},
           {'i', 'i', -1, 1, -10, 10, "int min and max"},
           {'f', 'f', 1, -1, 10, -10, "min above max"},
           {'i', 'f', 0, 1.5, 0, 1.5, "an int min and a float max"}};
  int j = v % 6;
  bool fl = dt_is_float(dt);
  double lo = fl ? t[j].fmin : t[j].imin, hi = fl ? t[j].fmax : t[j].imax;
  if (!fl && dt_min(dt) == 0) lo = lo < 0 ? 0 : lo, hi = hi < 0 ? 0 : hi; /* uint8, bool */
  /* a float bound on an integer self is a float; an int one a whole number */
  char cmin = t[j].cmin, cmax = t[j].cmax;
  if (!fl && j == 1) cmax = 'i';
  if (!fl && j == 2) cmin = 'i';
  if (!fl && j == 4) cmin = cmax = 'i';
  add_scalar(s, cmin, lo);
  add_scalar(s, cmax, hi);
  return t[j].what;
}

/* ---- Shapes -------------------------------------------------------------- */

/* Every length 0 .. 70, and multiples of 64 (so of 8, 16 and 32) +-1. */
static const int64_t sweep_long[] = {127, 128, 129, 191, 192, 193, 255,  256,  257,
                                     511, 512, 513, 1023, 1024, 1025};
#define NSWEEP (71 + (int)(sizeof sweep_long / sizeof *sweep_long))
static int64_t sweep(int i) { return i <= 70 ? i : sweep_long[i - 71]; }

/* Ranks 0 .. 5, and tensors with a 0-size dim. */
static const shape ranks[] = {
    {0, {0}},       {1, {5}},          {2, {3, 4}},          {3, {2, 3, 5}},
    {4, {2, 3, 1, 4}}, {5, {2, 1, 3, 2, 3}}, {2, {0, 3}},     {2, {3, 0}},
    {3, {2, 0, 4}},
};
#define NRANKS (sizeof ranks / sizeof *ranks)

/* ---- Per kind: the arguments around the tensors ------------------------- */

/* Pushes the trailing scalars of an elementwise op (alpha, c, approximate)
 * and says whether the result is rounded once. */
static void tail_args(slist *L, sample *s, int variant) {
  enum kind k = kind_of(L);
  int sub = sub_of(L);
  bool fl = dt_is_float(s->a[0].t->dtype);
  s->exact = cert_gen_exact(k, sub);
  s->zero_ties = k == K_BINARY && (sub == RB_MAXIMUM || sub == RB_MINIMUM);
  if (k == K_MULADD) {
    cert_add_float(s, variant & 1 ? -1.25 : 0.5);
  } else if (k == K_ADD_OUT || (k == K_BINARY && (sub == RB_ADD || sub == RB_SUB))) {
    /* alpha 1 rounds once; another alpha is compared within tolerance */
    double alpha = variant % 3 == 2 ? (fl ? 0.5 : 2.0) : 1.0;
    if (variant % 5 == 4 && fl) alpha = -2.75;
    cert_add_float(s, alpha);
    s->exact = alpha == 1.0;
  } else if (k == K_UNARY && sub == RU_GELU) {
    cert_add_str(s, variant & 1 ? "tanh" : "none");
  }
}

/* The out argument of add.out: the broadcast shape and promoted dtype. */
static void add_out(sample *s, int lay) {
  const rt *a = s->a[0].t, *b = s->a[1].t;
  int32_t n;
  int64_t sz[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &n, sz)) n = 1, sz[0] = 1;
  cert_add_tensor(s, cert_rand_rt(dt_promote(a->dtype, b->dtype), n, sz, -1, 1), lay);
}

/* An elementwise sample over operands of shapes sa (and sb, sc) with the
 * layouts la, lb, lc. */
static void ew(slist *L, const char *label, const shape *sa, const shape *sb, const shape *sc,
               int la, int lb, int lc, int32_t dta, int32_t dtb, int variant) {
  enum kind k = kind_of(L);
  sample *s = next(L, label);
  switch (k) {
    case K_WHERE:
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, sa->n, sa->s, 0, 1), la);
      cert_add_tensor(s, cert_gen_input(L, 1, dta, sb->n, sb->s), lb);
      cert_add_tensor(s, cert_gen_input(L, 2, dtb, sc->n, sc->s), lc);
      s->exact = true;
      return;
    case K_UNARY:
    case K_BOOL_UNARY:
    case K_CONTIGUOUS:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      tail_args(L, s, variant);
      return;
    case K_MASKED_FILL:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, sb->n, sb->s, 0, 1), lb);
      fill_scalar(s, dta, variant);
      s->exact = true;
      return;
    case K_CLAMP:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      clamp_scalars(s, dta, variant);
      /* maximum and minimum may give either zero where -0.0 meets 0.0 */
      s->exact = s->zero_ties = true;
      return;
    case K_CAST:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      cert_add_dtype(s, dtb);
      s->exact = true;
      return;
    case K_FILL:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      cert_add_float(s, cert_gen_fill_value(dta, variant));
      s->exact = true;
      return;
    case K_COPY:
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      cert_add_tensor(s, cert_gen_input(L, 1, dtb, sb->n, sb->s), lb);
      s->exact = true;
      return;
    default: /* binary, add.out, muladd */
      cert_add_tensor(s, cert_gen_input(L, 0, dta, sa->n, sa->s), la);
      cert_add_tensor(s, cert_gen_input(L, 1, dtb, sb->n, sb->s), lb);
      tail_args(L, s, variant);
      if (k == K_ADD_OUT) add_out(s, lc);
      return;
  }
}

static void ew_same(slist *L, const char *label, const shape *sh, int lay, int variant) {
  /* cast: to its own dtype (a new tensor all the same) and to float64 */
  int32_t to = kind_of(L) == K_CAST && variant % 2 ? BP_FLOAT64 : L->dt;
  ew(L, label, sh, sh, sh, lay, lay, lay, L->dt, to, variant);
}

/* A reduction-like sample: x of shape sh and the op's dim arguments. */
static void along(slist *L, const char *label, rt *x, int lay, const int64_t *dims, int ndims,
                  int keepdim, int32_t sum_dt) {
  enum kind k = kind_of(L);
  sample *s = next(L, label);
  cert_add_tensor(s, x, lay);
  s->exact = cert_gen_exact(k, sub_of(L));
  s->zero_ties = k == K_REDUCE && (sub_of(L) == RR_AMAX || sub_of(L) == RR_AMIN);
  switch (k) {
    case K_REDUCE:
      cert_add_list(s, dims, (size_t)(ndims < 0 ? 0 : ndims));
      if (keepdim >= 0 || sum_dt != BP_DTYPE_INVALID) cert_add_bool(s, keepdim > 0);
      if (sum_dt != BP_DTYPE_INVALID && sub_of(L) == RR_SUM) cert_add_dtype(s, sum_dt);
      break;
    case K_ARGMAX:
      if (ndims < 0)
        cert_add_none(s);
      else
        cert_add_int(s, dims[0]);
      if (keepdim >= 0) cert_add_bool(s, keepdim > 0);
      break;
    case K_SOFTMAX:
      cert_add_int(s, ndims > 0 ? dims[0] : -1);
      break;
    case K_CUMSUM:
      cert_add_int(s, ndims > 0 ? dims[0] : -1);
      if (sum_dt != BP_DTYPE_INVALID) cert_add_dtype(s, sum_dt);
      break;
    case K_LAYER_NORM: {
      /* normalized_shape: the trailing dims[0] sizes of x */
      int64_t nn = ndims > 0 ? dims[0] : 1, ns[BP_MAX_NDIM];
      if (nn > x->ndim) nn = x->ndim;
      for (int64_t j = 0; j < nn; j++) ns[j] = x->sizes[x->ndim - nn + j];
      cert_add_list(s, ns, (size_t)nn);
      if (keepdim > 0) { /* 1: weight and bias; 2: weight alone; 3: bias alone */
        if (keepdim != 3)
          cert_add_tensor(s, cert_rand_rt(x->dtype, (int32_t)nn, ns, 0.5, 1.5), L_CONTIG);
        else
          cert_add_none(s);
        if (keepdim != 2)
          cert_add_tensor(s, cert_rand_rt(x->dtype, (int32_t)nn, ns, -1, 1), L_CONTIG);
        else
          cert_add_none(s);
        cert_add_float(s, sum_dt == BP_DTYPE_INVALID ? 1e-5 : 1e-3);
      }
      break;
    }
    default: break;
  }
}

static void along_shape(slist *L, const char *label, const shape *sh, int lay, const int64_t *dims,
                        int ndims, int keepdim) {
  along(L, label, cert_gen_input(L, 0, L->dt, sh->n, sh->s), lay, dims, ndims, keepdim,
        BP_DTYPE_INVALID);
}

static void mm(slist *L, const char *label, const shape *sa, const shape *sb, int la, int lb) {
  sample *s = next(L, label);
  cert_add_tensor(s, cert_gen_input(L, 0, L->dt, sa->n, sa->s), la);
  cert_add_tensor(s, cert_gen_input(L, 1, L->dt, sb->n, sb->s), lb);
}

/* ---- The classes ---------------------------------------------------------- */

static void set_basic(slist *L) {
  static const shape s23 = {2, {2, 3}}, s34 = {2, {3, 4}};
  static const int64_t last = -1;
  switch (kind_of(L)) {
    case K_MATMUL: mm(L, "basic", &s23, &s34, L_CONTIG, L_CONTIG); break;
    case K_REDUCE: along_shape(L, "basic", &s23, L_CONTIG, &last, 1, -1); break;
    case K_ARGMAX:
    case K_SOFTMAX:
    case K_CUMSUM: along_shape(L, "basic", &s23, L_CONTIG, &last, 1, -1); break;
    case K_LAYER_NORM: {
      /* and each optional argument alone (a kernel that takes weight and
       * bias as a pair gets one of these wrong) */
      static const int64_t one = 1;
      along_shape(L, "basic", &s23, L_CONTIG, &one, 1, 0);
      along_shape(L, "weight without bias", &s23, L_CONTIG, &one, 1, 2);
      along_shape(L, "bias without weight", &s23, L_CONTIG, &one, 1, 3);
      break;
    }
    default: ew_same(L, "basic", &s23, L_CONTIG, 0); break;
  }
}

static void set_sizes(slist *L) {
  enum kind k = kind_of(L);
  char label[64];
  for (int i = 0; i < NSWEEP; i++) {
    int64_t n = sweep(i);
    snprintf(label, sizeof label, "length %lld", (long long)n);
    shape v = {1, {n}}, rows = {2, {3, n}}, cols = {2, {n, 5}};
    static const int64_t last = -1, first = 0, one = 1;
    switch (k) {
      case K_REDUCE:
        along_shape(L, label, &v, L_CONTIG, NULL, 0, -1);
        along_shape(L, label, &rows, L_CONTIG, &last, 1, -1);
        if (i % 3 == 0) along_shape(L, label, &cols, L_CONTIG, &first, 1, -1);
        break;
      case K_ARGMAX:
        along_shape(L, label, &v, L_CONTIG, NULL, -1, -1);
        along_shape(L, label, &rows, L_CONTIG, &last, 1, -1);
        if (i % 3 == 0) along_shape(L, label, &cols, L_CONTIG, &first, 1, -1);
        break;
      case K_SOFTMAX:
      case K_CUMSUM:
        along_shape(L, label, &rows, L_CONTIG, &last, 1, -1);
        if (i % 3 == 0) along_shape(L, label, &cols, L_CONTIG, &first, 1, -1);
        break;
      case K_LAYER_NORM: along_shape(L, label, &rows, L_CONTIG, &one, 1, i % 4); break;
      case K_MATMUL: {
        /* k through the sweep; m and n through part of it */
        shape a = {2, {3, n}}, b = {2, {n, 5}};
        mm(L, label, &a, &b, L_CONTIG, L_CONTIG);
        if (i % 4 == 1) {
          shape a2 = {2, {n, 4}}, b2 = {2, {4, n % 67 + 1}};
          mm(L, label, &a2, &b2, L_CONTIG, L_CONTIG);
        }
        break;
      }
      default: ew_same(L, label, &v, L_CONTIG, i); break;
    }
  }
  for (size_t j = 0; j < NRANKS; j++) {
    const shape *sh = &ranks[j];
    snprintf(label, sizeof label, "rank %d", (int)sh->n);
    int64_t d0 = 0, dl = -1;
    switch (k) {
      case K_REDUCE:
        along_shape(L, label, sh, L_CONTIG, NULL, 0, -1);
        if (sh->n) along_shape(L, label, sh, L_CONTIG, &d0, 1, 1);
        break;
      case K_ARGMAX:
        along_shape(L, label, sh, L_CONTIG, NULL, -1, -1);
        along_shape(L, label, sh, L_CONTIG, &dl, 1, 0);
        break;
      case K_SOFTMAX:
      case K_CUMSUM: along_shape(L, label, sh, L_CONTIG, &dl, 1, -1); break;
      case K_LAYER_NORM: {
        int64_t nn = sh->n > 1 ? 2 : 1;
        if (sh->n) along_shape(L, label, sh, L_CONTIG, &nn, 1, 1);
        break;
      }
      case K_MATMUL: {
        static const shape mats[][2] = {
            {{1, {7}}, {1, {7}}},       {{1, {7}}, {2, {7, 3}}},  {{2, {4, 7}}, {1, {7}}},
            {{3, {2, 4, 7}}, {2, {7, 3}}}, {{2, {0, 3}}, {2, {3, 4}}}, {{2, {3, 0}}, {2, {0, 4}}},
            {{2, {3, 4}}, {2, {4, 0}}}, {{1, {1}}, {1, {1}}},     {{2, {1, 1}}, {2, {1, 1}}},
        };
        if (j < sizeof mats / sizeof *mats) mm(L, label, &mats[j][0], &mats[j][1], 0, 0);
        break;
      }
      default: ew_same(L, label, sh, L_CONTIG, (int)j); break;
    }
  }
  if (k == K_MATMUL) {
    static const int64_t big_k[][3] = {{2, 2048, 3}, {3, 3001, 2}, {65, 65, 65}, {33, 257, 31},
                                       {4, 1000, 7}, {1, 4097, 1}, {17, 513, 129}};
    for (size_t j = 0; j < sizeof big_k / sizeof *big_k; j++) {
      shape a = {2, {big_k[j][0], big_k[j][1]}}, b = {2, {big_k[j][1], big_k[j][2]}};
      snprintf(label, sizeof label, "m %lld, k %lld, n %lld", (long long)big_k[j][0],
               (long long)big_k[j][1], (long long)big_k[j][2]);
      mm(L, label, &a, &b, L_CONTIG, L_CONTIG);
    }
  }
}

static void set_layouts(slist *L) {
  enum kind k = kind_of(L);
  static const shape s3 = {3, {5, 7, 9}}, s4 = {4, {2, 3, 5, 7}};
  char label[64];
  int nt = k == K_WHERE || k == K_ADD_OUT ? 3
           : k == K_BINARY || k == K_MULADD || k == K_COPY || k == K_MATMUL || k == K_COMPARE ||
                   k == K_LOGICAL || k == K_MASKED_FILL
               ? 2
               : 1;
  for (int arg = 0; arg < nt; arg++)
    for (int lay = 1; lay < L_KINDS; lay++) {
      bool mutated = (k == K_COPY && arg == 0) || (k == K_ADD_OUT && arg == 2);
      if (mutated && cert_lay_is_expanded(lay)) continue; /* the op set refuses it */
      const shape *sh = lay == L_CHANNELS_LAST ? &s4 : &s3;
      snprintf(label, sizeof label, "argument %d %s", arg, cert_lay_name[lay]);
      int la = arg == 0 ? lay : 0, lb = arg == 1 ? lay : 0, lc = arg == 2 ? lay : 0;
      static const int64_t last = -1, one = 1, mid = 1;
      switch (k) {
        case K_REDUCE:
          along(L, label, cert_gen_for_layout(L->dt, sh, lay, kind_of(L), sub_of(L)), lay, &mid, 1,
                0, BP_DTYPE_INVALID);
          along(L, label, cert_gen_for_layout(L->dt, sh, lay, kind_of(L), sub_of(L)), lay, NULL, 0,
                -1, BP_DTYPE_INVALID);
          break;
        case K_ARGMAX:
        case K_SOFTMAX:
          along(L, label, cert_gen_for_layout(L->dt, sh, lay, kind_of(L), sub_of(L)), lay, &last, 1,
                -1, BP_DTYPE_INVALID);
          break;
        case K_LAYER_NORM:
          along(L, label, cert_gen_for_layout(L->dt, sh, lay, kind_of(L), sub_of(L)), lay, &one, 1,
                1, BP_DTYPE_INVALID);
          break;
        case K_MATMUL: {
          shape a = {3, {3, 6, 5}}, b = {3, {3, 5, 7}};
          sample *s = next(L, label);
          cert_add_tensor(s, cert_gen_for_layout(L->dt, &a, la, K_MATMUL, 0), la);
          cert_add_tensor(s, cert_gen_for_layout(L->dt, &b, lb, K_MATMUL, 0), lb);
          break;
        }
        default: {
          size_t before = L->n;
          ew(L, label, sh, sh, sh, la, lb, lc, L->dt, k == K_CAST ? BP_FLOAT64 : L->dt, lay);
          /* An expanded argument holds one value along the expanded dim. */
          sample *s = &L->v[before];
          int t = k == K_ADD_OUT || k == K_BINARY || k == K_MULADD || k == K_COPY ||
                          k == K_WHERE || k == K_COMPARE || k == K_LOGICAL || k == K_MASKED_FILL
                      ? arg
                      : 0;
          if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(s->a[t].t, lay);
          break;
        }
      }
    }
  /* Every argument non-contiguous at once. */
  if (k != K_REDUCE && k != K_ARGMAX && k != K_SOFTMAX && k != K_LAYER_NORM && k != K_MATMUL &&
      k != K_CUMSUM)
    ew(L, "every argument permuted", &s3, &s3, &s3, L_PERMUTED, L_PERMUTED, L_PERMUTED, L->dt,
       k == K_CAST ? BP_FLOAT16 : L->dt, 1);
}

static void set_broadcast(slist *L) {
  enum kind k = kind_of(L);
  static const shape pairs[][2] = {
      {{3, {2, 3, 4}}, {3, {1, 3, 4}}}, {{3, {2, 3, 4}}, {3, {2, 1, 4}}},
      {{3, {2, 3, 4}}, {3, {2, 3, 1}}}, {{3, {2, 3, 4}}, {1, {4}}},
      {{1, {4}}, {3, {2, 3, 4}}},       {{3, {2, 3, 4}}, {0, {0}}},
      {{0, {0}}, {3, {2, 3, 4}}},       {{3, {3, 1, 5}}, {3, {1, 4, 1}}},
      {{2, {5, 1}}, {2, {1, 6}}},       {{1, {1}}, {1, {7}}},
      {{5, {2, 1, 3, 1, 2}}, {3, {4, 1, 2}}}, {{2, {3, 67}}, {1, {67}}},
      {{2, {3, 67}}, {2, {3, 1}}},      {{1, {130}}, {1, {1}}},
      {{2, {0, 3}}, {1, {3}}},          {{4, {2, 1, 1, 3}}, {2, {5, 1}}},
  };
  static const shape mats[][2] = {
      {{4, {2, 1, 4, 5}}, {3, {3, 5, 6}}}, {{1, {5}}, {3, {2, 5, 3}}},
      {{3, {2, 4, 5}}, {1, {5}}},          {{3, {1, 4, 5}}, {3, {3, 5, 2}}},
      {{3, {3, 4, 5}}, {3, {1, 5, 2}}},    {{4, {2, 3, 4, 5}}, {2, {5, 6}}},
      {{2, {4, 5}}, {4, {2, 3, 5, 6}}},
  };
  char label[64];
  if (k == K_MATMUL) {
    for (size_t j = 0; j < sizeof mats / sizeof *mats; j++) {
      snprintf(label, sizeof label, "batch broadcast %zu", j);
      mm(L, label, &mats[j][0], &mats[j][1], L_CONTIG, L_CONTIG);
    }
    return;
  }
  for (size_t j = 0; j < sizeof pairs / sizeof *pairs; j++) {
    const shape *a = &pairs[j][0], *b = &pairs[j][1];
    snprintf(label, sizeof label, "broadcast %zu", j);
    if (k == K_COPY) {
      /* src broadcasts to self: self takes the larger shape */
      int32_t n;
      int64_t sz[BP_MAX_NDIM];
      if (!ref_broadcast(a->n, a->s, b->n, b->s, &n, sz)) continue;
      shape self = {n, {0}};
      memcpy(self.s, sz, (size_t)n * sizeof *sz);
      ew(L, label, &self, b->n <= n ? b : a, NULL, 0, 0, 0, L->dt, L->dt, 0);
    } else if (k == K_WHERE) {
      /* the pattern through each pair of the three arguments */
      ew(L, label, a, b, a, 0, 0, 0, L->dt, L->dt, 0);
      ew(L, label, b, a, a, 0, 0, 0, L->dt, L->dt, 0);
      ew(L, label, a, a, b, 0, 0, 0, L->dt, L->dt, 0);
    } else {
      ew(L, label, a, b, NULL, 0, 0, 0, L->dt, L->dt, (int)j);
    }
  }
}

static void set_dims(slist *L) {
  enum kind k = kind_of(L);
  static const shape s3 = {3, {3, 4, 5}}, s67 = {3, {3, 67, 5}}, s0 = {0, {0}},
                     s5 = {5, {2, 1, 3, 2, 3}};
  static const int64_t dimsets[][3] = {{0},    {1},     {2},       {-1},      {-2},
                                       {-3},   {0, 2},  {-1, 0},   {0, -1},   {1, -3},
                                       {1, 2}, {0, 1, 2}, {2, 0, 1}, {0, -2, 2}, {-3, -2, -1}};
  static const int dimn[] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3};
  char label[64];
  for (int keep = 0; keep < 2; keep++) {
    for (size_t j = 0; j < sizeof dimn / sizeof *dimn; j++) {
      const int64_t *d = dimsets[j];
      snprintf(label, sizeof label, "dims %zu, keepdim %d", j, keep);
      if (k == K_REDUCE) {
        along_shape(L, label, j % 2 ? &s67 : &s3, 0, d, dimn[j], keep);
      } else if (dimn[j] == 1 && k != K_LAYER_NORM) {
        along_shape(L, label, j % 2 ? &s67 : &s3, 0, d, 1, keep);
      }
    }
    if (k == K_REDUCE) {
      static const int64_t d13[] = {1, 3}, d0 = 0, dm = -1;
      along_shape(L, "empty dim list", &s3, 0, NULL, 0, keep);
      along_shape(L, "rank 5, dims 1, 3", &s5, 0, d13, 2, keep);
      along_shape(L, "0-dim, dim 0", &s0, 0, &d0, 1, keep);
      along_shape(L, "0-dim, dim -1", &s0, 0, &dm, 1, keep);
      along_shape(L, "0-dim, no dims", &s0, 0, NULL, 0, keep);
    } else if (k == K_ARGMAX) {
      static const int64_t d0 = 0, dm = -1;
      along_shape(L, "dim None", &s67, 0, NULL, -1, keep);
      along_shape(L, "0-dim, dim 0", &s0, 0, &d0, 1, keep);
      along_shape(L, "0-dim, dim -1", &s0, 0, &dm, 1, keep);
      along_shape(L, "0-dim, dim None", &s0, 0, NULL, -1, keep);
    } else if ((k == K_SOFTMAX || k == K_CUMSUM) && keep == 0) {
      static const int64_t d0 = 0;
      along_shape(L, "0-dim, dim 0", &s0, 0, &d0, 1, -1);
    } else if (k == K_LAYER_NORM) {
      for (int64_t nn = 1; nn <= 3; nn++) {
        snprintf(label, sizeof label, "normalized over %lld dims%s", (long long)nn,
                 keep ? ", weight and bias" : "");
        along_shape(L, label, nn == 2 ? &s67 : &s3, 0, &nn, 1, keep);
      }
    }
  }
  if (k == K_CUMSUM) {
    /* cumsum's dtype argument: widen, keep, and for integers a float */
    int32_t to[] = {BP_FLOAT64, L->dt, dt_is_float(L->dt) ? BP_FLOAT32 : BP_INT32};
    static const int64_t d1 = 1, d0 = 0;
    for (size_t j = 0; j < 3; j++) {
      snprintf(label, sizeof label, "dtype=%s", dt_name(to[j]));
      along(L, label, cert_gen_input(L, 0, L->dt, s67.n, s67.s), 0, &d1, 1, -1, to[j]);
      along(L, label, cert_gen_input(L, 0, L->dt, s3.n, s3.s), 0, &d0, 1, -1, to[j]);
    }
  }
  if (k == K_REDUCE && sub_of(L) == RR_SUM) {
    /* sum's dtype argument: widen, keep, and for integers a float */
    int32_t to[] = {BP_FLOAT64, L->dt, dt_is_float(L->dt) ? BP_FLOAT32 : BP_INT32};
    static const int64_t d1 = 1;
    for (size_t j = 0; j < 3; j++) {
      snprintf(label, sizeof label, "dtype=%s", dt_name(to[j]));
      along(L, label, cert_gen_input(L, 0, L->dt, s67.n, s67.s), 0, &d1, 1, 0, to[j]);
      along(L, label, cert_gen_input(L, 0, L->dt, s3.n, s3.s), 0, NULL, 0, 1, to[j]);
    }
  }
  if (k == K_LAYER_NORM) {
    static const int64_t one = 1;
    along(L, "eps 1e-3", cert_gen_input(L, 0, L->dt, s3.n, s3.s), 0, &one, 1, 1, BP_FLOAT64);
  }
}

static void set_promotion(slist *L) {
  enum kind k = kind_of(L);
  static const shape v = {1, {67}}, m = {2, {3, 67}};
  char label[64];
  if (k == K_MASKED_FILL || k == K_CLAMP) {
    /* a Scalar of each kind, which promotes weakly (clamp's result
     * becomes float32 for an integer self and a float bound) */
    for (int j = 0; j < (k == K_CLAMP ? 6 : 5); j++) {
      sample *s = next(L, "");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, m.n, m.s), L_CONTIG);
      if (k == K_MASKED_FILL) cert_add_tensor(s, cert_rand_rt(BP_BOOL, v.n, v.s, 0, 1), L_CONTIG);
      const char *what = k == K_CLAMP ? clamp_scalars(s, L->dt, j) : fill_scalar(s, L->dt, j);
      snprintf(s->label, sizeof s->label, "%s", what);
      s->exact = true;
      s->zero_ties = k == K_CLAMP;
    }
    return;
  }
  for (int d = 0; d < NUM_DTYPES; d++) {
    int32_t x = all_dtypes[d];
    if (!cert_gen_declared(L, x)) continue;
    if (k == K_CAST) {
      snprintf(label, sizeof label, "to %s", dt_name(x));
      ew(L, label, &m, NULL, NULL, 0, 0, 0, L->dt, x, 0);
      continue;
    }
    if (x == L->dt) continue;
    if (k == K_COPY) {
      snprintf(label, sizeof label, "from %s", dt_name(x));
      ew(L, label, &m, &v, NULL, 0, 0, 0, L->dt, x, 0);
      continue;
    }
    snprintf(label, sizeof label, "with %s", dt_name(x));
    ew(L, label, &m, &v, &m, 0, 0, 0, L->dt, x, d);
    snprintf(label, sizeof label, "%s with", dt_name(x));
    ew(L, label, &v, &m, &v, 0, 0, 0, x, L->dt, d + 1);
  }
}

static void set_large(slist *L) {
  enum kind k = kind_of(L);
  /* Past 1e5 elements, where kernels split the work over threads and
   * blocks; sizes that no block or vector length divides. */
  static const shape v = {1, {100003}}, big = {2, {331, 317}}, row = {1, {317}},
                     flat = {1, {200003}};
  static const int64_t d0 = 0, d1 = 1, one = 1;
  switch (k) {
    case K_REDUCE:
      along_shape(L, "200003 elements", &flat, 0, NULL, 0, -1);
      along_shape(L, "[331, 317], dim 0", &big, 0, &d0, 1, 0);
      along_shape(L, "[331, 317], dim 1", &big, 0, &d1, 1, 1);
      break;
    case K_ARGMAX:
      along_shape(L, "200003 elements", &flat, 0, NULL, -1, -1);
      along_shape(L, "[331, 317], dim 0", &big, 0, &d0, 1, 0);
      break;
    case K_SOFTMAX:
    case K_CUMSUM:
      along_shape(L, "[331, 317], dim 1", &big, 0, &d1, 1, -1);
      along_shape(L, "[331, 317], dim 0", &big, 0, &d0, 1, -1);
      break;
    case K_LAYER_NORM: along_shape(L, "[331, 317]", &big, 0, &one, 1, 1); break;
    case K_MATMUL: {
      static const shape a = {2, {257, 515}}, b = {2, {515, 263}}, ba = {3, {8, 64, 300}},
                         bb = {2, {300, 129}};
      mm(L, "[257, 515] x [515, 263]", &a, &b, 0, 0);
      mm(L, "[8, 64, 300] x [300, 129]", &ba, &bb, 0, L_TRANSPOSED);
      break;
    }
    default:
      ew_same(L, "100003 elements", &v, 0, 0);
      ew_same(L, "[331, 317] transposed", &big, L_TRANSPOSED, 1);
      if (k == K_BINARY || k == K_MULADD || k == K_ADD_OUT || k == K_COPY || k == K_COMPARE ||
          k == K_LOGICAL || k == K_MASKED_FILL)
        ew(L, "[331, 317] with [317]", &big, &row, &big, 0, 0, 0, L->dt, L->dt, 3);
      break;
  }
}

sample *cert_gen_core_set(int r, int32_t dt, int sk, const gen_opts *o, size_t *n) {
  slist L = {NULL, 0, 0, r, dt, o};
  if (cert_gen_index_set(&L, sk) || cert_gen_sort_set(&L, sk) || cert_gen_sdpa_set(&L, sk) ||
      cert_gen_conv_set(&L, sk) || cert_gen_nn_set(&L, sk)) {
    *n = L.n;
    return L.v;
  }
  switch (sk) {
    case SK_BASIC: set_basic(&L); break;
    case SK_SIZES: set_sizes(&L); break;
    case SK_LAYOUTS: set_layouts(&L); break;
    case SK_BROADCAST: set_broadcast(&L); break;
    case SK_DIMS: set_dims(&L); break;
    case SK_PROMOTION: set_promotion(&L); break;
    case SK_VALUES:
      cert_gen_values(&L);
      break;
    case SK_LARGE: set_large(&L); break;
    case SK_BADSHAPE:
      cert_gen_badshape(&L);
      break;
    default: break;
  }
  *n = L.n;
  return L.v;
}
