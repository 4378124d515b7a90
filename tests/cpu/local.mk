# tests/cpu/: the CPU plugin against an independent float64 reference.
# test-cpu-ops loads $(top_builddir)/plugins/cpu/.libs/cpu.so (built by
# `make all`) and, for the device error paths, tests/plugins' good.so.

# The float64 reference of the core op set (ref.c) and the dtypes'
# arithmetic (num.c), written from docs/op-set.md alone: one library,
# never installed, that these tests and bp-certify share.
noinst_LTLIBRARIES += %D%/libbpref.la
%C%_libbpref_la_SOURCES = %D%/ref.c %D%/ref.h %D%/num.c %D%/num.h

check_PROGRAMS += %D%/test-cpu-ops
%C%_test_cpu_ops_SOURCES = \
	%D%/test-cpu-ops.c \
	%D%/harness.c \
	%D%/harness.h \
	tests/testutil.h
%C%_test_cpu_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cpu_ops_LDADD = %D%/libbpref.la host/libbackplane.la tests/libtap.la -lm -lpthread

# The plugin's dynamic symbol table: only bp_plugin_init, no bp_* imports.
dist_check_SCRIPTS += %D%/test-cpu-symbols.sh

TESTS += %D%/test-cpu-ops %D%/test-cpu-symbols.sh
