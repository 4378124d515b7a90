/*
 * plugins/cuda/cuda.h - internals of the CUDA reference plugin.
 *
 * The plugin includes only the SDK headers and the CUDA runtime's headers.
 * It links the CUDA runtime statically, so it loads on a machine without
 * one; the runtime then looks for the driver itself, and a machine without
 * a driver or a GPU gets a plugin with 0 devices and a reason.
 *
 * Kernels are boxed and registered for BP_DEVICE_CUDA in an IMPL library
 * of the `core` namespace.  Each sizes its outputs through the op's meta
 * function (bp_aux_alloc_outputs), exactly as the CPU plugin does, and
 * launches on the calling thread's current stream of the output's device.
 *
 * Layout:
 *   plugin.cu      entry point, setup, the "cuda" and "cuda_host" device
 *                  types: allocator, copies, streams and events
 *   elementwise.cu where, cast, contiguous, fill_, copy_, the elementwise
 *                  geometry and cu_cast_to
 *   binary.cu      binary ops, muladd, add.out
 *   unary.cu       unary ops
 *   compare.cu     comparisons (eq, ne, lt, le, gt, ge)
 *                  (the elementwise files' functors are in
 *                  elementwise_ops.cuh, which tests also run on the host,
 *                  and their kernels and launchers in map.cuh)
 *   reduce.cu      sum, mean, amax, amin, argmax (their functors in
 *                  reduce_ops.cuh and their launch plan in reduce_plan.h,
 *                  which tests also run on the host)
 *   nn.cu          softmax, log_softmax, layer_norm
 *   matmul.cu      matmul: cuBLAS (loaded at run time) or a tiled kernel
 */
#ifndef BP_PLUGINS_CUDA_H
#define BP_PLUGINS_CUDA_H

#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include <backplane/plugin_aux.h>

/* The host's table, set by bp_plugin_init before setup runs. */
extern const bp_host_api *cu_host;

/* Records an error on the calling thread and evaluates to its status.
 * Every message of the plugin starts with "cuda: " and names the op (or
 * the device function) next, as cu_check's do. */
#define CU_ERR(status, ...) cu_host->set_errorf((status), __VA_ARGS__)

/* The most CUDA devices the plugin drives. */
#define CU_MAX_DEVICES 64

/* Threads per block of the plugin's kernels, unless a kernel says else. */
#define CU_THREADS 256

/* Properties of a device, cached at setup. */
typedef struct cu_device_info {
  int sm_count;
  int max_blocks; /* blocks of a grid-stride kernel: those of CU_THREADS
                   * threads resident on all SMs, times BP_CUDA_WAVES */
  int cc_major;   /* compute capability, major part (9 for sm_90) */
} cu_device_info;

extern int cu_ndevices;
extern cu_device_info cu_devices[CU_MAX_DEVICES];

/* Turns a CUDA error into a status: BP_ERR_OUT_OF_MEMORY for an
 * allocation failure, BP_ERR_BACKEND otherwise, with the message
 * "cuda: WHAT: CUDA's text (its name)".  `what` names the op or device
 * function and the CUDA call ("core::sum", "copy: cudaMemcpyAsync"), and
 * does not start with "cuda: ", which is added here.  BP_OK for
 * cudaSuccess.  It also clears the error as the thread's last CUDA error,
 * so a later cu_launched does not report it again. */
bp_status cu_check(cudaError_t err, const char *what);

/* The status of the kernels launched last on this thread (a launch error
 * such as a bad configuration), as cu_check does, naming `what`. */
bp_status cu_launched(const char *what);

/* Makes `index` the calling thread's CUDA device and returns its current
 * stream (the default stream is NULL).  On failure records the error. */
bp_status cu_enter(int32_t index, cudaStream_t *out_stream);

/* ------------------------------------------------------------------------ */
/* Outputs and registration                                                 */
/* ------------------------------------------------------------------------ */

/* Outputs are allocated with bp_aux_alloc_outputs (<backplane/plugin_aux.h>),
 * sized by the op's meta function, and returned with
 * bp_aux_return_tensor. */

/* Registers `fn` as the boxed CUDA kernel of core::<op>, at the
 * reference priority: a vendor's kernel for the same op wins over it. */
static inline bp_status cu_impl(bp_library *lib, const char *op, bp_boxed_kernel fn,
                                const void *user_data) {
  return bp_aux_impl_at(cu_host, lib, op, BP_DEVICE_CUDA, fn, user_data, BP_PRIORITY_REFERENCE);
}

/* Registers a kernel of BP_AUX_STRUCTURED_KERNEL(name, impl) as the CUDA
 * kernel of core::<op>: structured (the host sizes and allocates the
 * result) on a host of ABI 1.2 or later. */
#define CU_IMPL_STRUCTURED(lib, op, name, user_data)                                       \
  bp_aux_impl_structured(cu_host, (lib), (op), BP_DEVICE_CUDA, name, name##_fill,           \
                         (user_data), BP_PRIORITY_REFERENCE)

static inline const bp_tensor_view *cu_view(const bp_tensor *t) { return cu_host->tensor_view(t); }

/*
 * A contiguous copy of `src` (on a CUDA device) converted to `dtype` by the
 * rules of core::cast.  If src already has that dtype and is contiguous,
 * *out is a new reference to src.  Runs on the calling thread's current
 * stream of src's device.  `op` is the name of the op that needs the
 * copy ("core::matmul"), which its error messages name.
 */
bp_status cu_cast_to(const bp_tensor *src, int32_t dtype, const char *op, bp_tensor **out);

/* The matmul path chosen at the first matmul: "cublas (LIBRARY)" or
 * "tiled kernel (REASON)".  Static. */
const char *cu_matmul_path(void);

/* Destroys the cuBLAS handles of `stream` on `device` (which is current),
 * before the stream is destroyed. */
void cu_matmul_stream_destroyed(int32_t device, cudaStream_t stream);

/* Destroys every cuBLAS handle (at teardown).  The library stays loaded. */
void cu_matmul_shutdown(void);

/* Each kernel file registers its kernels. */
bp_status cu_register_elementwise(bp_library *lib);
bp_status cu_register_binary(bp_library *lib);
bp_status cu_register_unary(bp_library *lib);
bp_status cu_register_compare(bp_library *lib);
bp_status cu_register_reduce(bp_library *lib);
bp_status cu_register_nn(bp_library *lib);
bp_status cu_register_index(bp_library *lib);
bp_status cu_register_scan(bp_library *lib);
bp_status cu_register_sort(bp_library *lib);
bp_status cu_register_matmul(bp_library *lib);

/* Blocks for n elements of grid-stride work: enough to fill the device,
 * no more than needed. */
static inline unsigned cu_blocks(int32_t device, int64_t n, int64_t per_block) {
  int64_t b = (n + per_block - 1) / per_block;
  int64_t cap = cu_devices[device].max_blocks > 0 ? cu_devices[device].max_blocks : 1024;
  if (b > cap) b = cap;
  if (b < 1) b = 1;
  return (unsigned)b;
}

#endif /* BP_PLUGINS_CUDA_H */
