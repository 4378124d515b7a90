# tools/: command-line programs, and libbptools, the code they and
# bp-certify share (a convenience library, never installed): termsafe.c
# escapes the text from plugins and files that the tools print; clock.h
# is the one monotonic clock; budget.c is a child process's time limit
# (bp-info's and bp-certify's), in CPU time; isolate.c is bp-info's load
# in a child process; npy.c and argtext.c are bp-run's file and
# command-line readers.
noinst_LTLIBRARIES += %D%/libbptools.la
%C%_libbptools_la_SOURCES = %D%/termsafe.c %D%/termsafe.h %D%/clock.h %D%/budget.c \
	%D%/budget.h %D%/isolate.c %D%/isolate.h %D%/npy.c %D%/npy.h %D%/argtext.c %D%/argtext.h
bin_PROGRAMS += %D%/bp-info %D%/bp-run
%C%_bp_info_SOURCES = %D%/bp-info.c
%C%_bp_info_LDADD = %D%/libbptools.la host/libbackplane.la $(BP_DL_LIBS)
%C%_bp_run_SOURCES = %D%/bp-run.c
%C%_bp_run_LDADD = %D%/libbptools.la host/libbackplane.la -lm
EXTRA_DIST += %D%/install-deps.sh
