# tests/: the TAP test suite (make check).
check_LTLIBRARIES += %D%/libtap.la
%C%_libtap_la_SOURCES = %D%/tap.c %D%/tap.h

TEST_LDADD = host/libbackplane.la %D%/libtap.la -lm

check_PROGRAMS += \
	%D%/test-errors \
	%D%/test-tensor \
	%D%/test-stack \
	%D%/test-dlpack \
	%D%/test-device \
	%D%/test-schema \
	%D%/test-schema-stress \
	%D%/test-dispatch \
	%D%/test-arguments \
	%D%/test-core-meta \
	%D%/test-core-meta2 \
	%D%/test-cxx
%C%_test_errors_LDADD = $(TEST_LDADD)
%C%_test_tensor_LDADD = $(TEST_LDADD)
%C%_test_stack_LDADD = $(TEST_LDADD)
%C%_test_dlpack_LDADD = $(TEST_LDADD)
%C%_test_device_LDADD = $(TEST_LDADD)
# The schema parser is internal (hidden in libbackplane), so its tests
# link the host's objects (host/libbphost.la); the stress test also fails
# each of the parser's allocations in turn through the allocator's test
# controls (host/alloc.h).
SCHEMA_TEST_SOURCES = %D%/schema-corpus.c %D%/schema-corpus.h
%C%_test_schema_SOURCES = %D%/test-schema.c $(SCHEMA_TEST_SOURCES)
%C%_test_schema_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/host
%C%_test_schema_LDADD = host/libbphost.la %D%/libtap.la -lm
%C%_test_schema_stress_SOURCES = %D%/test-schema-stress.c $(SCHEMA_TEST_SOURCES)
%C%_test_schema_stress_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/host
%C%_test_schema_stress_LDADD = host/libbphost.la %D%/libtap.la -lm
%C%_test_dispatch_SOURCES = %D%/test-dispatch.c %D%/testutil.h
%C%_test_dispatch_LDADD = $(TEST_LDADD) -lpthread
%C%_test_arguments_SOURCES = %D%/test-arguments.c %D%/testutil.h
%C%_test_arguments_LDADD = $(TEST_LDADD)
%C%_test_core_meta_SOURCES = %D%/test-core-meta.c %D%/testutil.h
%C%_test_core_meta_LDADD = $(TEST_LDADD)
%C%_test_core_meta2_SOURCES = %D%/test-core-meta2.c %D%/testutil.h
%C%_test_core_meta2_LDADD = $(TEST_LDADD)
%C%_test_cxx_SOURCES = %D%/test-cxx.cc
%C%_test_cxx_LDADD = $(TEST_LDADD)

TESTS += \
	%D%/test-errors \
	%D%/test-tensor \
	%D%/test-stack \
	%D%/test-dlpack \
	%D%/test-device \
	%D%/test-schema \
	%D%/test-schema-stress \
	%D%/test-dispatch \
	%D%/test-arguments \
	%D%/test-core-meta \
	%D%/test-core-meta2 \
	%D%/test-cxx \
	%D%/test-headers.sh
dist_check_SCRIPTS += %D%/test-headers.sh

# The loader and its behaviour under concurrent calls; both load the test
# plugins of tests/plugins/.
check_PROGRAMS += %D%/test-loader %D%/test-unload %D%/test-concurrency
%C%_test_loader_SOURCES = %D%/test-loader.c %D%/loaderutil.h %D%/testutil.h
%C%_test_loader_LDADD = $(TEST_LDADD)
%C%_test_unload_SOURCES = %D%/test-unload.c %D%/loaderutil.h %D%/testutil.h
%C%_test_unload_LDADD = $(TEST_LDADD) -lpthread
%C%_test_concurrency_SOURCES = %D%/test-concurrency.c %D%/testutil.h tools/clock.h
%C%_test_concurrency_LDADD = $(TEST_LDADD) -lpthread
TESTS += %D%/test-loader %D%/test-unload %D%/test-concurrency

# The host described (bp_describe), as bp-info prints it.
check_PROGRAMS += %D%/test-describe
%C%_test_describe_SOURCES = %D%/test-describe.c %D%/loaderutil.h %D%/testutil.h
%C%_test_describe_LDADD = $(TEST_LDADD)
TESTS += %D%/test-describe

# Out of memory at every allocation of the public entry points; links the
# host's objects for the allocator's test controls (host/alloc.h).
check_PROGRAMS += %D%/test-oom
%C%_test_oom_SOURCES = %D%/test-oom.c %D%/testutil.h
%C%_test_oom_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/host
%C%_test_oom_LDADD = host/libbphost.la %D%/libtap.la -ldl -lpthread -lm
TESTS += %D%/test-oom

# host/ and python/src read top-down: no cycle between their modules (nm
# and tsort).
TESTS += %D%/test-layering.sh
dist_check_SCRIPTS += %D%/test-layering.sh

# Files in a plugin directory that are not loadable plugins.
check_PROGRAMS += %D%/test-plugin-files
%C%_test_plugin_files_SOURCES = %D%/test-plugin-files.c %D%/testutil.h
%C%_test_plugin_files_LDADD = $(TEST_LDADD)
TESTS += %D%/test-plugin-files

# A failure while defining the core op set reaches every caller.
check_PROGRAMS += %D%/test-core-init
%C%_test_core_init_SOURCES = %D%/test-core-init.c %D%/testutil.h
%C%_test_core_init_LDADD = $(TEST_LDADD)
TESTS += %D%/test-core-init

# Schemas mapped to unboxed C signatures (split from test-dispatch).
check_PROGRAMS += %D%/test-signatures
%C%_test_signatures_SOURCES = %D%/test-signatures.c %D%/testutil.h
%C%_test_signatures_LDADD = $(TEST_LDADD)
TESTS += %D%/test-signatures

# Structured kernels: the host allocates the results the kernel fills.
check_PROGRAMS += %D%/test-structured
%C%_test_structured_SOURCES = %D%/test-structured.c %D%/testutil.h
%C%_test_structured_LDADD = $(TEST_LDADD)
TESTS += %D%/test-structured

# Several kernels for one op and device type; declared dtypes.
check_PROGRAMS += %D%/test-precedence
%C%_test_precedence_SOURCES = %D%/test-precedence.c %D%/testutil.h
%C%_test_precedence_LDADD = $(TEST_LDADD)
TESTS += %D%/test-precedence

# Guarded device allocations (BP_ALLOC_GUARD), which bp-certify uses.
check_PROGRAMS += %D%/test-alloc-guard
%C%_test_alloc_guard_LDADD = $(TEST_LDADD)
TESTS += %D%/test-alloc-guard

# libbackplane loaded with dlopen() beside copies of itself: its
# thread-local block stays small (tests/test-tls.c).  Not linked with it.
check_PROGRAMS += %D%/test-tls
%C%_test_tls_LDADD = %D%/libtap.la -ldl -lpthread
TESTS += %D%/test-tls

# A probe linked with a fixed run path (-no-install), so that it also runs
# as a setuid program, where the loader ignores LD_LIBRARY_PATH.
check_PROGRAMS += %D%/discover-probe
%C%_discover_probe_SOURCES = %D%/discover-probe.c
%C%_discover_probe_LDADD = host/libbackplane.la
%C%_discover_probe_LDFLAGS = -no-install
TESTS += %D%/test-setuid.sh
dist_check_SCRIPTS += %D%/test-setuid.sh

# bp-info's listing, as text and as JSON.
TESTS += %D%/test-bp-info.sh
dist_check_SCRIPTS += %D%/test-bp-info.sh

# bp-run on .npy files written by the test itself; make check-long adds
# 300 mutated headers (tests/test-npy mutates every byte in-process).
TESTS += %D%/test-bp-run.sh
dist_check_SCRIPTS += %D%/test-bp-run.sh
LONG_TESTS += %D%/long/test-bp-run.sh
EXTRA_DIST += %D%/long/test-bp-run.sh
LONG_TESTS += %D%/long/test-plugin-files.sh
EXTRA_DIST += %D%/long/test-plugin-files.sh

# The tools' own modules: the .npy reader and writer (with the libFuzzer
# target, fed mutated files) and the escaping of text from plugins.
check_PROGRAMS += %D%/test-npy %D%/test-termsafe
# The harness's watchdog: tap-selftest's cases, which test-tap.sh reads.
check_PROGRAMS += %D%/tap-selftest
%C%_tap_selftest_SOURCES = %D%/tap-selftest.c
%C%_tap_selftest_LDADD = %D%/libtap.la
TESTS += %D%/test-tap.sh
dist_check_SCRIPTS += %D%/test-tap.sh
%C%_test_npy_SOURCES = %D%/test-npy.c %D%/fuzz/fuzz-npy.c
%C%_test_npy_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
%C%_test_npy_LDADD = tools/libbptools.la $(TEST_LDADD)
%C%_test_termsafe_SOURCES = %D%/test-termsafe.c
%C%_test_termsafe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
%C%_test_termsafe_LDADD = tools/libbptools.la host/libbackplane.la %D%/libtap.la
TESTS += %D%/test-npy %D%/test-termsafe

# Text from plugins (tests/plugins/escapes.c) reaches the terminal and
# bp-certify's TAP escaped, from bp-info, bp-run and bp-certify.
TESTS += %D%/test-escapes.sh
dist_check_SCRIPTS += %D%/test-escapes.sh

# README.md's commands need no sudo, and the Quick start is two commands;
# tools/install-deps.sh serves a user without root or sudo.
TESTS += %D%/test-readme.sh %D%/test-install-deps.sh
dist_check_SCRIPTS += %D%/test-readme.sh %D%/test-install-deps.sh

# The commands shown in the plugin pages of docs/ run in the build tree.
TESTS += %D%/test-doc-plugins.sh
dist_check_SCRIPTS += %D%/test-doc-plugins.sh

# The examples of docs/python.md run with the package staged in the build
# tree (a skip without Python support).
TESTS += %D%/test-doc-python.sh
dist_check_SCRIPTS += %D%/test-doc-python.sh

# libFuzzer targets, run by hand (tests/fuzz/README.md).
EXTRA_DIST += %D%/fuzz/README.md %D%/fuzz/run.sh %D%/fuzz/fuzz-schema.c %D%/fuzz/fuzz-npy.c

# The .out and in-place forms: structured kernels fill the written tensor.
check_PROGRAMS += %D%/test-out-forms
%C%_test_out_forms_SOURCES = %D%/test-out-forms.c %D%/testutil.h
%C%_test_out_forms_LDADD = $(TEST_LDADD)
TESTS += %D%/test-out-forms

# A vendor plugin written with the kit (the vendor guide's host-memory
# device), called with bp-run and certified with bp-certify.
TESTS += %D%/test-kit-plugin.sh
dist_check_SCRIPTS += %D%/test-kit-plugin.sh
