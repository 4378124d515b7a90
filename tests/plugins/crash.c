/*
 * tests/plugins/crash.c - plugins that take their host process down while
 * they load, for bp-info's isolation (--isolate).  Built three times:
 *   crash_init   (-DCRASH_INIT)   bp_plugin_init writes through NULL (SIGSEGV)
 *   crash_setup  (-DCRASH_SETUP)  setup() calls abort() (SIGABRT)
 *   hang_setup   (-DHANG_SETUP)   setup() never returns
 */
#include <stdlib.h>
#include <unistd.h>

#include <backplane/plugin.h>

#if defined(CRASH_INIT)
/* Read through a volatile, so that the compiler cannot see the NULL and
 * turn the store into a trap instruction of its own choosing. */
static int *volatile nowhere;
#endif

static bp_status setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  (void)reg;
#if defined(CRASH_SETUP)
  abort();
#elif defined(HANG_SETUP)
  for (;;) pause();
#endif
  return BP_OK;
}

static const bp_plugin_desc desc = {
    .struct_size = BP_PLUGIN_DESC_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
#if defined(CRASH_INIT)
    .name = "crash_init",
#elif defined(CRASH_SETUP)
    .name = "crash_setup",
#else
    .name = "hang_setup",
#endif
    .vendor = "Backplane tests",
    .version = "1.0.0",
    .setup = setup,
};

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  (void)host;
#if defined(CRASH_INIT)
  *nowhere = 1;
#endif
  return &desc;
}
