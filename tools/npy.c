/*
 * tools/npy.c - the .npy reader and writer (npy.h).  Every failure is a
 * status and one line in the caller's buffer; the reader checks each
 * length the file states against the file's size before it allocates.
 */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_PREFIX 10 /* magic, version, two bytes of header length (1.0) */

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

static npy_status fail(npy_status st, char *err, size_t errlen, const char *fmt, ...)
    BP_PRINTF_LIKE(4, 5);
static npy_status fail(npy_status st, char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return st;
}

/* The plural ending of a count of n bytes. */
static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

static int host_is_little(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

typedef struct npy_header {
  int32_t dtype;
  int swap; /* the data's byte order is not the machine's */
  int fortran;
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
  char descr[32];
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
 * wrong.  A descr that is a string but names no Backplane dtype is not an
 * error here: h->dtype is BP_DTYPE_INVALID and h->descr says what it was. */
static const char *parse_dict(const char *p, npy_header *h) {
  int have_descr = 0, have_order = 0, have_shape = 0;
  char key[32];
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
      if (!(p = parse_pystr(p, h->descr, sizeof h->descr)))
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
  char order = h->descr[0];
  const char *code = h->descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') return "unknown byte order in descr";
  h->dtype = BP_DTYPE_INVALID;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (!strcmp(code, npy_types[i].descr)) h->dtype = npy_types[i].dtype;
  h->swap = h->dtype != BP_DTYPE_INVALID && bp_dtype_size(h->dtype) > 1 &&
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

/* Reads the prefix and the header dict of the open file f into h; leaves f
 * at the first byte of data. */
static npy_status read_header(FILE *f, const char *path, npy_header *h, char *err, size_t errlen) {
  unsigned char pre[12];
  size_t got = fread(pre, 1, NPY_PREFIX, f);
  if (memcmp(pre, NPY_MAGIC, got < 6 ? got : 6) != 0)
    return fail(NPY_ERR_FORMAT, err, errlen, "%s: not a .npy file (no \\x93NUMPY magic)", path);
  if (got < NPY_PREFIX)
    return fail(NPY_ERR_TRUNCATED, err, errlen,
                "%s: truncated .npy file: the format's prefix is %d bytes, the file has %zu", path,
                NPY_PREFIX, got);
  unsigned major = pre[6];
  size_t hlen;
  if (major == 1) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  } else if (major == 2 || major == 3) {
    size_t more = fread(pre + NPY_PREFIX, 1, 2, f);
    if (more != 2)
      return fail(NPY_ERR_TRUNCATED, err, errlen,
                  "%s: truncated .npy header: the format %u.%u prefix is 12 bytes, the file has %zu",
                  path, major, pre[7], NPY_PREFIX + more);
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  } else {
    return fail(NPY_ERR_UNSUPPORTED, err, errlen,
                "%s: unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)", path,
                major, pre[7]);
  }
  /* The header length comes from the file: check it against the file's
   * size before allocating that much. */
  int64_t left = bytes_left(f);
  if (left >= 0 && (uint64_t)hlen > (uint64_t)left)
    return fail(NPY_ERR_TRUNCATED, err, errlen,
                "%s: truncated .npy header: it claims %zu byte%s, the file has %" PRId64
                " after the prefix",
                path, hlen, plural(hlen), left);
  char *text = malloc(hlen + 1);
  if (!text)
    return fail(NPY_ERR_NOMEM, err, errlen, "%s: out of memory for a .npy header of %zu byte%s",
                path, hlen, plural(hlen));
  got = fread(text, 1, hlen, f);
  if (got != hlen) {
    free(text);
    return fail(NPY_ERR_TRUNCATED, err, errlen,
                "%s: truncated .npy header: it claims %zu byte%s, the file has %zu after the prefix",
                path, hlen, plural(hlen), got);
  }
  text[hlen] = '\0';
  const char *why = parse_dict(text, h);
  free(text);
  if (why) return fail(NPY_ERR_FORMAT, err, errlen, "%s: bad .npy header: %s", path, why);
  if (h->dtype == BP_DTYPE_INVALID) {
    /* The file's bytes, quoted on one line: control bytes as \xNN. */
    char shown[4 * sizeof h->descr];
    size_t k = 0;
    for (const unsigned char *c = (const unsigned char *)h->descr; *c && k + 5 < sizeof shown; c++)
      k += (size_t)snprintf(shown + k, sizeof shown - k, *c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c",
                            *c);
    shown[k] = '\0';
    return fail(NPY_ERR_UNSUPPORTED, err, errlen,
                "%s: dtype '%s' has no Backplane equivalent (supported: bool, int8, int16, "
                "int32, int64, uint8, float16, float32, float64)",
                path, shown);
  }
  return NPY_OK;
}

/* Element strides of the file's order, and the data's byte count. */
static npy_status layout(const npy_header *h, const char *path, int64_t *strides, uint64_t *nbytes,
                         char *err, size_t errlen) {
  /* A shape whose element count overflows is refused here, before the
   * stride arithmetic would; the host checks the byte size. */
  int64_t s = 1;
  bool empty = false;
  for (int32_t i = 0; i < h->ndim; i++) empty |= h->sizes[i] == 0;
  for (int32_t k = 0; k < h->ndim; k++) {
    int32_t i = h->fortran ? k : h->ndim - 1 - k;
    strides[i] = s;
    int64_t next;
    if (__builtin_mul_overflow(s, h->sizes[i] ? h->sizes[i] : 1, &next)) {
      if (!empty)
        return fail(NPY_ERR_OVERFLOW, err, errlen,
                    "%s: the shape's element count overflows 64 bits (at dimension %d of %d)",
                    path, (int)i, (int)h->ndim);
      next = s; /* no elements: any strides do */
    }
    s = next;
  }
  *nbytes = 0;
  if (!empty && __builtin_mul_overflow((uint64_t)s, (uint64_t)bp_dtype_size(h->dtype), nbytes))
    return fail(NPY_ERR_OVERFLOW, err, errlen, "%s: the data's byte size overflows 64 bits", path);
  return NPY_OK;
}

/* Reads the data of t (nbytes of them) from f and checks that the file
 * ends there and that bools are 0 or 1. */
static npy_status read_data(FILE *f, const char *path, const npy_header *h, bp_tensor *t,
                            char *err, size_t errlen) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  size_t nbytes = (size_t)v->numel * (size_t)v->itemsize;
  size_t got = nbytes ? fread(v->data, 1, nbytes, f) : 0;
  if (got != nbytes)
    return fail(NPY_ERR_TRUNCATED, err, errlen, "%s: truncated data: expected %zu byte%s, got %zu",
                path, nbytes, plural(nbytes), got);
  if (fgetc(f) != EOF)
    return fail(NPY_ERR_FORMAT, err, errlen, "%s: %zu byte%s of data expected, the file has more",
                path, nbytes, plural(nbytes));
  if (h->swap) swap_bytes(v->data, (size_t)v->numel, (size_t)v->itemsize);
  if (h->dtype == BP_BOOL) {
    const unsigned char *b = v->data;
    for (int64_t i = 0; i < v->numel; i++)
      if (b[i] > 1)
        return fail(NPY_ERR_FORMAT, err, errlen, "%s: bool element %" PRId64 " is %u, not 0 or 1",
                    path, i, b[i]);
  }
  return NPY_OK;
}

npy_status npy_read(const char *path, bp_tensor **out, char *err, size_t errlen) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return fail(NPY_ERR_IO, err, errlen, "%s: cannot open: %s", path, strerror(errno));
  npy_header h;
  memset(&h, 0, sizeof h);
  int64_t strides[BP_MAX_NDIM];
  uint64_t want = 0;
  npy_status st = read_header(f, path, &h, err, errlen);
  if (st == NPY_OK) st = layout(&h, path, strides, &want, err, errlen);
  /* The data must be in the file: checked before allocating, so that a
   * corrupt header cannot ask for more memory than the file holds. */
  int64_t left = bytes_left(f);
  if (st == NPY_OK && left >= 0 && want > (uint64_t)left)
    st = fail(NPY_ERR_TRUNCATED, err, errlen,
              "%s: truncated data: expected %" PRIu64 " byte%s, got %" PRId64, path, want,
              plural(want), left);
  bp_tensor *t = NULL;
  if (st == NPY_OK && bp_tensor_empty_strided(BP_CPU, h.dtype, h.ndim, h.ndim ? h.sizes : NULL,
                                              h.ndim ? strides : NULL, &t) != BP_OK)
    st = fail(NPY_ERR_HOST, err, errlen, "%s: %s", path, bp_last_error());
  if (st == NPY_OK) st = read_data(f, path, &h, t, err, errlen);
  fclose(f);
  if (st != NPY_OK) {
    bp_tensor_release(t);
    return st;
  }
  *out = t;
  return NPY_OK;
}

npy_status npy_write(const char *path, bp_tensor *t, char *err, size_t errlen) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  const char *code = NULL;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dtype == v->dtype) code = npy_types[i].descr;
  if (!code)
    return fail(NPY_ERR_UNSUPPORTED, err, errlen,
                "%s: %s has no NumPy dtype; cast the result first (core::cast)", path,
                bp_dtype_name(v->dtype));
  /* The bytes go out in C order from host memory. */
  bp_tensor *host = NULL;
  if (v->device.type != BP_DEVICE_CPU || !bp_tensor_is_contiguous(t)) {
    if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &host) != BP_OK ||
        bp_tensor_copy(host, t) != BP_OK) {
      npy_status st = fail(NPY_ERR_HOST, err, errlen, "%s: copying the tensor to the host: %s",
                           path, bp_last_error());
      bp_tensor_release(host);
      return st;
    }
    v = bp_tensor_get_view(host);
  }
  char dict[1024];
  int len = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     v->itemsize == 1 ? '|' : host_is_little() ? '<' : '>', code);
  for (int32_t i = 0; i < v->ndim; i++)
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%" PRId64, i ? ", " : "", v->sizes[i]);
  len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", v->ndim == 1 ? "," : "");
  /* Pad with spaces and a newline so that the data starts 64-aligned. */
  size_t total = ((NPY_PREFIX + (size_t)len + 1 + 63) / 64) * 64;
  size_t hlen = total - NPY_PREFIX;
  unsigned char head[NPY_PREFIX] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                    (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
  npy_status st = NPY_OK;
  FILE *f = fopen(path, "wb");
  if (!f) {
    st = fail(NPY_ERR_IO, err, errlen, "%s: cannot create: %s", path, strerror(errno));
  } else {
    int ok = fwrite(head, 1, NPY_PREFIX, f) == NPY_PREFIX &&
             fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = (size_t)len; ok && i + 1 < hlen; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    size_t nbytes = (size_t)v->numel * (size_t)v->itemsize;
    if (ok && nbytes) ok = fwrite(v->data, 1, nbytes, f) == nbytes;
    if (fclose(f) != 0) ok = 0;
    if (!ok) st = fail(NPY_ERR_IO, err, errlen, "%s: write failed: %s", path, strerror(errno));
  }
  bp_tensor_release(host);
  return st;
}
