/*
 * tests/test-concurrency.c - calls from several threads while plugins load
 * and unload: nothing crashes, no call is lost, and a plugin is never
 * closed while its code still runs.
 *
 * Calls take no lock; unload unpublishes a plugin's registrations, waits
 * for a grace period and only then runs its teardown() and dlclose()s it.
 * The vendor_a plugin (tests/plugins/vendor.c) counts the calls running in
 * its code and the device memory it has handed out, and aborts in
 * teardown() if either is nonzero, so a premature unload shows up as a
 * crash of the case rather than as silent luck.
 *
 * Worker threads only count what they see; the main thread asserts after
 * joining them, because the assertion macros are not thread-safe.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "../tools/clock.h"

#define NTHREADS 4
#define GOOD_CALLS 20000  /* per thread, at least */
#define LOAD_CYCLES 120

static const bp_op *muladd_op, *offset_op, *slow_op;
static int32_t npu;  /* vendor_a's device type; the same code on every reload */
static bool with_device;  /* workers also use tensors on npu_a */
static atomic_bool stop;
static atomic_long seen_ok, seen_not_found;

typedef struct worker {
  pthread_t tid;
  int id;
  long good_calls, good_ok;
  long vendor_calls, vendor_ok, vendor_not_found;
  long vendor_device;  /* npu_a unavailable: tensor creation or the kernel */
  long unexpected;
  char first_unexpected[512];
} worker;

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void unexpected(worker *w, const char *what, bp_status st) {
  if (w->unexpected++ == 0)
    snprintf(w->first_unexpected, sizeof w->first_unexpected, "%s: %s: '%s'", what,
             bp_status_str(st), bp_last_error());
}

/* Whether t is a 1-D float32 tensor on device type `dev` equal to
 * x[i] * y[i] + c (y NULL: x[i] + c), exactly: the values are small
 * integers, which float32 represents exactly. */
static bool result_is(const bp_tensor *t, int32_t dev, const float *x, const float *y, float c,
                      int64_t n) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if (!v || v->device.type != dev || v->dtype != BP_FLOAT32 || v->numel != n) return false;
  const float *z = v->data;
  for (int64_t i = 0; i < n; i++)
    if (z[i] != (y ? x[i] * y[i] : x[i]) + c) return false;
  return true;
}

/* One call of a Tensor -> Tensor vendor op; classifies the outcome. */
static void vendor_call(worker *w, const bp_op *op, bp_tensor *a, int32_t dev, const float *x,
                        float add, int64_t n) {
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor(&s, a);
  bp_status st = bp_call(op, &s);
  w->vendor_calls++;
  if (st == BP_OK) {
    bp_tensor *r = NULL;
    if (s.top == 1 && bp_stack_get_tensor(&s, 0, &r) == BP_OK &&
        result_is(r, dev, x, NULL, add, n)) {
      w->vendor_ok++;
      atomic_fetch_add(&seen_ok, 1);
    } else {
      unexpected(w, "vendor_a call returned a wrong result", st);
    }
    bp_stack_release(&s);
  } else if (st == BP_ERR_NOT_FOUND && strstr(bp_last_error(), "vendor_a::")) {
    /* Unloaded (the op is undefined) or half-loaded (no kernel yet). */
    w->vendor_not_found++;
    atomic_fetch_add(&seen_not_found, 1);
  } else if (st == BP_ERR_DEVICE && dev == npu &&
             strstr(bp_last_error(), "npu_a is not registered")) {
    /* The kernel could not allocate its result: the device is going. */
    w->vendor_device++;
  } else {
    unexpected(w, "vendor_a call", st);
  }
}

/* One call of good::muladd(a, b, c) = a * b + c, whose result must be exact. */
static void good_call(worker *w, bp_tensor *a, bp_tensor *b, const float *x, const float *y,
                      int64_t n, float c) {
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&s, a);
  bp_stack_push_tensor(&s, b);
  bp_stack_push_float(&s, c);
  bp_status st = bp_call(muladd_op, &s);
  w->good_calls++;
  bp_tensor *r = NULL;
  if (st == BP_OK && s.top == 1 && bp_stack_get_tensor(&s, 0, &r) == BP_OK &&
      result_is(r, BP_DEVICE_CPU, x, y, c, n))
    w->good_ok++;
  else
    unexpected(w, "good::muladd", st);
  if (st == BP_OK) bp_stack_release(&s);
}

/* ------------------------------------------------------------------------ */
/* Cases 1 and 2: good:: calls never fail while vendor_a comes and goes     */
/* ------------------------------------------------------------------------ */

static void *mixed_worker(void *arg) {
  worker *w = arg;
  const int64_t n = 4;
  float x[4], y[4];
  for (int j = 0; j < 4; j++) {
    x[j] = (float)(w->id + j);
    y[j] = (float)(j - 2);
  }
  bp_tensor *a = f32(x, n), *b = f32(y, n);
  if (!a || !b) {
    unexpected(w, "creating the worker's tensors", bp_last_status());
    return NULL;
  }
  for (long i = 0; i < GOOD_CALLS || !atomic_load(&stop); i++) {
    good_call(w, a, b, x, y, n, (float)(i % 1000));

    /* vendor_a::offset on the CPU: a + 1, when vendor_a is there. */
    if (i % 4 == 0) vendor_call(w, offset_op, a, BP_DEVICE_CPU, x, 1.0f, n);

    /* The same on vendor_a's own device: a + 100.  Creating the tensor
     * fails while the device type is not registered; holding it makes
     * unload busy. */
    if (with_device && i % 16 == 0) {
      bp_tensor *t = NULL;
      bp_status st = bp_tensor_empty(bp_device_make(npu, 0), BP_FLOAT32, 1, &n, &t);
      if (st == BP_OK) {
        memcpy(bp_tensor_get_view(t)->data, x, sizeof x);
        vendor_call(w, offset_op, t, npu, x, 100.0f, n);
        bp_tensor_release(t);
      } else if (st == BP_ERR_DEVICE && strstr(bp_last_error(), "npu_a is not registered")) {
        w->vendor_device++;
      } else {
        unexpected(w, "bp_tensor_empty on npu_a", st);
      }
    }
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  return NULL;
}

/* Unloads p, retrying while tensors on its device (held briefly by the
 * workers) keep it busy.  Returns the final status. */
static bp_status unload_retrying(bp_plugin *p, long *busy, char *why, size_t why_len) {
  double deadline = now() + 10;
  for (;;) {
    bp_status st = bp_plugin_unload(p);
    if (st != BP_ERR_BUSY || now() > deadline) {
      if (st) snprintf(why, why_len, "%s", bp_last_error());
      return st;
    }
    if (!strstr(bp_last_error(), "npu_a")) {
      snprintf(why, why_len, "BUSY without naming the device: %s", bp_last_error());
      return BP_ERR_INTERNAL;
    }
    (*busy)++;
    sleep_us(20);
  }
}

static void run_load_unload(void) {
  if (!must_load("good")) return;
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  muladd_op = must_find("good::muladd");
  offset_op = must_find("vendor_a::offset");
  npu = BP_DEVICE_INVALID;
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 64; t++)
    if (bp_device_type_name(t) && strcmp(bp_device_type_name(t), "npu_a") == 0) npu = t;
  cmp_ok(npu, ">=", BP_DEVICE_DYNAMIC_FIRST);
  int64_t baseline = bp_live_tensor_count();

  worker w[NTHREADS];
  memset(w, 0, sizeof w);
  atomic_store(&stop, false);
  for (int i = 0; i < NTHREADS; i++) {
    w[i].id = i;
    ok(pthread_create(&w[i].tid, NULL, mixed_worker, &w[i]) == 0);
  }

  long unloads = 0, loads = 0, busy = 0;
  char why[512] = "";
  bp_status bad = BP_OK;
  for (int cycle = 0; cycle < LOAD_CYCLES && !bad; cycle++) {
    bp_status st = unload_retrying(va, &busy, why, sizeof why);
    if (st) {
      bad = st;
      break;
    }
    unloads++;
    bp_plugin *again = NULL;
    st = bp_plugin_load(test_plugin("vendor_a"), &again);
    if (st || again != va) {
      snprintf(why, sizeof why, "reload: %s: %s", bp_status_str(st), bp_last_error());
      bad = st ? st : BP_ERR_INTERNAL;
      break;
    }
    loads++;
  }
  atomic_store(&stop, true);
  for (int i = 0; i < NTHREADS; i++) pthread_join(w[i].tid, NULL);

  is_status(bad, BP_OK);
  if (bad) tap_diag("load/unload cycle failed: %s", why);
  is_int(unloads, LOAD_CYCLES);
  is_int(loads, LOAD_CYCLES);
  tap_diag("unload was busy %ld times", busy);
  long vendor_ok = 0, vendor_calls = 0;
  for (int i = 0; i < NTHREADS; i++) {
    cmp_ok(w[i].good_calls, ">=", GOOD_CALLS);
    is_int(w[i].good_ok, w[i].good_calls); /* no good:: call lost or wrong */
    is_int(w[i].unexpected, 0);
    if (w[i].unexpected) tap_diag("thread %d, first: %s", i, w[i].first_unexpected);
    vendor_ok += w[i].vendor_ok;
    vendor_calls += w[i].vendor_calls;
    tap_diag("thread %d: %ld good calls; vendor_a: %ld calls, %ld ok, %ld not found, %ld device",
             i, w[i].good_calls, w[i].vendor_calls, w[i].vendor_ok, w[i].vendor_not_found,
             w[i].vendor_device);
  }
  cmp_ok(vendor_ok, ">", 0);
  cmp_ok(vendor_calls, ">", 0);
  is_int(bp_live_tensor_count(), baseline);
  /* Each cycle ends with a load: vendor_a is loaded now. */
  is_status(bp_plugin_unload(va), BP_OK);
}

/* Workers call good::muladd and, through a handle resolved once,
 * vendor_a::offset on CPU tensors, while the main thread unloads and
 * reloads vendor_a. */
static void calls_survive_load_unload(void) {
  with_device = false;
  run_load_unload();
}

/* The same, with workers also creating tensors on npu_a, calling
 * vendor_a::offset on them (its kernel allocates its result there too) and
 * releasing them, all while npu_a is registered and unregistered.  Every
 * allocation and free must reach a registered device interface. */
static void device_tensors_survive_load_unload(void) {
  with_device = true;
  run_load_unload();
}

/* ------------------------------------------------------------------------ */
/* Cases 3 and 4: unload waits for calls in flight                         */
/* ------------------------------------------------------------------------ */

/* vendor_a::slow sleeps ~100 us inside the plugin before it answers. */
static void slow_step(worker *w, bp_tensor *a, const float *x) {
  vendor_call(w, slow_op, a, BP_DEVICE_CPU, x, 1.0f, 2);
}

/* bp_op_meta on vendor_a::offset runs the plugin's meta function: the
 * result is a float32 CPU tensor shaped like a, or the op is gone. */
static void meta_step(worker *w, bp_tensor *a, const float *x) {
  (void)x;
  bp_value slots[1];
  bp_stack s = BP_STACK_INIT(slots, 1);
  bp_stack_push_tensor(&s, a);
  bp_tensor_meta out;
  memset(&out, 0, sizeof out);
  out.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = bp_op_meta(offset_op, &s, &out, 1);
  w->vendor_calls++;
  if (st == BP_OK && out.device.type == BP_DEVICE_CPU && out.dtype == BP_FLOAT32 &&
      out.ndim == 1 && out.sizes[0] == 2 && out.strides[0] == 1) {
    w->vendor_ok++;
    atomic_fetch_add(&seen_ok, 1);
  } else if (st == BP_ERR_NOT_FOUND && strstr(bp_last_error(), "vendor_a::offset")) {
    w->vendor_not_found++;
    atomic_fetch_add(&seen_not_found, 1);
  } else {
    unexpected(w, st ? "bp_op_meta(vendor_a::offset)" : "bp_op_meta gave wrong metadata", st);
  }
}

static void (*step)(worker *, bp_tensor *, const float *);

static void *step_worker(void *arg) {
  worker *w = arg;
  float x[2] = {(float)w->id, 10};
  bp_tensor *a = f32(x, 2);
  if (!a) {
    unexpected(w, "creating the worker's tensor", bp_last_status());
    return NULL;
  }
  /* While the op is gone, back off instead of spinning, so that the
   * unloading thread gets the CPU on a busy machine. */
  while (!atomic_load(&stop)) {
    long before = w->vendor_not_found;
    step(w, a, x);
    if (w->vendor_not_found != before) sleep_us(50);
  }
  bp_tensor_release(a);
  return NULL;
}

/* Runs `step` in the workers while the main thread unloads and reloads
 * vendor_a 100 times (or for 5 s on a slow machine, at least 10 times),
 * and until calls have been seen both succeeding and finding the op gone,
 * i.e. the unloads really overlapped calls.  Most unloads happen while
 * some thread is inside the plugin; vendor_a's teardown aborts if one
 * still is. */
static void run_steps_while_cycling(void) {
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  slow_op = must_find("vendor_a::slow");
  offset_op = must_find("vendor_a::offset");
  npu = BP_DEVICE_INVALID;
  int64_t baseline = bp_live_tensor_count();
  atomic_store(&seen_ok, 0);
  atomic_store(&seen_not_found, 0);

  worker w[NTHREADS];
  memset(w, 0, sizeof w);
  atomic_store(&stop, false);
  for (int i = 0; i < NTHREADS; i++) {
    w[i].id = i;
    ok(pthread_create(&w[i].tid, NULL, step_worker, &w[i]) == 0);
  }

  long cycles = 0;
  bp_status bad = BP_OK;
  char why[512] = "";
  double deadline = now() + 5;
  while (cycles < 100 || atomic_load(&seen_ok) == 0 || atomic_load(&seen_not_found) == 0) {
    if (now() > deadline && cycles >= 10) break;
    bp_status st = bp_plugin_unload(va);
    if (!st) st = bp_plugin_load(test_plugin("vendor_a"), NULL);
    if (st) {
      bad = st;
      snprintf(why, sizeof why, "%s", bp_last_error());
      break;
    }
    cycles++;
    sleep_us(300); /* let the workers get back into the plugin */
  }
  atomic_store(&stop, true);
  for (int i = 0; i < NTHREADS; i++) pthread_join(w[i].tid, NULL);

  is_status(bad, BP_OK);
  if (bad) tap_diag("cycle %ld failed: %s", cycles, why);
  cmp_ok(cycles, ">=", 10);
  cmp_ok(atomic_load(&seen_ok), ">", 0);
  cmp_ok(atomic_load(&seen_not_found), ">", 0);
  for (int i = 0; i < NTHREADS; i++) {
    is_int(w[i].unexpected, 0);
    if (w[i].unexpected) tap_diag("thread %d, first: %s", i, w[i].first_unexpected);
    is_int(w[i].vendor_device, 0);
  }
  tap_diag("%ld unload/load cycles; %ld calls ok, %ld not found", cycles,
           (long)atomic_load(&seen_ok), (long)atomic_load(&seen_not_found));
  is_int(bp_live_tensor_count(), baseline);
  is_status(bp_plugin_unload(va), BP_OK);
}

static void unload_waits_for_calls_in_flight(void) {
  step = slow_step;
  run_steps_while_cycling();
}

/* The same for bp_op_meta: a meta function is plugin code too, and an op
 * whose plugin is going must answer "not found", never "no meta
 * function". */
static void meta_survives_load_unload(void) {
  step = meta_step;
  run_steps_while_cycling();
}

/* ------------------------------------------------------------------------ */
/* Cases 5 and 6: unload while the device's alloc() or free() runs          */
/* ------------------------------------------------------------------------ */

typedef struct device_job {
  bp_tensor *t;         /* to release, or the created tensor */
  int32_t type;
  bp_status st;
  atomic_bool done;
} device_job;

static void *release_job(void *arg) {
  device_job *j = arg;
  bp_tensor_release(j->t);
  atomic_store(&j->done, true);
  return NULL;
}

static void *create_job(void *arg) {
  device_job *j = arg;
  int64_t n = 4;
  j->st = bp_tensor_empty(bp_device_make(j->type, 0), BP_FLOAT32, 1, &n, &j->t);
  atomic_store(&j->done, true);
  return NULL;
}

static int32_t npu_a_code(void) {
  for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 64; t++)
    if (bp_device_type_name(t) && strcmp(bp_device_type_name(t), "npu_a") == 0) return t;
  return BP_DEVICE_INVALID;
}

/* Waits until the process's live tensor count is `want`: the host changes
 * it before it calls the device's alloc() or free(). */
/* The pipe on which vendor_a says that a delayed device call is inside
 * it (VENDOR_ENTERED_FD): set up before the call starts, read once it
 * has, so that no case depends on how soon a thread gets a CPU. */
static int entered[2] = {-1, -1};

static bool expect_entry(void) {
  if (pipe(entered) != 0) return false;
  char fd[16];
  snprintf(fd, sizeof fd, "%d", entered[1]);
  return setenv("VENDOR_ENTERED_FD", fd, 1) == 0;
}

/* Waits until the delayed call is inside vendor_a. */
static bool wait_entry(void) {
  char b;
  ssize_t r;
  while ((r = read(entered[0], &b, 1)) < 0 && errno == EINTR) {
  }
  unsetenv("VENDOR_ENTERED_FD");
  close(entered[0]);
  close(entered[1]);
  entered[0] = entered[1] = -1;
  return r == 1;
}

static bool wait_live_count(int64_t want) {
  double deadline = now() + 10;
  while (bp_live_tensor_count() != want) {
    if (now() > deadline) return false;
    sleep_us(100);
  }
  return true;
}

/* The last tensor on npu_a is being released, and its memory is still in
 * the device's free() (which sleeps 500 ms), when the main thread unloads
 * vendor_a.  The tensor is not fully gone and a call into the plugin is in
 * flight: unload must either refuse (BUSY) or wait for free() to return;
 * running teardown or dlclose() first makes vendor_a abort, or crashes. */
static void unload_during_device_free(void) {
  ok(setenv("VENDOR_FREE_DELAY_US", "500000", 1) == 0);
  ok(expect_entry());
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  device_job j = {.type = npu_a_code()};
  int64_t n = 4;
  is_status(bp_tensor_empty(bp_device_make(j.type, 0), BP_FLOAT32, 1, &n, &j.t), BP_OK);
  if (!j.t) return;
  pthread_t tid;
  ok(pthread_create(&tid, NULL, release_job, &j) == 0);
  ok(wait_live_count(0)); /* the release has begun */
  ok(wait_entry());       /* and is inside vendor_a's free() */
  ok(!atomic_load(&j.done));
  bp_status st = bp_plugin_unload(va);
  if (st == BP_ERR_BUSY) {
    has_str(bp_last_error(), "npu_a");
  } else {
    is_status(st, BP_OK);
    /* An unload that succeeds must have waited for free() to return. */
  }
  pthread_join(tid, NULL);
  ok(atomic_load(&j.done));
  if (st == BP_ERR_BUSY) is_status(bp_plugin_unload(va), BP_OK);
  is_int(bp_live_tensor_count(), 0);
}

/* The same for a tensor being created: its memory is in the device's
 * alloc() (500 ms) when the main thread unloads.  The tensor will be
 * alive, so unload must refuse, and the tensor must come out usable. */
static void unload_during_device_alloc(void) {
  ok(setenv("VENDOR_ALLOC_DELAY_US", "500000", 1) == 0);
  ok(expect_entry());
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  device_job j = {.type = npu_a_code()};
  pthread_t tid;
  ok(pthread_create(&tid, NULL, create_job, &j) == 0);
  ok(wait_live_count(1)); /* the creation has begun */
  ok(wait_entry());       /* and is inside vendor_a's alloc() */
  ok(!atomic_load(&j.done));
  is_status(bp_plugin_unload(va), BP_ERR_BUSY);
  has_str(bp_last_error(), "npu_a");
  has_str(bp_last_error(), "1 tensor");
  pthread_join(tid, NULL);
  is_status(j.st, BP_OK);
  ok(j.t != NULL);
  if (j.t) {
    is_int(bp_tensor_get_view(j.t)->device.type, j.type);
    float *d = bp_tensor_get_view(j.t)->data;
    d[0] = 1;
    d[3] = 4;
    is_double(d[0] + d[3], 5, 0);
  }
  ok(unsetenv("VENDOR_ALLOC_DELAY_US") == 0);
  bp_tensor_release(j.t);
  is_status(bp_plugin_unload(va), BP_OK);
  is_int(bp_live_tensor_count(), 0);
}

static void *sync_job(void *arg) {
  device_job *j = arg;
  j->st = bp_device_synchronize(bp_device_make(j->type, 0));
  atomic_store(&j->done, true);
  return NULL;
}

/* A device call that is not a tensor's (here synchronize(), which sleeps
 * 300 ms) is plugin code too: an unload while it runs must wait for it to
 * return before teardown() and dlclose(); otherwise vendor_a aborts, or
 * the call returns into unmapped code. */
static void unload_during_device_synchronize(void) {
  ok(setenv("VENDOR_SYNC_DELAY_US", "300000", 1) == 0);
  ok(expect_entry());
  bp_plugin *va = must_load("vendor_a");
  if (!va) return;
  device_job j = {.type = npu_a_code()};
  pthread_t tid;
  ok(pthread_create(&tid, NULL, sync_job, &j) == 0);
  ok(wait_entry()); /* inside vendor_a's synchronize() */
  ok(!atomic_load(&j.done));
  is_status(bp_plugin_unload(va), BP_OK);
  ok(atomic_load(&j.done)); /* the unload waited for it */
  pthread_join(tid, NULL);
  is_status(j.st, BP_OK);
  /* Once the device type is gone, the calls say so. */
  is_status(bp_device_synchronize(bp_device_make(j.type, 0)), BP_ERR_DEVICE);
  bp_device_props props;
  props.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  is_status(bp_device_properties(bp_device_make(j.type, 0), &props), BP_ERR_DEVICE);
}

/* ------------------------------------------------------------------------ */
/* Case 8: loaders and readers of the registry at once                      */
/* ------------------------------------------------------------------------ */

typedef struct cycler {
  pthread_t tid;
  const char *name;  /* the test plugin it loads and unloads */
  char path[4096];   /* its file, resolved before the threads start */
  int cycles;
  long loads, unloads, not_loaded;  /* "not loaded": the other loader won */
  long unexpected;
  char first_unexpected[512];
} cycler;

static void cycler_unexpected(cycler *c, const char *what, bp_status st) {
  if (c->unexpected++ == 0)
    snprintf(c->first_unexpected, sizeof c->first_unexpected, "%s %s: %s: '%s'", what, c->name,
             bp_status_str(st), bp_last_error());
}

/* Loads and unloads c->name c->cycles times.  Two cyclers of one plugin
 * race: a load finds it loaded or loads it, and an unload may find that
 * the other cycler unloaded it first. */
static void *cycler_main(void *arg) {
  cycler *c = arg;
  for (int i = 0; i < c->cycles; i++) {
    bp_plugin *p = NULL;
    bp_status st = bp_plugin_load(c->path, &p);
    if (st || !p) {
      cycler_unexpected(c, "load", st);
      continue;
    }
    c->loads++;
    sleep_us(100);
    st = bp_plugin_unload(p);
    if (st == BP_OK)
      c->unloads++;
    else if (st == BP_ERR_NOT_FOUND && strstr(bp_last_error(), "is not loaded"))
      c->not_loaded++;
    else
      cycler_unexpected(c, "unload", st);
  }
  return NULL;
}

/* Calls good::muladd until `stop`, checking every result. */
static void *good_worker(void *arg) {
  worker *w = arg;
  float x[4] = {1, 2, 3, (float)w->id}, y[4] = {-2, -1, 0, 1};
  bp_tensor *a = f32(x, 4), *b = f32(y, 4);
  if (!a || !b) {
    unexpected(w, "creating the worker's tensors", bp_last_status());
    bp_tensor_release(a);
    bp_tensor_release(b);
    return NULL;
  }
  for (long i = 0; !atomic_load(&stop); i++) good_call(w, a, b, x, y, 4, (float)(i % 1000));
  bp_tensor_release(a);
  bp_tensor_release(b);
  return NULL;
}

/* Reads the registry the way a host's tooling does: every op's and
 * plugin's description (only their numbers: the strings are valid until
 * the next load or unload), finds by name, and device type names; and
 * turns vendor_a::offset's CPU kernel off and on. */
static void *reader_main(void *arg) {
  worker *w = arg;
  while (!atomic_load(&stop)) {
    size_t nops = bp_op_count();
    for (size_t i = 0; i < nops; i++) {
      const bp_op *op = bp_op_at(i);
      if (!op) continue; /* the count is a snapshot; ops are never removed */
      bp_op_info oi;
      memset(&oi, 0, sizeof oi);
      oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
      bp_status st = bp_op_get_info(op, &oi);
      if (st || (oi.defined != 0 && oi.defined != 1) || oi.nkernels < 0) {
        unexpected(w, "bp_op_get_info", st);
        continue;
      }
      w->good_calls++;
    }
    size_t np = bp_plugin_count();
    for (size_t i = 0; i < np; i++) {
      bp_plugin *p = bp_plugin_at(i);
      if (!p) {
        unexpected(w, "bp_plugin_at within bp_plugin_count", BP_ERR_INTERNAL);
        continue;
      }
      bp_plugin_info pi;
      memset(&pi, 0, sizeof pi);
      pi.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
      bp_status st = bp_plugin_get_info(p, &pi);
      if (st) unexpected(w, "bp_plugin_get_info", st);
    }
    static const char *const names[] = {"vendor_a::offset", "vendor_b::offset",
                                        "good::muladd"};
    for (size_t i = 0; i < 3; i++) {
      const bp_op *op = NULL;
      bp_status st = bp_op_find(names[i], &op);
      if (st == BP_OK && op)
        w->vendor_ok++;
      else if (st == BP_ERR_NOT_FOUND && i < 2)
        w->vendor_not_found++; /* vendor_a or vendor_b not loaded yet */
      else
        unexpected(w, names[i], st);
    }
    for (int32_t t = BP_DEVICE_DYNAMIC_FIRST; t < BP_DEVICE_DYNAMIC_FIRST + 8; t++)
      (void)bp_device_type_name(t);
    /* Turning a kernel off and on again rebuilds the op's dispatch table,
     * as loads and unloads do; the kernel is there only while its plugin
     * is loaded. */
    const bp_op *off = NULL;
    if (bp_op_find("vendor_a::offset", &off) == BP_OK) {
      bool on = (w->vendor_ok & 1) != 0;
      bp_status st = bp_set_kernel_enabled(off, BP_DEVICE_CPU, on);
      if (st && !(st == BP_ERR_NOT_FOUND && strstr(bp_last_error(), "has no kernel for")))
        unexpected(w, "bp_set_kernel_enabled", st);
    }
  }
  return NULL;
}

/* Three threads load and unload plugins at once (vendor_a by one, vendor_b
 * by two racing each other) while two others call good::muladd and two
 * read the registry.  Registration and unregistration take the registry's
 * lock; every reader and caller must see a consistent registry, and no
 * plugin may be closed under a caller. */
static void loaders_and_readers_at_once(void) {
  if (!must_load("good")) return;
  muladd_op = must_find("good::muladd");
  if (!muladd_op) return;
  int64_t baseline = bp_live_tensor_count();
  worker callers[2], readers[2];
  memset(callers, 0, sizeof callers);
  memset(readers, 0, sizeof readers);
  cycler cyc[3] = {{.name = "vendor_a", .cycles = 60},
                   {.name = "vendor_b", .cycles = 60},
                   {.name = "vendor_b", .cycles = 60}};
  atomic_store(&stop, false);
  for (int i = 0; i < 2; i++) {
    callers[i].id = i;
    readers[i].id = 2 + i;
    ok(pthread_create(&callers[i].tid, NULL, good_worker, &callers[i]) == 0);
    ok(pthread_create(&readers[i].tid, NULL, reader_main, &readers[i]) == 0);
  }
  for (int i = 0; i < 3; i++) {
    snprintf(cyc[i].path, sizeof cyc[i].path, "%s", test_plugin(cyc[i].name));
    ok(pthread_create(&cyc[i].tid, NULL, cycler_main, &cyc[i]) == 0);
  }
  for (int i = 0; i < 3; i++) pthread_join(cyc[i].tid, NULL);
  atomic_store(&stop, true);
  for (int i = 0; i < 2; i++) {
    pthread_join(callers[i].tid, NULL);
    pthread_join(readers[i].tid, NULL);
  }
  for (int i = 0; i < 3; i++) {
    is_int(cyc[i].unexpected, 0);
    if (cyc[i].unexpected) tap_diag("loader %d, first: %s", i, cyc[i].first_unexpected);
    is_int(cyc[i].loads, 60);
    is_int(cyc[i].unloads + cyc[i].not_loaded, 60);
    tap_diag("loader %d (%s): %ld loads, %ld unloads, %ld found it unloaded", i, cyc[i].name,
             cyc[i].loads, cyc[i].unloads, cyc[i].not_loaded);
  }
  is_int(cyc[0].not_loaded, 0); /* vendor_a had one loader */
  cmp_ok(cyc[1].unloads + cyc[2].unloads, ">", 0);
  for (int i = 0; i < 2; i++) {
    cmp_ok(callers[i].good_calls, ">", 0);
    is_int(callers[i].good_ok, callers[i].good_calls);
    is_int(callers[i].unexpected, 0);
    if (callers[i].unexpected) tap_diag("caller %d, first: %s", i, callers[i].first_unexpected);
    cmp_ok(readers[i].good_calls, ">", 0);
    is_int(readers[i].unexpected, 0);
    if (readers[i].unexpected) tap_diag("reader %d, first: %s", i, readers[i].first_unexpected);
  }
  is_int(bp_live_tensor_count(), baseline);
  /* Whichever vendor_b cycler unloaded last, neither plugin is loaded. */
  const bp_op *op = NULL;
  is_status(bp_op_find("vendor_b::offset", &op), BP_OK);
  bp_op_info oi;
  memset(&oi, 0, sizeof oi);
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (op && bp_op_get_info(op, &oi) == BP_OK) is_int(oi.defined, 0);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(calls_survive_load_unload),
      TAP_CASE(device_tensors_survive_load_unload),
      TAP_CASE(unload_waits_for_calls_in_flight),
      TAP_CASE(meta_survives_load_unload),
      TAP_CASE(unload_during_device_alloc),
      TAP_CASE(unload_during_device_free),
      TAP_CASE(unload_during_device_synchronize),
      TAP_CASE(loaders_and_readers_at_once),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
