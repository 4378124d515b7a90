#!/bin/sh
# tests/fuzz/run.sh BUILDDIR [SECONDS] - fuzzes the schema parser and
# the .npy reader (tools/npy.c) with libFuzzer (clang), ASan and UBSan,
# for SECONDS each (default 60).  BUILDDIR is a configured and built tree (for
# config.h and libbackplane).  Seeds: every schema in host/core.c,
# tests/schema-corpus.c and tests/test-schema.c, and .npy files that bp-run writes.  Crashing inputs
# are left in BUILDDIR/fuzz/; the exit status is libFuzzer's.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILDDIR [SECONDS]}" && pwd)
secs=${2:-60}
CC=${CC:-clang}
out="$build/fuzz"
mkdir -p "$out/schema" "$out/npy"
flags="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
inc="-I$src/host -I$src/tools -I$src/sdk/include -I$build -I$build/sdk/include"
$CC $flags $inc "$src/tests/fuzz/fuzz-schema.c" "$src/host/schema.c" "$src/host/schema_lex.c" "$src/host/schema_print.c" "$src/host/alloc.c" -lm -o "$out/fuzz-schema"
$CC $flags $inc "$src/tests/fuzz/fuzz-npy.c" "$src/tools/npy.c" -L"$build/host/.libs" -lbackplane \
  -Wl,-rpath,"$build/host/.libs" -lm -o "$out/fuzz-npy"

# Seeds: each quoted string with "->" in it is a schema.
for f in "$src/host/core.c" "$src/tests/schema-corpus.c" "$src/tests/test-schema.c"; do
  grep -o '"[^"]*->[^"]*"' "$f" | sed 's/^"//; s/"$//' | while IFS= read -r s; do
    printf '%s' "$s" > "$out/schema/seed-$(printf '%s' "$s" | cksum | cut -d' ' -f1)"
  done
done
run="$build/tools/bp-run"
$run --write "$out/npy/f32.npy" float32 2,3 1,2,3,4,5,6
$run --write "$out/npy/i64.npy" int64 4 1,2,3,4
$run --write "$out/npy/empty.npy" bool 0 ""
$run --write "$out/npy/f64.npy" float64 1,1,2 0.5,-2

cd "$out"
./fuzz-schema -max_total_time="$secs" -max_len=400 schema
./fuzz-npy -max_total_time="$secs" -max_len=600 -detect_leaks=0 -close_fd_mask=2 npy
