/*
 * tests/cuda/test-cuda-plugin.c - the CUDA plugin as a plugin, and its
 * device interface.
 *
 * Without a GPU (or a driver): the plugin loads through bp_plugin_load,
 * registers "cuda" and "cuda_host" and a CUDA kernel for every core op,
 * reports 0 devices with its reason, refuses allocations on the absent
 * device with a message, and unloads (and loads again) cleanly.
 *
 * With a GPU: properties; the caching allocator (a freed block is reused
 * on its stream, and only there); copies in every direction, pageable and
 * pinned ("cuda_host"); streams and events; the per-thread current stream
 * that kernels run on; a malformed tuning setting is an error that names
 * it.  With two GPUs, a copy between them after a kernel on the source.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"

static int ndevices;

static const char *const core_ops[] = {
    "add", "add.out", "sub", "mul", "div", "maximum", "minimum", "pow", "muladd", "neg", "abs",
    "exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "gelu", "where", "cast",
    "contiguous", "fill_", "copy_", "sum", "mean", "amax", "amin", "argmax", "matmul",
    "softmax", "log_softmax", "layer_norm"};

/* ------------------------------------------------------------------------ */
/* Any machine                                                              */
/* ------------------------------------------------------------------------ */

static void load_and_register(void) {
  bp_plugin *p = load_plugin("cuda");
  if (!p) return;
  bp_plugin_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  is_status(bp_plugin_get_info(p, &info), BP_OK);
  is_str(info.name, "cuda");
  is_int(info.op_set_version, BP_CORE_OP_SET_VERSION);
  is_str(bp_device_type_name(BP_DEVICE_CUDA), "cuda");
  is_str(bp_device_type_name(BP_DEVICE_CUDA_HOST), "cuda_host");
  /* A CUDA kernel for every op of the core set. */
  for (size_t i = 0; i < sizeof core_ops / sizeof core_ops[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "core::%s", core_ops[i]);
    const bp_op *op = NULL;
    if (bp_op_find(name, &op) != BP_OK) {
      tap_diag("%s: %s", name, bp_last_error());
      ok(0);
      continue;
    }
    bp_op_info oi;
    memset(&oi, 0, sizeof oi);
    oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
    is_status(bp_op_get_info(op, &oi), BP_OK);
    bool found = false;
    for (int32_t k = 0; k < oi.nkernels; k++) {
      bp_kernel_info ki;
      memset(&ki, 0, sizeof ki);
      ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
      if (bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK && ki.device_type == BP_DEVICE_CUDA &&
          !strcmp(ki.plugin, "cuda"))
        found = true;
    }
    if (!found) tap_diag("%s has no CUDA kernel", name);
    ok(found);
  }
  is_status(bp_plugin_unload(p), BP_OK);
}

static void zero_devices_with_reason(void) {
  if (ndevices > 0) tap_skip("this machine has %d CUDA device(s)", ndevices);
  bp_clear_error();
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(plugin_path("cuda"), &p), BP_OK);
  /* The load succeeds and leaves the reason as a note (status BP_OK). */
  is_int(bp_last_status(), BP_OK);
  has_str(bp_last_error(), "cuda: 0 devices");
  /* The host keeps it as the plugin's note, for bp-info. */
  bp_plugin_info info;
  info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  is_status(bp_plugin_get_info(p, &info), BP_OK);
  is_int(info.state, BP_PLUGIN_LOADED);
  has_str(info.error, "cuda: 0 devices");
  int32_t n = -1;
  is_status(bp_device_count(BP_DEVICE_CUDA, &n), BP_OK);
  is_int(n, 0);
  n = -1;
  is_status(bp_device_count(BP_DEVICE_CUDA_HOST, &n), BP_OK);
  is_int(n, 0);
  /* No device: allocating fails with a message, never a crash. */
  int64_t four = 4;
  bp_tensor *t = NULL;
  bp_status st = bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &four, &t);
  ok(st != BP_OK);
  ok(t == NULL);
  has_str(bp_last_error(), "cuda");
  bp_stream *s = NULL;
  ok(bp_stream_create(CUDA0, &s) != BP_OK);
  is_status(bp_plugin_unload(p), BP_OK);
}

static void unload_and_reload(void) {
  for (int i = 0; i < 3; i++) {
    bp_plugin *p = load_plugin("cuda");
    if (!p) return;
    int32_t n = -1;
    is_status(bp_device_count(BP_DEVICE_CUDA, &n), BP_OK);
    is_int(n, ndevices);
    if (ndevices > 0) {
      /* Something to clean up at unload: cached blocks, a cuBLAS handle. */
      int64_t sz[2] = {64, 64};
      bp_tensor *t = NULL;
      is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 2, sz, &t), BP_OK);
      bp_tensor_release(t);
    }
    is_status(bp_plugin_unload(p), BP_OK);
    is_int(bp_live_tensor_count(), 0);
  }
}

/* ------------------------------------------------------------------------ */
/* With a GPU                                                               */
/* ------------------------------------------------------------------------ */

static bp_plugin *gpu_setup(void) {
  if (ndevices == 0) tap_skip("no CUDA device");
  return load_plugin("cuda");
}

static void properties(void) {
  bp_plugin *p = gpu_setup();
  if (!p) return;
  bp_device_props pr;
  memset(&pr, 0, sizeof pr);
  pr.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  is_status(bp_device_properties(CUDA0, &pr), BP_OK);
  tap_diag("cuda:0 is %s, compute capability %d.%d, %lld SMs, %llu bytes", pr.name,
           (int)pr.arch_major, (int)pr.arch_minor, (long long)pr.compute_units,
           (unsigned long long)pr.total_memory);
  cmp_ok(strlen(pr.name), ">", 0);
  cmp_ok(pr.arch_major, ">=", 5);
  cmp_ok(pr.compute_units, ">", 0);
  cmp_ok(pr.total_memory, ">", 1 << 20);
  bp_device bad = bp_device_make(BP_DEVICE_CUDA, ndevices);
  ok(bp_device_properties(bad, &pr) != BP_OK);
  is_status(bp_plugin_unload(p), BP_OK);
}

static void *data_of(const bp_tensor *t) { return bp_tensor_get_view(t)->data; }

static void allocator_reuse(void) {
  bp_plugin *p = gpu_setup();
  if (!p) return;
  int64_t n = 1000;
  bp_tensor *a = NULL, *b = NULL, *c = NULL;
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &a), BP_OK);
  void *pa = data_of(a);
  ok(((uintptr_t)pa & 63) == 0);
  bp_tensor_release(a);
  /* The same size class on the same stream reuses the block. */
  int64_t n2 = 990;
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n2, &b), BP_OK);
  ok(data_of(b) == pa);
  /* While it is live, another allocation gets another block. */
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &c), BP_OK);
  ok(data_of(c) != pa);
  bp_tensor_release(c);
  bp_tensor_release(b);
  /* A block freed on the default stream is not reused on another. */
  bp_stream *s = NULL;
  is_status(bp_stream_create(CUDA0, &s), BP_OK);
  is_status(bp_stream_set_current(CUDA0, s), BP_OK);
  bp_tensor *d = NULL;
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &d), BP_OK);
  ok(data_of(d) != pa);
  void *pd = data_of(d);
  bp_tensor_release(d);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &d), BP_OK);
  ok(data_of(d) == pd);
  bp_tensor_release(d);
  is_status(bp_stream_set_current(CUDA0, NULL), BP_OK);
  is_status(bp_stream_destroy(CUDA0, s), BP_OK);
  /* A big allocation works and is released at unload. */
  int64_t big = 64 << 20;
  bp_tensor *e = NULL;
  is_status(bp_tensor_empty(CUDA0, BP_UINT8, 1, &big, &e), BP_OK);
  bp_tensor_release(e);
  is_status(bp_plugin_unload(p), BP_OK);
}

static void fill_host(bp_tensor *t, int64_t n, float base) {
  float *d = (float *)data_of(t);
  for (int64_t i = 0; i < n; i++) d[i] = base + (float)i * 0.5f;
}

static bool check_host(const bp_tensor *t, int64_t n, float base) {
  const float *d = (const float *)data_of(t);
  for (int64_t i = 0; i < n; i++)
    if (d[i] != base + (float)i * 0.5f) {
      tap_diag("element %lld: %g, expected %g", (long long)i, d[i], base + (float)i * 0.5f);
      return false;
    }
  return true;
}

static void copies(void) {
  bp_plugin *p = gpu_setup();
  if (!p) return;
  int64_t n = 100003;
  bp_device pinned = bp_device_make(BP_DEVICE_CUDA_HOST, 0);
  bp_tensor *h1 = NULL, *h2 = NULL, *g1 = NULL, *g2 = NULL, *p1 = NULL, *p2 = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &h1), BP_OK);
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &h2), BP_OK);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &g1), BP_OK);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &g2), BP_OK);
  is_status(bp_tensor_empty(pinned, BP_FLOAT32, 1, &n, &p1), BP_OK);
  is_status(bp_tensor_empty(pinned, BP_FLOAT32, 1, &n, &p2), BP_OK);
  if (!h1 || !h2 || !g1 || !g2 || !p1 || !p2) goto out;
  /* pageable host -> device -> device -> pageable host */
  fill_host(h1, n, 1.0f);
  is_status(bp_tensor_copy(g1, h1), BP_OK);
  is_status(bp_tensor_copy(g2, g1), BP_OK);
  is_status(bp_tensor_copy(h2, g2), BP_OK);
  ok(check_host(h2, n, 1.0f));
  /* pinned host -> device -> pinned host */
  fill_host(p1, n, -7.0f);
  is_status(bp_tensor_copy(g1, p1), BP_OK);
  is_status(bp_tensor_copy(p2, g1), BP_OK);
  ok(check_host(p2, n, -7.0f));
  /* pinned <-> pageable (both host memory) */
  is_status(bp_tensor_copy(h1, p2), BP_OK);
  ok(check_host(h1, n, -7.0f));
  /* A strided device view gathers through the host. */
  {
    int64_t half = n / 2, two = 2;
    bp_tensor *v = NULL, *hv = NULL;
    is_status(bp_tensor_as_strided(g1, 1, &half, &two, 0, &v), BP_OK);
    is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &half, &hv), BP_OK);
    if (v && hv) {
      is_status(bp_tensor_copy(hv, v), BP_OK);
      const float *d = (const float *)data_of(hv);
      bool good = true;
      for (int64_t i = 0; i < half && good; i++) good = d[i] == -7.0f + (float)(2 * i) * 0.5f;
      ok(good);
    }
    bp_tensor_release(v);
    bp_tensor_release(hv);
  }
  is_status(bp_device_synchronize(CUDA0), BP_OK);
out:
  bp_tensor_release(h1);
  bp_tensor_release(h2);
  bp_tensor_release(g1);
  bp_tensor_release(g2);
  bp_tensor_release(p1);
  bp_tensor_release(p2);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* x + y of two float32 device tensors, through bp_call. */
static bp_tensor *add(const bp_op *op, bp_tensor *x, bp_tensor *y) {
  bp_value vals[4];
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 4, 0};
  bp_stack_push_tensor(&s, x);
  bp_stack_push_tensor(&s, y);
  bp_stack_push_float(&s, 1.0);
  if (bp_call(op, &s) != BP_OK) {
    tap_diag("core::add: %s", bp_last_error());
    return NULL;
  }
  return vals[0].u.tensor;
}

static void *other_thread(void *arg) {
  bp_stream **out = (bp_stream **)arg;
  bp_stream_get_current(CUDA0, out);
  return NULL;
}

static void streams_and_events(void) {
  bp_plugin *p = gpu_setup();
  if (!p) return;
  const bp_op *op = NULL;
  is_status(bp_op_find("core::add", &op), BP_OK);
  int64_t n = 1 << 20;
  bp_tensor *h = NULL, *x = NULL, *back = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &h), BP_OK);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &x), BP_OK);
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &back), BP_OK);
  if (!h || !x || !back || !op) goto out;
  fill_host(h, n, 0.0f);
  is_status(bp_tensor_copy(x, h), BP_OK);

  bp_stream *s1 = NULL, *s2 = NULL, *cur = (bp_stream *)1;
  bp_event *e = NULL;
  is_status(bp_stream_create(CUDA0, &s1), BP_OK);
  is_status(bp_stream_create(CUDA0, &s2), BP_OK);
  is_status(bp_event_create(CUDA0, &e), BP_OK);
  is_status(bp_stream_get_current(CUDA0, &cur), BP_OK);
  ok(cur == NULL);
  /* Kernels run on the current stream: a chain on s1, then s2 waits on
   * an event recorded on s1 and goes on from its result. */
  is_status(bp_stream_set_current(CUDA0, s1), BP_OK);
  is_status(bp_stream_get_current(CUDA0, &cur), BP_OK);
  ok(cur == s1);
  {
    /* Another thread still has the default stream. */
    bp_stream *theirs = (bp_stream *)1;
    pthread_t th;
    pthread_create(&th, NULL, other_thread, &theirs);
    pthread_join(th, NULL);
    ok(theirs == NULL);
  }
  bp_tensor *y = add(op, x, x); /* 2x */
  bp_tensor *z = y ? add(op, y, y) : NULL; /* 4x */
  is_status(bp_event_record(CUDA0, e, s1), BP_OK);
  is_status(bp_stream_set_current(CUDA0, s2), BP_OK);
  is_status(bp_stream_wait_event(CUDA0, s2, e), BP_OK);
  bp_tensor *w = z ? add(op, z, x) : NULL; /* 5x, on s2 */
  is_status(bp_stream_synchronize(CUDA0, s2), BP_OK);
  is_status(bp_event_synchronize(CUDA0, e), BP_OK);
  ok(w != NULL);
  if (w) {
    is_status(bp_tensor_copy(back, w), BP_OK);
    const float *d = (const float *)data_of(back);
    bool good = true;
    for (int64_t i = 0; i < n && good; i++) good = d[i] == 5.0f * ((float)i * 0.5f);
    ok(good);
  }
  bp_tensor_release(w);
  bp_tensor_release(z);
  bp_tensor_release(y);
  is_status(bp_stream_set_current(CUDA0, NULL), BP_OK);
  is_status(bp_device_synchronize(CUDA0), BP_OK);
  is_status(bp_event_destroy(CUDA0, e), BP_OK);
  is_status(bp_stream_destroy(CUDA0, s1), BP_OK);
  is_status(bp_stream_destroy(CUDA0, s2), BP_OK);
  /* An unknown device index is refused. */
  bp_stream *bad = NULL;
  ok(bp_stream_create(bp_device_make(BP_DEVICE_CUDA, ndevices), &bad) != BP_OK);
out:
  bp_tensor_release(h);
  bp_tensor_release(x);
  bp_tensor_release(back);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* A copy between two GPUs sees what the source GPU's current stream
 * wrote before it: cudaMemcpyPeerAsync on the destination's stream alone
 * would not wait for that work.  A fill of 1 GiB on cuda:1 is followed at
 * once by the copy to cuda:0; every element must have the new value. */
static void peer_copy_after_kernel(void) {
  if (ndevices < 2) tap_skip("fewer than 2 CUDA devices");
  bp_plugin *p = load_plugin("cuda");
  if (!p) return;
  const bp_op *fill = NULL;
  is_status(bp_op_find("core::fill_", &fill), BP_OK);
  int64_t n = (int64_t)1 << 28;
  bp_tensor *src = NULL, *dst = NULL, *host = NULL;
  is_status(bp_tensor_empty(bp_device_make(BP_DEVICE_CUDA, 1), BP_FLOAT32, 1, &n, &src), BP_OK);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &dst), BP_OK);
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &host), BP_OK);
  int64_t stale = 0;
  for (int round = 1; round <= 4 && fill && src && dst && host; round++) {
    bp_value vals[2];
    bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 2, 0};
    bp_stack_push_tensor(&s, src);
    bp_stack_push_float(&s, (double)round);
    if (bp_call(fill, &s) != BP_OK) {
      tap_diag("core::fill_: %s", bp_last_error());
      stale = -1;
      break;
    }
    bp_tensor_release(vals[0].u.tensor);
    is_status(bp_tensor_copy(dst, src), BP_OK);
    is_status(bp_tensor_copy(host, dst), BP_OK);
    const float *h = (const float *)data_of(host);
    for (int64_t i = 0; i < n; i += 4093) stale += h[i] != (float)round;
    stale += h[n - 1] != (float)round;
  }
  is_int(stale, 0);
  bp_tensor_release(src);
  bp_tensor_release(dst);
  bp_tensor_release(host);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* A launch error becomes a status with CUDA's text: a kernel on a tensor
 * whose storage is not device memory cannot be made here without breaking
 * the host, so the check is the plain one: an op on a freed stream. */
static void errors_are_statuses(void) {
  bp_plugin *p = gpu_setup();
  if (!p) return;
  /* Allocation larger than any GPU: a status and a message, no crash. */
  int64_t huge = (int64_t)1 << 50;
  bp_tensor *t = NULL;
  bp_status st = bp_tensor_empty(CUDA0, BP_UINT8, 1, &huge, &t);
  is_status(st, BP_ERR_OUT_OF_MEMORY);
  has_str(bp_last_error(), "cudaMalloc");
  /* The device still works afterwards. */
  int64_t n = 16;
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &t), BP_OK);
  /* A failed CUDA call is a status once: it is not reported again by the
   * next op's launch check.  cudaHostAlloc of a pinned buffer larger than
   * any machine's memory fails, and an add after it succeeds. */
  bp_tensor *pinned = NULL;
  ok(bp_tensor_empty(bp_device_make(BP_DEVICE_CUDA_HOST, 0), BP_UINT8, 1, &huge, &pinned) !=
     BP_OK);
  has_str(bp_last_error(), "cudaHostAlloc");
  const bp_op *addop = NULL;
  is_status(bp_op_find("core::add", &addop), BP_OK);
  bp_tensor *sum = addop ? add(addop, t, t) : NULL;
  ok(sum != NULL);
  bp_tensor_release(sum);
  bp_tensor_release(t);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* A malformed BP_CUDA_REDUCE (read once, at the first reduction) fails
 * every reduction with a message that names the variable and the value;
 * other ops still run.  Each case runs in its own process, so the setting
 * reaches no other case. */
static void check_reduce_setting(const char *setting, const char *message) {
  if (ndevices == 0) tap_skip("no CUDA device");
  setenv("BP_CUDA_REDUCE", setting, 1);
  bp_plugin *p = load_plugin("cuda");
  if (!p) return;
  const bp_op *sum = NULL, *addop = NULL;
  is_status(bp_op_find("core::sum", &sum), BP_OK);
  is_status(bp_op_find("core::add", &addop), BP_OK);
  int64_t n = 64;
  bp_tensor *x = NULL;
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 1, &n, &x), BP_OK);
  bp_value vals[4];
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 4, 0};
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int_list(&s, NULL, 0);
  bp_stack_push_bool(&s, false);
  is_status(bp_call(sum, &s), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "core::sum");
  has_str(bp_last_error(), message);
  bp_stack_release(&s);
  bp_tensor *y = add(addop, x, x);
  ok(y != NULL);
  bp_tensor_release(y);
  bp_tensor_release(x);
  is_status(bp_plugin_unload(p), BP_OK);
  unsetenv("BP_CUDA_REDUCE");
}

static void reduce_setting_rejected(void) {
  check_reduce_setting("slice=1000",
                       "BP_CUDA_REDUCE: slice: expected a positive multiple of 4096, got '1000'");
}

static void reduce_finish_rejected(void) {
  check_reduce_setting("slice=8192,finish=later",
                       "BP_CUDA_REDUCE: finish: expected kernel or pdl, got 'later'");
}

/* BP_CUDA_REDUCE=finish=pdl gives the same results as the default: rows
 * long enough to be split across blocks, whose partials the combining
 * kernel (launched with programmatic dependent launch on sm_90 and later)
 * must read only once they are written.  Each round changes the input,
 * so a combining kernel that read the partials too early would find the
 * previous round's (the workspace block is reused on the stream). */
static void reduce_finish_pdl(void) {
  if (ndevices == 0) tap_skip("no CUDA device");
  setenv("BP_CUDA_REDUCE", "finish=pdl", 1);
  bp_plugin *p = load_plugin("cuda");
  if (!p) return;
  const bp_op *sum = NULL, *argmax = NULL;
  is_status(bp_op_find("core::sum", &sum), BP_OK);
  is_status(bp_op_find("core::argmax", &argmax), BP_OK);
  const int64_t rows = 3, n = (int64_t)1 << 21;
  int64_t shape[2] = {rows, n};
  bp_tensor *host = NULL, *x = NULL;
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, shape, &host), BP_OK);
  is_status(bp_tensor_empty(CUDA0, BP_FLOAT32, 2, shape, &x), BP_OK);
  int64_t wrong = 0;
  for (int round = 0; round < 8 && sum && argmax && host && x && wrong == 0; round++) {
    float *h = (float *)data_of(host);
    int64_t want_sum[3], want_arg[3];
    for (int64_t r = 0; r < rows; r++) {
      want_sum[r] = 0;
      for (int64_t i = 0; i < n; i++) {
        int64_t v = (i + r + round) % 4;
        h[r * n + i] = (float)v;
        want_sum[r] += v;
      }
      /* One maximum per row, in a late slice, at a place each round. */
      want_arg[r] = n - 1 - 1000 * round - 7 * r;
      want_sum[r] += 10 - (int64_t)h[r * n + want_arg[r]];
      h[r * n + want_arg[r]] = 10.0f;
    }
    if (bp_tensor_copy(x, host) != BP_OK) {
      tap_diag("copy: %s", bp_last_error());
      wrong = -1;
      break;
    }
    bp_value vals[4];
    bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 4, 0};
    int64_t dim = 1;
    bp_stack_push_tensor(&s, x);
    bp_stack_push_int_list(&s, &dim, 1);
    bp_stack_push_bool(&s, false);
    bp_stack_push_none(&s);
    bp_tensor *got_sum = NULL, *got_arg = NULL;
    if (bp_call(sum, &s) == BP_OK) got_sum = bp_tensor_retain(vals[0].u.tensor);
    else tap_diag("core::sum: %s", bp_last_error());
    bp_stack_release(&s);
    bp_stack s2 = {BP_STACK_STRUCT_SIZE, vals, 4, 0};
    bp_stack_push_tensor(&s2, x);
    bp_stack_push_int(&s2, 1);
    bp_stack_push_bool(&s2, false);
    if (bp_call(argmax, &s2) == BP_OK) got_arg = bp_tensor_retain(vals[0].u.tensor);
    else tap_diag("core::argmax: %s", bp_last_error());
    bp_stack_release(&s2);
    if (!got_sum || !got_arg) {
      wrong = -1;
    } else {
      bp_tensor *hs = NULL, *ha = NULL;
      is_status(bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &shape[0], &hs), BP_OK);
      is_status(bp_tensor_empty(BP_CPU, BP_INT64, 1, &shape[0], &ha), BP_OK);
      if (hs && ha && bp_tensor_copy(hs, got_sum) == BP_OK &&
          bp_tensor_copy(ha, got_arg) == BP_OK) {
        const float *gs = (const float *)data_of(hs);
        const int64_t *ga = (const int64_t *)data_of(ha);
        for (int64_t r = 0; r < rows; r++) {
          if (gs[r] != (float)want_sum[r] || ga[r] != want_arg[r]) {
            tap_diag("round %d, row %lld: sum %g (expected %lld), argmax %lld (expected %lld)",
                     round, (long long)r, gs[r], (long long)want_sum[r], (long long)ga[r],
                     (long long)want_arg[r]);
            wrong++;
          }
        }
      } else {
        tap_diag("copy back: %s", bp_last_error());
        wrong = -1;
      }
      bp_tensor_release(hs);
      bp_tensor_release(ha);
    }
    bp_tensor_release(got_sum);
    bp_tensor_release(got_arg);
  }
  is_int(wrong, 0);
  bp_tensor_release(x);
  bp_tensor_release(host);
  is_status(bp_plugin_unload(p), BP_OK);
  unsetenv("BP_CUDA_REDUCE");
}

/* A reduction to more outputs than gridDim.x allows (2^31 - 1) takes
 * several launches of the row kernel (reduce_plan.h): amax over the
 * last dimension of a [2^31 + 5, 2] uint8 tensor (whose kept dimension has
 * stride 2, so that the row kernel runs, a block per output).  Every
 * output is checked, the last ones (in the second launch) above all.
 * Skipped where the GPU or the host lacks the 6.5 GB it needs. */
static void reduce_past_grid_limit(void) {
  if (ndevices == 0) tap_skip("no CUDA device");
  bp_plugin *p = load_plugin("cuda");
  if (!p) return;
  const bp_op *amax = NULL;
  is_status(bp_op_find("core::amax", &amax), BP_OK);
  const int64_t rows = ((int64_t)1 << 31) + 5;
  int64_t shape[2] = {rows, 2};
  bp_tensor *host = NULL, *x = NULL, *back = NULL, *got = NULL;
  if (bp_tensor_empty(BP_CPU, BP_UINT8, 2, shape, &host) != BP_OK ||
      bp_tensor_empty(BP_CPU, BP_UINT8, 1, &shape[0], &back) != BP_OK ||
      bp_tensor_empty(CUDA0, BP_UINT8, 2, shape, &x) != BP_OK) {
    tap_diag("could not allocate the tensors: %s", bp_last_error());
    bp_tensor_release(host);
    bp_tensor_release(back);
    is_status(bp_plugin_unload(p), BP_OK);
    tap_skip("not enough memory for a [2^31 + 5, 2] tensor");
  }
  uint8_t *h = (uint8_t *)data_of(host);
  for (int64_t i = 0; i < rows; i++) {
    h[2 * i] = (uint8_t)(i * 7);
    h[2 * i + 1] = (uint8_t)(i >> 3);
  }
  is_status(bp_tensor_copy(x, host), BP_OK);
  bp_value vals[3];
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 3, 0};
  int64_t dim = 1;
  bp_stack_push_tensor(&s, x);
  bp_stack_push_int_list(&s, &dim, 1);
  bp_stack_push_bool(&s, false);
  bp_status st = amax ? bp_call(amax, &s) : BP_ERR_INTERNAL;
  if (st == BP_OK) got = bp_tensor_retain(vals[0].u.tensor);
  else tap_diag("core::amax: %s", bp_last_error());
  bp_stack_release(&s);
  bp_tensor_release(x);
  if (st == BP_ERR_OUT_OF_MEMORY) {
    bp_tensor_release(host);
    bp_tensor_release(back);
    is_status(bp_plugin_unload(p), BP_OK);
    tap_skip("not enough GPU memory for the result");
  }
  is_status(st, BP_OK);
  int64_t wrong = -1;
  if (got && bp_tensor_copy(back, got) == BP_OK) {
    const uint8_t *b = (const uint8_t *)data_of(back);
    wrong = 0;
    for (int64_t i = 0; i < rows; i++) {
      uint8_t want = h[2 * i] > h[2 * i + 1] ? h[2 * i] : h[2 * i + 1];
      if (b[i] != want && wrong++ < 5)
        tap_diag("output %lld: %u, expected %u", (long long)i, b[i], want);
    }
  }
  is_int(wrong, 0);
  bp_tensor_release(got);
  bp_tensor_release(host);
  bp_tensor_release(back);
  is_status(bp_plugin_unload(p), BP_OK);
}

/* BP_CUDA_WAVES is read at load: a malformed value fails the load with a
 * message that names it (with or without a GPU); a good one loads. */
static void waves_setting(void) {
  static const char *const bad[] = {"0", "65", "2x", "-1", " "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("BP_CUDA_WAVES", bad[i], 1);
    bp_plugin *p = NULL;
    bp_status st = bp_plugin_load(plugin_path("cuda"), &p);
    if (st == BP_OK) tap_diag("BP_CUDA_WAVES='%s' loaded", bad[i]);
    ok(st != BP_OK);
    ok(p == NULL);
    has_str(bp_last_error(), "BP_CUDA_WAVES: expected an integer from 1 to 64, got");
    char want[64];
    snprintf(want, sizeof want, "got '%s'", bad[i]);
    has_str(bp_last_error(), want);
    if (p) bp_plugin_unload(p);
  }
  setenv("BP_CUDA_WAVES", "4", 1);
  bp_plugin *p = NULL;
  is_status(bp_plugin_load(plugin_path("cuda"), &p), BP_OK);
  if (p) is_status(bp_plugin_unload(p), BP_OK);
  unsetenv("BP_CUDA_WAVES");
}

int main(void) {
  if (!plugin_built("cuda")) return tap_skip_all("the CUDA plugin is not built (no CUDA Toolkit)");
  char reason[512];
  ndevices = cuda_probe(reason, sizeof reason);
  if (ndevices == 0) printf("# %s\n", reason[0] ? reason : "cuda: no devices");
  static const tap_case cases[] = {
      TAP_CASE(load_and_register), TAP_CASE(zero_devices_with_reason),
      TAP_CASE(unload_and_reload), TAP_CASE(properties),
      TAP_CASE(allocator_reuse),   TAP_CASE(copies),
      TAP_CASE(streams_and_events), TAP_CASE(peer_copy_after_kernel),
      TAP_CASE(errors_are_statuses),
      TAP_CASE(reduce_setting_rejected), TAP_CASE(reduce_finish_rejected),
      TAP_CASE(reduce_finish_pdl), TAP_CASE(reduce_past_grid_limit),
      TAP_CASE(waves_setting),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
