#!/bin/sh
# No Python test errors where an optional dependency is missing: every
# test of the package is run through tests/python/run.sh by an
# interpreter that cannot import numpy or torch (the configured one with
# its site directories off, python -S, as a python3 that PATH puts first
# can be: pyenv's or a venv's), and each one either passes or skips with
# "1..0 # SKIP <module> is not importable by <python>"; none dies with a
# missing plan or an ImportError.
top_srcdir=${top_srcdir:-.}
if [ -z "$BP_PYTHON" ]; then
  echo "1..0 # SKIP Python support not configured (configure --with-python)"
  exit 0
fi
case ${BP_SANITIZER:-no} in
  no) ;;
  *) echo "1..0 # SKIP under the $BP_SANITIZER sanitizer (the interpreter here is a shell wrapper, which cannot take the preloaded runtime)"
     exit 0 ;;
esac
src=$(cd "$top_srcdir" && pwd) || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$BP_PYTHON" > "$tmp/python3"
chmod +x "$tmp/python3"
if "$tmp/python3" -c 'import numpy' > /dev/null 2>&1; then
  echo "1..0 # SKIP $BP_PYTHON -S still imports numpy (it is not in a site directory)"
  exit 0
fi
real=$("$tmp/python3" -c 'import sys; print(sys.executable)')

n=0
fail=0
result() { # result STATUS DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    [ -n "$3" ] && sed 's/^/#   /' "$3" | tail -n 15
    fail=1
  fi
}
for t in "$src"/tests/python/test-*.py; do
  name=${t##*/}
  BP_PYTHON="$tmp/python3" "${SHELL:-/bin/sh}" "$src/tests/python/run.sh" "$t" > "$tmp/out" 2>&1
  st=$?
  plan=$(grep -E '^1\.\.[0-9]+' "$tmp/out" | head -n 1)
  case $plan in
    "1..0 # SKIP "*)
      # A whole-file skip must name the module and the interpreter.
      echo "$plan" | grep -Eq "^1\\.\\.0 # SKIP [a-z]+ is not importable by $real\$"
      result $? "$name without numpy or torch: skips the file (${plan#1..0 \# SKIP })" "$tmp/out" ;;
    1..*)
      [ $st -eq 0 ] && ! grep -q '^not ok' "$tmp/out" && ! grep -q '^Traceback' "$tmp/out"
      result $? "$name without numpy or torch: runs and passes ($plan)" "$tmp/out" ;;
    *)
      result 1 "$name without numpy or torch: prints a plan (status $st)" "$tmp/out" ;;
  esac
done
echo "1..$n"
exit $fail
