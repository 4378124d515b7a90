#!/bin/sh
# BP_PLUGIN_PATH is ignored when the process runs with elevated privileges:
# a setuid copy of discover-probe must load nothing from it, while a plain
# copy loads the good plugin.  Needs root (to make a setuid binary owned by
# another user); otherwise it skips.
top_builddir=${top_builddir:-.}
probe="$top_builddir/tests/discover-probe"
plugin="$top_builddir/tests/plugins/.libs/good.so"
if [ "$(id -u)" -ne 0 ]; then
  echo "1..0 # SKIP needs root to create a setuid test program"
  exit 0
fi
if ! id nobody >/dev/null 2>&1; then
  echo "1..0 # SKIP no 'nobody' user to own the setuid program"
  exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/plugins"
cp "$plugin" "$tmp/plugins/good.so"
cp "$probe" "$tmp/probe"
cp "$probe" "$tmp/probe-suid"
chown nobody "$tmp/probe-suid" && chmod 4755 "$tmp/probe-suid"
echo "1..2"
plain=$(BP_PLUGIN_PATH="$tmp/plugins" "$tmp/probe" 2>&1)
if [ "$plain" = "1" ]; then
  echo "ok 1 - a normal process loads plugins from BP_PLUGIN_PATH"
else
  echo "not ok 1 - a normal process loads plugins from BP_PLUGIN_PATH"
  echo "# got: $plain (expected 1)"
fi
suid=$(BP_PLUGIN_PATH="$tmp/plugins" "$tmp/probe-suid" 2>&1)
if [ "$suid" = "0" ]; then
  echo "ok 2 - a setuid process ignores BP_PLUGIN_PATH"
else
  echo "not ok 2 - a setuid process ignores BP_PLUGIN_PATH"
  echo "# got: $suid (expected 0)"
fi
