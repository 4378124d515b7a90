#!/bin/sh
# tests/test-layering.sh - host/ reads top-down: no two of its modules
# (source files) call each other, directly or through others.  The edges
# are the symbols each object uses and another defines (nm); tsort names a
# loop if there is one.  (Static helpers and headers are not modules.)
set -u
top_builddir=${top_builddir:-.}
n=0
result() { # result STATUS DESCRIPTION [DETAIL...]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    shift 2
    for d in "$@"; do printf '%s\n' "$d" | sed 's/^/#   /'; done
  fi
}
echo "1..1"
if ! command -v nm > /dev/null 2>&1 || ! command -v tsort > /dev/null 2>&1; then
  echo "ok 1 - host/ has no cycle between its modules # SKIP nm or tsort is missing"
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$top_builddir"/host/.libs/libbphost_la-*.o 2> /dev/null ||
  ls "$top_builddir"/host/libbphost_la-*.o 2> /dev/null)
if [ -z "$objs" ]; then
  echo "ok 1 - host/ has no cycle between its modules # SKIP the host's objects are not built"
  exit 0
fi
for o in $objs; do
  m=$(basename "$o" .o)
  m=${m#libbphost_la-}
  nm "$o" | awk -v m="$m" '$2 ~ /^[TDBR]$/ { print "D", $3, m } $1 == "U" { print "U", $2, m }'
done > "$tmp/syms"
# An edge "user provider" for each symbol a module uses and another defines.
awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[NR] = $2 " " $3 }
     END { for (i in use) { split(use[i], u, " "); if ((u[1] in def) && def[u[1]] != u[2]) print u[2], def[u[1]] } }' \
  "$tmp/syms" | sort -u > "$tmp/edges"
tsort "$tmp/edges" > /dev/null 2> "$tmp/loop"
if [ -s "$tmp/loop" ]; then
  result 1 "host/ has no cycle between its modules" "$(cat "$tmp/loop")" \
    "edges (user provider):" "$(cat "$tmp/edges")"
else
  result 0 "host/ has no cycle between its modules ($(wc -l < "$tmp/edges") edges)"
fi
