/*
 * abi/compat-1-2-plugin.c - a plugin of ABI 1.2 that defines an op with a
 * Scalar argument (new in 1.2) only where the host's minor says it can
 * read one, so that it also loads on a host that reports ABI 1.1
 * (abi/test-compat.c simulates one).
 *
 * Namespace compat12:
 *   scale(Tensor a, Scalar s) -> Tensor     unboxed, a * s, float32
 *   ones(Tensor a) -> Tensor                 boxed, a tensor of ones; defined
 *                                            on every host
 *
 * Its setup note (bp_plugin_info.error) says "1.2 host" or "1.1 host".
 * On a 1.2 host its setup also fails unless the host refuses its def of
 * compat12::claims with an op_set_version (only core ops have one).
 */
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;

static bp_status out_like(const bp_tensor_view *v, const char *op, bp_tensor **out) {
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: argument #0 'a': expected contiguous float32", op);
  return H->tensor_empty(v->device, BP_FLOAT32, v->ndim, v->sizes, out);
}

/* The unboxed signature of `scale(Tensor a, Scalar s) -> Tensor`: a
 * Scalar arrives as the value itself, tagged int, float or bool. */
static bp_status scale(const bp_kernel_ctx *ctx, bp_tensor *a, const bp_value *s,
                       bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(a);
  double f;
  switch (s->tag) {
    case BP_TAG_INT: f = (double)s->u.i; break;
    case BP_TAG_FLOAT: f = s->u.f; break;
    case BP_TAG_BOOL: f = s->u.b ? 1.0 : 0.0; break;
    default:
      return H->set_errorf(BP_ERR_TYPE, "%s: argument #1 's': a Scalar tagged %u", ctx->op_name,
                           s->tag);
  }
  bp_status st = out_like(v, ctx->op_name, out);
  if (st) return st;
  float *z = H->tensor_view(*out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = ((const float *)v->data)[i] * (float)f;
  return BP_OK;
}

static bp_status ones(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                      bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  bp_tensor *out;
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  bp_status st = out_like(v, ctx->op_name, &out);
  if (st) return st;
  float *z = H->tensor_view(out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = 1.0f;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status define(bp_library *lib, const char *schema, bp_boxed_kernel boxed,
                        bp_unboxed_kernel unboxed, const char *op) {
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = schema;
  bp_status st = H->def(lib, &d);
  if (st) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = boxed;
  k.unboxed = unboxed;
  return H->impl(lib, &k);
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "compat12", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st;
  if ((st = H->library(reg, &ld, &lib))) return st;
  if ((st = define(lib, "ones(Tensor a) -> Tensor", ones, NULL, "ones"))) return st;
  /* Only the host's core library may say an op belongs to an op-set
   * version: a plugin that claims one for its own op is refused. */
  if (H->abi_minor >= 2) {
    bp_op_def c;
    memset(&c, 0, sizeof c);
    c.struct_size = BP_OP_DEF_STRUCT_SIZE;
    c.schema = "claims(Tensor a) -> Tensor";
    c.op_set_version = 1;
    st = H->def(lib, &c);
    if (st != BP_ERR_INVALID_ARGUMENT ||
        !strstr(H->last_error(), "only the host's core library sets it"))
      return H->set_errorf(BP_ERR_INTERNAL, "compat_1_2: a def with op_set_version 1 gave "
                           "status %d: %s", (int)st, H->last_error());
  }
  /* A host before 1.2 refuses `Scalar` in a schema: ask its minor. */
  bool scalar = H->abi_major == 1 && H->abi_minor >= 2;
  if (scalar &&
      (st = define(lib, "scale(Tensor a, Scalar s) -> Tensor", NULL, (bp_unboxed_kernel)scale,
                   "scale")))
    return st;
  H->set_error(BP_OK, scalar ? "1.2 host" : "1.1 host");
  return BP_OK;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "compat_1_2",
    .vendor = "Backplane ABI tests",
    .version = "1.2.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
