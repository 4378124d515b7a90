/*
 * host/hostapi.c - the function table plugins receive (bp_host_api).
 *
 * Plugins see the host only through this table, never through linked
 * symbols, so the host's exported names and the plugin-facing names are
 * separate and the dynamic linker cannot confuse them.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static bp_status api_set_error(bp_status status, const char *message) {
  return bp__error_str(status, message);
}

static bp_status api_set_errorf(bp_status status, const char *format, ...) BP__PRINTF(2, 3);
static bp_status api_set_errorf(bp_status status, const char *format, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof buf, format ? format : "(null)", ap);
  va_end(ap);
  return bp__error_str(status, buf);
}

const bp_host_api bp__host_api = {
    .struct_size = BP_HOST_API_STRUCT_SIZE,
    .abi_major = BP_ABI_VERSION_MAJOR,
    .abi_minor = BP_ABI_VERSION_MINOR,
    .host_version = "libbackplane " BP_VERSION_STRING,
    .ext = NULL,
    .set_error = api_set_error,
    .set_errorf = api_set_errorf,
    .status_str = bp_status_str,
    .last_error = bp_last_error,
    .library = bp__reg_library,
    .def = bp__reg_def,
    .impl = bp__reg_impl,
    .fallback = bp__reg_fallback,
    .device_type = bp__reg_device_type,
    .tensor_empty = bp_tensor_empty,
    .tensor_empty_strided = bp_tensor_empty_strided,
    .tensor_as_strided = bp_tensor_as_strided,
    .tensor_retain = bp_tensor_retain,
    .tensor_release = bp_tensor_release,
    .tensor_view = bp_tensor_get_view,
    .tensor_copy = bp_tensor_copy,
    .op_find = bp__op_find,
    .call = bp_call,
    .op_meta = bp__op_meta_args,
    .core_op_set_version = BP_CORE_OP_SET_VERSION,
    .dtype_name = bp_dtype_name,
    .device_type_from_name = bp_device_type_from_name,
    .op_get_arg = bp_op_get_arg,
    .op_get_ret = bp_op_get_ret,
};
