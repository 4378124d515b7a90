#!/bin/sh
# bp-certify fails closed: anything that keeps a check from running makes
# the verdict "does not conform", or is bad usage (exit 2), and never a
# certificate that says "conforms".  A probe that times out, crashes or
# fails; a plugin that registers nothing; --ops that selects no op;
# --device that names no device type; a certificate or report that cannot
# be written.  The certificate records every option that narrows a run.
. "$(dirname "$0")/certify-lib.sh"
inst="$faulty/instrumented.so"

# A plugin whose first load is slow (a cold cache) and whose later loads
# are fast: the probe times out, and the run fails, though every later
# load works.
rm -f "$tmp/once"
BP_FAULTY_SLOW_ONCE="$tmp/once" run slow "$inst" --timeout 1 --json "$tmp/slow.json"
if has "$tmp/slow.tap" "^exit 1$" &&
   has "$tmp/slow.tap" "^not ok 7 - registration/probe # probe: the certifier could not learn what the plugin registers, so no op was checked: loading the plugin took longer than --timeout 1 s" &&
   has "$tmp/slow.json" '"conforms": false' && ! has "$tmp/slow.tap" " - core::"; then
  result 0 "a probe that times out fails the run, though later loads are fast"
else
  result 1 "a probe that times out fails the run, though later loads are fast" "$tmp/slow.tap"
fi
# The same plugin, its cache warm: it conforms.
BP_FAULTY_SLOW_ONCE="$tmp/once" run warm "$inst" --timeout 10 --ops 'core::add'
has "$tmp/warm.tap" "^exit 0$" && has "$tmp/warm.tap" "^ok 7 - registration/probe$"
result $? "with a warm cache the same plugin conforms" "$tmp/warm.tap"
# A probe that crashes, or whose plugin does not load at all.
BP_FAULTY_INIT_ABORT=1 run crashprobe "$inst" --ops 'core::add'
has "$tmp/crashprobe.tap" "^exit 1$" &&
  has "$tmp/crashprobe.tap" "^not ok 7 - registration/probe # probe: .*died of signal 6"
result $? "a probe that crashes fails the run, with the signal" "$tmp/crashprobe.tap"
run noentry "$plugins/no_entry.so"
has "$tmp/noentry.tap" "^exit 1$" &&
  has "$tmp/noentry.tap" "^not ok 7 - registration/probe # probe: .*the plugin does not load: "
result $? "a plugin that does not load fails registration/probe, with the host's reason" "$tmp/noentry.tap"

# A plugin that loads and registers nothing: nothing was certified.
run empty "$faulty/registers_nothing.so" --json "$tmp/empty.json"
if has "$tmp/empty.tap" "^exit 1$" &&
   has "$tmp/empty.tap" "^not ok [0-9]* - registration/ops # registration: nothing to certify" &&
   has "$tmp/empty.json" '"conforms": false'; then
  result 0 "a plugin with nothing to check does not conform"
else
  result 1 "a plugin with nothing to check does not conform" "$tmp/empty.tap"
fi

# Bad usage, found before anything runs: exit 2 and a reason.
run noops "$cpu" --ops 'core::nosuch*'
has "$tmp/noops.tap" "^exit 2$" && ! has "$tmp/noops.tap" "^1\.\." &&
  has "$tmp/noops.err" "--ops 'core::nosuch\*' matches no op of the plugin (its ops: core::add, "
result $? "--ops that selects no op is bad usage (exit 2), naming the plugin's ops" "$tmp/noops.err"
run plugincase "$cpu" --ops 'handshake/version'
has "$tmp/plugincase.tap" "^exit 0$" && has "$tmp/plugincase.tap" "^ok 5 - handshake/version$"
result $? "--ops naming a plugin-wide case is not bad usage" "$tmp/plugincase.tap"
run nodevtype "$cpu" --device npu
has "$tmp/nodevtype.tap" "^exit 2$" && ! has "$tmp/nodevtype.tap" "^1\.\." &&
  has "$tmp/nodevtype.err" "--device npu: the plugin registers no such device type (its device types: cpu)"
result $? "--device that names no device type is bad usage (exit 2)" "$tmp/nodevtype.err"
for o in json html; do
  run "nowrite$o" "$cpu" "--$o" "$tmp/no/such/dir/cert.$o"
  has "$tmp/nowrite$o.tap" "^exit 2$" && ! has "$tmp/nowrite$o.tap" "^1\.\." &&
    has "$tmp/nowrite$o.err" "--$o: cannot write '$tmp/no/such/dir/cert.$o': No such file or directory"
  result $? "a --$o path that cannot be written is bad usage (exit 2), before any check runs" \
    "$tmp/nowrite$o.err"
done
# A certificate left by an earlier run is emptied when a run starts, so
# that a run that dies does not leave it standing.
echo '{"conforms": true}' > "$tmp/stale.json"
run stale "$cpu" --ops 'core::nosuch' --json "$tmp/stale.json"
has "$tmp/stale.tap" "^exit 2$" && [ ! -s "$tmp/stale.json" ]
result $? "a run leaves no stale certificate behind" "$tmp/stale.tap"

# The certificate and the summary say what narrowed the run.
run narrow "$cpu" --ops 'core::add' --seed 5 --device cpu --json "$tmp/narrow.json" --html "$tmp/narrow.html"
if has "$tmp/narrow.tap" "^exit 0$" &&
   has "$tmp/narrow.tap" "^# [0-9]* passed, 0 failed, [0-9]* skipped: conforms (profile core, only the ops --ops 'core::add' selects)$" &&
   has "$tmp/narrow.json" '"selection": {"profile": "core", "ops": "core::add", "device": "cpu", "seed": 5, "complete": false}' &&
   has "$tmp/narrow.json" '"complete": false,' &&
   has "$tmp/narrow.html" "<b>A partial run:</b> the core profile, not full; only the ops that --ops 'core::add' selects"; then
  result 0 "a partial run says so in the summary, the certificate and the report"
else
  result 1 "a partial run says so in the summary, the certificate and the report" "$tmp/narrow.json"
fi
run whole "$cpu" --profile full --ops 'handshake/*' --json "$tmp/whole.json"
has "$tmp/whole.json" '"complete": false'
result $? "--ops makes even a full-profile run incomplete" "$tmp/whole.json"

# --timeout counts the CPU time of the process running the case, or wall
# time in which it uses none: a correct case made slow by a busy machine
# is no TIMEOUT, and a hang is one whether it spins or sleeps.  Here eight
# busy loops share one CPU with the certifier, so 0.3 s of computing per
# call takes several seconds of wall time, past a 1.5 s --timeout that a
# wall clock would have spent.
if command -v taskset > /dev/null 2>&1 && taskset -c 0 true 2> /dev/null; then
  hogs=
  for i in 1 2 3 4 5 6 7 8; do
    taskset -c 0 sh -c 'while :; do :; done' &
    hogs="$hogs $!"
  done
  t0=$(date +%s)
  BP_FAULTY_SPIN_MS=300 taskset -c 0 "$certify" "$inst" --ops 'core::add/float32/sizes' --timeout 1.5 \
    > "$tmp/busy.tap" 2>&1
  echo "exit $?" >> "$tmp/busy.tap"
  took=$(( $(date +%s) - t0 ))
  # shellcheck disable=SC2086
  kill $hogs 2> /dev/null
  wait 2> /dev/null
  if has "$tmp/busy.tap" "^exit 0$" && has "$tmp/busy.tap" "^ok [0-9]* - core::add/float32/sizes$" &&
     [ "$took" -ge 2 ]; then
    result 0 "a slow case on a busy CPU passes: its CPU time counts, not the $took s of wall time"
  else
    echo "# took $took s" >> "$tmp/busy.tap"
    result 1 "a slow case on a busy CPU passes: its CPU time counts, not the wall time" "$tmp/busy.tap"
  fi
else
  skip "a slow case on a busy CPU passes" "taskset cannot pin a process to CPU 0 here"
fi
BP_FAULTY_SPIN_MS=100000 run spin "$inst" --ops 'core::add/float32/sizes' --timeout 1
has "$tmp/spin.tap" "^exit 1$" &&
  has "$tmp/spin.tap" "^not ok [0-9]* - core::add/float32/sizes # TIMEOUT after 1 s of CPU time$"
result $? "a hang that spins is a TIMEOUT after --timeout of CPU time" "$tmp/spin.tap"

echo "1..$n"
exit $fail
