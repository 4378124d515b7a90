"""Builds backplane._backplane (abi3, the Stable ABI of CPython 3.9) against
the installed libbackplane that pkg-config finds; see pyproject.toml."""

import os
import re
import subprocess

from setuptools import Extension, setup
from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
LIMITED_API = "0x03090000"  # configure.ac's BP_PY_LIMITED_API


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "backplane"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(
            "setup.py: pkg-config finds no installed libbackplane "
            "(backplane.pc); install Backplane first (make install), or set "
            f"PKG_CONFIG_PATH: {e}") from None
    return out.split()


def sources():
    """The C sources of python/local.mk's _backplane.abi3 module."""
    with open(os.path.join(HERE, "local.mk")) as f:
        text = f.read()
    block = re.search(r"__backplane_abi3_la_SOURCES = \\\n((?:\t.*\n)+)", text)
    names = re.findall(r"%D%/(\S+\.c)", block.group(1))
    return [os.path.relpath(os.path.join(HERE, n)) for n in names]


class AbiWheel(bdist_wheel):
    """Tags the wheel cp39-abi3: one wheel for every CPython from 3.9."""

    def get_tag(self):
        python, abi, plat = super().get_tag()
        return ("cp39", "abi3", plat) if python.startswith("cp") \
            else (python, abi, plat)


cflags = pkg_config("--cflags")
libs = pkg_config("--libs")
libdir = pkg_config("--variable=libdir")[0]
ext = Extension(
    "backplane._backplane", sources(),
    include_dirs=[f[2:] for f in cflags if f.startswith("-I")],
    library_dirs=[f[2:] for f in libs if f.startswith("-L")],
    libraries=[f[2:] for f in libs if f.startswith("-l")],
    define_macros=[("Py_LIMITED_API", LIMITED_API)],
    extra_compile_args=["-fvisibility=hidden"],  # exports PyInit only
    extra_link_args=[f"-Wl,-rpath,{libdir}", "-Wl,--enable-new-dtags"],
    py_limited_api=True)
setup(version=pkg_config("--modversion")[0], ext_modules=[ext],
      cmdclass={"bdist_wheel": AbiWheel})
