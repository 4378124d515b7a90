#!/bin/sh
# Installs what building and testing Backplane needs on Debian (12 or
# later).  Run as root, or through sudo.
set -e
packages="build-essential autoconf automake libtool pkg-config \
  libffi-dev libdlpack-dev libopenblas-dev abigail-tools valgrind"
if [ "$(id -u)" -ne 0 ]; then
  exec sudo "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $packages
