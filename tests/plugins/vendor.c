/*
 * tests/plugins/vendor.c - a vendor plugin that brings its own device type,
 * registered by name so that the host assigns it a runtime code.  Built
 * twice, to prove that two such plugins coexist:
 *   vendor_a               device "npu_a", namespace "vendor_a", offset 100
 *   vendor_b (-DVENDOR_B)  device "npu_b", namespace "vendor_b", offset 200
 * The device is host memory from aligned_alloc, one device per type.
 *
 * Ops (float32, contiguous):
 *   offset(Tensor a) -> Tensor   a + 1 on the CPU, a + offset on its device;
 *                                with a meta function
 *   slow(Tensor a) -> Tensor     a + 1 on the CPU after ~100 us, to keep
 *                                calls in flight while a test unloads
 *   device_code() -> int         the code the host assigned to the device
 * The namespace accepts fragments (see frag.c).
 *
 * The plugin counts the calls running in its code (kernels and device
 * functions) and its allocations not yet freed.  teardown() aborts when
 * either is nonzero: the host promises that no call is in flight and, by
 * refusing to unload while tensors live on the device, that all device
 * memory is back.  If VENDOR_ALLOC_DELAY_US or VENDOR_FREE_DELAY_US is
 * set, the device's alloc() or free() sleeps that long, so that a test can
 * unload while one of them is running (VENDOR_SYNC_DELAY_US: its
 * synchronize()); with VENDOR_ENTERED_FD=N, each such delayed call first
 * writes one byte to file descriptor N, so that the test knows the call is
 * inside the plugin however busy the machine is.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <backplane/plugin.h>

#if defined(VENDOR_B)
#define PLUGIN_NAME "vendor_b"
#define DEVICE_NAME "npu_b"
#define DEVICE_OFFSET 200.0f
#else
#define PLUGIN_NAME "vendor_a"
#define DEVICE_NAME "npu_a"
#define DEVICE_OFFSET 100.0f
#endif

static const bp_host_api *H;
static int32_t npu = BP_DEVICE_INVALID;
static atomic_int running;       /* calls executing in this plugin now */
static atomic_long outstanding;  /* device allocations not yet freed */

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Sleeps for the microseconds the environment variable `var` names,
 * after saying so on VENDOR_ENTERED_FD when that is set. */
static void delay_from_env(const char *var) {
  const char *v = getenv(var), *fd = getenv("VENDOR_ENTERED_FD");
  if (!v || !*v) return;
  if (fd && *fd) {
    ssize_t w = write((int)strtol(fd, NULL, 10), "e", 1);
    (void)w;
  }
  sleep_us(strtol(v, NULL, 10));
}

/* ------------------------------------------------------------------------ */
/* The device                                                               */
/* ------------------------------------------------------------------------ */

static bp_status dev_count(void *ud, int32_t *n) {
  (void)ud;
  *n = 1;
  return BP_OK;
}

static bp_status dev_alloc(void *ud, int32_t index, size_t nbytes, void **out) {
  (void)ud;
  atomic_fetch_add(&running, 1);
  delay_from_env("VENDOR_ALLOC_DELAY_US");
  bp_status st = BP_OK;
  if (index != 0) {
    st = H->set_errorf(BP_ERR_DEVICE, DEVICE_NAME ": no device %d", (int)index);
  } else if (!(*out = aligned_alloc(64, (nbytes + 63) & ~(size_t)63))) {
    st = H->set_error(BP_ERR_OUT_OF_MEMORY, DEVICE_NAME ": out of memory");
  } else {
    atomic_fetch_add(&outstanding, 1);
  }
  atomic_fetch_sub(&running, 1);
  return st;
}

static void dev_free(void *ud, int32_t index, void *p, size_t nbytes) {
  (void)ud;
  (void)index;
  (void)nbytes;
  atomic_fetch_add(&running, 1);
  delay_from_env("VENDOR_FREE_DELAY_US");
  free(p);
  atomic_fetch_sub(&outstanding, 1);
  atomic_fetch_sub(&running, 1);
}

static bp_status dev_copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                          size_t n) {
  (void)ud;
  (void)dd;
  (void)sd;
  atomic_fetch_add(&running, 1);
  memmove(dst, src, n);
  atomic_fetch_sub(&running, 1);
  return BP_OK;
}

static bp_status dev_sync(void *ud, int32_t index) {
  (void)ud;
  (void)index;
  atomic_fetch_add(&running, 1);
  delay_from_env("VENDOR_SYNC_DELAY_US");
  atomic_fetch_sub(&running, 1);
  return BP_OK;
}

static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = DEVICE_NAME,
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = dev_count,
    .alloc = dev_alloc,
    .free = dev_free,
    .copy = dev_copy,
    .synchronize = dev_sync,
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* out = a + add, on a's device, which must be the one dispatched on. */
static bp_status add_scalar(const bp_kernel_ctx *ctx, bp_tensor *a, float add, bp_tensor **out) {
  const bp_tensor_view *v = H->tensor_view(a);
  if (v->device.type != ctx->device_type)
    return H->set_errorf(BP_ERR_INTERNAL, "%s: dispatched for device type %d with a tensor on %d",
                         ctx->op_name, (int)ctx->device_type, (int)v->device.type);
  if (v->dtype != BP_FLOAT32 || !(v->flags & BP_VIEW_CONTIGUOUS))
    return H->set_errorf(BP_ERR_TYPE, "%s: expected a contiguous float32 tensor", ctx->op_name);
  bp_status st = H->tensor_empty(v->device, v->dtype, v->ndim, v->sizes, out);
  if (st) return st;
  const float *x = v->data;
  float *z = H->tensor_view(*out)->data;
  for (int64_t i = 0; i < v->numel; i++) z[i] = x[i] + add;
  return BP_OK;
}

/* offset: unboxed; user_data points at the amount to add. */
static bp_status offset_kernel(const bp_kernel_ctx *ctx, bp_tensor *a, bp_tensor **out) {
  atomic_fetch_add(&running, 1);
  bp_status st = add_scalar(ctx, a, *(const float *)ctx->user_data, out);
  atomic_fetch_sub(&running, 1);
  return st;
}

/* offset's meta function: the result is like a, contiguous. */
static bp_status offset_meta(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_tensor_meta *outs, size_t nouts) {
  (void)ctx;
  (void)nargs;
  (void)nouts;
  atomic_fetch_add(&running, 1);
  const bp_tensor_view *v = H->tensor_view(args[0].u.tensor);
  outs[0].device = v->device;
  outs[0].dtype = v->dtype;
  outs[0].ndim = v->ndim;
  int64_t stride = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    outs[0].sizes[d] = v->sizes[d];
    outs[0].strides[d] = stride;
    stride *= v->sizes[d];
  }
  atomic_fetch_sub(&running, 1);
  return BP_OK;
}

static bp_status slow_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                             bp_value *rets, size_t nrets) {
  (void)nargs;
  (void)nrets;
  atomic_fetch_add(&running, 1);
  sleep_us(100);
  bp_tensor *out;
  bp_status st = add_scalar(ctx, args[0].u.tensor, 1.0f, &out);
  if (!st) {
    rets[0].tag = BP_TAG_TENSOR;
    rets[0].len = 0;
    rets[0].u.tensor = out;
  }
  atomic_fetch_sub(&running, 1);
  return st;
}

static bp_status device_code_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                                    bp_value *rets, size_t nrets) {
  (void)ctx;
  (void)args;
  (void)nargs;
  (void)nrets;
  rets[0].tag = BP_TAG_INT;
  rets[0].len = 0;
  rets[0].u.i = npu;
  return BP_OK;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

static const float cpu_offset = 1.0f, device_offset = DEVICE_OFFSET;

static bp_status impl(bp_library *lib, const char *op, int32_t dev, bp_boxed_kernel boxed,
                      bp_unboxed_kernel unboxed, const float *user_data) {
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = dev;
  k.boxed = boxed;
  k.unboxed = unboxed;
  k.user_data = (void *)user_data;
  return H->impl(lib, &k);
}

static bp_status def(bp_library *lib, const char *schema, bp_meta_fn meta) {
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = schema;
  d.meta = meta;
  return H->def(lib, &d);
}

#define U(fn) ((bp_unboxed_kernel)(void (*)(void))(fn))

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_status st;
  if ((st = host->device_type(reg, &iface, &npu))) return st;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, PLUGIN_NAME, BP_LIBRARY_DEF,
                       BP_LIBRARY_ALLOW_FRAGMENTS};
  bp_library *lib;
  if ((st = host->library(reg, &ld, &lib))) return st;
  if ((st = def(lib, "offset(Tensor a) -> Tensor", offset_meta)) ||
      (st = def(lib, "slow(Tensor a) -> Tensor", NULL)) ||
      (st = def(lib, "device_code() -> int", NULL)))
    return st;
  if ((st = impl(lib, "offset", BP_DEVICE_CPU, NULL, U(offset_kernel), &cpu_offset)) ||
      (st = impl(lib, "offset", npu, NULL, U(offset_kernel), &device_offset)) ||
      (st = impl(lib, "slow", BP_DEVICE_CPU, slow_kernel, NULL, NULL)) ||
      (st = impl(lib, "device_code", BP_DEVICE_CPU, device_code_kernel, NULL, NULL)))
    return st;
#if defined(VENDOR_B)
  /* A note for the user, kept by the host as bp_plugin_info.error. */
  return host->set_error(BP_OK, "vendor_b: npu_b is simulated in host memory");
#else
  return BP_OK;
#endif
}

static void teardown(const bp_host_api *host) {
  (void)host;
  int r = atomic_load(&running);
  long o = atomic_load(&outstanding);
  if (r != 0 || o != 0) {
    fprintf(stderr,
            PLUGIN_NAME ": teardown while %d call(s) still run in the plugin and %ld device "
                        "allocation(s) are not freed\n",
            r, o);
    abort();
  }
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = PLUGIN_NAME,
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
    .teardown = teardown,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
