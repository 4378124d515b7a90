/* tests/cpu/harness.c - see harness.h. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* PRNG                                                                     */
/* ------------------------------------------------------------------------ */

void rng_seed(rng *r, uint64_t seed) { r->s = seed; }

uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

int64_t rng_int(rng *r, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  return span ? (int64_t)((uint64_t)lo + rng_next(r) % span) : (int64_t)rng_next(r);
}

double rng_uniform(rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng_next(r) >> 11) * 0x1p-53);
}

bool rng_chance(rng *r, double p) { return rng_uniform(r, 0, 1) < p; }

/* ------------------------------------------------------------------------ */
/* Context and reports                                                      */
/* ------------------------------------------------------------------------ */

static char g_ctx[1024];
static int g_reports, g_live0;
static bp_plugin *g_plugin;
static long long g_calls, g_elements, g_errors; /* how much was checked, for the log */

void ctx_set(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_ctx, sizeof g_ctx, fmt, ap);
  va_end(ap);
}

bool report_at(const char *file, int line, const char *what, const char *fmt, ...) {
  if (g_reports++ >= MAX_REPORTS) return false;
  tap_ok(false, what, file, line);
  tap_diag("  trial: %s", g_ctx);
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tap_diag("  %s", buf);
  return false;
}

const char *shape_str(int32_t ndim, const int64_t *sizes) {
  static char bufs[8][256];
  static int next;
  char *b = bufs[next++ % 8];
  size_t len = (size_t)snprintf(b, 256, "[");
  for (int32_t d = 0; d < ndim && len < 200; d++)
    len += (size_t)snprintf(b + len, 256 - len, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  snprintf(b + len, 256 - len, "]");
  return b;
}

void die(const char *what, bp_status st) {
  tap_ok(false, what, __FILE__, __LINE__);
  tap_diag("  %s: %s: %s (trial: %s)", what, bp_status_str(st), bp_last_error(), g_ctx);
  fflush(stdout);
  exit(1);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

/* A crash ends the case in the test runner with only a signal number;
 * this names the trial it happened in first.  (Not under AddressSanitizer,
 * whose own report is better.) */
#ifndef __SANITIZE_ADDRESS__
static void on_crash(int sig) {
  static const char head[] = "# crashed during trial: ";
  ssize_t w = write(STDOUT_FILENO, head, sizeof head - 1);
  w = write(STDOUT_FILENO, g_ctx, strnlen(g_ctx, sizeof g_ctx));
  w = write(STDOUT_FILENO, "\n", 1);
  (void)w;
  raise(sig);
}

#endif

static void name_crashes(void) {
#ifndef __SANITIZE_ADDRESS__
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sa.sa_flags = (int)SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
#endif
}

const char *cpu_plugin_path(void) {
  static char path[4096];
  const char *top = getenv("top_builddir");
  snprintf(path, sizeof path, "%s/plugins/cpu/.libs/cpu.so", top ? top : ".");
  return path;
}

void cpu_setup(void) {
  name_crashes();
  ctx_set("loading %s", cpu_plugin_path());
  bp_status st = bp_plugin_load(cpu_plugin_path(), &g_plugin);
  if (st != BP_OK) die("loading the CPU plugin", st);
  g_live0 = (int)bp_live_tensor_count();
  g_reports = 0;
}

void cpu_done(void) {
  tap_diag("%lld calls checked, %lld result elements compared, %lld error paths checked", g_calls,
           g_elements, g_errors);
  if (g_reports > MAX_REPORTS)
    tap_diag("%d more failures were counted but not shown", g_reports - MAX_REPORTS);
  if (g_reports) tap_diag("%d failures in this case", g_reports);
  is_int(bp_live_tensor_count(), g_live0);
  /* Unloading runs the plugin's teardown, which stops its thread pool:
   * it must succeed once every tensor is released, and the process then
   * exits with no worker thread left (which LeakSanitizer's exit-time
   * scan of dlopen'ed thread-local storage cannot always cope with). */
  ctx_set("unloading the CPU plugin");
  bp_status st = bp_plugin_unload(g_plugin);
  if (st != BP_OK)
    report_at(__FILE__, __LINE__, "bp_plugin_unload", "%s: %s", bp_status_str(st), bp_last_error());
}

const bp_op *core_op(const char *name) {
  char full[128];
  snprintf(full, sizeof full, "core::%s", name);
  const bp_op *op = NULL;
  if (bp_op_find(full, &op) != BP_OK) {
    tap_diag("bp_op_find(%s): %s", full, bp_last_error());
    ok(0);
    return NULL;
  }
  return op;
}

/* ------------------------------------------------------------------------ */
/* Checked calls                                                            */
/* ------------------------------------------------------------------------ */

/* A copy of a tensor's whole storage, and for the mutable argument a map
 * of the bytes its view covers. */
typedef struct snap {
  const bp_tensor *t;
  unsigned char *bytes;
  unsigned char *covered;
  size_t n;
} snap;

static void take_snap(snap *s, const bp_tensor *t, bool coverage) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  s->t = t;
  s->n = (size_t)v->storage_nbytes;
  s->bytes = malloc(s->n ? s->n : 1);
  s->covered = NULL;
  if (!s->bytes) abort();
  if (s->n) memcpy(s->bytes, v->storage_base, s->n);
  if (!coverage) return;
  s->covered = calloc(s->n ? s->n : 1, 1);
  if (!s->covered) abort();
  int64_t idx[BP_MAX_NDIM] = {0};
  int64_t base = (const char *)v->data - (const char *)v->storage_base;
  for (int64_t k = 0; k < v->numel; k++, next_idx(v->ndim, v->sizes, idx))
    memset(s->covered + base + elem_offset(v, idx), 1, (size_t)v->itemsize);
}

static void free_snap(snap *s) {
  free(s->bytes);
  free(s->covered);
}

/* Bytes of the snapshot that changed (outside the view for a mutable one). */
static size_t snap_changed(const snap *s, size_t *first) {
  const unsigned char *now = bp_tensor_get_view(s->t)->storage_base;
  size_t changed = 0;
  for (size_t b = 0; b < s->n; b++)
    if ((!s->covered || !s->covered[b]) && now[b] != s->bytes[b] && !changed++) *first = b;
  return changed;
}

static bool storage_overlaps(const bp_tensor *a, const bp_tensor *b) {
  const bp_tensor_view *x = bp_tensor_get_view(a), *y = bp_tensor_get_view(b);
  if (!x->storage_nbytes || !y->storage_nbytes || !x->numel || !y->numel) return false;
  const char *xa = x->storage_base, *ya = y->storage_base;
  return xa < ya + y->storage_nbytes && ya < xa + x->storage_nbytes;
}

bp_tensor *run_at(const char *file, int line, const bp_op *op, bp_stack *s, const callspec *cs) {
  if (!op) {
    s->top = 0;
    return NULL;
  }
  bp_op_info info = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
  bp_op_get_info(op, &info);
  bp_tensor_meta meta;
  memset(&meta, 0, sizeof meta);
  meta.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bool have_meta = cs->nkw == 0;
  if (have_meta) {
    bp_status mst = bp_op_meta(op, s, &meta, 1);
    if (mst) {
      report_at(file, line, "bp_op_meta", "%s: meta failed: %s: %s", info.name, bp_status_str(mst),
                bp_last_error());
      s->top = 0;
      return NULL;
    }
  }
  snap snaps[7];
  size_t nsnap = 0;
  for (size_t i = 0; i < 6; i++)
    if (cs->in[i]) take_snap(&snaps[nsnap++], cs->in[i], false);
  if (cs->mut) take_snap(&snaps[nsnap++], cs->mut, true);
  int64_t live = bp_live_tensor_count();
  bp_status st = cs->nkw ? bp_call_kw(op, s, cs->kw, cs->nkw) : bp_call(op, s);
  bp_tensor *res = NULL;
  if (st) {
    report_at(file, line, "bp_call", "%s: %s: %s", info.name, bp_status_str(st), bp_last_error());
    goto out;
  }
  if (s->top != 1 || bp_stack_get_tensor(s, 0, &res) != BP_OK) {
    report_at(file, line, "the call's results", "%s: expected one Tensor on the stack, top is %zu",
              info.name, s->top);
    bp_stack_release(s);
    res = NULL;
    goto out;
  }
  s->top = 0;
  g_calls++;
  const bp_tensor_view *v = bp_tensor_get_view(res);
  if (have_meta) {
    bool same = v->device.type == meta.device.type && v->device.index == meta.device.index &&
                v->dtype == meta.dtype && v->ndim == meta.ndim;
    for (int32_t d = 0; same && d < v->ndim; d++) same = v->sizes[d] == meta.sizes[d];
    if (!same)
      report_at(file, line, "meta agreement",
                "%s: the result is %s %s on %d:%d, bp_op_meta says %s %s on %d:%d", info.name,
                dt_name(v->dtype), shape_str(v->ndim, v->sizes), (int)v->device.type,
                (int)v->device.index, dt_name(meta.dtype), shape_str(meta.ndim, meta.sizes),
                (int)meta.device.type, (int)meta.device.index);
  }
  int64_t want_live = live + 1;
  int ret = cs->ret;
  if (ret == RET_CONTIGUOUS) {
    if (bp_tensor_is_contiguous(cs->in[0])) {
      want_live = live;
      if (res != cs->in[0])
        report_at(file, line, "contiguous of a contiguous tensor",
                  "%s: returned a new handle, expected its input", info.name);
    } else {
      ret = RET_NEW;
    }
  }
  if (ret == RET_SELF) {
    want_live = live;
    if (res != cs->mut)
      report_at(file, line, "in-place result", "%s: returned %p, expected the (a!) argument %p",
                info.name, (void *)res, (void *)cs->mut);
  }
  if (ret == RET_NEW) {
    if (!bp_tensor_is_contiguous(res))
      report_at(file, line, "contiguous result", "%s: the result %s has strides %s", info.name,
                shape_str(v->ndim, v->sizes), shape_str(v->ndim, v->strides));
    for (size_t i = 0; i < 6; i++)
      if (cs->in[i] && (res == cs->in[i] || storage_overlaps(res, cs->in[i])))
        report_at(file, line, "a new result", "%s: the result shares storage with argument %zu",
                  info.name, i);
  }
  if (bp_live_tensor_count() != want_live)
    report_at(file, line, "live tensor handles", "%s: %lld handles after the call, expected %lld",
              info.name, (long long)bp_live_tensor_count(), (long long)want_live);
out:
  for (size_t i = 0; i < nsnap; i++) {
    size_t first = 0, n = snap_changed(&snaps[i], &first);
    if (n)
      report_at(file, line, snaps[i].covered ? "storage outside the written view" : "an input",
                "%s: %zu bytes of %s storage changed, the first at byte %zu", info.name, n,
                snaps[i].covered ? "the (a!) argument's" : "an input's", first);
    free_snap(&snaps[i]);
  }
  s->top = 0;
  return res;
}

/* ------------------------------------------------------------------------ */
/* Comparisons                                                              */
/* ------------------------------------------------------------------------ */

static const char *index_str(const rt *r, int64_t k) {
  int64_t idx[BP_MAX_NDIM];
  for (int32_t d = r->ndim - 1; d >= 0; d--) {
    idx[d] = r->sizes[d] ? k % r->sizes[d] : 0;
    k = r->sizes[d] ? k / r->sizes[d] : 0;
  }
  return shape_str(r->ndim, idx);
}

bool close_at(const char *file, int line, const bp_tensor *got, const rt *want, int64_t n,
              int kind) {
  if (!got) return false;
  const bp_tensor_view *v = bp_tensor_get_view(got);
  bool same = v->dtype == want->dtype && v->ndim == want->ndim;
  for (int32_t d = 0; same && d < v->ndim; d++) same = v->sizes[d] == want->sizes[d];
  if (!same)
    return report_at(file, line, "result dtype and shape", "got %s %s, the reference gives %s %s",
                     dt_name(v->dtype), shape_str(v->ndim, v->sizes), dt_name(want->dtype),
                     shape_str(want->ndim, want->sizes));
  rt *g = read_tensor(got);
  double rtol, atol, nn = n > 1 ? (double)n : 1;
  dt_tolerance(want->dtype, &rtol, &atol);
  if (kind != TOL_PLAIN) rtol *= sqrt(nn);
  if (kind == TOL_SUM) atol *= nn;
  bool fl = dt_is_float(want->dtype);
  g_elements += want->numel;
  int64_t bad = 0, worst = -1;
  double worst_excess = -1, maxabs = 0, maxrel = 0;
  for (int64_t k = 0; k < want->numel; k++) {
    double err, excess;
    if (fl) {
      double x = g->f[k], y = want->f[k];
      if ((isnan(x) && isnan(y)) || x == y) continue;
      err = fabs(x - y);
      if (isnan(err)) err = INFINITY;
      if (err <= atol + rtol * fabs(y)) continue;
      excess = err / (atol + rtol * fabs(y));
      if (isnan(excess)) excess = INFINITY;
      if (err > maxabs) maxabs = err;
      double rel = y != 0 ? err / fabs(y) : INFINITY;
      if (rel > maxrel) maxrel = rel;
    } else {
      if (g->i[k] == want->i[k]) continue;
      err = fabs((double)g->i[k] - (double)want->i[k]);
      excess = err;
      if (err > maxabs) maxabs = err;
      maxrel = INFINITY;
    }
    if (!bad++ || excess > worst_excess) {
      worst = k;
      worst_excess = excess;
    }
  }
  if (bad) {
    if (fl)
      report_at(file, line, "result values",
                "%lld of %lld elements differ (%s %s, rtol %g atol %g); worst at %s: got %.9g, "
                "expected %.9g; max abs err %g, max rel err %g",
                (long long)bad, (long long)want->numel, dt_name(want->dtype),
                shape_str(want->ndim, want->sizes), rtol, atol, index_str(want, worst), g->f[worst],
                want->f[worst], maxabs, maxrel);
    else
      report_at(file, line, "result values",
                "%lld of %lld elements differ (%s %s, exact); first worst at %s: got %lld, "
                "expected %lld; max abs err %g",
                (long long)bad, (long long)want->numel, dt_name(want->dtype),
                shape_str(want->ndim, want->sizes), index_str(want, worst), (long long)g->i[worst],
                (long long)want->i[worst], maxabs);
  }
  rt_free(g);
  return bad == 0;
}

int64_t count_mismatches(const rt *got, const rt *want, int64_t n, int kind) {
  bool same = got->dtype == want->dtype && got->ndim == want->ndim;
  for (int32_t d = 0; same && d < got->ndim; d++) same = got->sizes[d] == want->sizes[d];
  if (!same) return -1;
  double rtol, atol, nn = n > 1 ? (double)n : 1;
  dt_tolerance(want->dtype, &rtol, &atol);
  if (kind != TOL_PLAIN) rtol *= sqrt(nn);
  if (kind == TOL_SUM) atol *= nn;
  int64_t bad = 0;
  for (int64_t k = 0; k < want->numel; k++) {
    if (!dt_is_float(want->dtype)) {
      bad += got->i[k] != want->i[k];
      continue;
    }
    double x = got->f[k], y = want->f[k];
    if ((isnan(x) && isnan(y)) || x == y) continue;
    bad += !(fabs(x - y) <= atol + rtol * fabs(y));
  }
  return bad;
}

bool bits_at(const char *file, int line, const bp_tensor *got, const bp_tensor *want) {
  if (!got || !want) return false;
  const bp_tensor_view *a = bp_tensor_get_view(got), *b = bp_tensor_get_view(want);
  bool same = a->dtype == b->dtype && a->ndim == b->ndim;
  for (int32_t d = 0; same && d < a->ndim; d++) same = a->sizes[d] == b->sizes[d];
  if (!same)
    return report_at(file, line, "result dtype and shape", "got %s %s, expected %s %s",
                     dt_name(a->dtype), shape_str(a->ndim, a->sizes), dt_name(b->dtype),
                     shape_str(b->ndim, b->sizes));
  int64_t idx[BP_MAX_NDIM] = {0}, bad = 0, first = -1;
  g_elements += a->numel;
  for (int64_t k = 0; k < a->numel; k++, next_idx(a->ndim, a->sizes, idx))
    if (memcmp((const char *)a->data + elem_offset(a, idx),
               (const char *)b->data + elem_offset(b, idx), (size_t)a->itemsize) &&
        !bad++)
      first = k;
  if (bad) {
    rt *g = read_tensor(got), *w = read_tensor(want);
    bool fl = dt_is_float(a->dtype);
    report_at(file, line, "result bits",
              "%lld of %lld elements differ bitwise (%s %s); first at %s: got %.9g, expected %.9g",
              (long long)bad, (long long)a->numel, dt_name(a->dtype), shape_str(a->ndim, a->sizes),
              index_str(g, first), fl ? g->f[first] : (double)g->i[first],
              fl ? w->f[first] : (double)w->i[first]);
    rt_free(g);
    rt_free(w);
  }
  return bad == 0;
}

void error_at(const char *file, int line, const bp_op *op, bp_stack *s, bp_status status,
              const char *msg, const char *part) {
  if (!op) {
    s->top = 0;
    return;
  }
  g_errors++;
  bool device = status == BP_ERR_DEVICE || status == BP_ERR_NOT_FOUND;
  char meta_msg[1024] = "";
  bp_status mst = BP_OK;
  if (!device) {
    bp_tensor_meta m;
    memset(&m, 0, sizeof m);
    m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
    mst = bp_op_meta(op, s, &m, 1);
    snprintf(meta_msg, sizeof meta_msg, "%s", mst ? bp_last_error() : "");
  }
  int64_t live = bp_live_tensor_count();
  bp_status st = bp_call(op, s);
  char err[1024];
  snprintf(err, sizeof err, "%s", st ? bp_last_error() : "");
  if (st == BP_OK) {
    bp_stack_release(s);
    report_at(file, line, "expected an error", "the call succeeded; expected %s",
              bp_status_str(status));
    return;
  }
  if (st != status)
    report_at(file, line, "error status", "got %s (%s), expected %s", bp_status_str(st), err,
              bp_status_str(status));
  if (msg && strcmp(err, msg) != 0)
    report_at(file, line, "error message", "got '%s', expected '%s'", err, msg);
  if (part && !strstr(err, part))
    report_at(file, line, "error message", "got '%s', expected it to contain '%s'", err, part);
  if (s->top != 0) report_at(file, line, "stack after an error", "top is %zu, expected 0", s->top);
  if (bp_live_tensor_count() != live)
    report_at(file, line, "live tensor handles after an error", "%lld, expected %lld",
              (long long)bp_live_tensor_count(), (long long)live);
  if (!device && (mst != st || strcmp(meta_msg, err) != 0))
    report_at(file, line, "meta and kernel agree on errors",
              "bp_op_meta gave %s '%s', the call %s '%s'", bp_status_str(mst), meta_msg,
              bp_status_str(st), err);
  s->top = 0;
}
