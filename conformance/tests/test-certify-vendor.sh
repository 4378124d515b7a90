#!/bin/sh
# bp-certify on ops outside core: --reference, --hints, and the aliasing
# of what they write.
#
# --reference: an op outside core is checked against the
# kernel of a reference plugin (conformance/tests/good/vendoronly.c built
# with -DVND_REFERENCE).  vnd_scale_dense.so (the same source with
# -DVND_FAULT_SCALE_DENSE) conforms without a reference and fails on
# vnd::scale/reference, and only there, with one; the good plugin agrees
# with its reference on every op; a reference that cannot serve (missing,
# defining the plugin's namespace too, without a kernel of the op) is
# named in the verdict; the certificate records the reference.  The
# same plugins on a device type of their own (-DVND_FAKEDEV) are checked
# against the reference's CPU kernels.
#
# --hints: vnd::act(Tensor x, str kind) cannot be generated without the
# kinds; with conformance/tests/vendoronly.hints (the kinds, and x in a
# positive range, which 'log' needs) every check runs, and
# vnd_act_log1p.so (act's 'log' computes log(1 + x)) fails against the
# reference only with both hints; a hints file that is not one is bad
# usage, and a hint that names no op or argument is reported.
#
# Aliasing: the good plugin's axpy_ and clamp_ keep a gapped view's gaps,
# agree under exact aliases and refuse partial overlaps; vnd_axpy_overlap.so
# (no refusal: it reads elements it wrote) and vnd_clamp_gaps.so (it walks
# a strided self as if contiguous) fail OP/aliasing and nothing else.
. "$(dirname "$0")/certify-lib.sh"

good="$top_builddir/conformance/tests/good/.libs"
ref="$good/vendoronly_ref.so"
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
hints="$top_srcdir/conformance/tests/vendoronly.hints"

echo "1..21"

run dense_noref "$faulty/vnd_scale_dense.so" --jobs 2
has "$tmp/dense_noref.tap" "^exit 0$" &&
  has "$tmp/dense_noref.tap" "^ok [0-9]* - vnd::scale/reference # SKIP .*no reference plugin was given (--reference)"
result $? "vnd_scale_dense.so conforms without a reference, and the SKIP names --reference" \
  "$tmp/dense_noref.tap"

run dense "$faulty/vnd_scale_dense.so" --jobs 2 --reference "$ref" --json "$tmp/dense.json"
has "$tmp/dense.tap" "^exit 1$" &&
  only dense "^not ok [0-9]* - vnd::scale/reference # reference: transposed: .*the kernel and the reference plugin vendoronly_reference disagree: result 0: [0-9]* of 20 elements differ"
result $? "with --reference, vnd_scale_dense.so fails vnd::scale/reference on the transposed sample, and nothing else" \
  "$tmp/dense.tap"
for op in axpy_ clamp_ minmax; do
  has "$tmp/dense.tap" "^ok [0-9]* - vnd::$op/reference$" || { result 1 "the other ops pass against the reference" "$tmp/dense.tap"; op=; break; }
done
[ -n "$op" ] && result 0 "the other ops pass against the reference"

grep -q '"reference": {"path": "[^"]*vendoronly_ref.so", "sha256": "[0-9a-f]\{64\}"}' "$tmp/dense.json"
result $? "the certificate records the reference's path and SHA-256" "$tmp/dense.json"

run good "$good/vendoronly.so" --profile full --jobs 2 --reference "$ref" --hints "$hints" --json "$tmp/good.json"
has "$tmp/good.tap" "^exit 0$" && ! grep -q "^ok [0-9]* - vnd::[a-z_]*/reference # SKIP" "$tmp/good.tap" &&
  [ "$(grep -c '^ok [0-9]* - vnd::[a-z_]*/reference$' "$tmp/good.tap")" = 5 ] &&
  grep -q '"detail": "the kernel agrees with the reference plugin vendoronly_reference.s kernel (on cpu) on [1-9][0-9]* sample' "$tmp/good.json"
result $? "vendoronly.so agrees with its reference on its five ops (profile full, with its hints)" "$tmp/good.tap"

# On a device of the plugin's own, against the reference's CPU kernels.
run dev "$good/vendoronly_dev.so" --jobs 2 --reference "$ref" --json "$tmp/dev.json"
has "$tmp/dev.tap" "^exit 0$" && has "$tmp/dev.tap" "device vnddev:0" &&
  [ "$(grep -c '^ok [0-9]* - vnd::[a-z_]*/reference$' "$tmp/dev.tap")" = 4 ] &&
  grep -q '"detail": "the kernel agrees with the reference plugin vendoronly_reference.s kernel (on cpu) on [1-9][0-9]* sample' "$tmp/dev.json"
result $? "vendoronly_dev.so (device vnddev) agrees with the reference's CPU kernels" "$tmp/dev.tap"
run dense_dev "$faulty/vnd_scale_dense_dev.so" --jobs 2 --reference "$ref"
has "$tmp/dense_dev.tap" "^exit 1$" &&
  only dense_dev "^not ok [0-9]* - vnd::scale/reference # reference: transposed: .*disagree"
result $? "vnd_scale_dense_dev.so fails vnd::scale/reference against the CPU reference, and nothing else" \
  "$tmp/dense_dev.tap"

run missing "$good/vendoronly.so" --jobs 2 --ops 'vnd::scale' --reference "$tmp/nosuch.so"
has "$tmp/missing.tap" "^exit 1$" &&
  only missing "vnd::scale/reference # reference: the reference plugin .*nosuch.so does not load beside the plugin: "
result $? "a reference that does not exist fails the reference case, naming it" "$tmp/missing.tap"

# A reference that defines the namespace too cannot load beside the plugin.
run twice "$faulty/vnd_scale_dense.so" --jobs 2 --ops 'vnd::scale' --reference "$good/vendoronly.so"
has "$tmp/twice.tap" "^exit 1$" &&
  only twice "vnd::scale/reference # reference: the reference plugin .*vendoronly.so does not load beside the plugin: .*vnd"
result $? "a reference that defines the plugin's namespace fails with the loader's message" "$tmp/twice.tap"

# The plugin as its own reference, and a copy of it under another file
# name, which the host could not tell apart from it; in a worker that
# goes on to the plugin's other cases, which must still pass.
run self "$good/vendoronly.so" --jobs 1 --ops 'vnd::*' --reference "$good/vendoronly.so"
cp "$good/vendoronly.so" "$tmp/copy.so"
run copy "$good/vendoronly.so" --jobs 1 --ops 'vnd::*' --reference "$tmp/copy.so"
has "$tmp/self.tap" "^exit 1$" && only self "vnd::[a-z_]*/reference # reference: the reference plugin .*vendoronly.so is the plugin under test itself" &&
  [ "$(grep -c '^not ok' "$tmp/self.tap")" = 5 ] &&
  has "$tmp/copy.tap" "^exit 1$" && only copy "vnd::[a-z_]*/reference # reference: the reference plugin .*copy.so does not load beside the plugin: .*the name 'vendoronly' is already taken" &&
  [ "$(grep -c '^not ok' "$tmp/copy.tap")" = 5 ]
result $? "the plugin given as its own reference, or a copy of it, fails the reference cases and nothing else" "$tmp/self.tap"

# A reference without a kernel of the op: its composite, else a SKIP.
run nokernel "$good/vendoronly.so" --jobs 2 --ops 'vnd::scale' --reference "$cpu"
has "$tmp/nokernel.tap" "^exit 0$" &&
  has "$tmp/nokernel.tap" "^ok [0-9]* - vnd::scale/reference # SKIP the reference plugin .*cpu.so has no kernel of vnd::scale (for cpu), and vnd::scale has no composite"
result $? "a reference without a kernel of the op gives a SKIP that says so" "$tmp/nokernel.tap"

# --hints
run act_plain "$good/vendoronly.so" --jobs 2 --ops 'vnd::act'
has "$tmp/act_plain.tap" "^exit 0$" &&
  has "$tmp/act_plain.tap" "^ok [0-9]* - vnd::act/meta # SKIP cannot generate argument 1 'kind' of type str (give its values with --hints)"
result $? "without hints, vnd::act's checks are SKIPs that name --hints" "$tmp/act_plain.tap"

run act_good "$good/vendoronly.so" --jobs 2 --ops 'vnd::act' --hints "$hints" --reference "$ref" --json "$tmp/act_good.json"
has "$tmp/act_good.tap" "^exit 0$" && has "$tmp/act_good.tap" "^ok [0-9]* - vnd::act/reference$" &&
  has "$tmp/act_good.tap" "^ok [0-9]* - vnd::act/meta$" && has "$tmp/act_good.tap" "^ok [0-9]* - vnd::act/honesty$" &&
  grep -q '"hints": {"path": "[^"]*vendoronly.hints", "sha256": "[0-9a-f]\{64\}"}' "$tmp/act_good.json"
result $? "with the hints, vnd::act's checks run and agree with the reference; the certificate records the hints" "$tmp/act_good.tap"

run log1p_ref "$faulty/vnd_act_log1p.so" --jobs 2 --ops 'vnd::act' --reference "$ref"
run log1p_hints "$faulty/vnd_act_log1p.so" --jobs 2 --ops 'vnd::act' --hints "$hints"
printf 'vnd::act kind values relu abs log\n' > "$tmp/kinds.hints"
run log1p_kinds "$faulty/vnd_act_log1p.so" --jobs 2 --ops 'vnd::act' --hints "$tmp/kinds.hints" --reference "$ref"
has "$tmp/log1p_ref.tap" "^exit 0$" && has "$tmp/log1p_hints.tap" "^exit 0$" && has "$tmp/log1p_kinds.tap" "^exit 0$"
result $? "vnd_act_log1p.so conforms with the reference alone, the hints alone, or the kinds without the range" "$tmp/log1p_kinds.tap"

run log1p "$faulty/vnd_act_log1p.so" --jobs 2 --hints "$hints" --reference "$ref"
has "$tmp/log1p.tap" "^exit 1$" &&
  only log1p "^not ok [0-9]* - vnd::act/reference # reference: [a-z]*, kind='log': .*'log': the kernel and the reference plugin vendoronly_reference disagree"
result $? "with both, vnd_act_log1p.so fails vnd::act/reference on a 'log' sample, and nothing else" "$tmp/log1p.tap"

"$certify" "$good/vendoronly.so" --hints "$tmp/nosuch.hints" > "$tmp/h1.out" 2>&1
h1=$?
printf 'vnd::act kind values relu\nvnd::act x ranges 1 2\n' > "$tmp/bad.hints"
"$certify" "$good/vendoronly.so" --hints "$tmp/bad.hints" > "$tmp/h2.out" 2>&1
h2=$?
printf 'vnd::act x range 2 1\n' > "$tmp/bad3.hints"
"$certify" "$good/vendoronly.so" --hints "$tmp/bad3.hints" > "$tmp/h3.out" 2>&1
h3=$?
[ $h1 = 2 ] && grep -q "hints .*nosuch.hints: cannot read" "$tmp/h1.out" &&
  [ $h2 = 2 ] && grep -q "bad.hints: line 2: unknown hint 'ranges'" "$tmp/h2.out" &&
  [ $h3 = 2 ] && grep -q "line 1: range needs two finite numbers LO <= HI" "$tmp/h3.out"
result $? "a hints file that cannot be read, or has a line that is not a hint, is bad usage naming the line" "$tmp/h2.out"

printf 'vnd::act kind values relu\nvnd::act y range 1 2\nvnd::nosuch x range 0 1\nvnd::scale x values 1 2\n' > "$tmp/names.hints"
run names "$good/vendoronly.so" --jobs 2 --hints "$tmp/names.hints"
has "$tmp/names.tap" "^# --hints line 3: the plugin has no op 'vnd::nosuch'; the hint is not used$" &&
  has "$tmp/names.tap" "^ok [0-9]* - vnd::act/meta # SKIP --hints line 2: vnd::act has no argument 'y'$" &&
  has "$tmp/names.tap" "^ok [0-9]* - vnd::scale/meta # SKIP --hints line 4: a values hint does not apply to Tensor argument 'x' (give it a range)$"
result $? "hints that name no op, no argument, or give a Tensor values, are reported" "$tmp/names.tap"

# Aliasing of what an op writes
run alias_good "$good/vendoronly.so" --jobs 2 --ops 'vnd::*' --json "$tmp/alias_good.json"
has "$tmp/alias_good.tap" "^ok [0-9]* - vnd::axpy_/aliasing$" && has "$tmp/alias_good.tap" "^ok [0-9]* - vnd::clamp_/aliasing$" &&
  has "$tmp/alias_good.tap" "^ok [0-9]* - vnd::scale/aliasing # SKIP vnd::scale writes no Tensor argument" &&
  grep -q '"name": "vnd::axpy_/aliasing", [^}]*"detail": "what it writes keeps the gaps of a gapped view and agrees, or is refused with a message, under exact aliases and partial overlaps: [1-9][0-9]* relation(s), [1-9][0-9]* refused"' "$tmp/alias_good.json"
result $? "vendoronly.so's written arguments keep a view's gaps, agree under exact aliases and refuse partial overlaps" "$tmp/alias_good.tap"

run overlap "$faulty/vnd_axpy_overlap.so" --jobs 2
has "$tmp/overlap.tap" "^exit 1$" &&
  only overlap "^not ok [0-9]* - vnd::axpy_/aliasing # aliasing: .*argument .#1 'x' overlapping 'y' partially \(one element behind it in one storage\): the call succeeded, but element [0-9]* written differs"
result $? "vnd_axpy_overlap.so fails vnd::axpy_/aliasing on a partial overlap, and nothing else" "$tmp/overlap.tap"

run gaps "$faulty/vnd_clamp_gaps.so" --jobs 2
has "$tmp/gaps.tap" "^exit 1$" &&
  only gaps "^not ok [0-9]* - vnd::clamp_/aliasing # aliasing: .*argument .#0 'self' given as a view with gaps of 3 elements between its rows: the kernel wrote element [0-9]* of the storage, between the view's elements"
result $? "vnd_clamp_gaps.so fails vnd::clamp_/aliasing on a write into the gaps, and nothing else" "$tmp/gaps.tap"

"$certify" "$good/vendoronly.so" --reference "" > "$tmp/usage.out" 2>&1
[ $? = 2 ] && grep -q "reference: empty file name" "$tmp/usage.out"
result $? "--reference with an empty name is bad usage (exit 2)" "$tmp/usage.out"

exit $fail
