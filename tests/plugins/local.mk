# tests/plugins/: plugins built only for the tests, never installed.  Each is
# a libtool module that exports only bp_plugin_init (unless the point of the
# plugin is to break that rule).
TEST_PLUGIN_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
TEST_PLUGIN_EXPORTS = -export-symbols-regex '^bp_plugin_init$$'
TEST_PLUGIN_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS)

check_LTLIBRARIES += %D%/good.la
%C%_good_la_SOURCES = %D%/good.c %D%/fakedev.h
%C%_good_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_good_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# Plugins that the loader must refuse, or accept across minor versions.
check_LTLIBRARIES += \
	%D%/major_plus.la \
	%D%/minor_old.la \
	%D%/minor_new.la \
	%D%/small_struct.la \
	%D%/init_fails.la \
	%D%/setup_fails.la \
	%D%/bad_schema.la \
	%D%/no_entry.la
%C%_major_plus_la_SOURCES = %D%/major_plus.c
%C%_major_plus_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_major_plus_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_minor_old_la_SOURCES = %D%/minor_old.c
%C%_minor_old_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_minor_old_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_minor_new_la_SOURCES = %D%/minor_new.c
%C%_minor_new_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_minor_new_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_small_struct_la_SOURCES = %D%/small_struct.c
%C%_small_struct_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_small_struct_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_init_fails_la_SOURCES = %D%/init_fails.c
%C%_init_fails_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_init_fails_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_bad_schema_la_SOURCES = %D%/bad_schema.c
%C%_bad_schema_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_bad_schema_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_setup_fails_la_SOURCES = %D%/setup_fails.c %D%/fakedev.h
%C%_setup_fails_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_setup_fails_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
# no_entry breaks the one rule on purpose: it exports another symbol and
# not bp_plugin_init.
%C%_no_entry_la_SOURCES = %D%/no_entry.c
%C%_no_entry_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_no_entry_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) -export-symbols-regex '^not_a_plugin_entry$$'

# Registrations the host must refuse: one source, four plugins.
check_LTLIBRARIES += %D%/conflict.la %D%/conflict_ns.la %D%/impl_nodef.la %D%/impl_nodev.la
%C%_conflict_la_SOURCES = %D%/conflict.c
%C%_conflict_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_conflict_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_conflict_ns_la_SOURCES = %D%/conflict.c
%C%_conflict_ns_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DCONFLICT_NS
%C%_conflict_ns_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_impl_nodef_la_SOURCES = %D%/conflict.c
%C%_impl_nodef_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DIMPL_NODEF
%C%_impl_nodef_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_impl_nodev_la_SOURCES = %D%/conflict.c
%C%_impl_nodev_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DIMPL_NODEV
%C%_impl_nodev_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# Two vendors with their own device types, from one source, and two
# fragment plugins (one into vendor_a, which allows it; one into good).
check_LTLIBRARIES += %D%/vendor_a.la %D%/vendor_b.la %D%/frag.la %D%/frag_good.la
%C%_vendor_a_la_SOURCES = %D%/vendor.c
%C%_vendor_a_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_vendor_a_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_vendor_b_la_SOURCES = %D%/vendor.c
%C%_vendor_b_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVENDOR_B
%C%_vendor_b_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_frag_la_SOURCES = %D%/frag.c
%C%_frag_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_frag_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_frag_good_la_SOURCES = %D%/frag.c
%C%_frag_good_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DFRAG_GOOD
%C%_frag_good_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# Kernels beside the reference CPU plugin's, for precedence and declared
# dtypes (tests/test-precedence.c): one source, two plugins.
check_LTLIBRARIES += %D%/tuned.la %D%/tuned_b.la
%C%_tuned_la_SOURCES = %D%/tuned.c
%C%_tuned_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_tuned_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_tuned_b_la_SOURCES = %D%/tuned.c
%C%_tuned_b_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DTUNED_B
%C%_tuned_b_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# Plugins that crash or hang while they load (one source, three plugins),
# for bp-info's isolation.
check_LTLIBRARIES += %D%/crash_init.la %D%/crash_setup.la %D%/hang_setup.la
%C%_crash_init_la_SOURCES = %D%/crash.c
%C%_crash_init_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DCRASH_INIT
%C%_crash_init_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_crash_setup_la_SOURCES = %D%/crash.c
%C%_crash_setup_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DCRASH_SETUP
%C%_crash_setup_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_hang_setup_la_SOURCES = %D%/crash.c
%C%_hang_setup_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DHANG_SETUP
%C%_hang_setup_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# A plugin whose strings carry terminal escapes and forged TAP lines.
check_LTLIBRARIES += %D%/escapes.la
%C%_escapes_la_SOURCES = %D%/escapes.c %D%/fakedev.h
%C%_escapes_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_escapes_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# Ops with every kind of argument and result, for the Python bindings and
# the torch bridge (tests/python/).
check_LTLIBRARIES += %D%/sig.la
%C%_sig_la_SOURCES = %D%/sig.c
%C%_sig_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_sig_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)

# The vendor guide's host-memory device (examples/hostmem-device), built
# with the kit from the source tree, and a host-visible device whose relu
# writes its input (tests/test-kit-plugin.sh certifies both).
check_LTLIBRARIES += %D%/hostmem.la %D%/hostvis.la
%C%_hostmem_la_SOURCES = examples/hostmem-device/hostmem.c
%C%_hostmem_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_hostmem_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
%C%_hostmem_la_LIBADD = -lm
%C%_hostvis_la_SOURCES = %D%/hostvis.c %D%/fakedev.h
%C%_hostvis_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_hostvis_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
