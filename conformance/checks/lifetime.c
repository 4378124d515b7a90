/*
 * conformance/checks/lifetime.c - OP/lifetime: results are values, not
 * loans.  A result the caller holds is the caller's: no later call may
 * change it.  And a result must not depend on what its memory held before
 * the kernel wrote it, nor on the addresses its arguments happen to have.
 *
 * On each sample of the check set:
 *   1. the call with every block the host allocates poisoned with 0x00
 *      bytes (host/guard.c, BP_ALLOC_POISON: what fresh pages and calloc
 *      give, where such a kernel passes by luck), then the same call with
 *      0xff bytes: the results must be equal bit for bit.  The second
 *      call's results are kept, as a caller keeps them, with a copy of
 *      their bytes;
 *   2. the call on the sample with each tensor's values reversed, right
 *      after the second call's arguments are freed: the host's guard
 *      hands a freed address back to the next allocation of its size, so
 *      these arguments take those addresses; then the same call at fresh
 *      addresses: the results must be equal bit for bit;
 * and after each sample's calls, every result kept so far must still hold
 * the bytes it had.  The arguments of the other calls stay alive to the
 * end of the case, so that no address comes back but those handed back
 * on purpose.  An op declared BP_OP_NONDETERMINISTIC gets the last part
 * only.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* ------------------------------------------------------------------------ */
/* Samples with their values reversed                                       */
/* ------------------------------------------------------------------------ */

/* A copy of r with its elements in reverse row-major order: the same
 * values (a domain an op needs, valid indices), in other places; a tensor
 * constant along a dim stays so. */
static rt *reversed_rt(const rt *r) {
  rt *c = rt_new(r->dtype, r->ndim, r->sizes);
  if (!c) return NULL;
  for (int64_t k = 0; k < r->numel; k++) {
    if (r->f) c->f[k] = r->f[r->numel - 1 - k];
    if (r->i) c->i[k] = r->i[r->numel - 1 - k];
  }
  return c;
}

/* out: s with every tensor's values reversed (free with sample_free);
 * false when out of memory. */
static bool reversed_sample(const sample *s, sample *out) {
  *out = *s;
  bool ok = true;
  for (int i = 0; i < s->n; i++) {
    sarg *a = &out->a[i];
    if (a->t) ok &= (a->t = reversed_rt(s->a[i].t)) != NULL;
    a->l = NULL;
    if (!s->a[i].l) continue;
    a->l = malloc(sizeof *a->l);
    if (!a->l) {
      ok = false;
      continue;
    }
    *a->l = *s->a[i].l;
    for (int j = 0; j < a->l->n; j++) ok &= (a->l->t[j] = reversed_rt(s->a[i].l->t[j])) != NULL;
  }
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Calls and results                                                        */
/* ------------------------------------------------------------------------ */

/* cert_call_on() with the host's fresh blocks poisoned with `poison`. */
static int poisoned_call(cert_ctx *cx, const sample *s, argset *as, const char *poison) {
  setenv("BP_ALLOC_POISON", poison, 1);
  int got = cert_call_on(cx, s, M_PLAIN, as, "lifetime");
  setenv("BP_ALLOC_POISON", "0xff", 1);
  return got;
}

/* The tensors of a call's results, released after the call; their bytes
 * on the CPU, concatenated (owned). */
static unsigned char *release_results(argset *as, size_t *len) {
  unsigned char *b = cert_result_bytes(&as->st, len);
  bp_stack_release(&as->st);
  return b;
}

/* Frees a call's argument tensors, the last made first: the guard hands
 * the addresses freed last to the next allocations of their sizes, so
 * the next call's arguments take these, in order. */
static void free_args_reversed(argset *as) {
  for (int i = as->nmade - 1; i >= 0; i--) {
    bp_tensor_release(as->made[i]);
    bp_tensor_release(as->base[i]);
  }
  as->nmade = 0;
}

/* A result the caller holds, and its bytes when it got it. */
typedef struct held {
  bp_tensor *t[4];
  int nt;
  unsigned char *bytes;
  size_t len;
  size_t sample; /* which sample of the set */
} held;

static void held_free(held *h) {
  for (int i = 0; i < h->nt; i++) bp_tensor_release(h->t[i]);
  free(h->bytes);
}

/* Keeps a call's results (new references) and their bytes. */
static void hold(held *h, const argset *as, size_t k) {
  memset(h, 0, sizeof *h);
  h->sample = k;
  for (size_t i = 0; i < as->st.top && h->nt < 4; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(&as->st, (int64_t)i, &t) == BP_OK) h->t[h->nt++] = bp_tensor_retain(t);
  }
  h->bytes = cert_result_bytes(&as->st, &h->len);
}

/* Where a held result's bytes now differ from those it had, or -1. */
static long held_changed(const held *h) {
  unsigned char *now_bytes = NULL;
  size_t len = 0;
  for (int i = 0; i < h->nt; i++) {
    size_t n = 0;
    unsigned char *b = cert_tensor_bytes(h->t[i], &n);
    unsigned char *grown = b ? realloc(now_bytes, len + n + 1) : NULL;
    if (!grown) {
      free(b);
      free(now_bytes);
      return 0;
    }
    now_bytes = grown;
    memcpy(now_bytes + len, b, n);
    len += n;
    free(b);
  }
  long at = len == h->len ? cert_first_diff(h->bytes, now_bytes, len) : 0;
  free(now_bytes);
  return at;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */
/* ------------------------------------------------------------------------ */

/* The tensors of the calls that the check does not hand back on purpose
 * stay alive to the end of the case, so that no other freed address comes
 * back by chance: the arguments of each sample's second and third calls
 * (its first call's go to the third, as planned). */
typedef struct alive {
  argset *v;
  size_t n, cap;
} alive;

static argset *alive_slot(alive *a) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    argset *grown = realloc(a->v, cap * sizeof *grown);
    if (!grown) return NULL;
    a->v = grown;
    a->cap = cap;
  }
  return &a->v[a->n++];
}

static void alive_free(alive *a) {
  for (size_t i = 0; i < a->n; i++) cert_argset_free(&a->v[i]);
  free(a->v);
}

/* One call of s into a slot of `keep` (which then holds its arguments):
 * its results' bytes (owned) in *bytes, released; 1, or -1 when an op
 * outside core refused it, or 0 after a verdict. */
static int call_kept(cert_ctx *cx, const sample *s, alive *keep, const char *poison,
                     unsigned char **bytes, size_t *len) {
  argset *as = alive_slot(keep);
  if (!as) {
    cert_verdict(cx, ST_FAIL, "lifetime: certifier error: out of memory");
    return 0;
  }
  int got = poisoned_call(cx, s, as, poison);
  if (got <= 0) {
    keep->n--;
    return got;
  }
  *bytes = release_results(as, len);
  return 1;
}

/* Samples whose results vary from call to call whatever the poison and
 * the addresses: this check cannot compare them (repeatability reports
 * such a kernel). */
static size_t nunrepeatable;

static int unrepeatable(void) {
  nunrepeatable++;
  return 2;
}

/* One more call of s at fresh addresses: 1 when its results' bytes are
 * want's, -1 when not, 0 after a verdict. */
static int same_again(cert_ctx *cx, const sample *s, alive *keep, const char *poison,
                      const unsigned char *want, size_t wlen) {
  unsigned char *b = NULL;
  size_t len = 0;
  int got = call_kept(cx, s, keep, poison, &b, &len);
  if (got == 0) return 0;
  long at = got > 0 && len == wlen ? cert_first_diff(want, b, len) : 0;
  free(b);
  return at < 0 ? 1 : -1;
}

/* The first call on s (poisoned with 0xff), held in *h, and the others:
 * 1 when they agree, 2 when the results vary from call to call anyway,
 * -1 when an op outside core refused one, 0 after a verdict. */
static int calls_on(cert_ctx *cx, const sample *s, size_t k, held *h, alive *keep) {
  char desc[300];
  cert_sample_desc(s, desc, sizeof desc);
  /* The same call, the fresh blocks poisoned with 0x00, then with 0xff. */
  unsigned char *pb = NULL;
  size_t plen;
  int got = call_kept(cx, s, keep, "0x00", &pb, &plen);
  if (got <= 0) return got;
  argset a;
  got = poisoned_call(cx, s, &a, "0xff");
  if (got <= 0) {
    free(pb);
    return got;
  }
  hold(h, &a, k);
  bp_stack_release(&a.st);
  long at = plen == h->len ? cert_first_diff(h->bytes, pb, plen) : 0;
  free(pb);
  if (at >= 0) {
    /* The poison, or a kernel whose results vary anyway (repeatability's
     * to report): a third call, poisoned as the second, tells. */
    int same = same_again(cx, s, keep, "0xff", h->bytes, h->len);
    if (same <= 0) {
      free_args_reversed(&a);
      if (same == 0) return 0;
      return unrepeatable();
    }
    free_args_reversed(&a);
    cert_verdict(cx, ST_FAIL,
                 "lifetime: %s: the result depends on what memory held before the call: "
                 "with the fresh blocks filled with 0xff bytes and with 0x00 bytes the results "
                 "differ at byte %ld (the kernel reads its result before writing it, as one "
                 "that accumulates into it without clearing it, or reads memory it was not "
                 "given)",
                 desc, at);
    return 0;
  }
  /* The values reversed, at the addresses of the call just made (freed
   * last, so handed back first), then at fresh ones. */
  sample r;
  if (!reversed_sample(s, &r)) {
    cert_sample_free(&r);
    free_args_reversed(&a);
    cert_verdict(cx, ST_FAIL, "lifetime: certifier error: out of memory");
    return 0;
  }
  free_args_reversed(&a);
  unsigned char *reused = NULL, *fresh = NULL;
  size_t rlen = 0, flen = 0;
  got = call_kept(cx, &r, keep, "0xff", &reused, &rlen);
  if (got > 0) got = call_kept(cx, &r, keep, "0xff", &fresh, &flen);
  at = got > 0 && rlen == flen ? cert_first_diff(fresh, reused, flen) : 0;
  free(reused);
  if (got <= 0) {
    free(fresh);
    cert_sample_free(&r);
    return got;
  }
  if (at >= 0) {
    int same = same_again(cx, &r, keep, "0xff", fresh, flen);
    if (same <= 0) {
      free(fresh);
      cert_sample_free(&r);
      return same == 0 ? 0 : unrepeatable();
    }
  }
  free(fresh);
  cert_sample_free(&r);
  if (at >= 0) {
    cert_verdict(cx, ST_FAIL,
                 "lifetime: %s, its values reversed: the call gives another result (byte %ld) "
                 "when its tensors take the addresses of an earlier call's freed tensors "
                 "than at fresh addresses: the kernel keeps something keyed by a tensor's "
                 "address (its handle or its data pointer) past that tensor's life",
                 desc, at);
    return 0;
  }
  return 1;
}

void cert_case_lifetime(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  bool cert_compare = !(cx->cur.oi.flags & BP_OP_NONDETERMINISTIC);
  nunrepeatable = 0;
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  held *kept = calloc(n ? n : 1, sizeof *kept);
  alive keep = {NULL, 0, 0};
  size_t nkept = 0, ncalls = 0;
  bool ok = kept != NULL;
  if (!ok) cert_verdict(cx, ST_FAIL, "lifetime: certifier error: out of memory");
  for (size_t k = 0; ok && k < n; k++) {
    int got;
    if (cert_compare) {
      got = calls_on(cx, &set[k], k, &kept[nkept], &keep);
      if (got > 0 || kept[nkept].bytes) nkept++;
      ncalls += got == 1 ? 4 : got == 2 ? 3 : 0;
    } else {
      argset a;
      got = poisoned_call(cx, &set[k], &a, "0xff");
      if (got > 0) {
        hold(&kept[nkept++], &a, k);
        bp_stack_release(&a.st);
        cert_argset_free(&a);
        ncalls++;
      }
    }
    if (got == 0) ok = false;
    /* Every result held so far still has its bytes. */
    for (size_t j = 0; ok && j < nkept; j++) {
      long at = held_changed(&kept[j]);
      if (at < 0) continue;
      char was[300], last[300];
      cert_sample_desc(&set[kept[j].sample], was, sizeof was);
      cert_sample_desc(&set[k], last, sizeof last);
      cert_verdict(cx, ST_FAIL,
                   "lifetime: the result of the call on %s, which the caller still holds, "
                   "changed (byte %ld) after later calls, the last on %s: the kernel returned "
                   "memory it goes on using (a static or cached result buffer)",
                   was, at, last);
      ok = false;
    }
    if (ok && !cert_guard_ok(cx, "bounds", &set[k])) ok = false;
  }
  alive_free(&keep);
  for (size_t j = 0; j < nkept; j++) held_free(&kept[j]);
  free(kept);
  cert_sample_set_free(set, n);
  if (!ok || (nkept == 0 && cert_all_refused(cx, c, n))) return;
  char vary[160] = "";
  if (nunrepeatable)
    snprintf(vary, sizeof vary, " (on %zu sample(s) repeated calls differ anyway: not compared, "
             "repeatability's to report)", nunrepeatable);
  cert_verdict(
      cx, ST_PASS, "%zu results held by the caller kept their values through %zu calls%s%s", nkept,
      ncalls,
      cert_compare ? "; each the same with its fresh memory poisoned 0xff and 0x00, and at reused "
                     "addresses as at fresh ones"
                   : " (the op is nondeterministic: its results were not compared across calls)",
      vary);
}
