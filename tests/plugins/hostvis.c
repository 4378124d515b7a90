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

static const bp_host_api *H;
#define FAKEDEV_OOM "hostvis: out of memory"
#include "fakedev.h"


static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "hostvis",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = fakedev_count1,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
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
  H = host;
  return host->abi_major == BP_ABI_VERSION_MAJOR ? &desc : NULL;
}
