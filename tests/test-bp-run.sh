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
# One line of error, "bp-run: ...", and status 1 (a failure).
expect_error() {
  if [ "$st" -eq 1 ] && [ "$(wc -l < "$tmp/out")" -eq 1 ] && grep -q -- "^bp-run: .*$2" "$tmp/out"
  then ok "$1"; else echo "# expected one line matching: bp-run: .*$2 (status $st)"; bad "$1"; fi
}
# The same with status 2 (the command line is wrong).
expect_usage() { st=$((st - 1)); expect_error "$@"; }
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
"$run" --write "$tmp/big.npy" float32 2 70000,-70000 > /dev/null 2>&1
bprun core::sum "$tmp/big.npy" dtype=float16
expect "sum(dtype=) converts each element first, as torch does: float16 inf - inf is NaN" 0 '^  -\{0,1\}nan$'
bprun core::sum "$tmp/m.npy" 1 false float64
expect_usage "a keyword-only argument given by position is named" \
  "core::sum: argument #3 'dtype' is keyword-only: write dtype=float64 "
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpah=2
expect_usage "a misspelt keyword is named" "core::add: no argument named 'alpah' "
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
expect_usage "a scalar that does not parse" "argument #1 'dim': expected an int, got 'x'"
bprun --device nodev core::softmax "$tmp/a.npy" 0
expect_usage "an unknown device" "no device type 'nodev'"
bprun --device cpu:x core::softmax "$tmp/a.npy" 0
expect_usage "a device index that is not a number is named as such" \
  "--device: 'cpu:x' has no valid device index after the ':' (expected e.g. cpu:0)"
bprun core::muladd "$tmp/missing.npy" "$tmp/b.npy" 1
expect_error "a missing file" "missing.npy: cannot open: No such file or directory"
"$run" --write "$tmp/w.npy" int16 2,3 1,-2,3,-4,5,-6 > "$tmp/out" 2>&1 && "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1
st=$?
expect "--write makes a .npy file from text" 0 '^  1 -2 3 -4 5 -6$'
bprun core::mul "$tmp/w.npy" "$tmp/w.npy"
expect "a file from --write is an argument" 0 '^  1 4 9 16 25 36$'
"$run" --write "$tmp/w.npy" int8 2 1,300 > "$tmp/out" 2>&1; st=$?
expect_usage "--write refuses a value out of range" "value #1 (300) is not an int8 (an integer from -128 to 127)"

# Exit status 2 for every command line that is wrong, found before any
# call; 1 for a call that fails.
bprun core::relu "$tmp/a.npy" "$tmp/b.npy"
expect_usage "too many positional arguments" \
  "core::relu: too many positional arguments: 2 given, it takes 1 (schema: core::relu(Tensor self) -> Tensor)"
bprun core::muladd "$tmp/a.npy" "$tmp/b.npy"
expect_usage "too few positional arguments" "core::muladd: argument #2 'c' is missing (schema: "
bprun core::add.out "$tmp/a.npy" "$tmp/b.npy"
expect_usage "a required keyword-only argument left out" "core::add.out: argument #3 'out' is missing"
bprun core::sum "$tmp/m.npy" foo=1
expect_usage "an unknown keyword where a positional argument could go" \
  "core::sum: no argument named 'foo' (schema: "
bprun core::sum "$tmp/m.npy" dim=1 dim=0
expect_usage "a keyword given twice" "core::sum: argument #1 'dim' is given twice"
bprun core::sum "$tmp/m.npy" 1 dim=0
expect_usage "a keyword that repeats a positional argument" "core::sum: argument #1 'dim' is given twice"
bprun -x core::relu "$tmp/a.npy"
if [ "$st" -eq 2 ] && grep -q "^bp-run: unknown option '-x'$" "$tmp/out" && grep -q "^usage: bp-run" "$tmp/out"
then ok "an unknown short option is a usage error"; else bad "an unknown short option is a usage error"; fi
bprun core::relu "$tmp/missing.npy" --bogus
if [ "$st" -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/out"
then ok "an unknown long option is a usage error"; else bad "an unknown long option is a usage error"; fi
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha=-1
expect "a negative value is not an option" 0 '^  -1 0 1 2$'
"$run" --help > "$tmp/out" 2>&1; st=$?
expect "--help documents the exit status" 0 "1 when the call or a file failed, 2 when"
bprun core::softmax "$tmp/i.npy" 0
expect_error "a call that fails exits with 1" "core::softmax: argument #0 'self'"

# Floats take what strtod and Python's float() take, less hex and spaces:
# nan and inf in any case, with a sign; underflow is fine, an overflowing
# literal is not.
for v in 0x1p3 0x10 ' 1' '1 ' 1e 1.2.3 nanx infinit in ++1 -+1 '' .; do
  bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha="$v"
  expect_usage "float alpha='$v' is refused" "argument #2 'alpha': expected a float, got '$v'"
done
"$run" --write "$tmp/f.npy" float32 4 1,2,3,4 > /dev/null 2>&1
for v in nan NaN +nan NAN; do
  bprun core::fill_ "$tmp/f.npy" "$v"
  expect "core::fill_ takes the value '$v'" 0 '^  nan nan nan nan$'
done
bprun core::fill_ "$tmp/f.npy" -nan
expect "core::fill_ takes the value '-nan' (a NaN with its sign bit set)" 0 '^  -nan -nan -nan -nan$'
for v in inf Inf +inf infinity INFINITY; do
  bprun core::fill_ "$tmp/f.npy" "$v"
  expect "core::fill_ takes the value '$v'" 0 '^  inf inf inf inf$'
done
for v in -inf -Infinity; do
  bprun core::fill_ "$tmp/f.npy" "$v"
  expect "core::fill_ takes the value '$v'" 0 '^  -inf -inf -inf -inf$'
done
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha=+1.5
expect "a float with a '+' sign" 0 '^  4 5 6 7$'
"$run" --write "$tmp/w.npy" float32 3 'inf,-inf,nan' > "$tmp/out" 2>&1 &&
  "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1; st=$?
expect "--write takes inf, -inf and nan for float32" 0 '^  inf -inf nan$'
for v in 0x1 +1 ' 1' 1.0 9223372036854775808; do
  bprun core::softmax "$tmp/a.npy" "$v"
  expect_usage "int dim='$v' is refused" "argument #1 'dim': expected an int, got '$v'"
done
grep -q "9223372036854775808' (out of range)" "$tmp/out" && ok "an int past int64 says it is out of range" ||
  bad "an int past int64 says it is out of range"
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha=1e-400
expect "a float that underflows reads as zero" 0 '^  1 2 3 4$'
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha=-.5e-1
expect "a float with no leading digit and an exponent" 0 '^  0.899999976 1.89999998 2.9000001 3.9000001$'
bprun core::add "$tmp/a.npy" "$tmp/b.npy" alpha=1e400
expect_usage "a float that overflows is refused" "expected a float, got '1e400' (out of range)"

# A Scalar argument (tests/plugins/sig.c's kinds, which says the kind of
# each of its four Scalars: 1 int, 2 float, 3 bool, 0 None) is a number as
# written, or true or false.
sig="$top_builddir/tests/plugins/.libs/sig.so"
bpsig() { BP_PLUGIN_PATH= "$run" --no-discover -p "$sig" "$@" > "$tmp/out" 2>&1; st=$?; }
bpsig sig::kinds 2 0.5 true
expect "Scalar arguments: 2 is an int, 0.5 a float, true a bool" 0 ': int 1232$'
bpsig sig::kinds -1 nan c=7 d=1e3
expect "Scalar arguments: -1, nan, a keyword int and 1e3 (a float)" 0 ': int 1212$'
bpsig sig::kinds 1 x
expect_usage "a Scalar that is no number is refused" "argument #1 'b': expected a number, true or false, got 'x'"

# Lists with spaces around items and brackets.
bprun core::sum "$tmp/m.npy" '[0, 1 ]'
expect "a list with a space before ']'" 0 '^  10$'
bprun core::sum "$tmp/m.npy" ' [1] ' keepdim=true
expect "a list with spaces around its brackets" 0 '^  3 7$'
bprun core::sum "$tmp/m.npy" ' 0 , 1 '
expect "a list without brackets, with spaces" 0 '^  10$'
bprun core::sum "$tmp/m.npy" '[0,,1]'
expect_usage "a list with an empty item" "expected a list of ints, like 0,1, got '\[0,,1\]'"

# -o: refused up front when there are more than the op's Tensor results,
# or when one file is named twice; nothing is written.
bprun core::add "$tmp/a.npy" "$tmp/b.npy" -o "$tmp/o1.npy" -o "$tmp/o2.npy"
expect_usage "two -o files for one Tensor result" \
  "2 output files given (-o), but core::add returns 1 tensor (schema: "
if [ ! -e "$tmp/o1.npy" ] && [ ! -e "$tmp/o2.npy" ]; then ok "no -o file was written"
else bad "no -o file was written"; fi
bprun core::relu "$tmp/a.npy" -o "$tmp/o1.npy" -o "$tmp/o1.npy"
expect_usage "one -o file named twice" "-o $tmp/o1.npy is given twice"
bprun core::relu "$tmp/missing.npy" -o "$tmp/o1.npy" -o "$tmp/o2.npy"
expect_usage "-o is checked before any input is read" "2 output files given (-o), but core::relu returns 1 tensor"

# --write: values are checked against the dtype; int64 is exact.
"$run" --write "$tmp/w.npy" float32 2 1,1e39 > "$tmp/out" 2>&1; st=$?
expect_usage "--write refuses a float32 that would be infinite" \
  "value #1 (1e39) is out of range for float32 (the largest finite float32 is 3.40282347e+38)"
"$run" --write "$tmp/w.npy" float32 2 '1e-50, 3.4028235e38' > "$tmp/out" 2>&1 &&
  "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1; st=$?
expect "--write takes a float32 that underflows and one near the largest" 0 '^  0 3.40282347e+38$'
"$run" --write "$tmp/w.npy" int64 3 '9007199254740993, 9223372036854775807,-9223372036854775808' \
  > "$tmp/out" 2>&1 && "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1; st=$?
expect "--write keeps every bit of an int64" 0 '^  9007199254740993 9223372036854775807 -9223372036854775808$'
"$run" --write "$tmp/w.npy" int64 1 9223372036854775808 > "$tmp/out" 2>&1; st=$?
expect_usage "--write refuses an int past int64" "value #0 (9223372036854775808) is not an int64"
"$run" --write "$tmp/w.npy" int32 1 2.5 > "$tmp/out" 2>&1; st=$?
expect_usage "--write refuses a fraction for an int dtype" "value #0 (2.5) is not an int32"
"$run" --write "$tmp/w.npy" uint8 '[2, 2 ]' ' [1,2, 3 ,255] ' > "$tmp/out" 2>&1 &&
  "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1; st=$?
expect "--write takes lists with spaces" 0 '^  1 2 3 255$'
"$run" --write "$tmp/w.npy" bool 3 'true,0,1' > "$tmp/out" 2>&1 &&
  "$run" --show "$tmp/w.npy" > "$tmp/out" 2>&1; st=$?
expect "--write takes bools as true, 0 and 1" 0 '^  true false true$'
"$run" --write "$tmp/w.npy" float32 1 1,2 > "$tmp/out" 2>&1; st=$?
expect_usage "--write counts in good English" "the sizes give 1 element, but 2 values were given"
"$run" --write "$tmp/w.npy" float32 2 1 > "$tmp/out" 2>&1; st=$?
expect_usage "--write counts one value in good English" "the sizes give 2 elements, but 1 value was given"

# A file cut short is called truncated, with the sizes, wherever it ends.
head -c 7 "$tmp/a.npy" > "$tmp/cut.npy"
bprun core::relu "$tmp/cut.npy"
expect_error "a file cut inside the prefix is truncated" \
  "cut.npy: truncated .npy file: the format's prefix is 10 bytes, the file has 7$"
: > "$tmp/cut.npy"
bprun core::relu "$tmp/cut.npy"
expect_error "an empty file is truncated" "the format's prefix is 10 bytes, the file has 0$"
head -c 40 "$tmp/a.npy" > "$tmp/cut.npy"
bprun core::relu "$tmp/cut.npy"
expect_error "a file cut inside the header is truncated" \
  "cut.npy: truncated .npy header: it claims 118 bytes, the file has 30 after the prefix$"

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
# first 128 bytes, or cuts the file there.  The reader itself is mutated
# byte by byte in-process by tests/test-npy; here a few files check the
# command's one-line rule, and make check-long (BP_TEST_TIER=long) runs
# 300.
# The fast tier's six of the 300: two cuts, one arbitrary byte and three
# syntax tokens.
picks="46 69 10 7 12 33"
[ "${BP_TEST_TIER:-fast}" = long ] && picks=$(seq 1 300)
mutations=$(echo $picks | wc -w | tr -d " ")
mknpy "$tmp/base.npy" '<f4' '(2, 2)' "$f1234"
bad_runs=0
read_ok=0
for k in $picks; do
  off=$(( (k * 7919 + k * k * 31) % 128 ))
  case $(( k % 5 )) in
    0) byte=$(( (k * 37) % 255 + 1 )) ;;
    *) tok="(),:{}'-9 0T1F<>|"; t=$(( (k * 13) % ${#tok} ))
       byte=$(printf '%s' "$tok" | cut -c $((t + 1)) | od -An -tu1 | tr -d ' ') ;;
  esac
  cp "$tmp/base.npy" "$tmp/mut.npy"
  if [ $(( k % 23 )) -eq 0 ]; then
    head -c "$off" "$tmp/base.npy" > "$tmp/mut.npy"
  else
    printf "\\$(printf %03o "$byte")" | dd of="$tmp/mut.npy" bs=1 seek="$off" conv=notrunc 2> /dev/null
  fi
  "$run" --show "$tmp/mut.npy" > "$tmp/out" 2>&1; st=$?
  [ $st -eq 0 ] && read_ok=$((read_ok + 1))
  if [ $st -gt 1 ] || grep -q -e 'runtime error' -e 'Sanitizer' "$tmp/out" ||
     { [ $st -eq 1 ] && [ "$(wc -l < "$tmp/out")" -ne 1 ]; }; then
    bad_runs=$((bad_runs + 1))
    [ $bad_runs -le 3 ] && { echo "# mutation $k (byte $byte at $off): status $st"; sed 's/^/#   /' "$tmp/out" | head -5; }
  fi
done
echo "# $read_ok of the $mutations mutated files were read, the others refused"
echo "all good" > "$tmp/out"
if [ $bad_runs -eq 0 ]; then ok "$mutations mutated headers are each read or refused with one line"
else bad "$mutations mutated headers are each read or refused with one line ($bad_runs were not)"; fi
echo "1..$n"
exit $fail
