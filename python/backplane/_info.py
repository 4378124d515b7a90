"""python3 -m backplane: describes the Backplane host as bp-info does.

    python3 -m backplane [--json] [--no-discover] [PLUGIN.so ...]

prints what ``bp-info --no-isolate`` prints for the same arguments, in the
same text layout or as the same JSON document: the version and ABI, the
plugin search path, every plugin (and why any failed), the devices, and
the operators with their kernels.  Both print what libbackplane's
bp_describe() writes, so they cannot differ.  The plugins named are loaded
first; then, unless --no-discover is given, those in BP_PLUGIN_PATH and
the installed plugin directory.

Plugins load in this process.  bp-info's --isolate, which first loads each
plugin in a child process so that one that crashes or hangs is listed and
left out, is bp-info's alone; --no-isolate is accepted and changes nothing.
"""

import os
import sys

from backplane import _backplane

USAGE = """\
usage: python3 -m backplane [--json] [--no-discover] [PLUGIN.so ...]
Describes the Backplane host as bp-info --no-isolate does (--no-isolate is
accepted), as text or with --json as JSON: loads the plugins named, then,
unless --no-discover, those in BP_PLUGIN_PATH and the installed plugin
directory, all in this process; bp-info's --isolate and --timeout have no
equivalent here.  Exit status: 0 (a plugin that failed to load is listed
with the reason), 1 when discovery fails, 2 for a usage error.
"""


def _usage_error(message):
    sys.stderr.write("backplane: %s\n%s" % (message, USAGE))
    return 2


def main(argv=None):
    """Runs the command with argv (sys.argv[1:] by default); returns the
    exit status."""
    args = sys.argv[1:] if argv is None else argv
    as_json, discover, files = False, True, []
    for a in args:
        if a == "--json":
            as_json = True
        elif a == "--no-discover":
            discover = False
        elif a == "--no-isolate":
            pass  # what this command always does
        elif a in ("--help", "-h"):
            sys.stdout.write(USAGE)
            return 0
        elif a in ("--isolate", "--timeout"):
            return _usage_error(
                "%s is bp-info's: here plugins load in this process (run "
                "bp-info %s)" % (a, a))
        elif a.startswith("-"):
            return _usage_error("unknown option '%s'" % _backplane.escape(a))
        else:
            files.append(a)
    for path in files:
        try:
            _backplane.load(path)
        except _backplane.Error:
            pass  # the host records the failure; the listing says why
    if discover:
        try:
            _backplane.discover()
        except _backplane.Error as e:
            sys.stderr.write("backplane: %s\n" % _backplane.escape(str(e)))
            return 1
    text = _backplane.describe(as_json)
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        # Quietly, as bp-info ends on SIGPIPE; no second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
