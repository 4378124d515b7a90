#!/bin/sh
# Compares libbackplane.so with the checked-in abidw dump of ABI 1.0
# (abi/libbackplane-1.0.abi) using libabigail's abidiff: a changed function
# type, a changed public struct or a removed function fails, and abidiff's
# report names it.  The dump was made with --drop-private-types, so types
# that are not defined in the public headers are opaque in it and their
# changes are not reported; added functions are reported by
# test-symbols.sh.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
lib="$top_builddir/host/.libs/libbackplane.so"
base="$top_srcdir/abi/libbackplane-1.0.abi"
abidiff=${ABIDIFF:-$(command -v abidiff)}
if [ -z "$abidiff" ]; then echo "1..0 # SKIP abidiff (libabigail) is not installed"; exit 0; fi
if [ ! -f "$lib" ]; then echo "1..0 # SKIP no shared libbackplane.so was built"; exit 0; fi
echo "1..1"
out=$("$abidiff" --no-added-syms "$base" "$lib" 2>&1)
st=$?
if [ $st -eq 0 ]; then
  echo "ok 1 - abidiff finds no ABI change against $base"
else
  # abidiff's exit status is a bit mask: 1 error, 2 usage, 4 change, 8
  # incompatible change.
  echo "not ok 1 - abidiff finds no ABI change against $base (abidiff status $st)"
  echo "$out" | sed 's/^/# /'
fi
[ $st -eq 0 ]
