#!/bin/sh
# The shim corpus (conformance/tests/faulty/corpus.tsv): every faulty
# plugin, each the reference CPU plugin with one fault written the way
# vendor bugs happen, fails certification (exit 1) in the profile its
# manifest line names, and every failing test point matches the line's
# regex, the checks that name the fault.  The correct plugins of
# conformance/tests/good/, written differently from the reference,
# conform on two seeds (the closing measurements use ten).
. "$(dirname "$0")/certify-lib.sh"
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
manifest="$top_srcdir/conformance/tests/faulty/corpus.tsv"
good="$top_builddir/conformance/tests/good/.libs"

grep -v '^#' "$manifest" | grep . > "$tmp/corpus" || {
  echo "1..0 # SKIP no corpus manifest at $manifest"
  exit 0
}
tab=$(printf '\t')
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
  # The op the fault is in, when the regex names one: only its cases run
  # (with the plugin-wide ones), which keeps the corpus quick.
  op=$(printf '%s\n' "$expected" | grep -o 'core::[a-z_.]*' | head -n 1)
  # A race shows only when the threads meet it: a race is given up to eight
  # runs (a seed each), and one that catches it is enough.
  tries=1
  [ "$category" = races ] && tries=8
  seed=1
  while :; do
    if [ -n "$op" ]; then
      run "$name" "$faulty/$name.so" --jobs 2 --profile "$profile" --ops "$op" --seed "$seed"
    else
      run "$name" "$faulty/$name.so" --jobs 2 --profile "$profile" --seed "$seed"
    fi
    has "$tmp/$name.tap" "^exit 1$" || [ "$seed" -ge "$tries" ] || { seed=$((seed + 1)); continue; }
    break
  done
  if has "$tmp/$name.tap" "^exit 1$" && only "$name" "$expected"; then
    result 0 "$name ($category, $profile): caught by $expected"
  else
    result 1 "$name ($category, $profile): caught by $expected" "$tmp/$name.tap"
  fi
done < "$tmp/corpus"

for p in naive strided vendoronly; do
  for seed in 1 2; do
    # (naive.so's scalar matmul is slow by design: under a sanitizer its
    # concurrency case needs more than the default 10 s)
    run "good-$p-$seed" "$good/$p.so" --jobs 2 --profile full --seed "$seed" --timeout 120
    has "$tmp/good-$p-$seed.tap" "^exit 0$"
    result $? "good/$p.so conforms (profile full, seed $seed)" "$tmp/good-$p-$seed.tap"
  done
done

echo "1..$n"
exit $fail
