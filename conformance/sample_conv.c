/*
 * conformance/sample_conv.c - the sample sets of conv2d and the pools
 * (op set 2): every stride, padding, dilation and group count from 1 to 3
 * (conv2d) and every kernel, stride and padding the pools allow at small
 * sizes, both ceil_modes, count_include_pad and divisor_override; 1x1,
 * 7x7 and non-square kernels; 3-D (unbatched) inputs; each tensor in
 * every layout; NaN and infinities in the windows; output sizes that do
 * and do not divide the input (adaptive_avg_pool2d); and the geometries
 * the op set refuses.
 *
 * max_pool2d's results are elements of its input: they compare bit for
 * bit (either zero where -0.0 and 0.0 tie, as amax's).  conv2d is held
 * to matmul's tolerance for C / groups * KH * KW products, the averages
 * to mean's over a window (samples.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

/* A 2-D geometry: kernel (conv2d: the weight's), stride, padding and
 * dilation (height, width); -1 in stride[0] leaves stride as [] (the
 * kernel size). */
typedef struct geo {
  int64_t k[2], s[2], p[2], d[2];
} geo;

static geo geom(int64_t kh, int64_t kw, int64_t s, int64_t p, int64_t d) {
  geo g = {{kh, kw}, {s, s}, {p, p}, {d, d}};
  return g;
}

/* An int[2] argument: its two values, or none for v[0] < 0. */
static void add_pair(sample *s, const int64_t *v) { cert_add_list(s, v, v[0] < 0 ? 0 : 2); }

/* An input [n, c, h, w] (n < 0: [c, h, w]) in layout lay. */
static rt *image(const slist *L, int64_t n, int64_t c, int64_t h, int64_t w, int lay) {
  int64_t sz[4] = {n, c, h, w};
  bool unbatched = n < 0;
  rt *x = cert_gen_input(L, 0, L->dt, unbatched ? 3 : 4, unbatched ? sz + 1 : sz);
  if (cert_lay_is_expanded(lay)) cert_gen_make_expandable(x, lay);
  return x;
}

/* ---- conv2d -------------------------------------------------------------- */

/* conv2d of input x (layout lx) with o output channels, groups, a bias or
 * not, weight and bias in layouts lw and lb. */
static sample *conv(slist *L, const char *label, rt *x, int lx, int64_t o, int64_t groups,
                    const geo *g, bool bias, int lw, int lb) {
  sample *s = cert_gen_next(L, label);
  int64_t c = x->sizes[x->ndim - 3];
  int64_t ws[4] = {o, c / groups, g->k[0], g->k[1]};
  rt *w = cert_gen_input(L, 1, L->dt, 4, ws);
  if (cert_lay_is_expanded(lw)) cert_gen_make_expandable(w, lw);
  cert_add_tensor(s, x, lx);
  cert_add_tensor(s, w, lw);
  if (bias) {
    rt *b = cert_gen_input(L, 2, L->dt, 1, &o);
    if (cert_lay_is_expanded(lb)) cert_gen_make_expandable(b, lb);
    cert_add_tensor(s, b, lb);
  } else {
    cert_add_none(s);
  }
  add_pair(s, g->s);
  add_pair(s, g->p);
  add_pair(s, g->d);
  cert_add_int(s, groups);
  return s;
}

static void conv_basic(slist *L) {
  geo g = geom(3, 3, 1, 0, 1);
  conv(L, "basic", image(L, 1, 2, 5, 5, 0), 0, 3, 1, &g, true, 0, 0);
}

/* Every stride, padding, dilation and group count from 1 to 3 (the
 * first three in 0 .. 2 for padding), on inputs whose sizes leave a
 * remainder; then kernels, channel counts and the unbatched form. */
static void conv_sizes(slist *L) {
  char label[64];
  for (int64_t st = 1; st <= 3; st++)
    for (int64_t p = 0; p <= 2; p++)
      for (int64_t d = 1; d <= 3; d++)
        for (int64_t gr = 1; gr <= 3; gr++) {
          snprintf(label, sizeof label, "stride %lld, padding %lld, dilation %lld, groups %lld",
                   (long long)st, (long long)p, (long long)d, (long long)gr);
          geo g = geom(3, 2, st, p, d);
          conv(L, label, image(L, 2, 2 * gr, 9 + st, 8 + d, 0), 0, 2 * gr, gr, &g, (st + d) % 2,
               0, 0);
        }
  /* a different stride, padding and dilation per dim */
  geo a = {{3, 3}, {1, 2}, {2, 0}, {1, 3}}, b = {{2, 4}, {3, 1}, {0, 1}, {2, 1}};
  conv(L, "stride, padding and dilation per dim (1)", image(L, 2, 3, 11, 13, 0), 0, 4, 1, &a,
       true, 0, 0);
  conv(L, "stride, padding and dilation per dim (2)", image(L, 1, 4, 10, 9, 0), 0, 2, 2, &b,
       false, 0, 0);
  static const struct {
    int64_t kh, kw, p, c, o, h, w;
    const char *what;
  } shapes[] = {{1, 1, 0, 5, 7, 6, 9, "a 1x1 kernel"},
                {1, 1, 1, 3, 2, 4, 4, "a 1x1 kernel, padding 1"},
                {7, 7, 3, 3, 4, 12, 11, "a 7x7 kernel, padding 3"},
                {7, 7, 0, 2, 2, 7, 9, "a 7x7 kernel as large as the input"},
                {1, 5, 2, 2, 3, 3, 17, "a 1x5 kernel"},
                {5, 1, 0, 2, 3, 17, 3, "a 5x1 kernel"},
                {3, 3, 1, 1, 1, 1, 1, "one input element, padding 1"},
                {3, 3, 1, 16, 32, 6, 7, "16 input channels, 32 output"},
                {3, 3, 1, 3, 2, 65, 33, "an output 65 high"}};
  for (size_t j = 0; j < sizeof shapes / sizeof *shapes; j++) {
    geo g = geom(shapes[j].kh, shapes[j].kw, 1, shapes[j].p, 1);
    conv(L, shapes[j].what, image(L, 2, shapes[j].c, shapes[j].h, shapes[j].w, 0), 0,
         shapes[j].o, 1, &g, j % 2 == 0, 0, 0);
  }
  geo g = geom(3, 3, 2, 1, 1);
  conv(L, "unbatched [C, H, W]", image(L, -1, 4, 9, 8, 0), 0, 6, 2, &g, true, 0, 0);
  conv(L, "unbatched, without bias", image(L, -1, 3, 5, 6, 0), 0, 3, 3, &g, false, 0, 0);
  conv(L, "an empty batch", image(L, 0, 2, 5, 5, 0), 0, 2, 1, &g, true, 0, 0);
  geo dw = geom(3, 3, 1, 1, 1);
  conv(L, "depthwise (groups = channels = 6)", image(L, 2, 6, 8, 8, 0), 0, 12, 6, &dw, true, 0,
       0);
}

static void conv_layouts(slist *L) {
  char label[64];
  geo g = geom(3, 3, 1, 1, 1);
  for (int arg = 0; arg < 3; arg++)
    for (int lay = 1; lay < L_KINDS; lay++) {
      snprintf(label, sizeof label, "argument %d %s", arg, cert_lay_name[lay]);
      conv(L, label, image(L, 2, 4, 7, 8, arg == 0 ? lay : 0), arg == 0 ? lay : 0, 6, 2, &g,
           true, arg == 1 ? lay : 0, arg == 2 ? lay : 0);
    }
}

static void conv_values(slist *L) {
  geo g = geom(3, 3, 1, 1, 1);
  /* NaN and infinities in the input (the weights stay finite: whether
   * the padding's zeros are multiplied by them is the kernel's choice) */
  rt *x = image(L, 1, 3, 6, 7, 0);
  x->f[3] = NAN;
  x->f[60] = INFINITY;
  x->f[100] = -INFINITY;
  conv(L, "a NaN and infinities in the input", x, 0, 2, 1, &g, true, 0, 0);
  x = image(L, 1, 3, 6, 7, 0);
  x->f[10] = INFINITY;
  x->f[11] = -INFINITY; /* neighbours: their windows sum inf - inf */
  conv(L, "inf and -inf in one window", x, 0, 2, 1, &g, false, 0, 0);
  /* large terms of one sign: sums that do not cancel (the op set's
   * tolerance of a sum of products is relative to its terms) */
  x = image(L, 2, 4, 6, 6, 0);
  cert_fill_rt(x, 0, 30);
  sample *s = conv(L, "positive magnitudes to 30", x, 0, 3, 1, &g, true, 0, 0);
  cert_fill_rt(s->a[1].t, 0, 30);
  cert_fill_rt(s->a[2].t, 0, 30);
  x = image(L, 1, 2, 5, 5, 0);
  for (int64_t j = 0; j < x->numel; j++) x->f[j] = j % 3 ? -0.0 : 0.0;
  conv(L, "signed zeros", x, 0, 2, 1, &g, false, 0, 0);
}

static void conv_large(slist *L) {
  /* (the first is the one the concurrency check calls from each thread) */
  geo g = geom(3, 3, 1, 1, 1), dw = geom(3, 3, 2, 1, 1);
  conv(L, "[1, 8, 130, 130], 8 channels, 3x3", image(L, 1, 8, 130, 130, 0), 0, 8, 1, &g, true,
       0, 0);
  conv(L, "depthwise [2, 32, 57, 57], stride 2", image(L, 2, 32, 57, 57, 0), 0, 32, 32, &dw,
       true, 0, 0);
}

/* What the op set refuses: groups, channels, ranks, empty outputs, bad
 * geometry values, a bias or weight that does not fit. */
static void conv_bad(slist *L) {
  geo g = geom(3, 3, 1, 0, 1);
  sample *s = conv(L, "groups 2 of 3 input channels", image(L, 1, 3, 5, 5, 0), 0, 4, 1, &g,
                   false, 0, 0);
  s->a[6].i = 2;
  s = conv(L, "groups 2 of 3 output channels", image(L, 1, 4, 5, 5, 0), 0, 3, 1, &g, false, 0,
           0);
  int64_t ws[4] = {3, 2, 3, 3};
  rt_free(s->a[1].t);
  s->a[1].t = cert_gen_input(L, 1, L->dt, 4, ws);
  s->a[1].lay = cert_lay_make(0, 4, ws);
  s->a[6].i = 2;
  s = conv(L, "a weight of 3 input channels for 2", image(L, 1, 2, 5, 5, 0), 0, 4, 1, &g, false,
           0, 0);
  int64_t w3[4] = {4, 3, 3, 3};
  rt_free(s->a[1].t);
  s->a[1].t = cert_gen_input(L, 1, L->dt, 4, w3);
  s->a[1].lay = cert_lay_make(0, 4, w3);
  s = conv(L, "groups 0", image(L, 1, 2, 5, 5, 0), 0, 2, 1, &g, false, 0, 0);
  s->a[6].i = 0;
  s = conv(L, "a 2-D input", image(L, 1, 2, 5, 5, 0), 0, 2, 1, &g, false, 0, 0);
  s->a[0].t->ndim = 2;
  s->a[0].t->sizes[0] = 10, s->a[0].t->sizes[1] = 5;
  s->a[0].lay = cert_lay_make(0, 2, s->a[0].t->sizes);
  s = conv(L, "a kernel larger than the input", image(L, 1, 2, 2, 5, 0), 0, 2, 1, &g, false, 0,
           0);
  static const struct {
    int arg;
    int64_t v;
    const char *what;
  } vals[] = {{3, 0, "stride 0"}, {4, -1, "padding -1"}, {5, 0, "dilation 0"}};
  for (size_t j = 0; j < 3; j++) {
    s = conv(L, vals[j].what, image(L, 1, 2, 5, 5, 0), 0, 2, 1, &g, false, 0, 0);
    s->a[vals[j].arg].list[0] = vals[j].v;
  }
  s = conv(L, "stride [] (conv2d has no default from the kernel)", image(L, 1, 2, 5, 5, 0), 0,
           2, 1, &g, false, 0, 0);
  s->a[3].nlist = 0;
  s = conv(L, "a bias of 3 values for 2 channels", image(L, 1, 2, 5, 5, 0), 0, 2, 1, &g, true, 0,
           0);
  int64_t three = 3;
  rt_free(s->a[2].t);
  s->a[2].t = cert_gen_input(L, 2, L->dt, 1, &three);
  s->a[2].lay = cert_lay_make(0, 1, &three);
  s = conv(L, "a float64 weight", image(L, 1, 2, 5, 5, 0), 0, 2, 1, &g, false, 0, 0);
  rt *w64 = ref_cast(s->a[1].t, L->dt == BP_FLOAT64 ? BP_FLOAT32 : BP_FLOAT64);
  rt_free(s->a[1].t);
  s->a[1].t = w64;
}

/* ---- max_pool2d and avg_pool2d ------------------------------------------- */

/* A pool of x (layout lx): max_pool2d with g's dilation, or avg_pool2d
 * with count_include_pad (cip) and divisor_override (div, 0 for None). */
static sample *pool(slist *L, const char *label, rt *x, int lx, const geo *g, bool ceil_mode,
                    bool cip, int64_t div) {
  sample *s = cert_gen_next(L, label);
  bool mx = kind_of(L) == K_MAX_POOL;
  cert_add_tensor(s, x, lx);
  add_pair(s, g->k);
  add_pair(s, g->s);
  add_pair(s, g->p);
  if (mx) add_pair(s, g->d);
  cert_add_bool(s, ceil_mode);
  if (!mx) {
    cert_add_bool(s, cip);
    if (div)
      cert_add_int(s, div);
    else
      cert_add_none(s);
  }
  /* max: an element of each window, either zero where they tie */
  s->exact = s->zero_ties = mx;
  return s;
}

static void pool_basic(slist *L) {
  geo g = geom(2, 2, -1, 0, 1);
  pool(L, "basic", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
}

/* Every kernel 1 .. 3 with every stride 1 .. 3 and [] and every padding
 * the kernel allows, ceil_mode both ways (and dilation 1 .. 2 for
 * max_pool2d, count_include_pad both ways for avg_pool2d), on sizes
 * that leave a remainder; then larger and non-square kernels, windows
 * that ceil_mode drops, divisors, and the unbatched form. */
static void pool_sizes(slist *L) {
  bool mx = kind_of(L) == K_MAX_POOL;
  char label[96];
  for (int64_t k = 1; k <= 3; k++)
    for (int64_t st = 0; st <= 3; st++)
      for (int64_t p = 0; p <= k / 2; p++)
        for (int cm = 0; cm < 2; cm++)
          for (int64_t v = 1; v <= 2; v++) {
            /* v: the dilation (max_pool2d), or count_include_pad (avg) */
            geo g = geom(k, k, st ? st : -1, p, mx ? v : 1);
            snprintf(label, sizeof label, "kernel %lld, stride %s%lld, padding %lld%s, %s %lld",
                     (long long)k, st ? "" : "[] = ", (long long)(st ? st : k), (long long)p,
                     cm ? ", ceil_mode" : "", mx ? "dilation" : "count_include_pad",
                     (long long)(mx ? v : v - 1));
            pool(L, label, image(L, 2, 3, 9 + k, 10 + st, 0), 0, &g, cm, v == 2, 0);
          }
  static const struct {
    geo g;
    int64_t h, w;
    bool ceil;
    int64_t div;
    const char *what;
  } cases[] = {
      {{{7, 7}, {1, 1}, {3, 3}, {1, 1}}, 12, 9, false, 0, "a 7x7 kernel, padding 3"},
      {{{2, 3}, {1, 2}, {1, 0}, {1, 1}}, 9, 11, false, 0, "a 2x3 kernel, stride 1x2"},
      {{{3, 1}, {2, 1}, {1, 0}, {2, 1}}, 10, 5, true, 0, "a 3x1 kernel, ceil_mode"},
      {{{2, 2}, {2, 2}, {1, 1}, {1, 1}}, 5, 5, true, 0,
       "ceil_mode: the last window would start in the padding"},
      {{{3, 3}, {2, 2}, {0, 0}, {1, 1}}, 8, 8, true, 0, "ceil_mode: a last window cut short"},
      {{{3, 3}, {3, 3}, {1, 1}, {1, 1}}, 64, 65, false, 0, "an output 22 by 22"},
      {{{3, 3}, {2, 2}, {1, 1}, {1, 1}}, 7, 7, false, 3, "divisor_override 3"},
      {{{2, 2}, {1, 1}, {1, 1}, {1, 1}}, 4, 5, true, 1, "divisor_override 1, ceil_mode"},
      {{{2, 3}, {2, 3}, {0, 0}, {1, 1}}, 1, 7, true, 0,
       "ceil_mode: an input shorter than the kernel (one window, cut short)"},
  };
  for (size_t j = 0; j < sizeof cases / sizeof *cases; j++) {
    if (mx && cases[j].div) continue;
    pool(L, cases[j].what, image(L, 2, 2, cases[j].h, cases[j].w, 0), 0, &cases[j].g,
         cases[j].ceil, j % 2 == 0, cases[j].div);
  }
  geo g = geom(3, 3, 2, 1, mx ? 2 : 1);
  pool(L, "unbatched [C, H, W]", image(L, -1, 3, 9, 10, 0), 0, &g, true, false, 0);
  pool(L, "an empty batch", image(L, 0, 3, 9, 10, 0), 0, &g, false, true, 0);
  if (mx) {
    /* the first window covers only padding: the lowest value */
    geo pad = {{1, 2}, {1, 1}, {0, 2}, {1, 3}};
    pool(L, "a window of padding only (dilation 3)", image(L, 1, 2, 3, 1, 0), 0, &pad, false,
         true, 0);
  }
}

static void pool_layouts(slist *L) {
  char label[64];
  geo g = geom(3, 3, 2, 1, 1);
  for (int lay = 1; lay < L_KINDS; lay++) {
    snprintf(label, sizeof label, "argument 0 %s", cert_lay_name[lay]);
    pool(L, label, image(L, 2, 3, 7, 8, lay), lay, &g, lay % 2, lay % 3 != 0, 0);
  }
}

static void pool_values(slist *L) {
  bool mx = kind_of(L) == K_MAX_POOL, fl = dt_is_float(L->dt);
  geo g = geom(3, 3, 2, 1, 1), g2 = geom(2, 2, -1, 0, 1);
  rt *x = image(L, 2, 3, 9, 8, 0);
  cert_gen_sprinkle(x, 9, true, mx);
  pool(L, "special values, NaN in some windows", x, 0, &g, true, false, 0);
  x = image(L, 2, 3, 9, 8, 0);
  cert_gen_sprinkle(x, 3, false, mx);
  pool(L, "special values, no NaN", x, 0, &g, false, true, 0);
  if (fl) {
    x = image(L, 1, 2, 4, 4, 0);
    /* a window all NaN, one all -inf, one with inf and -inf, one with NaN
     * last (a kernel that compares with > keeps the number before it) */
    for (int64_t j = 0; j < 4; j++) {
      x->f[(j / 2) * 4 + j % 2] = cert_gen_nan_payload(L->dt, (int)j + 1); /* negative ones too */
      x->f[(j / 2) * 4 + 2 + j % 2] = -INFINITY;
    }
    x->f[8] = INFINITY, x->f[9] = -INFINITY;
    x->f[15] = cert_gen_nan_payload(L->dt, 5); /* all ones */
    pool(L, "windows of NaN, of -inf, of inf and -inf, NaN last", x, 0, &g2, false, true, 0);
    x = image(L, 1, 2, 6, 6, 0);
    for (int64_t j = 0; j < x->numel; j++) x->f[j] = (cert_rng_next() & 1) ? 0.0 : -0.0;
    pool(L, "signed zeros", x, 0, &g2, false, true, 0);
  } else if (L->dt != BP_BOOL) {
    x = image(L, 1, 2, 6, 6, 0);
    for (int64_t j = 0; j < x->numel; j++) x->i[j] = cert_gen_special_i(L->dt, (int)(j % 2));
    pool(L, "integer extremes", x, 0, &g, false, true, 0);
  }
}

static void pool_large(slist *L) {
  geo g = geom(3, 3, 2, 1, 1), k2 = geom(2, 2, -1, 0, 1);
  pool(L, "[2, 16, 101, 99], kernel 3, stride 2", image(L, 2, 16, 101, 99, 0), 0, &g, true,
       false, 0);
  pool(L, "[1, 32, 64, 64], kernel 2", image(L, 1, 32, 64, 64, 0), 0, &k2, false, true, 0);
}

/* What the op set refuses: window values below their minimum, a
 * padding above half the kernel, ranks, empty outputs, dtypes. */
static void pool_bad(slist *L) {
  bool mx = kind_of(L) == K_MAX_POOL;
  geo g = geom(3, 3, 1, 1, 1);
  static const struct {
    int arg; /* 1 kernel, 2 stride, 3 padding, 4 dilation */
    int64_t v;
    const char *what;
  } vals[] = {{1, 0, "kernel 0"},   {2, 0, "stride 0"}, {3, -1, "padding -1"},
              {3, 2, "padding 2 of a kernel 3"}, {4, 0, "dilation 0"}};
  sample *s;
  for (size_t j = 0; j < 5; j++) {
    if (!mx && vals[j].arg == 4) continue;
    s = pool(L, vals[j].what, image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
    s->a[vals[j].arg].list[0] = vals[j].v;
  }
  s = pool(L, "kernel_size []", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
  s->a[1].nlist = 0;
  geo big = geom(5, 5, 1, 0, 1);
  pool(L, "a kernel larger than the input", image(L, 1, 2, 4, 6, 0), 0, &big, false, true, 0);
  s = pool(L, "a 2-D input", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
  s->a[0].t->ndim = 2;
  s->a[0].t->sizes[0] = 12, s->a[0].t->sizes[1] = 6;
  s->a[0].lay = cert_lay_make(0, 2, s->a[0].t->sizes);
  if (!mx) {
    pool(L, "divisor_override 0", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0)->a[6] =
        (sarg){.k = AK_INT, .i = 0};
    s = pool(L, "an int32 input", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
  } else {
    s = pool(L, "a bool input", image(L, 1, 2, 6, 6, 0), 0, &g, false, true, 0);
  }
  rt *c = ref_cast(s->a[0].t, mx ? BP_BOOL : BP_INT32);
  rt_free(s->a[0].t);
  s->a[0].t = c;
}

/* ---- adaptive_avg_pool2d -------------------------------------------------- */

static sample *adaptive(slist *L, const char *label, rt *x, int lx, int64_t oh, int64_t ow) {
  sample *s = cert_gen_next(L, label);
  int64_t o[2] = {oh, ow};
  cert_add_tensor(s, x, lx);
  cert_add_list(s, o, 2);
  return s;
}

static void adaptive_sizes(slist *L) {
  /* (input, output) per dim: dividing, not dividing, 1, the input's own,
   * larger than the input */
  static const int64_t hw[][4] = {{6, 6, 3, 3}, {7, 9, 3, 4}, {5, 5, 1, 1}, {5, 7, 5, 7},
                                  {3, 4, 5, 7}, {10, 13, 7, 6}, {1, 1, 2, 3}, {64, 63, 7, 7},
                                  {17, 5, 4, 5}};
  char label[64];
  for (size_t j = 0; j < sizeof hw / sizeof *hw; j++) {
    snprintf(label, sizeof label, "[%lld, %lld] to [%lld, %lld]", (long long)hw[j][0],
             (long long)hw[j][1], (long long)hw[j][2], (long long)hw[j][3]);
    adaptive(L, label, image(L, 2, 3, hw[j][0], hw[j][1], 0), 0, hw[j][2], hw[j][3]);
  }
  adaptive(L, "unbatched [C, H, W]", image(L, -1, 4, 9, 10, 0), 0, 4, 3);
  adaptive(L, "an empty batch", image(L, 0, 4, 9, 10, 0), 0, 4, 3);
}

static void adaptive_sets(slist *L, int sk) {
  char label[64];
  rt *x;
  switch (sk) {
    case SK_BASIC: adaptive(L, "basic", image(L, 1, 2, 6, 6, 0), 0, 3, 3); break;
    case SK_SIZES: adaptive_sizes(L); break;
    case SK_LAYOUTS:
      for (int lay = 1; lay < L_KINDS; lay++) {
        snprintf(label, sizeof label, "argument 0 %s", cert_lay_name[lay]);
        adaptive(L, label, image(L, 2, 3, 7, 8, lay), lay, 3, 5);
      }
      break;
    case SK_VALUES:
      x = image(L, 2, 3, 9, 8, 0);
      cert_gen_sprinkle(x, 9, true, false);
      adaptive(L, "special values, NaN in some windows", x, 0, 4, 3);
      x = image(L, 2, 3, 9, 8, 0);
      cert_fill_rt(x, -1e4, 1e4);
      adaptive(L, "magnitudes to 1e4", x, 0, 2, 3);
      break;
    case SK_LARGE:
      adaptive(L, "[2, 32, 64, 64] to [7, 7]", image(L, 2, 32, 64, 64, 0), 0, 7, 7);
      adaptive(L, "[1, 3, 224, 224] to [1, 1]", image(L, 1, 3, 224, 224, 0), 0, 1, 1);
      break;
    case SK_BADSHAPE: {
      sample *s = adaptive(L, "output size 0", image(L, 1, 2, 6, 6, 0), 0, 0, 3);
      s = adaptive(L, "output_size []", image(L, 1, 2, 6, 6, 0), 0, 2, 3);
      s->a[1].nlist = 0;
      adaptive(L, "an input of height 0", image(L, 1, 2, 0, 6, 0), 0, 2, 3);
      s = adaptive(L, "a 2-D input", image(L, 1, 2, 6, 6, 0), 0, 2, 3);
      s->a[0].t->ndim = 2;
      s->a[0].t->sizes[0] = 12, s->a[0].t->sizes[1] = 6;
      s->a[0].lay = cert_lay_make(0, 2, s->a[0].t->sizes);
      s = adaptive(L, "an int32 input", image(L, 1, 2, 6, 6, 0), 0, 2, 3);
      rt *c = ref_cast(s->a[0].t, BP_INT32);
      rt_free(s->a[0].t);
      s->a[0].t = c;
      break;
    }
    default: break;
  }
}

bool cert_gen_conv_set(slist *L, int sk) {
  enum kind k = kind_of(L);
  if (k == K_ADAPTIVE_POOL) {
    adaptive_sets(L, sk);
    return true;
  }
  if (k == K_CONV2D) {
    switch (sk) {
      case SK_BASIC: conv_basic(L); break;
      case SK_SIZES: conv_sizes(L); break;
      case SK_LAYOUTS: conv_layouts(L); break;
      case SK_VALUES: conv_values(L); break;
      case SK_LARGE: conv_large(L); break;
      case SK_BADSHAPE: conv_bad(L); break;
      default: break;
    }
    return true;
  }
  if (k != K_MAX_POOL && k != K_AVG_POOL) return false;
  switch (sk) {
    case SK_BASIC: pool_basic(L); break;
    case SK_SIZES: pool_sizes(L); break;
    case SK_LAYOUTS: pool_layouts(L); break;
    case SK_VALUES: pool_values(L); break;
    case SK_LARGE: pool_large(L); break;
    case SK_BADSHAPE: pool_bad(L); break;
    default: break;
  }
  return true;
}
