#!/bin/sh
# The CPU plugin's dynamic symbol table.  A plugin reaches the host only
# through the function table it is handed, so its shared object exports
# exactly one symbol, bp_plugin_init, imports no bp_* symbol, and does not
# link libbackplane.
so="${top_builddir:-.}/plugins/cpu/.libs/cpu.so"
nm="${NM:-nm}"
if ! command -v "$nm" >/dev/null 2>&1; then
  echo "1..0 # SKIP nm not found"
  exit 0
fi
echo "1..4"
fail=0
if [ -f "$so" ]; then
  echo "ok 1 - $so exists"
else
  echo "not ok 1 - $so exists"
  echo "not ok 2 - exports only bp_plugin_init # no plugin"
  echo "not ok 3 - imports no bp_* symbol # no plugin"
  echo "not ok 4 - does not link libbackplane # no plugin"
  exit 1
fi

# Defined dynamic symbols: "ADDRESS TYPE NAME".
defined=$("$nm" -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sort)
if [ "$defined" = "bp_plugin_init" ]; then
  echo "ok 2 - exports only bp_plugin_init"
else
  echo "not ok 2 - exports only bp_plugin_init"
  echo "$defined" | sed 's/^/# exported: /'
  fail=1
fi

# Undefined dynamic symbols: "TYPE NAME" (U, w, v ...), versions stripped.
imports=$("$nm" -D --undefined-only "$so" | awk '{ print $NF }' | sed 's/@.*//' | grep '^bp_')
if [ -z "$imports" ]; then
  echo "ok 3 - imports no bp_* symbol"
else
  echo "not ok 3 - imports no bp_* symbol"
  echo "$imports" | sed 's/^/# imported: /'
  fail=1
fi

readelf="${READELF:-readelf}"
if command -v "$readelf" >/dev/null 2>&1; then
  needed=$("$readelf" -d "$so" | grep NEEDED | grep -i backplane)
  if [ -z "$needed" ]; then
    echo "ok 4 - does not link libbackplane"
  else
    echo "not ok 4 - does not link libbackplane"
    echo "$needed" | sed 's/^/# /'
    fail=1
  fi
else
  echo "ok 4 - does not link libbackplane # SKIP readelf not found"
fi
exit $fail
