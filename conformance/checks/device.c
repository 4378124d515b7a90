/*
 * conformance/checks/device.c - the device checks: synchronize, and
 * (--profile full) the optional streams and events.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "checks.h"

/* device/synchronize: bp_device_synchronize works on the device. */
void cert_case_sync(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
  if (bp_device_synchronize(cx->put.device) != BP_OK) {
    cert_verdict(cx, ST_FAIL, "device: bp_device_synchronize(%s:%d) failed: %s",
                 cert_device_name(cx->put.device.type), cx->put.device.index, bp_last_error());
    return;
  }
  cert_verdict(cx, ST_PASS, "bp_device_synchronize(%s:%d) succeeds",
               cert_device_name(cx->put.device.type), cx->put.device.index);
}

/* device/streams: the optional streams and events, when the device has
 * them: create, make current, run an op on it, record, wait, synchronize
 * and destroy. */
void cert_case_streams(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cx->opt.full) {
    cert_verdict(cx, ST_SKIP, "the device-feature check belongs to --profile full");
    return;
  }
  if (!cert_load_plugin(cx) || !cert_pick_device(cx)) return;
  const char *dn = cert_device_name(cx->put.device.type);
  bp_stream *s1 = NULL, *s2 = NULL, *cur = NULL;
  bp_event *ev = NULL;
  bp_status st = bp_stream_create(cx->put.device, &s1);
  bp_status est = bp_event_create(cx->put.device, &ev);
  if (st == BP_ERR_UNSUPPORTED && est == BP_ERR_UNSUPPORTED) {
    cert_verdict(cx, ST_SKIP, "%s declares no streams or events (BP_ERR_UNSUPPORTED)", dn);
    return;
  }
#define STEP(call, what)                                                                   \
  do {                                                                                     \
    if ((call) != BP_OK) {                                                                 \
      cert_verdict(cx, ST_FAIL, "device: %s on %s failed: %s", what, dn, bp_last_error()); \
      return;                                                                              \
    }                                                                                      \
  } while (0)
  if (st == BP_ERR_UNSUPPORTED) {
    /* Events on the default stream only. */
    STEP(est, "bp_event_create");
    STEP(bp_event_record(cx->put.device, ev, NULL), "bp_event_record on the default stream");
    STEP(bp_event_synchronize(cx->put.device, ev), "bp_event_synchronize");
    STEP(bp_event_destroy(cx->put.device, ev), "bp_event_destroy");
    cert_verdict(cx, ST_PASS, "%s: events on the default stream work (no streams declared)", dn);
    return;
  }
  STEP(st, "bp_stream_create");
  STEP(bp_stream_create(cx->put.device, &s2), "a second bp_stream_create");
  STEP(bp_stream_set_current(cx->put.device, s1), "bp_stream_set_current");
  STEP(bp_stream_get_current(cx->put.device, &cur), "bp_stream_get_current");
  if (cur != s1) {
    cert_verdict(cx, ST_FAIL,
                 "device: bp_stream_get_current on %s did not return the stream just set", dn);
    return;
  }
  /* Some work on the stream: core::add when the plugin has it. */
  const bp_op *add;
  if (bp_op_find("core::add", &add) == BP_OK &&
      cert_plugin_kernel(cx, add, cx->put.device.type, NULL)) {
    static const int64_t sz[2] = {64, 64};
    rt *a = cert_rand_rt(BP_FLOAT32, 2, sz, -1, 1);
    argset as;
    memset(&as, 0, sizeof as);
    as.st = (bp_stack)BP_STACK_INIT(as.slots, 16);
    tlayout contig = cert_lay_make(L_CONTIG, a->ndim, a->sizes);
    if (!cert_make_tensor(cx, &as, a, &contig, M_PLAIN, false, 0, "self")) {
      cert_verdict(cx, ST_FAIL, "device: cannot make a tensor on %s: %s", dn, bp_last_error());
      return;
    }
    bp_stack_push_tensor(&as.st, as.made[0]);
    bp_stack_push_tensor(&as.st, as.made[0]);
    STEP(bp_call(add, &as.st), "core::add on a created stream");
    bp_stack_release(&as.st);
    cert_argset_free(&as);
    rt_free(a);
  }
  if (est == BP_ERR_UNSUPPORTED) {
    STEP(bp_stream_synchronize(cx->put.device, s1), "bp_stream_synchronize");
  } else {
    STEP(est, "bp_event_create");
    STEP(bp_event_record(cx->put.device, ev, s1), "bp_event_record");
    STEP(bp_stream_wait_event(cx->put.device, s2, ev), "bp_stream_wait_event");
    STEP(bp_event_synchronize(cx->put.device, ev), "bp_event_synchronize");
    STEP(bp_stream_synchronize(cx->put.device, s2), "bp_stream_synchronize");
    STEP(bp_event_destroy(cx->put.device, ev), "bp_event_destroy");
  }
  STEP(bp_stream_set_current(cx->put.device, NULL), "bp_stream_set_current(NULL)");
  STEP(bp_stream_destroy(cx->put.device, s1), "bp_stream_destroy");
  STEP(bp_stream_destroy(cx->put.device, s2), "bp_stream_destroy of the second stream");
#undef STEP
  cert_verdict(cx, ST_PASS, "%s: streams%s work: create, current, a call, %ssynchronize, destroy",
               dn, est == BP_ERR_UNSUPPORTED ? "" : " and events",
               est == BP_ERR_UNSUPPORTED ? "" : "record, wait, ");
}
