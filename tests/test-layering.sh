#!/bin/sh
# tests/test-layering.sh - host/, the certifier (conformance/, with the
# tools' code it links) and the Python extension (python/src) read
# top-down: no two of their modules (source files) call each other,
# directly or through others.  The edges are the symbols each object uses
# and another of the same room defines (nm); tsort names a loop if there is
# one.  (Static helpers and headers are not modules.)
set -u
top_builddir=${top_builddir:-.}
n=0
echo "1..3"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
have_tools=yes
command -v nm > /dev/null 2>&1 && command -v tsort > /dev/null 2>&1 || have_tools=no

# room NAME OBJECT...: one test point for the objects of a room.  A module
# is named by its object's path less the build directory, .libs/ and the
# target's prefix: host/call, conformance/checks/oom.
room() {
  name=$1
  shift
  n=$((n + 1))
  what="$name has no cycle between its modules"
  if [ $have_tools = no ]; then
    echo "ok $n - $what # SKIP nm or tsort is missing"
    return
  fi
  if [ $# -eq 0 ]; then
    echo "ok $n - $what # SKIP its objects are not built"
    return
  fi
  for o in "$@"; do
    m=$(printf '%s\n' "${o#"$top_builddir"/}" |
      sed 's|\.libs/||; s|[A-Za-z0-9_]*_la-||; s|bp_certify-||; s|\.o$||')
    nm "$o" | awk -v m="$m" '$2 ~ /^[TDBR]$/ { print "D", $3, m } $1 == "U" { print "U", $2, m }'
  done > "$tmp/syms"
  # An edge "user provider" for each symbol a module uses and another defines.
  awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[NR] = $2 " " $3 }
       END { for (i in use) { split(use[i], u, " ");
                              if ((u[1] in def) && def[u[1]] != u[2]) print u[2], def[u[1]] } }' \
    "$tmp/syms" | sort -u > "$tmp/edges"
  if tsort "$tmp/edges" > /dev/null 2> "$tmp/loop" && [ ! -s "$tmp/loop" ]; then
    echo "ok $n - $what ($(wc -l < "$tmp/edges") edges)"
  else
    echo "not ok $n - $what"
    sed 's/^/#   /' "$tmp/loop"
    echo "#   edges (user provider):"
    sed 's/^/#   /' "$tmp/edges"
  fi
}

# libtool's PIC objects, or the plain ones of a static-only build; a
# program's objects.
objs() {
  ls "$top_builddir/$1/.libs/$2"*.o 2> /dev/null || ls "$top_builddir/$1/$2"*.o 2> /dev/null
}
# shellcheck disable=SC2046
room host/ $(objs host libbphost_la-)
# shellcheck disable=SC2046
room conformance/ $(objs conformance bp_certify-) $(objs conformance/checks bp_certify-) \
  $(objs tools libbptools_la-)
# shellcheck disable=SC2046
room python/src $(objs python/src _backplane_abi3_la-)
