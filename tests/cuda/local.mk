# tests/cuda/: tests of the CUDA plugin; they skip without a CUDA device.
# The programs are plain C against libbackplane and are built whether or
# not the plugin is: they load $(top_builddir)/plugins/cuda/.libs/cuda.so,
# and skip (1..0 # SKIP ...) when it was not built.
#   test-cuda-plugin   loading, registration, 0 devices and the reason,
#                      unload; with a GPU the device interface
#   test-cuda-ops      with a GPU, every core op against the CPU plugin
#   test-cuda-symbols  the plugin's dynamic symbol table
check_PROGRAMS += %D%/test-cuda-plugin %D%/test-cuda-ops
%C%_test_cuda_plugin_SOURCES = %D%/test-cuda-plugin.c %D%/cudatest.h
%C%_test_cuda_plugin_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cuda_plugin_LDADD = host/libbackplane.la tests/libtap.la -lpthread
%C%_test_cuda_ops_SOURCES = %D%/test-cuda-ops.c %D%/cudatest.h
%C%_test_cuda_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cuda_ops_LDADD = host/libbackplane.la tests/libtap.la -lm -lpthread

dist_check_SCRIPTS += %D%/test-cuda-symbols.sh
EXTRA_DIST += %D%/README.md

TESTS += %D%/test-cuda-plugin %D%/test-cuda-ops %D%/test-cuda-symbols.sh
