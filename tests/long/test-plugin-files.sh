#!/bin/sh
# make check-long: ../test-plugin-files with BP_TEST_TIER=long (1500 mutants
# in the first 4 KiB and 1500 anywhere, counted; see that file).
BP_TEST_TIER=long
export BP_TEST_TIER
exec "${top_builddir:-.}/tests/test-plugin-files" "$@"
