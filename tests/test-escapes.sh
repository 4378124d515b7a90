#!/bin/sh
# Text from a plugin reaches the terminal escaped (tools/termsafe.h).  The
# escapes plugin (tests/plugins/escapes.c) puts ESC sequences, newlines,
# a carriage return, a C1 control and forged TAP lines ("ok 999 - forged",
# "1..999") in its vendor, version, note, op doc, device name and kernel
# errors.  bp-info, bp-run and bp-certify must print no raw ESC byte, and
# bp-certify's TAP must still parse, one line per test point.
top_builddir=${top_builddir:-.}
info="$top_builddir/tools/bp-info"
run="$top_builddir/tools/bp-run"
certify="$top_builddir/conformance/bp-certify"
esc_so="$top_builddir/tests/plugins/.libs/escapes.so"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
result() { # result STATUS DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    [ -n "$3" ] && od -c "$3" | head -20 | sed 's/^/#   /'
    fail=1
  fi
}
ESC=$(printf '\033')
no_esc() { ! grep -q "$ESC" "$1"; }  # no_esc FILE
has() { grep -qF -- "$2" "$1"; }     # has FILE FIXED-STRING
# The escaped form of the plugin's NASTY string.
nasty='\x1b[31mred\x1b[0m \x1b[2J\x1b]0;pwned\x07\nok 999 - forged\n1..999\r\u009b1m'
# tap_ok FILE: a plan first, then only test points and comments, numbered
# 1..N in order, N as planned.
tap_ok() {
  awk '
    NR == 1 { if (!match($0, /^1\.\.[0-9]+( # .*)?$/)) exit 1; plan = substr($0, 4) + 0; next }
    /^#/ { next }
    /^(not )?ok [0-9]+( |$)/ { sub(/^not /, ""); split($0, f, " "); if (f[2] != ++k) exit 1; next }
    { exit 1 }
    END { exit k != plan }' "$1"
}

echo "1..15"
BP_PLUGIN_PATH= "$info" --no-discover "$esc_so" > "$tmp/info.txt" 2>&1
result $? "bp-info lists the plugin"
no_esc "$tmp/info.txt"; result $? "bp-info prints no raw ESC byte" "$tmp/info.txt"
has "$tmp/info.txt" "name        escapes 1.0 $nasty (Vendor $nasty), ABI "
result $? "bp-info shows the version and vendor escaped, on one line" "$tmp/info.txt"
has "$tmp/info.txt" "note        a note $nasty" && has "$tmp/info.txt" "explodes $nasty" &&
  grep -q "^  escdev:0  (code [0-9]*)  \\\\x1b\\[31mred" "$tmp/info.txt" && ! grep -q '^ok 999' "$tmp/info.txt"
result $? "bp-info shows the note, the op's doc and the device name escaped" "$tmp/info.txt"
# A file name is text from outside too.
odd="$tmp/e$(printf '\033')[7mvil.so"
cp "$esc_so" "$odd"
BP_PLUGIN_PATH= "$info" --no-discover "$odd" > "$tmp/odd.txt" 2>&1
no_esc "$tmp/odd.txt" && has "$tmp/odd.txt" "e\\x1b[7mvil.so"
result $? "bp-info escapes a plugin's file name" "$tmp/odd.txt"
if command -v python3 > /dev/null 2>&1; then
  BP_PLUGIN_PATH= "$info" --json --no-discover "$esc_so" > "$tmp/info.json" 2>&1
  python3 - "$tmp/info.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
nasty = "\x1b[31mred\x1b[0m \x1b[2J\x1b]0;pwned\x07\nok 999 - forged\n1..999\r\u009b1m"
p = d["plugins"][0]
assert p["vendor"] == "Vendor " + nasty, p["vendor"]
assert p["error"] == "a note " + nasty, p["error"]
PY
  result $? "bp-info --json keeps the exact strings, JSON-escaped"
else
  n=$((n + 1)); echo "ok $n - bp-info --json keeps the exact strings # SKIP python3 is not installed"
fi

"$run" --write "$tmp/a.npy" float32 2 1,2 > /dev/null 2>&1
BP_PLUGIN_PATH= "$run" --no-discover -p "$esc_so" escapes::boom "$tmp/a.npy" > "$tmp/run.txt" 2>&1
st=$?
[ $st -eq 1 ] && [ "$(wc -l < "$tmp/run.txt")" -eq 1 ] && no_esc "$tmp/run.txt" &&
  has "$tmp/run.txt" "bp-run: escapes::boom: argument #0: $nasty # SKIP forged"
result $? "bp-run prints a kernel's error escaped, on one line (status $st)" "$tmp/run.txt"

BP_PLUGIN_PATH= "$certify" "$esc_so" --ops core::add --json "$tmp/cert.json" > "$tmp/cert.tap" 2> "$tmp/cert.err"
st=$?
[ $st -eq 1 ] && grep -q "^not ok .* - core::add/float32/basic # numerics: .*failed: core::add: argument \\\\#0: \\\\x1b\\[31mred" "$tmp/cert.tap"
result $? "bp-certify fails core::add, quoting the kernel's error (status $st)" "$tmp/cert.tap"
# A '#' of the message is escaped in TAP ("\#", so that "# SKIP" forges no
# directive) and kept in the JSON.
has "$tmp/cert.tap" '1m \# SKIP forged' && ! grep -q '[^\]# SKIP forged' "$tmp/cert.tap" &&
  has "$tmp/cert.json" 'core::add: argument #0: ' && has "$tmp/cert.json" '1m # SKIP forged'
result $? "bp-certify escapes a message's '#' in TAP as \\#, and keeps it in the JSON" "$tmp/cert.tap"
no_esc "$tmp/cert.tap" && no_esc "$tmp/cert.err"
result $? "bp-certify prints no raw ESC byte" "$tmp/cert.tap"
tap_ok "$tmp/cert.tap" && ! grep -q '^ok 999\|^1\.\.999' "$tmp/cert.tap"
result $? "bp-certify's TAP parses: one line per test point, none forged" "$tmp/cert.tap"
BP_PLUGIN_PATH= "$certify" "$esc_so" --list > "$tmp/list.txt" 2>&1
no_esc "$tmp/list.txt" && has "$tmp/list.txt" "core::add/float32/basic"
result $? "bp-certify --list prints no raw ESC byte" "$tmp/list.txt"
# The plugin's note reaches the plan line when its device does not exist.
BP_PLUGIN_PATH= "$certify" "$esc_so" --device escdev:4 > "$tmp/skip.tap" 2> "$tmp/skip.err"
st=$?
[ $st -eq 1 ] && [ "$(wc -l < "$tmp/skip.tap")" -eq 2 ] && tap_ok "$tmp/skip.tap" &&
  has "$tmp/skip.tap" "(the plugin's note: a note \\x1b[31mred"
result $? "bp-certify's skip line quotes the note escaped, on one line (status $st)" "$tmp/skip.tap"
no_esc "$tmp/skip.tap" && no_esc "$tmp/skip.err"
result $? "bp-certify's skip line and message have no raw ESC byte" "$tmp/skip.err"
# A usage error that lists the plugin's device types.
BP_PLUGIN_PATH= "$certify" "$esc_so" --device nodev > "$tmp/usage.txt" 2>&1
st=$?
[ $st -eq 2 ] && no_esc "$tmp/usage.txt" && has "$tmp/usage.txt" "its device types: cpu, escdev"
result $? "bp-certify's usage error names the device types (status $st)" "$tmp/usage.txt"
exit $fail
