#!/bin/sh
# bp-info lists the host, a loaded plugin, a plugin that failed (with the
# reason), the devices and the operators with their kernels, as text and as
# JSON.
top_builddir=${top_builddir:-.}
info="$top_builddir/tools/bp-info"
cpu="$top_builddir/plugins/cpu/.libs/cpu.so"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
check() { # check DESCRIPTION FILE PATTERN
  n=$((n + 1))
  if grep -q -- "$3" "$2"; then
    echo "ok $n - $1"
  else
    echo "not ok $n - $1"
    echo "# expected to find: $3"
    sed 's/^/#   /' "$2" | head -40
    fail=1
  fi
}
echo "1..18"
BP_PLUGIN_PATH= "$info" --no-discover "$cpu" "$tmp/missing.so" > "$tmp/out.txt" 2>&1
echo "exit $?" >> "$tmp/out.txt"
check "exits 0 even when a plugin fails" "$tmp/out.txt" "^exit 0$"
check "prints the version and the ABI" "$tmp/out.txt" "^Backplane [0-9.]* (ABI 1\.1)$"
check "counts both plugins" "$tmp/out.txt" "^Plugins: 2$"
check "describes the CPU plugin" "$tmp/out.txt" "name        cpu .*(Backplane), ABI 1.1, op set 1"
check "says why the missing plugin failed" "$tmp/out.txt" "error       BP_ERR_LOAD: plugin '$tmp/missing.so': cannot open: No such file or directory"
check "lists the host CPU device" "$tmp/out.txt" "^  cpu:0  (code 1)"
check "lists the 33 core operators" "$tmp/out.txt" "^Operators: 33$"
check "shows a schema, its owner and meta" "$tmp/out.txt" "defined by host; meta function: yes"
check "shows the CPU plugin's boxed kernels" "$tmp/out.txt" "kernel cpu        boxed                from cpu"
"$info" --json --no-discover "$cpu" > "$tmp/out.json" 2>&1
check "JSON has the plugin" "$tmp/out.json" '"name": "cpu"'
check "JSON has the operators" "$tmp/out.json" '"name": "core::layer_norm", "schema": "core::layer_norm(Tensor input'
n=$((n + 1))
if command -v python3 >/dev/null 2>&1; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["ops"]) == 33 and d["abi"] == "1.1"' "$tmp/out.json"; then
    echo "ok $n - the JSON parses, with 33 ops"
  else
    echo "not ok $n - the JSON parses, with 33 ops"; fail=1
  fi
else
  echo "ok $n - the JSON parses, with 33 ops # SKIP python3 is not installed"
fi
# A plugin built against the frozen ABI 1.0 headers, with an unboxed
# kernel that lists its dtypes and a boxed one that does not.
compat="$top_builddir/abi/.libs/compat_1_0.so"
"$info" --no-discover "$compat" > "$tmp/compat.txt" 2>&1
check "shows an unboxed kernel and its dtypes" "$tmp/compat.txt" "kernel cpu        unboxed .*from compat_1_0; dtypes: float32$"
check "shows the op's doc line and meta presence" "$tmp/compat.txt" "defined by compat_1_0; meta function: yes"
"$info" --json --no-discover "$compat" > "$tmp/compat.json" 2>&1
check "JSON lists a kernel's dtypes" "$tmp/compat.json" '"kind": "unboxed[^"]*", "plugin": "compat_1_0", "enabled": true, "dtypes": \["float32"\]'
# A loaded plugin's note from its setup() (why it has no devices, say).
vb="$top_builddir/tests/plugins/.libs/vendor_b.so"
"$info" --no-discover "$vb" > "$tmp/vb.txt" 2>&1
check "shows a loaded plugin's note" "$tmp/vb.txt" "note        vendor_b: npu_b is simulated in host memory"
# A path that is not UTF-8 (and one that is) reaches the JSON through the
# failed plugin's path and message: the JSON stays UTF-8, each stray byte
# written as U+FFFD.
n=$((n + 1))
odd="$tmp/$(printf 'bad\377\376caf\303\251').so"
"$info" --json --no-discover "$odd" > "$tmp/odd.json" 2>&1
if ! command -v python3 >/dev/null 2>&1; then
  echo "ok $n - JSON is UTF-8 for a path that is not # SKIP python3 is not installed"
elif python3 - "$tmp/odd.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
p = [p for p in d["plugins"] if p["state"] == "failed"][0]
assert p["path"].endswith("/bad\ufffd\ufffdcaf\u00e9.so"), p["path"]
assert "bad\ufffd\ufffdcaf\u00e9.so': cannot open" in p["error"], p["error"]
PY
then
  echo "ok $n - JSON is UTF-8 for a path that is not"
else
  echo "not ok $n - JSON is UTF-8 for a path that is not"; fail=1
fi
n=$((n + 1))
"$info" --bogus > /dev/null 2> "$tmp/err.txt"
if [ $? -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/err.txt"; then
  echo "ok $n - an unknown option is a usage error"
else
  echo "not ok $n - an unknown option is a usage error"; fail=1
fi
exit $fail
