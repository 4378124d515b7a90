#!/bin/sh
# A plugin built against the frozen ABI 1.0 headers (abi/compat_1_0.so)
# certifies on today's host with bp-certify, in both profiles.
top_builddir=${top_builddir:-.}
plugin="$top_builddir/abi/.libs/compat_1_0.so"
certify="$top_builddir/conformance/bp-certify"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..2"
fail=0
n=0
for profile in core full; do
  n=$((n + 1))
  "$certify" "$plugin" --profile "$profile" --jobs 2 > "$tmp/$profile.tap" 2>&1
  st=$?
  if [ $st -eq 0 ] && grep -q "^# [0-9]* passed, 0 failed.*: conforms" "$tmp/$profile.tap"; then
    echo "ok $n - compat_1_0.so (ABI 1.0 headers) conforms on this host, --profile $profile"
  else
    echo "not ok $n - compat_1_0.so (ABI 1.0 headers) conforms on this host, --profile $profile (exit $st)"
    grep -v '^ok' "$tmp/$profile.tap" | sed 's/^/# /'
    fail=1
  fi
done
exit $fail
