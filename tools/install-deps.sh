#!/bin/sh
# Installs what building and testing Backplane needs on Debian (12 or
# later): the Python package is built for Debian's python3 (python3-dev),
# and its tests use numpy and torch; the certifier's tests make a locale
# with a decimal comma from the locales package's sources.
#
# When every package is already installed it says so and exits 0, as any
# user.  Otherwise it installs the missing ones with apt-get: as root
# directly, else through sudo when sudo exists; a user with neither gets
# the exact command to run as root, and exit status 1.
#
#   tools/install-deps.sh [--check]
#     --check   only say what is missing (exit 1 if anything is)
#
# BP_DEPS_DPKG_QUERY and BP_DEPS_SUDO replace dpkg-query and sudo (for
# tests/test-install-deps.sh); BP_DEPS_UID replaces `id -u`.
set -e
packages="build-essential autoconf automake libtool pkg-config \
  libffi-dev libdlpack-dev libopenblas-dev abigail-tools valgrind \
  python3-dev python3-numpy python3-torch python3-pip python3-setuptools \
  python3-wheel locales"
check_only=no
case ${1-} in
  "") ;;
  --check) check_only=yes ;;
  *) echo "usage: tools/install-deps.sh [--check]" >&2; exit 2 ;;
esac

dpkg_query=${BP_DEPS_DPKG_QUERY:-dpkg-query}
missing=
for p in $packages; do
  status=$($dpkg_query -W -f='${db:Status-Abbrev}' "$p" 2> /dev/null || true)
  case $status in
    ii*) ;;
    *) missing="$missing $p" ;;
  esac
done
missing=${missing# }
if [ -z "$missing" ]; then
  echo "install-deps: every build and test dependency is installed"
  exit 0
fi
command="apt-get update && apt-get install -y --no-install-recommends $missing"
if [ "$check_only" = yes ]; then
  echo "install-deps: missing: $missing" >&2
  echo "install-deps: to install them, run as root: $command" >&2
  exit 1
fi

uid=${BP_DEPS_UID:-$(id -u)}
if [ "$uid" -ne 0 ]; then
  sudo=${BP_DEPS_SUDO:-sudo}
  if command -v "$sudo" > /dev/null 2>&1; then
    echo "install-deps: installing$(printf ' %s' $missing) through $sudo"
    exec "$sudo" "$0" "$@"
  fi
  echo "install-deps: missing: $missing" >&2
  echo "install-deps: you are not root and there is no sudo: run this as root, then run this script again:" >&2
  echo "  $command" >&2
  exit 1
fi
echo "install-deps: installing $missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
