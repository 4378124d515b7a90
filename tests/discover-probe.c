/*
 * tests/discover-probe.c - runs plugin discovery and prints how many
 * plugins it loaded.  test-setuid.sh runs it as a setuid program to prove
 * that BP_PLUGIN_PATH is ignored with elevated privileges.
 */
#include <stdio.h>

#include <backplane/host.h>

int main(void) {
  size_t loaded = 0;
  if (bp_plugin_discover(&loaded) != BP_OK) {
    fprintf(stderr, "discover-probe: %s\n", bp_last_error());
    return 1;
  }
  printf("%zu\n", loaded);
  return 0;
}
