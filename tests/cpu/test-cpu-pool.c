/*
 * The CPU plugin's thread pool at other sizes: every op family on tensors
 * past its parallel grain (32768 elements) with the pool at one thread
 * and at three, against the float64 reference of ref.c; the memory a
 * column reduction with many threads takes; and several host threads
 * calling at once.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "cases.h"
#include "harness.h"
#include "large.h"

/* ------------------------------------------------------------------------ */
/* The pool at one thread and at three                                      */
/* ------------------------------------------------------------------------ */

static const int32_t dts_1[] = {BP_FLOAT32, BP_BFLOAT16, BP_INT64, BP_UINT8};
static const int32_t dts_3[] = {BP_FLOAT64, BP_FLOAT16, BP_INT32, BP_BOOL};

/* Four dtypes each at one thread and at three (test-cpu-large has every
 * dtype with the pool's default size): BP_CPU_THREADS, the base seeds of
 * the targeted and of the random trials. */
#define POOL_CASES(X, fn)                                                               \
  X(fn, large_tensors_one_thread, "1", dts_1, NELEMS(dts_1), 0x1a46e002, 0x1a46e102)    \
  X(fn, large_tensors_three_threads, "3", dts_3, NELEMS(dts_3), 0x1a46e003, 0x1a46e103)
POOL_CASES(DEFINE_CASE, large_tensors_with)

/* ------------------------------------------------------------------------ */
/* Many threads, many callers                                               */
/* ------------------------------------------------------------------------ */

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

/* Load, a call that wakes the pool, unload: again and again, the process
 * keeps its pthread keys (the pool's key was never deleted: after about
 * 1,020 cycles pthread_key_create failed for every library), and its
 * thread count. */
static void reload_cycles(void) {
  pthread_key_t first, last;
  ok(pthread_key_create(&first, NULL) == 0);
  pthread_key_delete(first);
  const int cycles = 40;
  for (int i = 0; i < cycles; i++) {
    cpu_setup();
    rng r;
    rng_seed(&r, 0x7e10ad + (uint64_t)i);
    int64_t sz[] = {256, 1024}, all[] = {0, 1}, cnt;
    rt *ra;
    bp_tensor *a = gen_tensor(&r, BP_FLOAT32, 2, sz, LAY_CONTIG, VP_FINITE, &ra, NULL);
    ctx_set("sum of [256, 1024] float32 after %d reloads", i);
    bp_tensor *res = call_reduce("sum", a, all, 2, false);
    rt *w = ref_reduce(RR_SUM, ra, all, 2, false, BP_DTYPE_INVALID, &cnt);
    if (res) CLOSE(res, w, cnt, TOL_SUM);
    rt_free(w);
    rt_free(ra);
    bp_tensor_release(res);
    bp_tensor_release(a);
    cpu_done();
  }
  ok(pthread_key_create(&last, NULL) == 0);
  /* keys are handed out lowest free first: the same one if none leaked */
  cmp_ok((long)last - (long)first, "<", 4);
  pthread_key_delete(last);
}

int main(void) {
  static const tap_case cases[] = {
      POOL_CASES(LIST_CASE, _)
      TAP_CASE(column_pieces_memory),
      TAP_CASE(concurrent_callers),
      TAP_CASE(reload_cycles),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
