/*
 * conformance/sample_check.c - the samples of the checks other than
 * numerics (check_set, sample.h): a core op's basic, sizes, layouts and
 * broadcast samples (sample_sets.c), or an op's generic ones built from
 * its schema.  It stands on the generators and on samples.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hints.h"
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
    else
      cert_sample_free(&src[i]);
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

/* The base type of an argument type: "int" of "int" and "int?". */
static void base_type(const char *t, char *out, size_t len) {
  snprintf(out, len, "%s", t);
  size_t n = strlen(out);
  if (n && out[n - 1] == '?') out[n - 1] = '\0';
}

/* Adds the value that hint h gives argument i (of type t) in sample j:
 * the values in turn, or a range's low, high and middle in turn.  False
 * with the reason when the value does not fit the type. */
static bool add_hinted(sample *s, const hint *h, const char *t, int j, char *why, size_t len) {
  char bt[32];
  base_type(t, bt, sizeof bt);
  const char *v = NULL;
  double num = 0;
  if (h->kind == HINT_VALUES) {
    v = h->vals[j % h->nvals];
    if (strcmp(v, "None") == 0 && t[strlen(t) - 1] == '?') {
      cert_add_none(s);
      return true;
    }
  } else {
    int k = j % 3;
    num = k == 0 ? h->lo : k == 1 ? h->hi : (h->lo + h->hi) / 2;
  }
  char *end = NULL;
  if (strcmp(bt, "int") == 0) {
    long long i = v ? strtoll(v, &end, 10) : llround(num);
    if (v && (end == v || *end)) goto bad;
    cert_add_int(s, i);
  } else if (strcmp(bt, "float") == 0 || strcmp(bt, "Scalar") == 0) {
    double f = v ? strtod(v, &end) : num;
    if (v && (end == v || *end)) goto bad;
    cert_add_float(s, f);
  } else if (strcmp(bt, "bool") == 0 && v) {
    if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "1") == 0)
      cert_add_bool(s, true);
    else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "0") == 0)
      cert_add_bool(s, false);
    else goto bad;
  } else if (strcmp(bt, "str") == 0 && v) {
    cert_add_str(s, v); /* (the table lives as long as the process) */
  } else {
    snprintf(why, len, "--hints line %d: a %s hint does not apply to argument '%s' of type %s",
             h->line, h->kind == HINT_RANGE ? "range" : "values", h->arg, t);
    return false;
  }
  return true;
bad:
  snprintf(why, len, "--hints line %d: '%s' is not a value of argument '%s' of type %s", h->line,
           v, h->arg, t);
  return false;
}

/* A sample of an op outside core from its schema: Tensor -> float32 of
 * shape sh in layout lay, with elements in [-2, 2], int -> 1, float ->
 * 0.5, bool -> false, ScalarType -> float32, T? -> None; arguments with
 * defaults are left to their defaults.  A hint of the op's (--hints)
 * gives a Tensor's range, and another argument its values, the (j mod
 * count)th in sample j, a defaulted argument included.  False with the
 * reason when an argument cannot be made. */
static bool generic(const schema_info *si, const char *op, int j, int32_t nd, const int64_t *sh,
                    int lay, sample *s, char *why, size_t len) {
  memset(s, 0, sizeof *s);
  snprintf(s->label, sizeof s->label, "%s", cert_lay_name[lay]);
  for (int i = 0; i < si->n; i++) {
    const char *t = si->type[i];
    const hint *h = cert_hint_find(op, si->name[i]);
    if (si->has_default[i] && !h) {
      /* left to its default when only defaults follow; a hinted one
       * among them needs this one given too */
      bool required = false, hinted = false;
      for (int k = i + 1; k < si->n; k++) {
        required |= !si->has_default[k];
        hinted |= cert_hint_find(op, si->name[k]) != NULL;
      }
      if (!required && !hinted) break;
      if (!required) {
        snprintf(why, len, "argument %d '%s' has a default and comes before a hinted one: give "
                 "it a hint too (--hints)", i, si->name[i]);
        cert_sample_free(s);
        return false;
      }
    }
    if (s->n == SAMPLE_MAX_ARGS) {
      snprintf(why, len, "more than %d arguments", SAMPLE_MAX_ARGS);
      cert_sample_free(s);
      return false;
    }
    bool tensor = strncmp(t, "Tensor", 6) == 0 && !strchr(t, '[') && !strchr(t, '?');
    if (h && !tensor) {
      if (!add_hinted(s, h, t, j, why, len)) {
        cert_sample_free(s);
        return false;
      }
      const sarg *a = &s->a[s->n - 1];
      size_t n = strlen(s->label);
      if (a->k == AK_STR)
        snprintf(s->label + n, sizeof s->label - n, ", %s='%s'", si->name[i], a->s);
      else if (a->k == AK_INT)
        snprintf(s->label + n, sizeof s->label - n, ", %s=%lld", si->name[i], (long long)a->i);
      else if (a->k == AK_FLOAT)
        snprintf(s->label + n, sizeof s->label - n, ", %s=%g", si->name[i], a->f);
      continue;
    }
    if (h && h->kind != HINT_RANGE) {
      snprintf(why, len, "--hints line %d: a values hint does not apply to Tensor argument '%s' "
               "(give it a range)", h->line, h->arg);
      cert_sample_free(s);
      return false;
    }
    if (tensor) {
      int l = si->mutated[i] && cert_lay_is_expanded(lay) ? L_CONTIG : lay;
      cert_add_tensor(s, cert_rand_rt(BP_FLOAT32, nd, sh, h ? h->lo : -2, h ? h->hi : 2), l);
      if (cert_lay_is_expanded(l)) cert_gen_make_expandable(s->a[s->n - 1].t, l);
    } else if (strcmp(t, "int") == 0) {
      cert_add_int(s, 1);
    } else if (strcmp(t, "float") == 0) {
      cert_add_float(s, 0.5);
    } else if (strcmp(t, "bool") == 0) {
      cert_add_bool(s, false);
    } else if (strcmp(t, "ScalarType") == 0) {
      cert_add_dtype(s, BP_FLOAT32);
    } else if (strcmp(t, "Scalar") == 0) {
      cert_add_float(s, 0.5); /* a Scalar that is a float */
    } else if (t[strlen(t) - 1] == '?') {
      cert_add_none(s);
    } else {
      /* (A truncated reason is still a reason.) */
      if (snprintf(why, len, "cannot generate argument %d '%s' of type %s%s", i, si->name[i], t,
                   strcmp(t, "str") == 0 ? " (give its values with --hints)" : "") < 0)
        why[0] = '\0';
      cert_sample_free(s);
      return false;
    }
  }
  return true;
}

/* The most values a hint of op's gives one argument (samples past the six
 * generic ones take the rest), 1 without hints. */
static int hinted_values(const schema_info *si, const char *op) {
  int most = 1;
  for (int i = 0; i < si->n; i++) {
    const hint *h = cert_hint_find(op, si->name[i]);
    if (h && h->kind == HINT_VALUES && h->nvals > most) most = h->nvals;
  }
  return most;
}

sample *cert_check_set(int r, const schema_info *si, const gen_opts *o, size_t *n, char *why,
                       size_t len) {
  sample *v = NULL;
  size_t nv = 0, k;
  if (r >= 0) {
    sample *src = cert_gen_core_set(r, BP_FLOAT32, SK_BASIC, o, &k);
    take(&v, &nv, src, k, NULL);
    src = cert_gen_core_set(r, BP_FLOAT32, SK_SIZES, o, &k);
    take(&v, &nv, src, k, some_sizes);
    src = cert_gen_core_set(r, BP_FLOAT32, SK_LAYOUTS, o, &k);
    take(&v, &nv, src, k, NULL);
    if (cert_sk_applies(cert_core_refs[r].kind, SK_BROADCAST)) {
      src = cert_gen_core_set(r, BP_FLOAT32, SK_BROADCAST, o, &k);
      take(&v, &nv, src, k, first_broadcasts);
    }
    *n = nv;
    return v;
  }
  static const int64_t s45[] = {4, 5}, s3x67[] = {3, 67};
  static const int lays[] = {L_CONTIG, L_TRANSPOSED, L_STEP, L_OFFSET, L_EXPANDED};
  /* A hint must name one of the op's arguments. */
  for (size_t i = 0; o->op && i < cert_hints_count(); i++) {
    const hint *h = cert_hint_at(i);
    if (strcmp(h->op, o->op) != 0) continue;
    int a = 0;
    while (a < si->n && strcmp(si->name[a], h->arg) != 0) a++;
    if (a == si->n) {
      snprintf(why, len, "--hints line %d: %s has no argument '%s'", h->line, o->op, h->arg);
      return NULL;
    }
  }
  /* six samples, and contiguous ones for the values of a hint past six */
  size_t total = (size_t)hinted_values(si, o->op);
  if (total < 6) total = 6;
  v = calloc(total, sizeof *v);
  if (!v) abort();
  for (size_t j = 0; j < total; j++) {
    bool big = j == 5;
    int lay = j < 5 ? lays[j] : L_CONTIG;
    if (!generic(si, o->op, (int)j, 2, big ? s3x67 : s45, lay, &v[nv], why, len)) {
      cert_sample_set_free(v, nv);
      return NULL;
    }
    nv++;
  }
  *n = nv;
  return v;
}
