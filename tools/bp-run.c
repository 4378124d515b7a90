/*
 * tools/bp-run.c - calls any Backplane operator from the command line.
 *
 *   bp-run [OPTIONS] OP [ARG ...] [NAME=VALUE ...]
 *   bp-run --show FILE.npy ...
 *   bp-run --write FILE.npy DTYPE SIZES VALUES
 *
 * Tensors are read from NumPy .npy files (tools/npy.h) and results are
 * written to .npy files (-o, once per Tensor result, in order) or printed.
 * Other arguments are written as text (tools/argtext.h): 2.5, -1, true,
 * float32, cpu:0, 0,1 or [0, 1] (a list), None (an optional argument left
 * out).  NAME=VALUE passes the schema argument NAME by keyword.
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
 * Every failure prints one line, "bp-run: ...", with any control
 * character in it escaped (tools/termsafe.h), and exits with 2 when the
 * command line is wrong (an option, the count of arguments or of -o files
 * against the op's schema, a keyword, a value that does not read as its
 * type) or 1 when something else failed (a file, a plugin, the call).  The
 * command line is checked in full before any file is read or written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/host.h>

#include "argtext.h"
#include "npy.h"
#include "termsafe.h"
#include "clock.h"

#define MAX_ARGS 64
#define MAX_OUTS 16
#define MAX_TENSORS 256

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef argtext_param param;

/* ------------------------------------------------------------------------ */
/* Errors and cleanup                                                       */
/* ------------------------------------------------------------------------ */

/* Every tensor the program creates, released at exit; and every list
 * array it allocates, freed at exit. */
static bp_tensor *owned[MAX_TENSORS];
static size_t nowned;
static void *blocks[3 * MAX_ARGS + 8];
static size_t nblocks;

static void cleanup(void) {
  for (size_t i = 0; i < nowned; i++) bp_tensor_release(owned[i]);
  nowned = 0;
  for (size_t i = 0; i < nblocks; i++) free(blocks[i]);
  nblocks = 0;
}

/* Prints one line of error, escaped, and exits with `code`. */
static _Noreturn void die(int code, const char *fmt, ...) BP_PRINTF_LIKE(2, 3);
static _Noreturn void die(int code, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "bp-run: %s\n", termsafe(msg));
  cleanup();
  exit(code);
}

/* "a" or "an" before a dtype or type name: "an int8", "a uint8". */
static const char *article(const char *name) {
  return strchr("aeioAEIO", name[0]) && name[0] ? "an" : "a";
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

/* Keeps t until exit and returns it. */
static bp_tensor *own(bp_tensor *t) {
  if (nowned == MAX_TENSORS) die(EXIT_FAILED, "too many tensors (the most is %d)", MAX_TENSORS);
  owned[nowned++] = t;
  return t;
}

/* Keeps p, from malloc(), until exit and returns it. */
static void *keep(void *p) {
  if (!p) die(EXIT_FAILED, "out of memory");
  if (nblocks == sizeof blocks / sizeof blocks[0]) die(EXIT_USAGE, "too many list arguments");
  blocks[nblocks++] = p;
  return p;
}

static void *own_block(size_t nbytes) { return keep(calloc(1, nbytes ? nbytes : 1)); }

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
  const bp_tensor_view *v = bp_tensor_get_view(t);
  const char *dn = bp_device_type_name(v->device.type);
  printf("%s: %s[", termsafe(label), bp_dtype_name(v->dtype));
  for (int32_t i = 0; i < v->ndim; i++) printf("%s%" PRId64, i ? ", " : "", v->sizes[i]);
  printf("] %s:%d\n ", dn ? termsafe(dn) : "?", (int)v->device.index);
  if (v->device.type != BP_DEVICE_CPU || !bp_tensor_is_contiguous(t)) {
    bp_tensor *c;
    if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &c) != BP_OK ||
        (own(c), bp_tensor_copy(c, t)) != BP_OK)
      die(EXIT_FAILED, "copying a result to the host: %s", bp_last_error());
    v = bp_tensor_get_view(c);
  }
  const unsigned char *p = v->data;
  for (int64_t i = 0; i < v->numel; i++) {
    putchar(' ');
    print_element(p + i * v->itemsize, v->dtype);
  }
  putchar('\n');
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
  int64_t index = 0;
  if (colon && (argtext_int(colon + 1, &index) != ARGTEXT_OK || index < 0 || index > INT32_MAX))
    return -2;
  *out = bp_device_make(type, (int32_t)index);
  return 0;
}

/* A tensor argument: the .npy file, on the target device. */
static bp_tensor *load_tensor(const char *path) {
  bp_tensor *t;
  char err[1024];
  if (npy_read(path, &t, err, sizeof err) != NPY_OK) die(EXIT_FAILED, "%s", err);
  own(t);
  if (target.type == BP_DEVICE_CPU) return t;
  const bp_tensor_view *v = bp_tensor_get_view(t);
  bp_tensor *d;
  if (bp_tensor_empty(target, v->dtype, v->ndim, v->sizes, &d) != BP_OK)
    die(EXIT_FAILED, "%s: cannot create the tensor on the device: %s", path, bp_last_error());
  own(d);
  if (bp_tensor_copy(d, t) != BP_OK)
    die(EXIT_FAILED, "%s: cannot copy to the device: %s", path, bp_last_error());
  return d;
}

/* The items of a list argument, in a block kept until exit. */
static char **list_items(const char *text, size_t *n) {
  char *copy = own_block(strlen(text) + 1);
  strcpy(copy, text);
  return keep(argtext_split_list(copy, n));
}

static const char *range_note(int r) { return r == ARGTEXT_RANGE ? " (out of range)" : ""; }

/* Converts the command-line text of argument `a` into a value. */
static void parse_value(const param *a, size_t index, const char *text, bp_value *out) {
  memset(out, 0, sizeof *out);
  if (a->optional && !strcmp(text, "None")) {
    out->tag = BP_TAG_NONE;
    return;
  }
  const char *what = NULL;
  int r = ARGTEXT_OK;
  if (a->list) {
    size_t n;
    char **items = list_items(text, &n);
    if (!strcmp(a->base, "Tensor")) {
      bp_tensor **ts = own_block(n * sizeof *ts);
      for (size_t i = 0; i < n; i++) ts[i] = load_tensor(items[i]);
      out->tag = BP_TAG_TENSOR_LIST;
      out->u.tensors = ts;
    } else if (!strcmp(a->base, "float")) {
      double *fs = own_block(n * sizeof *fs);
      for (size_t i = 0; i < n && !what; i++)
        if ((r = argtext_float(items[i], &fs[i])) != ARGTEXT_OK) what = "a list of floats, like 0.5,2";
      out->tag = BP_TAG_FLOAT_LIST;
      out->u.floats = fs;
    } else {
      int64_t *is = own_block(n * sizeof *is);
      for (size_t i = 0; i < n && !what; i++)
        if ((r = argtext_int(items[i], &is[i])) != ARGTEXT_OK) what = "a list of ints, like 0,1";
      out->tag = BP_TAG_INT_LIST;
      out->u.ints = is;
    }
    out->len = (uint32_t)n;
  } else if (!strcmp(a->base, "Tensor")) {
    out->tag = BP_TAG_TENSOR;
    out->u.tensor = load_tensor(text);
  } else if (!strcmp(a->base, "int") || !strcmp(a->base, "SymInt")) {
    out->tag = BP_TAG_INT;
    if ((r = argtext_int(text, &out->u.i)) != ARGTEXT_OK) what = "an int";
  } else if (!strcmp(a->base, "float")) {
    out->tag = BP_TAG_FLOAT;
    if ((r = argtext_float(text, &out->u.f)) != ARGTEXT_OK) what = "a float";
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
  } else if (!strcmp(a->base, "Scalar")) {
    /* A number as written: 2 is an int, 2.0 (or nan, inf) a float, and
     * true or false a bool. */
    if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "false") ||
        !strcmp(text, "False")) {
      out->tag = BP_TAG_BOOL;
      out->u.b = text[0] == 't' || text[0] == 'T';
    } else if ((r = argtext_int(text, &out->u.i)) == ARGTEXT_OK) {
      out->tag = BP_TAG_INT;
    } else if (r == ARGTEXT_SYNTAX && (r = argtext_float(text, &out->u.f)) == ARGTEXT_OK) {
      out->tag = BP_TAG_FLOAT;
    } else {
      what = "a number, true or false";
    }
  } else if (!strcmp(a->base, "ScalarType")) {
    int32_t dt;
    out->tag = BP_TAG_SCALAR_TYPE;
    if (bp_dtype_from_name(text, &dt) != BP_OK) what = "a dtype name, like float32";
    out->u.i = dt;
  } else if (!strcmp(a->base, "Device")) {
    out->tag = BP_TAG_DEVICE;
    if (parse_device(text, &out->u.device) != 0) what = "a device, like cpu:0";
  } else {
    die(EXIT_USAGE, "argument #%zu '%s': type '%s' cannot be given on the command line",
        index, a->name, a->base);
  }
  if (what)
    die(EXIT_USAGE, "argument #%zu '%s': expected %s, got '%s'%s", index, a->name, what, text,
        range_note(r));
}

/* ------------------------------------------------------------------------ */
/* bp-run --write FILE DTYPE SIZES VALUES                                   */
/* ------------------------------------------------------------------------ */

/* Stores the text of value #i into element i of p, a dtype array. */
static void store_value(unsigned char *p, int64_t i, int32_t dtype, const char *dname, const char *text) {
  int64_t lo = 0, hi = 0, x = 0;
  double f = 0;
  int r = ARGTEXT_OK;
  switch (dtype) {
    case BP_FLOAT32:
    case BP_FLOAT64:
      if ((r = argtext_float(text, &f)) != ARGTEXT_OK)
        die(EXIT_USAGE, "--write: value #%" PRId64 " '%s' is not %s %s%s", i, text, article(dname),
            dname, range_note(r));
      /* A float that is finite as a double but not as a float32 would be
       * stored as an infinity. */
      if (dtype == BP_FLOAT32 && isinf((float)f) && !isinf(f))
        die(EXIT_USAGE, "--write: value #%" PRId64 " (%s) is out of range for float32 (the largest "
            "finite float32 is %.9g)", i, text, (double)FLT_MAX);
      if (dtype == BP_FLOAT32)
        ((float *)(void *)p)[i] = (float)f;
      else
        ((double *)(void *)p)[i] = f;
      return;
    case BP_BOOL:
      if (!strcmp(text, "true") || !strcmp(text, "True")) text = "1";
      if (!strcmp(text, "false") || !strcmp(text, "False")) text = "0";
      hi = 1;
      break;
    case BP_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
    case BP_UINT8: hi = UINT8_MAX; break;
    case BP_INT16: lo = INT16_MIN, hi = INT16_MAX; break;
    case BP_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
    default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
  if ((r = argtext_int(text, &x)) != ARGTEXT_OK || x < lo || x > hi)
    die(EXIT_USAGE, "--write: value #%" PRId64 " (%s) is not %s %s (an integer from %" PRId64
        " to %" PRId64 ")", i, text, article(dname), dname, lo, hi);
  switch (dtype) {
    case BP_BOOL:
    case BP_UINT8: p[i] = (uint8_t)x; break;
    case BP_INT8: ((int8_t *)p)[i] = (int8_t)x; break;
    case BP_INT16: ((int16_t *)(void *)p)[i] = (int16_t)x; break;
    case BP_INT32: ((int32_t *)(void *)p)[i] = (int32_t)x; break;
    default: ((int64_t *)(void *)p)[i] = x; break;
  }
}

static void write_from_text(const char *path, const char *dname, const char *sizes_text,
                            const char *values_text) {
  int32_t dtype;
  if (bp_dtype_from_name(dname, &dtype) != BP_OK)
    die(EXIT_USAGE, "--write: unknown dtype '%s'", dname);
  if (dtype == BP_FLOAT16 || dtype == BP_BFLOAT16)
    die(EXIT_USAGE, "--write: %s values cannot be given as text; write float32 and use core::cast",
        dname);
  size_t ndim, nvalues;
  char **sizes = list_items(sizes_text, &ndim);
  char **values = list_items(values_text, &nvalues);
  if (ndim > BP_MAX_NDIM) die(EXIT_USAGE, "--write: at most %d sizes, got %zu", BP_MAX_NDIM, ndim);
  int64_t shape[BP_MAX_NDIM];
  for (size_t i = 0; i < ndim; i++)
    if (argtext_int(sizes[i], &shape[i]) != ARGTEXT_OK || shape[i] < 0)
      die(EXIT_USAGE, "--write: size #%zu '%s' is not a size (an integer from 0)", i, sizes[i]);
  bp_tensor *t;
  if (bp_tensor_empty(BP_CPU, dtype, (int32_t)ndim, ndim ? shape : NULL, &t) != BP_OK)
    die(EXIT_FAILED, "--write: %s", bp_last_error());
  own(t);
  const bp_tensor_view *v = bp_tensor_get_view(t);
  if ((int64_t)nvalues != v->numel)
    die(EXIT_USAGE, "--write: the sizes give %" PRId64 " element%s, but %zu value%s given",
        v->numel, plural((size_t)v->numel), nvalues, nvalues == 1 ? " was" : "s were");
  for (int64_t i = 0; i < v->numel; i++) store_value(v->data, i, dtype, dname, values[i]);
  char err[1024];
  if (npy_write(path, t, err, sizeof err) != NPY_OK) die(EXIT_FAILED, "%s", err);
}

/* ------------------------------------------------------------------------ */
/* The command line of a call                                               */
/* ------------------------------------------------------------------------ */

static int usage(FILE *f) {
  fputs("usage: bp-run [-p PLUGIN.so]... [--no-discover] [--device DEV] [--repeat N]\n"
        "              [-o OUT.npy]... OP [ARG]... [NAME=VALUE]...\n"
        "       bp-run --show FILE.npy...\n"
        "       bp-run --write FILE.npy DTYPE SIZES VALUES   (e.g. x.npy float32 2,2 1,2,3,4)\n"
        "Tensors are .npy files; other arguments are text (2.5, -1, true, float32,\n"
        "cpu:0, 0,1 or [0, 1] for a list, None).  NAME=VALUE passes an argument by\n"
        "keyword; -- ends the options.\n"
        "Exit status: 0 on success, 1 when the call or a file failed, 2 when the\n"
        "command line is wrong (an option, an argument count, a keyword, a value that\n"
        "does not read as its type, or -o files that do not fit the op's results).\n",
        f);
  return f == stderr ? EXIT_USAGE : 0;
}

/* The length of NAME when text is NAME=VALUE with NAME an identifier,
 * else 0.  Such an argument is always a keyword, never a positional str
 * value ("approximate=x=y" passes the str "x=y"). */
static size_t keyword_len(const char *text) {
  size_t n = strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
  return n > 0 && (text[0] < '0' || text[0] > '9') && text[n] == '=' ? n : 0;
}

/* The op's arguments, given by position or keyword, checked against its
 * schema before any value is read. */
typedef struct call_args {
  const char *text[MAX_ARGS]; /* by parameter: the text given, or NULL */
  size_t npos;                /* how many were given by position */
} call_args;

static void assign_args(const char *opname, const char *schema, const param *params,
                        size_t nparams, const char *const *rest, size_t nrest, call_args *ca) {
  memset(ca, 0, sizeof *ca);
  int seen_keyword = 0;
  for (size_t i = 0; i < nrest; i++) {
    size_t kl = keyword_len(rest[i]);
    if (kl) {
      size_t k = 0;
      while (k < nparams && (strlen(params[k].name) != kl || strncmp(params[k].name, rest[i], kl)))
        k++;
      if (k == nparams)
        die(EXIT_USAGE, "%s: no argument named '%.*s' (schema: %s)", opname, (int)kl, rest[i], schema);
      if (ca->text[k])
        die(EXIT_USAGE, "%s: argument #%zu '%s' is given twice (schema: %s)", opname, k,
            params[k].name, schema);
      ca->text[k] = rest[i] + kl + 1;
      seen_keyword = 1;
      continue;
    }
    if (seen_keyword)
      die(EXIT_USAGE, "argument '%s': a positional argument follows a keyword argument", rest[i]);
    size_t k = ca->npos;
    if (k < nparams && params[k].kwonly)
      die(EXIT_USAGE, "%s: argument #%zu '%s' is keyword-only: write %s=%s (schema: %s)", opname,
          k, params[k].name, params[k].name, rest[i], schema);
    if (k >= nparams) {
      size_t given = k;
      while (i < nrest && !keyword_len(rest[i++])) given++;
      die(EXIT_USAGE, "%s: too many positional arguments: %zu given, it takes %zu (schema: %s)",
          opname, given, nparams, schema);
    }
    ca->text[k] = rest[i];
    ca->npos++;
  }
  for (size_t k = 0; k < nparams; k++)
    if (!ca->text[k] && !params[k].has_default)
      die(EXIT_USAGE, "%s: argument #%zu '%s' is missing (schema: %s)", opname, k,
          params[k].name, schema);
}

/* The base type's name of a value tag, as the schema spells it. */
static const char *base_of(int32_t tag) {
  switch (tag) {
    case BP_TAG_TENSOR:
    case BP_TAG_TENSOR_LIST: return "Tensor";
    case BP_TAG_INT:
    case BP_TAG_INT_LIST: return "int";
    case BP_TAG_FLOAT:
    case BP_TAG_FLOAT_LIST: return "float";
    case BP_TAG_BOOL: return "bool";
    case BP_TAG_STR: return "str";
    case BP_TAG_SCALAR_TYPE: return "ScalarType";
    case BP_TAG_DEVICE: return "Device";
    case BP_TAG_SCALAR: return "Scalar";
    default: return "?";
  }
}

/* The op's arguments, as libbackplane describes them (bp_op_get_arg), at
 * most max of them; returns how many there are. */
static size_t op_params(const bp_op *op, param *out, size_t max) {
  size_t n = 0;
  bp_arg_info a;
  for (; n < max; n++) {
    memset(&a, 0, sizeof a);
    a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    if (bp_op_get_arg(op, n, &a) != BP_OK) break;
    param *p = &out[n];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", a.name);
    snprintf(p->base, sizeof p->base, "%s", base_of(a.tag));
    p->list = (a.flags & BP_ARG_LIST) != 0;
    p->optional = (a.flags & BP_ARG_OPTIONAL) != 0;
    p->kwonly = (a.flags & BP_ARG_KWARG_ONLY) != 0;
    p->has_default = (a.flags & BP_ARG_HAS_DEFAULT) != 0;
  }
  bp_clear_error();
  return n;
}

/* How many Tensor (or Tensor?) results the op has, or -1 when a Tensor[]
 * result makes the count known only after the call. */
static int tensor_results(const bp_op *op) {
  int count = 0;
  bp_arg_info a;
  for (size_t j = 0;; j++) {
    memset(&a, 0, sizeof a);
    a.struct_size = BP_ARG_INFO_STRUCT_SIZE;
    if (bp_op_get_ret(op, j, &a) != BP_OK) break;
    if (a.tag == BP_TAG_TENSOR_LIST) return -1;
    count += a.tag == BP_TAG_TENSOR;
  }
  bp_clear_error();
  return count;
}

/* Refuses -o files that cannot all be written: more than the op has
 * Tensor results, or one file twice. */
static void check_outputs(const bp_op *op, const char *opname, const char *schema,
                          const char *const *outs, size_t nouts) {
  for (size_t i = 0; i < nouts; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(outs[i], outs[j]))
        die(EXIT_USAGE, "-o %s is given twice: each result needs a file of its own", outs[i]);
  int nres = tensor_results(op);
  if (nres >= 0 && nouts > (size_t)nres)
    die(EXIT_USAGE, "%zu output file%s given (-o), but %s returns %d tensor%s (schema: %s)", nouts,
        plural(nouts), opname, nres, plural((size_t)nres), schema);
}

/* ------------------------------------------------------------------------ */
/* Main                                                                     */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct options {
  const char *plugins[MAX_ARGS];
  size_t nplugins;
  const char *outs[MAX_OUTS];
  size_t nouts;
  const char *rest[MAX_ARGS];
  size_t nrest;
  int discover, show;
  long repeat;
  const char *device;
} options;

/* Whether a is an option: "--x", or "-x" with x a letter (so that "-1"
 * and "-.5" stay values). */
/* An option begins with '-' and a letter, or is "--..."; a negative
 * number ("-1", "-.5", "-inf", "-nan") is an argument. */
static int is_option(const char *a) {
  double f;
  if (a[0] == '-' && a[1] != '-' && argtext_float(a, &f) != ARGTEXT_SYNTAX) return 0;
  return a[0] == '-' && ((a[1] == '-') || (a[1] >= 'a' && a[1] <= 'z') || (a[1] >= 'A' && a[1] <= 'Z'));
}

static void parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->discover = 1;
  int only_args = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (only_args || !is_option(a)) {
      if (o->nrest == MAX_ARGS) die(EXIT_USAGE, "too many arguments (the most is %d)", MAX_ARGS);
      o->rest[o->nrest++] = a;
    } else if (!strcmp(a, "--")) {
      only_args = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      exit(usage(stdout));
    } else if (!strcmp(a, "--no-discover")) {
      o->discover = 0;
    } else if (!strcmp(a, "--show")) {
      o->show = 1;
    } else if (!strcmp(a, "--write")) {
      if (i + 5 != argc) die(EXIT_USAGE, "--write needs FILE.npy DTYPE SIZES VALUES, and nothing after");
      write_from_text(argv[i + 1], argv[i + 2], argv[i + 3], argv[i + 4]);
      cleanup();
      exit(0);
    } else if (!strcmp(a, "-p") || !strcmp(a, "--plugin")) {
      if (!has_value) die(EXIT_USAGE, "%s needs a path", a);
      if (o->nplugins == MAX_ARGS) die(EXIT_USAGE, "too many plugins");
      o->plugins[o->nplugins++] = argv[++i];
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!has_value) die(EXIT_USAGE, "%s needs a file name", a);
      if (o->nouts == MAX_OUTS) die(EXIT_USAGE, "too many outputs (the most is %d)", MAX_OUTS);
      o->outs[o->nouts++] = argv[++i];
    } else if (!strcmp(a, "--device")) {
      if (!has_value) die(EXIT_USAGE, "--device needs a device, like cuda:0");
      o->device = argv[++i];
    } else if (!strcmp(a, "--repeat")) {
      int64_t n = 0;
      if (!has_value) die(EXIT_USAGE, "--repeat needs a count");
      if (argtext_int(argv[++i], &n) != ARGTEXT_OK || n < 1 || n > 100000000)
        die(EXIT_USAGE, "--repeat: expected a count from 1 to 100000000, got '%s'", argv[i]);
      o->repeat = (long)n;
    } else {
      fprintf(stderr, "bp-run: unknown option '%s'\n", termsafe(a));
      exit(usage(stderr));
    }
  }
}

static void load_plugins(const options *o) {
  for (size_t i = 0; i < o->nplugins; i++)
    if (bp_plugin_load(o->plugins[i], NULL) != BP_OK) die(EXIT_FAILED, "%s", bp_last_error());
  if (o->discover && bp_plugin_discover(NULL) != BP_OK) die(EXIT_FAILED, "%s", bp_last_error());
  if (!o->device) return;
  int dev_parse = parse_device(o->device, &target);
  int tlen = (int)strcspn(o->device, ":");
  if (dev_parse == -1)
    die(EXIT_USAGE, "--device: no device type '%.*s' is registered (loaded plugins decide which exist)",
        tlen, o->device);
  if (dev_parse == -2)
    die(EXIT_USAGE, "--device: '%s' has no valid device index after the ':' (expected e.g. %.*s:0)",
        o->device, tlen, o->device);
  int32_t count = 0;
  if (bp_device_count(target.type, &count) != BP_OK || target.index >= count)
    die(EXIT_FAILED, "--device %s: no such device (%d device%s of that type)", o->device,
        (int)count, plural((size_t)count));
}

/* After a call that found no kernel for the CPU, where bp-run put the
 * tensors: when the op has a kernel on another device type, ends with
 * the --device option that puts them there. */
static void no_kernel_hint(const bp_op *op) {
  bp_op_info oi;
  memset(&oi, 0, sizeof oi);
  oi.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_get_info(op, &oi) != BP_OK) return;
  for (int32_t k = 0; k < oi.nkernels; k++) {
    bp_kernel_info ki;
    memset(&ki, 0, sizeof ki);
    ki.struct_size = BP_KERNEL_INFO_STRUCT_SIZE;
    const char *name;
    if (bp_op_get_kernel(op, (size_t)k, &ki) != BP_OK || ki.device_type == target.type ||
        !(name = bp_device_type_name(ki.device_type)))
      continue;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", bp_last_error());
    die(EXIT_FAILED, "%s (bp-run puts the tensor arguments on cpu:0; run with --device %s:0 to "
        "put them on %s)", msg, name, name);
  }
}

/* Writes or prints the results on the stack; returns the exit status. */
static int put_results(const char *opname, const options *o, bp_stack *stack) {
  size_t tensor_index = 0;
  for (size_t i = 0; i < stack->top; i++) {
    bp_value *v = &stack->values[i];
    char label[32], err[1024];
    snprintf(label, sizeof label, "result %zu", i);
    switch (v->tag) {
      case BP_TAG_TENSOR:
        if (tensor_index < o->nouts) {
          if (npy_write(o->outs[tensor_index], v->u.tensor, err, sizeof err) != NPY_OK)
            die(EXIT_FAILED, "%s", err);
        } else {
          print_tensor(label, v->u.tensor);
        }
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
  /* Only a Tensor[] result leaves the count unknown until now. */
  if (tensor_index < o->nouts) {
    fprintf(stderr, "bp-run: %zu output file%s given (-o), but %s returned %zu tensor%s\n",
            o->nouts, plural(o->nouts), termsafe(opname), tensor_index, plural(tensor_index));
    return EXIT_FAILED;
  }
  return 0;
}

int main(int argc, char **argv) {
  options o;
  parse_options(argc, argv, &o);
  if (o.show) {
    if (o.nrest == 0) die(EXIT_USAGE, "--show needs .npy files");
    for (size_t i = 0; i < o.nrest; i++) print_tensor(o.rest[i], load_tensor(o.rest[i]));
    cleanup();
    return 0;
  }
  if (o.nrest == 0) return usage(stderr);
  load_plugins(&o);

  const char *opname = o.rest[0];
  const bp_op *op;
  if (bp_op_find(opname, &op) != BP_OK) die(EXIT_FAILED, "%s", bp_last_error());
  bp_op_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = BP_OP_INFO_STRUCT_SIZE;
  if (bp_op_get_info(op, &info) != BP_OK || !info.schema)
    die(EXIT_FAILED, "operator '%s' is not defined (its plugin is not loaded)", opname);

  /* The whole command line is checked before any file is read. */
  param params[MAX_ARGS];
  size_t nparams = op_params(op, params, MAX_ARGS);
  call_args ca;
  assign_args(opname, info.schema, params, nparams, o.rest + 1, o.nrest - 1, &ca);
  check_outputs(op, opname, info.schema, o.outs, o.nouts);

  bp_value args[MAX_ARGS];
  const char *kwnames[MAX_ARGS];
  size_t nin = 0, nkw = 0;
  for (size_t k = 0; k < ca.npos; k++) parse_value(&params[k], k, ca.text[k], &args[nin++]);
  for (size_t k = ca.npos; k < nparams; k++) {
    if (!ca.text[k]) continue;
    parse_value(&params[k], k, ca.text[k], &args[nin++]);
    kwnames[nkw++] = params[k].name;
  }

  bp_value slots[MAX_ARGS + MAX_OUTS];
  bp_stack stack = BP_STACK_INIT(slots, MAX_ARGS + MAX_OUTS);
  long calls = o.repeat ? o.repeat : 1;
  double *times = calloc((size_t)calls, sizeof *times);
  if (!times) die(EXIT_FAILED, "out of memory");
  for (long r = 0; r < calls; r++) {
    if (r > 0) bp_stack_release(&stack);
    memcpy(slots, args, nin * sizeof args[0]);
    stack.top = nin;
    double t0 = (now() * 1e6);
    bp_status st = bp_call_kw(op, &stack, kwnames, nkw);
    times[r] = (now() * 1e6) - t0;
    if (st != BP_OK) {
      free(times);
      if (st == BP_ERR_NOT_FOUND && !o.device) no_kernel_hint(op);
      die(EXIT_FAILED, "%s", bp_last_error());
    }
  }
  int status = put_results(opname, &o, &stack);
  bp_stack_release(&stack);
  if (o.repeat) {
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
