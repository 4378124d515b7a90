/*
 * conformance/checks/checks.h - the checks: one function per entry of the
 * check table (table.c), each in the file of its group, and the helpers
 * the per-op checks share (common.c).
 *
 * A check runs in a child (a fresh process, or a worker between
 * restore_state() calls) and ends with one cert_verdict().  A new check is a
 * function here and in a file of its own, and an entry in table.c.
 */
#ifndef BP_CONFORMANCE_CHECKS_H
#define BP_CONFORMANCE_CHECKS_H

#include "../cert.h"
#include "../devtensor.h"
#include "../sample.h"

/* handshake.c */
void cert_case_exports(cert_ctx *cx, const certify_case *c);
void cert_case_imports(cert_ctx *cx, const certify_case *c);
void cert_case_binary(cert_ctx *cx, const certify_case *c);
void cert_case_loads(cert_ctx *cx, const certify_case *c);
void cert_case_version(cert_ctx *cx, const certify_case *c);
void cert_case_names(cert_ctx *cx, const certify_case *c);
/* registration.c */
void cert_case_profile(cert_ctx *cx, const certify_case *c);
void cert_case_schemas(cert_ctx *cx, const certify_case *c);
void cert_case_probe(cert_ctx *cx, const certify_case *c);
/* process.c */
void cert_case_process_load(cert_ctx *cx, const certify_case *c);
void cert_case_process(cert_ctx *cx, const certify_case *c);
/* teardown.c */
void cert_case_teardown(cert_ctx *cx, const certify_case *c);
/* host.c, fpenv.c, cycles.c: the hostile hosts (group "host" in the full
 * and host profiles, "cycles" in the host profile) */
void cert_case_host_sigprof(cert_ctx *cx, const certify_case *c);
void cert_case_host_fork(cert_ctx *cx, const certify_case *c);
void cert_case_host_stack(cert_ctx *cx, const certify_case *c);
void cert_case_host_affinity(cert_ctx *cx, const certify_case *c);
void cert_case_host_locale(cert_ctx *cx, const certify_case *c);
void cert_case_host_fpenv(cert_ctx *cx, const certify_case *c);
void cert_case_host_cycles(cert_ctx *cx, const certify_case *c);
void cert_case_host_threads(cert_ctx *cx, const certify_case *c);
/* numerics.c */
void cert_case_numerics(cert_ctx *cx, const certify_case *c);
/* One sample of the current op (op_setup) against the float64 reference:
 * 1 when it matches, 0 after a verdict, -1 when the op set refuses it
 * and so does the kernel.  c->dt is the sample's dtype. */
int cert_numerics_one(cert_ctx *cx, const certify_case *c, const sample *s);
/* unordered.c: the results on st of a call whose order the op leaves
 * open (topk with sorted=False), put in the reference's order before the
 * compare; any other call's are left as they are.  False after a verdict. */
bool cert_in_reference_order(cert_ctx *cx, const sample *s, bp_stack *st, const char *desc);
/* meta.c */
void cert_case_meta(cert_ctx *cx, const certify_case *c);
void cert_case_nometa(cert_ctx *cx, const certify_case *c);
/* honesty.c */
void cert_case_honesty(cert_ctx *cx, const certify_case *c);
/* bounds.c */
void cert_case_bounds(cert_ctx *cx, const certify_case *c);
/* hygiene.c */
void cert_case_hygiene(cert_ctx *cx, const certify_case *c);
/* repeat.c */
void cert_case_repeat(cert_ctx *cx, const certify_case *c);
/* reference.c: an op outside core against its composite. */
void cert_case_reference(cert_ctx *cx, const certify_case *c);
/* lifetime.c */
void cert_case_lifetime(cert_ctx *cx, const certify_case *c);
/* aliasing.c */
void cert_case_aliasing(cert_ctx *cx, const certify_case *c);
/* aliasing_written.c: OP/aliasing of an op that writes a Tensor argument
 * (after op_setup) */
void cert_written_aliasing(cert_ctx *cx, const certify_case *c);
/* errors.c */
void cert_case_errors(cert_ctx *cx, const certify_case *c);
/* oom.c: the host's allocations failing under a call. */
void cert_case_oom(cert_ctx *cx, const certify_case *c);
/* concurrency.c */
void cert_case_concurrency(cert_ctx *cx, const certify_case *c);
void cert_concurrency_reset(void);
/* device.c */
void cert_case_sync(cert_ctx *cx, const certify_case *c);
void cert_case_streams(cert_ctx *cx, const certify_case *c);

/* common.c: the per-op checks' helpers. */

/* Loads the plugin and finds the case's op; false after a verdict. */
bool cert_op_setup(cert_ctx *cx, const certify_case *c);
/* Whether the current op's kernel declares dt; whether a kernel's
 * declared dtypes (NULL: every dtype) hold dt. */
bool cert_declares(cert_ctx *cx, int32_t dt);
bool cert_dtypes_have(const int32_t *dtypes, int32_t dt);
/* The dtypes of the current op's results for the call on as, from its
 * meta function, at most max of them: their count, 0 without one. */
size_t cert_result_dtypes(cert_ctx *cx, const argset *as, int32_t *out, size_t max);
/* How far the element of dtype dt at got lies beyond 8 times the op set's
 * tolerance for dt from the one at want (a kernel against a composite or a
 * reference, which round in other orders): <= 0 when they agree (the same
 * bits, both NaN, or within it), INFINITY for a NaN or an infinity against
 * another value; integers and bools agree only bit for bit (1 if not). */
double cert_excess_8x(int32_t dt, const void *got, const void *want);
/* The generator's options for the current op: its declared dtypes. */
gen_opts cert_op_gen_opts(cert_ctx *cx);
/* The samples the checks other than numerics run on the current op
 * (check_set), less those cert_keep_declared() leaves out; NULL after a SKIP
 * verdict.  Free with sample_set_free. */
sample *cert_op_check_set(cert_ctx *cx, size_t *n);
/* Whether a call on as would give a result of a dtype the kernel does not
 * declare, which the host never sends it: then the sample is counted as
 * left out (cx->cur.nundeclared), and a pass says so. */
bool cert_undeclared_result(cert_ctx *cx, const argset *as);
/* Leaves out (frees) the samples of v that cert_undeclared_result() refuses,
 * keeping the others in order at the front; the new count. */
size_t cert_keep_declared(cert_ctx *cx, sample *v, size_t n);
/* After a failed call: true (the sample is left out) for an op outside
 * core, false after a FAIL verdict naming check for a core op. */
bool cert_refused(cert_ctx *cx, const sample *s, const char *check);
/* True after a SKIP verdict when the op refused every one of nsamples. */
bool cert_all_refused(cert_ctx *cx, const certify_case *c, size_t nsamples);
/* Whether the op set refuses the arguments on as (a core op's meta
 * function fails): the errors check holds the kernel to that, the other
 * checks leave such a sample out. */
bool cert_op_set_refuses(cert_ctx *cx, const argset *as);
/* Makes s's tensors in mode and calls the op: 1 when the call succeeded
 * (the results are on as->st), -1 when an op outside core refused the
 * sample or the op set refuses it, 0 after a verdict naming check. */
int cert_call_on(cert_ctx *cx, const sample *s, int mode, argset *as, const char *check);
/* Once a call's tensors are released: false after a verdict naming check
 * when the allocation guard reported a write outside a block. */
bool cert_guard_ok(cert_ctx *cx, const char *check, const sample *s);

#endif /* BP_CONFORMANCE_CHECKS_H */
