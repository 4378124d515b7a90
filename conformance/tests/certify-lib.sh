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
# loads FILE: how many processes initialised the plugin (one pid a line,
# written by the faulty corpus's BP_FAULTY_LOAD_LOG).
loads() { if [ -f "$1" ]; then sort -u "$1" | wc -l | tr -d ' '; else echo 0; fi; }
# loading NAME: the cases of NAME's run that load the plugin in case
# isolation, where each loads it in its own process: all but the two
# read from the ELF file, registration/probe (which reports the probe),
# and the SKIPs that stop before any load.
loading() {
  total=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/$1.tap")
  none=$(grep -c ' - handshake/exports\( \|$\)\| - handshake/imports\( \|$\)\| - registration/probe\( \|$\)\|# SKIP .*belongs to --profile full' "$tmp/$1.tap")
  echo $((total - none))
}
# reruns NAME: the cases rerun alone after failing in a shared worker.
reruns() { sed -n 's/^# \([0-9]*\) case(s) that did not pass in a shared worker.*/\1/p' "$tmp/$1.tap" | grep . || echo 0; }
