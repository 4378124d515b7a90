#!/bin/sh
# The shim corpus (conformance/tests/faulty/corpus.tsv): every faulty
# plugin, each the reference CPU plugin with one fault written the way
# vendor bugs happen, fails certification (exit 1) in the profile its
# manifest line names, and every failing test point matches the line's
# regex, the checks that name the fault.  The correct plugins of
# conformance/tests/good/, written differently from the reference,
# conform.
#
# The fast tier (make check) runs every fault on seed 1, except the races,
# which show only when threads meet and so are left to the long tier; the
# good plugins conform on seed 1.  The long tier (BP_TEST_TIER=long, make
# check-long) runs each race on seeds 1 to 8 and says its catch rate, and
# when none of the 8 caught it goes on to seed 40 until one does (a busy
# machine gives the threads fewer chances to meet); every other fault must
# be caught on seed 2 too, and the good plugins conform on seeds 2 to 4.
. "$(dirname "$0")/certify-lib.sh"
tier=${BP_TEST_TIER:-fast}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
manifest="$top_srcdir/conformance/tests/faulty/corpus.tsv"
good="$top_builddir/conformance/tests/good/.libs"

grep -v '^#' "$manifest" | grep . > "$tmp/corpus" || {
  echo "1..0 # SKIP no corpus manifest at $manifest"
  exit 0
}
tab=$(printf '\t')
# The core ops, by name.
"$certify" "$cpu" --list | sed -n 's|^core::\([a-z0-9_]*\)/.*|\1|p' | sort -u > "$tmp/ops"
# A sanitizer runtime maps memory of its own (ASan, TSan), and TSan starts
# a thread of its own: the certifier then leaves those measurements out,
# and the faults that only they show are skipped here.
san=${BP_SANITIZER:-no}
while IFS="$tab" read -r name category expected profile description; do
  case "$san:$name" in
    address:mmap_left | thread:mmap_left | thread:thread_at_load)
      n=$((n + 1))
      echo "ok $n - $name ($category, $profile) # SKIP under the $san sanitizer the certifier does not measure what it leaves behind"
      continue ;;
    address:matmul_pack_cache)
      n=$((n + 1))
      echo "ok $n - $name ($category, $profile) # SKIP under AddressSanitizer the host does not hand freed addresses back (its quarantine keeps them)"
      continue ;;
    thread:teardown_release)
      # The double free shows through the C library's allocator (or
      # ASan's), which ThreadSanitizer's allocator replaces.
      n=$((n + 1))
      echo "ok $n - $name ($category, $profile) # SKIP ThreadSanitizer's allocator does not catch the double free"
      continue ;;
  esac
  # Under ThreadSanitizer a data race is TSan's to report, not the check's.
  if [ "$san" = thread ] && [ "$category" = races ]; then
    n=$((n + 1))
    echo "ok $n - $name ($category, $profile) # SKIP ThreadSanitizer reports the race itself"
    continue
  fi
  # Under ThreadSanitizer each certification takes many seconds.  What
  # this build adds is TSan watching the certifier's and the host's own
  # threads, not other verdicts: one fault runs for each path a verdict
  # takes through the certifier (a numerics compare, the aliasing compare, the allocation guard,
  # the probe of the process, teardown, the error checks, hygiene, a host
# out of memory), and
  # the release and ASan builds run every fault.  The other numerics
  # categories (sizes, layouts, broadcast, dims, promotion, matmul) take
  # the values path with other inputs.
  if [ "$san" = thread ]; then
    case $category in
      values | aliasing | bounds | process | teardown | errors | leaks | oom) ;;
      *)
        n=$((n + 1))
        echo "ok $n - $name ($category, $profile) # SKIP under ThreadSanitizer one fault of each of the certifier's paths runs (a $category fault takes the values path), and the other builds run every one"
        continue ;;
    esac
    if grep -qx "$category" "$tmp/tsan-categories" 2> /dev/null; then
      n=$((n + 1))
      echo "ok $n - $name ($category, $profile) # SKIP under ThreadSanitizer one fault of each of the certifier's paths runs, and the other builds run every one"
      continue
    fi
    echo "$category" >> "$tmp/tsan-categories"
  fi
  # The op the fault is in: the one the regex names, else the op the
  # description starts with ("rsqrt: ...", "log_softmax keeps ..."); a
  # fault of the whole plugin
  # ("load sets ...", "teardown ...") shows in any op's process checks and
  # in the plugin-wide cases, so core::add's are enough.  Only that op's
  # cases run (with the plugin-wide ones), which keeps the corpus quick.
  op=$(printf '%s\n' "$expected" | grep -oE '[a-z_]+::[a-z0-9_.]*' | head -n 1)
  # A hostile host's fault: the one case of it (host/fork).
  hostcase=$(printf '%s\n' "$expected" | grep -o 'host/[a-z]*' | head -n 1)
  [ -n "$hostcase" ] && op=$hostcase
  # (host/threads varies the thread count the CPU plugin's docs name)
  extra=
  [ "$hostcase" = host/threads ] && extra="--threads-env BP_CPU_THREADS"
  if [ -z "$op" ]; then
    word=${description%%[ :]*}
    op=core::add
    grep -qx "$word" "$tmp/ops" && op=core::$word
  fi
  if [ "$category" = races ] && [ "$tier" != long ]; then
    n=$((n + 1))
    echo "ok $n - $name ($category, $profile) # SKIP a race shows only when threads meet: make check-long runs it with its catch rate"
    continue
  fi
  # catch SEED: certifies the plugin on SEED; 0 when it fails (exit 1) on
  # the checks that name its fault, and on nothing else.
  # (A fault of the categories lifetime and hygiene must be caught by the
  # check of that name, whatever else catches it too.)
  catch() {
    # shellcheck disable=SC2086
    run "$name" "$faulty/$name.so" --jobs 2 --profile "$profile" --ops "$op" --seed "$1" $extra
    has "$tmp/$name.tap" "^exit 1$" && only "$name" "$expected" &&
      case $category in
        lifetime | hygiene) has "$tmp/$name.tap" "^not ok [0-9]* - [^ ]*/$category # $category: " ;;
        *) true ;;
      esac
  }
  if [ "$category" = races ]; then
    # A race is caught by chance: eight tries give its catch rate, and
    # more follow (to 40) only while none has caught it.
    caught=0
    tries=0
    first=
    while [ $tries -lt 8 ] || { [ $caught -eq 0 ] && [ $tries -lt 40 ]; }; do
      tries=$((tries + 1))
      if catch $tries; then
        caught=$((caught + 1))
        [ -n "$first" ] || { first=$tries; cp "$tmp/$name.tap" "$tmp/$name.caught"; }
      fi
    done
    echo "# $name: caught in $caught of $tries tries (seeds 1 to $tries)"
    [ $caught -gt 0 ]
    result $? "$name ($category, $profile): caught by $expected in $caught of $tries tries" "$tmp/$name.tap"
    continue
  fi
  seeds=1
  [ "$tier" = long ] && seeds=2
  missed=
  for seed in $seeds; do
    catch "$seed" || { missed=$seed; break; }
  done
  [ -z "$missed" ]
  result $? "$name ($category, $profile): caught by $expected (seed${missed:+ $missed missed:} ${missed:-$seeds})" "$tmp/$name.tap"
done < "$tmp/corpus"

seeds=1
[ "$tier" = long ] && seeds="2 3 4"
# Under ThreadSanitizer the full profile takes many minutes a plugin: the
# core profile there, the full one in the other builds.
gprofile=full
[ "$san" = thread ] && gprofile=core
for p in naive strided vendoronly f32only; do
  # (Under ThreadSanitizer one of them: the threads it shows TSan are the
  # host's and the certifier's, the same for all four.)
  if [ "$san" = thread ] && [ "$p" != naive ]; then
    skip "good/$p.so conforms" "under ThreadSanitizer good/naive.so runs, and the other builds run all four"
    continue
  fi
  for seed in $seeds; do
    # (naive.so's scalar matmul is slow by design: under a sanitizer its
    # concurrency case needs more than the default 10 s, and under
    # ThreadSanitizer some 150 s of CPU time on a 2-vCPU machine)
    gt=120
    [ "$san" = thread ] && gt=600
    run "good-$p-$seed" "$good/$p.so" --jobs 2 --profile "$gprofile" --seed "$seed" --timeout $gt
    has "$tmp/good-$p-$seed.tap" "^exit 0$"
    result $? "good/$p.so conforms (profile $gprofile, seed $seed)" "$tmp/good-$p-$seed.tap"
  done
done

# f32only.so's kernels declare float32 only: the samples whose result
# would be float64 (sum and cumsum with dtype=float64) are left out, which
# the TAP and the certificate say, and it conforms on everything else.
if [ "$san" = thread ]; then
  skip "good/f32only.so: the samples with a float64 result are left out, and TAP says why" \
    "under ThreadSanitizer good/naive.so runs, and the other builds run all four"
else
  # (the first seed's run: the long tier's seeds start at 2)
  f=$tmp/good-f32only-${seeds%% *}.tap
  has "$f" "^ok [0-9]* - core::sum/float32/dims$" &&
    has "$f" "^# core::sum/float32/dims: left out: 2 sample(s) whose result 0 would be float64, which the kernel does not declare" &&
    has "$f" "^# core::cumsum/float32/dims: left out: 2 sample(s) whose result 0 would be float64" &&
    ! has "$f" "^not ok"
  result $? "good/f32only.so: the samples with a float64 result are left out, and TAP says why" "$f"
fi

echo "1..$n"
exit $fail
