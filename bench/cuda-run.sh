#!/bin/sh
# bench/cuda-run.sh - runs the CUDA plugin's tests, its certification and
# the benchmark on a GPU machine from an already built tree, without make
# (the machine needs no Autotools and no compiler):
#
#   bench/cuda-run.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR (default _build-cuda) was configured with --with-cuda and built
# with `make && make check TESTS= && make bench/cuda-bench`.  Its libtool
# wrappers hold the absolute path of the source tree they were built in; if
# the tree moved, link that path to the copy first.  Libraries the machine
# lacks (libffi) may be put in BUILD_DIR/extra-libs.  cuBLAS is looked for
# in the usual places and, if found, put on LD_LIBRARY_PATH for the plugin
# to load.  Writes env.txt, tests.txt, cert.tap, cert.json and cert.html
# (`bp-certify --device cuda --profile full`, its wall time in cert.time),
# bench.md, bench-registers.md (the bandwidth table with
# BP_CUDA_NN=registers), tune.md (the reductions and two unary ops under
# each BP_CUDA_REDUCE and BP_CUDA_WAVES setting, next to CUB) and bench.err
# to OUT_DIR.  CERTIFY=no skips the
# certification; CERTIFY_ISOLATION=case certifies with a process per case.
set -u
b=${1:-_build-cuda}
out=${2:-${OUT:-/tmp/cuda-run}}
mkdir -p "$out"
cd "$b" || exit 1
extra=$(pwd)/extra-libs
cublas=$(ls /usr/local/cuda/lib64/libcublas.so.1* 2>/dev/null | head -n 1)
[ -z "$cublas" ] && cublas=$(find / -xdev -name 'libcublas.so.1*' 2>/dev/null | head -n 1)
LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$extra${cublas:+:$(dirname "$cublas")}
export LD_LIBRARY_PATH top_builddir=. BP_CUDA_VERBOSE=1
{
  nvidia-smi
  echo "cuBLAS: ${cublas:-not found}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldd plugins/cuda/.libs/cuda.so
  ldd host/.libs/libbackplane.so
} > "$out/env.txt" 2>&1
# The scripts are in the source tree, the programs in the build tree.
srcdir=$(sed -n 's/^srcdir = //p' Makefile)
run() {
  echo "=== $*"
  start=$(date +%s)
  t=$1
  shift
  if [ -f "./$t" ]; then t="./$t"; else t="$srcdir/$t"; fi
  timeout "${TEST_TIMEOUT:-300}" "$t" "$@"
  echo "=== exit $? after $(( $(date +%s) - start )) s"
}
{
  run tests/cuda/test-cuda-symbols.sh
  run tests/cuda/test-cuda-plugin
  run tests/cuda/test-cuda-ops
  run tests/cuda/test-cuda-functors
  run tests/cuda/test-cuda-host
  # softmax and layer_norm with their rows in registers (BP_CUDA_NN).
  BP_CUDA_NN=registers TAP_ONLY=nn_ops run tests/cuda/test-cuda-ops
  # The reductions under the other geometries that --tune measures.
  for r in slice=4096,cols=8 slice=65536,cols=4 finish=pdl slice=4096,cols=8,finish=pdl; do
    BP_CUDA_REDUCE=$r TAP_ONLY=reductions run tests/cuda/test-cuda-ops
  done
  # The grid-stride kernels with 16 waves of blocks (BP_CUDA_WAVES).
  for c in binary_ops unary_ops where_cast_contiguous fill_and_copy; do
    BP_CUDA_WAVES=16 TAP_ONLY=$c run tests/cuda/test-cuda-ops
  done
} > "$out/tests.txt" 2>&1
if [ "${CERTIFY:-yes}" != no ]; then
  start=$(date +%s)
  timeout "${CERTIFY_TIMEOUT:-400}" conformance/bp-certify plugins/cuda/.libs/cuda.so \
    --device cuda --profile full --jobs "$(nproc)" --isolation "${CERTIFY_ISOLATION:-worker}" \
    --json "$out/cert.json" --html "$out/cert.html" > "$out/cert.tap" 2> "$out/cert.err"
  echo "bp-certify exit $? after $(( $(date +%s) - start )) s, --jobs $(nproc)," \
    "--isolation ${CERTIFY_ISOLATION:-worker}" > "$out/cert.time"
fi
timeout "${BENCH_TIMEOUT:-200}" bench/cuda-bench plugins/cuda/.libs/cuda.so > "$out/bench.md" \
  2> "$out/bench.err"
BP_CUDA_NN=registers timeout "${BENCH_TIMEOUT:-200}" bench/cuda-bench plugins/cuda/.libs/cuda.so \
  --bandwidth-only > "$out/bench-registers.md" 2>> "$out/bench.err"
echo "bench exit $?" >> "$out/bench.err"
timeout "${BENCH_TIMEOUT:-200}" bench/cuda-bench plugins/cuda/.libs/cuda.so --tune \
  > "$out/tune.md" 2>> "$out/bench.err"
echo "tune exit $?" >> "$out/bench.err"
grep -E '^(not ok|ok|1\.\.|=== )' "$out/tests.txt" | grep -v '^ok' | head -n 60
if [ -f "$out/cert.time" ]; then
  cat "$out/cert.time"
  grep '^not ok' "$out/cert.tap" | head -n 20
  tail -n 1 "$out/cert.tap"
fi
cat "$out/bench.md" "$out/tune.md"
