#!/bin/sh
# The commands shown in the plugin pages (docs/cpu-plugin.md and
# docs/cuda-plugin.md) and in README.md run in the build tree, through
# tests/run-doc.sh.  (README.md's Quick start installs packages, so it is
# marked `sh root` and skipped here; CI runs it.)
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
src=$(cd "$top_srcdir" && pwd) || exit 1
echo "1..3"
n=0
fail=0
for doc in docs/cpu-plugin docs/cuda-plugin README; do
  n=$((n + 1))
  if [ "$doc" = docs/cuda-plugin ] && [ ! -f "$top_builddir/plugins/cuda/.libs/cuda.so" ]; then
    echo "ok $n - $doc.md # SKIP the CUDA plugin is not built (no CUDA Toolkit found)"
    continue
  fi
  out=$(cd "$top_builddir" && BP_PLUGIN_PATH= ${SHELL:-/bin/sh} "$src/tests/run-doc.sh" "$src/$doc.md" 2>&1)
  st=$?
  # README.md's commands leave their .npy files in the build tree.
  [ "$doc" = README ] && rm -f "$top_builddir/a.npy" "$top_builddir/b.npy" "$top_builddir/out.npy"
  if [ $st -eq 0 ] && echo "$out" | grep -q '^ok' && ! echo "$out" | grep -q '^not ok'; then
    echo "ok $n - every command of $doc.md runs"
  else
    echo "not ok $n - every command of $doc.md runs"
    echo "$out" | sed 's/^/# /'
    fail=1
  fi
done
exit $fail
