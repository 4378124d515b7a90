# conformance/tests/certify-lib.sh - what the certifier's test scripts
# share: the paths, a scratch directory, TAP output, and helpers over
# the runs they keep in $tmp.  Sourced, never run.
top_builddir=${top_builddir:-.}
certify="$top_builddir/conformance/bp-certify"
cpu="$top_builddir/plugins/cpu/.libs/cpu.so"
plugins="$top_builddir/tests/plugins/.libs"
faulty="$top_builddir/conformance/tests/faulty/.libs"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
result() { # result OK DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" = 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    [ -n "$3" ] && grep -v '^ok ' "$3" | sed 's/^/#   /' | head -40
    fail=1
  fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
has() { grep -q -- "$2" "$1"; } # has FILE PATTERN
# run NAME ARGS...: certifies into $tmp/NAME.tap, with "exit N" appended.
run() {
  name=$1
  shift
  "$certify" "$@" > "$tmp/$name.tap" 2> "$tmp/$name.err"
  echo "exit $?" >> "$tmp/$name.tap"
}
# only NAME PATTERN: every "not ok" line of NAME matches PATTERN (an
# extended regular expression), and there is at least one.
only() {
  grep '^not ok' "$tmp/$1.tap" > "$tmp/$1.bad"
  [ -s "$tmp/$1.bad" ] && ! grep -Ev -- "$2" "$tmp/$1.bad" > /dev/null
}
# same A B: the two runs have the same test points, verdicts and reasons.
same() {
  grep '^\(not \)\{0,1\}ok ' "$tmp/$1.tap" > "$tmp/$1.points"
  grep '^\(not \)\{0,1\}ok ' "$tmp/$2.tap" > "$tmp/$2.points"
  [ -s "$tmp/$1.points" ] && cmp -s "$tmp/$1.points" "$tmp/$2.points"
}
# why_differ A B: what tells runs A and B apart, into $tmp/A-B.why (for
# result's FILE): each run's lines other than its passing points, its
# stderr, and the points that differ.
why_differ() {
  for r in "$1" "$2"; do
    echo "run $r:"
    grep -v '^ok ' "$tmp/$r.tap" | head -15
    head -5 "$tmp/$r.err"
  done > "$tmp/$1-$2.why"
  grep '^\(not \)\{0,1\}ok ' "$tmp/$1.tap" > "$tmp/$1.points"
  grep '^\(not \)\{0,1\}ok ' "$tmp/$2.tap" > "$tmp/$2.points"
  diff "$tmp/$1.points" "$tmp/$2.points" | grep '^[<>]' | head -12 >> "$tmp/$1-$2.why"
}
# loads FILE: how many processes initialised the plugin (one pid a line,
# written by the faulty corpus's BP_FAULTY_LOAD_LOG).
loads() { if [ -f "$1" ]; then sort -u "$1" | wc -l | tr -d ' '; else echo 0; fi; }
# loading NAME: the cases of NAME's run that load the plugin in case
# isolation, where each loads it in its own process: all but the three
# read from the ELF file, registration/probe (which reports the probe),
# and the SKIPs that stop before any load.
loading() {
  total=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/$1.tap")
  none=$(grep -c ' - handshake/exports\( \|$\)\| - handshake/imports\( \|$\)\| - handshake/binary\( \|$\)\| - registration/probe\( \|$\)\|# SKIP .*belongs to --profile full' "$tmp/$1.tap")
  echo $((total - none))
}
# reruns NAME: the cases rerun alone after failing in a shared worker.
reruns() { sed -n 's/^# \([0-9]*\) case(s) that did not pass in a shared worker.*/\1/p' "$tmp/$1.tap" | grep . || echo 0; }
# run_doc DOC: runs every command of DOC's ```sh blocks, one a line, as
# a test point each: from a copy of the build tree's layout ($tmp/work),
# with conformance/ on the PATH, it must exit as the doc says (0, or the N
# of a trailing "# exits N"), and the files its --json and --html name must
# be written.  Command K's output stays in $tmp/doc/K.out and its line in
# $tmp/doc/K.cmd; doc_output PATTERN prints the output file of the first
# command that matches PATTERN (a grep regex).  A command that contains
# $doc_skip (a fixed string) is reported as a SKIP with $doc_skip_why.
run_doc() {
  mkdir -p "$tmp/doc" "$tmp/work" || return 1
  build=$(cd "$top_builddir" && pwd) || return 1
  for d in plugins conformance tools; do
    [ -e "$tmp/work/$d" ] || ln -s "$build/$d" "$tmp/work/$d"
  done
  awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on && NF' "$1" > "$tmp/doc/commands"
  if [ ! -s "$tmp/doc/commands" ]; then
    result 1 "$1 has sh blocks"
    return 1
  fi
  k=0
  while IFS= read -r cmd; do
    k=$((k + 1))
    want=0
    case $cmd in
      *"# exits "[0-9]*) want=${cmd##*# exits } ;;
    esac
    printf '%s\n' "$cmd" > "$tmp/doc/$k.cmd"
    if [ -n "${doc_skip:-}" ] && case $cmd in *"$doc_skip"*) true ;; *) false ;; esac; then
      skip "docs: ${cmd%%  # exits*}" "$doc_skip_why"
      continue
    fi
    (cd "$tmp/work" && PATH="$build/conformance:$PATH" && eval "$cmd") > "$tmp/doc/$k.out" 2>&1
    got=$?
    missing=""
    for f in $(printf '%s\n' "$cmd" | grep -o -- '--\(json\|html\) [^ ]*' | cut -d' ' -f2); do
      [ -s "$tmp/work/$f" ] || missing="$missing $f"
    done
    desc="docs: ${cmd%%  # exits*}"
    [ "$want" = 0 ] || desc="$desc (exits $want)"
    if [ "$got" = "$want" ] && [ -z "$missing" ]; then
      result 0 "$desc"
    else
      echo "#   exit $got, expected $want${missing:+; not written:$missing}" > "$tmp/doc/$k.why"
      grep -v '^ok ' "$tmp/doc/$k.out" >> "$tmp/doc/$k.why"
      result 1 "$desc" "$tmp/doc/$k.why"
    fi
  done < "$tmp/doc/commands"
}
doc_output() {
  k=$(grep -n -- "$1" "$tmp/doc/commands" | head -n 1 | cut -d: -f1)
  [ -n "$k" ] && echo "$tmp/doc/$k.out"
}
