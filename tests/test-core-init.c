/*
 * tests/test-core-init.c - a failure while the host defines the core op
 * set (out of memory, here) is reported to every caller that needs it, with
 * its cause, instead of showing later as "no op 'core::add' is defined".
 *
 * The program interposes malloc() and calloc() (glibc's __libc_* functions
 * do the work) and makes them fail from the first call after `armed` is
 * set; libbackplane allocates nothing before its first use.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "testutil.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

#ifndef SANITIZED

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
static volatile bool armed;

void *malloc(size_t n) {
  if (armed) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
  if (armed) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_calloc(n, size);
}

static void core_failure_reported(void) {
  /* The thread's error buffer exists before the allocations fail. */
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, 12345, 0, NULL, &t), BP_ERR_TYPE);
  armed = true;
  const bp_op *op = NULL;
  bp_status st = bp_op_find("core::add", &op);
  armed = false;
  is_status(st, BP_ERR_OUT_OF_MEMORY);
  has_str(bp_last_error(), "the core op set could not be defined");
  has_str(bp_last_error(), "out of memory");
  /* Later callers hear the same, not "no op is defined". */
  is_status(bp_op_find("core::add", &op), BP_ERR_OUT_OF_MEMORY);
  has_str(bp_last_error(), "the core op set could not be defined");
  is_status(bp_plugin_load(test_plugin("good"), NULL), BP_ERR_OUT_OF_MEMORY);
  has_str(bp_last_error(), "the core op set could not be defined");
}

int main(void) {
  static const tap_case cases[] = {TAP_CASE(core_failure_reported)};
  return tap_main(cases, TAP_NCASES(cases));
}
#else
int main(void) {
  return tap_skip_all("a sanitizer's runtime owns malloc(), which this test replaces");
}
#endif
