/*
 * plugins/cuda/elementwise.cu - where, cast, contiguous, fill_ and copy_,
 * the elementwise geometry and the conversions between dtypes.  The other
 * elementwise ops are in files of their own, compiled in parallel:
 * binary.cu (binary ops, muladd, add.out), unary.cu (unary ops) and
 * compare.cu (comparisons); map.cuh holds the kernels and launchers that
 * all four share.
 *
 * Each op is a functor over storage types (elementwise_ops.cuh, which
 * tests also run on the host), run by the grid-stride kernels of map.cuh
 * (vectorised for contiguous operands, for a broadcast scalar operand,
 * and strided).  The geometry (cu_geo_init, planned by bp_aux_iter_plan of
 * <backplane/plugin_aux.h>) broadcasts, drops size-1 dimensions, orders
 * the rest by the output's strides and merges them, so most views end up
 * on the first two.
 *
 * Type promotion: the meta function gives the result dtype; an input of
 * another dtype is first converted to it (cu_cast_to), so the op kernels
 * see operands of one dtype, as in the CPU plugin.
 */
#include <math.h>
#include <stdio.h>

#include "elementwise_ops.cuh"
#include "map.cuh"

/* ------------------------------------------------------------------------ */
/* Geometry                                                                 */
/* ------------------------------------------------------------------------ */

void cu_geo_init(Geo *g, int nops, const bp_tensor_view *const *views, int32_t ndim,
                 const int64_t *shape) {
  bp_aux_iter it;
  bp_aux_iter_plan(&it, nops, views, ndim, shape);
  g->ndim = it.ndim;
  g->numel = it.numel;
  for (int d = 0; d < it.ndim; d++) {
    g->sizes[d] = it.sizes[d];
    for (int i = 0; i < CU_MAX_OPS; i++)
      g->strides[i][d] = i < nops ? it.strides[i][d] / it.elsize[i] : 0; /* bytes to elements */
  }
}

bool cu_geo_contiguous(const Geo *g, int k) {
  return g->ndim == 0 || (g->ndim == 1 && g->strides[k][0] == 1);
}

bool cu_geo_scalar(const Geo *g, int k) {
  for (int d = 0; d < g->ndim; d++)
    if (g->strides[k][d] != 0) return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Conversion                                                               */
/* ------------------------------------------------------------------------ */

/* Runs dst = convert(src) over a launch of (dst, src). */
template <class D> static bool convert_to(const Launch &L, int32_t src_dt) {
  bool ok = true;
  CU_SWITCH_ALL(src_dt, ok = false, {
    if constexpr (std::is_same<D, scalar_t>::value)
      map1<CopyF<D>, D, D>(L, CopyF<D>());
    else if constexpr (Tr<D>::is_float && Tr<scalar_t>::is_float)
      map1<CastF<D, scalar_t>, D, scalar_t, true>(L, CastF<D, scalar_t>());
    else
      map1<CastF<D, scalar_t>, D, scalar_t, false>(L, CastF<D, scalar_t>());
  });
  return ok;
}

/* dst (any strides) = src converted, broadcast to dst's shape.  `who`
 * names the op in messages ("core::cast"; no "cuda: " prefix). */
static bp_status convert(const bp_tensor_view *dst, const bp_tensor_view *src, const char *who) {
  const bp_tensor_view *views[2] = {dst, src};
  Launch L;
  bp_status st = launch_init(&L, 2, views);
  if (st) return st;
  bool ok = true;
  CU_SWITCH_ALL(dst->dtype, ok = false, ok = convert_to<scalar_t>(L, src->dtype));
  if (!ok)
    return CU_ERR(BP_ERR_UNSUPPORTED, "cuda: %s: cannot convert %s to %s", who,
                  bp_aux_dtype_name(src->dtype), bp_aux_dtype_name(dst->dtype));
  return cu_launched(who);
}

bp_status cu_cast_to(const bp_tensor *src, int32_t dtype, const char *op, bp_tensor **out) {
  const bp_tensor_view *v = cu_view(src);
  if (v->dtype == dtype && (v->flags & BP_VIEW_CONTIGUOUS)) {
    *out = cu_host->tensor_retain((bp_tensor *)src);
    return BP_OK;
  }
  bp_tensor *t;
  bp_status st = cu_host->tensor_empty(v->device, dtype, v->ndim, v->sizes, &t);
  if (st) return st;
  char who[160];
  snprintf(who, sizeof who, "%s (converting an input to %s)", op, bp_aux_dtype_name(dtype));
  st = convert(cu_view(t), v, who);
  if (st) {
    cu_host->tensor_release(t);
    return st;
  }
  *out = t;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* where, cast, contiguous, fill_, copy_                                    */
/* ------------------------------------------------------------------------ */

static bp_status where_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  bp_status st = BP_OK;
  const bp_tensor_view *vo = cu_view(out);
  bool ok = true;
  {
    Inputs in;
    bp_tensor *ts[2] = {args[1].u.tensor, args[2].u.tensor};
    st = inputs_init(&in, ctx, vo, 2, ts, 2, vo->dtype);
    if (!st && vo->numel > 0) {
      in.ops.views[1] = cu_view(args[0].u.tensor);
      Launch L;
      st = launch_init(&L, 4, in.ops.views);
      if (!st) {
        unsigned blocks = cu_blocks(L.dev, L.g.numel, CU_THREADS);
        CU_SWITCH_ALL(vo->dtype, ok = false, {
          k_map3_strided<WhereF<scalar_t>, scalar_t, b8, scalar_t, scalar_t>
              <<<blocks, CU_THREADS, 0, L.s>>>(WhereF<scalar_t>(), (scalar_t *)L.p[0],
                                               (const b8 *)L.p[1], (const scalar_t *)L.p[2],
                                               (const scalar_t *)L.p[3], L.g);
        });
        if (ok) st = cu_launched(ctx->op_name);
      }
    }
  }
  if (!st && !ok) st = unsupported(ctx, 1, vo->dtype);
  return st;
}
BP_AUX_STRUCTURED_KERNEL(where_kernel, where_impl)

static bool known_dtype(int64_t dt) {
  switch (dt) {
    case BP_FLOAT32: case BP_FLOAT64: case BP_FLOAT16: case BP_BFLOAT16: case BP_INT8:
    case BP_INT16: case BP_INT32: case BP_INT64: case BP_UINT8: case BP_BOOL: return true;
    default: return false;
  }
}

static bp_status cast_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  const bp_tensor_view *vs = cu_view(args[0].u.tensor);
  int64_t dt = args[1].u.i;
  if (!known_dtype(dt) || !known_dtype(vs->dtype))
    return CU_ERR(BP_ERR_TYPE, "cuda: %s: argument #1 'dtype': %lld is not a dtype of the op set",
                  ctx->op_name, (long long)dt);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  if (vs->numel > 0) st = convert(cu_view(out), vs, ctx->op_name);
  return bp_aux_finish(ctx, st, rets, out);
}

static bp_status contiguous_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                   bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = cu_view(self);
  if (vs->flags & BP_VIEW_CONTIGUOUS) return bp_aux_return_arg(ctx, rets, self);
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, vs->dtype);
  bp_tensor *out;
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, &out, 1);
  if (st) return st;
  if (vs->numel > 0) st = convert(cu_view(out), vs, ctx->op_name);
  return bp_aux_finish(ctx, st, rets, out);
}

static bp_status fill_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor;
  const bp_tensor_view *vs = cu_view(self);
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, vs->dtype);
  if (vs->numel == 0) return bp_aux_return_arg(ctx, rets, self);
  /* Each distinct element once: a stride-0 dimension counts as size 1. */
  int64_t sizes[BP_MAX_NDIM];
  bp_tensor_view distinct;
  bp_aux_distinct_view(vs, &distinct, sizes);
  const bp_tensor_view *views[1] = {&distinct};
  Launch L;
  st = launch_init(&L, 1, views);
  if (st) return st;
  double value = args[1].u.f;
  unsigned blocks = cu_blocks(L.dev, L.g.numel, CU_THREADS);
  CU_SWITCH_ALL(vs->dtype, (void)0, {
    k_fill<scalar_t><<<blocks, CU_THREADS, 0, L.s>>>((scalar_t *)L.p[0], value, L.g);
  });
  st = cu_launched(ctx->op_name);
  if (st) return st;
  return bp_aux_return_arg(ctx, rets, self);
}

/* A copy of src in dtype on its device, always a new tensor (copy_'s
 * staging of an overlapping source). */
static bp_status stage_copy(const bp_kernel_ctx *ctx, bp_tensor *src, int32_t dtype,
                            bp_tensor **out) {
  const bp_tensor_view *v = cu_view(src);
  bp_status st = cu_host->tensor_empty(v->device, dtype, v->ndim, v->sizes, out);
  if (!st) st = convert(cu_view(*out), v, ctx->op_name);
  if (st) {
    cu_host->tensor_release(*out);
    *out = NULL;
  }
  return st;
}

static bp_status copy_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_status st = bp_aux_check_args(ctx, args, nargs);
  if (st) return st;
  bp_tensor *self = args[0].u.tensor, *src = args[1].u.tensor, *tmp = NULL;
  const bp_tensor_view *vs = cu_view(self), *vr = cu_view(src), *read;
  if (!known_dtype(vs->dtype)) return unsupported(ctx, 0, vs->dtype);
  if (!known_dtype(vr->dtype)) return unsupported(ctx, 1, vr->dtype);
  /* src on self's device, and read in full before self is written where
   * the two overlap (the kit's opening of copy_). */
  st = bp_aux_copy_source(ctx, self, src, stage_copy, &tmp, &read);
  if (!st && read) st = convert(vs, read, ctx->op_name);
  cu_host->tensor_release(tmp);
  if (st) return st;
  return bp_aux_return_arg(ctx, rets, self);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

bp_status cu_register_elementwise(bp_library *lib) {
  static const struct {
    const char *op;
    bp_boxed_kernel fn;
  } own[] = {
      {"cast", cast_kernel}, {"contiguous", contiguous_kernel}, {"fill_", fill_kernel},
      {"copy_", copy_kernel},
  };
  bp_status st = CU_IMPL_STRUCTURED(lib, "where", where_kernel, NULL);
  for (size_t i = 0; !st && i < sizeof own / sizeof own[0]; i++)
    st = cu_impl(lib, own[i].op, own[i].fn, NULL);
  return st;
}
