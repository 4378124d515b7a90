/*
 * tools/bp-info.c - describes the Backplane host: its version, its ABI, and
 * its devices, in the manner of vulkaninfo or clinfo.
 *
 *   bp-info [--json]
 */
#include <stdio.h>
#include <string.h>

#include <backplane/host.h>

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static int usage(FILE *f) {
  fprintf(f, "usage: bp-info [--json]\n");
  return f == stderr ? 2 : 0;
}

int main(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout);
    else {
      fprintf(stderr, "bp-info: unknown argument '%s'\n", argv[i]);
      return usage(stderr);
    }
  }
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  int32_t count = 0;
  if (bp_device_count(BP_DEVICE_CPU, &count) != BP_OK) {
    fprintf(stderr, "bp-info: %s\n", bp_last_error());
    return 1;
  }
  if (json) {
    printf("{\"version\": ");
    json_str(bp_version());
    printf(", \"abi\": \"%u.%u\", \"devices\": [", major, minor);
  } else {
    printf("Backplane %s (ABI %u.%u)\n\nDevices:\n", bp_version(), major, minor);
  }
  for (int32_t i = 0; i < count; i++) {
    bp_device_props p;
    p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
    bp_device dev = bp_device_make(BP_DEVICE_CPU, i);
    if (bp_device_properties(dev, &p) != BP_OK) {
      fprintf(stderr, "bp-info: %s\n", bp_last_error());
      return 1;
    }
    if (json) {
      printf("%s{\"type\": \"%s\", \"index\": %d, \"name\": ", i ? ", " : "",
             bp_device_type_name(dev.type), (int)i);
      json_str(p.name);
      printf(", \"total_memory\": %llu, \"compute_units\": %lld}",
             (unsigned long long)p.total_memory, (long long)p.compute_units);
    } else {
      printf("  %s:%d  %s\n", bp_device_type_name(dev.type), (int)i, p.name);
      printf("      memory %.1f GiB, %lld compute units\n",
             (double)p.total_memory / (1024.0 * 1024.0 * 1024.0), (long long)p.compute_units);
    }
  }
  if (json) printf("]}\n");
  return 0;
}
