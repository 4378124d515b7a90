# bench/: benchmarks.  `make bench` builds and runs them; they are never part
# of `make check`, because timings on shared machines are not pass/fail.
EXTRA_PROGRAMS += %D%/dispatch
%C%_dispatch_SOURCES = %D%/dispatch.c tools/clock.h
%C%_dispatch_CFLAGS = $(AM_CFLAGS) $(FFI_CFLAGS)
%C%_dispatch_LDADD = host/libbackplane.la $(FFI_LIBS)
CLEANFILES += %D%/dispatch$(EXEEXT)
EXTRA_DIST += %D%/dispatch-callgrind.sh %D%/README.md

# Discovery of many plugins: one plugin, copied N times by the program.
EXTRA_PROGRAMS += %D%/discover
%C%_discover_SOURCES = %D%/discover.c
%C%_discover_LDADD = host/libbackplane.la $(BP_DL_LIBS)
CLEANFILES += %D%/discover$(EXEEXT)
EXTRA_LTLIBRARIES += %D%/many_plugin.la
%C%_many_plugin_la_SOURCES = %D%/many-plugin.c
%C%_many_plugin_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS)
%C%_many_plugin_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere \
	-export-symbols-regex '^bp_plugin_init$$'
%C%_many_plugin_la_LIBADD = $(BP_DL_LIBS)
CLEANFILES += %D%/many_plugin.la

EXTRA_PROGRAMS += %D%/kernels
%C%_kernels_SOURCES = %D%/kernels.c tools/clock.h
%C%_kernels_LDADD = host/libbackplane.la $(BP_DL_LIBS) $(BP_PTHREAD_LIBS) -lm
CLEANFILES += %D%/kernels$(EXEEXT)

# The ops of op set 2 against the triad, and model-sized single calls.
EXTRA_PROGRAMS += %D%/ops2
%C%_ops2_SOURCES = %D%/ops2.c tools/clock.h
%C%_ops2_LDADD = host/libbackplane.la $(BP_PTHREAD_LIBS)
CLEANFILES += %D%/ops2$(EXEEXT)

# core::add through bp_call on N float32 elements: the C baseline of
# bench/python.py, which runs it beside the Python package's calls
# (bench/README.md, "Python and PyTorch", has the command).
EXTRA_PROGRAMS += %D%/add
%C%_add_SOURCES = %D%/add.c tools/clock.h
%C%_add_LDADD = host/libbackplane.la
CLEANFILES += %D%/add$(EXEEXT)
EXTRA_DIST += %D%/python.py %D%/resnet_conv.py %D%/inplace.py %D%/topk.py %D%/offload.py

# The CUDA benchmark (bench/cuda.cu), built by nvcc and linked by libtool
# against libbackplane, the static CUDA runtime and libstdc++ (CUB's
# headers use it); `make bench` runs it
# when configure found the CUDA Toolkit.  bench/cuda-run.sh repeats the
# tests and this benchmark on a GPU machine from a build directory.
EXTRA_DIST += %D%/cuda.cu %D%/cuda-run.sh
bench_cuda_deps =
if HAVE_CUDA
bench_cuda_deps += %D%/cuda-bench$(EXEEXT) plugins/cuda/cuda.la
CLEANFILES += %D%/cuda-bench$(EXEEXT) %D%/cuda-bench.o
%D%/cuda-bench.o: %D%/cuda.cu $(top_srcdir)/sdk/include/backplane/host.h $(top_srcdir)/tools/clock.h
	$(AM_V_GEN)$(NVCC) $(BP_NVCC_ALLFLAGS) -c $< -o $@
%D%/cuda-bench$(EXEEXT): %D%/cuda-bench.o host/libbackplane.la
	$(AM_V_CCLD)$(LIBTOOL) $(AM_V_lt) --tag=CC --mode=link $(CCLD) $(AM_LDFLAGS) $(LDFLAGS) \
	  -o $@ %D%/cuda-bench.o host/libbackplane.la -L$(CUDA_LIBDIR) -lcudart_static -lrt \
	  $(BP_DL_LIBS) $(BP_PTHREAD_LIBS) -lstdc++ -lm
endif

# `make bench-programs` builds the benchmarks without running them (CI does,
# so that they keep compiling).
bench-programs: %D%/dispatch$(EXEEXT) %D%/kernels$(EXEEXT) %D%/ops2$(EXEEXT) \
	%D%/discover$(EXEEXT) %D%/add$(EXEEXT) %D%/many_plugin.la $(bench_cuda_deps)
.PHONY: bench-programs

bench: %D%/dispatch$(EXEEXT) %D%/kernels$(EXEEXT) %D%/ops2$(EXEEXT) %D%/discover$(EXEEXT) \
	%D%/add$(EXEEXT) %D%/many_plugin.la plugins/cpu/cpu.la $(bench_cuda_deps)
	$(builddir)/%D%/dispatch
	LIBTOOL='$(LIBTOOL)' $(SHELL) $(srcdir)/%D%/dispatch-callgrind.sh $(builddir)/%D%/dispatch
	$(builddir)/%D%/kernels $(top_builddir)/plugins/cpu/.libs/cpu.so
	$(builddir)/%D%/ops2 $(top_builddir)/plugins/cpu/.libs/cpu.so
	$(builddir)/%D%/discover $(builddir)/%D%/.libs/many_plugin.so 200
	@if test -n '$(bench_cuda_deps)'; then \
	  echo '$(builddir)/%D%/cuda-bench $(top_builddir)/plugins/cuda/.libs/cuda.so'; \
	  $(builddir)/%D%/cuda-bench $(top_builddir)/plugins/cuda/.libs/cuda.so; \
	fi
	@if test -n '$(PYTHON_IF_CONFIGURED)' && test '$(BP_PYTHON_NUMPY)' != no; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench-python; \
	else \
	  echo "bench-python: skipped (it needs the Python package, configure --with-python, and NumPy)"; \
	fi
.PHONY: bench

# `make bench-python`: bench/python.py with the staged package, the CPU
# plugin and bench/add of this build tree.  It needs NumPy; torch's rows
# are left out without torch.
bench-python: %D%/add$(EXEEXT) plugins/cpu/cpu.la python-stage
if HAVE_PYTHON
	PYTHONPATH='$(abs_top_builddir)/python/stage' \
	LD_LIBRARY_PATH='$(abs_top_builddir)/host/.libs' \
	  $(PYTHON) $(srcdir)/%D%/python.py --plugin $(top_builddir)/plugins/cpu/.libs/cpu.so \
	  --add $(builddir)/%D%/add$(EXEEXT)
else
	@echo "bench-python: the Python package is not configured (configure --with-python)"; exit 1
endif
.PHONY: bench-python
