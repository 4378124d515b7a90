/*
 * tests/test-npy.c - tools/npy.c, bp-run's .npy reader and writer, through
 * its error-returning API: round trips in every dtype, a file cut at every
 * byte reported as truncated with its sizes, and each kind of bad file
 * refused with its status and one line.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/host.h>

#include "npy.h"
#include "tap.h"

static char dir[64];

static const char *tmp_path(const char *name) {
  static char path[128];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/test-npy.XXXXXX");
    if (!mkdtemp(dir)) abort();
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static void put_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) abort();
}

/* Writes a format 1.0 .npy file with the header dict and the data given. */
static void put_npy(const char *path, const char *dict, const void *data, size_t n) {
  size_t hlen = strlen(dict) + 1;
  unsigned char buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hlen, 0};
  memcpy(buf + 10, dict, hlen - 1);
  buf[10 + hlen - 1] = '\n';
  memcpy(buf + 10 + hlen, data, n);
  put_file(path, buf, 10 + hlen + n);
}

/* The bytes of a file, malloc'ed; *n receives the length. */
static unsigned char *get_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = malloc(1 << 16);
  if (!buf) abort();
  *n = fread(buf, 1, 1 << 16, f);
  fclose(f);
  return buf;
}

static bp_tensor *filled(int32_t dtype, int32_t ndim, const int64_t *sizes) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, dtype, ndim, sizes, &t) != BP_OK) abort();
  const bp_tensor_view *v = bp_tensor_get_view(t);
  unsigned char *p = v->data;
  for (int64_t i = 0; i < v->numel * v->itemsize; i++) p[i] = (unsigned char)(i * 7 % 251);
  if (dtype == BP_BOOL)
    for (int64_t i = 0; i < v->numel; i++) p[i] &= 1;
  return t;
}

static void round_trip_every_dtype(void) {
  const int32_t dtypes[] = {BP_BOOL,  BP_INT8,    BP_INT16,   BP_INT32, BP_INT64,
                            BP_UINT8, BP_FLOAT16, BP_FLOAT32, BP_FLOAT64};
  const int64_t sizes[3] = {2, 3, 5};
  char err[256];
  for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
    bp_tensor *t = filled(dtypes[k], 3, sizes), *back = NULL;
    const char *path = tmp_path("rt.npy");
    is_int(npy_write(path, t, err, sizeof err), NPY_OK);
    is_int(npy_read(path, &back, err, sizeof err), NPY_OK);
    if (!back) continue;
    const bp_tensor_view *a = bp_tensor_get_view(t), *b = bp_tensor_get_view(back);
    is_str(bp_dtype_name(b->dtype), bp_dtype_name(a->dtype));
    is_int(b->ndim, 3);
    is_int(b->sizes[2], 5);
    ok(memcmp(a->data, b->data, (size_t)(a->numel * a->itemsize)) == 0);
    bp_tensor_release(t);
    bp_tensor_release(back);
  }
}

/* A 0-dim tensor and an empty one round-trip too. */
static void round_trip_scalar_and_empty(void) {
  char err[256];
  const int64_t empty[2] = {4, 0};
  bp_tensor *s = filled(BP_FLOAT64, 0, NULL), *e = filled(BP_INT32, 2, empty), *back;
  is_int(npy_write(tmp_path("s.npy"), s, err, sizeof err), NPY_OK);
  is_int(npy_read(tmp_path("s.npy"), &back, err, sizeof err), NPY_OK);
  if (back) is_int(bp_tensor_get_view(back)->ndim, 0);
  bp_tensor_release(back);
  is_int(npy_write(tmp_path("e.npy"), e, err, sizeof err), NPY_OK);
  is_int(npy_read(tmp_path("e.npy"), &back, err, sizeof err), NPY_OK);
  if (back) is_int(bp_tensor_get_view(back)->numel, 0);
  bp_tensor_release(back);
  bp_tensor_release(s);
  bp_tensor_release(e);
}

/* A strided tensor is written in C order. */
static void writes_strided_in_c_order(void) {
  const int64_t sizes[2] = {2, 3}, strides[2] = {1, 2};
  bp_tensor *t, *back = NULL;
  if (bp_tensor_empty_strided(BP_CPU, BP_INT32, 2, sizes, strides, &t) != BP_OK) abort();
  int32_t *p = bp_tensor_get_view(t)->data;
  for (int i = 0; i < 6; i++) p[i] = i; /* column-major 0..5 */
  char err[256];
  is_int(npy_write(tmp_path("f.npy"), t, err, sizeof err), NPY_OK);
  is_int(npy_read(tmp_path("f.npy"), &back, err, sizeof err), NPY_OK);
  if (back) {
    const int32_t *q = bp_tensor_get_view(back)->data;
    const int32_t want[6] = {0, 2, 4, 1, 3, 5};
    ok(memcmp(q, want, sizeof want) == 0);
  }
  bp_tensor_release(t);
  bp_tensor_release(back);
}

/* Every strict prefix of a good file is "truncated", never "not a .npy
 * file", and the message gives the sizes. */
static void every_cut_is_truncated(void) {
  const int64_t sizes[1] = {4};
  bp_tensor *t = filled(BP_FLOAT32, 1, sizes), *back;
  char err[256];
  const char *full = tmp_path("full.npy");
  is_int(npy_write(full, t, err, sizeof err), NPY_OK);
  bp_tensor_release(t);
  size_t n = 0;
  unsigned char *bytes = get_file(full, &n);
  if (!bytes) abort();
  is_int(n, 128 + 16);
  int bad = 0;
  for (size_t cut = 0; cut < n; cut++) {
    put_file(tmp_path("cut.npy"), bytes, cut);
    npy_status st = npy_read(tmp_path("cut.npy"), &back, err, sizeof err);
    if (st != NPY_ERR_TRUNCATED || !strstr(err, "truncated") || back) {
      if (bad++ < 3) tap_diag("cut at %zu: status %d, '%s'", cut, (int)st, err);
    }
  }
  is_int(bad, 0);
  put_file(tmp_path("cut.npy"), bytes, 5);
  npy_read(tmp_path("cut.npy"), &back, err, sizeof err);
  has_str(err, "cut.npy: truncated .npy file: the format's prefix is 10 bytes, the file has 5");
  put_file(tmp_path("cut.npy"), bytes, 130);
  npy_read(tmp_path("cut.npy"), &back, err, sizeof err);
  has_str(err, "cut.npy: truncated data: expected 16 bytes, got 2");
  free(bytes);
}

static void bad_files_are_refused(void) {
  bp_tensor *back = (bp_tensor *)&back;
  char err[256];
  is_int(npy_read(tmp_path("absent.npy"), &back, err, sizeof err), NPY_ERR_IO);
  ok(back == NULL);
  has_str(err, "absent.npy: cannot open: No such file or directory");
  put_file(tmp_path("text.npy"), "not a tensor\n", 13);
  is_int(npy_read(tmp_path("text.npy"), &back, err, sizeof err), NPY_ERR_FORMAT);
  has_str(err, "not a .npy file");
  put_npy(tmp_path("c8.npy"), "{'descr': '<c8', 'fortran_order': False, 'shape': (), }",
          "\0\0\0\0\0\0\0\0", 8);
  is_int(npy_read(tmp_path("c8.npy"), &back, err, sizeof err), NPY_ERR_UNSUPPORTED);
  has_str(err, "dtype '<c8' has no Backplane equivalent");
  /* Control bytes of the file are quoted escaped: the message is one line. */
  put_npy(tmp_path("nl.npy"), "{'descr': '<f8\n\x0e', 'fortran_order': False, 'shape': (), }",
          "\0\0\0\0\0\0\0\0", 8);
  is_int(npy_read(tmp_path("nl.npy"), &back, err, sizeof err), NPY_ERR_UNSUPPORTED);
  has_str(err, "dtype '<f8\\x0a\\x0e' has no Backplane equivalent");
  ok(strchr(err, '\n') == NULL);
  static const char v9[] = "\x93NUMPY\x09\x00\x00\x00";
  put_file(tmp_path("v9.npy"), v9, sizeof v9 - 1);
  is_int(npy_read(tmp_path("v9.npy"), &back, err, sizeof err), NPY_ERR_UNSUPPORTED);
  has_str(err, "unsupported .npy format version 9.0");
  put_npy(tmp_path("b.npy"), "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\1\2", 2);
  is_int(npy_read(tmp_path("b.npy"), &back, err, sizeof err), NPY_ERR_FORMAT);
  has_str(err, "bool element 1 is 2, not 0 or 1");
  put_npy(tmp_path("x.npy"), "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", "\1\2", 2);
  is_int(npy_read(tmp_path("x.npy"), &back, err, sizeof err), NPY_ERR_FORMAT);
  has_str(err, "x.npy: 1 byte of data expected, the file has more");
  put_npy(tmp_path("h.npy"),
          "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807,), }", "", 0);
  is_int(npy_read(tmp_path("h.npy"), &back, err, sizeof err), NPY_ERR_OVERFLOW);
  has_str(err, "h.npy: the data's byte size overflows 64 bits");
  put_npy(tmp_path("d.npy"), "{'descr': '<f4', 'shape': (1,), }", "\0\0\0\0", 4);
  is_int(npy_read(tmp_path("d.npy"), &back, err, sizeof err), NPY_ERR_FORMAT);
  has_str(err, "bad .npy header: the header lacks one of");
  /* A NULL buffer is allowed: the status alone. */
  is_int(npy_read(tmp_path("h.npy"), &back, NULL, 0), NPY_ERR_OVERFLOW);
}

static void write_errors(void) {
  char err[256];
  bp_tensor *t = filled(BP_BFLOAT16, 0, NULL);
  is_int(npy_write(tmp_path("bf.npy"), t, err, sizeof err), NPY_ERR_UNSUPPORTED);
  has_str(err, "bfloat16 has no NumPy dtype");
  bp_tensor_release(t);
  t = filled(BP_FLOAT32, 0, NULL);
  is_int(npy_write("/nonexistent-dir/x.npy", t, err, sizeof err), NPY_ERR_IO);
  has_str(err, "/nonexistent-dir/x.npy: cannot create: No such file or directory");
  bp_tensor_release(t);
}

/* The libFuzzer target (tests/fuzz/fuzz-npy.c), on every cut of a good
 * file and on every byte of its header set to each of a few tokens of the
 * header's syntax: it aborts, failing this case, where a property breaks. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_target_on_mutations(void) {
  static const char dicts[][80] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
      "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }",
      "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
  };
  static const char tokens[] = "(),:{}'-9 0T1F<>|\xff";
  unsigned char base[256];
  size_t runs = 0;
  for (size_t d = 0; d < sizeof dicts / sizeof dicts[0]; d++) {
    size_t hlen = strlen(dicts[d]) + 1;
    memcpy(base, "\x93NUMPY\x01\x00", 8);
    base[8] = (unsigned char)hlen;
    base[9] = 0;
    memcpy(base + 10, dicts[d], hlen - 1);
    base[10 + hlen - 1] = '\n';
    size_t n = 10 + hlen;
    for (int i = 0; i < 8; i++) base[n++] = (unsigned char)(i & 1);
    for (size_t cut = 0; cut <= n; cut++, runs++) LLVMFuzzerTestOneInput(base, cut);
    unsigned char mut[256];
    for (size_t at = 0; at < 10 + hlen; at++)
      for (size_t k = 0; k < sizeof tokens - 1; k++, runs++) {
        memcpy(mut, base, n);
        mut[at] = (unsigned char)tokens[k];
        LLVMFuzzerTestOneInput(mut, n);
      }
  }
  tap_diag("%zu inputs", runs);
  ok(runs > 3000);
}

static void cleanup_dir(void) {
  if (!dir[0]) return;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) tap_diag("could not remove %s", dir);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(round_trip_every_dtype), TAP_CASE(round_trip_scalar_and_empty),
      TAP_CASE(writes_strided_in_c_order), TAP_CASE(every_cut_is_truncated),
      TAP_CASE(bad_files_are_refused),  TAP_CASE(write_errors),
      TAP_CASE(fuzz_target_on_mutations),
  };
  tmp_path("");
  int st = tap_main(cases, TAP_NCASES(cases));
  cleanup_dir();
  return st;
}
