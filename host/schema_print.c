/*
 * host/schema_print.c - prints a parsed schema in its canonical form, which
 * parses back to an equal schema (docs/schemas.md).
 *
 * Nothing here has mutable static state: safe from any number of threads.
 */
#include "schema_lex.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */
/* ------------------------------------------------------------------------ */

/* Appends to a caller's buffer, truncating, while counting the full
 * length. */
typedef struct writer {
  char *buf;
  size_t cap;
  size_t len;
} writer;

static void put_mem(writer *w, const char *s, size_t n) {
  if (w->cap > 0 && w->len < w->cap - 1) {
    size_t room = w->cap - 1 - w->len;
    memcpy(w->buf + w->len, s, n < room ? n : room);
  }
  w->len += n;
}

static void put(writer *w, const char *s) { put_mem(w, s, strlen(s)); }

static size_t finish(writer *w) {
  if (w->cap > 0) w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
  return w->len;
}

static void put_int(writer *w, int64_t v) {
  char b[24];
  snprintf(b, sizeof b, "%" PRId64, v);
  put(w, b);
}

static void put_float(writer *w, double v) {
  char b[48];
  bp__lex_double_to_text(v, b);
  put(w, b);
}

static void put_type(writer *w, const bp__arg *a) {
  put(w, bp__schema_type_spelling(a->type));
  if (a->alias_set) {
    put(w, "(");
    put(w, a->alias_set);
    if (a->is_write) put(w, "!");
    put(w, ")");
  }
  if (a->is_list) {
    put(w, "[");
    if (a->list_size >= 0) put_int(w, a->list_size);
    put(w, "]");
  }
  if (a->optional) put(w, "?");
}

/* Double quotes always, so that equal strings print equally. */
static void put_string(writer *w, const char *s) {
  put(w, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') put(w, "\\");
    put_mem(w, s, 1);
  }
  put(w, "\"");
}

static void put_default(writer *w, const bp_value *v) {
  switch (v->tag) {
  case BP_TAG_NONE: put(w, "None"); break;
  case BP_TAG_INT: put_int(w, v->u.i); break;
  case BP_TAG_FLOAT: put_float(w, v->u.f); break;
  case BP_TAG_BOOL: put(w, v->u.b ? "True" : "False"); break;
  case BP_TAG_STR: put_string(w, v->u.str); break;
  case BP_TAG_SCALAR_TYPE: {
    const char *name = bp__schema_dtype_name(v->u.i);
    if (name)
      put(w, name);
    else
      put_int(w, v->u.i); /* not made by the parser; printed, not hidden */
    break;
  }
  case BP_TAG_INT_LIST:
  case BP_TAG_FLOAT_LIST:
    put(w, "[");
    for (uint32_t i = 0; i < v->len; i++) {
      if (i > 0) put(w, ", ");
      if (v->tag == BP_TAG_INT_LIST)
        put_int(w, v->u.ints[i]);
      else
        put_float(w, v->u.floats[i]);
    }
    put(w, "]");
    break;
  default: put(w, "?"); break;
  }
}

static void put_arg(writer *w, const bp__arg *a) {
  put_type(w, a);
  if (a->name) {
    put(w, " ");
    put(w, a->name);
  }
  if (a->has_default) {
    put(w, "=");
    put_default(w, &a->default_value);
  }
}

size_t bp__arg_type_format(const bp__arg *a, char *buf, size_t buflen) {
  writer w = {buf, buflen, 0};
  if (a) put_type(&w, a);
  return finish(&w);
}

size_t bp__schema_format(const bp__schema *s, bool with_ns, char *buf,
                         size_t buflen) {
  writer w = {buf, buflen, 0};
  if (!s) return finish(&w);
  if (with_ns && s->ns) {
    put(&w, s->ns);
    put(&w, "::");
  }
  put(&w, s->name);
  if (s->overload && s->overload[0]) {
    put(&w, ".");
    put(&w, s->overload);
  }
  put(&w, "(");
  for (size_t i = 0; i < s->nargs; i++) {
    if (i > 0) put(&w, ", ");
    if (i == s->npositional) put(&w, "*, ");
    put_arg(&w, &s->args[i]);
  }
  put(&w, ") -> ");
  /* One unnamed return prints bare; a named one needs the parentheses,
   * since "-> Tensor x" would read back the same but looks like two. */
  bool bare = s->nrets == 1 && !s->rets[0].name;
  if (!bare) put(&w, "(");
  for (size_t i = 0; i < s->nrets; i++) {
    if (i > 0) put(&w, ", ");
    put_arg(&w, &s->rets[i]);
  }
  if (!bare) put(&w, ")");
  return finish(&w);
}
