/*
 * conformance/checks/table.c - the check table: every check of the
 * certifier, in the order of the case list (cert.h, check_def).
 *
 * build_cases() (cases.c) turns it into cases: the plugin-wide entries
 * once each, the per-op ones for each op, where the first of them
 * stands.  The certificate's "checks" lists its groups in this order, and
 * the report's matrix has a column per CHECK_OP entry (per dtype for
 * numerics).  A new check: a function in a file of checks/ (declared in
 * checks.h) and an entry here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "checks.h"

const check_def check_table[] = {
    /* group          name                    scope              function          reset  fresh */
    {"handshake",     "handshake/exports",    CHECK_PLUGIN,      case_exports,     NULL, false},
    {"handshake",     "handshake/imports",    CHECK_PLUGIN,      case_imports,     NULL, false},
    {"handshake",     "handshake/binary",     CHECK_PLUGIN,      case_binary,      NULL, false},
    {"handshake",     "handshake/loads",      CHECK_PLUGIN,      case_loads,       NULL, false},
    {"handshake",     "handshake/version",    CHECK_PLUGIN,      case_version,     NULL, false},
    {"handshake",     "handshake/names",      CHECK_PLUGIN,      case_names,       NULL, false},
    {"registration",  "registration/probe",   CHECK_PLUGIN,      case_probe,       NULL, false},
    {"registration",  "registration/profile", CHECK_PLUGIN,      case_profile,     NULL, false},
    {"registration",  "registration/schemas", CHECK_PLUGIN,      case_schemas,     NULL, false},
    {"process",       "process/load",         CHECK_DEVICE,      case_process_load, NULL, true},
    {"numerics",      NULL,                   CHECK_OP_NUMERICS, case_numerics,    NULL, false},
    {"meta",          "meta",                 CHECK_OP,          case_meta,        NULL, false},
    {"meta",          "generic",              CHECK_OP_NOMETA,   case_nometa,      NULL, false},
    {"honesty",       "honesty",              CHECK_OP,          case_honesty,     NULL, false},
    {"bounds",        "bounds",               CHECK_OP,          case_bounds,      NULL, false},
    {"hygiene",       "hygiene",              CHECK_OP,          case_hygiene,     NULL, false},
    {"process",       "process",              CHECK_OP,          case_process,     NULL, false},
    {"repeatability", "repeatability",        CHECK_OP,          case_repeat,      NULL, false},
    {"reference",     "reference",            CHECK_OP_VENDOR,   case_reference,   NULL, false},
    {"lifetime",      "lifetime",             CHECK_OP,          case_lifetime,    NULL, false},
    {"aliasing",      "aliasing",             CHECK_OP,          case_aliasing,    NULL, false},
    {"errors",        "errors",               CHECK_OP,          case_errors,      NULL, false},
    {"oom",           "oom",                  CHECK_OP,          case_oom,         NULL, false},
    {"concurrency",   "concurrency",          CHECK_OP,          case_concurrency, concurrency_reset,
     true},
    {"device",        "device/synchronize",   CHECK_DEVICE,      case_sync,        NULL, false},
    {"device",        "device/streams",       CHECK_DEVICE,      case_streams,     NULL, false},
    {"teardown",      "teardown/unload",      CHECK_DEVICE,      case_teardown,    NULL, true},
    {"host",          "host/fpenv",           CHECK_DEVICE,      case_host_fpenv,  NULL, true},
    {"host",          "host/sigprof",         CHECK_DEVICE,      case_host_sigprof, NULL, true},
    {"host",          "host/fork",            CHECK_DEVICE,      case_host_fork,   NULL, true},
    {"host",          "host/stack",           CHECK_DEVICE,      case_host_stack,  NULL, true},
    {"host",          "host/affinity",        CHECK_DEVICE,      case_host_affinity, NULL, true},
    {"host",          "host/locale",          CHECK_DEVICE,      case_host_locale, NULL, true},
    {"host-long",     "host/cycles",          CHECK_DEVICE,      case_host_cycles, NULL, true},
    {"host-long",     "host/threads",         CHECK_DEVICE,      case_host_threads, NULL, true},
};
const size_t ncheck_table = sizeof check_table / sizeof *check_table;

bool check_group_first(size_t k) {
  for (size_t j = 0; j < k; j++)
    if (strcmp(check_table[j].group, check_table[k].group) == 0) return false;
  return true;
}
