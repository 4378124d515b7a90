/*
 * bench/cuda.cu - what the CUDA plugin achieves on a GPU, against the
 * GPU's own limits measured in the same run.
 *
 *   cuda-bench PLUGIN.so [--bandwidth-only]
 *
 * Loads the CUDA plugin through the public host API and times with CUDA
 * events on the default stream (each figure the best of several
 * repetitions):
 *
 *   - bandwidth: cudaMemcpy device to device, and elementwise ops and
 *     reductions of 16M and 64M elements through bp_call (the result
 *     allocated by the call), in GB/s counting the bytes read and written
 *     once; the ratio is against the copy's GB/s (which also reads and
 *     writes each byte once);
 *   - matmul of 4096 x 4096 matrices in TFLOP/s: through bp_call (cuBLAS
 *     loaded by the plugin), the plugin's tiled kernel (BP_CUDA_MATMUL=tiled,
 *     in a second process), and cuBLAS called directly here with the same
 *     settings; float32, TF32 (BP_CUDA_TF32=1), float16 and bfloat16;
 *   - dispatch: a 1-element core::add through bp_call, alone and followed by
 *     a synchronize, against cudaLaunchKernel of an empty kernel, alone and
 *     followed by cudaStreamSynchronize, in microseconds per call.
 *
 *   cuda-bench PLUGIN.so --tune
 *
 * measures only the reductions and two unary ops (gelu, exp), as % of the
 * copy, once per setting of BP_CUDA_REDUCE and BP_CUDA_WAVES (each in a
 * second process, as the plugin reads them once), next to CUB's
 * DeviceReduce on the same data: the table from which the plugin's
 * defaults are chosen.
 *
 * (--matmul-only LABEL and --tune-child are how it runs itself again.)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cub/device/device_reduce.cuh>
#include <cublas_api.h>
#include <cuda_runtime.h>

#include <backplane/host.h>
#include "../tools/clock.h"

#define REPS 5

static const char *plugin;
static bp_plugin *loaded;
static const bp_device GPU = {BP_DEVICE_CUDA, 0};


static void die(const char *what) {
  fprintf(stderr, "cuda-bench: %s: %s\n", what, bp_last_error());
  exit(1);
}

static void ck(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "cuda-bench: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static bp_tensor *gpu_tensor(int32_t dt, int32_t ndim, const int64_t *sizes) {
  bp_tensor *t = NULL;
  if (bp_tensor_empty(GPU, dt, ndim, sizes, &t) != BP_OK) die("bp_tensor_empty");
  /* Deterministic small values: cudaMemset of a byte pattern. */
  const bp_tensor_view *v = bp_tensor_get_view(t);
  ck(cudaMemset(v->data, 0x3c, (size_t)(v->numel * v->itemsize)), "cudaMemset");
  return t;
}

static const bp_op *find(const char *name) {
  const bp_op *op = NULL;
  if (bp_op_find(name, &op) != BP_OK) die(name);
  return op;
}

/* Milliseconds of `iters` runs of fn, best of REPS, timed with events. */
typedef void (*run_fn)(void *ctx);
static double time_ms(run_fn fn, void *ctx, int iters) {
  cudaEvent_t a, b;
  ck(cudaEventCreate(&a), "cudaEventCreate");
  ck(cudaEventCreate(&b), "cudaEventCreate");
  fn(ctx); /* warm-up */
  ck(cudaDeviceSynchronize(), "sync");
  double best = 1e30;
  for (int r = 0; r < REPS; r++) {
    ck(cudaEventRecord(a, 0), "record");
    for (int i = 0; i < iters; i++) fn(ctx);
    ck(cudaEventRecord(b, 0), "record");
    ck(cudaEventSynchronize(b), "sync");
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, a, b), "elapsed");
    if (ms / iters < best) best = ms / iters;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

/* ------------------------------------------------------------------------ */
/* Bandwidth                                                                */
/* ------------------------------------------------------------------------ */

struct copy_ctx {
  void *dst;
  const void *src;
  size_t bytes;
};
static void run_copy(void *p) {
  copy_ctx *c = (copy_ctx *)p;
  ck(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
}

/* A call with up to 3 tensor arguments and extra scalar values. */
struct call_ctx {
  const bp_op *op;
  bp_value args[8];
  size_t nargs;
};
static void run_call(void *p) {
  call_ctx *c = (call_ctx *)p;
  bp_value vals[8];
  memcpy(vals, c->args, sizeof vals);
  bp_stack s = {BP_STACK_STRUCT_SIZE, vals, 8, c->nargs};
  if (bp_call(c->op, &s) != BP_OK) die("bp_call");
  bp_stack_release(&s);
}

static bp_value vt(bp_tensor *t) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_TENSOR;
  v.u.tensor = t;
  return v;
}
static bp_value vf(double f) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_FLOAT;
  v.u.f = f;
  return v;
}
static bp_value vi(int64_t i) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_INT;
  v.u.i = i;
  return v;
}
static bp_value vb(bool b) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_BOOL;
  v.u.b = b;
  return v;
}
static bp_value vlist(const int64_t *p, uint32_t n) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_INT_LIST;
  v.len = n;
  v.u.ints = p;
  return v;
}
static bp_value vstr(const char *str) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_STR;
  v.len = (uint32_t)strlen(str);
  v.u.str = str;
  return v;
}
static bp_value vdtype(int32_t dt) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_SCALAR_TYPE;
  v.u.i = dt;
  return v;
}
static bp_value vnone(void) {
  bp_value v;
  memset(&v, 0, sizeof v);
  v.tag = BP_TAG_NONE;
  return v;
}

static double copy_gbps(size_t bytes) {
  void *a, *b;
  ck(cudaMalloc(&a, bytes), "cudaMalloc");
  ck(cudaMalloc(&b, bytes), "cudaMalloc");
  copy_ctx c = {b, a, bytes};
  double ms = time_ms(run_copy, &c, 10);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
}

static void row(const char *what, double bytes, double ms, double ref) {
  double gbps = bytes / (ms * 1e-3) / 1e9;
  printf("| %-44s | %8.1f | %8.1f | %5.1f%% |\n", what, ms * 1e3, gbps, 100.0 * gbps / ref);
}

static void bandwidth(void) {
  static const int64_t sizes[] = {16 << 20, 64 << 20};
  int64_t empty_dims[1] = {0};
  printf("\n## Bandwidth (GB/s, bytes read + written once)\n\n");
  for (int si = 0; si < 2; si++) {
    int64_t n = sizes[si];
    double ref = copy_gbps((size_t)n * 4);
    printf("\n%lld elements; cudaMemcpy device to device of %lld MiB: %.1f GB/s\n\n",
           (long long)n, (long long)(n * 4 >> 20), ref);
    printf("| %-44s | %8s | %8s | %6s |\n", "op (float32 unless named)", "us", "GB/s", "of copy");
    printf("|---|---:|---:|---:|\n");
    bp_tensor *a = gpu_tensor(BP_FLOAT32, 1, &n), *b = gpu_tensor(BP_FLOAT32, 1, &n);
    bp_tensor *ha = gpu_tensor(BP_FLOAT16, 1, &n), *hb = gpu_tensor(BP_FLOAT16, 1, &n);
    double B4 = 4.0 * (double)n, B2 = 2.0 * (double)n;
    call_ctx c;
    memset(&c, 0, sizeof c);
#define RUN(label, opname, bytes, nargs_, ...)                  \
  do {                                                          \
    c.op = find(opname);                                        \
    bp_value tmp_[] = {__VA_ARGS__};                            \
    memcpy(c.args, tmp_, sizeof tmp_);                          \
    c.nargs = nargs_;                                           \
    row(label, bytes, time_ms(run_call, &c, 20), ref);          \
  } while (0)
    RUN("add(a, b)", "core::add", 3 * B4, 3, vt(a), vt(b), vf(1.0));
    RUN("add(a, b, alpha=2)", "core::add", 3 * B4, 3, vt(a), vt(b), vf(2.0));
    RUN("mul(a, b)", "core::mul", 3 * B4, 2, vt(a), vt(b));
    RUN("muladd(a, b, 0.5)", "core::muladd", 3 * B4, 3, vt(a), vt(b), vf(0.5));
    RUN("relu(a)", "core::relu", 2 * B4, 1, vt(a));
    RUN("exp(a)", "core::exp", 2 * B4, 1, vt(a));
    RUN("gelu(a)", "core::gelu", 2 * B4, 2, vt(a), vstr("none"));
    {
      int64_t one = 1;
      bp_tensor *s1 = gpu_tensor(BP_FLOAT32, 1, &one);
      RUN("add(a, 1-element b) (broadcast)", "core::add", 2 * B4, 3, vt(a), vt(s1), vf(1.0));
      bp_tensor_release(s1);
    }
    RUN("float16 add(a, b)", "core::add", 3 * B2, 3, vt(ha), vt(hb), vf(1.0));
    RUN("cast float32 -> float16", "core::cast", B4 + B2, 2, vt(a), vdtype(BP_FLOAT16));
    RUN("sum(a) (all)", "core::sum", B4, 4, vt(a), vlist(empty_dims, 0), vb(false), vnone());
    RUN("amax(a) (all)", "core::amax", B4, 3, vt(a), vlist(empty_dims, 0), vb(false));
    RUN("argmax(a) (all)", "core::argmax", B4, 3, vt(a), vnone(), vb(false));
    RUN("float16 sum(a) (all)", "core::sum", B2, 4, vt(ha), vlist(empty_dims, 0), vb(false), vnone());
    {
      int64_t m[2] = {n / 4096, 4096};
      bp_tensor *mat = gpu_tensor(BP_FLOAT32, 2, m);
      int64_t last[1] = {-1}, first[1] = {0};
      RUN("sum(dim=-1) of [n/4096, 4096]", "core::sum", B4, 4, vt(mat), vlist(last, 1), vb(false), vnone());
      RUN("sum(dim=0) of [n/4096, 4096]", "core::sum", B4, 4, vt(mat), vlist(first, 1), vb(false), vnone());
      RUN("softmax(dim=-1) of [n/4096, 4096]", "core::softmax", 2 * B4, 2, vt(mat), vi(-1));
      RUN("log_softmax(dim=-1) of [n/4096, 4096]", "core::log_softmax", 2 * B4, 2, vt(mat), vi(-1));
      int64_t ns[1] = {4096};
      RUN("layer_norm([4096]) of [n/4096, 4096]", "core::layer_norm", 2 * B4, 5, vt(mat),
          vlist(ns, 1), vnone(), vnone(), vf(1e-5));
      bp_tensor_release(mat);
    }
#undef RUN
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(ha);
    bp_tensor_release(hb);
  }
}

/* ------------------------------------------------------------------------ */
/* Tuning (--tune)                                                          */
/* ------------------------------------------------------------------------ */

/* The ops that --tune compares: key, label. */
static const char *const tune_ops[][2] = {
    {"sum", "sum(a), all"},           {"amax", "amax(a), all"},
    {"argmax", "argmax(a), all"},     {"sum0", "sum(dim=0) of [n/4096, 4096]"},
    {"sum1", "sum(dim=-1) of [n/4096, 4096]"}, {"gelu", "gelu(a)"},
    {"exp", "exp(a)"}};
#define NTUNE_OPS (sizeof tune_ops / sizeof tune_ops[0])
static const int64_t tune_sizes[] = {16 << 20, 64 << 20};

/* Child of --tune: one line "tune N KEY PERCENT" per op and size. */
static void tune_child(void) {
  int64_t empty_dims[1] = {0}, last[1] = {-1}, first[1] = {0};
  for (int si = 0; si < 2; si++) {
    int64_t n = tune_sizes[si], m[2] = {n / 4096, 4096};
    double ref = copy_gbps((size_t)n * 4);
    bp_tensor *a = gpu_tensor(BP_FLOAT32, 1, &n), *mat = gpu_tensor(BP_FLOAT32, 2, m);
    for (size_t k = 0; k < NTUNE_OPS; k++) {
      const char *key = tune_ops[k][0];
      call_ctx c;
      memset(&c, 0, sizeof c);
      c.args[2] = vb(false);
      c.args[3] = vnone();
      c.nargs = 4;
      double bytes = 4.0 * (double)n;
      if (!strcmp(key, "gelu") || !strcmp(key, "exp")) {
        c.op = find(key[0] == 'g' ? "core::gelu" : "core::exp");
        c.args[0] = vt(a);
        c.args[1] = vstr("none");
        c.nargs = key[0] == 'g' ? 2 : 1;
        bytes *= 2; /* read and written */
      } else if (!strcmp(key, "sum") || !strcmp(key, "amax")) {
        c.op = find(key[0] == 's' ? "core::sum" : "core::amax");
        c.args[0] = vt(a);
        c.args[1] = vlist(empty_dims, 0);
        if (key[0] == 'a') c.nargs = 3;
      } else if (!strcmp(key, "argmax")) {
        c.op = find("core::argmax");
        c.args[0] = vt(a);
        c.args[1] = vnone();
        c.nargs = 3;
      } else {
        c.op = find("core::sum");
        c.args[0] = vt(mat);
        c.args[1] = vlist(!strcmp(key, "sum0") ? first : last, 1);
      }
      double ms = time_ms(run_call, &c, 20);
      double gbps = bytes / (ms * 1e-3) / 1e9;
      printf("tune %lld %s %.1f\n", (long long)n, key, 100.0 * gbps / ref);
    }
    bp_tensor_release(a);
    bp_tensor_release(mat);
  }
  fflush(stdout);
}

/* CUB's DeviceReduce on the same data, % of the copy: sum, amax, argmax. */
struct cub_ctx {
  int what; /* 0 sum, 1 max, 2 argmax */
  const float *in;
  float *out;
  int64_t *idx;
  void *tmp;
  size_t tmp_bytes;
  int64_t n;
};
static void run_cub(void *p) {
  cub_ctx *c = (cub_ctx *)p;
  cudaError_t e;
  if (c->what == 0)
    e = cub::DeviceReduce::Sum(c->tmp, c->tmp_bytes, c->in, c->out, c->n);
  else if (c->what == 1)
    e = cub::DeviceReduce::Max(c->tmp, c->tmp_bytes, c->in, c->out, c->n);
  else
    e = cub::DeviceReduce::ArgMax(c->tmp, c->tmp_bytes, c->in, c->out, c->idx, c->n);
  ck(e, "cub::DeviceReduce");
}
static double cub_pct(int what, int64_t n, double ref) {
  cub_ctx c;
  memset(&c, 0, sizeof c);
  c.what = what;
  c.n = n;
  ck(cudaMalloc((void **)&c.in, (size_t)n * 4), "cudaMalloc");
  ck(cudaMemset((void *)c.in, 0x3c, (size_t)n * 4), "cudaMemset");
  ck(cudaMalloc((void **)&c.out, 16), "cudaMalloc");
  ck(cudaMalloc((void **)&c.idx, 16), "cudaMalloc");
  void *save = NULL;
  run_cub(&c); /* sizes tmp */
  ck(cudaMalloc(&c.tmp, c.tmp_bytes ? c.tmp_bytes : 1), "cudaMalloc");
  save = c.tmp;
  double ms = time_ms(run_cub, &c, 20);
  cudaFree((void *)c.in);
  cudaFree(c.out);
  cudaFree(c.idx);
  cudaFree(save);
  return 100.0 * (4.0 * (double)n / (ms * 1e-3) / 1e9) / ref;
}

/* The settings that --tune compares: a variable and its value (none: the
 * defaults). */
static const char *const tune_settings[][2] = {{NULL, NULL},
                                               {"BP_CUDA_REDUCE", "slice=4096"},
                                               {"BP_CUDA_REDUCE", "slice=8192"},
                                               {"BP_CUDA_REDUCE", "slice=32768"},
                                               {"BP_CUDA_REDUCE", "slice=65536"},
                                               {"BP_CUDA_REDUCE", "cols=4"},
                                               {"BP_CUDA_REDUCE", "cols=8"},
                                               {"BP_CUDA_REDUCE", "finish=pdl"},
                                               {"BP_CUDA_REDUCE", "slice=4096,finish=pdl"},
                                               {"BP_CUDA_REDUCE", "slice=8192,finish=pdl"},
                                               {"BP_CUDA_REDUCE", "cols=8,finish=pdl"},
                                               {"BP_CUDA_REDUCE", "slice=4096,cols=8,finish=pdl"},
                                               {"BP_CUDA_WAVES", "2"},
                                               {"BP_CUDA_WAVES", "4"},
                                               {"BP_CUDA_WAVES", "16"}};

static void tune(const char *self) {
  printf("\n## Reductions and unary ops by BP_CUDA_REDUCE and BP_CUDA_WAVES setting"
         " (%% of the device-to-device copy)\n\n");
  printf("| %-28s |", "setting");
  for (int si = 0; si < 2; si++)
    for (size_t k = 0; k < NTUNE_OPS; k++)
      printf(" %s %s |", tune_ops[k][0], si ? "64M" : "16M");
  printf("\n|---|");
  for (size_t k = 0; k < 2 * NTUNE_OPS; k++) printf("---:|");
  printf("\n");
  fflush(stdout);
  for (size_t v = 0; v < sizeof tune_settings / sizeof tune_settings[0]; v++) {
    char cmd[8192], text[4096];
    const char *var = tune_settings[v][0], *val = tune_settings[v][1];
    snprintf(cmd, sizeof cmd, "%s%s%s%s%s '%s' --tune-child", var ? var : "", var ? "='" : "",
             var ? val : "", var ? "' " : "", self, plugin);
    FILE *f = popen(cmd, "r");
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[got] = '\0';
    if (f) pclose(f);
    char label[96];
    snprintf(label, sizeof label, "%s%s", var && !strcmp(var, "BP_CUDA_WAVES") ? "waves=" : "",
             var ? val : "(default)");
    printf("| %-28s |", label);
    for (int si = 0; si < 2; si++)
      for (size_t k = 0; k < NTUNE_OPS; k++) {
        char key[64];
        snprintf(key, sizeof key, "tune %lld %s ", (long long)tune_sizes[si], tune_ops[k][0]);
        const char *p = strstr(text, key);
        if (p)
          printf(" %.1f |", atof(p + strlen(key)));
        else
          printf(" - |");
      }
    printf("\n");
    fflush(stdout);
  }
  printf("| %-28s |", "CUB DeviceReduce");
  for (int si = 0; si < 2; si++) {
    double ref = copy_gbps((size_t)tune_sizes[si] * 4);
    for (size_t k = 0; k < NTUNE_OPS; k++)
      if (k < 3)
        printf(" %.1f |", cub_pct((int)k, tune_sizes[si], ref));
      else
        printf(" - |");
  }
  printf("\n");
  for (size_t k = 0; k < NTUNE_OPS; k++)
    printf("%s%s: %s", k ? "; " : "\nColumns: ", tune_ops[k][0], tune_ops[k][1]);
  printf(".\n");
}

/* ------------------------------------------------------------------------ */
/* matmul                                                                   */
/* ------------------------------------------------------------------------ */

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*gemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void *, const void *, cudaDataType, int,
                                  const void *, cudaDataType, int, const void *, void *,
                                  cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct blas_ctx {
  gemm_fn gemm;
  cublasHandle_t h;
  cudaDataType t;
  cublasComputeType_t ct;
  int n;
  const void *a, *b;
  void *c;
};
static void run_blas(void *p) {
  blas_ctx *g = (blas_ctx *)p;
  float one = 1, zero = 0;
  if (g->gemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->b, g->t, g->n, g->a,
              g->t, g->n, &zero, g->c, g->t, g->n, g->ct, CUBLAS_GEMM_DEFAULT) !=
      CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cuda-bench: cublasGemmEx failed\n");
    exit(1);
  }
}

static double tflops(double ms, int n) { return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12; }

/* matmul through the plugin: prints one line per dtype (the path is the
 * plugin's, as this process loaded it). */
static void matmul_plugin(const char *label) {
  static const struct {
    int32_t dt;
    const char *name;
  } dts[] = {{BP_FLOAT32, "float32"}, {BP_FLOAT16, "float16"}, {BP_BFLOAT16, "bfloat16"}};
  int n = 4096;
  int64_t sz[2] = {n, n};
  for (int i = 0; i < 3; i++) {
    if (!strcmp(label, "tiled") && dts[i].dt != BP_FLOAT32) continue;
    bp_tensor *a = gpu_tensor(dts[i].dt, 2, sz), *b = gpu_tensor(dts[i].dt, 2, sz);
    call_ctx c;
    memset(&c, 0, sizeof c);
    c.op = find("core::matmul");
    c.args[0] = vt(a);
    c.args[1] = vt(b);
    c.nargs = 2;
    double ms = time_ms(run_call, &c, 3);
    printf("plugin %s %s %.2f\n", label, dts[i].name, tflops(ms, n));
    bp_tensor_release(a);
    bp_tensor_release(b);
  }
  fflush(stdout);
}

/* Runs this program again with an environment variable set, for a
 * plugin path that is chosen once per process, and collects its lines. */
static void rerun(const char *self, const char *env, const char *label, char *out, size_t n) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "BP_CUDA_VERBOSE=1 %s %s '%s' --matmul-only %s", env, self, plugin,
           label);
  FILE *f = popen(cmd, "r");
  out[0] = '\0';
  if (!f) return;
  size_t got = fread(out, 1, n - 1, f);
  out[got] = '\0';
  pclose(f);
}

static double find_line(const char *text, const char *label, const char *dt) {
  char key[128];
  snprintf(key, sizeof key, "plugin %s %s ", label, dt);
  const char *p = strstr(text, key);
  return p ? atof(p + strlen(key)) : 0;
}

static void matmul(const char *self) {
  printf("\n## matmul, 4096 x 4096 (TFLOP/s)\n\n");
  void *lib = dlopen("libcublas.so.13", RTLD_NOW);
  if (!lib) lib = dlopen("libcublas.so", RTLD_NOW);
  create_fn create = lib ? (create_fn)dlsym(lib, "cublasCreate_v2") : NULL;
  gemm_fn gemm = lib ? (gemm_fn)dlsym(lib, "cublasGemmEx") : NULL;
  char deflt[4096], tf32[4096], tiled[4096];
  rerun(self, "", "default", deflt, sizeof deflt);
  rerun(self, "BP_CUDA_TF32=1", "tf32", tf32, sizeof tf32);
  rerun(self, "BP_CUDA_MATMUL=tiled", "tiled", tiled, sizeof tiled);
  printf("| %-10s | %14s | %14s | %8s | %14s |\n", "dtype", "bp_call", "cuBLAS direct", "ratio",
         "tiled kernel");
  printf("|---|---:|---:|---:|---:|\n");
  static const struct {
    const char *name;
    const char *label;
    cudaDataType t;
    cublasComputeType_t ct;
    int isz;
  } rows[] = {
      {"float32", "default", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4},
      {"tf32", "tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4},
      {"float16", "default", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
      {"bfloat16", "default", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2},
  };
  int n = 4096;
  cublasHandle_t h = NULL;
  if (create && create(&h) != CUBLAS_STATUS_SUCCESS) h = NULL;
  for (int i = 0; i < 4; i++) {
    const char *text = !strcmp(rows[i].label, "tf32") ? tf32 : deflt;
    const char *dt = !strcmp(rows[i].name, "tf32") ? "float32" : rows[i].name;
    double plug = find_line(text, rows[i].label, dt);
    double direct = 0;
    if (h && gemm) {
      size_t bytes = (size_t)n * n * rows[i].isz;
      void *a, *b, *c;
      ck(cudaMalloc(&a, bytes), "cudaMalloc");
      ck(cudaMalloc(&b, bytes), "cudaMalloc");
      ck(cudaMalloc(&c, bytes), "cudaMalloc");
      ck(cudaMemset(a, 0x3c, bytes), "cudaMemset");
      ck(cudaMemset(b, 0x3c, bytes), "cudaMemset");
      blas_ctx g = {gemm, h, rows[i].t, rows[i].ct, n, a, b, c};
      direct = tflops(time_ms(run_blas, &g, 3), n);
      cudaFree(a);
      cudaFree(b);
      cudaFree(c);
    }
    double til = !strcmp(rows[i].name, "float32") ? find_line(tiled, "tiled", "float32") : 0;
    char tl[32] = "-";
    if (til > 0) snprintf(tl, sizeof tl, "%.2f (%.0f%%)", til, direct > 0 ? 100 * til / direct : 0);
    printf("| %-10s | %14.2f | %14.2f | %7.1f%% | %14s |\n", rows[i].name, plug, direct,
           direct > 0 ? 100 * plug / direct : 0, tl);
  }
  if (!h) printf("\n(cuBLAS could not be loaded here: no direct figures)\n");
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */
/* ------------------------------------------------------------------------ */

__global__ void empty_kernel(void) {}

static void dispatch(void) {
  printf("\n## Dispatch of a tiny op (us per call, host clock)\n\n");
  const int N = 20000;
  void *args[1] = {NULL};
  cudaStream_t s = 0;
  /* Bare launches. */
  double bare = 1e30, bare_sync = 1e30, call = 1e30, call_sync = 1e30;
  for (int r = 0; r < REPS; r++) {
    ck(cudaDeviceSynchronize(), "sync");
    double t0 = now();
    for (int i = 0; i < N; i++)
      ck(cudaLaunchKernel((const void *)empty_kernel, dim3(1), dim3(1), args, 0, s), "launch");
    double t = (now() - t0) / N;
    ck(cudaDeviceSynchronize(), "sync");
    if (t < bare) bare = t;
    t0 = now();
    for (int i = 0; i < N / 4; i++) {
      ck(cudaLaunchKernel((const void *)empty_kernel, dim3(1), dim3(1), args, 0, s), "launch");
      ck(cudaStreamSynchronize(s), "sync");
    }
    t = (now() - t0) / (N / 4);
    if (t < bare_sync) bare_sync = t;
  }
  int64_t one = 1;
  bp_tensor *a = gpu_tensor(BP_FLOAT32, 1, &one), *b = gpu_tensor(BP_FLOAT32, 1, &one);
  const bp_op *add = find("core::add");
  for (int r = 0; r < REPS; r++) {
    ck(cudaDeviceSynchronize(), "sync");
    double t0 = now();
    for (int i = 0; i < N; i++) {
      bp_value vals[3] = {vt(a), vt(b), vf(1.0)};
      bp_stack st = {BP_STACK_STRUCT_SIZE, vals, 3, 3};
      if (bp_call(add, &st) != BP_OK) die("core::add");
      bp_tensor_release(vals[0].u.tensor);
    }
    double t = (now() - t0) / N;
    if (bp_device_synchronize(GPU) != BP_OK) die("bp_device_synchronize");
    if (t < call) call = t;
    t0 = now();
    for (int i = 0; i < N / 4; i++) {
      bp_value vals[3] = {vt(a), vt(b), vf(1.0)};
      bp_stack st = {BP_STACK_STRUCT_SIZE, vals, 3, 3};
      if (bp_call(add, &st) != BP_OK) die("core::add");
      bp_tensor_release(vals[0].u.tensor);
      if (bp_stream_synchronize(GPU, NULL) != BP_OK) die("bp_stream_synchronize");
    }
    t = (now() - t0) / (N / 4);
    if (t < call_sync) call_sync = t;
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  printf("| %-52s | %8s |\n", "what", "us/call");
  printf("|---|---:|\n");
  printf("| %-52s | %8.2f |\n", "cudaLaunchKernel, empty kernel", bare * 1e6);
  printf("| %-52s | %8.2f |\n", "core::add of 1 element through bp_call", call * 1e6);
  printf("| %-52s | %8.2f |\n", "  above the bare launch", (call - bare) * 1e6);
  printf("| %-52s | %8.2f |\n", "cudaLaunchKernel + cudaStreamSynchronize", bare_sync * 1e6);
  printf("| %-52s | %8.2f |\n", "bp_call + bp_stream_synchronize", call_sync * 1e6);
  printf("| %-52s | %8.2f |\n", "  above the bare launch and synchronize",
         (call_sync - bare_sync) * 1e6);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cuda-bench PLUGIN.so [--bandwidth-only | --tune]\n");
    return 2;
  }
  plugin = argv[1];
  bool only = argc >= 4 && !strcmp(argv[2], "--matmul-only");
  bool bw_only = argc >= 3 && !strcmp(argv[2], "--bandwidth-only");
  bool tune_only = argc >= 3 && !strcmp(argv[2], "--tune");
  bool tune_kid = argc >= 3 && !strcmp(argv[2], "--tune-child");
  bp_clear_error();
  if (bp_plugin_load(plugin, &loaded) != BP_OK) die("bp_plugin_load");
  int32_t count = 0;
  if (bp_device_count(BP_DEVICE_CUDA, &count) != BP_OK) die("bp_device_count");
  if (count == 0) {
    printf("cuda-bench: no CUDA device (%s); nothing to measure\n", bp_last_error());
    return 0;
  }
  if (only) {
    matmul_plugin(argv[3]);
    return 0;
  }
  if (tune_kid) {
    tune_child();
    return 0;
  }
  bp_device_props pr;
  memset(&pr, 0, sizeof pr);
  pr.struct_size = BP_DEVICE_PROPS_STRUCT_SIZE;
  bp_device_properties(GPU, &pr);
  printf("# CUDA plugin benchmark: %s (sm_%d%d, %lld SMs)\n", pr.name, (int)pr.arch_major,
         (int)pr.arch_minor, (long long)pr.compute_units);
  if (tune_only) {
    tune(argv[0]);
    return 0;
  }
  bandwidth();
  if (bw_only) return 0;
  matmul(argv[0]);
  dispatch();
  return 0;
}
