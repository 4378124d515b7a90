#!/bin/sh
# tools/install-deps.sh works for every user: with every package
# installed it exits 0 without root and without sudo; with one missing it
# installs through sudo when that exists, and otherwise names the exact
# command to run as root and exits 1.  dpkg-query, sudo and the user id
# are stand-ins here (BP_DEPS_DPKG_QUERY, BP_DEPS_SUDO, BP_DEPS_UID); the
# real script runs as written in CI, as root and as a user without sudo.
top_srcdir=${top_srcdir:-.}
script="$top_srcdir/tools/install-deps.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
result() { # result STATUS DESCRIPTION
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    sed 's/^/#   /' "$tmp/out" | head -20
    fail=1
  fi
}
# A dpkg-query that knows every package as installed, except those in
# $tmp/missing.
cat > "$tmp/dpkg-query" <<EOF
#!/bin/sh
for p; do :; done
if grep -qx "\$p" "$tmp/missing" 2> /dev/null; then
  printf 'un '
  exit 1
fi
printf 'ii '
EOF
# A sudo that records how it was called instead of running anything.
cat > "$tmp/sudo" <<EOF
#!/bin/sh
echo "sudo \$*" > "$tmp/sudo-called"
EOF
chmod +x "$tmp/dpkg-query" "$tmp/sudo"
deps() { # deps UID SUDO [ARGS]: the script with the stand-ins
  uid=$1 sudo=$2
  shift 2
  BP_DEPS_DPKG_QUERY="$tmp/dpkg-query" BP_DEPS_UID=$uid BP_DEPS_SUDO=$sudo \
    sh "$script" "$@" > "$tmp/out" 2>&1
}

: > "$tmp/missing"
deps 1000 "$tmp/no-such-sudo"; st=$?
[ $st -eq 0 ] && grep -q "every build and test dependency is installed" "$tmp/out"
result $? "all installed: a user without root or sudo gets exit 0"
deps 1000 "$tmp/no-such-sudo" --check; st=$?
[ $st -eq 0 ]
result $? "all installed: --check exits 0"

echo python3-torch > "$tmp/missing"
deps 1000 "$tmp/no-such-sudo"; st=$?
[ $st -eq 1 ] &&
  grep -q "not root and there is no sudo" "$tmp/out" &&
  grep -qx "  apt-get update && apt-get install -y --no-install-recommends python3-torch" "$tmp/out"
result $? "one missing, no root, no sudo: exit 1 and the exact command to run as root"
rm -f "$tmp/sudo-called"
deps 1000 "$tmp/sudo"; st=$?
[ $st -eq 0 ] && grep -q "^sudo .*install-deps.sh$" "$tmp/sudo-called" 2> /dev/null
result $? "one missing, no root, sudo present: the script runs itself through sudo"
deps 1000 "$tmp/sudo" --check; st=$?
[ $st -eq 1 ] && grep -q "missing: python3-torch" "$tmp/out"
result $? "one missing: --check names it and exits 1"
deps 1000 "$tmp/sudo" --bogus; st=$?
[ $st -eq 2 ] && grep -q "usage:" "$tmp/out"
result $? "an unknown option is a usage error (exit 2)"

# This machine as it is: the check alone, which needs no root.
if command -v dpkg-query > /dev/null 2>&1; then
  sh "$script" --check > "$tmp/out" 2>&1; st=$?
  [ $st -eq 0 ] || grep -q "to install them, run as root: apt-get update && apt-get install" "$tmp/out"
  result $? "on this machine, --check exits 0 or names the command (status $st)"
else
  n=$((n + 1)); echo "ok $n - on this machine, --check # SKIP no dpkg-query: not a Debian machine"
fi
echo "1..$n"
exit $fail
