/*
 * conformance/checks/handshake.c - the handshake checks: the plugin's
 * exports and imports, and what its mapping would do to the process (read
 * from the ELF file, without loading it), that it loads, its ABI version,
 * and the names it gives.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#include "../elfsha.h"
#include "checks.h"

/* ------------------------------------------------------------------------ */
/* Handshake                                                                */
/* ------------------------------------------------------------------------ */

void cert_case_exports(cert_ctx *cx, const certify_case *c) {
  (void)c;
  elf_syms syms;
  char err[256];
  if (!cert_elf_read_dynsyms(cx->opt.plugin, &syms, err, sizeof err)) {
    cert_verdict(cx, ST_FAIL, "%s", err);
    return;
  }
  char extra[512] = "";
  size_t nextra = 0, len = 0;
  bool has_init = false;
  for (size_t i = 0; i < syms.n; i++) {
    if (!syms.v[i].defined) continue;
    if (strcmp(syms.v[i].name, "bp_plugin_init") == 0) {
      has_init = true;
      continue;
    }
    if (nextra++ < 5 && len < sizeof extra)
      len += (size_t)snprintf(extra + len, sizeof extra - len, "%s%s", len ? ", " : "",
                              syms.v[i].name);
  }
  cert_elf_syms_free(&syms);
  if (!has_init)
    cert_verdict(cx, ST_FAIL, "bp_plugin_init is not exported");
  else if (nextra)
    cert_verdict(cx, ST_FAIL, "%zu symbols exported besides bp_plugin_init: %s%s", nextra, extra,
                 nextra > 5 ? ", ..." : "");
  else
    cert_verdict(cx, ST_PASS, "exports only bp_plugin_init");
}

void cert_case_imports(cert_ctx *cx, const certify_case *c) {
  (void)c;
  elf_syms syms;
  char err[256];
  if (!cert_elf_read_dynsyms(cx->opt.plugin, &syms, err, sizeof err)) {
    cert_verdict(cx, ST_FAIL, "%s", err);
    return;
  }
  char bad[512] = "";
  size_t nbad = 0, len = 0;
  for (size_t i = 0; i < syms.n; i++) {
    if (syms.v[i].defined || strncmp(syms.v[i].name, "bp_", 3) != 0) continue;
    if (nbad++ < 5 && len < sizeof bad)
      len += (size_t)snprintf(bad + len, sizeof bad - len, "%s%s", len ? ", " : "",
                              syms.v[i].name);
  }
  cert_elf_syms_free(&syms);
  if (nbad)
    cert_verdict(cx, ST_FAIL, "imports %zu bp_ symbols (reach the host through its table): %s%s",
                 nbad, bad, nbad > 5 ? ", ..." : "");
  else
    cert_verdict(cx, ST_PASS, "no bp_ imports");
}

/* handshake/binary: nothing the loader refuses (docs/host-guide.md),
 * read from the file whatever BP_PLUGIN_ALLOW_UNSAFE says: no executable
 * stack, no writable and executable segment, no text relocations.  The
 * pass names the symbol versions it needs. */
void cert_case_binary(cert_ctx *cx, const certify_case *c) {
  (void)c;
  static elf_binary b;
  char err[256], why[700] = "", needs[600];
  if (!cert_elf_read_binary(cx->opt.plugin, &b, err, sizeof err)) {
    cert_verdict(cx, ST_FAIL, "%s: %s", cx->opt.plugin, err);
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  bool exec_stack = b.has_gnu_stack ? b.exec_stack : true; /* the x86 default */
#else
  bool exec_stack = b.exec_stack;
#endif
  size_t o = 0;
  if (exec_stack)
    o += (size_t)snprintf(why + o, sizeof why - o,
                          "%sit needs an executable stack (%s; rebuild it with "
                          "-Wl,-z,noexecstack)", o ? "; " : "",
                          b.has_gnu_stack ? "its PT_GNU_STACK program header has PF_X"
                                          : "it has no PT_GNU_STACK program header");
  if (b.wx_segment >= 0 && o < sizeof why)
    o += (size_t)snprintf(why + o, sizeof why - o,
                          "%sprogram header %d maps a segment that is both writable and "
                          "executable", o ? "; " : "", b.wx_segment);
  if (b.textrel && o < sizeof why)
    o += (size_t)snprintf(why + o, sizeof why - o,
                          "%sit has text relocations (DT_TEXTREL; rebuild it from "
                          "position-independent code, -fPIC)", o ? "; " : "");
  if (o) {
    cert_verdict(cx, ST_FAIL, "%s: %s: the loader refuses it", cx->opt.plugin, why);
    return;
  }
  if (cert_elf_needs_text(&b, needs, sizeof needs) == 0) snprintf(needs, sizeof needs, "none");
  cert_verdict(cx, ST_PASS,
               "no executable stack, no writable and executable segment, no text "
               "relocations; symbol versions needed: %s",
               needs);
}

void cert_case_loads(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (cert_load_plugin(cx))
    cert_verdict(cx, ST_PASS, "%s %s (%s)", cx->put.info.name,
                 cx->put.info.version ? cx->put.info.version : "?",
                 cx->put.info.vendor ? cx->put.info.vendor : "?");
}

void cert_case_version(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cert_load_plugin(cx)) return;
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  if (cx->put.info.abi_major != major)
    cert_verdict(cx, ST_FAIL, "plugin ABI %u.%u, host ABI %u.%u: majors differ",
                 cx->put.info.abi_major, cx->put.info.abi_minor, major, minor);
  else
    cert_verdict(cx, ST_PASS, "ABI %u.%u (host %u.%u), op set %u", cx->put.info.abi_major,
                 cx->put.info.abi_minor, major, minor, cx->put.info.op_set_version);
}

/* handshake/names: the descriptor's name is a valid identifier
 * ([a-z][a-z0-9_]*, as device and namespace names are), and it gives a
 * vendor and a version. */
void cert_case_names(cert_ctx *cx, const certify_case *c) {
  (void)c;
  if (!cert_load_plugin(cx)) return;
  const char *n = cx->put.info.name;
  bool ok = n[0] >= 'a' && n[0] <= 'z';
  for (const char *p = n; ok && *p; p++)
    ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
  if (!ok)
    cert_verdict(cx, ST_FAIL, "plugin name '%s' is not [a-z][a-z0-9_]*", n);
  else if (!cx->put.info.vendor || !*cx->put.info.vendor)
    cert_verdict(cx, ST_FAIL, "plugin '%s' gives no vendor", n);
  else if (!cx->put.info.version || !*cx->put.info.version)
    cert_verdict(cx, ST_FAIL, "plugin '%s' gives no version", n);
  else
    cert_verdict(cx, ST_PASS, "name '%s', vendor '%s', version '%s'", n, cx->put.info.vendor,
                 cx->put.info.version);
}
