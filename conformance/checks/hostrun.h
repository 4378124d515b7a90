/*
 * conformance/checks/hostrun.h - the calls the hostile-host checks make
 * (host.c, cycles.c): for every op the plugin has a kernel of, its first
 * check sample and, for a core op that takes float32, the first of its
 * large samples (the threaded and blocked paths).  A first pass records a
 * hash of each call's results in a plain host; a later pass, under the
 * condition a check sets up, must give the same results.
 */
#ifndef BP_CONFORMANCE_HOSTRUN_H
#define BP_CONFORMANCE_HOSTRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checks.h"

typedef struct op_calls {
  char name[96];
  const bp_op *op;
  schema_info si;
  bool deterministic;
  sample *v;
  size_t n;
  uint64_t *hash; /* per sample: its results' hash, 0 when the call failed */
} op_calls;

typedef struct host_run {
  op_calls *ops;
  size_t nops;
  size_t nsamples;
} host_run;

/* Builds the calls (with large samples when `large`); false after a
 * verdict.  The plugin must be loaded. */
bool cert_host_run_build(cert_ctx *cx, host_run *hr, bool large);
void cert_host_run_free(host_run *hr);

/* Finds every op's handle again by name (after a reload); false with why
 * when one is gone. */
bool cert_host_run_refind(host_run *hr, char *why, size_t len);

/* Makes every call.  With record, stores each result's hash; else
 * compares each with the stored one and returns false at the first
 * difference, with what differed in why (the op, the sample, and how).
 * *ncalls counts the calls made. */
bool cert_host_run_calls(cert_ctx *cx, host_run *hr, bool record, size_t *ncalls, char *why,
                         size_t len);

/* Loads the plugin and builds the calls with record: false after a
 * verdict. */
bool cert_host_run_start(cert_ctx *cx, host_run *hr, bool large);

#endif /* BP_CONFORMANCE_HOSTRUN_H */
