/* The built-in CPU device and device queries. */
#include <string.h>

#include <backplane/host.h>

#include "tap.h"

static void cpu_is_built_in(void) {
  int32_t n = -1;
  is_status(bp_device_count(BP_DEVICE_CPU, &n), BP_OK);
  is_int(n, 1);
  is_str(bp_device_type_name(BP_DEVICE_CPU), "cpu");
  bp_device_props p;
  memset(&p, 0x55, sizeof p);
  p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  is_status(bp_device_properties(BP_CPU, &p), BP_OK);
  ok(strlen(p.name) > 0 && strlen(p.name) < sizeof p.name);
  cmp_ok(p.total_memory, ">", 0);
  cmp_ok(p.compute_units, ">=", 1);
  is_int(p.struct_size, BP_DEVICE_PROPS_STRUCT_SIZE);
}

static void props_honour_struct_size(void) {
  /* A caller built against a smaller struct gets only what it covers. */
  bp_device_props p;
  memset(&p, 0x55, sizeof p);
  p.struct_size = BP_STRUCT_SIZE(bp_device_props, total_memory);
  is_status(bp_device_properties(BP_CPU, &p), BP_OK);
  is_int(p.arch_major, 0x55555555);
  is_int(p.compute_units, 0x5555555555555555LL);
  p.struct_size = 4;
  is_status(bp_device_properties(BP_CPU, &p), BP_ERR_INVALID_ARGUMENT);
  has_str(bp_last_error(), "out_props->struct_size is 4");
  is_status(bp_device_properties(BP_CPU, NULL), BP_ERR_INVALID_ARGUMENT);
}

static void unknown_types(void) {
  int32_t n;
  is_status(bp_device_count(BP_DEVICE_CUDA, &n), BP_ERR_DEVICE);
  is_str(bp_last_error(), "bp_device_count: cuda is not registered");
  is_status(bp_device_count(BP_DEVICE_DYNAMIC_FIRST + 5, &n), BP_ERR_DEVICE);
  has_str(bp_last_error(), "device type 261 is not registered");
  is_status(bp_device_count(BP_DEVICE_CPU, NULL), BP_ERR_INVALID_ARGUMENT);
  is_str(bp_device_type_name(BP_DEVICE_CUDA), "cuda");
  is_str(bp_device_type_name(BP_DEVICE_ROCM), "rocm");
  ok(bp_device_type_name(BP_DEVICE_DYNAMIC_FIRST) == NULL);
  ok(bp_device_type_name(-4) == NULL);
  bp_device_props p;
  p.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  is_status(bp_device_properties(bp_device_make(BP_DEVICE_CPU, 2), &p), BP_ERR_DEVICE);
  has_str(bp_last_error(), "device cpu:2 does not exist");
}

/* Flags and the bytes held by live tensors, per device type. */
static void flags_and_memory_in_use(void) {
  uint32_t flags = 0;
  is_status(bp_device_type_flags(BP_DEVICE_CPU, &flags), BP_OK);
  ok(flags & BP_DEVICE_HOST_VISIBLE);
  is_status(bp_device_type_flags(BP_DEVICE_CUDA, &flags), BP_ERR_DEVICE);
  is_str(bp_last_error(), "bp_device_type_flags: cuda is not registered");
  is_status(bp_device_type_flags(BP_DEVICE_CPU, NULL), BP_ERR_INVALID_ARGUMENT);

  int64_t before = -1, during = -1, after = -1;
  is_status(bp_device_memory_in_use(BP_DEVICE_CPU, &before), BP_OK);
  cmp_ok(before, ">=", 0);
  bp_tensor *t = NULL;
  int64_t sizes[2] = {100, 1000};
  is_status(bp_tensor_empty(BP_CPU, BP_FLOAT64, 2, sizes, &t), BP_OK);
  is_status(bp_device_memory_in_use(BP_DEVICE_CPU, &during), BP_OK);
  is_int(during - before, 100 * 1000 * 8);
  bp_tensor_release(t);
  is_status(bp_device_memory_in_use(BP_DEVICE_CPU, &after), BP_OK);
  is_int(after, before);
  is_status(bp_device_memory_in_use(BP_DEVICE_ROCM, &after), BP_ERR_DEVICE);
  is_status(bp_device_memory_in_use(BP_DEVICE_CPU, NULL), BP_ERR_INVALID_ARGUMENT);
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(cpu_is_built_in),
      TAP_CASE(props_honour_struct_size),
      TAP_CASE(unknown_types),
      TAP_CASE(flags_and_memory_in_use),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
