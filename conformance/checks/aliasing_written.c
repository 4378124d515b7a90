/*
 * conformance/checks/aliasing_written.c - OP/aliasing for an op that
 * writes an argument (Tensor(a!): core's add.out, copy_ and fill_, a
 * vendor's in-place ops): what it writes, in every aliasing relation a
 * caller can give it.  On each sample of the check set, for each written
 * argument w:
 *
 *   - gaps: w is a view whose rows lie GAP elements apart in a storage
 *     filled with a sentinel byte.  The call must leave every element
 *     between the view's elements as it was, and write the values the same
 *     call writes into a contiguous w;
 *   - exact alias: each other Tensor argument of w's dtype and shape is
 *     given w itself (as `y.axpy_(y, a)` does).  The call must write what
 *     it writes when that argument holds a copy of w, or refuse with a
 *     message;
 *   - partial overlap: that argument is a view of w's storage one element
 *     ahead of w, then one behind.  The call must write what it writes on
 *     copies of the two, or refuse with a message (PyTorch refuses such
 *     calls); a kernel that reads an element after it wrote it gives
 *     neither.
 *
 * Results within eight times the op set's tolerance for their dtype agree
 * (integers exactly), as against a composite (reference.c).
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

#define GAP 3          /* elements between the rows of the gapped view */
#define SENTINEL 0xA5u /* each byte of the gaps */

/* The tensor of argument j in as (not a Tensor[] element), or NULL. */
static bp_tensor *arg_tensor(const argset *as, int j) {
  for (int m = 0; m < as->nmade; m++)
    if (as->made_arg[m] == j && as->made_elem[m] < 0) return as->made[m];
  return NULL;
}

/* Whether a and b (n bytes of dtype dt) agree (excess_8x); else the
 * first element that does not, in *at. */
static bool agree_bytes(int32_t dt, const unsigned char *a, const unsigned char *b, size_t n,
                        size_t *at) {
  size_t item = bp_dtype_size(dt);
  for (size_t e = 0; item && e < n / item; e++)
    if (cert_excess_8x(dt, a + e * item, b + e * item) > 0) {
      *at = e;
      return false;
    }
  return true;
}

/* Makes a 1-D tensor of n elements of dt on the device under test holding
 * bytes (n elements); NULL when it cannot. */
static bp_tensor *device_tensor(cert_ctx *cx, int32_t dt, int64_t n, const void *bytes) {
  bp_tensor *t = NULL, *h = NULL;
  if (bp_tensor_empty(cx->put.device, dt, 1, &n, &t) != BP_OK ||
      bp_tensor_from_blob(BP_CPU, dt, 1, &n, NULL, (void *)bytes, NULL, NULL, &h) != BP_OK ||
      bp_tensor_copy(t, h) != BP_OK) {
    bp_tensor_release(t);
    t = NULL;
  }
  bp_tensor_release(h);
  return t;
}

/* The outcome of one call: 1 and w's bytes after it (owned), -1 when the
 * call failed with a message (a refusal), 0 after a verdict. */
typedef struct outcome {
  int got;
  unsigned char *bytes;
  size_t len;
} outcome;

/* Calls the op on as with the written tensor wt (already on the stack),
 * and reads wt back; desc and what (the relation) name the call in a
 * verdict. */
static outcome call_read(cert_ctx *cx, argset *as, bp_tensor *wt, const char *desc,
                         const char *what) {
  outcome o = {1, NULL, 0};
  if (bp_call(cx->cur.op, &as->st) != BP_OK) {
    const char *e = bp_last_error();
    o.got = e && *e ? -1 : 0;
    if (!o.got)
      cert_verdict(cx, ST_FAIL, "aliasing: %s: %s with %s failed without a message", desc,
                   cx->cur.oi.name, what);
    bp_clear_error();
    return o;
  }
  bp_stack_release(&as->st);
  o.bytes = cert_tensor_bytes(wt, &o.len);
  if (!o.bytes) {
    cert_verdict(cx, ST_FAIL,
                 "aliasing: %s: certifier error: cannot read back what %s wrote with %s: %s", desc,
                 cx->cur.oi.name, what, bp_last_error());
    o.got = 0;
  }
  return o;
}

/* A verdict for a relation the certifier could not set up. */
static int setup_failed(cert_ctx *cx, const char *desc, const char *what) {
  cert_verdict(cx, ST_FAIL,
               "aliasing: %s: certifier error: cannot make the arguments of %s with %s on "
               "%s: %s",
               desc, cx->cur.oi.name, what, cert_device_name(cx->put.device.type), bp_last_error());
  return 0;
}

/* The relation checks of one sample and one written argument w: 1 when
 * they pass, -1 when the sample is left out, 0 after a verdict.  *refusals
 * counts the relations the kernel refused with a message. */
static int written_one(cert_ctx *cx, const sample *s, int w, int *relations, int *refusals) {
  char desc[300];
  cert_sample_desc(s, desc, sizeof desc);
  const char *wname = cx->cur.si.name[w];
  /* The plain call: what w holds after it. */
  argset as;
  int got = cert_call_on(cx, s, M_PLAIN, &as, "aliasing");
  if (got <= 0) return got;
  bp_stack_release(&as.st);
  bp_tensor *wt = arg_tensor(&as, w);
  const bp_tensor_view *wv = wt ? bp_tensor_get_view(wt) : NULL;
  size_t plen = 0;
  unsigned char *plain = wt ? cert_tensor_bytes(wt, &plen) : NULL;
  int32_t dt = wv ? wv->dtype : BP_DTYPE_INVALID, nd = wv ? wv->ndim : 0;
  int64_t sizes[BP_MAX_NDIM], numel = wv ? wv->numel : 0;
  for (int32_t d = 0; d < nd; d++) sizes[d] = wv->sizes[d];
  cert_argset_free(&as);
  if (!plain || numel == 0 || nd == 0) {
    free(plain);
    return -1;
  }
  size_t item = bp_dtype_size(dt), at = 0;
  int result = 1;

  /* Gaps: rows GAP elements apart, 2 elements of sentinel before and after. */
  int64_t strides[BP_MAX_NDIM], span = 1;
  strides[nd - 1] = 1;
  for (int32_t d = nd - 2; d >= 0; d--) strides[d] = strides[d + 1] * sizes[d + 1] + GAP;
  for (int32_t d = 0; d < nd; d++) span += (sizes[d] - 1) * strides[d];
  int64_t total = span + 4;
  unsigned char *fill = malloc((size_t)total * item);
  if (!fill) abort(); /* the certifier's own memory */
  memset(fill, (int)SENTINEL, (size_t)total * item);
  bp_tensor *base = device_tensor(cx, dt, total, fill), *view = NULL;
  char what[200];
  snprintf(what, sizeof what, "argument #%d '%s' a view with gaps", w, wname);
  if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as) || !base ||
      bp_tensor_as_strided(base, nd, sizes, strides, 2, &view) != BP_OK ||
      bp_tensor_copy(view, arg_tensor(&as, w)) != BP_OK) {
    result = setup_failed(cx, desc, what);
  } else {
    as.slots[w].u.tensor = view;
    (*relations)++;
    outcome o = call_read(cx, &as, view, desc, what);
    if (o.got == 0) result = 0;
    if (o.got < 0) (*refusals)++;
    size_t blen = 0;
    unsigned char *after = o.got > 0 ? cert_tensor_bytes(base, &blen) : NULL;
    if (after) {
      /* every element of the storage outside the view keeps the sentinel */
      unsigned char *in = calloc((size_t)total, 1);
      if (!in) abort();
      for (int64_t k = 0; k < numel; k++) {
        int64_t off = 2, r = k;
        for (int32_t d = nd - 1; d >= 0; d--) {
          off += r % sizes[d] * strides[d];
          r /= sizes[d];
        }
        in[off] = 1;
      }
      for (int64_t e = 0; result == 1 && e < total; e++) {
        if (in[e]) continue;
        for (size_t b = 0; b < item; b++)
          if (after[(size_t)e * item + b] != SENTINEL) {
            cert_verdict(cx, ST_FAIL,
                         "aliasing: %s: argument #%d '%s' given as a view with gaps of %d "
                         "elements between its rows: the kernel wrote element %lld of the storage, "
                         "%s the view's elements (its first is element 2), which must keep what "
                         "they held",
                         desc, w, wname, GAP, (long long)e,
                         e < 2 || e >= 2 + span ? "outside" : "between");
            result = 0;
            break;
          }
      }
      free(in);
    }
    if (result == 1 && o.got > 0 && !agree_bytes(dt, o.bytes, plain, plen, &at)) {
      cert_verdict(cx, ST_FAIL,
                   "aliasing: %s: argument #%d '%s' given as a view with gaps of %d elements "
                   "between its rows: element %zu written differs from the same call's on a "
                   "contiguous '%s'",
                   desc, w, wname, GAP, at, wname);
      result = 0;
    }
    free(after);
    free(o.bytes);
  }
  cert_argset_free(&as);
  bp_tensor_release(view);
  bp_tensor_release(base);
  free(fill);

  /* Exact alias and partial overlap, with each other Tensor argument of
   * w's dtype and shape. */
  for (int i = 0; result == 1 && i < s->n; i++) {
    if (i == w || s->a[i].k != AK_TENSOR || cx->cur.si.mutated[i]) continue;
    const rt *ti = s->a[i].t;
    bool same = ti->dtype == dt && ti->ndim == nd;
    for (int32_t d = 0; same && d < nd; d++) same = ti->sizes[d] == sizes[d];
    if (!same) continue;
    const char *iname = cx->cur.si.name[i];
    /* exact alias: against i holding a copy of w */
    outcome want = {0, NULL, 0}, got_o = {0, NULL, 0};
    snprintf(what, sizeof what, "argument #%d '%s' a copy of '%s'", i, iname, wname);
    bp_tensor *aw = NULL, *copy = NULL; /* (a fresh one: i may be an expanded view) */
    if (!cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as) || !(aw = arg_tensor(&as, w)) ||
        bp_tensor_empty(cx->put.device, dt, nd, sizes, &copy) != BP_OK ||
        bp_tensor_copy(copy, aw) != BP_OK) {
      result = setup_failed(cx, desc, what);
    } else {
      as.slots[i].u.tensor = copy;
      want = call_read(cx, &as, aw, desc, what);
    }
    cert_argset_free(&as);
    bp_tensor_release(copy);
    if (want.got == 0) result = 0;
    snprintf(what, sizeof what, "argument #%d '%s' given '%s' itself", i, iname, wname);
    if (want.got > 0 && !cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as)) {
      result = setup_failed(cx, desc, what);
    } else if (want.got > 0) {
      aw = arg_tensor(&as, w);
      as.slots[i].u.tensor = aw;
      (*relations)++;
      got_o = call_read(cx, &as, aw, desc, what);
      if (got_o.got == 0) result = 0;
      if (got_o.got < 0) (*refusals)++;
      if (got_o.got > 0 && !agree_bytes(dt, got_o.bytes, want.bytes, want.len, &at)) {
        cert_verdict(
            cx, ST_FAIL,
            "aliasing: %s: argument #%d '%s' given '%s' itself (an exact alias, as "
            "in %s(y, y)): element %zu written differs from the same call's with a copy of "
            "'%s' there (the kernel reads '%s' after it writes '%s')",
            desc, i, iname, wname, cx->cur.oi.name, at, wname, iname, wname);
        result = 0;
      }
    }
    cert_argset_free(&as);
    free(want.bytes);
    free(got_o.bytes);
    /* partial overlap: i one element ahead of w, then one behind */
    for (int dir = 0; result == 1 && dir < 2; dir++) {
      unsigned char *hb = malloc((size_t)(numel + 1) * item);
      if (!hb) abort();
      memcpy(hb, plain, (size_t)numel * item); /* any values: w's after a call */
      memcpy(hb + (size_t)numel * item, plain, item);
      bp_tensor *ob = device_tensor(cx, dt, numel + 1, hb), *W = NULL, *X = NULL;
      bp_tensor *Wc = NULL, *Xc = NULL;
      int64_t cst[BP_MAX_NDIM];
      cst[nd - 1] = 1;
      for (int32_t d = nd - 2; d >= 0; d--) cst[d] = cst[d + 1] * sizes[d + 1];
      outcome copies = {0, NULL, 0}, over = {0, NULL, 0};
      snprintf(what, sizeof what, "argument #%d '%s' overlapping '%s' (one element %s it)", i,
               iname, wname, dir ? "behind" : "ahead of");
      bool made = ob && bp_tensor_as_strided(ob, nd, sizes, cst, dir, &W) == BP_OK &&
                  bp_tensor_as_strided(ob, nd, sizes, cst, 1 - dir, &X) == BP_OK &&
                  bp_tensor_empty(cx->put.device, dt, nd, sizes, &Wc) == BP_OK &&
                  bp_tensor_empty(cx->put.device, dt, nd, sizes, &Xc) == BP_OK &&
                  bp_tensor_copy(Wc, W) == BP_OK && bp_tensor_copy(Xc, X) == BP_OK &&
                  cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as);
      if (!made) {
        result = setup_failed(cx, desc, what);
      } else {
        as.slots[w].u.tensor = Wc;
        as.slots[i].u.tensor = Xc;
        copies = call_read(cx, &as, Wc, desc, "copies of the overlapping views");
        if (copies.got == 0) result = 0;
      }
      cert_argset_free(&as);
      if (copies.got > 0 && !cert_materialise(cx, s, &cx->cur.si, M_PLAIN, &as)) {
        result = setup_failed(cx, desc, what);
      } else if (copies.got > 0) {
        as.slots[w].u.tensor = W;
        as.slots[i].u.tensor = X;
        (*relations)++;
        over = call_read(cx, &as, W, desc, what);
        if (over.got == 0) result = 0;
        if (over.got < 0) (*refusals)++;
        if (over.got > 0 && !agree_bytes(dt, over.bytes, copies.bytes, copies.len, &at)) {
          cert_verdict(cx, ST_FAIL,
                       "aliasing: %s: argument #%d '%s' overlapping '%s' partially (one "
                       "element %s it in one storage): the call succeeded, but element %zu written "
                       "differs from the same call's on copies of the two; refuse such a call with "
                       "a message (PyTorch does) or compute as if on copies",
                       desc, i, iname, wname, dir ? "behind" : "ahead of", at);
          result = 0;
        }
      }
      cert_argset_free(&as);
      free(copies.bytes);
      free(over.bytes);
      bp_tensor_release(W);
      bp_tensor_release(X);
      bp_tensor_release(Wc);
      bp_tensor_release(Xc);
      bp_tensor_release(ob);
      free(hb);
    }
  }
  free(plain);
  if (result == 1 && !cert_guard_ok(cx, "bounds", s)) result = 0;
  return result;
}

void cert_written_aliasing(cert_ctx *cx, const certify_case *c) {
  size_t n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  int relations = 0, refusals = 0;
  for (size_t k = 0; k < n; k++)
    for (int w = 0; w < cx->cur.si.n && w < set[k].n; w++) {
      if (!cx->cur.si.mutated[w] || set[k].a[w].k != AK_TENSOR) continue;
      if (written_one(cx, &set[k], w, &relations, &refusals) == 0) {
        cert_sample_set_free(set, n);
        return;
      }
    }
  cert_sample_set_free(set, n);
  if (cert_all_refused(cx, c, n)) return;
  if (relations == 0) {
    cert_verdict(cx, ST_SKIP, "no sample gave %s's written argument a shape to alias", c->op);
    return;
  }
  cert_verdict(cx, ST_PASS,
               "what it writes keeps the gaps of a gapped view and agrees, or is refused "
               "with a message, under exact aliases and partial overlaps: %d relation(s), %d "
               "refused",
               relations, refusals);
}
