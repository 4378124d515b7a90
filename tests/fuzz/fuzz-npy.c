/*
 * tests/fuzz/fuzz-npy.c - libFuzzer target for the .npy reader that bp-run
 * uses (tools/npy.c), which takes untrusted files.  It links npy.c and
 * checks, for every input:
 *
 *   - it is read into a tensor or refused with a status and one line of
 *     message, never read or written out of bounds (ASan, UBSan);
 *   - a tensor that was read writes out and reads back, and writing what
 *     was read back gives the same bytes again.
 *
 * Run through run.sh.  tests/test-npy.c also feeds it a few thousand
 * mutated files in every `make check`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes of the file at path, malloc'ed, or NULL. */
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  unsigned char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      unsigned char *grown = realloc(buf, cap *= 2);
      if (!grown) free(buf);
      buf = grown;
    }
  }
  fclose(f);
  *n = len;
  return buf;
}

/* Writes t to path and returns the file's bytes; aborts if it cannot. */
static unsigned char *write_and_slurp(const char *path, bp_tensor *t, size_t *n) {
  char err[512];
  if (npy_write(path, t, err, sizeof err) != NPY_OK) {
    fprintf(stderr, "fuzz-npy: a tensor that was read does not write: %s\n", err);
    abort();
  }
  unsigned char *bytes = slurp(path, n);
  if (!bytes) abort();
  return bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char in[64], once[64], twice[64];
  if (!in[0]) {
    long pid = (long)getpid();
    snprintf(in, sizeof in, "/tmp/bp-fuzz-npy.%ld.npy", pid);
    snprintf(once, sizeof once, "/tmp/bp-fuzz-npy.%ld.1.npy", pid);
    snprintf(twice, sizeof twice, "/tmp/bp-fuzz-npy.%ld.2.npy", pid);
  }
  FILE *f = fopen(in, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);

  char err[512] = "";
  bp_tensor *t = (bp_tensor *)&t;
  npy_status st = npy_read(in, &t, err, sizeof err);
  if (st != NPY_OK) {
    /* A refusal says why, on one line, and hands back no tensor. */
    if (t != NULL || !err[0] || strchr(err, '\n')) abort();
  } else {
    if (!t) abort();
    size_t n1, n2;
    unsigned char *first = write_and_slurp(once, t, &n1);
    bp_tensor *back = NULL;
    if (npy_read(once, &back, err, sizeof err) != NPY_OK) {
      fprintf(stderr, "fuzz-npy: a file npy_write wrote does not read: %s\n", err);
      abort();
    }
    unsigned char *second = write_and_slurp(twice, back, &n2);
    if (n1 != n2 || memcmp(first, second, n1) != 0) abort();
    free(first);
    free(second);
    bp_tensor_release(back);
    bp_tensor_release(t);
    unlink(once);
    unlink(twice);
  }
  unlink(in);
  return 0;
}
