/*
 * The CPU plugin's matmul against the float64 reference of ref.c for every
 * float dtype: vectors, matrices and broadcast batches of seeded random
 * operands in every layout, through BLAS (when the plugin finds one) and
 * through its own kernels; and hand-worked products.
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

/* matmul of dtype dt, `trials` times. */
static void matmul_dtype(int32_t dt, int trials, uint64_t base) {
  cpu_setup();
  for (int t = 0; t < trials; t++) matmul_trial(dt, trial_seed(base, t));
  cpu_done();
}

/* A case per float dtype: its trials and its base seed. */
#define MATMUL_CASES(X, fn)                            \
  X(fn, matmul_float32, BP_FLOAT32, 150, 0x3a7000000)  \
  X(fn, matmul_float64, BP_FLOAT64, 80, 0x3a7100000)   \
  X(fn, matmul_float16, BP_FLOAT16, 80, 0x3a7200000)   \
  X(fn, matmul_bfloat16, BP_BFLOAT16, 80, 0x3a7300000)
MATMUL_CASES(DEFINE_CASE, matmul_dtype)

/* The same products through the plugin's own kernels: BP_BLAS_LIBRARY=none
 * (read when the plugin loads; each case is a fresh process) keeps it from
 * loading a BLAS library. */
static void matmul_builtin_kernels(void) {
  setenv("BP_BLAS_LIBRARY", "none", 1);
  cpu_setup();
  for (size_t i = 0; i < NELEMS(float_dtypes); i++)
    for (int t = 0; t < 60; t++)
      matmul_trial(float_dtypes[i], trial_seed(0x3a7400000 + (i << 12), t));
  /* Large: row blocks in parallel, matrix-vector loops, a folded batch. */
  struct {
    int32_t dt, na, nb;
    int64_t sa[3], sb[3];
  } big[] = {{BP_FLOAT32, 2, 2, {200, 40}, {40, 190}},
             {BP_FLOAT64, 2, 1, {400, 150}, {150}},
             {BP_FLOAT32, 1, 2, {150}, {150, 400}},
             {BP_FLOAT16, 3, 2, {3, 120, 33}, {33, 100}},
             {BP_BFLOAT16, 3, 3, {2, 130, 20}, {2, 20, 140}}};
  rng r;
  rng_seed(&r, 0x3a75);
  for (size_t i = 0; i < NELEMS(big); i++) {
    int la, lb;
    rt *ra, *rb;
    bp_tensor *a = gen_tensor(&r, big[i].dt, big[i].na, big[i].sa, LAY_RANDOM, VP_UNIT, &ra, &la);
    bp_tensor *b = gen_tensor(&r, big[i].dt, big[i].nb, big[i].sb, LAY_RANDOM, VP_UNIT, &rb, &lb);
    ctx_set("large matmul without BLAS, %s %s %s x %s %s", dt_name(big[i].dt),
            shape_str(big[i].na, big[i].sa), layout_name(la), shape_str(big[i].nb, big[i].sb),
            layout_name(lb));
    bp_tensor *res = call_t("matmul", a, b, NULL);
    int64_t k;
    rt *w = ref_matmul(ra, rb, &k);
    CLOSE(res, w, k, TOL_SQRT);
    rt_free(w);
    rt_free(ra);
    rt_free(rb);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  cpu_done();
}

/* Hand-worked products: dot, vector-matrix, an empty inner dimension, and
 * 0 * inf, which must give NaN (no skipping of zeros). */
static void matmul_special(void) {
  cpu_setup();
  {
    ctx_set("matmul of two vectors is a 0-dim dot product");
    bp_tensor *a = tensor_f(BP_FLOAT32, (double[]){1, 2, 3}, 3);
    bp_tensor *b = tensor_f(BP_FLOAT32, (double[]){4, -5, 6}, 3);
    bp_tensor *res = call_t("matmul", a, b, NULL);
    rt *w = lit_f(BP_FLOAT32, 0, NULL, (double[]){12});
    CLOSE(res, w, 3, TOL_SQRT);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  {
    ctx_set("matmul vector [2] x matrix [2, 3], and matrix [3, 2] x vector [2]");
    bp_tensor *v = tensor_f(BP_FLOAT64, (double[]){1, -1}, 2);
    bp_tensor *mb = NULL, *mt = NULL;
    bp_tensor *m = tensor_f(BP_FLOAT64, (double[]){1, 2, 3, 4, 5, 6}, 6);
    bp_tensor_as_strided(m, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}, 0, &mb);
    bp_tensor_as_strided(m, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0, &mt); /* mb^T */
    bp_tensor *r1 = call_t("matmul", v, mb, NULL), *r2 = call_t("matmul", mt, v, NULL);
    rt *w1 = lit_f(BP_FLOAT64, 1, (int64_t[]){3}, (double[]){-3, -3, -3});
    rt *w2 = lit_f(BP_FLOAT64, 1, (int64_t[]){3}, (double[]){-3, -3, -3});
    CLOSE(r1, w1, 2, TOL_SQRT);
    CLOSE(r2, w2, 2, TOL_SQRT);
    rt_free(w1);
    rt_free(w2);
    bp_tensor *ts[] = {v, mb, mt, m, r1, r2};
    for (int k = 0; k < 6; k++) bp_tensor_release(ts[k]);
  }
  {
    ctx_set("matmul [3, 0] x [0, 4] gives zeros");
    bp_tensor *a = tensor_zeros(BP_FLOAT32, 2, (int64_t[]){3, 0});
    bp_tensor *b = tensor_zeros(BP_FLOAT32, 2, (int64_t[]){0, 4});
    bp_tensor *res = call_t("matmul", a, b, NULL);
    double z[12] = {0};
    rt *w = lit_f(BP_FLOAT32, 2, (int64_t[]){3, 4}, z);
    CLOSE(res, w, 1, TOL_SQRT);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  for (size_t i = 0; i < NELEMS(float_dtypes); i++) {
    int32_t dt = float_dtypes[i];
    ctx_set("matmul with 0 * inf and NaN, %s", dt_name(dt));
    bp_tensor *base = tensor_f(dt, (double[]){0, 1, 2, 3}, 4), *a = NULL, *b = NULL;
    bp_tensor_as_strided(base, 2, (int64_t[]){2, 2}, (int64_t[]){2, 1}, 0, &a);
    bp_tensor *bb = tensor_f(dt, (double[]){INFINITY, 1, 0, NAN}, 4);
    bp_tensor_as_strided(bb, 2, (int64_t[]){2, 2}, (int64_t[]){2, 1}, 0, &b);
    /* [[0, 1], [2, 3]] x [[inf, 1], [0, NaN]] = [[NaN, NaN], [inf, NaN]] */
    bp_tensor *res = call_t("matmul", a, b, NULL);
    rt *w = lit_f(dt, 2, (int64_t[]){2, 2}, (double[]){NAN, NAN, INFINITY, NAN});
    CLOSE(res, w, 2, TOL_SQRT);
    rt_free(w);
    bp_tensor *ts[] = {base, a, bb, b, res};
    for (int k = 0; k < 5; k++) bp_tensor_release(ts[k]);
  }
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      MATMUL_CASES(LIST_CASE, _)
      TAP_CASE(matmul_special),
      TAP_CASE(matmul_builtin_kernels),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
