/*
 * tools/bp-info.c - describes a Backplane host: its version and ABI, where
 * it looks for plugins, every plugin it found (and why any failed), its
 * devices, and its operators with their kernels, in the manner of
 * vulkaninfo or clinfo.
 *
 *   bp-info [--json] [--no-discover] [PLUGIN.so ...]
 *
 * Plugins named on the command line are loaded first; then, unless
 * --no-discover is given, BP_PLUGIN_PATH and the installed plugin directory
 * are searched.  The exit status is 0 even when a plugin failed to load:
 * the listing says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

static int json;

/* The length (1 to 4) of the well-formed UTF-8 sequence at s, or 0 when
 * s does not start one (a stray byte, an overlong form, a surrogate, or a
 * code point past U+10FFFF). */
static size_t utf8_len(const unsigned char *s) {
  unsigned char c = s[0];
  size_t n;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  /* Stops at the first byte that is not a continuation, the NUL included. */
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
      (c == 0xf4 && s[1] >= 0x90))
    return 0;
  return n;
}

/* Writes s as a JSON string.  Paths, plugin strings and messages are bytes
 * from outside; JSON text is UTF-8, so each byte that is not part of a
 * well-formed UTF-8 sequence is written as U+FFFD. */
static void json_str(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned char c = *p;
    size_t n = utf8_len(p);
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else if (n == 0)
      fputs("\\ufffd", stdout);
    else
      fwrite(p, 1, n, stdout);
    p += n ? n : 1;
  }
  putchar('"');
}

static const char *origin_name(int32_t o) {
  switch (o) {
    case BP_ORIGIN_EXPLICIT: return "explicit";
    case BP_ORIGIN_ENV: return "BP_PLUGIN_PATH";
    case BP_ORIGIN_INSTALLED: return "installed";
    case BP_ORIGIN_STATIC: return "static";
    default: return "?";
  }
}

static const char *state_name(int32_t s) {
  switch (s) {
    case BP_PLUGIN_LOADED: return "loaded";
    case BP_PLUGIN_FAILED: return "failed";
    case BP_PLUGIN_UNLOADED: return "unloaded";
    default: return "?";
  }
}

static const char *kind_name(int32_t k) {
  switch (k) {
    case BP_KERNEL_BOXED: return "boxed";
    case BP_KERNEL_UNBOXED: return "unboxed (libffi)";
    case BP_KERNEL_UNBOXED_FAST: return "unboxed (fast path)";
    default: return "?";
  }
}

static const char *device_label(int32_t type, char *buf, size_t n) {
  const char *name = bp_device_type_name(type);
  if (name) return name;
  snprintf(buf, n, "type %d", (int)type);
  return buf;
}

static void print_header(void) {
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  const char *env = getenv("BP_PLUGIN_PATH");
  if (json) {
    printf("{\n  \"version\": ");
    json_str(bp_version());
    printf(",\n  \"abi\": \"%u.%u\",\n  \"plugin_path\": ", major, minor);
    json_str(env ? env : "");
    printf(",\n  \"plugin_dir\": ");
    json_str(bp_plugin_dir());
  } else {
    printf("Backplane %s (ABI %u.%u)\n\n", bp_version(), major, minor);
    printf("Plugin search path:\n");
    printf("  BP_PLUGIN_PATH     %s\n", env && *env ? env : "(not set)");
    printf("  installed          %s\n", bp_plugin_dir());
  }
}

static void print_plugins(void) {
  size_t n = bp_plugin_count();
  if (json)
    printf(",\n  \"plugins\": [");
  else
    printf("\nPlugins: %zu\n", n);
  for (size_t i = 0; i < n; i++) {
    bp_plugin_info p;
    p.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
    if (bp_plugin_get_info(bp_plugin_at(i), &p) != BP_OK) continue;
    if (json) {
      printf("%s\n    {\"path\": ", i ? "," : "");
      json_str(p.path);
      printf(", \"origin\": \"%s\", \"state\": \"%s\", \"name\": ", origin_name(p.origin),
             state_name(p.state));
      json_str(p.name);
      printf(", \"vendor\": ");
      json_str(p.vendor);
      printf(", \"version\": ");
      json_str(p.version);
      printf(", \"abi\": \"%u.%u\", \"op_set_version\": %u, \"status\": \"%s\", \"error\": ",
             p.abi_major, p.abi_minor, p.op_set_version, bp_status_str((bp_status)p.status));
      json_str(p.error);
      printf("}");
    } else {
      printf("  %s\n", p.path);
      printf("      found by    %s\n", origin_name(p.origin));
      printf("      state       %s\n", state_name(p.state));
      if (p.name)
        printf("      name        %s %s (%s), ABI %u.%u, op set %u\n", p.name, p.version,
               p.vendor && *p.vendor ? p.vendor : "no vendor", p.abi_major, p.abi_minor,
               p.op_set_version);
      if (p.state == BP_PLUGIN_FAILED)
        printf("      error       %s: %s\n", bp_status_str((bp_status)p.status), p.error);
      else if (p.error && *p.error)
        printf("      note        %s\n", p.error);
    }
  }
  if (json) printf("%s]", n ? "\n  " : "");
}

/* Device types are codes 1..63 (DLPack) and the runtime vendor range. */
static void print_devices(void) {
  if (json)
    printf(",\n  \"devices\": [");
  else
    printf("\nDevices:\n");
  int first = 1;
  for (int32_t type = 1; type < BP_DEVICE_DYNAMIC_FIRST + 64; type++) {
    if (type == 64) type = BP_DEVICE_DYNAMIC_FIRST;
    int32_t count;
    if (bp_device_count(type, &count) != BP_OK) continue;
    for (int32_t i = 0; i < count; i++) {
      bp_device_props p;
      memset(&p, 0, sizeof p);
      p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
      bp_device d = bp_device_make(type, i);
      if (bp_device_properties(d, &p) != BP_OK) snprintf(p.name, sizeof p.name, "(%s)", bp_last_error());
      if (json) {
        printf("%s\n    {\"type\": ", first ? "" : ",");
        json_str(bp_device_type_name(type));
        printf(", \"code\": %d, \"index\": %d, \"name\": ", (int)type, (int)i);
        json_str(p.name);
        printf(", \"total_memory\": %llu, \"compute_units\": %lld, \"arch\": \"%d.%d\"}",
               (unsigned long long)p.total_memory, (long long)p.compute_units, (int)p.arch_major,
               (int)p.arch_minor);
      } else {
        printf("  %s:%d  (code %d)  %s\n", bp_device_type_name(type), (int)i, (int)type, p.name);
        /* Zero means "not reported" for each property. */
        if (p.total_memory) printf("      memory         %.1f GiB\n", (double)p.total_memory / (1 << 30));
        if (p.compute_units) printf("      compute units  %lld\n", (long long)p.compute_units);
        if (p.arch_major) printf("      architecture   %d.%d\n", (int)p.arch_major, (int)p.arch_minor);
      }
      first = 0;
    }
    if (count == 0 && !json)
      printf("  %s  (code %d)  no devices\n", bp_device_type_name(type), (int)type);
  }
  if (json) printf("%s]", first ? "" : "\n  ");
}

static void print_ops(void) {
  size_t n = bp_op_count();
  if (json)
    printf(",\n  \"ops\": [");
  else
    printf("\nOperators: %zu\n", n);
  for (size_t i = 0; i < n; i++) {
    bp_op_info o;
    memset(&o, 0, sizeof o);
    o.struct_size = BP_OP_INFO_STRUCT_SIZE;
    const bp_op *op = bp_op_at(i);
    if (bp_op_get_info(op, &o) != BP_OK) continue;
    if (json) {
      printf("%s\n    {\"name\": ", i ? "," : "");
      json_str(o.name);
      printf(", \"schema\": ");
      json_str(o.schema);
      printf(", \"owner\": ");
      json_str(o.owner);
      printf(", \"doc\": ");
      json_str(o.doc);
      printf(", \"nondeterministic\": %s, \"mixed_devices\": %s",
             (o.flags & BP_OP_NONDETERMINISTIC) ? "true" : "false",
             (o.flags & BP_OP_MIXED_DEVICES) ? "true" : "false");
      printf(", \"defined\": %s, \"meta\": %s, \"composite\": %s, \"kernels\": [",
             o.defined ? "true" : "false", o.has_meta ? "true" : "false",
             o.has_composite ? "true" : "false");
    } else {
      printf("  %s\n", o.schema ? o.schema : o.name);
      if (!o.defined) printf("      (not defined: its plugin was unloaded)\n");
      if (o.doc && *o.doc) printf("      %s\n", o.doc);
      printf("      defined by %s; meta function: %s%s%s%s\n", o.owner, o.has_meta ? "yes" : "no",
             o.has_composite ? "; composite kernel" : "",
             (o.flags & BP_OP_NONDETERMINISTIC) ? "; nondeterministic" : "",
             (o.flags & BP_OP_MIXED_DEVICES) ? "; mixed devices" : "");
    }
    for (int32_t k = 0; k < o.nkernels; k++) {
      bp_kernel_info ki;
      memset(&ki, 0, sizeof ki);
      ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
      if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK) continue;
      char buf[32];
      if (json) {
        printf("%s{\"device\": ", k ? ", " : "");
        json_str(device_label(ki.device_type, buf, sizeof buf));
        printf(", \"kind\": \"%s\", \"plugin\": ", kind_name(ki.kind));
        json_str(ki.plugin);
        printf(", \"enabled\": %s, \"dtypes\": ", ki.enabled ? "true" : "false");
        if (ki.dtypes) {
          putchar('[');
          for (const int32_t *d = ki.dtypes; *d != BP_DTYPE_INVALID; d++) {
            if (d != ki.dtypes) printf(", ");
            json_str(bp_dtype_name(*d));
          }
          printf("]}");
        } else {
          printf("null}");
        }
      } else {
        printf("      kernel %-10s %-20s from %s%s; dtypes: ", device_label(ki.device_type, buf, sizeof buf),
               kind_name(ki.kind), ki.plugin, ki.enabled ? "" : " (disabled)");
        if (!ki.dtypes) printf("all the op allows");
        for (const int32_t *d = ki.dtypes; d && *d != BP_DTYPE_INVALID; d++)
          printf("%s%s", d != ki.dtypes ? ", " : "", bp_dtype_name(*d) ? bp_dtype_name(*d) : "?");
        putchar('\n');
      }
    }
    if (json) printf("]}");
  }
  if (json) printf("%s]\n}\n", n ? "\n  " : "");
}

static int usage(FILE *f) {
  fprintf(f, "usage: bp-info [--json] [--no-discover] [PLUGIN.so ...]\n");
  return f == stderr ? 2 : 0;
}

int main(int argc, char **argv) {
  int discover = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--no-discover"))
      discover = 0;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
      return usage(stdout);
    else if (argv[i][0] == '-') {
      fprintf(stderr, "bp-info: unknown option '%s'\n", argv[i]);
      return usage(stderr);
    }
  }
  /* Load failures are recorded and listed below, not fatal here. */
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') bp_plugin_load(argv[i], NULL);
  if (discover && bp_plugin_discover(NULL) != BP_OK) {
    fprintf(stderr, "bp-info: %s\n", bp_last_error());
    return 1;
  }
  print_header();
  print_plugins();
  print_devices();
  print_ops();
  return 0;
}
