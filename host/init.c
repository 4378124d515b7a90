/*
 * host/init.c - the host's start: the core op set, defined once through
 * the host table by its built-in plugin (core.c, run as loader.c runs a
 * built-in setup()), before the first lookup or load (api.c).
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bp_status status;
static char message[512];

static void start(void) {
  status = bp__builtin_setup(bp__core_setup);
  if (status)
    snprintf(message, sizeof message, "libbackplane: the core op set could not be defined, so "
             "no core op and no plugin can be used: %s", bp_last_error());
}

bp_status bp__ensure_init(void) {
  pthread_once(&once, start);
  /* Every caller gets the failure, with the first one's message. */
  if (status) return bp__error_str(status, message);
  return BP_OK;
}
