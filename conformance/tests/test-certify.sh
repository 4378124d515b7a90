#!/bin/sh
# bp-certify certifies the CPU plugin (profiles core and full, and through
# the device path that non-host-visible devices take), writing a JSON
# certificate and an HTML report; it fails every plugin of the faulty
# corpus on the one check that names its fault and on nothing else; a crash
# or a hang never ends the run; bad usage exits 2.  All of it holds in both
# isolations (--isolation worker, the default, and case): the verdicts are
# the same, a worker loads the plugin once, and a case that fails in a
# shared worker is rerun alone.
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
# only NAME PATTERN: every "not ok" line of NAME matches PATTERN, and
# there is at least one.
only() {
  grep '^not ok' "$tmp/$1.tap" > "$tmp/$1.bad"
  [ -s "$tmp/$1.bad" ] && ! grep -v -- "$2" "$tmp/$1.bad" > /dev/null
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
# read from the ELF file and the SKIPs that stop before any load.
loading() {
  total=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/$1.tap")
  none=$(grep -c ' - handshake/exports\( \|$\)\| - handshake/imports\( \|$\)\|# SKIP .*belongs to --profile full' "$tmp/$1.tap")
  echo $((total - none))
}
# reruns NAME: the cases rerun alone after failing in a shared worker.
reruns() { sed -n 's/^# \([0-9]*\) case(s) that did not pass in a shared worker.*/\1/p' "$tmp/$1.tap" | grep . || echo 0; }
echo "1..93"

# (a) The CPU plugin conforms to the core profile, in both isolations.
run cpu "$cpu" --json "$tmp/cpu.json" --html "$tmp/cpu.html" --jobs 2
has "$tmp/cpu.tap" "^exit 0$"; result $? "the CPU plugin certifies (exit 0)" "$tmp/cpu.tap"
run cpucase "$cpu" --json "$tmp/cpucase.json" --jobs 2 --isolation case
has "$tmp/cpucase.tap" "^exit 0$"; result $? "the CPU plugin certifies with --isolation case" "$tmp/cpucase.tap"
same cpu cpucase
result $? "both isolations give the same cases, verdicts and reasons" "$tmp/cpucase.tap"
has "$tmp/cpu.tap" "^# bp-certify .*, jobs 2, isolation worker$"
result $? "the header names the isolation, worker by default" "$tmp/cpu.tap"
head -1 "$tmp/cpu.tap" | grep -q "^1\.\.[0-9]"; result $? "the plan is the first line" "$tmp/cpu.tap"
! grep -v '^\(ok \|not ok \|#\|1\.\.\|exit \)' "$tmp/cpu.tap" > /dev/null
result $? "stdout is pure TAP" "$tmp/cpu.tap"
for p in core::matmul/float32/basic core::add/float32/noncontig core::add/float32/broadcast \
         core::sum/float32/empty core::add/honesty core::add.out/bounds core::add/errors; do
  has "$tmp/cpu.tap" "^ok [0-9]* - $p\$"; result $? "$p is a passing test point" "$tmp/cpu.tap"
done
has "$tmp/cpu.tap" "^ok [0-9]* - core::add/concurrency # SKIP .*--profile full"
result $? "the concurrency check is a SKIP with a reason in the core profile" "$tmp/cpu.tap"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/cpu.json" "$cpu" > "$tmp/py.txt" 2>&1 <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
assert d["conforms"] is True and d["summary"]["failed"] == 0, d["summary"]
iso = d["isolation"]
assert iso["mode"] == "worker" and 1 <= iso["workers"] <= 2, iso
assert iso["reruns"] == 0 and iso["changed"] == 0 and iso["fallback"] is None, iso
assert json.load(open(sys.argv[1].replace("cpu.json", "cpucase.json")))["isolation"]["mode"] == "case"
assert not any("worker" in r for r in d["results"])
assert d["plugin"]["name"] == "cpu" and d["plugin"]["abi"] == "1.0", d["plugin"]
assert d["plugin"]["vendor"] and d["plugin"]["version"], d["plugin"]
assert d["plugin"]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert d["certifier"]["version"] and d["host"]["os"] and d["host"]["cpu"], d["host"]
assert d["host"]["device"] == "cpu:0" and d["profile"] == "core", d["host"]
for g in ("handshake", "registration", "numerics", "meta", "honesty", "bounds",
          "hygiene", "repeatability", "errors"):
    assert d["checks"][g]["status"] == "pass" and d["checks"][g]["passed"] > 0, (g, d["checks"][g])
assert all(r["status"] in ("pass", "skip") for r in d["results"])
assert all(isinstance(r["seconds"], float) for r in d["results"])
PY
  result $? "the certificate is valid JSON: SHA-256, plugin, host, per-check results" "$tmp/py.txt"
else
  skip "the certificate is valid JSON" "python3 not found"
fi
has "$tmp/cpu.html" "<th>core::add</th><td class=pass>pass</td>"
result $? "the HTML report has the op matrix" "$tmp/cpu.html"

# (b) The full profile: every dtype, concurrency, in parallel.
run full "$cpu" --profile full --jobs 2 --ops 'core::[acm]*' --json "$tmp/full.json"
has "$tmp/full.tap" "^exit 0$"; result $? "the CPU plugin certifies with --profile full" "$tmp/full.tap"
has "$tmp/full.tap" "^ok [0-9]* - core::add/bfloat16/noncontig$"
result $? "full: every declared dtype is checked" "$tmp/full.tap"
has "$tmp/full.tap" "^ok [0-9]* - core::add/concurrency$"
result $? "full: the concurrency check runs" "$tmp/full.tap"
has "$tmp/full.tap" "^ok [0-9]* - core::matmul/int32/basic # SKIP core::matmul does not take int32"
result $? "full: a dtype the op refuses is a SKIP with the reason" "$tmp/full.tap"
has "$tmp/full.tap" "^ok [0-9]* - device/streams # SKIP cpu declares no streams or events"
result $? "full: streams and events the device does not declare are a SKIP" "$tmp/full.tap"
run fullcase "$cpu" --profile full --jobs 2 --ops 'core::[acm]*' --isolation case
same full fullcase
result $? "full: both isolations give the same cases, verdicts and reasons" "$tmp/fullcase.tap"

# (c) The device path (no read-only pages; canaries and staging only).
BP_CERTIFY_DEVICE_PATH=1 "$certify" "$cpu" --ops 'add*' --json "$tmp/dev.json" > "$tmp/dev.tap" 2>&1
echo "exit $?" >> "$tmp/dev.tap"
has "$tmp/dev.tap" "^exit 0$"; result $? "the device path certifies the CPU plugin" "$tmp/dev.tap"
has "$tmp/dev.json" "read-only pages skipped: the device is not host-visible"
result $? "the device path says the read-only pages were skipped" "$tmp/dev.json"
BP_CERTIFY_DEVICE_PATH=1 "$certify" "$faulty/mutates_input.so" > "$tmp/devmut.tap" 2>&1
only devmut "core::add/honesty # honesty: sample basic: argument 1 'other' was modified"
result $? "device path: mutates_input fails honesty by byte compare" "$tmp/devmut.tap"
BP_CERTIFY_DEVICE_PATH=1 "$certify" "$faulty/writes_past_end.so" > "$tmp/devoob.tap" 2>&1
only devoob "core::add.out/bounds # bounds: "
result $? "device path: writes_past_end fails bounds (canary)" "$tmp/devoob.tap"

# (d) The faulty corpus: each fails (exit 1) on its named check only, in
# both isolations.  Each run logs the processes that load the plugin.
check_faulty() { # check_faulty PLUGIN PATTERN DESCRIPTION [ARGS...]
  p=$1
  pat=$2
  what=$3
  shift 3
  rm -f "$tmp/$p.$iso.loads"
  BP_FAULTY_LOAD_LOG="$tmp/$p.$iso.loads" run "$p.$iso" "$faulty/$p.so" --jobs 2 --isolation "$iso" "$@"
  if has "$tmp/$p.$iso.tap" "^exit 1$" && only "$p.$iso" "$pat"; then
    result 0 "$iso: $p.so fails $what, and nothing else"
  else
    result 1 "$iso: $p.so fails $what, and nothing else" "$tmp/$p.$iso.tap"
  fi
}
for iso in worker case; do
check_faulty wrong_result "core::add/float32/[a-z]* # numerics: " "numerics"
has "$tmp/wrong_result.$iso.tap" "mismatch; worst at flat index [0-9]*: got .*, expected .*; max abs error .*, max rel error"
result $? "$iso: wrong_result.so: the failure gives the count, the worst element and the errors" \
  "$tmp/wrong_result.$iso.tap"
check_faulty wrong_noncontig "core::add/float32/noncontig # numerics: " "numerics on non-contiguous input"
check_faulty mutates_input "core::add/honesty # honesty: the kernel wrote to argument 1 'other'" \
  "honesty (the faulting write is named)"
check_faulty writes_past_end \
  "core::add.out/bounds # bounds: sample basic: the canary after argument 3 'out' was overwritten" \
  "bounds"
check_faulty aliases_input "core::cast/honesty # honesty: sample basic: result 0 aliases argument 0 'self'" \
  "honesty (aliasing)"
check_faulty meta_disagrees "faulty::twice/meta # meta: sample basic: result 0 has sizes \[20\]" \
  "meta agreement (generic checks of a vendor op)"
check_faulty crashes_on_empty "core::add/float32/empty # CRASH signal 11" "as a CRASH"
# (A hang costs its timeout twice in a worker: there, and in its rerun.)
t=2
[ "$iso" = worker ] && t=1
check_faulty hangs "core::add/float32/[a-z]* # TIMEOUT after $t s" "as a TIMEOUT" --timeout $t
has "$tmp/hangs.$iso.tap" "^# [0-9]* passed, 2 failed"
result $? "$iso: hangs.so: the run goes on after the hang" "$tmp/hangs.$iso.tap"
check_faulty leaks_handle "core::add/hygiene # hygiene: sample basic: 1 tensor handle(s) leaked" "hygiene"
check_faulty nondeterministic "core::add/repeatability # repeatability: " "repeatability"
check_faulty not_thread_safe "core::add/concurrency # concurrency: thread " "concurrency" --profile full
check_faulty accepts_bad_dtype "core::add/errors # errors: a call with [a-z0-9]* arguments (the kernel does not declare it) succeeded" \
  "error paths (a bad dtype accepted)"
check_faulty missing_op "registration/profile # claims core op set 1, but core::[a-z_.]* has no kernel for cpu" \
  "registration/profile" --ops 'core::add*'
check_faulty extra_export "handshake/exports # 1 symbols exported besides bp_plugin_init: faulty_helper" \
  "handshake/exports"
done
has "$tmp/wrong_noncontig.worker.tap" "^ok [0-9]* - core::add/float32/basic$"
result $? "wrong_noncontig.so: contiguous input passes" "$tmp/wrong_noncontig.worker.tap"
has "$tmp/meta_disagrees.worker.tap" "^ok [0-9]* - faulty::twice/bounds$"
result $? "meta_disagrees.so: the other generic checks of faulty::twice run and pass" \
  "$tmp/meta_disagrees.worker.tap"
has "$tmp/crashes_on_empty.worker.tap" "^ok [0-9]* - core::add/errors$"
result $? "crashes_on_empty.so: the run goes on after the crash" "$tmp/crashes_on_empty.worker.tap"
# The loads: the probe, then one per case that loads it (case), or one
# per worker, plus a fresh worker and the rerun for each failure (worker).
bad=""
for f in "$tmp"/*.case.loads; do
  p=$(basename "$f" .case.loads)
  [ "$(loads "$f")" = "$((1 + $(loading "$p.case")))" ] ||
    bad="$bad $p($(loads "$f") loads, $(loading "$p.case") loading cases)"
done
[ -z "$bad" ]; result $? "case: each case that loads a faulty plugin does so in a process of its own:$bad"
bad=""
for f in "$tmp"/*.worker.loads; do
  p=$(basename "$f" .worker.loads)
  max=$((1 + 2 + 2 * $(reruns "$p.worker")))
  [ "$(loads "$f")" -le "$max" ] && [ "$(wc -l < "$f")" = "$(loads "$f")" ] ||
    bad="$bad $p($(loads "$f") loads, $(wc -l < "$f") inits, at most $max)"
done
[ -z "$bad" ]; result $? "worker: a faulty plugin is loaded once per worker, plus once per rerun and its fresh worker:$bad"
if has "$tmp/crashes_on_empty.worker.tap" "^# 1 case(s) that did not pass in a shared worker were rerun alone in a fresh process: 0 verdict(s) changed$" &&
   [ "$(loads "$tmp/crashes_on_empty.worker.loads")" -ge 4 ]; then
  result 0 "worker: a crash kills the worker, a fresh worker goes on, and the case is rerun alone"
else
  result 1 "worker: a crash kills the worker, a fresh worker goes on, and the case is rerun alone" \
    "$tmp/crashes_on_empty.worker.tap"
fi

# (e) Plugins that do not load, and files that are not plugins.
run ne "$plugins/no_entry.so" --ops add
has "$tmp/ne.tap" "^exit 1$"; result $? "no_entry.so fails (exit 1)" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 1 - handshake/exports # bp_plugin_init is not exported"
result $? "no_entry.so: handshake/exports names the missing entry point" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 3 - handshake/loads # plugin does not load: "
result $? "no_entry.so: handshake/loads gives the host's reason" "$tmp/ne.tap"
has "$tmp/ne.tap" "^# worker isolation off: a worker could not load the plugin (plugin does not load: .*it does not export 'bp_plugin_init'" &&
  ! has "$tmp/ne.tap" "rerun alone"
result $? "no_entry.so: a worker that cannot load the plugin says why, and no case is run twice" "$tmp/ne.tap"
printf 'this is not a shared object\n' > "$tmp/garbage.so"
run garbage "$tmp/garbage.so" --json "$tmp/garbage.json"
if has "$tmp/garbage.tap" "^exit 1$" && has "$tmp/garbage.tap" "^not ok 1 - handshake/exports # not an ELF file"; then
  result 0 "a garbage file fails handshake/exports (exit 1)"
else
  result 1 "a garbage file fails handshake/exports (exit 1)" "$tmp/garbage.tap"
fi
has "$tmp/garbage.json" '"conforms": false'; result $? "its certificate says it does not conform" "$tmp/garbage.json"

run vendor "$plugins/vendor_a.so" --profile full --jobs 2
if has "$tmp/vendor.tap" "^exit 0$" && has "$tmp/vendor.tap" "^ok [0-9]* - vendor_a::offset/meta$" &&
   has "$tmp/vendor.tap" "^ok [0-9]* - vendor_a::offset/concurrency$" &&
   has "$tmp/vendor.tap" "^ok [0-9]* - registration/profile$"; then
  result 0 "a vendor plugin without the core op set conforms on the generic checks of its ops"
else
  result 1 "a vendor plugin without the core op set conforms on the generic checks of its ops" \
    "$tmp/vendor.tap"
fi

# (f) One case alone, by its name; --list.
run one "$cpu" --ops 'core::add/float32/noncontig' --seed 7
if has "$tmp/one.tap" "^exit 0$" && has "$tmp/one.tap" "^ok 8 - core::add/float32/noncontig$" &&
   [ "$(grep -c '^ok [0-9]* - core::' "$tmp/one.tap")" = 1 ]; then
  result 0 "--ops CASE runs that case alone (after the plugin-wide ones)"
else
  result 1 "--ops CASE runs that case alone (after the plugin-wide ones)" "$tmp/one.tap"
fi
"$certify" "$cpu" --list --ops add > "$tmp/list.txt" 2>&1
has "$tmp/list.txt" "^core::add/float32/shapes$"; result $? "--list names the cases" "$tmp/list.txt"
"$certify" "$faulty/wrong_result.so" --html "$tmp/wr.html" > /dev/null 2>&1
if has "$tmp/wr.html" "<td class=fail><a href=\"#case8\">fail</a>" &&
   has "$tmp/wr.html" "Reproduce: <code>bp-certify '[^']*wrong_result.so' --profile core --ops 'core::add/float32/basic' --seed 1 --isolation case</code>"; then
  result 0 "the HTML report links a failure to its detail and its command line"
else
  result 1 "the HTML report links a failure to its detail and its command line" "$tmp/wr.html"
fi
# The command line survives a quote in the plugin's path: run as it is
# printed, it reruns the case.
mkdir "$tmp/o'dir" && cp "$faulty/wrong_result.so" "$tmp/o'dir/wrong_result.so"
"$certify" "$tmp/o'dir/wrong_result.so" --ops 'add' --html "$tmp/q.html" > /dev/null 2>&1
sed -n 's|.*Reproduce: <code>bp-certify \(.*\)</code>.*|\1|p' "$tmp/q.html" | head -1 |
  sed 's/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' > "$tmp/q.args"
eval "set -- $(cat "$tmp/q.args")"
"$certify" "$@" > "$tmp/q.tap" 2>&1
has "$tmp/q.tap" "^not ok [0-9]* - core::add/float32/basic # "
result $? "the report's command line quotes a plugin path with a quote in it" "$tmp/q.tap"

# (g) On a terminal, a progress line on stderr; stdout stays TAP.
if command -v python3 >/dev/null 2>&1; then
  python3 - "$certify" "$cpu" "$tmp/pty.tap" > "$tmp/pty.txt" 2>&1 <<'PY'
import os, pty, subprocess, sys
master, slave = pty.openpty()
with open(sys.argv[3], "w") as out:
    p = subprocess.Popen([sys.argv[1], sys.argv[2], "--ops", "add*"], stdout=out, stderr=slave)
os.close(slave)
err = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    err += chunk
assert p.wait() == 0
text = err.decode()
assert "failures 0" in text and "ETA" in text and "/" in text, text
tap = open(sys.argv[3]).read()
assert "ETA" not in tap and tap.startswith("1.."), tap
PY
  result $? "a terminal gets a progress line on stderr, not on stdout" "$tmp/pty.txt"
else
  skip "a terminal gets a progress line" "python3 not found"
fi

# (h) Worker isolation: one load per worker, against one per case; a case
# that fails only after others ran in its worker is rerun alone, passes
# there, and the TAP, the certificate and the report say so.
inst="$faulty/instrumented.so"
BP_FAULTY_LOAD_LOG="$tmp/inst.loads" run inst "$inst" --jobs 2
BP_FAULTY_LOAD_LOG="$tmp/instcase.loads" run instcase "$inst" --jobs 2 --isolation case
if has "$tmp/inst.tap" "^exit 0$" && has "$tmp/instcase.tap" "^exit 0$" && same inst instcase; then
  result 0 "instrumented.so conforms in both isolations, with the same verdicts"
else
  result 1 "instrumented.so conforms in both isolations, with the same verdicts" "$tmp/inst.tap"
fi
w=$(loads "$tmp/inst.loads")
c=$(loads "$tmp/instcase.loads")
[ "$w" = 3 ] && [ "$(wc -l < "$tmp/inst.loads")" = "$w" ]
result $? "worker: the plugin is loaded by the probe and once in each of the 2 workers ($w loads)"
BP_FAULTY_LOAD_LOG="$tmp/few.loads" run few "$inst" --ops handshake/version --jobs 16
points=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/few.tap")
w=$(loads "$tmp/few.loads")
has "$tmp/few.tap" "^exit 0$" && [ "$w" -le $((1 + points)) ]
result $? "worker: no more workers than cases ($w loads for $points cases with --jobs 16)" "$tmp/few.tap"
[ "$c" = "$((1 + $(loading instcase)))" ]
result $? "case: the probe and each case that loads the plugin load it ($c loads, $(loading instcase) loading cases)"
BP_FAULTY_WEAR_OUT=4 run wear "$inst" --jobs 1 --json "$tmp/wear.json" --html "$tmp/wear.html"
if has "$tmp/wear.tap" "^exit 0$" &&
   has "$tmp/wear.tap" "^# core::add/float32/broadcast: fail in a shared worker (numerics: .*); rerun alone in a fresh process: pass$" &&
   has "$tmp/wear.tap" "^# 1 case(s) that did not pass in a shared worker were rerun alone in a fresh process: 1 verdict(s) changed$"; then
  result 0 "a case that fails only after others in its worker is rerun alone, and the TAP says so"
else
  result 1 "a case that fails only after others in its worker is rerun alone, and the TAP says so" "$tmp/wear.tap"
fi
if has "$tmp/wear.json" '"isolation": {"mode": "worker", "workers": 2, "reruns": 1, "changed": 1, "fallback": null}' &&
   has "$tmp/wear.json" '"name": "core::add/float32/broadcast", .*"status": "pass", .*"worker": {"status": "fail", "detail": "numerics: ' &&
   has "$tmp/wear.html" "<li>core::add/float32/broadcast: fail in a worker (numerics: .*), pass alone</li>"; then
  result 0 "the certificate and the report record the rerun and the shared worker's verdict"
else
  result 1 "the certificate and the report record the rerun and the shared worker's verdict" "$tmp/wear.json"
fi
BP_FAULTY_WEAR_OUT=4 run wearcase "$inst" --jobs 1 --isolation case
has "$tmp/wearcase.tap" "^exit 0$" && ! has "$tmp/wearcase.tap" "rerun"
result $? "case: no case alone sees the fault of a long-lived process" "$tmp/wearcase.tap"
# A kernel that keeps state in the environment: a worker puts the
# environment back before each case, as a fresh process has it, so no case
# sees what the ones before it counted there.
BP_FAULTY_ENV_WEAR_OUT=4 run envwear "$inst" --jobs 1
has "$tmp/envwear.tap" "^exit 0$" && ! has "$tmp/envwear.tap" "rerun"
result $? "worker: a case that changed the environment leaves no trace in the next" "$tmp/envwear.tap"
# A plugin that cannot be loaded by a worker: worker isolation gives way
# to case isolation, and the verdicts are those of case isolation.
BP_FAULTY_INIT_ABORT=1 run abort "$inst" --jobs 2 --json "$tmp/abort.json"
BP_FAULTY_INIT_ABORT=1 run abortcase "$inst" --jobs 2 --isolation case
if has "$tmp/abort.tap" "^exit 1$" &&
   has "$tmp/abort.tap" "^# worker isolation off: a worker ended (signal 6) while loading the plugin; the remaining cases run alone in fresh processes$" &&
   has "$tmp/abort.tap" "^not ok 3 - handshake/loads # CRASH signal 6$" &&
   has "$tmp/abort.json" '"fallback": "a worker ended (signal 6) while loading the plugin"' &&
   same abort abortcase; then
  result 0 "a worker that cannot load the plugin turns worker isolation off, with the reason"
else
  result 1 "a worker that cannot load the plugin turns worker isolation off, with the reason" "$tmp/abort.tap"
fi

# A vendor string with a tab, a newline, quotes, a backslash and bytes that
# are not UTF-8: the probe still reads what the plugin registered (the
# cases of core::add run), and the certificate is valid JSON (UTF-8) that
# carries the string, each invalid byte as U+FFFD.
vendor=$(printf 'Tab\there\nnew "q" \\ \377\376 caf\303\251')
BP_FAULTY_VENDOR="$vendor" run vendor "$inst" --ops 'core::add' --json "$tmp/vendor.json"
has "$tmp/vendor.tap" "^exit 0$" && has "$tmp/vendor.tap" "^ok [0-9]* - core::add/float32/basic$"
result $? "a vendor string with tabs and newlines does not hide the plugin's ops" "$tmp/vendor.tap"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/vendor.json" > "$tmp/vendor.py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
want = 'Tab\there\nnew "q" \\ \ufffd\ufffd caf\u00e9'
assert d["plugin"]["vendor"] == want, (d["plugin"]["vendor"], want)
assert d["plugin"]["name"] == "instrumented" and d["conforms"] is True, d["plugin"]
loads = [r for r in d["results"] if r["name"] == "handshake/loads"][0]
assert "\ufffd\ufffd caf\u00e9" in loads["detail"], loads
PY
  result $? "the certificate is valid JSON for any vendor string" "$tmp/vendor.py"
else
  skip "the certificate is valid JSON for any vendor string" "python3 not found"
fi
# A plugin whose initialisation never returns and ignores SIGALRM: the
# probe, the worker and each case that loads it are killed after --timeout,
# and the run ends.
if command -v timeout >/dev/null 2>&1; then
  BP_FAULTY_INIT_HANG=1 timeout 60 "$certify" "$inst" --timeout 0.5 --jobs 2 \
    > "$tmp/hang.tap" 2> "$tmp/hang.err"
  echo "exit $?" >> "$tmp/hang.tap"
  if has "$tmp/hang.tap" "^exit 1$" &&
     has "$tmp/hang.tap" "^not ok 3 - handshake/loads # TIMEOUT after 0.5 s$" &&
     has "$tmp/hang.tap" "^# worker isolation off: a worker did not load the plugin within 0.5 s"; then
    result 0 "a plugin that hangs while loading, deaf to SIGALRM, cannot hang the certifier"
  else
    result 1 "a plugin that hangs while loading, deaf to SIGALRM, cannot hang the certifier" "$tmp/hang.tap"
  fi
else
  skip "a plugin that hangs while loading cannot hang the certifier" "timeout(1) not found"
fi

# A device that does not exist: nothing is certified, TAP says why in one
# line, no certificate is written, and the status is 77 (skipped).
run nodev "$cpu" --device cpu:3 --json "$tmp/nodev.json"
if has "$tmp/nodev.tap" "^exit 77$" && [ "$(wc -l < "$tmp/nodev.tap")" -eq 2 ] &&
   has "$tmp/nodev.tap" "^1\.\.0 # SKIP cannot certify: cpu:3 does not exist: there is 1 cpu device$" &&
   has "$tmp/nodev.err" "nothing was checked, and no certificate or report was written" &&
   [ ! -e "$tmp/nodev.json" ]; then
  result 0 "a device that does not exist is one SKIP line and status 77, with no certificate"
else
  result 1 "a device that does not exist is one SKIP line and status 77, with no certificate" "$tmp/nodev.tap"
fi
# The CUDA plugin on a machine without a GPU: the reason is its note.
cuda="$top_builddir/plugins/cuda/.libs/cuda.so"
if [ ! -f "$cuda" ]; then
  skip "a GPU plugin without its GPU gives the plugin's note" "the CUDA plugin is not built"
else
  run cudanodev "$cuda" --device cuda --ops handshake/version
  if has "$tmp/cudanodev.tap" "^exit 0$"; then
    skip "a GPU plugin without its GPU gives the plugin's note" "this machine has a CUDA device"
  else
    has "$tmp/cudanodev.tap" "^exit 77$" &&
      has "$tmp/cudanodev.tap" "^1\.\.0 # SKIP cannot certify: cuda:0 does not exist: there are 0 cuda devices (the plugin's note: cuda: 0 devices: .*)$"
    result $? "a GPU plugin without its GPU gives the plugin's note" "$tmp/cudanodev.tap"
  fi
fi

# Bad usage.
"$certify" "$cpu" --jobs 0 > "$tmp/usage.txt" 2>&1
echo "exit $?" >> "$tmp/usage.txt"
has "$tmp/usage.txt" "^exit 2$"; result $? "bad usage exits 2" "$tmp/usage.txt"
"$certify" "$cpu" --isolation thread > "$tmp/usage2.txt" 2>&1
echo "exit $?" >> "$tmp/usage2.txt"
has "$tmp/usage2.txt" "^exit 2$" && has "$tmp/usage2.txt" "--isolation: expected 'worker' or 'case', got 'thread'"
result $? "an unknown --isolation exits 2 and says what it takes" "$tmp/usage2.txt"
# --seed is a decimal number: a leading zero is no octal prefix, and a
# negative one is refused even after blanks (strtoull would wrap it).
"$certify" "$cpu" --seed 010 --ops handshake/version > "$tmp/seed.txt" 2>&1
"$certify" "$cpu" --seed ' -1' > "$tmp/seed2.txt" 2>&1
echo "exit $?" >> "$tmp/seed2.txt"
has "$tmp/seed.txt" "^# bp-certify .*, seed 10, " && has "$tmp/seed2.txt" "^exit 2$" &&
  has "$tmp/seed2.txt" "--seed: expected a non-negative integer, got ' -1'"
result $? "--seed takes decimal digits only" "$tmp/seed.txt"
exit $fail
