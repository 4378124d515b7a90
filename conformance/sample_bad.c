/*
 * conformance/sample_bad.c - the arguments an op must refuse, for the errors
 * check: shapes that do not broadcast or multiply, dims out of range or
 * repeated, a bad enum string, an out argument of the wrong shape, dtype
 * or layout, a negative eps.  Each must give the status the op set names
 * (the meta function's) and a message, never a crash.
 */
#include <stdio.h>
#include <string.h>

#include "sample_int.h"
#include "num.h"

static sample *two(slist *L, const char *label, int32_t na, const int64_t *sa, int32_t nb,
                   const int64_t *sb) {
  sample *s = cert_gen_next(L, label);
  cert_add_tensor(s, cert_gen_input(L, 0, L->dt, na, sa), L_CONTIG);
  cert_add_tensor(s, cert_gen_input(L, 1, L->dt, nb, sb), L_CONTIG);
  return s;
}

void cert_gen_badshape(slist *L) {
  enum kind k = kind_of(L);
  int sub = sub_of(L);
  static const int64_t s23[] = {2, 3}, s4[] = {4}, s32[] = {3, 2}, s234[] = {2, 3, 4},
                       s345[] = {3, 4, 5}, s24[] = {2, 4};
  sample *s;
  /* the float after the two tensors: alpha, or muladd's c */
  bool alpha = k == K_MULADD || k == K_ADD_OUT ||
               (k == K_BINARY && (sub == RB_ADD || sub == RB_SUB));
  switch (k) {
    case K_BINARY:
    case K_MULADD:
    case K_ADD_OUT:
    case K_COMPARE:
    case K_LOGICAL:
      s = two(L, "shapes [2, 3] and [4]", 2, s23, 1, s4);
      if (alpha) cert_add_float(s, 1.0);
      if (k == K_ADD_OUT) cert_add_tensor(s, cert_rand_rt(L->dt, 2, s23, -1, 1), L_CONTIG);
      s = two(L, "shapes [2, 3] and [3, 2]", 2, s23, 2, s32);
      if (alpha) cert_add_float(s, 1.0);
      if (k == K_ADD_OUT) cert_add_tensor(s, cert_rand_rt(L->dt, 2, s23, -1, 1), L_CONTIG);
      if (k == K_ADD_OUT) {
        s = two(L, "out of the wrong shape", 2, s23, 2, s23);
        cert_add_float(s, 1.0);
        cert_add_tensor(s, cert_rand_rt(L->dt, 2, s24, -1, 1), L_CONTIG);
        s = two(L, "out with a stride-0 dim", 2, s23, 2, s23);
        cert_add_float(s, 1.0);
        cert_add_tensor(s, cert_rand_rt(L->dt, 2, s23, -1, 1), L_EXPANDED);
        cert_gen_make_expandable(s->a[3].t, L_EXPANDED);
        s = two(L, "out of another dtype", 2, s23, 2, s23);
        cert_add_float(s, 1.0);
        cert_add_tensor(s,
                        cert_rand_rt(L->dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64, 2, s23, -1, 1),
                        L_CONTIG);
      }
      break;
    case K_WHERE:
      s = cert_gen_next(L, "condition [2, 3], self [4]");
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, 2, s23, 0, 1), L_CONTIG);
      cert_add_tensor(s, cert_gen_input(L, 1, L->dt, 1, s4), L_CONTIG);
      cert_add_tensor(s, cert_gen_input(L, 2, L->dt, 2, s23), L_CONTIG);
      s = cert_gen_next(L, "a condition that is not bool");
      cert_add_tensor(s, cert_rand_rt(L->dt == BP_BOOL ? BP_INT8 : L->dt, 2, s23, 0, 1), L_CONTIG);
      cert_add_tensor(s, cert_gen_input(L, 1, L->dt, 2, s23), L_CONTIG);
      cert_add_tensor(s, cert_gen_input(L, 2, L->dt, 2, s23), L_CONTIG);
      break;
    case K_MASKED_FILL:
      s = cert_gen_next(L, "self [2, 3], mask [4]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, 1, s4, 0, 1), L_CONTIG);
      cert_add_float(s, 1.0);
      s = cert_gen_next(L, "a mask that is not bool");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_tensor(s, cert_rand_rt(BP_FLOAT32, 2, s23, 0, 1), L_CONTIG);
      cert_add_float(s, 1.0);
      s = cert_gen_next(L, "a value float32 cannot hold (1e39)");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, 2, s23, 0, 1), L_CONTIG);
      cert_add_float(s, 1e39);
      break;
    case K_CLAMP:
      s = cert_gen_next(L, "min and max both None");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_none(s);
      cert_add_none(s);
      s = cert_gen_next(L, "a bool self with bool bounds");
      cert_add_tensor(s, cert_rand_rt(BP_BOOL, 2, s23, 0, 1), L_CONTIG);
      cert_add_bool(s, false);
      cert_add_bool(s, true);
      break;
    case K_MATMUL: {
      static const int64_t s42[] = {4, 2}, s3x45[] = {3, 4, 5};
      two(L, "inner sizes 3 and 4", 2, s23, 2, s42);
      two(L, "a 0-dim argument", 0, NULL, 2, s23);
      two(L, "batches 2 and 3", 3, s234, 3, s3x45);
      break;
    }
    case K_COPY: {
      s = two(L, "src [4] into self [2, 3]", 2, s23, 1, s4);
      s = two(L, "src [2, 3] into self [3]", 1, s23 + 1, 2, s23);
      s = cert_gen_next(L, "self with a stride-0 dim");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_EXPANDED);
      cert_gen_make_expandable(s->a[0].t, L_EXPANDED);
      cert_add_tensor(s, cert_gen_input(L, 1, L->dt, 2, s23), L_CONTIG);
      break;
    }
    case K_LAYER_NORM: {
      static const int64_t five = 5, four = 4, two_ = 2;
      s = cert_gen_next(L, "normalized_shape [5] of [2, 3, 4]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, &five, 1);
      s = cert_gen_next(L, "a weight of shape [2]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, &four, 1);
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 1, &two_), L_CONTIG);
      static const int64_t s223[] = {2, 2, 3}, six = 6, s3x2[] = {3, 2};
      s = cert_gen_next(L, "normalized_shape [6] of [2, 2, 3]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s223), L_CONTIG);
      cert_add_list(s, &six, 1);
      s = cert_gen_next(L, "normalized_shape [3, 2] of [2, 2, 3]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s223), L_CONTIG);
      cert_add_list(s, s3x2, 2);
      s = cert_gen_next(L, "eps -1");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, &four, 1);
      cert_add_none(s);
      cert_add_none(s);
      cert_add_float(s, -1.0);
      break;
    }
    case K_REDUCE: {
      static const int64_t d3 = 3, dm4 = -4, d11[] = {1, 1}, d0m3[] = {0, -3}, d00[] = {0, 0};
      s = cert_gen_next(L, "dim 3 of a 3-D tensor");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, &d3, 1);
      s = cert_gen_next(L, "dim -4 of a 3-D tensor");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, &dm4, 1);
      s = cert_gen_next(L, "dims [1, 1]");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, d11, 2);
      s = cert_gen_next(L, "dims [0, -3] (the same dim)");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 3, s234), L_CONTIG);
      cert_add_list(s, d0m3, 2);
      s = cert_gen_next(L, "dims [0, 0] of a 0-dim tensor");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 0, NULL), L_CONTIG);
      cert_add_list(s, d00, 2);
      if (sub == RR_AMAX || sub == RR_AMIN) {
        static const int64_t s03[] = {0, 3}, d0 = 0;
        s = cert_gen_next(L, "a reduction over an empty dim");
        cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s03), L_CONTIG);
        cert_add_list(s, &d0, 1);
      }
      break;
    }
    case K_ARGMAX:
    case K_SOFTMAX:
    case K_CUMSUM:
      s = cert_gen_next(L, "dim 2 of a 2-D tensor");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_int(s, 2);
      s = cert_gen_next(L, "dim -3 of a 2-D tensor");
      cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
      cert_add_int(s, -3);
      break;
    case K_UNARY:
      if (sub == RU_GELU) {
        static const char *const bad[] = {"Tanh", "", "erf", "none "};
        for (size_t j = 0; j < 4; j++) {
          char label[64];
          snprintf(label, sizeof label, "approximate='%s'", bad[j]);
          s = cert_gen_next(L, label);
          cert_add_tensor(s, cert_gen_input(L, 0, L->dt, 2, s23), L_CONTIG);
          cert_add_str(s, bad[j]);
        }
      }
      break;
    default: break;
  }
  (void)s345;
}
