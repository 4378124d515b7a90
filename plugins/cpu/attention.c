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
  cpu_ukernel uk; /* matmul.c's micro-kernel, A read as rows */
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

/* Rows of the query and score blocks: BQ, and room for the micro-kernel,
 * which reads whole panels of mr <= 8 rows. */
#define BQP (BQ + 8)

/* S[0 .. bq)[0 .. BK) = Q . Kt, Kt packed in panels of nr columns (see
 * attn_pack), by the GEMM micro-kernel; the scale is applied later, per
 * row. */
static void attn_scores(const attn_job *j, const float *Q, const float *Kt, float *Sb,
                        int64_t bq) {
  int mr = j->uk.mr, nr = j->uk.nr;
  for (int64_t ir = 0; ir < bq; ir += mr)
    for (int q = 0; q < BK / nr; q++)
      j->uk.fn(j->E, Q + ir * j->E, j->E, Kt + q * j->E * nr, Sb + ir * BK + q * nr, BK,
               bq - ir < mr ? bq - ir : mr, nr, false);
}

/* O[i] = O[i] * corr[i] + sum_j P[i][j] V[j] for the bq rows and the block's
 * bk keys, V packed in panels of nr columns from the block's first row. */
static void attn_update(const attn_job *j, float *O, const float *P, const float *Vb,
                        const float *corr, int64_t bq, int64_t bk) {
  int mr = j->uk.mr, nr = j->uk.nr;
  int64_t Ev = j->Ev, S = j->S;
  for (int64_t i = 0; i < bq; i++)
    for (int64_t e = 0; e < Ev; e++) O[i * Ev + e] *= corr[i];
  for (int64_t ir = 0; ir < bq; ir += mr)
    for (int64_t q = 0; q * nr < Ev; q++)
      j->uk.fn(bk, P + ir * BK, BK, Vb + q * S * nr, O + ir * Ev + q * nr, Ev,
               bq - ir < mr ? bq - ir : mr, Ev - q * nr < nr ? Ev - q * nr : nr, true);
}

/* The largest of n scores (NaN ignored, as by a > comparison), in lanes
 * of 8 that the compiler vectorises. */
static CPU_CLONES float attn_max(const float *s, int64_t n) {
  float lanes[8], mx = -INFINITY;
  for (int k = 0; k < 8; k++) lanes[k] = -INFINITY;
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int k = 0; k < 8; k++) lanes[k] = s[c + k] > lanes[k] ? s[c + k] : lanes[k];
  for (; c < n; c++) mx = s[c] > mx ? s[c] : mx;
  for (int k = 0; k < 8; k++) mx = lanes[k] > mx ? lanes[k] : mx;
  return mx;
}

/* exp of the row's scores minus its maximum (so of x <= 0: softmax's
 * cheaper exp), in place; their sum, in lanes of 8. */
static CPU_CLONES float attn_exp(float *s, int64_t n, float mx) {
  for (int64_t c = 0; c < n; c++) s[c] = vm_exp_neg_f32(s[c] - mx);
  float lanes[8] = {0}, sum = 0;
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int k = 0; k < 8; k++) lanes[k] += s[c + k];
  for (; c < n; c++) sum += s[c];
  for (int k = 0; k < 8; k++) sum += lanes[k];
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
  int64_t E = j->E, Ev = j->Ev, S = j->S, nkb = (S + BK - 1) / BK, nr = j->uk.nr;
  int64_t npv = (Ev + nr - 1) / nr;
  int32_t nd = j->nd;
  int64_t ks_s = k->strides[nd - 2], ks_e = k->strides[nd - 1];
  int64_t vs_s = v->strides[nd - 2], vs_e = v->strides[nd - 1];
  for (int64_t b = begin; b < end; b++) {
    int64_t ko = batch_offset(j, k, b, true), vo = batch_offset(j, v, b, true);
    float *kt = j->kt + b * nkb * E * BK, *vp = j->vp + b * npv * S * nr;
    const float *kd = (const float *)k->data + ko, *vd = (const float *)v->data + vo;
    /* key row kb BK + q nr + c, element e at kt[((kb BK / nr + q) E + e) nr + c] */
    for (int64_t kb = 0; kb < nkb; kb++)
      for (int64_t q = 0; q < BK / nr; q++)
        for (int64_t e = 0; e < E; e++)
          for (int64_t c = 0; c < nr; c++) {
            int64_t row = kb * BK + q * nr + c;
            kt[((kb * (BK / nr) + q) * E + e) * nr + c] = row < S ? kd[row * ks_s + e * ks_e] : 0;
          }
    /* value row r, element q nr + c at vp[(q S + r) nr + c] */
    for (int64_t q = 0; q < npv; q++)
      for (int64_t r = 0; r < S; r++)
        for (int64_t c = 0; c < nr; c++) {
          int64_t e = q * nr + c;
          vp[(q * S + r) * nr + c] = e < Ev ? vd[r * vs_s + e * vs_e] : 0.0f;
        }
  }
}

/* The scratch floats of one chunk of work items. */
static size_t chunk_floats(const attn_job *j) {
  return (size_t)(BQP * j->E + BQP * BK + BQ * j->Ev + 3 * BQ);
}

/* Work items [begin, end) (a batch entry and a block of queries each),
 * with scratch buf. */
static void attn_items(attn_job *j, int64_t begin, int64_t end, float *buf) {
  int64_t E = j->E, Ev = j->Ev, L = j->L, S = j->S;
  float *Qb = buf, *Sb = Qb + BQP * E, *O = Sb + BQP * BK;
  float *m = O + BQ * Ev, *l = m + BQ, *corr = l + BQ;
  const bp_tensor_view *q = j->q, *mk = j->mask;
  int64_t nkb = (S + BK - 1) / BK;
  int32_t nd = j->nd;
  for (int64_t it = begin; it < end; it++) {
    int64_t b = it / j->qblocks, i0 = it % j->qblocks * BQ;
    int64_t bq = L - i0 < BQ ? L - i0 : BQ;
    int64_t qo = batch_offset(j, q, b, false), mo = mk ? batch_offset(j, mk, b, false) : 0;
    int64_t nr = j->uk.nr, npv = (Ev + nr - 1) / nr;
    const float *kt = j->kt + b * nkb * E * BK, *vp = j->vp + b * npv * S * nr;
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
      const float *Kt = kt + j0 / BK * E * BK, *Vb = vp + j0 * nr;
      attn_scores(j, Qb, Kt, Sb, bq);
      for (int64_t i = 0; i < bq; i++) {
        float *s = Sb + i * BK;
        int64_t row = i0 + i;
        for (int64_t c = 0; c < bk; c++) s[c] *= j->scale;
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
        float mx = attn_max(s, bk);
        float mnew = mx > m[i] ? mx : m[i];
        if (mnew == -INFINITY) {
          /* every score so far removed: nothing to add */
          for (int64_t c = 0; c < bk; c++) s[c] = 0;
          corr[i] = 1;
          continue;
        }
        corr[i] = m[i] == -INFINITY ? 0.0f : vm_exp_neg_f32(m[i] - mnew);
        l[i] = l[i] * corr[i] + attn_exp(s, bk, mnew);
        for (int64_t c = bk; c < BK; c++) s[c] = 0;
        m[i] = mnew;
      }
      attn_update(j, O, Sb, Vb, corr, bq, bk);
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
  /* Four chunks a thread: the pool hands them out as threads come free,
   * so a worker that wakes late (or a busy CPU) costs a chunk, not half
   * the work (with one chunk a thread, the caller often ran both). */
  int64_t chunks = items < 4 * threads ? items : 4 * threads;
  j.per = (items + chunks - 1) / chunks;
  j.uk = cpu_gemm_ukernel_rows();
  int64_t npv = (j.Ev + j.uk.nr - 1) / j.uk.nr;
  size_t packed = (size_t)(j.batch * (nkb * j.E * BK + npv * j.S * j.uk.nr));
  j.kt = malloc((packed + (size_t)chunks * chunk_floats(&j)) * sizeof(float));
  if (!j.kt)
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the packed keys and values of "
                   "%lld attention heads", ctx->op_name, (long long)j.batch);
  j.vp = j.kt + j.batch * nkb * j.E * BK;
  j.scratch = j.kt + packed;
  /* the micro-kernel reads the rows of a panel past bq too: keep them 0 */
  memset(j.scratch, 0, (size_t)chunks * chunk_floats(&j) * sizeof(float));
  cpu_parallel_for(j.batch, 1, attn_pack, &j);
  cpu_parallel_items(chunks, attn_chunks, &j);
  free(j.kt);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(attention_kernel, attention_impl)

bp_status cpu_register_attention(bp_library *lib) {
  /* float32 (and a bool mask); the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_BOOL, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "scaled_dot_product_attention", attention_kernel, dtypes);
}
