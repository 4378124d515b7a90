/*
 * The CPU plugin's softmax, log_softmax and layer_norm against the
 * float64 reference of ref.c for every float dtype: seeded random
 * tensors in every layout, hand-worked values, and the blocked paths
 * (softmax along a dimension followed by contiguous ones, layer_norm of
 * rows that are neighbours in memory).
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "cases.h"
#include "harness.h"
#include "trials.h"

static void softmax_all(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 40; t++) {
      softmax_trial(false, float_dtypes[i], trial_seed(0x50f70000 + (i << 8), t));
      softmax_trial(true, float_dtypes[i], trial_seed(0x50f80000 + (i << 8), t));
    }
  /* Hand-worked: the stable form, -inf, +inf, an all -inf slice, 0-dim. */
  struct {
    int32_t dt;
    double in[3], sm[3], lsm[3];
  } hw[] = {
      {BP_FLOAT32,
       {1, 2, 3},
       {0.09003057317038046, 0.24472847105479767, 0.6652409557748219},
       {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806}},
      {BP_FLOAT32,
       {1000, 1000, -INFINITY},
       {0.5, 0.5, 0},
       {-0.6931471805599453, -0.6931471805599453, -INFINITY}},
      {BP_FLOAT16,
       {10000, 10000, 10000},
       {1.0 / 3, 1.0 / 3, 1.0 / 3},
       {-1.0986122886681098, -1.0986122886681098, -1.0986122886681098}},
      {BP_FLOAT64, {INFINITY, 0, 1}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
      {BP_BFLOAT16, {-INFINITY, -INFINITY, -INFINITY}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
      {BP_FLOAT64, {NAN, 0, 1}, {NAN, NAN, NAN}, {NAN, NAN, NAN}},
  };
  int64_t n3[] = {3};
  for (size_t i = 0; i < NELEMS(hw); i++)
    for (int lg = 0; lg < 2; lg++) {
      ctx_set("%s(%s) hand-worked values #%zu", lg ? "log_softmax" : "softmax", dt_name(hw[i].dt),
              i);
      bp_tensor *a = tensor_f(hw[i].dt, hw[i].in, 3);
      bp_value slots[2];
      bp_stack s = BP_STACK_INIT(slots, 2);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_int(&s, -1);
      bp_tensor *res = RUN(core_op(lg ? "log_softmax" : "softmax"), &s, .in = {a}, .ret = RET_NEW);
      rt *w = lit_f(hw[i].dt, 1, n3, lg ? hw[i].lsm : hw[i].sm);
      CLOSE(res, w, 3, TOL_SQRT);
      rt_free(w);
      bp_tensor_release(res);
      bp_tensor_release(a);
    }
  {
    ctx_set("softmax and log_softmax of a 0-dim tensor");
    bp_tensor *a = tensor_zeros(BP_FLOAT32, 0, NULL);
    store_f(bp_tensor_get_view(a)->data, BP_FLOAT32, 7.5);
    for (int lg = 0; lg < 2; lg++) {
      bp_value slots[2];
      bp_stack s = BP_STACK_INIT(slots, 2);
      bp_stack_push_tensor(&s, a);
      bp_stack_push_int(&s, lg ? 0 : -1);
      bp_tensor *res = RUN(core_op(lg ? "log_softmax" : "softmax"), &s, .in = {a}, .ret = RET_NEW);
      rt *w = lit_f(BP_FLOAT32, 0, NULL, (double[]){lg ? 0.0 : 1.0});
      CLOSE(res, w, 1, TOL_SQRT);
      rt_free(w);
      bp_tensor_release(res);
    }
    bp_tensor_release(a);
  }
  cpu_done();
}

static void layer_norm(void) {
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 50; t++)
      layer_norm_trial(float_dtypes[i], trial_seed(0x1a7e0000 + (i << 8), t));
  {
    /* x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25. */
    ctx_set("layer_norm hand-worked, eps=0, with weight and bias");
    bp_tensor *x = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4}, 4);
    bp_tensor *w = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4}, 4);
    bp_tensor *b = tensor_f(BP_FLOAT64, (double[]){0, 0, 0, 1}, 4);
    int64_t ns[] = {4};
    bp_value slots[5];
    bp_stack s = BP_STACK_INIT(slots, 5);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, ns, 1);
    bp_stack_push_tensor(&s, w);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, 0);
    bp_tensor *res = RUN(core_op("layer_norm"), &s, .in = {x, w, b}, .ret = RET_NEW);
    double k = 1 / sqrt(1.25);
    rt *want =
        lit_f(BP_FLOAT64, 1, ns, (double[]){-1.5 * k, -0.5 * 2 * k, 0.5 * 3 * k, 1.5 * 4 * k + 1});
    CLOSE(res, want, 4, TOL_SQRT);
    rt_free(want);
    bp_tensor *ts[] = {res, x, w, b};
    for (int i = 0; i < 4; i++) bp_tensor_release(ts[i]);
  }
  {
    /* Rows of one value (0.1, 0.7, 1.1: their float64 sums divided by 7
     * are not the value), eps=0: the variance is exactly 0 and every
     * result 0/0, NaN, in the plugin and in the reference alike. */
    int64_t sz[] = {3, 7}, ns[] = {7};
    rt *rx = rt_new(BP_FLOAT64, 2, sz);
    for (int64_t i = 0; i < 21; i++) rx->f[i] = i < 7 ? 0.1 : i < 14 ? 0.7 : 1.1;
    rt *nan = rt_new(BP_FLOAT64, 2, sz);
    for (int64_t i = 0; i < 21; i++) nan->f[i] = NAN;
    rng r;
    rng_seed(&r, 0x1a7e0001);
    bp_tensor *x = tensor_from(&r, rx, LAY_CONTIG, NULL);
    ctx_set("layer_norm of constant rows, eps=0: the reference");
    rt *want = ref_layer_norm(rx, 1, NULL, NULL, 0);
    bp_tensor *wt = tensor_from(&r, want, LAY_CONTIG, NULL);
    CLOSE(wt, nan, 1, TOL_PLAIN);
    ctx_set("layer_norm of constant rows, eps=0");
    check_layer_norm(x, rx, 1, ns, NULL, NULL, NULL, NULL, 0);
    rt_free(want);
    rt_free(nan);
    bp_tensor_release(wt);
  }
  cpu_done();
}

/*
 * softmax along a dimension followed by contiguous ones is computed for
 * blocks of 64 columns at once: copied into a buffer with their max, then
 * their exponentials and sums 32 columns at a time.  Blocks whose buffer
 * would exceed 2 MiB (columns of more than 8192 float32 or 4096 float64
 * rows) are computed 8 rows at a time with a running max instead.
 * layer_norm of rows that are neighbours in memory (a transposed input) is
 * computed for blocks of rows turned around into a buffer of 512 KiB, or
 * of 128 rows at once where fewer than 8 rows fit.  Sizes with remainders
 * everywhere, every float dtype, and values that grow along the softmax
 * dimension, so that the running max changes in every step and the sums
 * are rescaled.
 */
static void softmax_columns_case(bool log_, int32_t dt, int32_t n, const int64_t *sizes,
                                 int64_t dim, int prof, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_CONTIG, prof, &ra, NULL);
  const char *name = log_ ? "log_softmax" : "softmax";
  ctx_set("columns %s(%s %s, dim=%lld) seed=0x%llx", name, dt_name(dt), shape_str(n, sizes),
          (long long)dim, (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, dim);
  bp_tensor *res = RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_softmax(ra, dim, log_);
  if (res) CLOSE(res, want, sizes[dim], TOL_SQRT);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

/* x[l][c] = slope * l + c / 64 along dim 0 of a [len, cols] matrix, with
 * a -inf column, a NaN in another, and columns whose first rows are -inf
 * (masked): 8 rows (a whole step of the running max), 11, and 1.  Three
 * more have a NaN among such leading rows, where the running max is still
 * -inf, which must make the whole column NaN: 8 NaN rows, -inf rows with a
 * NaN at row 3, and 12 -inf rows with a NaN at row 9.  Two have a +inf. */
static void softmax_growing(bool log_, int32_t dt, int64_t len, int64_t cols, double slope) {
  int64_t sz[2] = {len, cols};
  rt *v = rt_new(dt, 2, sz);
  for (int64_t l = 0; l < len; l++)
    for (int64_t c = 0; c < cols; c++) v->f[l * cols + c] = round_to(dt, slope * (double)l + (double)c / 64);
  for (int64_t l = 0; l < len; l++) v->f[l * cols + 1] = -INFINITY;
  v->f[(len / 2) * cols + 2] = NAN;
  static const int64_t masked[][2] = {{3, 8}, {4, 11}, {5, 1}}; /* column, leading rows */
  for (size_t k = 0; k < NELEMS(masked); k++)
    for (int64_t l = 0; l < masked[k][1] && l < len; l++) v->f[l * cols + masked[k][0]] = -INFINITY;
  static const int64_t nan_masked[][3] = {{6, 0, -1}, {7, 8, 3}, {8, 12, 9}}; /* column, -inf rows, NaN row */
  for (size_t k = 0; k < NELEMS(nan_masked); k++) {
    int64_t c = nan_masked[k][0];
    for (int64_t l = 0; l < nan_masked[k][1] && l < len; l++) v->f[l * cols + c] = -INFINITY;
    if (nan_masked[k][2] < 0)
      for (int64_t l = 0; l < 8 && l < len; l++) v->f[l * cols + c] = NAN;
    else if (nan_masked[k][2] < len)
      v->f[nan_masked[k][2] * cols + c] = NAN;
  }
  /* +inf makes its column NaN (e^(inf - inf)): one in the middle of a
   * column, and one in its first row after a NaN-free -inf. */
  if (cols > 10) {
    v->f[(len / 3) * cols + 9] = INFINITY;
    v->f[10] = -INFINITY;
    if (len > 1) v->f[cols + 10] = INFINITY;
  }
  bp_tensor *a = from_rt(v);
  const char *name = log_ ? "log_softmax" : "softmax";
  ctx_set("columns %s(%s [%lld, %lld] growing by %g along dim 0)", name, dt_name(dt),
          (long long)len, (long long)cols, slope);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, 0);
  bp_tensor *res = RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_softmax(v, 0, log_);
  if (res) CLOSE(res, want, len, TOL_SQRT);
  rt_free(want);
  rt_free(v);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

/* A softmax case's shape and dim. */
typedef struct col_shape {
  int32_t n;
  int64_t sizes[3];
  int64_t dim;
} col_shape;

/* Wide matrices along dim 0 (1024 columns and more, as many blocks of 64
 * columns as a thread takes): a remainder of 4 columns, rows of 1, 16 (a
 * step of the first pass) and 17, outer slabs; values that grow so that
 * the running max changes in every step, with masked and NaN columns. */
static void softmax_wide_columns(void) {
  cpu_setup();
  static const col_shape shapes[] = {
      {2, {37, 1024}, 0}, {2, {20, 1040}, 0}, {2, {17, 4100}, 0}, {2, {1, 1024}, 0},
      {2, {16, 1030}, 0}, {3, {3, 5, 2050}, 1}, {3, {2, 33, 1100}, -2},
  };
  for (size_t k = 0; k < NELEMS(shapes); k++)
    for (int lg = 0; lg < 2; lg++)
      softmax_columns_case(lg, BP_FLOAT32, shapes[k].n, shapes[k].sizes, shapes[k].dim,
                           k % 2 ? VP_ACCUM : VP_FINITE,
                           trial_seed(0x50c20000 + (uint64_t)lg, (int64_t)k));
  for (int lg = 0; lg < 2; lg++) {
    softmax_growing(lg, BP_FLOAT32, 203, 1100, 0.25);
    softmax_growing(lg, BP_FLOAT32, 203, 1100, -0.25);
    softmax_growing(lg, BP_FLOAT32, 77, 1030, 3);
  }
  cpu_done();
}

static void softmax_columns(void) {
  cpu_setup();
  static const col_shape shapes[] = {
      {2, {67, 131}, 0}, {3, {5, 37, 133}, 1}, {2, {9, 300}, 0},
      {2, {1000, 3}, -2}, {3, {17, 2, 129}, 0}, {3, {3, 300, 70}, -2},
      /* around a block of 64 columns and a tile of 16 rows of results */
      {2, {15, 63}, 0}, {2, {16, 64}, 0}, {2, {17, 65}, 0},
  };
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (size_t k = 0; k < NELEMS(shapes); k++)
      for (int lg = 0; lg < 2; lg++) {
        uint64_t seed = trial_seed(0x50c00000 + (i << 8) + (uint64_t)lg, (int64_t)k);
        softmax_columns_case(lg, float_dtypes[i], shapes[k].n, shapes[k].sizes, shapes[k].dim,
                             k % 2 ? VP_ACCUM : VP_FINITE, seed);
      }
  /* Long columns, on either side of the buffer's limit. */
  static const struct {
    int32_t dt;
    int64_t sizes[2];
  } tall[] = {
      {BP_FLOAT32, {8192, 130}}, {BP_FLOAT32, {8300, 130}},
      {BP_FLOAT64, {4096, 131}}, {BP_FLOAT64, {4100, 131}},
      {BP_BFLOAT16, {8300, 140}},
  };
  for (size_t k = 0; k < NELEMS(tall); k++)
    for (int lg = 0; lg < 2; lg++)
      softmax_columns_case(lg, tall[k].dt, 2, tall[k].sizes, 0, VP_FINITE,
                           trial_seed(0x50c10000 + (uint64_t)lg, (int64_t)k));
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int lg = 0; lg < 2; lg++) {
      softmax_growing(lg, float_dtypes[i], 203, 131, 0.25);
      softmax_growing(lg, float_dtypes[i], 203, 131, -0.25);
      softmax_growing(lg, float_dtypes[i], 77, 140, 3);
    }
  for (int lg = 0; lg < 2; lg++) {
    softmax_growing(lg, BP_FLOAT32, 8300, 131, 0.001);
    softmax_growing(lg, BP_FLOAT64, 4100, 131, -0.001);
  }
  cpu_done();
  softmax_wide_columns();
}

static void layer_norm_columns_case(int32_t dt, int32_t n, const int64_t *sizes, int32_t nnorm,
                                    int prof, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  const int64_t *ns = sizes + (n - nnorm);
  rt *rx, *rw = NULL, *rb = NULL;
  int lx;
  bp_tensor *x = gen_tensor(&r, dt, n, sizes, LAY_PERM, prof, &rx, &lx);
  bool hw = rng_chance(&r, 0.6), hb = rng_chance(&r, 0.6);
  bp_tensor *w = hw ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rw, NULL) : NULL;
  bp_tensor *b = hb ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rb, NULL) : NULL;
  const bp_tensor_view *v = bp_tensor_get_view(x);
  ctx_set("columns layer_norm(%s %s strides %s, %s, weight %d, bias %d) seed=0x%llx",
          dt_name(dt), shape_str(n, sizes), shape_str(n, v->strides), shape_str(nnorm, ns), hw,
          hb, (unsigned long long)seed);
  check_layer_norm(x, rx, nnorm, ns, w, rw, b, rb, 1e-5);
}

static void layer_norm_columns(void) {
  cpu_setup();
  static const struct {
    int32_t n, nnorm;
    int64_t sizes[4];
  } shapes[] = {
      {2, 1, {131, 67}}, {2, 1, {300, 130}}, {2, 1, {5, 200}},  {3, 2, {133, 9, 7}},
      {3, 1, {4, 129, 65}}, {4, 2, {3, 70, 5, 6}}, {3, 3, {7, 9, 11}},
      /* Around the buffered path's block of 512 KiB, 4096 elements a row:
       * 32 float32 rows, 16 float64, 64 float16 or bfloat16; rows of 63 to
       * 65 elements around a step of its transposition; rows too long for
       * 8 of them in the buffer (the path above it); 2-element rows. */
      {2, 1, {33, 4096}}, {2, 1, {65, 4096}}, {2, 1, {40, 65}},
      {2, 1, {40, 63}}, {2, 1, {9, 20000}}, {2, 1, {129, 2}},
  };
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (size_t k = 0; k < NELEMS(shapes); k++)
      for (int t = 0; t < 2; t++)
        layer_norm_columns_case(float_dtypes[i], shapes[k].n, shapes[k].sizes, shapes[k].nnorm,
                                t ? VP_ACCUM : VP_FINITE,
                                trial_seed(0x1a7c0000 + (i << 8) + (uint64_t)t, (int64_t)k));
  cpu_done();
}

/*
 * Results of at least BP_CPU_STREAM_BYTES bytes go out with non-temporal
 * stores, through buffers (log_softmax, layer_norm and the column paths;
 * see plugins/cpu/stream.c).  The default, the last-level cache's size,
 * leaves every result of the cases above to plain stores; with 0 every
 * result streams, and the cases run again: rows of every length (1, odd
 * lengths whose rows start unaligned, longer than the 1024-element stretch
 * layer_norm streams at a time, longer than the stack buffer log_softmax
 * streams a row through), -inf, +inf and NaN in rows, column blocks.  The
 * setting is read when the plugin loads, which each case does.
 */
static void softmax_all(void);
static void streamed(void) {
  setenv("BP_CPU_STREAM_BYTES", "0", 1);
  softmax_all();
  layer_norm();
  softmax_columns();
  layer_norm_columns();
  cpu_setup();
  static const int64_t lens[] = {1, 3, 17, 1023, 1025, 2500, 8193};
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (size_t k = 0; k < NELEMS(lens); k++) {
      int64_t sizes[2] = {5, lens[k]};
      uint64_t seed = trial_seed(0x57e40000 + (i << 8), (int64_t)k);
      for (int lg = 0; lg < 2; lg++)
        softmax_columns_case(lg, float_dtypes[i], 2, sizes, 1, VP_FINITE, seed);
      rng r;
      rng_seed(&r, seed);
      rt *rx;
      bp_tensor *x = gen_tensor(&r, float_dtypes[i], 2, sizes, LAY_CONTIG, VP_FINITE, &rx, NULL);
      ctx_set("streamed layer_norm(%s [5, %lld])", dt_name(float_dtypes[i]), (long long)lens[k]);
      check_layer_norm(x, rx, 1, sizes + 1, NULL, NULL, NULL, NULL, 1e-5);
    }
  cpu_done();
  unsetenv("BP_CPU_STREAM_BYTES");
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(softmax_all),
      TAP_CASE(layer_norm),
      TAP_CASE(softmax_columns),
      TAP_CASE(layer_norm_columns),
      TAP_CASE(streamed),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
