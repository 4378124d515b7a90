/*
 * backplane/plugin_aux_kernel.h - results and registration in the plugin
 * helper kit: allocating an op's results through its meta function,
 * returning them, structured kernels (one result, several, and the .out
 * form), and registration with declared dtypes and priority.  Part of
 * <backplane/plugin_aux.h>, which includes it: include that header, not
 * this one.
 */
#ifndef BACKPLANE_PLUGIN_AUX_KERNEL_H
#define BACKPLANE_PLUGIN_AUX_KERNEL_H

#ifndef BACKPLANE_PLUGIN_AUX_INSIDE
#error "include <backplane/plugin_aux.h>, which includes this file"
#endif

/* ------------------------------------------------------------------------ */
/* Results and registration                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Allocates the Tensor results of the op being called (ctx->op), sized by
 * the op's meta function from the kernel's arguments (host->op_meta):
 * outs[k] receives result k, a new reference, with the meta function's
 * device, dtype, sizes and strides and uninitialised data.  A result that
 * is not a Tensor gets NULL.  On failure (bad arguments, as the op set
 * words them; no memory) nothing stays allocated and the error is
 * recorded.  At most 8 results.
 */
static inline bp_status bp_aux_alloc_outputs(const bp_kernel_ctx *ctx, const bp_value *args,
                                             size_t nargs, bp_tensor **outs, size_t nouts) {
  bp_tensor_meta meta[8];
  if (nouts > 8)
    return ctx->host->set_errorf(BP_ERR_INTERNAL, "%s: bp_aux_alloc_outputs takes at most 8 "
                                 "results, not %u", ctx->op_name, (unsigned)nouts);
  for (size_t k = 0; k < nouts; k++) {
    meta[k].struct_size = BP_TENSOR_META_STRUCT_SIZE;
    meta[k].dtype = BP_DTYPE_INVALID;
  }
  bp_status st = ctx->host->op_meta(ctx->op, args, nargs, meta, nouts);
  if (st != BP_OK) return st;
  for (size_t k = 0; k < nouts; k++) {
    outs[k] = NULL;
    if (meta[k].dtype == BP_DTYPE_INVALID) continue;
    st = ctx->host->tensor_empty_strided(meta[k].device, meta[k].dtype, meta[k].ndim,
                                         meta[k].sizes, meta[k].strides, &outs[k]);
    if (st != BP_OK) {
      /* The host's message names the size, not the op: add the op. */
      char why[256];
      snprintf(why, sizeof why, "%s", ctx->host->last_error());
      size_t failed = k;
      while (k--) ctx->host->tensor_release(outs[k]);
      return ctx->host->set_errorf(st, "%s: result #%u could not be allocated: %s",
                                   ctx->op_name, (unsigned)failed, why);
    }
  }
  return BP_OK;
}

/* Runs the op's meta function only to check the arguments, for an op that
 * writes an argument (fill_, copy_, add.out) instead of allocating. */
static inline bp_status bp_aux_check_args(const bp_kernel_ctx *ctx, const bp_value *args,
                                          size_t nargs) {
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  return ctx->host->op_meta(ctx->op, args, nargs, &m, 1);
}

/* Puts a Tensor result t (a new reference, passed to the caller) into
 * rets[0] and returns BP_OK. */
static inline bp_status bp_aux_return_tensor(bp_value *rets, bp_tensor *t) {
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = t;
  return BP_OK;
}

/* Puts a new reference to t into rets[0] and returns BP_OK: for a result
 * that is an argument (contiguous's self; what fill_, copy_ and add.out
 * wrote). */
static inline bp_status bp_aux_return_arg(const bp_kernel_ctx *ctx, bp_value *rets, bp_tensor *t) {
  return bp_aux_return_tensor(rets, ctx->host->tensor_retain(t));
}

/* Ends a kernel that allocated the result `out`: on success (st is BP_OK)
 * puts it into rets[0], else releases it.  Returns st. */
static inline bp_status bp_aux_finish(const bp_kernel_ctx *ctx, bp_status st, bp_value *rets,
                                      bp_tensor *out) {
  if (st == BP_OK) return bp_aux_return_tensor(rets, out);
  ctx->host->tensor_release(out);
  return st;
}

/*
 * A kernel of an op with one Tensor result, in the manner of PyTorch's
 * structured kernels: impl(ctx, args, out) fills `out`, a result the op's
 * meta function sized (so its shape and dtype, and every argument error,
 * are the meta function's).  BP_AUX_STRUCTURED_KERNEL(name, impl) defines
 * two boxed kernels over impl:
 *
 *   name        allocates the result with bp_aux_alloc_outputs, calls impl,
 *               and returns the result, or releases it when impl fails:
 *               a plain boxed kernel, for any host;
 *   name##_fill fills the result the host allocated (rets[0]): the kernel
 *               of BP_KERNEL_DEF_STRUCTURED, for a host of ABI 1.2 or later,
 *               which then runs the meta function and allocates the result
 *               itself (no call back into the host for either).
 *
 * Register them with bp_aux_impl_structured() (or, declaring dtypes,
 * bp_aux_impl_structured_dtypes() and BP_AUX_IMPL_STRUCTURED), which pick
 * by the host's ABI version.
 */
typedef bp_status (*bp_aux_impl_fn)(const bp_kernel_ctx *ctx, const bp_value *args,
                                    bp_tensor *out);
static inline bp_status bp_aux_structured(const bp_kernel_ctx *ctx, const bp_value *args,
                                          size_t nargs, bp_value *rets, bp_aux_impl_fn impl) {
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  return st != BP_OK ? st : bp_aux_finish(ctx, impl(ctx, args, out), rets, out);
}
#define BP_AUX_STRUCTURED_KERNEL(name, impl)                                                    \
  static inline bp_status name(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,   \
                               bp_value *rets, size_t nrets) {                                 \
    (void)nrets;                                                                               \
    return bp_aux_structured(ctx, args, nargs, rets, impl);                                    \
  }                                                                                            \
  static inline bp_status name##_fill(const bp_kernel_ctx *ctx, const bp_value *args,          \
                                      size_t nargs, bp_value *rets, size_t nrets) {            \
    (void)nargs;                                                                               \
    (void)nrets;                                                                               \
    return impl(ctx, args, rets[0].u.tensor);                                                  \
  }

/*
 * The same for an op with nouts Tensor results (at most 8), such as
 * sort's (values, indices): impl(ctx, args, outs) fills outs[0 ..
 * nouts-1].  BP_AUX_STRUCTURED_KERNEL_N(name, impl, nouts) defines `name`
 * (allocates the results, calls impl, returns them all, or releases them
 * all when impl fails) and `name##_fill` (fills the results the host
 * allocated), as BP_AUX_STRUCTURED_KERNEL does.
 */
typedef bp_status (*bp_aux_impl_n_fn)(const bp_kernel_ctx *ctx, const bp_value *args,
                                      bp_tensor *const *outs);
static inline bp_status bp_aux_structured_n(const bp_kernel_ctx *ctx, const bp_value *args,
                                            size_t nargs, bp_value *rets, size_t nouts,
                                            bp_aux_impl_n_fn impl) {
  bp_tensor *outs[8];
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, outs, nouts);
  if (st != BP_OK) return st; /* nothing is allocated */
  st = impl(ctx, args, outs);
  for (size_t k = 0; k < nouts; k++) {
    if (st == BP_OK) bp_aux_return_tensor(&rets[k], outs[k]);
    else ctx->host->tensor_release(outs[k]);
  }
  return st;
}
static inline bp_status bp_aux_structured_n_fill(const bp_kernel_ctx *ctx, const bp_value *args,
                                                 bp_value *rets, size_t nouts,
                                                 bp_aux_impl_n_fn impl) {
  bp_tensor *outs[8];
  if (nouts > 8)
    return ctx->host->set_errorf(BP_ERR_INTERNAL, "%s: a structured kernel has at most 8 "
                                 "results, not %u", ctx->op_name, (unsigned)nouts);
  for (size_t k = 0; k < nouts; k++) outs[k] = rets[k].u.tensor;
  return impl(ctx, args, outs);
}
#define BP_AUX_STRUCTURED_KERNEL_N(name, impl, nouts)                                          \
  static inline bp_status name(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,   \
                               bp_value *rets, size_t nrets) {                                 \
    (void)nrets;                                                                               \
    return bp_aux_structured_n(ctx, args, nargs, rets, (nouts), impl);                         \
  }                                                                                            \
  static inline bp_status name##_fill(const bp_kernel_ctx *ctx, const bp_value *args,          \
                                      size_t nargs, bp_value *rets, size_t nrets) {            \
    (void)nargs;                                                                               \
    (void)nrets;                                                                               \
    return bp_aux_structured_n_fill(ctx, args, rets, (nouts), impl);                           \
  }

/*
 * The kernel of an op's .out form, whose written Tensor is its last
 * argument, as in add.out(self, other, *, alpha, out), from the
 * structured kernel's impl: BP_AUX_OUT_KERNEL(name, impl, nin) defines
 * `name`, which checks the arguments with the op's meta function
 * (bp_aux_check_args: out's shape and dtype), refuses an out that may
 * overlap one of the Tensor arguments #0 .. #nin-1 without being exactly
 * it (bp_aux_check_out_overlap, in plugin_aux_iter.h), fills out
 * with impl and returns it.
 */
#define BP_AUX_OUT_KERNEL(name, impl, nin)                                                      \
  static inline bp_status name(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,    \
                               bp_value *rets, size_t nrets) {                                 \
    bp_status st_ = bp_aux_check_args(ctx, args, nargs);                                       \
    (void)nrets;                                                                               \
    if (st_ == BP_OK) st_ = bp_aux_check_out_overlap(ctx, args, nargs - 1, (size_t)(nin));     \
    if (st_ == BP_OK) st_ = impl(ctx, args, args[nargs - 1].u.tensor);                         \
    return st_ != BP_OK ? st_ : bp_aux_return_arg(ctx, rets, args[nargs - 1].u.tensor);        \
  }

/*
 * Registration.  A kernel declares the dtypes of the Tensor arguments it
 * takes: a list ended by BP_DTYPE_INVALID, which the host copies (so it
 * may live on the stack), or NULL for every dtype the op allows.  The host
 * never calls a kernel with a Tensor of another dtype: that call goes to
 * the next kernel of the op on the device, or fails with
 * BP_ERR_UNSUPPORTED before the kernel runs.  Declare exactly what the
 * kernel computes; bp-certify reports the dtypes it leaves out as SKIPs.
 * Every function here is for setup() only, as host->impl().
 *
 * BP_AUX_DTYPES(...) writes such a list in C: BP_AUX_DTYPES(BP_FLOAT32)
 * is {BP_FLOAT32, BP_DTYPE_INVALID}, a compound literal that lives in the
 * enclosing block.  (C++ has no compound literals: write a static array.)
 */
#define BP_AUX_DTYPES(...) ((const int32_t[]){__VA_ARGS__, BP_DTYPE_INVALID})

/* The general form, which the others call: registers `fn` as the boxed
 * kernel of `op` ("name.overload", in lib's namespace) for device_type,
 * with user_data (ctx->user_data), at `priority` (BP_PRIORITY_*; a host
 * of ABI 1.0 does not read it), with `flags` (BP_KERNEL_DEF_*; 0 for a
 * host before ABI 1.2), declaring `dtypes` (NULL: every dtype the op
 * allows).  (Header-only, so it works with any host.) */
static inline bp_status bp_aux_impl_flags_dtypes(const bp_host_api *host, bp_library *lib,
                                                 const char *op, int32_t device_type,
                                                 bp_boxed_kernel fn, const void *user_data,
                                                 int32_t priority, uint32_t flags,
                                                 const int32_t *dtypes) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = device_type;
  k.flags = flags;
  k.boxed = fn;
  k.user_data = (void *)(uintptr_t)user_data;
  k.dtypes = dtypes;
  k.priority = priority;
  return host->impl(lib, &k);
}

/* (Added with ABI 1.2; header-only.)  bp_aux_impl_flags_dtypes for every
 * dtype the op allows. */
static inline bp_status bp_aux_impl_flags(const bp_host_api *host, bp_library *lib, const char *op,
                                          int32_t device_type, bp_boxed_kernel fn,
                                          const void *user_data, int32_t priority,
                                          uint32_t flags) {
  return bp_aux_impl_flags_dtypes(host, lib, op, device_type, fn, user_data, priority, flags,
                                  NULL);
}

/* Registers a kernel defined by BP_AUX_STRUCTURED_KERNEL or
 * BP_AUX_POINTWISE_KERNEL (pass `name` and `name##_fill`) for `op` on
 * device_type at `priority`, declaring `dtypes` (NULL: every dtype the op
 * allows): the structured `fill` on a host of ABI 1.2 or later, else the
 * self-allocating `boxed`. */
static inline bp_status bp_aux_impl_structured_dtypes(const bp_host_api *host, bp_library *lib,
                                                      const char *op, int32_t device_type,
                                                      bp_boxed_kernel boxed, bp_boxed_kernel fill,
                                                      const void *user_data, int32_t priority,
                                                      const int32_t *dtypes) {
  bool structured = host->abi_major == BP_ABI_VERSION_MAJOR && host->abi_minor >= 2;
  return bp_aux_impl_flags_dtypes(host, lib, op, device_type, structured ? fill : boxed,
                                  user_data, priority,
                                  structured ? BP_KERNEL_DEF_STRUCTURED : 0, dtypes);
}

/* bp_aux_impl_structured_dtypes for every dtype the op allows. */
static inline bp_status bp_aux_impl_structured(const bp_host_api *host, bp_library *lib,
                                               const char *op, int32_t device_type,
                                               bp_boxed_kernel boxed, bp_boxed_kernel fill,
                                               const void *user_data, int32_t priority) {
  return bp_aux_impl_structured_dtypes(host, lib, op, device_type, boxed, fill, user_data,
                                       priority, NULL);
}

/* The common case in one line: the kernel pair `name`, `name##_fill` of
 * BP_AUX_STRUCTURED_KERNEL or BP_AUX_POINTWISE_KERNEL for `op` on
 * device_type, at BP_PRIORITY_DEFAULT with no user data, declaring
 * `dtypes` (NULL: every dtype the op allows).  Evaluates to a bp_status:
 *
 *     st = BP_AUX_IMPL_STRUCTURED(host, lib, "sum", nova,
 *                                 sum_kernel, BP_AUX_DTYPES(BP_FLOAT32));
 */
#define BP_AUX_IMPL_STRUCTURED(host, lib, op, device_type, name, dtypes)                      \
  bp_aux_impl_structured_dtypes((host), (lib), (op), (device_type), name, name##_fill, NULL,    \
                                BP_PRIORITY_DEFAULT, (dtypes))

/* Registers `fn` as the boxed kernel of `op` for device_type at
 * `priority`, for every dtype the op allows. */
static inline bp_status bp_aux_impl_at(const bp_host_api *host, bp_library *lib, const char *op,
                                       int32_t device_type, bp_boxed_kernel fn,
                                       const void *user_data, int32_t priority) {
  return bp_aux_impl_flags_dtypes(host, lib, op, device_type, fn, user_data, priority, 0, NULL);
}

/* The same at BP_PRIORITY_DEFAULT. */
static inline bp_status bp_aux_impl(const bp_host_api *host, bp_library *lib, const char *op,
                                    int32_t device_type, bp_boxed_kernel fn,
                                    const void *user_data) {
  return bp_aux_impl_at(host, lib, op, device_type, fn, user_data, BP_PRIORITY_DEFAULT);
}

/* A boxed kernel `fn` of `op` for device_type at BP_PRIORITY_DEFAULT with
 * no user data, declaring `dtypes` (NULL: every dtype the op allows). */
static inline bp_status bp_aux_impl_dtypes(const bp_host_api *host, bp_library *lib,
                                           const char *op, int32_t device_type,
                                           bp_boxed_kernel fn, const int32_t *dtypes) {
  return bp_aux_impl_flags_dtypes(host, lib, op, device_type, fn, NULL, BP_PRIORITY_DEFAULT, 0,
                                  dtypes);
}

#endif /* BACKPLANE_PLUGIN_AUX_KERNEL_H */
