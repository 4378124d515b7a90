#!/bin/sh
# Compares the struct layouts and fixed codes of the SDK headers with the
# checked-in ABI baseline of this minor version (a moved, resized, removed
# or added field fails), and checks that they extend every earlier minor's
# baseline compatibly (its fields and codes unchanged, structs only grown).
layout="${top_builddir:-.}/abi/layout"
abi="${top_srcdir:-.}/abi"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
"$layout" "$abi/layout-1.1.txt" > "$tmp/now" || fail=1
"$layout" --compatible "$abi/layout-1.0.txt" > "$tmp/old" || fail=1
# One TAP stream: the two plans added, the points renumbered.
n1=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tmp/now")
n2=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tmp/old")
echo "1..$((n1 + n2))"
grep -v '^1\.\.' "$tmp/now"
grep -v '^1\.\.' "$tmp/old" | awk -v off="$n1" '
  /^(not )?ok [0-9]+/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { $i += off; break } }
  { print }'
exit $fail
