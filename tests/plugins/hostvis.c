/*
 * tests/plugins/hostvis.c - a host-visible vendor device (host memory,
 * BP_DEVICE_HOST_VISIBLE) whose core::relu writes the first byte of its
 * input back unchanged before it computes.  A byte compare cannot see
 * such a write; the read-only pages that bp-certify puts the inputs in on
 * a host-visible device can (tests/test-kit-plugin.sh).
 */
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin_aux.h>

static bp_status count(void *ud, int32_t *out) {
  (void)ud;
  *out = 1;
  return BP_OK;
}
static bp_status alloc(void *ud, int32_t index, size_t nbytes, void **out) {
  (void)ud, (void)index;
  *out = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  return *out ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}
static void release(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud, (void)index, (void)nbytes;
  free(ptr);
}
static bp_status copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd, size_t n) {
  (void)ud, (void)dd, (void)sd;
  memmove(dst, src, n);
  return BP_OK;
}
static bp_status sync(void *ud, int32_t index) {
  (void)ud, (void)index;
  return BP_OK;
}
static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "hostvis",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = count,
    .alloc = alloc,
    .free = release,
    .copy = copy,
    .synchronize = sync,
};

BP_AUX_POINTWISE_KERNEL(relu_kernel, 1, (self), bp_aux_max(self, 0))

static bp_status rewrite_impl(const bp_kernel_ctx *ctx, const bp_value *args, bp_tensor *out) {
  const bp_tensor_view *v = ctx->host->tensor_view(args[0].u.tensor);
  if (v->numel > 0) {
    volatile unsigned char *p = (unsigned char *)v->data;
    *p = *p;
  }
  return relu_kernel_impl_(ctx, args, out);
}
BP_AUX_STRUCTURED_KERNEL(rewrite_kernel, rewrite_impl)

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_library_def def = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  bp_library *lib;
  int32_t dev;
  bp_status st = host->device_type(reg, &iface, &dev);
  if (st == BP_OK) st = host->library(reg, &def, &lib);
  (void)relu_kernel, (void)relu_kernel_fill;
  return st != BP_OK ? st : BP_AUX_IMPL_STRUCTURED(host, lib, "relu", dev, rewrite_kernel, NULL);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "hostvis",
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  return host->abi_major == BP_ABI_VERSION_MAJOR ? &desc : NULL;
}
