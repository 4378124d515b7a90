/*
 * plugins/cpu/index.c - the gathers of op set 2: index_select and gather
 * (embedding is the host's composite over index_select).
 *
 * index_select reads every index first and refuses one out of range with
 * the index, its position and the bound, before anything is read from
 * self.  gather, whose index is as large as its result, checks each index
 * in the loop that reads with it rather than in a pass of its own: an
 * index out of range reads element 0 in its place (it never reaches
 * memory it does not name) and fails the call, which then finds the first
 * such index for the same error.  self is made contiguous (a copy when it
 * is not), so that a gathered slice is one memcpy: index_select of whole
 * rows, the embedding lookup, copies `inner` elements per index.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* The first index of v[0 .. n-1] outside [0, bound), or -1. */
static int64_t first_bad(const int64_t *v, int64_t n, int64_t bound) {
  uint64_t any = 0;
  /* one unsigned compare per index (negative ones wrap to huge), and a
   * branch-free loop until one is found */
  for (int64_t k = 0; k < n; k++) any |= (uint64_t)v[k] >= (uint64_t)bound;
  if (!any) return -1;
  for (int64_t k = 0; k < n; k++)
    if ((uint64_t)v[k] >= (uint64_t)bound) return k;
  return -1;
}

/* Refuses the first index of v[0 .. n-1] outside [0, bound), which there
 * is: the index, its position and the bound. */
static bp_status refuse_index(const bp_kernel_ctx *ctx, const int64_t *v, int64_t n, int argi,
                              int64_t bound, int32_t dim) {
  int64_t k = first_bad(v, n, bound);
  return CPU_ERR(BP_ERR_INVALID_ARGUMENT,
                 "%s: argument #%d 'index': index %lld (at position %lld) is out of range "
                 "for dimension %d of size %lld (expected 0 .. %lld)",
                 ctx->op_name, argi, (long long)v[k], (long long)k, (int)dim, (long long)bound,
                 (long long)bound - 1);
}

/* The indices of `ix` (int64 or int32, any strides) as contiguous int64,
 * in order: *out is ix's own data when it is contiguous int64 (*owned
 * false), else a new array to free.  With `check`, each must lie in
 * [0, bound); without, the caller checks them. */
static bp_status read_indices(const bp_kernel_ctx *ctx, const bp_tensor_view *ix, int argi,
                              int64_t bound, int32_t dim, bool check, const int64_t **out,
                              bool *owned) {
  int64_t n = ix->numel;
  int64_t *v = NULL;
  *owned = !(ix->dtype == BP_INT64 && (ix->flags & BP_VIEW_CONTIGUOUS));
  if (*owned) {
    v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld indices",
                           ctx->op_name, (long long)n);
    int64_t idx[BP_MAX_NDIM] = {0};
    for (int64_t k = 0; k < n; k++) {
      int64_t off = 0;
      for (int32_t d = 0; d < ix->ndim; d++) off += idx[d] * ix->strides[d];
      const char *p = (const char *)ix->data + off * ix->itemsize;
      v[k] = ix->dtype == BP_INT64 ? *(const int64_t *)(const void *)p
                                   : *(const int32_t *)(const void *)p;
      for (int32_t d = ix->ndim - 1; d >= 0; d--) {
        if (++idx[d] < ix->sizes[d]) break;
        idx[d] = 0;
      }
    }
  }
  const int64_t *all = *owned ? v : (const int64_t *)ix->data;
  if (check && first_bad(all, n, bound) >= 0) {
    bp_status st = refuse_index(ctx, all, n, argi, bound, dim);
    free(v);
    return st;
  }
  *out = all;
  return BP_OK;
}

/* What both gathers start with: dim, self's size along it, the indices
 * (*ix, to free; checked when `check`) and a contiguous self (*c, to
 * release). */
static bp_status gather_setup(const bp_kernel_ctx *ctx, const bp_value *args, bool check,
                              int32_t *dim, int64_t *size, const int64_t **ix, bool *owned,
                              bp_tensor **c) {
  const bp_tensor_view *va = view_of(args[0].u.tensor);
  *dim = 0;
  if (va->ndim > 0) *dim = (int32_t)(args[1].u.i < 0 ? args[1].u.i + va->ndim : args[1].u.i);
  *size = va->ndim > 0 ? va->sizes[*dim] : 1;
  *ix = NULL;
  *c = NULL;
  bp_status st =
      read_indices(ctx, view_of(args[2].u.tensor), 2, *size, *dim, check, ix, owned);
  if (st) return st;
  st = cpu_cast_to(args[0].u.tensor, va->dtype, c);
  if (st && *owned) free((void *)*ix);
  return st;
}

/* index_select's copies: slice t = (o, k) of the result is slice (o,
 * ix[k]) of self, `row` bytes each. */
typedef struct select_job {
  const char *src;
  char *dst;
  const int64_t *ix;
  int64_t outer, n, inner, size;
  size_t row;
} select_job;

static void select_rows(void *ctx, int64_t begin, int64_t end) {
  const select_job *j = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / j->n, k = t % j->n;
    memcpy(j->dst + (size_t)t * j->row, j->src + (size_t)(o * j->size + j->ix[k]) * j->row,
           j->row);
  }
}

/* out = self's slices along dim at index (out sized by the host). */
static bp_status index_select_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                   bp_tensor *out) {
  const bp_tensor_view *va = view_of(args[0].u.tensor), *vi = view_of(args[2].u.tensor);
  const bp_tensor_view *vo = view_of(out);
  int32_t dim;
  int64_t size;
  const int64_t *ix;
  bool owned;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, true, &dim, &size, &ix, &owned, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  select_job j = {vc->data, vo->data, ix, 1, vi->numel, 1, size, 0};
  for (int32_t d = 0; d < dim; d++) j.outer *= va->sizes[d];
  for (int32_t d = dim + 1; d < va->ndim; d++) j.inner *= va->sizes[d];
  j.row = (size_t)(j.inner * va->itemsize);
  if (vo->numel > 0)
    cpu_parallel_for(j.outer * j.n, j.row >= 65536 ? 1 : (int64_t)(65536 / (j.row ? j.row : 1)),
                     select_rows, &j);
  cpu_host->tensor_release(c);
  if (owned) free((void *)ix);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(index_select_kernel, index_select_impl)

/*
 * gather's copies run over a row of the result (its last dim) at a time,
 * GATHER_STEP elements per call.  An index k outside [0, bound) reads
 * element 0 in its place (a vector lane, nothing) and makes the call
 * return true: the check is a compare and a select per element in the
 * loop that uses the index, rather than a pass of its own over them all.
 *
 * Along the last dim of a contiguous self (dim last, its stride 1),
 * element i of the run is src[ix[i]]: the along_ loops, which on x86-64
 * are AVX-512 or AVX2 gathers for 4- and 8-byte elements, chosen at run
 * time (the compilers do not vectorise them).  Otherwise element i is
 * src[i * si + k * sk] (the across_ loops): along the last dim, si is 0
 * and sk its stride; across it, si is the last stride and sk dim's.
 */
typedef bool (*along_fn)(void *dst, const void *src, const int64_t *ix, int64_t n,
                         uint64_t bound);

#define GATHER_LOOPS(tn, T)                                                                 \
  static bool along_##tn(void *dv, const void *sv, const int64_t *ix, int64_t n,            \
                         uint64_t bound) {                                                  \
    T *dst = dv;                                                                            \
    const T *src = sv;                                                                      \
    uint64_t bad = 0;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      uint64_t k = (uint64_t)ix[i];                                                         \
      bad |= k >= bound;                                                                    \
      dst[i] = src[k < bound ? k : 0];                                                      \
    }                                                                                       \
    return bad != 0;                                                                        \
  }                                                                                         \
  static bool across_##tn(void *dv, const void *sv, const int64_t *ix, int64_t n,           \
                          int64_t si, int64_t sk, uint64_t bound) {                         \
    T *dst = dv;                                                                            \
    const T *src = sv;                                                                      \
    uint64_t bad = 0;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                       \
      uint64_t k = (uint64_t)ix[i];                                                         \
      bad |= k >= bound;                                                                    \
      dst[i] = src[i * si + (int64_t)(k < bound ? k : 0) * sk];                             \
    }                                                                                       \
    return bad != 0;                                                                        \
  }
GATHER_LOOPS(u8, uint8_t)
GATHER_LOOPS(u16, uint16_t)
GATHER_LOOPS(u32, uint32_t)
GATHER_LOOPS(u64, uint64_t)

#if defined(__x86_64__) && defined(__GNUC__)
#define GATHER_X86 1
/* 16 elements per pass: two gathers of 8 with 8 64-bit indices each, the
 * lanes of bad indices masked off (they read nothing: 0 stands in). */
__attribute__((target("avx512f"))) static bool along_u32_avx512(void *dv, const void *sv,
                                                                const int64_t *ix, int64_t n,
                                                                uint64_t bound) {
  uint32_t *dst = dv;
  const __m512i b = _mm512_set1_epi64((long long)bound);
  __mmask8 ok = 0xff;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i k0 = _mm512_loadu_si512(ix + i), k1 = _mm512_loadu_si512(ix + i + 8);
    __mmask8 m0 = _mm512_cmplt_epu64_mask(k0, b), m1 = _mm512_cmplt_epu64_mask(k1, b);
    ok &= m0 & m1;
    __m256i v0 = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), m0, k0, sv, 4);
    __m256i v1 = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), m1, k1, sv, 4);
    _mm512_storeu_si512(dst + i, _mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1));
  }
  return along_u32(dst + i, sv, ix + i, n - i, bound) || ok != 0xff;
}

__attribute__((target("avx512f"))) static bool along_u64_avx512(void *dv, const void *sv,
                                                                const int64_t *ix, int64_t n,
                                                                uint64_t bound) {
  uint64_t *dst = dv;
  const __m512i b = _mm512_set1_epi64((long long)bound);
  __mmask8 ok = 0xff;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512i k = _mm512_loadu_si512(ix + i);
    __mmask8 m = _mm512_cmplt_epu64_mask(k, b);
    ok &= m;
    _mm512_storeu_si512(dst + i, _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), m, k, sv, 8));
  }
  return along_u64(dst + i, sv, ix + i, n - i, bound) || ok != 0xff;
}

/* AVX2 has signed compares only (bound fits in int64) and its gathers
 * take a mask in another shape: a bad index is set to 0 instead. */
__attribute__((target("avx2"))) static __m256i in_range_avx2(__m256i k, __m256i b, __m256i *ok) {
  __m256i m = _mm256_and_si256(_mm256_cmpgt_epi64(k, _mm256_set1_epi64x(-1)),
                               _mm256_cmpgt_epi64(b, k));
  *ok = _mm256_and_si256(*ok, m);
  return _mm256_and_si256(k, m);
}

__attribute__((target("avx2"))) static bool along_u32_avx2(void *dv, const void *sv,
                                                           const int64_t *ix, int64_t n,
                                                           uint64_t bound) {
  uint32_t *dst = dv;
  const __m256i b = _mm256_set1_epi64x((long long)bound);
  __m256i ok = _mm256_set1_epi64x(-1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i k0 = in_range_avx2(_mm256_loadu_si256((const void *)(ix + i)), b, &ok);
    __m256i k1 = in_range_avx2(_mm256_loadu_si256((const void *)(ix + i + 4)), b, &ok);
    __m128i v0 = _mm256_i64gather_epi32(sv, k0, 4), v1 = _mm256_i64gather_epi32(sv, k1, 4);
    _mm256_storeu_si256((void *)(dst + i), _mm256_set_m128i(v1, v0));
  }
  return along_u32(dst + i, sv, ix + i, n - i, bound) || _mm256_movemask_epi8(ok) != -1;
}

__attribute__((target("avx2"))) static bool along_u64_avx2(void *dv, const void *sv,
                                                           const int64_t *ix, int64_t n,
                                                           uint64_t bound) {
  uint64_t *dst = dv;
  const __m256i b = _mm256_set1_epi64x((long long)bound);
  __m256i ok = _mm256_set1_epi64x(-1);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256i k = in_range_avx2(_mm256_loadu_si256((const void *)(ix + i)), b, &ok);
    _mm256_storeu_si256((void *)(dst + i), _mm256_i64gather_epi64(sv, k, 8));
  }
  return along_u64(dst + i, sv, ix + i, n - i, bound) || _mm256_movemask_epi8(ok) != -1;
}
#endif

/* The along_ loop for elements of isz bytes, the widest the CPU runs. */
static along_fn pick_along(int64_t isz) {
#ifdef GATHER_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && (isz == 4 || isz == 8))
    return isz == 4 ? along_u32_avx512 : along_u64_avx512;
  if (__builtin_cpu_supports("avx2") && (isz == 4 || isz == 8))
    return isz == 4 ? along_u32_avx2 : along_u64_avx2;
#endif
  return isz == 1 ? along_u8 : isz == 2 ? along_u16 : isz == 4 ? along_u32 : along_u64;
}

typedef struct gather_job {
  const bp_tensor_view *self, *out;
  const int64_t *ix;
  int32_t dim;
  int64_t bound;   /* self's size along dim, > 0 */
  along_fn along;  /* for a contiguous row of self, or NULL */
  atomic_bool bad; /* an index out of range was seen */
} gather_job;

/* Elements of a row gathered between two prefetches of the next row. */
#define GATHER_STEP 64

/* The source offset (in elements) of the start of result row r: its
 * multi-index, all but the last dim, with dim's left out. */
static int64_t gather_base(const gather_job *j, int64_t r) {
  const bp_tensor_view *a = j->self, *o = j->out;
  int64_t base = 0;
  for (int32_t d = o->ndim - 2; d >= 0; d--) {
    int64_t id = r % o->sizes[d];
    r /= o->sizes[d];
    if (d != j->dim) base += id * a->strides[d];
  }
  return base;
}

static void gather_rows(void *ctx, int64_t begin, int64_t end) {
  gather_job *j = ctx;
  const bp_tensor_view *a = j->self, *o = j->out;
  int32_t nd = o->ndim, dim = j->dim;
  int64_t last = nd > 0 ? o->sizes[nd - 1] : 1, isz = a->itemsize;
  bool along = nd == 0 || dim == nd - 1;
  int64_t sl = a->ndim > 0 ? a->strides[a->ndim - 1] : 0, sd = a->ndim > 0 ? a->strides[dim] : 0;
  int64_t si = along ? 0 : sl, sk = along ? sl : sd;
  uint64_t bound = (uint64_t)j->bound;
  /* Along the last dim, a row reads a row of self all over, in no order
   * the hardware prefetchers follow: the lines of the next one are asked
   * for while this one is gathered, `per` lines each step, when the row
   * gathers about as many elements as self's row has lines (most of
   * them are read then). */
  int64_t span = along ? ((j->bound - 1) * sl + 1) * isz : 0;
  int64_t steps = (last + GATHER_STEP - 1) / GATHER_STEP;
  int64_t per = along && span / 64 <= last ? (span / 64 + steps) / steps : 0;
  const char *data = a->data;
  int64_t base = gather_base(j, begin);
  bool bad = false;
  for (int64_t r = begin; r < end && !bad; r++) {
    const int64_t *ix = j->ix + r * last;
    char *dst = (char *)o->data + (size_t)(r * last * isz);
    const char *src = data + base * isz;
    int64_t next = r + 1 < end ? gather_base(j, r + 1) : base;
    const char *ahead = data + next * isz;
    int64_t line = r + 1 < end ? 0 : span; /* bytes of the next row asked for */
    for (int64_t i = 0; i < last; i += GATHER_STEP) {
      int64_t m = last - i < GATHER_STEP ? last - i : GATHER_STEP;
      for (int64_t l = 0; l < per && line < span; l++, line += 64)
        __builtin_prefetch(ahead + line);
      if (j->along) {
        bad |= j->along(dst + i * isz, src, ix + i, m, bound);
        continue;
      }
      const char *s = src + i * si * isz;
      switch (isz) {
        case 1: bad |= across_u8(dst + i, s, ix + i, m, si, sk, bound); break;
        case 2: bad |= across_u16(dst + i * 2, s, ix + i, m, si, sk, bound); break;
        case 4: bad |= across_u32(dst + i * 4, s, ix + i, m, si, sk, bound); break;
        default: bad |= across_u64(dst + i * 8, s, ix + i, m, si, sk, bound); break;
      }
    }
    base = next;
  }
  if (bad) atomic_store_explicit(&j->bad, true, memory_order_relaxed);
}

/* out[..., i_dim, ...] = self[..., index[..., i_dim, ...], ...]. */
static bp_status gather_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out);
  int32_t dim;
  int64_t size;
  const int64_t *ix;
  bool owned;
  bp_tensor *c;
  bp_status st = gather_setup(ctx, args, false, &dim, &size, &ix, &owned, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  int32_t nd = vo->ndim;
  /* (a 0-dim self, beside a 1-dim index, stands for one element) */
  bool contiguous_row = nd == 0 || vc->ndim == 0 || vc->strides[nd - 1] == 1 || size == 1;
  gather_job j = {vc, vo, ix, dim, size, NULL, false};
  if (contiguous_row && (nd == 0 || dim == nd - 1)) j.along = pick_along(vc->itemsize);
  int64_t last = vo->ndim > 0 ? vo->sizes[vo->ndim - 1] : 1;
  int64_t rows = last > 0 ? vo->numel / last : 0;
  /* an empty dim has no element 0 to stand in for a bad index */
  if (size == 0 && vo->numel > 0) atomic_store(&j.bad, true);
  else if (rows > 0) cpu_parallel_for(rows, last >= 16384 ? 1 : 16384 / last, gather_rows, &j);
  if (atomic_load(&j.bad)) st = refuse_index(ctx, ix, vo->numel, 2, size, dim);
  cpu_host->tensor_release(c);
  if (owned) free((void *)ix);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(gather_kernel, gather_impl)

bp_status cpu_register_index(bp_library *lib) {
  bp_status st = CPU_IMPL_STRUCTURED(lib, "index_select", index_select_kernel, NULL);
  if (!st) st = CPU_IMPL_STRUCTURED(lib, "gather", gather_kernel, NULL);
  return st;
}
