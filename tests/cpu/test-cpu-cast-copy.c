/*
 * The CPU plugin's cast, contiguous, fill_ and copy_ against the float64
 * reference of ref.c: every pair of dtypes on seeded random tensors in
 * every layout; the exact results the spec pins down (saturation, NaN,
 * truncation, wraparound, rounding to nearest-even); copy_ between
 * overlapping views of one storage; and copy_ from another device.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include <math.h>
#include <string.h>

#include "cases.h"
#include "harness.h"
#include "testutil.h"
#include "trials.h"

/* ------------------------------------------------------------------------ */
/* cast                                                                     */
/* ------------------------------------------------------------------------ */

static void cast_matrix(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++)
      for (int t = 0; t < 8; t++)
        cast_trial(all_dtypes[i], all_dtypes[j], trial_seed(0xca570000 + (i << 12) + (j << 8), t));
  cpu_done();
}

/* Exact results of `cast` that the spec pins down: saturation, NaN to 0,
 * truncation, wraparound, bool, and rounding to nearest-even. */
static void cast_exact(void) {
  cpu_setup();
  struct {
    int32_t from, to;
    double in;
    int64_t want;
  } to_int[] = {
      /* Floats saturate and truncate; NaN is 0, and true as a bool. */
      {BP_FLOAT32, BP_INT8, 127.9, 127},
      {BP_FLOAT32, BP_INT8, 128, 127},
      {BP_FLOAT32, BP_INT8, -128.9, -128},
      {BP_FLOAT32, BP_INT8, -129, -128},
      {BP_FLOAT32, BP_INT8, 1e10, 127},
      {BP_FLOAT32, BP_INT8, -INFINITY, -128},
      {BP_FLOAT32, BP_INT8, INFINITY, 127},
      {BP_FLOAT32, BP_INT8, NAN, 0},
      {BP_FLOAT32, BP_INT8, -0.5, 0},
      {BP_FLOAT32, BP_INT8, -1.5, -1},
      {BP_FLOAT64, BP_UINT8, -1, 0},
      {BP_FLOAT64, BP_UINT8, 255.9, 255},
      {BP_FLOAT64, BP_UINT8, 256, 255},
      {BP_FLOAT64, BP_UINT8, -0.9, 0},
      {BP_FLOAT64, BP_UINT8, NAN, 0},
      {BP_FLOAT64, BP_UINT8, -1e300, 0},
      {BP_FLOAT64, BP_INT64, 9.3e18, INT64_MAX},
      {BP_FLOAT64, BP_INT64, -9.3e18, INT64_MIN},
      {BP_FLOAT64, BP_INT64, -9223372036854775808.0, INT64_MIN},
      {BP_FLOAT64, BP_INT64, 9223372036854775808.0, INT64_MAX},
      {BP_FLOAT64, BP_INT64, 4611686018427387904.0, 4611686018427387904},
      {BP_FLOAT64, BP_INT64, NAN, 0},
      {BP_FLOAT64, BP_INT64, -INFINITY, INT64_MIN},
      {BP_FLOAT32, BP_INT32, 2147483520.0, 2147483520},
      {BP_FLOAT32, BP_INT32, 2147483648.0, INT32_MAX},
      {BP_FLOAT32, BP_INT32, -2147483648.0, INT32_MIN},
      {BP_FLOAT32, BP_INT32, -3e9, INT32_MIN},
      {BP_FLOAT64, BP_INT32, -2147483648.9, INT32_MIN},
      {BP_FLOAT64, BP_INT32, 2147483647.9, INT32_MAX},
      {BP_FLOAT16, BP_INT16, 65504, 32767},
      {BP_FLOAT16, BP_INT16, -INFINITY, -32768},
      {BP_FLOAT16, BP_INT16, -32768, -32768},
      {BP_FLOAT16, BP_UINT8, -2, 0},
      {BP_BFLOAT16, BP_INT32, 3e38, INT32_MAX},
      {BP_BFLOAT16, BP_INT64, -3e38, INT64_MIN},
      {BP_BFLOAT16, BP_INT8, NAN, 0},
      {BP_FLOAT16, BP_INT64, NAN, 0},
      {BP_FLOAT32, BP_BOOL, NAN, 1},
      {BP_FLOAT32, BP_BOOL, -0.0, 0},
      {BP_FLOAT64, BP_BOOL, 1e-300, 1},
      {BP_FLOAT16, BP_BOOL, INFINITY, 1},
      {BP_BFLOAT16, BP_BOOL, -0.0, 0},
      {BP_FLOAT64, BP_BOOL, 0.1, 1},
      /* Integers wrap; anything not 0 is true. */
      {BP_INT32, BP_INT8, 300, 44},
      {BP_INT64, BP_UINT8, -1, 255},
      {BP_UINT8, BP_INT8, 200, -56},
      {BP_INT16, BP_BOOL, -32768, 1},
      {BP_INT64, BP_INT32, 0x1p32 + 5, 5},
      {BP_INT8, BP_UINT8, -128, 128},
      {BP_INT64, BP_INT16, -65535, 1},
      {BP_BOOL, BP_INT64, 1, 1},
      {BP_UINT8, BP_BOOL, 0, 0},
      {BP_UINT8, BP_BOOL, 2, 1},
      {BP_INT8, BP_INT64, -7, -7},
      {BP_UINT8, BP_INT16, 255, 255},
  };
  for (size_t i = 0; i < NELEMS(to_int); i++) {
    ctx_set("cast(%s %.17g, %s)", dt_name(to_int[i].from), to_int[i].in, dt_name(to_int[i].to));
    bp_tensor *a = tensor_d(to_int[i].from, &to_int[i].in, 1);
    bp_tensor *res = call_cast(a, to_int[i].to);
    rt *w = lit_i(to_int[i].to, 1, (int64_t[]){1}, &to_int[i].want);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* Rounding to nearest-even, checked bit for bit: ties go to the even
   * neighbour, past the largest finite value is inf, subnormals round,
   * NaN stays NaN (even one whose payload lies in the bits dropped). */
  struct {
    int32_t from, to;
    uint64_t in_bits; /* the source's bit pattern (an integer's value) */
    uint64_t want;    /* the result's bit pattern */
  } rne[] = {
      {BP_FLOAT32, BP_FLOAT16, 0x3f801000, 0x3c00},  /* 1 + 2^-11: tie, down to even */
      {BP_FLOAT32, BP_FLOAT16, 0x3f803000, 0x3c02},  /* 1 + 3*2^-11: tie, up to even */
      {BP_FLOAT32, BP_FLOAT16, 0x3f801001, 0x3c01},  /* just above the tie */
      {BP_FLOAT32, BP_FLOAT16, 0x3f800fff, 0x3c00},  /* just below the tie */
      {BP_FLOAT32, BP_FLOAT16, 0x477fe000, 0x7bff},  /* 65504 */
      {BP_FLOAT32, BP_FLOAT16, 0x477fefff, 0x7bff},  /* just below 65520 */
      {BP_FLOAT32, BP_FLOAT16, 0x477ff000, 0x7c00},  /* 65520: tie, to inf */
      {BP_FLOAT32, BP_FLOAT16, 0xc77ff000, 0xfc00},  /* -65520 */
      {BP_FLOAT32, BP_FLOAT16, 0x33800000, 0x0001},  /* 2^-24, the least subnormal */
      {BP_FLOAT32, BP_FLOAT16, 0x33000000, 0x0000},  /* 2^-25: tie, to 0 */
      {BP_FLOAT32, BP_FLOAT16, 0x33c00000, 0x0002},  /* 1.5 * 2^-24: tie, to 2 */
      {BP_FLOAT32, BP_FLOAT16, 0x33000001, 0x0001},  /* just above 2^-25 */
      {BP_FLOAT32, BP_FLOAT16, 0x80000000, 0x8000},  /* -0.0 */
      {BP_FLOAT32, BP_FLOAT16, 0x387fe000, 0x0400},  /* 1023.5 * 2^-24: tie, up into the normals */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f808000, 0x3f80}, /* 1 + 2^-8: tie, down */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f818000, 0x3f82}, /* 1 + 3*2^-8: tie, up */
      {BP_FLOAT32, BP_BFLOAT16, 0x3f808001, 0x3f81}, /* just above the tie */
      {BP_FLOAT32, BP_BFLOAT16, 0x7f7fffff, 0x7f80}, /* FLT_MAX rounds to inf */
      {BP_FLOAT32, BP_BFLOAT16, 0x7f7f7fff, 0x7f7f}, /* below the tie: finite */
      {BP_FLOAT32, BP_BFLOAT16, 0x00010000, 0x0001}, /* a subnormal, exact */
      {BP_FLOAT32, BP_BFLOAT16, 0x00018000, 0x0002}, /* a subnormal tie, up to even */
      {BP_FLOAT64, BP_FLOAT16, 0x3ff0020000000000, 0x3c00},  /* 1 + 2^-11 */
      {BP_FLOAT64, BP_FLOAT16, 0x3ff0020000000001, 0x3c01},  /* just above it */
      {BP_FLOAT64, BP_BFLOAT16, 0x3ff0100000000000, 0x3f80}, /* 1 + 2^-8 */
      {BP_FLOAT64, BP_BFLOAT16, 0x3ff0300000000000, 0x3f82}, /* 1 + 3*2^-8 */
      {BP_FLOAT64, BP_FLOAT16, 0x40effe0000000000, 0x7c00},  /* 65520: tie, to inf */
      {BP_FLOAT16, BP_BFLOAT16, 0x3c01, 0x3f80},             /* 1 + 2^-10 to 8 bits: down */
      {BP_BFLOAT16, BP_FLOAT16, 0x4780, 0x7c00},             /* 65536 is past float16 */
      {BP_BFLOAT16, BP_FLOAT16, 0x3f81, 0x3c08},             /* 1 + 2^-7, exact */
      /* Integers round once, from their exact value. */
      {BP_INT32, BP_FLOAT16, 2049, 0x6800},                    /* tie, down to 2048 */
      {BP_INT32, BP_FLOAT16, 2051, 0x6802},                    /* tie, up to 2052 */
      {BP_INT16, BP_FLOAT16, 32767, 0x7800},                   /* 32768 */
      {BP_INT32, BP_FLOAT16, 65519, 0x7bff},                   /* below the tie: 65504 */
      {BP_INT32, BP_FLOAT16, 65520, 0x7c00},                   /* tie: inf */
      {BP_INT32, BP_BFLOAT16, 257, 0x4380},                    /* tie, down to 256 */
      {BP_INT32, BP_BFLOAT16, 259, 0x4382},                    /* tie, up to 260 */
      {BP_INT16, BP_BFLOAT16, -32767, 0xc700},                 /* -32768 */
      {BP_INT64, BP_BFLOAT16, 16842753, 0x4b81},               /* 2^24 + 2^16 + 1: above the tie */
      {BP_INT64, BP_FLOAT16, 2053, 0x6802},                    /* tie, down to 2052 */
      {BP_INT32, BP_FLOAT32, 16777217, 0x4b800000},            /* 2^24 + 1: tie, down */
      {BP_INT32, BP_FLOAT32, 16777219, 0x4b800002},            /* 2^24 + 3: tie, up */
      {BP_INT64, BP_FLOAT32, 0x1000001000000001, 0x5d800001},  /* 2^60 + 2^36 + 1: up */
      {BP_INT64, BP_FLOAT32, (uint64_t)INT64_MIN, 0xdf000000}, /* -2^63 */
      {BP_INT64, BP_FLOAT64, 9007199254740993, 0x4340000000000000},   /* 2^53 + 1: tie, down */
      {BP_INT64, BP_FLOAT64, 0x4000000000000201, 0x43d0000000000001}, /* 2^62 + 2^9 + 1: up */
      {BP_UINT8, BP_BFLOAT16, 255, 0x437f},                           /* exact in 8 bits */
      {BP_INT16, BP_BFLOAT16, 511, 0x4400},                           /* 9 bits: up to 512 */
      {BP_INT8, BP_FLOAT16, -128, 0xd800},
      {BP_BOOL, BP_BFLOAT16, 1, 0x3f80},
  };
  for (size_t i = 0; i < NELEMS(rne); i++) {
    ctx_set("cast(%s bits 0x%llx, %s) rounds to nearest-even", dt_name(rne[i].from),
            (unsigned long long)rne[i].in_bits, dt_name(rne[i].to));
    bp_tensor *a = tensor_zeros(rne[i].from, 0, NULL);
    if (dt_is_float(rne[i].from)) /* little-endian: the low bytes */
      memcpy(bp_tensor_get_view(a)->data, &rne[i].in_bits, bp_dtype_size(rne[i].from));
    else
      store_i(bp_tensor_get_view(a)->data, rne[i].from, (int64_t)rne[i].in_bits);
    bp_tensor *res = call_cast(a, rne[i].to);
    if (res) {
      uint64_t got = 0;
      memcpy(&got, bp_tensor_get_view(res)->data, bp_dtype_size(rne[i].to));
      if (got != rne[i].want)
        REPORT("rounding to nearest-even", "got bits 0x%llx, expected 0x%llx",
               (unsigned long long)got, (unsigned long long)rne[i].want);
    }
    bp_tensor_release(res);
    bp_tensor_release(a);
  }
  /* NaN of every float width stays NaN through every float cast. */
  {
    uint64_t nans[][2] = {{BP_FLOAT32, 0x7f800001},
                          {BP_FLOAT32, 0xffc00000},
                          {BP_FLOAT64, 0x7ff0000000000001},
                          {BP_FLOAT16, 0x7c01},
                          {BP_BFLOAT16, 0x7f81}};
    for (size_t i = 0; i < NELEMS(nans); i++)
      for (size_t j = 0; j < NELEMS(float_dtypes); j++) {
        int32_t from = (int32_t)nans[i][0], to = float_dtypes[j];
        ctx_set("cast(%s NaN bits 0x%llx, %s)", dt_name(from), (unsigned long long)nans[i][1],
                dt_name(to));
        bp_tensor *a = tensor_zeros(from, 0, NULL);
        memcpy(bp_tensor_get_view(a)->data, &nans[i][1], bp_dtype_size(from));
        bp_tensor *res = call_cast(a, to);
        if (res && !isnan(load_f(bp_tensor_get_view(res)->data, to)))
          REPORT("NaN stays NaN", "got %g", load_f(bp_tensor_get_view(res)->data, to));
        bp_tensor_release(res);
        bp_tensor_release(a);
      }
  }
  cpu_done();
}

/* ------------------------------------------------------------------------ */
/* contiguous, fill_, copy_                                                 */
/* ------------------------------------------------------------------------ */

static void contiguous_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 30; t++)
      contiguous_trial(all_dtypes[i], trial_seed(0xc0470000 + (i << 8), t));
  cpu_done();
}

static void fill_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (int t = 0; t < 30; t++) fill_trial(all_dtypes[i], trial_seed(0xf1110000 + (i << 8), t));
  cpu_done();
}

/* copy_ from every dtype to every dtype. */
static void copy_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++)
    for (size_t j = 0; j < NUM_DTYPES; j++)
      for (int t = 0; t < (i == j ? 12 : 4); t++)
        copy_trial(all_dtypes[i], all_dtypes[j], trial_seed(0xc0970000 + (i << 12) + (j << 8), t));
  cpu_done();
}

/* copy_ between views of one storage: the result is as if src were read
 * first, whichever way the two overlap. */
static void copy_overlap(void) {
  cpu_setup();
  const bp_op *op = core_op("copy_");
  for (int t = 0; t < 100; t++) {
    uint64_t seed = trial_seed(0xc0980000, t);
    rng r;
    rng_seed(&r, seed);
    int32_t dt = all_dtypes[rng_int(&r, 0, NUM_DTYPES - 1)];
    int kind = (int)rng_int(&r, 0, 4);
    /* Large runs (past the parallel grain) now and then. */
    int64_t n = rng_chance(&r, 0.1) ? rng_int(&r, 33000, 50000) : rng_int(&r, 2, 40);
    double u = rng_uniform(&r, 0, 1);
    int64_t shift = u < 0.3 ? 1 : u < 0.6 ? n - 1 : rng_int(&r, 1, n - 1);
    int64_t m = rng_int(&r, 2, 9);
    int64_t st[2], sr[2], sz[2], off_self = 0, off_src = 0, total;
    if (kind == 4) {
      /* Random 2-D views: self without self-overlap (row-major or
       * transposed, maybe strided), src with any strides, 0 included. */
      sz[0] = rng_int(&r, 1, 7);
      sz[1] = rng_int(&r, 1, 7);
      int64_t step = rng_int(&r, 1, 2);
      bool tr = rng_chance(&r, 0.5);
      st[tr ? 0 : 1] = step;
      st[tr ? 1 : 0] = step * sz[tr ? 0 : 1] + rng_int(&r, 0, 1);
      for (int d = 0; d < 2; d++) sr[d] = rng_int(&r, 0, 4);
      off_self = rng_int(&r, 0, 6);
      off_src = rng_int(&r, 0, 6);
      int64_t es = off_self + (sz[0] - 1) * st[0] + (sz[1] - 1) * st[1] + 1;
      int64_t er = off_src + (sz[0] - 1) * sr[0] + (sz[1] - 1) * sr[1] + 1;
      total = es > er ? es : er;
    } else {
      total = kind == 2 ? m * m : kind == 3 ? 2 * n + 1 : n + shift;
    }
    bp_tensor *base = gen_tensor(&r, dt, 1, &total, LAY_CONTIG, VP_GENERAL, NULL, NULL);
    bp_tensor *self = NULL, *src = NULL;
    const char *what = "";
    switch (kind) {
      case 0: /* self lies before src */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 0, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, shift, &src);
        what = "self = base[0:n], src = base[shift:shift+n]";
        break;
      case 1: /* src lies before self */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, shift, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 0, &src);
        what = "self = base[shift:shift+n], src = base[0:n]";
        break;
      case 2: /* an in-place transpose */
        bp_tensor_as_strided(base, 2, (int64_t[]){m, m}, (int64_t[]){m, 1}, 0, &self);
        bp_tensor_as_strided(base, 2, (int64_t[]){m, m}, (int64_t[]){1, m}, 0, &src);
        what = "self = M, src = M^T";
        break;
      case 3: /* every other element from a contiguous run that covers them */
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){2}, 0, &self);
        bp_tensor_as_strided(base, 1, &n, (int64_t[]){1}, 1, &src);
        what = "self = base[0::2], src = base[1:n+1]";
        break;
      default:
        bp_tensor_as_strided(base, 2, sz, st, off_self, &self);
        bp_tensor_as_strided(base, 2, sz, sr, off_src, &src);
        what = "random 2-D views";
        break;
    }
    if (kind == 4)
      ctx_set(
          "copy_ overlapping, %s, %s: self %s strides %s offset %lld, src strides %s offset "
          "%lld seed=0x%llx",
          dt_name(dt), what, shape_str(2, sz), shape_str(2, st), (long long)off_self,
          shape_str(2, sr), (long long)off_src, (unsigned long long)seed);
    else
      ctx_set("copy_ overlapping, %s, %s, n=%lld shift=%lld m=%lld seed=0x%llx", dt_name(dt), what,
              (long long)n, (long long)shift, (long long)m, (unsigned long long)seed);
    rt *want = read_tensor(src);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, src);
    bp_tensor *res = RUN(op, &s, .mut = self, .ret = RET_SELF);
    if (res) {
      bp_tensor *wt = tensor_from(&r, want, LAY_CONTIG, NULL);
      BITS(res, wt);
      bp_tensor_release(wt);
    }
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(src);
    bp_tensor_release(base);
  }
  /* One buffer seen in two dtypes (bp_tensor_from_blob twice), whose
   * elements differ in size: the float16 self[k], at byte 18 + 16 k, lies
   * inside the int64 src[k + 1], at byte 16 (k + 1), so copying element by
   * element would overwrite src[k + 1] before reading it. */
  {
    int64_t buf[8] = {1, 0, 2, 0, 3, 0, 4, 0};
    int64_t n3[] = {3};
    bp_tensor *src = NULL, *self = NULL;
    is_status(bp_tensor_from_blob(BP_CPU, BP_INT64, 1, n3, (int64_t[]){2}, buf, NULL, NULL, &src),
              BP_OK);
    is_status(bp_tensor_from_blob(BP_CPU, BP_FLOAT16, 1, n3, (int64_t[]){8}, (char *)buf + 18,
                                  NULL, NULL, &self),
              BP_OK);
    ctx_set("copy_ float16 self inside the next element of an int64 src (one buffer)");
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, src);
    bp_tensor *res = RUN(op, &s, .mut = self, .ret = RET_SELF);
    rt *w = lit_f(BP_FLOAT16, 1, n3, (double[]){1, 2, 3});
    if (res) CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(src);
  }
  cpu_done();
}

/* copy_ from another device: the CPU kernel moves the data through the
 * device interfaces, then converts and broadcasts. */
static void copy_cross_device(void) {
  cpu_setup();
  must_load("good");
  bp_tensor *g = on_gooddev(1, (int64_t[]){3}, (double[]){1.5, -2.25, 1e10});
  if (!g) {
    cpu_done();
    return;
  }
  struct {
    int32_t dt;
    int32_t ndim;
    int64_t sizes[2];
  } dsts[] = {
      {BP_FLOAT32, 1, {3}}, {BP_FLOAT64, 2, {2, 3}}, {BP_INT16, 2, {4, 3}}, {BP_BFLOAT16, 1, {3}}};
  for (size_t i = 0; i < NELEMS(dsts); i++) {
    ctx_set("copy_(cpu %s %s, gooddev float32 [3])", dt_name(dsts[i].dt),
            shape_str(dsts[i].ndim, dsts[i].sizes));
    rng r;
    rng_seed(&r, 0xde0 + i);
    bp_tensor *self = gen_tensor(&r, dsts[i].dt, dsts[i].ndim, dsts[i].sizes, LAY_WRITABLE,
                                 VP_GENERAL, NULL, NULL);
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, g);
    bp_tensor *res = RUN(core_op("copy_"), &s, .in = {g}, .mut = self, .ret = RET_SELF);
    rt *src = read_tensor(g), *ex = ref_expand(src, dsts[i].ndim, dsts[i].sizes);
    rt *want = ref_cast(ex, dsts[i].dt);
    if (res) {
      CLOSE(res, want, 1, TOL_PLAIN);
      is_int(bp_tensor_get_view(res)->device.type, BP_DEVICE_CPU);
    }
    rt_free(src);
    rt_free(ex);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
  }
  /* A strided view on gooddev: every other element of a [6]. */
  {
    bp_tensor *gb = on_gooddev(1, (int64_t[]){6}, (double[]){1, -1, 2, -2, 3, -3}), *gv = NULL;
    bp_tensor_as_strided(gb, 1, (int64_t[]){3}, (int64_t[]){2}, 0, &gv);
    ctx_set("copy_(cpu float64 [2, 3], gooddev float32 [3] with stride 2)");
    bp_tensor *self = tensor_zeros(BP_FLOAT64, 2, (int64_t[]){2, 3});
    bp_value slots[2];
    bp_stack s = BP_STACK_INIT(slots, 2);
    bp_stack_push_tensor(&s, self);
    bp_stack_push_tensor(&s, gv);
    bp_tensor *res = RUN(core_op("copy_"), &s, .in = {gv}, .mut = self, .ret = RET_SELF);
    rt *want = lit_f(BP_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 1, 2, 3});
    CLOSE(res, want, 1, TOL_PLAIN);
    rt_free(want);
    bp_tensor_release(res);
    bp_tensor_release(self);
    bp_tensor_release(gv);
    bp_tensor_release(gb);
  }
  bp_tensor_release(g);
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(cast_matrix),
      TAP_CASE(cast_exact),
      TAP_CASE(contiguous_all),
      TAP_CASE(fill_all),
      TAP_CASE(copy_all),
      TAP_CASE(copy_overlap),
      TAP_CASE(copy_cross_device),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
