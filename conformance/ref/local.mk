# conformance/ref/: the float64 reference of the core op set (ref.c; op
# set 2's in ref2.c and ref3.c) and the dtypes' arithmetic (num.c),
# written from docs/op-set.md alone: one library, never installed, that
# bp-certify links and the CPU plugin's tests share.
noinst_LTLIBRARIES += %D%/libbpref.la
%C%_libbpref_la_SOURCES = %D%/ref.c %D%/ref2.c %D%/ref3.c %D%/ref.h %D%/num.c %D%/num.h
