# tests/cpu/: the CPU plugin against an independent float64 reference.
# The test programs load $(top_builddir)/plugins/cpu/.libs/cpu.so (built
# by `make all`).

# The float64 reference they compare with is the certifier's
# (conformance/ref/libbpref.la).

# The tests' machinery (harness.c and tensors.c), small helpers for
# writing cases (cases.c) and one seeded random trial per op family
# (trials.c), also at large sizes (large.c), built once for every test
# program.
check_LTLIBRARIES += %D%/libcputest.la
%C%_libcputest_la_SOURCES = \
	%D%/harness.c %D%/harness.h %D%/tensors.c \
	%D%/cases.c %D%/cases.h \
	%D%/trials.c %D%/trials.h \
	%D%/large.c %D%/large.h
%C%_libcputest_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/conformance/ref
CPU_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/conformance/ref
CPU_TEST_LDADD = %D%/libcputest.la conformance/ref/libbpref.la host/libbackplane.la \
	tests/libtap.la -lm

# The test programs, one per family of ops or concern (each case a TAP
# point), so that `make check` runs them side by side.  test-cpu-cast-copy
# and test-cpu-errors also load tests/plugins' good.so, for another device.
check_PROGRAMS += \
	%D%/test-cpu-calls \
	%D%/test-cpu-binary \
	%D%/test-cpu-unary \
	%D%/test-cpu-reduce \
	%D%/test-cpu-matmul \
	%D%/test-cpu-nn \
	%D%/test-cpu-cast-copy \
	%D%/test-cpu-tiled \
	%D%/test-cpu-large \
	%D%/test-cpu-pool \
	%D%/test-cpu-errors
%C%_test_cpu_calls_SOURCES = %D%/test-cpu-calls.c
%C%_test_cpu_calls_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_calls_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_binary_SOURCES = %D%/test-cpu-binary.c
%C%_test_cpu_binary_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_binary_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_unary_SOURCES = %D%/test-cpu-unary.c
%C%_test_cpu_unary_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_unary_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_reduce_SOURCES = %D%/test-cpu-reduce.c
%C%_test_cpu_reduce_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_reduce_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_matmul_SOURCES = %D%/test-cpu-matmul.c
%C%_test_cpu_matmul_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_matmul_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_nn_SOURCES = %D%/test-cpu-nn.c
%C%_test_cpu_nn_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_nn_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_cast_copy_SOURCES = %D%/test-cpu-cast-copy.c tests/testutil.h
%C%_test_cpu_cast_copy_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_cast_copy_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_tiled_SOURCES = %D%/test-cpu-tiled.c
%C%_test_cpu_tiled_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_tiled_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_large_SOURCES = %D%/test-cpu-large.c
%C%_test_cpu_large_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_large_LDADD = $(CPU_TEST_LDADD)
%C%_test_cpu_pool_SOURCES = %D%/test-cpu-pool.c
%C%_test_cpu_pool_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_pool_LDADD = $(CPU_TEST_LDADD) -lpthread
%C%_test_cpu_errors_SOURCES = %D%/test-cpu-errors.c tests/testutil.h
%C%_test_cpu_errors_CPPFLAGS = $(CPU_TEST_CPPFLAGS)
%C%_test_cpu_errors_LDADD = $(CPU_TEST_LDADD)

# The plugin's dynamic symbol table: only bp_plugin_init, no bp_* imports.
dist_check_SCRIPTS += %D%/test-cpu-symbols.sh

# The slowest first, so that a parallel `make check` starts them early.
TESTS += \
	%D%/test-cpu-large \
	%D%/test-cpu-pool \
	%D%/test-cpu-nn \
	%D%/test-cpu-tiled \
	%D%/test-cpu-calls \
	%D%/test-cpu-binary \
	%D%/test-cpu-unary \
	%D%/test-cpu-reduce \
	%D%/test-cpu-matmul \
	%D%/test-cpu-cast-copy \
	%D%/test-cpu-errors \
	%D%/test-cpu-symbols.sh
