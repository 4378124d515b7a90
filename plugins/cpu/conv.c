/*
 * plugins/cpu/conv.c - conv2d (op set 2) for float32, as an implicit GEMM
 * (the host's composite serves the other dtypes).
 *
 * For batch entry n and group g the convolution is one GEMM,
 *
 *   out[n, g Og + o, :] (Og x OH OW) = W_g (Og x K) * X_ng (K x OH OW),
 *
 * with K = Cg KH KW and X_ng the im2col matrix: row (c, kh, kw), column
 * (oh, ow) holds input[n, g Cg + c, oh sh - ph + kh dh, ow sw - pw + kw dw],
 * or 0 in the padding.  X_ng is never built: each work item packs the
 * block of it that it multiplies (KC rows by at most NCB columns, in
 * panels of the micro-kernel's NR columns) straight from the input,
 * whatever its strides, and runs matmul.c's micro-kernel over it, which
 * reads the weights' rows as they are (see wpanel).  The output,
 * contiguous, is the GEMM's C: rows of OH OW elements.
 *
 * Work items are (n, g, column block, row block), sized so that they
 * share evenly among the threads (plan_items).  Each thread's pack buffer
 * is allocated before the pool runs (a pool thread never allocates: see
 * attention.c).
 *
 * The sums run in float32 in the micro-kernel's order (blocks of KC along
 * K), within matmul's tolerance for the op; the bias is added last.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

#define KC 256      /* rows of X per packed block */
#define NCB 256     /* columns of X per work item (a multiple of NR) */
#define MB_MAX 256  /* rows of W per work item at most */

typedef struct conv_job {
  const float *x;             /* input element (0, 0, 0, 0) */
  int64_t xn, xc, xh, xw;     /* its strides, in elements (xn 0 unbatched) */
  const float *bias;          /* [O] contiguous, or NULL */
  float *out;                 /* [N, O, OH, OW] contiguous */
  const float *w;             /* [O, K] contiguous */
  float *tail;                /* the last panels' rows, or NULL: see wpanel */
  float *scratch;             /* per chunk: KC x NCB packed X */
  int64_t N, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
  int64_t G, Cg, Og, K, nkb, mpanels;
  int64_t ncb, colblocks;     /* columns per column block (<= NCB), blocks */
  int64_t mblocks, mrows;     /* row blocks, W rows per row block */
  int64_t items, per;
  cpu_ukernel uk;
} conv_job;

/* ---- Weights ------------------------------------------------------------ */

/* Panel q (mr rows) of group g's weights from K step p0, read as rows of
 * K elements by the micro-kernel: the weights themselves, except a last
 * panel of fewer than mr rows, which is copied with zero rows below it
 * (tail) because the micro-kernel reads all mr.  No packing: the weights
 * are read once per column block, and packing them cost more than that
 * where the output is small (ResNet's 7 x 7 layers). */
static const float *wpanel(const conv_job *j, int64_t g, int64_t q, int64_t p0) {
  int mr = j->uk.mr;
  if ((q + 1) * mr > j->Og) return j->tail + g * mr * j->K + p0;
  return j->w + (g * j->Og + q * mr) * j->K + p0;
}

/* ---- Input -------------------------------------------------------------- */

/* Where pack_x writes row p of a block: the row's place in the first
 * panel, the distance between panels, and the panel width. */
typedef struct prow {
  float *base;
  int64_t step, nr;
} prow;

/* Writes n values (src, or zeros when src is NULL) at columns [c, c + n)
 * of the row, a panel at a time. */
static inline void put_run(const prow *r, int64_t c, const float *src, int64_t n) {
  while (n > 0) {
    int64_t q = c / r->nr, at = c % r->nr, m = r->nr - at < n ? r->nr - at : n;
    float *d = r->base + q * r->step + at;
    if (src) {
      memcpy(d, src, (size_t)m * sizeof *d);
      src += m;
    } else {
      memset(d, 0, (size_t)m * sizeof *d);
    }
    c += m, n -= m;
  }
}

/* Row (kh, kw) of X_ng's channel `plane` over columns [j0, j0 + ncols)
 * into r; tmp is scratch for NCB floats (strided gathers). */
static CPU_CLONES void im2col_row(const conv_job *j, const float *plane, int64_t kh, int64_t kw,
                                  int64_t j0, int64_t ncols, const prow *r, float *tmp) {
  int64_t oh = j0 / j->OW, ow = j0 % j->OW, offh = kh * j->dh - j->ph, offw = kw * j->dw - j->pw;
  int64_t sw = j->sw, W = j->W, xw = j->xw;
  for (int64_t done = 0; done < ncols; oh++, ow = 0) {
    int64_t seg = j->OW - ow < ncols - done ? j->OW - ow : ncols - done, c = done;
    int64_t ih = oh * j->sh + offh;
    done += seg;
    if (ih < 0 || ih >= j->H) {
      put_run(r, c, NULL, seg);
      continue;
    }
    /* columns t of the segment read iw = (ow + t) sw + offw: those in
     * [lo, hi) fall inside the row */
    int64_t first = ow * sw + offw, lo = 0, hi;
    if (first < 0) lo = (-first + sw - 1) / sw;
    hi = W - first <= 0 ? 0 : (W - first + sw - 1) / sw;
    if (lo > seg) lo = seg;
    if (hi > seg) hi = seg;
    if (hi < lo) hi = lo;
    const float *row = plane + ih * j->xh;
    put_run(r, c, NULL, lo);
    if (sw == 1 && xw == 1) {
      put_run(r, c + lo, row + first + lo, hi - lo);
    } else {
      for (int64_t t = lo; t < hi; t++) tmp[t - lo] = row[(first + t * sw) * xw];
      put_run(r, c + lo, tmp, hi - lo);
    }
    put_run(r, c + hi, NULL, seg - hi);
  }
}

/* Packs rows [p0, p0 + kc) by columns [j0, j0 + ncols) of X_ng into panels
 * of nr columns: value (p, c) at dst[(c / nr) kc nr + (p - p0) nr + c % nr],
 * columns past ncols zero.  tmp is scratch for NCB floats. */
static void pack_x(const conv_job *j, int64_t n, int64_t g, int64_t p0, int64_t kc, int64_t j0,
                   int64_t ncols, float *dst, float *tmp) {
  int64_t nr = j->uk.nr, khw = j->KH * j->KW, npan = (ncols + nr - 1) / nr;
  for (int64_t p = p0; p < p0 + kc; p++) {
    int64_t c = p / khw, k = p % khw;
    const float *plane = j->x + n * j->xn + (g * j->Cg + c) * j->xc;
    prow r = {dst + (p - p0) * nr, kc * nr, nr};
    im2col_row(j, plane, k / j->KW, k % j->KW, j0, ncols, &r, tmp);
    put_run(&r, ncols, NULL, npan * nr - ncols);
  }
}

/* ---- The work items ----------------------------------------------------- */

/* Item t: (n, g, column block, row block), the row block fastest. */
static void conv_item(const conv_job *j, int64_t t, float *bpack, float *row) {
  int64_t mb = t % j->mblocks, rest = t / j->mblocks;
  int64_t cb = rest % j->colblocks, ng = rest / j->colblocks, g = ng % j->G, n = ng / j->G;
  int64_t ohw = j->OH * j->OW, j0 = cb * j->ncb, ncols = ohw - j0 < j->ncb ? ohw - j0 : j->ncb;
  int64_t i0 = mb * j->mrows, mrows = j->Og - i0 < j->mrows ? j->Og - i0 : j->mrows;
  int mr = j->uk.mr, nr = j->uk.nr;
  float *c = j->out + (n * j->G * j->Og + g * j->Og + i0) * ohw + j0;
  for (int64_t kb = 0; kb < j->nkb; kb++) {
    int64_t p0 = kb * KC, kc = j->K - p0 < KC ? j->K - p0 : KC;
    pack_x(j, n, g, p0, kc, j0, ncols, bpack, row);
    for (int64_t ir = 0; ir < mrows; ir += mr) {
      const float *a = wpanel(j, g, (i0 + ir) / mr, p0);
      for (int64_t jr = 0; jr < ncols; jr += nr)
        j->uk.fn(kc, a, j->K, bpack + jr * kc, c + ir * ohw + jr, ohw,
                 mrows - ir < mr ? mrows - ir : mr, ncols - jr < nr ? ncols - jr : nr, kb > 0);
    }
  }
  if (j->bias)
    for (int64_t i = 0; i < mrows; i++) {
      float b = j->bias[g * j->Og + i0 + i], *ci = c + i * ohw;
      for (int64_t x = 0; x < ncols; x++) ci[x] += b;
    }
}

/* Chunks [begin, end) of the items, each with its pack buffers. */
static void conv_chunks(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    float *bpack = j->scratch + ch * (KC * NCB + NCB);
    int64_t t0 = ch * j->per, t1 = t0 + j->per < j->items ? t0 + j->per : j->items;
    for (int64_t t = t0; t < t1; t++) conv_item(j, t, bpack, bpack + KC * NCB);
  }
}

/* ---- The kernel --------------------------------------------------------- */

/* Whether n items share evenly enough among the threads: a multiple of
 * them, or so many that the last round matters little. */
static bool balanced(int64_t n, int64_t threads) {
  return n % threads == 0 || n >= 8 * threads;
}

/* Splits Og into more row blocks (of whole panels) until the items share
 * evenly or every block is one panel. */
static void split_rows(conv_job *j, int64_t threads) {
  int64_t outer = j->N * j->G * j->colblocks;
  while (!balanced(outer * j->mblocks, threads) && j->mblocks < j->mpanels) j->mblocks++;
}

/* Narrows the column blocks (in whole panels) until the items share
 * evenly or every block is one panel. */
static void split_columns(conv_job *j, int64_t threads) {
  int64_t ohw = j->OH * j->OW, nr = j->uk.nr, panels = (ohw + nr - 1) / nr;
  for (int64_t c = j->colblocks;; c++) {
    int64_t per = (panels + c - 1) / c; /* panels per block */
    j->ncb = per * nr;
    j->colblocks = (ohw + j->ncb - 1) / j->ncb;
    if (balanced(j->N * j->G * j->colblocks * j->mblocks, threads) || per == 1) break;
  }
}

/* Sizes the work items: column blocks of at most NCB columns and row
 * blocks of at most MB_MAX rows, then split further until they share
 * evenly among the threads.  A row block packs its own input block and a
 * column block reads all its rows' weights, so the split goes first along
 * the dimension whose other operand is smaller: rows where the weights
 * (Og x K) outweigh the input block (K x OH OW), as in ResNet's last
 * layers, else columns. */
static void plan_items(conv_job *j, int64_t threads) {
  int64_t ohw = j->OH * j->OW, nr = j->uk.nr, panels = (ohw + nr - 1) / nr;
  j->ncb = panels * nr < NCB ? panels * nr : NCB;
  j->colblocks = (ohw + j->ncb - 1) / j->ncb;
  j->mblocks = (j->Og + MB_MAX - 1) / MB_MAX;
  if (j->Og >= ohw) {
    split_rows(j, threads);
    split_columns(j, threads);
  } else {
    split_columns(j, threads);
    split_rows(j, threads);
  }
  j->mrows = (j->mpanels + j->mblocks - 1) / j->mblocks * j->uk.mr;
  j->mblocks = (j->Og + j->mrows - 1) / j->mrows;
  j->items = j->N * j->G * j->colblocks * j->mblocks;
}

static bp_status conv2d_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *vo = view_of(out), *vx = view_of(args[0].u.tensor);
  if (vo->numel == 0) return BP_OK;
  conv_job j;
  memset(&j, 0, sizeof j);
  int32_t nd = vx->ndim; /* 4, or 3 unbatched */
  j.x = vx->data;
  j.N = nd == 4 ? vx->sizes[0] : 1;
  j.xn = nd == 4 ? vx->strides[0] : 0;
  j.xc = vx->strides[nd - 3], j.xh = vx->strides[nd - 2], j.xw = vx->strides[nd - 1];
  j.H = vx->sizes[nd - 2], j.W = vx->sizes[nd - 1];
  j.OH = vo->sizes[vo->ndim - 2], j.OW = vo->sizes[vo->ndim - 1];
  j.out = vo->data;
  const int64_t *lists[3][2];
  for (int a = 0; a < 3; a++) { /* stride, padding, dilation: one value or two */
    const bp_value *v = &args[3 + a];
    lists[a][0] = &v->u.ints[0];
    lists[a][1] = &v->u.ints[v->len - 1];
  }
  j.sh = *lists[0][0], j.sw = *lists[0][1], j.ph = *lists[1][0], j.pw = *lists[1][1];
  j.dh = *lists[2][0], j.dw = *lists[2][1];
  j.G = args[6].u.i;
  bp_tensor *w = NULL, *b = NULL;
  bp_status st = cpu_cast_to(args[1].u.tensor, BP_FLOAT32, &w); /* contiguous */
  if (!st && args[2].tag == BP_TAG_TENSOR) st = cpu_cast_to(args[2].u.tensor, BP_FLOAT32, &b);
  if (st) {
    cpu_host->tensor_release(w);
    return st;
  }
  const bp_tensor_view *vw = view_of(w);
  j.bias = b ? view_of(b)->data : NULL;
  j.Og = vw->sizes[0] / j.G, j.Cg = vw->sizes[1], j.KH = vw->sizes[2], j.KW = vw->sizes[3];
  j.K = j.Cg * j.KH * j.KW;
  if (j.K == 0) { /* no input channels: every sum is empty */
    int64_t ohw = j.OH * j.OW, o = vw->sizes[0];
    for (int64_t i = 0; i < vo->numel; i++) j.out[i] = j.bias ? j.bias[i / ohw % o] : 0.0f;
    cpu_host->tensor_release(w);
    cpu_host->tensor_release(b);
    return BP_OK;
  }
  j.uk = cpu_gemm_ukernel_rows();
  j.nkb = (j.K + KC - 1) / KC;
  j.mpanels = (j.Og + j.uk.mr - 1) / j.uk.mr;
  plan_items(&j, cpu_num_threads());
  /* Up to four chunks a thread, handed out as threads come free (see
   * attention.c); the items are sized to share evenly among them. */
  int64_t threads = cpu_num_threads(), chunks = j.items < 4 * threads ? j.items : 4 * threads;
  j.per = (j.items + chunks - 1) / chunks;
  int64_t mr = j.uk.mr, rem = j.Og % mr;
  size_t tfloats = rem ? (size_t)(j.G * mr * j.K) : 0;
  float *mem = malloc((tfloats + (size_t)chunks * (KC * NCB + NCB)) * sizeof(float));
  if (!mem) {
    cpu_host->tensor_release(w);
    cpu_host->tensor_release(b);
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld pack buffers of %d floats",
                   ctx->op_name, (long long)chunks, KC * NCB + NCB);
  }
  j.scratch = mem + tfloats;
  j.w = vw->data;
  if (rem) {
    j.tail = mem;
    memset(j.tail, 0, tfloats * sizeof(float));
    for (int64_t g = 0; g < j.G; g++)
      memcpy(j.tail + g * mr * j.K, j.w + (g * j.Og + j.Og - rem) * j.K,
             (size_t)(rem * j.K) * sizeof(float));
  }
  cpu_parallel_items(chunks, conv_chunks, &j);
  free(mem);
  cpu_host->tensor_release(w);
  cpu_host->tensor_release(b);
  return BP_OK;
}
BP_AUX_STRUCTURED_KERNEL(conv2d_kernel, conv2d_impl)

bp_status cpu_register_conv(bp_library *lib) {
  /* float32; the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "conv2d", conv2d_kernel, dtypes);
}
