/*
 * tests/discover-probe.c - runs plugin discovery and prints how many
 * plugins it loaded.  test-setuid.sh runs it as a setuid program to prove
 * that BP_PLUGIN_PATH is ignored with elevated privileges.
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
  printf("%zu\n", loaded);
  return 0;
}
