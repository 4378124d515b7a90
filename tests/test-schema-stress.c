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

#include "alloc.h"
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
 * The parser allocates through the host's allocator (host/alloc.h), whose
 * test controls fail the n-th allocation from now.  That exercises every
 * OOM path without hooking the C library; the count of blocks outstanding,
 * then ASan, LSan and valgrind check that each failure frees what was
 * built.
 */
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
    bp__alloc_test_fail(0, false);
    bp__schema *s = NULL;
    char err[256];
    long live = bp__alloc_test_live();
    long first = bp__alloc_test_count();
    bp_status want = bp__schema_parse(texts[t], &s, err, sizeof err);
    char good[512] = "";
    if (s) bp__schema_format(s, true, good, sizeof good);
    bp__schema_free(s);
    long total = bp__alloc_test_count() - first;
    cmp_ok(total, ">", 0);
    is_int(bp__alloc_test_live(), live);
    /* The n-th allocation fails alone, then it and every one after it. */
    for (int sticky = 0; sticky < 2; sticky++) {
      for (long n = 1; n <= total; n++) {
        bp__alloc_test_fail(n, sticky);
        s = (bp__schema *)&s;
        bp__schema *const before = s;
        bp_status st = bp__schema_parse(texts[t], &s, err, sizeof err);
        bp__alloc_test_fail(0, false);
        if (!is_int(st, BP_ERR_OUT_OF_MEMORY))
          tap_diag("  allocation %ld of %ld%s in '%s' (%s)", n, total,
                   sticky ? " and after" : "", texts[t], err);
        ok(s == before);
        has_str(err, "out of memory");
        if (st == BP_OK) bp__schema_free(s);
        if (!is_int(bp__alloc_test_live(), live))
          tap_diag("  blocks left by the failure of allocation %ld", n);
      }
    }
    /* With every allocation granted again, it parses as before. */
    s = NULL;
    is_int(bp__schema_parse(texts[t], &s, err, sizeof err), want);
    if (want == BP_OK && s) {
      char again[512];
      bp__schema_format(s, true, again, sizeof again);
      is_str(again, good);
    }
    bp__schema_free(s);
  }
}

int main(void) {
  bp__alloc_test_track(true);
  static const tap_case cases[] = {
      TAP_CASE(robustness),
      TAP_CASE(out_of_memory),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
