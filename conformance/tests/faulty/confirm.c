/*
 * conformance/tests/faulty/confirm.c - confirms a fault of the shim corpus
 * directly: loads one plugin and runs that fault's trigger (confirm.h,
 * triggers-*.c), in a child process, so that a plugin that aborts, exits
 * or crashes is reported instead of ending the tool.
 *
 *   confirm [--reference] PLUGIN.so FAULT   run FAULT's trigger on PLUGIN.so
 *   confirm --list                          the faults that have a trigger
 *   confirm --sanitizer                     none, address or thread
 *
 * It prints one line, "FAULT: manifests: ..." or "FAULT: clean: ...", and
 * exits 0 when the fault manifests, 1 when it does not, 2 on an error and
 * 77 when this build skips it: a data race (T_RACE) under ThreadSanitizer,
 * which reports the race itself, unless --reference says that PLUGIN.so
 * is the reference, which must be clean anyway; and a measure of what an
 * unload leaves mapped (T_NOTSAN) under ThreadSanitizer, which keeps
 * mappings of its own after each unload.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "confirm.h"

const char *plugin_path;
bp_plugin *plugin;
int guard_fd = -1;

#if defined(__SANITIZE_THREAD__)
#define SANITIZER "thread"
#elif defined(__SANITIZE_ADDRESS__)
#define SANITIZER "address"
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SANITIZER "thread"
#elif __has_feature(address_sanitizer)
#define SANITIZER "address"
#endif
#endif
#ifndef SANITIZER
#define SANITIZER "none"
#endif

/* ------------------------------------------------------------------------ */
/* Values and tensors                                                       */
/* ------------------------------------------------------------------------ */

static uint64_t rng = 1;

void rnd_seed(uint64_t seed) { rng = seed * 0x9E3779B97F4A7C15ull + 1; }

static double uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

rt *rnd(int32_t dt, int32_t ndim, const int64_t *sizes, double lo, double hi) {
  rt *r = rt_new(dt, ndim, sizes);
  for (int64_t k = 0; k < r->numel; k++) {
    double v = lo + (hi - lo) * uniform();
    if (dt_is_float(dt))
      r->f[k] = round_to(dt, v);
    else
      r->i[k] = wrap_int(dt, (int64_t)floor(v + 0.5));
  }
  return r;
}

rt *vals(int32_t dt, int32_t ndim, const int64_t *sizes, const double *v) {
  rt *r = rt_new(dt, ndim, sizes);
  for (int64_t k = 0; k < r->numel; k++) {
    if (dt_is_float(dt))
      r->f[k] = round_to(dt, v[k]);
    else
      r->i[k] = (int64_t)v[k];
  }
  return r;
}

/* Row-major strides of a shape. */
static void row_major(int32_t ndim, const int64_t *sizes, int64_t *strides) {
  int64_t acc = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = acc;
    acc *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

bp_tensor *mk(const rt *v, const int64_t *strides, int64_t offset) {
  int64_t st[BP_MAX_NDIM], n = offset + 1;
  if (!strides) row_major(v->ndim, v->sizes, st);
  else memcpy(st, strides, (size_t)v->ndim * sizeof *st);
  for (int32_t d = 0; d < v->ndim; d++) n += (v->sizes[d] > 0 ? v->sizes[d] - 1 : 0) * st[d];
  bp_tensor *base = NULL, *t = NULL;
  if (bp_tensor_empty(BP_CPU, v->dtype, 1, &n, &base) != BP_OK) return NULL;
  const bp_tensor_view *bv = bp_tensor_get_view(base);
  memset(bv->data, 0, (size_t)(n * bv->itemsize));
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < v->numel; k++) {
    int64_t off = offset;
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * st[d];
    char *p = (char *)bv->data + off * bv->itemsize;
    if (dt_is_float(v->dtype)) store_f(p, v->dtype, v->f[k]);
    else store_i(p, v->dtype, v->i[k]);
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
  if (bp_tensor_as_strided(base, v->ndim, v->sizes, st, offset, &t) != BP_OK) t = NULL;
  bp_tensor_release(base);
  return t;
}

rt *get(const bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  rt *r = rt_new(v->dtype, v->ndim, v->sizes);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < r->numel; k++) {
    int64_t off = 0;
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
    const char *p = (const char *)v->data + off * v->itemsize;
    if (dt_is_float(v->dtype)) r->f[k] = load_f(p, v->dtype);
    else r->i[k] = load_i(p, v->dtype);
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */
/* ------------------------------------------------------------------------ */

void call_init(call *c) {
  memset(c, 0, sizeof *c);
  c->st = (bp_stack)BP_STACK_INIT(c->slots, 12);
}
void arg_t(call *c, bp_tensor *t) { bp_stack_push_tensor(&c->st, t); }
void arg_i(call *c, int64_t v) { bp_stack_push_int(&c->st, v); }
void arg_f(call *c, double v) { bp_stack_push_float(&c->st, v); }
void arg_b(call *c, bool v) { bp_stack_push_bool(&c->st, v); }
void arg_list(call *c, const int64_t *v, size_t n) { bp_stack_push_int_list(&c->st, v, n); }
void arg_dt(call *c, int32_t dt) { bp_stack_push_scalar_type(&c->st, dt); }
void arg_s(call *c, const char *s) { bp_stack_push_str(&c->st, s); }
void arg_none(call *c) { bp_stack_push_none(&c->st); }
void arg_tl(call *c, bp_tensor *const *t, size_t n) { bp_stack_push_tensor_list(&c->st, t, n); }

bp_status run(const char *name, call *c, bp_tensor **out) {
  const bp_op *op;
  bp_status st = bp_op_find(name, &op);
  if (!st) st = bp_call(op, &c->st);
  if (st) return st;
  bp_tensor *t = NULL;
  if (c->st.top > 0 && bp_stack_get_tensor(&c->st, 0, &t) == BP_OK) c->slots[0].tag = BP_TAG_NONE;
  bp_stack_release(&c->st);
  if (out) *out = t;
  else bp_tensor_release(t);
  return BP_OK;
}

static const char *shape(const rt *r, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "%s[", dt_name(r->dtype));
  for (int32_t d = 0; d < r->ndim && o < len; d++)
    o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)r->sizes[d]);
  if (o < len) snprintf(buf + o, len - o, "]");
  return buf;
}

int differs(const rt *got, const rt *want, bool exact, double rscale, double ascale, char *why,
            size_t len) {
  char b1[96], b2[96];
  bool same_shape = got->dtype == want->dtype && got->ndim == want->ndim;
  for (int32_t d = 0; same_shape && d < got->ndim; d++) same_shape = got->sizes[d] == want->sizes[d];
  if (!same_shape) {
    snprintf(why, len, "result %s, expected %s", shape(got, b1, sizeof b1), shape(want, b2, sizeof b2));
    return 1;
  }
  double rtol, atol;
  dt_tolerance(want->dtype, &rtol, &atol);
  for (int64_t k = 0; k < want->numel; k++) {
    if (!dt_is_float(want->dtype)) {
      if (got->i[k] == want->i[k]) continue;
      snprintf(why, len, "%s: element %lld is %lld, expected %lld", shape(got, b1, sizeof b1),
               (long long)k, (long long)got->i[k], (long long)want->i[k]);
      return 1;
    }
    double g = got->f[k], w = want->f[k];
    if (isnan(g) && isnan(w)) continue;
    if (exact ? g == w && signbit(g) == signbit(w)
              : g == w || fabs(g - w) <= atol * ascale + rtol * rscale * fabs(w))
      continue;
    snprintf(why, len, "%s: element %lld is %.9g, expected %.9g (%s)", shape(got, b1, sizeof b1),
             (long long)k, g, w, exact ? "bit for bit" : "within the tolerance");
    return 1;
  }
  snprintf(why, len, "%s: %lld element(s) as expected (%s)", shape(got, b1, sizeof b1),
           (long long)want->numel, exact ? "bit for bit" : "within the tolerance");
  return 0;
}

int check(const char *op, call *c, rt *want, bool exact, double rscale, double ascale, char *why,
          size_t len) {
  bp_tensor *out = NULL;
  int r = 1;
  if (!want) {
    snprintf(why, len, "no reference");
    r = -1;
  } else if (run(op, c, &out) != BP_OK) {
    snprintf(why, len, "%s failed: %s", op, bp_last_error());
  } else {
    rt *got = get(out);
    r = differs(got, want, exact, rscale, ascale, why, len);
    rt_free(got);
  }
  bp_tensor_release(out);
  rt_free(want);
  return r;
}

int expect_error(const char *op, call *c, bp_status status, char *why, size_t len) {
  bp_clear_error();
  bp_status st = run(op, c, NULL);
  const char *msg = bp_last_error();
  if (st == BP_OK)
    snprintf(why, len, "%s returned BP_OK, expected %s", op, bp_status_str(status));
  else if (st != status)
    snprintf(why, len, "%s failed with %s (%s), expected %s", op, bp_status_str(st), msg,
             bp_status_str(status));
  else if (!*msg)
    snprintf(why, len, "%s failed with %s and an empty message", op, bp_status_str(st));
  else
    snprintf(why, len, "%s failed with %s: %s", op, bp_status_str(st), msg);
  return st != status || !*msg;
}

int expect_oom(const char *op, call *(*make)(void), char *why, size_t len) {
  call *c = make();
  long first = bp__alloc_test_count();
  bp_tensor *base = NULL;
  if (run(op, c, &base) != BP_OK) {
    snprintf(why, len, "%s fails with all memory: %s", op, bp_last_error());
    return -1;
  }
  long total = bp__alloc_test_count() - first;
  rt *want = get(base);
  bp_tensor_release(base);
  for (int sticky = 0; sticky < 2; sticky++) {
    for (long n = 1; n <= total; n++) {
      c = make();
      int64_t live = bp_live_tensor_count();
      bp_clear_error();
      bp__alloc_test_fail(n, sticky);
      bp_tensor *out = NULL;
      bp_status st = run(op, c, &out);
      bp__alloc_test_fail(0, false);
      char at[96];
      snprintf(at, sizeof at, "allocation %ld of %ld%s failing", n, total,
               sticky ? " and every one after it" : "");
      if (st == BP_OK) {
        rt *g = get(out);
        bp_tensor_release(out);
        char d[256];
        int diff = differs(g, want, true, 1, 1, d, sizeof d);
        rt_free(g);
        if (diff) {
          snprintf(why, len, "%s with %s succeeded with other results: %s", op, at, d);
          rt_free(want);
          return 1;
        }
      } else if (st != BP_ERR_OUT_OF_MEMORY || !*bp_last_error()) {
        snprintf(why, len, "%s with %s failed with %s (%s), expected BP_ERR_OUT_OF_MEMORY and a "
                 "message", op, at, bp_status_str(st), bp_last_error());
        rt_free(want);
        return 1;
      }
      if (bp_live_tensor_count() != live) {
        snprintf(why, len, "%s with %s (%s) left %lld tensor(s) behind", op, at,
                 bp_status_str(st), (long long)(bp_live_tensor_count() - live));
        rt_free(want);
        return 1;
      }
    }
  }
  rt_free(want);
  snprintf(why, len, "%s with each of its %ld host allocations failing: the same results or "
           "BP_ERR_OUT_OF_MEMORY with a message, nothing left behind", op, total);
  return 0;
}

bool cycle(char *why, size_t len) {
  static const int64_t s23[] = {2, 3};
  if (bp_plugin_load(plugin_path, &plugin) != BP_OK) {
    snprintf(why, len, "cannot load %s: %s", plugin_path, bp_last_error());
    return false;
  }
  rt *x = rnd(BP_FLOAT32, 2, s23, -1, 1);
  bp_tensor *a = mk(x, NULL, 0), *out = NULL;
  call c;
  call_init(&c);
  arg_t(&c, a);
  arg_t(&c, a);
  bp_status st = run("core::add", &c, &out);
  bp_tensor_release(out);
  bp_tensor_release(a);
  rt_free(x);
  if (st) {
    snprintf(why, len, "core::add failed: %s", bp_last_error());
    return false;
  }
  if (bp_plugin_unload(plugin) != BP_OK) {
    snprintf(why, len, "cannot unload: %s", bp_last_error());
    return false;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Running a trigger in a child                                             */
/* ------------------------------------------------------------------------ */

enum { EXIT_SHOWS = 10, EXIT_CLEAN = 11, EXIT_ERROR = 12 };

static void child(const trigger *t, int out) {
  char why[512] = "";
  int r = -1;
  alarm(60); /* a trigger that hangs ends as a signal */
  if (t->flags & T_GUARD) {
    int g[2];
    char fd[16];
    if (pipe(g) == 0) {
      fcntl(g[0], F_SETFL, O_NONBLOCK);
      guard_fd = g[0];
      snprintf(fd, sizeof fd, "%d", g[1]);
      setenv("BP_ALLOC_GUARD", "1", 1);
      setenv("BP_ALLOC_GUARD_FD", fd, 1);
    }
  }
  if (!(t->flags & T_NOLOAD) && bp_plugin_load(plugin_path, &plugin) != BP_OK)
    snprintf(why, sizeof why, "cannot load %s: %s", plugin_path, bp_last_error());
  else
    r = t->fn(why, sizeof why);
  if (write(out, why, strlen(why)) < 0) {
    /* the parent then reports no detail */
  }
  _exit(r == 1 ? EXIT_SHOWS : r == 0 ? EXIT_CLEAN : EXIT_ERROR);
}

/* 1 manifests, 0 clean, -1 error; why from the child or its end. */
static int run_trigger(const trigger *t, char *why, size_t len) {
  int p[2];
  if (pipe(p) != 0) {
    snprintf(why, len, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, len, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    close(p[0]);
    child(t, p[1]);
  }
  close(p[1]);
  size_t n = 0;
  ssize_t got;
  while (n + 1 < len && ((got = read(p[0], why + n, len - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
    if (got > 0) n += (size_t)got;
  why[n] = '\0';
  close(p[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == EXIT_SHOWS) return 1;
    if (code == EXIT_CLEAN) return 0;
    if (code == EXIT_ERROR) return -1;
    snprintf(why, len, "the process exited with status %d inside the plugin", code);
    return 1;
  }
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  snprintf(why, len, "the process was killed by signal %d (%s)", sig, strsignal(sig));
  return 1;
}

static const trigger *find(const char *name) {
  for (size_t i = 0; i < num_ntriggers; i++)
    if (strcmp(num_triggers[i].name, name) == 0) return &num_triggers[i];
  for (size_t i = 0; i < proc_ntriggers; i++)
    if (strcmp(proc_triggers[i].name, name) == 0) return &proc_triggers[i];
  for (size_t i = 0; i < host_ntriggers; i++)
    if (strcmp(host_triggers[i].name, name) == 0) return &host_triggers[i];
  for (size_t i = 0; i < life_ntriggers; i++)
    if (strcmp(life_triggers[i].name, name) == 0) return &life_triggers[i];
  for (size_t i = 0; i < edges_ntriggers; i++)
    if (strcmp(edges_triggers[i].name, name) == 0) return &edges_triggers[i];
  return NULL;
}

static int usage(void) {
  fprintf(stderr, "usage: confirm [--reference] PLUGIN.so FAULT | --list | --sanitizer\n");
  return 2;
}

int main(int argc, char **argv) {
  bp__alloc_test_track(true); /* before the host's first allocation (expect_oom) */
  bool reference = false;
  int i = 1;
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t k = 0; k < num_ntriggers; k++) printf("%s\n", num_triggers[k].name);
    for (size_t k = 0; k < proc_ntriggers; k++) printf("%s\n", proc_triggers[k].name);
    for (size_t k = 0; k < host_ntriggers; k++) printf("%s\n", host_triggers[k].name);
    for (size_t k = 0; k < life_ntriggers; k++) printf("%s\n", life_triggers[k].name);
    for (size_t k = 0; k < edges_ntriggers; k++) printf("%s\n", edges_triggers[k].name);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--sanitizer") == 0) {
    printf("%s\n", SANITIZER);
    return 0;
  }
  if (i < argc && strcmp(argv[i], "--reference") == 0) reference = true, i++;
  if (argc - i != 2) return usage();
  plugin_path = argv[i];
  const trigger *t = find(argv[i + 1]);
  if (!t) {
    fprintf(stderr, "confirm: no trigger for '%s'\n", argv[i + 1]);
    return 2;
  }
  if ((t->flags & T_RACE) && !reference && strcmp(SANITIZER, "thread") == 0) {
    printf("%s: skip: a data race on purpose, which ThreadSanitizer reports itself\n", t->name);
    return 77;
  }
  if ((t->flags & T_NOASAN) && strcmp(SANITIZER, "address") == 0) {
    printf("%s: skip: AddressSanitizer's quarantine keeps a freed address from coming back\n",
           t->name);
    return 77;
  }
  if ((t->flags & T_TSAN_FORK) && strcmp(SANITIZER, "thread") == 0) {
    printf("%s: skip: ThreadSanitizer cannot start threads in a child forked from a threaded "
           "process\n", t->name);
    return 77;
  }
  if ((t->flags & T_TSAN_SIGNAL) && strcmp(SANITIZER, "thread") == 0) {
    printf("%s: skip: ThreadSanitizer defers a signal to a call it intercepts, so it never "
           "lands in the plugin's wait\n", t->name);
    return 77;
  }
  if ((t->flags & T_NOTSAN) && strcmp(SANITIZER, "thread") == 0) {
    printf("%s: skip: ThreadSanitizer keeps memory of its own mapped after each unload\n", t->name);
    return 77;
  }
  char why[512];
  int r = run_trigger(t, why, sizeof why);
  printf("%s: %s: %s\n", t->name, r > 0 ? "manifests" : r == 0 ? "clean" : "error", why);
  return r > 0 ? 0 : r == 0 ? 1 : 2;
}
