# tools/: command-line programs.
bin_PROGRAMS += %D%/bp-info
%C%_bp_info_SOURCES = %D%/bp-info.c
%C%_bp_info_LDADD = host/libbackplane.la
