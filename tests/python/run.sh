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
#   BP_TEST_PRELOAD                   what LD_PRELOAD must hold for another
#                                     Python process that imports backplane
#                                     (empty unless a sanitizer build)
# The test prints TAP.  Without Python support every test is a skip.
#
# A sanitizer build's extension and libbackplane are instrumented while
# the interpreter is not: the sanitizer's runtime must be loaded first, so
# it comes in through LD_PRELOAD.
# - ASan (with UBSan): its leak check is off, since the interpreter keeps
#   its memory at exit by design.
# - TSan: LD_PRELOAD reaches the interpreter only, not the programs a test
#   starts, because TSan's setjmp interceptor crashes preloaded shells
#   (sh and bash call setjmp at start; so the libtool wrappers of the
#   tools would crash).  OMP_NUM_THREADS=1: TSan does not see the
#   synchronisation of the uninstrumented OpenMP runtime that torch's
#   threads use, and reports their memcpy and memset calls as races; on
#   one thread torch's ops run where TSan sees every access.
#   Likewise OpenBLAS's threads, which are not instrumented either: the
#   CPU plugin uses its own (instrumented) GEMM (BP_BLAS_LIBRARY=none)
#   rather than setting OpenBLAS to its thread count, and torch's OpenBLAS
#   runs on one thread (OPENBLAS_NUM_THREADS=1); a large GEMM of
#   test-offload's models raced in sgemm_beta otherwise.
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

BP_TEST_PRELOAD=
case ${BP_SANITIZER:-no} in
  no) ;;
  address)
    asan=$(runtime libasan.so) || {
      echo "1..0 # SKIP ${CC:-cc} -print-file-name=libasan.so finds no shared ASan runtime to preload into the uninstrumented $BP_PYTHON"
      exit 0
    }
    ubsan=$(runtime libubsan.so) || ubsan=
    BP_TEST_PRELOAD="$asan${ubsan:+ $ubsan}"
    LD_PRELOAD="$BP_TEST_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
    export LD_PRELOAD ASAN_OPTIONS
    ;;
  thread)
    BP_TEST_PRELOAD=$(runtime libtsan.so) || {
      echo "1..0 # SKIP ${CC:-cc} -print-file-name=libtsan.so finds no shared TSan runtime to preload into the uninstrumented $BP_PYTHON"
      exit 0
    }
    OMP_NUM_THREADS=1
    OPENBLAS_NUM_THREADS=1
    BP_BLAS_LIBRARY=none
    export BP_TEST_PRELOAD OMP_NUM_THREADS OPENBLAS_NUM_THREADS BP_BLAS_LIBRARY
    # The interpreter drops LD_PRELOAD from its environment, then runs
    # the test as python TEST.py would.
    LD_PRELOAD="$BP_TEST_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}" exec "$BP_PYTHON" -c '
import os, runpy, sys
os.environ.pop("LD_PRELOAD", None)
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")' "$test"
    ;;
  *)
    echo "Bail out! BP_SANITIZER=$BP_SANITIZER: expected no, address or thread"
    exit 1
    ;;
esac
export BP_TEST_PRELOAD

exec "$BP_PYTHON" "$test"
