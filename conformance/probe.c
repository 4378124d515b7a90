/*
 * conformance/probe.c - the probe: what the plugin registers (its
 * descriptor, the device under test, its ops), learned in a child so
 * that the parent never loads the plugin, into cx->probe.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <backplane/host.h>

#include "budget.h"
#include "cert.h"

/* ------------------------------------------------------------------------ */
/* The probe: what the plugin registers, learned in a child                 */
/* ------------------------------------------------------------------------ */

/* Writes s as one field of a probe line: a backslash, tab, newline or
 * carriage return becomes a backslash escape, so that whatever bytes a
 * plugin puts in its vendor or version (or a device name) cannot split the
 * tab-separated line, and probe_unescape() gives them back. */
static void probe_field(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '\\': fputs("\\\\", f); break;
      case '\t': fputs("\\t", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      default: fputc(*s, f); break;
    }
  }
}

/* Copies the probe field src into dst (len bytes, truncated), undoing
 * probe_field()'s escapes. */
static void probe_unescape(char *dst, size_t len, const char *src) {
  size_t n = 0;
  for (; *src && n + 1 < len; src++) {
    char c = *src;
    if (c == '\\' && src[1]) {
      src++;
      c = *src == 't' ? '\t' : *src == 'n' ? '\n' : *src == 'r' ? '\r' : *src;
    }
    dst[n++] = c;
  }
  dst[n] = '\0';
}

static void probe_child(cert_ctx *cx) {
  FILE *f = fdopen(cx->chan.fd, "w");
  if (!f) return;
  if (bp_plugin_load(cx->opt.plugin, &cx->put.plugin) != BP_OK) {
    fputs("error\tthe plugin does not load: ", f);
    probe_field(f, bp_last_error());
    fputc('\n', f);
    fclose(f);
    return;
  }
  cx->put.info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
  if (bp_plugin_get_info(cx->put.plugin, &cx->put.info) != BP_OK || !cx->put.info.name) {
    fputs("error\tbp_plugin_get_info failed: ", f);
    probe_field(f, bp_last_error());
    fputc('\n', f);
    fclose(f);
    return;
  }
  cx->chan.fd = -1; /* pick_device's verdict is not the probe's to send */
  if (!cert_pick_device(cx)) {
    /* --device names no registered type: the types there are. */
    fputs("nodevtype\t", f);
    for (int32_t code = 1, k = 0; code < BP_DEVICE_DYNAMIC_FIRST + 256; code++) {
      int32_t count = 0;
      const char *n = bp_device_type_name(code);
      if (!n || bp_device_count(code, &count) != BP_OK) continue;
      fputs(k++ ? ", " : "", f);
      probe_field(f, n);
    }
    fputc('\n', f);
    fclose(f);
    return;
  }
  bp_device_props props;
  memset(&props, 0, sizeof props);
  props.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  if (bp_device_properties(cx->put.device, &props) != BP_OK) props.name[0] = '\0';
  props.name[sizeof props.name - 1] = '\0';
  int32_t count = 0;
  if (bp_device_count(cx->put.device.type, &count) != BP_OK) count = 0;
  /* The note goes on one tab-separated line. */
  char note[512];
  snprintf(note, sizeof note, "%s", cx->put.info.error ? cx->put.info.error : "");
  for (char *q = note; *q; q++)
    if (*q == '\t' || *q == '\n' || *q == '\r') *q = ' ';
  probe_field(f, cx->put.info.name);
  fputc('\t', f);
  probe_field(f, cx->put.info.vendor ? cx->put.info.vendor : "");
  fputc('\t', f);
  probe_field(f, cx->put.info.version ? cx->put.info.version : "");
  fprintf(f, "\t%u\t%u\t%u\t", cx->put.info.abi_major, cx->put.info.abi_minor,
          cx->put.info.op_set_version);
  probe_field(f, cert_device_name(cx->put.device.type));
  fprintf(f, ":%d\t", cx->put.device.index);
  probe_field(f, props.name);
  fprintf(f, "\t%d\t", cx->put.device.index < count ? -1 : (int)count);
  probe_field(f, note);
  fputc('\n', f);
  for (size_t i = 0; i < bp_op_count(); i++) {
    const bp_op *op = bp_op_at(i);
    bp_op_info oi = {.struct_size = BP_OP_INFO_STRUCT_SIZE};
    bp_kernel_info ki;
    if (bp_op_get_info(op, &oi) != BP_OK || !cert_plugin_kernel(cx, op, cx->put.device.type, &ki))
      continue;
    fputs("op\t", f);
    probe_field(f, oi.name);
    fprintf(f, "\t%d\t", oi.has_meta ? 1 : 0);
    if (!ki.dtypes) fputs("*", f);
    for (const int32_t *p = ki.dtypes; p && *p != BP_DTYPE_INVALID; p++)
      fprintf(f, "%s%d", p == ki.dtypes ? "" : ",", (int)*p);
    fputc('\n', f);
  }
  /* Everything was said: a probe that dies before this line failed. */
  fputs("end\n", f);
  fclose(f);
}

/* Runs probe_child in a child, under a CPU-time timer there and a budget
 * here (budget.h: --timeout of CPU time, or of wall time without any);
 * fills cx->probe. */
void cert_run_probe(cert_ctx *cx) {
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    cx->chan.fd = fds[1];
    dup2(STDERR_FILENO, STDOUT_FILENO);
    /* SIGPROF ends the process once it has used --timeout of CPU time. */
    struct itimerval cpu_limit = {
        {0, 0}, {(time_t)cx->opt.timeout, (suseconds_t)(fmod(cx->opt.timeout, 1.0) * 1e6)}};
    setitimer(ITIMER_PROF, &cpu_limit, NULL);
    probe_child(cx);
    _exit(0);
  }
  close(fds[1]);
  /* The parent's own watchdog: the child's timer is no use against a
   * plugin that ignores SIGPROF or one that hangs asleep, and a process
   * the plugin started may hold the pipe open after the probe has ended. */
  proc_budget budget;
  budget_start(&budget, pid);
  bool over = false;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n + 1 >= cap) {
      char *g = realloc(buf, cap *= 2);
      if (!g) break;
      buf = g;
    }
    if ((over = budget_spent(&budget, cx->opt.timeout) != BUDGET_LEFT)) break;
    struct pollfd p = {fds[0], POLLIN, 0};
    int ready = poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      int wst;
      if (waitpid(pid, &wst, WNOHANG) == pid) {
        pid = 0; /* ended, and everything it wrote has been read */
        break;
      }
      continue;
    }
    ssize_t got = read(fds[0], buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(fds[0]);
  int wst = 0;
  bool timed_out = pid > 0 && over;
  if (pid > 0) {
    kill(pid, SIGKILL); /* harmless when it has already ended */
    waitpid(pid, &wst, 0);
  }
  /* The child's own timer may beat the budget here. */
  if (WIFSIGNALED(wst) && WTERMSIG(wst) == SIGPROF) timed_out = true;
  if (!buf) {
    snprintf(cx->probe.why, sizeof cx->probe.why, "certifier error: out of memory");
    return;
  }
  buf[n] = '\0';
  bool ended = false;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *field[10] = {NULL};
    int nf = 0;
    for (char *p = line; nf < 10;) {
      field[nf++] = p;
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = '\0';
      p = tab + 1;
    }
    if (strcmp(field[0], "end") == 0) {
      ended = true;
      continue;
    }
    if (nf == 2 && strcmp(field[0], "error") == 0) {
      probe_unescape(cx->probe.why, sizeof cx->probe.why, field[1]);
      continue;
    }
    if (nf == 2 && strcmp(field[0], "nodevtype") == 0) {
      cx->probe.bad_device = true;
      probe_unescape(cx->probe.device_types, sizeof cx->probe.device_types, field[1]);
      continue;
    }
    if (!cx->probe.loaded) {
      if (nf < 8) continue;
      cx->probe.loaded = true;
      probe_unescape(cx->probe.name, sizeof cx->probe.name, field[0]);
      probe_unescape(cx->probe.vendor, sizeof cx->probe.vendor, field[1]);
      probe_unescape(cx->probe.version, sizeof cx->probe.version, field[2]);
      cx->probe.abi_major = (unsigned)strtoul(field[3], NULL, 10);
      cx->probe.abi_minor = (unsigned)strtoul(field[4], NULL, 10);
      cx->probe.op_set = (unsigned)strtoul(field[5], NULL, 10);
      probe_unescape(cx->probe.device, sizeof cx->probe.device, field[6]);
      probe_unescape(cx->probe.device_name, sizeof cx->probe.device_name, field[7]);
      /* field[8]: -1 when the device exists, else the count of its type. */
      if (nf >= 10 && field[8][0] != '-') {
        cx->probe.no_device = true;
        cx->probe.device_count = strtol(field[8], NULL, 10);
        probe_unescape(cx->probe.note, sizeof cx->probe.note, field[9]);
      }
      continue;
    }
    if (nf < 4 || strcmp(field[0], "op") != 0) continue;
    probe_op *grown = realloc(cx->probe.ops, (cx->probe.nops + 1) * sizeof *cx->probe.ops);
    if (!grown) break;
    cx->probe.ops = grown;
    probe_op *po = &cx->probe.ops[cx->probe.nops++];
    memset(po, 0, sizeof *po);
    probe_unescape(po->name, sizeof po->name, field[1]);
    po->has_meta = field[2][0] == '1';
    po->any_dtype = field[3][0] == '*';
    for (char *p = field[3]; !po->any_dtype && *p && po->ndtypes < 16;) {
      po->dtypes[po->ndtypes++] = (int32_t)strtol(p, &p, 10);
      if (*p == ',') p++;
    }
  }
  free(buf);
  /* Fail closed: what a probe that did not finish said is not the truth
   * about the plugin, and no case list is built from it. */
  if (cx->probe.loaded && !ended) {
    cx->probe.loaded = false;
    cx->probe.nops = 0;
  }
  if (!cx->probe.loaded && !cx->probe.why[0]) {
    if (timed_out)
      snprintf(cx->probe.why, sizeof cx->probe.why,
               "loading the plugin took longer than --timeout %g s (a slow first load, such as "
               "a cold JIT cache, needs a larger --timeout)",
               cx->opt.timeout);
    else if (WIFSIGNALED(wst))
      snprintf(cx->probe.why, sizeof cx->probe.why,
               "the process that loaded the plugin died of signal %d (%s)", WTERMSIG(wst),
               strsignal(WTERMSIG(wst)));
    else
      snprintf(cx->probe.why, sizeof cx->probe.why,
               "the process that loaded the plugin ended (status %d) before it said what the "
               "plugin registers",
               WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  }
}

const probe_op *cert_probe_find(cert_ctx *cx, const char *name) {
  for (size_t i = 0; i < cx->probe.nops; i++)
    if (strcmp(cx->probe.ops[i].name, name) == 0) return &cx->probe.ops[i];
  return NULL;
}
