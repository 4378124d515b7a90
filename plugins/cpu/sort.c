/*
 * plugins/cpu/sort.c - topk and sort (op set 2).
 *
 * Both order the elements of each slice along dim by value, NaN above
 * every number, equal values (0.0 and -0.0 among them) by their index: the
 * stable order, PyTorch's sort(stable=True).  topk takes the first k of
 * the descending order (largest) or of the ascending one; sort all of
 * them.  Each slice's values are read once into uint64 keys whose unsigned
 * order is that order (below), and its order is found by:
 *   - a bounded insertion of the best k so far, for topk with k <= 64:
 *     one comparison per element once the buffer is full (sampling's
 *     topk of a vocabulary is this);
 *   - for a larger k, a radix select of the first k, then a stable sort
 *     of those;
 *   - for sort, a stable sort of the keys: insertion for short slices,
 *     merge sort for middling ones, radix sort for long ones.
 * Slices run on the pool.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* topk takes the insertion path up to this k; a slice shorter than
 * SORT_SMALL is insertion-sorted. */
#define TOPK_INSERT_MAX 64
#define SORT_SMALL 32
/* A slice this long or longer is radix-sorted, a shorter one merge-sorted. */
#define SORT_RADIX 2048

/* An element's key and its index along dim. */
typedef struct kv {
  uint64_t key;
  int64_t idx;
} kv;

typedef struct sort_job {
  const char *x;       /* self, contiguous */
  char *values;        /* [outer, k, inner] */
  int64_t *indices;    /* likewise */
  int32_t dtype;
  int64_t itemsize, outer, n, inner, k;
  bool descending;
  kv *scratch;           /* 3n per chunk of slices (see topk_sort) */
  int64_t per;           /* slices per chunk */
} sort_job;

/*
 * Each element becomes a uint64 key whose unsigned order is the op set's
 * order: a double's bits with the sign folded (negative values flipped,
 * positive ones offset), -0.0 as 0.0, every NaN above +inf; an int64 with
 * its sign bit flipped.  Descending flips every bit.  Equal keys are equal
 * values, which both orderings below keep in index order.
 */
static inline uint64_t float_key(double f) {
  if (f != f) return UINT64_MAX;
  if (f == 0) f = 0.0;
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

static inline uint64_t int_key(int64_t v) { return (uint64_t)v ^ (UINT64_C(1) << 63); }

/* Runs BODY with key_ the key of each of the n elements from p, every
 * `stride` bytes (e the element's index), with the dtype's switch outside
 * the loop. */
#define EACH_KEY(j, p, stride, n, BODY)                                                     \
  do {                                                                                      \
    uint64_t flip_ = (j)->descending ? UINT64_MAX : 0;                                     \
    const char *q_ = (p);                                                                   \
    int64_t n_ = (n);                                                                       \
    size_t stride_ = (stride);                                                              \
    switch ((j)->dtype) {                                                                   \
      case BP_FLOAT32: KEY_LOOP(float_key(*(const float *)(const void *)q_), BODY); break;  \
      case BP_FLOAT64: KEY_LOOP(float_key(*(const double *)(const void *)q_), BODY); break; \
      case BP_FLOAT16:                                                                      \
        KEY_LOOP(float_key(bp_aux_f16_to_f32(*(const uint16_t *)(const void *)q_)), BODY);  \
        break;                                                                              \
      case BP_BFLOAT16:                                                                     \
        KEY_LOOP(float_key(bp_aux_bf16_to_f32(*(const uint16_t *)(const void *)q_)), BODY); \
        break;                                                                              \
      case BP_INT8: KEY_LOOP(int_key(*(const int8_t *)(const void *)q_), BODY); break;      \
      case BP_INT16: KEY_LOOP(int_key(*(const int16_t *)(const void *)q_), BODY); break;    \
      case BP_INT32: KEY_LOOP(int_key(*(const int32_t *)(const void *)q_), BODY); break;    \
      case BP_UINT8: KEY_LOOP(int_key(*(const uint8_t *)q_), BODY); break;                  \
      case BP_BOOL: KEY_LOOP(int_key(*(const uint8_t *)q_ != 0), BODY); break;              \
      default: KEY_LOOP(int_key(*(const int64_t *)(const void *)q_), BODY); break;          \
    }                                                                                       \
  } while (0)
#define KEY_LOOP(LOAD, BODY)                                                                \
  for (int64_t e = 0; e < n_; e++, q_ += stride_) {                                         \
    uint64_t key_ = (LOAD) ^ flip_;                                                         \
    BODY                                                                                    \
  }

/* The first k (<= TOPK_INSERT_MAX) of the slice at x into idx, by
 * insertion into the best k so far: a later element enters only when its
 * key is below the k-th, so equal values keep their index order. */
static void select_k(const sort_job *j, const char *x, size_t stride, int64_t *idx) {
  uint64_t best[TOPK_INSERT_MAX];
  int64_t have = 0, kk = j->k;
  EACH_KEY(j, x, stride, j->n, {
    if (have == kk && key_ >= best[kk - 1]) continue;
    int64_t at = have < kk ? have++ : kk - 1;
    while (at > 0 && key_ < best[at - 1]) {
      best[at] = best[at - 1];
      idx[at] = idx[at - 1];
      at--;
    }
    best[at] = key_;
    idx[at] = e;
  });
}

/* Sorts a[0 .. n-1] by key, stably: insertion for short slices, a merge
 * sort for middling ones, and a least-significant-digit radix sort (8-bit
 * digits; a digit that every key shares is skipped) for long ones.  t is
 * scratch of n. */
static void sort_kv(kv *a, kv *t, int64_t n) {
  if (n < SORT_SMALL) {
    for (int64_t e = 1; e < n; e++) {
      kv c = a[e];
      int64_t at = e;
      while (at > 0 && c.key < a[at - 1].key) {
        a[at] = a[at - 1];
        at--;
      }
      a[at] = c;
    }
    return;
  }
  if (n < SORT_RADIX) {
    kv *src = a, *dst = t;
    for (int64_t w = 1; w < n; w *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * w) {
        int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
        int64_t x = lo, y = mid, o = lo;
        /* the right run's element goes first only when its key is lower */
        while (x < mid && y < hi) dst[o++] = src[y].key < src[x].key ? src[y++] : src[x++];
        while (x < mid) dst[o++] = src[x++];
        while (y < hi) dst[o++] = src[y++];
      }
      kv *tmp = src;
      src = dst;
      dst = tmp;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
    return;
  }
  for (int shift = 0; shift < 64; shift += 8) {
    int64_t count[256] = {0};
    for (int64_t e = 0; e < n; e++) count[(a[e].key >> shift) & 255]++;
    if (count[(a[0].key >> shift) & 255] == n) continue;
    int64_t at = 0;
    for (int d = 0; d < 256; d++) {
      int64_t c = count[d];
      count[d] = at;
      at += c;
    }
    for (int64_t e = 0; e < n; e++) t[count[(a[e].key >> shift) & 255]++] = a[e];
    memcpy(a, t, (size_t)n * sizeof *a);
  }
}

/* The first k (< n) of the order of a[0 .. n-1] (in index order) into
 * t[0 .. k-1], sorted: a most-significant-digit radix select finds the
 * k-th key one byte at a time, taking the elements below it as it goes
 * (equal keys share every digit, so each run of them is taken at once, in
 * index order) and then the first of those equal to it; the k taken are
 * then sorted stably.  a is overwritten; t has room for 2n. */
static void select_radix(kv *a, kv *t, int64_t n, int64_t k) {
  int64_t cand = n, taken = 0, need = k;
  for (int shift = 56; shift >= 0 && need > 0; shift -= 8) {
    int64_t count[256] = {0};
    for (int64_t e = 0; e < cand; e++) count[(a[e].key >> shift) & 255]++;
    int d = 0;
    int64_t below = 0;
    while (below + count[d] < need) below += count[d++];
    int64_t kept = 0;
    for (int64_t e = 0; e < cand; e++) {
      int digit = (int)((a[e].key >> shift) & 255);
      if (digit < d) t[taken++] = a[e];
      else if (digit == d) a[kept++] = a[e];
    }
    cand = kept;
    need -= below;
  }
  for (int64_t e = 0; e < need; e++) t[taken++] = a[e];
  sort_kv(t, t + k, k);
}

/* The slices [begin, end) with scratch a (3n, or NULL for insertion). */
static void sort_slices(const sort_job *j, int64_t begin, int64_t end, kv *a) {
  int64_t n = j->n, k = j->k, inner = j->inner;
  bool insert = k <= TOPK_INSERT_MAX && k < n;
  size_t item = (size_t)j->itemsize, stride = (size_t)inner * item;
  int64_t small[TOPK_INSERT_MAX];
  for (int64_t it = begin; it < end; it++) {
    int64_t o = it / inner, i = it % inner;
    const char *x = j->x + (size_t)(o * n * inner + i) * item;
    char *v = j->values + (size_t)(o * k * inner + i) * item;
    int64_t *ix = j->indices + o * k * inner + i;
    if (insert) {
      if (k > 0) select_k(j, x, stride, small);
      for (int64_t r = 0; r < k; r++) {
        memcpy(v + (size_t)r * stride, x + (size_t)small[r] * stride, item);
        ix[r * inner] = small[r];
      }
      continue;
    }
    EACH_KEY(j, x, stride, n, {
      a[e].key = key_;
      a[e].idx = e;
    });
    kv *first = a;
    if (k < n) {
      select_radix(a, a + n, n, k);
      first = a + n;
    } else {
      sort_kv(a, a + n, n);
    }
    for (int64_t r = 0; r < k; r++) {
      memcpy(v + (size_t)r * stride, x + (size_t)first[r].idx * stride, item);
      ix[r * inner] = first[r].idx;
    }
  }
}

/* Chunks [begin, end) of slices, each with its scratch. */
static void sort_chunks(void *ctx, int64_t begin, int64_t end) {
  sort_job *j = ctx;
  int64_t slices = j->outer * j->inner, per_chunk = 3 * (j->n > 0 ? j->n : 1);
  for (int64_t c = begin; c < end; c++) {
    int64_t s0 = c * j->per, s1 = s0 + j->per < slices ? s0 + j->per : slices;
    sort_slices(j, s0, s1, j->scratch ? j->scratch + c * per_chunk : NULL);
  }
}

/* Fills values and indices (the results the meta function sized). */
static bp_status topk_sort(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *values,
                           bp_tensor *indices) {
  bool topk = (intptr_t)ctx->user_data == 1;
  const bp_tensor_view *vv = view_of(values), *vx = view_of(args[0].u.tensor);
  if (vv->numel == 0) return BP_OK;
  bp_tensor *c = NULL;
  bp_status st = cpu_cast_to(args[0].u.tensor, vx->dtype, &c);
  if (st) return st;
  const bp_tensor_view *vc = view_of(c);
  int64_t dim_arg = args[topk ? 2 : 1].u.i;
  int32_t dim = vc->ndim > 0 ? (int32_t)(dim_arg < 0 ? dim_arg + vc->ndim : dim_arg) : 0;
  sort_job j = {vc->data, vv->data, view_of(indices)->data, vc->dtype, vc->itemsize, 1,
                vc->ndim > 0 ? vc->sizes[dim] : 1, 1, 0, false, NULL, 1};
  /* a 0-dim self gives its element for k 0 or 1, as in PyTorch */
  j.k = topk && vc->ndim > 0 ? args[1].u.i : j.n;
  j.descending = topk ? args[3].u.b : args[2].u.b;
  for (int32_t d = 0; d < dim; d++) j.outer *= vc->sizes[d];
  for (int32_t d = dim + 1; d < vc->ndim; d++) j.inner *= vc->sizes[d];
  /* The slices run in chunks, one a thread, whose scratch is allocated
   * here: a pool thread never allocates (glibc gives each new thread an
   * arena of its own, which would outlive the plugin's unload).  Below
   * 4096 elements in all, one chunk, inline. */
  int64_t slices = j.outer * j.inner, threads = cpu_num_threads();
  int64_t chunks = slices * j.n < 4096 ? 1 : slices < threads ? slices : threads;
  j.per = (slices + chunks - 1) / chunks;
  bool insert = j.k <= TOPK_INSERT_MAX && j.k < j.n;
  if (!insert) {
    j.scratch = malloc((size_t)(chunks * 3 * (j.n > 0 ? j.n : 1)) * sizeof *j.scratch);
    if (!j.scratch) {
      cpu_host->tensor_release(c);
      return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the scratch of %lld slices of "
                     "%lld elements", ctx->op_name, (long long)chunks, (long long)j.n);
    }
  }
  cpu_parallel_for(chunks, 1, sort_chunks, &j);
  free(j.scratch);
  cpu_host->tensor_release(c);
  return BP_OK;
}

static bp_status topk_sort_impl(const bp_kernel_ctx *ctx, const bp_value *args,
                                bp_tensor *const *outs) {
  return topk_sort(ctx, args, outs[0], outs[1]);
}
/* topk_sort_kernel_fill fills the two results the host allocated;
 * topk_sort_kernel, for a host before ABI 1.2, allocates them. */
BP_AUX_STRUCTURED_KERNEL_N(topk_sort_kernel, topk_sort_impl, 2)

bp_status cpu_register_sort(bp_library *lib) {
  static const char *const ops[] = {"sort", "topk"}; /* user_data: 0, 1 */
  bp_status st = BP_OK;
  for (intptr_t i = 0; !st && i < 2; i++)
    st = bp_aux_impl_structured(cpu_host, lib, ops[i], BP_DEVICE_CPU, topk_sort_kernel,
                                topk_sort_kernel_fill, (const void *)i, BP_PRIORITY_REFERENCE);
  return st;
}
