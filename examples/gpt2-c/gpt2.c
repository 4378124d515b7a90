/*
 * gpt2.c - GPT-2 from a plain C host: greedy generation with a KV cache,
 * every layer through bp_call on whatever plugin serves the core ops.
 *
 *   ./gpt2 PLUGIN.so DIR
 *
 * DIR holds the weights and tokens that make_weights.py writes (GPT-2's
 * dims, 2 layers): the program runs the prompt through the model, then
 * generates 16 tokens one at a time, each step feeding only the newest
 * token and keeping every layer's keys and values (core::cat grows them).
 * It prints its milliseconds per token beside torch's and exits 0 when its
 * tokens are torch's.
 *
 * The host API does the rest: .npy files become tensors with
 * bp_tensor_empty, and the heads of a [T, 768] activation are views of it
 * (bp_tensor_as_strided), as a framework's reshape and transpose are.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/host.h>

#define D 768
#define HEADS 12
#define HD (D / HEADS)
#define LAYERS 2
#define NEW 16

static const char *dir;

static void die(const char *what) {
  fprintf(stderr, "gpt2: %s: %s\n", what, bp_last_error());
  exit(2);
}

/* ---- .npy files (version 1 or 2, little-endian, C order) --------------- */

/* The tensor in DIR/name.npy, float32 or int64, in host memory. */
static bp_tensor *load(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "gpt2: cannot open %s (run make_weights.py first)\n", path);
    exit(2);
  }
  unsigned char magic[10];
  if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) goto bad;
  size_t hlen = magic[6] == 1 ? (size_t)(magic[8] | magic[9] << 8) : 0;
  if (magic[6] != 1) {
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) goto bad;
    hlen = (size_t)(magic[8] | magic[9] << 8 | more[0] << 16 | more[1] << 24);
  }
  char header[4096];
  if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen) goto bad;
  header[hlen] = '\0';
  int32_t dtype = strstr(header, "'<f4'") ? BP_FLOAT32 : strstr(header, "'<i8'") ? BP_INT64 : -1;
  const char *shape = strstr(header, "'shape': (");
  if (dtype < 0 || strstr(header, "'fortran_order': True") || !shape) goto bad;
  int64_t sizes[BP_MAX_NDIM];
  int32_t ndim = 0;
  for (char *p = (char *)shape + 10; *p && *p != ')' && ndim < BP_MAX_NDIM;) {
    sizes[ndim++] = strtoll(p, &p, 10);
    while (*p == ',' || *p == ' ') p++;
  }
  bp_tensor *t = NULL;
  if (bp_tensor_empty(BP_CPU, dtype, ndim, sizes, &t) != BP_OK) die(path);
  size_t n = (size_t)bp_tensor_nbytes(t);
  if (fread(bp_tensor_get_view(t)->data, 1, n, f) != n) goto bad;
  fclose(f);
  return t;
bad:
  fprintf(stderr, "gpt2: %s is not a float32 or int64 .npy file in C order\n", path);
  exit(2);
}

/* ---- calls ------------------------------------------------------------ */

/*
 * Calls core op `name` with arguments described by fmt, one letter each:
 * t (bp_tensor *), i (int64_t), f (double), b (int), s (const char *),
 * l (const int64_t *, size_t: an int list), n (None).  Returns the one
 * Tensor result (the caller releases it).
 */
static bp_tensor *call(const char *name, const char *fmt, ...) {
  const bp_op *op;
  if (bp_op_find(name, &op) != BP_OK) die(name);
  bp_value slots[12];
  bp_stack s = BP_STACK_INIT(slots, 12);
  va_list ap;
  va_start(ap, fmt);
  for (const char *c = fmt; *c; c++) {
    switch (*c) {
      case 't': bp_stack_push_tensor(&s, va_arg(ap, bp_tensor *)); break;
      case 'i': bp_stack_push_int(&s, va_arg(ap, int64_t)); break;
      case 'f': bp_stack_push_float(&s, va_arg(ap, double)); break;
      case 'b': bp_stack_push_bool(&s, va_arg(ap, int) != 0); break;
      case 's': bp_stack_push_str(&s, va_arg(ap, const char *)); break;
      case 'l': {
        const int64_t *v = va_arg(ap, const int64_t *);
        bp_stack_push_int_list(&s, v, va_arg(ap, size_t));
        break;
      }
      default: bp_stack_push_none(&s); break;
    }
  }
  va_end(ap);
  if (bp_call(op, &s) != BP_OK) die(name);
  bp_tensor *r = NULL;
  if (bp_stack_get_tensor(&s, 0, &r) != BP_OK) die(name);
  return r;
}

/* A view of t (a new reference). */
static bp_tensor *view(bp_tensor *t, int32_t ndim, const int64_t *sizes, const int64_t *strides,
                       int64_t offset) {
  bp_tensor *v = NULL;
  if (bp_tensor_as_strided(t, ndim, sizes, strides, offset, &v) != BP_OK) die("a view");
  return v;
}

/* x = op(x, ...): releases the old x. */
static void set(bp_tensor **x, bp_tensor *r) {
  bp_tensor_release(*x);
  *x = r;
}

/* ---- the model ---------------------------------------------------------- */

typedef struct layer {
  bp_tensor *ln1_w, *ln1_b, *attn_w, *attn_b, *proj_w, *proj_b;
  bp_tensor *ln2_w, *ln2_b, *fc_w, *fc_b, *out_w, *out_b;
  bp_tensor *k, *v; /* the cache: [HEADS, T, HD] */
} layer;

static bp_tensor *wte, *wpe, *lnf_w, *lnf_b;
static layer layers[LAYERS];
static const int64_t norm_shape[1] = {D};

static void load_model(void) {
  wte = load("wte");
  wpe = load("wpe");
  lnf_w = load("ln_f.w");
  lnf_b = load("ln_f.b");
  for (int i = 0; i < LAYERS; i++) {
    char n[64];
    layer *L = &layers[i];
    bp_tensor **slot[] = {&L->ln1_w, &L->ln1_b, &L->attn_w, &L->attn_b, &L->proj_w, &L->proj_b,
                          &L->ln2_w, &L->ln2_b, &L->fc_w,   &L->fc_b,   &L->out_w,  &L->out_b};
    static const char *const names[] = {"ln_1.w", "ln_1.b", "attn.w", "attn.b", "proj.w",
                                        "proj.b", "ln_2.w", "ln_2.b", "fc.w",   "fc.b",
                                        "out.w",  "out.b"};
    for (int j = 0; j < 12; j++) {
      snprintf(n, sizeof n, "h%d.%s", i, names[j]);
      *slot[j] = load(n);
    }
  }
}

/* core::cat([a, b], dim=1): the cache grown by the new positions. */
static bp_tensor *cat2(bp_tensor *a, bp_tensor *b) {
  const bp_op *cat;
  if (bp_op_find("core::cat", &cat) != BP_OK) die("core::cat");
  bp_tensor *list[2] = {a, b};
  bp_value slots[2];
  bp_stack s = BP_STACK_INIT(slots, 2);
  bp_stack_push_tensor_list(&s, list, 2);
  bp_stack_push_int(&s, 1);
  bp_tensor *r = NULL;
  if (bp_call(cat, &s) != BP_OK || bp_stack_get_tensor(&s, 0, &r) != BP_OK) die("core::cat");
  return r;
}

/* Head h's part `part` (0 q, 1 k, 2 v) of qkv [t, 3 D]: [HEADS, t, HD]. */
static bp_tensor *heads(bp_tensor *qkv, int64_t t, int part) {
  int64_t sizes[3] = {HEADS, t, HD}, strides[3] = {HD, 3 * D, 1};
  return view(qkv, 3, sizes, strides, (int64_t)part * D);
}

/* Self-attention of layer L on a [t, D] input at positions already in the
 * cache + 0 .. t - 1; grows the cache. */
static bp_tensor *attention(layer *L, bp_tensor *a, int64_t t) {
  bp_tensor *qkv = call("core::linear", "ttt", a, L->attn_w, L->attn_b);
  bp_tensor *q = heads(qkv, t, 0), *k = heads(qkv, t, 1), *v = heads(qkv, t, 2);
  if (!L->k) {
    L->k = call("core::contiguous", "t", k);
    L->v = call("core::contiguous", "t", v);
  } else {
    set(&L->k, cat2(L->k, k));
    set(&L->v, cat2(L->v, v));
  }
  /* the prompt attends causally; a single new token attends to all */
  bp_tensor *o = call("core::scaled_dot_product_attention", "tttnfb", q, L->k, L->v, 0.0,
                      t > 1);
  /* [HEADS, t, HD] to [t, HEADS, HD], made contiguous, seen as [t, D] */
  int64_t ps[3] = {t, HEADS, HD}, pst[3] = {HD, t * HD, 1};
  bp_tensor *p = view(o, 3, ps, pst, 0), *c = call("core::contiguous", "t", p);
  int64_t fs[2] = {t, D}, fst[2] = {D, 1};
  bp_tensor *flat = view(c, 2, fs, fst, 0);
  bp_tensor *r = call("core::linear", "ttt", flat, L->proj_w, L->proj_b);
  bp_tensor *all[] = {qkv, q, k, v, o, p, c, flat};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) bp_tensor_release(all[i]);
  return r;
}

/* The logits of the last of t tokens at positions pos .. pos + t - 1. */
static bp_tensor *forward(const int64_t *tokens, int64_t t, int64_t pos) {
  bp_tensor *ids = NULL, *pids = NULL;
  if (bp_tensor_empty(BP_CPU, BP_INT64, 1, &t, &ids) != BP_OK ||
      bp_tensor_empty(BP_CPU, BP_INT64, 1, &t, &pids) != BP_OK)
    die("token tensors");
  for (int64_t i = 0; i < t; i++) {
    ((int64_t *)bp_tensor_get_view(ids)->data)[i] = tokens[i];
    ((int64_t *)bp_tensor_get_view(pids)->data)[i] = pos + i;
  }
  bp_tensor *te = call("core::embedding", "tt", wte, ids);
  bp_tensor *pe = call("core::embedding", "tt", wpe, pids);
  bp_tensor *x = call("core::add", "tt", te, pe);
  bp_tensor_release(te);
  bp_tensor_release(pe);
  bp_tensor_release(ids);
  bp_tensor_release(pids);
  for (int i = 0; i < LAYERS; i++) {
    layer *L = &layers[i];
    bp_tensor *a = call("core::layer_norm", "tlttf", x, norm_shape, (size_t)1, L->ln1_w, L->ln1_b,
                        1e-5);
    bp_tensor *att = attention(L, a, t);
    set(&x, call("core::add", "tt", x, att));
    bp_tensor *m = call("core::layer_norm", "tlttf", x, norm_shape, (size_t)1, L->ln2_w, L->ln2_b,
                        1e-5);
    set(&m, call("core::linear", "ttt", m, L->fc_w, L->fc_b));
    set(&m, call("core::gelu", "ts", m, "tanh"));
    set(&m, call("core::linear", "ttt", m, L->out_w, L->out_b));
    set(&x, call("core::add", "tt", x, m));
    bp_tensor_release(a);
    bp_tensor_release(att);
    bp_tensor_release(m);
  }
  int64_t one = D, unit = 1;
  bp_tensor *last = view(x, 1, &one, &unit, (t - 1) * D);
  bp_tensor *y = call("core::layer_norm", "tlttf", last, norm_shape, (size_t)1, lnf_w, lnf_b,
                      1e-5);
  bp_tensor *logits = call("core::linear", "tt", y, wte);
  bp_tensor_release(last);
  bp_tensor_release(y);
  bp_tensor_release(x);
  return logits;
}

static int64_t argmax(bp_tensor *logits) {
  bp_tensor *i = call("core::argmax", "t", logits);
  int64_t r = *(const int64_t *)bp_tensor_get_view(i)->data;
  bp_tensor_release(i);
  return r;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gpt2 PLUGIN.so DIR\n");
    return 2;
  }
  dir = argv[2];
  bp_plugin *plugin = NULL;
  if (bp_plugin_load(argv[1], &plugin) != BP_OK) die(argv[1]);
  load_model();
  bp_tensor *prompt = load("prompt"), *expected = load("expected");
  const bp_tensor_view *pv = bp_tensor_get_view(prompt), *ev = bp_tensor_get_view(expected);
  int64_t tokens[256], n = pv->numel;
  memcpy(tokens, pv->data, (size_t)n * sizeof *tokens);

  bp_tensor *logits = forward(tokens, n, 0);
  double start = now();
  for (int s = 0; s < NEW; s++) {
    tokens[n++] = argmax(logits);
    bp_tensor_release(logits);
    logits = s + 1 < NEW ? forward(&tokens[n - 1], 1, n - 1) : NULL;
  }
  double ms = (now() - start) * 1000 / NEW;

  int same = ev->numel == NEW;
  printf("tokens:");
  for (int s = 0; s < NEW; s++) {
    printf(" %lld", (long long)tokens[pv->numel + s]);
    same &= tokens[pv->numel + s] == ((const int64_t *)ev->data)[s];
  }
  printf("\n");
  char path[4096], torch_ms[64] = "?";
  snprintf(path, sizeof path, "%s/torch_ms.txt", dir);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%63s", torch_ms) != 1) snprintf(torch_ms, sizeof torch_ms, "?");
    fclose(f);
  }
  printf("backplane: %.2f ms per token; torch: %s ms per token\n", ms, torch_ms);
  printf("%s: the %d greedy tokens %s torch's\n", same ? "PASS" : "FAIL", NEW,
         same ? "equal" : "differ from");

  for (int i = 0; i < LAYERS; i++) {
    layer *L = &layers[i];
    bp_tensor *all[] = {L->ln1_w, L->ln1_b, L->attn_w, L->attn_b, L->proj_w, L->proj_b, L->ln2_w,
                        L->ln2_b, L->fc_w,   L->fc_b,   L->out_w,  L->out_b,  L->k,     L->v};
    for (size_t j = 0; j < sizeof all / sizeof *all; j++) bp_tensor_release(all[j]);
  }
  bp_tensor *rest[] = {wte, wpe, lnf_w, lnf_b, prompt, expected};
  for (size_t j = 0; j < sizeof rest / sizeof *rest; j++) bp_tensor_release(rest[j]);
  return same ? 0 : 1;
}
