/* tests/cpu/large.c - see large.h. */
#define _POSIX_C_SOURCE 200809L
#include "large.h"

#include <math.h>
#include <stdlib.h>

#include "cases.h"
#include "trials.h"

void large_random(const int32_t *dts, size_t ndt, uint64_t base) {
  set_large_shapes(true);
  for (size_t i = 0; i < ndt; i++) {
    int32_t dt = dts[i];
    uint64_t b = base + ((uint64_t)dt << 16);
    for (int op = RB_ADD; op <= RB_POW; op++)
      if (dt != BP_BOOL || (op != RB_SUB && op != RB_POW))
        binary_trial(op, dt, dt, b + (uint64_t)op);
    binary_trial(RB_ADD, dt, all_dtypes[(i + 3) % NUM_DTYPES], b + 10);
    binary_trial(RB_MUL, all_dtypes[(i + 7) % NUM_DTYPES], dt, b + 11);
    for (int op = RU_NEG; op <= RU_SILU; op++)
      if (dt != BP_BOOL || op > RU_RELU) unary_trial(op, dt, b + 20 + (uint64_t)op);
    for (int t = 0; t < 2; t++) {
      reduce_trial(RR_SUM, dt, b + 40 + (uint64_t)t, false);
      if (dt_is_float(dt)) reduce_trial(RR_MEAN, dt, b + 42 + (uint64_t)t, false);
      reduce_trial(RR_AMAX, dt, b + 44 + (uint64_t)t, false);
      reduce_trial(RR_AMIN, dt, b + 46 + (uint64_t)t, false);
      if (dt != BP_BOOL) argmax_trial(dt, b + 48 + (uint64_t)t);
    }
    reduce_trial(RR_SUM, dt, b + 50, true);
    cast_trial(dt, all_dtypes[(i + 1) % NUM_DTYPES], b + 60);
    cast_trial(dt, all_dtypes[(i + 5) % NUM_DTYPES], b + 61);
    cast_trial(dt, dt, b + 62);
    copy_trial(dt, all_dtypes[(i + 2) % NUM_DTYPES], b + 70);
    copy_trial(dt, dt, b + 71);
    fill_trial(dt, b + 72);
    contiguous_trial(dt, b + 73);
    where_trial(dt, all_dtypes[(i + 4) % NUM_DTYPES], b + 74);
    if (dt_is_float(dt)) {
      softmax_trial(false, dt, b + 80);
      softmax_trial(true, dt, b + 81);
      layer_norm_trial(dt, b + 82);
      matmul_trial(dt, b + 83);
    }
  }
  set_large_shapes(false);
}

void large_targeted(uint64_t base) {
  rng r;
  rng_seed(&r, base);
  {
    /* argmax over many ties must return the first, across chunks; NaN
     * far into the tensor, twice. */
    int64_t sz[] = {70001};
    rt *ra;
    bp_tensor *a = gen_tensor(&r, BP_INT8, 1, sz, LAY_CONTIG, VP_GENERAL, &ra, NULL);
    ctx_set("large argmax int8 [70001] seed=0x%llx", (unsigned long long)base);
    bp_tensor *res = call_t("argmax", a, NULL, NULL);
    rt *w = ref_argmax(ra, false, 0, false);
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    rt_free(ra);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor *f = gen_tensor(&r, BP_FLOAT32, 1, sz, LAY_CONTIG, VP_FINITE, NULL, NULL);
    float *fd = bp_tensor_get_view(f)->data;
    fd[50001] = NAN;
    fd[60001] = NAN;
    fd[33] = 100;
    ctx_set("large argmax/amax/amin float32 [70001] with NaN at 50001 and 60001");
    res = call_t("argmax", f, NULL, NULL);
    w = lit_i(BP_INT64, 0, NULL, (int64_t[]){50001});
    CLOSE(res, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(res);
    bp_tensor *r2 = call_reduce("amax", f, NULL, 0, false);
    bp_tensor *r3 = call_reduce("amin", f, NULL, 0, false);
    w = lit_f(BP_FLOAT32, 0, NULL, (double[]){NAN});
    CLOSE(r2, w, 1, TOL_PLAIN);
    CLOSE(r3, w, 1, TOL_PLAIN);
    rt_free(w);
    bp_tensor_release(r2);
    bp_tensor_release(r3);
    bp_tensor_release(f);
  }
  {
    /* Sums of every dtype over each dim of a transposed [263, 131]. */
    int64_t sa[] = {263, 131}, d0[] = {0}, d1[] = {-1};
    const int64_t *dl[] = {d0, d0, d1};
    for (size_t i = 0; i < NUM_DTYPES; i++)
      for (int k = 0; k < 3; k++) {
        int32_t dt = all_dtypes[i];
        rt *ra;
        bp_tensor *a = gen_tensor(&r, dt, 2, sa, LAY_PERM, VP_ACCUM, &ra, NULL);
        ctx_set("large sum %s [263, 131] transposed, dims #%d seed=0x%llx", dt_name(dt), k,
                (unsigned long long)base);
        int64_t cnt;
        bp_tensor *res = call_reduce("sum", a, dl[k], k ? 1 : 0, k == 1);
        rt *w = ref_reduce(RR_SUM, ra, dl[k], k ? 1 : 0, k == 1, BP_DTYPE_INVALID, &cnt);
        CLOSE(res, w, cnt, TOL_SUM);
        rt_free(w);
        rt_free(ra);
        bp_tensor_release(res);
        bp_tensor_release(a);
      }
  }
  {
    /* matmul with a large result, and a batched one; layer_norm rows. */
    int64_t sa[] = {200, 8}, sb[] = {8, 200}, ba[] = {4, 100, 12}, bb[] = {12, 90};
    rt *ra, *rb;
    bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sa, LAY_PERM, VP_UNIT, &ra, NULL);
    bp_tensor *b = gen_tensor(&r, BP_FLOAT32, 2, sb, LAY_CONTIG, VP_UNIT, &rb, NULL);
    ctx_set("large matmul float32 [200, 8] x [8, 200] seed=0x%llx", (unsigned long long)base);
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
    a = gen_tensor(&r, BP_BFLOAT16, 3, ba, LAY_CONTIG, VP_UNIT, &ra, NULL);
    b = gen_tensor(&r, BP_BFLOAT16, 2, bb, LAY_PERM, VP_UNIT, &rb, NULL);
    ctx_set("large matmul bfloat16 [4, 100, 12] x [12, 90] seed=0x%llx", (unsigned long long)base);
    res = call_t("matmul", a, b, NULL);
    w = ref_matmul(ra, rb, &k);
    CLOSE(res, w, k, TOL_SQRT);
    rt_free(w);
    rt_free(ra);
    rt_free(rb);
    bp_tensor_release(res);
    bp_tensor_release(a);
    bp_tensor_release(b);
    int64_t sx[] = {40, 1000};
    rt *rx;
    bp_tensor *x = gen_tensor(&r, BP_FLOAT32, 2, sx, LAY_CONTIG, VP_FINITE, &rx, NULL);
    ctx_set("large layer_norm float32 [40, 1000] seed=0x%llx", (unsigned long long)base);
    bp_value slots[5];
    bp_stack s = BP_STACK_INIT(slots, 5);
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, (int64_t[]){1000}, 1);
    res = RUN(core_op("layer_norm"), &s, .in = {x}, .ret = RET_NEW);
    w = ref_layer_norm(rx, 1, NULL, NULL, 1e-5);
    CLOSE(res, w, 1000, TOL_SQRT);
    rt_free(w);
    rt_free(rx);
    bp_tensor_release(res);
    bp_tensor_release(x);
  }
}

void large_tensors_with(const char *threads, const int32_t *dts, size_t ndt, uint64_t targeted,
                        uint64_t random) {
  if (threads) setenv("BP_CPU_THREADS", threads, 1);
  cpu_setup();
  large_targeted(targeted);
  large_random(dts, ndt, random);
  cpu_done();
}
