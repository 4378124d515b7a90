/*
 * host/describe.c - the host described for people and programs: its
 * version and ABI, where it looks for plugins, every plugin it knows (and
 * why any failed), its devices, and its operators with their kernels, as
 * text or as JSON (bp_describe), and the words such listings use for an
 * origin, a state and a kernel's kind.  bp-info and the Python package's
 * `python3 -m backplane` both print what this writes.
 *
 * It reads the host through the public entry points only, allocates
 * nothing, and writes through the caller's function in pieces of at most
 * a buffer's size.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

BP_API const char *bp_plugin_origin_str(int32_t origin) {
  switch (origin) {
    case BP_ORIGIN_EXPLICIT: return "explicit";
    case BP_ORIGIN_ENV: return "BP_PLUGIN_PATH";
    case BP_ORIGIN_INSTALLED: return "installed";
    case BP_ORIGIN_STATIC: return "static";
    default: return "?";
  }
}

BP_API const char *bp_plugin_state_str(int32_t state) {
  switch (state) {
    case BP_PLUGIN_LOADED: return "loaded";
    case BP_PLUGIN_FAILED: return "failed";
    case BP_PLUGIN_UNLOADED: return "unloaded";
    default: return "?";
  }
}

BP_API const char *bp_kernel_kind_str(int32_t kind) {
  switch (kind) {
    case BP_KERNEL_BOXED: return "boxed";
    case BP_KERNEL_UNBOXED: return "unboxed (libffi)";
    case BP_KERNEL_UNBOXED_FAST: return "unboxed (fast path)";
    case BP_KERNEL_STRUCTURED: return "structured";
    default: return "?";
  }
}

/* ------------------------------------------------------------------------ */
/* The output: a buffer in front of the caller's writer                     */
/* ------------------------------------------------------------------------ */

typedef struct out {
  bp_describe_write_fn write;
  void *user;
  int json;
  int stopped; /* the writer's nonzero status: nothing more is written */
  size_t len;
  char buf[4096];
  const bp_describe_file *files;
  size_t nfiles;
} out;

static void flush(out *o) {
  if (o->len && !o->stopped) {
    int rc = o->write(o->user, o->buf, o->len);
    if (rc != 0) o->stopped = rc;
  }
  o->len = 0;
}

static void put(out *o, const char *s, size_t n) {
  while (n && !o->stopped) {
    size_t room = sizeof o->buf - o->len, k = n < room ? n : room;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
    if (o->len == sizeof o->buf) flush(o);
  }
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

/* Formatted text of the describer's own (numbers, names from the host's
 * tables, short words): never text from outside, which esc() and jstr()
 * write. */
static void BP__PRINTF(2, 3) putf(out *o, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Text from outside, escaped as bp_text_escape() escapes it. */
static void esc(out *o, const char *s) {
  for (const char *p = s ? s : "(null)"; *p && !o->stopped;) {
    char e[8];
    size_t used, n = bp__text_escape_one(p, e, &used);
    put(o, e, n);
    p += used;
  }
}

/* s as a JSON string, null for NULL.  JSON text is UTF-8, so each byte
 * that is not part of a well-formed UTF-8 sequence becomes U+FFFD. */
static void jstr(out *o, const char *s) {
  if (!s) {
    puts_(o, "null");
    return;
  }
  put(o, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p && !o->stopped;) {
    unsigned char c = *p;
    size_t n = bp__utf8_len((const char *)p);
    if (c == '"' || c == '\\')
      putf(o, "\\%c", c);
    else if (c < 0x20)
      putf(o, "\\u%04x", c);
    else if (n == 0)
      puts_(o, "\\ufffd");
    else
      put(o, (const char *)p, n);
    p += n ? n : 1;
  }
  put(o, "\"", 1);
}

/* ------------------------------------------------------------------------ */
/* The sections                                                             */
/* ------------------------------------------------------------------------ */

static const char *device_label(int32_t type, char *buf, size_t n) {
  const char *name = bp_device_type_name(type);
  if (name) return name;
  snprintf(buf, n, "type %d", (int)type);
  return buf;
}

static void header(out *o) {
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  const char *env = bp__plugin_path_env();
  if (o->json) {
    puts_(o, "{\n  \"version\": ");
    jstr(o, bp_version());
    putf(o, ",\n  \"abi\": \"%u.%u\",\n  \"plugin_path\": ", major, minor);
    jstr(o, env ? env : "");
    puts_(o, ",\n  \"plugin_dir\": ");
    jstr(o, bp_plugin_dir());
    return;
  }
  putf(o, "Backplane %s (ABI %u.%u)\n\nPlugin search path:\n", bp_version(), major, minor);
  puts_(o, "  BP_PLUGIN_PATH     ");
  if (env && *env)
    esc(o, env);
  else
    puts_(o, "(not set)");
  puts_(o, "\n  installed          ");
  esc(o, bp_plugin_dir());
  puts_(o, "\n");
}

/* How the plugin at path was found: the caller's record when it loaded
 * the file itself for the host's discovery, else the host's. */
static int32_t origin_of(const out *o, const bp_plugin_info *p) {
  for (size_t i = 0; p->path && i < o->nfiles; i++) {
    const bp_describe_file *f = &o->files[i];
    if ((f->canonical && !strcmp(f->canonical, p->path)) || (f->path && !strcmp(f->path, p->path)))
      return f->origin;
  }
  return p->origin;
}

static void plugin(out *o, const bp_plugin_info *p, int32_t origin, int first, int crashed) {
  if (o->json) {
    puts_(o, first ? "\n    {\"path\": " : ",\n    {\"path\": ");
    jstr(o, p->path);
    putf(o, ", \"origin\": \"%s\", \"state\": \"%s\", \"name\": ", bp_plugin_origin_str(origin),
         bp_plugin_state_str(p->state));
    jstr(o, p->name);
    puts_(o, ", \"vendor\": ");
    jstr(o, p->vendor);
    puts_(o, ", \"version\": ");
    jstr(o, p->version);
    putf(o, ", \"abi\": \"%u.%u\", \"op_set_version\": %u, \"status\": \"%s\", \"error\": ",
         p->abi_major, p->abi_minor, p->op_set_version, bp_status_str((bp_status)p->status));
    jstr(o, p->error);
    putf(o, ", \"crashed\": %s}", crashed ? "true" : "false");
    return;
  }
  puts_(o, "  ");
  esc(o, p->path);
  putf(o, "\n      found by    %s\n      state       %s\n", bp_plugin_origin_str(origin),
       bp_plugin_state_str(p->state));
  if (p->name) {
    puts_(o, "      name        ");
    esc(o, p->name);
    puts_(o, " ");
    esc(o, p->version);
    puts_(o, " (");
    if (p->vendor && *p->vendor)
      esc(o, p->vendor);
    else
      puts_(o, "no vendor");
    putf(o, "), ABI %u.%u, op set %u\n", p->abi_major, p->abi_minor, p->op_set_version);
  }
  if (crashed) {
    puts_(o, "      error       ");
    esc(o, p->error);
    puts_(o, " while loading in a child process; not loaded\n");
  } else if (p->state == BP_PLUGIN_FAILED) {
    putf(o, "      error       %s: ", bp_status_str((bp_status)p->status));
    esc(o, p->error);
    puts_(o, "\n");
  } else if (p->error && *p->error) {
    puts_(o, "      note        ");
    esc(o, p->error);
    puts_(o, "\n");
  }
}

static void plugins(out *o) {
  size_t n = bp_plugin_count(), nfailed = 0;
  for (size_t i = 0; i < o->nfiles; i++) nfailed += o->files[i].failure && *o->files[i].failure;
  if (o->json)
    puts_(o, ",\n  \"plugins\": [");
  else
    putf(o, "\nPlugins: %zu\n", n + nfailed);
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    bp_plugin_info p;
    memset(&p, 0, sizeof p);
    p.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
    if (bp_plugin_get_info(bp_plugin_at(i), &p) != BP_OK) continue;
    plugin(o, &p, origin_of(o, &p), first, 0);
    first = 0;
  }
  /* The files the caller did not load (they crashed or hung in its child
   * process), which the host never saw. */
  for (size_t i = 0; i < o->nfiles; i++) {
    const bp_describe_file *f = &o->files[i];
    if (!f->failure || !*f->failure) continue;
    bp_plugin_info p;
    memset(&p, 0, sizeof p);
    p.path = f->canonical ? f->canonical : f->path;
    p.state = BP_PLUGIN_FAILED;
    p.status = BP_ERR_LOAD;
    p.error = f->failure;
    plugin(o, &p, f->origin, first, 1);
    first = 0;
  }
  if (o->json) puts_(o, first ? "]" : "\n  ]");
}

static void device(out *o, int32_t type, int32_t i, int first) {
  bp_device_props p;
  memset(&p, 0, sizeof p);
  p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  if (bp_device_properties(bp_device_make(type, i), &p) != BP_OK)
    snprintf(p.name, sizeof p.name, "(%s)", bp_last_error());
  p.name[sizeof p.name - 1] = '\0';
  if (o->json) {
    puts_(o, first ? "\n    {\"type\": " : ",\n    {\"type\": ");
    jstr(o, bp_device_type_name(type));
    putf(o, ", \"code\": %d, \"index\": %d, \"name\": ", (int)type, (int)i);
    jstr(o, p.name);
    putf(o, ", \"total_memory\": %llu, \"compute_units\": %lld, \"arch\": \"%d.%d\"}",
         (unsigned long long)p.total_memory, (long long)p.compute_units, (int)p.arch_major,
         (int)p.arch_minor);
    return;
  }
  puts_(o, "  ");
  esc(o, bp_device_type_name(type));
  putf(o, ":%d  (code %d)  ", (int)i, (int)type);
  esc(o, p.name);
  puts_(o, "\n");
  /* Zero means "not reported" for each property. */
  if (p.total_memory) putf(o, "      memory         %.1f GiB\n", (double)p.total_memory / (1 << 30));
  if (p.compute_units) putf(o, "      compute units  %lld\n", (long long)p.compute_units);
  if (p.arch_major) putf(o, "      architecture   %d.%d\n", (int)p.arch_major, (int)p.arch_minor);
}

/* Device types are codes 1..63 (DLPack) and the runtime vendor range. */
static void devices(out *o) {
  puts_(o, o->json ? ",\n  \"devices\": [" : "\nDevices:\n");
  int first = 1;
  /* Most codes have no device type: their bp_device_count error is no
   * error of bp_describe's, so the caller's last error is put back. */
  bp__kept_error kept;
  bp__error_keep(&kept);
  for (int32_t type = 1; type < BP_DEVICE_DYNAMIC_FIRST + 64; type++) {
    if (type == 64) type = BP_DEVICE_DYNAMIC_FIRST;
    int32_t count;
    if (bp_device_count(type, &count) != BP_OK) continue;
    for (int32_t i = 0; i < count; i++, first = 0) device(o, type, i, first);
    if (count == 0 && !o->json) {
      puts_(o, "  ");
      esc(o, bp_device_type_name(type));
      putf(o, "  (code %d)  no devices\n", (int)type);
    }
  }
  bp__error_restore(&kept);
  if (o->json) puts_(o, first ? "]" : "\n  ]");
}

static void kernel(out *o, const bp_kernel_info *ki, size_t k) {
  char buf[32];
  const char *dev = device_label(ki->device_type, buf, sizeof buf);
  if (o->json) {
    puts_(o, k ? ", {\"device\": " : "{\"device\": ");
    jstr(o, dev);
    putf(o, ", \"kind\": \"%s\", \"plugin\": ", bp_kernel_kind_str(ki->kind));
    jstr(o, ki->plugin);
    putf(o, ", \"enabled\": %s, \"priority\": %d, \"active\": %s, \"dtypes\": ",
         ki->enabled ? "true" : "false", (int)ki->priority, ki->active ? "true" : "false");
    if (!ki->dtypes) {
      puts_(o, "null}");
      return;
    }
    put(o, "[", 1);
    for (const int32_t *d = ki->dtypes; *d != BP_DTYPE_INVALID; d++) {
      if (d != ki->dtypes) puts_(o, ", ");
      jstr(o, bp_dtype_name(*d));
    }
    puts_(o, "]}");
    return;
  }
  /* Every candidate for a device type is listed, the one calls go to
   * first marked active (see KERNEL PRECEDENCE in host.h). */
  puts_(o, "      kernel ");
  esc(o, dev);
  for (size_t w = bp_text_escape(dev, NULL, 0); w < 10; w++) put(o, " ", 1);
  putf(o, " %-20s from ", bp_kernel_kind_str(ki->kind));
  esc(o, ki->plugin);
  putf(o, " (priority %d, %s); dtypes: ", (int)ki->priority,
       !ki->enabled ? "disabled" : ki->active ? "active" : "next in line");
  if (!ki->dtypes) puts_(o, "all the op allows");
  for (const int32_t *d = ki->dtypes; d && *d != BP_DTYPE_INVALID; d++) {
    const char *name = bp_dtype_name(*d);
    if (d != ki->dtypes) puts_(o, ", ");
    puts_(o, name ? name : "?");
  }
  puts_(o, "\n");
}

static void op(out *o, const bp_op *op, size_t i) {
  bp_op_info oi;
  memset(&oi, 0, sizeof oi);
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_get_info(op, &oi) != BP_OK) return;
  if (o->json) {
    puts_(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
    jstr(o, oi.name);
    puts_(o, ", \"schema\": ");
    jstr(o, oi.schema);
    puts_(o, ", \"owner\": ");
    jstr(o, oi.owner);
    puts_(o, ", \"doc\": ");
    jstr(o, oi.doc);
    putf(o, ", \"nondeterministic\": %s, \"mixed_devices\": %s",
         (oi.flags & BP_OP_NONDETERMINISTIC) ? "true" : "false",
         (oi.flags & BP_OP_MIXED_DEVICES) ? "true" : "false");
    putf(o, ", \"defined\": %s, \"meta\": %s, \"composite\": %s, \"kernels\": [",
         oi.defined ? "true" : "false", oi.has_meta ? "true" : "false",
         oi.has_composite ? "true" : "false");
  } else {
    puts_(o, "  ");
    esc(o, oi.schema ? oi.schema : oi.name);
    puts_(o, "\n");
    if (!oi.defined) puts_(o, "      (not defined: its plugin was unloaded)\n");
    if (oi.doc && *oi.doc) {
      puts_(o, "      ");
      esc(o, oi.doc);
      puts_(o, "\n");
    }
    puts_(o, "      defined by ");
    esc(o, oi.owner);
    putf(o, "; meta function: %s%s%s%s\n", oi.has_meta ? "yes" : "no",
         oi.has_composite ? "; composite kernel" : "",
         (oi.flags & BP_OP_NONDETERMINISTIC) ? "; nondeterministic" : "",
         (oi.flags & BP_OP_MIXED_DEVICES) ? "; mixed devices" : "");
  }
  for (int32_t k = 0; k < oi.nkernels; k++) {
    bp_kernel_info ki;
    memset(&ki, 0, sizeof ki);
    ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
    if (bp_op_get_kernel(op, (size_t)k, &ki) == BP_OK) kernel(o, &ki, (size_t)k);
  }
  if (o->json) puts_(o, "]}");
}

static void ops(out *o) {
  size_t n = bp_op_count();
  if (o->json)
    puts_(o, ",\n  \"ops\": [");
  else
    putf(o, "\nOperators: %zu\n", n);
  for (size_t i = 0; i < n; i++) op(o, bp_op_at(i), i);
  if (o->json) puts_(o, n ? "\n  ]\n}\n" : "]\n}\n");
}

BP_API bp_status bp_describe(const bp_describe_options *options, bp_describe_write_fn write,
                             void *user) {
  if (!write) return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_describe: write is NULL");
  int32_t format = BP_DESCRIBE_TEXT;
  const bp_describe_file *files = NULL;
  size_t nfiles = 0;
  if (options) {
    if (options->struct_size < BP_STRUCT_SIZE(bp_describe_options, format))
      return bp__error(BP_ERR_VERSION,
                       "bp_describe: options->struct_size is %zu, less than the %zu of its "
                       "first fields (set it to BP_DESCRIBE_OPTIONS_STRUCT_SIZE)",
                       options->struct_size, BP_STRUCT_SIZE(bp_describe_options, format));
    format = options->format;
    if (BP_HAS_FIELD(options, bp_describe_options, nfiles)) {
      files = options->files;
      nfiles = files ? options->nfiles : 0;
    }
  }
  if (format != BP_DESCRIBE_TEXT && format != BP_DESCRIBE_JSON)
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "bp_describe: format %d is neither BP_DESCRIBE_TEXT (0) nor "
                     "BP_DESCRIBE_JSON (1)",
                     (int)format);
  for (size_t i = 0; i < nfiles; i++)
    if (files[i].struct_size < BP_DESCRIBE_FILE_STRUCT_SIZE || !files[i].path)
      return bp__error(BP_ERR_INVALID_ARGUMENT,
                       "bp_describe: files[%zu] %s", i,
                       files[i].path ? "has a struct_size less than BP_DESCRIBE_FILE_STRUCT_SIZE"
                                     : "has no path");
  /* The host's start first, as bp_op_count() would make it, so that a
   * start that failed is this call's error, not an empty listing. */
  bp_status st = bp__ensure_init();
  if (st != BP_OK) return st;
  out o = {.write = write, .user = user, .json = format == BP_DESCRIBE_JSON, .files = files,
           .nfiles = nfiles};
  header(&o);
  plugins(&o);
  devices(&o);
  ops(&o);
  flush(&o);
  if (o.stopped)
    return bp__error(o.stopped > 0 && o.stopped < BP_STATUS_COUNT ? (bp_status)o.stopped
                                                                  : BP_ERR_INTERNAL,
                     "bp_describe: the writer stopped the description (it returned %d)",
                     o.stopped);
  return BP_OK;
}
