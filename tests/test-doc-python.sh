#!/bin/sh
# The examples of docs/python.md run (tests/run-doc.sh), with the package
# staged in the build tree.  The document says `python3`: a shim first in
# PATH runs the configured interpreter ($BP_PYTHON) instead.  The examples
# find the CPU plugin by discovery, through BP_PLUGIN_PATH.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
if [ -z "$BP_PYTHON" ]; then
  echo "1..0 # SKIP Python support not configured (configure --with-python)"
  exit 0
fi
case ${BP_SANITIZER:-no} in
  no) ;;
  *) echo "1..0 # SKIP under the $BP_SANITIZER sanitizer, the interpreter needs its runtime preloaded; tests/python/run.sh does that for the Python tests"
     exit 0 ;;
esac
src=$(cd "$top_srcdir" && pwd) || exit 99
build=$(cd "$top_builddir" && pwd) || exit 99
BP_TEST_CPU_PLUGIN=${BP_TEST_CPU_PLUGIN:-$build/plugins/cpu/.libs/cpu.so}
PYTHONPATH=$build/python/stage${PYTHONPATH:+:$PYTHONPATH}
LD_LIBRARY_PATH=$build/host/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BP_PLUGIN_PATH=$(dirname "$BP_TEST_CPU_PLUGIN")
PYTHONDONTWRITEBYTECODE=1
PYTHONNOUSERSITE=1
export BP_TEST_CPU_PLUGIN PYTHONPATH LD_LIBRARY_PATH BP_PLUGIN_PATH
export PYTHONDONTWRITEBYTECODE PYTHONNOUSERSITE

if ! "$BP_PYTHON" -c 'import backplane' 2> /dev/null; then
  echo "1..1"
  echo "not ok 1 - $BP_PYTHON imports backplane from $PYTHONPATH"
  "$BP_PYTHON" -c 'import backplane' 2>&1 | sed 's/^/# /'
  exit 1
fi
if ! "$BP_PYTHON" -c 'import numpy, torch' 2> /dev/null; then
  echo "1..0 # SKIP the examples of docs/python.md need NumPy and torch, which $BP_PYTHON does not import"
  exit 0
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/work"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$BP_PYTHON" > "$tmp/bin/python3"
chmod +x "$tmp/bin/python3"
cd "$tmp/work" && PATH=$tmp/bin:$PATH ${SHELL:-/bin/sh} "$src/tests/run-doc.sh" "$src/docs/python.md"
