/*
 * conformance/checks/table.c - the check table: every check of the
 * certifier, in the order of the case list (cert.h, check_def).
 *
 * cert_build_cases() (cases.c) turns it into cases: the plugin-wide entries
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

const check_def cert_check_table[] = {
    /* group          name                    scope              function          reset  fresh */
    {"handshake", "handshake/exports", CHECK_PLUGIN, cert_case_exports, NULL, false},
    {"handshake", "handshake/imports", CHECK_PLUGIN, cert_case_imports, NULL, false},
    {"handshake", "handshake/binary", CHECK_PLUGIN, cert_case_binary, NULL, false},
    {"handshake", "handshake/loads", CHECK_PLUGIN, cert_case_loads, NULL, false},
    {"handshake", "handshake/version", CHECK_PLUGIN, cert_case_version, NULL, false},
    {"handshake", "handshake/names", CHECK_PLUGIN, cert_case_names, NULL, false},
    {"registration", "registration/probe", CHECK_PLUGIN, cert_case_probe, NULL, false},
    {"registration", "registration/profile", CHECK_PLUGIN, cert_case_profile, NULL, false},
    {"registration", "registration/schemas", CHECK_PLUGIN, cert_case_schemas, NULL, false},
    {"process", "process/load", CHECK_DEVICE, cert_case_process_load, NULL, true},
    {"numerics", NULL, CHECK_OP_NUMERICS, cert_case_numerics, NULL, false},
    {"meta", "meta", CHECK_OP, cert_case_meta, NULL, false},
    {"meta", "generic", CHECK_OP_NOMETA, cert_case_nometa, NULL, false},
    {"honesty", "honesty", CHECK_OP, cert_case_honesty, NULL, false},
    {"bounds", "bounds", CHECK_OP, cert_case_bounds, NULL, false},
    {"hygiene", "hygiene", CHECK_OP, cert_case_hygiene, NULL, false},
    {"process", "process", CHECK_OP, cert_case_process, NULL, false},
    {"repeatability", "repeatability", CHECK_OP, cert_case_repeat, NULL, false},
    {"reference", "reference", CHECK_OP_VENDOR, cert_case_reference, NULL, false},
    {"lifetime", "lifetime", CHECK_OP, cert_case_lifetime, NULL, false},
    {"aliasing", "aliasing", CHECK_OP, cert_case_aliasing, NULL, false},
    {"errors", "errors", CHECK_OP, cert_case_errors, NULL, false},
    {"oom", "oom", CHECK_OP, cert_case_oom, NULL, false},
    {"concurrency", "concurrency", CHECK_OP, cert_case_concurrency, cert_concurrency_reset, true},
    {"device", "device/synchronize", CHECK_DEVICE, cert_case_sync, NULL, false},
    {"device", "device/streams", CHECK_DEVICE, cert_case_streams, NULL, false},
    {"teardown", "teardown/unload", CHECK_DEVICE, cert_case_teardown, NULL, true},
    {"host", "host/fpenv", CHECK_DEVICE, cert_case_host_fpenv, NULL, true},
    {"host", "host/sigprof", CHECK_DEVICE, cert_case_host_sigprof, NULL, true},
    {"host", "host/fork", CHECK_DEVICE, cert_case_host_fork, NULL, true},
    {"host", "host/stack", CHECK_DEVICE, cert_case_host_stack, NULL, true},
    {"host", "host/affinity", CHECK_DEVICE, cert_case_host_affinity, NULL, true},
    {"host", "host/locale", CHECK_DEVICE, cert_case_host_locale, NULL, true},
    {"host-long", "host/cycles", CHECK_DEVICE, cert_case_host_cycles, NULL, true},
    {"host-long", "host/threads", CHECK_DEVICE, cert_case_host_threads, NULL, true},
};
const size_t cert_ncheck_table = sizeof cert_check_table / sizeof *cert_check_table;

bool cert_check_group_first(size_t k) {
  for (size_t j = 0; j < k; j++)
    if (strcmp(cert_check_table[j].group, cert_check_table[k].group) == 0) return false;
  return true;
}
