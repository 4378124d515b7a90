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
    /* group          name                    scope              function          reset */
    {"handshake",     "handshake/exports",    CHECK_PLUGIN,      case_exports,     NULL},
    {"handshake",     "handshake/imports",    CHECK_PLUGIN,      case_imports,     NULL},
    {"handshake",     "handshake/loads",      CHECK_PLUGIN,      case_loads,       NULL},
    {"handshake",     "handshake/version",    CHECK_PLUGIN,      case_version,     NULL},
    {"handshake",     "handshake/names",      CHECK_PLUGIN,      case_names,       NULL},
    {"registration",  "registration/profile", CHECK_PLUGIN,      case_profile,     NULL},
    {"registration",  "registration/schemas", CHECK_PLUGIN,      case_schemas,     NULL},
    {"numerics",      NULL,                   CHECK_OP_NUMERICS, case_numerics,    NULL},
    {"meta",          "meta",                 CHECK_OP,          case_meta,        NULL},
    {"meta",          "generic",              CHECK_OP_NOMETA,   case_nometa,      NULL},
    {"honesty",       "honesty",              CHECK_OP,          case_honesty,     NULL},
    {"bounds",        "bounds",               CHECK_OP,          case_bounds,      NULL},
    {"hygiene",       "hygiene",              CHECK_OP,          case_hygiene,     NULL},
    {"repeatability", "repeatability",        CHECK_OP,          case_repeat,      NULL},
    {"errors",        "errors",               CHECK_OP,          case_errors,      NULL},
    {"concurrency",   "concurrency",          CHECK_OP,          case_concurrency, concurrency_reset},
    {"device",        "device/synchronize",   CHECK_DEVICE,      case_sync,        NULL},
    {"device",        "device/streams",       CHECK_DEVICE,      case_streams,     NULL},
};
const size_t ncheck_table = sizeof check_table / sizeof *check_table;

bool check_group_first(size_t k) {
  for (size_t j = 0; j < k; j++)
    if (strcmp(check_table[j].group, check_table[k].group) == 0) return false;
  return true;
}
