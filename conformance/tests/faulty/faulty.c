/*
 * conformance/tests/faulty/faulty.c - plugins that bp-certify must reject,
 * one per fault class.  Each is built from this file with one FAULT_*
 * macro, and each breaks exactly one check (named in brackets):
 *
 *   FAULT_WRONG      core::add returns self - alpha * other       [numerics]
 *   FAULT_NONCONTIG  core::add ignores its inputs' strides        [numerics, noncontig only]
 *   FAULT_MUTATE     core::add writes 0 into `other`              [honesty]
 *   FAULT_OOB        core::add.out writes one element past `out`  [bounds]
 *   FAULT_ALIAS      core::cast to the same dtype returns `self`  [honesty]
 *   FAULT_META       faulty::twice's kernel returns a 1-D result
 *                    where its meta function says [4, 5]        [meta]
 *   FAULT_CRASH      core::add writes through NULL on 0-size input [CRASH]
 *   FAULT_HANG       core::add never returns for 37 elements     [TIMEOUT]
 *   FAULT_LEAK       core::add allocates a tensor it never frees [hygiene]
 *   FAULT_NONDET     core::add nudges its result by a counter    [repeatability]
 *   FAULT_THREADS    core::add sums its result in a global buffer [concurrency]
 *   FAULT_DTYPE      core::add declares float32 only (as they all
 *                    do), yet returns BP_OK, with garbage, for
 *                    other dtypes                                [errors]
 *   FAULT_MISSING    claims core op set 1, implements only add   [registration/profile]
 *   FAULT_EXPORT     exports a symbol besides bp_plugin_init     [handshake/exports]
 *   FAULT_EXECSTACK  linked with -z execstack: needs an executable
 *                    stack                                       [handshake/binary]
 *   FAULT_WX         a section marked "awx": a writable and
 *                    executable segment                          [handshake/binary]
 *   FAULT_TEXTREL    an absolute address in .text, linked with
 *                    -z notext: text relocations                 [handshake/binary]
 *   (The loader refuses these three, so the checks that load the plugin
 *   fail too, with its reason.)
 *
 * FAULT_EMPTY builds `registers_nothing`, which loads and registers
 * nothing: there is nothing to certify, and it must not conform.
 *
 * FAULT_NONE builds `instrumented`, whose core::add is right: it conforms.
 * With BP_FAULTY_WEAR_OUT=N in its environment, every core::add after the
 * first N of one thread is off by one in its first element (a per-thread
 * cache that fills up), a fault that no single case sees but a
 * long-lived process does; with
 * BP_FAULTY_INIT_ABORT=1, its initialisation aborts; with
 * BP_FAULTY_INIT_HANG=1, it ignores SIGALRM and SIGPROF and never returns
 * (asleep); with
 * BP_FAULTY_ENV_WEAR_OUT=N, the same wear as BP_FAULTY_WEAR_OUT=N, but
 * counted in its process's environment (BP_FAULTY_ENV_CALLS), which a
 * worker that puts its environment back before each case resets; and
 * BP_FAULTY_VENDOR replaces its vendor string (any bytes: tabs, newlines,
 * quotes, invalid UTF-8), which the certificate must still carry; and
 * BP_FAULTY_SLOW_ONCE=FILE makes the first initialisation that finds no
 * FILE create it and take 3 s (a cold cache), the later ones fast; and
 * BP_FAULTY_SPIN_MS=N makes its core::add of 37 elements compute for N
 * milliseconds of its thread's CPU time first (a slow kernel, or with a
 * large N a hang that spins).
 *
 * Every plugin of the corpus appends the pid of its process to the file
 * that BP_FAULTY_LOAD_LOG names, each time it is initialised, and its
 * initialisation takes BP_FAULTY_INIT_MS milliseconds when that is set,
 * as an expensive one (a GPU context) would: the tests count how often
 * the certifier loads a plugin, and the timings show what that costs.
 *
 * All but FAULT_MISSING claim no core op set (op_set_version 0), so the
 * certifier holds only the ops they register to the checks, and the fault
 * is the only failure.  The kernels handle float32 with any strides and
 * broadcasting, which is all the core profile gives them.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <backplane/plugin.h>

#if defined(FAULT_WRONG)
#define FAULTY_NAME "wrong_result"
#elif defined(FAULT_NONCONTIG)
#define FAULTY_NAME "wrong_noncontig"
#elif defined(FAULT_MUTATE)
#define FAULTY_NAME "mutates_input"
#elif defined(FAULT_OOB)
#define FAULTY_NAME "writes_past_end"
#elif defined(FAULT_ALIAS)
#define FAULTY_NAME "aliases_input"
#elif defined(FAULT_META)
#define FAULTY_NAME "meta_disagrees"
#elif defined(FAULT_CRASH)
#define FAULTY_NAME "crashes_on_empty"
#elif defined(FAULT_HANG)
#define FAULTY_NAME "hangs"
#elif defined(FAULT_LEAK)
#define FAULTY_NAME "leaks_handle"
#elif defined(FAULT_NONDET)
#define FAULTY_NAME "nondeterministic"
#elif defined(FAULT_THREADS)
#define FAULTY_NAME "not_thread_safe"
#elif defined(FAULT_DTYPE)
#define FAULTY_NAME "accepts_bad_dtype"
#elif defined(FAULT_MISSING)
#define FAULTY_NAME "missing_op"
#elif defined(FAULT_EXPORT)
#define FAULTY_NAME "extra_export"
#elif defined(FAULT_EXECSTACK)
#define FAULTY_NAME "exec_stack"
#elif defined(FAULT_WX)
#define FAULTY_NAME "wx_segment"
#elif defined(FAULT_TEXTREL)
#define FAULTY_NAME "text_reloc"
#elif defined(FAULT_NONE)
#define FAULTY_NAME "instrumented"
#elif defined(FAULT_EMPTY)
#define FAULTY_NAME "registers_nothing"
#else
#error "define one FAULT_* macro"
#endif

static const bp_host_api *host;

#if defined(FAULT_NONE)
/* BP_FAULTY_WEAR_OUT, or 0; and the calls of core::add so far. */
static long wear_out;
static _Thread_local long add_calls;
/* BP_FAULTY_ENV_WEAR_OUT, or 0; the environment is not thread-safe, so its
 * count is read and written under env_lock. */
static long env_wear_out;
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

/* Adds one to BP_FAULTY_ENV_CALLS in the environment; returns the count. */
static long count_in_env(void) {
  pthread_mutex_lock(&env_lock);
  const char *c = getenv("BP_FAULTY_ENV_CALLS");
  long n = (c ? strtol(c, NULL, 10) : 0) + 1;
  char buf[32];
  snprintf(buf, sizeof buf, "%ld", n);
  setenv("BP_FAULTY_ENV_CALLS", buf, 1);
  pthread_mutex_unlock(&env_lock);
  return n;
}
#endif

#if defined(FAULT_CRASH)
/* Where a field at offset 16 of a NULL struct pointer would be. */
static volatile uintptr_t null_field = 16;
#endif

/* The element offset in v of the output index idx (of ndim n), with
 * NumPy broadcasting; contiguous strides instead of v's when `flat`. */
static int64_t offset_of(const bp_tensor_view *v, int32_t n, const int64_t *idx, bool flat) {
  int64_t off = 0, acc = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    int32_t od = d + (n - v->ndim);
    int64_t stride = flat ? acc : v->strides[d];
    if (v->sizes[d] != 1) off += idx[od] * stride;
    acc *= v->sizes[d];
  }
  return off;
}

#if !defined(FAULT_ALIAS) && !defined(FAULT_META)
/* o = a + alpha * b over o's shape (float32; any strides). */
static void add_into(const bp_tensor_view *a, const bp_tensor_view *b, const bp_tensor_view *o,
                     float alpha, bool flat_inputs) {
  int64_t idx[BP_MAX_NDIM] = {0};
  const float *x = a->data, *y = b->data;
  float *z = o->data;
  for (int64_t k = 0; k < o->numel; k++) {
    float xv = x[offset_of(a, o->ndim, idx, flat_inputs)];
    float yv = y[offset_of(b, o->ndim, idx, flat_inputs)];
#ifdef FAULT_WRONG
    z[offset_of(o, o->ndim, idx, false)] = xv - alpha * yv;
#else
    z[offset_of(o, o->ndim, idx, false)] = xv + alpha * yv;
#endif
    for (int32_t d = o->ndim - 1; d >= 0; d--) {
      if (++idx[d] < o->sizes[d]) break;
      idx[d] = 0;
    }
  }
}

#endif

static bp_status ret_tensor(bp_value *rets, bp_tensor *t) {
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = t;
  return BP_OK;
}

#if !defined(FAULT_ALIAS) && !defined(FAULT_META)
#if defined(FAULT_THREADS)
/* The bug: every call sums its result in this one buffer, so concurrent
 * calls add into each other's.  (A static buffer, never freed: a race on
 * memory that may be freed would be a use-after-free, which a sanitizer
 * reports by ending the process instead of letting the check see it.) */
#define PARTIAL_MAX 4096
static float partial[PARTIAL_MAX];
#endif

#if defined(FAULT_NONE)
static long spin_ms; /* BP_FAULTY_SPIN_MS */

/* Computes until this thread has used ms milliseconds of CPU time. */
static void spin_cpu(long ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  volatile double x = 1;
  do {
    for (int i = 0; i < 10000; i++) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}
#endif

static bp_status add_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta meta;
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = host->op_meta(ctx->op, args, nargs, &meta, 1);
  if (st) return st;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *b = host->tensor_view(args[1].u.tensor);
  bp_tensor *out;
#if defined(FAULT_DTYPE)
  /* The bug: no dtype check; other dtypes get an unwritten result. */
  if (a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32) {
    st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                    &out);
    if (st) return st;
    return ret_tensor(rets, out);
  }
#endif
  if (meta.dtype != BP_FLOAT32 || a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32)
    return host->set_errorf(BP_ERR_TYPE, "%s: only float32 (got %d and %d)", ctx->op_name,
                            (int)a->dtype, (int)b->dtype);
#if defined(FAULT_CRASH)
  /* The bug: a store through a field of a NULL pointer (address 16). */
  if (a->numel == 0) *(volatile int *)null_field = 1;
#elif defined(FAULT_NONE)
  if (a->numel == 37 && spin_ms > 0) spin_cpu(spin_ms);
#elif defined(FAULT_HANG)
  if (a->numel == 37)
    for (;;) {
      struct timespec ts = {1, 0};
      nanosleep(&ts, NULL);
    }
#endif
  st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                  &out);
  if (st) return st;
  const bp_tensor_view *o = host->tensor_view(out);
  float alpha = (float)args[2].u.f;
#if defined(FAULT_THREADS)
  add_into(a, b, o, alpha, false);
  if (o->numel > 0 && o->numel <= PARTIAL_MAX) {
    /* out is contiguous: the meta function made its strides. */
    float *z = o->data;
    struct timespec pause_ts = {0, 200000};
    memset(partial, 0, (size_t)o->numel * sizeof *partial);
    nanosleep(&pause_ts, NULL);
    /* (0 + x would turn -0.0 into +0.0: the first value is stored as is) */
    for (int64_t k = 0; k < o->numel; k++) partial[k] = partial[k] == 0 ? z[k] : partial[k] + z[k];
    nanosleep(&pause_ts, NULL);
    memcpy(z, partial, (size_t)o->numel * sizeof *partial);
  }
#elif defined(FAULT_NONCONTIG)
  add_into(a, b, o, alpha, true);
#else
  add_into(a, b, o, alpha, false);
#endif
#if defined(FAULT_MUTATE)
  if (b->numel) ((float *)b->data)[0] = 0.0f;
#elif defined(FAULT_LEAK)
  bp_tensor *lost;
  st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                  &lost);
  if (st) {
    host->tensor_release(out);
    return st;
  }
#elif defined(FAULT_NONE)
  if (wear_out && ++add_calls > wear_out && o->numel) ((float *)o->data)[0] += 1.0f;
  if (env_wear_out && count_in_env() > env_wear_out && o->numel) ((float *)o->data)[0] += 1.0f;
#elif defined(FAULT_NONDET)
  /* A few ulps, well inside the numerics tolerance, different every call. */
  static unsigned calls;
  calls++;
  if (o->numel)
    for (unsigned k = 0; k < calls; k++)
      ((float *)o->data)[0] = nextafterf(((float *)o->data)[0], INFINITY);
#endif
  return ret_tensor(rets, out);
}
#endif

#if defined(FAULT_OOB)
/* add.out(self, other, *, alpha, out): writes out, then one more. */
static bp_status add_out_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta meta;
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = host->op_meta(ctx->op, args, nargs, &meta, 1);
  if (st) return st;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  const bp_tensor_view *b = host->tensor_view(args[1].u.tensor);
  const bp_tensor_view *o = host->tensor_view(args[3].u.tensor);
  if (a->dtype != BP_FLOAT32 || b->dtype != BP_FLOAT32 || o->dtype != BP_FLOAT32)
    return host->set_errorf(BP_ERR_TYPE, "%s: only float32", ctx->op_name);
  add_into(a, b, o, (float)args[2].u.f, false);
  /* The bug: one element past the last one. */
  int64_t reach = 0;
  for (int32_t d = 0; d < o->ndim; d++) reach += (o->sizes[d] - 1) * o->strides[d];
  if (o->numel) ((float *)o->data)[reach + 1] = 0.0f;
  return ret_tensor(rets, host->tensor_retain(args[3].u.tensor));
}
#endif

#if defined(FAULT_ALIAS)
/* cast(self, dtype) for float32 input to float32 or float64. */
static bp_status cast_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta meta;
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = host->op_meta(ctx->op, args, nargs, &meta, 1);
  if (st) return st;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  /* The bug: "nothing to convert" returns the input itself, though the
   * schema promises a new tensor. */
  if (a->dtype != BP_FLOAT32 || (meta.dtype != BP_FLOAT32 && meta.dtype != BP_FLOAT64))
    return host->set_errorf(BP_ERR_TYPE, "%s: only float32 to float32 or float64", ctx->op_name);
  if (meta.dtype == a->dtype) return ret_tensor(rets, host->tensor_retain(args[0].u.tensor));
  bp_tensor *out;
  st = host->tensor_empty_strided(meta.device, meta.dtype, meta.ndim, meta.sizes, meta.strides,
                                  &out);
  if (st) return st;
  const bp_tensor_view *o = host->tensor_view(out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++) {
    ((double *)o->data)[k] = ((const float *)a->data)[offset_of(a, a->ndim, idx, false)];
    for (int32_t d = a->ndim - 1; d >= 0; d--) {
      if (++idx[d] < a->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return ret_tensor(rets, out);
}
#endif

#if defined(FAULT_META)
/* faulty::twice(Tensor self) -> Tensor: the meta function says "same
 * shape, contiguous float32"; the kernel returns a flat [numel]. */
static bp_status twice_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor_meta *outs, size_t nouts) {
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  if (a->dtype != BP_FLOAT32)
    return host->set_errorf(BP_ERR_TYPE, "%s: argument #0 'self': expected float32",
                            ctx->op_name);
  outs[0].device = a->device;
  outs[0].dtype = a->dtype;
  outs[0].ndim = a->ndim;
  int64_t acc = 1;
  for (int32_t d = a->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = a->sizes[d];
    outs[0].strides[d] = acc;
    acc *= a->sizes[d] ? a->sizes[d] : 1;
  }
  return BP_OK;
}

static bp_status twice_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                              bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  const bp_tensor_view *a = host->tensor_view(args[0].u.tensor);
  if (a->dtype != BP_FLOAT32)
    return host->set_errorf(BP_ERR_TYPE, "%s: argument #0 'self': expected float32",
                            ctx->op_name);
  int64_t n = a->numel;
  bp_tensor *out;
  /* The bug: a flat result. */
  bp_status st = host->tensor_empty(a->device, BP_FLOAT32, 1, &n, &out);
  if (st) return st;
  const bp_tensor_view *o = host->tensor_view(out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < n; k++) {
    ((float *)o->data)[k] = 2.0f * ((const float *)a->data)[offset_of(a, a->ndim, idx, false)];
    for (int32_t d = a->ndim - 1; d >= 0; d--) {
      if (++idx[d] < a->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return ret_tensor(rets, out);
}
#endif

/* Every kernel declares float32 only, the one dtype it handles. */
static const int32_t only_f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};

static bp_status impl(bp_library *lib, const char *op, bp_boxed_kernel fn) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = fn;
  k.dtypes = only_f32;
  return host->impl(lib, &k);
}

static bp_status setup(const bp_host_api *h, bp_registrar *reg) {
  bp_library *lib;
  bp_status st;
#if defined(FAULT_EMPTY)
  /* Loads, and registers nothing a certifier could check. */
  (void)h, (void)reg, (void)lib, (void)st, (void)impl, (void)add_kernel;
  return BP_OK;
#elif defined(FAULT_META)
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "faulty", BP_LIBRARY_DEF, 0};
  if ((st = h->library(reg, &ld, &lib))) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "twice(Tensor self) -> Tensor";
  d.meta = twice_meta;
  d.doc = "2 * self";
  if ((st = h->def(lib, &d))) return st;
  return impl(lib, "faulty::twice", twice_kernel);
#else
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  if ((st = h->library(reg, &ld, &lib))) return st;
#if defined(FAULT_ALIAS)
  return impl(lib, "core::cast", cast_kernel);
#else
#if defined(FAULT_OOB)
  if ((st = impl(lib, "core::add.out", add_out_kernel))) return st;
#endif
  return impl(lib, "core::add", add_kernel);
#endif
#endif
}

/* Not const: `instrumented` takes its vendor from BP_FAULTY_VENDOR. */
static bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = FAULTY_NAME,
    .vendor = "Backplane tests",
    .version = "0.0.1",
#if defined(FAULT_MISSING)
    .op_set_version = BP_CORE_OP_SET_VERSION,
#else
    .op_set_version = 0,
#endif
    .setup = setup,
};

#if defined(FAULT_WX)
/* The bug: a section both writable and executable (a trampoline patched
 * at run time, say), which the linker maps in a segment with both. */
__asm__(".section .faulty_wx,\"awx\",@progbits\n"
        ".byte 0\n"
        ".previous\n");
#elif defined(FAULT_TEXTREL)
/* The bug: code that is not position-independent, here an absolute
 * address in .text, whose relocation the loader must write into the
 * code. */
__attribute__((used)) static int textrel_target;
__asm__(".text\n"
        ".p2align 3\n"
        "faulty_textrel_slot: .quad textrel_target\n"
        ".previous\n");
#endif

#if defined(FAULT_EXPORT)
/* The bug: a second exported symbol. */
BP_PLUGIN_EXPORT int faulty_helper(void);
BP_PLUGIN_EXPORT int faulty_helper(void) { return 42; }
#endif

/* The instruments of the corpus: BP_FAULTY_LOAD_LOG and BP_FAULTY_INIT_MS
 * (and BP_FAULTY_WEAR_OUT for `instrumented`). */
static void instruments(void) {
  const char *log = getenv("BP_FAULTY_LOAD_LOG");
  if (log && *log) {
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      char line[32];
      int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
      if (write(fd, line, (size_t)n) != n) {
        /* A lost line shows as a load too few; the test then fails. */
      }
      close(fd);
    }
  }
  const char *ms = getenv("BP_FAULTY_INIT_MS");
  long v = ms ? strtol(ms, NULL, 10) : 0;
  if (v > 0) {
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
#if defined(FAULT_NONE)
  const char *w = getenv("BP_FAULTY_WEAR_OUT");
  wear_out = w ? strtol(w, NULL, 10) : 0;
  const char *ew = getenv("BP_FAULTY_ENV_WEAR_OUT");
  env_wear_out = ew ? strtol(ew, NULL, 10) : 0;
  const char *spin = getenv("BP_FAULTY_SPIN_MS");
  spin_ms = spin ? strtol(spin, NULL, 10) : 0;
  const char *ab = getenv("BP_FAULTY_INIT_ABORT");
  if (ab && strcmp(ab, "1") == 0) abort();
  const char *hang = getenv("BP_FAULTY_INIT_HANG");
  if (hang && strcmp(hang, "1") == 0) {
    signal(SIGALRM, SIG_IGN); /* an alarm() watchdog cannot end it, */
    signal(SIGPROF, SIG_IGN); /* nor a CPU-time one */
    for (;;) pause();
  }
  /* The first load on a machine is slow, the later ones fast, as a GPU
   * plugin's with a cold JIT cache: the first initialisation that finds
   * no file at BP_FAULTY_SLOW_ONCE creates it and takes 3 s. */
  const char *once = getenv("BP_FAULTY_SLOW_ONCE");
  if (once && *once) {
    int fd = open(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      struct timespec ts = {3, 0};
      nanosleep(&ts, NULL);
    }
  }
  const char *vendor = getenv("BP_FAULTY_VENDOR");
  if (vendor && *vendor) desc.vendor = vendor; /* the environment's string, never freed */
#endif
}

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *h) {
  if (!h || h->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  host = h;
  instruments();
  return &desc;
}
