#!/bin/sh
# Compares libbackplane's exported symbols with the checked-in list of this
# minor version, ABI 1.3 (abi/symbols-1.3.txt): a removed symbol, a symbol
# outside a version node and a symbol that is not in the list fail, each
# named.  Every symbol of ABI 1.0, 1.1 and 1.2 (abi/symbols-1.0.txt,
# abi/symbols-1.1.txt, abi/symbols-1.2.txt) must still be exported, in
# its own node.  Also checks that the SONAME follows abi/libtool-version.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
lib="$top_builddir/host/.libs/libbackplane.so"
base="$top_srcdir/abi/symbols-1.3.txt"
earlier="1.0 1.1 1.2"
if [ ! -f "$lib" ]; then echo "1..0 # SKIP no shared libbackplane.so was built"; exit 0; fi
if ! command -v nm > /dev/null 2>&1; then echo "1..0 # SKIP nm is not installed"; exit 0; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
"$top_srcdir/abi/symbols.sh" "$lib" > "$tmp/now"
grep -v '^#' "$base" | LC_ALL=C sort > "$tmp/base"
echo "1..$((4 + $(echo $earlier | wc -w)))"

LC_ALL=C comm -23 "$tmp/base" "$tmp/now" > "$tmp/removed"
if [ -s "$tmp/removed" ]; then
  echo "not ok 1 - every exported symbol of $base is still exported"
  while read -r name node; do
    echo "# removed: $name ($node) is in the baseline but not exported by libbackplane.so: removing or renaming an exported symbol breaks the ABI"
  done < "$tmp/removed"
  fail=1
else
  echo "ok 1 - every exported symbol of the baseline is still exported ($(wc -l < "$tmp/base") symbols)"
fi

grep -v ' BACKPLANE_[0-9][0-9]*\.[0-9][0-9]*$' "$tmp/now" > "$tmp/unversioned"
if [ -s "$tmp/unversioned" ]; then
  echo "not ok 2 - every export has a version node from host/libbackplane.map"
  sed 's/^/# no version node: /' "$tmp/unversioned"
  fail=1
else
  echo "ok 2 - every export has a version node from host/libbackplane.map"
fi

LC_ALL=C comm -13 "$tmp/base" "$tmp/now" > "$tmp/added"
if [ -s "$tmp/added" ]; then
  echo "not ok 3 - libbackplane exports nothing that is not in the baseline"
  while read -r name node; do
    echo "# added: $name ($node) is exported but not in $base; an addition needs a minor version bump, a new node in host/libbackplane.map and 'make abi-baseline'"
  done < "$tmp/added"
  fail=1
else
  echo "ok 3 - libbackplane exports nothing that is not in the baseline"
fi

IFS=: read -r current revision age < "$top_srcdir/abi/libtool-version"
want="libbackplane.so.$((current - age))"
soname=$(readelf -d "$lib" 2> /dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ -z "$soname" ]; then
  echo "ok 4 - the SONAME follows abi/libtool-version # SKIP readelf is not installed"
elif [ "$soname" = "$want" ]; then
  echo "ok 4 - the SONAME $soname follows abi/libtool-version ($current:$revision:$age)"
else
  echo "not ok 4 - the SONAME follows abi/libtool-version"
  echo "# SONAME is $soname, abi/libtool-version $current:$revision:$age gives $want"
  fail=1
fi
k=4
for v in $earlier; do
  k=$((k + 1))
  grep -v '^#' "$top_srcdir/abi/symbols-$v.txt" | LC_ALL=C sort > "$tmp/old"
  LC_ALL=C comm -23 "$tmp/old" "$tmp/now" > "$tmp/lost"
  if [ -s "$tmp/lost" ]; then
    echo "not ok $k - every symbol of ABI $v is still exported in its own node"
    sed 's/^/# missing or moved: /' "$tmp/lost"
    fail=1
  else
    echo "ok $k - every symbol of ABI $v is still exported in its own node ($(wc -l < "$tmp/old") symbols)"
  fi
done
exit $fail
