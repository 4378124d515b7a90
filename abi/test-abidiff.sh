#!/bin/sh
# Compares libbackplane.so with the checked-in abidw dumps using
# libabigail's abidiff.  Against this minor's dump (abi/libbackplane-1.3.abi)
# there must be no change at all; against ABI 1.0, 1.1 and 1.2
# (abi/libbackplane-1.0.abi, -1.1.abi, -1.2.abi) only compatible ones:
# members appended to structs, no change abidiff calls incompatible,
# nothing removed.  The dumps
# were made with --drop-private-types, so types that are not defined in the
# public headers are opaque in them and their changes are not reported;
# added functions are checked by test-symbols.sh.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
lib="$top_builddir/host/.libs/libbackplane.so"
abidiff=${ABIDIFF:-$(command -v abidiff)}
if [ -z "$abidiff" ]; then echo "1..0 # SKIP abidiff (libabigail) is not installed"; exit 0; fi
if [ ! -f "$lib" ]; then echo "1..0 # SKIP no shared libbackplane.so was built"; exit 0; fi
earlier="1.0 1.1 1.2"
echo "1..$((1 + $(echo $earlier | wc -w)))"
fail=0
# abidiff's exit status is a bit mask: 1 error, 2 usage, 4 change, 8
# incompatible change.
base="$top_srcdir/abi/libbackplane-1.3.abi"
out=$("$abidiff" --no-added-syms "$base" "$lib" 2>&1)
st=$?
if [ $st -eq 0 ]; then
  echo "ok 1 - abidiff finds no ABI change against $base"
else
  echo "not ok 1 - abidiff finds no ABI change against $base (abidiff status $st)"
  echo "$out" | sed 's/^/# /'
  fail=1
fi
k=1
for v in $earlier; do
  k=$((k + 1))
  old="$top_srcdir/abi/libbackplane-$v.abi"
  out=$("$abidiff" --no-added-syms "$old" "$lib" 2>&1)
  st=$?
  # Every reported change must be an insertion at the end of a struct.
  bad=$(echo "$out" | grep -E "Removed|member (changes|deletions)|offset changed|type name changed" |
    grep -vE " 0 Removed|no data member change|[0-9]+ data member changes? \([0-9]+ filtered\)")
  if [ $((st & 11)) -eq 0 ] && [ -z "$bad" ]; then
    echo "ok $k - against ABI $v ($old) abidiff reports only compatible additions (status $st)"
  else
    echo "not ok $k - against ABI $v ($old) abidiff reports only compatible additions (status $st)"
    echo "$out" | sed 's/^/# /'
    fail=1
  fi
done
exit $fail
