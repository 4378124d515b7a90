/*
 * The CPU plugin on tensors past its parallel grain (32768 elements), with
 * its thread pool at the default size: every op family for every dtype,
 * and targeted cases (ties and NaN across the pool's chunks, transposed
 * sums, large matmul and layer_norm results), against the float64
 * reference of ref.c.  test-cpu-pool has the same at other pool sizes.
 *
 * Every call goes through the harness's checks (harness.h): the result
 * agrees with bp_op_meta, is new and contiguous (or the argument an
 * in-place op returns), the inputs are unchanged and no handle leaks.  A
 * failing trial prints its seed; the cases are deterministic, so
 * TAP_ONLY=<case> replays one.
 */
#include "cases.h"
#include "harness.h"
#include "large.h"

static void large_tensors(void) {
  large_tensors_with(NULL, all_dtypes, NUM_DTYPES, 0x1a46e001, 0x1a46e101);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(large_tensors),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
