/*
 * tests/test-oom.c - out of memory at every allocation of the public entry
 * points, as SQLite tests it.
 *
 * Each case is one entry point (or one op through bp_call, which reaches
 * the allocations a kernel makes through the host table).  It runs once
 * to count its allocations, then, for N = 1, 2, ... up to that count, again
 * with the Nth allocation failing, alone and then with every one after it.
 * Each run either succeeds (a failure the host can do without) or returns
 * BP_ERR_OUT_OF_MEMORY with a message; either way no host block and no
 * tensor is left behind, and the next run with memory succeeds.  The test
 * links the host's objects (host/libbphost.la) for the allocator's hidden
 * controls (host/alloc.h).
 */
#define _XOPEN_SOURCE 700
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlpack/dlpack.h>

#include "alloc.h"
#include "testutil.h"

/* ------------------------------------------------------------------------ */
/* The sweep                                                                */
/* ------------------------------------------------------------------------ */

typedef bp_status (*unit_fn)(void);

/* What a unit's failure said when it is not the thread's last error (a
 * plugin's record); "" otherwise. */
static char unit_message[1024];

static const char *failure_message(void) {
  return *unit_message ? unit_message : bp_last_error();
}

/* Runs `fn` failing each of its allocations in turn; `min_allocs` is the
 * fewest allocations a successful run must make (so that a sweep that
 * fails nothing cannot pass unseen). */
static void sweep(const char *what, unit_fn fn, long min_allocs) {
  /* Twice first, so that caches a first call fills are full. */
  for (int i = 0; i < 2; i++)
    if (fn() != BP_OK) {
      tap_diag("%s fails with all memory: %s", what, failure_message());
      ok(0);
      return;
    }
  long live = bp__alloc_test_live();
  int64_t tensors = bp_live_tensor_count();
  long first = bp__alloc_test_count();
  is_status(fn(), BP_OK);
  long total = bp__alloc_test_count() - first;
  cmp_ok(total, ">=", min_allocs);
  if (!is_int(bp__alloc_test_live(), live)) tap_diag("%s keeps blocks after a success", what);

  long runs = 0, failed = 0, bad = 0;
  for (int sticky = 0; sticky < 2; sticky++) {
    for (long n = 1; n <= total; n++) {
      bp_clear_error();
      unit_message[0] = '\0';
      bp__alloc_test_fail(n, sticky);
      bp_status st = fn();
      bp__alloc_test_fail(0, false);
      runs++;
      if (st != BP_OK) failed++;
      const char *why = NULL;
      if (st != BP_OK && st != BP_ERR_OUT_OF_MEMORY)
        why = "another status than BP_ERR_OUT_OF_MEMORY";
      else if (st != BP_OK && !*failure_message())
        why = "no message";
      else if (st != BP_ERR_OUT_OF_MEMORY && strstr(failure_message(), "no room for this thread"))
        why = "a lost message";
      else if (bp__alloc_test_live() > live)
        why = "host blocks left behind";
      else if (bp_live_tensor_count() != tensors)
        why = "tensors left behind";
      else if (fn() != BP_OK)
        why = "the next run with memory fails";
      else if (bp__alloc_test_live() != live)
        why = "host blocks left behind by the next run";
      if (why && bad++ < 5)
        tap_diag("%s, allocation %ld of %ld%s failing: %s (%s: %s; blocks %+ld, tensors %+lld)",
                 what, n, total, sticky ? " and after" : "", why, bp_status_str(st),
                 failure_message(), bp__alloc_test_live() - live,
                 (long long)(bp_live_tensor_count() - tensors));
    }
  }
  is_int(bad, 0);
  if (total > 0) cmp_ok(failed, ">", 0);
  tap_diag("%s: %ld allocations, %ld runs, %ld failed with BP_ERR_OUT_OF_MEMORY", what, total,
           runs, failed);
}

/* ------------------------------------------------------------------------ */
/* Units: one entry point each, releasing what it made on success           */
/* ------------------------------------------------------------------------ */

static const char *cpu_plugin(void) {
  static char buf[4096];
  const char *top = getenv("top_builddir");
  snprintf(buf, sizeof buf, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  return buf;
}

static bp_status unit_load_good(void) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_load(test_plugin("good"), &p);
  if (st != BP_OK) return st;
  return bp_plugin_unload(p);
}

static bp_status unit_load_cpu(void) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_load(cpu_plugin(), &p);
  if (st != BP_OK) return st;
  return bp_plugin_unload(p);
}

static bp_plugin_init_fn good_init;

static bp_status unit_register(void) {
  bp_plugin *p = NULL;
  bp_status st = bp_plugin_register(good_init, "the test program", &p);
  if (st != BP_OK) return st;
  return bp_plugin_unload(p);
}

static char discover_dir[64];
static char discover_target[4096]; /* good.so's canonical path */

/* Discovers good.so (and the installed plugins), then unloads what the
 * call loaded.  A plugin that failed answers for the call. */
static bp_status unit_discover(void) {
  enum { MAX = 64 };
  bool was_loaded[MAX] = {false};
  size_t n0 = bp_plugin_count();
  for (size_t i = 0; i < n0 && i < MAX; i++) {
    bp_plugin_info info = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
    was_loaded[i] = bp_plugin_get_info(bp_plugin_at(i), &info) == BP_OK &&
                    info.state == BP_PLUGIN_LOADED;
  }
  size_t loaded = 0;
  bp_status st = bp_plugin_discover(&loaded);
  bool good = false;
  for (size_t i = 0; i < bp_plugin_count() && i < MAX; i++) {
    bp_plugin *p = bp_plugin_at(i);
    bp_plugin_info info = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
    if (bp_plugin_get_info(p, &info) != BP_OK) continue;
    if (strcmp(info.path, discover_target) == 0) {
      good = info.state == BP_PLUGIN_LOADED;
      if (st == BP_OK && info.state == BP_PLUGIN_FAILED) {
        st = info.status;
        snprintf(unit_message, sizeof unit_message, "%s", info.error);
      }
    }
    if (info.state == BP_PLUGIN_LOADED && !was_loaded[i] && bp_plugin_unload(p) != BP_OK)
      tap_diag("unload %s: %s", info.path, bp_last_error());
  }
  if (st == BP_OK && !good) {
    snprintf(unit_message, sizeof unit_message, "bp_plugin_discover did not load %.900s",
             discover_target);
    return BP_ERR_INTERNAL;
  }
  return st;
}

static bp_status unit_introspect(void) {
  const bp_op *op = NULL;
  bp_status st = bp_op_find("core::layer_norm", &op);
  if (st != BP_OK) return st;
  bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  if ((st = bp_op_get_info(op, &info)) != BP_OK) return st;
  for (size_t i = 0; i < (size_t)info.nargs; i++) {
    bp_arg_info a = {.struct_size = BP_ARG_INFO_STRUCT_SIZE};
    if ((st = bp_op_get_arg(op, i, &a)) != BP_OK) return st;
  }
  bp_kernel_info k = {.struct_size = BP_KERNEL_INFO_STRUCT_SIZE};
  return bp_op_get_kernel(op, 0, &k);
}

static bp_tensor *ramp(int64_t n0, int64_t n1) {
  int64_t sizes[2] = {n0, n1};
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &t) != BP_OK) return NULL;
  float *d = bp_tensor_get_view(t)->data;
  for (int64_t i = 0; i < n0 * n1; i++) d[i] = (float)((i * 7) % 11) - 5.0f;
  return t;
}

static bp_status unit_tensors(void) {
  int64_t sizes[2] = {3, 4}, strides[2] = {1, 3};
  bp_tensor *a = NULL, *b = NULL, *v = NULL;
  bp_status st = bp_tensor_empty_strided(BP_CPU, BP_FLOAT64, 2, sizes, strides, &a);
  if (st == BP_OK) st = bp_tensor_empty(BP_CPU, BP_FLOAT64, 2, sizes, &b);
  if (st == BP_OK) st = bp_tensor_copy(b, a);
  if (st == BP_OK) st = bp_tensor_as_strided(b, 1, (int64_t[]){6}, (int64_t[]){1}, 2, &v);
  /* An overlapping copy goes through a buffer. */
  if (st == BP_OK) {
    bp_tensor *w = NULL;
    st = bp_tensor_as_strided(b, 1, (int64_t[]){6}, (int64_t[]){1}, 0, &w);
    if (st == BP_OK) st = bp_tensor_copy(v, w);
    bp_tensor_release(w);
  }
  bp_tensor_release(v);
  bp_tensor_release(b);
  bp_tensor_release(a);
  return st;
}

static float blob[16];

static bp_status unit_dlpack(void) {
  bp_tensor *t = NULL, *back = NULL;
  bp_status st = bp_tensor_from_blob(BP_CPU, BP_FLOAT32, 1, (int64_t[]){16}, NULL, blob, NULL,
                                     NULL, &t);
  DLManagedTensor *m = NULL;
  if (st == BP_OK) st = bp_tensor_to_dlpack(t, &m);
  if (st == BP_OK) {
    st = bp_tensor_from_dlpack(m, &back);
    if (st != BP_OK && m->deleter) m->deleter(m); /* refused: still the caller's */
  }
  bp_tensor_release(back);
  bp_tensor_release(t);
  return st;
}

static bp_status unit_provider(void) {
  const bp_op *op = NULL;
  bp_status st = bp_op_find("core::mul", &op);
  if (st == BP_OK) st = bp_set_kernel_provider(op, BP_DEVICE_CPU, "cpu");
  if (st == BP_OK) st = bp_set_kernel_enabled(op, BP_DEVICE_CPU, false);
  if (st == BP_OK) st = bp_set_kernel_enabled(op, BP_DEVICE_CPU, true);
  if (st == BP_OK) st = bp_set_kernel_provider(op, BP_DEVICE_CPU, NULL);
  return st;
}

/* A call's inputs: push takes no references, so a unit keeps its tensors
 * here and releases them after the call. */
typedef struct unit_args {
  bp_value v[8];
  bp_stack s;
  bp_tensor *keep[8];
  int nkeep;
  bp_status st;
} unit_args;

#define ARGS(a)                  \
  unit_args a = {.st = BP_OK};   \
  a.s = (bp_stack)BP_STACK_INIT(a.v, 8)

/* Keeps `t` (owned) for the call; NULL means its allocation failed. */
static bp_tensor *keep(unit_args *a, bp_tensor *t) {
  if (!t && a->st == BP_OK) a->st = BP_ERR_OUT_OF_MEMORY;
  if (t) a->keep[a->nkeep++] = t;
  return t;
}

static void push_t(unit_args *a, int64_t n0, int64_t n1) {
  bp_tensor *t = a->st == BP_OK ? keep(a, ramp(n0, n1)) : NULL;
  if (t) a->st = bp_stack_push_tensor(&a->s, t);
}

#define PUSH(a, call)                   \
  do {                                  \
    if ((a)->st == BP_OK) (a)->st = (call); \
  } while (0)

/* Calls `name` (keyword names `kw` for the last `nkw` values) and
 * releases the results and the inputs. */
static bp_status call_and_release(const char *name, unit_args *a, const char *const *kw,
                                  size_t nkw) {
  const bp_op *op = NULL;
  bp_status st = a->st;
  if (st == BP_OK) st = bp_op_find(name, &op);
  if (st == BP_OK) st = kw ? bp_call_kw(op, &a->s, kw, nkw) : bp_call(op, &a->s);
  if (st == BP_OK) bp_stack_release(&a->s);
  for (int i = 0; i < a->nkeep; i++) bp_tensor_release(a->keep[i]);
  return st;
}

static bp_status unit_call_add(void) {
  ARGS(a);
  push_t(&a, 4, 5);
  push_t(&a, 1, 5);
  PUSH(&a, bp_stack_push_float(&a.s, 2.0));
  static const char *const kw[] = {"alpha"};
  return call_and_release("core::add", &a, kw, 1);
}

static bp_status unit_call_sum(void) {
  ARGS(a);
  push_t(&a, 4, 5);
  static const int64_t dim[] = {1}; /* the stack borrows it */
  PUSH(&a, bp_stack_push_int_list(&a.s, dim, 1));
  PUSH(&a, bp_stack_push_bool(&a.s, true));
  PUSH(&a, bp_stack_push_scalar_type(&a.s, BP_FLOAT64));
  return call_and_release("core::sum", &a, NULL, 0);
}

static bp_status unit_call_matmul(void) {
  ARGS(a);
  push_t(&a, 9, 7);
  push_t(&a, 7, 5);
  return call_and_release("core::matmul", &a, NULL, 0);
}

static bp_status unit_call_cat(void) {
  ARGS(a);
  keep(&a, ramp(2, 3));
  keep(&a, ramp(4, 3));
  keep(&a, ramp(1, 3));
  PUSH(&a, bp_stack_push_tensor_list(&a.s, a.keep, 3));
  PUSH(&a, bp_stack_push_int(&a.s, 0));
  return call_and_release("core::cat", &a, NULL, 0);
}

static bp_status unit_call_sort(void) {
  ARGS(a);
  push_t(&a, 6, 33);
  PUSH(&a, bp_stack_push_int(&a.s, -1));
  PUSH(&a, bp_stack_push_bool(&a.s, true));
  return call_and_release("core::sort", &a, NULL, 0);
}

static bp_status unit_call_softmax(void) {
  ARGS(a);
  push_t(&a, 5, 8);
  PUSH(&a, bp_stack_push_int(&a.s, 0));
  return call_and_release("core::softmax", &a, NULL, 0);
}

/* Op set 1's add.out into an out of the result's shape. */
static bp_status unit_call_add_out(void) {
  ARGS(a);
  bp_tensor *out = NULL;
  PUSH(&a, bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, (int64_t[]){3, 4}, &out));
  if (out) keep(&a, out);
  push_t(&a, 3, 4);
  push_t(&a, 3, 4);
  PUSH(&a, bp_stack_push_float(&a.s, 1.0));
  PUSH(&a, bp_stack_push_tensor(&a.s, out));
  return call_and_release("core::add.out", &a, NULL, 0);
}

/* An op set 2 .out form into an empty out, which the host resizes. */
static bp_status unit_call_sub_out(void) {
  ARGS(a);
  bp_tensor *out = NULL;
  PUSH(&a, bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, (int64_t[]){0}, &out));
  if (out) keep(&a, out);
  push_t(&a, 3, 40);
  push_t(&a, 1, 40);
  PUSH(&a, bp_stack_push_float(&a.s, 1.0));
  PUSH(&a, bp_stack_push_tensor(&a.s, out));
  return call_and_release("core::sub.out", &a, NULL, 0);
}

static bp_status unit_call_unboxed(void) {
  ARGS(a);
  push_t(&a, 2, 3);
  push_t(&a, 2, 3);
  PUSH(&a, bp_stack_push_float(&a.s, 0.5));
  return call_and_release("good::muladd", &a, NULL, 0);
}

static bp_status unit_meta(void) {
  ARGS(a);
  push_t(&a, 4, 1);
  push_t(&a, 1, 6);
  const bp_op *op = NULL;
  PUSH(&a, bp_op_find("core::mul", &op));
  bp_tensor_meta m[1] = {{.struct_size = BP_TENSOR_META_STRUCT_SIZE}};
  PUSH(&a, bp_op_meta(op, &a.s, m, 1));
  for (int i = 0; i < a.nkeep; i++) bp_tensor_release(a.keep[i]);
  return a.st;
}

/* The same call from a new thread, whose first call registers its reader
 * record and makes its message buffer. */
static char thread_message[1024];

static void *thread_call(void *arg) {
  *(bp_status *)arg = unit_call_add();
  snprintf(thread_message, sizeof thread_message, "%s", bp_last_error());
  return NULL;
}

static bp_status unit_thread_call(void) {
  pthread_t t;
  bp_status st = BP_ERR_INTERNAL;
  if (pthread_create(&t, NULL, thread_call, &st) != 0) return BP_ERR_INTERNAL;
  pthread_join(t, NULL);
  if (st != BP_OK) snprintf(unit_message, sizeof unit_message, "%s", thread_message);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

static bool load_cpu(void) {
  bp_plugin *p = NULL;
  if (bp_plugin_load(cpu_plugin(), &p) == BP_OK) return true;
  tap_diag("loading %s: %s", cpu_plugin(), bp_last_error());
  ok(0);
  return false;
}

static void load_good(void) { sweep("bp_plugin_load(good.so) + unload", unit_load_good, 20); }

static void load_cpu_plugin(void) { sweep("bp_plugin_load(cpu.so) + unload", unit_load_cpu, 40); }

static void register_static(void) {
  void *h = dlopen(test_plugin("good"), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    tap_diag("dlopen: %s", dlerror());
    ok(0);
    return;
  }
  *(void **)&good_init = dlsym(h, "bp_plugin_init");
  ok(good_init != NULL);
  if (good_init) sweep("bp_plugin_register(good) + unload", unit_register, 20);
}

static void discover(void) {
  snprintf(discover_dir, sizeof discover_dir, "/tmp/bp-oom-XXXXXX");
  if (!mkdtemp(discover_dir)) {
    ok(0);
    return;
  }
  char link[128];
  snprintf(link, sizeof link, "%s/good.so", discover_dir);
  ok(realpath(test_plugin("good"), discover_target) != NULL);
  is_int(symlink(discover_target, link), 0);
  setenv("BP_PLUGIN_PATH", discover_dir, 1);
  sweep("bp_plugin_discover + unload", unit_discover, 20);
  unlink(link);
  rmdir(discover_dir);
}

static void introspect(void) {
  if (load_cpu()) sweep("bp_op_find/get_info/get_arg/get_kernel", unit_introspect, 0);
}

static void tensors(void) { sweep("bp_tensor_empty/_strided/as_strided/copy", unit_tensors, 4); }

static void dlpack(void) { sweep("bp_tensor_from_blob/to_dlpack/from_dlpack", unit_dlpack, 3); }

static void provider(void) {
  if (load_cpu()) sweep("bp_set_kernel_provider/enabled", unit_provider, 0);
}

static void calls(void) {
  if (!load_cpu()) return;
  bp_plugin *g = must_load("good");
  if (!g) return;
  sweep("bp_call_kw(core::add, alpha=)", unit_call_add, 3);
  sweep("bp_call(core::sum, dtype=float64)", unit_call_sum, 3);
  sweep("bp_call(core::matmul)", unit_call_matmul, 3);
  sweep("bp_call(core::cat)", unit_call_cat, 4);
  sweep("bp_call(core::sort)", unit_call_sort, 3);
  sweep("bp_call(core::softmax, dim 0)", unit_call_softmax, 2);
  sweep("bp_call(core::add.out)", unit_call_add_out, 3);
  sweep("bp_call(core::sub.out, empty out)", unit_call_sub_out, 4);
  sweep("bp_call(good::muladd), unboxed", unit_call_unboxed, 3);
  sweep("bp_op_meta(core::mul)", unit_meta, 2);
  sweep("bp_call(core::add) from a new thread", unit_thread_call, 3);
}

/* Unloading allocates nothing, so it cannot fail for memory. */
static void unload_allocates_nothing(void) {
  const char *paths[] = {test_plugin("good"), cpu_plugin()};
  for (int i = 0; i < 2; i++) {
    bp_plugin *p = NULL;
    is_status(bp_plugin_load(paths[i], &p), BP_OK);
    if (!p) continue;
    long first = bp__alloc_test_count();
    is_status(bp_plugin_unload(p), BP_OK);
    is_int(bp__alloc_test_count() - first, 0);
  }
}

/* A bp_describe() writer that counts the bytes. */
static int count_bytes(void *user, const char *text, size_t n) {
  (void)text;
  *(size_t *)user += n;
  return 0;
}

/* The entry points that only read, or write what the caller owns, make no
 * allocation at all: they cannot fail for memory. */
static void allocation_free(void) {
  if (!load_cpu()) return;
  const bp_op *op = must_find("core::add");
  bp_tensor *t = ramp(2, 3);
  if (!op || !t) return;
  for (int round = 0; round < 2; round++) {
    long first = bp__alloc_test_count();
    bp_value v[4];
    bp_stack s = BP_STACK_INIT(v, 4);
    bp_tensor *got = NULL;
    int64_t i64;
    bool b;
    int32_t count, dt;
    (void)bp_stack_push_tensor(&s, t);
    (void)bp_stack_push_int(&s, 3);
    (void)bp_stack_push_bool(&s, true);
    (void)bp_stack_get_tensor(&s, 0, &got); /* borrowed */
    (void)bp_stack_get_int(&s, 1, &i64);
    (void)bp_stack_get_bool(&s, 2, &b);
    (void)bp_stack_tag(&s, 0);
    bp_stack_pop(&s, 3);
    bp_tensor_release(bp_tensor_retain(t));
    (void)bp_tensor_get_view(t);
    (void)bp_tensor_numel(t);
    (void)bp_tensor_is_contiguous(t);
    (void)bp_live_tensor_count();
    (void)bp_device_count(BP_DEVICE_CPU, &count);
    (void)bp_dtype_from_name("float32", &dt);
    (void)bp_dtype_name(BP_FLOAT32);
    for (size_t k = 0; k < bp_plugin_count(); k++) {
      bp_plugin_info info = {.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE};
      (void)bp_plugin_get_info(bp_plugin_at(k), &info);
    }
    for (size_t k = 0; k < bp_op_count(); k++) {
      bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
      (void)bp_op_get_info(bp_op_at(k), &info);
    }
    (void)bp_op_find("core::nothing", &(const bp_op *){NULL});
    (void)bp_last_error();
    bp_clear_error();
    size_t text = 0, json = 0;
    bp_describe_options o = {BP_DESCRIBE_OPTIONS_STRUCT_SIZE, BP_DESCRIBE_JSON, 0, NULL, 0};
    is_status(bp_describe(NULL, count_bytes, &text), BP_OK);
    is_status(bp_describe(&o, count_bytes, &json), BP_OK);
    ok(text > 10000 && json > text);
    char esc[16];
    (void)bp_text_escape("\x1b[0m", esc, sizeof esc);
    (void)bp_plugin_origin_str(BP_ORIGIN_ENV);
    (void)bp_plugin_state_str(BP_PLUGIN_LOADED);
    (void)bp_kernel_kind_str(BP_KERNEL_BOXED);
    /* The first round may fill per-op caches; the second allocates none. */
    if (round == 1) is_int(bp__alloc_test_count() - first, 0);
  }
  bp_tensor_release(t);
}

int main(void) {
  bp__alloc_test_track(true); /* before the host's first allocation */
  /* The thread's message buffer is made at its first error and kept: make
   * it now, so that the sweeps' counts of blocks do not see it. */
  (void)bp_op_find("oom::nothing", &(const bp_op *){NULL});
  static const tap_case cases[] = {
      TAP_CASE(load_good), TAP_CASE(load_cpu_plugin), TAP_CASE(register_static),
      TAP_CASE(discover),  TAP_CASE(introspect),      TAP_CASE(tensors),
      TAP_CASE(dlpack),             TAP_CASE(provider),
      TAP_CASE(calls),     TAP_CASE(allocation_free),
      TAP_CASE(unload_allocates_nothing),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
