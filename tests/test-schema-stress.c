/*
 * tests/test-schema-stress.c - the schema parser on text no corpus lists:
 * every valid schema of the corpora mutated byte by byte and truncated at
 * every length (each parse succeeds and round-trips, or fails with a
 * column inside the text), and every allocation of a parse failed in turn
 * (each failure frees what was built: ASan, LSan and valgrind check).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/abi.h>

#include "schema-corpus.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Robustness: mutated and truncated schemas                                */
/* ------------------------------------------------------------------------ */

/* Parses anything: it must succeed and round-trip, or fail with a column
 * inside the text.  Under ASan and valgrind this also checks memory. */
static bool parse_anything(const char *text) {
  bp__schema *s = NULL;
  char err[256] = "";
  int st = bp__schema_parse(text, &s, err, sizeof err);
  if (st == BP_OK) {
    bool good = true;
    char *once = format_new(s, true);
    bp__schema *again = NULL;
    if (!once || bp__schema_parse(once, &again, err, sizeof err) != BP_OK) {
      good = false;
    } else {
      char *twice = format_new(again, true);
      good = twice && strcmp(once, twice) == 0;
      free(twice);
    }
    if (!good) tap_diag("  round trip failed: %s -> %s", text, once);
    free(once);
    bp__schema_free(again);
    bp__schema_free(s);
    return good;
  }
  unsigned long col = 0;
  bool good = st == BP_ERR_SCHEMA &&
              sscanf(err, "column %lu: ", &col) == 1 && col >= 1 &&
              col <= strlen(text) + 1 && s == NULL;
  if (!good) tap_diag("  bad failure for '%s': %d '%s'", text, st, err);
  return good;
}

static void robustness(void) {
  static const valid_case *const sets[] = {
      valid_basic, valid_optional, valid_defaults,
      valid_lists, valid_alias,    valid_returns,
  };
  const size_t counts[] = {
      n_valid_basic, n_valid_optional, n_valid_defaults,
      n_valid_lists, n_valid_alias,    n_valid_returns,
  };
  static const char subst[] = "()[],*?!=.:-\"'\\ x1e";
  size_t failures = 0, runs = 0;
  char buf[512];
  for (size_t k = 0; k < N_ELEMS(sets); k++) {
    for (size_t i = 0; i < counts[k]; i++) {
      const char *text = sets[k][i].text;
      size_t n = strlen(text);
      if (n >= sizeof buf) continue;
      for (size_t cut = 0; cut <= n; cut++) {
        memcpy(buf, text, cut);
        buf[cut] = '\0';
        failures += !parse_anything(buf);
        runs++;
      }
      for (size_t at = 0; at < n; at++) {
        for (size_t c = 0; c < sizeof subst - 1; c++) {
          memcpy(buf, text, n + 1);
          buf[at] = subst[c];
          failures += !parse_anything(buf);
          runs++;
        }
      }
    }
  }
  tap_diag("robustness: %zu parses", runs);
  is_int(failures, 0);
}

/* ------------------------------------------------------------------------ */
/* Out of memory: a second copy of the parser whose allocations fail        */
/* ------------------------------------------------------------------------ */

/*
 * The parser is compiled once more, into this file, with its allocator
 * renamed to a wrapper that fails the n-th allocation (and the printer,
 * whose functions it names; the lexer, which allocates nothing, is
 * shared).  That exercises
 * every OOM path without hooking the C library; ASan, LSan and valgrind
 * then check that each failure frees what was built.
 */
static long oom_fail_at = -1; /* which allocation fails; -1: none */
static long oom_count;        /* allocations so far */

static bool oom_should_fail(void) { return oom_count++ == oom_fail_at; }
static void *oom_malloc(size_t n) {
  return oom_should_fail() ? NULL : malloc(n);
}
static void *oom_calloc(size_t n, size_t m) {
  return oom_should_fail() ? NULL : calloc(n, m);
}
static void *oom_realloc(void *p, size_t n) {
  return oom_should_fail() ? NULL : realloc(p, n);
}

#define bp__schema_parse oom_schema_parse
#define bp__schema_free oom_schema_free
#define bp__schema_format oom_schema_format
#define bp__arg_type_format oom_arg_type_format
#define bp__schema_type_spelling oom_type_spelling
#define bp__schema_dtype_name oom_dtype_name
#define malloc oom_malloc
#define calloc oom_calloc
#define realloc oom_realloc
/* schema.h is already included, so declare the renamed functions. */
bp_status bp__schema_parse(const char *text, bp__schema **out, char *err,
                           size_t errlen);
void bp__schema_free(bp__schema *s);
size_t bp__schema_format(const bp__schema *s, bool with_ns, char *buf,
                         size_t buflen);
size_t bp__arg_type_format(const bp__arg *a, char *buf, size_t buflen);
const char *bp__schema_type_spelling(int type);
const char *bp__schema_dtype_name(int64_t code);
#include "../host/schema.c"
#include "../host/schema_print.c"
#undef malloc
#undef calloc
#undef realloc
#undef bp__schema_parse
#undef bp__schema_free
#undef bp__schema_format
#undef bp__arg_type_format
#undef bp__schema_type_spelling
#undef bp__schema_dtype_name

static void out_of_memory(void) {
  static const char *const texts[] = {
      "ns::op.overload(Tensor a, Tensor(a!) out, float c=1.0, *, "
      "int dim=-1) -> Tensor",
      "f(int[2] s=1, int[] e=[], int[] l=[1, 2, 3, 4, 5, 6, 7, 8, 9], "
      "float[] w=[1, 2.5], str m=\"tanh\", Tensor(b)[]? t=None, "
      "ScalarType d=int8, Tensor x, Tensor y, Tensor z, Tensor w2) -> "
      "(Tensor(a!) values, Tensor indices, int n, float f, bool b)",
      "aten::f.o(*, Tensor a) -> Tensor",
      "f() -> ()",
      /* Fails after allocating: the failure paths free it all too. */
      "f(Tensor a, int[] l=[1, 2, 3, 4, 5], str s='x', int b) -> ()",
  };
  for (size_t t = 0; t < N_ELEMS(texts); t++) {
    /* Count the allocations of a run that does not fail. */
    oom_fail_at = -1;
    oom_count = 0;
    bp__schema *s = NULL;
    char err[256];
    bp_status want = oom_schema_parse(texts[t], &s, err, sizeof err);
    oom_schema_free(s);
    long total = oom_count;
    cmp_ok(total, ">", 0);
    for (long n = 0; n < total; n++) {
      oom_fail_at = n;
      oom_count = 0;
      s = (bp__schema *)&s;
      bp__schema *const before = s;
      bp_status st = oom_schema_parse(texts[t], &s, err, sizeof err);
      if (!is_int(st, BP_ERR_OUT_OF_MEMORY))
        tap_diag("  allocation %ld of %ld in '%s' (%s)", n, total, texts[t],
                 err);
      ok(s == before);
      has_str(err, "out of memory");
      if (st == BP_OK) oom_schema_free(s);
    }
    /* With every allocation granted, the copy behaves like the original. */
    oom_fail_at = -1;
    s = NULL;
    is_int(oom_schema_parse(texts[t], &s, err, sizeof err), want);
    if (want == BP_OK && s) {
      char a[512], b[512];
      oom_schema_format(s, true, a, sizeof a);
      bp__schema *o = parse_ok(texts[t]);
      if (o) {
        bp__schema_format(o, true, b, sizeof b);
        is_str(a, b);
        if (s->nargs > 0 && o->nargs > 0) {
          char ta[32], tb[32];
          oom_arg_type_format(&s->args[0], ta, sizeof ta);
          bp__arg_type_format(&o->args[0], tb, sizeof tb);
          is_str(ta, tb);
        }
      }
      bp__schema_free(o);
    }
    oom_schema_free(s);
  }
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(robustness),
      TAP_CASE(out_of_memory),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
