/* host/error.c - status names, versions, and the thread-local last error. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Long enough for a message that names a plugin path, an op and two
 * shapes; longer messages are truncated, never dropped. */
#define BP__ERROR_MAX 1024

static _Thread_local struct {
  bp_status status;
  char message[BP__ERROR_MAX];
} last;

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

BP_API const char *bp_last_error(void) { return last.message; }

BP_API bp_status bp_last_status(void) { return last.status; }

BP_API void bp_clear_error(void) {
  last.status = BP_OK;
  last.message[0] = '\0';
}

bp_status bp__error_str(bp_status status, const char *message) {
  last.status = status;
  if (!message) message = bp_status_str(status);
  /* Copy through snprintf: `message` may point into last.message itself
   * (a composite kernel re-raising the error it received). */
  if (message != last.message)
    snprintf(last.message, sizeof last.message, "%s", message);
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
  if (st == (bp_status)status && last.status != st)
    return bp__error(st, "%s: %s failed with %s and gave no message", who, what, bp_status_str(st));
  return st;
}
