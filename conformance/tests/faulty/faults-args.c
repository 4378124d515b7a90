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
