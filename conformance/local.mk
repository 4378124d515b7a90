# conformance/: bp-certify, the plugin certifier, and its tests.
bin_PROGRAMS += %D%/bp-certify
# The numerics reference is the float64 one in conformance/ref/
# (libbpref.la, which the CPU plugin's tests use too); schemas are read
# through bp_op_get_arg/ret.
%C%_bp_certify_SOURCES = \
	%D%/cert.h \
	%D%/ipc.h \
	%D%/main.c \
	%D%/ctx.c \
	%D%/ipc.c \
	%D%/options.c \
	%D%/verdict.c \
	%D%/plugin.c \
	%D%/probe.c \
	%D%/layout.h \
	%D%/layout.c \
	%D%/sample.h \
	%D%/sample_int.h \
	%D%/samples.c \
	%D%/sample_check.c \
	%D%/hints.h \
	%D%/hints.c \
	%D%/sample_gen.c \
	%D%/sample_sets.c \
	%D%/sample_values.c \
	%D%/sample_edges.c \
	%D%/sample_index.c \
	%D%/sample_sort.c \
	%D%/sample_sdpa.c \
	%D%/sample_conv.c \
	%D%/sample_nn.c \
	%D%/sample_bad.c \
	%D%/hoststate.h \
	%D%/hoststate.c \
	%D%/procstate.h \
	%D%/procstate.c \
	%D%/devtensor.h \
	%D%/devtensor.c \
	%D%/compare.c \
	%D%/cases.c \
	%D%/runner.c \
	%D%/worker.c \
	%D%/report.c \
	%D%/checks/checks.h \
	%D%/checks/table.c \
	%D%/checks/common.c \
	%D%/checks/handshake.c \
	%D%/checks/registration.c \
	%D%/checks/numerics.c \
	%D%/checks/unordered.c \
	%D%/checks/meta.c \
	%D%/checks/honesty.c \
	%D%/checks/bounds.c \
	%D%/checks/hygiene.c \
	%D%/checks/repeat.c \
	%D%/checks/reference.c \
	%D%/checks/lifetime.c \
	%D%/checks/aliasing.c \
	%D%/checks/aliasing_written.c \
	%D%/checks/errors.c \
	%D%/checks/oom.c \
	%D%/checks/concurrency.c \
	%D%/checks/device.c \
	%D%/checks/process.c \
	%D%/checks/teardown.c \
	%D%/checks/hostrun.h \
	%D%/checks/hostrun.c \
	%D%/checks/host.c \
	%D%/checks/fpenv.c \
	%D%/checks/cycles.c \
	%D%/checks/threads.c \
	%D%/elfsha.h \
	%D%/elfsyms.c \
	%D%/elfbin.c \
	%D%/sha256.c
# bp-certify links the host's objects (host/libbphost.la), the same code
# as libbackplane, for the allocator's test controls (host/alloc.h) that
# OP/oom uses; a plugin never links the host, so it meets the same host.
%C%_bp_certify_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/conformance/ref -I$(top_srcdir)/tools \
	-I$(top_srcdir)/host
%C%_bp_certify_LDADD = %D%/ref/libbpref.la tools/libbptools.la host/libbphost.la $(BP_PTHREAD_LIBS) -ldl -lm

# Certifies the CPU plugin (both profiles, through every command of
# docs/certification.md, and the device path) and the faulty plugins, each
# of which must fail the check that names its fault.
# (Makefile.am lists them first in TESTS.)
CERTIFY_TESTS = %D%/tests/test-certify.sh %D%/tests/test-certify-corpus.sh \
	%D%/tests/test-certify-faulty.sh %D%/tests/test-certify-closed.sh \
	%D%/tests/test-certify-vendor.sh
dist_check_SCRIPTS += %D%/tests/test-certify.sh %D%/tests/test-certify-faulty.sh \
	%D%/tests/test-certify-closed.sh %D%/tests/test-certify-corpus.sh \
	%D%/tests/test-certify-vendor.sh
EXTRA_DIST += %D%/tests/certify-lib.sh %D%/tests/vendoronly.hints
# make check-long: both whole profiles in both isolations; the corpus's
# races with their catch rates, and every fault and good plugin on ten
# seeds.
LONG_TESTS += %D%/tests/long/test-certify.sh %D%/tests/long/test-certify-corpus.sh \
	%D%/tests/long/test-faulty-confirm.sh
EXTRA_DIST += %D%/tests/long/test-certify.sh %D%/tests/long/test-certify-corpus.sh \
	%D%/tests/long/test-faulty-confirm.sh

# One small plugin per fault class (conformance/tests/faulty/faulty.c).
check_LTLIBRARIES += \
	%D%/tests/faulty/wrong_result.la \
	%D%/tests/faulty/wrong_noncontig.la \
	%D%/tests/faulty/mutates_input.la \
	%D%/tests/faulty/writes_past_end.la \
	%D%/tests/faulty/aliases_input.la \
	%D%/tests/faulty/meta_disagrees.la \
	%D%/tests/faulty/crashes_on_empty.la \
	%D%/tests/faulty/hangs.la \
	%D%/tests/faulty/leaks_handle.la \
	%D%/tests/faulty/nondeterministic.la \
	%D%/tests/faulty/not_thread_safe.la \
	%D%/tests/faulty/accepts_bad_dtype.la \
	%D%/tests/faulty/missing_op.la \
	%D%/tests/faulty/extra_export.la \
	%D%/tests/faulty/registers_nothing.la \
	%D%/tests/faulty/exec_stack.la \
	%D%/tests/faulty/wx_segment.la \
	%D%/tests/faulty/text_reloc.la \
	%D%/tests/faulty/instrumented.la
%C%_tests_faulty_wrong_result_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_wrong_result_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_WRONG
%C%_tests_faulty_wrong_result_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_wrong_result_la_LIBADD = -lm
%C%_tests_faulty_wrong_noncontig_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_wrong_noncontig_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_NONCONTIG
%C%_tests_faulty_wrong_noncontig_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_wrong_noncontig_la_LIBADD = -lm
%C%_tests_faulty_mutates_input_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_mutates_input_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_MUTATE
%C%_tests_faulty_mutates_input_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_mutates_input_la_LIBADD = -lm
%C%_tests_faulty_writes_past_end_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_writes_past_end_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_OOB
%C%_tests_faulty_writes_past_end_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_writes_past_end_la_LIBADD = -lm
%C%_tests_faulty_aliases_input_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_aliases_input_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_ALIAS
%C%_tests_faulty_aliases_input_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_aliases_input_la_LIBADD = -lm
%C%_tests_faulty_meta_disagrees_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_meta_disagrees_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_META
%C%_tests_faulty_meta_disagrees_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_meta_disagrees_la_LIBADD = -lm
%C%_tests_faulty_crashes_on_empty_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_crashes_on_empty_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_CRASH
%C%_tests_faulty_crashes_on_empty_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_crashes_on_empty_la_LIBADD = -lm
%C%_tests_faulty_hangs_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_hangs_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_HANG
%C%_tests_faulty_hangs_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_hangs_la_LIBADD = -lm
%C%_tests_faulty_leaks_handle_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_leaks_handle_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_LEAK
%C%_tests_faulty_leaks_handle_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_leaks_handle_la_LIBADD = -lm
%C%_tests_faulty_nondeterministic_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_nondeterministic_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_NONDET
%C%_tests_faulty_nondeterministic_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_nondeterministic_la_LIBADD = -lm
%C%_tests_faulty_not_thread_safe_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_not_thread_safe_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_THREADS
%C%_tests_faulty_not_thread_safe_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_not_thread_safe_la_LIBADD = -lm
%C%_tests_faulty_accepts_bad_dtype_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_accepts_bad_dtype_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_DTYPE
%C%_tests_faulty_accepts_bad_dtype_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_accepts_bad_dtype_la_LIBADD = -lm
%C%_tests_faulty_missing_op_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_missing_op_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_MISSING
%C%_tests_faulty_missing_op_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_missing_op_la_LIBADD = -lm
%C%_tests_faulty_extra_export_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_extra_export_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_EXPORT
%C%_tests_faulty_extra_export_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS)
%C%_tests_faulty_extra_export_la_LIBADD = -lm
%C%_tests_faulty_registers_nothing_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_registers_nothing_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_EMPTY
%C%_tests_faulty_registers_nothing_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_registers_nothing_la_LIBADD = -lm
# A right core::add in a binary the loader refuses: linked with an
# executable stack, with a writable and executable segment, with text
# relocations (handshake/binary).
%C%_tests_faulty_exec_stack_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_exec_stack_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_EXECSTACK
%C%_tests_faulty_exec_stack_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS) \
	-Wl,-z,execstack
%C%_tests_faulty_exec_stack_la_LIBADD = -lm
%C%_tests_faulty_wx_segment_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_wx_segment_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_WX
%C%_tests_faulty_wx_segment_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS) \
	$(BP_NO_WARN_RWX)
%C%_tests_faulty_wx_segment_la_LIBADD = -lm
%C%_tests_faulty_text_reloc_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_text_reloc_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_TEXTREL
%C%_tests_faulty_text_reloc_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS) \
	-Wl,-z,notext
%C%_tests_faulty_text_reloc_la_LIBADD = -lm
# Not faulty: core::add done right, for the tests of worker isolation.
%C%_tests_faulty_instrumented_la_SOURCES = %D%/tests/faulty/faulty.c
%C%_tests_faulty_instrumented_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFAULT_NONE
%C%_tests_faulty_instrumented_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tests_faulty_instrumented_la_LIBADD = -lm
include %D%/tests/faulty/local.mk
