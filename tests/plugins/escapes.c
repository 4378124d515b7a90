/*
 * tests/plugins/escapes.c - a plugin whose every free-text string carries
 * terminal escape sequences, newlines and forged TAP lines: its vendor,
 * its version, the note its setup() leaves, an op's doc, its device's
 * name, and the error messages of its kernels.  bp-info, bp-run and
 * bp-certify must print all of them escaped (tools/termsafe.h): no raw ESC
 * byte reaches the terminal, and every TAP line stays one line.
 *
 * Ops (CPU):
 *   escapes::boom(Tensor a) -> Tensor   always fails, with NASTY
 *   core::add                            always fails, with NASTY
 * (a kernel's message also has "argument #0" and a forged "# SKIP", which
 * bp-certify's TAP must escape as "\#" and its JSON keep)
 * Device type "escdev", one device, host memory, named NASTY.
 */
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

/* Recolours, clears the screen, retitles the window, and forges a TAP
 * test point and plan. */
#define NASTY "\x1b[31mred\x1b[0m \x1b[2J\x1b]0;pwned\x07\nok 999 - forged\n1..999\r\xc2\x9b" "1m"

static const bp_host_api *H;
#define FAKEDEV_OOM "escdev: out of memory " NASTY
#include "fakedev.h"


static bp_status dev_props(void *ud, int32_t index, bp_device_props *p) {
  (void)ud;
  (void)index;
  strncpy(p->name, NASTY, sizeof p->name - 1);
  return BP_OK;
}
static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "escdev",
    .type = BP_DEVICE_INVALID,
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = fakedev_count1,
    .properties = dev_props,
    .alloc = fakedev_alloc,
    .free = fakedev_free,
    .copy = fakedev_copy,
    .synchronize = fakedev_sync,
};

static bp_status fails(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                       bp_value *rets, size_t nrets) {
  (void)args;
  (void)nargs;
  (void)rets;
  (void)nrets;
  return H->set_errorf(BP_ERR_BACKEND, "%s: argument #0: " NASTY " # SKIP forged", ctx->op_name);
}

static bp_status impl(bp_library *lib, const char *op) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = fails;
  return H->impl(lib, &k);
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  bp_status st;
  int32_t dev;
  if ((st = host->device_type(reg, &iface, &dev))) return st;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "escapes", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  if ((st = host->library(reg, &ld, &lib))) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "boom(Tensor a) -> Tensor";
  d.doc = "explodes " NASTY;
  if ((st = host->def(lib, &d)) || (st = impl(lib, "boom"))) return st;
  bp_library_def core = {BP_LIBRARY_DEF_STRUCT_SIZE, "core", BP_LIBRARY_IMPL, 0};
  if ((st = host->library(reg, &core, &lib)) || (st = impl(lib, "add"))) return st;
  return host->set_error(BP_OK, "a note " NASTY);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "escapes",
    .vendor = "Vendor " NASTY,
    .version = "1.0 " NASTY,
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  H = host;
  return &desc;
}
