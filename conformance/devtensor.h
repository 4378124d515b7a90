/*
 * conformance/devtensor.h - a sample's tensors on the device under test
 * (devtensor.c): plain, between canaries, or read-only between guard
 * pages; reading them back; and the comparison of a result with the
 * reference (compare.c).
 */
#ifndef BP_CONFORMANCE_DEVTENSOR_H
#define BP_CONFORMANCE_DEVTENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cert.h"
#include "sample.h"

enum mode { M_PLAIN, M_GUARD, M_PROTECT };
#define CANARY 16 /* elements of canary before and after a guarded buffer */

/* The tensors of one materialised sample, and what is needed to check
 * their canaries. */
typedef struct argset {
  /* The stack borrows the tensors of made[]; after a call it holds the
   * results, which the caller owns and releases (bp_stack_release). */
  bp_value slots[16];
  bp_stack st;
  size_t nargs;
  bp_tensor *made[16];  /* one per tensor argument or Tensor[] element, owned */
  int made_arg[16];     /* its argument index */
  int made_elem[16];    /* its index in a Tensor[] argument, or -1 */
  bp_tensor *base[16];  /* the guarded storage of made[i] (owned), or NULL */
  int64_t span[16];     /* elements of the view's reach */
  int64_t pre[16];      /* elements of storage before the view (M_GUARD: canary) */
  int nmade;
  bp_tensor *list[16];  /* the Tensor[] arguments' elements, borrowed from made[] */
  int nlist;
} argset;

void cert_argset_free(argset *as);
/* One byte of the canary pattern. */
unsigned char cert_canary_byte(size_t i);
/* A tensor on the device under test with v's values in layout lay,
 * added to as. */
bool cert_make_tensor(cert_ctx *cx, argset *as, const rt *v, const tlayout *lay, int mode,
                      bool writable, int arg, const char *name);
/* Pushes a sample's arguments, making its tensors in `mode`. */
bool cert_materialise(cert_ctx *cx, const sample *s, const schema_info *si, int mode, argset *as);
/* The bytes of t's elements in row-major order, on the CPU (owned). */
unsigned char *cert_tensor_bytes(const bp_tensor *t, size_t *len);
/* The bytes of every result on the stack, concatenated (owned). */
unsigned char *cert_result_bytes(const bp_stack *st, size_t *len);
/* Index of the first differing byte of two snapshots, or -1. */
long cert_first_diff(const unsigned char *x, const unsigned char *y, size_t n);
/* Whether the byte ranges two views reach overlap. */
bool cert_overlaps(const bp_tensor *a, const bp_tensor *b);

/* The allocation guard: libbackplane checks canaries around every device
 * block it frees (BP_ALLOC_GUARD=1, set by main) and reports damage on a
 * pipe.  cert_alloc_guard_open() makes this process's pipe (a fresh child, a
 * worker, before the plugin loads); cert_alloc_guard_read() takes what was
 * reported since the last read, as one line; false when nothing was. */
void cert_alloc_guard_open(void);
bool cert_alloc_guard_read(char *buf, size_t len);

/* compare.c: how a result must match the reference (docs/op-set.md,
 * Tolerances). */
typedef struct cmp_rule {
  bool exact;     /* bit for bit; NaN matches NaN */
  bool zero_ties; /* with exact: -0.0 and +0.0 may stand for each other */
  double ulps;    /* > 0: within this many units in the last place */
  bool ulp_floor; /* with ulps: or within the dtype's atol */
  double rscale;  /* otherwise rtol * rscale + atol * ascale */
  double ascale;
  const rt *slack; /* and per element this much more (NULL: none) */
} cmp_rule;

/* A result against the reference; false with a reason. */
bool cert_compare(const bp_tensor *got, const rt *want, const cmp_rule *r, char *why,
                  size_t whylen);

#endif /* BP_CONFORMANCE_DEVTENSOR_H */
