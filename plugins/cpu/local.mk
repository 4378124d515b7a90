# plugins/cpu/: the CPU reference plugin, installed in $(pkglibdir)/plugins.
# A libtool module that includes only the SDK headers, links nothing from
# the host and exports only bp_plugin_init.
cpuplugindir = $(pkglibdir)/plugins
cpuplugin_LTLIBRARIES = %D%/cpu.la
%C%_cpu_la_SOURCES = \
	%D%/cpu.h \
	%D%/vmath.h \
	%D%/plugin.c \
	%D%/pool.c \
	%D%/iter.c \
	%D%/elementwise.h \
	%D%/elementwise.c \
	%D%/compare.c \
	%D%/index.c \
	%D%/scan.c \
	%D%/sort.c \
	%D%/attention.c \
	%D%/cast.c \
	%D%/reduce.h \
	%D%/reduce.c \
	%D%/reduce_cols.c \
	%D%/rows.c \
	%D%/stream.c \
	%D%/softmax.h \
	%D%/softmax.c \
	%D%/softmax_cols.c \
	%D%/layer_norm.h \
	%D%/layer_norm.c \
	%D%/layer_norm_cols.c \
	%D%/matmul.c \
	%D%/conv.h \
	%D%/conv.c \
	%D%/conv_direct.c \
	%D%/maxpool.c \
	%D%/blas.c
%C%_cpu_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS) $(BP_CPU_CFLAGS)
%C%_cpu_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^bp_plugin_init$$'
%C%_cpu_la_LIBADD = -lm $(BP_DL_LIBS) $(BP_PTHREAD_LIBS)
