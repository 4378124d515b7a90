/*
 * plugins/cpu/conv.c - conv2d (op set 2) for float32 (the host's composite
 * serves the other dtypes): its input, its implicit GEMM, and the choice
 * between that and the direct path (conv_direct.c).
 *
 * For group g the convolution is one GEMM,
 *
 *   out[:, g Og + o, :] (Og x N OH OW) = W_g (Og x K) * X_g (K x N OH OW),
 *
 * with K = Cg KH KW and X_g the im2col matrix: row (c, kh, kw), column
 * (n, oh, ow) holds input[n, g Cg + c, oh sh - ph + kh dh, ow sw - pw + kw dw],
 * or 0 in the padding; the batch is folded into the columns, so that
 * small outputs (7x7) still fill the micro-kernel's panels.
 *
 * Both paths read the input through q (plan_input): the input itself
 * where the convolution has stride 1, no padding and contiguous rows (the
 * GEMM only), else a copy padded with zeros and split by stride phase, in
 * which every tap reads an output row as one contiguous run.
 *
 * The implicit GEMM never builds X_g: each work item packs the block of
 * it that it multiplies (KC rows by at most NCB columns, in panels of the
 * micro-kernel's NR columns) from q, a run of an output row at a time,
 * and runs matmul.c's micro-kernel over it, which reads the weights' rows
 * as they are (see wpanel).  Work items are (g, column block, row block),
 * sized so that they share evenly among the threads (plan_items).
 *
 * Each path's buffers are allocated before the pool runs (a pool thread
 * never allocates: see attention.c), from the host's allocator.
 *
 * The sums run in float32 in the micro-kernel's order (blocks of KC along
 * K), within matmul's tolerance for the op; the bias is added last.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "elementwise.h"


#define KC 256      /* rows of X per packed block */
#define NCB 256     /* columns of X per work item (a multiple of NR) */
#define MB_MAX 256  /* rows of W per work item at most */

/* n floats rounded up to a multiple of 16 (64 bytes). */
#define UP16(n) (((n) + 15) / 16 * 16)

/* A chunk's scratch: the packed block and its runs. */
typedef struct col_run {
  int64_t col, off, len, dst;
} col_run;
#define RUNS_MAX (2 * NCB + 2)
#define CHUNK_FLOATS (KC * NCB + (int64_t)(RUNS_MAX * sizeof(col_run) / sizeof(float)))

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

/*
 * The packer reads X_ng's row (c, kh, kw) over an output row as one run of
 * contiguous floats.  The input itself is read so where the convolution
 * has stride 1, no padding and contiguous rows; otherwise `prepare` first
 * copies each input plane into `q`, padded with zeros and split into
 * phases: plane (ry, rx) of channel c holds, at row a and column b, the
 * padded input at row a sh + ry and column b sw + rx.  Tap (kh, kw) reads
 * phase ((kh dh) % sh, (kw dw) % sw) from row (kh dh) / sh and column
 * (kw dw) / sw on, for every output row oh at a = oh + that row.  Only
 * the phases some tap reads are made.
 */
static CPU_CLONES void prepare_plane(const conv_job *j, int64_t n, int64_t c, float *dst) {
  const float *src = j->x + n * j->xn + c * j->xc;
  int64_t sw = j->sw, xs = j->sw * j->xw, Wq = j->Wq;
  for (int64_t iy = 0; iy < j->nry; iy++)
    for (int64_t ix = 0; ix < j->nrx; ix++) {
      int64_t ry = j->ry[iy], rx = j->rx[ix];
      float *d = dst + (iy * j->nrx + ix) * j->qp;
      /* columns [lo, hi) read iw = b sw + rx - pw inside [0, W) */
      int64_t lo = j->pw > rx ? (j->pw - rx + sw - 1) / sw : 0;
      int64_t hi = j->W + j->pw - rx > 0 ? (j->W + j->pw - rx + sw - 1) / sw : 0;
      if (lo > Wq) lo = Wq;
      if (hi > Wq) hi = Wq;
      if (hi < lo) hi = lo;
      for (int64_t a = 0; a < j->Hq; a++, d += Wq) {
        int64_t ih = a * j->sh + ry - j->ph;
        if (ih < 0 || ih >= j->H) {
          memset(d, 0, (size_t)Wq * sizeof *d);
          continue;
        }
        const float *s = src + ih * j->xh + (lo * sw + rx - j->pw) * j->xw;
        for (int64_t b = 0; b < lo; b++) d[b] = 0;
        if (xs == 1) /* constant strides, so that the loops vectorise */
          for (int64_t b = lo; b < hi; b++) d[b] = s[b - lo];
        else if (xs == 2)
          for (int64_t b = lo; b < hi; b++) d[b] = s[(b - lo) * 2];
        else
          for (int64_t b = lo; b < hi; b++) d[b] = s[(b - lo) * xs];
        for (int64_t b = hi; b < Wq; b++) d[b] = 0;
      }
    }
}

static void prepare_planes(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  int64_t C = j->G * j->Cg;
  for (int64_t i = begin; i < end; i++)
    prepare_plane(j, i / C, i % C, (float *)j->q + i / C * j->qn + i % C * j->qc);
}

/* The runs of columns [j0, j0 + ncols): pieces of output rows that do not
 * cross a panel, each at column col of the block and offset off of an
 * image's channel in q. */
static int64_t plan_runs(const conv_job *j, int64_t j0, int64_t ncols, col_run *r) {
  int64_t ohw = j->OH * j->OW, n = j0 / ohw, oh = j0 % ohw / j->OW, ow = j0 % j->OW, cnt = 0;
  int64_t nr = j->uk.nr;
  for (int64_t col = 0; col < ncols; cnt++) {
    int64_t len = j->OW - ow < ncols - col ? j->OW - ow : ncols - col;
    if (len > nr - col % nr) len = nr - col % nr;
    r[cnt] = (col_run){col, n * j->qn + oh * j->qh + ow, len, 0};
    col += len;
    ow += len;
    if (ow == j->OW) {
      ow = 0;
      if (++oh == j->OH) oh = 0, n++;
    }
  }
  return cnt;
}

/* Packs rows [p0, p0 + kc) of the block's columns (their runs) into panels
 * of nr columns: value (p, c) at dst[(c / nr) kc nr + (p - p0) nr + c % nr],
 * columns past ncols zero. */
static CPU_CLONES void pack_x(const conv_job *j, int64_t g, int64_t p0, int64_t kc, col_run *runs,
                              int64_t nruns, int64_t ncols, float *dst) {
  int64_t nr = j->uk.nr, khw = j->KH * j->KW, npan = (ncols + nr - 1) / nr;
  int64_t zc = ncols % nr ? nr - ncols % nr : 0;
  float *zd = dst + (npan - 1) * kc * nr + ncols % nr;
  static const float zeros[32];
  for (int64_t r = 0; r < nruns; r++) runs[r].dst = runs[r].col / nr * kc * nr + runs[r].col % nr;
  for (int64_t p = p0; p < p0 + kc; p++, dst += nr, zd += nr) {
    const float *s = j->q + (g * j->Cg + p / khw) * j->qc + j->tap[p % khw];
    for (int64_t r = 0; r < nruns; r++) copy_short(dst + runs[r].dst, s + runs[r].off, runs[r].len);
    if (zc) copy_short(zd, zeros, zc);
  }
}

/* ---- The work items ----------------------------------------------------- */

/* Writes (or, when acc, adds) an m x n tile (rows of nr) at block column
 * jc of the output rows from o, where the tile's columns cross from one
 * image into the next. */
static void put_tile(const conv_job *j, const float *tile, int nr, int64_t o, int64_t jc,
                     int64_t m, int64_t n, bool acc) {
  int64_t ohw = j->OH * j->OW, O = j->G * j->Og;
  for (int64_t t = 0; t < n;) {
    int64_t img = (jc + t) / ohw, pix = (jc + t) % ohw, len = ohw - pix < n - t ? ohw - pix : n - t;
    for (int64_t i = 0; i < m; i++) {
      float *d = j->out + (img * O + o + i) * ohw + pix;
      const float *s = tile + i * nr + t;
      for (int64_t x = 0; x < len; x++) d[x] = acc ? d[x] + s[x] : s[x];
    }
    t += len;
  }
}

/* Item t: (g, column block, row block), the row block fastest. */
static void conv_item(const conv_job *j, int64_t t, float *bpack, col_run *runs) {
  int64_t mb = t % j->mblocks, rest = t / j->mblocks, cb = rest % j->colblocks, g = rest / j->colblocks;
  int64_t ohw = j->OH * j->OW, O = j->G * j->Og;
  int64_t j0 = cb * j->ncb, ncols = j->cols - j0 < j->ncb ? j->cols - j0 : j->ncb;
  int64_t i0 = mb * j->mrows, mrows = j->Og - i0 < j->mrows ? j->Og - i0 : j->mrows;
  int mr = j->uk.mr, nr = j->uk.nr;
  float tile[8 * 32];
  int64_t nruns = plan_runs(j, j0, ncols, runs);
  for (int64_t kb = 0; kb < j->nkb; kb++) {
    int64_t p0 = kb * KC, kc = j->K - p0 < KC ? j->K - p0 : KC;
    pack_x(j, g, p0, kc, runs, nruns, ncols, bpack);
    for (int64_t ir = 0; ir < mrows; ir += mr) {
      const float *a = wpanel(j, g, (i0 + ir) / mr, p0);
      int64_t m = mrows - ir < mr ? mrows - ir : mr, o = g * j->Og + i0 + ir;
      for (int64_t jr = 0; jr < ncols; jr += nr) {
        int64_t n = ncols - jr < nr ? ncols - jr : nr, jc = j0 + jr, pix = jc % ohw;
        if (pix + n <= ohw) {
          float *c = j->out + (jc / ohw * O + o) * ohw + pix;
          j->uk.fn(kc, a, j->K, bpack + jr * kc, c, ohw, m, n, kb > 0);
        } else {
          j->uk.fn(kc, a, j->K, bpack + jr * kc, tile, nr, m, n, false);
          put_tile(j, tile, nr, o, jc, m, n, kb > 0);
        }
      }
    }
  }
  if (j->bias)
    for (int64_t r = 0; r < nruns; r++) {
      int64_t jc = j0 + runs[r].col, img = jc / ohw, pix = jc % ohw;
      for (int64_t i = 0; i < mrows; i++) {
        float b = j->bias[g * j->Og + i0 + i], *ci = j->out + (img * O + g * j->Og + i0 + i) * ohw + pix;
        for (int64_t x = 0; x < runs[r].len; x++) ci[x] += b;
      }
    }
}

/* Chunks [begin, end) of the items, each with its scratch. */
static void conv_chunks(void *ctx, int64_t begin, int64_t end) {
  const conv_job *j = ctx;
  for (int64_t ch = begin; ch < end; ch++) {
    float *bpack = j->scratch + ch * j->chunk_floats;
    int64_t t0 = ch * j->per, t1 = t0 + j->per < j->items ? t0 + j->per : j->items;
    for (int64_t t = t0; t < t1; t++)
      conv_item(j, t, bpack, (col_run *)(bpack + KC * NCB));
  }
}

/* ---- The kernel --------------------------------------------------------- */

/* Splits Og into more row blocks (of whole panels) until the items share
 * evenly or every block is one panel. */
static void split_rows(conv_job *j, int64_t threads) {
  int64_t outer = j->G * j->colblocks;
  while (!cpu_conv_balanced(outer * j->mblocks, threads) && j->mblocks < j->mpanels) j->mblocks++;
}

/* Narrows the column blocks (in whole panels) until the items share
 * evenly or every block is one panel. */
static void split_columns(conv_job *j, int64_t threads) {
  int64_t nr = j->uk.nr, panels = (j->cols + nr - 1) / nr;
  for (int64_t c = j->colblocks;; c++) {
    int64_t per = (panels + c - 1) / c; /* panels per block */
    j->ncb = per * nr;
    j->colblocks = (j->cols + j->ncb - 1) / j->ncb;
    if (cpu_conv_balanced(j->G * j->colblocks * j->mblocks, threads) || per == 1) break;
  }
}

/* Sizes the work items: column blocks of at most NCB columns and row
 * blocks of at most MB_MAX rows, then split further until they share
 * evenly among the threads.  A row block packs its own input block and a
 * column block reads all its rows' weights, so the split goes first along
 * the dimension whose other operand is smaller: rows where the weights
 * (Og x K) outweigh the input block (K x N OH OW), as in ResNet's last
 * layers, else columns. */
static void plan_items(conv_job *j, int64_t threads) {
  int64_t nr = j->uk.nr, panels = (j->cols + nr - 1) / nr;
  j->ncb = panels * nr < NCB ? panels * nr : NCB;
  j->colblocks = (j->cols + j->ncb - 1) / j->ncb;
  j->mblocks = (j->Og + MB_MAX - 1) / MB_MAX;
  if (j->Og >= j->cols) {
    split_rows(j, threads);
    split_columns(j, threads);
  } else {
    split_columns(j, threads);
    split_rows(j, threads);
  }
  j->mrows = (j->mpanels + j->mblocks - 1) / j->mblocks * j->uk.mr;
  j->mblocks = (j->Og + j->mrows - 1) / j->mrows;
  j->items = j->G * j->colblocks * j->mblocks;
}

/* Adds v to the list l of n values unless it holds it already. */
static void add_phase(int64_t *l, int64_t *n, int64_t v) {
  for (int64_t i = 0; i < *n; i++)
    if (l[i] == v) return;
  l[(*n)++] = v;
}

/* Sets up how pack_x reads the input (see prepare_plane): the phases, the
 * planes' sizes and strides, and the taps' offsets (ints: KH + KW + KH KW
 * of them).  Returns the floats that q needs (0: the input is read as it
 * is). */
static int64_t plan_input(conv_job *j, int64_t *ints, bool copy) {
  int64_t khw = j->KH * j->KW;
  j->ry = ints, j->rx = ints + j->KH, j->tap = ints + j->KH + j->KW;
  if (!copy && j->sh == 1 && j->sw == 1 && j->ph == 0 && j->pw == 0 && j->xw == 1) {
    j->q = j->x, j->qn = j->xn, j->qc = j->xc, j->qh = j->xh, j->qp = 0;
    for (int64_t k = 0; k < khw; k++) j->tap[k] = k / j->KW * j->dh * j->xh + k % j->KW * j->dw;
    return 0;
  }
  j->nry = j->nrx = 0;
  for (int64_t k = 0; k < j->KH; k++) add_phase(j->ry, &j->nry, k * j->dh % j->sh);
  for (int64_t k = 0; k < j->KW; k++) add_phase(j->rx, &j->nrx, k * j->dw % j->sw);
  /* the padded rows and columns that some output reads */
  int64_t hp = (j->OH - 1) * j->sh + (j->KH - 1) * j->dh + 1;
  int64_t wp = (j->OW - 1) * j->sw + (j->KW - 1) * j->dw + 1;
  j->Hq = (hp + j->sh - 1) / j->sh, j->Wq = (wp + j->sw - 1) / j->sw;
  j->qh = j->Wq, j->qp = j->Hq * j->Wq, j->qc = j->nry * j->nrx * j->qp;
  j->qn = j->G * j->Cg * j->qc;
  for (int64_t k = 0; k < khw; k++) {
    int64_t y = k / j->KW * j->dh, x = k % j->KW * j->dw, iy = 0, ix = 0;
    while (j->ry[iy] != y % j->sh) iy++;
    while (j->rx[ix] != x % j->sw) ix++;
    j->tap[k] = (iy * j->nrx + ix) * j->qp + y / j->sh * j->qh + x / j->sw;
  }
  /* the direct path reads up to DHALF - 1 floats past an output row */
  return j->N * j->qn + DHALF;
}

/* BP_CONV_PATH: "gemm" or "direct" takes that path for every call (tests
 * run both); unset, prefer_direct decides.  Read once. */
enum { PATH_UNREAD, PATH_AUTO, PATH_GEMM, PATH_DIRECT };
static atomic_int conv_path;

static int chosen_path(void) {
  int p = atomic_load_explicit(&conv_path, memory_order_relaxed);
  if (p == PATH_UNREAD) {
    const char *env = getenv("BP_CONV_PATH");
    p = env && !strcmp(env, "gemm") ? PATH_GEMM : env && !strcmp(env, "direct") ? PATH_DIRECT : PATH_AUTO;
    atomic_store_explicit(&conv_path, p, memory_order_relaxed);
  }
  return p;
}

/* Plans and runs the convolution, the weights read (GEMM) or packed
 * (direct) from j->w. */
static bp_status conv_run(const bp_kernel_ctx *ctx, conv_job *j) {
  int64_t threads = cpu_num_threads();
  j->uk = cpu_gemm_ukernel_rows();
  j->nkb = (j->K + KC - 1) / KC;
  j->mpanels = (j->Og + j->uk.mr - 1) / j->uk.mr;
  j->cols = j->N * j->OH * j->OW;
  conv_job d = *j;
  j->chunk_floats = CHUNK_FLOATS;
  plan_items(j, threads);
  cpu_conv_plan_direct(&d, threads);
  int path = chosen_path();
  bool direct = path == PATH_AUTO ? cpu_conv_prefer_direct(&d, j) : path == PATH_DIRECT;
  if (direct) *j = d;
  /* Up to four chunks a thread, handed out as threads come free (see
   * attention.c); the items are sized to share evenly among them. */
  int64_t chunks = j->items < 4 * threads ? j->items : 4 * threads;
  j->per = (j->items + chunks - 1) / chunks;
  int64_t mr = j->uk.mr, rem = direct ? 0 : j->Og % mr, nints = j->KH + j->KW + j->KH * j->KW;
  int64_t *ints = malloc((size_t)(nints + (direct ? j->K : 0)) * sizeof *ints);
  int64_t qfloats = ints ? plan_input(j, ints, direct) : 0;
  int64_t wfloats = rem ? j->G * mr * j->K : 0;
  /* The buffers come from the host's allocator, which keeps large blocks
   * for reuse: from malloc, they went back to the system when freed, and
   * every call paid a page fault per 4 KiB to touch megabytes again. */
  /* Each part on a 64-byte boundary (the chunks hold int64 runs). */
  wfloats = UP16(wfloats);
  qfloats = UP16(qfloats);
  j->chunk_floats = UP16(j->chunk_floats);
  int64_t floats = wfloats + qfloats + chunks * j->chunk_floats;
  bp_tensor *buf = NULL;
  if (ints && cpu_host->tensor_empty(j->dev, BP_FLOAT32, 1, &floats, &buf)) buf = NULL;
  float *mem = buf ? view_of(buf)->data : NULL;
  if (!mem) {
    free(ints);
    return CPU_ERR(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld pack buffers of %lld floats",
                   ctx->op_name, (long long)chunks, (long long)j->chunk_floats);
  }
  j->scratch = mem + wfloats + qfloats;
  if (direct) {
    j->off = ints + nints;
    for (int64_t p = 0; p < j->K; p++)
      j->off[p] = p / (j->KH * j->KW) * j->qc + j->tap[p % (j->KH * j->KW)];
  } else if (rem) {
    j->tail = mem;
    memset(j->tail, 0, (size_t)wfloats * sizeof(float));
    for (int64_t g = 0; g < j->G; g++)
      memcpy(j->tail + g * mr * j->K, j->w + (g * j->Og + j->Og - rem) * j->K,
             (size_t)(rem * j->K) * sizeof(float));
  }
  if (qfloats) {
    j->q = mem + wfloats;
    int64_t planes = j->N * j->G * j->Cg;
    cpu_parallel_for(planes, CPU_GRAIN / (j->qc + 1) + 1, prepare_planes, j);
  }
  cpu_parallel_items(chunks, direct ? cpu_conv_direct_chunks : conv_chunks, j);
  cpu_host->tensor_release(buf);
  free(ints);
  return BP_OK;
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
  j.dev = vo->device;
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
  j.w = vw->data;
  st = conv_run(ctx, &j);
  cpu_host->tensor_release(w);
  cpu_host->tensor_release(b);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(conv2d_kernel, conv2d_impl)

bp_status cpu_register_conv(bp_library *lib) {
  /* float32; the host's composite serves other dtypes */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  return CPU_IMPL_STRUCTURED_DTYPES(lib, "conv2d", conv2d_kernel, dtypes);
}
