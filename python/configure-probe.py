"""What configure asks the chosen Python interpreter.

Usage: PYTHON configure-probe.py QUESTION [ARGS]

  check MIN              exit 0 and print the version if this is CPython
                         MIN (3.9, say) or later that loads .abi3.so
                         extensions; else exit 1 and print why not
  survey MIN             five lines: yes or no (check MIN, and Python.h
                         present), the version or why not, sys.prefix,
                         and numpy's and torch's versions or "no"
  include                the directories of Python.h and pyconfig.h
  sitedir PREFIX EXEC_PREFIX
                         where `make install` puts the package, written
                         with ${prefix} or ${exec_prefix}: the first
                         directory under them that this interpreter
                         searches, else the plain prefix layout; a
                         second line says "on-path" or "off-path"
  expand DIR PREFIX EXEC_PREFIX
                         DIR with ${prefix} and ${exec_prefix} expanded
  on-path DIR PREFIX EXEC_PREFIX
                         exit 0 if DIR, with ${prefix} and ${exec_prefix}
                         expanded, is on this interpreter's sys.path
  module NAME            exit 0 and print NAME's version if NAME imports
  own-sitedir            this interpreter's own package directory

It uses the standard library only, and runs under Python 2.7 too, far
enough to say that it is too old.
"""

from __future__ import print_function

import importlib
import os
import sys
import sysconfig


def check(minimum):
    wanted = tuple(int(part) for part in minimum.split("."))
    if sys.version_info[:len(wanted)] < wanted:
        print("Python %d.%d is older than %s"
              % (sys.version_info[0], sys.version_info[1], minimum))
        return 1
    if sys.implementation.name != "cpython":
        print("%s is not CPython: the extension is built for CPython's "
              "Stable ABI" % sys.implementation.name)
        return 1
    import importlib.machinery  # not in Python 2
    if ".abi3.so" not in importlib.machinery.EXTENSION_SUFFIXES:
        print("this CPython does not load .abi3.so extensions (%s)"
              % " ".join(importlib.machinery.EXTENSION_SUFFIXES))
        return 1
    print("%d.%d.%d" % sys.version_info[:3])
    return 0


def survey(minimum):
    import io
    out = io.StringIO()
    real = sys.stdout
    sys.stdout = out
    try:
        status = check(minimum)
    finally:
        sys.stdout = real
    why = out.getvalue().strip().replace("\n", " ")
    if status == 0:
        paths = sysconfig.get_paths()
        inc = paths.get("include") or ""
        if not os.path.isfile(os.path.join(inc, "Python.h")):
            status = 1
            why = ("it has no Python.h in %s (install its headers: "
                   "python3-dev)" % (inc or "its include directory"))
    print("yes" if status == 0 else "no")
    print(why)
    print(sys.prefix)
    numpy = module_version("numpy") if status == 0 else None
    print(numpy or "no")
    print((module_version("torch") if numpy else None) or "no")
    return 0


def include():
    paths = sysconfig.get_paths()
    dirs = []
    for key in ("include", "platinclude"):
        if paths.get(key) and paths[key] not in dirs:
            dirs.append(paths[key])
    print(" ".join(dirs))
    return 0


def under(path, base):
    """The rest of path after base ('' or '/...'), or None."""
    base = base.rstrip("/")
    if path == base:
        return ""
    if base and path.startswith(base + "/"):
        return path[len(base):]
    return None


def searched():
    """The package directories this interpreter searches, or would search
    once they exist, in the order it searches them: its default scheme's
    (Debian's posix_local gives /usr/local/lib/python3.X/dist-packages),
    sys.path's, site's, then the user's."""
    import site
    dirs = [sysconfig.get_paths()["platlib"], sysconfig.get_paths()["purelib"]]
    dirs += [d for d in sys.path if d and os.path.basename(d.rstrip("/"))
             in ("site-packages", "dist-packages")]
    dirs += list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if d and _on_path(d)]


def _on_path(target):
    target = os.path.realpath(target)
    for entry in sys.path:
        if entry and os.path.realpath(entry) == target:
            return True
    # A directory that does not exist yet is not on sys.path, though site
    # would add it once it did (Debian's /usr/local one, or the user's
    # ~/.local one): ask site.
    import site
    candidates = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    return any(os.path.realpath(c) == target for c in candidates)


def sitedir(prefix, exec_prefix):
    # The first directory this interpreter searches that lies under the
    # configured exec_prefix or prefix.
    for d in searched():
        for base, name in ((exec_prefix, "${exec_prefix}"),
                           (prefix, "${prefix}")):
            rest = under(d, base)
            if rest is not None:
                print(name + rest)
                print("on-path")
                return 0
    # Otherwise the plain prefix layout, with the configured prefix as its
    # base (posix_local with a base of PREFIX would give PREFIX/local/...),
    # which this interpreter does not search.
    placeholders = {"base": "${prefix}", "platbase": "${exec_prefix}"}
    print(sysconfig.get_paths("posix_prefix", vars=placeholders)["platlib"])
    print("off-path")
    return 0


def expand(path, prefix, exec_prefix):
    path = path.replace("${exec_prefix}", exec_prefix)
    return path.replace("${prefix}", prefix)


def on_path(path, prefix, exec_prefix):
    return 0 if _on_path(expand(path, prefix, exec_prefix)) else 1


def own_sitedir():
    """This interpreter's own package directory (for messages)."""
    print(sysconfig.get_paths()["platlib"])
    return 0


def module_version(name):
    """name's version if it imports, else None."""
    try:
        mod = importlib.import_module(name)
    except Exception:  # any failure to import means "not usable"
        return None
    return str(getattr(mod, "__version__", "yes"))


def module(name):
    version = module_version(name)
    if version is None:
        return 1
    print(version)
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    question, args = argv[1], argv[2:]
    if question == "check" and len(args) == 1:
        return check(args[0])
    if question == "survey" and len(args) == 1:
        return survey(args[0])
    if question == "own-sitedir" and not args:
        return own_sitedir()
    if question == "include" and not args:
        return include()
    if question == "sitedir" and len(args) == 2:
        return sitedir(*args)
    if question == "expand" and len(args) == 3:
        print(expand(*args))
        return 0
    if question == "on-path" and len(args) == 3:
        return on_path(*args)
    if question == "module" and len(args) == 1:
        return module(args[0])
    print("configure-probe.py: unknown question: %s" % " ".join(argv[1:]),
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
