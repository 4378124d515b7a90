#!/bin/sh
# The CUDA plugin's dynamic symbol table.  Like every plugin it exports
# exactly one symbol, bp_plugin_init, imports no bp_* symbol and does not
# link libbackplane; it links the CUDA runtime statically, so it needs no
# libcudart at run time, and it loads cuBLAS itself (no libcublas either).
so="${top_builddir:-.}/plugins/cuda/.libs/cuda.so"
nm="${NM:-nm}"
if [ ! -f "$so" ]; then
  echo "1..0 # SKIP the CUDA plugin is not built (no CUDA Toolkit)"
  exit 0
fi
if ! command -v "$nm" >/dev/null 2>&1; then
  echo "1..0 # SKIP nm not found"
  exit 0
fi
echo "1..4"
fail=0

defined=$("$nm" -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sort)
if [ "$defined" = "bp_plugin_init" ]; then
  echo "ok 1 - exports only bp_plugin_init"
else
  echo "not ok 1 - exports only bp_plugin_init"
  echo "$defined" | sed 's/^/# exported: /'
  fail=1
fi

imports=$("$nm" -D --undefined-only "$so" | awk '{ print $NF }' | sed 's/@.*//' | grep '^bp_')
if [ -z "$imports" ]; then
  echo "ok 2 - imports no bp_* symbol"
else
  echo "not ok 2 - imports no bp_* symbol"
  echo "$imports" | sed 's/^/# imported: /'
  fail=1
fi

# C++ runtime symbols would need libstdc++, which the plugin does not link.
cxx=$("$nm" -D --undefined-only "$so" | awk '{ print $NF }' | grep -E '^(_Z|__cxa_guard|__gxx)')
if [ -z "$cxx" ]; then
  echo "ok 3 - needs no C++ runtime symbol"
else
  echo "not ok 3 - needs no C++ runtime symbol"
  echo "$cxx" | sed 's/^/# undefined: /'
  fail=1
fi

readelf="${READELF:-readelf}"
if command -v "$readelf" >/dev/null 2>&1; then
  needed=$("$readelf" -d "$so" | grep NEEDED | grep -i -E 'backplane|cudart|cublas|stdc\+\+')
  if [ -z "$needed" ]; then
    echo "ok 4 - links neither libbackplane, libcudart, libcublas nor libstdc++"
  else
    echo "not ok 4 - links neither libbackplane, libcudart, libcublas nor libstdc++"
    echo "$needed" | sed 's/^/# /'
    fail=1
  fi
else
  echo "ok 4 - links neither libbackplane, libcudart, libcublas nor libstdc++ # SKIP readelf not found"
fi
exit $fail
