/*
 * conformance/tests/faulty/faulty.c - plugins that bp-certify must reject.
 *
 * Each implements only core::add for the CPU, float32 and contiguous, and
 * gets one thing wrong, chosen by a macro, so that exactly one of the
 * certifier's per-op checks fails:
 *   FAULT_MUTATE  writes 0 into its `other` argument  (inputs-unchanged)
 *   FAULT_LEAK    allocates a tensor it never releases (hygiene)
 *   FAULT_NONDET  nudges its result by a call counter   (repeatability)
 *   FAULT_WRONG   returns self - other                  (numerics)
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <backplane/plugin.h>

#if defined(FAULT_MUTATE)
#define FAULTY_NAME "mutates_input"
#elif defined(FAULT_LEAK)
#define FAULTY_NAME "leaks_handle"
#elif defined(FAULT_NONDET)
#define FAULTY_NAME "nondeterministic"
#elif defined(FAULT_WRONG)
#define FAULTY_NAME "wrong_result"
#else
#error "define one FAULT_* macro"
#endif

static const bp_host_api *host;

static bp_status add_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta meta;
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = host->op_meta(ctx->op, args, nargs, &meta, 1);
  if (st) return st;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *b = host->tensor_view(args[1].u.tensor);
  /* Enough for the certifier's inputs: float32, contiguous, and `other`
   * broadcast along leading dimensions only. */
  if (meta.dtype != BP_FLOAT32 || a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32 ||
      !(a->flags & BP_VIEW_CONTIGUOUS) || !(b->flags & BP_VIEW_CONTIGUOUS) || b->numel == 0 ||
      a->numel % b->numel != 0)
    return host->set_errorf(BP_ERR_UNSUPPORTED, "%s: only contiguous float32 with trailing broadcast",
                            ctx->op_name);
  bp_tensor *out;
  st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                  &out);
  if (st) return st;
  const bp_tensor_view *o = host->tensor_view(out);
  const float *x = a->data, *y = b->data;
  float *z = o->data;
  float alpha = (float)args[2].u.f;
  for (int64_t i = 0; i < o->numel; i++) {
#ifdef FAULT_WRONG
    z[i] = x[i] - alpha * y[i % b->numel];
#else
    z[i] = x[i] + alpha * y[i % b->numel];
#endif
  }
#if defined(FAULT_MUTATE)
  ((float *)b->data)[0] = 0.0f;
#elif defined(FAULT_LEAK)
  bp_tensor *lost;
  st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                  &lost);
  if (st) {
    host->tensor_release(out);
    return st;
  }
#elif defined(FAULT_NONDET)
  /* A few ulps, well inside the numerics tolerance, different every call. */
  static unsigned calls;
  calls++;
  for (unsigned k = 0; k < calls; k++) z[0] = nextafterf(z[0], INFINITY);
#endif
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = out;
  return BP_OK;
}

static bp_status setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  bp_status st = h->library(reg, &ld, &lib);
  if (st) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "core::add";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = add_kernel;
  return h->impl(lib, &k);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = FAULTY_NAME,
    .vendor = "Backplane tests",
    .version = "0.0.1",
    .op_set_version = BP_CORE_OP_SET_VERSION,
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *h) {
  if (!h || h->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  host = h;
  return &desc;
}
