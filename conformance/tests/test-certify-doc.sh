#!/bin/sh
# Every command in the ```sh blocks of docs/certification.md works: each
# runs from a copy of the build tree's layout, with conformance/ on the
# PATH, and exits as the doc says (0, or the N of a trailing
# "# exits N"); files it says it writes are written.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
doc="$top_srcdir/docs/certification.md"
build=$(cd "$top_builddir" && pwd) || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ ! -r "$doc" ]; then
  echo "1..0 # SKIP $doc not found"
  exit 0
fi
# The commands, one per line, from the sh blocks.
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on && NF' "$doc" > "$tmp/commands"
count=$(wc -l < "$tmp/commands")
if [ "$count" -lt 1 ]; then
  echo "1..1"
  echo "not ok 1 - $doc has no sh blocks"
  exit 1
fi
echo "1..$count"
mkdir "$tmp/work"
for d in plugins conformance tools; do ln -s "$build/$d" "$tmp/work/$d"; done
PATH="$build/conformance:$PATH"
export PATH
n=0
fail=0
while IFS= read -r cmd; do
  n=$((n + 1))
  want=0
  case $cmd in
    *"# exits "[0-9]*) want=${cmd##*# exits } ;;
  esac
  (cd "$tmp/work" && eval "$cmd") > "$tmp/out" 2>&1
  got=$?
  missing=""
  # Files named by --json/--html must exist afterwards.
  for f in $(printf '%s\n' "$cmd" | grep -o -- '--\(json\|html\) [^ ]*' | cut -d' ' -f2); do
    [ -s "$tmp/work/$f" ] || missing="$missing $f"
  done
  desc=${cmd%%  # exits*}
  [ "$want" = 0 ] || desc="$desc (exits $want)"
  if [ "$got" = "$want" ] && [ -z "$missing" ]; then
    echo "ok $n - $desc"
  else
    echo "not ok $n - $desc"
    echo "#   exit $got, expected $want${missing:+; not written:$missing}"
    sed 's/^/#   /' "$tmp/out" | grep -v '^#   ok ' | head -20
    fail=1
  fi
done < "$tmp/commands"
exit $fail
