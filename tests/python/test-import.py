"""The staged backplane package imports, over the build tree's library.

`import backplane` finds the package that `make` staged in python/stage,
its _backplane extension loads libbackplane from the build tree (not an
installed one), and backplane.version() is the version this tree was
configured with, as bp-info reports it too.  Run through
tests/python/run.sh; prints TAP.
"""

import os
import subprocess
import sys


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = False

    def ok(self, cond, what, details=()):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, what))
        if not cond:
            self.failed = True
            for line in details:
                print("#   %s" % line)
        return cond


def mapped_libbackplane():
    """The paths of every libbackplane mapped into this process."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) == 6 and "/libbackplane.so" in fields[5]:
                paths.add(fields[5].strip())
    return sorted(paths)


def bp_info_version(builddir):
    """The version in bp-info's first line: Backplane VERSION (ABI M.N)."""
    out = subprocess.run([os.path.join(builddir, "tools", "bp-info"),
                          "--no-discover"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    first = out.stdout.splitlines()[0] if out.stdout else ""
    words = first.split()
    if out.returncode != 0 or len(words) < 2 or words[0] != "Backplane":
        return None, "bp-info --no-discover: status %d, first line %r, %s" % (
            out.returncode, first, out.stderr.strip())
    return words[1], first


def main():
    builddir = os.environ["BP_TEST_BUILDDIR"]
    stage = os.path.join(builddir, "python", "stage", "backplane")
    expected = os.environ["BP_TEST_VERSION"]
    t = Tap()
    print("1..6")
    try:
        import backplane
    except ImportError as e:
        t.ok(False, "import backplane", [str(e), "sys.path: %s" % sys.path])
        print("Bail out! backplane does not import")
        return 1
    t.ok(True, "import backplane")
    where = os.path.dirname(os.path.abspath(backplane.__file__))
    t.ok(where == stage, "the package is the staged one",
         ["imported from %s, staged in %s" % (where, stage)])
    ext = backplane._backplane.__file__
    t.ok(os.path.dirname(ext) == stage and ext.endswith(".abi3.so"),
         "its extension is the staged _backplane.abi3.so", [ext])
    libs = mapped_libbackplane()
    built = os.path.realpath(os.path.join(builddir, "host", ".libs"))
    t.ok(len(libs) == 1 and os.path.dirname(os.path.realpath(libs[0]))
         == built, "libbackplane is the build tree's",
         ["mapped: %s" % (" ".join(libs) or "none"), "expected in %s" % built])
    version = backplane.version()
    t.ok(version == expected, "backplane.version() is %s, the configured "
         "version" % expected, ["got %r" % version])
    info, detail = bp_info_version(builddir)
    t.ok(info == version, "bp-info reports the same version",
         ["bp-info: %s; backplane.version(): %s" % (detail, version)])
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
