#!/bin/sh
# tests/python/run.sh TEST.py: runs one Python test of the suite (the
# PY_LOG_COMPILER of python/local.mk) with the package staged in the build
# tree, the build tree's libbackplane, and these variables:
#   BP_TEST_BUILDDIR, BP_TEST_SRCDIR  absolute top build and source dirs
#   BP_TEST_CPU_PLUGIN                the built CPU plugin (cpu.so)
#   BP_TEST_PLUGIN_DIR                the test plugins of tests/plugins/
#   BP_TEST_VERSION                   Backplane's version, from configure
#   BP_PYTHON_NUMPY, BP_PYTHON_TORCH  their versions as configure saw them,
#                                     or "no"
# The test prints TAP.  Without Python support every test is a skip.
#
# A sanitizer build's extension and libbackplane are instrumented while
# the interpreter is not: the sanitizer's runtime must be loaded first, so
# it comes in through LD_PRELOAD.  ASan's leak check is off there, since
# the interpreter keeps its memory at exit by design.
test=$1
if [ -z "$test" ]; then
  echo "usage: run.sh TEST.py" >&2
  exit 99
fi
if [ -z "$BP_PYTHON" ]; then
  echo "1..0 # SKIP Python support not configured (configure --with-python)"
  exit 0
fi
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
BP_TEST_BUILDDIR=$(cd "$top_builddir" && pwd) || exit 99
BP_TEST_SRCDIR=$(cd "$top_srcdir" && pwd) || exit 99
BP_TEST_CPU_PLUGIN=$BP_TEST_BUILDDIR/plugins/cpu/.libs/cpu.so
BP_TEST_PLUGIN_DIR=$BP_TEST_BUILDDIR/tests/plugins/.libs
BP_TEST_VERSION=$BP_VERSION
export BP_TEST_BUILDDIR BP_TEST_SRCDIR BP_TEST_CPU_PLUGIN BP_TEST_PLUGIN_DIR BP_TEST_VERSION

PYTHONPATH=$BP_TEST_BUILDDIR/python/stage${PYTHONPATH:+:$PYTHONPATH}
LD_LIBRARY_PATH=$BP_TEST_BUILDDIR/host/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# No byte code next to the tests (the source tree may be read-only) and no
# package from the user's site directory in the way.
PYTHONDONTWRITEBYTECODE=1
PYTHONNOUSERSITE=1
export PYTHONPATH LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE PYTHONNOUSERSITE

if [ ! -e "$BP_TEST_BUILDDIR/python/stage/backplane/_backplane.abi3.so" ]; then
  echo "Bail out! the staged package is missing: $BP_TEST_BUILDDIR/python/stage/backplane/_backplane.abi3.so (run make)"
  exit 1
fi

# runtime NAME: the path of the compiler's sanitizer runtime NAME, or fails.
runtime() {
  path=$(${CC:-cc} -print-file-name="$1" 2> /dev/null)
  case $path in
    /*) [ -e "$path" ] && echo "$path" ;;
    *) return 1 ;;
  esac
}

case ${BP_SANITIZER:-no} in
  no) ;;
  address)
    asan=$(runtime libasan.so) || {
      echo "1..0 # SKIP ${CC:-cc} -print-file-name=libasan.so finds no shared ASan runtime to preload into the uninstrumented $BP_PYTHON"
      exit 0
    }
    ubsan=$(runtime libubsan.so) || ubsan=
    LD_PRELOAD="$asan${ubsan:+ $ubsan}${LD_PRELOAD:+ $LD_PRELOAD}"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
    export LD_PRELOAD ASAN_OPTIONS
    ;;
  thread)
    tsan=$(runtime libtsan.so) || {
      echo "1..0 # SKIP ${CC:-cc} -print-file-name=libtsan.so finds no shared TSan runtime to preload into the uninstrumented $BP_PYTHON"
      exit 0
    }
    LD_PRELOAD="$tsan${LD_PRELOAD:+ $LD_PRELOAD}"
    export LD_PRELOAD
    ;;
  *)
    echo "Bail out! BP_SANITIZER=$BP_SANITIZER: expected no, address or thread"
    exit 1
    ;;
esac

exec "$BP_PYTHON" "$test"
