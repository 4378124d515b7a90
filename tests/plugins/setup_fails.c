/*
 * tests/plugins/setup_fails.c - a plugin whose setup() registers a bit of
 * everything (a vendor device type with a fallback, a namespace, an op, two
 * kernels) and then fails.  The host must roll all of it back: the op is
 * not callable, and the namespace ("vendor_a") and the device type name
 * ("npu_a") are free for the vendor_a plugin to take afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;
#define FAKEDEV_OOM "setup_fails: out of memory"
#include "fakedev.h"


static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "npu_a",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = fakedev_count1,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
};

/* A kernel that must never run: the op it serves never gets published. */
static bp_status doomed_kernel(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                               bp_value *rets, size_t nrets) {
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return H->set_errorf(BP_ERR_INTERNAL, "%s: a rolled-back kernel ran", ctx->op_name);
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_status st;
  int32_t dev;
  if ((st = host->device_type(reg, &iface, &dev))) return st;
  bp_fallback_def fb = {BP_FALLBACK_DEF_STRUCT_SIZE, dev, 0, doomed_kernel, NULL};
  if ((st = host->fallback(reg, &fb))) return st;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "vendor_a", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  if ((st = host->library(reg, &ld, &lib))) return st;
  bp_op_def d = {0};
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "doomed(Tensor a) -> Tensor";
  if ((st = host->def(lib, &d))) return st;
  bp_kernel_def k = {0};
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "doomed";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = doomed_kernel;
  if ((st = host->impl(lib, &k))) return st;
  k.device_type = dev;
  if ((st = host->impl(lib, &k))) return st;
  /* Everything registered; now fail the way a driver does when the
   * hardware does not answer. */
  return host->set_error(BP_ERR_BACKEND, "setup_fails: the npu_a firmware did not answer");
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "setup_fails",
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
