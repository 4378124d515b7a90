# examples/: out-of-tree vendor plugins and a minimal embedding host:
#   vendor-plugin   acme, ops of its own namespace, boxed and unboxed
#   core-op-plugin  vmul, core::mul for the CPU with <backplane/plugin_aux.h>
#   hostmem-device  hostmem, a vendor device type backed by host memory,
#                   with core ops and one of its own on it (the kit)
#   host            a program that embeds libbackplane
#   gpt2-c          GPT-2 (2 layers, GPT-2's dims) generating 16 tokens
#                   through bp_call, checked against torch's tokens
#   python          the Python package from NumPy alone and through torch
#                   (run by tests/python/test-examples.py, not installed)
#
# `make installcheck` (and so `make distcheck`) builds them from the
# installed tree, as a vendor or an embedding program would: through
# pkg-config, with their own Makefiles.  It loads the plugins with bp-info,
# certifies acme and vmul with bp-certify (vmul alone and on its op: the
# CPU plugin implements core::mul for the CPU too), calls hostmem's ops on
# its device with bp-run and certifies it in the full profile, and runs
# the host.  Then it runs the
# commands of docs/vendor-guide.md (which build and install Backplane from
# this source tree into a scratch HOME and certify the guide's plugin) and
# of docs/host-guide.md (against the installed tree).
EXTRA_DIST += \
	%D%/vendor-plugin/Makefile \
	%D%/vendor-plugin/acme.c \
	%D%/core-op-plugin/Makefile \
	%D%/core-op-plugin/vmul.c \
	%D%/hostmem-device/Makefile \
	%D%/hostmem-device/hostmem.c \
	%D%/host/Makefile \
	%D%/host/host.c \
	%D%/gpt2-c/Makefile \
	%D%/gpt2-c/gpt2.c \
	%D%/gpt2-c/make_weights.py \
	%D%/python/numpy_only.py \
	%D%/python/transformer_block.py \
	tests/run-doc.sh

# Scratch directories, one per rule, since make -j runs the rules at once.
EXAMPLES_CHECK_DIR = $(abs_top_builddir)/examples-check
DOCS_CHECK_DIR = $(abs_top_builddir)/docs-check

# The environment of a program that uses the installed tree.  With DESTDIR
# the .pc files still name the configured prefix: PKG_CONFIG_SYSROOT_DIR
# makes pkg-config put DESTDIR in front of the paths it prints, and the
# installed libbackplane looks for plugins in the configured directory, so
# BP_PLUGIN_PATH points at the staged one.  DESTDIR itself, which make
# exports when it is given on the command line, must not reach the
# examples' and the guides' own builds.
EXAMPLES_ENV = \
	unset MAKEFLAGS MFLAGS MAKELEVEL DESTDIR; \
	PATH='$(DESTDIR)$(bindir)':"$$PATH"; export PATH; \
	PKG_CONFIG_PATH='$(DESTDIR)$(pkgconfigdir)'; export PKG_CONFIG_PATH; \
	if test -n '$(DESTDIR)'; then \
	  PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)'; export PKG_CONFIG_SYSROOT_DIR; \
	  LD_LIBRARY_PATH='$(DESTDIR)$(libdir)'; export LD_LIBRARY_PATH; \
	  BP_PLUGIN_PATH='$(DESTDIR)$(pkglibdir)/plugins'; export BP_PLUGIN_PATH; \
	fi; \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0; export ASAN_OPTIONS; \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export UBSAN_OPTIONS;

# What the examples' Makefiles compile with: the configured compiler and
# flags, and the sanitizers when libbackplane was built with them.
EXAMPLES_MAKEFLAGS = CC='$(CC)' CFLAGS='$(CFLAGS) $(BP_SAN_FLAGS)' \
	LDFLAGS='$(LDFLAGS) $(BP_SAN_FLAGS)' PKG_CONFIG='$(PKG_CONFIG)'

installcheck-local: installcheck-examples installcheck-docs

installcheck-examples:
	rm -rf $(EXAMPLES_CHECK_DIR) && mkdir -p $(EXAMPLES_CHECK_DIR)
	cp -R $(srcdir)/%D%/vendor-plugin $(srcdir)/%D%/core-op-plugin $(srcdir)/%D%/hostmem-device \
	  $(srcdir)/%D%/host $(srcdir)/%D%/gpt2-c $(EXAMPLES_CHECK_DIR)/
	chmod -R u+w $(EXAMPLES_CHECK_DIR)
	@$(EXAMPLES_ENV) \
	set -x; \
	cd $(EXAMPLES_CHECK_DIR)/vendor-plugin && \
	$(MAKE) $(EXAMPLES_MAKEFLAGS) && \
	nm -D --defined-only acme.so | grep -q ' T bp_plugin_init$$' && \
	bp-info --no-discover ./acme.so > info.txt && cat info.txt && \
	grep -q 'kernel cpu .*unboxed.* from acme' info.txt && \
	grep -q 'kernel cpu .*boxed .* from acme' info.txt && \
	bp-certify ./acme.so --profile full --json cert.json && \
	cd ../host && \
	$(MAKE) $(EXAMPLES_MAKEFLAGS) && \
	./host ../vendor-plugin/acme.so > out.txt && cat out.txt && \
	grep -q '^core::muladd: 10.5 40.5 90.5 160.5$$' out.txt && \
	grep -q '^acme::axpy: 12 24 36 48$$' out.txt && \
	cd ../core-op-plugin && \
	$(MAKE) $(EXAMPLES_MAKEFLAGS) && \
	nm -D --defined-only vmul.so | grep -q ' T bp_plugin_init$$' && \
	bp-info --no-discover ./vmul.so > info.txt && \
	grep -q 'kernel cpu .*structured .* from vmul' info.txt && \
	bp-certify ./vmul.so --profile core --ops 'core::mul' --json cert.json && \
	grep -q '"conforms": true' cert.json && \
	cd ../hostmem-device && \
	$(MAKE) $(EXAMPLES_MAKEFLAGS) && \
	nm -D --defined-only hostmem.so | grep -q ' T bp_plugin_init$$' && \
	bp-info --no-discover ./hostmem.so > info.txt && cat info.txt && \
	grep -q '^  hostmem:0 ' info.txt && \
	grep -q 'kernel hostmem .*structured.* from hostmem.*dtypes: float32$$' info.txt && \
	bp-run --write a.npy int8 4 100,-100,-5,7 && \
	bp-run --no-discover -p ./hostmem.so --device hostmem:0 core::relu a.npy > out.txt && \
	cat out.txt && grep -q '^  100 0 0 7$$' out.txt && \
	bp-certify ./hostmem.so --profile full --json cert.json && \
	grep -q '"conforms": true' cert.json && \
	cd ../gpt2-c && \
	$(MAKE) $(EXAMPLES_MAKEFLAGS) && \
	if test -n '$(PYTHON_IF_CONFIGURED)' && \
	   '$(PYTHON_IF_CONFIGURED)' -c 'import torch, numpy' 2>/dev/null; then \
	  $(MAKE) $(EXAMPLES_MAKEFLAGS) check PYTHON='$(PYTHON_IF_CONFIGURED)' \
	    PLUGIN='$(DESTDIR)$(pkglibdir)/plugins/cpu.so' > out.txt; \
	  st=$$?; cat out.txt; test $$st = 0 && grep -q '^PASS: the 16 greedy tokens equal' out.txt; \
	else \
	  echo "SKIP gpt2-c: the configured Python does not import torch and NumPy"; \
	fi
	rm -rf $(EXAMPLES_CHECK_DIR)

# Each document runs in a scratch HOME.  The host guide finds the installed
# tree at ~/backplane; the vendor guide builds and installs its own there
# from $(abs_top_srcdir), out of tree, as it tells a vendor to.  A source
# tree configured in place refuses a second, out-of-tree configure, so
# there the guide builds from a clean copy of the sources (make distdir).
# That build leaves the CUDA plugin out, through a CONFIG_SITE file that
# configure reads, to save an nvcc build: the guide's plugin is a CPU one.
installcheck-docs:
	rm -rf $(DOCS_CHECK_DIR) && mkdir -p $(DOCS_CHECK_DIR)/host-home
	ln -s '$(DESTDIR)$(prefix)' $(DOCS_CHECK_DIR)/host-home/backplane
	@$(EXAMPLES_ENV) \
	cd $(DOCS_CHECK_DIR)/host-home && \
	HOME=$$PWD $(SHELL) $(abs_top_srcdir)/tests/run-doc.sh $(abs_top_srcdir)/docs/host-guide.md
	mkdir -p $(DOCS_CHECK_DIR)/vendor-home
	echo 'with_cuda=no' > $(DOCS_CHECK_DIR)/config.site
	@src='$(abs_top_srcdir)'; \
	if test -f "$$src/config.status"; then \
	  $(MAKE) $(AM_MAKEFLAGS) distdir distdir='$(DOCS_CHECK_DIR)/src' > /dev/null || exit 1; \
	  src='$(DOCS_CHECK_DIR)/src'; \
	fi; \
	unset MAKEFLAGS MFLAGS MAKELEVEL DESTDIR; \
	cd $(DOCS_CHECK_DIR)/vendor-home && \
	HOME=$$PWD BACKPLANE_SRC="$$src" CONFIG_SITE=$$PWD/../config.site \
	$(SHELL) $(abs_top_srcdir)/tests/run-doc.sh $(abs_top_srcdir)/docs/vendor-guide.md
	rm -rf $(DOCS_CHECK_DIR)

clean-local: clean-examples-check
clean-examples-check:
	rm -rf $(EXAMPLES_CHECK_DIR) $(DOCS_CHECK_DIR)

.PHONY: installcheck-examples installcheck-docs clean-examples-check
