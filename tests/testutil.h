/*
 * tests/testutil.h - helpers shared by the tests that load plugins.
 */
#ifndef BP_TESTS_TESTUTIL_H
#define BP_TESTS_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <backplane/host.h>

#include "tap.h"

/* The path of a test plugin built by tests/plugins/local.mk. */
static inline const char *test_plugin(const char *name) {
  static char buf[4][4096];
  static int next;
  char *b = buf[next++ % 4];
  const char *top = getenv("top_builddir");
  snprintf(b, sizeof buf[0], "%s/tests/plugins/.libs/%s.so", top ? top : ".", name);
  return b;
}

/* Loads a test plugin or fails the case with the host's message. */
static inline bp_plugin *must_load(const char *name) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_load(test_plugin(name), &p);
  if (st != BP_OK) {
    tap_diag("loading %s failed: %s: %s", name, bp_status_str(st), bp_last_error());
    ok(0);
    return NULL;
  }
  return p;
}

/* Finds an op or fails the case. */
static inline const bp_op *must_find(const char *name) {
  const bp_op *op = NULL;
  if (bp_op_find(name, &op) != BP_OK) {
    tap_diag("bp_op_find(%s): %s", name, bp_last_error());
    ok(0);
  }
  return op;
}

/* A 1-D float32 CPU tensor holding `n` values from `v`. */
static inline bp_tensor *f32(const float *v, int64_t n) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &t) != BP_OK) return NULL;
  float *d = (float *)bp_tensor_get_view(t)->data;
  for (int64_t i = 0; i < n; i++) d[i] = v[i];
  return t;
}

static inline const float *f32data(const bp_tensor *t) {
  return (const float *)bp_tensor_get_view(t)->data;
}

/* Calls op with the stack's values and returns the single Tensor result
 * (owned), or NULL after a diagnostic. */
static inline bp_tensor *call_for_tensor(const bp_op *op, bp_stack *s) {
  bp_status st = bp_call(op, s);
  if (st != BP_OK) {
    tap_diag("call failed: %s: %s", bp_status_str(st), bp_last_error());
    return NULL;
  }
  bp_tensor *t = NULL;
  if (bp_stack_get_tensor(s, 0, &t) != BP_OK) tap_diag("%s", bp_last_error());
  return t;
}

#endif /* BP_TESTS_TESTUTIL_H */
