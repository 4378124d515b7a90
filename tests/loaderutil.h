/*
 * tests/loaderutil.h - helpers of the loader tests (test-loader.c and
 * test-unload.c): host records by path, small tensors on any device, calls
 * of one-tensor ops, temporary directories.
 */
#ifndef BP_TESTS_LOADERUTIL_H
#define BP_TESTS_LOADERUTIL_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* The canonical form of a path, as the host records it. */
static inline const char *canon(const char *path) {
  static char buf[4][PATH_MAX];
  static int next;
  char *b = buf[next++ % 4];
  if (!realpath(path, b)) {
    tap_diag("realpath(%s) failed", path);
    snprintf(b, PATH_MAX, "%s", path);
  }
  return b;
}

/* The runtime code of a registered vendor device type, or -1. */
static inline int32_t device_code(const char *name) {
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 256; t++) {
    const char *n = bp_device_type_name(t);
    int32_t count;
    if (n && strcmp(n, name) == 0 && bp_device_count(t, &count) == BP_OK) return t;
  }
  return -1;
}

static inline bp_plugin_info info_of(const bp_plugin *p) {
  bp_plugin_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  is_status(bp_plugin_get_info(p, &info), BP_OK);
  return info;
}

/* The record the host keeps for a canonical path, or NULL. */
static inline bp_plugin *record_for(const char *canonical) {
  for (size_t i = 0; i < bp_plugin_count(); i++) {
    bp_plugin *p = bp_plugin_at(i);
    bp_plugin_info info = info_of(p);
    if (info.path && strcmp(info.path, canonical) == 0) return p;
  }
  return NULL;
}

/* A 1-D float32 tensor on `dev` (host-visible memory) holding v[0..n-1]. */
static inline bp_tensor *f32_on(bp_device dev, const float *v, int64_t n) {
  bp_tensor *t = NULL;
  bp_status st = bp_tensor_empty(dev, BP_FLOAT32, 1, &n, &t);
  if (st != BP_OK) {
    tap_diag("bp_tensor_empty on device %d: %s", (int)dev.type, bp_last_error());
    return NULL;
  }
  float *d = (float *)bp_tensor_get_view(t)->data;
  for (int64_t i = 0; i < n; i++) d[i] = v[i];
  return t;
}

/* Calls a one-Tensor-in, one-Tensor-out op; *out is NULL on failure. */
static inline bp_status call1(const bp_op *op, bp_tensor *a, bp_tensor **out) {
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  *out = NULL;
  bp_stack_push_tensor(&s, a);
  bp_status st = bp_call(op, &s);
  if (st == BP_OK) bp_stack_get_tensor(&s, 0, out);
  return st;
}

/* Calls a one-Tensor op and checks the result's device and values. */
static inline void expect_values(const bp_op *op, bp_tensor *a, int32_t device_type,
                                 const float *want, int64_t n) {
  bp_tensor *r;
  is_status(call1(op, a, &r), BP_OK);
  if (!r) return;
  const bp_tensor_view *v = bp_tensor_get_view(r);
  is_int(v->device.type, device_type);
  is_int(v->numel, n);
  for (int64_t i = 0; i < n && i < v->numel; i++)
    is_double(((const float *)v->data)[i], want[i], 0);
  bp_tensor_release(r);
}

/* Calls vendor_X::device_code() -> int. */
static inline int64_t vendor_device_code(const bp_op *op) {
  bp_value slots[1];
  bp_stack s = BP_STACK_INIT(slots, 1);
  int64_t code = -1;
  is_status(bp_call(op, &s), BP_OK);
  if (s.top == 1) bp_stack_get_int(&s, 0, &code);
  return code;
}

/* good::add(a, b) on the CPU, checked: proves good.so still works. */
static inline void expect_good_add_works(void) {
  const bp_op *add = must_find("good::add");
  float x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
  bp_tensor *a = f32(x, 3), *b = f32(y, 3);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  is_status(bp_call(add, &s), BP_OK);
  bp_tensor *r = NULL;
  if (s.top == 1 && bp_stack_get_tensor(&s, 0, &r) == BP_OK) {
    is_double(f32data(r)[0], 11, 0);
    is_double(f32data(r)[2], 33, 0);
  }
  ok(r != NULL);
  bp_stack_release(&s);
  bp_tensor_release(a);
  bp_tensor_release(b);
}

/* A fresh temporary directory (removed by rm_tree). */
static inline char *temp_dir(void) {
  static char buf[4][64];
  static int next;
  char *b = buf[next++ % 4];
  const char *tmp = getenv("TMPDIR");
  snprintf(b, sizeof buf[0], "%s/bp-loader-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(b)) {
    tap_diag("mkdtemp(%s) failed", b);
    return NULL;
  }
  return b;
}

/* Removes a directory and the plain files or links directly in it. */
static inline void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

#endif /* BP_TESTS_LOADERUTIL_H */
