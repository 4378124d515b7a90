# tests/cpu/: the CPU plugin against an independent float64 reference.
# test-cpu-ops loads $(top_builddir)/plugins/cpu/.libs/cpu.so (built by
# `make all`) and, for the device error paths, tests/plugins' good.so.
check_PROGRAMS += %D%/test-cpu-ops
%C%_test_cpu_ops_SOURCES = \
	%D%/test-cpu-ops.c \
	%D%/harness.c \
	%D%/harness.h \
	%D%/ref.c \
	%D%/ref.h \
	%D%/num.c \
	%D%/num.h \
	tests/testutil.h
%C%_test_cpu_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cpu_ops_LDADD = host/libbackplane.la tests/libtap.la -lm -lpthread

# The plugin's dynamic symbol table: only bp_plugin_init, no bp_* imports.
dist_check_SCRIPTS += %D%/test-cpu-symbols.sh

TESTS += %D%/test-cpu-ops %D%/test-cpu-symbols.sh
