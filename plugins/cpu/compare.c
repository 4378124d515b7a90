/*
 * plugins/cpu/compare.c - the comparisons of op set 2: eq, ne, lt, le, gt
 * and ge on two tensors, with a bool result.
 *
 * The operands meet in their promoted dtype (bp_aux_promote): an operand
 * of another dtype is converted into a temporary first, as elementwise.c
 * does, and the loops compare two operands of one dtype.  float16 and
 * bfloat16 compare as float32 (exactly: the conversion is exact), and
 * C's comparisons give IEEE's answers for NaN (unequal to everything,
 * itself included; never ordered).  The Scalar overloads (eq.Scalar, ...)
 * are the host's composites over these kernels.
 */
#include "elementwise.h"

/* A comparison loop over (out: bool, a, b: T), comparing as C. */
#define CMP_LOOP(CLONES, name, T, C, LD, OP)                                                \
  CLONES static void name(char **p, const int64_t *s, int64_t n, void *ctx) {               \
    (void)ctx;                                                                              \
    const int64_t w = (int64_t)sizeof(T);                                                   \
    if (s[0] == 1 && s[1] == w && s[2] == w) {                                              \
      uint8_t *o = PTR(uint8_t, p[0]);                                                      \
      const T *x = CPTR(T, p[1]), *y = CPTR(T, p[2]);                                       \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)((C)LD(x[i]) OP (C)LD(y[i]));          \
    } else if (s[0] == 1 && s[1] == w && s[2] == 0) {                                       \
      uint8_t *o = PTR(uint8_t, p[0]);                                                      \
      const T *x = CPTR(T, p[1]);                                                           \
      const C b = LD(*CPTR(T, p[2]));                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)((C)LD(x[i]) OP b);                   \
    } else if (s[0] == 1 && s[1] == 0 && s[2] == w) {                                       \
      uint8_t *o = PTR(uint8_t, p[0]);                                                      \
      const T *y = CPTR(T, p[2]);                                                           \
      const C a = LD(*CPTR(T, p[1]));                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(a OP (C)LD(y[i]));                   \
    } else {                                                                                \
      char *po = p[0];                                                                      \
      const char *px = p[1], *py = p[2];                                                    \
      for (int64_t i = 0; i < n; i++, po += s[0], px += s[1], py += s[2])                   \
        *PTR(uint8_t, po) = (uint8_t)((C)LD(*CPTR(T, px)) OP (C)LD(*CPTR(T, py)));          \
    }                                                                                       \
  }

/* Per dtype: name, storage type, compare type, load. */
#define CMP_TYPES(X)                                                                        \
  X(f32, float, float, ID) X(f64, double, double, ID)                                       \
  X(f16, uint16_t, float, bp_aux_f16_to_f32) X(bf16, uint16_t, float, bp_aux_bf16_to_f32)   \
  X(i8, int8_t, int8_t, ID) X(i16, int16_t, int16_t, ID) X(i32, int32_t, int32_t, ID)       \
  X(i64, int64_t, int64_t, ID) X(u8, uint8_t, uint8_t, ID) X(b8, uint8_t, uint8_t, LD_b8)

#define CLONES_f32 CPU_CLONES
#define CLONES_f64 CPU_CLONES
#define CLONES_f16 F16_CLONES
#define CLONES_bf16 CPU_CLONES
#define CLONES_i8 CPU_CLONES
#define CLONES_i16 CPU_CLONES
#define CLONES_i32 CPU_CLONES
#define CLONES_i64 CPU_CLONES
#define CLONES_u8 CPU_CLONES
#define CLONES_b8 CPU_CLONES

#define X(tn, T, C, LD)                                                                     \
  CMP_LOOP(CLONES_##tn, eq_##tn, T, C, LD, ==)                                              \
  CMP_LOOP(CLONES_##tn, ne_##tn, T, C, LD, !=)                                              \
  CMP_LOOP(CLONES_##tn, lt_##tn, T, C, LD, <)                                               \
  CMP_LOOP(CLONES_##tn, le_##tn, T, C, LD, <=)                                              \
  CMP_LOOP(CLONES_##tn, gt_##tn, T, C, LD, >)                                               \
  CMP_LOOP(CLONES_##tn, ge_##tn, T, C, LD, >=)
CMP_TYPES(X)
#undef X

typedef struct compare_op {
  const char *name;
  cpu_loop_fn loops[NDT];
} compare_op;

#define ROW(op)                                                                             \
  {[DT_f32] = op##_f32, [DT_f64] = op##_f64, [DT_f16] = op##_f16, [DT_bf16] = op##_bf16,    \
   [DT_i8] = op##_i8,   [DT_i16] = op##_i16, [DT_i32] = op##_i32, [DT_i64] = op##_i64,      \
   [DT_u8] = op##_u8,   [DT_b8] = op##_b8}

static const compare_op ops[] = {{"eq", ROW(eq)}, {"ne", ROW(ne)}, {"lt", ROW(lt)},
                                 {"le", ROW(le)}, {"gt", ROW(gt)}, {"ge", ROW(ge)}};

/* out (bool, sized by the host) = self op other. */
static bp_status compare_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const compare_op *op = ctx->user_data;
  const bp_tensor_view *va = view_of(args[0].u.tensor), *vb = view_of(args[1].u.tensor);
  int32_t dt = bp_aux_promote(va->dtype, vb->dtype);
  cpu_loop_fn loop = loop_for(op->loops, dt);
  if (!loop) return unsupported(ctx, 0, dt);
  bp_tensor *ts[2] = {args[0].u.tensor, args[1].u.tensor};
  bp_aux_operands in;
  bp_status st = bp_aux_operands_init(ctx, &in, cpu_operand_cast, view_of(out), 1, ts, 2, dt);
  if (st) return st;
  run(loop, 3, in.views, NULL);
  bp_aux_operands_release(ctx, &in);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(compare_kernel, compare_impl)

bp_status cpu_register_compare(bp_library *lib) {
  bp_status st = BP_OK;
  for (size_t i = 0; !st && i < sizeof ops / sizeof ops[0]; i++)
    st = CPU_IMPL_STRUCTURED(lib, ops[i].name, compare_kernel, &ops[i]);
  return st;
}
