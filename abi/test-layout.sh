#!/bin/sh
# Compares the struct layouts and fixed codes of the SDK headers with the
# checked-in ABI baseline of this minor version (a moved, resized, removed
# or added field fails), and checks that they extend every earlier minor's
# baseline compatibly (its fields and codes unchanged, structs only grown).
layout="${top_builddir:-.}/abi/layout"
abi="${top_srcdir:-.}/abi"
current=1.3
earlier="1.2 1.1 1.0"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
"$layout" "$abi/layout-$current.txt" > "$tmp/0" || fail=1
k=0
for v in $earlier; do
  k=$((k + 1))
  "$layout" --compatible "$abi/layout-$v.txt" > "$tmp/$k" || fail=1
done
# One TAP stream: the plans added, the points renumbered.
total=0
for f in $(seq 0 $k); do
  total=$((total + $(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tmp/$f")))
done
echo "1..$total"
off=0
for f in $(seq 0 $k); do
  grep -v '^1\.\.' "$tmp/$f" | awk -v off="$off" '
    /^(not )?ok [0-9]+/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { $i += off; break } }
    { print }'
  off=$((off + $(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tmp/$f")))
done
exit $fail
