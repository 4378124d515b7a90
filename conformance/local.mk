# conformance/: bp-certify, the plugin certifier, and its test.
bin_PROGRAMS += %D%/bp-certify
# The numerics reference is the float64 one the CPU plugin's tests use.
%C%_bp_certify_SOURCES = \
	%D%/bp-certify.c \
	%D%/certify.h \
	%D%/elfsyms.c \
	%D%/sha256.c \
	tests/cpu/ref.c \
	tests/cpu/ref.h \
	tests/cpu/num.c \
	tests/cpu/num.h
%C%_bp_certify_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/cpu
%C%_bp_certify_LDADD = host/libbackplane.la -lm

# Certifies the CPU plugin and some plugins that must fail (tests/plugins).
TESTS += %D%/tests/test-certify.sh
dist_check_SCRIPTS += %D%/tests/test-certify.sh

# Plugins that each break one per-op check (conformance/tests/faulty):
# one source, four plugins.
check_LTLIBRARIES += \
	%D%/tests/faulty/mutates_input.la \
	%D%/tests/faulty/leaks_handle.la \
	%D%/tests/faulty/nondeterministic.la \
	%D%/tests/faulty/wrong_result.la
%C%_tests_faulty_mutates_input_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_mutates_input_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_MUTATE
%C%_tests_faulty_mutates_input_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_leaks_handle_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_leaks_handle_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_LEAK
%C%_tests_faulty_leaks_handle_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_nondeterministic_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_nondeterministic_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_NONDET
%C%_tests_faulty_nondeterministic_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_nondeterministic_la_LIBADD = -lm
%C%_tests_faulty_wrong_result_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_wrong_result_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_WRONG
%C%_tests_faulty_wrong_result_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
