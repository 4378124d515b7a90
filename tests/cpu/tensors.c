/* tests/cpu/tensors.c - the shapes, values and tensors of harness.h. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Shapes                                                                   */
/* ------------------------------------------------------------------------ */

static bool g_large;

void set_large_shapes(bool on) { g_large = on; }

void rand_shape(rng *r, int32_t maxdim, int64_t maxsize, int32_t *ndim, int64_t *sizes) {
  if (g_large) {
    /* 33 000 to 90 000 elements in one to three dimensions: past the
     * plugin's parallel grain of 32768. */
    static const int64_t lo[] = {33000, 182, 33}, hi[] = {90000, 300, 44};
    *ndim = (int32_t)rng_int(r, 1, maxdim < 3 ? maxdim : 3);
    for (int32_t d = 0; d < *ndim; d++) sizes[d] = rng_int(r, lo[*ndim - 1], hi[*ndim - 1]);
    return;
  }
  *ndim = (int32_t)rng_int(r, 0, maxdim);
  for (int32_t d = 0; d < *ndim; d++) {
    double u = rng_uniform(r, 0, 1);
    sizes[d] = u < 0.04 ? 0 : u < 0.25 ? 1 : rng_int(r, 2, maxsize > 2 ? maxsize : 2);
  }
}

void rand_bcast_operand(rng *r, int32_t n, const int64_t *sizes, int32_t *nout, int64_t *sout) {
  int32_t drop = rng_chance(r, 0.3) ? (int32_t)rng_int(r, 0, n) : 0;
  *nout = n - drop;
  for (int32_t d = 0; d < *nout; d++) {
    sout[d] = sizes[d + drop];
    if (rng_chance(r, 0.25)) sout[d] = 1;
  }
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

static double large_for(int32_t dt) {
  switch (dt) {
    case BP_FLOAT16: return 3.0e4;
    case BP_FLOAT64: return 1e200;
    default: return 1e30;
  }
}

static double tiny_for(int32_t dt) {
  switch (dt) {
    case BP_FLOAT16: return 3e-7; /* subnormal */
    case BP_FLOAT64: return 1e-310;
    default: return 1e-40;
  }
}

/* Edges of the float-to-integer and float-to-half conversions. */
/* clang-format off */
static const double conv_edges[] = {
    0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, 127, 127.5, 128, -128, -128.5, -129, 255, 255.5,
    256, -1, 32767, 32767.5, 32768, -32768, -32768.75, -32769, 65504, 65519, 65520, 65536,
    2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967296.0,
    9223372036854775808.0, -9223372036854775808.0, 1.8e19, -1.8e19, 3.0e38, -3.0e38, 1e300};
/* clang-format on */

double rand_float(rng *r, int32_t dt, int prof) {
  double u = rng_uniform(r, 0, 1), v;
  double specials[] = {NAN, INFINITY,      -INFINITY,      -0.0,
                       0.0, large_for(dt), -large_for(dt), tiny_for(dt)};
  switch (prof) {
    case VP_FINITE:
    case VP_ACCUM:
      if (prof == VP_ACCUM && u < 0.02) {
        v = specials[rng_int(r, 0, 2)];
        break;
      }
      v = u < 0.1 ? (double)rng_int(r, -3, 3) : rng_uniform(r, -4, 4);
      break;
    case VP_POSITIVE:
      v = u < 0.15
              ? (double[]){0.0, -0.0, -1.5, NAN, INFINITY, -INFINITY, 1e-3, large_for(dt)}[rng_int(
                    r, 0, 7)]
              : rng_uniform(r, 0, 8);
      break;
    case VP_TIES: v = u < 0.03 ? NAN : (double)rng_int(r, -3, 3); break;
    case VP_WIDE:
      if (u < 0.35)
        v = (rng_chance(r, 0.5) ? -1 : 1) * pow(10, rng_uniform(r, -3, 20));
      else if (u < 0.7)
        v = conv_edges[rng_int(r, 0, (int64_t)(sizeof conv_edges / sizeof *conv_edges) - 1)];
      else if (u < 0.9)
        v = rng_uniform(r, -300, 300);
      else
        v = specials[rng_int(r, 0, 4)];
      break;
    case VP_UNIT:
    case VP_UNIT_NAN:
      if (prof == VP_UNIT_NAN && u < 0.02)
        v = specials[rng_int(r, 0, 2)];
      else
        v = u < 0.1 ? (double[]){0, 0.5, -0.5, 0.25, -0.25}[rng_int(r, 0, 4)]
                    : rng_uniform(r, -0.5, 0.5);
      break;
    case VP_EXPONENT:
      v = u < 0.06  ? (double[]){0.0, -0.0, NAN, INFINITY, -INFINITY, 0.5}[rng_int(r, 0, 5)]
          : u < 0.3 ? (double)rng_int(r, -3, 4)
                    : rng_uniform(r, -3, 3);
      break;
    default:
      v = u < 0.12  ? specials[rng_int(r, 0, 7)]
          : u < 0.2 ? (double)rng_int(r, -3, 3)
                    : rng_uniform(r, -4, 4);
      break;
  }
  return round_to(dt, v);
}

int64_t rand_int(rng *r, int32_t dt, int prof) {
  if (dt == BP_BOOL) return (int64_t)(rng_next(r) & 1);
  int64_t lo = dt == BP_UINT8 ? 0 : -5;
  double u = rng_uniform(r, 0, 1);
  int64_t v;
  switch (prof) {
    case VP_TIES: v = rng_int(r, lo > -3 ? lo : -3, 3); break;
    case VP_POSITIVE: v = rng_int(r, 0, 100); break;
    case VP_EXPONENT:
      v = u < 0.8   ? rng_int(r, dt == BP_UINT8 ? 0 : -3, 12)
          : u < 0.9 ? rng_int(r, 0, 2)
                    : rng_int(r, 13, 70);
      break;
    default:
      if (u < 0.5)
        v = rng_int(r, lo, lo + 10);
      else if (u < 0.8)
        v = (int64_t)rng_next(r);
      else {
        int64_t edges[] = {dt_min(dt), dt_max(dt), dt_min(dt) + 1, dt_max(dt) - 1, 0, -1, 1};
        v = edges[rng_int(r, 0, 6)];
      }
      break;
  }
  return wrap_int(dt, v);
}

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

const char *layout_name(int layout) {
  static const char *const names[] = {"contig",  "perm",   "strided", "bcast",
                                      "overlap", "random", "writable"};
  return layout >= 0 && layout <= LAY_WRITABLE ? names[layout] : "?";
}

static void contiguous_strides(int32_t ndim, const int64_t *sizes, int64_t *strides) {
  int64_t run = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = run;
    run *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

/* Strides, storage offset and storage size (elements) for a layout;
 * returns the layout actually used (a layout the shape cannot have falls
 * back to a simpler one). */
static int make_layout(rng *r, int layout, int32_t ndim, const int64_t *sizes, int64_t *strides,
                       int64_t *offset, int64_t *nstore) {
  if (layout == LAY_RANDOM) {
    int64_t x = rng_int(r, 0, 9);
    layout = x < 4   ? LAY_CONTIG
             : x < 6 ? LAY_PERM
             : x < 8 ? LAY_STRIDED
             : x < 9 ? LAY_BCAST
                     : LAY_OVERLAP;
  } else if (layout == LAY_WRITABLE) {
    layout = (int)rng_int(r, LAY_CONTIG, LAY_STRIDED);
  }
  int64_t numel = 1;
  for (int32_t d = 0; d < ndim; d++) numel *= sizes[d];
  *offset = rng_chance(r, 0.3) ? rng_int(r, 1, 3) : 0;
  contiguous_strides(ndim, sizes, strides);
  if (layout == LAY_OVERLAP && !(ndim >= 2 && sizes[ndim - 1] > 1 && sizes[ndim - 2] > 1))
    layout = LAY_STRIDED;
  if (layout == LAY_BCAST) {
    bool any = false;
    for (int32_t d = 0; d < ndim; d++) any |= sizes[d] > 1;
    if (!any) layout = LAY_STRIDED;
  }
  if (layout == LAY_PERM && ndim < 2) layout = LAY_STRIDED;
  if (layout == LAY_STRIDED && ndim == 0) layout = LAY_CONTIG;
  switch (layout) {
    case LAY_PERM: {
      int32_t perm[BP_MAX_NDIM] = {0};
      for (int32_t d = 0; d < ndim; d++) perm[d] = d;
      for (int32_t d = ndim - 1; d > 0; d--) {
        int32_t j = (int32_t)rng_int(r, 0, d), t = perm[d];
        perm[d] = perm[j];
        perm[j] = t;
      }
      if (perm[ndim - 1] == ndim - 1) { /* make sure the innermost dimension moves */
        int32_t t = perm[ndim - 1];
        perm[ndim - 1] = perm[0];
        perm[0] = t;
      }
      int64_t run = 1;
      for (int32_t k = ndim - 1; k >= 0; k--) {
        strides[perm[k]] = run;
        run *= sizes[perm[k]] > 1 ? sizes[perm[k]] : 1;
      }
      break;
    }
    case LAY_STRIDED: {
      int64_t run = rng_int(r, 2, 3);
      for (int32_t d = ndim - 1; d >= 0; d--) {
        strides[d] = run;
        run *= (sizes[d] > 1 ? sizes[d] : 1) + rng_int(r, 0, 1);
      }
      break;
    }
    case LAY_BCAST: {
      bool zero[BP_MAX_NDIM] = {false}, any = false;
      for (int32_t d = 0; d < ndim; d++) any |= zero[d] = sizes[d] > 1 && rng_chance(r, 0.5);
      for (int32_t d = ndim - 1; !any && d >= 0; d--) any = zero[d] = sizes[d] > 1;
      int64_t run = 1;
      for (int32_t d = ndim - 1; d >= 0; d--) {
        strides[d] = zero[d] ? 0 : run;
        if (!zero[d]) run *= sizes[d] > 1 ? sizes[d] : 1;
      }
      break;
    }
    case LAY_OVERLAP: {
      /* A sliding window: rows start fewer elements apart than they are long. */
      strides[ndim - 1] = 1;
      strides[ndim - 2] = rng_int(r, 1, sizes[ndim - 1] - 1);
      int64_t run = (sizes[ndim - 1] - 1) + (sizes[ndim - 2] - 1) * strides[ndim - 2] + 1;
      for (int32_t d = ndim - 3; d >= 0; d--) {
        strides[d] = run;
        run *= sizes[d] > 1 ? sizes[d] : 1;
      }
      break;
    }
    default: break;
  }
  int64_t reach = 0;
  for (int32_t d = 0; d < ndim; d++)
    if (sizes[d] > 0) reach += (sizes[d] - 1) * strides[d];
  *nstore = *offset + (numel > 0 ? reach : 0) + 1;
  return layout;
}

static void store_any(void *p, int32_t dt, double f, int64_t i) {
  if (dt_is_float(dt))
    store_f(p, dt, f);
  else
    store_i(p, dt, i);
}

/* A view in `layout` over a fresh storage whose every element holds a
 * random value of `prof`. */
static bp_tensor *make_view(rng *r, int32_t dt, int32_t ndim, const int64_t *sizes, int layout,
                            int prof, int *used) {
  int64_t strides[BP_MAX_NDIM], offset, nstore;
  int u = make_layout(r, layout, ndim, sizes, strides, &offset, &nstore);
  if (used) *used = u;
  bp_tensor *base = NULL, *view = NULL;
  bp_status st = bp_tensor_empty(BP_CPU, dt, 1, &nstore, &base);
  if (st) die("bp_tensor_empty", st);
  char *data = bp_tensor_get_view(base)->data;
  size_t isz = bp_dtype_size(dt);
  for (int64_t k = 0; k < nstore; k++)
    store_any(data + (size_t)k * isz, dt, dt_is_float(dt) ? rand_float(r, dt, prof) : 0,
              dt_is_float(dt) ? 0 : rand_int(r, dt, prof));
  st = bp_tensor_as_strided(base, ndim, sizes, strides, offset, &view);
  bp_tensor_release(base);
  if (st) die("bp_tensor_as_strided", st);
  return view;
}

bp_tensor *gen_tensor(rng *r, int32_t dt, int32_t ndim, const int64_t *sizes, int layout, int prof,
                      rt **ref, int *used) {
  bp_tensor *t = make_view(r, dt, ndim, sizes, layout, prof, used);
  if (ref) *ref = read_tensor(t);
  return t;
}

int64_t elem_offset(const bp_tensor_view *v, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
  return off * v->itemsize;
}

bool next_idx(int32_t n, const int64_t *sizes, int64_t *idx) {
  for (int32_t d = n - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

bp_tensor *tensor_from(rng *r, const rt *values, int layout, int *used) {
  if (layout == LAY_BCAST || layout == LAY_OVERLAP || layout == LAY_RANDOM) layout = LAY_WRITABLE;
  bp_tensor *t = make_view(r, values->dtype, values->ndim, values->sizes, layout, VP_GENERAL, used);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < values->numel; k++, next_idx(v->ndim, v->sizes, idx))
    store_any((char *)v->data + elem_offset(v, idx), v->dtype, values->f[k], values->i[k]);
  return t;
}

bp_tensor *tensor_zeros(int32_t dt, int32_t ndim, const int64_t *sizes) {
  bp_tensor *t = NULL;
  bp_status st = bp_tensor_empty(BP_CPU, dt, ndim, sizes, &t);
  if (st) die("bp_tensor_empty", st);
  if (bp_tensor_nbytes(t)) memset(bp_tensor_get_view(t)->data, 0, (size_t)bp_tensor_nbytes(t));
  return t;
}

bp_tensor *tensor_f(int32_t dt, const double *v, int64_t n) {
  bp_tensor *t = tensor_zeros(dt, 1, &n);
  char *d = bp_tensor_get_view(t)->data;
  for (int64_t k = 0; k < n; k++) store_f(d + (size_t)k * bp_dtype_size(dt), dt, v[k]);
  return t;
}

bp_tensor *tensor_i(int32_t dt, const int64_t *v, int64_t n) {
  bp_tensor *t = tensor_zeros(dt, 1, &n);
  char *d = bp_tensor_get_view(t)->data;
  for (int64_t k = 0; k < n; k++) store_i(d + (size_t)k * bp_dtype_size(dt), dt, v[k]);
  return t;
}

rt *read_tensor(const bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  rt *o = rt_new(v->dtype, v->ndim, v->sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  bool fl = dt_is_float(v->dtype);
  for (int64_t k = 0; k < o->numel; k++, next_idx(v->ndim, v->sizes, idx)) {
    const char *p = (const char *)v->data + elem_offset(v, idx);
    if (fl)
      o->f[k] = load_f(p, v->dtype);
    else
      o->i[k] = load_i(p, v->dtype);
  }
  return o;
}
