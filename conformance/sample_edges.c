/*
 * conformance/sample_edges.c - the values a list of special values misses,
 * added to the `values` class after sample_values.c's:
 *
 *   - NaN payloads: quiet and signalling NaNs, with the lowest and the
 *     highest payload bit, of both signs, and the all-ones pattern that
 *     poisoned memory holds.  Each is a NaN to every op: a kernel that
 *     tests NaN by comparing bits with the canonical NaN, orders floats
 *     through their bits (a radix sort, an integer max), or rounds to a
 *     narrower dtype by adding to the bits (which carries a payload into
 *     the exponent, or an all-ones NaN into the sign) gets them wrong.
 *   - integers beyond the float mantissa (2^53 for int64, 2^24 for int32):
 *     a kernel that computes through double (or float) rounds them, and
 *     an int64 converted to float32 through double rounds twice.
 *   - each float dtype's rounding edges: the sum that rounds to infinity
 *     (the largest finite value plus half its ulp) and the one just below
 *     it, the products that round to 0 and to the smallest normal, and for
 *     casts the same edges of each narrower dtype: a kernel that rounds
 *     toward zero, flushes subnormals or breaks ties away from even gives
 *     another result.
 *
 * NaN patterns reach the device bit for bit (nan_with_bits, store_f).
 */
#include <math.h>
#include <stdio.h>

#include "num.h"
#include "sample_int.h"

/* A float dtype's format: mantissa bits, total bits, exponent range. */
typedef struct fmt {
  int m, w, emin, emax;
} fmt;

static fmt fmt_of(int32_t dt) {
  switch (dt) {
    case BP_FLOAT64: return (fmt){52, 64, -1022, 1023};
    case BP_FLOAT16: return (fmt){10, 16, -14, 15};
    case BP_BFLOAT16: return (fmt){7, 16, -126, 127};
    default: return (fmt){23, 32, -126, 127};
  }
}

double cert_gen_nan_payload(int32_t dt, int i) {
  fmt f = fmt_of(dt);
  uint64_t expo = (((uint64_t)1 << (f.w - 1 - f.m)) - 1) << f.m;
  uint64_t q = (uint64_t)1 << (f.m - 1), sign = (uint64_t)1 << (f.w - 1);
  uint64_t ones = expo | (((uint64_t)1 << f.m) - 1);
  const uint64_t b[NPAYLOAD] = {
      expo | q,            /* the quiet NaN */
      sign | expo | q,     /* its negative */
      expo | q | 1,        /* quiet, lowest payload bit */
      expo | 1,            /* signalling, lowest payload bit */
      sign | expo | (q - 1), /* signalling, every payload bit, negative */
      sign | ones,         /* all ones: poisoned memory */
      ones,                /* all ones but the sign */
  };
  return nan_with_bits(dt, b[i % NPAYLOAD]);
}

/* ---- NaN payloads -------------------------------------------------------- */

/* The usual values of argument 0 of shape [nd] sz, one element in three a
 * NaN pattern (each in turn). */
static rt *with_payloads(slist *L, int32_t dt, int32_t nd, const int64_t *sz) {
  rt *x = cert_gen_input(L, 0, dt, nd, sz);
  int p = 0;
  for (int64_t k = 0; k < x->numel; k++)
    if (cert_rng_next() % 3 == 0) x->f[k] = cert_gen_nan_payload(dt, p++);
  return x;
}

static const char payload_label[] = "NaN payloads (quiet, signalling, both signs, all ones)";

static void payload_samples(slist *L) {
  enum kind k = kind_of(L);
  int32_t dt = L->dt;
  int64_t m[2] = {4, 67}, v67[1] = {67};
  char label[96];
  switch (k) {
    case K_UNARY:
    case K_BOOL_UNARY:
    case K_REDUCE:
    case K_ARGMAX:
    case K_SOFTMAX:
    case K_LAYER_NORM:
    case K_CUMSUM:
      cert_gen_on(L, payload_label, with_payloads(L, dt, 2, m), -1);
      break;
    case K_CONTIGUOUS: {
      sample *s = cert_gen_next(L, payload_label);
      cert_add_tensor(s, with_payloads(L, dt, 2, m), L_TRANSPOSED);
      s->exact = true;
      break;
    }
    case K_BINARY:
    case K_ADD_OUT:
    case K_MULADD:
    case K_WHERE:
    case K_COMPARE:
    case K_LOGICAL: {
      /* each pattern against each pattern and the usual special values
       * (not for pow: IEEE 754 makes pow(qNaN, 0) 1 but pow(sNaN, 0) a
       * NaN, and a float16 kernel that computes in float32 quiets the
       * NaN first, as torch's does) */
      if (k == K_BINARY && sub_of(L) == RB_POW) break;
      static const double others[] = {1, -1, 0, -0.0, INFINITY, -INFINITY, 2.5};
      enum { NO = sizeof others / sizeof *others };
      double fv[NPAYLOAD + NO];
      for (int i = 0; i < NPAYLOAD; i++) fv[i] = cert_gen_nan_payload(dt, i);
      for (int i = 0; i < NO; i++) fv[NPAYLOAD + i] = others[i];
      cert_gen_pair_table(L, payload_label, 0, fv, NULL, NPAYLOAD + NO);
      break;
    }
    case K_CAST:
      for (int d = 0; d < NUM_DTYPES; d++) {
        snprintf(label, sizeof label, "NaN payloads to %s", dt_name(all_dtypes[d]));
        sample *s = cert_gen_next(L, label);
        cert_add_tensor(s, with_payloads(L, dt, 1, v67), L_CONTIG);
        cert_add_dtype(s, all_dtypes[d]);
        s->exact = true;
      }
      break;
    case K_COPY:
      for (int d = 0; d < NUM_DTYPES; d++) {
        int32_t from = all_dtypes[d];
        if (!dt_is_float(from) || !cert_gen_declared(L, from)) continue;
        snprintf(label, sizeof label, "NaN payloads from %s", dt_name(from));
        sample *s = cert_gen_next(L, label);
        cert_add_tensor(s, cert_gen_input(L, 0, dt, 1, v67), L_CONTIG);
        cert_add_tensor(s, with_payloads(L, from, 1, v67), L_CONTIG);
        s->exact = true;
      }
      break;
    case K_CLAMP:
    case K_MASKED_FILL: {
      sample *s = cert_gen_next(L, payload_label);
      cert_add_tensor(s, with_payloads(L, dt, 1, v67), L_CONTIG);
      if (k == K_MASKED_FILL) {
        cert_add_tensor(s, cert_rand_rt(BP_BOOL, 1, v67, 0, 1), L_CONTIG);
        cert_add_float(s, 0.5);
      } else {
        cert_add_float(s, -1);
        cert_add_float(s, 1);
      }
      s->exact = s->zero_ties = true;
      break;
    }
    default: break; /* sort, topk and max-pool: their own files' */
  }
}

/* ---- Integers beyond the float mantissa ----------------------------------- */

#define NWIDE 10

/* int64 values a double does not hold (past 2^53) and int32 values a float
 * does not (past 2^24), with the extremes: p is 53 or 24. */
static void wide_values(int32_t dt, int64_t *v) {
  int p = dt == BP_INT64 ? 53 : 24;
  int64_t b = (int64_t)1 << p;
  int64_t top = dt == BP_INT64 ? INT64_MAX : INT32_MAX;
  /* 2^(w-2) + 2^(w-2-p-... ): just above a tie when rounded to float32
   * and an exact tie after rounding through double first */
  int64_t odd = dt == BP_INT64 ? ((int64_t)1 << 62) + ((int64_t)1 << 38) + 1
                               : ((int64_t)1 << 30) + ((int64_t)1 << 6) + 1;
  const int64_t w[NWIDE] = {b, b + 1, -(b + 1), b + 3, odd, -odd, top - 512, -top, top, 3};
  for (int i = 0; i < NWIDE; i++) v[i] = w[i];
}

static void wide_samples(slist *L) {
  enum kind k = kind_of(L);
  int32_t dt = L->dt;
  int sub = sub_of(L);
  int64_t v[NWIDE], m[2] = {3, NWIDE}, n1[1] = {NWIDE};
  wide_values(dt, v);
  static const char label[] = "integers beyond the float mantissa";
  /* [3, NWIDE]: the values, reversed, and rotated */
  rt *x = rt_new(dt, 2, m);
  for (int i = 0; i < NWIDE; i++) {
    x->i[i] = v[i];
    x->i[NWIDE + i] = v[NWIDE - 1 - i];
    x->i[2 * NWIDE + i] = v[(i + 3) % NWIDE];
  }
  char lb[96];
  switch (k) {
    case K_BINARY:
      if (sub == RB_POW) break;
      cert_gen_pair_table(L, label, 0, NULL, v, NWIDE);
      break;
    case K_ADD_OUT:
    case K_WHERE:
    case K_COMPARE:
      cert_gen_pair_table(L, label, 0, NULL, v, NWIDE);
      break;
    case K_UNARY:
    case K_REDUCE:
    case K_ARGMAX:
    case K_CUMSUM:
      cert_gen_on(L, label, x, -1);
      x = NULL;
      break;
    case K_CAST:
      for (int d = 0; d < NUM_DTYPES; d++) {
        snprintf(lb, sizeof lb, "%s, to %s", label, dt_name(all_dtypes[d]));
        sample *s = cert_gen_next(L, lb);
        rt *y = rt_new(dt, 1, n1);
        for (int i = 0; i < NWIDE; i++) y->i[i] = v[i];
        cert_add_tensor(s, y, L_CONTIG);
        cert_add_dtype(s, all_dtypes[d]);
        s->exact = true;
      }
      break;
    case K_CLAMP:
    case K_MASKED_FILL:
      /* the Scalars too: a kernel that reads an int Scalar as a double
       * rounds it */
      for (int j = 0; j < 2; j++) {
        sample *s = cert_gen_next(L, j ? "integers beyond the float mantissa, Scalar -(2^p + 1)"
                                       : "integers beyond the float mantissa, Scalar 2^p + 1");
        rt *y = rt_new(dt, 1, n1);
        for (int i = 0; i < NWIDE; i++) y->i[i] = v[i];
        cert_add_tensor(s, y, L_CONTIG);
        if (k == K_MASKED_FILL) {
          cert_add_tensor(s, cert_rand_rt(BP_BOOL, 1, n1, 0, 1), L_CONTIG);
          cert_add_int(s, j ? v[2] : v[1]);
        } else if (j) {
          cert_add_none(s);
          cert_add_int(s, v[2]);
        } else {
          cert_add_int(s, v[1]);
          cert_add_none(s);
        }
        s->exact = true;
      }
      break;
    default: break;
  }
  if (x) rt_free(x);
}

/* ---- Rounding edges of the float dtypes ----------------------------------- */

#define NEDGE 14

/* Values of dt at its edges: the largest finite, half its ulp (their sum
 * is a tie that rounds to infinity) and the value just below that half,
 * the smallest normal and subnormal, the largest subnormal, 1 + ulp, and
 * 0.5, 1.5 and 3 (a subnormal times 0.5 or 1.5 is a tie). */
static void edge_values(int32_t dt, double *e) {
  fmt f = fmt_of(dt);
  double mx = ldexp(2 - ldexp(1, -f.m), f.emax), hu = ldexp(1, f.emax - f.m - 1);
  double mn = ldexp(1, f.emin), dn = ldexp(1, f.emin - f.m);
  const double v[NEDGE] = {mx,  -mx, hu,      -hu, hu - ldexp(hu, -f.m - 1),
                           mn,  -mn, dn,      -dn, mn - dn,
                           1 + ldexp(1, -f.m), 0.5, 1.5, 3};
  for (int i = 0; i < NEDGE; i++) e[i] = v[i];
}

/* The values of src around the edges of a narrower dtype `to`: its
 * overflow tie and the value below it, the tie to 0 and the value above
 * it, a tie between subnormals, the tie between the largest subnormal and
 * the smallest normal and the value below it, and ties at 1; each of both
 * signs, as src holds them. */
static rt *cast_edges(int32_t src, int32_t to) {
  fmt f = fmt_of(to);
  double mx = ldexp(2 - ldexp(1, -f.m), f.emax), hu = ldexp(1, f.emax - f.m - 1);
  double mn = ldexp(1, f.emin), dn = ldexp(1, f.emin - f.m), u = ldexp(1, -f.m);
  double top = mx + hu, low = mn - dn / 2;
  const double v[] = {top,        top - dt_ulp(src, top), dn / 2, dn / 2 + dt_ulp(src, dn / 2),
                      1.5 * dn,   low,                    low - dt_ulp(src, low),
                      1 + u / 2,  1 + 1.5 * u};
  enum { NV = sizeof v / sizeof *v };
  int64_t n[1] = {2 * NV};
  rt *x = rt_new(src, 1, n);
  for (int i = 0; i < NV; i++) {
    x->f[2 * i] = round_to(src, v[i]);
    x->f[2 * i + 1] = -x->f[2 * i];
  }
  return x;
}

static void edge_samples(slist *L) {
  enum kind k = kind_of(L);
  int32_t dt = L->dt;
  int sub = sub_of(L);
  if (k == K_ADD_OUT || (k == K_BINARY && sub != RB_POW && sub != RB_MAXIMUM &&
                         sub != RB_MINIMUM)) {
    double e[NEDGE];
    edge_values(dt, e);
    cert_gen_pair_table(L, "rounding edges (to infinity, to 0, subnormal ties)", 0, e, NULL, NEDGE);
  } else if (k == K_CAST) {
    for (int d = 0; d < NUM_DTYPES; d++) {
      int32_t to = all_dtypes[d];
      if (!dt_is_float(to) || to == dt) continue;
      char label[96];
      snprintf(label, sizeof label, "rounding edges of %s", dt_name(to));
      sample *s = cert_gen_next(L, label);
      cert_add_tensor(s, cast_edges(dt, to), L_CONTIG);
      cert_add_dtype(s, to);
      s->exact = true;
    }
  }
}

void cert_gen_value_edges(slist *L) {
  if (dt_is_float(L->dt)) {
    payload_samples(L);
    edge_samples(L);
  } else if (L->dt == BP_INT64 || L->dt == BP_INT32) {
    wide_samples(L);
  }
}
