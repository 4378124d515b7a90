/*
 * The CPU plugin's elementwise ops on strided operands that it walks in
 * tiles (add, mul, where, a unary op, cast, contiguous, copy_ and fill_ of
 * transposed and permuted tensors), for every dtype, against the float64
 * reference of ref.c.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */

#include "cases.h"
#include "harness.h"
#include "trials.h"

/*
 * An input that steps 64 bytes or more per element along the innermost
 * dimension (a transposed or permuted view) makes the plugin walk two
 * dimensions in 64 x 64 tiles and copy that input through a buffer.  The
 * shapes here have tiles with remainders (67 = 64 + 3, 131 = 2 * 64 + 3),
 * short inner runs, broadcast operands beside the transposed ones, and 3-
 * and 4-D permutations; a tile misplaced, skipped or copied with the
 * wrong element size changes the result.
 */
typedef struct tiled_shape {
  int32_t n, nb;
  int64_t sa[4], sb[4]; /* b's shape broadcasts to a's */
  int la, lb;
} tiled_shape;

static const tiled_shape tiled_shapes[] = {
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_CONTIG},
    {2, 2, {67, 131}, {67, 131}, LAY_CONTIG, LAY_PERM},
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_PERM},
    {2, 1, {67, 131}, {131}, LAY_PERM, LAY_CONTIG},         /* a broadcast row */
    {2, 2, {67, 131}, {67, 1}, LAY_PERM, LAY_CONTIG},       /* a broadcast column */
    {2, 2, {67, 131}, {67, 131}, LAY_PERM, LAY_BCAST},
    {2, 2, {130, 5}, {130, 5}, LAY_CONTIG, LAY_PERM},       /* inner runs of 5 */
    {2, 2, {5, 130}, {5, 130}, LAY_PERM, LAY_STRIDED},
    {3, 3, {5, 70, 66}, {5, 70, 66}, LAY_PERM, LAY_PERM},
    {3, 3, {66, 3, 65}, {66, 3, 65}, LAY_CONTIG, LAY_PERM},
    {4, 3, {2, 66, 3, 67}, {66, 1, 67}, LAY_PERM, LAY_PERM},
    {2, 2, {300, 257}, {300, 257}, LAY_CONTIG, LAY_PERM},   /* past the parallel grain */
};

static void tiled_binary(int op, int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, sh->la, VP_GENERAL, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, dt, sh->nb, sh->sb, sh->lb, VP_GENERAL, &rb, NULL);
  ctx_set("tiled %s(%s %s %s, %s %s) seed=0x%llx", binop_schema_name[op], dt_name(dt),
          shape_str(sh->n, sh->sa), layout_name(sh->la), shape_str(sh->nb, sh->sb),
          layout_name(sh->lb), (unsigned long long)seed);
  bp_tensor *res = call_t(binop_schema_name[op], a, b, NULL);
  rt *want = ref_binary(op, ra, rb, 1);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(ra);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

/* where(c, a, b) with the condition and a transposed, b broadcast. */
static void tiled_where(int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *rc, *ra, *rb;
  bp_tensor *c = gen_tensor(&r, BP_BOOL, sh->n, sh->sa, LAY_PERM, VP_GENERAL, &rc, NULL);
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, sh->la, VP_GENERAL, &ra, NULL);
  bp_tensor *b = gen_tensor(&r, dt, sh->nb, sh->sb, sh->lb, VP_GENERAL, &rb, NULL);
  ctx_set("tiled where(bool %s perm, %s %s, %s %s) seed=0x%llx", shape_str(sh->n, sh->sa),
          dt_name(dt), layout_name(sh->la), shape_str(sh->nb, sh->sb), layout_name(sh->lb),
          (unsigned long long)seed);
  bp_tensor *res = call_t("where", c, a, b);
  rt *want = ref_where(rc, ra, rb);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt *rs[] = {want, rc, ra, rb};
  for (int k = 0; k < 4; k++) rt_free(rs[k]);
  bp_tensor *ts[] = {res, c, a, b};
  for (int k = 0; k < 4; k++) bp_tensor_release(ts[k]);
}

/* Unary, cast and contiguous of a permuted tensor; copy_ and fill_ into
 * one (an output that is a permuted view is walked in its memory order). */
static void tiled_others(int32_t dt, const tiled_shape *sh, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, dt, sh->n, sh->sa, LAY_PERM, VP_WIDE, &ra, NULL);
  const char *un = dt == BP_BOOL ? "sigmoid" : "neg";
  int uop = dt == BP_BOOL ? RU_SIGMOID : RU_NEG;
  ctx_set("tiled %s(%s %s perm) seed=0x%llx", un, dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  bp_tensor *res = call_t(un, a, NULL, NULL);
  rt *want = ref_unary(uop, ra);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);

  int32_t to = all_dtypes[(size_t)(dt * 7 + 3) % NUM_DTYPES];
  ctx_set("tiled cast(%s %s perm, %s) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          dt_name(to), (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_scalar_type(&s, to);
  res = RUN(core_op("cast"), &s, .in = {a}, .ret = RET_NEW);
  want = ref_cast(ra, to);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);

  ctx_set("tiled contiguous(%s %s perm) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  res = RUN(core_op("contiguous"), &s, .in = {a}, .ret = RET_CONTIGUOUS);
  if (res) BITS(res, a);
  bp_tensor_release(res);

  /* copy_ of a permuted src into a self permuted another way (or not). */
  bp_tensor *self = gen_tensor(&r, dt, sh->n, sh->sa, sh->lb == LAY_PERM ? LAY_PERM : LAY_CONTIG,
                               VP_GENERAL, NULL, NULL);
  bp_tensor *src = gen_tensor(&r, dt, sh->nb, sh->sb, LAY_PERM, VP_GENERAL, &rb, NULL);
  ctx_set("tiled copy_(%s %s, %s perm) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          shape_str(sh->nb, sh->sb), (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, self);
  bp_stack_push_tensor(&s, src);
  res = RUN(core_op("copy_"), &s, .in = {src}, .mut = self, .ret = RET_SELF);
  want = ref_expand(rb, sh->n, sh->sa);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(src);

  ctx_set("tiled fill_(%s %s perm, 3) seed=0x%llx", dt_name(dt), shape_str(sh->n, sh->sa),
          (unsigned long long)seed);
  s.top = 0;
  bp_stack_push_tensor(&s, self);
  bp_stack_push_float(&s, 3);
  res = RUN(core_op("fill_"), &s, .mut = self, .ret = RET_SELF);
  want = rt_new(dt, sh->n, sh->sa);
  for (int64_t k = 0; k < want->numel; k++) {
    want->f[k] = round_to(dt, 3);
    want->i[k] = float_to_int(dt, 3);
  }
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);
  bp_tensor_release(self);
  rt_free(ra);
  bp_tensor_release(a);
}

static void tiled_elementwise(void) {
  cpu_setup();
  for (size_t i = 0; i < NUM_DTYPES; i++) {
    int32_t dt = all_dtypes[i];
    for (size_t k = 0; k < NELEMS(tiled_shapes); k++) {
      uint64_t seed = trial_seed(0x711e0000 + (i << 8), (int64_t)k);
      tiled_binary(RB_ADD, dt, &tiled_shapes[k], seed);
      if (k % 3 == 0) tiled_binary(RB_MUL, dt, &tiled_shapes[k], seed + 1);
      if (k % 4 == 1) tiled_where(dt, &tiled_shapes[k], seed + 2);
      if (k % 2 == 0) tiled_others(dt, &tiled_shapes[k], seed + 3);
    }
  }
  cpu_done();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(tiled_elementwise),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
