# host/: libbackplane, the library a host embeds.
lib_LTLIBRARIES += %D%/libbackplane.la
%C%_libbackplane_la_SOURCES = \
	%D%/internal.h \
	%D%/schema.h \
	%D%/schema.c \
	%D%/error.c \
	%D%/device.c \
	%D%/guard.c \
	%D%/tensor.c \
	%D%/stack.c \
	%D%/dlpack.c \
	%D%/rcu.c \
	%D%/registry.c \
	%D%/precedence.c \
	%D%/introspect.c \
	%D%/call.c \
	%D%/unboxed.c \
	%D%/loader.c \
	%D%/plugin_file.c \
	%D%/hostapi.c \
	%D%/core.c
%C%_libbackplane_la_CPPFLAGS = $(AM_CPPFLAGS) -DBP_PLUGIN_DIR='"$(pkglibdir)/plugins"'
%C%_libbackplane_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS) $(FFI_CFLAGS)
%C%_libbackplane_la_LIBADD = $(FFI_LIBS)
%C%_libbackplane_la_LDFLAGS = -no-undefined -version-info $(BP_LT_VERSION_INFO)
if HAVE_VERSION_SCRIPT
%C%_libbackplane_la_LDFLAGS += -Wl,--version-script=$(srcdir)/%D%/libbackplane.map
%C%_libbackplane_la_DEPENDENCIES = $(srcdir)/%D%/libbackplane.map
endif
# Thread-exit destructors live in the library: it stays mapped after a
# dlclose() (tests/test-tls.c).
if HAVE_NODELETE
%C%_libbackplane_la_LDFLAGS += -Wl,-z,nodelete
endif
EXTRA_DIST += %D%/libbackplane.map %D%/backplane.pc.in
pkgconfig_DATA += %D%/backplane.pc
