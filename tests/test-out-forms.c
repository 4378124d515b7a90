/*
 * The `.out` and in-place forms of op set 2: a structured kernel fills the
 * written tensor itself when its layout is the result's (and, for
 * pointwise ops, when an argument is that tensor); otherwise the op's
 * result is copied in.  PyTorch's rules for `out`: the result's dtype, its
 * shape or no elements (then resized, when the storage is out's own), an
 * exact alias allowed, a partial overlap refused.
 *
 * The "spy" plugin serves core::neg, core::add, core::cumsum and
 * core::clamp on the CPU with structured float32 kernels that note the
 * tensor they were given to fill, so each case can tell which path the
 * host took.  (The last case: a kernel for some dtypes leaves an op's
 * composite the others.)
 */
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>

#include "testutil.h"

static const bp_host_api *host;

/* The tensor the last kernel call filled, and how many calls there were. */
static struct {
  int calls;
  const bp_tensor *filled;
  bool fail;
} spy;

/* Element i of a float32 view with any strides (1-D or 2-D). */
static float *at(const bp_tensor_view *v, int64_t i) {
  int64_t off = 0;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    off += (i % v->sizes[d]) * v->strides[d];
    i /= v->sizes[d];
  }
  return (float *)v->data + off;
}

/* Element i of a view broadcast to `to`'s shape (same rank or lower). */
static float bcast(const bp_tensor_view *v, const bp_tensor_view *to, int64_t i) {
  int64_t off = 0;
  for (int32_t d = to->ndim - 1, e = v->ndim - 1; d >= 0; d--, e--) {
    int64_t k = i % to->sizes[d];
    i /= to->sizes[d];
    if (e >= 0 && v->sizes[e] > 1) off += k * v->strides[e];
  }
  return ((const float *)v->data)[off];
}

static bp_status begin(const bp_kernel_ctx *ctx, const bp_value *rets) {
  spy.calls++;
  spy.filled = rets[0].u.tensor;
  if (spy.fail)
    return host->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: the spy refuses", ctx->op_name);
  return BP_OK;
}

static bp_status neg_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_status st = begin(ctx, rets);
  if (st) return st;
  const bp_tensor_view *x = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = host->tensor_view(rets[0].u.tensor);
  for (int64_t i = 0; i < o->numel; i++) *at(o, i) = -*at(x, i);
  return BP_OK;
}

/* Reads both operands at element i before it writes element i. */
static bp_status add_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                          bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_status st = begin(ctx, rets);
  if (st) return st;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *b = host->tensor_view(args[1].u.tensor);
  const bp_tensor_view *o = host->tensor_view(rets[0].u.tensor);
  double alpha = args[2].u.f;
  for (int64_t i = 0; i < o->numel; i++)
    *at(o, i) = (float)(bcast(a, o, i) + alpha * bcast(b, o, i));
  return BP_OK;
}

/* A running sum along a 1-D tensor. */
static bp_status cumsum_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_status st = begin(ctx, rets);
  if (st) return st;
  const bp_tensor_view *x = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = host->tensor_view(rets[0].u.tensor);
  float acc = 0;
  for (int64_t i = 0; i < o->numel; i++) {
    acc += *at(x, i);
    *at(o, i) = acc;
  }
  return BP_OK;
}

/* clamp's kernel for float32 only: min and max 0 and 1, whatever is asked
 * (so that a call it serves is told from the composite's). */
static bp_status clamp01_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_status st = begin(ctx, rets);
  if (st) return st;
  const bp_tensor_view *x = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *o = host->tensor_view(rets[0].u.tensor);
  for (int64_t i = 0; i < o->numel; i++) {
    float v = *at(x, i);
    *at(o, i) = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  return BP_OK;
}

static bp_status spy_setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = h->library(reg, &ld, &lib);
  static const int32_t f32only[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  const struct {
    const char *op;
    bp_boxed_kernel fill;
  } k[] = {{"neg", neg_fill}, {"add", add_fill}, {"cumsum", cumsum_fill}, {"clamp", clamp01_fill}};
  for (size_t i = 0; !st && i < sizeof k / sizeof k[0]; i++) {
    bp_kernel_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    d.op = k[i].op;
    d.device_type = BP_DEVICE_CPU;
    d.boxed = k[i].fill;
    d.flags = BP_KERNEL_DEF_STRUCTURED;
    d.dtypes = f32only;
    st = h->impl(lib, &d);
  }
  return st;
}

static const bp_plugin_desc spy_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "spy", .setup = spy_setup};

static const bp_plugin_desc *spy_init(const bp_host_api *h) {
  host = h;
  return &spy_desc;
}

/* Loads the reference CPU plugin (each case runs in a process of its own). */
static bool cpu_loaded(void) {
  char path[4096];
  const char *top = getenv("top_builddir");
  snprintf(path, sizeof path, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  if (ok(bp_plugin_load(path, NULL) == BP_OK)) return true;
  tap_diag("%s", bp_last_error());
  return false;
}

/* Registers the spy, whose kernels come before the CPU plugin's (which
 * serves the rest: copy_ among them). */
static bool spy_registered(void) {
  if (!cpu_loaded()) return false;
  if (ok(bp_plugin_register(spy_init, "spy", NULL) == BP_OK)) return true;
  tap_diag("%s", bp_last_error());
  return false;
}

static bp_tensor *f32_2d(const float *v, int64_t r, int64_t c) {
  bp_tensor *t = NULL;
  int64_t sizes[2] = {r, c};
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &t) != BP_OK) return NULL;
  memcpy(bp_tensor_get_view(t)->data, v, (size_t)(r * c) * sizeof(float));
  return t;
}

static bp_tensor *view1(bp_tensor *base, int64_t n, int64_t stride, int64_t offset) {
  bp_tensor *t = NULL;
  if (bp_tensor_as_strided(base, 1, &n, &stride, offset, &t) != BP_OK)
    tap_diag("%s", bp_last_error());
  return t;
}

/* Calls `name` with the stack's values, keywords last; the status. */
static bp_status call_kw(const char *name, bp_stack *s, const char *const *kw, size_t nkw) {
  const bp_op *op = must_find(name);
  return op ? bp_call_kw(op, s, kw, nkw) : BP_ERR_NOT_FOUND;
}

static const char *const OUT[] = {"out"};
static const float X[4] = {1, -2, 4, 0.5f};

static void out_is_filled_by_the_structured_kernel(void) {
  if (!spy_registered()) return;
  bp_tensor *x = f32(X, 4), *out = NULL;
  int64_t n = 4;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &out);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, out);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_OK);
  bp_tensor *r = NULL;
  bp_stack_get_tensor(&s, 0, &r);
  ok(r == out);                      /* .out returns out itself */
  ok(spy.filled == out);             /* which the kernel filled directly */
  is_int(spy.calls, 1);
  for (int i = 0; i < 4; i++) is_double(f32data(out)[i], -X[i], 0);
  bp_stack_release(&s);
  /* In place: the kernel fills self, reading it as it writes. */
  bp_stack_push_tensor(&s, x);
  is_int(bp_call(must_find("core::neg_"), &s), BP_OK);
  ok(spy.filled == x);
  for (int i = 0; i < 4; i++) is_double(f32data(x)[i], -X[i], 0);
  bp_stack_release(&s);
  /* An exact alias: out is self. */
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, x);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_OK);
  ok(spy.filled == x);
  for (int i = 0; i < 4; i++) is_double(f32data(x)[i], X[i], 0);
  bp_stack_release(&s);
  /* A Scalar in place (x.add_(0.5)): add's kernel fills self, with the
   * Scalar as a 0-dim tensor. */
  int before = spy.calls;
  bp_stack_push_tensor(&s, x);
  bp_stack_push_float(&s, 0.5);
  is_int(bp_call(must_find("core::add_.Scalar"), &s), BP_OK);
  ok(spy.filled == x);
  is_int(spy.calls, before + 1);
  for (int i = 0; i < 4; i++) is_double(f32data(x)[i], X[i] + 0.5, 0);
  bp_stack_release(&s);
  bp_tensor_release(x);
  bp_tensor_release(out);
}

static void other_layouts_and_aliases_take_a_copy(void) {
  if (!spy_registered()) return;
  /* A transposed out: the result is computed, then copied in. */
  static const float M[4] = {1, 2, 3, 4};
  bp_tensor *m = f32_2d(M, 2, 2), *base = NULL, *outT = NULL;
  int64_t sizes[2] = {2, 2}, strides[2] = {1, 2};
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &base);
  bp_tensor_as_strided(base, 2, sizes, strides, 0, &outT);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, m);
  bp_stack_push_tensor(&s, outT);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_OK);
  ok(spy.filled != outT && spy.filled != base);
  /* outT[i][j] = -M[i][j], stored column-major in base. */
  const float *b = f32data(base);
  is_double(b[0], -1, 0);
  is_double(b[1], -3, 0);
  is_double(b[2], -2, 0);
  is_double(b[3], -4, 0);
  bp_stack_release(&s);
  /* An exact alias of a non-pointwise op: cumsum reads what it wrote, so
   * the host gives it a fresh result. */
  bp_tensor *x = f32(X, 4);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int(&s, 0);
  bp_stack_push_none(&s);
  bp_stack_push_tensor(&s, x);
  const char *const dtype_out[] = {"dtype", "out"};
  is_int(call_kw("core::cumsum.out", &s, dtype_out, 2), BP_OK);
  ok(spy.filled != x);
  is_double(f32data(x)[0], 1, 0);
  is_double(f32data(x)[1], -1, 0);
  is_double(f32data(x)[2], 3, 0);
  is_double(f32data(x)[3], 3.5, 0);
  bp_stack_release(&s);
  /* In place with an argument that overlaps self in part: the values from
   * before the call (x[1:] += x[:3]). */
  bp_tensor *y = f32(X, 4), *hi = view1(y, 3, 1, 1), *lo = view1(y, 3, 1, 0);
  bp_stack_push_tensor(&s, hi);
  bp_stack_push_tensor(&s, lo);
  is_int(bp_call(must_find("core::add_"), &s), BP_OK);
  ok(spy.filled != hi);
  const float *yd = f32data(y);
  is_double(yd[0], 1, 0);
  is_double(yd[1], -1, 0);
  is_double(yd[2], 2, 0);
  is_double(yd[3], 4.5, 0);
  bp_stack_release(&s);
  bp_tensor_release(hi);
  bp_tensor_release(lo);
  bp_tensor_release(y);
  bp_tensor_release(x);
  bp_tensor_release(m);
  bp_tensor_release(outT);
  bp_tensor_release(base);
}

static void out_follows_torchs_rules(void) {
  if (!spy_registered()) return;
  bp_tensor *x = f32(X, 4), *o64 = NULL, *o3 = NULL, *empty = NULL;
  int64_t n4 = 4, n3 = 3, n0 = 0;
  bp_tensor_empty(BP_CPU, BP_FLOAT64, 1, &n4, &o64);
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n3, &o3);
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n0, &empty);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  /* another dtype */
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, o64);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_ERR_TYPE);
  ok(strstr(bp_last_error(), "'out' is float64, expected float32") != NULL);
  /* another shape, with elements */
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, o3);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_ERR_SHAPE);
  ok(strstr(bp_last_error(), "'out' has shape [3], expected [4]") != NULL);
  /* no elements: resized to the result's shape */
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, empty);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_OK);
  const bp_tensor_view *ev = bp_tensor_get_view(empty);
  is_int(ev->ndim, 1);
  is_int(ev->numel, 4);
  ok(spy.filled == empty);
  for (int i = 0; i < 4; i++) is_double(f32data(empty)[i], -X[i], 0);
  bp_stack_release(&s);
  /* an empty view of another tensor's storage is not resized */
  bp_tensor *ev0 = view1(x, 0, 1, 0);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, ev0);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_ERR_SHAPE);
  ok(strstr(bp_last_error(), "cannot be resized") != NULL);
  /* nor an empty tensor over outside memory */
  static float blob[1];
  bp_tensor *wrapped = NULL;
  int64_t zero = 0, one = 1;
  bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 1, &zero, &one, blob, NULL, NULL, &wrapped);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, wrapped);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_ERR_SHAPE);
  ok(strstr(bp_last_error(), "memory that the host did not allocate") != NULL);
  /* a partial overlap: add(x[1:], x[:3], out=x[:3]) */
  bp_tensor *hi = view1(x, 3, 1, 1), *lo = view1(x, 3, 1, 0);
  bp_stack_push_tensor(&s, hi);
  bp_stack_push_tensor(&s, lo);
  bp_stack_push_float(&s, 1.0);
  bp_stack_push_tensor(&s, lo);
  const char *const alpha_out[] = {"alpha", "out"};
  is_int(call_kw("core::sub.out", &s, alpha_out, 2), BP_ERR_INVALID_ARGUMENT);
  ok(strstr(bp_last_error(), "argument #0 'self' and argument #3 'out' share memory in part") !=
     NULL);
  /* a broadcast out is refused, as every written argument */
  bp_tensor *bc = NULL;
  int64_t four = 4, stride0 = 0;
  bp_tensor_as_strided(o3, 1, &four, &stride0, 0, &bc);
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, bc);
  is_int(call_kw("core::neg.out", &s, OUT, 1), BP_ERR_INVALID_ARGUMENT);
  ok(strstr(bp_last_error(), "'out': dimension 0 has 4 elements at one address") != NULL);
  /* an empty self of shape [2, 0] with stride 0 is written nowhere: an
   * in-place op takes it, as PyTorch does */
  bp_tensor *ebc = NULL;
  int64_t esz[2] = {2, 0}, est[2] = {0, 1};
  is_int(bp_tensor_as_strided(o3, 2, esz, est, 0, &ebc), BP_OK);
  bp_stack_push_tensor(&s, ebc);
  is_int(bp_call(must_find("core::neg_"), &s), BP_OK);
  bp_stack_release(&s);
  bp_tensor_release(ebc);
  /* every one of x's values is as it was */
  for (int i = 0; i < 4; i++) is_double(f32data(x)[i], X[i], 0);
  bp_tensor_release(bc);
  bp_tensor_release(hi);
  bp_tensor_release(lo);
  bp_tensor_release(wrapped);
  bp_tensor_release(ev0);
  bp_tensor_release(x);
  bp_tensor_release(o64);
  bp_tensor_release(o3);
  bp_tensor_release(empty);
}

static void a_failing_kernel_names_itself(void) {
  if (!spy_registered()) return;
  bp_tensor *x = f32(X, 4);
  int64_t live = bp_live_tensor_count();
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  spy.fail = true;
  bp_stack_push_tensor(&s, x);
  is_int(bp_call(must_find("core::neg_"), &s), BP_ERR_INVALID_ARGUMENT);
  ok(strstr(bp_last_error(), "the spy refuses") != NULL);
  is_int(s.top, 0);
  is_int(bp_live_tensor_count(), live);
  spy.fail = false;
  bp_tensor_release(x);
}

/* Every .out form computes what its op computes, on the reference CPU
 * plugin: a pointwise op, a reduction and a composite. */
static void the_cpu_plugin_serves_every_out_form(void) {
  if (!cpu_loaded()) return;
  static const float M[6] = {1, 5, -3, 2, 0.25f, 8};
  const struct {
    const char *op, *out_op;
  } cases[] = {{"core::relu", "core::relu.out"},
               {"core::softmax", "core::softmax.out"},
               {"core::cumsum", "core::cumsum.out"},
               {"core::clamp", "core::clamp.out"},
               {"core::eq.Scalar", "core::eq.Scalar_out"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    bp_tensor *m = f32_2d(M, 2, 3), *want = NULL, *out = NULL;
    int64_t n0 = 0;
    bp_value slots[4];
    bp_stack s = BP_STACK_INIT(slots, 4);
    bp_stack_push_tensor(&s, m);
    if (strstr(cases[c].op, "softmax") || strstr(cases[c].op, "cumsum")) bp_stack_push_int(&s, 1);
    if (strstr(cases[c].op, "clamp")) bp_stack_push_float(&s, 0.5);
    if (strstr(cases[c].op, "eq")) bp_stack_push_float(&s, 2.0);
    size_t nin = s.top;
    bp_value in[4];
    memcpy(in, slots, sizeof in);
    for (size_t i = 0; i < nin; i++)
      if (in[i].tag == BP_TAG_TENSOR) bp_tensor_retain(in[i].u.tensor);
    want = call_for_tensor(must_find(cases[c].op), &s);
    bp_tensor_empty(BP_CPU, want ? bp_tensor_get_view(want)->dtype : BP_FLOAT32, 1, &n0, &out);
    for (size_t i = 0; i < nin; i++) slots[i] = in[i];
    s.top = nin;
    bp_stack_push_tensor(&s, out);
    bp_status st = call_kw(cases[c].out_op, &s, OUT, 1);
    if (!ok(st == BP_OK)) tap_diag("%s: %s", cases[c].out_op, bp_last_error());
    const bp_tensor_view *w = want ? bp_tensor_get_view(want) : NULL, *o = bp_tensor_get_view(out);
    ok(w && o->ndim == w->ndim && o->numel == w->numel &&
       memcmp(o->data, w->data, (size_t)(w->numel * w->itemsize)) == 0);
    bp_stack_release(&s);
    for (size_t i = 0; i < nin; i++)
      if (in[i].tag == BP_TAG_TENSOR) bp_tensor_release(in[i].u.tensor);
    bp_tensor_release(want);
    bp_tensor_release(out);
    bp_tensor_release(m);
  }
}

/* A kernel for some dtypes leaves the op's composite the others. */
static void the_composite_serves_the_dtypes_no_kernel_declares(void) {
  if (!spy_registered()) return;
  static const double X64[3] = {-2, 0.5, 7};
  bp_tensor *x32 = f32((const float[]){-2, 0.5f, 7}, 3), *x64 = NULL;
  int64_t n = 3;
  bp_tensor_empty(BP_CPU, BP_FLOAT64, 1, &n, &x64);
  memcpy(bp_tensor_get_view(x64)->data, X64, sizeof X64);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  /* float32: the spy's kernel (0 and 1 whatever the bounds) */
  int before = spy.calls;
  bp_stack_push_tensor(&s, x32), bp_stack_push_float(&s, -1.0), bp_stack_push_float(&s, 5.0);
  bp_tensor *r = call_for_tensor(must_find("core::clamp"), &s);
  is_int(spy.calls, before + 1);
  ok(r && f32data(r)[0] == 0 && f32data(r)[2] == 1);
  bp_stack_release(&s);
  /* float64: no kernel declares it, and the composite computes it */
  bp_stack_push_tensor(&s, x64), bp_stack_push_float(&s, -1.0), bp_stack_push_float(&s, 5.0);
  r = call_for_tensor(must_find("core::clamp"), &s);
  is_int(spy.calls, before + 1);
  const double *d = r ? (const double *)bp_tensor_get_view(r)->data : NULL;
  ok(d && d[0] == -1 && d[1] == 0.5 && d[2] == 5);
  if (!d) tap_diag("%s", bp_last_error());
  bp_stack_release(&s);
  bp_tensor_release(x32);
  bp_tensor_release(x64);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(out_is_filled_by_the_structured_kernel),
      TAP_CASE(other_layouts_and_aliases_take_a_copy),
      TAP_CASE(out_follows_torchs_rules),
      TAP_CASE(a_failing_kernel_names_itself),
      TAP_CASE(the_cpu_plugin_serves_every_out_form),
      TAP_CASE(the_composite_serves_the_dtypes_no_kernel_declares),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
