/* tests/cpu/trials.c - see trials.h. */
#define _POSIX_C_SOURCE 200809L
#include "trials.h"

#include <math.h>
#include <stdio.h>

#include "cases.h"

const char *const binop_schema_name[7] = {"add", "sub", "mul", "div", "maximum", "minimum", "pow"};

double pick_alpha(rng *r, int32_t dt) {
  static const double fa[] = {1, 2, -0.5, 0.25, -1};
  static const double ia[] = {1, 2, -1, 3, 0};
  if (dt == BP_BOOL) return 1;
  return dt_is_float(dt) ? fa[rng_int(r, 0, 4)] : ia[rng_int(r, 0, 4)];
}

void binary_trial(int op, int32_t da, int32_t db, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n, na, nb;
  int64_t sizes[BP_MAX_NDIM], sa[BP_MAX_NDIM], sb[BP_MAX_NDIM];
  rand_shape(&r, 4, 6, &n, sizes);
  rand_bcast_operand(&r, n, sizes, &na, sa);
  rand_bcast_operand(&r, n, sizes, &nb, sb);
  int pa = rng_chance(&r, 0.3) ? VP_TIES : VP_GENERAL;
  int pb = op == RB_POW ? VP_EXPONENT : rng_chance(&r, 0.3) ? VP_TIES : VP_GENERAL;
  int la, lb;
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, da, na, sa, LAY_RANDOM, pa, &ra, &la);
  bp_tensor *b = gen_tensor(&r, db, nb, sb, LAY_RANDOM, pb, &rb, &lb);
  int32_t dt = dt_promote(da, db);
  bool has_alpha = (op == RB_ADD || op == RB_SUB) && rng_chance(&r, 0.6);
  double alpha = has_alpha ? pick_alpha(&r, dt) : 1;
  ctx_set("%s(%s %s %s, %s %s %s, alpha=%g) seed=0x%llx", binop_schema_name[op], dt_name(da),
          shape_str(na, sa), layout_name(la), dt_name(db), shape_str(nb, sb), layout_name(lb),
          alpha, (unsigned long long)seed);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  if (has_alpha) bp_stack_push_float(&s, alpha);
  bp_tensor *res = RUN(core_op(binop_schema_name[op]), &s, .in = {a, b}, .ret = RET_NEW);
  rt *want = ref_binary(op, ra, rb, alpha);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(ra);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

const char *const unop_schema_name[15] = {"neg",  "abs",  "relu", "exp", "log",
                                          "sqrt", "rsqrt", "sigmoid", "tanh", "gelu",
                                          "gelu", "sin",  "cos",  "erf",  "silu"};

void unary_trial(int op, int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 7, &n, sizes);
  /* log and the square roots want positive inputs (with some zeros,
   * negatives and NaN); gelu's formula is left out at the infinities,
   * where x/2 * (1 + erf) is inf * 0. */
  int prof = (op == RU_LOG || op == RU_SQRT || op == RU_RSQRT) ? VP_POSITIVE
             : op >= RU_GELU                                   ? VP_FINITE
                                                               : VP_GENERAL;
  int lay;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_RANDOM, prof, &ra, &lay);
  ctx_set("%s(%s %s %s) seed=0x%llx", ref_unop_name[op], dt_name(dt), shape_str(n, sizes),
          layout_name(lay), (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  if (op == RU_GELU_TANH)
    bp_stack_push_str(&s, "tanh");
  else if (op == RU_GELU && rng_chance(&r, 0.5))
    bp_stack_push_str(&s, "none");
  bp_tensor *res = RUN(core_op(unop_schema_name[op]), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_unary(op, ra);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void where_trial(int32_t da, int32_t db, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n, nc, na, nb;
  int64_t sizes[BP_MAX_NDIM], sc[BP_MAX_NDIM], sa[BP_MAX_NDIM], sb[BP_MAX_NDIM];
  rand_shape(&r, 4, 5, &n, sizes);
  rand_bcast_operand(&r, n, sizes, &nc, sc);
  rand_bcast_operand(&r, n, sizes, &na, sa);
  rand_bcast_operand(&r, n, sizes, &nb, sb);
  int lc, la, lb;
  rt *rc, *ra, *rb;
  bp_tensor *c = gen_tensor(&r, BP_BOOL, nc, sc, LAY_RANDOM, VP_GENERAL, &rc, &lc);
  bp_tensor *a = gen_tensor(&r, da, na, sa, LAY_RANDOM, VP_GENERAL, &ra, &la);
  bp_tensor *b = gen_tensor(&r, db, nb, sb, LAY_RANDOM, VP_GENERAL, &rb, &lb);
  ctx_set("where(bool %s %s, %s %s %s, %s %s %s) seed=0x%llx", shape_str(nc, sc), layout_name(lc),
          dt_name(da), shape_str(na, sa), layout_name(la), dt_name(db), shape_str(nb, sb),
          layout_name(lb), (unsigned long long)seed);
  bp_tensor *res = call_t("where", c, a, b);
  rt *want = ref_where(rc, ra, rb);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt *rs[] = {want, rc, ra, rb};
  for (int k = 0; k < 4; k++) rt_free(rs[k]);
  bp_tensor *ts[] = {res, c, a, b};
  for (int k = 0; k < 4; k++) bp_tensor_release(ts[k]);
}

static const char *dims_str(const int64_t *dims, size_t n) {
  static char buf[4][128];
  static int next;
  char *b = buf[next++ % 4];
  size_t len = (size_t)snprintf(b, 128, "[");
  for (size_t i = 0; i < n && len < 100; i++)
    len += (size_t)snprintf(b + len, 128 - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
  snprintf(b + len, 128 - len, "]");
  return b;
}

/* A random valid dim list for a tensor of ndim dimensions: empty (all),
 * or distinct dims in random order, each maybe written negatively.  For
 * amax/amin, dims of size 0 are left out (they have no value). */
static size_t rand_dims(rng *r, int32_t ndim, const int64_t *sizes, bool skip_empty,
                        int64_t *dims) {
  if (ndim == 0) {
    static const int64_t z[] = {0, -1};
    if (rng_chance(r, 0.5)) return 0;
    dims[0] = z[rng_int(r, 0, 1)];
    return 1;
  }
  if (!skip_empty && rng_chance(r, 0.25)) return 0;
  size_t n = 0;
  int32_t order[BP_MAX_NDIM];
  for (int32_t d = 0; d < ndim; d++) order[d] = d;
  for (int32_t d = ndim - 1; d > 0; d--) {
    int32_t j = (int32_t)rng_int(r, 0, d), t = order[d];
    order[d] = order[j];
    order[j] = t;
  }
  for (int32_t k = 0; k < ndim; k++) {
    int32_t d = order[k];
    if (skip_empty && sizes[d] == 0) continue;
    if (rng_chance(r, 0.5) || (n == 0 && k == ndim - 1 && !skip_empty))
      dims[n++] = rng_chance(r, 0.4) ? d - ndim : d;
  }
  return n;
}

void reduce_trial(int op, int32_t dt, uint64_t seed, bool with_dtype) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM], dims[BP_MAX_NDIM];
  rand_shape(&r, 4, 7, &n, sizes);
  bool minmax = op == RR_AMAX || op == RR_AMIN;
  size_t nd = rand_dims(&r, n, sizes, minmax, dims);
  if (minmax && nd == 0) { /* all dims: the tensor must not be empty */
    for (int32_t d = 0; d < n; d++)
      if (sizes[d] == 0) sizes[d] = 1;
  }
  bool keepdim = rng_chance(&r, 0.5);
  /* Integers summed into a float dtype stay small: full-range int64
   * values would cancel catastrophically in float32. */
  int prof = dt_is_float(dt) ? (minmax ? (rng_chance(&r, 0.5) ? VP_TIES : VP_GENERAL) : VP_ACCUM)
             : with_dtype    ? VP_TIES
                             : VP_GENERAL;
  int lay;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_RANDOM, prof, &ra, &lay);
  int32_t sum_dtype = BP_DTYPE_INVALID;
  if (with_dtype) {
    /* A float dtype for any input, an integer dtype for integer inputs. */
    static const int32_t fd[] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16};
    static const int32_t id[] = {BP_INT64, BP_INT32, BP_INT8, BP_INT16, BP_UINT8};
    sum_dtype =
        dt_is_float(dt) || rng_chance(&r, 0.5) ? fd[rng_int(&r, 0, 3)] : id[rng_int(&r, 0, 4)];
  }
  ctx_set("%s(%s %s %s, dim=%s, keepdim=%d%s%s) seed=0x%llx", ref_redop_name[op], dt_name(dt),
          shape_str(n, sizes), layout_name(lay), dims_str(dims, nd), keepdim,
          with_dtype ? ", dtype=" : "", with_dtype ? dt_name(sum_dtype) : "",
          (unsigned long long)seed);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int_list(&s, dims, nd);
  bp_stack_push_bool(&s, keepdim);
  if (op == RR_SUM) {
    if (with_dtype)
      bp_stack_push_scalar_type(&s, sum_dtype);
    else
      bp_stack_push_none(&s);
  }
  bp_tensor *res = RUN(core_op(ref_redop_name[op]), &s, .in = {a}, .ret = RET_NEW);
  int64_t cnt;
  rt *want = ref_reduce(op, ra, dims, nd, keepdim, sum_dtype, &cnt);
  if (res) CLOSE(res, want, cnt, op == RR_SUM ? TOL_SUM : TOL_SQRT);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void argmax_trial(int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 7, &n, sizes);
  for (int32_t d = 0; d < n; d++)
    if (sizes[d] == 0) sizes[d] = 1; /* an empty input is an error */
  bool has_dim = rng_chance(&r, 0.7), keepdim = rng_chance(&r, 0.5);
  int32_t lim = n ? n : 1;
  int64_t dim = rng_int(&r, -lim, lim - 1);
  int lay;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_RANDOM,
                            rng_chance(&r, 0.6) ? VP_TIES : VP_GENERAL, &ra, &lay);
  ctx_set("argmax(%s %s %s, dim=%lld%s, keepdim=%d) seed=0x%llx", dt_name(dt), shape_str(n, sizes),
          layout_name(lay), (long long)dim, has_dim ? "" : " (None)", keepdim,
          (unsigned long long)seed);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  if (has_dim)
    bp_stack_push_int(&s, dim);
  else
    bp_stack_push_none(&s);
  bp_stack_push_bool(&s, keepdim);
  bp_tensor *res = RUN(core_op("argmax"), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_argmax(ra, has_dim, dim, keepdim);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void matmul_trial(int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  static const int64_t ks[] = {0, 1, 2, 3, 5, 8, 16, 33, 130, 300};
  int64_t k = ks[rng_int(&r, 0, 9)], m = rng_int(&r, 0, 6), nn = rng_int(&r, 0, 6);
  if (m == 0 && rng_chance(&r, 0.7)) m = 3;
  if (nn == 0 && rng_chance(&r, 0.7)) nn = 4;
  /* Now and then more rows and columns than a register tile holds. */
  if (rng_chance(&r, 0.15)) m = rng_int(&r, 17, 40);
  if (rng_chance(&r, 0.15)) nn = rng_int(&r, 17, 40);
  int32_t na = (int32_t)rng_int(&r, 1, 4), nb = (int32_t)rng_int(&r, 1, 4);
  int32_t nbatch = (na > nb ? na : nb) - 2;
  int64_t batch[BP_MAX_NDIM], sa[BP_MAX_NDIM], sb[BP_MAX_NDIM];
  for (int32_t d = 0; d < nbatch; d++) batch[d] = rng_int(&r, 1, 3);
  /* Each operand's batch dims: the trailing ones of `batch`, some 1. */
  int32_t ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0;
  for (int32_t d = 0; d < ba; d++) sa[d] = rng_chance(&r, 0.3) ? 1 : batch[d + nbatch - ba];
  for (int32_t d = 0; d < bb; d++) sb[d] = rng_chance(&r, 0.3) ? 1 : batch[d + nbatch - bb];
  if (na == 1)
    sa[0] = k;
  else {
    sa[ba] = m;
    sa[ba + 1] = k;
  }
  if (nb == 1)
    sb[0] = k;
  else {
    sb[bb] = k;
    sb[bb + 1] = nn;
  }
  int prof = rng_chance(&r, 0.1) ? VP_UNIT_NAN : VP_UNIT;
  int la, lb;
  rt *ra, *rb;
  bp_tensor *a = gen_tensor(&r, dt, na, sa, LAY_RANDOM, prof, &ra, &la);
  bp_tensor *b = gen_tensor(&r, dt, nb, sb, LAY_RANDOM, prof, &rb, &lb);
  ctx_set("matmul(%s %s %s, %s %s) seed=0x%llx", dt_name(dt), shape_str(na, sa), layout_name(la),
          shape_str(nb, sb), layout_name(lb), (unsigned long long)seed);
  bp_tensor *res = call_t("matmul", a, b, NULL);
  int64_t kk;
  rt *want = ref_matmul(ra, rb, &kk);
  if (res) CLOSE(res, want, kk, TOL_SQRT);
  rt_free(want);
  rt_free(ra);
  rt_free(rb);
  bp_tensor_release(res);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

void softmax_trial(bool log_, int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 9, &n, sizes);
  int32_t lim = n ? n : 1;
  int64_t dim = rng_int(&r, -lim, lim - 1);
  int lay;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_RANDOM,
                            rng_chance(&r, 0.2) ? VP_ACCUM : VP_FINITE, &ra, &lay);
  const char *name = log_ ? "log_softmax" : "softmax";
  ctx_set("%s(%s %s %s, dim=%lld) seed=0x%llx", name, dt_name(dt), shape_str(n, sizes),
          layout_name(lay), (long long)dim, (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, dim);
  bp_tensor *res = RUN(core_op(name), &s, .in = {a}, .ret = RET_NEW);
  rt *want = ref_softmax(ra, dim, log_);
  int64_t len = n ? sizes[dim < 0 ? dim + n : dim] : 1;
  if (res) CLOSE(res, want, len, TOL_SQRT);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void check_layer_norm(bp_tensor *x, rt *rx, int32_t nnorm, const int64_t *ns, bp_tensor *w, rt *rw,
                      bp_tensor *b, rt *rb, double eps) {
  int64_t len = 1;
  for (int32_t d = 0; d < nnorm; d++) len *= ns[d];
  bp_value slots[5];
  bp_stack s = BP_STACK_INIT(slots, 5);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int_list(&s, ns, (size_t)nnorm);
  if (w)
    bp_stack_push_tensor(&s, w);
  else
    bp_stack_push_none(&s);
  if (b)
    bp_stack_push_tensor(&s, b);
  else
    bp_stack_push_none(&s);
  bp_stack_push_float(&s, eps);
  bp_tensor *res = RUN(core_op("layer_norm"), &s, .in = {x, w, b}, .ret = RET_NEW);
  rt *want = ref_layer_norm(rx, nnorm, rw, rb, eps);
  if (res) CLOSE(res, want, len, TOL_SQRT);
  rt *rs[] = {want, rx, rw, rb};
  for (int k = 0; k < 4; k++) rt_free(rs[k]);
  bp_tensor *ts[] = {res, x, w, b};
  for (int k = 0; k < 4; k++) bp_tensor_release(ts[k]);
}

void layer_norm_trial(int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 9, &n, sizes);
  if (n == 0) {
    n = 1;
    sizes[0] = rng_int(&r, 1, 9);
  }
  int32_t nnorm = (int32_t)rng_int(&r, 1, n);
  const int64_t *ns = sizes + (n - nnorm);
  int64_t len = 1;
  for (int32_t d = 0; d < nnorm; d++) len *= ns[d];
  static const double epss[] = {1e-5, 1e-3, 0.1, 0};
  double eps = epss[rng_int(&r, 0, len >= 4 ? 3 : 2)];
  int lx, lw = -1, lb = -1;
  rt *rx, *rw = NULL, *rb = NULL;
  bp_tensor *x = gen_tensor(&r, dt, n, sizes, LAY_RANDOM,
                            rng_chance(&r, 0.1) ? VP_ACCUM : VP_FINITE, &rx, &lx);
  bp_tensor *w =
      rng_chance(&r, 0.6) ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rw, &lw) : NULL;
  bp_tensor *b =
      rng_chance(&r, 0.6) ? gen_tensor(&r, dt, nnorm, ns, LAY_RANDOM, VP_FINITE, &rb, &lb) : NULL;
  ctx_set("layer_norm(%s %s %s, %s, weight %s, bias %s, eps=%g) seed=0x%llx", dt_name(dt),
          shape_str(n, sizes), layout_name(lx), shape_str(nnorm, ns), w ? layout_name(lw) : "None",
          b ? layout_name(lb) : "None", eps, (unsigned long long)seed);
  check_layer_norm(x, rx, nnorm, ns, w, rw, b, rb, eps);
}

void cast_trial(int32_t from, int32_t to, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 3, 6, &n, sizes);
  int lay;
  rt *ra;
  bp_tensor *a = gen_tensor(&r, from, n, sizes, LAY_RANDOM, VP_WIDE, &ra, &lay);
  ctx_set("cast(%s %s %s, %s) seed=0x%llx", dt_name(from), shape_str(n, sizes), layout_name(lay),
          dt_name(to), (unsigned long long)seed);
  bp_tensor *res = call_cast(a, to);
  rt *want = ref_cast(ra, to);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  /* To the same dtype nothing changes, not even the sign of a zero. */
  if (res && from == to) BITS(res, a);
  rt_free(want);
  rt_free(ra);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void contiguous_trial(int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 6, &n, sizes);
  int lay;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_RANDOM, VP_GENERAL, NULL, &lay);
  ctx_set("contiguous(%s %s %s, contiguous=%d) seed=0x%llx", dt_name(dt), shape_str(n, sizes),
          layout_name(lay), bp_tensor_is_contiguous(a), (unsigned long long)seed);
  bp_value slots[1];
  bp_stack s = BP_STACK_INIT(slots, 1);
  bp_stack_push_tensor(&s, a);
  bp_tensor *res = RUN(core_op("contiguous"), &s, .in = {a}, .ret = RET_CONTIGUOUS);
  if (res) BITS(res, a);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void fill_trial(int32_t dt, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n;
  int64_t sizes[BP_MAX_NDIM];
  rand_shape(&r, 4, 6, &n, sizes);
  int lay;
  bp_tensor *a = gen_tensor(&r, dt, n, sizes, LAY_WRITABLE, VP_GENERAL, NULL, &lay);
  double v = rand_float(&r, BP_FLOAT64, VP_WIDE);
  ctx_set("fill_(%s %s %s, %.17g) seed=0x%llx", dt_name(dt), shape_str(n, sizes), layout_name(lay),
          v, (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_float(&s, v);
  bp_tensor *res = RUN(core_op("fill_"), &s, .mut = a, .ret = RET_SELF);
  rt *want = rt_new(dt, n, sizes);
  for (int64_t k = 0; k < want->numel; k++) {
    want->f[k] = round_to(dt, v);
    want->i[k] = float_to_int(dt, v);
  }
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  rt_free(want);
  bp_tensor_release(res);
  bp_tensor_release(a);
}

void copy_trial(int32_t dst, int32_t src, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  int32_t n, ns;
  int64_t sizes[BP_MAX_NDIM], ss[BP_MAX_NDIM];
  rand_shape(&r, 4, 6, &n, sizes);
  rand_bcast_operand(&r, n, sizes, &ns, ss);
  int ld, ls;
  rt *rs;
  bp_tensor *self = gen_tensor(&r, dst, n, sizes, LAY_WRITABLE, VP_GENERAL, NULL, &ld);
  bp_tensor *b = gen_tensor(&r, src, ns, ss, LAY_RANDOM, VP_WIDE, &rs, &ls);
  ctx_set("copy_(%s %s %s, %s %s %s) seed=0x%llx", dt_name(dst), shape_str(n, sizes),
          layout_name(ld), dt_name(src), shape_str(ns, ss), layout_name(ls),
          (unsigned long long)seed);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, self);
  bp_stack_push_tensor(&s, b);
  bp_tensor *res = RUN(core_op("copy_"), &s, .in = {b}, .mut = self, .ret = RET_SELF);
  rt *ex = ref_expand(rs, n, sizes), *want = ref_cast(ex, dst);
  if (res) CLOSE(res, want, 1, TOL_PLAIN);
  if (res && dst == src) { /* a plain copy keeps every bit */
    bp_tensor *wt = tensor_from(&r, want, LAY_CONTIG, NULL);
    BITS(res, wt);
    bp_tensor_release(wt);
  }
  rt_free(ex);
  rt_free(want);
  rt_free(rs);
  bp_tensor_release(res);
  bp_tensor_release(self);
  bp_tensor_release(b);
}
