# python/: the backplane package for CPython 3.9 and later (configure
# --with-python): the pure-Python files of python/backplane/ and one
# extension module, _backplane, built against the Limited API of 3.9 so
# that one binary, _backplane.abi3.so, serves every later CPython.
#
# `make` stages an importable copy of the package in python/stage/ (links
# to the sources and to the built module), which the tests import;
# `make install` puts the package in $(BP_PYTHON_SITEDIR)/backplane.

# The package's Python files, installed beside the extension.
BP_PYTHON_FILES = \
	%D%/backplane/__init__.py \
	%D%/backplane/__main__.py \
	%D%/backplane/_info.py \
	%D%/backplane/torch.py \
	%D%/backplane/offload.py \
	%D%/backplane/_aten.py \
	%D%/backplane/_aten_base.py \
	%D%/backplane/_aten_backward.py \
	%D%/backplane/_grads.py \
	%D%/backplane/_backplane.pyi \
	%D%/backplane/py.typed

BP_PYTHON_STAGE = %D%/stage/backplane

if HAVE_PYTHON
bppythondir = $(BP_PYTHON_SITEDIR)/backplane
bppython_DATA = $(BP_PYTHON_FILES)
# A libtool module whose name carries the abi3 tag, so that libtool builds
# and installs _backplane.abi3.so itself.  It links libbackplane, found
# through its run path once installed, and not libpython: the interpreter
# that imports it provides the Py* symbols.
bppython_LTLIBRARIES = %D%/_backplane.abi3.la
endif
%C%__backplane_abi3_la_SOURCES = \
	%D%/src/ext.h \
	%D%/src/op.h \
	%D%/src/module.c \
	%D%/src/state.c \
	%D%/src/errors.c \
	%D%/src/tensor.c \
	%D%/src/wrap.c \
	%D%/src/device.c \
	%D%/src/convert.c \
	%D%/src/ndarray.c \
	%D%/src/torchconv.c \
	%D%/src/opschema.c \
	%D%/src/op.c \
	%D%/src/args.c \
	%D%/src/opinfo.c
# BP_PY_LIMITED_API, the Stable ABI version targeted, comes from configure;
# BP_PYTHON_CPPFLAGS names the Python headers with -isystem.
%C%__backplane_abi3_la_CPPFLAGS = $(AM_CPPFLAGS) -DPy_LIMITED_API=$(BP_PY_LIMITED_API) \
	$(BP_PYTHON_CPPFLAGS)
%C%__backplane_abi3_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS)
# The run path is a DT_RUNPATH (--enable-new-dtags), which LD_LIBRARY_PATH
# overrides: the tests load the build tree's libbackplane even where one is
# installed in $(libdir).
%C%__backplane_abi3_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-Wl,-rpath,$(libdir) -Wl,--enable-new-dtags
%C%__backplane_abi3_la_LIBADD = host/libbackplane.la

EXTRA_DIST += \
	$(BP_PYTHON_FILES) \
	%D%/configure-probe.py \
	%D%/pyproject.toml \
	%D%/setup.py \
	%D%/gen-stable-abi.py \
	%D%/stable_abi.txt

# The staged package: what `import backplane` finds with
# PYTHONPATH=$(abs_top_builddir)/python/stage.  Links, so that an edit of a
# .py file needs no make, and out-of-tree builds stage nothing in srcdir.
all-local: python-stage
python-stage: $(bppython_LTLIBRARIES)
if HAVE_PYTHON
	$(AM_V_GEN)rm -rf $(BP_PYTHON_STAGE) && $(MKDIR_P) $(BP_PYTHON_STAGE) && \
	for f in $(BP_PYTHON_FILES); do \
	  ln -s "$(abs_srcdir)/$$f" "$(BP_PYTHON_STAGE)/$${f##*/}" || exit 1; \
	done && \
	ln -s ../../.libs/_backplane.abi3.so $(BP_PYTHON_STAGE)/_backplane.abi3.so
endif
clean-local: clean-python-stage
clean-python-stage:
	rm -rf %D%/stage

# libtool installs a .la file beside the module, which Python has no use
# for; the module goes with it at uninstall, and so does the byte code that
# an import from the installed package writes.
install-data-hook: install-python-hook
install-python-hook:
if HAVE_PYTHON
	rm -f "$(DESTDIR)$(bppythondir)/_backplane.abi3.la"
	@if test -n '$(BP_PYTHON_OFF_PATH)'; then echo 'WARNING: $(BP_PYTHON_OFF_PATH)' >&2; fi
endif
uninstall-hook: uninstall-python-hook
uninstall-python-hook:
if HAVE_PYTHON
	rm -f "$(DESTDIR)$(bppythondir)/_backplane.abi3.so"
	rm -rf "$(DESTDIR)$(bppythondir)/__pycache__"
endif

# `make installcheck` imports the installed package, from a directory away
# from the build tree, and checks that it is the installed one.
installcheck-local: installcheck-python
installcheck-python:
if HAVE_PYTHON
	@case '$(BP_SANITIZER)' in no) ;; *) \
	  echo "installcheck-python: skipped under the $(BP_SANITIZER) sanitizer (tests/python/run.sh loads its runtime for the build tree's tests)"; \
	  exit 0;; esac; \
	site='$(DESTDIR)$(BP_PYTHON_SITEDIR)'; \
	cd / && PYTHONPATH="$$site" PYTHONDONTWRITEBYTECODE=1 \
	LD_LIBRARY_PATH='$(DESTDIR)$(libdir)'"$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}" \
	$(PYTHON) -c 'import sys, backplane; \
	  where = backplane._backplane.__file__; \
	  print("installcheck-python: backplane", backplane.version(), "from", where); \
	  sys.exit(0 if where.startswith(sys.argv[1] + "/backplane/") and \
	    backplane.version() == sys.argv[2] else 1)' "$$site" '$(PACKAGE_VERSION)'
endif

.PHONY: python-stage clean-python-stage install-python-hook uninstall-python-hook \
	installcheck-python

# The Python tests run through tests/python/run.sh, which gives them the
# staged package, the build tree's libbackplane and the paths of the
# plugins; without Python support each one is a skip.
PY_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/python/run.sh
AM_TESTS_ENVIRONMENT += \
	BP_PYTHON='$(PYTHON_IF_CONFIGURED)'; BP_VERSION='$(PACKAGE_VERSION)'; \
	BP_PY_LIMITED_API='$(BP_PY_LIMITED_API)'; \
	BP_PYTHON_NUMPY='$(BP_PYTHON_NUMPY)'; BP_PYTHON_TORCH='$(BP_PYTHON_TORCH)'; \
	export BP_PYTHON BP_VERSION BP_PY_LIMITED_API BP_PYTHON_NUMPY BP_PYTHON_TORCH;
if HAVE_PYTHON
PYTHON_IF_CONFIGURED = $(PYTHON)
else
PYTHON_IF_CONFIGURED =
endif

PYTHON_TESTS = \
	tests/python/test-stable-abi.py \
	tests/python/test-import.py \
	tests/python/test-module-state.py \
	tests/python/test-tensor.py \
	tests/python/test-ndarray.py \
	tests/python/test-ops.py \
	tests/python/test-errors.py \
	tests/python/test-threads.py \
	tests/python/test-torch.py \
	tests/python/test-conv.py \
	tests/python/test-pool.py \
	tests/python/test-bridge.py \
	tests/python/test-offload.py \
	tests/python/test-offload-edges.py \
	tests/python/test-grad.py \
	tests/python/test-pip.sh \
	tests/python/test-cli.py \
	tests/python/test-examples.py \
	tests/python/test-nodeps.sh
TESTS += $(PYTHON_TESTS)
# Two processes training with torch.distributed (DDP over gloo), under
# backplane.torch.offload and without: the long tier.
LONG_TESTS += tests/python/test-ddp.py
EXTRA_DIST += tests/python/test-ddp.py
EXTRA_DIST += $(PYTHON_TESTS) tests/python/run.sh tests/python/taplib.py \
	tests/python/opref.py tests/python/opcases2.py tests/python/models.py
