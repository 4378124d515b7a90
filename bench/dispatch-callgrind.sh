#!/bin/sh
# Instructions per call for each dispatch variant, from callgrind: the
# difference between runs of N and 2N iterations, divided by N, so that
# start-up and registration cancel out.  Instruction counts do not depend on
# the machine's load, unlike wall-clock times.
#
#   bench/dispatch-callgrind.sh PATH/TO/dispatch [N]
set -eu
prog=$1
n=${2:-200000}
libtool=${LIBTOOL:-./libtool}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind is not installed; skipping instruction counts"
  exit 0
fi
count() {
  # callgrind prints "Collected : N" on stderr.
  $libtool --mode=execute valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$prog" --only "$1" --iters "$2" 2>&1 >/dev/null | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
printf '\nInstructions per call (callgrind, %s vs %s iterations)\n\n' "$n" "$((2 * n))"
printf '%-11s %12s %12s\n' variant instr/call "over floor"
floor=
for v in direct raw_ffi boxed ffi fast push_boxed alloc_boxed structured find; do
  a=$(count "$v" "$n")
  b=$(count "$v" "$((2 * n))")
  per=$(( (b - a) / n ))
  [ -n "$floor" ] || floor=$per
  printf '%-11s %12d %12d\n' "$v" "$per" "$((per - floor))"
done
