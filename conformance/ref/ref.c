/* conformance/ref/ref.c - see ref.h. */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

const char *const ref_unop_name[15] = {"neg",  "abs",     "relu", "exp",  "log",
                                       "sqrt", "rsqrt",   "sigmoid", "tanh", "gelu",
                                       "gelu(tanh)", "sin", "cos", "erf", "silu"};
const char *const ref_redop_name[4] = {"sum", "mean", "amax", "amin"};

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    abort();
  }
  return p;
}

rt *rt_new(int32_t dtype, int32_t ndim, const int64_t *sizes) {
  rt *r = xcalloc(1, sizeof *r);
  r->dtype = dtype;
  r->ndim = ndim;
  r->numel = 1;
  for (int32_t d = 0; d < ndim; d++) {
    r->sizes[d] = sizes[d];
    r->numel *= sizes[d];
  }
  r->f = xcalloc((size_t)r->numel, sizeof *r->f);
  r->i = xcalloc((size_t)r->numel, sizeof *r->i);
  return r;
}

void rt_free(rt *r) {
  if (!r) return;
  free(r->f);
  free(r->i);
  free(r);
}

bool ref_broadcast(int32_t na, const int64_t *sa, int32_t nb, const int64_t *sb, int32_t *nout,
                   int64_t *sout) {
  int32_t n = na > nb ? na : nb;
  for (int32_t d = 0; d < n; d++) {
    int32_t da = d - (n - na), db = d - (n - nb);
    int64_t x = da >= 0 ? sa[da] : 1, y = db >= 0 ? sb[db] : 1;
    if (x != y && x != 1 && y != 1) return false;
    sout[d] = x == 1 ? y : x;
  }
  *nout = n;
  return true;
}

/* Advances a row-major multi-index; false after the last one. */
bool ref_next_index(int32_t n, const int64_t *sizes, int64_t *idx) {
  for (int32_t d = n - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* The flat index in `a` of the element that broadcasts to output index
 * idx (of an n-dimensional output). */
int64_t ref_bidx(const rt *a, int32_t n, const int64_t *idx) {
  int64_t flat = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    int64_t i = a->sizes[d] == 1 ? 0 : idx[d + (n - a->ndim)];
    flat = flat * a->sizes[d] + i;
  }
  return flat;
}

rt *ref_expand(const rt *a, int32_t n, const int64_t *sizes) {
  rt *o = rt_new(a->dtype, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    int64_t j = ref_bidx(a, n, idx);
    o->f[k] = a->f[j];
    o->i[k] = a->i[j];
  }
  return o;
}

/* An integer as float dtype dt, as torch converts it: to float64 in one
 * rounding, to the others through float32 (one rounding to float32, then
 * float16 and bfloat16 round that again).  Not through double first: an
 * int64 beyond 2^53 would round twice (2^62 + 2^38 + 1 is 2^62 + 2^39 in
 * float32, but 2^62 through double). */
double int_to_float(int32_t dt, int64_t v) {
  if (dt == BP_FLOAT64) return (double)v;
  return round_to(dt, (double)(float)v);
}

rt *ref_cast(const rt *a, int32_t dt) {
  rt *o = rt_new(dt, a->ndim, a->sizes);
  bool ff = dt_is_float(a->dtype), tf = dt_is_float(dt);
  for (int64_t k = 0; k < a->numel; k++) {
    if (ff && tf)
      o->f[k] = round_to(dt, a->f[k]);
    else if (ff)
      o->i[k] = float_to_int(dt, a->f[k]);
    else if (tf)
      o->f[k] = int_to_float(dt, a->i[k]);
    else
      o->i[k] = wrap_int(dt, a->i[k]);
  }
  return o;
}

/* The type a float computation runs in: float16 and bfloat16 compute in
 * float32.  Scalars (alpha, c) are converted to it first. */
static double scalar_in(int32_t dt, double v) {
  return dt == BP_FLOAT64 ? v : round_to(BP_FLOAT32, v);
}

static double fmaximum(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  return x > y ? x : y;
}

static double fminimum(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  return x < y ? x : y;
}

/* Integer power as repeated multiplication that wraps: computing modulo
 * 2^64 and wrapping once gives the same bits as wrapping at every step. */
static int64_t ipow(int32_t dt, int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, b = (uint64_t)base;
  uint64_t ue = (uint64_t)e;
  while (ue) {
    if (ue & 1) r *= b;
    b *= b;
    ue >>= 1;
  }
  return wrap_int(dt, (int64_t)r);
}

rt *ref_binary(int op, const rt *a, const rt *b, double alpha) {
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &n, sizes)) return NULL;
  int32_t dt = dt_promote(a->dtype, b->dtype);
  if (op == RB_DIV && !dt_is_float(dt)) dt = BP_FLOAT32; /* no integer division */
  rt *ca = ref_cast(a, dt), *cb = ref_cast(b, dt);
  rt *o = rt_new(dt, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  double fa = scalar_in(dt, alpha);
  /* alpha is converted to an integer result dtype as `cast` converts a
   * float: -1 becomes 0 for uint8. */
  int64_t ia = dt_is_float(dt) ? 0 : float_to_int(dt, alpha);
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    int64_t ka = ref_bidx(ca, n, idx), kb = ref_bidx(cb, n, idx);
    if (dt_is_float(dt)) {
      double x = ca->f[ka], y = cb->f[kb], r = 0;
      switch (op) {
        case RB_ADD: r = x + fa * y; break;
        case RB_SUB: r = x - fa * y; break;
        case RB_MUL: r = x * y; break;
        case RB_DIV: r = x / y; break;
        case RB_MAXIMUM: r = fmaximum(x, y); break;
        case RB_MINIMUM: r = fminimum(x, y); break;
        default: r = pow(x, y); break;
      }
      o->f[k] = round_to(dt, r);
    } else if (dt == BP_BOOL) {
      bool x = ca->i[ka] != 0, y = cb->i[kb] != 0;
      /* add and maximum are logical or; mul and minimum logical and. */
      o->i[k] = (op == RB_ADD || op == RB_MAXIMUM) ? (x || y) : (x && y);
    } else {
      int64_t x = ca->i[ka], y = cb->i[kb];
      uint64_t ux = (uint64_t)x, uy = (uint64_t)y, r;
      switch (op) {
        case RB_ADD: r = ux + (uint64_t)ia * uy; break;
        case RB_SUB: r = ux - (uint64_t)ia * uy; break;
        case RB_MUL: r = ux * uy; break;
        case RB_MAXIMUM: r = (uint64_t)(x > y ? x : y); break;
        case RB_MINIMUM: r = (uint64_t)(x < y ? x : y); break;
        default: r = (uint64_t)ipow(dt, x, y); break;
      }
      o->i[k] = wrap_int(dt, (int64_t)r);
    }
  }
  rt_free(ca);
  rt_free(cb);
  return o;
}

rt *ref_muladd(const rt *a, const rt *b, double c) {
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  if (!ref_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &n, sizes)) return NULL;
  int32_t dt = dt_promote(a->dtype, b->dtype);
  rt *ca = ref_cast(a, dt), *cb = ref_cast(b, dt);
  rt *o = rt_new(dt, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  double cc = scalar_in(dt, c);
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx))
    o->f[k] = round_to(dt, ca->f[ref_bidx(ca, n, idx)] * cb->f[ref_bidx(cb, n, idx)] + cc);
  rt_free(ca);
  rt_free(cb);
  return o;
}

rt *ref_unary(int op, const rt *a) {
  bool same = op == RU_NEG || op == RU_ABS || op == RU_RELU;
  int32_t dt = same || dt_is_float(a->dtype) ? a->dtype : BP_FLOAT32;
  rt *x = ref_cast(a, dt);
  rt *o = rt_new(dt, a->ndim, a->sizes);
  for (int64_t k = 0; k < o->numel; k++) {
    if (!dt_is_float(dt)) {
      int64_t v = x->i[k];
      uint64_t neg = 0 - (uint64_t)v;
      switch (op) {
        case RU_NEG: o->i[k] = wrap_int(dt, (int64_t)neg); break;
        case RU_ABS: o->i[k] = v < 0 ? wrap_int(dt, (int64_t)neg) : v; break;
        default: o->i[k] = v > 0 ? v : 0; break;
      }
      continue;
    }
    double v = x->f[k], r;
    switch (op) {
      case RU_NEG: r = -v; break;
      case RU_ABS: r = fabs(v); break;
      case RU_RELU: r = isnan(v) ? v : v > 0 ? v : 0; break;
      case RU_EXP: r = exp(v); break;
      case RU_LOG: r = log(v); break;
      case RU_SQRT: r = sqrt(v); break;
      case RU_RSQRT: r = 1 / sqrt(v); break;
      case RU_SIGMOID: r = 1 / (1 + exp(-v)); break;
      case RU_TANH: r = tanh(v); break;
      case RU_GELU: r = v / 2 * (1 + erf(v / sqrt(2.0))); break;
      case RU_SIN: r = sin(v); break;
      case RU_COS: r = cos(v); break;
      case RU_ERF: r = erf(v); break;
      /* (below -80, 1 / (1 + e^-v) is e^v to a relative 1e-34, and e^-v
       * would overflow below -709) */
      case RU_SILU: r = v < -80 ? v * exp(v) : v / (1 + exp(-v)); break;
      case RU_GELU_TANH:
      default: {
        const double c = sqrt(2.0 / 3.14159265358979323846);
        r = v / 2 * (1 + tanh(c * (v + 0.044715 * v * v * v)));
        break;
      }
    }
    o->f[k] = round_to(dt, r);
  }
  rt_free(x);
  return o;
}

rt *ref_where(const rt *cond, const rt *a, const rt *b) {
  int32_t n1, n;
  int64_t s1[BP_MAX_NDIM], sizes[BP_MAX_NDIM];
  if (!ref_broadcast(cond->ndim, cond->sizes, a->ndim, a->sizes, &n1, s1)) return NULL;
  if (!ref_broadcast(n1, s1, b->ndim, b->sizes, &n, sizes)) return NULL;
  int32_t dt = dt_promote(a->dtype, b->dtype);
  rt *ca = ref_cast(a, dt), *cb = ref_cast(b, dt);
  rt *o = rt_new(dt, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, ref_next_index(n, sizes, idx)) {
    bool c = cond->i[ref_bidx(cond, n, idx)] != 0;
    const rt *src = c ? ca : cb;
    int64_t ks = ref_bidx(src, n, idx);
    o->f[k] = src->f[ks];
    o->i[k] = src->i[ks];
  }
  rt_free(ca);
  rt_free(cb);
  return o;
}

/* Which dims a reduction combines; dims are valid and distinct. */
static void reduce_dims(const rt *a, const int64_t *dims, size_t ndims, bool *red) {
  for (int32_t d = 0; d < a->ndim; d++) red[d] = ndims == 0;
  for (size_t j = 0; j < ndims && a->ndim > 0; j++)
    red[dims[j] < 0 ? dims[j] + a->ndim : dims[j]] = true;
}

/* The output shape of a reduction and, for each input element, the flat
 * index of its output element. */
static rt *reduce_out(const rt *a, const bool *red, bool keepdim, int32_t dt, int64_t *map,
                      int64_t *count) {
  int64_t sizes[BP_MAX_NDIM], osz[BP_MAX_NDIM];
  int32_t n = 0, nk = 0;
  *count = 1;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (!red[d]) {
      sizes[n++] = a->sizes[d];
      osz[nk++] = a->sizes[d];
    } else {
      *count *= a->sizes[d];
      if (keepdim) sizes[n++] = 1;
      osz[nk++] = 1;
    }
  }
  rt *o = rt_new(dt, n, sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < a->numel; k++, ref_next_index(a->ndim, a->sizes, idx)) {
    int64_t flat = 0;
    for (int32_t d = 0; d < a->ndim; d++) flat = flat * osz[d] + (red[d] ? 0 : idx[d]);
    map[k] = flat;
  }
  return o;
}

rt *ref_reduce(int op, const rt *a, const int64_t *dims, size_t ndims, bool keepdim,
               int32_t sum_dtype, int64_t *n_out) {
  bool red[BP_MAX_NDIM];
  reduce_dims(a, dims, ndims, red);
  int32_t dt = a->dtype;
  if (op == RR_SUM) {
    if (sum_dtype != BP_DTYPE_INVALID)
      dt = sum_dtype;
    else if (!dt_is_float(dt))
      dt = BP_INT64;
  }
  /* sum converts its input to the result dtype first, as PyTorch does. */
  rt *x = op == RR_SUM ? ref_cast(a, dt) : ref_cast(a, a->dtype);
  int64_t *map = xcalloc((size_t)a->numel, sizeof *map);
  int64_t count;
  rt *o = reduce_out(a, red, keepdim, dt, map, &count);
  *n_out = count;
  bool fl = dt_is_float(dt);
  double *acc = xcalloc((size_t)o->numel, sizeof *acc);
  uint64_t *iacc = xcalloc((size_t)o->numel, sizeof *iacc);
  bool *seen = xcalloc((size_t)o->numel, sizeof *seen);
  for (int64_t k = 0; k < a->numel; k++) {
    int64_t j = map[k];
    if (op == RR_SUM || op == RR_MEAN) {
      if (fl)
        acc[j] += x->f[k];
      else
        iacc[j] += (uint64_t)x->i[k];
      continue;
    }
    bool mx = op == RR_AMAX;
    if (fl) {
      double v = x->f[k];
      if (!seen[j] || isnan(v))
        acc[j] = v;
      else if (!isnan(acc[j]) && (mx ? v > acc[j] : v < acc[j]))
        acc[j] = v;
    } else {
      int64_t v = x->i[k], cur = (int64_t)iacc[j];
      if (!seen[j] || (mx ? v > cur : v < cur)) iacc[j] = (uint64_t)v;
    }
    seen[j] = true;
  }
  for (int64_t j = 0; j < o->numel; j++) {
    if (fl)
      o->f[j] = round_to(dt, op == RR_MEAN ? acc[j] / (double)count : acc[j]);
    else
      o->i[j] = wrap_int(dt, (int64_t)iacc[j]);
  }
  free(acc);
  free(iacc);
  free(seen);
  free(map);
  rt_free(x);
  return o;
}

/* Whether v beats the current best for argmax: NaN is the maximum, and the
 * first of equal values wins. */
static bool argmax_beats(const rt *a, int64_t k, int64_t best) {
  if (dt_is_float(a->dtype)) {
    double v = a->f[k], b = a->f[best];
    if (isnan(b)) return false;
    return isnan(v) || v > b;
  }
  return a->i[k] > a->i[best];
}

rt *ref_argmax(const rt *a, bool has_dim, int64_t dim, bool keepdim) {
  int64_t sizes[BP_MAX_NDIM];
  int32_t n = 0;
  if (!has_dim || a->ndim == 0) {
    if (keepdim)
      for (int32_t d = 0; d < a->ndim; d++) sizes[n++] = 1;
    rt *o = rt_new(BP_INT64, n, sizes);
    int64_t best = 0;
    for (int64_t k = 1; k < a->numel; k++)
      if (argmax_beats(a, k, best)) best = k;
    o->i[0] = best;
    return o;
  }
  int32_t d0 = (int32_t)(dim < 0 ? dim + a->ndim : dim);
  for (int32_t d = 0; d < a->ndim; d++)
    if (d != d0)
      sizes[n++] = a->sizes[d];
    else if (keepdim)
      sizes[n++] = 1;
  rt *o = rt_new(BP_INT64, n, sizes);
  int64_t outer = 1, len = a->sizes[d0], inner = 1;
  for (int32_t d = 0; d < d0; d++) outer *= a->sizes[d];
  for (int32_t d = d0 + 1; d < a->ndim; d++) inner *= a->sizes[d];
  for (int64_t p = 0; p < outer; p++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = p * len * inner + q, best = 0;
      for (int64_t j = 1; j < len; j++)
        if (argmax_beats(a, base + j * inner, base + best * inner)) best = j;
      o->i[p * inner + q] = best;
    }
  return o;
}

rt *ref_matmul(const rt *a, const rt *b, int64_t *k_out) {
  int32_t na = a->ndim, nb = b->ndim;
  int64_t k = a->sizes[na - 1];
  int64_t m = na >= 2 ? a->sizes[na - 2] : 1;
  int64_t n = nb >= 2 ? b->sizes[nb - 1] : 1;
  int32_t ba = na >= 2 ? na - 2 : 0, bb = nb >= 2 ? nb - 2 : 0;
  int32_t nbatch;
  int64_t bsizes[BP_MAX_NDIM];
  if (!ref_broadcast(ba, a->sizes, bb, b->sizes, &nbatch, bsizes)) return NULL;
  int64_t sizes[BP_MAX_NDIM];
  int32_t nout = nbatch;
  memcpy(sizes, bsizes, (size_t)nbatch * sizeof *sizes);
  if (na >= 2) sizes[nout++] = m;
  if (nb >= 2) sizes[nout++] = n;
  rt *o = rt_new(a->dtype, nout, sizes);
  *k_out = k;
  /* The batch parts of a and b as shapes of their own, for bidx. */
  rt abat = {.ndim = ba}, bbat = {.ndim = bb};
  memcpy(abat.sizes, a->sizes, (size_t)ba * sizeof *a->sizes);
  memcpy(bbat.sizes, b->sizes, (size_t)bb * sizeof *b->sizes);
  int64_t nbat = 1;
  for (int32_t d = 0; d < nbatch; d++) nbat *= bsizes[d];
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t t = 0; t < nbat; t++, ref_next_index(nbatch, bsizes, idx)) {
    int64_t oa = ref_bidx(&abat, nbatch, idx) * m * k, ob = ref_bidx(&bbat, nbatch, idx) * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t q = 0; q < k; q++) s += a->f[oa + i * k + q] * b->f[ob + q * n + j];
        o->f[(t * m + i) * n + j] = round_to(a->dtype, s);
      }
  }
  return o;
}

rt *ref_softmax(const rt *a, int64_t dim, bool log_) {
  rt *o = rt_new(a->dtype, a->ndim, a->sizes);
  int32_t d0 = a->ndim == 0 ? 0 : (int32_t)(dim < 0 ? dim + a->ndim : dim);
  int64_t outer = 1, len = a->ndim ? a->sizes[d0] : 1, inner = 1;
  for (int32_t d = 0; d < d0; d++) outer *= a->sizes[d];
  for (int32_t d = d0 + 1; d < a->ndim; d++) inner *= a->sizes[d];
  for (int64_t p = 0; p < outer; p++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = p * len * inner + q;
      /* The stable form: subtract the maximum (NaN if any is NaN). */
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < len; j++) m = j ? fmaximum(m, a->f[base + j * inner]) : a->f[base];
      for (int64_t j = 0; j < len; j++) s += exp(a->f[base + j * inner] - m);
      for (int64_t j = 0; j < len; j++) {
        double x = a->f[base + j * inner] - m;
        o->f[base + j * inner] = round_to(a->dtype, log_ ? x - log(s) : exp(x) / s);
      }
    }
  return o;
}

rt *ref_layer_norm(const rt *x, int32_t nnorm, const rt *w, const rt *b, double eps) {
  rt *o = rt_new(x->dtype, x->ndim, x->sizes);
  int64_t len = 1;
  for (int32_t d = x->ndim - nnorm; d < x->ndim; d++) len *= x->sizes[d];
  if (len == 0) return o;
  for (int64_t r = 0; r < x->numel / len; r++) {
    const double *v = x->f + r * len;
    /* The mean as the first value plus the mean deviation from it: exact
     * for a row of one value, whose variance is then exactly 0 (a plain
     * sum divided by len can miss the value by an ulp). */
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; j++) mean += v[j] - v[0];
    mean = v[0] + mean / (double)len;
    for (int64_t j = 0; j < len; j++) var += (v[j] - mean) * (v[j] - mean);
    var /= (double)len;
    double inv = 1 / sqrt(var + eps);
    for (int64_t j = 0; j < len; j++) {
      double y = (v[j] - mean) * inv;
      if (w) y *= w->f[j];
      if (b) y += b->f[j];
      o->f[r * len + j] = round_to(x->dtype, y);
    }
  }
  return o;
}
