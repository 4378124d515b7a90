#!/usr/bin/env bash
# The README's Quick start, its two commands exactly as written, run the
# three ways users meet it, each in a fresh clone of this repository:
#
#   other-python   as root, with another python3 first in PATH: pyenv's
#                  where the machine has one, else a venv's (made here,
#                  without pip), neither of which can import numpy;
#   debian-python  as root, with a fresh Debian machine's PATH, where
#                  /usr/bin/python3 is the only python3 (and there is no
#                  CUDA Toolkit);
#   user           as a user without root (made here with useradd), with
#                  that PATH and the prefix the README gives such a user.
#
#   .ci/readme-ways.sh DIR [WAY...]
#
# Each way's clone is DIR/WAY (the user's: its home).  After the two
# commands it checks what a user would try next: the installed bp-info,
# bp-run and bp-certify start at once from PATH (no ldconfig, no
# LD_LIBRARY_PATH), the interpreter configure chose imports the installed
# package from another directory, and configure said which interpreter it
# chose and why.  Runs as root (it installs into /usr/local and adds a
# user).  Exit status 1 at the first failure, with the log's tail.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
top=${1:?usage: .ci/readme-ways.sh DIR [WAY...]}
shift
ways=${*:-other-python debian-python user}
mkdir -p "$top"
top=$(cd "$top" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "readme-ways: run as root" >&2; exit 2; }

# The Quick start's two commands, as the README has them.
quick=$(awk '/^## Quick start/ { q = 1 } q && /^```sh/ { on = 1; next } on && /^```/ { exit } on' \
  "$src/README.md")
first=$(printf '%s\n' "$quick" | sed -n 1p)
second=$(printf '%s\n' "$quick" | sed -n 2p)
case $second in
  "make check" | 'make -j"$(nproc)" check') ok=yes ;;
  *) ok=no ;;
esac
[ -n "$first" ] && [ "$ok" = yes ] || {
  echo "readme-ways: the Quick start is not two commands ending in make check:" >&2
  printf '%s\n' "$quick" >&2
  exit 1
}

# A compiler cache for the three builds of the same sources and flags,
# when ccache is installed: the commands stay as written, only gcc is
# found through ccache's directory first in PATH.
cache_path=
if [ -d /usr/lib/ccache ]; then
  # The clones lie in different directories: paths are hashed relative to
  # the directory make runs in, so the same file compiles to a hit in each.
  export CCACHE_DIR="$top/ccache" CCACHE_UMASK=000 CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=1
  mkdir -p "$CCACHE_DIR"
  chmod 1777 "$CCACHE_DIR"
  cache_path=/usr/lib/ccache:
fi

# A fresh Debian machine's PATH (root's; a user's has no sbin, which does
# not matter here).
debian_path() { echo /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; }

fail() { # fail WHAT LOG
  echo "readme-ways: $way: $1" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 60 "$2" >&2
  # last, each failing test point with the reason lines after it
  [ -n "${2:-}" ] && [ -f "$2" ] && grep -A24 '^not ok' "$2" | grep -v '^ok ' | head -150 >&2
  exit 1
}

# The interpreter configure chose, from the build's Makefile.
chosen() { sed -n 's/^PYTHON = //p' "$1/Makefile"; }

# installed_tools_start BINDIR: the installed tools run from a directory
# away from the tree, with nothing in the environment to help them.
installed_tools_start() {
  (cd / && env -u LD_LIBRARY_PATH "$1/bp-info" --no-discover > /dev/null &&
     env -u LD_LIBRARY_PATH "$1/bp-run" --help > /dev/null &&
     env -u LD_LIBRARY_PATH "$1/bp-certify" --help > /dev/null)
}

clone() { # clone DIR
  rm -rf "$1"
  git clone -q "$src" "$1"
}

for way in $ways; do
  echo "=== README, $way ==="
  start=$(date +%s)
  case $way in
    other-python)
      dir=$top/$way
      clone "$dir"
      path=$PATH
      other=$(PATH=$path command -v python3 || true)
      if [ -z "$other" ] || [ "$(readlink -f "$other")" = "$(readlink -f /usr/bin/python3)" ]; then
        # No other interpreter ahead of Debian's: a venv's, without pip.
        /usr/bin/python3 -m venv --without-pip "$top/venv"
        path=$top/venv/bin:$PATH
        other=$top/venv/bin/python3
      fi
      if PATH=$path python3 -c 'import numpy' 2> /dev/null; then
        fail "the python3 first in PATH ($other) can import numpy: nothing to show"
      fi
      (cd "$dir" && PATH=$cache_path$path bash -c "$first") > "$dir/first.log" 2>&1 ||
        fail "the first command failed" "$dir/first.log"
      (cd "$dir" && PATH=$cache_path$path bash -c "$second") > "$dir/second.log" 2>&1 ||
        fail "make check failed" "$dir/test-suite.log"
      py=$(chosen "$dir")
      "$py" -c 'import numpy' 2> /dev/null ||
        fail "configure chose $py, which cannot import numpy" "$dir/first.log"
      grep -q "WARNING: the Python package is built for $py, the first one in PATH that can import numpy; the first python3 in PATH is $other, which cannot import numpy" "$dir/first.log" ||
        fail "configure did not warn that it chose $py over $other" "$dir/first.log"
      installed_tools_start /usr/local/bin || fail "the installed tools do not start" "$dir/first.log"
      (cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH "$py" -c 'import backplane, sys
sys.exit(0 if backplane._backplane.__file__.startswith("/usr/local/") else 1)') ||
        fail "$py does not import the installed package" "$dir/first.log"
      ;;
    debian-python)
      dir=$top/$way
      clone "$dir"
      path=$(debian_path)
      (cd "$dir" && PATH=$cache_path$path bash -c "$first") > "$dir/first.log" 2>&1 ||
        fail "the first command failed" "$dir/first.log"
      (cd "$dir" && PATH=$cache_path$path bash -c "$second") > "$dir/second.log" 2>&1 ||
        fail "make check failed" "$dir/test-suite.log"
      [ "$(chosen "$dir")" = /usr/bin/python3 ] || fail "configure chose $(chosen "$dir")" "$dir/first.log"
      # (configure may warn of other things on this machine, such as a CUDA
      # Toolkit without its headers; no warning may be about Python.)
      ! grep -q "WARNING: .*[Pp]ython" "$dir/first.log" || fail "configure warned about Python" "$dir/first.log"
      installed_tools_start /usr/local/bin || fail "the installed tools do not start" "$dir/first.log"
      (cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH PATH="$path" python3 -c 'import backplane') ||
        fail "python3 does not import the installed package" "$dir/first.log"
      ;;
    user)
      user=bp-readme
      id "$user" > /dev/null 2>&1 || useradd -m -s /bin/bash "$user"
      home=$(getent passwd "$user" | cut -d: -f6)
      dir=$home/backplane
      rm -rf "$dir" "$home/.local"
      runuser -u "$user" -- git clone -q "$src" "$dir" 2> /dev/null ||
        { clone "$dir" && chown -R "$user:" "$dir"; }
      # The README: "as another user, configure with --prefix="$HOME/.local"".
      userfirst=${first/.\/configure/./configure --prefix=\"\$HOME/.local\"}
      [ "$userfirst" != "$first" ] || fail "the first command has no ./configure to give a prefix"
      path=$(debian_path)
      run_user() { runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
                     PATH="$cache_path$path" CCACHE_DIR="${CCACHE_DIR:-}" CCACHE_UMASK=000 \
                     CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=1 \
                     bash -c "cd ~/backplane && $1"; }
      run_user "$userfirst" > "$top/user-first.log" 2>&1 ||
        fail "the first command failed" "$top/user-first.log"
      run_user "$second" > "$top/user-second.log" 2>&1 ||
        fail "make check failed" "$dir/test-suite.log"
      runuser -u "$user" -- env -i HOME="$home" PATH="$path" bash -c '
        cd / && "$HOME/.local/bin/bp-info" --no-discover > /dev/null &&
        "$HOME/.local/bin/bp-run" --help > /dev/null &&
        "$HOME/.local/bin/bp-certify" --help > /dev/null &&
        python3 -c "import backplane, os, sys
sys.exit(0 if backplane._backplane.__file__.startswith(os.path.expanduser(\"~/.local/\")) else 1)"' ||
        fail "the tools or the package installed under ~/.local do not work" "$top/user-first.log"
      ;;
    *)
      echo "readme-ways: unknown way '$way' (other-python, debian-python, user)" >&2
      exit 2 ;;
  esac
  echo "README, $way: both commands passed, the installed tools and package work ($(( $(date +%s) - start )) s)"
done
