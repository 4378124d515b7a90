/*
 * plugins/cpu/attention.c - scaled_dot_product_attention (op set 2) as one
 * fused kernel, for float32 (the host's composite serves the other dtypes).
 *
 * Flash attention's blocking: each work item is one batch entry (every dim
 * before the last two) and a block of BQ queries; it walks the keys in
 * blocks of BK, computes that block of scores, and folds it into each
 * query's running maximum, sum of exponentials and weighted sum of values
 * (online softmax), so that no L x S score matrix exists: memory is
 * O(BQ * (E + Ev + BK)) per thread.  With is_causal, key blocks wholly
 * after a query block's last row are skipped (half the work at L == S).
 *
 * The semantics are the composite's (host/core_sdpa.c): scores are
 * (q . k) * scale in float32, a bool mask removes a score where it is
 * false, a float mask is added, is_causal removes keys j > i (top-left
 * aligned), grouped-query heads map query head h to key head h / (Hq /
 * Hk), and a row whose every score is removed is NaN.  Results differ from
 * the composite's by the rounding of the sums' order, within the op set's
 * tolerance for the op.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "vmath.h"

#define BQ 64
#define BK 64

typedef struct attn_job {
  const bp_tensor_view *q, *k, *v, *mask; /* mask: NULL, bool or float32 */
  float *out;                             /* [batch..., L, Ev], contiguous */
  float *kt, *vp; /* per batch entry: key transposed in blocks [S/BK][E][BK], value [S][Ev] */
  float *scratch; /* per chunk of work items (see attention_impl) */
  int64_t per;    /* work items per chunk */
  int32_t nd;
  int64_t L, S, E, Ev, batch, qblocks, heads_q, heads_k;
  float scale;
  bool causal;
} attn_job;

/* The element offset of batch entry b in t (a tensor of the op's rank,
 * broadcast where its size is 1; key and value map query head h to h / g). */
static int64_t batch_offset(const attn_job *j, const bp_tensor_view *t, int64_t b, bool kv) {
  int64_t off = 0;
  int32_t nb = j->nd - 2, tb = t->ndim - 2; /* the mask may have fewer dims */
  for (int32_t d = nb - 1; d >= 0; d--) {
    int64_t size = j->q->sizes[d] > 0 ? j->q->sizes[d] : 1;
    /* the output's size of dim d: query's, or key's where query's is 1 */
    int64_t out_size = size == 1 ? j->k->sizes[d] : size;
    if (out_size < 1) out_size = 1;
    int64_t i = b % out_size;
    b /= out_size;
    int32_t td = d - (nb - tb);
    if (td < 0) continue;
    int64_t ts = t->sizes[td];
    if (ts == 1) continue;
    if (kv && d == nb - 1 && ts != out_size) i /= out_size / ts; /* grouped-query heads */
    off += i * t->strides[td];
  }
  return off;
}

/* Eight floats: GCC's vector extension, which each clone of CPU_CLONES
 * compiles to its own instructions (two SSE registers, or one AVX one). */
typedef float vf8 __attribute__((vector_size(32)));

/* Loads and stores of eight floats, unaligned (macros: a function that
 * returns a vector would change the ABI with the clone's target). */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(vf8))
#define STORE8(p, v)                                                                        \
  do {                                                                                      \
    vf8 t_ = (v);                                                                           \
    memcpy((p), &t_, sizeof t_);                                                            \
  } while (0)

/* The ISO C mode turns off contracting a * b + c into an FMA; these loops
 * want it (GCC turns it back on per function). */
#if defined(__GNUC__) && !defined(__clang__)
#define ATTN_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define ATTN_CONTRACT
#endif

/* S[i][0 .. BK) = scale * (Q[i] . Kt[., 0 .. BK)) for the bq rows of Q:
 * two rows by 32 columns at a time, in 8 accumulators. */
static CPU_CLONES ATTN_CONTRACT void attn_scores(const float *Q, const float *Kt, float *Sb,
                                                 int64_t bq, int64_t E, float scale) {
  for (int64_t i = 0; i < bq; i += 2) {
    const float *q0 = Q + i * E, *q1 = Q + (i + 1 < bq ? i + 1 : i) * E;
    for (int64_t c0 = 0; c0 < BK; c0 += 32) {
      vf8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
      for (int64_t e = 0; e < E; e++) {
        const float *kr = Kt + e * BK + c0;
        vf8 k0, k1, k2, k3;
        LOAD8(k0, kr), LOAD8(k1, kr + 8), LOAD8(k2, kr + 16), LOAD8(k3, kr + 24);
        vf8 x = (vf8){0} + q0[e], y = (vf8){0} + q1[e];
        a0 += x * k0, a1 += x * k1, a2 += x * k2, a3 += x * k3;
        b0 += y * k0, b1 += y * k1, b2 += y * k2, b3 += y * k3;
      }
      float *s0 = Sb + i * BK + c0;
      STORE8(s0, a0 * scale);
      STORE8(s0 + 8, a1 * scale);
      STORE8(s0 + 16, a2 * scale);
      STORE8(s0 + 24, a3 * scale);
      if (i + 1 < bq) {
        float *s1 = s0 + BK;
        STORE8(s1, b0 * scale);
        STORE8(s1 + 8, b1 * scale);
        STORE8(s1 + 16, b2 * scale);
        STORE8(s1 + 24, b3 * scale);
      }
    }
  }
}

/* O[i] = O[i] * corr[i] + sum_j P[i][j] V[j], for the bq rows: 64
 * columns of O at a time in 8 accumulators. */
static CPU_CLONES ATTN_CONTRACT void attn_update(float *O, const float *P, const float *Vb,
                                                 const float *corr, int64_t bq, int64_t bk,
                                                 int64_t Ev) {
  for (int64_t i = 0; i < bq; i++) {
    float *oi = O + i * Ev;
    const float *pi = P + i * BK;
    float c = corr[i];
    int64_t c0 = 0;
    for (; c0 + 64 <= Ev; c0 += 64) {
      vf8 o[8];
      for (int r = 0; r < 8; r++) {
        LOAD8(o[r], oi + c0 + 8 * r);
        o[r] *= c;
      }
      for (int64_t jj = 0; jj < bk; jj++) {
        vf8 p = (vf8){0} + pi[jj];
        const float *vr = Vb + jj * Ev + c0;
        for (int r = 0; r < 8; r++) {
          vf8 w;
          LOAD8(w, vr + 8 * r);
          o[r] += p * w;
        }
      }
      for (int r = 0; r < 8; r++) STORE8(oi + c0 + 8 * r, o[r]);
    }
    for (int64_t cc = c0; cc < Ev; cc++) {
      float acc = oi[cc] * c;
      for (int64_t jj = 0; jj < bk; jj++) acc += pi[jj] * Vb[jj * Ev + cc];
      oi[cc] = acc;
    }
  }
}

/* exp of the row's scores minus its new maximum, in place; their sum. */
static CPU_CLONES float attn_exp(float *s, int64_t n, float mx) {
  float sum = 0;
  for (int64_t c = 0; c < n; c++) {
    float p = vm_exp_f32(s[c] - mx);
    s[c] = p;
    sum += p;
  }
  return sum;
}

static float load_f32(const bp_tensor_view *t, int64_t off) {
  return ((const float *)t->data)[off];
}

/* Packs the keys (transposed, in blocks of BK, zero-padded) and values of
 * batch entries begin .. end once, for every query block to read. */
static void attn_pack(void *ctx, int64_t begin, int64_t end) {
  attn_job *j = ctx;
  const bp_tensor_view *k = j->k, *v = j->v;
  int64_t E = j->E, Ev = j->Ev, S = j->S, nkb = (S + BK - 1) / BK;
  int32_t nd = j->nd;
  int64_t ks_s = k->strides[nd - 2], ks_e = k->strides[nd - 1];
  int64_t vs_s = v->strides[nd - 2], vs_e = v->strides[nd - 1];
  for (int64_t b = begin; b < end; b++) {
    int64_t ko = batch_offset(j, k, b, true), vo = batch_offset(j, v, b, true);
    float *kt = j->kt + b * nkb * E * BK, *vp = j->vp + b * S * Ev;
    const float *kd = (const float *)k->data + ko, *vd = (const float *)v->data + vo;
    for (int64_t kb = 0; kb < nkb; kb++)
      for (int64_t e = 0; e < E; e++)
        for (int64_t c = 0; c < BK; c++) {
          int64_t row = kb * BK + c;
          kt[(kb * E + e) * BK + c] = row < S ? kd[row * ks_s + e * ks_e] : 0.0f;
        }
    for (int64_t r = 0; r < S; r++)
      for (int64_t e = 0; e < Ev; e++) vp[r * Ev + e] = vd[r * vs_s + e * vs_e];
  }
}

/* The scratch floats of one chunk of work items. */
static size_t chunk_floats(const attn_job *j) {
  return (size_t)(BQ * j->E + BQ * BK + BQ * j->Ev + 3 * BQ);
}

/* Work items [begin, end) (a batch entry and a block of queries each),
 * with scratch buf. */
static void attn_items(attn_job *j, int64_t begin, int64_t end, float *buf) {
  int64_t E = j->E, Ev = j->Ev, L = j->L, S = j->S;
  float *Qb = buf, *Sb = Qb + BQ * E, *O = Sb + BQ * BK;
  float *m = O + BQ * Ev, *l = m + BQ, *corr = l + BQ;
  const bp_tensor_view *q = j->q, *mk = j->mask;
  int64_t nkb = (S + BK - 1) / BK;
  int32_t nd = j->nd;
  for (int64_t it = begin; it < end; it++) {
    int64_t b = it / j->qblocks, i0 = it % j->qblocks * BQ;
    int64_t bq = L - i0 < BQ ? L - i0 : BQ;
    int64_t qo = batch_offset(j, q, b, false), mo = mk ? batch_offset(j, mk, b, false) : 0;
    const float *kt = j->kt + b * nkb * E * BK, *vp = j->vp + b * S * Ev;
    int64_t qs_l = q->strides[nd - 2], qs_e = q->strides[nd - 1];
    for (int64_t i = 0; i < bq; i++)
      for (int64_t e = 0; e < E; e++) Qb[i * E + e] = load_f32(q, qo + (i0 + i) * qs_l + e * qs_e);
    for (int64_t i = 0; i < bq; i++) m[i] = -INFINITY, l[i] = 0;
    memset(O, 0, (size_t)(BQ * Ev) * sizeof *O);
    int64_t ms_l = 0, ms_s = 0;
    if (mk) {
      ms_l = mk->ndim >= 2 && mk->sizes[mk->ndim - 2] > 1 ? mk->strides[mk->ndim - 2] : 0;
      ms_s = mk->ndim >= 1 && mk->sizes[mk->ndim - 1] > 1 ? mk->strides[mk->ndim - 1] : 0;
    }
    for (int64_t j0 = 0; j0 < S; j0 += BK) {
      if (j->causal && j0 > i0 + bq - 1) break;
      int64_t bk = S - j0 < BK ? S - j0 : BK;
      const float *Kt = kt + j0 / BK * E * BK, *Vb = vp + j0 * Ev;
      attn_scores(Qb, Kt, Sb, bq, E, j->scale);
      for (int64_t i = 0; i < bq; i++) {
        float *s = Sb + i * BK;
        int64_t row = i0 + i;
        if (j->causal && j0 + bk - 1 > row)
          for (int64_t c = row - j0 + 1; c < bk; c++) s[c] = -INFINITY;
        if (mk) {
          const char *mrow = (const char *)mk->data;
          for (int64_t c = 0; c < bk; c++) {
            int64_t off = mo + row * ms_l + (j0 + c) * ms_s;
            if (mk->dtype == BP_BOOL) {
              if (!mrow[off]) s[c] = -INFINITY;
            } else {
              s[c] += ((const float *)(const void *)mrow)[off];
            }
          }
        }
        float mx = -INFINITY;
        for (int64_t c = 0; c < bk; c++) mx = s[c] > mx ? s[c] : mx;
        float mnew = mx > m[i] ? mx : m[i];
        if (mnew == -INFINITY) {
          /* every score so far removed: nothing to add */
          for (int64_t c = 0; c < bk; c++) s[c] = 0;
          corr[i] = 1;
          continue;
        }
        corr[i] = m[i] == -INFINITY ? 0.0f : vm_exp_f32(m[i] - mnew);
        l[i] = l[i] * corr[i] + attn_exp(s, bk, mnew);
        for (int64_t c = bk; c < BK; c++) s[c] = 0;
        m[i] = mnew;
      }
      attn_update(O, Sb, Vb, corr, bq, bk, Ev);
    }
    float *out = j->out + (b * L + i0) * Ev;
    for (int64_t i = 0; i < bq; i++)
      for (int64_t e = 0; e < Ev; e++) out[i * Ev + e] = O[i * Ev + e] / l[i]; /* 0 / 0: NaN */
  }
}

/* Chunks [begin, end) of work items, each with its scratch. */
static void attn_chunks(void *ctx, int64_t begin, int64_t end) {
  attn_job *j = ctx;
  int64_t items = j->batch * j->qblocks;
  for (int64_t c = begin; c < end; c++) {
    int64_t i0 = c * j->per, i1 = i0 + j->per < items ? i0 + j->per : items;
    attn_items(j, i0, i1, j->scratch + (size_t)c * chunk_floats(j));
  }
}

static bp_status attention_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out);
  if (vo->numel == 0) return BP_OK;
  attn_job j;
  memset(&j, 0, sizeof j);
  j.q = view_of(args[0].u.tensor);
  j.k = view_of(args[1].u.tensor);
  j.v = view_of(args[2].u.tensor);
  j.mask = args[3].tag == BP_TAG_TENSOR ? view_of(args[3].u.tensor) : NULL;
  j.out = vo->data;
  j.nd = j.q->ndim;
  j.L = j.q->sizes[j.nd - 2];
  j.E = j.q->sizes[j.nd - 1];
  j.S = j.k->sizes[j.nd - 2];
  j.Ev = j.v->sizes[j.nd - 1];
  j.causal = args[5].u.b;
  j.scale = (float)(args[6].tag == BP_TAG_FLOAT ? args[6].u.f : 1.0 / sqrt((double)j.E));
  j.batch = vo->numel / (j.L * j.Ev);
  j.qblocks = (j.L + BQ - 1) / BQ;
  if (j.S == 0) {
    /* no keys: an empty weighted sum, 0 (as the composite's matmul gives) */
    memset(j.out, 0, (size_t)vo->numel * sizeof *j.out);
    return BP_OK;
  }
  /* The work items run in chunks, one a thread, whose scratch is
   * allocated here with the packed keys and values: a pool thread never
   * allocates (glibc gives each new thread an arena of its own, which
   * would outlive the plugin's unload). */
  int64_t nkb = (j.S + BK - 1) / BK, items = j.batch * j.qblocks, threads = cpu_num_threads();
  int64_t chunks = items < threads ? items : threads;
  j.per = (items + chunks - 1) / chunks;
  size_t packed = (size_t)(j.batch * (nkb * j.E * BK + j.S * j.Ev));
  j.kt = malloc((packed + (size_t)chunks * chunk_floats(&j)) * sizeof(float));
  if (!j.kt)
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the packed keys and values of "
                   "%lld attention heads", ctx->op_name, (long long)j.batch);
  j.vp = j.kt + j.batch * nkb * j.E * BK;
  j.scratch = j.kt + packed;
  cpu_parallel_for(j.batch, 1, attn_pack, &j);
  cpu_parallel_for(chunks, 1, attn_chunks, &j);
  free(j.kt);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(attention_kernel, attention_impl)

bp_status cpu_register_attention(bp_library *lib) {
  /* float32 (and a bool mask); the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_BOOL, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "scaled_dot_product_attention", attention_kernel, dtypes);
}
