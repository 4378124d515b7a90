# tests/cpu/: the CPU plugin against an independent float64 reference.
# test-cpu-ops loads $(top_builddir)/plugins/cpu/.libs/cpu.so (built by
# `make all`) and, for the device error paths, tests/plugins' good.so.

# The float64 reference of the core op set (ref.c) and the dtypes'
# arithmetic (num.c), written from docs/op-set.md alone: one library,
# never installed, that these tests and bp-certify share.
noinst_LTLIBRARIES += %D%/libbpref.la
%C%_libbpref_la_SOURCES = %D%/ref.c %D%/ref.h %D%/num.c %D%/num.h

# The tests' machinery (harness.c), small helpers for writing cases
# (cases.c) and one seeded random trial per op family (trials.c), built
# once for every test program.
check_LTLIBRARIES += %D%/libcputest.la
%C%_libcputest_la_SOURCES = \
	%D%/harness.c %D%/harness.h \
	%D%/cases.c %D%/cases.h \
	%D%/trials.c %D%/trials.h
%C%_libcputest_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
CPU_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
CPU_TEST_LDADD = %D%/libcputest.la %D%/libbpref.la host/libbackplane.la tests/libtap.la -lm

check_PROGRAMS += %D%/test-cpu-ops
%C%_test_cpu_ops_SOURCES = %D%/test-cpu-ops.c tests/testutil.h
%C%_test_cpu_ops_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_ops_LDADD = $(CPU_TEST_LDADD) -lpthread

# The plugin's dynamic symbol table: only bp_plugin_init, no bp_* imports.
dist_check_SCRIPTS += %D%/test-cpu-symbols.sh

TESTS += %D%/test-cpu-ops %D%/test-cpu-symbols.sh
