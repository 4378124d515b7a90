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
static bool expect_failure(argset *as, const char *what) {
  bp_clear_error();
  if (bp_call(cx.cur.op, &as->st) == BP_OK) {
    verdict(ST_FAIL, "errors: %s succeeded", what);
    bp_stack_release(&as->st);
    return false;
  }
  if (!*bp_last_error()) {
    verdict(ST_FAIL, "errors: %s failed without a message", what);
    return false;
  }
  return true;
}

/* core::OP/errors: a wrong argument count, a wrong tag, a dtype the op or
 * the kernel does not take, a shape that does not fit and a tensor on
 * another device each give a non-OK status and a message, never a crash. */
void case_errors(const certify_case *c) {
  if (!op_setup(c)) return;
  sample s;
  argset as;
  char why[300], what[400], done[300] = "";
  size_t dl = 0;
  if (!get_sample(SK_BASIC, &s, why, sizeof why)) {
    verdict(ST_SKIP, "%s", why);
    return;
  }
  if (!materialise(&s, &cx.cur.si, M_PLAIN, &as)) {
    verdict(ST_FAIL, "errors: cannot build the arguments: %s", bp_last_error());
    return;
  }
  bp_value saved[16];
  memcpy(saved, as.slots, sizeof saved);
  /* One argument too many (None past the schema's count). */
  while (as.st.top < (size_t)cx.cur.si.n + 1 && bp_stack_push_none(&as.st) == BP_OK) {
  }
  snprintf(what, sizeof what, "a call with %d arguments (the schema has %d)", cx.cur.si.n + 1,
           cx.cur.si.n);
  if (!expect_failure(&as, what)) return;
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
    snprintf(what, sizeof what, "an int as argument %zu '%s'", t, cx.cur.si.name[t]);
    if (!expect_failure(&as, what)) return;
    dl += (size_t)snprintf(done + dl, sizeof done - dl, ", tag");
  }
  memcpy(as.slots, saved, sizeof saved);
  as.st.top = as.nargs;
  /* A tensor on the CPU among tensors on another device. */
  if (cx.put.device.type != BP_DEVICE_CPU && !(cx.cur.oi.flags & BP_OP_MIXED_DEVICES) &&
      as.nmade >= 2 && strcmp(c->op, "core::copy_") != 0) {
    bp_tensor *cpu = NULL;
    const bp_tensor_view *v = bp_tensor_get_view(as.made[1]);
    if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &cpu) == BP_OK &&
        bp_tensor_copy(cpu, as.made[1]) == BP_OK) {
      as.slots[as.made_arg[1]].u.tensor = cpu;
      snprintf(what, sizeof what, "argument %d '%s' on the CPU, the others on %s", as.made_arg[1],
               cx.cur.si.name[as.made_arg[1]], device_name(cx.put.device.type));
      bool ok = expect_failure(&as, what);
      bp_tensor_release(cpu);
      if (!ok) return;
      dl += (size_t)snprintf(done + dl, sizeof done - dl, ", device");
    } else {
      bp_tensor_release(cpu);
    }
  }
  argset_free(&as);
  sample_free(&s);
  /* A dtype the kernel does not declare, or the op does not take. */
  if (cx.cur.r >= 0 || cx.cur.ki.dtypes) {
    for (int d = 0; d < NUM_DTYPES; d++) {
      int32_t dt = all_dtypes[d];
      bool bad = !declares(dt);
      if (cx.cur.r >= 0) {
        gen_core(cx.cur.r, dt, SK_BASIC, 0, &s);
      } else {
        if (!gen_generic(&cx.cur.si, SK_BASIC, &s, why, sizeof why)) break;
        for (int i = 0; i < s.n; i++)
          if (s.a[i].k == AK_TENSOR) {
            rt *x = ref_cast(s.a[i].t, dt);
            rt_free(s.a[i].t);
            s.a[i].t = x;
          }
      }
      if (!materialise(&s, &cx.cur.si, M_PLAIN, &as)) {
        argset_free(&as);
        sample_free(&s);
        continue;
      }
      bp_tensor_meta meta[4];
      for (int i = 0; i < 4; i++) meta[i].struct_size = BP_TENSOR_META_STRUCT_SIZE;
      if (!bad && cx.cur.r >= 0 && bp_op_meta(cx.cur.op, &as.st, meta, 1) == BP_ERR_TYPE)
        bad = true;
      if (bad) {
        snprintf(what, sizeof what, "a call with %s arguments (%s)", dt_name(dt),
                 declares(dt) ? "the op does not take it" : "the kernel does not declare it");
        if (!expect_failure(&as, what)) return;
        dl += (size_t)snprintf(done + dl, sizeof done - dl, ", dtype %s", dt_name(dt));
        argset_free(&as);
        sample_free(&s);
        break;
      }
      argset_free(&as);
      sample_free(&s);
    }
  }
  /* Shapes that do not fit. */
  if (cx.cur.r >= 0 && sk_applies(core_refs[cx.cur.r].kind, SK_BADSHAPE)) {
    gen_core(cx.cur.r, BP_FLOAT32, SK_BADSHAPE, 0, &s);
    char desc[300];
    sample_desc(&s, desc, sizeof desc);
    if (materialise(&s, &cx.cur.si, M_PLAIN, &as)) {
      snprintf(what, sizeof what, "a call with mismatched shapes (%s)", desc);
      if (!expect_failure(&as, what)) return;
      dl += (size_t)snprintf(done + dl, sizeof done - dl, ", shape");
    }
    argset_free(&as);
    sample_free(&s);
  }
  verdict(ST_PASS, "clean failures with messages: %s", done);
}
