# bench/: benchmarks.  `make bench` builds and runs them; they are never part
# of `make check`, because timings on shared machines are not pass/fail.
EXTRA_PROGRAMS += %D%/dispatch
%C%_dispatch_SOURCES = %D%/dispatch.c
%C%_dispatch_CFLAGS = $(AM_CFLAGS) $(FFI_CFLAGS)
%C%_dispatch_LDADD = host/libbackplane.la $(FFI_LIBS)
CLEANFILES += %D%/dispatch$(EXEEXT)
EXTRA_DIST += %D%/dispatch-callgrind.sh %D%/README.md

EXTRA_PROGRAMS += %D%/kernels
%C%_kernels_SOURCES = %D%/kernels.c
%C%_kernels_LDADD = host/libbackplane.la $(BP_DL_LIBS) $(BP_PTHREAD_LIBS) -lm
CLEANFILES += %D%/kernels$(EXEEXT)

bench: %D%/dispatch$(EXEEXT) %D%/kernels$(EXEEXT) plugins/cpu/cpu.la
	$(builddir)/%D%/dispatch
	LIBTOOL='$(LIBTOOL)' $(SHELL) $(srcdir)/%D%/dispatch-callgrind.sh $(builddir)/%D%/dispatch
	$(builddir)/%D%/kernels $(top_builddir)/plugins/cpu/.libs/cpu.so
.PHONY: bench
