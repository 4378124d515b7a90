/* host/error.c - status names, versions, and the thread-local last error. */
#include "internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long enough for a message that names a plugin path, an op and two
 * shapes; longer messages are truncated, never dropped. */
#define BP__ERROR_MAX 1024

/*
 * The thread's last error.  Only the status and a pointer are
 * thread-local; the message's buffer is allocated at the thread's first
 * error and freed when the thread exits.  libbackplane's thread-local
 * block must stay small: the call path reads its reader record through
 * the initial-exec model (rcu.c), which makes glibc place the whole block
 * in the static TLS it keeps for libraries loaded with dlopen(), a few
 * hundred bytes for all of them.  With the 1 KiB message inside, a second
 * such library could no longer be loaded ("cannot allocate memory in
 * static TLS block"); tests/test-tls checks that.
 */
static _Thread_local bp_status last_status;
static _Thread_local char *last_message; /* NULL until the first error */

/* When the message cannot be kept: the thread had no memory for its
 * buffer, so the error is almost surely that (as SQLite's static "out of
 * memory" message). */
static const char no_room[] = "out of memory (no room for this thread's error message)";

static pthread_key_t message_key;
static pthread_once_t message_once = PTHREAD_ONCE_INIT;
static bool have_message_key;

/* Runs at thread exit, in the exiting thread. */
static void free_message(void *buf) {
  if (last_message == buf) last_message = NULL;
  bp__free(buf);
}

static void make_message_key(void) {
  have_message_key = pthread_key_create(&message_key, free_message) == 0;
}

/* The calling thread's message buffer, allocated at its first use; NULL
 * when out of memory. */
static char *message_buffer(void) {
  if (BP__LIKELY(last_message != NULL)) return last_message;
  pthread_once(&message_once, make_message_key);
  if (!have_message_key) return NULL;
  char *buf = bp__malloc(BP__ERROR_MAX);
  if (!buf) return NULL;
  if (pthread_setspecific(message_key, buf) != 0) {
    bp__free(buf);
    return NULL;
  }
  buf[0] = '\0';
  last_message = buf;
  return buf;
}

static const char *const status_names[BP_STATUS_COUNT] = {
    "BP_OK",
    "BP_ERR_INVALID_ARGUMENT",
    "BP_ERR_TYPE",
    "BP_ERR_SHAPE",
    "BP_ERR_DEVICE",
    "BP_ERR_NOT_FOUND",
    "BP_ERR_ALREADY_EXISTS",
    "BP_ERR_UNSUPPORTED",
    "BP_ERR_OUT_OF_MEMORY",
    "BP_ERR_OVERFLOW",
    "BP_ERR_VERSION",
    "BP_ERR_SCHEMA",
    "BP_ERR_LOAD",
    "BP_ERR_BUSY",
    "BP_ERR_BACKEND",
    "BP_ERR_INTERNAL",
};

BP_API const char *bp_status_str(bp_status status) {
  if ((int)status < 0 || (int)status >= BP_STATUS_COUNT) return "BP_ERR_UNKNOWN";
  return status_names[status];
}

BP_API const char *bp_version(void) { return BP_VERSION_STRING; }

BP_API void bp_abi_version(uint32_t *out_major, uint32_t *out_minor) {
  if (out_major) *out_major = BP_ABI_VERSION_MAJOR;
  if (out_minor) *out_minor = BP_ABI_VERSION_MINOR;
}

void bp__error_prepare(void) { (void)message_buffer(); }

BP_API const char *bp_last_error(void) {
  if (last_message) return last_message;
  return last_status == BP_OK ? "" : no_room;
}

BP_API bp_status bp_last_status(void) { return last_status; }

BP_API void bp_clear_error(void) {
  last_status = BP_OK;
  if (last_message) last_message[0] = '\0';
}

void bp__error_keep(bp__kept_error *k) {
  k->status = last_status;
  k->message = NULL;
  if (last_status == BP_OK || !last_message) return;
  size_t n = strlen(last_message) + 1;
  if ((k->message = bp__malloc(n)) != NULL) memcpy(k->message, last_message, n);
}

void bp__error_restore(bp__kept_error *k) {
  if (k->status == BP_OK) {
    bp_clear_error();
  } else {
    last_status = k->status;
    char *buf = message_buffer();
    if (buf && k->message)
      snprintf(buf, BP__ERROR_MAX, "%s", k->message);
    else if (buf)
      snprintf(buf, BP__ERROR_MAX, "%s (its message was lost: no memory to keep it)",
               bp_status_str(k->status));
  }
  bp__free(k->message);
  k->message = NULL;
}

bp_status bp__error_str(bp_status status, const char *message) {
  last_status = status;
  if (!message) message = bp_status_str(status);
  char *buf = message_buffer();
  /* Copy through snprintf: `message` may point into the buffer itself
   * (a composite kernel re-raising the error it received). */
  if (buf && message != buf) snprintf(buf, BP__ERROR_MAX, "%s", message);
  return status;
}

bp_status bp__error(bp_status status, const char *fmt, ...) {
  char buf[BP__ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return bp__error_str(status, buf);
}

bp_status bp__status_from_plugin(int status, const char *who) {
  if (status >= 0 && status < BP_STATUS_COUNT) return (bp_status)status;
  return bp__error(BP_ERR_INTERNAL,
                   "%s returned status %d, which is not a bp_status of ABI %d.%d",
                   who, status, BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR);
}

bp_status bp__plugin_failed(int status, const char *who, const char *what) {
  bp_status st = bp__status_from_plugin(status, who);
  /* A plugin that fails without set_error() would otherwise leave an
   * older, unrelated message in place. */
  if (st == (bp_status)status && last_status != st)
    return bp__error(st, "%s: %s failed with %s and gave no message", who, what, bp_status_str(st));
  return st;
}
