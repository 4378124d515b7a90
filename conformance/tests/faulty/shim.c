/*
 * conformance/tests/faulty/shim.c - a faulty plugin built as a shim over
 * the reference CPU plugin (see shim.h).
 *
 * bp_plugin_init() hands the CPU plugin (cpuref_plugin_init, from
 * libcpuref.la) a proxy copy of the host table, and returns a copy of its
 * descriptor under the fault's name.  The descriptor still claims the core
 * op set, as a real vendor's does.  When the CPU plugin registers the
 * fault's op through the proxy's `impl`, the fault's kernel goes in
 * instead, with the CPU kernel's user_data, so that shim_real() can pass
 * the call's context on unchanged.  Every CPU kernel is boxed.  A fault
 * with a kernel of its own (shim.h) for an op the CPU plugin has no
 * kernel for (shim_fault_dtypes) is registered in the CPU plugin's core
 * library after its setup.
 *
 * Like every plugin of the faulty corpus, it appends its pid to the file
 * named by BP_FAULTY_LOAD_LOG and sleeps BP_FAULTY_INIT_MS milliseconds
 * each time it is initialised.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../../plugins/cpu/cpu.h"
#include "shim.h"

/* The CPU plugin's entry point, renamed when libcpuref.la is compiled. */
const bp_plugin_desc *cpuref_plugin_init(const bp_host_api *host);

const bp_host_api *shim_host;

static bp_host_api proxy;
static const bp_plugin_desc *cpu_desc;
static bp_plugin_desc desc;
static bp_boxed_kernel real_kernel;
static bool real_structured;
static bp_library *core_lib; /* the CPU plugin's, for a fault with a kernel of its own */

static bool is_target(const char *op) {
  if (!shim_the_fault.op || !shim_the_fault.kernel || !op) return false;
  if (strncmp(op, "core::", 6) == 0) op += 6;
  return strcmp(op, shim_the_fault.op) == 0;
}

__attribute__((weak)) bool shim_fault_structured = false;
__attribute__((weak)) const int32_t *shim_fault_dtypes = NULL;
__attribute__((weak)) const shim_vendor_op *shim_fault_vendor_op = NULL;

/* The fault's own op (shim_fault_vendor_op): library "faulty", its
 * definition with meta and composite, and its CPU kernel. */
static bp_status register_vendor_op(bp_registrar *reg) {
  const shim_vendor_op *v = shim_fault_vendor_op;
  static const int32_t f32[] = {BP_FLOAT32, BP_DTYPE_INVALID};
  bp_library_def ld = {BP_LIBRARY_DEF_STRUCT_SIZE, "faulty", BP_LIBRARY_DEF, 0};
  bp_library *lib;
  bp_status st = shim_host->library(reg, &ld, &lib);
  if (st) return st;
  bp_op_def d;
  memset(&d, 0, sizeof d);
  d.struct_size = BP_OP_DEF_STRUCT_SIZE;
  d.schema = v->schema;
  d.meta = v->meta;
  d.composite = v->composite;
  st = shim_host->def(lib, &d);
  if (st) return st;
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = v->name;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = v->kernel;
  k.dtypes = f32;
  return shim_host->impl(lib, &k);
}

/* The proxy's impl: the fault's kernel replaces the CPU kernel of its op. */
static bp_status proxy_impl(bp_library *lib, const bp_kernel_def *k) {
  if (!is_target(k->op)) return shim_host->impl(lib, k);
  if (!k->boxed)
    return shim_host->set_errorf(BP_ERR_UNSUPPORTED, "%s: the shim wraps boxed kernels, and %s's is not",
                                 desc.name, k->op);
  bp_kernel_def w = *k;
  real_kernel = k->boxed;
  if (shim_fault_dtypes) w.dtypes = shim_fault_dtypes; /* a kernel of its own */
  w.boxed = shim_the_fault.kernel;
  /* A fault is written as a vendor's plain boxed kernel: when the CPU
   * kernel is structured (it fills results the host allocates),
   * shim_real() allocates them the way the host would. */
  real_structured = (k->flags & BP_KERNEL_DEF_STRUCTURED) != 0;
  if (!(shim_fault_structured && real_structured))
    w.flags &= ~(uint32_t)BP_KERNEL_DEF_STRUCTURED;
  return shim_host->impl(lib, &w);
}

/* The proxy's library: the CPU plugin's core library is remembered. */
static bp_status proxy_library(bp_registrar *reg, const bp_library_def *def, bp_library **out) {
  bp_status st = shim_host->library(reg, def, out);
  if (!st && def->ns && strcmp(def->ns, "core") == 0) core_lib = *out;
  return st;
}

/* A fault with a kernel of its own, for an op the CPU plugin has none
 * for: registered in the CPU plugin's core library, on the CPU. */
static bp_status register_own(void) {
  bp_kernel_def k;
  memset(&k, 0, sizeof k);
  k.struct_size = BP_KERNEL_DEF_STRUCT_SIZE;
  k.op = shim_the_fault.op;
  k.device_type = BP_DEVICE_CPU;
  k.boxed = shim_the_fault.kernel;
  k.dtypes = shim_fault_dtypes;
  k.priority = BP_PRIORITY_REFERENCE;
  if (!core_lib)
    return shim_host->set_errorf(BP_ERR_NOT_FOUND, "%s: the CPU plugin opened no core library",
                                 desc.name);
  return shim_host->impl(core_lib, &k);
}

static bp_status shim_setup(const bp_host_api *host, bp_registrar *reg) {
  (void)host;
  bp_status st = cpu_desc->setup(&proxy, reg);
  if (st) return st;
  if (shim_the_fault.op && shim_the_fault.kernel && !real_kernel && shim_fault_dtypes) {
    st = register_own();
    if (st) return st;
  } else if (shim_the_fault.op && !real_kernel) {
    return shim_host->set_errorf(BP_ERR_NOT_FOUND,
                                 "%s: the CPU plugin registered no kernel for '%s'", desc.name,
                                 shim_the_fault.op);
  }
  if (shim_fault_vendor_op) {
    st = register_vendor_op(reg);
    if (st) return st;
  }
  if (shim_the_fault.on_setup) shim_the_fault.on_setup();
  return BP_OK;
}

static void shim_teardown(const bp_host_api *host) {
  (void)host;
  if (shim_the_fault.on_teardown) shim_the_fault.on_teardown();
  if (cpu_desc->teardown) cpu_desc->teardown(&proxy);
}

/* BP_FAULTY_LOAD_LOG and BP_FAULTY_INIT_MS, as in faulty.c. */
static void instruments(void) {
  const char *log = getenv("BP_FAULTY_LOAD_LOG");
  if (log && *log) {
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      char line[32];
      int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
      if (write(fd, line, (size_t)n) != n) {
        /* A lost line shows as a load too few. */
      }
      close(fd);
    }
  }
  const char *ms = getenv("BP_FAULTY_INIT_MS");
  long v = ms ? strtol(ms, NULL, 10) : 0;
  if (v > 0) {
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

BP_PLUGIN_EXPORT const bp_plugin_desc *bp_plugin_init(const bp_host_api *host) {
  if (!host || host->abi_major != BP_ABI_VERSION_MAJOR) return NULL;
  shim_host = host;
  size_t n = host->struct_size < sizeof proxy ? host->struct_size : sizeof proxy;
  memset(&proxy, 0, sizeof proxy);
  memcpy(&proxy, host, n);
  proxy.struct_size = n;
  proxy.impl = proxy_impl;
  proxy.library = proxy_library;
  cpu_desc = cpuref_plugin_init(&proxy);
  if (!cpu_desc) return NULL;
  instruments();
  desc = *cpu_desc;
  desc.name = shim_the_fault.name;
  desc.vendor = "Backplane faulty corpus (CPU plugin shim)";
  desc.setup = shim_setup;
  desc.teardown = shim_teardown;
  return &desc;
}

/* ------------------------------------------------------------------------ */
/* Helpers for the faults                                                   */
/* ------------------------------------------------------------------------ */

bp_status shim_real(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                    bp_value *rets, size_t nrets) {
  if (!real_kernel)
    return shim_host->set_errorf(BP_ERR_INTERNAL, "%s: the CPU plugin has no kernel for %s",
                                 desc.name, ctx->op_name);
  if (!real_structured || shim_fault_structured)
    return real_kernel(ctx, args, nargs, rets, nrets);
  bp_tensor *outs[8];
  if (nrets > 8)
    return shim_host->set_errorf(BP_ERR_INTERNAL, "%s: the shim takes at most 8 results", desc.name);
  bp_status st = bp_aux_alloc_outputs(ctx, args, nargs, outs, nrets);
  if (st) return st;
  for (size_t j = 0; j < nrets; j++) {
    rets[j].tag = BP_TAG_TENSOR;
    rets[j].len = 0;
    rets[j].u.tensor = outs[j];
  }
  st = real_kernel(ctx, args, nargs, rets, nrets);
  if (st)
    for (size_t j = 0; j < nrets; j++) shim_host->tensor_release(outs[j]);
  return st;
}

bp_status shim_call(const char *name, const bp_value *args, size_t nargs, bp_tensor **out) {
  const bp_op *op;
  bp_status st = shim_host->op_find(name, &op);
  if (st) return st;
  bp_value slots[8];
  if (nargs > 8) return shim_host->set_error(BP_ERR_INTERNAL, "shim_call: too many arguments");
  memcpy(slots, args, nargs * sizeof *args);
  bp_stack stack = BP_STACK_INIT(slots, 8);
  stack.top = nargs;
  st = shim_host->call(op, &stack);
  if (st) return st;
  *out = slots[0].u.tensor;
  return BP_OK;
}

bp_value shim_tensor_arg(bp_tensor *t) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_TENSOR;
  v.u.tensor = t;
  return v;
}

bp_status shim_return(bp_value *rets, bp_tensor *t) {
  rets[0] = shim_tensor_arg(t);
  return BP_OK;
}

const bp_tensor_view *shim_view(const bp_tensor *t) { return shim_host->tensor_view(t); }

bp_status shim_restride(bp_tensor *t, const int64_t *strides, int64_t offset, bp_tensor **out) {
  const bp_tensor_view *v = shim_view(t);
  int64_t rm[BP_MAX_NDIM], acc = 1;
  for (int32_t d = v->ndim - 1; d >= 0; d--) {
    rm[d] = acc;
    acc *= v->sizes[d] > 1 ? v->sizes[d] : 1;
  }
  return shim_host->tensor_as_strided(t, v->ndim, v->sizes, strides ? strides : rm, offset, out);
}

bp_status shim_reinterpret(const bp_tensor_view *v, int32_t dtype, bp_tensor **out) {
  bp_status st = shim_host->tensor_empty(v->device, dtype, v->ndim, v->sizes, out);
  if (st) return st;
  const bp_tensor_view *o = shim_view(*out);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < o->numel; k++, shim_next(v->ndim, v->sizes, idx))
    memcpy((char *)o->data + k * o->itemsize,
           (const char *)v->data + shim_at(v, v->ndim, idx) * v->itemsize, (size_t)o->itemsize);
  return BP_OK;
}

int64_t shim_at(const bp_tensor_view *v, int32_t ndim, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < v->ndim; d++)
    if (v->sizes[d] != 1) off += idx[d + ndim - v->ndim] * v->strides[d];
  return off;
}

bool shim_next(int32_t ndim, const int64_t *sizes, int64_t *idx) {
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

bool shim_is_float(int32_t dt) { return cpu_is_float(dt); }

double shim_load(const bp_tensor_view *v, int64_t off) {
  return cpu_load_f64(v->dtype, (const char *)v->data + off * v->itemsize);
}

void shim_store(const bp_tensor_view *v, int64_t off, double x) {
  void *p = (char *)v->data + off * v->itemsize;
  switch (v->dtype) {
    case BP_FLOAT32: *(float *)p = (float)x; break;
    case BP_FLOAT64: *(double *)p = x; break;
    case BP_FLOAT16: *(uint16_t *)p = cpu_f32_to_f16((float)x); break;
    case BP_BFLOAT16: *(uint16_t *)p = cpu_f32_to_bf16((float)x); break;
    default: shim_store_int(v, off, x > -9.2e18 && x < 9.2e18 ? (int64_t)x : 0); break;
  }
}

int64_t shim_load_int(const bp_tensor_view *v, int64_t off) {
  const void *p = (const char *)v->data + off * v->itemsize;
  switch (v->dtype) {
    case BP_INT8: return *(const int8_t *)p;
    case BP_INT16: return *(const int16_t *)p;
    case BP_INT32: return *(const int32_t *)p;
    case BP_INT64: return *(const int64_t *)p;
    case BP_UINT8: return *(const uint8_t *)p;
    case BP_BOOL: return *(const uint8_t *)p != 0;
    default: return (int64_t)shim_load(v, off);
  }
}

void shim_store_int(const bp_tensor_view *v, int64_t off, int64_t x) {
  void *p = (char *)v->data + off * v->itemsize;
  switch (v->dtype) {
    case BP_INT8: *(int8_t *)p = (int8_t)x; break;
    case BP_INT16: *(int16_t *)p = (int16_t)x; break;
    case BP_INT32: *(int32_t *)p = (int32_t)x; break;
    case BP_INT64: *(int64_t *)p = x; break;
    case BP_UINT8: *(uint8_t *)p = (uint8_t)x; break;
    case BP_BOOL: *(uint8_t *)p = x != 0; break;
    default: shim_store(v, off, (double)x); break;
  }
}

int32_t shim_norm_dim(int64_t dim, int32_t ndim) {
  int32_t n = ndim > 0 ? ndim : 1;
  return (int32_t)(dim < 0 ? dim + n : dim);
}

bp_status shim_alloc_result(const bp_kernel_ctx *ctx, const bp_value *args, size_t nargs,
                            bp_tensor **out) {
  bp_tensor_meta m;
  m.struct_size = BP_TENSOR_META_STRUCT_SIZE;
  bp_status st = shim_host->op_meta(ctx->op, args, nargs, &m, 1);
  if (st) return st;
  return shim_host->tensor_empty_strided(m.device, m.dtype, m.ndim, m.sizes, m.strides, out);
}

float shim_round_f16(float x) { return cpu_f16_to_f32(cpu_f32_to_f16(x)); }

void shim_rows_init(shim_rows *r, const bp_tensor_view *v, int32_t d) {
  memset(r, 0, sizeof *r);
  r->v = v;
  r->d = d;
  int64_t acc = 1;
  for (int32_t e = v->ndim - 1; e >= 0; e--) {
    r->out_strides[e] = acc;
    acc *= v->sizes[e];
    r->sizes[e] = e == d ? 1 : v->sizes[e];
  }
  r->len = v->ndim ? v->sizes[d] : 1;
  r->out_step = v->ndim ? r->out_strides[d] : 1;
  r->left = r->len ? v->numel / r->len : 0;
}

bool shim_rows_next(shim_rows *r, int64_t *in_off, int64_t *out_off) {
  if (r->left <= 0) return false;
  *in_off = shim_at(r->v, r->v->ndim, r->idx);
  *out_off = 0;
  for (int32_t e = 0; e < r->v->ndim; e++) *out_off += r->idx[e] * r->out_strides[e];
  shim_next(r->v->ndim, r->sizes, r->idx);
  r->left--;
  return true;
}
