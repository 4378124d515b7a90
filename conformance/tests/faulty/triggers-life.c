/*
 * conformance/tests/faulty/triggers-life.c - the triggers of the shim
 * corpus's faults of what a successful call leaves behind (confirm.h):
 * results that a later call changes, a result read before it is written,
 * a cache keyed by a tensor's address, an error left set, a print.
 *
 * Each trigger runs in a child process that exits right after it.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confirm.h"

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define F32 BP_FLOAT32

/* core::OP on one new float32 tensor of the given shape, values in
 * [lo, hi], and then the extra arguments the caller pushes. */
static call *with_x(int32_t ndim, const int64_t *sizes, double lo, double hi) {
  static call c;
  call_init(&c);
  arg_t(&c, mk(rnd(F32, ndim, sizes, lo, hi), NULL, 0));
  return &c;
}

/* Two calls of core::sigmoid on different inputs of 8 elements: the
 * first result must keep its values after the second call. */
static int t_sigmoid_arena(char *why, size_t len) {
  bp_tensor *first, *second;
  if (run("core::sigmoid", with_x(1, S(8), -3, 3), &first) != BP_OK) return -1;
  rt *before = get(first);
  if (run("core::sigmoid", with_x(1, S(8), -3, 3), &second) != BP_OK) return -1;
  rt *after = get(first);
  int r = differs(after, before, true, 1, 1, why, len);
  if (!r) snprintf(why, len, "the first result kept its values through a second call");
  rt_free(before);
  rt_free(after);
  return r;
}

/* A 2-D float32 matmul, with the host's fresh blocks poisoned (T_GUARD:
 * BP_ALLOC_GUARD=1 fills them with 0xff bytes). */
static int t_matmul_beta_one(char *why, size_t len) {
  rt *a = rnd(F32, 2, S(3, 5), -0.5, 0.5), *b = rnd(F32, 2, S(5, 4), -0.5, 0.5);
  int64_t k;
  rt *want = ref_matmul(a, b, &k);
  call c;
  call_init(&c);
  arg_t(&c, mk(a, NULL, 0));
  arg_t(&c, mk(b, NULL, 0));
  return check("core::matmul", &c, want, false, 3, 1, why, len);
}

/* matmul(a, b1), then b1 freed and b2 (other values) made at its address
 * (T_GUARD: the guard hands the freed block back): matmul(a, b2) must
 * use b2's values. */
static int t_matmul_pack_cache(char *why, size_t len) {
  rt *a = rnd(F32, 2, S(3, 5), -0.5, 0.5), *b1 = rnd(F32, 2, S(5, 4), -0.5, 0.5);
  rt *b2 = rnd(F32, 2, S(5, 4), -0.5, 0.5);
  bp_tensor *ta = mk(a, NULL, 0), *tb = mk(b1, NULL, 0), *out = NULL;
  call c;
  call_init(&c);
  arg_t(&c, ta);
  arg_t(&c, tb);
  if (run("core::matmul", &c, &out) != BP_OK) return -1;
  bp_tensor_release(out);
  const void *at = bp_tensor_get_view(tb)->data;
  bp_tensor_release(tb);
  tb = mk(b2, NULL, 0);
  if (bp_tensor_get_view(tb)->data != at) {
    snprintf(why, len, "the second `other` did not take the first one's address");
    return -1;
  }
  int64_t k;
  rt *want = ref_matmul(a, b2, &k);
  call_init(&c);
  arg_t(&c, ta);
  arg_t(&c, tb);
  return check("core::matmul", &c, want, false, 3, 1, why, len);
}

/* A successful softmax of a transposed input leaves no error set. */
static int t_softmax_stale_error(char *why, size_t len) {
  rt *x = rnd(F32, 2, S(4, 3), -3, 3);
  call c;
  call_init(&c);
  arg_t(&c, mk(x, S(1, 4), 0)); /* [4, 3] column-major */
  arg_i(&c, -1);
  bp_clear_error();
  bp_tensor *out;
  if (run("core::softmax", &c, &out) != BP_OK) return -1;
  bp_tensor_release(out);
  snprintf(why, len, "after a successful call: %s \"%s\"", bp_status_str(bp_last_status()),
           bp_last_error());
  return bp_last_status() != BP_OK || *bp_last_error();
}

/* A successful layer_norm over rows of 65 writes nothing to stdout. */
static int t_layer_norm_printf(char *why, size_t len) {
  FILE *f = tmpfile();
  if (!f) return -1;
  call *c = with_x(2, S(2, 65), -2, 2);
  arg_list(c, S(65), 1);
  fflush(stdout);
  int saved = dup(1);
  dup2(fileno(f), 1);
  bp_status st = run("core::layer_norm", c, NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  long n = (long)lseek(fileno(f), 0, SEEK_END);
  fclose(f);
  if (st != BP_OK) return -1;
  snprintf(why, len, "a successful call wrote %ld byte(s) to stdout", n);
  return n > 0;
}

const trigger life_triggers[] = {
    {"sigmoid_arena", t_sigmoid_arena, 0},
    {"matmul_beta_one", t_matmul_beta_one, T_GUARD},
    {"matmul_pack_cache", t_matmul_pack_cache, T_GUARD | T_NOASAN},
    {"softmax_stale_error", t_softmax_stale_error, 0},
    {"layer_norm_printf", t_layer_norm_printf, 0},
};
const size_t life_ntriggers = sizeof life_triggers / sizeof *life_triggers;
