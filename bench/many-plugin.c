/*
 * bench/many-plugin.c - one plugin to be copied many times, for
 * bench/discover: each copy takes its name from its own file name
 * (bench_p017.so -> plugin "bench_p017", namespace "bench_p017"), so that
 * hundreds of copies load side by side, each defining one op with one CPU
 * kernel, as a small vendor plugin would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>

static const bp_host_api *H;
static char name[64];

static bp_status ident(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                       bp_value *rets, size_t nrets) {
  (void)ctx, (void)nargs, (void)nrets;
  rets[0].tag = BP_TAG_TENSOR;
  rets[0].len = 0;
  rets[0].u.tensor = H->tensor_retain(args[0].u.tensor);
  return BP_OK;
}

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, name, BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = H->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = "ident(Tensor a) -> Tensor";
  if ((st = H->def(lib, &d))) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = "ident";
  k.device_type = BP_DEVICE_CPU;
  k.boxed = ident;
  return H->impl(lib, &k);
}

static bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .vendor = "Backplane benchmarks",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  Dl_info info;
  if (!dladdr((void *)(uintptr_t)bp_plugin_init, &info) || !info.dli_fname) {
    host->set_error(BP_ERR_LOAD, "bench plugin: cannot find its own file");
    return NULL;
  }
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  size_t n = strcspn(base, ".");
  snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), base);
  H = host;
  desc.name = name;
  return &desc;
}
