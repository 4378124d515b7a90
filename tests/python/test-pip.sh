#!/bin/sh
# The pip route of the Python package (python/pyproject.toml, setup.py):
# `pip wheel --no-build-isolation` builds one cp39-abi3 wheel against an
# installed libbackplane that pkg-config finds (here a prefix made of the
# build tree's library and the SDK headers), the wheel's extension keeps to
# the Stable ABI (test-stable-abi.py on it), `pip install --target` of the
# same tree gives a package that imports and runs an op, and setup.py
# compiles the C sources python/local.mk lists.  Nothing is downloaded.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
if [ -z "$BP_PYTHON" ]; then
  echo "1..0 # SKIP Python support not configured (configure --with-python)"
  exit 0
fi
case ${BP_SANITIZER:-no} in
  no) ;;
  *) echo "1..0 # SKIP under the $BP_SANITIZER sanitizer (pip builds without it)"
     exit 0 ;;
esac
for m in pip setuptools wheel; do
  if ! "$BP_PYTHON" -c "import $m" > /dev/null 2>&1; then
    echo "1..0 # SKIP $BP_PYTHON has no $m (python3-pip, python3-setuptools, python3-wheel)"
    exit 0
  fi
done
if ! command -v pkg-config > /dev/null 2>&1; then
  echo "1..0 # SKIP pkg-config is not installed"
  exit 0
fi
src=$(cd "$top_srcdir" && pwd) || exit 99
build=$(cd "$top_builddir" && pwd) || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

n=0
fail=0
result() { # result STATUS DESCRIPTION [FILE]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"
    [ -n "$3" ] && sed 's/^/#   /' "$3" | tail -n 20
    fail=1
  fi
}
echo "1..6"

# An installed Backplane: the library, the SDK headers and backplane.pc.
mkdir -p "$tmp/prefix/lib/pkgconfig" "$tmp/prefix/include"
cp -P "$build"/host/.libs/libbackplane.so* "$tmp/prefix/lib/"
cp -R "$src/sdk/include/backplane" "$tmp/prefix/include/"
version=$(sed -n 's/^Version: //p' "$build/host/backplane.pc")
cat > "$tmp/prefix/lib/pkgconfig/backplane.pc" <<PC
prefix=$tmp/prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: backplane
Description: Backplane host library
Version: $version
Libs: -L\${libdir} -lbackplane
Cflags: -I\${includedir}
PC
# The package's sources, as a clone has them (pip builds in the tree).
mkdir -p "$tmp/pkg/backplane"
cp "$src/python/pyproject.toml" "$src/python/setup.py" "$src/python/local.mk" "$tmp/pkg/"
cp -R "$src/python/src" "$tmp/pkg/"
rm -rf "$tmp/pkg/src/.libs" "$tmp/pkg/src/"*.lo "$tmp/pkg/src/"*.o
cp "$src"/python/backplane/*.py "$src"/python/backplane/*.pyi \
  "$src/python/backplane/py.typed" "$tmp/pkg/backplane/"
chmod -R u+w "$tmp/pkg"

export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
"$BP_PYTHON" -m pip wheel --no-build-isolation --no-deps -w "$tmp/wheels" \
  "$tmp/pkg" > "$tmp/wheel.log" 2>&1
result $? "pip wheel --no-build-isolation builds the package" "$tmp/wheel.log"
whl=$(ls "$tmp"/wheels/backplane-"$version"-cp39-abi3-*.whl 2>/dev/null)
[ -n "$whl" ]
result $? "the wheel is backplane-$version-cp39-abi3 ($(ls "$tmp/wheels" 2>/dev/null))"
mkdir "$tmp/unzipped"
"$BP_PYTHON" -m zipfile -e "$whl" "$tmp/unzipped" > "$tmp/unzip.log" 2>&1 &&
  [ -f "$tmp/unzipped/backplane/py.typed" ] &&
  [ -f "$tmp/unzipped/backplane/_backplane.pyi" ] &&
  [ -f "$tmp/unzipped/backplane/offload.py" ]
result $? "it carries every module, the type stubs and py.typed" "$tmp/unzip.log"
BP_TEST_ABI_MODULE=$(ls "$tmp"/unzipped/backplane/_backplane*.so) \
  BP_TEST_BUILDDIR=$build BP_TEST_SRCDIR=$src \
  "$BP_PYTHON" "$src/tests/python/test-stable-abi.py" > "$tmp/abi.log" 2>&1 &&
  ! grep -q "^not ok" "$tmp/abi.log"
result $? "its extension keeps to the Stable ABI and exports only its init" "$tmp/abi.log"
"$BP_PYTHON" -m pip install --no-build-isolation --no-deps \
  --target "$tmp/site" "$tmp/pkg" > "$tmp/install.log" 2>&1
result $? "pip install --no-build-isolation installs it" "$tmp/install.log"
LD_LIBRARY_PATH=$tmp/prefix/lib PYTHONPATH=$tmp/site "$BP_PYTHON" -c '
import sys, backplane
assert backplane.__file__.startswith(sys.argv[1]), backplane.__file__
backplane.load(sys.argv[2])
x = backplane.empty((3,), "float32")
backplane.ops.core.fill_(x, 2.0)
y = backplane.ops.core.mul(x, x)
try:
    import numpy  # noqa: F401
    assert y.numpy().tolist() == [4.0] * 3, y.numpy()
except ImportError:
    pass
print(backplane.version())
' "$tmp/site" "$build/plugins/cpu/.libs/cpu.so" > "$tmp/run.log" 2>&1
result $? "the installed package imports and runs an op" "$tmp/run.log"
exit $fail
