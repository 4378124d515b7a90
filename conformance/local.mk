# conformance/: bp-certify, the plugin certifier, and its test.
bin_PROGRAMS += %D%/bp-certify
# The numerics reference is the float64 one the CPU plugin's tests use.
%C%_bp_certify_SOURCES = \
	%D%/bp-certify.c \
	%D%/certify.h \
	%D%/elfsyms.c \
	%D%/sha256.c \
	tests/cpu/ref.c \
	tests/cpu/ref.h \
	tests/cpu/num.c \
	tests/cpu/num.h
%C%_bp_certify_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/cpu
%C%_bp_certify_LDADD = host/libbackplane.la -lm

# Certifies the CPU plugin and some plugins that must fail (tests/plugins).
TESTS += %D%/tests/test-certify.sh
dist_check_SCRIPTS += %D%/tests/test-certify.sh
