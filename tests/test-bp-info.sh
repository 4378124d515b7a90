#!/bin/sh
# bp-info lists the host, a loaded plugin, a plugin that failed (with the
# reason), the devices and the operators with their kernels, as text and as
# JSON; and, loading each plugin in a child process first, plugins that
# crash or hang while they load (tests/plugins/crash.c).
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
BP_PLUGIN_PATH= "$info" --no-discover "$cpu" "$tmp/missing.so" > "$tmp/out.txt" 2>&1
echo "exit $?" >> "$tmp/out.txt"
check "exits 0 even when a plugin fails" "$tmp/out.txt" "^exit 0$"
check "prints the version and the ABI" "$tmp/out.txt" "^Backplane [0-9.]* (ABI 1\.3)$"
check "counts both plugins" "$tmp/out.txt" "^Plugins: 2$"
check "describes the CPU plugin" "$tmp/out.txt" "name        cpu .*(Backplane), ABI 1.3, op set 2"
check "says why the missing plugin failed" "$tmp/out.txt" "error       BP_ERR_LOAD: plugin '$tmp/missing.so': cannot open: No such file or directory"
check "lists the host CPU device" "$tmp/out.txt" "^  cpu:0  (code 1)"
check "lists the 169 core operators" "$tmp/out.txt" "^Operators: 169$"
check "shows a schema, its owner and meta" "$tmp/out.txt" "defined by host; meta function: yes"
check "shows the CPU plugin's boxed kernels" "$tmp/out.txt" "kernel cpu        boxed                from cpu"
"$info" --json --no-discover "$cpu" > "$tmp/out.json" 2>&1
check "JSON has the plugin" "$tmp/out.json" '"name": "cpu"'
check "JSON has the operators" "$tmp/out.json" '"name": "core::layer_norm", "schema": "core::layer_norm(Tensor input'
n=$((n + 1))
if command -v python3 >/dev/null 2>&1; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["ops"]) == 169 and d["abi"] == "1.3"' "$tmp/out.json"; then
    echo "ok $n - the JSON parses, with 169 ops"
  else
    echo "not ok $n - the JSON parses, with 169 ops"; fail=1
  fi
else
  echo "ok $n - the JSON parses, with 169 ops # SKIP python3 is not installed"
fi
# A plugin built against the frozen ABI 1.0 headers, with an unboxed
# kernel that lists its dtypes and a boxed one that does not.
compat="$top_builddir/abi/.libs/compat_1_0.so"
"$info" --no-discover "$compat" > "$tmp/compat.txt" 2>&1
check "shows an unboxed kernel and its dtypes" "$tmp/compat.txt" "kernel cpu        unboxed .*from compat_1_0 (priority 0, active); dtypes: float32$"
check "shows the op's doc line and meta presence" "$tmp/compat.txt" "defined by compat_1_0; meta function: yes"
"$info" --json --no-discover "$compat" > "$tmp/compat.json" 2>&1
check "JSON lists a kernel's dtypes" "$tmp/compat.json" '"kind": "unboxed[^"]*", "plugin": "compat_1_0", "enabled": true, "priority": 0, "active": true, "dtypes": \["float32"\]'
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
# Isolation: each plugin is loaded in a child process first; one that
# crashes or hangs there is listed with where it died, and left out.
plugins="$top_builddir/tests/plugins/.libs"
# (UndefinedBehaviorSanitizer, with halt_on_error, stops the null store
# before it faults: the child then exits with status 1 in init.)
segv="crashed in init (SIGSEGV)"
case "$BP_SANITIZER" in address*|undefined*) segv="exited with status 1 in init" ;; esac
pass() { n=$((n + 1)); echo "ok $n - $1"; }
flunk() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/#   /' "$2" | head -40; fail=1; }
BP_PLUGIN_PATH= "$info" --no-discover "$plugins/crash_init.so" "$cpu" "$plugins/crash_setup.so" \
  > "$tmp/crash.txt" 2> "$tmp/crash.err"
st=$?
if [ $st -eq 1 ]; then pass "a plugin that crashed makes the exit status 1"
else flunk "a plugin that crashed makes the exit status 1 (got $st)" "$tmp/crash.err"; fi
check "counts the plugins that crashed" "$tmp/crash.txt" "^Plugins: 3$"
grep -A3 "^  .*/crash_init.so$" "$tmp/crash.txt" > "$tmp/ci.txt"
check "names the file that crashed in bp_plugin_init" "$tmp/ci.txt" \
  "error       $segv while loading in a child process; not loaded"
grep -A3 "^  .*/crash_setup.so$" "$tmp/crash.txt" > "$tmp/cs.txt"
check "names the file that crashed in setup()" "$tmp/cs.txt" "error       crashed in setup (SIGABRT)"
check "goes on to load and list the other plugins" "$tmp/crash.txt" "^Operators: 169$"
check "says on stderr which file was left out" "$tmp/crash.err" \
  "^bp-info: .*/crash_init.so: $segv; it was left out$"
# (The limit is the child's CPU time, or wall time in which it uses none:
# a hang that sleeps is stopped after 1 s without progress, however busy
# the machine, and the message says which limit it was.)
BP_PLUGIN_PATH= "$info" --no-discover --timeout 1 "$plugins/hang_setup.so" "$cpu" > "$tmp/hang.txt" 2>&1
st=$?
grep -A3 "^  .*/hang_setup.so$" "$tmp/hang.txt" > "$tmp/hs.txt"
check "a plugin that hangs in setup() times out" "$tmp/hs.txt" "error       timed out after 1 s in setup (asleep or blocked)"
if [ $st -eq 1 ] && grep -q "^Operators: 169$" "$tmp/hang.txt"; then
  pass "the timeout is --timeout's, and the others are listed"
else flunk "the timeout is --timeout's, and the others are listed (status $st)" "$tmp/hang.txt"; fi
# Discovery isolates by default: a crashing plugin in BP_PLUGIN_PATH.
mkdir "$tmp/path"
ln -s "$(cd "$plugins" && pwd)/crash_init.so" "$tmp/path/a_crash.so"
ln -s "$(cd "$(dirname "$cpu")" && pwd)/cpu.so" "$tmp/path/cpu.so"
mkfifo "$tmp/path/b_fifo.so"
BP_PLUGIN_PATH="$tmp/path" "$info" > "$tmp/disc.txt" 2>&1
st=$?
# Refused before any open: its reason is the file's kind, where a FIFO
# that was opened would have hung the probe until its time limit.
if grep -A3 "^  .*/b_fifo.so$" "$tmp/disc.txt" | grep -q "state       failed" &&
   grep -A3 "^  .*/b_fifo.so$" "$tmp/disc.txt" | grep -q "FIFO, not a regular file" &&
   ! grep -A3 "^  .*/b_fifo.so$" "$tmp/disc.txt" | grep -q "timed out"; then
  pass "a FIFO among the plugins is refused by the host, not waited for"
else flunk "a FIFO among the plugins is refused by the host, not waited for" "$tmp/disc.txt"; fi
grep -A3 "^  .*/crash_init.so$" "$tmp/disc.txt" > "$tmp/dc.txt"
if [ $st -eq 1 ] && grep -q "found by    BP_PLUGIN_PATH" "$tmp/dc.txt" &&
   grep -q "$segv" "$tmp/dc.txt" &&
   grep -A2 "^  .*/cpu/.libs/cpu.so$" "$tmp/disc.txt" | grep -q "found by    BP_PLUGIN_PATH"; then
  pass "discovery isolates each plugin and keeps how it was found"
else flunk "discovery isolates each plugin and keeps how it was found (status $st)" "$tmp/disc.txt"; fi
BP_PLUGIN_PATH= "$info" --json --no-discover "$plugins/crash_init.so" "$cpu" > "$tmp/crash.json" 2>/dev/null
n=$((n + 1))
if ! command -v python3 > /dev/null 2>&1; then
  echo "ok $n - JSON lists a crashed plugin # SKIP python3 is not installed"
elif python3 - "$tmp/crash.json" "$segv" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = [p for p in d["plugins"] if p["crashed"]]
assert len(c) == 1 and c[0]["path"].endswith("/crash_init.so"), c
assert c[0]["state"] == "failed" and c[0]["error"] == sys.argv[2], c[0]
assert len(d["ops"]) == 169
PY
then echo "ok $n - JSON lists a crashed plugin"
else echo "not ok $n - JSON lists a crashed plugin"; fail=1; fi
# --no-isolate loads in bp-info's own process, which the crash ends.
BP_PLUGIN_PATH= "$info" --no-discover --no-isolate "$plugins/crash_init.so" "$cpu" > "$tmp/noiso.txt" 2>&1
st=$?
# (A sanitizer's handler makes that status 1 rather than 139.)
if [ $st -ne 0 ] && ! grep -q "^Plugins:" "$tmp/noiso.txt"; then
  pass "--no-isolate turns isolation off (the crash ends bp-info, status $st)"
else flunk "--no-isolate turns isolation off (status $st)" "$tmp/noiso.txt"; fi

# Two plugins with kernels for core::add on the CPU: both are listed, the
# one calls go to marked active (tests/plugins/tuned.c, priority 10).
tuned="$top_builddir/tests/plugins/.libs/tuned.so"
BP_PLUGIN_PATH= "$info" --no-discover "$cpu" "$tuned" > "$tmp/two.txt" 2>&1
grep -A4 "^  core::add(" "$tmp/two.txt" > "$tmp/add.txt"
check "lists both kernels of an op on one device type" "$tmp/add.txt" "kernel cpu .*from cpu (priority -100, next in line)"
check "marks the kernel calls go to as active" "$tmp/add.txt" "kernel cpu .*from tuned (priority 10, active); dtypes: float32$"

n=$((n + 1))
"$info" --bogus > /dev/null 2> "$tmp/err.txt"
if [ $? -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/err.txt"; then
  echo "ok $n - an unknown option is a usage error"
else
  echo "not ok $n - an unknown option is a usage error"; fail=1
fi
echo "1..$n"
exit $fail
