/*
 * plugins/cpu/rows.c - the row kernels that softmax.c and layer_norm.c
 * share: blocked sums of a row's deviations (or their squares), and the
 * gathering of a strided or float16/bfloat16 row into a float buffer and
 * its scattering back.
 */
#include "cpu.h"

#define LANES 16

/*
 * Sum of x - c, or of (x - c)^2, over n <= CPU_ROW_BLOCK elements, in lanes, where
 * c is given as c + c_lo in two parts.  Summing deviations rather than
 * values keeps the error proportional to the deviations: for a row whose
 * values lie close together far from 0, a float sum of the values (or a
 * float mean) loses much of what tells them apart, while x - c is exact
 * there and c_lo corrects the rounding of c.
 */
#define DEFINE_SUM(name, T)                                                              \
  static CPU_CLONES T name(const T *x, int64_t n, bool squares, T c, T c_lo) {           \
    T acc[LANES] = {0};                                                                  \
    int64_t i = 0;                                                                       \
    if (squares) {                                                                       \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) {                                                \
          T d = (x[i + j] - c) - c_lo;                                                   \
          acc[j] += d * d;                                                               \
        }                                                                                \
      for (int j = 0; i < n; i++, j++) acc[j] += ((x[i] - c) - c_lo) * ((x[i] - c) - c_lo); \
    } else {                                                                             \
      for (; i + LANES <= n; i += LANES)                                                 \
        for (int j = 0; j < LANES; j++) acc[j] += x[i + j] - c;                          \
      for (int j = 0; i < n; i++, j++) acc[j] += x[i] - c;                               \
    }                                                                                    \
    for (int w = LANES / 2; w > 0; w /= 2)                                               \
      for (int j = 0; j < w; j++) acc[j] += acc[j + w];                                  \
    return acc[0];                                                                       \
  }

DEFINE_SUM(rows_sum_f32, float)
DEFINE_SUM(rows_sum_f64, double)

/* The multi-versioned functions are static and called through these plain
 * ones from the other files: clang 14 names a non-static clone's symbol
 * "name.ifunc", which callers in other files cannot link to. */
float cpu_row_sum_f32(const float *x, int64_t n, bool squares, float c, float c_lo) {
  return rows_sum_f32(x, n, squares, c, c_lo);
}

double cpu_row_sum_f64(const double *x, int64_t n, bool squares, double c, double c_lo) {
  return rows_sum_f64(x, n, squares, c, c_lo);
}

double cpu_row_total_f32(const float *x, int64_t n, bool squares, float c, float c_lo,
                         const float *ahead) {
  double s = 0;
  for (int64_t i = 0; i < n; i += CPU_ROW_BLOCK) {
    int64_t k = n - i < CPU_ROW_BLOCK ? n - i : CPU_ROW_BLOCK;
    if (ahead) cpu_prefetch(ahead + i, k * (int64_t)sizeof *x);
    s += rows_sum_f32(x + i, k, squares, c, c_lo);
  }
  return s;
}

double cpu_row_total_f64(const double *x, int64_t n, bool squares, double c, const double *ahead) {
  double s = 0;
  for (int64_t i = 0; i < n; i += CPU_ROW_BLOCK) {
    int64_t k = n - i < CPU_ROW_BLOCK ? n - i : CPU_ROW_BLOCK;
    if (ahead) cpu_prefetch(ahead + i, k * (int64_t)sizeof *x);
    s += rows_sum_f64(x + i, k, squares, c, 0);
  }
  return s;
}

/* Reads n elements of dtype dt (stride in bytes) as floats. */
static CPU_CLONES void rows_gather_f32(float *dst, const char *src, int64_t stride, int64_t n,
                               int32_t dt) {
  switch (dt) {
    case BP_FLOAT32:
      for (int64_t i = 0; i < n; i++) dst[i] = *(const float *)(src + i * stride);
      break;
    case BP_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        dst[i] = bp_aux_f16_to_f32(*(const uint16_t *)(src + i * stride));
      break;
    default:
      for (int64_t i = 0; i < n; i++)
        dst[i] = bp_aux_bf16_to_f32(*(const uint16_t *)(src + i * stride));
      break;
  }
}

/* Writes n floats as dtype dt (stride in bytes), rounding to nearest even. */
static CPU_CLONES void rows_scatter_f32(char *dst, int64_t stride, const float *src, int64_t n,
                                        int32_t dt) {
  switch (dt) {
    case BP_FLOAT32:
      for (int64_t i = 0; i < n; i++) *(float *)(dst + i * stride) = src[i];
      break;
    case BP_FLOAT16:
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = bp_aux_f32_to_f16(src[i]);
      break;
    default:
      for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = bp_aux_f32_to_bf16(src[i]);
      break;
  }
}

void cpu_gather_f32(float *dst, const char *src, int64_t stride, int64_t n, int32_t dt) {
  rows_gather_f32(dst, src, stride, n, dt);
}

void cpu_scatter_f32(char *dst, int64_t stride, const float *src, int64_t n, int32_t dt) {
  rows_scatter_f32(dst, stride, src, n, dt);
}

void cpu_gather_f64(double *dst, const char *src, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = *(const double *)(src + i * stride);
}

void cpu_scatter_f64(char *dst, int64_t stride, const double *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) *(double *)(dst + i * stride) = src[i];
}

