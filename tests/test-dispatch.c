/*
 * The dispatcher: unboxed calls through libffi and the fast path, device
 * selection, fallbacks, composites, disabled kernels, kernel errors, meta
 * functions, op queries, concurrent calls and allocation-free calls (the
 * binding of arguments is test-arguments.c).  Uses the "good" test plugin
 * (tests/plugins/good.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const float A[4] = {1, 2, 3, 4}, B[4] = {0.5f, -1, 2, 8};

/* Runs the unboxed kernels and checks their results bit for bit against the
 * same float arithmetic done here; used with and without the fast path. */
static void unboxed_results(int expect_kind) {
  must_load("good");
  const bp_op *muladd = must_find("good::muladd"), *scale = must_find("good::scale"),
              *split = must_find("good::split"), *fill = must_find("good::fill_");
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  const bp_op *uops[] = {muladd, scale, split, fill};
  for (int i = 0; i < 4; i++) {
    is_status(bp_op_get_kernel(uops[i], 0, &ki), BP_OK);
    is_int(ki.kind, expect_kind);
    is_int(ki.device_type, BP_DEVICE_CPU);
  }
  int64_t live = bp_live_tensor_count();
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 0.1);
  bp_tensor *r = call_for_tensor(muladd, &s);
  for (int i = 0; i < 4 && r; i++) {
    float want = A[i] * B[i] + (float)0.1;
    ok(memcmp(&f32data(r)[i], &want, 4) == 0);
  }
  bp_stack_release(&s);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_int(&s, -3);
  r = call_for_tensor(scale, &s);
  for (int i = 0; i < 4 && r; i++) is_double(f32data(r)[i], -3 * A[i], 0);
  bp_stack_release(&s);
  /* Every result is a whole value: tag, len 0 and the tensor, whichever
   * path called the kernel (the fast path once left len unset). */
  for (int i = 0; i < 4; i++) memset(&slots[i], 0xA5, sizeof slots[i]);
  s.top = 0;
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 0.1);
  is_status(bp_call(muladd, &s), BP_OK);
  is_int(slots[0].tag, BP_TAG_TENSOR);
  is_int(slots[0].len, 0);
  bp_stack_release(&s);
  /* split has more results than arguments (the general path): one
   * argument too many is refused, not cut off. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(split, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "takes 1 argument but 2 were given");
  bp_stack_push_tensor(&s, a);
  slots[1].len = 0xA5A5A5A5u;
  is_status(bp_call(split, &s), BP_OK);
  is_int(s.top, 2);
  is_int(slots[0].len, 0);
  is_int(slots[1].len, 0);
  bp_tensor *lo = NULL, *hi = NULL;
  bp_stack_get_tensor(&s, 0, &lo);
  bp_stack_get_tensor(&s, 1, &hi);
  ok(lo && hi && lo != hi);
  if (lo && hi) {
    is_double(f32data(lo)[1], 2, 0);
    is_double(f32data(hi)[0], 3, 0);
  }
  bp_stack_release(&s);
  /* In place: the result is the argument itself, as a new reference. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_float(&s, 7.5);
  r = call_for_tensor(fill, &s);
  ok(r == a);
  is_double(f32data(a)[3], 7.5, 0);
  bp_stack_release(&s);
  is_double(f32data(a)[0], 7.5, 0); /* a is still alive */
  bp_tensor_release(a);
  bp_tensor_release(b);
  is_int(bp_live_tensor_count(), live);
}

static void unboxed_fast_path(void) { unboxed_results(BP_KERNEL_UNBOXED_FAST); }

static void unboxed_libffi_path(void) {
  setenv("BP_DISABLE_FASTPATH", "1", 1);
  unboxed_results(BP_KERNEL_UNBOXED);
}

/* A tensor on a vendor device of the good plugin, filled from v. */
static bp_tensor *on_device(const char *type_name, int32_t index, const float *v, int64_t n) {
  int32_t type = BP_DEVICE_INVALID;
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 64; t++) {
    const char *name = bp_device_type_name(t);
    if (name && strcmp(name, type_name) == 0) type = t;
  }
  bp_tensor *x = NULL;
  if (bp_tensor_empty(bp_device_make(type, index), BP_FLOAT32, 1, &n, &x) != BP_OK) {
    tap_diag("on_device(%s): %s", type_name, bp_last_error());
    return NULL;
  }
  memcpy(bp_tensor_get_view(x)->data, v, (size_t)n * 4);
  return x;
}

static void dispatch_by_device(void) {
  must_load("good");
  const bp_op *add = must_find("good::add"), *muladd = must_find("good::muladd");
  bp_tensor *ga = on_device("gooddev", 0, A, 4), *gb = on_device("gooddev", 0, B, 4);
  bp_tensor *g1 = on_device("gooddev", 1, B, 4), *fa = on_device("fbdev", 0, A, 4);
  bp_tensor *ca = f32(A, 4);
  ok(ga && gb && g1 && fa && ca);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  /* gooddev has its own add kernel; the result lives on gooddev:0. */
  bp_stack_push_tensor(&s, ga);
  bp_stack_push_tensor(&s, gb);
  bp_tensor *r = call_for_tensor(add, &s);
  if (r) {
    is_int(bp_tensor_get_view(r)->device.type, bp_tensor_get_view(ga)->device.type);
    is_double(f32data(r)[3], 12, 0);
  }
  bp_stack_release(&s);
  /* No muladd kernel on gooddev, no fallback there: the error lists where
   * kernels exist. */
  bp_stack_push_tensor(&s, ga);
  bp_stack_push_tensor(&s, gb);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(muladd, &s), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "good::muladd: no kernel for gooddev:0; kernels exist for: cpu");
  /* fbdev has a fallback, which receives the op. */
  bp_stack_push_tensor(&s, fa);
  bp_stack_push_tensor(&s, fa);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(muladd, &s), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "fbdev fallback: good::muladd with 3 arguments");
  /* Mixed devices are refused, naming both arguments. */
  bp_stack_push_tensor(&s, ca);
  bp_stack_push_tensor(&s, gb);
  is_status(bp_call(add, &s), BP_ERR_DEVICE);
  is_str(bp_last_error(), "good::add: argument #1 'b' is on gooddev:0 but argument #0 'a' is on "
                          "cpu:0; the op does not allow mixed devices");
  bp_stack_push_tensor(&s, ga);
  bp_stack_push_tensor(&s, g1);
  is_status(bp_call(add, &s), BP_ERR_DEVICE);
  has_str(bp_last_error(), "is on gooddev:1 but argument #0 'a' is on gooddev:0");
  bp_tensor *all[] = {ga, gb, g1, fa, ca};
  for (int i = 0; i < 5; i++) bp_tensor_release(all[i]);
}

static void composite_kernels(void) {
  must_load("good");
  const bp_op *twice = must_find("good::twice");
  bp_tensor *ca = f32(A, 4), *ga = on_device("gooddev", 0, A, 4);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  /* The composite calls good::add through the host, on the arguments'
   * device. */
  bp_tensor *dev_tensors[] = {ca, ga};
  for (int d = 0; d < 2; d++) {
    bp_stack_push_tensor(&s, dev_tensors[d]);
    bp_tensor *r = call_for_tensor(twice, &s);
    if (r) {
      is_int(bp_tensor_get_view(r)->device.type, bp_tensor_get_view(dev_tensors[d])->device.type);
      for (int i = 0; i < 4; i++) is_double(f32data(r)[i], 2 * A[i], 0);
    }
    bp_stack_release(&s);
  }
  bp_op_info info;
  info.struct_size = BP_OP_INFO_STRUCT_SIZE;
  is_status(bp_op_get_info(twice, &info), BP_OK);
  is_int(info.has_composite, 1);
  is_int(info.nkernels, 0);
  bp_tensor_release(ca);
  bp_tensor_release(ga);
}

static void disabled_kernels_fall_through(void) {
  must_load("good");
  const bp_op *add = must_find("good::add"), *twice = must_find("good::twice");
  bp_tensor *a = f32(A, 4);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  is_status(bp_set_kernel_enabled(add, BP_DEVICE_CPU, false), BP_OK);
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  is_status(bp_op_get_kernel(add, 0, &ki), BP_OK);
  is_int(ki.enabled, 0);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(add, &s), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "good::add: no kernel for cpu:0 (plugin 'good' has one, disabled by "
                         "bp_set_kernel_enabled); kernels exist for: gooddev");
  /* The composite's inner call fails the same way, and says so, under the
   * name of the op called. */
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(twice, &s), BP_ERR_NOT_FOUND);
  has_str(bp_last_error(), "good::add: no kernel for cpu:0");
  is_int(strncmp(bp_last_error(), "good::twice: ", 13), 0);
  is_status(bp_set_kernel_enabled(add, BP_DEVICE_CPU, true), BP_OK);
  bp_stack_push_tensor(&s, a);
  bp_tensor *r = call_for_tensor(twice, &s);
  if (r) is_double(f32data(r)[1], 4, 0);
  bp_stack_release(&s);
  is_status(bp_set_kernel_enabled(add, BP_DEVICE_CUDA, false), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "bp_set_kernel_enabled: op 'good::add' has no kernel for cuda");
  is_status(bp_set_kernel_enabled(NULL, BP_DEVICE_CPU, false), BP_ERR_INVALID_ARGUMENT);
  bp_tensor_release(a);
}

static void kernel_errors(void) {
  must_load("good");
  int64_t live = bp_live_tensor_count();
  bp_tensor *a = f32(A, 4);
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(must_find("good::fail"), &s), BP_ERR_SHAPE);
  is_str(bp_last_error(), "good::fail: argument 'a': expected 3 dims, got 1");
  is_int(s.top, 0);
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(must_find("good::fail_silent"), &s), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "good::fail_silent: the kernel (plugin 'good') failed with "
                          "BP_ERR_UNSUPPORTED and gave no message");
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(must_find("good::bad_result"), &s), BP_ERR_INTERNAL);
  is_str(bp_last_error(), "good::bad_result: the kernel (plugin 'good') returned int for result "
                          "#0, expected Tensor");
  bp_stack_push_tensor(&s, a);
  is_status(bp_call(must_find("good::weird_status"), &s), BP_ERR_INTERNAL);
  has_str(bp_last_error(), "good::weird_status returned status 977, which is not a bp_status");
  is_int(s.top, 0);
  bp_tensor_release(a);
  is_int(bp_live_tensor_count(), live);
}

static void meta_functions(void) {
  must_load("good");
  const bp_op *add = must_find("good::add");
  int64_t sizes[2] = {2, 3};
  bp_tensor *a = NULL, *b = NULL;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &a);
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &b);
  memset(bp_tensor_get_view(a)->data, 0, 24);
  memset(bp_tensor_get_view(b)->data, 0, 24);
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  is_status(bp_op_meta(add, &s, &m, 1), BP_OK);
  is_int(s.top, 2); /* the stack is left alone */
  bp_tensor *r = call_for_tensor(add, &s);
  if (r) {
    const bp_tensor_view *v = bp_tensor_get_view(r);
    is_int(m.dtype, v->dtype);
    is_int(m.ndim, v->ndim);
    is_int(m.device.type, v->device.type);
    for (int d = 0; d < 2; d++) {
      is_int(m.sizes[d], v->sizes[d]);
      is_int(m.strides[d], v->strides[d]);
    }
  }
  bp_stack_release(&s);
  bp_stack_push_tensor(&s, a);
  is_status(bp_op_meta(must_find("good::twice"), &s, &m, 1), BP_ERR_UNSUPPORTED);
  is_str(bp_last_error(), "good::twice: the op has no meta function");
  bp_stack_push_tensor(&s, b);
  m.struct_size = 8;
  is_status(bp_op_meta(add, &s, &m, 1), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "outs[0].struct_size is 8");
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  is_status(bp_op_meta(add, &s, &m, 0), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "outs has 0 entries for 1 results");
  bp_stack_pop(&s, 1);
  bp_stack_push_int(&s, 1);
  is_status(bp_op_meta(add, &s, &m, 1), BP_ERR_TYPE);
  is_str(bp_last_error(), "good::add: argument #1 'b': expected Tensor, got int");
  bp_tensor_release(a);
  bp_tensor_release(b);
}

static void op_queries(void) {
  must_load("good");
  const bp_op *add = must_find("good::add");
  bp_op_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = BP_OP_INFO_STRUCT_SIZE;
  is_status(bp_op_get_info(add, &info), BP_OK);
  is_str(info.name, "good::add");
  is_str(info.schema, "good::add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor");
  is_str(info.owner, "good");
  is_int(info.defined, 1);
  is_int(info.has_meta, 1);
  is_int(info.has_composite, 0);
  is_int(info.nkernels, 2);
  bp_kernel_info ki;
  ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
  is_status(bp_op_get_kernel(add, 0, &ki), BP_OK);
  is_int(ki.device_type, BP_DEVICE_CPU);
  is_int(ki.kind, BP_KERNEL_BOXED);
  is_int(ki.enabled, 1);
  is_str(ki.plugin, "good");
  ok(ki.dtypes == NULL);
  is_status(bp_op_get_kernel(add, 1, &ki), BP_OK);
  is_str(bp_device_type_name(ki.device_type), "gooddev");
  is_status(bp_op_get_kernel(add, 2, &ki), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "bp_op_get_kernel: op 'good::add' has 2 kernels, index 2 is past them");
  /* The overload is part of the name. */
  const bp_op *sb = must_find("good::sink.boxed");
  is_status(bp_op_get_info(sb, &info), BP_OK);
  is_str(info.name, "good::sink.boxed");
  size_t n = bp_op_count();
  cmp_ok(n, ">=", 12);
  size_t seen_add = 0;
  for (size_t i = 0; i < n; i++) {
    const bp_op *op = bp_op_at(i);
    is_status(bp_op_get_info(op, &info), BP_OK);
    if (!strcmp(info.name, "good::add")) seen_add++;
  }
  is_int(seen_add, 1);
  ok(bp_op_at(n) == NULL);
  const bp_op *op;
  is_status(bp_op_find("add", &op), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "bp_op_find: 'add' has no namespace (write 'ns::add')");
  is_status(bp_op_find("good::nope", &op), BP_ERR_NOT_FOUND);
  is_str(bp_last_error(), "bp_op_find: no op 'good::nope' is defined");
  is_status(bp_op_find(NULL, &op), BP_ERR_INVALID_ARGUMENT);
  info.struct_size = 4;
  is_status(bp_op_get_info(add, &info), BP_ERR_INVALID_ARGUMENT);
}

typedef struct worker {
  const bp_op *op;
  bp_tensor *a, *b;
  int id, bad, done;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 2000; i++) {
    bp_value slots[3];
    bp_stack s = BP_STACK_INIT(slots, 3);
    bp_stack_push_tensor(&s, w->a);
    bp_stack_push_tensor(&s, w->b);
    bp_stack_push_float(&s, (double)(w->id * 10000 + i));
    if (bp_call(w->op, &s) != BP_OK) {
      w->bad++;
      continue;
    }
    const float *r = f32data(slots[0].u.tensor);
    for (int k = 0; k < 4; k++) w->bad += r[k] != A[k] * B[k] + (float)(w->id * 10000 + i);
    bp_stack_release(&s);
    w->done++;
  }
  return NULL;
}

static void threads_call_concurrently(void) {
  must_load("good");
  int64_t live = bp_live_tensor_count();
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  worker w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){must_find("good::muladd"), a, b, i, 0, 0};
    is_int(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    is_int(w[i].bad, 0);
    is_int(w[i].done, 2000);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  is_int(bp_live_tensor_count(), live);
}

/*
 * Counting allocations: this executable's malloc family wraps glibc's, so
 * every allocation libbackplane makes on this thread is counted while
 * `counting` is set.  AddressSanitizer and ThreadSanitizer own malloc
 * themselves, so the check is skipped there.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static _Thread_local int counting;
static long allocations;
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void *aligned_alloc(size_t a, size_t n);
int posix_memalign(void **out, size_t a, size_t n);
void *malloc(size_t n) {
  allocations += counting;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  allocations += counting;
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  allocations += counting;
  return __libc_realloc(p, n);
}
void *aligned_alloc(size_t a, size_t n) {
  allocations += counting;
  return __libc_memalign(a, n);
}
int posix_memalign(void **out, size_t a, size_t n) {
  allocations += counting;
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12;
}
#endif

static void calls_do_not_allocate(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  tap_skip("the sanitizer owns malloc, so allocations cannot be counted");
#else
  must_load("good");
  const bp_op *first = must_find("good::first"), *fill = must_find("good::fill_"),
              *add = must_find("good::add");
  bp_tensor *a = f32(A, 4), *b = f32(B, 4);
  bp_value slots[4];
  bp_stack s = BP_STACK_INIT(slots, 4);
  /* Warm up: the first call on a thread registers its reader record. */
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, 1.0);
  is_status(bp_call(first, &s), BP_OK);
  bp_stack_release(&s);
  const char *alpha[] = {"alpha"};
  counting = 1;
  for (int i = 0; i < 1000; i++) {
    /* Boxed, fast path. */
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_float(&s, 1.0);
    bp_call(first, &s);
    bp_tensor_release(slots[0].u.tensor);
    s.top = 0;
    /* Boxed, general path: an int converted to a float. */
    bp_stack_push_tensor(&s, a);
    bp_stack_push_tensor(&s, b);
    bp_stack_push_int(&s, 1);
    bp_call(first, &s);
    bp_tensor_release(slots[0].u.tensor);
    s.top = 0;
    /* Unboxed through a trampoline. */
    bp_stack_push_tensor(&s, a);
    bp_stack_push_float(&s, 2.0);
    bp_call(fill, &s);
    bp_tensor_release(slots[0].u.tensor);
    s.top = 0;
    /* Keyword arguments, and an error with its message. */
    bp_stack_push_tensor(&s, a);
    bp_stack_push_float(&s, 2.0);
    bp_call_kw(add, &s, alpha, 1);
    s.top = 0;
  }
  counting = 0;
  is_int(allocations, 0);
  has_str(bp_last_error(), "good::add: missing argument #1 'b'");
  is_double(f32data(a)[0], 2.0, 0);
  bp_tensor_release(a);
  bp_tensor_release(b);
#endif
}

static void silent_device_failures_get_a_message(void) {
  must_load("good");
  int32_t type = BP_DEVICE_INVALID;
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 64; t++) {
    const char *name = bp_device_type_name(t);
    if (name && strcmp(name, "mutedev") == 0) type = t;
  }
  /* Leave an unrelated error behind first: it must not be reported. */
  const bp_op *op;
  bp_op_find("good::nope", &op);
  int64_t n = 4;
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(bp_device_make(type, 0), BP_FLOAT32, 1, &n, &t), BP_ERR_OUT_OF_MEMORY);
  is_str(bp_last_error(), "mutedev: alloc(16 bytes) on device 0 failed with BP_ERR_OUT_OF_MEMORY "
                          "and gave no message");
  ok(t == NULL);
  is_int(bp_live_tensor_count(), 0);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(unboxed_fast_path),
      TAP_CASE(unboxed_libffi_path),
      TAP_CASE(dispatch_by_device),
      TAP_CASE(composite_kernels),
      TAP_CASE(disabled_kernels_fall_through),
      TAP_CASE(kernel_errors),
      TAP_CASE(meta_functions),
      TAP_CASE(op_queries),
      TAP_CASE(threads_call_concurrently),
      TAP_CASE(calls_do_not_allocate),
      TAP_CASE(silent_device_failures_get_a_message),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
