/*
 * tests/fuzz/fuzz-npy.c - libFuzzer target for bp-run's .npy reader, which
 * takes untrusted files: every input is read into a tensor or refused with
 * a message, never read or written out of bounds.  bp-run is compiled in,
 * its main() renamed and its exit() turned into a return to this target.
 * Run through run.sh.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jmp_buf refused;
static _Noreturn void refuse(int code) {
  (void)code;
  longjmp(refused, 1);
}

#define main bp_run_main
#define exit refuse
#include "bp-run.c"
#undef main
#undef exit

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/bp-fuzz-npy.%ld.npy", (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  if (setjmp(refused)) return 0; /* refused, with a message on stderr */
  bp_tensor *t = npy_read(path);
  bp_tensor_release(t);
  return 0;
}
