// The public headers used from C++: the extern "C" guards must give C
// linkage, or this program does not link against libbackplane.
#include <backplane/abi.h>
#include <backplane/plugin.h>
#include <backplane/host.h>

#include <cstdio>
#include <cstring>

static int n = 0, failed = 0;

static void check(bool cond, const char *what) {
  ++n;
  std::printf("%s %d - %s\n", cond ? "ok" : "not ok", n, what);
  if (!cond) failed = 1;
}

int main() {
  std::printf("1..4\n");
  check(std::strcmp(bp_status_str(BP_ERR_SHAPE), "BP_ERR_SHAPE") == 0,
        "bp_status_str links and works from C++");
  bp_tensor *t = nullptr;
  int64_t sizes[2] = {2, 3};
  bp_status st = bp_tensor_empty(BP_CPU, BP_FLOAT32, 2, sizes, &t);
  check(st == BP_OK && t != nullptr, "bp_tensor_empty from C++");
  const bp_tensor_view *v = bp_tensor_get_view(t);
  check(v && v->numel == 6 && v->strides[0] == 3, "the view reads from C++");
  bp_tensor_release(t);
  check(sizeof(bp_value) == 16 && BP_HOST_API_STRUCT_SIZE == sizeof(bp_host_api),
        "struct sizes agree between C and C++");
  return failed;
}
