#!/bin/sh
# README.md's commands run on a fresh machine as they are written: the
# Quick start is exactly two commands, the first of which installs what it
# built (the Python package with it), and no command starts with sudo,
# which a fresh Debian image run as root does not have
# (tools/install-deps.sh exits 0 at once when everything is installed,
# and runs itself through sudo when it is not root and sudo exists:
# tests/test-install-deps.sh).
top_srcdir=${top_srcdir:-.}
readme="$top_srcdir/README.md"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
result() { # result STATUS DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    [ -n "$3" ] && sed 's/^/#   /' "$3" | head -20
    fail=1
  fi
}
echo "1..5"
# Every line of every ```sh block; and those of the Quick start's first.
awk '/^```sh/ { on = 1; next } /^```/ { on = 0 } on' "$readme" > "$tmp/commands"
awk '/^## Quick start/ { q = 1 } q && /^```sh/ { on = 1; next } on && /^```/ { exit } on' \
  "$readme" > "$tmp/quick"
[ "$(grep -c . "$tmp/quick")" -eq 2 ]
result $? "the Quick start is two commands" "$tmp/quick"
head -n 1 "$tmp/quick" | grep -q '^tools/install-deps\.sh && '
result $? "the first one installs the dependencies, without sudo" "$tmp/quick"
head -n 1 "$tmp/quick" | grep -Eq '(^|&& )make install( &&|$)' &&
  ! head -n 1 "$tmp/quick" | grep -q -- '--without-python'
result $? "the first one installs Backplane and its Python package (make install)" "$tmp/quick"
! grep -En '^[[:space:]]*sudo[[:space:]]|(&&|;|\|)[[:space:]]*sudo[[:space:]]' "$tmp/commands" > "$tmp/sudo"
result $? "no command in README.md runs sudo" "$tmp/sudo"
sed -n 2p "$tmp/quick" | grep -Eqx 'make( -j"\$\(nproc\)")? check'
result $? "the second one runs the fast tier (make check, one job a core)" "$tmp/quick"
exit $fail
