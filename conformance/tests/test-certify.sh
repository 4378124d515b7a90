#!/bin/sh
# bp-certify certifies the CPU plugin: every command of
# docs/certification.md runs as the doc says, and among them are the
# build's one certification in the core profile and one in the full
# profile, whose TAP, JSON certificate and HTML report are checked here;
# the two isolations (--isolation worker, the default, and case) give the
# same cases, verdicts and reasons (on a few ops here; on both whole
# profiles in make check-long, tests/long/); the device path that
# non-host-visible devices take; plugins that do not load fail; one case
# reruns alone by its name; a terminal gets a progress line; a device that
# does not exist is a failure (never the skip status 77); bad usage exits 2.  The faulty corpora:
# test-certify-faulty.sh and test-certify-corpus.sh; failing closed:
# test-certify-closed.sh.
. "$(dirname "$0")/certify-lib.sh"
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
tier=${BP_TEST_TIER:-fast}

if [ "$tier" = long ]; then
  # make check-long: both whole profiles in both isolations.
  for profile in core full; do
    run "$profile" "$cpu" --profile "$profile" --jobs 2
    run "${profile}case" "$cpu" --profile "$profile" --jobs 2 --isolation case
    has "$tmp/$profile.tap" "^exit 0$" && has "$tmp/${profile}case.tap" "^exit 0$" &&
      same "$profile" "${profile}case"
    ok=$?
    why_differ "$profile" "${profile}case"
    result $ok "profile $profile: both isolations certify the CPU plugin with the same cases, verdicts and reasons" \
      "$tmp/$profile-${profile}case.why"
  done
  # The host profile: the hostile hosts, a thousand load cycles included.
  run host "$cpu" --profile host --jobs 2 --threads-env BP_CPU_THREADS
  has "$tmp/host.tap" "^exit 0$" && has "$tmp/host.tap" "^ok [0-9]* - host/cycles$" &&
    has "$tmp/host.tap" "^ok [0-9]* - host/threads$" &&
    has "$tmp/host.tap" "^ok [0-9]* - host/fork$" &&
    has "$tmp/host.tap" "^# .* passed, 0 failed, .*: conforms (profile host: the hostile-host checks alone)$"
  result $? "profile host: the CPU plugin survives a thousand load cycles and every hostile host" "$tmp/host.tap"
  echo "1..$n"
  exit $fail
fi

# (a) The commands of docs/certification.md.  Two of them certify the CPU
# plugin, once in each profile: the build's only whole certifications.
# Under ThreadSanitizer the full profile would take many minutes; the
# release and ASan builds run it, and the core profile runs here.
doc_skip=
if [ "${BP_SANITIZER:-no}" = thread ]; then
  doc_skip="--profile full --jobs 2 --json cpu.json"
  doc_skip_why="under ThreadSanitizer the full profile takes many minutes: the release and ASan builds certify it, and this build the core profile"
fi
# The isolations are compared on a few ops here (every op: make
# check-long); under ThreadSanitizer, where a case costs ten times as
# much, on one op, which runs the same worker and case paths.
few='core::[a-c]*'
few_full='core::a[bd]*'
if [ "${BP_SANITIZER:-no}" = thread ]; then
  few='core::abs'
  few_full='core::abs'
fi
run_doc "$top_srcdir/docs/certification.md"
core_out=$(doc_output '^bp-certify plugins/cpu/.libs/cpu.so --jobs 2 --json cpu-core.json$')
full_out=$(doc_output '^bp-certify plugins/cpu/.libs/cpu.so --profile full --jobs 2 --json cpu.json --html cpu.html$')
[ -n "$core_out" ] && { [ -n "$full_out" ] || [ -n "$doc_skip" ]; }
result $? "docs/certification.md certifies the CPU plugin in both profiles, with a certificate and a report" \
  "$tmp/doc/commands"
{ cat "$core_out" 2> /dev/null; echo "exit 0"; } > "$tmp/cpu.tap"
{ cat "$full_out" 2> /dev/null; echo "exit 0"; } > "$tmp/full.tap"
cp "$tmp/work/cpu-core.json" "$tmp/cpu.json" 2> /dev/null
cp "$tmp/work/cpu.json" "$tmp/full.json" 2> /dev/null
cp "$tmp/work/cpu.html" "$tmp/full.html" 2> /dev/null
has "$tmp/cpu.tap" "^# .* passed, 0 failed, .*: conforms (profile core)$"
result $? "the CPU plugin certifies in the core profile" "$tmp/cpu.tap"
has "$tmp/cpu.tap" "^# bp-certify .*, jobs 2, isolation worker$"
result $? "the header names the isolation, worker by default" "$tmp/cpu.tap"
head -1 "$tmp/cpu.tap" | grep -q "^1\.\.[0-9]"; result $? "the plan is the first line" "$tmp/cpu.tap"
! grep -v '^\(ok \|not ok \|#\|1\.\.\|exit \)' "$tmp/cpu.tap" > /dev/null
result $? "stdout is pure TAP" "$tmp/cpu.tap"
for p in core::matmul/float32/basic core::add/float32/layouts core::add/float32/broadcast \
         core::sum/float32/sizes core::add/honesty core::add.out/bounds core::add/errors; do
  has "$tmp/cpu.tap" "^ok [0-9]* - $p\$"; result $? "$p is a passing test point" "$tmp/cpu.tap"
done
has "$tmp/cpu.tap" "^ok [0-9]* - core::add/concurrency$"
result $? "the concurrency check runs in the core profile too" "$tmp/cpu.tap"
# The two isolations, on a few ops ($few).
run sub "$cpu" --jobs 2 --ops "$few"
run subcase "$cpu" --jobs 2 --ops "$few" --isolation case --json "$tmp/cpucase.json"
has "$tmp/sub.tap" "^exit 0$" && has "$tmp/subcase.tap" "^exit 0$"
result $? "the CPU plugin certifies with --isolation case" "$tmp/subcase.tap"
same sub subcase
result $? "both isolations give the same cases, verdicts and reasons" "$tmp/subcase.tap"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/cpu.json" "$cpu" "${doc_skip:+skipped}" > "$tmp/py.txt" 2>&1 <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
assert d["conforms"] is True and d["summary"]["failed"] == 0, d["summary"]
iso = d["isolation"]
assert iso["mode"] == "worker" and 1 <= iso["workers"] <= 2, iso
assert iso["reruns"] == 0 and iso["changed"] == 0 and iso["depends"] == 0, iso
assert iso["fallback"] is None, iso
assert json.load(open(sys.argv[1].replace("cpu.json", "cpucase.json")))["isolation"]["mode"] == "case"
full = sys.argv[1].replace("cpu.json", "full.json")
if sys.argv[3] != "skipped":
    full = json.load(open(full))
    assert full["conforms"] is True and full["profile"] == "full", full["summary"]
    assert full["selection"]["ops"] is None, full["selection"]
assert not any("worker" in r for r in d["results"])
assert d["plugin"]["name"] == "cpu" and d["plugin"]["abi"] == "1.3", d["plugin"]
assert d["plugin"]["vendor"] and d["plugin"]["version"], d["plugin"]
assert d["plugin"]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert d["certifier"]["version"] and d["host"]["os"] and d["host"]["cpu"], d["host"]
assert d["host"]["device"] == "cpu:0" and d["profile"] == "core", d["host"]
sel = d["selection"]
assert sel == {"profile": "core", "ops": None, "device": None, "seed": 1, "complete": False}, sel
assert d["complete"] is False
for g in ("handshake", "registration", "numerics", "meta", "honesty", "bounds",
          "hygiene", "process", "repeatability", "errors", "teardown"):
    assert d["checks"][g]["status"] == "pass" and d["checks"][g]["passed"] > 0, (g, d["checks"][g])
assert all(r["status"] in ("pass", "skip") for r in d["results"])
assert all(isinstance(r["seconds"], float) for r in d["results"])
PY
  result $? "the certificate is valid JSON: SHA-256, plugin, host, per-check results" "$tmp/py.txt"
else
  skip "the certificate is valid JSON" "python3 not found"
fi
# (b) The full profile (the doc's run): every dtype, streams, in parallel.
if [ -n "$doc_skip" ]; then
  for p in "the HTML report has the op matrix" "the CPU plugin certifies with --profile full" \
           "full: every declared dtype is checked" "full: the concurrency check runs" \
           "full: a dtype the op refuses is a SKIP with the reason" \
           "full: streams and events the device does not declare are a SKIP"; do
    skip "$p" "$doc_skip_why"
  done
else
  has "$tmp/full.html" "<th>core::add</th><td class=pass>pass</td>"
  result $? "the HTML report has the op matrix" "$tmp/full.html"
  has "$tmp/full.tap" "^# .* passed, 0 failed, .*: conforms$"
  result $? "the CPU plugin certifies with --profile full" "$tmp/full.tap"
  has "$tmp/full.tap" "^ok [0-9]* - core::add/bfloat16/layouts$"
  result $? "full: every declared dtype is checked" "$tmp/full.tap"
  has "$tmp/full.tap" "^ok [0-9]* - core::add/concurrency$"
  result $? "full: the concurrency check runs" "$tmp/full.tap"
  has "$tmp/full.tap" "^ok [0-9]* - core::matmul/int32/basic # SKIP core::matmul does not take int32"
  result $? "full: a dtype the op refuses is a SKIP with the reason" "$tmp/full.tap"
  has "$tmp/full.tap" "^ok [0-9]* - device/streams # SKIP cpu declares no streams or events"
  result $? "full: streams and events the device does not declare are a SKIP" "$tmp/full.tap"
fi
run fullsub "$cpu" --profile full --jobs 2 --ops "$few_full"
run fullcase "$cpu" --profile full --jobs 2 --ops "$few_full" --isolation case
same fullsub fullcase
result $? "full: both isolations give the same cases, verdicts and reasons" "$tmp/fullcase.tap"

# (c) The device path (no read-only pages; canaries and staging only).
# docs/certification.md runs it on the CPU plugin (its exit status is
# checked there).
dev_out=$(doc_output "^BP_CERTIFY_DEVICE_PATH=1 bp-certify plugins/cpu/.libs/cpu.so --ops 'add\*' --json device-path.json$")
[ -n "$dev_out" ] && has "$dev_out" "^# .* passed, 0 failed, .*: conforms (profile core"
result $? "the device path certifies the CPU plugin" "${dev_out:-$tmp/doc/commands}"
has "$tmp/work/device-path.json" "read-only pages skipped: the device is not host-visible"
result $? "the device path says the read-only pages were skipped" "$tmp/work/device-path.json"
BP_CERTIFY_DEVICE_PATH=1 "$certify" "$faulty/mutates_input.so" > "$tmp/devmut.tap" 2>&1
only devmut "core::add/honesty # honesty: basic: .*argument 1 'other' was modified"
result $? "device path: mutates_input fails honesty by byte compare" "$tmp/devmut.tap"
BP_CERTIFY_DEVICE_PATH=1 "$certify" "$faulty/writes_past_end.so" > "$tmp/devoob.tap" 2>&1
only devoob "core::add.out/([a-z0-9/]* # bounds: |aliasing # aliasing: .*given as a view with gaps)" &&
  has "$tmp/devoob.tap" "^not ok [0-9]* - core::add.out/bounds # bounds: "
result $? "device path: writes_past_end fails bounds (the guard of the blocks the host allocates), and aliasing (a gapped out)" "$tmp/devoob.tap"

# (e) Plugins that do not load, and files that are not plugins.
run ne "$plugins/no_entry.so" --ops add
has "$tmp/ne.tap" "^exit 1$"; result $? "no_entry.so fails (exit 1)" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 1 - handshake/exports # bp_plugin_init is not exported"
result $? "no_entry.so: handshake/exports names the missing entry point" "$tmp/ne.tap"
has "$tmp/ne.tap" "^not ok 4 - handshake/loads # plugin does not load: "
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
run one "$cpu" --ops 'core::add/float32/layouts' --seed 7
if has "$tmp/one.tap" "^exit 0$" && has "$tmp/one.tap" "^ok 11 - core::add/float32/layouts$" &&
   [ "$(grep -c '^ok [0-9]* - core::' "$tmp/one.tap")" = 1 ]; then
  result 0 "--ops CASE runs that case alone (after the plugin-wide ones)"
else
  result 1 "--ops CASE runs that case alone (after the plugin-wide ones)" "$tmp/one.tap"
fi
"$certify" "$cpu" --list --ops add > "$tmp/list.txt" 2>&1
has "$tmp/list.txt" "^core::add/float32/sizes$"; result $? "--list names the cases" "$tmp/list.txt"
# (docs/certification.md writes wrong.html.)
cp "$tmp/work/wrong.html" "$tmp/wr.html" 2> /dev/null
if has "$tmp/wr.html" "<td class=fail><a href=\"#case[0-9]*\">fail</a>" &&
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
# (the case the report names first: the seed's order decides which)
case=$(sed -n "s/.* --ops '\([^']*\)'.*/\1/p" "$tmp/q.args")
[ -n "$case" ] && has "$tmp/q.tap" "^not ok [0-9]* - $case # "
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

# A device that does not exist: nothing is certified, TAP says why in one
# failing test point, no certificate is written, and the status is 1: never
# 77, which test drivers count as skipped.
run nodev "$cpu" --device cpu:3 --json "$tmp/nodev.json"
if has "$tmp/nodev.tap" "^exit 1$" && [ "$(wc -l < "$tmp/nodev.tap")" -eq 3 ] &&
   has "$tmp/nodev.tap" "^1\.\.1$" &&
   has "$tmp/nodev.tap" "^not ok 1 - device/exists # cannot certify: cpu:3 does not exist: there is 1 cpu device$" &&
   has "$tmp/nodev.err" "nothing was checked, and no certificate or report was written" &&
   [ ! -e "$tmp/nodev.json" ]; then
  result 0 "a device that does not exist is one failing point and status 1, with no certificate"
else
  result 1 "a device that does not exist is one failing point and status 1, with no certificate" "$tmp/nodev.tap"
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
    has "$tmp/cudanodev.tap" "^exit 1$" &&
      has "$tmp/cudanodev.tap" "^not ok 1 - device/exists # cannot certify: cuda:0 does not exist: there are 0 cuda devices (the plugin's note: cuda: 0 devices: .*)$"
    result $? "a GPU plugin without its GPU gives the plugin's note" "$tmp/cudanodev.tap"
  fi
fi

# host/locale under a locale whose decimal point is a comma, made for the
# test where the system has none installed.
if command -v localedef > /dev/null 2>&1 &&
   localedef -i de_DE -f UTF-8 "$tmp/locales/de_DE.UTF-8" > "$tmp/localedef.txt" 2>&1; then
  LOCPATH="$tmp/locales" run locale "$cpu" --profile full --ops host/locale
  has "$tmp/locale.tap" "^exit 0$" &&
    has "$tmp/locale.tap" "^ok [0-9]* - host/locale$" &&
    ! has "$tmp/locale.tap" "host/locale # SKIP"
  result $? "host/locale: the CPU plugin registers and computes the same under a decimal comma" "$tmp/locale.tap"
else
  skip "host/locale: the CPU plugin registers and computes the same under a decimal comma" "localedef cannot make de_DE.UTF-8 here"
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
echo "1..$n"
exit $fail
