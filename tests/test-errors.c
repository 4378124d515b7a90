/* Status names, versions, and the thread-local last error. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <backplane/host.h>

#include "tap.h"

static void status_names(void) {
  is_str(bp_status_str(BP_OK), "BP_OK");
  is_str(bp_status_str(BP_ERR_TYPE), "BP_ERR_TYPE");
  is_str(bp_status_str(BP_ERR_INTERNAL), "BP_ERR_INTERNAL");
  is_str(bp_status_str((bp_status)BP_STATUS_COUNT), "BP_ERR_UNKNOWN");
  is_str(bp_status_str((bp_status)-1), "BP_ERR_UNKNOWN");
  /* Every code has a distinct name that starts with BP_. */
  for (int i = 0; i < BP_STATUS_COUNT; i++) {
    ok(strncmp(bp_status_str((bp_status)i), "BP_", 3) == 0);
    for (int j = 0; j < i; j++) ok(strcmp(bp_status_str((bp_status)i), bp_status_str((bp_status)j)) != 0);
  }
}

static void versions(void) {
  uint32_t major = 99, minor = 99;
  bp_abi_version(&major, &minor);
  is_int(major, BP_ABI_VERSION_MAJOR);
  is_int(minor, BP_ABI_VERSION_MINOR);
  bp_abi_version(NULL, NULL); /* must not crash */
  ok(bp_version() != NULL && strlen(bp_version()) > 0);
}

static void last_error_set_and_clear(void) {
  bp_clear_error();
  is_str(bp_last_error(), "");
  is_int(bp_last_status(), BP_OK);
  bp_tensor *t = NULL;
  is_status(bp_tensor_empty(BP_CPU, 12345, 0, NULL, &t), BP_ERR_TYPE);
  is_int(bp_last_status(), BP_ERR_TYPE);
  has_str(bp_last_error(), "bp_tensor_empty: dtype 12345 is not a bp_dtype");
  ok(t == NULL);
  bp_clear_error();
  is_str(bp_last_error(), "");
}

static void *other_thread(void *arg) {
  (void)arg;
  /* A fresh thread starts with no error, whatever the main thread has. */
  static char seen[256];
  snprintf(seen, sizeof seen, "%s", bp_last_error());
  int64_t sz = -1;
  bp_tensor *t;
  bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &sz, &t);
  return seen;
}

static void last_error_is_thread_local(void) {
  bp_tensor *t;
  bp_tensor_empty(BP_CPU, 777, 0, NULL, &t);
  char mine[256];
  snprintf(mine, sizeof mine, "%s", bp_last_error());
  pthread_t th;
  void *res;
  is_int(pthread_create(&th, NULL, other_thread, NULL), 0);
  is_int(pthread_join(th, &res), 0);
  is_str((const char *)res, "");
  /* The other thread's failure did not overwrite ours. */
  is_str(bp_last_error(), mine);
  has_str(bp_last_error(), "dtype 777");
}

static void long_messages_are_truncated(void) {
  char name[4000];
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  int32_t dt;
  is_status(bp_dtype_from_name(name, &dt), BP_ERR_TYPE);
  ok(strlen(bp_last_error()) < 1024);
  has_str(bp_last_error(), "unknown dtype 'xxxx");
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(status_names),
      TAP_CASE(versions),
      TAP_CASE(last_error_set_and_clear),
      TAP_CASE(last_error_is_thread_local),
      TAP_CASE(long_messages_are_truncated),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
