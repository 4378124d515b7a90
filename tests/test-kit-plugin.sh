#!/bin/sh
# A vendor's plugin written with the helper kit: the vendor guide's
# host-memory device (examples/hostmem-device/hostmem.c, built here from
# the source tree as tests/plugins/hostmem) runs core::add, add.out,
# core::mul and core::relu in every dtype, float32 core::sum and
# core::softmax, and hostmem::swish.  bp-run calls them on the device;
# bp-certify certifies them, using the device's BP_DEVICE_HOST_VISIBLE
# flag for the read-only and guard pages, and reports the dtypes a kernel
# does not declare as SKIPs with the reason, in TAP and in the HTML
# report.  tests/plugins/hostvis shows that those read-only pages catch a
# write that a byte compare cannot see.
top_builddir=${top_builddir:-.}
run="$top_builddir/tools/bp-run"
certify="$top_builddir/conformance/bp-certify"
hostmem="$top_builddir/tests/plugins/.libs/hostmem.so"
hostvis="$top_builddir/tests/plugins/.libs/hostvis.so"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
result() { # result STATUS DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    [ -n "$3" ] && sed 's/^/#   /' "$3" | head -20
    fail=1
  fi
}
has() { grep -qF -- "$2" "$1"; } # has FILE FIXED-STRING
bp() { BP_PLUGIN_PATH= "$run" --no-discover -p "$hostmem" "$@" > "$tmp/out" 2>&1; }
echo "1..10"

# Pointwise kernels on the device: int8 wraps, the int8 alpha saturates
# (-300 is -128), relu compares signed values, float16 rounds once.
"$run" --write "$tmp/a.npy" int8 4 100,-100,-5,7 > /dev/null &&
  "$run" --write "$tmp/b.npy" int8 4 100,1,3,-2 > /dev/null &&
  "$run" --write "$tmp/f.npy" float32 3 1,-2,0.5 > /dev/null || exit 1
bp --device hostmem:0 core::add "$tmp/a.npy" "$tmp/b.npy" -o "$tmp/s.npy" &&
  "$run" --show "$tmp/s.npy" > "$tmp/out" 2>&1 && has "$tmp/out" "  -56 -99 -2 5"
result $? "core::add in int8 on hostmem:0 wraps" "$tmp/out"
bp --device hostmem:0 core::add "$tmp/a.npy" "$tmp/b.npy" alpha=-300 -o "$tmp/s.npy" &&
  "$run" --show "$tmp/s.npy" > "$tmp/out" 2>&1 && has "$tmp/out" "  100 28 123 7"
result $? "core::add's alpha saturates to the int8 range, as core::cast converts it" "$tmp/out"
bp --device hostmem:0 core::relu "$tmp/a.npy" && has "$tmp/out" "  100 0 0 7"
result $? "core::relu of signed int8 on hostmem:0" "$tmp/out"
bp --device hostmem:0 hostmem::swish "$tmp/f.npy" && has "$tmp/out" "float32[3] hostmem:0" &&
  has "$tmp/out" "  0.731058"
result $? "hostmem::swish, the plugin's own op" "$tmp/out"
bp core::relu "$tmp/a.npy"
[ $? -eq 1 ] && has "$tmp/out" "no kernel for cpu:0; kernels exist for: hostmem" &&
  has "$tmp/out" "run with --device hostmem:0 to put them on hostmem"
result $? "a call with no kernel for the CPU names --device" "$tmp/out"

# Certification: host-visible checks, declared dtypes.
BP_PLUGIN_PATH= "$certify" "$hostmem" --ops 'core::relu' --json "$tmp/relu.json" \
  > "$tmp/relu.tap" 2>&1
st=$?
[ $st -eq 0 ] && has "$tmp/relu.json" "inputs unchanged on " &&
  has "$tmp/relu.json" "(read-only pages and byte compare)"
result $? "hostmem conforms on core::relu, its inputs in read-only pages (status $st)" "$tmp/relu.tap"
BP_PLUGIN_PATH= "$certify" "$hostvis" --ops 'core::relu' > "$tmp/vis.tap" 2>&1
st=$?
[ $st -eq 1 ] && grep -q "^not ok .* - core::relu/honesty # honesty: the kernel wrote to argument 0 'self'.*(read-only page" "$tmp/vis.tap"
result $? "a host-visible device's kernel that writes its input is caught (status $st)" "$tmp/vis.tap"
BP_PLUGIN_PATH= "$certify" "$hostmem" --profile full --ops 'core::sum' --html "$tmp/sum.html" \
  > "$tmp/sum.tap" 2>&1
st=$?
[ $st -eq 0 ] && grep -q "^ok [0-9]* - core::sum/float32/basic$" "$tmp/sum.tap" &&
  grep -q "^ok [0-9]* - core::sum/int32/basic # SKIP the kernel does not declare int32$" "$tmp/sum.tap" &&
  grep -q "^ok [0-9]* - core::sum/bfloat16/large # SKIP the kernel does not declare bfloat16$" "$tmp/sum.tap"
result $? "--profile full lists the dtypes a kernel does not declare as SKIPs (status $st)" "$tmp/sum.tap"
has "$tmp/sum.html" "<td class=skip>skip<br><small>the kernel does not declare float64</small></td>" &&
  has "$tmp/sum.html" "<th>numerics<br>int8</th>"
result $? "the HTML report shows each such SKIP with its reason" "$tmp/sum.html"
BP_PLUGIN_PATH= "$certify" "$hostmem" --profile full --jobs 2 --json "$tmp/full.json" \
  > "$tmp/full.tap" 2>&1
st=$?
[ $st -eq 0 ] && has "$tmp/full.json" '"conforms": true'
result $? "hostmem conforms in --profile full (status $st)" "$tmp/full.tap"
exit $fail
