/*
 * host.c - a minimal program that embeds Backplane: it loads plugins,
 * creates tensors, calls an operator and reads the result.
 *
 *   ./host [PLUGIN.so ...]
 *
 * Plugins named on the command line are loaded first; then the ones in
 * BP_PLUGIN_PATH and the installed plugin directory.  The program calls
 * core::muladd (a * b + c) on two small tensors, and acme::axpy when the
 * acme example plugin is loaded.
 */
#include <stdio.h>
#include <string.h>

#include <backplane/host.h>

/* Prints the failing call and the library's message, and returns 1. */
static int fail(const char *what, bp_status st) {
  fprintf(stderr, "host: %s: %s: %s\n", what, bp_status_str(st), bp_last_error());
  return 1;
}

/* A new 1-D float32 tensor holding x[0 .. n-1]; the caller releases it. */
static bp_status vector(const float *x, int64_t n, bp_tensor **out) {
  bp_status st = bp_tensor_empty(BP_CPU, BP_FLOAT32, 1, &n, out);
  if (st == BP_OK) memcpy(bp_tensor_get_view(*out)->data, x, (size_t)n * sizeof *x);
  return st;
}

static void print_vector(const char *label, const bp_tensor *t) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  printf("%s:", label);
  for (int64_t i = 0; i < v->numel; i++) printf(" %g", (double)((const float *)v->data)[i]);
  printf("\n");
}

/* Calls `name` with two tensors and a float; prints the result. */
static int call_and_print(const char *name, bp_tensor *a, bp_tensor *b, double c) {
  const bp_op *op;
  bp_status st = bp_op_find(name, &op);
  if (st != BP_OK) return fail("bp_op_find", st);
  bp_value slots[3];
  bp_stack stack = BP_STACK_INIT(slots, 3);
  bp_stack_push_tensor(&stack, a);  /* arguments are borrowed */
  bp_stack_push_tensor(&stack, b);
  bp_stack_push_float(&stack, c);
  st = bp_call(op, &stack);
  if (st != BP_OK) return fail(name, st);
  /* The result is a new reference that this program owns. */
  bp_tensor *result;
  bp_stack_get_tensor(&stack, 0, &result);
  print_vector(name, result);
  bp_stack_release(&stack);
  return 0;
}

int main(int argc, char **argv) {
  uint32_t major, minor;
  bp_abi_version(&major, &minor);
  printf("libbackplane %s, ABI %u.%u\n", bp_version(), major, minor);

  for (int i = 1; i < argc; i++) {
    bp_status st = bp_plugin_load(argv[i], NULL);
    if (st != BP_OK) return fail("bp_plugin_load", st);
  }
  size_t found = 0;
  bp_status st = bp_plugin_discover(&found);
  if (st != BP_OK) return fail("bp_plugin_discover", st);
  printf("plugins: %zu\n", bp_plugin_count());

  const float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  bp_tensor *a = NULL, *b = NULL;
  int rc = 1;
  if ((st = vector(x, 4, &a)) != BP_OK || (st = vector(y, 4, &b)) != BP_OK) {
    fail("bp_tensor_empty", st);
  } else {
    rc = call_and_print("core::muladd", a, b, 0.5);
    const bp_op *axpy;
    if (rc == 0 && bp_op_find("acme::axpy", &axpy) == BP_OK) rc = call_and_print("acme::axpy", a, b, 2.0);
  }
  bp_tensor_release(a);
  bp_tensor_release(b);
  return rc;
}
