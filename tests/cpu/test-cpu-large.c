/*
 * The CPU plugin on tensors past its parallel grain (32768 elements):
 * every op family for every dtype with the thread pool at its default
 * size, at one thread and at three, against the float64 reference of
 * ref.c; the memory a column reduction with many threads takes; and
 * several host threads calling at once.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "cases.h"
#include "harness.h"
#include "trials.h"

/* ------------------------------------------------------------------------ */
/* Tensors past the plugin's parallel grain (32768 elements)                */
/* ------------------------------------------------------------------------ */

/* Random trials of every op family at 33 000 to 90 000 elements, for the
 * dtypes in dts. */
static void large_random(const int32_t *dts, size_t ndt, uint64_t base) {
  set_large_shapes(true);
  for (size_t i = 0; i < ndt; i++) {
    int32_t dt = dts[i];
    uint64_t b = base + ((uint64_t)dt << 16);
    for (int op = RB_ADD; op <= RB_POW; op++)
      if (dt != BP_BOOL || (op != RB_SUB && op != RB_POW))
        binary_trial(op, dt, dt, b + (uint64_t)op);
    binary_trial(RB_ADD, dt, all_dtypes[(i + 3) % NUM_DTYPES], b + 10);
    binary_trial(RB_MUL, all_dtypes[(i + 7) % NUM_DTYPES], dt, b + 11);
    for (int op = RU_NEG; op <= RU_GELU_TANH; op++)
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

/* Targeted large cases: ties and NaN across the pool's chunks, and
 * matmul and layer_norm with large results. */
static void large_targeted(uint64_t base) {
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

/* Every op family on large tensors of the dtypes in dts, with
 * BP_CPU_THREADS set to `threads` (NULL: the pool's default size), which
 * the plugin reads when it loads (each case is a fresh process); the base
 * seeds of the targeted and of the random trials. */
static void large_tensors_with(const char *threads, const int32_t *dts, size_t ndt,
                               uint64_t targeted, uint64_t random) {
  if (threads) setenv("BP_CPU_THREADS", threads, 1);
  cpu_setup();
  large_targeted(targeted);
  large_random(dts, ndt, random);
  cpu_done();
}

static const int32_t dts_1[] = {BP_FLOAT32, BP_BFLOAT16, BP_INT64, BP_UINT8};
static const int32_t dts_3[] = {BP_FLOAT64, BP_FLOAT16, BP_INT32, BP_BOOL};

/* Every dtype with the default pool; four of them each at one thread and
 * at three. */
#define LARGE_CASES(X, fn)                                                              \
  X(fn, large_tensors, NULL, all_dtypes, NUM_DTYPES, 0x1a46e001, 0x1a46e101)            \
  X(fn, large_tensors_one_thread, "1", dts_1, NELEMS(dts_1), 0x1a46e002, 0x1a46e102)    \
  X(fn, large_tensors_three_threads, "3", dts_3, NELEMS(dts_3), 0x1a46e003, 0x1a46e103)
LARGE_CASES(DEFINE_CASE, large_tensors_with)

/* A column reduction with fewer blocks of outputs than threads splits
 * the reduced range too, keeping a partial result per output and piece:
 * only as many pieces as fill the threads, not a piece per thread for
 * every block.  sum(dim=0) of a [32, 32768] float32 (4 MiB, 8 blocks of
 * 4096 columns) with 64 threads wanted 84 MB of partial results (8
 * blocks x 64 pieces x 4096); 8 pieces per block need 10.5 MB. */
static void column_pieces_memory(void) {
  setenv("BP_CPU_THREADS", "64", 1);
  cpu_setup();
  rng r;
  rng_seed(&r, 0xc01d);
  int64_t sz[] = {32, 32768}, d0[] = {0}, cnt;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sz, LAY_CONTIG, VP_FINITE, &ra, NULL);
  ctx_set("sum(float32 [32, 32768], dim=0) with 64 threads");
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  bp_tensor *res = call_reduce("sum", a, d0, 1, false);
  getrusage(RUSAGE_SELF, &after);
  rt *w = ref_reduce(RR_SUM, ra, d0, 1, false, BP_DTYPE_INVALID, &cnt);
  if (res) CLOSE(res, w, cnt, TOL_SUM);
  long grown_mb = (after.ru_maxrss - before.ru_maxrss) / 1024;
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer's shadow of 64 new threads' stacks counts in the
   * resident set; the result is still checked above. */
  tap_diag("the resident set grew by %ld MB: not bounded under ThreadSanitizer", grown_mb);
#else
  if (grown_mb > 40)
    REPORT("memory", "the peak resident set grew by %ld MB for a 4 MB input (expected < 40)",
           grown_mb);
#endif
  rt_free(w);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
  cpu_done();
}

/* Several host threads calling at once: the pool runs one job at a time
 * and callers that find it busy run inline; every result must still be
 * right. */
typedef struct conc_job {
  const char *what;
  const bp_op *op;
  bp_tensor *a, *b;
  rt *want;
  int64_t n;
  int kind, iters;
  int failures;
  char first[512];
} conc_job;

static void *conc_worker(void *arg) {
  conc_job *j = arg;
  for (int i = 0; i < j->iters; i++) {
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, j->a);
    if (j->b) bp_stack_push_tensor(&s, j->b);
    bp_status st = bp_call(j->op, &s);
    bp_tensor *r = NULL;
    if (st || bp_stack_get_tensor(&s, 0, &r) != BP_OK) {
      if (!j->failures++)
        snprintf(j->first, sizeof j->first, "%s: call %d: %s: %s", j->what, i, bp_status_str(st),
                 bp_last_error());
      continue;
    }
    rt *got = read_tensor(r);
    int64_t bad = count_mismatches(got, j->want, j->n, j->kind);
    if (bad && !j->failures++)
      snprintf(j->first, sizeof j->first, "%s: call %d: %lld elements differ from the reference",
               j->what, i, (long long)bad);
    rt_free(got);
    bp_stack_release(&s);
  }
  return NULL;
}

static void concurrent_callers(void) {
  cpu_setup();
  rng r;
  rng_seed(&r, 0xc0cc);
  int64_t s2[] = {300, 200}, s1[] = {70001}, sm[] = {120, 64}, sn[] = {64, 130};
  rt *ra, *rb, *rc, *rm, *rn;
  bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, s2, LAY_PERM, VP_FINITE, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, BP_FLOAT32, 2, s2, LAY_CONTIG, VP_FINITE, &rb, NULL);
  bp_tensor *c = gen_tensor(&r, BP_FLOAT16, 1, s1, LAY_STRIDED, VP_FINITE, &rc, NULL);
  bp_tensor *m = gen_tensor(&r, BP_FLOAT32, 2, sm, LAY_CONTIG, VP_UNIT, &rm, NULL);
  bp_tensor *nmat = gen_tensor(&r, BP_FLOAT32, 2, sn, LAY_PERM, VP_UNIT, &rn, NULL);
  int64_t cnt, k;
  conc_job jobs[] = {
      {"add float32 [300, 200]", core_op("add"), a, b, ref_binary(RB_ADD, ra, rb, 1), 1, TOL_PLAIN,
       15, 0, ""},
      {"sum float32 [300, 200]", core_op("sum"), a, NULL,
       ref_reduce(RR_SUM, ra, NULL, 0, false, BP_DTYPE_INVALID, &cnt), 0, TOL_SUM, 15, 0, ""},
      {"exp float16 [70001]", core_op("exp"), c, NULL, ref_unary(RU_EXP, rc), 1, TOL_PLAIN, 15, 0,
       ""},
      {"matmul float32 [120, 64] x [64, 130]", core_op("matmul"), m, nmat, ref_matmul(rm, rn, &k),
       0, TOL_SQRT, 15, 0, ""},
      {"mul float32 [300, 200]", core_op("mul"), b, a, ref_binary(RB_MUL, rb, ra, 1), 1, TOL_PLAIN,
       15, 0, ""},
  };
  jobs[1].n = cnt;
  jobs[3].n = k;
  ctx_set("concurrent callers");
  pthread_t th[NELEMS(jobs)];
  for (size_t i = 0; i < NELEMS(jobs); i++)
    ok(pthread_create(&th[i], NULL, conc_worker, &jobs[i]) == 0);
  for (size_t i = 0; i < NELEMS(jobs); i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < NELEMS(jobs); i++) {
    if (jobs[i].failures)
      REPORT("concurrent calls", "%d of %d calls failed; the first: %s", jobs[i].failures,
             jobs[i].iters, jobs[i].first);
    rt_free(jobs[i].want);
  }
  rt *rs[] = {ra, rb, rc, rm, rn};
  for (size_t i = 0; i < NELEMS(rs); i++) rt_free(rs[i]);
  bp_tensor *ts[] = {a, b, c, m, nmat};
  for (size_t i = 0; i < NELEMS(ts); i++) bp_tensor_release(ts[i]);
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      LARGE_CASES(LIST_CASE, _)
      TAP_CASE(column_pieces_memory),
      TAP_CASE(concurrent_callers),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
