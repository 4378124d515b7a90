#!/bin/sh
# make check-long: ../test-faulty-confirm.sh with BP_TEST_TIER=long (each
# data race's trigger tried until it shows, with its catch rate).
BP_TEST_TIER=long
export BP_TEST_TIER
exec "${SHELL:-/bin/sh}" "$(dirname "$0")/../test-faulty-confirm.sh" "$@"
