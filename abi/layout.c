/*
 * abi/layout.c - the ABI layout of the SDK headers, and its check.
 *
 *   layout --print          prints every public struct's size and every
 *                           field's offset and size, the ABI version, and
 *                           every fixed code (status, dtype, device, tag);
 *   layout BASELINE         compares all of that against a baseline file
 *                           and reports TAP, one test point per struct or
 *                           code group, naming each difference;
 *   layout --compatible OLD checks that the headers are a compatible
 *                           extension of an older minor's baseline: every
 *                           field and code of it unchanged, structs only
 *                           grown, the minor version only raised.
 *
 * Regenerate the baseline only for a deliberate, versioned change:
 *   make abi-baseline
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/host.h>

#define MAX_ENTRIES 1024

typedef struct entry {
  char group[64];
  char key[128];
  char value[160];
} entry;

static entry now[MAX_ENTRIES];
static size_t nnow;

static void add(const char *group, const char *key, const char *name1, size_t a,
                const char *name2, size_t b) {
  if (nnow == MAX_ENTRIES) {
    fprintf(stderr, "layout: too many entries\n");
    exit(2);
  }
  entry *e = &now[nnow++];
  snprintf(e->group, sizeof e->group, "%s", group);
  snprintf(e->key, sizeof e->key, "%s", key);
  if (name2)
    snprintf(e->value, sizeof e->value, "%s %zu %s %zu", name1, a, name2, b);
  else
    snprintf(e->value, sizeof e->value, "%s %zu", name1, a);
}

#define STRUCT(type) add(#type, #type, "size", sizeof(type), "align", _Alignof(type))
#define FIELD(type, f) \
  add(#type, #type "." #f, "offset", offsetof(type, f), "size", sizeof(((type *)0)->f))
#define CODE(group, name) add(group, #name, "value", (size_t)(name), NULL, 0)

static void collect(void) {
  CODE("version", BP_ABI_VERSION_MAJOR);
  CODE("version", BP_ABI_VERSION_MINOR);
  CODE("version", BP_CORE_OP_SET_VERSION);

  CODE("bp_status", BP_OK);
  CODE("bp_status", BP_ERR_INVALID_ARGUMENT);
  CODE("bp_status", BP_ERR_TYPE);
  CODE("bp_status", BP_ERR_SHAPE);
  CODE("bp_status", BP_ERR_DEVICE);
  CODE("bp_status", BP_ERR_NOT_FOUND);
  CODE("bp_status", BP_ERR_ALREADY_EXISTS);
  CODE("bp_status", BP_ERR_UNSUPPORTED);
  CODE("bp_status", BP_ERR_OUT_OF_MEMORY);
  CODE("bp_status", BP_ERR_OVERFLOW);
  CODE("bp_status", BP_ERR_VERSION);
  CODE("bp_status", BP_ERR_SCHEMA);
  CODE("bp_status", BP_ERR_LOAD);
  CODE("bp_status", BP_ERR_BUSY);
  CODE("bp_status", BP_ERR_BACKEND);
  CODE("bp_status", BP_ERR_INTERNAL);
  CODE("bp_status", BP_STATUS_COUNT);

  CODE("bp_dtype", BP_DTYPE_INVALID);
  CODE("bp_dtype", BP_INT8);
  CODE("bp_dtype", BP_INT16);
  CODE("bp_dtype", BP_INT32);
  CODE("bp_dtype", BP_INT64);
  CODE("bp_dtype", BP_UINT8);
  CODE("bp_dtype", BP_FLOAT16);
  CODE("bp_dtype", BP_FLOAT32);
  CODE("bp_dtype", BP_FLOAT64);
  CODE("bp_dtype", BP_BFLOAT16);
  CODE("bp_dtype", BP_BOOL);

  CODE("bp_device_type", BP_DEVICE_INVALID);
  CODE("bp_device_type", BP_DEVICE_CPU);
  CODE("bp_device_type", BP_DEVICE_CUDA);
  CODE("bp_device_type", BP_DEVICE_CUDA_HOST);
  CODE("bp_device_type", BP_DEVICE_OPENCL);
  CODE("bp_device_type", BP_DEVICE_VULKAN);
  CODE("bp_device_type", BP_DEVICE_METAL);
  CODE("bp_device_type", BP_DEVICE_VPI);
  CODE("bp_device_type", BP_DEVICE_ROCM);
  CODE("bp_device_type", BP_DEVICE_ROCM_HOST);
  CODE("bp_device_type", BP_DEVICE_EXT_DEV);
  CODE("bp_device_type", BP_DEVICE_CUDA_MANAGED);
  CODE("bp_device_type", BP_DEVICE_ONEAPI);
  CODE("bp_device_type", BP_DEVICE_WEBGPU);
  CODE("bp_device_type", BP_DEVICE_HEXAGON);
  CODE("bp_device_type", BP_DEVICE_MAIA);
  CODE("bp_device_type", BP_DEVICE_DYNAMIC_FIRST);

  CODE("bp_tag", BP_TAG_NONE);
  CODE("bp_tag", BP_TAG_TENSOR);
  CODE("bp_tag", BP_TAG_INT);
  CODE("bp_tag", BP_TAG_FLOAT);
  CODE("bp_tag", BP_TAG_BOOL);
  CODE("bp_tag", BP_TAG_STR);
  CODE("bp_tag", BP_TAG_INT_LIST);
  CODE("bp_tag", BP_TAG_FLOAT_LIST);
  CODE("bp_tag", BP_TAG_TENSOR_LIST);
  CODE("bp_tag", BP_TAG_SCALAR_TYPE);
  CODE("bp_tag", BP_TAG_DEVICE);
  CODE("bp_tag", BP_TAG_SCALAR);
  CODE("bp_tag", BP_TAG_COUNT);

  CODE("flags", BP_VIEW_CONTIGUOUS);
  CODE("flags", BP_VIEW_DENSE);
  CODE("flags", BP_MAX_NDIM);
  CODE("flags", BP_LIBRARY_DEF);
  CODE("flags", BP_LIBRARY_FRAGMENT);
  CODE("flags", BP_LIBRARY_IMPL);
  CODE("flags", BP_LIBRARY_ALLOW_FRAGMENTS);
  CODE("flags", BP_OP_NONDETERMINISTIC);
  CODE("flags", BP_OP_MIXED_DEVICES);
  CODE("flags", BP_DEVICE_HOST_VISIBLE);
  CODE("flags", BP_ORIGIN_EXPLICIT);
  CODE("flags", BP_ORIGIN_ENV);
  CODE("flags", BP_ORIGIN_INSTALLED);
  CODE("flags", BP_ORIGIN_STATIC);
  CODE("flags", BP_PLUGIN_LOADED);
  CODE("flags", BP_PLUGIN_FAILED);
  CODE("flags", BP_PLUGIN_UNLOADED);
  CODE("flags", BP_KERNEL_BOXED);
  CODE("flags", BP_KERNEL_UNBOXED);
  CODE("flags", BP_KERNEL_UNBOXED_FAST);
  /* ABI 1.1 */
  CODE("flags", BP_PRIORITY_DEFAULT);
  CODE("flags", BP_PRIORITY_REFERENCE);
  CODE("flags", BP_ARG_OPTIONAL);
  CODE("flags", BP_ARG_LIST);
  CODE("flags", BP_ARG_KWARG_ONLY);
  CODE("flags", BP_ARG_HAS_DEFAULT);
  CODE("flags", BP_ARG_WRITTEN);
  /* ABI 1.2 */
  CODE("flags", BP_KERNEL_STRUCTURED);
  CODE("flags", BP_KERNEL_DEF_STRUCTURED);
  /* ABI 1.3 */
  CODE("flags", BP_DESCRIBE_TEXT);
  CODE("flags", BP_DESCRIBE_JSON);

  STRUCT(bp_device);
  FIELD(bp_device, type);
  FIELD(bp_device, index);

  STRUCT(bp_extension);
  FIELD(bp_extension, struct_size);
  FIELD(bp_extension, type);
  FIELD(bp_extension, next);

  STRUCT(bp_tensor_view);
  FIELD(bp_tensor_view, struct_size);
  FIELD(bp_tensor_view, data);
  FIELD(bp_tensor_view, device);
  FIELD(bp_tensor_view, dtype);
  FIELD(bp_tensor_view, ndim);
  FIELD(bp_tensor_view, sizes);
  FIELD(bp_tensor_view, strides);
  FIELD(bp_tensor_view, storage_offset);
  FIELD(bp_tensor_view, numel);
  FIELD(bp_tensor_view, itemsize);
  FIELD(bp_tensor_view, flags);
  FIELD(bp_tensor_view, storage_base);
  FIELD(bp_tensor_view, storage_nbytes);

  STRUCT(bp_value);
  FIELD(bp_value, tag);
  FIELD(bp_value, len);
  FIELD(bp_value, u);
  FIELD(bp_value, u.i);
  FIELD(bp_value, u.f);
  FIELD(bp_value, u.b);
  FIELD(bp_value, u.tensor);
  FIELD(bp_value, u.str);
  FIELD(bp_value, u.ints);
  FIELD(bp_value, u.floats);
  FIELD(bp_value, u.tensors);
  FIELD(bp_value, u.device);

  STRUCT(bp_stack);
  FIELD(bp_stack, struct_size);
  FIELD(bp_stack, values);
  FIELD(bp_stack, capacity);
  FIELD(bp_stack, top);

  STRUCT(bp_kernel_ctx);
  FIELD(bp_kernel_ctx, struct_size);
  FIELD(bp_kernel_ctx, host);
  FIELD(bp_kernel_ctx, op);
  FIELD(bp_kernel_ctx, op_name);
  FIELD(bp_kernel_ctx, user_data);
  FIELD(bp_kernel_ctx, device_type);
  FIELD(bp_kernel_ctx, reserved);

  STRUCT(bp_tensor_meta);
  FIELD(bp_tensor_meta, struct_size);
  FIELD(bp_tensor_meta, device);
  FIELD(bp_tensor_meta, dtype);
  FIELD(bp_tensor_meta, ndim);
  FIELD(bp_tensor_meta, sizes);
  FIELD(bp_tensor_meta, strides);

  STRUCT(bp_library_def);
  FIELD(bp_library_def, struct_size);
  FIELD(bp_library_def, ns);
  FIELD(bp_library_def, kind);
  FIELD(bp_library_def, flags);

  STRUCT(bp_op_def);
  FIELD(bp_op_def, struct_size);
  FIELD(bp_op_def, schema);
  FIELD(bp_op_def, flags);
  FIELD(bp_op_def, meta);
  FIELD(bp_op_def, composite);
  FIELD(bp_op_def, user_data);
  FIELD(bp_op_def, doc);
  FIELD(bp_op_def, ext);
  FIELD(bp_op_def, op_set_version);
  FIELD(bp_op_def, reserved);

  STRUCT(bp_kernel_def);
  FIELD(bp_kernel_def, struct_size);
  FIELD(bp_kernel_def, op);
  FIELD(bp_kernel_def, device_type);
  FIELD(bp_kernel_def, flags);
  FIELD(bp_kernel_def, boxed);
  FIELD(bp_kernel_def, unboxed);
  FIELD(bp_kernel_def, user_data);
  FIELD(bp_kernel_def, dtypes);
  FIELD(bp_kernel_def, ext);
  FIELD(bp_kernel_def, priority);
  FIELD(bp_kernel_def, reserved);

  STRUCT(bp_arg_info);
  FIELD(bp_arg_info, struct_size);
  FIELD(bp_arg_info, name);
  FIELD(bp_arg_info, type);
  FIELD(bp_arg_info, alias_set);
  FIELD(bp_arg_info, tag);
  FIELD(bp_arg_info, list_size);
  FIELD(bp_arg_info, flags);
  FIELD(bp_arg_info, reserved);
  FIELD(bp_arg_info, default_value);

  STRUCT(bp_fallback_def);
  FIELD(bp_fallback_def, struct_size);
  FIELD(bp_fallback_def, device_type);
  FIELD(bp_fallback_def, flags);
  FIELD(bp_fallback_def, fn);
  FIELD(bp_fallback_def, user_data);

  STRUCT(bp_device_props);
  FIELD(bp_device_props, struct_size);
  FIELD(bp_device_props, name);
  FIELD(bp_device_props, total_memory);
  FIELD(bp_device_props, arch_major);
  FIELD(bp_device_props, arch_minor);
  FIELD(bp_device_props, compute_units);

  STRUCT(bp_device_iface);
  FIELD(bp_device_iface, struct_size);
  FIELD(bp_device_iface, name);
  FIELD(bp_device_iface, type);
  FIELD(bp_device_iface, flags);
  FIELD(bp_device_iface, user_data);
  FIELD(bp_device_iface, count);
  FIELD(bp_device_iface, properties);
  FIELD(bp_device_iface, alloc);
  FIELD(bp_device_iface, free);
  FIELD(bp_device_iface, copy);
  FIELD(bp_device_iface, synchronize);
  FIELD(bp_device_iface, stream_create);
  FIELD(bp_device_iface, stream_destroy);
  FIELD(bp_device_iface, stream_get_current);
  FIELD(bp_device_iface, stream_set_current);
  FIELD(bp_device_iface, stream_synchronize);
  FIELD(bp_device_iface, event_create);
  FIELD(bp_device_iface, event_destroy);
  FIELD(bp_device_iface, event_record);
  FIELD(bp_device_iface, stream_wait_event);
  FIELD(bp_device_iface, event_synchronize);
  FIELD(bp_device_iface, ext);

  STRUCT(bp_host_api);
  FIELD(bp_host_api, struct_size);
  FIELD(bp_host_api, abi_major);
  FIELD(bp_host_api, abi_minor);
  FIELD(bp_host_api, host_version);
  FIELD(bp_host_api, ext);
  FIELD(bp_host_api, set_error);
  FIELD(bp_host_api, set_errorf);
  FIELD(bp_host_api, status_str);
  FIELD(bp_host_api, last_error);
  FIELD(bp_host_api, library);
  FIELD(bp_host_api, def);
  FIELD(bp_host_api, impl);
  FIELD(bp_host_api, fallback);
  FIELD(bp_host_api, device_type);
  FIELD(bp_host_api, tensor_empty);
  FIELD(bp_host_api, tensor_empty_strided);
  FIELD(bp_host_api, tensor_as_strided);
  FIELD(bp_host_api, tensor_retain);
  FIELD(bp_host_api, tensor_release);
  FIELD(bp_host_api, tensor_view);
  FIELD(bp_host_api, tensor_copy);
  FIELD(bp_host_api, op_find);
  FIELD(bp_host_api, call);
  FIELD(bp_host_api, op_meta);
  FIELD(bp_host_api, core_op_set_version);
  FIELD(bp_host_api, dtype_name);
  FIELD(bp_host_api, device_type_from_name);
  FIELD(bp_host_api, op_get_arg);
  FIELD(bp_host_api, op_get_ret);

  STRUCT(bp_plugin_info);
  FIELD(bp_plugin_info, struct_size);
  FIELD(bp_plugin_info, path);
  FIELD(bp_plugin_info, name);
  FIELD(bp_plugin_info, vendor);
  FIELD(bp_plugin_info, version);
  FIELD(bp_plugin_info, abi_major);
  FIELD(bp_plugin_info, abi_minor);
  FIELD(bp_plugin_info, op_set_version);
  FIELD(bp_plugin_info, origin);
  FIELD(bp_plugin_info, state);
  FIELD(bp_plugin_info, status);
  FIELD(bp_plugin_info, error);

  STRUCT(bp_op_info);
  FIELD(bp_op_info, struct_size);
  FIELD(bp_op_info, name);
  FIELD(bp_op_info, schema);
  FIELD(bp_op_info, doc);
  FIELD(bp_op_info, owner);
  FIELD(bp_op_info, flags);
  FIELD(bp_op_info, defined);
  FIELD(bp_op_info, has_meta);
  FIELD(bp_op_info, has_composite);
  FIELD(bp_op_info, nkernels);
  FIELD(bp_op_info, nargs);
  FIELD(bp_op_info, nrets);
  FIELD(bp_op_info, npositional);
  FIELD(bp_op_info, reserved);
  FIELD(bp_op_info, op_set_version);
  FIELD(bp_op_info, reserved2);

  STRUCT(bp_kernel_info);
  FIELD(bp_kernel_info, struct_size);
  FIELD(bp_kernel_info, plugin);
  FIELD(bp_kernel_info, dtypes);
  FIELD(bp_kernel_info, device_type);
  FIELD(bp_kernel_info, kind);
  FIELD(bp_kernel_info, enabled);
  FIELD(bp_kernel_info, reserved);
  FIELD(bp_kernel_info, priority);
  FIELD(bp_kernel_info, active);

  STRUCT(bp_plugin_desc);
  FIELD(bp_plugin_desc, struct_size);
  FIELD(bp_plugin_desc, abi_major);
  FIELD(bp_plugin_desc, abi_minor);
  FIELD(bp_plugin_desc, name);
  FIELD(bp_plugin_desc, vendor);
  FIELD(bp_plugin_desc, version);
  FIELD(bp_plugin_desc, op_set_version);
  FIELD(bp_plugin_desc, flags);
  FIELD(bp_plugin_desc, setup);
  FIELD(bp_plugin_desc, teardown);
  FIELD(bp_plugin_desc, ext);

  /* ABI 1.3 */
  STRUCT(bp_describe_file);
  FIELD(bp_describe_file, struct_size);
  FIELD(bp_describe_file, path);
  FIELD(bp_describe_file, canonical);
  FIELD(bp_describe_file, origin);
  FIELD(bp_describe_file, reserved);
  FIELD(bp_describe_file, failure);

  STRUCT(bp_describe_options);
  FIELD(bp_describe_options, struct_size);
  FIELD(bp_describe_options, format);
  FIELD(bp_describe_options, reserved);
  FIELD(bp_describe_options, files);
  FIELD(bp_describe_options, nfiles);
}

static entry base[MAX_ENTRIES];
static size_t nbase;

static int load_baseline(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (nbase == MAX_ENTRIES) break;
    entry *e = &base[nbase];
    char v1[32], v2[32], v3[32], v4[32];
    int n = sscanf(line, "%63s %127s %31s %31s %31s %31s", e->group, e->key, v1, v2, v3, v4);
    if (n == 6)
      snprintf(e->value, sizeof e->value, "%s %s %s %s", v1, v2, v3, v4);
    else if (n == 4)
      snprintf(e->value, sizeof e->value, "%s %s", v1, v2);
    else
      continue;
    nbase++;
  }
  fclose(f);
  return 0;
}

/* For --compatible: a struct that grew (same alignment), or a minor
 * version, a core op-set version (a plugin states the one it implements,
 * and a host serves every earlier one) or a count of codes (BP_TAG_COUNT,
 * one past the largest tag) that rose; every other change breaks
 * compatibility. */
static bool grown(const entry *old, const entry *now_) {
  unsigned long a1, a2, s1, s2;
  if (sscanf(old->value, "size %lu align %lu", &s1, &a1) == 2 &&
      sscanf(now_->value, "size %lu align %lu", &s2, &a2) == 2)
    return s2 >= s1 && a1 == a2;
  if ((strcmp(old->key, "BP_ABI_VERSION_MINOR") == 0 ||
       strcmp(old->key, "BP_CORE_OP_SET_VERSION") == 0 || strcmp(old->key, "BP_TAG_COUNT") == 0) &&
      sscanf(old->value, "value %lu", &s1) == 1 && sscanf(now_->value, "value %lu", &s2) == 1)
    return s2 >= s1;
  return false;
}

static const entry *find(const entry *set, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(set[i].key, key) == 0) return &set[i];
  return NULL;
}

int main(int argc, char **argv) {
  collect();
  if (argc == 2 && strcmp(argv[1], "--print") == 0) {
    printf("# Backplane ABI %d.%d layout baseline: group key facts.\n", BP_ABI_VERSION_MAJOR,
           BP_ABI_VERSION_MINOR);
    printf("# Generated by abi/layout --print; regenerate only for a deliberate ABI change.\n");
    for (size_t i = 0; i < nnow; i++)
      printf("%s %s %s\n", now[i].group, now[i].key, now[i].value);
    return 0;
  }
  bool compat = argc == 3 && strcmp(argv[1], "--compatible") == 0;
  if (compat) argv++, argc--;
  if (argc != 2) {
    fprintf(stderr, "usage: layout --print | layout BASELINE | layout --compatible OLD\n");
    return 2;
  }
  if (load_baseline(argv[1]) != 0) {
    printf("1..0 # SKIP cannot read baseline %s\n", argv[1]);
    return 1;
  }
  /* One test point per group, in the order the baseline lists them, then
   * any group the baseline lacks. */
  const char *groups[128];
  size_t ngroups = 0;
  for (size_t pass = 0; pass < 2; pass++) {
    const entry *set = pass == 0 ? base : now;
    size_t n = pass == 0 ? nbase : nnow;
    for (size_t i = 0; i < n; i++) {
      size_t g = 0;
      while (g < ngroups && strcmp(groups[g], set[i].group)) g++;
      if (g == ngroups && ngroups < 128) groups[ngroups++] = set[i].group;
    }
  }
  printf("1..%zu\n", ngroups);
  int failed = 0;
  for (size_t g = 0; g < ngroups; g++) {
    char diag[8192] = "";
    size_t len = 0;
    for (size_t i = 0; i < nbase; i++) {
      if (strcmp(base[i].group, groups[g])) continue;
      const entry *e = find(now, nnow, base[i].key);
      if (!e)
        len += (size_t)snprintf(diag + len, sizeof diag - len,
                                "# removed: %s (baseline: %s)\n", base[i].key, base[i].value);
      else if (strcmp(e->value, base[i].value) && !(compat && grown(&base[i], e)))
        len += (size_t)snprintf(diag + len, sizeof diag - len,
                                "# changed: %s: baseline %s, now %s\n", base[i].key,
                                base[i].value, e->value);
      if (len >= sizeof diag) len = sizeof diag - 1;
    }
    for (size_t i = 0; i < nnow && !compat; i++) {
      if (strcmp(now[i].group, groups[g])) continue;
      if (!find(base, nbase, now[i].key))
        len += (size_t)snprintf(diag + len, sizeof diag - len,
                                "# added: %s (%s) is not in the baseline\n", now[i].key,
                                now[i].value);
      if (len >= sizeof diag) len = sizeof diag - 1;
    }
    if (len == 0) {
      printf("ok %zu - %s layout %s the baseline %s\n", g + 1, groups[g],
             compat ? "compatibly extends" : "matches", argv[1]);
    } else {
      failed = 1;
      printf("not ok %zu - %s layout differs from the baseline %s\n%s", g + 1, groups[g], argv[1],
             diag);
      printf("# An ABI change needs a major bump; an append needs a minor bump and "
             "`make abi-baseline`.\n");
    }
  }
  return failed;
}
