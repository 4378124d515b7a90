/*
 * conformance/tests/faulty/faults-process.c - faults of result bounds,
 * process state and teardown for the shim corpus (shim.h).  A plugin is
 * built with one -DFAULT_<NAME>; corpus.tsv lists them.
 *
 * The bounds faults write just outside a result the kernel allocated
 * through the host.  With BP_ALLOC_GUARD=1 that lands in the host's
 * canaries, inside the allocation, where a sanitizer sees nothing;
 * without it, log_before_start overwrites the allocator's header of the
 * block (a real heap corruption), while tanh_past_end lands in the
 * padding the host's allocator rounds every CPU block up to.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "shim.h"

typedef int faults_process_unit; /* the unit is never empty */

/* ------------------------------------------------------------------------ */
/* Result bounds                                                            */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_TANH_PAST_END)
/* The vector loop's last store is a full 16-lane one: a float32 result of
 * more than 16 elements whose count is 15 mod 16 gets one element written
 * past its end. */
SHIM_KERNEL(tanh_past_end) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  float *z = o->data;
  if (o->dtype == BP_FLOAT32 && o->numel > 16 && o->numel % 16 == 15) z[o->numel] = z[o->numel - 1];
  return BP_OK;
}
const shim_fault shim_the_fault = {"tanh_past_end", "tanh", tanh_past_end, NULL, NULL};
#endif

#if defined(FAULT_LOG_BEFORE_START)
/* Its aligned prologue steps back to the previous vector boundary: a
 * float32 result of more than 64 elements whose count is 3 mod 8 gets one
 * element written before its start. */
SHIM_KERNEL(log_before_start) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (st) return st;
  const bp_tensor_view *o = SHIM_RET();
  float *z = o->data;
  if (o->dtype == BP_FLOAT32 && o->numel > 64 && o->numel % 8 == 3) z[-1] = z[0];
  return BP_OK;
}
const shim_fault shim_the_fault = {"log_before_start", "log", log_before_start, NULL, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Process state                                                            */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_RSQRT_ROUNDING)
/* Switches the calling thread to round-toward-zero for its Newton step and
 * never switches back: after any call the caller rounds differently. */
SHIM_KERNEL(rsqrt_rounding) {
  fesetround(FE_TOWARDZERO);
  return shim_real(ctx, args, nargs, rets, nrets);
}
const shim_fault shim_the_fault = {"rsqrt_rounding", "rsqrt", rsqrt_rounding, NULL, NULL};
#endif

#if defined(FAULT_FTZ_AT_LOAD)
/* Built with -ffast-math, it sets flush-to-zero and denormals-are-zero on
 * the loading thread at load, as crtfastmath.o does, and leaves them. */
static void set_ftz(void) {
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  fpcr |= (uint64_t)1 << 24; /* FZ */
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#else
  fesetround(FE_TOWARDZERO); /* no flush-to-zero here: the rounding mode, then */
#endif
}
const shim_fault shim_the_fault = {"ftz_at_load", NULL, NULL, set_ftz, NULL};
#endif

#if defined(FAULT_SEGV_HANDLER)
/* Installs its own crash reporter for SIGSEGV at load, replacing the
 * host's handler (and leaving a handler in code that unload unmaps). */
static void crash_report(int sig) {
  static const char msg[] = "segv_handler: the device runtime crashed\n";
  if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
    /* nothing to do */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}
static void install_reporter(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = crash_report;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
}
const shim_fault shim_the_fault = {"segv_handler", NULL, NULL, install_reporter, NULL};
#endif

#if defined(FAULT_SIGINT_IGNORED)
/* Ignores SIGINT at load, so that Ctrl-C "cannot interrupt device work":
 * the host process can no longer be interrupted. */
static void ignore_sigint(void) { signal(SIGINT, SIG_IGN); }
const shim_fault shim_the_fault = {"sigint_ignored", NULL, NULL, ignore_sigint, NULL};
#endif

#if defined(FAULT_THREAD_AT_LOAD)
/* Starts a telemetry thread at load that nothing stops: it outlives
 * unload (the library pins itself with RTLD_NODELETE so that the thread's
 * code stays mapped). */
static void *telemetry(void *arg) {
  (void)arg;
  for (;;) sleep(3600);
  return NULL;
}
static void start_telemetry(void) {
  Dl_info info;
  if (dladdr((void *)(uintptr_t)&telemetry, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &attr, telemetry, NULL);
  pthread_attr_destroy(&attr);
}
const shim_fault shim_the_fault = {"thread_at_load", NULL, NULL, start_telemetry, NULL};
#endif

#if defined(FAULT_MMAP_LEFT)
/* Maps a 4 MiB staging arena for host-device copies at load and never
 * unmaps it: every load leaves one more mapping behind after unload. */
static void map_arena(void) {
  void *p = mmap(NULL, (size_t)4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) *(volatile char *)p = 1;
}
const shim_fault shim_the_fault = {"mmap_left", NULL, NULL, map_arena, NULL};
#endif

/* ------------------------------------------------------------------------ */
/* Teardown                                                                 */
/* ------------------------------------------------------------------------ */

#if defined(FAULT_TEARDOWN_NULL_CALL)
/* Resolves its device runtime's shutdown function with dlsym at load and
 * calls it at teardown without checking: where the runtime is absent the
 * pointer is NULL and unload crashes. */
static void (*runtime_shutdown)(void);
static void resolve_runtime(void) {
  void *p = dlsym(RTLD_DEFAULT, "vendorrt_shutdown");
  memcpy(&runtime_shutdown, &p, sizeof p);
}
static void shutdown_runtime(void) { runtime_shutdown(); }
const shim_fault shim_the_fault = {"teardown_null_call", NULL, NULL, resolve_runtime,
                                   shutdown_runtime};
#endif

#if defined(FAULT_TEARDOWN_RELEASE)
/* Keeps a borrowed pointer to its last result (for a fused backward pass)
 * and releases it at teardown as if it held a reference: a result the
 * caller still holds is freed when the plugin unloads. */
static bp_tensor *last_result;
SHIM_KERNEL(teardown_release) {
  bp_status st = shim_real(ctx, args, nargs, rets, nrets);
  if (!st) __atomic_store_n(&last_result, rets[0].u.tensor, __ATOMIC_RELEASE);
  return st;
}
static void drop_cache(void) {
  bp_tensor *t = __atomic_exchange_n(&last_result, NULL, __ATOMIC_ACQ_REL);
  shim_host->tensor_release(t);
}
const shim_fault shim_the_fault = {"teardown_release", "log_softmax", teardown_release, NULL,
                                   drop_cache};
#endif
