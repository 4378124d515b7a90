# tests/cuda/: tests of the CUDA plugin; they skip without a CUDA device.
# The programs are plain C against libbackplane and are built whether or
# not the plugin is: they load $(top_builddir)/plugins/cuda/.libs/cuda.so,
# and skip (1..0 # SKIP ...) when it was not built.
#   test-cuda-plugin   loading, registration, 0 devices and the reason,
#                      unload; with a GPU the device interface
#   test-cuda-ops      with a GPU, every core op against the CPU plugin
#   test-cuda-symbols  the plugin's dynamic symbol table
#   test-cuda-messages the plugin's error messages, read from its sources
#   test-cuda-functors the reductions' and elementwise functors, run on the
#                      host (built by nvcc when configure found the CUDA
#                      Toolkit; no GPU)
#   test-cuda-host     the plugin's host-side logic (the overlap test, the
#                      reductions' launch plan, the cuBLAS handle table);
#                      built the same way
check_PROGRAMS += %D%/test-cuda-plugin %D%/test-cuda-ops
%C%_test_cuda_plugin_SOURCES = %D%/test-cuda-plugin.c %D%/cudatest.h
%C%_test_cuda_plugin_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cuda_plugin_LDADD = host/libbackplane.la tests/libtap.la -lpthread
%C%_test_cuda_ops_SOURCES = %D%/test-cuda-ops.c %D%/opcheck.c %D%/opcheck.h %D%/cudatest.h
%C%_test_cuda_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
%C%_test_cuda_ops_LDADD = host/libbackplane.la tests/libtap.la -lm -lpthread

dist_check_SCRIPTS += %D%/test-cuda-symbols.sh %D%/test-cuda-messages.sh
EXTRA_DIST += %D%/README.md

TESTS += %D%/test-cuda-plugin %D%/test-cuda-ops %D%/test-cuda-symbols.sh \
	%D%/test-cuda-messages.sh

EXTRA_DIST += %D%/test-cuda-functors.cu %D%/test-cuda-host.cu %D%/hostrng.h
if HAVE_CUDA
TESTS += %D%/test-cuda-functors %D%/test-cuda-host
CLEANFILES += %D%/test-cuda-functors$(EXEEXT) %D%/test-cuda-functors.o \
	%D%/test-cuda-host$(EXEEXT) %D%/test-cuda-host.o
%D%/test-cuda-functors.o: %D%/test-cuda-functors.cu $(top_srcdir)/plugins/cuda/reduce_ops.cuh \
	$(top_srcdir)/plugins/cuda/elementwise_ops.cuh $(top_srcdir)/plugins/cuda/reduce_plan.h \
	$(top_srcdir)/sdk/include/backplane/host.h $(top_srcdir)/tests/cuda/hostrng.h \
	$(top_srcdir)/plugins/cuda/kernels.cuh $(top_srcdir)/plugins/cuda/cuda.h $(top_srcdir)/tests/tap.h
	$(AM_V_GEN)$(NVCC) $(BP_NVCC_ALLFLAGS) -I$(top_srcdir)/plugins/cuda -I$(top_srcdir)/tests \
	  -c $< -o $@
%D%/test-cuda-host.o: %D%/test-cuda-host.cu $(top_srcdir)/plugins/cuda/overlap.h \
	$(top_srcdir)/plugins/cuda/reduce_plan.h $(top_srcdir)/plugins/cuda/blas_handles.h \
	$(top_srcdir)/sdk/include/backplane/host.h $(top_srcdir)/tests/cuda/hostrng.h \
	$(top_srcdir)/plugins/cuda/kernels.cuh $(top_srcdir)/plugins/cuda/cuda.h $(top_srcdir)/tests/tap.h
	$(AM_V_GEN)$(NVCC) $(BP_NVCC_ALLFLAGS) -I$(top_srcdir)/plugins/cuda -I$(top_srcdir)/tests \
	  -c $< -o $@
%D%/test-cuda-functors$(EXEEXT): %D%/test-cuda-functors.o host/libbackplane.la tests/libtap.la \
	plugins/cpu/cpu.la
	$(AM_V_CCLD)$(LIBTOOL) $(AM_V_lt) --tag=CC --mode=link $(CCLD) $(AM_LDFLAGS) $(LDFLAGS) \
	  -o $@ %D%/test-cuda-functors.o host/libbackplane.la tests/libtap.la \
	  -L$(CUDA_LIBDIR) -lcudart_static -lrt \
	  $(BP_DL_LIBS) $(BP_PTHREAD_LIBS) -lstdc++ -lm
%D%/test-cuda-host$(EXEEXT): %D%/test-cuda-host.o host/libbackplane.la tests/libtap.la
	$(AM_V_CCLD)$(LIBTOOL) $(AM_V_lt) --tag=CC --mode=link $(CCLD) $(AM_LDFLAGS) $(LDFLAGS) \
	  -o $@ %D%/test-cuda-host.o host/libbackplane.la tests/libtap.la \
	  -L$(CUDA_LIBDIR) -lcudart_static -lrt \
	  $(BP_DL_LIBS) $(BP_PTHREAD_LIBS) -lstdc++ -lm
endif
