#!/bin/sh
# The TAP harness's watchdog (tests/tap.c) counts CPU time: with
# TAP_TIMEOUT=2, tap-selftest's case that burns CPU and the one whose
# child does are stopped after 2 s of CPU time (the child killed too), the
# one that sleeps after 2 s without progress, and the one whose child
# works for longer than 2 s of wall time but far less CPU time passes, as
# does the plain one.
top_builddir=${top_builddir:-.}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
TAP_TIMEOUT=2 "$top_builddir/tests/tap-selftest" > "$out" 2>&1
echo "1..6"
n=0
check() { # check PATTERN DESCRIPTION
  n=$((n + 1))
  if grep -q -- "$1" "$out"; then echo "ok $n - $2"; else echo "not ok $n - $2"; sed 's/^/#   /' "$out"; fail=1; fi
}
fail=0
check "^not ok 1 - spins # TIMEOUT after 2 s of CPU time$" "a case that burns CPU stops after the CPU time"
check "^not ok 2 - sleeps # TIMEOUT after 2 s without progress" "a case that sleeps stops after as long without CPU time"
check "^not ok 3 - child_spins # TIMEOUT after 2 s of CPU time$" "a case's child's CPU time counts"
check "^ok 4 - child_works$" "a case whose child works longer than the timeout in wall time passes"
check "^ok 5 - passes$" "a plain case passes"
n=$((n + 1))
# the killed child of child_spins is gone (no process of ours still burns)
sleep 1
if grep -l "tap-selftes[t]" /proc/[0-9]*/cmdline 2> /dev/null | grep -q .; then
  echo "not ok $n - the watchdog kills a stopped case's children too"
  fail=1
else
  echo "ok $n - the watchdog kills a stopped case's children too"
fi
exit $fail
