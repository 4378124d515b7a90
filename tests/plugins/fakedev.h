/*
 * tests/plugins/fakedev.h - the fake device the test plugins share: host
 * memory from aligned_alloc, work done at once (synchronize does nothing),
 * one device per type unless the plugin counts its own.
 *
 * A plugin defines `H` (its host table) and FAKEDEV_OOM (the message of a
 * failed allocation) before including it, and names these functions in
 * its bp_device_iface.  The functions are static: each plugin gets its own
 * copy, as a vendor's plugin has its own device code.
 */
#ifndef BP_TESTS_PLUGINS_FAKEDEV_H
#define BP_TESTS_PLUGINS_FAKEDEV_H

#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static bp_status fakedev_count1(void *ud, int32_t *n) {
  (void)ud;
  *n = 1;
  return BP_OK;
}
static bp_status fakedev_alloc(void *ud, int32_t index, size_t nbytes, void **out) {
  (void)ud;
  (void)index;
  *out = aligned_alloc(64, (nbytes + 63) & ~(size_t)63);
  return *out ? BP_OK : H->set_error(BP_ERR_OUT_OF_MEMORY, FAKEDEV_OOM);
}
static void fakedev_free(void *ud, int32_t index, void *p, size_t nbytes) {
  (void)ud;
  (void)index;
  (void)nbytes;
  free(p);
}
static bp_status fakedev_copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                              size_t n) {
  (void)ud;
  (void)dd;
  (void)sd;
  memmove(dst, src, n);
  return BP_OK;
}
static bp_status fakedev_sync(void *ud, int32_t index) {
  (void)ud;
  (void)index;
  return BP_OK;
}

#endif /* BP_TESTS_PLUGINS_FAKEDEV_H */
