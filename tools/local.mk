# tools/: command-line programs.
bin_PROGRAMS += %D%/bp-info %D%/bp-run
%C%_bp_info_SOURCES = %D%/bp-info.c
%C%_bp_info_LDADD = host/libbackplane.la
%C%_bp_run_SOURCES = %D%/bp-run.c
%C%_bp_run_LDADD = host/libbackplane.la
EXTRA_DIST += %D%/install-deps.sh
