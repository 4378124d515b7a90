/*
 * tests/test-tls.c - libbackplane stays loadable with dlopen() next to
 * other libraries, and the thread's last error survives the move of its
 * message out of thread-local storage.
 *
 * Frameworks load libbackplane with dlopen() (a Python extension, say).
 * A library whose code uses the initial-exec TLS model (the call path
 * does) has its whole thread-local block placed in the few hundred bytes
 * of static TLS that glibc keeps for such libraries, so that block must be
 * small.  The test loads several copies of libbackplane, each of which
 * takes its own block, as several such libraries would; with a 1 KiB
 * message buffer in the block, the second copy failed with "cannot
 * allocate memory in static TLS block".
 *
 * The test does not link libbackplane: it loads it from
 * $top_builddir/host/.libs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/host.h>

#include "tap.h"

#define COPIES 4

typedef bp_status (*op_find_fn)(const char *, const bp_op **);
typedef const char *(*last_error_fn)(void);
typedef bp_status (*last_status_fn)(void);
typedef void (*clear_error_fn)(void);

typedef struct lib {
  void *dl;
  op_find_fn op_find;
  last_error_fn last_error;
  last_status_fn last_status;
  clear_error_fn clear_error;
} lib;

static char dir[] = "/tmp/bp-test-tls.XXXXXX";
static char paths[COPIES][512];

/* Copies the built library to dir/libbackplane-copyN.so. */
static bool copy_library(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  bool good = in && out;
  char buf[1 << 16];
  size_t n;
  while (good && (n = fread(buf, 1, sizeof buf, in)) > 0) good = fwrite(buf, 1, n, out) == n;
  if (in) fclose(in);
  if (out && fclose(out) != 0) good = false;
  return good;
}

static bool open_lib(lib *l, const char *path) {
  memset(l, 0, sizeof *l);
  l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->dl) {
    tap_diag("dlopen(%s): %s", path, dlerror());
    return false;
  }
  l->op_find = (op_find_fn)dlsym(l->dl, "bp_op_find");
  l->last_error = (last_error_fn)dlsym(l->dl, "bp_last_error");
  l->last_status = (last_status_fn)dlsym(l->dl, "bp_last_status");
  l->clear_error = (clear_error_fn)dlsym(l->dl, "bp_clear_error");
  return l->op_find && l->last_error && l->last_status && l->clear_error;
}

static void setup(void) {
  const char *top = getenv("top_builddir");
  char from[512];
  snprintf(from, sizeof from, "%s/host/.libs/libbackplane.so", top ? top : ".");
  if (access(from, R_OK) != 0) tap_skip("%s is not built as a shared library", from);
  if (!mkdtemp(dir)) tap_skip("cannot make a temporary directory");
  for (int i = 0; i < COPIES; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/libbackplane-copy%d.so", dir, i);
    if (!copy_library(from, paths[i])) tap_skip("cannot copy %s to %s", from, paths[i]);
  }
}

static void cleanup(void) {
  for (int i = 0; i < COPIES; i++) unlink(paths[i]);
  rmdir(dir);
}

/* Several copies load side by side, each with its own last error. */
static void copies_load_side_by_side(void) {
  setup();
  lib libs[COPIES];
  int loaded = 0;
  for (int i = 0; i < COPIES; i++) loaded += open_lib(&libs[i], paths[i]);
  is_int(loaded, COPIES);
  if (loaded == COPIES) {
    for (int i = 0; i < COPIES; i++) {
      char name[64];
      snprintf(name, sizeof name, "nowhere::op%d", i);
      const bp_op *op = NULL;
      is_int(libs[i].op_find(name, &op), BP_ERR_NOT_FOUND);
      has_str(libs[i].last_error(), name);
    }
    /* Each copy kept its own message. */
    for (int i = 0; i < COPIES; i++) {
      char name[64];
      snprintf(name, sizeof name, "nowhere::op%d", i);
      has_str(libs[i].last_error(), name);
      is_int(libs[i].last_status(), BP_ERR_NOT_FOUND);
      libs[i].clear_error();
      is_str(libs[i].last_error(), "");
      is_int(libs[i].last_status(), BP_OK);
    }
  }
  for (int i = 0; i < loaded; i++) dlclose(libs[i].dl);
  cleanup();
}

/* A thread's message is its own, before and after its first error, and
 * its buffer goes with the thread (LeakSanitizer checks the leak). */
static void *thread_errors(void *arg) {
  lib *l = arg;
  static const char *const empty = "";
  const char *before = l->last_error();
  const bp_op *op = NULL;
  bool good = before && strcmp(before, empty) == 0 && l->last_status() == BP_OK;
  good = good && l->op_find("nowhere::from_a_thread", &op) == BP_ERR_NOT_FOUND &&
         strstr(l->last_error(), "nowhere::from_a_thread") != NULL;
  return good ? (void *)1 : NULL;
}

static void messages_are_per_thread(void) {
  setup();
  lib l;
  ok(open_lib(&l, paths[0]));
  if (l.dl) {
    const bp_op *op = NULL;
    is_int(l.op_find("nowhere::main", &op), BP_ERR_NOT_FOUND);
    for (int round = 0; round < 8; round++) {
      pthread_t tid;
      void *res = NULL;
      ok(pthread_create(&tid, NULL, thread_errors, &l) == 0);
      pthread_join(tid, &res);
      ok(res == (void *)1);
    }
    has_str(l.last_error(), "nowhere::main");
    dlclose(l.dl);
  }
  cleanup();
}

/* A thread that has used libbackplane outlives a dlclose() of it: the
 * thread's records (its reader record, its message buffer) are released
 * at its exit by functions of libbackplane, so the library must stay
 * mapped (it is linked with -z nodelete). */
typedef struct late {
  lib *l;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stage; /* 1: the thread has used the library; 2: it may exit */
  bool good;
} late;

static void *late_thread(void *arg) {
  late *t = arg;
  const bp_op *op = NULL;
  t->good = t->l->op_find("nowhere::late", &op) == BP_ERR_NOT_FOUND &&
            strstr(t->l->last_error(), "nowhere::late") != NULL;
  pthread_mutex_lock(&t->mu);
  t->stage = 1;
  pthread_cond_broadcast(&t->cv);
  while (t->stage != 2) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
  return NULL; /* the thread-exit destructors run here */
}

static void threads_outlive_dlclose(void) {
  setup();
  lib l;
  ok(open_lib(&l, paths[0]));
  if (l.dl) {
    late t = {.l = &l, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    pthread_t tid;
    ok(pthread_create(&tid, NULL, late_thread, &t) == 0);
    pthread_mutex_lock(&t.mu);
    while (t.stage != 1) pthread_cond_wait(&t.cv, &t.mu);
    pthread_mutex_unlock(&t.mu);
    is_int(dlclose(l.dl), 0);
    pthread_mutex_lock(&t.mu);
    t.stage = 2;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
    pthread_join(tid, NULL); /* a crash here ends the case */
    ok(t.good);
  }
  cleanup();
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(copies_load_side_by_side),
      TAP_CASE(messages_are_per_thread),
      TAP_CASE(threads_outlive_dlclose),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
