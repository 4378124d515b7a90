/*
 * tests/plugins/sig.c - ops with every kind of argument and result that a
 * schema may have, for the Python bindings (argument binding, defaults,
 * lists, optionals, mutation and alias annotations, several results) and
 * for the torch bridge (the schemas must mean the same to torch).  Kernels
 * take contiguous float32 tensors; what each computes is written next to
 * its schema, so that a test can predict it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

static bp_status need_f32(const char *op, const bp_tensor *t) {
  const bp_tensor_view *v = H->tensor_view(t);
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: expected a contiguous float32 tensor", op);
  return BP_OK;
}

static float *f32(const bp_tensor *t) { return (float *)H->tensor_view(t)->data; }

/* A new float32 tensor shaped like `like`, each element like's + add. */
static bp_status shifted(const char *op, const bp_tensor *like, double add, bp_value *ret) {
  bp_status st = need_f32(op, like);
  if (st) return st;
  const bp_tensor_view *v = H->tensor_view(like);
  bp_tensor *out;
  if ((st = H->tensor_empty(v->device, BP_FLOAT32, v->ndim, v->sizes, &out))) return st;
  for (int64_t i = 0; i < v->numel; i++) f32(out)[i] = f32(like)[i] + (float)add;
  ret->tag = BP_TAG_TENSOR;
  ret->len = 0;
  ret->u.tensor = out;
  return BP_OK;
}

static void meta_like(const bp_tensor *like, bp_tensor_meta *m) {
  const bp_tensor_view *v = H->tensor_view(like);
  m->device = v->device;
  m->dtype = BP_FLOAT32;
  m->ndim = v->ndim;
  int64_t stride = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    m->sizes[d] = v->sizes[d];
    m->strides[d] = stride;
    stride *= v->sizes[d] > 1 ? v->sizes[d] : 1;
  }
}

/* scalars(int a, float b, bool c, str d, ScalarType e, Device f)
 *   -> (a + strlen(d), 2 b, not c, e); f must be a CPU device. */
static bp_status scalars(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                         size_t nr) {
  (void)na;
  (void)nr;
  if (a[5].u.device.type != BP_DEVICE_CPU)
    return H->set_errorf(BP_ERR_DEVICE, "%s: f must be a cpu device", ctx->op_name);
  r[0] = (bp_value){.tag = BP_TAG_INT, .u.i = a[0].u.i + (int64_t)strlen(a[3].u.str)};
  r[1] = (bp_value){.tag = BP_TAG_FLOAT, .u.f = 2 * a[1].u.f};
  r[2] = (bp_value){.tag = BP_TAG_BOOL, .u.b = !a[2].u.b};
  r[3] = (bp_value){.tag = BP_TAG_SCALAR_TYPE, .u.i = a[4].u.i};
  return BP_OK;
}

/* kinds(Scalar a, Scalar b, Scalar? c=None, Scalar d=2.5) -> (int, float):
 * the kinds 1000 kind(a) + 100 kind(b) + 10 kind(c) + kind(d), with kind
 * 0 None, 1 int, 2 float, 3 bool; and the sum of their values (ABI 1.2). */
static double number(const bp_value *v, int *kind) {
  switch (v->tag) {
    case BP_TAG_INT: return *kind = 1, (double)v->u.i;
    case BP_TAG_FLOAT: return *kind = 2, v->u.f;
    case BP_TAG_BOOL: return *kind = 3, v->u.b ? 1.0 : 0.0;
    default: return *kind = 0, 0.0;
  }
}

static bp_status kinds(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                       size_t nr) {
  (void)ctx;
  (void)na;
  (void)nr;
  int64_t code = 0;
  double sum = 0;
  for (int i = 0; i < 4; i++) {
    int k;
    sum += number(&a[i], &k);
    code = code * 10 + k;
  }
  r[0] = (bp_value){.tag = BP_TAG_INT, .u.i = code};
  r[1] = (bp_value){.tag = BP_TAG_FLOAT, .u.f = sum};
  return BP_OK;
}

/* gate(Tensor x, int inside_fd, int wait_fd, int timeout_ms) -> bool:
 * writes one byte to inside_fd (it is running), then waits up to
 * timeout_ms for a byte on wait_fd; true when one came.  A Python test
 * learns from it, with no clock involved, whether another Python thread
 * ran while this call was in flight: that thread can answer only if the
 * call released the GIL. */
static bp_status gate(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                      size_t nr) {
  (void)na;
  (void)nr;
  char b = 'i';
  if (write((int)a[1].u.i, &b, 1) != 1)
    return H->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: cannot write to fd %lld", ctx->op_name,
                         (long long)a[1].u.i);
  struct pollfd p = {(int)a[2].u.i, POLLIN, 0};
  int ready;
  while ((ready = poll(&p, 1, (int)a[3].u.i)) < 0 && errno == EINTR) {
  }
  bool came = ready > 0 && read((int)a[2].u.i, &b, 1) == 1;
  r[0] = (bp_value){.tag = BP_TAG_BOOL, .u.b = came};
  return BP_OK;
}

/* defaults(...) -> x + a + b + c + strlen(d) + sum(e) + sum(f)
 *                    + (g is None ? 0 : 100) + (h is None ? 0 : h) + k */
static bp_status defaults(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                          size_t nr) {
  (void)na;
  (void)nr;
  double t = (double)a[1].u.i + a[2].u.f + (a[3].u.b ? 1 : 0) + (double)strlen(a[4].u.str);
  for (uint32_t i = 0; i < a[5].len; i++) t += (double)a[5].u.ints[i];
  for (uint32_t i = 0; i < a[6].len; i++) t += a[6].u.floats[i];
  t += a[7].tag == BP_TAG_NONE ? 0 : 100;
  t += a[8].tag == BP_TAG_NONE ? 0 : (double)a[8].u.i;
  t += (double)a[9].u.i;
  return shifted(ctx->op_name, a[0].u.tensor, t, &r[0]);
}

/* lists(Tensor[] xs, int[2] ij, float[] fs) -> sum(xs) + 10 i + j + sum(fs) */
static bp_status lists(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                       size_t nr) {
  (void)na;
  (void)nr;
  if (a[0].len == 0) return H->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: xs is empty", ctx->op_name);
  double t = 10.0 * (double)a[1].u.ints[0] + (double)a[1].u.ints[1];
  for (uint32_t i = 0; i < a[2].len; i++) t += a[2].u.floats[i];
  bp_status st = shifted(ctx->op_name, a[0].u.tensors[0], t, &r[0]);
  const bp_tensor_view *o = H->tensor_view(r[0].u.tensor);
  for (uint32_t k = 1; !st && k < a[0].len; k++) {
    const bp_tensor_view *v = H->tensor_view(a[0].u.tensors[k]);
    if ((st = need_f32(ctx->op_name, a[0].u.tensors[k]))) break;
    if (v->numel != o->numel) {
      st = H->set_errorf(BP_ERR_SHAPE, "%s: xs[%u] has %lld elements, xs[0] %lld", ctx->op_name, k,
                         (long long)v->numel, (long long)o->numel);
      break;
    }
    for (int64_t i = 0; i < o->numel; i++) f32(r[0].u.tensor)[i] += f32(a[0].u.tensors[k])[i];
  }
  if (st) H->tensor_release(r[0].u.tensor);
  return st;
}

/* maybe(Tensor? x, Tensor y) -> y + (x if given, else 0) */
static bp_status maybe(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                       size_t nr) {
  (void)na;
  (void)nr;
  bp_status st = shifted(ctx->op_name, a[1].u.tensor, 0, &r[0]);
  if (st || a[0].tag == BP_TAG_NONE) return st;
  const bp_tensor_view *x = H->tensor_view(a[0].u.tensor), *o = H->tensor_view(r[0].u.tensor);
  if ((st = need_f32(ctx->op_name, a[0].u.tensor)) || x->numel != o->numel) {
    H->tensor_release(r[0].u.tensor);
    return st ? st : H->set_errorf(BP_ERR_SHAPE, "%s: x and y differ in size", ctx->op_name);
  }
  for (int64_t i = 0; i < o->numel; i++) f32(r[0].u.tensor)[i] += f32(a[0].u.tensor)[i];
  return BP_OK;
}

/* bump_(Tensor(a!) self, float v) -> self, each element + v */
static bp_status bump(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                      size_t nr) {
  (void)na;
  (void)nr;
  bp_status st = need_f32(ctx->op_name, a[0].u.tensor);
  if (st) return st;
  const bp_tensor_view *v = H->tensor_view(a[0].u.tensor);
  for (int64_t i = 0; i < v->numel; i++) f32(a[0].u.tensor)[i] += (float)a[1].u.f;
  r[0] = (bp_value){.tag = BP_TAG_TENSOR, .u.tensor = H->tensor_retain(a[0].u.tensor)};
  return BP_OK;
}

/* split.out(Tensor x, *, Tensor(a!) lo, Tensor(b!) hi) -> (lo = x, hi = 2 x) */
static bp_status split_out(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                           size_t nr) {
  (void)na;
  (void)nr;
  bp_status st;
  for (int i = 0; i < 3; i++)
    if ((st = need_f32(ctx->op_name, a[i].u.tensor))) return st;
  const bp_tensor_view *x = H->tensor_view(a[0].u.tensor);
  if (H->tensor_view(a[1].u.tensor)->numel != x->numel ||
      H->tensor_view(a[2].u.tensor)->numel != x->numel)
    return H->set_errorf(BP_ERR_SHAPE, "%s: lo and hi must have x's size", ctx->op_name);
  for (int64_t i = 0; i < x->numel; i++) {
    f32(a[1].u.tensor)[i] = f32(a[0].u.tensor)[i];
    f32(a[2].u.tensor)[i] = 2 * f32(a[0].u.tensor)[i];
  }
  r[0] = (bp_value){.tag = BP_TAG_TENSOR, .u.tensor = H->tensor_retain(a[1].u.tensor)};
  r[1] = (bp_value){.tag = BP_TAG_TENSOR, .u.tensor = H->tensor_retain(a[2].u.tensor)};
  return BP_OK;
}

/* stats(Tensor x) -> (numel, sum, any element nonzero) */
static bp_status stats(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                       size_t nr) {
  (void)na;
  (void)nr;
  bp_status st = need_f32(ctx->op_name, a[0].u.tensor);
  if (st) return st;
  const bp_tensor_view *v = H->tensor_view(a[0].u.tensor);
  double sum = 0;
  bool any = false;
  for (int64_t i = 0; i < v->numel; i++) {
    sum += f32(a[0].u.tensor)[i];
    any |= f32(a[0].u.tensor)[i] != 0;
  }
  r[0] = (bp_value){.tag = BP_TAG_INT, .u.i = v->numel};
  r[1] = (bp_value){.tag = BP_TAG_FLOAT, .u.f = sum};
  r[2] = (bp_value){.tag = BP_TAG_BOOL, .u.b = any};
  return BP_OK;
}

/* flip(Tensor(a) self) -> a view of self with its dimensions reversed */
static bp_status flip(const bp_kernel_ctx *ctx, const bp_value *a, size_t na, bp_value *r,
                      size_t nr) {
  (void)ctx;
  (void)na;
  (void)nr;
  const bp_tensor_view *v = H->tensor_view(a[0].u.tensor);
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  for (int32_t d = 0; d < v->ndim; d++) {
    sizes[d] = v->sizes[v->ndim - 1 - d];
    strides[d] = v->strides[v->ndim - 1 - d];
  }
  bp_tensor *out;
  bp_status st = H->tensor_as_strided(a[0].u.tensor, v->ndim, sizes, strides, v->storage_offset,
                                      &out);
  if (st) return st;
  r[0] = (bp_value){.tag = BP_TAG_TENSOR, .u.tensor = out};
  return BP_OK;
}

static bp_status meta_first(const bp_kernel_ctx *ctx, const bp_value *a, size_t na,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)na;
  for (size_t i = 0; i < nouts; i++) meta_like(a[0].u.tensor, &outs[i]);
  return BP_OK;
}

static bp_status meta_lists(const bp_kernel_ctx *ctx, const bp_value *a, size_t na,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)na;
  (void)nouts;
  if (a[0].len == 0) return H->set_errorf(BP_ERR_INVALID_ARGUMENT, "%s: xs is empty", ctx->op_name);
  meta_like(a[0].u.tensors[0], &outs[0]);
  return BP_OK;
}

static bp_status meta_maybe(const bp_kernel_ctx *ctx, const bp_value *a, size_t na,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)na;
  (void)nouts;
  meta_like(a[1].u.tensor, &outs[0]);
  return BP_OK;
}

static bp_status meta_flip(const bp_kernel_ctx *ctx, const bp_value *a, size_t na,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)na;
  (void)nouts;
  const bp_tensor_view *v = H->tensor_view(a[0].u.tensor);
  outs[0].device = v->device;
  outs[0].dtype = v->dtype;
  outs[0].ndim = v->ndim;
  for (int32_t d = 0; d < v->ndim; d++) {
    outs[0].sizes[d] = v->sizes[v->ndim - 1 - d];
    outs[0].strides[d] = v->strides[v->ndim - 1 - d];
  }
  return BP_OK;
}

typedef struct op {
  const char *schema;
  bp_boxed_kernel kernel;
  bp_meta_fn meta;
} op;

static const op ops[] = {
    {"scalars(int a, float b, bool c, str d, ScalarType e, Device f) -> (int, float, bool, "
     "ScalarType)",
     scalars, NULL},
    {"defaults(Tensor x, int a=3, float b=0.5, bool c=True, str d=\"hi\", int[] e=[1, 2], "
     "float[2] f=[0.25, 0.5], ScalarType? g=None, int? h=None, *, int k=7) -> Tensor",
     defaults, meta_first},
    {"lists(Tensor[] xs, int[2] ij, float[] fs) -> Tensor", lists, meta_lists},
    {"maybe(Tensor? x, Tensor y) -> Tensor", maybe, meta_maybe},
    {"bump_(Tensor(a!) self, float v) -> Tensor(a!)", bump, meta_first},
    {"split.out(Tensor x, *, Tensor(a!) lo, Tensor(b!) hi) -> (Tensor(a!), Tensor(b!))",
     split_out, meta_first},
    {"stats(Tensor x) -> (int numel, float sum, bool any)", stats, NULL},
    {"flip(Tensor(a) self) -> Tensor(a)", flip, meta_flip},
    {"kinds(Scalar a, Scalar b, Scalar? c=None, Scalar d=2.5) -> (int, float)", kinds, NULL},
    {"gate(Tensor x, int inside_fd, int wait_fd, int timeout_ms) -> bool", gate, NULL},
};

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_library *lib;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "sig", BP_LIBRARY_DEF, 0};
  bp_status st = H->library(reg, &ld, &lib);
  for (size_t i = 0; !st && i < sizeof ops / sizeof ops[0]; i++) {
    bp_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = ops[i].schema;
    d.meta = ops[i].meta;
    if ((st = H->def(lib, &d))) break;
    char name[32];
    size_t n = strcspn(ops[i].schema, "(");
    memcpy(name, ops[i].schema, n);
    name[n] = '\0';
    bp_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
    k.op = name;
    k.device_type = BP_DEVICE_CPU;
    k.boxed = ops[i].kernel;
    st = H->impl(lib, &k);
  }
  return st;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "sig",
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
