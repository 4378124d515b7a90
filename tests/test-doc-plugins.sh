#!/bin/sh
# The commands shown in the plugin pages (docs/cpu-plugin.md and
# docs/cuda-plugin.md) run in the build tree, through tests/run-doc.sh.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
src=$(cd "$top_srcdir" && pwd) || exit 1
echo "1..2"
n=0
fail=0
for doc in cpu-plugin cuda-plugin; do
  n=$((n + 1))
  if [ "$doc" = cuda-plugin ] && [ ! -f "$top_builddir/plugins/cuda/.libs/cuda.so" ]; then
    echo "ok $n - docs/$doc.md # SKIP the CUDA plugin is not built (no CUDA Toolkit found)"
    continue
  fi
  out=$(cd "$top_builddir" && BP_PLUGIN_PATH= ${SHELL:-/bin/sh} "$src/tests/run-doc.sh" "$src/docs/$doc.md" 2>&1)
  st=$?
  if [ $st -eq 0 ] && echo "$out" | grep -q '^ok' && ! echo "$out" | grep -q '^not ok'; then
    echo "ok $n - every command of docs/$doc.md runs"
  else
    echo "not ok $n - every command of docs/$doc.md runs"
    echo "$out" | sed 's/^/# /'
    fail=1
  fi
done
exit $fail
