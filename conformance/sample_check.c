/*
 * conformance/sample_check.c - the samples of the checks other than
 * numerics (check_set, sample.h): a core op's basic, sizes, layouts and
 * broadcast samples (sample_sets.c), or an op's generic ones built from
 * its schema.  It stands on the generators and on samples.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "sample_int.h"

/* Appends the samples of src[0 .. n-1] that keep() accepts to *v, taking
 * their ownership; the others are freed. */
static void take(sample **v, size_t *nv, sample *src, size_t n, bool (*keep)(const sample *)) {
  sample *g = realloc(*v, (*nv + n + 1) * sizeof *g);
  if (!g) abort(); /* the certifier's own memory */
  *v = g;
  for (size_t i = 0; i < n; i++) {
    if (!keep || keep(&src[i])) g[(*nv)++] = src[i];
    else sample_free(&src[i]);
  }
  free(src);
}

/* The lengths and ranks of the sizes class that the other checks keep. */
static bool some_sizes(const sample *s) {
  static const char *const keep[] = {"length 0", "length 1", "length 7", "length 8",
                                     "length 9", "length 63", "length 65", "length 129",
                                     "rank 0", "rank 4", "rank 5"};
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
    if (strcmp(s->label, keep[i]) == 0) return true;
  return false;
}

static bool first_broadcasts(const sample *s) {
  return strcmp(s->label, "broadcast 1") == 0 || strcmp(s->label, "broadcast 4") == 0 ||
         strcmp(s->label, "broadcast 6") == 0 || strcmp(s->label, "batch broadcast 0") == 0;
}

/* A sample of an op outside core from its schema: Tensor -> float32 of
 * shape sh in layout lay, int -> 1, float -> 0.5, bool -> false,
 * ScalarType -> float32, T? -> None; arguments with defaults are left to
 * their defaults.  False with the reason when an argument cannot be made. */
static bool generic(const schema_info *si, int32_t nd, const int64_t *sh, int lay, sample *s,
                    char *why, size_t len) {
  memset(s, 0, sizeof *s);
  snprintf(s->label, sizeof s->label, "%s", lay_name[lay]);
  for (int i = 0; i < si->n; i++) {
    const char *t = si->type[i];
    if (si->has_default[i]) {
      bool later = false;
      for (int j = i + 1; j < si->n; j++) later |= !si->has_default[j];
      if (!later) break;
    }
    if (s->n == SAMPLE_MAX_ARGS) {
      snprintf(why, len, "more than %d arguments", SAMPLE_MAX_ARGS);
      sample_free(s);
      return false;
    }
    if (strncmp(t, "Tensor", 6) == 0 && !strchr(t, '[') && !strchr(t, '?')) {
      int l = si->mutated[i] && lay_is_expanded(lay) ? L_CONTIG : lay;
      add_tensor(s, rand_rt(BP_FLOAT32, nd, sh, -2, 2), l);
      if (lay_is_expanded(l)) gen_make_expandable(s->a[s->n - 1].t, l);
    } else if (strcmp(t, "int") == 0) {
      add_int(s, 1);
    } else if (strcmp(t, "float") == 0) {
      add_float(s, 0.5);
    } else if (strcmp(t, "bool") == 0) {
      add_bool(s, false);
    } else if (strcmp(t, "ScalarType") == 0) {
      add_dtype(s, BP_FLOAT32);
    } else if (strcmp(t, "Scalar") == 0) {
      add_float(s, 0.5); /* a Scalar that is a float */
    } else if (t[strlen(t) - 1] == '?') {
      add_none(s);
    } else {
      /* (A truncated reason is still a reason.) */
      if (snprintf(why, len, "cannot generate argument %d '%s' of type %s", i, si->name[i], t) < 0)
        why[0] = '\0';
      sample_free(s);
      return false;
    }
  }
  return true;
}

sample *check_set(int r, const schema_info *si, const gen_opts *o, size_t *n, char *why,
                  size_t len) {
  sample *v = NULL;
  size_t nv = 0, k;
  if (r >= 0) {
    sample *src = gen_core_set(r, BP_FLOAT32, SK_BASIC, o, &k);
    take(&v, &nv, src, k, NULL);
    src = gen_core_set(r, BP_FLOAT32, SK_SIZES, o, &k);
    take(&v, &nv, src, k, some_sizes);
    src = gen_core_set(r, BP_FLOAT32, SK_LAYOUTS, o, &k);
    take(&v, &nv, src, k, NULL);
    if (sk_applies(core_refs[r].kind, SK_BROADCAST)) {
      src = gen_core_set(r, BP_FLOAT32, SK_BROADCAST, o, &k);
      take(&v, &nv, src, k, first_broadcasts);
    }
    *n = nv;
    return v;
  }
  static const int64_t s45[] = {4, 5}, s3x67[] = {3, 67};
  static const int lays[] = {L_CONTIG, L_TRANSPOSED, L_STEP, L_OFFSET, L_EXPANDED};
  v = calloc(6, sizeof *v);
  if (!v) abort();
  for (size_t j = 0; j < 6; j++) {
    bool big = j == 5;
    if (!generic(si, 2, big ? s3x67 : s45, big ? L_CONTIG : lays[j], &v[nv], why, len)) {
      sample_set_free(v, nv);
      return NULL;
    }
    nv++;
  }
  *n = nv;
  return v;
}
