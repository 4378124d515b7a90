"""python3 -m backplane prints what bp-info --no-isolate prints.

For the same arguments, the text and the JSON of the two are compared:
with the CPU plugin; with test plugins that fail to load (no entry point,
a newer ABI major, an init that refuses, a setup that fails, a file that
is not there); with the plugin whose strings carry terminal escapes
(tests/plugins/escapes.c); with a path that holds control characters and
bytes that are not UTF-8; and through discovery.  Then the usage errors
and --help.  Both commands print what libbackplane's bp_describe() writes;
this checks what each does around it (arguments, loads, discovery, exit
statuses).  Run through tests/python/run.sh; prints TAP.
"""

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

UNDEFINED = b"      (not defined: its plugin was unloaded)"


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
        sys.stdout.flush()
        return cond


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def details(self, who):
        return ["%s: exit status %s, stderr %r"
                % (who, self.rc, self.err[-400:])]


class Runner:
    def __init__(self, tmp):
        self.tmp = tmp
        self.bp_info = os.path.join(os.environ["BP_TEST_BUILDDIR"], "tools",
                                    "bp-info")
        self.empty = os.path.join(tmp, "empty")
        os.mkdir(self.empty)

    def env(self, plugin_path, python):
        env = dict(os.environ)
        env["BP_PLUGIN_PATH"] = plugin_path or self.empty
        # Under a sanitizer the interpreter needs its runtime preloaded
        # (tests/python/run.sh); bp-info, a libtool wrapper script, must
        # not get a ThreadSanitizer runtime that way.
        preload = os.environ.get("BP_TEST_PRELOAD")
        if python and preload and "LD_PRELOAD" not in env:
            env["LD_PRELOAD"] = preload
        return env

    def run(self, cmd, plugin_path, python):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=self.tmp,
                               env=self.env(plugin_path, python), timeout=120)
        except subprocess.TimeoutExpired:
            return Result("timed out after 120 s", b"", b"")
        return Result(p.returncode, p.stdout, p.stderr)

    def py(self, args, plugin_path=None):
        return self.run([sys.executable, "-m", "backplane"] + args,
                        plugin_path, True)

    def bp(self, args, plugin_path=None):
        return self.run([self.bp_info, "--no-isolate"] + args, plugin_path,
                        False)


def text_diff(a, b, a_name="bp-info", b_name="python -m backplane"):
    lines = difflib.unified_diff(
        a.decode("utf-8", "backslashreplace").splitlines(),
        b.decode("utf-8", "backslashreplace").splitlines(), a_name, b_name,
        lineterm="", n=1)
    return [ascii(line)[1:-1] for line in list(lines)[:30]]


def same_run(t, py, bp, what):
    """Both ran and exited 0 with nothing on stderr."""
    good = py.rc == 0 and bp.rc == 0 and not py.err and not bp.err
    if not good:
        t.ok(False, what, py.details("python") + bp.details("bp-info"))
    return good


def same_text(t, py, bp, what):
    if same_run(t, py, bp, what):
        t.ok(py.out == bp.out, what, text_diff(bp.out, py.out))


def same_json(t, py, bp, what, normalise=None):
    if not same_run(t, py, bp, what):
        return
    try:
        docs = [json.loads(r.out) for r in (py, bp)]
    except ValueError as e:
        t.ok(False, what, ["not JSON: %s" % e])
        return
    if normalise:
        docs = [normalise(d) for d in docs]
    dumps = [json.dumps(d, indent=1, sort_keys=True).encode() for d in docs]
    t.ok(docs[0] == docs[1], what, text_diff(dumps[1], dumps[0]))


def main():
    cpu = os.environ["BP_TEST_CPU_PLUGIN"]
    plugin_dir = os.environ["BP_TEST_PLUGIN_DIR"]

    def plugin(name):
        return os.path.join(plugin_dir, name + ".so")

    t = Tap()
    print("1..21")
    tmp = tempfile.mkdtemp(prefix="bp-test-cli-")
    try:
        r = Runner(tmp)

        args = ["--no-discover", cpu]
        same_text(t, r.py(args), r.bp(args), "the CPU plugin: the same text")
        args = ["--json", "--no-discover", cpu]
        py, bp = r.py(args), r.bp(args)
        same_json(t, py, bp, "the CPU plugin: the same JSON document")
        same_text(t, py, bp, "the CPU plugin: the same JSON text")

        missing = os.path.join(tmp, "missing.so")
        failing = [plugin(n) for n in ("no_entry", "major_plus",
                                       "init_fails", "impl_nodef")]
        args = ["--no-discover", cpu] + failing + [missing]
        py = r.py(args)
        same_text(t, py, r.bp(args), "plugins that fail to load: the same "
                  "text")
        blocks = py.out.split(b"\n  /")
        nfailed = sum(b"\n      state       failed\n" in b
                      and b"\n      error       BP_ERR_" in b for b in blocks)
        t.ok(nfailed == 5, "... which lists each of the 5 as failed, with "
             "the reason", ["%d listed so" % nfailed]
             + text_diff(b"", py.out[:2000]))
        args = ["--json"] + args
        same_json(t, r.py(args), r.bp(args), "plugins that fail to load: "
                  "the same JSON document")

        args = ["--no-discover", cpu, plugin("setup_fails")]
        bp = r.bp(args)
        py = r.py(args)
        t.ok(UNDEFINED in bp.out and UNDEFINED in py.out, "setup_fails "
             "leaves an undefined op, which both list",
             bp.details("bp-info") + py.details("python"))
        same_text(t, py, bp, "a plugin whose setup fails: the same text")
        args = ["--json"] + args
        same_json(t, r.py(args), r.bp(args), "a plugin whose setup fails: "
                  "the same JSON document")

        args = ["--no-discover", cpu, plugin("escapes")]
        py = r.py(args)
        same_text(t, py, r.bp(args), "strings with terminal escapes: the "
                  "same text")
        raw = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", py.out)
        t.ok(not raw and b"(Vendor \\x1b[31mred\\x1b[0m " in py.out
             and b"\\nok 999 - forged\\n1..999\\r\\u009b1m" in py.out,
             "... each shown escaped, none sent raw",
             ["raw: %r" % raw[:5]])
        args = ["--json"] + args
        py, bp = r.py(args), r.bp(args)
        same_json(t, py, bp, "strings with terminal escapes: the same JSON "
                  "document")
        same_text(t, py, bp, "strings with terminal escapes: the same JSON "
                  "text")

        odd = os.path.join(tmp, "a").encode() + b"\x1b[2J\xfe\xc2\x9b\t.so"
        args = ["--no-discover", odd]
        same_text(t, r.py(args), r.bp(args), "a path with control "
                  "characters and a byte that is not UTF-8: the same text")
        args = ["--json"] + args
        same_text(t, r.py(args), r.bp(args), "... and the same JSON text")

        found = os.path.join(tmp, "found")
        os.mkdir(found)
        os.symlink(cpu, os.path.join(found, "cpu.so"))
        os.symlink(plugin("no_entry"), os.path.join(found, "no_entry.so"))
        py = r.py([], found)
        same_text(t, py, r.bp([], found), "plugins found in BP_PLUGIN_PATH: "
                  "the same text")
        t.ok(py.out.count(b"      found by    BP_PLUGIN_PATH\n") == 2,
             "... both found there", text_diff(b"", py.out[:1500]))

        args = ["--no-discover", cpu]
        a, b = r.py(["--no-isolate"] + args), r.py(args)
        t.ok(a.rc == 0 and a.out == b.out and a.out, "--no-isolate is "
             "accepted and changes nothing", a.details("--no-isolate"))

        py, bp = r.py(["--bogus", cpu]), r.bp(["--bogus", cpu])
        t.ok(py.rc == 2 and bp.rc == 2 and not py.out
             and py.err.startswith(b"backplane: unknown option '--bogus'\n"
                                   b"usage: "),
             "an unknown option: exit status 2, as bp-info's, and the usage",
             py.details("python") + bp.details("bp-info"))
        py = r.py(["--isolate", cpu])
        t.ok(py.rc == 2 and not py.out and b"bp-info" in py.err
             and b"\nusage: " in py.err, "--isolate is a usage error that "
             "names bp-info", py.details("python"))
        results = [r.py([h]) for h in ("--help", "-h")]
        usage = b"usage: python3 -m backplane [--json] [--no-discover]"
        t.ok(all(h.rc == 0 and h.out.startswith(usage) and not h.err
                 for h in results),
             "--help and -h print the usage, exit status 0",
             results[0].details("--help") + results[1].details("-h"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
