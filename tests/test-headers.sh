#!/bin/sh
# Every public header compiles on its own, as C11 and as C++11, with all
# warnings as errors.
inc="${top_srcdir:-.}/sdk/include"
cc="${CC:-cc}"
cxx="${CXX:-c++}"
headers="abi.h plugin.h host.h"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..6"
n=0
fail=0
for h in $headers; do
  printf '#include <backplane/%s>\nint bp_test_unit_is_not_empty;\n' "$h" > "$tmp/t.c"
  n=$((n + 1))
  if $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/err"; then
    echo "ok $n - $h compiles alone as C11"
  else
    echo "not ok $n - $h compiles alone as C11"; sed 's/^/# /' "$tmp/err"; fail=1
  fi
  cp "$tmp/t.c" "$tmp/t.cc"
  n=$((n + 1))
  if $cxx -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.cc" -o "$tmp/t.o" 2> "$tmp/err"; then
    echo "ok $n - $h compiles alone as C++11"
  else
    echo "not ok $n - $h compiles alone as C++11"; sed 's/^/# /' "$tmp/err"; fail=1
  fi
done
exit $fail
