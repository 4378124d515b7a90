#!/bin/sh
# Installs what building and testing Backplane needs on Debian (12 or
# later): the Python package is built for Debian's python3 (python3-dev),
# and its tests use numpy and torch.  Run as root, or through sudo.
set -e
packages="build-essential autoconf automake libtool pkg-config \
  libffi-dev libdlpack-dev libopenblas-dev abigail-tools valgrind \
  python3-dev python3-numpy python3-torch"
if [ "$(id -u)" -ne 0 ]; then
  exec sudo "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $packages
