"""The staged _backplane extension keeps to CPython's Stable ABI.

Every Py* and _Py* symbol the module imports must be in the Stable ABI
(python/stable_abi.txt) since the version that Py_LIMITED_API targets, so
that the one abi3 binary loads in every CPython from that version on.  The
module's file name carries the abi3 tag, and it exports its init function
and nothing else.  Run through tests/python/run.sh; prints TAP.
"""

import os
import subprocess
import sys

# Symbols that the link editor or the C runtime may define in any shared
# object; not the module's own.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}
# Feature macros of the Stable ABI that every Linux CPython defines.
LINUX_FEATURES = {"HAVE_FORK", "PY_HAVE_THREAD_NATIVE_ID"}


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


def version_text(v):
    return "%d.%d" % v


def parse_version(text):
    return tuple(int(part) for part in text.split("."))


def limited_api_target():
    hexversion = int(os.environ.get("BP_PY_LIMITED_API", "0x03090000"), 16)
    return (hexversion >> 24, (hexversion >> 16) & 0xFF)


def load_stable_abi(path):
    """{name: (kind, added, flags)} from python/stable_abi.txt."""
    table = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) < 3:
                raise ValueError("%s:%d: expected NAME KIND ADDED"
                                 % (path, number))
            name, kind, added = line[:3]
            table[name] = (kind, parse_version(added), set(line[3:]))
    return table


def dynamic_symbols(path, which):
    """The names nm -D lists with --defined-only or --undefined-only."""
    out = subprocess.run(["nm", "-D", "--" + which, path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    if out.returncode != 0:
        raise RuntimeError("nm -D --%s %s: %s" % (which, path,
                                                  out.stderr.strip()))
    names = []
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields:
            names.append(fields[-1].split("@", 1)[0])
    return names


def judge(name, entry, target):
    """None if the module may import name, else why not."""
    if entry is None:
        return "%s is not in CPython's Stable ABI" % name
    kind, added, flags = entry
    if added > target:
        return ("%s is in the Stable ABI only from %s, the extension "
                "targets %s" % (name, version_text(added),
                                version_text(target)))
    for flag in flags:
        if flag.startswith("ifdef=") and flag[6:] not in LINUX_FEATURES:
            return ("%s is in the Stable ABI only where %s is defined"
                    % (name, flag[6:]))
    return None


def main():
    builddir = os.environ["BP_TEST_BUILDDIR"]
    srcdir = os.environ["BP_TEST_SRCDIR"]
    # the staged module, or another build of it (test-pip.sh: the wheel's)
    module = os.environ.get("BP_TEST_ABI_MODULE") or os.path.join(
        builddir, "python", "stage", "backplane", "_backplane.abi3.so")
    table = load_stable_abi(os.path.join(srcdir, "python", "stable_abi.txt"))
    target = limited_api_target()
    imports = sorted(set(s for s in dynamic_symbols(module, "undefined-only")
                         if s.startswith(("Py", "_Py"))))
    exports = sorted(set(dynamic_symbols(module, "defined-only"))
                     - LINKER_SYMBOLS)

    t = Tap()
    print("1..%d" % (4 + len(imports)))
    print("# %s, Limited API %s, %d Stable ABI symbols listed"
          % (module, version_text(target), len(table)))
    t.ok(len(table) > 500 and "PyModule_Create2" in table,
         "python/stable_abi.txt lists the Stable ABI (%d symbols)"
         % len(table))
    t.ok(os.path.basename(os.path.realpath(module)).endswith(".abi3.so"),
         "the module's file name ends in .abi3.so")
    t.ok(exports == ["PyInit__backplane"],
         "the module exports PyInit__backplane and nothing else",
         ["exports: %s" % " ".join(exports)])
    t.ok(len(imports) > 0, "the module imports Py symbols (%d)"
         % len(imports))
    for name in imports:
        entry = table.get(name)
        why = judge(name, entry, target)
        if why is None:
            kind, added, flags = entry
            note = " (ABI only: reached through a macro)" \
                if "abi_only" in flags else ""
            t.ok(True, "%s: %s in the Stable ABI since %s%s"
                 % (name, kind, version_text(added), note))
        else:
            t.ok(False, why)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
