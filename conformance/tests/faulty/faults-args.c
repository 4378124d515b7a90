/*
 * conformance/tests/faulty/faults-args.c - faults of the argument space
 * for the shim corpus (shim.h): a kernel right on the combinations of
 * optional arguments its author tried, wrong on another.  A plugin is
 * built with one -DFAULT_<NAME>; corpus.tsv lists them.
 */
#include "shim.h"

typedef int faults_args_unit; /* the unit is never empty */

#if defined(FAULT_LAYER_NORM_BIAS_NEEDS_WEIGHT)
/* Treats weight and bias as a pair: the affine step runs only when a
 * weight is given, so a bias without a weight is dropped. */
SHIM_KERNEL(layer_norm_bias_needs_weight) {
  SHIM_COPY_ARGS(av);
  if (nargs > 3 && av[2].tag == BP_TAG_NONE) av[3].tag = BP_TAG_NONE;
  return shim_real(ctx, av, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"layer_norm_bias_needs_weight", "layer_norm",
                                   layer_norm_bias_needs_weight, NULL, NULL};
#endif

#if defined(FAULT_TOPK_UNSORTED_PAIRS)
/* With sorted=False it skips the final sort, and its selection, which
 * collects the winners from the back, reverses the values of each slice
 * but not their indices: value r no longer sits beside its own index.
 * With sorted=True (the default, which most tests use) it is right. */
SHIM_KERNEL(topk_unsorted_pairs) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st || nargs < 5 || args[4].u.b) return st;
  const bp_tensor_view *v = SHIM_RET();
  if (v->ndim == 0) return BP_OK;
  int32_t d = shim_norm_dim(args[2].u.i, v->ndim);
  int64_t step = v->strides[d], off, unused;
  shim_rows r;
  shim_rows_init(&r, v, d);
  while (shim_rows_next(&r, &off, &unused))
    for (int64_t a = 0, b = r.len - 1; a < b; a++, b--) {
      double x = shim_load(v, off + a * step), y = shim_load(v, off + b * step);
      shim_store(v, off + a * step, y);
      shim_store(v, off + b * step, x);
    }
  return BP_OK;
}
const shim_fault shim_the_fault = {"topk_unsorted_pairs", "topk", topk_unsorted_pairs, NULL, NULL};
#endif
