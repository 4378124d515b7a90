/*
 * conformance/checks/hygiene.c - OP/hygiene: a call leaks no tensor
 * handle and no device memory, and a successful one leaves no error set
 * and writes nothing to standard output or standard error.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/host.h>

#include "checks.h"

/* ------------------------------------------------------------------------ */
/* What a call writes to file descriptors 1 and 2                           */
/* ------------------------------------------------------------------------ */

/* Two scratch files that stand in for stdout and stderr during a call,
 * and the descriptors they replace. */
typedef struct capture {
  FILE *file[2];
  int saved[2];
} capture;

static const char *const stream_name[2] = {"stdout", "stderr"};

static bool capture_open(capture *k) {
  k->file[0] = tmpfile();
  k->file[1] = tmpfile();
  return k->file[0] && k->file[1];
}

static void capture_close(capture *k) {
  for (int i = 0; i < 2; i++)
    if (k->file[i]) fclose(k->file[i]);
}

/* Points descriptors 1 and 2 at the scratch files, emptied. */
static bool capture_begin(capture *k) {
  fflush(stdout);
  fflush(stderr);
  for (int i = 0; i < 2; i++) {
    int fd = fileno(k->file[i]);
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) return false;
    k->saved[i] = dup(i + 1);
    if (k->saved[i] < 0 || dup2(fd, i + 1) < 0) return false;
  }
  return true;
}

/* Puts 1 and 2 back; false with what was written (the first bytes, as
 * text, and the count) and on which stream when anything was. */
static bool capture_end(capture *k, char *what, size_t len) {
  /* The plugin's buffered stdio output reaches the files first. */
  fflush(stdout);
  fflush(stderr);
  for (int i = 0; i < 2; i++) {
    dup2(k->saved[i], i + 1);
    close(k->saved[i]);
  }
  for (int i = 0; i < 2; i++) {
    int fd = fileno(k->file[i]);
    off_t n = lseek(fd, 0, SEEK_END);
    if (n <= 0) continue;
    char head[80];
    ssize_t got = pread(fd, head, sizeof head - 1, 0);
    head[got > 0 ? got : 0] = '\0';
    for (char *c = head; *c; c++)
      if ((unsigned char)*c < 0x20) *c = ' ';
    snprintf(what, len, "wrote %lld byte(s) to %s: \"%s%s\"", (long long)n, stream_name[i], head,
             n > (off_t)strlen(head) ? "..." : "");
    return false;
  }
  return true;
}

/* Live handles and device bytes now. */
static void usage_now(cert_ctx *cx, int64_t *live, int64_t *bytes, bool *have_bytes) {
  *live = bp_live_tensor_count();
  *have_bytes = bp_device_memory_in_use(cx->put.device.type, bytes) == BP_OK;
}

/* After a call of s (which failed when `failing`): false after a verdict
 * when handles or device bytes are not back where they were. */
static bool back(cert_ctx *cx, const sample *s, bool failing, int64_t live0, int64_t bytes0,
                 bool have) {
  int64_t live1, bytes1;
  bool have1;
  char desc[300];
  usage_now(cx, &live1, &bytes1, &have1);
  if (live1 == live0 && (!have || !have1 || bytes1 == bytes0)) return true;
  cert_sample_desc(s, desc, sizeof desc);
  if (live1 != live0)
    cert_verdict(cx, ST_FAIL,
                 "hygiene: %s: %lld tensor handle(s) leaked by a %s call (%lld live before, "
                 "%lld after)",
                 desc, (long long)(live1 - live0), failing ? "failing" : "successful",
                 (long long)live0, (long long)live1);
  else
    cert_verdict(cx, ST_FAIL,
                 "hygiene: %s: %lld byte(s) of %s memory still held after a %s call (%lld "
                 "before, %lld after)",
                 desc, (long long)(bytes1 - bytes0), cert_device_name(cx->put.device.type),
                 failing ? "failing" : "successful", (long long)bytes0, (long long)bytes1);
  return false;
}

/* The samples the op set refuses: each call must fail and still leave
 * nothing behind.  False after a verdict. */
static bool failing_calls(cert_ctx *cx, size_t *nfail) {
  gen_opts o = cert_op_gen_opts(cx);
  size_t n;
  sample *bad = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_BADSHAPE, &o, &n);
  for (size_t k = 0; k < n; k++) {
    int64_t live0, bytes0;
    bool have;
    usage_now(cx, &live0, &bytes0, &have);
    argset as;
    if (!cert_materialise(cx, &bad[k], &cx->cur.si, M_PLAIN, &as)) {
      cert_argset_free(&as);
      continue;
    }
    bp_status st = bp_call(cx->cur.op, &as.st);
    if (st == BP_OK) bp_stack_release(&as.st); /* the errors check says so */
    cert_argset_free(&as);
    if (!back(cx, &bad[k], st != BP_OK, live0, bytes0, have)) {
      cert_sample_set_free(bad, n);
      return false;
    }
    *nfail += st != BP_OK;
  }
  cert_sample_set_free(bad, n);
  return true;
}

/* A call of s, as cert_call_on() makes it, with descriptors 1 and 2 captured
 * and the thread's error cleared before: 1 when it succeeded and left no
 * error set and wrote nothing, -1 when the sample is left out (refused),
 * 0 after a verdict. */
static int quiet_call(cert_ctx *cx, const sample *s, capture *k, argset *as) {
  char desc[300], what[200];
  if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, as)) {
    cert_sample_desc(s, desc, sizeof desc);
    cert_verdict(cx, ST_FAIL, "hygiene: certifier error: cannot build the arguments of %s: %s",
                 desc, bp_last_error());
    cert_argset_free(as);
    return 0;
  }
  if (cert_op_set_refuses(cx, as)) {
    cert_argset_free(as);
    return -1;
  }
  if (!capture_begin(k)) {
    cert_verdict(cx, ST_FAIL, "hygiene: certifier error: cannot capture standard output and error");
    cert_argset_free(as);
    return 0;
  }
  bp_clear_error();
  bp_status st = bp_call(cx->cur.op, &as->st);
  bool quiet = capture_end(k, what, sizeof what);
  if (st != BP_OK) {
    bool left_out = cert_refused(cx, s, "hygiene");
    cert_argset_free(as);
    return left_out ? -1 : 0;
  }
  cert_sample_desc(s, desc, sizeof desc);
  if (bp_last_status() != BP_OK || *bp_last_error()) {
    cert_verdict(cx, ST_FAIL,
                 "hygiene: %s: the call succeeded but left the thread's last error set "
                 "(%s: \"%s\"): a kernel that returns BP_OK must not call set_error()",
                 desc, bp_status_str(bp_last_status()), bp_last_error());
  } else if (!quiet) {
    cert_verdict(cx, ST_FAIL, "hygiene: %s: the call succeeded but %s: a kernel must not print",
                 desc, what);
  } else {
    return 1;
  }
  bp_stack_release(&as->st);
  cert_argset_free(as);
  return 0;
}

/* OP/hygiene: live tensor handles, and the bytes their storages hold on
 * the device under test, are the same after each call, a successful one
 * or one that fails; a successful call leaves the thread's last error
 * clear, and writes nothing to descriptors 1 and 2. */
void cert_case_hygiene(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  size_t n, nfail = 0;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  capture k;
  if (!capture_open(&k)) {
    capture_close(&k);
    cert_sample_set_free(set, n);
    cert_verdict(cx, ST_FAIL,
                 "hygiene: certifier error: cannot make the files that capture standard "
                 "output and error");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t live0, bytes0;
    bool have;
    usage_now(cx, &live0, &bytes0, &have);
    argset as;
    int got = quiet_call(cx, &set[i], &k, &as);
    if (got == 0) {
      capture_close(&k);
      cert_sample_set_free(set, n);
      return;
    }
    if (got > 0) {
      bp_stack_release(&as.st);
      cert_argset_free(&as);
    }
    if (!back(cx, &set[i], got < 0, live0, bytes0, have) || !cert_guard_ok(cx, "bounds", &set[i])) {
      capture_close(&k);
      cert_sample_set_free(set, n);
      return;
    }
  }
  capture_close(&k);
  cert_sample_set_free(set, n);
  if (cx->cur.r >= 0 && !failing_calls(cx, &nfail)) return;
  if (cert_all_refused(cx, c, n)) return;
  cert_verdict(cx, ST_PASS,
               "no tensor handle leaked, and %s memory in use is back where it was, after %zu "
               "calls and %zu failing ones; the successful calls left no error set and "
               "wrote nothing to stdout or stderr",
               cert_device_name(cx->put.device.type), n, nfail);
}
