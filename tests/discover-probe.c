/*
 * tests/discover-probe.c - runs plugin discovery and prints how many
 * plugins it loaded from BP_PLUGIN_PATH (plugins of an installed copy of
 * Backplane, in the installed plugin directory, are not counted).
 * test-setuid.sh runs it as a setuid program to prove that BP_PLUGIN_PATH
 * is ignored with elevated privileges.
 */
#include <stdio.h>

#include <backplane/host.h>

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer cannot inspect a setuid process, and a setuid process does
 * not read ASAN_OPTIONS, so the probe sets its own default. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

int main(void) {
  size_t loaded = 0;
  if (bp_plugin_discover(&loaded) != BP_OK) {
    fprintf(stderr, "discover-probe: %s\n", bp_last_error());
    return 1;
  }
  (void)loaded;
  size_t from_env = 0;
  for (size_t i = 0; i < bp_plugin_count(); i++) {
    bp_plugin_info info;
    info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
    if (bp_plugin_get_info(bp_plugin_at(i), &info) == BP_OK && info.origin == BP_ORIGIN_ENV &&
        info.state == BP_PLUGIN_LOADED)
      from_env++;
  }
  printf("%zu\n", from_env);
  return 0;
}
