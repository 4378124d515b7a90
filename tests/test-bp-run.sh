#!/bin/sh
# bp-run calls operators on .npy files.  The .npy inputs are written here
# with printf (no NumPy needed), in C and Fortran order, little- and
# big-endian; results are checked by reading them back with --show.
top_builddir=${top_builddir:-.}
run="$top_builddir/tools/bp-run"
cpu="$top_builddir/plugins/cpu/.libs/cpu.so"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/#   /' "$tmp/out" | head -20; fail=1; }
# expect DESCRIPTION STATUS PATTERN: the last command's status and output.
expect() {
  if [ "$st" -eq "$2" ] && grep -q -- "$3" "$tmp/out"; then ok "$1"; else
    echo "# expected status $2 and output matching: $3 (got status $st)"; bad "$1"; fi
}
# One line of error, "bp-run: ...", and status 1.
expect_error() {
  if [ "$st" -eq 1 ] && [ "$(wc -l < "$tmp/out")" -eq 1 ] && grep -q -- "^bp-run: .*$2" "$tmp/out"
  then ok "$1"; else echo "# expected one line matching: bp-run: .*$2 (status $st)"; bad "$1"; fi
}
bprun() { BP_PLUGIN_PATH= "$run" --no-discover -p "$cpu" "$@" > "$tmp/out" 2>&1; st=$?; }

# mknpy FILE DESCR SHAPE DATA [FORTRAN]: a format 1.0 .npy file whose data
# is given as printf octal escapes.
mknpy() {
  dict="{'descr': '$2', 'fortran_order': ${5:-False}, 'shape': $3, }"
  len=${#dict}
  hlen=$(( (10 + len + 1 + 63) / 64 * 64 - 10 ))
  { printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
    printf '%s' "$dict"
    printf "%$((hlen - len - 1))s\n" ''
    printf "$4"; } > "$1"
}
# float32 1, 2, 3, 4 and 2, 2, 2, 2, little-endian.
f1234='\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100'
f2222='\000\000\000\100\000\000\000\100\000\000\000\100\000\000\000\100'
mknpy "$tmp/a.npy" '<f4' '(4,)' "$f1234"
mknpy "$tmp/b.npy" '<f4' '(4,)' "$f2222"
mknpy "$tmp/m.npy" '<f4' '(2, 2)' "$f1234"
mknpy "$tmp/fm.npy" '<f4' '(2, 2)' "$f1234" True
mknpy "$tmp/be.npy" '>f4' '(2,)' '\077\200\000\000\100\000\000\000'
mknpy "$tmp/s3.npy" '<f4' '(3,)' '\000\000\200\077\000\000\000\100\000\000\100\100'
mknpy "$tmp/i.npy" '<i4' '(2,)' '\001\000\000\000\002\000\000\000'
mknpy "$tmp/h.npy" '<f2' '()' '\000\074'
mknpy "$tmp/c.npy" '<c8' '(1,)' '\000\000\000\000\000\000\000\000'
echo "not a tensor" > "$tmp/text.npy"
head -c 130 "$tmp/a.npy" > "$tmp/short.npy"

echo "1..32"
bprun core::muladd "$tmp/a.npy" "$tmp/b.npy" 2.5 -o "$tmp/out.npy"
if [ "$st" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -s "$tmp/out.npy" ]; then ok "muladd writes its result to out.npy, silently"
else bad "muladd writes its result to out.npy, silently"; fi
"$run" --show "$tmp/out.npy" > "$tmp/out" 2>&1; st=$?
expect "the result reads back as a*b+2.5" 0 '^  4.5 6.5 8.5 10.5$'
size=$(wc -c < "$tmp/out.npy")
if [ "$size" -eq 144 ] && head -c 80 "$tmp/out.npy" | grep -q "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
then ok "out.npy is a format 1.0 file with a 64-byte aligned header"
else echo "# size $size"; bad "out.npy is a format 1.0 file with a 64-byte aligned header"; fi
bprun --device cpu:0 core::muladd "$tmp/a.npy" "$tmp/b.npy" 2.5
expect "without -o the result is printed" 0 '^result 0: float32\[4\] cpu:0$'
"$run" --show "$tmp/fm.npy" > "$tmp/out" 2>&1; st=$?
expect "a Fortran-order file reads in C order" 0 '^  1 3 2 4$'
"$run" --show "$tmp/be.npy" > "$tmp/out" 2>&1; st=$?
expect "a big-endian file is byte-swapped" 0 '^  1 2$'
bprun core::add "$tmp/h.npy" "$tmp/h.npy"
expect "a 0-dim float16 tensor" 0 '^  2$'
bprun core::sum "$tmp/m.npy" dim=1
expect "keyword argument dim=1" 0 '^  3 7$'
bprun core::sum "$tmp/fm.npy" 0 keepdim=true
expect "positional and keyword arguments together, on a Fortran-order input" 0 'float32\[1, 2\]'
bprun core::gelu "$tmp/a.npy" approximate=tanh
expect "a str keyword argument" 0 '^  0.841'
bprun core::muladd "$tmp/a.npy" "$tmp/b.npy" 1 --repeat 3
expect "--repeat prints the timing" 0 '^timing: 3 calls, min [0-9.]* us, median [0-9.]* us, mean [0-9.]* us$'
bprun core::sum "$tmp/m.npy" 1 false float64
st=$((st - 1)) # a usage error: 2
expect_error "a keyword-only argument given by position is named" \
  "core::sum: argument #4 'dtype' is keyword-only: write dtype=float64 "
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpah=2
st=$((st - 1))
expect_error "a misspelt keyword is named" "core::add: no argument named 'alpah' "
bprun core::nope "$tmp/a.npy"
expect_error "an unknown op" "no op 'core::nope'"
bprun core::muladd "$tmp/text.npy" "$tmp/b.npy" 1
expect_error "a file that is not .npy" "text.npy: not a .npy file"
bprun core::muladd "$tmp/short.npy" "$tmp/b.npy" 1
expect_error "a truncated file" "short.npy: truncated data: expected 16 bytes, got 2"
bprun core::muladd "$tmp/c.npy" "$tmp/b.npy" 1
expect_error "a dtype Backplane lacks" "dtype '<c8' has no Backplane equivalent"
bprun core::softmax "$tmp/i.npy" 0
expect_error "a dtype the op refuses" "core::softmax: argument #0 'self': expected a floating-point dtype, got int32"
bprun core::muladd "$tmp/a.npy" "$tmp/s3.npy" 1
expect_error "shapes that do not broadcast" "cannot be broadcast"
bprun core::softmax "$tmp/a.npy" x
expect_error "a scalar that does not parse" "argument #2 'dim': expected an int, got 'x'"
bprun --device nodev core::softmax "$tmp/a.npy" 0
st=$((st - 1)) # a usage error: 2
expect_error "an unknown device" "no device type 'nodev'"
bprun --device cpu:x core::softmax "$tmp/a.npy" 0
st=$((st - 1))
expect_error "a device index that is not a number is named as such" \
  "--device: 'cpu:x' has no valid device index after the ':' (expected e.g. cpu:0)"
bprun core::muladd "$tmp/missing.npy" "$tmp/b.npy" 1
expect_error "a missing file" "missing.npy: cannot open: No such file or directory"
"$run" --write "$tmp/w.npy" int16 2,3 1,-2,3,-4,5,-6 > "$tmp/out" 2>&1 && "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1
st=$?
expect "--write makes a .npy file from text" 0 '^  1 -2 3 -4 5 -6$'
bprun core::mul "$tmp/w.npy" "$tmp/w.npy"
expect "a file from --write is an argument" 0 '^  1 4 9 16 25 36$'
# A usage error exits with 2; expect_error checks for 1.
"$run" --write "$tmp/w.npy" int8 2 1,300 > "$tmp/out" 2>&1
st=$(($? - 1))
expect_error "--write refuses a value out of range" "value #1 (300) is not a int8"

# Corrupt headers: refused with one line, before any large allocation.
show() { "$run" --show "$1" > "$tmp/out" 2>&1; st=$?; }
mknpy "$tmp/ov.npy" '<f4' '(1099511627776, 1099511627776, 1099511627776)' ''
show "$tmp/ov.npy"
expect_error "a shape whose element count overflows" \
  "ov.npy: the shape's element count overflows 64 bits (at dimension 1 of 3)"
mknpy "$tmp/ob.npy" '<f8' '(9223372036854775807,)' ''
show "$tmp/ob.npy"
expect_error "a shape whose byte size overflows" "ob.npy: the data's byte size overflows 64 bits"
mknpy "$tmp/lie.npy" '<f4' '(1000000000000,)' '\000\000\200\077'
show "$tmp/lie.npy"
expect_error "a shape larger than the file's data" \
  "lie.npy: truncated data: expected 4000000000000 bytes, got 4"
printf '\223NUMPY\002\000\377\377\377\177{}' > "$tmp/hl.npy"
show "$tmp/hl.npy"
expect_error "a header length larger than the file" \
  "hl.npy: truncated .npy header: it claims 2147483647 bytes, the file has 2 after the prefix"
mknpy "$tmp/ez.npy" '<f4' '(1099511627776, 1099511627776, 1099511627776, 0)' ''
show "$tmp/ez.npy"
expect "huge dimensions next to a zero one make an empty tensor" 0 \
  'float32\[1099511627776, 1099511627776, 1099511627776, 0\] cpu:0'

# Mutated headers: every one is read or refused with one line, and nothing
# crashes (the sanitizer build runs this too).  Each mutation puts a byte,
# often a token of the header's syntax, at a pseudo-random place in the
# first 128 bytes, or cuts the file there.
mknpy "$tmp/base.npy" '<f4' '(2, 2)' "$f1234"
bad_runs=0
read_ok=0
i=0
while [ $i -lt 300 ]; do
  i=$((i + 1))
  off=$(( (i * 7919 + i * i * 31) % 128 ))
  case $(( i % 5 )) in
    0) byte=$(( (i * 37) % 255 + 1 )) ;;
    *) tok="(),:{}'-9 0T1F<>|"; k=$(( (i * 13) % ${#tok} ))
       byte=$(printf '%s' "$tok" | cut -c $((k + 1)) | od -An -tu1 | tr -d ' ') ;;
  esac
  cp "$tmp/base.npy" "$tmp/mut.npy"
  if [ $(( i % 23 )) -eq 0 ]; then
    head -c "$off" "$tmp/base.npy" > "$tmp/mut.npy"
  else
    printf "\\$(printf %03o "$byte")" | dd of="$tmp/mut.npy" bs=1 seek="$off" conv=notrunc 2> /dev/null
  fi
  "$run" --show "$tmp/mut.npy" > "$tmp/out" 2>&1; st=$?
  [ $st -eq 0 ] && read_ok=$((read_ok + 1))
  if [ $st -gt 1 ] || grep -q -e 'runtime error' -e 'Sanitizer' "$tmp/out" ||
     { [ $st -eq 1 ] && [ "$(wc -l < "$tmp/out")" -ne 1 ]; }; then
    bad_runs=$((bad_runs + 1))
    [ $bad_runs -le 3 ] && { echo "# mutation $i (byte $byte at $off): status $st"; sed 's/^/#   /' "$tmp/out" | head -5; }
  fi
done
echo "# $read_ok of the 300 mutated files were read, the others refused"
echo "all good" > "$tmp/out"
if [ $bad_runs -eq 0 ]; then ok "300 mutated headers are each read or refused with one line"
else bad "300 mutated headers are each read or refused with one line ($bad_runs were not)"; fi
exit $fail
