/*
 * hostmem: a plugin that registers a vendor device type, "hostmem", whose
 * memory is plain host memory from the C library.  The interface's
 * required functions are all there is to a device type.
 */
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

static bp_status count(void *ud, int32_t *out_count) {
  (void)ud;
  *out_count = 1;
  return BP_OK;
}

/* 64-byte aligned, as the interface requires; aligned_alloc wants a
 * multiple of the alignment. */
static bp_status alloc(void *ud, int32_t index, size_t nbytes, void **out_ptr) {
  (void)ud, (void)index;
  *out_ptr = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  return *out_ptr ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

static void release(void *ud, int32_t index, void *ptr, size_t nbytes) {
  (void)ud, (void)index, (void)nbytes;
  free(ptr);
}

/* Both sides are host memory, whichever device they belong to. */
static bp_status copy(void *ud, void *dst, bp_device dd, const void *src, bp_device sd,
                      size_t nbytes) {
  (void)ud, (void)dd, (void)sd;
  memmove(dst, src, nbytes);
  return BP_OK;
}

static bp_status synchronize(void *ud, int32_t index) {
  (void)ud, (void)index;
  return BP_OK; /* nothing runs asynchronously */
}

static const bp_device_iface iface = {
    .struct_size = BP_DEVICE_IFACE_STRUCT_SIZE,
    .name = "hostmem",
    .type = BP_DEVICE_INVALID, /* the host assigns a runtime code */
    .flags = BP_DEVICE_HOST_VISIBLE,
    .count = count,
    .alloc = alloc,
    .free = release,
    .copy = copy,
    .synchronize = synchronize,
};

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  int32_t code;
  return host->device_type(reg, &iface, &code);
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .name = "hostmem",
    .vendor = "My Company",
    .version = "0.1.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  return host->abi_major == BP_ABI_VERSION_MAJOR ? &desc : NULL;
}
