/*
 * conformance/tests/faulty/triggers-proc.c - the triggers of the shim
 * corpus's faults of result bounds, process state, teardown, errors,
 * races and leaks (confirm.h).
 *
 * Each trigger runs in a child process that exits right after it, so the
 * triggers free only what the fault's measure needs freed.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "confirm.h"

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define F32 BP_FLOAT32

/* A call with one new float32 tensor of the given shape and values in [lo, hi]. */
static call *with_x(int32_t ndim, const int64_t *sizes, double lo, double hi) {
  static call c;
  call_init(&c);
  arg_t(&c, mk(rnd(F32, ndim, sizes, lo, hi), NULL, 0));
  return &c;
}

/* ------------------------------------------------------------------------ */
/* Result bounds: the host's guard reports a damaged canary at free         */
/* ------------------------------------------------------------------------ */

static int guarded(const char *op, int64_t n, double lo, char *why, size_t len) {
  bp_tensor *out;
  if (run(op, with_x(1, &n, lo, 3), &out) != BP_OK) {
    snprintf(why, len, "%s failed: %s", op, bp_last_error());
    return -1;
  }
  bp_tensor_release(out);
  ssize_t got = guard_fd < 0 ? -1 : read(guard_fd, why, len - 1);
  if (got > 0) {
    why[got] = '\0';
    why[strcspn(why, "\n")] = '\0';
    return 1;
  }
  snprintf(why, len, "%s of float32[%lld]: the canaries around its result are intact", op,
           (long long)n);
  return 0;
}

static int t_tanh_past_end(char *why, size_t len) { return guarded("core::tanh", 31, -3, why, len); }
static int t_log_before_start(char *why, size_t len) { return guarded("core::log", 67, 0.5, why, len); }

/* ------------------------------------------------------------------------ */
/* Process state                                                            */
/* ------------------------------------------------------------------------ */

/* The calling thread's rounding mode and flush-to-zero controls. */
static unsigned long fp_state(void) {
  unsigned long s = (unsigned long)fegetround();
#if defined(__SSE__)
  s |= (unsigned long)(_mm_getcsr() & ~0x3fu) << 8; /* without the exception flags */
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  s |= (unsigned long)fpcr << 8;
#endif
  return s;
}

static int fp_changed(unsigned long before, const char *when, char *why, size_t len) {
  unsigned long after = fp_state();
  snprintf(why, len, "the floating-point state %s: %#lx before, %#lx after", when, before, after);
  return after != before;
}

static int t_rsqrt_rounding(char *why, size_t len) {
  unsigned long before = fp_state();
  if (run("core::rsqrt", with_x(1, S(4), 0.5, 3), NULL) != BP_OK) return -1;
  return fp_changed(before, "after a call of core::rsqrt", why, len);
}

static int t_ftz_at_load(char *why, size_t len) {
  unsigned long before = fp_state();
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  return fp_changed(before, "after the load", why, len);
}

static int disposition_at_load(int sig, char *why, size_t len) {
  struct sigaction a, b;
  /* From the default, whatever this process inherited (a shell ignores
   * SIGINT in the commands it runs in the background). */
  signal(sig, SIG_DFL);
  sigaction(sig, NULL, &a);
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) return -1;
  sigaction(sig, NULL, &b);
  bool same = a.sa_handler == b.sa_handler && (a.sa_flags & SA_SIGINFO) == (b.sa_flags & SA_SIGINFO);
  snprintf(why, len, "the disposition of %s %s at load", strsignal(sig), same ? "is the same" : "changed");
  return !same;
}

static int t_segv_handler(char *why, size_t len) { return disposition_at_load(SIGSEGV, why, len); }
static int t_sigint_ignored(char *why, size_t len) { return disposition_at_load(SIGINT, why, len); }

static int threads(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

static int t_thread_at_load(char *why, size_t len) {
  int before = threads();
  if (!cycle(why, len)) return -1;
  int after = threads();
  snprintf(why, len, "%d thread(s) before the load, %d after the unload", before, after);
  return after > before;
}

/* The bytes of the process's anonymous read-write mappings. */
static long long anon_bytes(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  long long total = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi, inode;
    char perms[8];
    int name = 0; /* where the name starts: the line's end when it has none */
    if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &lo, &hi, perms, &inode, &name) < 4) continue;
    if (inode == 0 && perms[0] == 'r' && perms[1] == 'w' && !line[name]) total += (long long)(hi - lo);
  }
  if (f) fclose(f);
  return total;
}

static int t_mmap_left(char *why, size_t len) {
  if (!cycle(why, len)) return -1; /* warms up the allocators */
  long long before = anon_bytes();
  if (!cycle(why, len)) return -1;
  long long grown = anon_bytes() - before;
  snprintf(why, len, "a load, a call and an unload left %lld KiB more anonymous memory mapped",
           grown / 1024);
  return grown >= 1 << 20;
}

/* ------------------------------------------------------------------------ */
/* Teardown                                                                 */
/* ------------------------------------------------------------------------ */

static int t_teardown_null_call(char *why, size_t len) {
  if (!cycle(why, len)) return -1;
  snprintf(why, len, "load, call and unload went through");
  return 0;
}

static int t_teardown_release(char *why, size_t len) {
  bp_tensor *out;
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_i(c, 1);
  if (run("core::log_softmax", c, &out) != BP_OK) return -1;
  int64_t before = bp_live_tensor_count();
  if (bp_plugin_unload(plugin) != BP_OK) {
    snprintf(why, len, "cannot unload: %s", bp_last_error());
    return -1;
  }
  int64_t after = bp_live_tensor_count();
  snprintf(why, len, "%lld live tensor(s) before the unload, %lld after, the caller holding one",
           (long long)before, (long long)after);
  if (after < before) return 1; /* out is gone: do not touch it */
  bp_tensor_release(out);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static int t_softmax_dim_clamp(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_i(c, 5);
  return expect_error("core::softmax", c, BP_ERR_INVALID_ARGUMENT, why, len);
}

static int t_index_select_clamp(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_i(c, 0);
  rt *ix = rt_new(BP_INT64, 1, S(2));
  ix->i[0] = 1;
  ix->i[1] = 2; /* the size of dim 0: out of range */
  arg_t(c, mk(ix, NULL, 0));
  return expect_error("core::index_select", c, BP_ERR_INVALID_ARGUMENT, why, len);
}

static int t_gelu_abort(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_s(c, "fast");
  return expect_error("core::gelu", c, BP_ERR_INVALID_ARGUMENT, why, len);
}

static int t_amax_exit(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_list(c, S(1, -1), 2);
  return expect_error("core::amax", c, BP_ERR_INVALID_ARGUMENT, why, len);
}

static int t_argmax_no_message(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_i(c, 7);
  return expect_error("core::argmax", c, BP_ERR_INVALID_ARGUMENT, why, len);
}

static int t_layer_norm_numel(char *why, size_t len) {
  call *c = with_x(3, S(2, 2, 3), -2, 2);
  arg_list(c, S(6), 1);
  return expect_error("core::layer_norm", c, BP_ERR_SHAPE, why, len);
}

/* ------------------------------------------------------------------------ */
/* Races: 8 threads, each 4 calls on its own copy of a large input, must   */
/* all get the single-threaded result, bit for bit                          */
/* ------------------------------------------------------------------------ */

static struct {
  const char *op;
  const rt *x;
  bool has_dim;
  rt *want;
  atomic_int bad;
  pthread_mutex_t lock;
  char why[400];
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int race_call(bp_tensor **out) {
  call c;
  call_init(&c);
  bp_tensor *x = mk(R.x, NULL, 0);
  arg_t(&c, x);
  if (R.has_dim) arg_i(&c, -1);
  bp_status st = run(R.op, &c, out);
  bp_tensor_release(x);
  return st;
}

static void *racer(void *arg) {
  for (int it = 0; it < 4 && !atomic_load(&R.bad); it++) {
    bp_tensor *out = NULL;
    char why[256];
    int bad = 1;
    if (race_call(&out) != BP_OK) {
      snprintf(why, sizeof why, "%s failed: %s", R.op, bp_last_error());
    } else {
      rt *got = get(out);
      bad = differs(got, R.want, true, 1, 1, why, sizeof why);
      rt_free(got);
    }
    bp_tensor_release(out);
    pthread_mutex_lock(&R.lock);
    if (bad && !atomic_exchange(&R.bad, 1))
      snprintf(R.why, sizeof R.why, "thread %d, call %d: %s", (int)(intptr_t)arg, it, why);
    pthread_mutex_unlock(&R.lock);
  }
  return NULL;
}

static int race(const char *op, rt *x, bool has_dim, char *why, size_t len) {
  bp_tensor *out;
  R.op = op;
  R.x = x;
  R.has_dim = has_dim;
  if (race_call(&out) != BP_OK) {
    snprintf(why, len, "%s failed: %s", op, bp_last_error());
    return -1;
  }
  R.want = get(out);
  bp_tensor_release(out);
  for (int round = 0; round < 5 && !atomic_load(&R.bad); round++) {
    pthread_t t[8];
    int started = 0;
    for (intptr_t i = 0; i < 8; i++) started += pthread_create(&t[started], NULL, racer, (void *)i) == 0;
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  }
  if (atomic_load(&R.bad)) {
    snprintf(why, len, "%s", R.why);
    return 1;
  }
  snprintf(why, len, "5 rounds of 8 threads x 4 calls of %s gave the single-threaded result", op);
  return 0;
}

static int t_sum_static_partials(char *why, size_t len) {
  return race("core::sum", rnd(F32, 1, S(100000), -2, 2), false, why, len);
}

static int t_exp_table_init(char *why, size_t len) {
  return race("core::exp", rnd(F32, 1, S(100000), -3, 3), false, why, len);
}

static int t_softmax_pingpong(char *why, size_t len) {
  return race("core::softmax", rnd(F32, 2, S(1000, 100), -3, 3), true, why, len);
}

/* ------------------------------------------------------------------------ */
/* Leaks: handles and device bytes after a failing call                     */
/* ------------------------------------------------------------------------ */

static int leaks(const char *op, call *c, char *why, size_t len) {
  int64_t live0 = bp_live_tensor_count(), bytes0 = 0, bytes1 = 0;
  bp_device_memory_in_use(BP_DEVICE_CPU, &bytes0);
  if (run(op, c, NULL) == BP_OK) {
    snprintf(why, len, "%s succeeded on arguments that do not fit", op);
    return -1;
  }
  int64_t live1 = bp_live_tensor_count();
  bp_device_memory_in_use(BP_DEVICE_CPU, &bytes1);
  snprintf(why, len, "a failing %s left %lld more tensor(s) and %lld more byte(s) of cpu memory",
           op, (long long)(live1 - live0), (long long)(bytes1 - bytes0));
  return live1 != live0 || bytes1 != bytes0;
}

static int t_add_leak_on_error(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_t(c, mk(rnd(F32, 1, S(4), -2, 2), NULL, 0));
  return leaks("core::add", c, why, len);
}

static int t_matmul_leak_ws(char *why, size_t len) {
  call *c = with_x(2, S(2, 3), -2, 2);
  arg_t(c, mk(rnd(F32, 2, S(4, 2), -2, 2), NULL, 0));
  return leaks("core::matmul", c, why, len);
}

/* ------------------------------------------------------------------------ */
/* A host out of memory                                                     */
/* ------------------------------------------------------------------------ */

/* Each maker gives the same values every time it is called. */
static call *softmax_call(void) {
  rnd_seed(7);
  call *c = with_x(2, S(6, 50), -3, 3);
  arg_i(c, 1);
  return c;
}

static call *mul_call(void) {
  static call c;
  rnd_seed(7);
  call_init(&c);
  arg_t(&c, mk(rnd(F32, 2, S(5, 30), -2, 2), NULL, 0));
  arg_t(&c, mk(rnd(F32, 2, S(5, 30), -2, 2), NULL, 0));
  return &c;
}

static call *sum_call(void) {
  static const int64_t dim[] = {1}; /* the call borrows it */
  rnd_seed(7);
  call *c = with_x(2, S(7, 40), -2, 2);
  arg_list(c, dim, 1);
  arg_b(c, false);
  arg_none(c);
  return c;
}

static int t_softmax_ws_unchecked(char *why, size_t len) {
  return expect_oom("core::softmax", softmax_call, why, len);
}

static int t_mul_oom_backend(char *why, size_t len) {
  return expect_oom("core::mul", mul_call, why, len);
}

static int t_sum_stage_leak(char *why, size_t len) {
  return expect_oom("core::sum", sum_call, why, len);
}

const trigger proc_triggers[] = {
    {"tanh_past_end", t_tanh_past_end, T_GUARD},
    {"log_before_start", t_log_before_start, T_GUARD},
    {"rsqrt_rounding", t_rsqrt_rounding, 0},
    {"ftz_at_load", t_ftz_at_load, T_NOLOAD},
    {"segv_handler", t_segv_handler, T_NOLOAD},
    {"sigint_ignored", t_sigint_ignored, T_NOLOAD},
    {"thread_at_load", t_thread_at_load, T_NOLOAD},
    {"mmap_left", t_mmap_left, T_NOLOAD | T_NOTSAN},
    {"teardown_null_call", t_teardown_null_call, T_NOLOAD},
    {"teardown_release", t_teardown_release, 0},
    {"softmax_dim_clamp", t_softmax_dim_clamp, 0},
    {"index_select_clamp", t_index_select_clamp, 0},
    {"gelu_abort", t_gelu_abort, 0},
    {"amax_exit", t_amax_exit, 0},
    {"argmax_no_message", t_argmax_no_message, 0},
    {"layer_norm_numel", t_layer_norm_numel, 0},
    {"sum_static_partials", t_sum_static_partials, T_RACE},
    {"exp_table_init", t_exp_table_init, T_RACE},
    {"softmax_pingpong", t_softmax_pingpong, T_RACE},
    {"add_leak_on_error", t_add_leak_on_error, 0},
    {"matmul_leak_ws", t_matmul_leak_ws, 0},
    {"softmax_ws_unchecked", t_softmax_ws_unchecked, 0},
    {"mul_oom_backend", t_mul_oom_backend, 0},
    {"sum_stage_leak", t_sum_stage_leak, 0},
};
const size_t proc_ntriggers = sizeof proc_triggers / sizeof *proc_triggers;
