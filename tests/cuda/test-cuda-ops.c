/*
 * tests/cuda/test-cuda-ops.c - every core op on the CUDA plugin against
 * the CPU plugin, the reference implementation.
 *
 * Each trial makes the same inputs on both devices: a random storage, the
 * same bytes on the CPU and on cuda:0, and the same view of it (contiguous,
 * permuted, strided with an offset, or broadcast with a stride of 0).  The
 * op runs on both; a failure on the CPU must be the same failure (status)
 * on CUDA, and a success must give the same dtype and sizes and values
 * within the op set's tolerances (twice them, as both sides round).  Ops
 * that write an argument are compared over its whole storage, so bytes
 * outside the view must stay as they were.
 *
 * Every dtype, 0-size and 0-dim tensors, broadcasting, non-contiguous
 * views and the edge values of docs/op-set.md (NaN, infinities, -0.0,
 * out-of-range conversions, ties) are covered.  Without a CUDA device the
 * whole program is skipped.
 *
 * Two cases look at particular behaviour: layer_norm of rows of equal
 * values (exactly the bias, as on the CPU) and of rows far from 0, and
 * matmul run by two threads at once, each on a stream of its own (each
 * stream has its own cuBLAS handle and workspace).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include "opcheck.h"

/* ------------------------------------------------------------------------ */
/* Elementwise                                                              */
/* ------------------------------------------------------------------------ */

static void binary_ops(void) {
  if (!setup(1)) return;
  static const char *const ops[] = {"core::add", "core::sub", "core::mul", "core::div",
                                    "core::maximum", "core::minimum", "core::pow"};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int di = 0; di < NDTYPES; di++)
      for (size_t s = 0; s < NPAIRS; s++) {
        int32_t dt = all_dtypes[di];
        /* A second dtype now and then: promotion. */
        int32_t dt2 = rnd() % 4 == 0 ? all_dtypes[rnd() % NDTYPES] : dt;
        int prof = !strcmp(ops[o], "core::pow") ? P_EXP : rnd() % 2 ? P_GENERAL : P_TIES;
        const shape2 *sh = &pairs[s];
        ctx("%s(%s%s, %s) shapes %d/%d", ops[o], dtn(dt), "", dtn(dt2), (int)sh->na, (int)sh->nb);
        twin a = make(dt, sh->na, sh->a, L_ANY, prof), b = make(dt2, sh->nb, sh->b, L_ANY, prof);
        if (!a.c || !b.c) {
          twin_free(&a);
          twin_free(&b);
          continue;
        }
        arg args[3] = {AT(&a), AT(&b)};
        check(ops[o], args, 2, NULL, T_PLAIN, 1);
        if (!strcmp(ops[o], "core::add") || !strcmp(ops[o], "core::sub")) {
          double alpha = rnd() % 2 ? 3.0 : -1.5;
          args[2] = KW(AFLOAT(alpha), "alpha");
          check(ops[o], args, 3, NULL, T_PLAIN, 1);
        }
        twin_free(&a);
        twin_free(&b);
      }
  done();
}

static void muladd_and_add_out(void) {
  if (!setup(2)) return;
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < NPAIRS; s++) {
      int32_t dt = all_dtypes[di];
      const shape2 *sh = &pairs[s];
      ctx("muladd/add.out %s shapes %d/%d", dtn(dt), (int)sh->na, (int)sh->nb);
      twin a = make(dt, sh->na, sh->a, L_ANY, P_GENERAL), b = make(dt, sh->nb, sh->b, L_ANY, P_GENERAL);
      if (!a.c || !b.c) {
        twin_free(&a);
        twin_free(&b);
        continue;
      }
      arg args[4] = {AT(&a), AT(&b), AFLOAT(0.75)};
      check("core::muladd", args, 3, NULL, T_PLAIN, 1);
      /* add.out into a fresh tensor of the broadcast shape (a writable
       * layout), and into `a` itself when it has that shape. */
      const bp_tensor_view *va = bp_tensor_get_view(a.c), *vb = bp_tensor_get_view(b.c);
      int32_t nd = va->ndim > vb->ndim ? va->ndim : vb->ndim;
      int64_t shape[BP_MAX_NDIM];
      bool bc = true;
      for (int32_t d = 0; d < nd; d++) {
        int32_t da = d - (nd - va->ndim), db = d - (nd - vb->ndim);
        int64_t x = da >= 0 ? va->sizes[da] : 1, y = db >= 0 ? vb->sizes[db] : 1;
        if (x != y && x != 1 && y != 1) bc = false;
        shape[d] = x == 1 ? y : x;
      }
      if (bc) {
        twin out = make(dt, nd, shape, L_WRITABLE, P_FINITE);
        if (out.c) {
          arg a2[4] = {AT(&a), AT(&b), KW(AFLOAT(2.0), "alpha"), KW(AT(&out), "out")};
          check("core::add.out", a2, 4, &out, T_PLAIN, 1);
        }
        twin_free(&out);
      }
      twin_free(&a);
      twin_free(&b);
    }
  /* add.out writing into self, contiguous and strided. */
  int64_t sz[2] = {17, 33};
  for (int di = 0; di < NDTYPES; di++) {
    ctx("add.out into self, %s", dtn(all_dtypes[di]));
    twin a = make(all_dtypes[di], 2, sz, L_WRITABLE, P_TIES), b = make(all_dtypes[di], 1, sz + 1, L_ANY, P_TIES);
    if (a.c && b.c) {
      arg args[4] = {AT(&a), AT(&b), KW(AFLOAT(1.0), "alpha"), KW(AT(&a), "out")};
      check("core::add.out", args, 4, &a, T_PLAIN, 1);
    }
    twin_free(&a);
    twin_free(&b);
  }
  done();
}

static const int64_t ushapes[][4] = {{0}, {7}, {3, 4, 5}, {0, 3}, {1000, 129}, {65537}};
static const int32_t undims[] = {0, 1, 3, 2, 2, 1};
#define NUSHAPES 6

static void unary_ops(void) {
  if (!setup(3)) return;
  static const char *const ops[] = {"core::neg",  "core::abs",     "core::relu", "core::exp",
                                    "core::log",  "core::sqrt",    "core::rsqrt", "core::sigmoid",
                                    "core::tanh", "core::gelu"};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int di = 0; di < NDTYPES; di++)
      for (int s = 0; s < NUSHAPES; s++) {
        int32_t dt = all_dtypes[di];
        bool pos = !strcmp(ops[o], "core::log") || !strcmp(ops[o], "core::sqrt") ||
                   !strcmp(ops[o], "core::rsqrt");
        ctx("%s(%s) shape #%d", ops[o], dtn(dt), s);
        twin a = make(dt, undims[s], ushapes[s], L_ANY, pos ? P_POS : P_GENERAL);
        if (!a.c) continue;
        arg args[2] = {AT(&a)};
        check(ops[o], args, 1, NULL, T_PLAIN, 1);
        if (!strcmp(ops[o], "core::gelu")) {
          args[1] = KW(((arg){A_STR, NULL, 0, 0, "tanh", NULL, 0, NULL}), "approximate");
          check(ops[o], args, 2, NULL, T_PLAIN, 1);
          args[1] = KW(((arg){A_STR, NULL, 0, 0, "exact", NULL, 0, NULL}), "approximate");
          check(ops[o], args, 2, NULL, T_PLAIN, 1);
        }
        twin_free(&a);
      }
  done();
}

static void where_cast_contiguous(void) {
  if (!setup(4)) return;
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < NPAIRS; s++) {
      int32_t dt = all_dtypes[di], dt2 = rnd() % 3 == 0 ? all_dtypes[rnd() % NDTYPES] : dt;
      const shape2 *sh = &pairs[s];
      ctx("where(bool, %s, %s) shapes %d/%d", dtn(dt), dtn(dt2), (int)sh->na, (int)sh->nb);
      twin c = make(rnd() % 8 ? BP_BOOL : BP_INT8, sh->na, sh->a, L_ANY, P_GENERAL);
      twin a = make(dt, sh->nb, sh->b, L_ANY, P_GENERAL), b = make(dt2, sh->na, sh->a, L_ANY, P_GENERAL);
      if (c.c && a.c && b.c) {
        arg args[3] = {AT(&c), AT(&a), AT(&b)};
        check("core::where", args, 3, NULL, T_PLAIN, 1);
      }
      twin_free(&c);
      twin_free(&a);
      twin_free(&b);
    }
  for (int si = 0; si < NDTYPES; si++)
    for (int di = 0; di < NDTYPES; di++)
      for (int s = 0; s < NUSHAPES; s++) {
        int prof = s % 2 ? P_WIDE : P_GENERAL;
        ctx("cast %s -> %s shape #%d", dtn(all_dtypes[si]), dtn(all_dtypes[di]), s);
        twin a = make(all_dtypes[si], undims[s], ushapes[s], L_ANY, prof);
        if (!a.c) continue;
        arg args[2] = {AT(&a), ((arg){A_DTYPE, NULL, all_dtypes[di], 0, NULL, NULL, 0, NULL})};
        check("core::cast", args, 2, NULL, T_PLAIN, 1);
        twin_free(&a);
      }
  for (int di = 0; di < NDTYPES; di++)
    for (int s = 0; s < NUSHAPES; s++)
      for (int lay = L_CONTIG; lay <= L_BCAST; lay++) {
        ctx("contiguous %s shape #%d layout %d", dtn(all_dtypes[di]), s, lay);
        twin a = make(all_dtypes[di], undims[s], ushapes[s], lay, P_WIDE);
        if (!a.c) continue;
        arg args[1] = {AT(&a)};
        check("core::contiguous", args, 1, NULL, T_PLAIN, 1);
        twin_free(&a);
      }
  done();
}

static void fill_and_copy(void) {
  if (!setup(5)) return;
  static const double values[] = {2.5, -1e10, NAN, 300.0, -1.0, 0.0, INFINITY};
  for (int di = 0; di < NDTYPES; di++)
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
      for (int s = 0; s < NUSHAPES; s++) {
        ctx("fill_ %s value %g shape #%d", dtn(all_dtypes[di]), values[v], s);
        twin a = make(all_dtypes[di], undims[s], ushapes[s], L_WRITABLE, P_GENERAL);
        if (!a.c) continue;
        arg args[2] = {AT(&a), AFLOAT(values[v])};
        check("core::fill_", args, 2, &a, T_PLAIN, 1);
        twin_free(&a);
      }
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < NPAIRS; s++) {
      const shape2 *sh = &pairs[s];
      int32_t dt = all_dtypes[di], dt2 = all_dtypes[rnd() % NDTYPES];
      ctx("copy_ %s <- %s shapes %d/%d", dtn(dt), dtn(dt2), (int)sh->na, (int)sh->nb);
      twin self = make(dt, sh->na, sh->a, L_WRITABLE, P_GENERAL);
      twin src = make(dt2, sh->nb, sh->b, L_ANY, P_WIDE);
      if (self.c && src.c) {
        arg args[2] = {AT(&self), AT(&src)};
        check("core::copy_", args, 2, &self, T_PLAIN, 1);
        /* From the CPU to cuda: the kernel of self's device moves it. */
        args[1] = AT_CPU(&src);
        check("core::copy_", args, 2, &self, T_PLAIN, 1);
      }
      twin_free(&self);
      twin_free(&src);
    }
  /* Overlapping: src is self's storage shifted by one element. */
  for (int di = 0; di < NDTYPES; di++) {
    int64_t n = 1000, one = 1;
    ctx("copy_ overlapping %s", dtn(all_dtypes[di]));
    twin self = make(all_dtypes[di], 1, &n, L_CONTIG, P_TIES);
    if (!self.c) continue;
    twin src;
    memset(&src, 0, sizeof src);
    const bp_tensor_view *v = bp_tensor_get_view(self.c);
    bp_tensor_as_strided(self.cs, 1, &n, &one, v->storage_offset + 1, &src.c);
    bp_tensor_as_strided(self.gs, 1, &n, &one, v->storage_offset + 1, &src.g);
    arg args[2] = {AT(&self), AT(&src)};
    check("core::copy_", args, 2, &self, T_PLAIN, 1);
    bp_tensor_release(src.c);
    bp_tensor_release(src.g);
    twin_free(&self);
  }
  done();
}

/* ------------------------------------------------------------------------ */
/* Reductions                                                               */
/* ------------------------------------------------------------------------ */

typedef struct rshape {
  int32_t nd;
  int64_t s[4];
} rshape;

static const rshape rshapes[] = {{0, {0}},          {1, {7}},          {3, {3, 4, 5}},
                                 {2, {0, 4}},       {2, {4, 0}},       {3, {2, 300, 3}},
                                 {1, {65537}},      {2, {3000, 70}},   {2, {33, 2000}},
                                 {1, {1 << 22}}};
#define NRSHAPES (sizeof rshapes / sizeof rshapes[0])

static int64_t reduced_count(const rshape *r, const int64_t *dims, size_t nd) {
  int64_t n = 1;
  if (nd == 0) {
    for (int32_t d = 0; d < r->nd; d++) n *= r->s[d];
    return n;
  }
  for (size_t i = 0; i < nd; i++) {
    int64_t d = dims[i] < 0 ? dims[i] + r->nd : dims[i];
    if (d >= 0 && d < r->nd) n *= r->s[d];
  }
  return n;
}

static void reductions(void) {
  if (!setup(6)) return;
  static const int64_t dimsets[][2] = {{0, 0}, {0, 0}, {-1, 0}, {0, 2}, {1, 0}};
  static const size_t dimlens[] = {0, 1, 1, 2, 1};
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < NRSHAPES; s++) {
      int32_t dt = all_dtypes[di];
      const rshape *r = &rshapes[s];
      bool big = r->s[0] >= (1 << 22);
      if (big && dt != BP_FLOAT32 && dt != BP_INT32 && dt != BP_FLOAT16) continue;
      int prof = rnd() % 3 == 0 ? P_TIES : rnd() % 2 ? P_GENERAL : P_FINITE;
      twin a = make(dt, r->nd, r->s, big ? L_CONTIG : L_ANY, prof);
      if (!a.c) continue;
      for (size_t ds = 0; ds < sizeof dimlens / sizeof dimlens[0]; ds++)
        for (int keep = 0; keep < 2; keep++) {
          const int64_t *dims = dimsets[ds];
          size_t nd = dimlens[ds];
          int64_t n = reduced_count(r, dims, nd);
          ctx("reductions %s shape #%zu dims #%zu keepdim %d profile %d", dtn(dt), s, ds, keep, prof);
          arg args[4] = {AT(&a), AINTS(dims, nd), ABOOL(keep)};
          check("core::sum", args, 3, NULL, T_SUM, n);
          check("core::mean", args, 3, NULL, T_SQRT, n);
          check("core::amax", args, 3, NULL, T_PLAIN, n);
          check("core::amin", args, 3, NULL, T_PLAIN, n);
          if (ds < 3) {
            int32_t sdt = ds == 1 ? BP_FLOAT64 : ds == 2 ? BP_INT32 : BP_FLOAT32;
            args[3] = KW(((arg){A_DTYPE, NULL, sdt, 0, NULL, NULL, 0, NULL}), "dtype");
            check("core::sum", args, 4, NULL, T_SUM, n);
          }
          /* argmax: dim None or one dim. */
          arg aa[3] = {AT(&a), nd == 0 ? ANONE : AINT(dims[0]), ABOOL(keep)};
          check("core::argmax", aa, 3, NULL, T_PLAIN, n);
        }
      twin_free(&a);
    }
  done();
}

/* sum(dtype=bool) is whether the int64 sum is nonzero, so 256 true
 * elements give true (not the count's low 8 bits); dtype=uint8 wraps. */
static void sum_of_many_trues(void) {
  if (!setup(11)) return;
  int64_t sizes[2] = {3, 256};
  twin a = make(BP_BOOL, 2, sizes, L_CONTIG, P_GENERAL);
  if (a.c) {
    /* Row 0: 256 true; row 1: 255 true; row 2: none. */
    uint8_t *p = (uint8_t *)bp_tensor_get_view(a.cs)->data;
    for (int64_t i = 0; i < 3 * 256; i++) p[i] = i < 511;
    if (bp_tensor_copy(a.gs, a.cs) != BP_OK) fail("copy: %s", bp_last_error());
    static const int64_t dims[2] = {1, 0};
    static const int32_t to[] = {BP_BOOL, BP_UINT8, BP_INT64};
    for (size_t k = 0; k < sizeof to / sizeof to[0]; k++)
      for (size_t nd = 0; nd < 2; nd++) {
        ctx("sum of trues to %s, %zu dims", dtn(to[k]), nd);
        arg args[4] = {AT(&a), AINTS(dims, nd), ABOOL(false),
                       KW(((arg){A_DTYPE, NULL, to[k], 0, NULL, NULL, 0, NULL}), "dtype")};
        check("core::sum", args, 4, NULL, T_PLAIN, 256);
      }
    twin_free(&a);
  }
  done();
}

/* ------------------------------------------------------------------------ */
/* softmax, log_softmax, layer_norm, matmul                                 */
/* ------------------------------------------------------------------------ */

static void layer_norm_rows(void);

static void nn_ops(void) {
  if (!setup(7)) return;
  static const rshape shapes[] = {{0, {0}}, {1, {7}}, {3, {3, 4, 5}}, {2, {2, 1000}},
                                  {2, {1000, 3}}, {2, {0, 3}}, {2, {64, 4099}}};
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      int32_t dt = all_dtypes[di];
      const rshape *r = &shapes[s];
      for (int prof = P_GENERAL; prof <= P_FINITE; prof++) {
        twin a = make(dt, r->nd, r->s, L_ANY, prof);
        if (!a.c) continue;
        for (int64_t d = -1; d < (r->nd ? r->nd : 1); d++) {
          int32_t dd = r->nd == 0 ? 0 : (int32_t)(d < 0 ? d + r->nd : d);
          int64_t n = r->nd ? r->s[dd] : 1;
          ctx("softmax %s shape #%zu dim %lld profile %d", dtn(dt), s, (long long)d, prof);
          arg args[2] = {AT(&a), AINT(d)};
          check("core::softmax", args, 2, NULL, T_SQRT, n);
          check("core::log_softmax", args, 2, NULL, T_SQRT, n);
        }
        twin_free(&a);
      }
    }
  /* layer_norm */
  static const struct {
    int32_t nd;
    int64_t s[3];
    int32_t nn; /* trailing dims normalised */
  } ln[] = {{2, {4, 6}, 1}, {3, {2, 3, 4}, 2}, {2, {0, 5}, 1}, {2, {300, 1024}, 1}, {1, {5000}, 1}};
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < sizeof ln / sizeof ln[0]; s++)
      for (int wb = 0; wb < 4; wb++) {
        int32_t dt = all_dtypes[di];
        const int64_t *norm = ln[s].s + (ln[s].nd - ln[s].nn);
        int64_t n = 1;
        for (int32_t i = 0; i < ln[s].nn; i++) n *= norm[i];
        ctx("layer_norm %s shape #%zu weight/bias %d", dtn(dt), s, wb);
        twin x = make(dt, ln[s].nd, ln[s].s, L_ANY, wb == 3 ? P_GENERAL : P_FINITE);
        twin w = make(dt, ln[s].nn, norm, L_ANY, P_FINITE), b = make(dt, ln[s].nn, norm, L_ANY, P_FINITE);
        if (x.c && w.c && b.c) {
          arg args[5] = {AT(&x), AINTS(norm, (size_t)ln[s].nn), wb & 1 ? AT(&w) : ANONE,
                         wb & 2 ? AT(&b) : ANONE, AFLOAT(1e-5)};
          check("core::layer_norm", args, 5, NULL, T_SQRT, n);
        }
        twin_free(&x);
        twin_free(&w);
        twin_free(&b);
      }
  layer_norm_rows();
  done();
}

static void matmul_cases(bool tiled) {
  if (tiled) setenv("BP_CUDA_MATMUL", "tiled", 1);
  if (!setup(tiled ? 9 : 8)) return;
  static const struct {
    int32_t na;
    int64_t a[4];
    int32_t nb;
    int64_t b[4];
  } mm[] = {
      {2, {3, 4}, 2, {4, 5}},         {1, {4}, 2, {4, 5}},          {2, {3, 4}, 1, {4}},
      {1, {7}, 1, {7}},               {3, {2, 3, 4}, 2, {4, 5}},    {2, {3, 4}, 3, {2, 4, 5}},
      {4, {2, 1, 3, 4}, 3, {5, 4, 6}}, {3, {2, 3, 0}, 3, {2, 0, 5}}, {2, {0, 4}, 2, {4, 3}},
      {2, {130, 200}, 2, {200, 70}},  {2, {3, 4}, 2, {5, 6}},       {0, {0}, 1, {3}},
      {3, {3, 65, 129}, 3, {3, 129, 66}}, {2, {256, 1000}, 2, {1000, 64}},
  };
  for (int di = 0; di < NDTYPES; di++)
    for (size_t s = 0; s < sizeof mm / sizeof mm[0]; s++) {
      int32_t dt = all_dtypes[di];
      if (tiled && !is_float(dt)) continue;
      ctx("matmul%s %s case #%zu", tiled ? " (tiled)" : "", dtn(dt), s);
      twin a = make(dt, mm[s].na, mm[s].a, L_ANY, P_UNIT), b = make(dt, mm[s].nb, mm[s].b, L_ANY, P_UNIT);
      if (a.c && b.c) {
        arg args[2] = {AT(&a), AT(&b)};
        int64_t k = mm[s].na ? mm[s].a[mm[s].na - 1] : 1;
        check("core::matmul", args, 2, NULL, T_SQRT, k);
      }
      twin_free(&a);
      twin_free(&b);
    }
  done();
}

static void matmul_default(void) { matmul_cases(false); }
static void matmul_tiled(void) { matmul_cases(true); }

/* A tiny op many times, alternating streams: results stay right. */
static void many_small_calls(void) {
  if (!setup(10)) return;
  int64_t n = 3;
  for (int i = 0; i < 2000; i++) {
    twin a = make(BP_FLOAT32, 1, &n, L_CONTIG, P_FINITE);
    if (!a.c) break;
    arg args[2] = {AT(&a), AT(&a)};
    check("core::mul", args, 2, NULL, T_PLAIN, 1);
    twin_free(&a);
  }
  done();
}

/* ------------------------------------------------------------------------ */
/* layer_norm of equal rows and of rows far from 0                          */
/* ------------------------------------------------------------------------ */

/* Writes v (exactly representable in dt, or rounded) as element i. */
static void put_f(int32_t dt, void *p, int64_t i, double v) {
  switch (dt) {
    case BP_FLOAT32: ((float *)p)[i] = (float)v; break;
    case BP_FLOAT64: ((double *)p)[i] = v; break;
    case BP_FLOAT16: ((uint16_t *)p)[i] = f2h_bits((float)v); break;
    case BP_BFLOAT16: {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, sizeof u);
      ((uint16_t *)p)[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      break;
    }
    default: break;
  }
}

/* A contiguous twin whose element i is f(i, row length). */
static twin make_rows(int32_t dt, int64_t rows, int64_t n, double (*f)(int64_t, int64_t)) {
  int64_t sizes[2] = {rows, n};
  twin t = make(dt, 2, sizes, L_CONTIG, P_FINITE);
  if (!t.c) return t;
  void *p = bp_tensor_get_view(t.cs)->data;
  for (int64_t i = 0; i < rows * n; i++) put_f(dt, p, i, f(i, n));
  if (bp_tensor_copy(t.gs, t.cs) != BP_OK) {
    fail("copying rows to cuda:0: %s", bp_last_error());
    twin_free(&t);
  }
  return t;
}

/* Row r holds one value; values exact in every float dtype. */
static double equal_rows(int64_t i, int64_t n) {
  static const double v[] = {0.0, -3.5, 1024.0, 0.15625, 96.0, -40000.0};
  return v[(i / n) % 6];
}

/* Rows about 1e4 (or -1e4, and 3e7 for float64) with small noise. */
static double offset_rows(int64_t i, int64_t n) {
  static const double base[] = {1e4, -1e4, 2.5e3};
  return base[(i / n) % 3] + uni(-0.5, 0.5);
}

static double offset_rows_f64(int64_t i, int64_t n) {
  return ((i / n) % 2 ? 3e7 : -1e4) + uni(-0.5, 0.5);
}

/* Part of nn_ops, so that bench/cuda-run.sh runs it with
 * BP_CUDA_NN=registers too. */
static void layer_norm_rows(void) {
  static const int32_t fdt[] = {BP_FLOAT32, BP_FLOAT64, BP_FLOAT16, BP_BFLOAT16};
  static const int64_t lens[] = {1, 7, 1000, 4099};
  for (size_t di = 0; di < 4; di++)
    for (size_t li = 0; li < 4; li++)
      for (int wb = 0; wb < 4; wb++) {
        int32_t dt = fdt[di];
        int64_t n = lens[li], rows = 12;
        twin w = make(dt, 1, &n, L_CONTIG, P_FINITE), b = make(dt, 1, &n, L_CONTIG, P_FINITE);
        arg wa = wb & 1 ? AT(&w) : ANONE, ba = wb & 2 ? AT(&b) : ANONE;

        /* Equal values: the CPU's result, and exactly the bias (or 0). */
        ctx("layer_norm of equal rows %s n %lld weight/bias %d", dtn(dt), (long long)n, wb);
        twin x = make_rows(dt, rows, n, equal_rows);
        if (x.c && w.c && b.c) {
          arg args[5] = {AT(&x), AINTS(&n, 1), wa, ba, AFLOAT(1e-5)};
          check("core::layer_norm", args, 5, NULL, T_SQRT, n);
          const bp_op *op = NULL;
          bp_tensor *out = NULL;
          if (bp_op_find("core::layer_norm", &op) == BP_OK &&
              call_on(op, args, 5, true, &out) == BP_OK) {
            bp_tensor *h = to_host(out);
            const void *bh = bp_tensor_get_view(b.c)->data;
            if (h) {
              const void *hp = bp_tensor_get_view(h)->data;
              int64_t bad = 0;
              for (int64_t i = 0; i < rows * n; i++) {
                double want = wb & 2 ? get_f(dt, bh, i % n) : 0.0;
                if (get_f(dt, hp, i) != want && bad++ == 0)
                  fail("element %lld of an equal row is %.9g, not %.9g", (long long)i,
                       get_f(dt, hp, i), want);
              }
              ok(bad == 0);
            }
            bp_tensor_release(h);
            bp_tensor_release(out);
          } else {
            fail("layer_norm of equal rows: %s", bp_last_error());
          }
        }
        twin_free(&x);

        /* Far from 0: the statistics must not cancel. */
        ctx("layer_norm of rows far from 0 %s n %lld weight/bias %d", dtn(dt), (long long)n, wb);
        x = make_rows(dt, rows, n, dt == BP_FLOAT64 ? offset_rows_f64 : offset_rows);
        if (x.c && w.c && b.c) {
          arg args[5] = {AT(&x), AINTS(&n, 1), wa, ba, AFLOAT(1e-5)};
          check("core::layer_norm", args, 5, NULL, T_SQRT, n);
        }
        twin_free(&x);
        twin_free(&w);
        twin_free(&b);
      }
}

/* ------------------------------------------------------------------------ */
/* matmul from two threads on two streams                                   */
/* ------------------------------------------------------------------------ */

#define MM_THREADS 2
#define MM_ROUNDS 24

typedef struct mm_job {
  const bp_op *op;
  bp_tensor *a, *b;    /* on cuda:0 */
  const float *want;   /* the CPU's product */
  int64_t numel, k;
  int64_t bad;         /* elements out of tolerance, over all rounds */
  char err[256];       /* the first failure's message */
} mm_job;

static void *mm_thread(void *p) {
  mm_job *j = (mm_job *)p;
  bp_stream *s = NULL;
  if (bp_stream_create(CUDA0, &s) != BP_OK || bp_stream_set_current(CUDA0, s) != BP_OK) {
    snprintf(j->err, sizeof j->err, "stream: %s", bp_last_error());
    return NULL;
  }
  double rtol = 2 * 1.3e-6 * sqrt((double)j->k), atol = 2e-5;
  for (int r = 0; r < MM_ROUNDS && !j->err[0]; r++) {
    bp_value vals[4];
    bp_stack st = {BP_STACK_STRUCT_SIZE, vals, 4, 0};
    bp_stack_push_tensor(&st, j->a);
    bp_stack_push_tensor(&st, j->b);
    if (bp_call(j->op, &st) != BP_OK) {
      snprintf(j->err, sizeof j->err, "matmul: %s", bp_last_error());
      break;
    }
    bp_tensor *c = vals[0].u.tensor, *h = NULL;
    const bp_tensor_view *cv = bp_tensor_get_view(c);
    /* The copy runs on this thread's stream and waits for it. */
    if (bp_tensor_empty(BP_CPU, cv->dtype, cv->ndim, cv->sizes, &h) != BP_OK ||
        bp_tensor_copy(h, c) != BP_OK) {
      snprintf(j->err, sizeof j->err, "copy: %s", bp_last_error());
    } else {
      const float *got = (const float *)bp_tensor_get_view(h)->data;
      for (int64_t i = 0; i < j->numel; i++)
        if (!(fabs((double)got[i] - j->want[i]) <= atol + rtol * fabs((double)j->want[i])))
          j->bad++;
    }
    bp_tensor_release(h);
    bp_tensor_release(c);
  }
  bp_stream_set_current(CUDA0, NULL);
  if (bp_stream_destroy(CUDA0, s) != BP_OK && !j->err[0])
    snprintf(j->err, sizeof j->err, "stream_destroy: %s", bp_last_error());
  return NULL;
}

/* Each thread multiplies its own matrices on its own stream, at the same
 * time as the other: with one cuBLAS handle (and workspace) shared by the
 * two streams, the products could be wrong. */
static void matmul_two_streams(void) {
  if (!setup(12)) return;
  const bp_op *op = NULL;
  if (bp_op_find("core::matmul", &op) != BP_OK) {
    fail("core::matmul: %s", bp_last_error());
    done();
    return;
  }
  static const int64_t dims[MM_THREADS][3] = {{384, 1536, 320}, {320, 2048, 384}};
  twin a[MM_THREADS], b[MM_THREADS];
  bp_tensor *want[MM_THREADS];
  mm_job jobs[MM_THREADS];
  memset(jobs, 0, sizeof jobs);
  bool ready = true;
  for (int t = 0; t < MM_THREADS; t++) {
    int64_t sa[2] = {dims[t][0], dims[t][1]}, sb[2] = {dims[t][1], dims[t][2]};
    a[t] = make(BP_FLOAT32, 2, sa, L_CONTIG, P_UNIT);
    b[t] = make(BP_FLOAT32, 2, sb, L_CONTIG, P_UNIT);
    want[t] = NULL;
    arg args[2] = {AT(&a[t]), AT(&b[t])};
    if (!a[t].c || !b[t].c || call_on(op, args, 2, false, &want[t]) != BP_OK) {
      fail("the CPU's product: %s", bp_last_error());
      ready = false;
      continue;
    }
    jobs[t].op = op;
    jobs[t].a = a[t].g;
    jobs[t].b = b[t].g;
    jobs[t].want = (const float *)bp_tensor_get_view(want[t])->data;
    jobs[t].numel = dims[t][0] * dims[t][2];
    jobs[t].k = dims[t][1];
  }
  if (ready) {
    pthread_t th[MM_THREADS];
    for (int t = 0; t < MM_THREADS; t++) pthread_create(&th[t], NULL, mm_thread, &jobs[t]);
    for (int t = 0; t < MM_THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < MM_THREADS; t++) {
      if (jobs[t].err[0]) fail("thread %d: %s", t, jobs[t].err);
      else ok(!jobs[t].err[0]);
      if (jobs[t].bad) fail("thread %d: %lld elements differ from the CPU's", t,
                            (long long)jobs[t].bad);
      else ok(jobs[t].bad == 0);
    }
  }
  for (int t = 0; t < MM_THREADS; t++) {
    bp_tensor_release(want[t]);
    twin_free(&a[t]);
    twin_free(&b[t]);
  }
  done();
}

int main(void) {
  if (!plugin_built("cuda")) return tap_skip_all("the CUDA plugin is not built (no CUDA Toolkit)");
  if (!plugin_built("cpu")) return tap_skip_all("the CPU plugin is not built");
  if (cuda_probe(NULL, 0) == 0) return tap_skip_all("no CUDA device");
  static const tap_case cases[] = {
      TAP_CASE(binary_ops),   TAP_CASE(muladd_and_add_out), TAP_CASE(unary_ops),
      TAP_CASE(where_cast_contiguous), TAP_CASE(fill_and_copy), TAP_CASE(reductions),
      TAP_CASE(sum_of_many_trues),
      TAP_CASE(nn_ops),       TAP_CASE(matmul_default),     TAP_CASE(matmul_tiled),
      TAP_CASE(many_small_calls), TAP_CASE(matmul_two_streams),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
