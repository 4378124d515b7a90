# abi/: the ABI baseline and the checks that keep it stable.
check_PROGRAMS += %D%/layout
%C%_layout_SOURCES = %D%/layout.c
TESTS += %D%/test-layout.sh
dist_check_SCRIPTS += %D%/test-layout.sh
EXTRA_DIST += %D%/layout-1.0.txt %D%/libtool-version

# Rewrites the baseline from the current headers.  Run it only for a
# deliberate, versioned ABI change (see docs/abi-policy.md).
abi-baseline: %D%/layout$(EXEEXT)
	$(builddir)/%D%/layout$(EXEEXT) --print > $(srcdir)/%D%/layout-1.0.txt
.PHONY: abi-baseline
