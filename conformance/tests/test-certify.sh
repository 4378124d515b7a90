#!/bin/sh
# bp-certify passes the CPU plugin, writing a certificate that says it
# conforms, and fails plugins that break the handshake or lack the core op
# set, naming the failing check; fails plugins whose core::add breaks one
# per-op check, naming that check; bad usage exits 2.
top_builddir=${top_builddir:-.}
certify="$top_builddir/conformance/bp-certify"
cpu="$top_builddir/plugins/cpu/.libs/cpu.so"
plugins="$top_builddir/tests/plugins/.libs"
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
    [ -n "$3" ] && sed 's/^/#   /' "$3" | head -40
    fail=1
  fi
}
has() { grep -q -- "$2" "$1"; } # has FILE PATTERN
echo "1..24"

# (a) The CPU plugin conforms.
"$certify" "$cpu" --json "$tmp/cpu.json" --timeout 20 > "$tmp/cpu.tap" 2>&1
echo "exit $?" >> "$tmp/cpu.tap"
has "$tmp/cpu.tap" "^exit 0$"; result $? "the CPU plugin certifies (exit 0)" "$tmp/cpu.tap"
has "$tmp/cpu.tap" "^1\.\.[0-9]"; result $? "the plan comes first" "$tmp/cpu.tap"
head -1 "$tmp/cpu.tap" | grep -q "^1\.\."; result $? "the plan is the first line" "$tmp/cpu.tap"
has "$tmp/cpu.tap" "^ok [0-9]* - core::matmul/float32/basic$"
result $? "core::matmul is checked numerically" "$tmp/cpu.tap"
has "$tmp/cpu.tap" "^ok [0-9]* - core::add/errors$"
result $? "core::add's error paths are checked" "$tmp/cpu.tap"
has "$tmp/cpu.json" '"conforms": true'; result $? "the certificate says it conforms" "$tmp/cpu.json"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/cpu.json" "$cpu" > "$tmp/py.txt" 2>&1 <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
assert d["conforms"] is True and d["summary"]["failed"] == 0, d["summary"]
assert d["plugin"]["name"] == "cpu" and d["plugin"]["abi"] == "1.0"
assert d["plugin"]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert all(r["status"] == "pass" for r in d["results"])
PY
  result $? "the certificate is valid JSON with the file's SHA-256" "$tmp/py.txt"
else
  result 0 "the certificate is valid JSON # SKIP python3 not found"
fi

# (b) Plugins that must fail.
"$certify" "$plugins/no_entry.so" --ops add > "$tmp/ne.tap" 2>&1
echo "exit $?" >> "$tmp/ne.tap"
has "$tmp/ne.tap" "^exit 1$"; result $? "no_entry.so fails (exit 1)" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 1 - handshake/exports # bp_plugin_init is not exported"
result $? "no_entry.so: handshake/exports names the missing entry point" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 3 - handshake/loads # plugin does not load: "
result $? "no_entry.so: handshake/loads gives the host's reason" "$tmp/ne.tap"

"$certify" "$plugins/good.so" --ops add --json "$tmp/good.json" > "$tmp/good.tap" 2>&1
echo "exit $?" >> "$tmp/good.tap"
has "$tmp/good.tap" "^exit 1$"; result $? "good.so (no core kernels) fails (exit 1)" "$tmp/good.tap"
has "$tmp/good.tap" "^not ok 5 - registration/profile # core::[a-z_.]* has no kernel for cpu"
result $? "good.so: registration/profile names a core op" "$tmp/good.tap"
has "$tmp/good.json" '"conforms": false'; result $? "good.so: the certificate says it does not conform" "$tmp/good.json"

printf 'this is not a shared object\n' > "$tmp/garbage.so"
"$certify" "$tmp/garbage.so" --ops add > "$tmp/garbage.tap" 2>&1
echo "exit $?" >> "$tmp/garbage.tap"
if has "$tmp/garbage.tap" "^exit 1$" && has "$tmp/garbage.tap" "^not ok 1 - handshake/exports # not an ELF file"; then
  result 0 "a garbage file fails handshake/exports (exit 1)"
else
  result 1 "a garbage file fails handshake/exports (exit 1)" "$tmp/garbage.tap"
fi

# (c) Plugins whose core::add breaks one per-op check each.
faulty="$top_builddir/conformance/tests/faulty/.libs"
for pair in mutates_input:inputs-unchanged leaks_handle:hygiene \
            nondeterministic:repeatability wrong_result:numerics; do
  p=${pair%%:*}
  check=${pair#*:}
  "$certify" "$faulty/$p.so" --ops core::add > "$tmp/$p.tap" 2>&1
  echo "exit $?" >> "$tmp/$p.tap"
  has "$tmp/$p.tap" "^exit 1$"; result $? "$p.so fails (exit 1)" "$tmp/$p.tap"
  has "$tmp/$p.tap" "^not ok [0-9]* - core::add/float32/basic # $check: "
  result $? "$p.so: core::add/float32/basic fails $check" "$tmp/$p.tap"
done
has "$tmp/mutates_input.tap" "argument 1 'other' was modified"
result $? "mutates_input.so: inputs-unchanged names the argument" "$tmp/mutates_input.tap"

# Bad usage.
"$certify" "$cpu" --jobs 0 > "$tmp/usage.txt" 2>&1
echo "exit $?" >> "$tmp/usage.txt"
has "$tmp/usage.txt" "^exit 2$"; result $? "bad usage exits 2" "$tmp/usage.txt"
exit $fail
