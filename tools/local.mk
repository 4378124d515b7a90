# tools/: command-line programs.  termsafe.c escapes the text from plugins
# and files that the tools print (bp-certify uses it too); isolate.c is
# bp-info's load in a child process; budget.c the time limit of such a
# child (bp-info's and bp-certify's), in CPU time; npy.c and argtext.c are bp-run's file
# and command-line readers.
bin_PROGRAMS += %D%/bp-info %D%/bp-run
%C%_bp_info_SOURCES = %D%/bp-info.c %D%/isolate.c %D%/isolate.h %D%/budget.c %D%/budget.h \
	%D%/termsafe.c %D%/termsafe.h %D%/names.h
%C%_bp_info_LDADD = host/libbackplane.la $(BP_DL_LIBS)
%C%_bp_run_SOURCES = %D%/bp-run.c %D%/npy.c %D%/npy.h %D%/argtext.c %D%/argtext.h \
	%D%/termsafe.c %D%/termsafe.h %D%/clock.h
%C%_bp_run_LDADD = host/libbackplane.la -lm
EXTRA_DIST += %D%/install-deps.sh
