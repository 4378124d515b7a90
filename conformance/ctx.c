/*
 * conformance/ctx.c - the defaults of the certifier's context (cert.h):
 * the options before parsing, and no verdict channel.  main() owns the
 * one context of a run and passes it down.
 */
#include "cert.h"

/* The default --timeout: 10 s of CPU time a case, scaled in a sanitizer
 * build of bp-certify, whose workers (and the sanitizer-built plugins it
 * certifies) run every case several times slower: ThreadSanitizer's 5 to
 * 20 times took the fused attention's large samples past 10 s. */
#if defined(__SANITIZE_THREAD__)
#define CERT_TIMEOUT 40.0
#elif defined(__SANITIZE_ADDRESS__)
#define CERT_TIMEOUT 20.0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CERT_TIMEOUT 40.0
#elif __has_feature(address_sanitizer)
#define CERT_TIMEOUT 20.0
#endif
#endif
#ifndef CERT_TIMEOUT
#define CERT_TIMEOUT 10.0
#endif

void cert_ctx_init(cert_ctx *cx) {
  *cx = (cert_ctx){
      .opt = {.profile = "core",
              .jobs = 1,
              .timeout = CERT_TIMEOUT,
              .seed = 1,
              .isolation = ISO_WORKER},
      .chan = {.fd = -1},
  };
}
