#!/bin/sh
# The first faulty corpus (conformance/tests/faulty/faulty.c) fails on the
# check that names each fault, in both isolations; a crash or a hang never
# ends the run; worker isolation loads the plugin once per worker, reruns a
# failing case alone, and lets no failure that shows only after earlier
# calls pass; a plugin that cannot load in a worker turns workers off; any
# vendor string makes a valid certificate; a plugin that hangs while
# loading cannot hang the certifier.
. "$(dirname "$0")/certify-lib.sh"

# The first faulty corpus: each fails (exit 1) on its named check, and on
# nothing that its fault does not explain, in both isolations.  Each run logs the processes that load the plugin.
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
# (Under ThreadSanitizer, where a certification costs ten times as much,
# the worker isolation only: test-certify.sh runs the case isolation
# there, and the other builds run both here.)
isolations="worker case"
[ "${BP_SANITIZER:-no}" = thread ] && isolations=worker
for iso in $isolations; do
check_faulty wrong_result "core::add/float32/[a-z]* # numerics: " "numerics"
has "$tmp/wrong_result.$iso.tap" "mismatch; worst at flat index [0-9]*: got .*, expected .* (bit-exact: the float64 result rounded once)"
result $? "$iso: wrong_result.so: the failure gives the count, the worst element and the errors" \
  "$tmp/wrong_result.$iso.tap"
# (Under AddressSanitizer the reads past the end are its to report: the
# case's process then ends without a verdict.)
check_faulty wrong_noncontig "core::add/(float32/(layouts|large) # numerics: |honesty # bounds: .*past the end|bounds # bounds: |repeatability # (depends on earlier calls|repeatability)|lifetime # lifetime: .*depends on what memory held before the call|[a-z]* # the case exited \\(status 1\\) without a verdict \\(a sanitizer)" \
  "numerics on non-contiguous input (and the reads past its end that follow)"
check_faulty mutates_input "core::add/honesty # honesty: the kernel wrote to argument 1 'other'" \
  "honesty (the faulting write is named)"
check_faulty writes_past_end "core::add.out/([a-z0-9/]* # bounds: .*(canary overwritten at byte 0 past its end|wrote byte \\+0 past the last element of argument 3 'out')|aliasing # aliasing: .*'out' given as a view with gaps of 3 elements between its rows: the kernel wrote element [0-9]* of the storage, outside the view's elements)" \
  "bounds (the allocation guard names the byte), and aliasing (a gapped out's gaps)"
check_faulty aliases_input "core::cast/(honesty # honesty: basic: .*result 0 aliases argument 0 'self'|.*only float32 to float32 or float64)" \
  "honesty (aliasing), besides the casts its kernel lacks"
has "$tmp/aliases_input.$iso.tap" "^not ok [0-9]* - core::cast/honesty # honesty: basic: .*result 0 aliases argument 0 'self'"
result $? "$iso: aliases_input.so: honesty names the aliasing" "$tmp/aliases_input.$iso.tap"
check_faulty meta_disagrees "faulty::twice/meta # meta: contiguous: .*result 0 has sizes \[20\]" \
  "meta agreement (generic checks of a vendor op)"
check_faulty crashes_on_empty "core::add/[a-z0-9/]* # CRASH signal 11 \\(SIGSEGV, address 0x10\\) during the [a-z]* check" "as a CRASH"
# (A hang costs its timeout twice in a worker: there, and in its rerun.
# The timeout leaves room for the slowest case under ThreadSanitizer.)
t=6
[ "$iso" = worker ] && t=4
# (Under ThreadSanitizer add's concurrency case alone took 5.2 s of CPU
# time on a 2-vCPU Sapphire Rapids machine.)
[ "${BP_SANITIZER:-no}" = thread ] && t=20
check_faulty hangs "core::add/float32/sizes # TIMEOUT after $t s" "as a TIMEOUT" --timeout $t
has "$tmp/hangs.$iso.tap" "^# [0-9]* passed, 1 failed"
result $? "$iso: hangs.so: the run goes on after the hang" "$tmp/hangs.$iso.tap"
check_faulty leaks_handle "core::add/(hygiene # hygiene: basic: .*1 tensor handle\\(s\\) leaked|oom # oom: .*left 1 tensor\\(s\\))" "hygiene (and oom, which counts what each call leaves)"
has "$tmp/leaks_handle.$iso.tap" "^not ok [0-9]* - core::add/hygiene # hygiene: basic: "
result $? "$iso: leaks_handle.so: hygiene names the leak" "$tmp/leaks_handle.$iso.tap"
check_faulty nondeterministic "core::add/(float32/[a-z]* # numerics: .*bit-exact|repeatability # repeatability: |concurrency # concurrency: |oom # oom: .*(results differ|gives other results))" \
  "repeatability (and bit-exact numerics, a few ulps off)"
has "$tmp/nondeterministic.$iso.tap" "^not ok [0-9]* - core::add/repeatability # repeatability: .*a second identical call gave a different result"
result $? "$iso: nondeterministic.so: repeatability names the second call" "$tmp/nondeterministic.$iso.tap"
check_faulty not_thread_safe "core::add/concurrency # concurrency: .*thread [0-9]*, call [0-9]*: the result differs" "concurrency"
# accepts_bad_dtype's kernel takes dtypes it does not declare, but the host
# refuses such a call before the kernel runs: the bug is unreachable, and
# the error check sees the host's refusal.
run "accepts_bad_dtype.$iso" "$faulty/accepts_bad_dtype.so" --jobs 2 --isolation "$iso"
has "$tmp/accepts_bad_dtype.$iso.tap" "^exit 0$" &&
  has "$tmp/accepts_bad_dtype.$iso.tap" "^ok [0-9]* - core::add/errors"
result $? "$iso: accepts_bad_dtype.so conforms: the host enforces its declared dtypes" \
  "$tmp/accepts_bad_dtype.$iso.tap"
check_faulty missing_op "registration/profile # claims core op set 2, but core::[a-z_.]* has no kernel for cpu" \
  "registration/profile" --ops 'core::add*'
check_faulty extra_export "handshake/exports # 1 symbols exported besides bp_plugin_init: faulty_helper" \
  "handshake/exports"
done
# Binaries the loader refuses (a right core::add, linked with an
# executable stack, a writable and executable segment, text
# relocations): handshake/binary names the file and the reason, and the
# cases that load the plugin fail with the loader's.  The host may allow
# them (BP_PLUGIN_ALLOW_UNSAFE): then only handshake/binary fails.
for p in exec_stack:"executable stack" wx_segment:"both writable and executable" \
         text_reloc:"text relocations"; do
  name=${p%%:*}
  why=${p#*:}
  run "$name" "$faulty/$name.so" --jobs 2
  has "$tmp/$name.tap" "^exit 1$" &&
    has "$tmp/$name.tap" "^not ok 3 - handshake/binary # .*/$name.so: .*$why.*: the loader refuses it$" &&
    only "$name" "(handshake/(binary|loads|version|names)|registration/(probe|profile|schemas)) # .*$name\.so.*$why"
  result $? "$name.so: handshake/binary refuses it ($why), and so does the loader" "$tmp/$name.tap"
done
BP_PLUGIN_ALLOW_UNSAFE=all run wx_allowed "$faulty/wx_segment.so" --jobs 2
has "$tmp/wx_allowed.tap" "^exit 1$" && only wx_allowed "handshake/binary # " &&
  has "$tmp/wx_allowed.tap" "^ok [0-9]* - core::add/float32/basic$"
result $? "wx_segment.so with BP_PLUGIN_ALLOW_UNSAFE=all: it loads, and only handshake/binary fails" \
  "$tmp/wx_allowed.tap"
# The symbol versions the plugin needs, in TAP and in the certificate.
has "$tmp/wrong_result.worker.tap" "^# the plugin needs the symbol versions .*libc\.so\.6 GLIBC_[0-9.]* (newest of [0-9]*)"
result $? "the TAP names the newest GLIBC version the plugin needs" "$tmp/wrong_result.worker.tap"

has "$tmp/wrong_noncontig.worker.tap" "^ok [0-9]* - core::add/float32/basic$"
result $? "wrong_noncontig.so: contiguous input passes" "$tmp/wrong_noncontig.worker.tap"
has "$tmp/meta_disagrees.worker.tap" "^ok [0-9]* - faulty::twice/bounds$"
result $? "meta_disagrees.so: the other generic checks of faulty::twice run and pass" \
  "$tmp/meta_disagrees.worker.tap"
has "$tmp/crashes_on_empty.worker.tap" "^ok [0-9]* - core::add/errors$"
result $? "crashes_on_empty.so: the run goes on after the crash" "$tmp/crashes_on_empty.worker.tap"
# The loads: the probe, then one per case that loads it (case), or one
# per worker, plus a fresh worker and the rerun for each failure (worker).
if [ "$isolations" = worker ]; then
  skip "case: each case that loads a faulty plugin does so in a process of its own" \
    "under ThreadSanitizer the corpus runs in worker isolation only"
else
  bad=""
  for f in "$tmp"/*.case.loads; do
    p=$(basename "$f" .case.loads)
    # (teardown/unload loads it three times in its one process)
    [ "$(loads "$f")" = "$((1 + $(loading "$p.case")))" ] &&
      [ "$(wc -l < "$f")" -le "$(($(loads "$f") + 2))" ] ||
      bad="$bad $p($(loads "$f") loads, $(loading "$p.case") loading cases)"
  done
  [ -z "$bad" ]; result $? "case: each case that loads a faulty plugin does so in a process of its own:$bad"
fi
bad=""
for f in "$tmp"/*.worker.loads; do
  p=$(basename "$f" .worker.loads)
  # the probe, 2 workers, a rerun and a fresh worker per failure, and the
  # checks that run in a fresh process (process/load, teardown/unload and
  # each op's concurrency)
  fresh=$((2 + $(grep -c ' - [^ ]*/concurrency\( \|$\)' "$tmp/$p.worker.tap")))
  max=$((1 + 2 + 2 * $(reruns "$p.worker") + fresh))
  [ "$(loads "$f")" -le "$max" ] && [ "$(wc -l < "$f")" -le "$(($(loads "$f") + 2))" ] ||
    bad="$bad $p($(loads "$f") loads, $(wc -l < "$f") inits, at most $max)"
done
[ -z "$bad" ]; result $? "worker: a faulty plugin is loaded once per worker, plus once per rerun and its fresh worker:$bad"
if has "$tmp/crashes_on_empty.worker.tap" "^# [0-9]* case(s) that did not pass in a shared worker were rerun alone in a fresh process: 0 verdict(s) changed$" &&
   [ "$(loads "$tmp/crashes_on_empty.worker.loads")" -ge 4 ]; then
  result 0 "worker: a crash kills the worker, a fresh worker goes on, and the case is rerun alone"
else
  result 1 "worker: a crash kills the worker, a fresh worker goes on, and the case is rerun alone" \
    "$tmp/crashes_on_empty.worker.tap"
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
[ "$w" = 6 ] && [ "$(wc -l < "$tmp/inst.loads")" = "$((w + 2))" ]
result $? "worker: the plugin is loaded by the probe, once in each of the 2 workers, and by the 3 checks that need a fresh process ($w loads)"
run few "$inst" --ops handshake/version --jobs 16 --json "$tmp/few.json"
points=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/few.tap")
w=$(sed -n 's/.*"isolation": {"mode": "worker", "workers": \([0-9]*\),.*/\1/p' "$tmp/few.json")
has "$tmp/few.tap" "^exit 0$" && [ -n "$w" ] && [ "$w" -lt "$points" ]
result $? "worker: no more workers than cases ($w workers for $points cases with --jobs 16)" "$tmp/few.tap"
[ "$c" = "$((1 + $(loading instcase)))" ]
result $? "case: the probe and each case that loads the plugin load it ($c loads, $(loading instcase) loading cases)"
# A kernel that goes wrong only after many calls in one process (a cache,
# a counter): in a shared worker a case fails, and alone in a fresh process
# it passes.  The failure stands ("depends on earlier calls"), with both
# runs in the TAP, the certificate and the report: a host is a long-lived
# process, and the rerun tells which case ran before, not an excuse.
BP_FAULTY_WEAR_OUT=100 run wear "$inst" --jobs 1 --json "$tmp/wear.json" --html "$tmp/wear.html"
if has "$tmp/wear.tap" "^exit 1$" &&
   has "$tmp/wear.tap" "^not ok [0-9]* - core::add/[a-z0-9/]* # depends on earlier calls: fail in a long-lived worker after [0-9]* other case(s), the last core::add/[a-z0-9/]* (.*); pass alone in a fresh process$" &&
   has "$tmp/wear.tap" "^# [1-9][0-9]* failure(s) showed only after earlier calls in a shared worker: they stand"; then
  result 0 "a failure that shows only after earlier calls in a worker stands, and names what ran before"
else
  result 1 "a failure that shows only after earlier calls in a worker stands, and names what ran before" "$tmp/wear.tap"
fi
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/wear.json" > "$tmp/wear.py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# (how many cases wear it out depends on the seed's case order)
dep = [r for r in d["results"] if r.get("depends_on_earlier_calls")]
assert d["conforms"] is False and d["isolation"]["depends"] == len(dep) >= 1, d["isolation"]
for r in dep:
    assert r["status"] == "fail" and r["alone"]["status"] == "pass", r
    assert r["worker"]["status"] == "fail" and r["detail"].startswith("depends on earlier calls"), r
PY
  result $? "the certificate records both runs of a failure that depends on earlier calls" "$tmp/wear.py"
else
  skip "the certificate records both runs" "python3 not found"
fi
has "$tmp/wear.html" "It failed in a shared worker, after other cases, and gave pass alone"
result $? "the report says the failure stands though the case passes alone" "$tmp/wear.html"
BP_FAULTY_WEAR_OUT=100 run wearcase "$inst" --jobs 1 --isolation case
has "$tmp/wearcase.tap" "^exit 0$" && ! has "$tmp/wearcase.tap" "rerun"
result $? "case: no case alone sees the fault of a long-lived process" "$tmp/wearcase.tap"
# A kernel that keeps state in the environment: a worker puts the
# environment back before each case, as a fresh process has it, so no case
# sees what the ones before it counted there.  Changing the host's
# environment is itself a fault, which the process checks name (and only
# they).  The kernel's setenv() also races with any other thread's
# getenv() (the host reads BP_ALLOC_POISON at each guarded allocation), so
# the concurrency check may crash on it: that is this plugin's fault too,
# and depends on thread timing, so it is allowed beside the process checks.
BP_FAULTY_ENV_WEAR_OUT=250 run envwear "$inst" --jobs 1
has "$tmp/envwear.tap" "^exit 1$" && ! has "$tmp/envwear.tap" "depends on earlier calls" &&
  has "$tmp/envwear.tap" "^not ok .*/process # .*the environment variable BP_FAULTY_ENV_CALLS was set" &&
  only envwear "(/process|teardown/unload) # .*the environment variable BP_FAULTY_ENV_CALLS was set|/concurrency # CRASH "
result $? "worker: a case that changed the environment leaves no trace in the next, and the process checks name the change" "$tmp/envwear.tap"
# A plugin that cannot be loaded by a worker: worker isolation gives way
# to case isolation, and the verdicts are those of case isolation.
BP_FAULTY_INIT_ABORT=1 run abort "$inst" --jobs 2 --json "$tmp/abort.json"
BP_FAULTY_INIT_ABORT=1 run abortcase "$inst" --jobs 2 --isolation case
if has "$tmp/abort.tap" "^exit 1$" &&
   has "$tmp/abort.tap" "^# worker isolation off: a worker ended (signal 6) while loading the plugin; the remaining cases run alone in fresh processes$" &&
   has "$tmp/abort.tap" "^not ok 4 - handshake/loads # CRASH signal 6 (SIGABRT: abort() was called) during the handshake check$" &&
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
     has "$tmp/hang.tap" "^not ok 4 - handshake/loads # TIMEOUT after 0.5 s without progress (no CPU time used in that time: asleep or blocked)$" &&
     has "$tmp/hang.tap" "^# worker isolation off: a worker did not load the plugin within 0.5 s"; then
    result 0 "a plugin that hangs while loading, deaf to SIGALRM, cannot hang the certifier"
  else
    result 1 "a plugin that hangs while loading, deaf to SIGALRM, cannot hang the certifier" "$tmp/hang.tap"
  fi
else
  skip "a plugin that hangs while loading cannot hang the certifier" "timeout(1) not found"
fi
echo "1..$n"
exit $fail
