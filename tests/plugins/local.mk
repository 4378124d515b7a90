# tests/plugins/: plugins built only for the tests, never installed.  Each is
# a libtool module that exports only bp_plugin_init (unless the point of the
# plugin is to break that rule).
TEST_PLUGIN_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
TEST_PLUGIN_EXPORTS = -export-symbols-regex '^bp_plugin_init$$'
TEST_PLUGIN_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS)

check_LTLIBRARIES += %D%/good.la
%C%_good_la_SOURCES = %D%/good.c
%C%_good_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
%C%_good_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
