/*
 * plugins/cpu/reduce.c - sum, mean, amax, amin, argmax.
 *
 * A reduction is planned once per call: the input's dimensions are split
 * into kept dimensions (one per output element, in the output's row-major
 * order) and reduced dimensions, size-1 dimensions are dropped and
 * neighbours that step through memory as one are merged.  Two shapes of
 * work follow:
 *
 *   rows     each output reduces runs along the innermost reduced
 *            dimension; a contiguous run of the accumulator's own type is
 *            read in place, anything else is converted a chunk at a time
 *            into a buffer.  The vector kernels work on these arrays.
 *   columns  when the innermost kept dimension is contiguous in the input
 *            (sum(dim=0) of a matrix), a block of neighbouring outputs is
 *            reduced together: each reduced position adds a contiguous
 *            slice of the input to a block of lanes.
 *
 * Work is parallel over outputs; when there are fewer outputs than threads
 * the reduced range of each output is also split into pieces whose partial
 * results are combined in order (so argmax still finds the first maximum).
 *
 * Accumulators: float32, float16 and bfloat16 sum in float32 lanes, in
 * blocks whose sums are added in double (blocked summation); float64 sums
 * in double; integers and bool sum in 64-bit unsigned arithmetic, which
 * wraps.  sum(dtype=...) converts each element to that dtype first, as the
 * op set converts mixed-dtype inputs to the result dtype.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "reduce.h"

/* ------------------------------------------------------------------------ */
/* Vector kernels over arrays                                               */
/* ------------------------------------------------------------------------ */

/* Sums n (<= BLOCK, but any n works) floats in LANES independent lanes,
 * which the compiler keeps in vector registers. */
static CPU_CLONES float dense_sum_f32(const float *x, int64_t n) {
  float acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) acc[j] += x[i + j];
  for (int j = 0; i < n; i++, j++) acc[j] += x[i];
  for (int w = LANES / 2; w > 0; w /= 2)
    for (int j = 0; j < w; j++) acc[j] += acc[j + w];
  return acc[0];
}

static CPU_CLONES double dense_sum_f64(const double *x, int64_t n) {
  double acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) acc[j] += x[i + j];
  for (int j = 0; i < n; i++, j++) acc[j] += x[i];
  for (int w = LANES / 2; w > 0; w /= 2)
    for (int j = 0; j < w; j++) acc[j] += acc[j + w];
  return acc[0];
}

static CPU_CLONES uint64_t sum_i64(const int64_t *x, int64_t n) {
  uint64_t acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) acc[j] += (uint64_t)x[i + j];
  for (int j = 0; i < n; i++, j++) acc[j] += (uint64_t)x[i];
  uint64_t s = 0;
  for (int j = 0; j < LANES; j++) s += acc[j];
  return s;
}

/*
 * The maximum (want_max) or minimum of n >= 1 values; NaN if any is NaN.
 * A lane that has taken a NaN keeps it, because no comparison with NaN is
 * true.
 */
#define DEFINE_EXTREME(name, T)                                                          \
  static CPU_CLONES T name(const T *x, int64_t n, bool want_max) {                       \
    T m[LANES];                                                                          \
    for (int j = 0; j < LANES; j++) m[j] = x[0];                                          \
    int64_t i = 0;                                                                       \
    if (want_max) {                                                                      \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) {                                                \
          T v = x[i + j];                                                                \
          m[j] = (v > m[j] || v != v) ? v : m[j];                                         \
        }                                                                                \
    } else {                                                                             \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) {                                                \
          T v = x[i + j];                                                                \
          m[j] = (v < m[j] || v != v) ? v : m[j];                                         \
        }                                                                                \
    }                                                                                    \
    T r = m[0];                                                                          \
    for (int j = 1; j < LANES; j++)                                                      \
      if (want_max ? (m[j] > r || m[j] != m[j]) : (m[j] < r || m[j] != m[j])) r = m[j];   \
    for (; i < n; i++)                                                                   \
      if (r != r) break;                                                                 \
      else if (want_max ? (x[i] > r || x[i] != x[i]) : (x[i] < r || x[i] != x[i])) r = x[i]; \
    return r;                                                                            \
  }

DEFINE_EXTREME(extreme_f32, float)
DEFINE_EXTREME(extreme_f64, double)
DEFINE_EXTREME(extreme_i64, int64_t)

/* ------------------------------------------------------------------------ */
/* Conversion into accumulator buffers                                      */
/* ------------------------------------------------------------------------ */

/* Float to integer as core::cast does it: truncate toward zero, saturate at
 * the integer's range, NaN to 0. */
static int64_t float_to_int(double v, int32_t dt) {
  if (v != v) return 0;
  double lo, hi;
  switch (dt) {
    case BP_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
    case BP_INT16: lo = INT16_MIN, hi = INT16_MAX; break;
    case BP_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
    case BP_UINT8: lo = 0, hi = UINT8_MAX; break;
    default:
      if (v >= 0x1p63) return INT64_MAX;
      if (v < -0x1p63) return INT64_MIN;
      return (int64_t)v;
  }
  return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

/* Reads an integer or bool element as int64. */
static int64_t load_int(int32_t dt, const char *p) {
  switch (dt) {
    case BP_INT8: return *(const int8_t *)p;
    case BP_INT16: return *(const int16_t *)p;
    case BP_INT32: return *(const int32_t *)p;
    case BP_INT64: return *(const int64_t *)p;
    case BP_UINT8: return *(const uint8_t *)p;
    default: return *(const uint8_t *)p != 0; /* bool */
  }
}

/* Rounds a float to float16 or bfloat16 precision (for sum(dtype=...)). */
static float round_to(int32_t dt, float v) {
  return dt == BP_FLOAT16 ? bp_aux_f16_to_f32(bp_aux_f32_to_f16(v))
                          : bp_aux_bf16_to_f32(bp_aux_f32_to_bf16(v));
}

/* Converts n elements at src (stride in bytes) to floats of conv_dt. */
static CPU_CLONES void load_f32(const plan *p, const char *src, int64_t stride, int64_t n,
                                float *dst) {
  bool half = p->conv_dt != p->in_dt && p->conv_dt != BP_FLOAT32;
  if (half && (p->in_dt == BP_FLOAT64 || p->in_dt == BP_INT32 || p->in_dt == BP_INT64)) {
    /* Values that float32 may not hold go through float32 rounded to odd,
     * so that they round to float16 or bfloat16 once, as cast does. */
    for (int64_t i = 0; i < n; i++) {
      const char *e = src + i * stride;
      float f = p->in_dt == BP_FLOAT64 ? bp_aux_f64_to_f32_odd(*(const double *)e)
                                       : bp_aux_i64_to_f32_odd(load_int(p->in_dt, e));
      dst[i] = round_to(p->conv_dt, f);
    }
    return;
  }
  switch (p->in_dt) {
    case BP_FLOAT32:
    case BP_FLOAT16:
    case BP_BFLOAT16: cpu_gather_f32(dst, src, stride, n, p->in_dt); break;
    case BP_INT64: /* directly, as double could round twice */
      for (int64_t i = 0; i < n; i++) dst[i] = (float)*(const int64_t *)(src + i * stride);
      break;
    default:
      for (int64_t i = 0; i < n; i++) dst[i] = (float)cpu_load_f64(p->in_dt, src + i * stride);
      break;
  }
  if (p->conv_dt != p->in_dt && p->conv_dt != BP_FLOAT32)
    for (int64_t i = 0; i < n; i++) dst[i] = round_to(p->conv_dt, dst[i]);
}

static void load_f64(const plan *p, const char *src, int64_t stride, int64_t n, double *dst) {
  if (p->in_dt == BP_FLOAT64) {
    for (int64_t i = 0; i < n; i++) dst[i] = *(const double *)(src + i * stride);
  } else if (p->in_dt == BP_INT64) {
    for (int64_t i = 0; i < n; i++) dst[i] = (double)*(const int64_t *)(src + i * stride);
  } else {
    for (int64_t i = 0; i < n; i++) dst[i] = cpu_load_f64(p->in_dt, src + i * stride);
  }
}

static CPU_CLONES void load_i64(const plan *p, const char *src, int64_t stride, int64_t n,
                                int64_t *dst) {
  if (bp_aux_dtype_is_float(p->in_dt)) {
    for (int64_t i = 0; i < n; i++) {
      double v = cpu_load_f64(p->in_dt, src + i * stride);
      dst[i] = p->conv_dt == BP_BOOL ? v != 0 : float_to_int(v, p->conv_dt);
    }
    return;
  }
  switch (p->in_dt) {
    case BP_INT8:
      for (int64_t i = 0; i < n; i++) dst[i] = *(const int8_t *)(src + i * stride);
      break;
    case BP_INT16:
      for (int64_t i = 0; i < n; i++) dst[i] = *(const int16_t *)(src + i * stride);
      break;
    case BP_INT32:
      for (int64_t i = 0; i < n; i++) dst[i] = *(const int32_t *)(src + i * stride);
      break;
    default:
      for (int64_t i = 0; i < n; i++) dst[i] = load_int(p->in_dt, src + i * stride);
      break;
  }
  /* Integers need no narrowing first: the sum wraps the same either way.
   * Bool does: its sum is "any". */
  if (p->conv_dt == BP_BOOL)
    for (int64_t i = 0; i < n; i++) dst[i] = dst[i] != 0;
}

/* Whether a contiguous run can be read in place, without conversion. */
static bool in_place(const plan *p) {
  if (p->in_dt != p->conv_dt) return false;
  switch (p->acc) {
    case ACC_F32: return p->in_dt == BP_FLOAT32;
    case ACC_F64: return true;
    default: return p->in_dt == BP_INT64;
  }
}

typedef union buffer {
  float f32[CHUNK];
  double f64[CHUNK];
  int64_t i64[CHUNK];
} buffer;

/* n contiguous elements of the accumulator's type: the input itself when
 * it can be read in place, else a converted copy in buf (room for n
 * elements of 8 bytes). */
const void *cpu_reduce_load(const plan *p, const char *src, int64_t stride, int64_t n, void *buf) {
  if (stride == p->isz && in_place(p)) return src;
  switch (p->acc) {
    case ACC_F32: load_f32(p, src, stride, n, buf); break;
    case ACC_F64: load_f64(p, src, stride, n, buf); break;
    default: load_i64(p, src, stride, n, buf); break;
  }
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Combining                                                                */
/* ------------------------------------------------------------------------ */

/* Whether float v replaces the current best (NaN wins and then sticks). */
static bool float_better(const part *st, double v, bool want_max) {
  if (!st->seen) return true;
  if (st->f != st->f) return false;
  if (v != v) return true;
  return want_max ? v > st->f : v < st->f;
}

/* Index of the first element of x[0 .. n) equal to v (the first NaN for a
 * NaN v); n is never reached, as v came from x. */
static int64_t find_first(int acc, const void *x, int64_t n, double fv, int64_t iv) {
  int64_t i = 0;
  if (acc == ACC_F32) {
    const float *f = x;
    float v = (float)fv;
    if (v != v)
      while (i < n && f[i] == f[i]) i++;
    else
      while (i < n && f[i] != v) i++;
  } else if (acc == ACC_F64) {
    const double *f = x;
    if (fv != fv)
      while (i < n && f[i] == f[i]) i++;
    else
      while (i < n && f[i] != fv) i++;
  } else {
    const int64_t *v = x;
    while (i < n && v[i] != iv) i++;
  }
  return i;
}

/* Folds n contiguous accumulator-typed values, the first at flat reduced
 * index `flat`, into st. */
static void fold(const plan *p, part *st, const void *x, int64_t n, int64_t flat) {
  if (n <= 0) return;
  bool want_max = p->op != OP_AMIN;
  if (p->op == OP_SUM || p->op == OP_MEAN) {
    for (int64_t b = 0; b < n; b += BLOCK) {
      int64_t m = n - b < BLOCK ? n - b : BLOCK;
      switch (p->acc) {
        case ACC_F32: st->f += dense_sum_f32((const float *)x + b, m); break;
        case ACC_F64: st->f += dense_sum_f64((const double *)x + b, m); break;
        default: st->u += sum_i64((const int64_t *)x + b, m); break;
      }
    }
    return;
  }
  double fv = 0;
  int64_t iv = 0;
  switch (p->acc) {
    case ACC_F32: fv = extreme_f32(x, n, want_max); break;
    case ACC_F64: fv = extreme_f64(x, n, want_max); break;
    default: iv = extreme_i64(x, n, want_max); break;
  }
  bool better = p->acc == ACC_I64 ? !st->seen || (want_max ? iv > st->i : iv < st->i)
                                  : float_better(st, fv, want_max);
  if (!better) return;
  st->f = fv;
  st->i = iv;
  st->seen = true;
  if (p->op == OP_ARGMAX) {
    st->idx = flat + find_first(p->acc, x, n, fv, iv);
    st->done = fv != fv;
  }
}

/* Folds the partial result x, which covers later elements, into st. */
void cpu_reduce_combine(const plan *p, part *st, const part *x) {
  if (p->op == OP_SUM || p->op == OP_MEAN) {
    st->f += x->f;
    st->u += x->u;
    return;
  }
  if (!x->seen) return;
  bool want_max = p->op != OP_AMIN;
  bool better = p->acc == ACC_I64 ? !st->seen || (want_max ? x->i > st->i : x->i < st->i)
                                  : float_better(st, x->f, want_max);
  if (better) *st = *x;
}

/* Writes the final result of output o. */
void cpu_reduce_store(const plan *p, int64_t o, const part *st) {
  char *dst = p->out + o * p->osz;
  if (p->op == OP_ARGMAX) {
    *(int64_t *)dst = st->idx;
    return;
  }
  double f = st->f;
  if (p->op == OP_MEAN) f = p->nred ? f / (double)p->nred : NAN;
  int64_t i = p->op == OP_SUM ? (int64_t)st->u : st->i;
  switch (p->out_dt) {
    case BP_FLOAT32: *(float *)dst = (float)f; break;
    case BP_FLOAT64: *(double *)dst = f; break;
    case BP_FLOAT16: *(uint16_t *)dst = bp_aux_f32_to_f16((float)f); break;
    case BP_BFLOAT16: *(uint16_t *)dst = bp_aux_f32_to_bf16((float)f); break;
    case BP_INT8: *(int8_t *)dst = (int8_t)(uint8_t)i; break;
    case BP_INT16: *(int16_t *)dst = (int16_t)(uint16_t)i; break;
    case BP_INT32: *(int32_t *)dst = (int32_t)(uint32_t)i; break;
    case BP_INT64: *(int64_t *)dst = i; break;
    case BP_UINT8: *(uint8_t *)dst = (uint8_t)i; break;
    default: *(uint8_t *)dst = i != 0; break; /* bool */
  }
}

/* ------------------------------------------------------------------------ */
/* The row path                                                             */
/* ------------------------------------------------------------------------ */

/* The input address of output o's first element. */
const char *cpu_reduce_output_base(const plan *p, int64_t o) {
  const char *base = p->in;
  for (int d = p->nk - 1; d >= 0; d--) {
    base += (o % p->ksize[d]) * p->kstride[d];
    o /= p->ksize[d];
  }
  return base;
}

/* Reduces the flat reduced range [rb, re) of output o into st. */
static void reduce_range(const plan *p, int64_t o, int64_t rb, int64_t re, part *st) {
  if (rb >= re) return;
  const char *base = cpu_reduce_output_base(p, o);
  buffer buf;
  if (p->nr == 0) { /* one element */
    fold(p, st, cpu_reduce_load(p, base, p->isz, 1, &buf), 1, 0);
    return;
  }
  int nr = p->nr;
  int64_t coord[BP_MAX_NDIM], rem = rb;
  for (int d = nr - 1; d >= 0; d--) {
    coord[d] = rem % p->rsize[d];
    rem /= p->rsize[d];
  }
  int64_t inner = p->rsize[nr - 1], istride = p->rstride[nr - 1];
  bool direct = istride == p->isz && in_place(p);
  for (int64_t r = rb; r < re && !st->done;) {
    const char *ptr = base;
    for (int d = 0; d < nr; d++) ptr += coord[d] * p->rstride[d];
    int64_t run = inner - coord[nr - 1];
    if (run > re - r) run = re - r;
    if (direct) {
      fold(p, st, ptr, run, r);
    } else {
      for (int64_t c = 0; c < run && !st->done; c += CHUNK) {
        int64_t m = run - c < CHUNK ? run - c : CHUNK;
        fold(p, st, cpu_reduce_load(p, ptr + c * istride, istride, m, &buf), m, r + c);
      }
    }
    r += run;
    coord[nr - 1] += run;
    for (int d = nr - 1; d > 0 && coord[d] >= p->rsize[d]; d--) {
      coord[d] = 0;
      coord[d - 1]++;
    }
  }
}

typedef struct job {
  const plan *p;
  part *parts; /* pieces: parts[o * pieces + k] */
} job;

static void rows_whole(void *ctx, int64_t begin, int64_t end) {
  const job *j = ctx;
  for (int64_t o = begin; o < end; o++) {
    part st = {0};
    reduce_range(j->p, o, 0, j->p->nred, &st);
    cpu_reduce_store(j->p, o, &st);
  }
}

static void rows_pieces(void *ctx, int64_t begin, int64_t end) {
  const job *j = ctx;
  const plan *p = j->p;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / p->pieces, k = t % p->pieces;
    part st = {0};
    reduce_range(p, o, p->nred * k / p->pieces, p->nred * (k + 1) / p->pieces, &st);
    j->parts[t] = st;
  }
}

/* ------------------------------------------------------------------------ */
/* Planning and running                                                     */
/* ------------------------------------------------------------------------ */

/* The kept or reduced dimensions of a (bp_aux_dims_where), strides in
 * bytes. */
static int dims_where(const bp_tensor_view *a, const bool *reduced, bool want, int64_t *size,
                      int64_t *stride) {
  int n = bp_aux_dims_where(a, reduced, want, size, stride);
  for (int d = 0; d < n; d++) stride[d] *= a->itemsize;
  return n;
}

/* Orders dimensions by decreasing |stride| (stable), so that the innermost
 * reduced dimension is the densest. */
static void sort_by_stride(int n, int64_t *size, int64_t *stride) {
  for (int i = 1; i < n; i++) {
    int64_t s = size[i], st = stride[i];
    int j = i;
    for (; j > 0 && llabs(stride[j - 1]) < llabs(st); j--) {
      size[j] = size[j - 1];
      stride[j] = stride[j - 1];
    }
    size[j] = s;
    stride[j] = st;
  }
}

static int64_t product(int n, const int64_t *size) {
  int64_t p = 1;
  for (int d = 0; d < n; d++) p *= size[d];
  return p;
}

/* Runs the planned reduction on the pool. */
static bp_status run(plan *p) {
  int64_t threads = cpu_num_threads();
  bool split = p->nout < threads && p->nred >= 4 * CPU_GRAIN;
  bool columns = p->nk > 0 && p->nr > 0 &&
                 p->kstride[p->nk - 1] == p->isz && p->ksize[p->nk - 1] >= 8;
  p->pieces = 1;
  if (columns) return cpu_reduce_columns(p);
  job j = {p, NULL};
  if (!split) {
    int64_t grain = p->nred >= CPU_GRAIN ? 1 : CPU_GRAIN / (p->nred ? p->nred : 1);
    cpu_parallel_for(p->nout, grain, rows_whole, &j);
    return BP_OK;
  }
  p->pieces = threads;
  j.parts = malloc((size_t)(p->nout * p->pieces) * sizeof *j.parts);
  if (!j.parts) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "cpu: out of memory in a reduction");
  cpu_parallel_for(p->nout * p->pieces, 1, rows_pieces, &j);
  for (int64_t o = 0; o < p->nout; o++) {
    part st = j.parts[o * p->pieces];
    for (int64_t k = 1; k < p->pieces; k++) cpu_reduce_combine(p, &st, &j.parts[o * p->pieces + k]);
    cpu_reduce_store(p, o, &st);
  }
  free(j.parts);
  return BP_OK;
}

static int acc_of(int32_t dt) {
  return dt == BP_FLOAT64 ? ACC_F64 : bp_aux_dtype_is_float(dt) ? ACC_F32 : ACC_I64;
}


static bp_status reduce_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *a = cpu_host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = cpu_host->tensor_view(out);
  plan p;
  memset(&p, 0, sizeof p);
  p.op = (int)(intptr_t)ctx->user_data;
  p.in_dt = a->dtype;
  p.out_dt = o->dtype;
  p.conv_dt = p.op == OP_SUM ? o->dtype : a->dtype;
  p.acc = acc_of(p.conv_dt);
  p.isz = a->itemsize;
  p.osz = o->itemsize;
  p.in = a->data;
  p.out = o->data;
  if (a->numel == 0) {
    /* Nothing to read: every output (if any) is the reduction of nothing.
     * The input's other dimensions may be so large that their product, or
     * a stride in bytes, would overflow, so they are not planned. */
    p.nk = 1;
    p.ksize[0] = o->numel;
    p.nout = o->numel; /* nr and nred stay 0 */
  } else {
    bool reduced[BP_MAX_NDIM];
    st = bp_aux_arg_reduce_dims(ctx, args, 1, a->ndim, reduced);
    if (st) return st;
    p.nk = bp_aux_coalesce_dims(dims_where(a, reduced, false, p.ksize, p.kstride), p.ksize,
                                p.kstride);
    p.nr = dims_where(a, reduced, true, p.rsize, p.rstride);
    /* argmax counts positions in row-major order; the others may visit the
     * elements in any order. */
    if (p.op != OP_ARGMAX) sort_by_stride(p.nr, p.rsize, p.rstride);
    p.nr = bp_aux_coalesce_dims(p.nr, p.rsize, p.rstride);
    p.nout = product(p.nk, p.ksize);
    p.nred = product(p.nr, p.rsize);
  }
  if (p.nout > 0) st = run(&p);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(reduce_kernel, reduce_impl)

/* Each op's kernel gets its OP_* code as user_data. */
bp_status cpu_register_reduce(bp_library *lib) {
  static const char *const names[] = {[OP_SUM] = "sum", [OP_MEAN] = "mean", [OP_AMAX] = "amax",
                                      [OP_AMIN] = "amin", [OP_ARGMAX] = "argmax"};
  bp_status st = BP_OK;
  for (int op = OP_SUM; !st && op <= OP_ARGMAX; op++)
    st = CPU_IMPL_STRUCTURED(lib, names[op], reduce_kernel, (void *)(intptr_t)op);
  return st;
}
