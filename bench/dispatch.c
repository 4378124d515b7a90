/*
 * bench/dispatch.c - what a call through Backplane costs over calling the
 * kernel directly.
 *
 * One trivial kernel, `(Tensor a, Tensor b, float c) -> Tensor`, is
 * registered four times by two in-process plugins: boxed, unboxed through
 * libffi, and unboxed through the fast-path trampolines.  It does no work
 * (it returns `a`, borrowed: the benchmark never releases results), so what
 * is measured is the dispatch itself.  All variants run in the same process
 * and the report gives each one's time and its ratio to the direct call
 * measured in the same run.
 *
 *   dispatch                       every variant, wall clock
 *   dispatch --only NAME --iters N one variant N times (for callgrind;
 *                                  bench/dispatch-callgrind.sh takes the
 *                                  difference of N and 2N iterations)
 */
#define _POSIX_C_SOURCE 200809L
#include <ffi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/host.h>

#include "../tools/clock.h"

static const bp_host_api *H;

static bp_status trivial_unboxed(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor *b, double c,
                                 bp_tensor **out) {
  (void)ctx;
  (void)b;
  (void)c;
  *out = a;
  return BP_OK;
}

static bp_status trivial_boxed(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = args[0].u.tensor;
  return BP_OK;
}

/* ns::alloc_* have a meta function (a's shape and dtype) and allocate
 * their result: a boxed kernel that sizes it through the host table, as
 * a plugin of ABI 1.1 must, and a structured kernel (ABI 1.2), which the
 * host hands the result it allocated. */
static bp_status same_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                           bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)nargs;
  (void)nouts;
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  outs[0].device = v->device;
  outs[0].dtype = v->dtype;
  outs[0].ndim = v->ndim;
  for (int32_t d = 0; d < v->ndim; d++) {
    outs[0].sizes[d] = v->sizes[d];
    outs[0].strides[d] = v->strides[d];
  }
  return BP_OK;
}

static bp_status alloc_boxed(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nrets;
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = H->op_meta(ctx->op, args, nargs, &m, 1);
  if (st) return st;
  bp_tensor *t;
  st = H->tensor_empty_strided(m.device, m.dtype, m.ndim, m.sizes, m.strides, &t);
  if (st) return st;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].u.tensor = t;
  return BP_OK;
}

static bp_status alloc_fill(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return BP_OK;
}

/* Registers ns::boxed and ns::unboxed with the schema above, and
 * ns::alloc_boxed and ns::alloc_structured. */
static bp_status setup_ns(bp_registrar *reg, const char *ns) {
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, ns, BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = H->library(reg, &ld, &lib);
  const char *schemas[] = {"boxed(Tensor a, Tensor b, float c) -> Tensor",
                           "unboxed(Tensor a, Tensor b, float c) -> Tensor"};
  for (int i = 0; i < 2 && !st; i++) {
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = schemas[i];
    st = H->def(lib, &d);
  }
  /* The kernels declare their dtypes, so that every call pays for the
   * host's check of them. */
  static const int32_t dtypes[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.device_type = BP_DEVICE_CPU;
  k.dtypes = dtypes;
  k.op = "boxed";
  k.boxed = trivial_boxed;
  if (!st) st = H->impl(lib, &k);
  k.op = "unboxed";
  k.boxed = NULL;
  k.unboxed = (bp_unboxed_kernel)(void (*)(void))trivial_unboxed;
  if (!st) st = H->impl(lib, &k);
  const char *alloc[] = {"alloc_boxed(Tensor a, Tensor b, float c) -> Tensor",
                         "alloc_structured(Tensor a, Tensor b, float c) -> Tensor"};
  for (int i = 0; i < 2 && !st; i++) {
    bp_op_def d = {0};
    d.struct_size = BP_OP_DEF_STRUCT_SIZE;
    d.schema = alloc[i];
    d.meta = same_meta;
    st = H->def(lib, &d);
  }
  k.unboxed = NULL;
  k.op = "alloc_boxed";
  k.boxed = alloc_boxed;
  if (!st) st = H->impl(lib, &k);
  k.op = "alloc_structured";
  k.boxed = alloc_fill;
  k.flags = BP_KERNEL_DEF_STRUCTURED;
  if (!st) st = H->impl(lib, &k);
  return st;
}

static bp_status setup_fast(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  return setup_ns(reg, "fast");
}
static bp_status setup_ffi(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  return setup_ns(reg, "ffi");
}

static const bp_plugin_desc fast_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "bench_fast", .setup = setup_fast};
static const bp_plugin_desc ffi_desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE, .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR, .name = "bench_ffi", .setup = setup_ffi};

static const bp_plugin_desc *init_fast(const bp_host_api *host) {
  H = host;
  return &fast_desc;
}
static const bp_plugin_desc *init_ffi(const bp_host_api *host) {
  H = host;
  return &ffi_desc;
}

/* ------------------------------------------------------------------------ */

typedef bp_status (*unboxed_fn)(const bp_kernel_ctx *, bp_tensor *, bp_tensor *, double,
                                bp_tensor **);

static bp_tensor *ta, *tb;
static const bp_op *op_boxed, *op_ffi, *op_fast, *op_alloc_boxed, *op_alloc_structured;
static bp_kernel_ctx direct_ctx;
static unboxed_fn volatile direct_fn = trivial_unboxed;
static ffi_cif raw_cif;
static volatile long sink;

static void run_direct(long n) {
  for (long i = 0; i < n; i++) {
    bp_tensor *out;
    direct_fn(&direct_ctx, ta, tb, 2.5, &out);
    sink += (long)(out != NULL);
  }
}

static void run_raw_ffi(long n) {
  bp_tensor *out;
  bp_tensor **outp = &out;
  const bp_kernel_ctx *ctxp = &direct_ctx;
  double c = 2.5;
  void *args[5] = {&ctxp, &ta, &tb, &c, &outp};
  for (long i = 0; i < n; i++) {
    ffi_arg rc;
    ffi_call(&raw_cif, (void (*)(void))direct_fn, &rc, args);
    sink += (long)rc;
  }
}

/* bp_call with the arguments written straight into the stack's slots (the
 * call replaced them with its result, which is released when `release`:
 * the result of an op that allocates it). */
static void run_calls(const bp_op *op, long n, bool release) {
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  for (long i = 0; i < n; i++) {
    /* What a caller writes for three arguments: the same stores a direct
     * call makes into argument registers, plus the tags. */
    slots[0].tag = BP_TAG_TENSOR;
    slots[0].u.tensor = ta;
    slots[1].tag = BP_TAG_TENSOR;
    slots[1].u.tensor = tb;
    slots[2].tag = BP_TAG_FLOAT;
    slots[2].u.f = 2.5;
    s.top = 3;
    if (bp_call(op, &s) != BP_OK) {
      fprintf(stderr, "dispatch: %s\n", bp_last_error());
      exit(1);
    }
    if (release) bp_tensor_release(slots[0].u.tensor);
  }
  sink += (long)s.top;
}
static void run_call(const bp_op *op, long n) { run_calls(op, n, false); }

/* The same with the three pushes a host would write. */
static void run_push_call(const bp_op *op, long n) {
  bp_value slots[3];
  bp_stack s = BP_STACK_INIT(slots, 3);
  for (long i = 0; i < n; i++) {
    s.top = 0;
    bp_stack_push_tensor(&s, ta);
    bp_stack_push_tensor(&s, tb);
    bp_stack_push_float(&s, 2.5);
    bp_call(op, &s);
  }
  sink += (long)s.top;
}

static void run_boxed(long n) { run_call(op_boxed, n); }
static void run_alloc_boxed(long n) { run_calls(op_alloc_boxed, n, true); }
static void run_alloc_structured(long n) { run_calls(op_alloc_structured, n, true); }
static void run_ffi(long n) { run_call(op_ffi, n); }
static void run_fast(long n) { run_call(op_fast, n); }
static void run_push_boxed(long n) { run_push_call(op_boxed, n); }

static void run_find(long n) {
  for (long i = 0; i < n; i++) {
    const bp_op *op;
    bp_op_find("fast::unboxed", &op);
    sink += (long)(op != NULL);
  }
}

typedef struct variant {
  const char *name;
  const char *what;
  void (*run)(long);
} variant;

static const variant variants[] = {
    {"direct", "direct call through a function pointer (the floor)", run_direct},
    {"raw_ffi", "libffi ffi_call with a prepared cif, no Backplane", run_raw_ffi},
    {"boxed", "bp_call, boxed kernel", run_boxed},
    {"ffi", "bp_call, unboxed kernel through libffi", run_ffi},
    {"fast", "bp_call, unboxed kernel through the fast path", run_fast},
    {"push_boxed", "3 pushes + bp_call, boxed kernel", run_push_boxed},
    {"alloc_boxed", "bp_call + release, boxed kernel that allocates its result (op_meta, "
                    "tensor_empty_strided)", run_alloc_boxed},
    {"structured", "bp_call + release, structured kernel (the host allocates the result)",
     run_alloc_structured},
    {"find", "bp_op_find by name", run_find},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* The best of `reps` timings of n calls, in ns per call. */
static double time_ns(const variant *v, long n, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    v->run(n);
    double t = (now() - t0) * 1e9 / (double)n;
    if (t < best) best = t;
  }
  return best;
}

static void setup(void) {
  /* ffi:: is registered with the fast path off, fast:: with it on. */
  setenv("BP_DISABLE_FASTPATH", "1", 1);
  if (bp_plugin_register(init_ffi, "bench_ffi", NULL)) goto fail;
  unsetenv("BP_DISABLE_FASTPATH");
  if (bp_plugin_register(init_fast, "bench_fast", NULL)) goto fail;
  if (bp_op_find("fast::boxed", &op_boxed) || bp_op_find("ffi::unboxed", &op_ffi) ||
      bp_op_find("fast::unboxed", &op_fast) ||
      bp_op_find("fast::alloc_boxed", &op_alloc_boxed) ||
      bp_op_find("fast::alloc_structured", &op_alloc_structured))
    goto fail;
  int64_t n = 1;
  if (bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &ta) ||
      bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, &tb))
    goto fail;
  direct_ctx.struct_size = BP_KERNEL_CTX_STRUCT_SIZE;
  static ffi_type *types[5];
  types[0] = types[1] = types[2] = types[4] = &ffi_type_pointer;
  types[3] = &ffi_type_double;
  if (ffi_prep_cif(&raw_cif, FFI_DEFAULT_ABI, 5, &ffi_type_sint, types) != FFI_OK) {
    fprintf(stderr, "dispatch: ffi_prep_cif failed\n");
    exit(1);
  }
  return;
fail:
  fprintf(stderr, "dispatch: setup failed: %s\n", bp_last_error());
  exit(1);
}

int main(int argc, char **argv) {
  const char *only = NULL;
  long iters = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: dispatch [--only NAME --iters N]\n");
      return 2;
    }
  }
  setup();
  if (only) {
    for (size_t i = 0; i < NVARIANTS; i++)
      if (!strcmp(variants[i].name, only)) {
        variants[i].run(iters > 0 ? iters : 1000000);
        return 0;
      }
    fprintf(stderr, "dispatch: unknown variant '%s'\n", only);
    return 2;
  }
  long n = iters > 0 ? iters : 2000000;
  /* Warm up caches and the branch predictors. */
  for (size_t i = 0; i < NVARIANTS; i++) variants[i].run(n / 10);
  double floor_ns = time_ns(&variants[0], n, 7);
  printf("Backplane dispatch benchmark: %ld calls per timing, best of 7\n\n", n);
  printf("%-11s %10s %10s %9s  %s\n", "variant", "ns/call", "over floor", "x floor", "what");
  for (size_t i = 0; i < NVARIANTS; i++) {
    double t = i == 0 ? floor_ns : time_ns(&variants[i], i == NVARIANTS - 1 ? n / 10 : n, 7);
    printf("%-11s %10.2f %10.2f %9.2f  %s\n", variants[i].name, t, t - floor_ns, t / floor_ns,
           variants[i].what);
  }
  return 0;
}
