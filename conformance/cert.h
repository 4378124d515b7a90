/*
 * conformance/cert.h - the internal header of bp-certify: the context
 * (cert_ctx) that the modules are handed, the case and check types, and
 * what each module offers the others.
 *
 * main() owns the run's one context and passes it down: every function
 * that reads or changes the run's state takes it first, as `cert_ctx
 * *cx`, the way Lua's functions take their lua_State.  It holds the state
 * in a few structs, each owned by one module: the options (options.c),
 * the child's verdict channel (verdict.c; whoever forks the child sets
 * it), the plugin under test (plugin.c), the op of the current case
 * (checks/common.c), what the probe learned (probe.c), the case list
 * (cases.c) and what the run gave (runner.c).  State that one module
 * alone uses stays a static there (the runner's slots, the worker's saved
 * state, the fault handler's regions and the context it reports through,
 * the random generator, the concurrency check's threads).
 *
 * The modules, from the top (none calls one above it; tests/
 * test-layering.sh checks that):
 *   main.c          main: parse, probe, build the cases, run, report
 *   report.c        the JSON certificate and the HTML report
 *   runner.c        the --jobs slots, the workers and fresh processes
 *   worker.c        a worker: one load of the plugin, case after case
 *   cases.c         the case list, from the check table
 *   checks/         one file per check group (checks.h); common.c, the
 *                   per-op helpers; table.c, the check table
 *   options.c       the command line
 *   probe.c         what the plugin registers, learned in a child
 *   plugin.c        the plugin under test in a child; an op's schema
 *   sample_check.c  the samples of the checks other than numerics
 *   hints.c         hints.h: --hints, the values an op's generic samples take
 *   sample_sets.c   the numerics' sample sets, by class, over the
 *                   per-kind sample_*.c files and sample_values.c,
 *                   sample_edges.c (the value classes)
 *   sample_gen.c    what the generators share: ranges, special values
 *   samples.c       sample.h: the arguments of a call, and the reference
 *   devtensor.c     devtensor.h: tensors on the device under test
 *   compare.c       a result against the reference
 *   verdict.c       a case's verdict, sent to the parent; the fault handler
 *   ctx.c           the context's defaults
 *   ipc.c, ipc.h    the words parent and children say to each other
 *   elfsha.h        the ELF symbol reader and SHA-256 (no libbackplane)
 *
 * docs/certification.md describes every check and the two profiles.
 */
#ifndef BP_CONFORMANCE_CERT_H
#define BP_CONFORMANCE_CERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <backplane/host.h>

#include "ipc.h"

#define CERTIFY_VERSION "0.4.0"

/* The certifier's context, defined at the end. */
typedef struct cert_ctx cert_ctx;

/* ------------------------------------------------------------------------ */
/* Options (options.c)                                                      */
/* ------------------------------------------------------------------------ */

/* How cases are kept apart: a fresh process each, or long-lived workers. */
enum isolation { ISO_WORKER, ISO_CASE };
extern const char *const cert_isolation_name[];

typedef struct cert_options {
  const char *plugin;
  const char *device;  /* "TYPE[:INDEX]" as given, or NULL */
  const char *profile; /* "core", "full" or "host" */
  const char *ops;     /* fnmatch glob, or NULL for all */
  const char *json;
  const char *html;
  long jobs;
  double timeout;
  uint64_t seed;
  bool list;
  bool full;
  bool host; /* --profile host: the hostile-host checks alone */
  const char *threads_env; /* --threads-env: the plugin's thread-count setting */
  const char *reference;   /* --reference: a plugin with reference kernels of the
                              plugin's own ops, or NULL */
  const char *hints;       /* --hints: the sample hints' file (hints.h), or NULL */
  enum isolation isolation;
} cert_options;

void cert_parse_args(cert_ctx *cx, int argc, char **argv);

/* ------------------------------------------------------------------------ */
/* Cases and checks                                                         */
/* ------------------------------------------------------------------------ */

typedef struct certify_case certify_case;
struct certify_case {
  char name[160];
  const char *group; /* the check group: handshake, numerics, honesty, ... */
  void (*fn)(cert_ctx *cx, const certify_case *c);
  char op[96];       /* the op under test, or "" */
  int32_t dt;        /* numerics: the dtype */
  int sk;            /* numerics: the sample kind */
  double timeout;    /* its time limit: --timeout, ten times that for
                      * host/cycles and host/threads (many loads) */
  enum status status;
  char detail[1024];
  double seconds;
  /* Worker isolation: the case did not pass in a shared worker, so it was
   * rerun alone; this is what the worker gave. */
  bool rerun;
  enum status worker_status;
  char worker_detail[1024];
  /* What ran in that worker before it (worker_after cases, the last of
   * them worker_prev); and the verdict alone, when it differs: a failure
   * that shows only after earlier calls stands ("depends on earlier
   * calls"), unless the certifier caused it (excused). */
  size_t worker_after, worker_prev;
  enum status alone_status;
  bool excused;
  /* Runs in a fresh process of its own, never in a worker. */
  bool fresh;
};

/* Which cases a check gives. */
typedef enum check_scope {
  CHECK_PLUGIN,      /* one plugin-wide case, even when the plugin does not load */
  CHECK_DEVICE,      /* one plugin-wide case, when the probe could load the plugin */
  CHECK_OP,          /* one case "OP/NAME" per op: each core op the host defines
                      * (that the plugin implements or claims), and each other
                      * op the plugin implements that has a meta function */
  CHECK_OP_NOMETA,   /* one case "OP/NAME" per op outside core without a meta
                      * function, in place of its CHECK_OP cases */
  CHECK_OP_NUMERICS, /* per core op, per dtype, per sample kind: "OP/DTYPE/SAMPLE" */
  CHECK_OP_VENDOR,   /* one case "OP/NAME" per op outside core with a meta
                      * function (the core ops have numerics instead) */
} check_scope;

/* One entry of the check table (checks/table.c).  The case list follows
 * the table's order, with the cases of each op (its entries of the
 * CHECK_OP* scopes, in table order) where the first of those entries
 * stands; the certificate's "checks" and the report's matrix follow it
 * too.  A new check is a function in a file of checks/ and an entry. */
typedef struct check_def {
  const char *group; /* the check group (several entries may share one) */
  const char *name;  /* CHECK_PLUGIN, CHECK_DEVICE: the case's name;
                      * CHECK_OP, CHECK_OP_NOMETA, CHECK_OP_VENDOR: the NAME
                      * of "OP/NAME";
                      * CHECK_OP_NUMERICS: NULL */
  check_scope scope;
  void (*fn)(cert_ctx *cx, const certify_case *c);
  /* Puts back the check's own per-process state before each case in a
   * worker, as a fresh process has it; NULL when it keeps none. */
  void (*reset)(void);
  /* The check needs a process in which the plugin has not been loaded
   * yet (it measures the load itself): it never runs in a worker. */
  bool fresh;
} check_def;

extern const check_def cert_check_table[];
extern const size_t cert_ncheck_table;
/* Whether entry k is the first of its group in the table. */
bool cert_check_group_first(size_t k);

/* cases.c */
certify_case *cert_add_case(cert_ctx *cx, const char *group, const char *name,
                            void (*fn)(cert_ctx *, const certify_case *), const char *op);
bool cert_selected(cert_ctx *cx, const char *op, const char *casename);
void cert_build_cases(cert_ctx *cx);

typedef struct case_list {
  certify_case *v;
  size_t n, cap;
} case_list;

/* ------------------------------------------------------------------------ */
/* Verdicts, written by the child (verdict.c)                               */
/* ------------------------------------------------------------------------ */

void cert_send_verdict(cert_ctx *cx, enum status st, char *detail);
void cert_verdict(cert_ctx *cx, enum status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Text put before every verdict's detail while not empty (a check that
 * runs another's under a condition says which). */
extern char cert_verdict_prefix[128];

/* A read-only input between two PROT_NONE guard pages.  A write into the
 * data pages is a schema-honesty failure, an access to a guard page a
 * bounds failure; the handler names the argument and ends the case. */
typedef struct region {
  uintptr_t map_lo, data_lo, data_hi, map_hi; /* guard | data pages | guard */
  uintptr_t elems_lo, elems_hi;               /* the elements themselves */
  int arg;
  char name[32];
  bool readonly; /* the data pages are read-only (an input) */
  bool used;
} region;

/* Around a case's function in a child: names the check group that a
 * crash, an abort() or an exit() in the plugin happened in, and traps
 * exit() (on_exit) so that it becomes a verdict. */
void cert_verdict_begin(cert_ctx *cx, const char *group);
void cert_verdict_end(void);

/* Registers a mapping for the fault handler: its index, or -1 when the
 * table is full. */
int cert_region_add(const region *r);
void cert_region_remove(int i);
void cert_install_fault_handler(cert_ctx *cx);

/* ------------------------------------------------------------------------ */
/* The plugin under test, inside a child (plugin.c)                         */
/* ------------------------------------------------------------------------ */

typedef struct plugin_state {
  bp_plugin *plugin;
  bp_plugin_info info;
  bp_device device;
  /* Whether the CPU may touch the device's memory: the host CPU device, or
   * a type that declares BP_DEVICE_HOST_VISIBLE (bp_device_type_flags).
   * Inputs then live in read-only pages between guard pages, made on the
   * device with bp_tensor_from_blob.  BP_CERTIFY_DEVICE_PATH=1 forces the
   * device path even on the CPU. */
  bool host_visible;
} plugin_state;

bool cert_load_plugin(cert_ctx *cx);
bool cert_is_core(const char *name);
bool cert_plugin_kernel(cert_ctx *cx, const bp_op *op, int32_t type, bp_kernel_info *out);
bool cert_pick_device(cert_ctx *cx);
const char *cert_device_name(int32_t type);

/* What the certifier needs of a schema: each argument's name and type,
 * whether it is annotated (a!), its alias letter, and whether it has a
 * default; and the results' alias letters. */
typedef struct schema_info {
  int n;
  char name[12][32];
  char type[12][48];
  bool mutated[12];
  bool has_default[12];
  char alias[12];
  int nret;
  char ret_alias[4];
} schema_info;

void cert_op_schema_info(const bp_op *op, schema_info *out);

/* The op of the current case, set by cert_op_setup() (checks/common.c), and
 * what the checks of it have seen. */
typedef struct op_state {
  const bp_op *op;
  bp_op_info oi;
  schema_info si;
  int r; /* index into refs, -1 outside core */
  bp_kernel_info ki;
  bool has_kernel;
  /* An op outside core may refuse a generated sample (a layout or a value
   * it does not take) with a clean error: that sample is left out of the
   * check.  A core op must take every sample. */
  int nrefused;
  char refusal[800];
  /* Samples left out because a result would have a dtype the kernel does
   * not declare (the host never sends it such a call): how many, and the
   * reason of the first, which a pass's detail and TAP repeat. */
  int nundeclared;
  char undeclared[200];
} op_state;

/* What a pass's detail ends with when samples were left out for their
 * results' dtypes; the runner repeats it as a TAP diagnostic. */
#define LEFT_OUT_MARK "; left out: "


/* ------------------------------------------------------------------------ */
/* The probe: what the plugin registers, learned in a child (probe.c)       */
/* ------------------------------------------------------------------------ */

typedef struct probe_op {
  char name[96];
  bool has_meta;
  bool any_dtype;
  int32_t dtypes[16];
  int ndtypes;
} probe_op;

typedef struct probe_result {
  bool loaded;
  char name[128], vendor[128], version[64], device[64], device_name[128];
  unsigned abi_major, abi_minor, op_set;
  /* The device under test does not exist: how many of its type there
   * are, and the plugin's setup note (why, often). */
  bool no_device;
  long device_count;
  char note[512];
  probe_op *ops;
  size_t nops;
  /* When it did not load (loaded false): why, in a sentence. */
  char why[600];
  /* --device names no device type the plugin registers; those it has. */
  bool bad_device;
  char device_types[300];
} probe_result;

void cert_run_probe(cert_ctx *cx);
const probe_op *cert_probe_find(cert_ctx *cx, const char *name);

/* ------------------------------------------------------------------------ */
/* The runner (runner.c) and the worker (worker.c)                          */
/* ------------------------------------------------------------------------ */

/* What the run gave, for the summary, the certificate and the report. */
typedef struct run_result {
  size_t nworkers, nreruns, nchanged;
  size_t ndepends; /* failures seen only after earlier calls in a worker */
  char fallback_why[300]; /* why worker isolation was turned off, or "" */
  size_t npassed, nfailed, nskipped;
} run_result;

bool cert_failed_status(enum status s);
void cert_run_all(cert_ctx *cx);
const char *cert_tap_text(const char *s, char *buf, size_t n);
void cert_worker_main(cert_ctx *cx, int fd) __attribute__((noreturn));

/* ------------------------------------------------------------------------ */
/* The certificate and the report (report.c)                                */
/* ------------------------------------------------------------------------ */

bool cert_write_json(cert_ctx *cx, const char *path);
bool cert_write_html(cert_ctx *cx, const char *path);
/* A TAP diagnostic of the symbol versions the plugin needs of each library
 * (read from its file), after the header line; nothing when it needs none. */
void cert_tap_requires(cert_ctx *cx);

/* ------------------------------------------------------------------------ */
/* The context                                                              */
/* ------------------------------------------------------------------------ */

struct cert_ctx {
  cert_options opt; /* options.c */
  /* The child's end of the pipe (or the worker's socket), which the code
   * that forks the child sets, and verdict.c sends on; and the last
   * verdict's detail when there was no pipe to send it on (a worker
   * loading the plugin). */
  struct {
    int fd;
    char unsent[1024];
  } chan;
  plugin_state put;    /* plugin.c: the plugin under test, in a child */
  op_state cur;        /* checks/common.c: the op of the current case */
  probe_result probe;  /* probe.c, in the parent */
  case_list cases;     /* cases.c */
  size_t op_cases;     /* cases.c: how many of them check an op */
  bool ops_name_plugin_case; /* cases.c: --ops names a plugin-wide case */
  run_result run;      /* runner.c */
};

/* Sets a context to the defaults of the options (ctx.c). */
void cert_ctx_init(cert_ctx *cx);

#endif /* BP_CONFORMANCE_CERT_H */
