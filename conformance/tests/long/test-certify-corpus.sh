#!/bin/sh
# make check-long: ../test-certify-corpus.sh with BP_TEST_TIER=long (the long tier's cases
# are described there).
BP_TEST_TIER=long
export BP_TEST_TIER
exec "${SHELL:-/bin/sh}" "$(dirname "$0")/../test-certify-corpus.sh" "$@"
