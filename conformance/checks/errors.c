/*
 * conformance/checks/errors.c - core::OP/errors: bad calls fail cleanly,
 * with a status and a message.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* Calls with the stack of `as` and expects a clean failure; false after a
 * verdict naming `what`. */
static bool expect_failure(cert_ctx *cx, argset *as, const char *what) {
  bp_clear_error();
  if (bp_call(cx->cur.op, &as->st) == BP_OK) {
    cert_verdict(cx, ST_FAIL, "errors: %s succeeded", what);
    bp_stack_release(&as->st);
    return false;
  }
  if (!*bp_last_error()) {
    cert_verdict(cx, ST_FAIL, "errors: %s failed without a message", what);
    return false;
  }
  return true;
}

/* A call the op set refuses (the meta function's status ms, or for a
 * value only the kernel sees, such as an index out of range, `refuse`):
 * the kernel must fail with that status too, and a message.  False after
 * a verdict. */
static bool refuses_as_meta(cert_ctx *cx, argset *as, const char *desc, int32_t refuse) {
  bp_tensor_meta meta[4];
  for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status ms = bp_op_meta(cx->cur.op, &as->st, meta, 4);
  char mmsg[300];
  if (ms == BP_OK && refuse) {
    ms = (bp_status)refuse;
    snprintf(mmsg, sizeof mmsg, "a value out of range, which only the kernel sees");
  } else if (ms == BP_OK) {
    return true; /* not an error after all: nothing to hold it to */
  } else {
    snprintf(mmsg, sizeof mmsg, "%s", bp_last_error());
  }
  bp_clear_error();
  bp_status cs = bp_call(cx->cur.op, &as->st);
  if (cs == BP_OK) {
    bp_stack_release(&as->st);
    cert_verdict(cx, ST_FAIL, "errors: %s succeeded; the op set refuses it with %s (%s)", desc,
                 bp_status_str(ms), mmsg);
    return false;
  }
  if (cs != ms) {
    cert_verdict(cx, ST_FAIL, "errors: %s failed with %s (%s); the op set says %s (%s)", desc,
                 bp_status_str(cs), bp_last_error(), bp_status_str(ms), mmsg);
    return false;
  }
  if (!*bp_last_error()) {
    cert_verdict(cx, ST_FAIL, "errors: %s failed with %s but no message", desc, bp_status_str(cs));
    return false;
  }
  return true;
}

/* The bad arguments of the op set (sample_bad.c): dims out of range or
 * repeated, bad enum strings, shapes that do not fit, a bad out argument.
 * False after a verdict. */
static bool bad_values(cert_ctx *cx, char *done, size_t *dl, size_t cap) {
  gen_opts o = cert_op_gen_opts(cx);
  size_t n, nchecked = 0;
  sample *bad = cert_gen_core_set(cx->cur.r, BP_FLOAT32, SK_BADSHAPE, &o, &n);
  for (size_t k = 0; k < n; k++) {
    argset as;
    char desc[300], what[400];
    cert_sample_desc(&bad[k], desc, sizeof desc);
    if (!cert_materialise(cx, &bad[k], &cx->cur.si, M_PLAIN, &as)) {
      cert_argset_free(&as);
      continue;
    }
    snprintf(what, sizeof what, "a call with %s", desc);
    bool ok = refuses_as_meta(cx, &as, what, bad[k].refuse);
    cert_argset_free(&as);
    if (!ok || !cert_guard_ok(cx, "bounds", &bad[k])) {
      cert_sample_set_free(bad, n);
      return false;
    }
    nchecked++;
  }
  cert_sample_set_free(bad, n);
  if (nchecked && *dl < cap)
    *dl += (size_t)snprintf(done + *dl, cap - *dl, ", %zu bad values", nchecked);
  return true;
}

/* core::OP/errors: a wrong argument count, a wrong tag, a dtype the op or
 * the kernel does not take, a tensor on another device, and every bad
 * value the op set names (shapes, dims, enum strings, out arguments) each
 * give the op set's status and a message; never a crash, an abort() or an
 * exit(), which the fault handler and the exit trap name. */
void cert_case_errors(cert_ctx *cx, const certify_case *c) {
  if (!cert_op_setup(cx, c)) return;
  argset as;
  char what[400], done[300] = "";
  size_t dl = 0, n;
  sample *set = cert_op_check_set(cx, &n);
  if (!set) return;
  if (!cert_materialise(cx, &set[0], &cx->cur.si, M_PLAIN, &as)) {
    cert_verdict(cx, ST_FAIL, "errors: certifier error: cannot build the arguments: %s",
                 bp_last_error());
    cert_argset_free(&as);
    cert_sample_set_free(set, n);
    return;
  }
  bp_value saved[16];
  memcpy(saved, as.slots, sizeof saved);
  /* One argument too many (None past the schema's count). */
  while (as.st.top < (size_t)cx->cur.si.n + 1 && bp_stack_push_none(&as.st) == BP_OK) {
  }
  snprintf(what, sizeof what, "a call with %d arguments (the schema has %d)", cx->cur.si.n + 1,
           cx->cur.si.n);
  if (!expect_failure(cx, &as, what)) goto out;
  dl += (size_t)snprintf(done + dl, sizeof done - dl, "count");
  /* An int where the first Tensor is due. */
  memcpy(as.slots, saved, sizeof saved);
  as.st.top = as.nargs;
  size_t t;
  for (t = 0; t < as.nargs && as.slots[t].tag != BP_TAG_TENSOR; t++) {
  }
  if (t < as.nargs) {
    as.slots[t].tag = BP_TAG_INT;
    as.slots[t].len = 0;
    as.slots[t].u.i = 1;
    snprintf(what, sizeof what, "an int as argument %zu '%s'", t, cx->cur.si.name[t]);
    if (!expect_failure(cx, &as, what)) goto out;
    dl += (size_t)snprintf(done + dl, sizeof done - dl, ", tag");
  }
  memcpy(as.slots, saved, sizeof saved);
  as.st.top = as.nargs;
  /* A tensor on the CPU among tensors on another device. */
  if (cx->put.device.type != BP_DEVICE_CPU && !(cx->cur.oi.flags & BP_OP_MIXED_DEVICES) &&
      as.nmade >= 2 && strcmp(c->op, "core::copy_") != 0) {
    bp_tensor *cpu = NULL;
    const bp_tensor_view *v = bp_tensor_get_view(as.made[1]);
    if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &cpu) == BP_OK &&
        bp_tensor_copy(cpu, as.made[1]) == BP_OK) {
      int e = as.made_elem[1];
      if (e >= 0) { /* an element of a Tensor[] (cat's) */
        for (int k = 0; k < as.nlist; k++)
          if (as.list[k] == as.made[1]) as.list[k] = cpu;
      } else {
        as.slots[as.made_arg[1]].u.tensor = cpu;
      }
      snprintf(what, sizeof what, "%sargument %d '%s' on the CPU, the others on %s",
               e >= 0 ? "an element of " : "", as.made_arg[1], cx->cur.si.name[as.made_arg[1]],
               cert_device_name(cx->put.device.type));
      bool ok = expect_failure(cx, &as, what);
      bp_tensor_release(cpu);
      if (!ok) goto out;
      dl += (size_t)snprintf(done + dl, sizeof done - dl, ", device");
    } else {
      bp_tensor_release(cpu);
    }
  }
  cert_argset_free(&as);
  /* A dtype the kernel does not declare, or the op does not take. */
  if (cx->cur.r >= 0 || cx->cur.ki.dtypes) {
    gen_opts o = cert_op_gen_opts(cx);
    for (int d = 0; d < NUM_DTYPES; d++) {
      int32_t dt = all_dtypes[d];
      /* a dtype the kernel leaves out goes to the op's composite, if any */
      bool bad = !cert_declares(cx, dt) && !cx->cur.oi.has_composite;
      size_t nb = 1;
      sample *b = NULL, one;
      if (cx->cur.r >= 0) {
        b = cert_gen_core_set(cx->cur.r, dt, SK_BASIC, &o, &nb);
      } else {
        one = set[0]; /* the first sample, its tensors in dt */
        for (int i = 0; i < one.n; i++)
          if (one.a[i].k == AK_TENSOR) one.a[i].t = ref_cast(set[0].a[i].t, dt);
        b = malloc(sizeof *b);
        if (b) *b = one;
      }
      if (!b || !nb || !cert_materialise(cx, &b[0], &cx->cur.si, M_PLAIN, &as)) {
        cert_argset_free(&as);
        if (b) cert_sample_set_free(b, nb);
        break;
      }
      bp_tensor_meta meta[4];
      for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
      if (!bad && cx->cur.r >= 0 && bp_op_meta(cx->cur.op, &as.st, meta, 4) == BP_ERR_TYPE)
        bad = true;
      bool ok = true;
      if (bad) {
        snprintf(
            what, sizeof what, "a call with %s arguments (%s)", dt_name(dt),
            cert_declares(cx, dt) ? "the op does not take it" : "the kernel does not declare it");
        ok = expect_failure(cx, &as, what);
        if (ok) dl += (size_t)snprintf(done + dl, sizeof done - dl, ", dtype %s", dt_name(dt));
      }
      cert_argset_free(&as);
      cert_sample_set_free(b, nb);
      if (!ok) {
        cert_sample_set_free(set, n);
        return;
      }
      if (bad) break;
    }
  }
  cert_sample_set_free(set, n);
  if (cx->cur.r >= 0 && !bad_values(cx, done, &dl, sizeof done)) return;
  cert_verdict(cx, ST_PASS, "clean failures with messages: %s", done);
  return;
out:
  cert_argset_free(&as);
  cert_sample_set_free(set, n);
}
