# host/: libbackplane, the library a host embeds.
# The host's objects are one convenience library: libbackplane.la is made
# of it, and the out-of-memory tests (tests/test-oom.c) link it to reach
# the allocator's hidden test controls (alloc.h).
noinst_LTLIBRARIES += %D%/libbphost.la
%C%_libbphost_la_SOURCES = \
	%D%/internal.h \
	%D%/alloc.h \
	%D%/alloc.c \
	%D%/api.c \
	%D%/describe.c \
	%D%/text.c \
	%D%/init.c \
	%D%/schema.h \
	%D%/schema.c \
	%D%/dtype.h \
	%D%/dtype.c \
	%D%/schema_lex.h \
	%D%/schema_lex.c \
	%D%/schema_print.c \
	%D%/error.c \
	%D%/device.c \
	%D%/cpu_alloc.c \
	%D%/guard.c \
	%D%/tensor.c \
	%D%/stack.c \
	%D%/dlpack.c \
	%D%/rcu.c \
	%D%/registry.h \
	%D%/registry.c \
	%D%/register.c \
	%D%/precedence.c \
	%D%/select.c \
	%D%/introspect.c \
	%D%/optexts.c \
	%D%/call.c \
	%D%/call_dtypes.c \
	%D%/meta.c \
	%D%/unboxed.c \
	%D%/loader.c \
	%D%/plugin_file.c \
	%D%/plugin_dyn.c \
	%D%/plugin_probe.c \
	%D%/hostapi.c \
	%D%/core_meta.h \
	%D%/core.c \
	%D%/core_rules.c \
	%D%/core_v2.c \
	%D%/core_call.c \
	%D%/core_nn.c \
	%D%/core_sdpa.c \
	%D%/core_conv.c \
	%D%/core_inplace.c \
	%D%/core_out.c
%C%_libbphost_la_CPPFLAGS = $(AM_CPPFLAGS) -DBP_PLUGIN_DIR='"$(pkglibdir)/plugins"'
%C%_libbphost_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS) $(FFI_CFLAGS)
%C%_libbphost_la_LIBADD = $(FFI_LIBS) -lm

lib_LTLIBRARIES += %D%/libbackplane.la
%C%_libbackplane_la_SOURCES =
%C%_libbackplane_la_LIBADD = %D%/libbphost.la
%C%_libbackplane_la_LDFLAGS = -no-undefined -version-info $(BP_LT_VERSION_INFO)
if HAVE_VERSION_SCRIPT
%C%_libbackplane_la_LDFLAGS += -Wl,--version-script=$(srcdir)/%D%/libbackplane.map
%C%_libbackplane_la_DEPENDENCIES = %D%/libbphost.la $(srcdir)/%D%/libbackplane.map
endif
# Thread-exit destructors live in the library: it stays mapped after a
# dlclose() (tests/test-tls.c).
if HAVE_NODELETE
%C%_libbackplane_la_LDFLAGS += -Wl,-z,nodelete
endif
EXTRA_DIST += %D%/libbackplane.map %D%/backplane.pc.in
pkgconfig_DATA += %D%/backplane.pc

# Installed as root into the live system (no DESTDIR), the tools and the
# Python package must find libbackplane at once: the dynamic linker's
# cache is refreshed, as libraries' install hooks do, so that a $(libdir)
# named in /etc/ld.so.conf (Debian's /usr/local/lib) serves the new
# SONAME.  A packager's staged install (DESTDIR) leaves that to the
# package's own trigger; a $(libdir) the linker does not search by default
# is in the programs' run path (libtool adds it when it relinks them).
install-exec-hook: install-ldconfig-hook
uninstall-hook: uninstall-ldconfig-hook
install-ldconfig-hook uninstall-ldconfig-hook:
	@if test -z '$(DESTDIR)' && test "`id -u`" = 0; then \
	  ldconfig=`PATH="$$PATH:/sbin:/usr/sbin" command -v ldconfig`; \
	  if test -n "$$ldconfig"; then \
	    echo " $$ldconfig (refreshes the dynamic linker's cache for $(libdir))"; \
	    "$$ldconfig" || echo "WARNING: $$ldconfig failed: run it as root before using the installed tools" >&2; \
	  fi; \
	fi
.PHONY: install-ldconfig-hook uninstall-ldconfig-hook
