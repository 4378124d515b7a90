/*
 * tools/bp-run.c - calls any Backplane operator from the command line.
 *
 *   bp-run [OPTIONS] OP [ARG ...] [NAME=VALUE ...]
 *   bp-run --show FILE.npy ...
 *   bp-run --write FILE.npy DTYPE SIZES VALUES
 *
 * Tensors are read from NumPy .npy files (format 1.0, 2.0 and 3.0; C or
 * Fortran order; little-, big- or native-endian) and results are written
 * to .npy files (-o, once per Tensor result, in order) or printed.  Other
 * arguments are written as text: 2.5, -1, true, float32, cpu:0, 0,1 (a
 * list), None (an optional argument left out).  NAME=VALUE passes the
 * schema argument NAME by keyword, e.g. approximate=tanh or dim=1.
 *
 * Options:
 *   -p, --plugin PATH   load this plugin (may be repeated)
 *   --no-discover       do not search BP_PLUGIN_PATH and the installed
 *                       plugin directory
 *   --device DEV        put every tensor argument on DEV (e.g. cuda:0)
 *   --repeat N          call N times and print the call's timing
 *   -o FILE.npy         write the next Tensor result to FILE.npy
 *   --show              print the dtype, shape and values of .npy files
 *   --write             write a .npy file from text: a dtype name, the
 *                       sizes ("2,3"; "" for a 0-dim tensor) and the
 *                       values in C order ("1,2,3,4,5,6")
 *
 * Every failure prints one line, "bp-run: ...", and exits with 1 (2 for a
 * usage error).  A .npy file is untrusted input: its header's lengths and
 * shape are checked against the file's size, and for overflow, before
 * anything is allocated for it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <backplane/host.h>

#define MAX_ARGS 64
#define MAX_OUTS 16
#define MAX_TENSORS 256
#define NPY_MAGIC "\x93NUMPY"

/* ------------------------------------------------------------------------ */
/* Errors and cleanup                                                       */
/* ------------------------------------------------------------------------ */

/* Every tensor the program creates, released at exit; and every list
 * array it allocates, freed at exit. */
static bp_tensor *owned[MAX_TENSORS];
static size_t nowned;
static void *blocks[MAX_ARGS];
static size_t nblocks;

static void cleanup(void) {
  for (size_t i = 0; i < nowned; i++) bp_tensor_release(owned[i]);
  nowned = 0;
  for (size_t i = 0; i < nblocks; i++) free(blocks[i]);
  nblocks = 0;
}

/* Prints one line of error and exits with `code`. */
static _Noreturn void die(int code, const char *fmt, ...) BP_PRINTF_LIKE(2, 3);
static _Noreturn void die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bp-run: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  cleanup();
  exit(code);
}

/* Keeps t until exit and returns it. */
static bp_tensor *own(bp_tensor *t) {
  if (nowned == MAX_TENSORS) die(1, "too many tensors (the most is %d)", MAX_TENSORS);
  owned[nowned++] = t;
  return t;
}

static void *own_block(size_t nbytes) {
  if (nblocks == MAX_ARGS) die(1, "too many list arguments");
  void *p = calloc(1, nbytes ? nbytes : 1);
  if (!p) die(1, "out of memory");
  blocks[nblocks++] = p;
  return p;
}

/* ------------------------------------------------------------------------ */
/* .npy files                                                               */
/* ------------------------------------------------------------------------ */

/* NumPy type strings (without the byte-order character) of each dtype.
 * bfloat16 has no NumPy dtype and is refused both ways. */
static const struct {
  const char *descr;
  int32_t dtype;
} npy_types[] = {
    {"i1", BP_INT8},    {"i2", BP_INT16},   {"i4", BP_INT32},   {"i8", BP_INT64},
    {"u1", BP_UINT8},   {"f2", BP_FLOAT16}, {"f4", BP_FLOAT32}, {"f8", BP_FLOAT64},
    {"b1", BP_BOOL},
};

static int host_is_little(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

typedef struct npy_header {
  int32_t dtype;
  int swap;          /* the data's byte order is not the machine's */
  int fortran;
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
} npy_header;

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* Reads a quoted Python string into buf; returns the position after it or
 * NULL. */
static const char *parse_pystr(const char *p, char *buf, size_t n) {
  char q = *p;
  if (q != '\'' && q != '"') return NULL;
  size_t len = 0;
  for (p++; *p && *p != q; p++)
    if (len + 1 < n) buf[len++] = *p;
  if (*p != q) return NULL;
  buf[len] = '\0';
  return p + 1;
}

/* Parses the header dict of a .npy file ("{'descr': '<f4', 'fortran_order':
 * False, 'shape': (2, 3), }").  Returns NULL or a description of what is
 * wrong. */
static const char *parse_npy_dict(const char *p, npy_header *h) {
  int have_descr = 0, have_order = 0, have_shape = 0;
  char key[32], descr[32];
  p = skip_ws(p);
  if (*p++ != '{') return "the header is not a dict";
  for (;;) {
    p = skip_ws(p);
    if (*p == '}') break;
    if (!(p = parse_pystr(p, key, sizeof key))) return "a header key is not a string";
    p = skip_ws(p);
    if (*p++ != ':') return "missing ':' in the header";
    p = skip_ws(p);
    if (!strcmp(key, "descr")) {
      if (!(p = parse_pystr(p, descr, sizeof descr)))
        return "the descr is not a simple type string (structured arrays are not supported)";
      have_descr = 1;
    } else if (!strcmp(key, "fortran_order")) {
      if (!strncmp(p, "True", 4)) {
        h->fortran = 1;
        p += 4;
      } else if (!strncmp(p, "False", 5)) {
        h->fortran = 0;
        p += 5;
      } else {
        return "fortran_order is neither True nor False";
      }
      have_order = 1;
    } else if (!strcmp(key, "shape")) {
      if (*p++ != '(') return "the shape is not a tuple";
      h->ndim = 0;
      for (;;) {
        p = skip_ws(p);
        if (*p == ')') break;
        if (h->ndim == BP_MAX_NDIM) return "the shape has more than 16 dimensions";
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) return "the shape holds something that is not a size";
        h->sizes[h->ndim++] = v;
        p = skip_ws(end);
        if (*p == ',') p++;
      }
      p++;
      have_shape = 1;
    } else {
      return "the header has an unknown key";
    }
    p = skip_ws(p);
    if (*p == ',') p++;
  }
  if (!have_descr || !have_order || !have_shape)
    return "the header lacks one of 'descr', 'fortran_order' and 'shape'";
  char order = descr[0];
  const char *code = descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') return "unknown byte order in descr";
  h->dtype = BP_DTYPE_INVALID;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (!strcmp(code, npy_types[i].descr)) h->dtype = npy_types[i].dtype;
  if (h->dtype == BP_DTYPE_INVALID) return NULL; /* reported by the caller with the descr */
  h->swap = bp_dtype_size(h->dtype) > 1 &&
            ((order == '<' && !host_is_little()) || (order == '>' && host_is_little()));
  return NULL;
}

static void swap_bytes(unsigned char *p, size_t n, size_t itemsize) {
  for (size_t i = 0; i < n; i++, p += itemsize)
    for (size_t a = 0, b = itemsize - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* The bytes of a regular file after f's position; -1 when that is not
 * known (a pipe, say). */
static int64_t bytes_left(FILE *f) {
  struct stat sb;
  long pos = ftell(f);
  if (pos < 0 || fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < pos)
    return -1;
  return (int64_t)sb.st_size - pos;
}

/* Reads a .npy file into a new CPU tensor, owned by the caller. */
static bp_tensor *npy_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die(1, "%s: cannot open: %s", path, strerror(errno));
  unsigned char pre[12];
  size_t got = fread(pre, 1, 10, f);
  if (got < 10 || memcmp(pre, NPY_MAGIC, 6) != 0) {
    fclose(f);
    die(1, "%s: not a .npy file (no \\x93NUMPY magic)", path);
  }
  unsigned major = pre[6];
  size_t hlen;
  if (major == 1) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  } else if (major == 2 || major == 3) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      fclose(f);
      die(1, "%s: truncated .npy header", path);
    }
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  } else {
    fclose(f);
    die(1, "%s: unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)", path, major, pre[7]);
  }
  /* The header length comes from the file: check it against the file's
   * size before allocating that much. */
  int64_t left = bytes_left(f);
  if (left >= 0 && (uint64_t)hlen > (uint64_t)left) {
    fclose(f);
    die(1, "%s: truncated .npy header: it claims %zu bytes, the file has %" PRId64
        " after the prefix", path, hlen, left);
  }
  char *text = malloc(hlen + 1);
  if (!text) {
    fclose(f);
    die(1, "%s: out of memory for a .npy header of %zu bytes", path, hlen);
  }
  if (fread(text, 1, hlen, f) != hlen) {
    free(text);
    fclose(f);
    die(1, "%s: truncated .npy header (expected %zu bytes)", path, hlen);
  }
  text[hlen] = '\0';
  npy_header h;
  memset(&h, 0, sizeof h);
  const char *err = parse_npy_dict(text, &h);
  if (!err && h.dtype == BP_DTYPE_INVALID) {
    char descr[64] = "?";
    const char *d = strstr(text, "descr");
    if (d && (d = strchr(d, ':'))) parse_pystr(skip_ws(d + 1), descr, sizeof descr);
    free(text);
    fclose(f);
    die(1, "%s: dtype '%s' has no Backplane equivalent (supported: bool, int8, int16, int32, "
        "int64, uint8, float16, float32, float64)", path, descr);
  }
  free(text);
  if (err) {
    fclose(f);
    die(1, "%s: bad .npy header: %s", path, err);
  }
  /* Element strides of the file's order.  A shape whose element count
   * overflows is refused here, before the stride arithmetic would; the
   * host checks the byte size. */
  int64_t strides[BP_MAX_NDIM];
  int64_t s = 1;
  bool empty = false;
  for (int32_t i = 0; i < h.ndim; i++) empty |= h.sizes[i] == 0;
  for (int32_t k = 0; k < h.ndim; k++) {
    int32_t i = h.fortran ? k : h.ndim - 1 - k;
    strides[i] = s;
    int64_t next;
    if (__builtin_mul_overflow(s, h.sizes[i] ? h.sizes[i] : 1, &next)) {
      if (!empty) {
        fclose(f);
        die(1, "%s: the shape's element count overflows 64 bits (at dimension %d of %d)", path,
            (int)i, (int)h.ndim);
      }
      next = s; /* no elements: any strides do */
    }
    s = next;
  }
  /* The data must be in the file: checked before allocating, so that a
   * corrupt header cannot ask for more memory than the file holds. */
  uint64_t want = 0;
  if (!empty && __builtin_mul_overflow((uint64_t)s, (uint64_t)bp_dtype_size(h.dtype), &want)) {
    fclose(f);
    die(1, "%s: the data's byte size overflows 64 bits", path);
  }
  left = bytes_left(f);
  if (left >= 0 && want > (uint64_t)left) {
    fclose(f);
    die(1, "%s: truncated data: expected %" PRIu64 " bytes, got %" PRId64, path, want, left);
  }
  bp_tensor *t;
  if (bp_tensor_empty_strided(BP_CPU, h.dtype, h.ndim, h.ndim ? h.sizes : NULL,
                              h.ndim ? strides : NULL, &t) != BP_OK) {
    fclose(f);
    die(1, "%s: %s", path, bp_last_error());
  }
  own(t);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  size_t nbytes = (size_t)v->numel * (size_t)v->itemsize;
  got = nbytes ? fread(v->data, 1, nbytes, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != nbytes) die(1, "%s: truncated data: expected %zu bytes, got %zu", path, nbytes, got);
  if (extra) die(1, "%s: %zu bytes of data expected, the file has more", path, nbytes);
  if (h.swap) swap_bytes(v->data, (size_t)v->numel, (size_t)v->itemsize);
  if (h.dtype == BP_BOOL) {
    unsigned char *b = v->data;
    for (int64_t i = 0; i < v->numel; i++)
      if (b[i] > 1) die(1, "%s: bool element %" PRId64 " is %u, not 0 or 1", path, i, b[i]);
  }
  return t;
}

/* A contiguous CPU copy of t (t itself when it is one already), owned by
 * the program. */
static bp_tensor *to_host_contiguous(bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if (v->device.type == BP_DEVICE_CPU && bp_tensor_is_contiguous(t)) return t;
  bp_tensor *c;
  if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &c) != BP_OK ||
      (own(c), bp_tensor_copy(c, t)) != BP_OK)
    die(1, "copying a result to the host: %s", bp_last_error());
  return c;
}

/* Writes t as a .npy file, format 1.0 (2.0 for a header over 64 KiB). */
static void npy_write(const char *path, bp_tensor *t) {
  t = to_host_contiguous(t);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  const char *code = NULL;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dtype == v->dtype) code = npy_types[i].descr;
  if (!code)
    die(1, "%s: %s has no NumPy dtype; cast the result first (core::cast)", path,
        bp_dtype_name(v->dtype));
  char dict[1024];
  int len = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     v->itemsize == 1 ? '|' : host_is_little() ? '<' : '>', code);
  for (int32_t i = 0; i < v->ndim; i++)
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%" PRId64, i ? ", " : "", v->sizes[i]);
  len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", v->ndim == 1 ? "," : "");
  /* Pad with spaces and a newline so that the data starts 64-aligned. */
  size_t pre = 10;
  size_t total = ((pre + (size_t)len + 1 + 63) / 64) * 64;
  size_t hlen = total - pre;
  unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                            (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) die(1, "%s: cannot create: %s", path, strerror(errno));
  int ok = fwrite(head, 1, pre, f) == pre && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
  for (size_t i = (size_t)len; ok && i + 1 < hlen; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  size_t nbytes = (size_t)v->numel * (size_t)v->itemsize;
  if (ok && nbytes) ok = fwrite(v->data, 1, nbytes, f) == nbytes;
  if (fclose(f) != 0) ok = 0;
  if (!ok) die(1, "%s: write failed: %s", path, strerror(errno));
}

/* ------------------------------------------------------------------------ */
/* Printing values                                                          */
/* ------------------------------------------------------------------------ */

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f;
  double m = h & 0x3ff;
  double v;
  if (e == 0)
    v = m * (1.0 / 16777216.0);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = (1.0 + m / 1024.0) * ((e >= 15) ? (double)(1u << (e - 15)) : 1.0 / (double)(1u << (15 - e)));
  return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void print_element(const unsigned char *p, int32_t dtype) {
  switch (dtype) {
    case BP_BOOL: fputs(*p ? "true" : "false", stdout); break;
    case BP_INT8: printf("%d", *(const int8_t *)p); break;
    case BP_UINT8: printf("%u", *p); break;
    case BP_INT16: { int16_t x; memcpy(&x, p, 2); printf("%d", x); break; }
    case BP_INT32: { int32_t x; memcpy(&x, p, 4); printf("%" PRId32, x); break; }
    case BP_INT64: { int64_t x; memcpy(&x, p, 8); printf("%" PRId64, x); break; }
    case BP_FLOAT16: { uint16_t x; memcpy(&x, p, 2); printf("%.5g", half_to_double(x)); break; }
    case BP_BFLOAT16: { uint16_t x; memcpy(&x, p, 2); printf("%.4g", bf16_to_double(x)); break; }
    case BP_FLOAT32: { float x; memcpy(&x, p, 4); printf("%.9g", (double)x); break; }
    case BP_FLOAT64: { double x; memcpy(&x, p, 8); printf("%.17g", x); break; }
    default: fputs("?", stdout);
  }
}

/* Prints "float32[2, 3] cpu:0" and the elements in C order. */
static void print_tensor(const char *label, bp_tensor *t) {
  const bp_tensor_view *src = bp_tensor_get_view(t);
  char dev[48];
  const char *dn = bp_device_type_name(src->device.type);
  snprintf(dev, sizeof dev, "%s:%d", dn ? dn : "?", (int)src->device.index);
  t = to_host_contiguous(t);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  printf("%s: %s[", label, bp_dtype_name(v->dtype));
  for (int32_t i = 0; i < v->ndim; i++) printf("%s%" PRId64, i ? ", " : "", v->sizes[i]);
  printf("] %s\n ", dev);
  const unsigned char *p = v->data;
  for (int64_t i = 0; i < v->numel; i++) {
    putchar(' ');
    print_element(p + i * v->itemsize, v->dtype);
  }
  putchar('\n');
}

/* ------------------------------------------------------------------------ */
/* Schemas (the canonical text from bp_op_get_info)                         */
/* ------------------------------------------------------------------------ */

typedef struct param {
  char name[64];
  char base[16];   /* "Tensor", "int", "float", ... */
  int list;        /* T[] or T[N] */
  int optional;    /* T? */
  int kwonly;      /* after '*' */
} param;

/* Splits the schema's argument list into params; returns how many. */
static size_t parse_params(const char *schema, param *out, size_t max) {
  const char *p = strchr(schema, '(');
  if (!p) return 0;
  p++;
  size_t n = 0;
  int kwonly = 0;
  while (*p && *p != ')') {
    /* One parameter runs to the next ',' or ')' outside brackets and
     * quotes. */
    const char *start = skip_ws(p);
    int depth = 0;
    char quote = 0;
    for (p = start; *p; p++) {
      if (quote) {
        if (*p == '\\' && p[1]) p++;
        else if (*p == quote) quote = 0;
      } else if (*p == '"' || *p == '\'') {
        quote = *p;
      } else if (*p == '(' || *p == '[') {
        depth++;
      } else if ((*p == ')' || *p == ']') && depth > 0) {
        depth--;
      } else if ((*p == ',' || *p == ')') && depth == 0) {
        break;
      }
    }
    size_t len = (size_t)(p - start);
    if (len == 1 && *start == '*') {
      kwonly = 1;
    } else if (len > 0 && n < max) {
      param *a = &out[n++];
      memset(a, 0, sizeof *a);
      a->kwonly = kwonly;
      size_t b = 0;
      const char *q = start;
      while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z')) {
        if (b + 1 < sizeof a->base) a->base[b++] = *q;
        q++;
      }
      /* Alias annotation, list and optional markers. */
      for (; q < p && *q != ' '; q++) {
        if (*q == '(') {
          while (q < p && *q != ')') q++;
        } else if (*q == '[') {
          a->list = 1;
        } else if (*q == '?') {
          a->optional = 1;
        }
      }
      q = skip_ws(q);
      size_t k = 0;
      while (q < p && *q != '=' && *q != ' ') {
        if (k + 1 < sizeof a->name) a->name[k++] = *q;
        q++;
      }
    }
    if (*p == ',') p++;
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Arguments from text                                                      */
/* ------------------------------------------------------------------------ */

static bp_device target = {BP_DEVICE_CPU, 0};

static int device_type_by_name(const char *name, size_t len, int32_t *out) {
  for (int32_t type = 1; type < BP_DEVICE_DYNAMIC_FIRST + 64; type++) {
    if (type == 64) type = BP_DEVICE_DYNAMIC_FIRST;
    const char *n = bp_device_type_name(type);
    if (n && strlen(n) == len && !strncmp(n, name, len)) {
      *out = type;
      return 0;
    }
  }
  return -1;
}

/* "cpu", "cuda:1", ...: -1 for an unknown type, -2 for a bad index. */
static int parse_device(const char *text, bp_device *out) {
  const char *colon = strchr(text, ':');
  size_t len = colon ? (size_t)(colon - text) : strlen(text);
  int32_t type;
  if (device_type_by_name(text, len, &type) != 0) return -1;
  long index = 0;
  if (colon) {
    char *end;
    errno = 0;
    index = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || errno || index < 0 || index > INT32_MAX) return -2;
  }
  *out = bp_device_make(type, (int32_t)index);
  return 0;
}

static int parse_int(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno) return -1;
  *out = v;
  return 0;
}

static int parse_float(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

/* A tensor argument: the .npy file, on the target device. */
static bp_tensor *load_tensor(const char *path) {
  bp_tensor *t = npy_read(path);
  if (target.type == BP_DEVICE_CPU) return t;
  const bp_tensor_view *v = bp_tensor_get_view(t);
  bp_tensor *d;
  if (bp_tensor_empty(target, v->dtype, v->ndim, v->sizes, &d) != BP_OK)
    die(1, "%s: cannot create the tensor on the device: %s", path, bp_last_error());
  own(d);
  if (bp_tensor_copy(d, t) != BP_OK) die(1, "%s: cannot copy to the device: %s", path, bp_last_error());
  return d;
}

/* Counts the comma-separated items of a list written "1,2,3" or "[1, 2]". */
static char *list_body(const char *text, size_t *out_n) {
  size_t len = strlen(text);
  if (len >= 2 && text[0] == '[' && text[len - 1] == ']') {
    text++;
    len -= 2;
  }
  char *body = own_block(len + 1);
  memcpy(body, text, len);
  size_t n = 0;
  if (*skip_ws(body)) {
    n = 1;
    for (char *c = body; *c; c++) n += *c == ',';
  }
  *out_n = n;
  return body;
}

/* Converts the command-line text of argument `a` into a value. */
static void parse_value(const param *a, size_t index, const char *text, bp_value *out) {
  memset(out, 0, sizeof *out);
  if (a->optional && !strcmp(text, "None")) {
    out->tag = BP_TAG_NONE;
    return;
  }
  const char *what = NULL;
  if (a->list) {
    size_t n;
    char *body = list_body(text, &n);
    char *save = NULL;
    char *item = n ? strtok_r(body, ",", &save) : NULL;
    if (!strcmp(a->base, "Tensor")) {
      bp_tensor **ts = own_block(n * sizeof *ts);
      for (size_t i = 0; i < n; i++, item = strtok_r(NULL, ",", &save))
        ts[i] = load_tensor(item ? (char *)skip_ws(item) : "");
      out->tag = BP_TAG_TENSOR_LIST;
      out->u.tensors = ts;
    } else if (!strcmp(a->base, "float")) {
      double *fs = own_block(n * sizeof *fs);
      for (size_t i = 0; i < n; i++, item = strtok_r(NULL, ",", &save))
        if (!item || parse_float(skip_ws(item), &fs[i]) != 0) what = "a list of floats, like 0.5,2";
      out->tag = BP_TAG_FLOAT_LIST;
      out->u.floats = fs;
    } else {
      int64_t *is = own_block(n * sizeof *is);
      for (size_t i = 0; i < n; i++, item = strtok_r(NULL, ",", &save))
        if (!item || parse_int(skip_ws(item), &is[i]) != 0) what = "a list of ints, like 0,1";
      out->tag = BP_TAG_INT_LIST;
      out->u.ints = is;
    }
    out->len = (uint32_t)n;
  } else if (!strcmp(a->base, "Tensor")) {
    out->tag = BP_TAG_TENSOR;
    out->u.tensor = load_tensor(text);
  } else if (!strcmp(a->base, "int") || !strcmp(a->base, "SymInt")) {
    out->tag = BP_TAG_INT;
    if (parse_int(text, &out->u.i) != 0) what = "an int";
  } else if (!strcmp(a->base, "float")) {
    out->tag = BP_TAG_FLOAT;
    if (parse_float(text, &out->u.f) != 0) what = "a float";
  } else if (!strcmp(a->base, "bool")) {
    out->tag = BP_TAG_BOOL;
    if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "1"))
      out->u.b = true;
    else if (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "0"))
      out->u.b = false;
    else
      what = "a bool (true or false)";
  } else if (!strcmp(a->base, "str")) {
    out->tag = BP_TAG_STR;
    out->u.str = text;
    out->len = (uint32_t)strlen(text);
  } else if (!strcmp(a->base, "ScalarType")) {
    int32_t dt;
    out->tag = BP_TAG_SCALAR_TYPE;
    if (bp_dtype_from_name(text, &dt) != BP_OK) what = "a dtype name, like float32";
    out->u.i = dt;
  } else if (!strcmp(a->base, "Device")) {
    out->tag = BP_TAG_DEVICE;
    if (parse_device(text, &out->u.device) != 0) what = "a device, like cpu:0";
  } else {
    die(1, "argument #%zu '%s': type '%s' cannot be given on the command line", index + 1, a->name,
        a->base);
  }
  if (what) die(1, "argument #%zu '%s': expected %s, got '%s'", index + 1, a->name, what, text);
}

/* bp-run --write FILE DTYPE SIZES VALUES */
static void write_from_text(const char *path, const char *dtype_name, const char *sizes_text,
                            const char *values_text) {
  int32_t dtype;
  if (bp_dtype_from_name(dtype_name, &dtype) != BP_OK) die(2, "--write: unknown dtype '%s'", dtype_name);
  if (dtype == BP_FLOAT16 || dtype == BP_BFLOAT16)
    die(2, "--write: %s values cannot be given as text; write float32 and use core::cast", dtype_name);
  param ints = {"sizes", "int", 1, 0, 0}, floats = {"values", "float", 1, 0, 0};
  bp_value sv, vv;
  parse_value(&ints, 2, sizes_text, &sv);
  parse_value(&floats, 3, values_text, &vv);
  if (sv.len > BP_MAX_NDIM) die(2, "--write: at most %d sizes, got %u", BP_MAX_NDIM, sv.len);
  bp_tensor *t;
  if (bp_tensor_empty(BP_CPU, dtype, (int32_t)sv.len, sv.len ? sv.u.ints : NULL, &t) != BP_OK)
    die(1, "--write: %s", bp_last_error());
  own(t);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if ((int64_t)vv.len != v->numel)
    die(2, "--write: the sizes give %" PRId64 " elements, but %u values were given", v->numel, vv.len);
  unsigned char *p = v->data;
  double lo = -INFINITY, hi = INFINITY;
  switch (dtype) {
    case BP_BOOL: lo = 0, hi = 1; break;
    case BP_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
    case BP_UINT8: lo = 0, hi = UINT8_MAX; break;
    case BP_INT16: lo = INT16_MIN, hi = INT16_MAX; break;
    case BP_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
    case BP_INT64: lo = -9223372036854775808.0, hi = 9223372036854774784.0; break;
    default: break;
  }
  for (int64_t i = 0; i < v->numel; i++) {
    double x = vv.u.floats[i];
    if (!isinf(lo) && (!(x >= lo && x <= hi) || x != (double)(int64_t)x))
      die(2, "--write: value #%" PRId64 " (%g) is not a %s", i, x, dtype_name);
    switch (dtype) {
      case BP_BOOL: p[i] = x != 0; break;
      case BP_INT8: ((int8_t *)p)[i] = (int8_t)x; break;
      case BP_UINT8: p[i] = (uint8_t)x; break;
      case BP_INT16: ((int16_t *)(void *)p)[i] = (int16_t)x; break;
      case BP_INT32: ((int32_t *)(void *)p)[i] = (int32_t)x; break;
      case BP_INT64: ((int64_t *)(void *)p)[i] = (int64_t)x; break;
      case BP_FLOAT32: ((float *)(void *)p)[i] = (float)x; break;
      default: ((double *)(void *)p)[i] = x; break;
    }
  }
  npy_write(path, t);
}

/* ------------------------------------------------------------------------ */
/* Main                                                                     */
/* ------------------------------------------------------------------------ */

static int usage(FILE *f) {
  fputs("usage: bp-run [-p PLUGIN.so]... [--no-discover] [--device DEV] [--repeat N]\n"
        "              [-o OUT.npy]... OP [ARG]... [NAME=VALUE]...\n"
        "       bp-run --show FILE.npy...\n"
        "       bp-run --write FILE.npy DTYPE SIZES VALUES   (e.g. x.npy float32 2,2 1,2,3,4)\n"
        "Tensors are .npy files; other arguments are text (2.5, -1, true, float32,\n"
        "cpu:0, 0,1 for a list, None).  NAME=VALUE passes an argument by keyword.\n",
        f);
  return f == stderr ? 2 : 0;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Whether text is NAME=VALUE with NAME one of the schema's arguments. */
static const param *keyword_of(const char *text, const param *params, size_t n) {
  const char *eq = strchr(text, '=');
  if (!eq) return NULL;
  for (size_t i = 0; i < n; i++)
    if (strlen(params[i].name) == (size_t)(eq - text) && !strncmp(params[i].name, text, (size_t)(eq - text)))
      return &params[i];
  return NULL;
}

int main(int argc, char **argv) {
  const char *plugins[MAX_ARGS];
  size_t nplugins = 0;
  const char *outs[MAX_OUTS];
  size_t nouts = 0;
  const char *rest[MAX_ARGS];
  size_t nrest = 0;
  int discover = 1, show = 0;
  long repeat = 0;
  const char *device_text = NULL;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(stdout);
    if (!strcmp(a, "--no-discover")) {
      discover = 0;
    } else if (!strcmp(a, "--show")) {
      show = 1;
    } else if (!strcmp(a, "--write")) {
      if (i + 4 >= argc) die(2, "--write needs FILE.npy DTYPE SIZES VALUES");
      write_from_text(argv[i + 1], argv[i + 2], argv[i + 3], argv[i + 4]);
      cleanup();
      return 0;
    } else if (!strcmp(a, "-p") || !strcmp(a, "--plugin")) {
      if (!has_value) die(2, "%s needs a path", a);
      if (nplugins == MAX_ARGS) die(2, "too many plugins");
      plugins[nplugins++] = argv[++i];
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!has_value) die(2, "%s needs a file name", a);
      if (nouts == MAX_OUTS) die(2, "too many outputs (the most is %d)", MAX_OUTS);
      outs[nouts++] = argv[++i];
    } else if (!strcmp(a, "--device")) {
      if (!has_value) die(2, "--device needs a device, like cuda:0");
      device_text = argv[++i];
    } else if (!strcmp(a, "--repeat")) {
      char *end;
      if (!has_value) die(2, "--repeat needs a count");
      repeat = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || repeat < 1 || repeat > 100000000)
        die(2, "--repeat: expected a count from 1 to 100000000, got '%s'", argv[i]);
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "bp-run: unknown option '%s'\n", a);
      return usage(stderr);
    } else {
      if (nrest == MAX_ARGS) die(2, "too many arguments (the most is %d)", MAX_ARGS);
      rest[nrest++] = a;
    }
  }

  if (show) {
    if (nrest == 0) die(2, "--show needs .npy files");
    for (size_t i = 0; i < nrest; i++) print_tensor(rest[i], npy_read(rest[i]));
    cleanup();
    return 0;
  }
  if (nrest == 0) return usage(stderr);

  for (size_t i = 0; i < nplugins; i++)
    if (bp_plugin_load(plugins[i], NULL) != BP_OK) die(1, "%s", bp_last_error());
  if (discover && bp_plugin_discover(NULL) != BP_OK) die(1, "%s", bp_last_error());
  int dev_parse = device_text ? parse_device(device_text, &target) : 0;
  if (dev_parse == -1)
    die(2, "--device: no device type '%.*s' is registered (loaded plugins decide which exist)",
        (int)strcspn(device_text, ":"), device_text);
  if (dev_parse == -2)
    die(2, "--device: '%s' has no valid device index after the ':' (expected e.g. %.*s:0)",
        device_text, (int)strcspn(device_text, ":"), device_text);
  if (device_text) {
    int32_t count = 0;
    if (bp_device_count(target.type, &count) != BP_OK || target.index >= count)
      die(1, "--device %s: no such device (%d device%s of that type)", device_text, (int)count,
          count == 1 ? "" : "s");
  }

  const char *opname = rest[0];
  const bp_op *op;
  if (bp_op_find(opname, &op) != BP_OK) die(1, "%s", bp_last_error());
  bp_op_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_get_info(op, &info) != BP_OK || !info.schema)
    die(1, "operator '%s' is not defined (its plugin is not loaded)", opname);

  param params[MAX_ARGS];
  size_t nparams = parse_params(info.schema, params, MAX_ARGS);
  bp_value args[MAX_ARGS];
  const char *kwnames[MAX_ARGS];
  size_t npos = 0, nkw = 0;
  bp_value kwvals[MAX_ARGS];
  for (size_t i = 1; i < nrest; i++) {
    const param *kw = keyword_of(rest[i], params, nparams);
    if (kw) {
      parse_value(kw, (size_t)(kw - params), strchr(rest[i], '=') + 1, &kwvals[nkw]);
      kwnames[nkw++] = kw->name;
      continue;
    }
    if (nkw) die(2, "argument '%s': a positional argument follows a keyword argument", rest[i]);
    if (npos >= nparams || params[npos].kwonly) {
      /* Say what went wrong: a misspelt keyword, or a keyword-only
       * argument given by position. */
      size_t nl = strspn(rest[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
      if (nl > 0 && rest[i][nl] == '=')
        die(2, "%s: no argument named '%.*s' (schema: %s)", opname, (int)nl, rest[i], info.schema);
      if (npos < nparams)
        die(2, "%s: argument #%zu '%s' is keyword-only: write %s=%s (schema: %s)", opname,
            npos + 1, params[npos].name, params[npos].name, rest[i], info.schema);
      die(2, "%s: too many positional arguments (schema: %s)", opname, info.schema);
    }
    parse_value(&params[npos], npos, rest[i], &args[npos]);
    npos++;
  }
  for (size_t i = 0; i < nkw; i++) args[npos + i] = kwvals[i];
  size_t nin = npos + nkw;

  bp_value slots[MAX_ARGS + MAX_OUTS];
  bp_stack stack = BP_STACK_INIT(slots, MAX_ARGS + MAX_OUTS);
  long calls = repeat ? repeat : 1;
  double *times = calloc((size_t)calls, sizeof *times);
  if (!times) die(1, "out of memory");
  for (long r = 0; r < calls; r++) {
    if (r > 0) bp_stack_release(&stack);
    memcpy(slots, args, nin * sizeof args[0]);
    stack.top = nin;
    double t0 = now_us();
    bp_status st = bp_call_kw(op, &stack, kwnames, nkw);
    times[r] = now_us() - t0;
    if (st != BP_OK) {
      free(times);
      die(1, "%s", bp_last_error());
    }
  }

  /* Results: Tensors to the -o files in order, the rest printed. */
  size_t tensor_index = 0;
  for (size_t i = 0; i < stack.top; i++) {
    bp_value *v = &stack.values[i];
    char label[32];
    snprintf(label, sizeof label, "result %zu", i);
    switch (v->tag) {
      case BP_TAG_TENSOR:
        if (tensor_index < nouts)
          npy_write(outs[tensor_index], v->u.tensor);
        else
          print_tensor(label, v->u.tensor);
        tensor_index++;
        break;
      case BP_TAG_INT: printf("%s: int %" PRId64 "\n", label, v->u.i); break;
      case BP_TAG_FLOAT: printf("%s: float %.17g\n", label, v->u.f); break;
      case BP_TAG_BOOL: printf("%s: bool %s\n", label, v->u.b ? "true" : "false"); break;
      case BP_TAG_SCALAR_TYPE: printf("%s: ScalarType %s\n", label, bp_dtype_name((int32_t)v->u.i)); break;
      case BP_TAG_NONE: printf("%s: None\n", label); break;
      default: printf("%s: %s\n", label, bp_tag_name((int32_t)v->tag));
    }
  }
  bp_stack_release(&stack);
  int status = 0;
  if (tensor_index < nouts) {
    fprintf(stderr, "bp-run: %zu output files given, but %s returned %zu tensors\n", nouts, opname,
            tensor_index);
    status = 1;
  }
  if (repeat) {
    qsort(times, (size_t)calls, sizeof *times, cmp_double);
    double sum = 0;
    for (long r = 0; r < calls; r++) sum += times[r];
    printf("timing: %ld calls, min %.2f us, median %.2f us, mean %.2f us\n", calls, times[0],
           times[calls / 2], sum / (double)calls);
  }
  free(times);
  cleanup();
  return status;
}
