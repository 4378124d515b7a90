/*
 * conformance/checks/checks.h - the checks: one function per entry of the
 * check table (table.c), each in the file of its group, and the helpers
 * the per-op checks share (common.c).
 *
 * A check runs in a child (a fresh process, or a worker between
 * restore_state() calls) and ends with one verdict().  A new check is a
 * function here and in a file of its own, and an entry in table.c.
 */
#ifndef BP_CONFORMANCE_CHECKS_H
#define BP_CONFORMANCE_CHECKS_H

#include "../cert.h"
#include "../devtensor.h"
#include "../sample.h"

/* handshake.c */
void case_exports(const certify_case *c);
void case_imports(const certify_case *c);
void case_loads(const certify_case *c);
void case_version(const certify_case *c);
void case_names(const certify_case *c);
/* registration.c */
void case_profile(const certify_case *c);
void case_schemas(const certify_case *c);
/* numerics.c */
void case_numerics(const certify_case *c);
/* meta.c */
void case_meta(const certify_case *c);
void case_nometa(const certify_case *c);
/* honesty.c */
void case_honesty(const certify_case *c);
/* bounds.c */
void case_bounds(const certify_case *c);
/* hygiene.c */
void case_hygiene(const certify_case *c);
/* repeat.c */
void case_repeat(const certify_case *c);
/* errors.c */
void case_errors(const certify_case *c);
/* concurrency.c */
void case_concurrency(const certify_case *c);
void concurrency_reset(void);
/* device.c */
void case_sync(const certify_case *c);
void case_streams(const certify_case *c);

/* common.c: the per-op checks' helpers. */

/* The samples the other checks use. */
extern const int check_samples[];
#define NCHECK_SAMPLES 2

/* Loads the plugin and finds the case's op; false after a verdict. */
bool op_setup(const certify_case *c);
/* The float32 sample of kind sk of the current op (core or generic). */
bool get_sample(int sk, sample *s, char *why, size_t len);
/* Whether the current op's kernel declares dt. */
bool declares(int32_t dt);
/* After a failed call: true (the sample is left out) for an op outside
 * core, false after a FAIL verdict for a core op. */
bool refused(int sk, const char *check);
/* True after a SKIP verdict when the op refused every sample. */
bool all_refused(const certify_case *c, int nsamples);
/* Builds sample sk in mode and calls the op: 1 when the call succeeded,
 * -1 when an op outside core refused the sample, 0 after a verdict. */
int call_sample(const certify_case *c, int sk, int mode, sample *s, argset *as,
                const char *check);

#endif /* BP_CONFORMANCE_CHECKS_H */
