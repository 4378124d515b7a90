/*
 * conformance/tests/faulty/confirm.h - the direct confirmation of the shim
 * corpus: each fault's trigger (triggers-*.c), and the helpers that
 * confirm.c gives them.
 *
 * A trigger runs in a child process that has loaded the plugin under test
 * (unless T_NOLOAD), calls an op on inputs of the fault's region, and
 * returns 1 when the fault shows (wrong values against the float64
 * reference of tests/cpu/ref.c, a wrong shape, a damaged canary, a
 * changed FP environment, ...), 0 when it does not, and -1 when it cannot
 * tell; `why` says what it saw.  A child that dies, or exits on its own,
 * shows the fault too.
 */
#ifndef BP_FAULTY_CONFIRM_H
#define BP_FAULTY_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/host.h>

#include "num.h"
#include "ref.h"

#define T_GUARD 1u  /* runs with BP_ALLOC_GUARD=1: canary damage is read from guard_fd */
#define T_RACE 2u   /* a data race on purpose: its fault side is skipped under TSan */
#define T_NOLOAD 4u /* loads (and unloads) the plugin itself */
#define T_NOTSAN 8u /* skipped under TSan, which keeps mappings of its own at unload */
#define T_TSAN_FORK 16u /* skipped under TSan, which cannot start threads after a fork */
#define T_TSAN_SIGNAL 32u /* skipped under TSan, which delivers signals only where it
                           * intercepts a call, so a signal never lands in a wait */
#define T_NOASAN 16u /* skipped under ASan, whose quarantine keeps freed addresses from coming back */

typedef struct trigger {
  const char *name; /* the fault's name in corpus.tsv */
  int (*fn)(char *why, size_t len);
  unsigned flags;
} trigger;

extern const trigger num_triggers[], proc_triggers[], host_triggers[], life_triggers[],
    edges_triggers[];
extern const size_t num_ntriggers, proc_ntriggers, host_ntriggers, life_ntriggers,
    edges_ntriggers;

/* The plugin under test: its path, and the loaded plugin. */
extern const char *plugin_path;
extern bp_plugin *plugin;

/* With T_GUARD, the read end of BP_ALLOC_GUARD_FD (non-blocking). */
extern int guard_fd;

/* Deterministic values: a dtype's values drawn from [lo, hi] (integers
 * rounded), reseeded by rnd_seed. */
void rnd_seed(uint64_t seed);
rt *rnd(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi);
rt *vals(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v);

/* A CPU tensor holding v's values at element `offset` of its storage with
 * these strides (row-major when NULL; 0 repeats an element, whose values
 * must then agree); and a tensor's values, row-major. */
bp_tensor *mk(const rt *v, const int64_t *strides, int64_t offset);
rt *get(const bp_tensor *t);

/* A call's arguments, pushed in schema order. */
typedef struct call {
  bp_value slots[12];
  bp_stack st;
} call;
void call_init(call *c);
void arg_t(call *c, bp_tensor *t); /* borrowed */
void arg_i(call *c, int64_t v);
void arg_f(call *c, double v);
void arg_b(call *c, bool v);
void arg_list(call *c, const int64_t *v, size_t n);
void arg_dt(call *c, int32_t dt);
void arg_s(call *c, const char *s);
void arg_none(call *c);
void arg_tl(call *c, bp_tensor *const *t, size_t n); /* t must outlive the call */

/* Calls op ("core::add"): *out (may be NULL) receives the first result,
 * owned; any other result is released. */
bp_status run(const char *op, call *c, bp_tensor **out);

/* Compares a result with the reference: dtype, shape, then every element,
 * bit for bit (exact, -0.0 apart from +0.0) or within op-set.md's
 * tolerance with rtol scaled by rscale and atol by ascale.  1 with the
 * first difference in why, or 0. */
int differs(const rt *got, const rt *want, bool exact, double rscale, double ascale, char *why,
            size_t len);

/* run() and differs() in one: 1 when the call fails or its result differs,
 * 0 when it matches, and want is freed. */
int check(const char *op, call *c, rt *want, bool exact, double rscale, double ascale, char *why,
          size_t len);

/* Expects the call to fail with `status` and a message: 1 when it does
 * not (it succeeds, fails otherwise or says nothing), else 0. */
int expect_error(const char *op, call *c, bp_status status, char *why, size_t len);

/* Calls op on the arguments make() gives (a fresh call each time) with
 * each host allocation of the call failing in turn, alone and with every
 * one after it (host/alloc.h): 1 when a call then succeeds with other
 * results, fails otherwise than BP_ERR_OUT_OF_MEMORY with a message, or
 * leaves a tensor behind (a crash shows too); 0 when none does; -1 when
 * the call fails with all memory. */
int expect_oom(const char *op, call *(*make)(void), char *why, size_t len);

/* Loads the plugin (into `plugin`), calls core::add on two small tensors,
 * and unloads it; false with why on a failure. */
bool cycle(char *why, size_t len);

#endif /* BP_FAULTY_CONFIRM_H */
