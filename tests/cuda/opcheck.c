/*
 * tests/cuda/opcheck.c - test-cuda-ops' harness (opcheck.h): random twins
 * on the CPU and on cuda:0, and an op called on both and compared.
 */
#define _POSIX_C_SOURCE 200809L
#include "opcheck.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
/* ------------------------------------------------------------------------ */
/* Random numbers                                                           */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state;

uint64_t rnd(void) {
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

double uni(double lo, double hi) { return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0; }
int64_t irange(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ------------------------------------------------------------------------ */
/* Dtypes                                                                   */
/* ------------------------------------------------------------------------ */

const int32_t all_dtypes[] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16, BP_INT8,
                                     BP_INT16,   BP_INT32,   BP_INT64,   BP_UINT8,    BP_BOOL};

bool is_float(int32_t dt) {
  return dt == BP_FLOAT32 || dt == BP_FLOAT64 || dt == BP_FLOAT16 || dt == BP_BFLOAT16;
}

static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13);
  } else if (exp) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man) {
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while (!(man & 0x400u));
    u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  } else {
    u = sign;
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static float bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Element i of contiguous data as a double (floats) or exactly as int64. */
double get_f(int32_t dt, const void *p, int64_t i) {
  switch (dt) {
    case BP_FLOAT32: return ((const float *)p)[i];
    case BP_FLOAT64: return ((const double *)p)[i];
    case BP_FLOAT16: return h2f(((const uint16_t *)p)[i]);
    case BP_BFLOAT16: return bf2f(((const uint16_t *)p)[i]);
    default: return 0;
  }
}

static int64_t get_i(int32_t dt, const void *p, int64_t i) {
  switch (dt) {
    case BP_INT8: return ((const int8_t *)p)[i];
    case BP_INT16: return ((const int16_t *)p)[i];
    case BP_INT32: return ((const int32_t *)p)[i];
    case BP_INT64: return ((const int64_t *)p)[i];
    case BP_UINT8: return ((const uint8_t *)p)[i];
    case BP_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
  }
}


uint16_t f2h_bits(float f) {
  /* Through double rounding is fine for test inputs: any 16-bit value
   * is as good as another. */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (a < 0x38800000u) return (uint16_t)sign; /* tiny: zero */
  return (uint16_t)(sign | ((a - 0x38000000u + 0xfffu) >> 13));
}

static double rand_fval(int prof) {
  double r = uni(0, 1);
  switch (prof) {
    case P_GENERAL:
      if (r < 0.01) return NAN;
      if (r < 0.02) return INFINITY;
      if (r < 0.03) return -INFINITY;
      if (r < 0.04) return -0.0;
      return uni(-4, 4);
    case P_FINITE: return uni(-4, 4);
    case P_POS:
      if (r < 0.02) return 0.0;
      if (r < 0.04) return -1.0;
      if (r < 0.05) return NAN;
      return uni(0.01, 10);
    case P_UNIT: return uni(-0.5, 0.5);
    case P_WIDE:
      if (r < 0.03) return NAN;
      if (r < 0.06) return r < 0.045 ? INFINITY : -INFINITY;
      return uni(-1, 1) * pow(10.0, uni(-3, 20));
    case P_EXP: return (double)irange(-3, 5) + (r < 0.5 ? 0.0 : uni(0, 1));
    case P_TIES: return (double)irange(-3, 3);
  }
  return 0;
}

static int64_t rand_ival(int32_t dt, int prof) {
  if (dt == BP_BOOL) return (int64_t)(rnd() & 1);
  if (prof == P_WIDE) {
    uint64_t x = rnd();
    switch (dt) {
      case BP_INT8: return (int8_t)x;
      case BP_INT16: return (int16_t)x;
      case BP_INT32: return (int32_t)x;
      case BP_UINT8: return (uint8_t)x;
      default: return (int64_t)x;
    }
  }
  if (prof == P_EXP) return irange(-2, 6);
  if (prof == P_TIES) return irange(dt == BP_UINT8 ? 0 : -3, 3);
  if (dt == BP_UINT8) return irange(0, 255);
  if (dt == BP_INT8) return irange(-100, 100);
  return irange(-1000, 1000);
}

static void put_rand(int32_t dt, void *p, int64_t i, int prof) {
  if (is_float(dt)) {
    double v = rand_fval(prof);
    switch (dt) {
      case BP_FLOAT32: ((float *)p)[i] = (float)v; break;
      case BP_FLOAT64: ((double *)p)[i] = v; break;
      case BP_FLOAT16: ((uint16_t *)p)[i] = f2h_bits((float)v); break;
      default: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
      }
    }
    return;
  }
  int64_t v = rand_ival(dt, prof);
  switch (dt) {
    case BP_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case BP_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case BP_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case BP_INT64: ((int64_t *)p)[i] = v; break;
    default: ((uint8_t *)p)[i] = (uint8_t)v; break;
  }
}

/* ------------------------------------------------------------------------ */
/* Tensors on both devices                                                  */
/* ------------------------------------------------------------------------ */


static char context[512];

void ctx(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(context, sizeof context, fmt, ap);
  va_end(ap);
}

static int failures_reported;

void fail(const char *fmt, ...) {
  ok(0);
  if (++failures_reported > 20) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tap_diag("%s", buf);
  tap_diag("  in: %s (seed %llu)", context, (unsigned long long)rng_state);
}

void twin_free(twin *t) {
  bp_tensor_release(t->c);
  bp_tensor_release(t->g);
  bp_tensor_release(t->cs);
  bp_tensor_release(t->gs);
  memset(t, 0, sizeof *t);
}

/* A twin of the given shape and layout with random contents. */
twin make(int32_t dt, int32_t ndim, const int64_t *sizes, int layout, int prof) {
  twin t;
  memset(&t, 0, sizeof t);
  if (layout == L_ANY) layout = (int)irange(L_CONTIG, L_BCAST);
  if (layout == L_WRITABLE) layout = (int)irange(L_CONTIG, L_STRIDED);
  int64_t strides[BP_MAX_NDIM], numel = 1, offset = 0;
  for (int32_t d = 0; d < ndim; d++) numel *= sizes[d];
  int64_t acc = 1;
  if (layout == L_PERM) {
    for (int32_t d = 0; d < ndim; d++) { /* column-major */
      strides[d] = acc;
      acc *= sizes[d] > 0 ? sizes[d] : 1;
    }
  } else {
    /* L_STRIDED: every other element of the innermost dimension. */
    if (layout == L_STRIDED) {
      acc = 2;
      offset = 3;
    }
    for (int32_t d = ndim - 1; d >= 0; d--) {
      strides[d] = acc;
      acc *= sizes[d] > 0 ? sizes[d] : 1;
    }
    if (layout == L_BCAST) {
      for (int32_t d = 0; d < ndim; d++)
        if (sizes[d] > 1) {
          strides[d] = 0;
          break;
        }
    }
  }
  int64_t storage = acc + offset + 1;
  if (bp_tensor_empty(BP_CPU, dt, 1, &storage, &t.cs) != BP_OK ||
      bp_tensor_empty(CUDA0, dt, 1, &storage, &t.gs) != BP_OK) {
    fail("allocating a storage of %lld: %s", (long long)storage, bp_last_error());
    twin_free(&t);
    return t;
  }
  void *p = bp_tensor_get_view(t.cs)->data;
  for (int64_t i = 0; i < storage; i++) put_rand(dt, p, i, prof);
  if (bp_tensor_copy(t.gs, t.cs) != BP_OK ||
      bp_tensor_as_strided(t.cs, ndim, sizes, strides, offset, &t.c) != BP_OK ||
      bp_tensor_as_strided(t.gs, ndim, sizes, strides, offset, &t.g) != BP_OK) {
    fail("making a view: %s", bp_last_error());
    twin_free(&t);
  }
  (void)numel;
  return t;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                               */
/* ------------------------------------------------------------------------ */


void tolerance(int32_t dt, double *rtol, double *atol) {
  switch (dt) {
    case BP_FLOAT32: *rtol = 1.3e-6; *atol = 1e-5; break;
    case BP_FLOAT64: *rtol = 1e-7; *atol = 1e-7; break;
    case BP_FLOAT16: *rtol = 1e-3; *atol = 1e-5; break;
    case BP_BFLOAT16: *rtol = 1.6e-2; *atol = 1e-5; break;
    default: *rtol = 0; *atol = 0;
  }
}

/* A CPU contiguous copy of any tensor. */
bp_tensor *to_host(bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  bp_tensor *h = NULL;
  if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &h) != BP_OK) return NULL;
  if (bp_tensor_copy(h, t) != BP_OK) {
    fail("copying a result to the host: %s", bp_last_error());
    bp_tensor_release(h);
    return NULL;
  }
  return h;
}

/* Compares got (any device) with want (CPU): dtype, sizes, values. */
static bool compare(bp_tensor *got, bp_tensor *want, int kind, int64_t n) {
  const bp_tensor_view *gv = bp_tensor_get_view(got), *wv = bp_tensor_get_view(want);
  if (gv->dtype != wv->dtype || gv->ndim != wv->ndim) {
    fail("result dtype %d ndim %d, the CPU's dtype %d ndim %d", (int)gv->dtype, (int)gv->ndim,
         (int)wv->dtype, (int)wv->ndim);
    return false;
  }
  for (int32_t d = 0; d < gv->ndim; d++)
    if (gv->sizes[d] != wv->sizes[d]) {
      fail("result size %lld at dim %d, the CPU's %lld", (long long)gv->sizes[d], (int)d,
           (long long)wv->sizes[d]);
      return false;
    }
  bp_tensor *gh = to_host(got), *wh = to_host(want);
  if (!gh || !wh) {
    bp_tensor_release(gh);
    bp_tensor_release(wh);
    return false;
  }
  const void *g = bp_tensor_get_view(gh)->data, *w = bp_tensor_get_view(wh)->data;
  int32_t dt = gv->dtype;
  double rtol, atol;
  tolerance(dt, &rtol, &atol);
  double scale = n > 1 && kind != T_PLAIN ? sqrt((double)n) : 1;
  rtol *= 2 * scale;
  atol *= 2 * (kind == T_SUM && n > 1 ? (double)n : 1);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < gv->numel; i++) {
    bool same;
    if (is_float(dt)) {
      double a = get_f(dt, g, i), b = get_f(dt, w, i);
      if (isnan(a) || isnan(b)) same = isnan(a) && isnan(b);
      else if (isinf(a) || isinf(b)) same = a == b;
      else same = fabs(a - b) <= atol + rtol * fabs(b);
    } else {
      same = get_i(dt, g, i) == get_i(dt, w, i);
    }
    if (!same && bad++ == 0) first = i;
  }
  if (bad) {
    if (is_float(dt))
      fail("%lld of %lld elements differ; first at %lld: cuda %.9g, cpu %.9g", (long long)bad,
           (long long)gv->numel, (long long)first, get_f(dt, g, first), get_f(dt, w, first));
    else
      fail("%lld of %lld elements differ; first at %lld: cuda %lld, cpu %lld", (long long)bad,
           (long long)gv->numel, (long long)first, (long long)get_i(dt, g, first),
           (long long)get_i(dt, w, first));
  }
  bp_tensor_release(gh);
  bp_tensor_release(wh);
  return bad == 0;
}

/* ------------------------------------------------------------------------ */
/* Calls on both devices                                                    */
/* ------------------------------------------------------------------------ */

bp_status call_on(const bp_op *op, const arg *args, size_t nargs, bool gpu, bp_tensor **out) {
  bp_value vals[16];
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 16, 0};
  const char *kws[8];
  size_t nkw = 0;
  for (size_t i = 0; i < nargs; i++) {
    const arg *a = &args[i];
    switch (a->kind) {
      case A_T: bp_stack_push_tensor(&s, gpu ? a->t->g : a->t->c); break;
      case A_T_CPU: bp_stack_push_tensor(&s, a->t->c); break;
      case A_NONE: bp_stack_push_none(&s); break;
      case A_INT: bp_stack_push_int(&s, a->i); break;
      case A_FLOAT: bp_stack_push_float(&s, a->f); break;
      case A_BOOL: bp_stack_push_bool(&s, a->i != 0); break;
      case A_STR: bp_stack_push_str(&s, a->s); break;
      case A_INTS: bp_stack_push_int_list(&s, a->ints, a->n); break;
      case A_DTYPE: bp_stack_push_scalar_type(&s, (int32_t)a->i); break;
    }
    if (a->kw) kws[nkw++] = a->kw;
  }
  bp_status st = nkw ? bp_call_kw(op, &s, kws, nkw) : bp_call(op, &s);
  *out = st == BP_OK ? vals[0].u.tensor : NULL;
  return st;
}

static int64_t ntrials;

/*
 * Runs op on both devices and compares.  `mut` (may be NULL) is the twin
 * the op writes: its storages are compared too, and the result must be
 * its view.
 */
void check(const char *name, const arg *args, size_t nargs, twin *mut, int kind, int64_t n) {
  const bp_op *op = NULL;
  if (bp_op_find(name, &op) != BP_OK) {
    fail("%s: %s", name, bp_last_error());
    return;
  }
  ntrials++;
  bp_tensor *rc = NULL, *rg = NULL;
  bp_status sc = call_on(op, args, nargs, false, &rc);
  char cmsg[512];
  snprintf(cmsg, sizeof cmsg, "%s", bp_last_error());
  bp_status sg = call_on(op, args, nargs, true, &rg);
  if (sc != sg) {
    fail("%s: the CPU gives %s (%s), CUDA gives %s (%s)", name, bp_status_str(sc),
         sc ? cmsg : "", bp_status_str(sg), sg ? bp_last_error() : "");
  } else if (sc == BP_OK) {
    if (rg && bp_tensor_get_view(rg)->device.type != BP_DEVICE_CUDA)
      fail("%s: the result is not on cuda", name);
    else if (mut && (rg != mut->g || rc != mut->c))
      fail("%s: the result is not the argument it writes", name);
    else
      compare(rg, rc, kind, n);
    if (mut) compare(mut->gs, mut->cs, kind, n);
  }
  if (bp_device_synchronize(CUDA0) != BP_OK) fail("%s: synchronize: %s", name, bp_last_error());
  bp_tensor_release(rc);
  bp_tensor_release(rg);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static bp_plugin *cpu_plugin, *cuda_plugin;

bool setup(uint64_t seed) {
  rng_state = seed;
  failures_reported = 0;
  cpu_plugin = load_plugin("cpu");
  cuda_plugin = load_plugin("cuda");
  return cpu_plugin && cuda_plugin;
}

void done(void) {
  tap_diag("%lld trials", (long long)ntrials);
  is_int(bp_live_tensor_count(), 0);
  if (cuda_plugin) is_status(bp_plugin_unload(cuda_plugin), BP_OK);
  if (cpu_plugin) is_status(bp_plugin_unload(cpu_plugin), BP_OK);
}


const shape2 pairs[] = {
    {0, {0}, 0, {0}},          {1, {5}, 1, {5}},           {2, {3, 4}, 1, {4}},
    {3, {2, 3, 4}, 3, {2, 1, 4}}, {2, {0, 3}, 1, {3}},      {1, {1}, 2, {7, 1}},
    {3, {4, 1, 3}, 3, {1, 5, 1}}, {2, {3, 4}, 2, {2, 4}} /* does not broadcast */,
    {2, {300, 257}, 1, {257}},    {1, {70001}, 1, {70001}}, {0, {0}, 2, {33, 65}},
};
const size_t npairs = sizeof pairs / sizeof pairs[0];

const char *dtn(int32_t dt) {
  switch (dt) {
    case BP_FLOAT32: return "float32";
    case BP_FLOAT64: return "float64";
    case BP_FLOAT16: return "float16";
    case BP_BFLOAT16: return "bfloat16";
    case BP_INT8: return "int8";
    case BP_INT16: return "int16";
    case BP_INT32: return "int32";
    case BP_INT64: return "int64";
    case BP_UINT8: return "uint8";
    case BP_BOOL: return "bool";
  }
  return "?";
}
