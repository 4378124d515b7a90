"""python3 -m backplane: describes the Backplane host as bp-info does.

    python3 -m backplane [--json] [--no-discover] [PLUGIN.so ...]

prints what ``bp-info --no-isolate`` prints for the same arguments, in the
same text layout or as the same JSON document: the version and ABI, the
plugin search path, every plugin (and why any failed), the devices, and
the operators with their kernels.  The plugins named are loaded first;
then, unless --no-discover is given, those in BP_PLUGIN_PATH and the
installed plugin directory.

Plugins load in this process.  bp-info's --isolate, which first loads each
plugin in a child process so that one that crashes or hangs is listed and
left out, is bp-info's alone; --no-isolate is accepted and changes nothing.

Text from plugins is printed escaped as bp-info escapes it
(tools/termsafe.h): newline, carriage return and tab as \\n \\r \\t, other
control characters and DEL as \\xNN, the C1 controls as \\u0080..\\u009f,
and each byte that is not well-formed UTF-8 as \\xNN.

What the extension does not report is left out: operators that are no
longer defined (their plugin failed or was unloaded) and device types that
have no devices.
"""

import os
import re
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

# bp_op_info.flags (sdk/include/backplane/plugin.h).
OP_NONDETERMINISTIC = 1 << 0
OP_MIXED_DEVICES = 1 << 1

KIND_NAMES = {
    "boxed": "boxed",
    "unboxed": "unboxed (libffi)",
    "unboxed-fast": "unboxed (fast path)",
    "structured": "structured",
}

# A byte that is not UTF-8, as the extension's 'backslashreplace' writes
# it into plugin, device and error strings.
_REPLACED_BYTE = re.compile(r"\\x[89a-f][0-9a-f]")


def _chars(s):
    """s (str, bytes or None) as a str whose stray bytes are the lone
    surrogates U+DC80..U+DCFF, one per byte, as 'surrogateescape' makes
    them; None reads as "(null)", as termsafe() reads NULL."""
    if s is None:
        return "(null)"
    if isinstance(s, str):
        try:
            s = s.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            s = s.encode("utf-8", "backslashreplace")
    return s.decode("utf-8", "surrogateescape")


def termsafe(s):
    """s escaped for a terminal, byte for byte as tools/termsafe.c does."""
    out = []
    for ch in _chars(s):
        c = ord(ch)
        if ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif c < 0x20 or c == 0x7F:
            out.append("\\x%02x" % c)
        elif 0xDC80 <= c <= 0xDCFF:
            out.append("\\x%02x" % (c - 0xDC00))
        elif 0x80 <= c <= 0x9F:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)


def json_str(s, replaced=False):
    """s as a JSON string, as bp-info writes one: only '"', '\\' and the C0
    controls escaped, each byte that is not UTF-8 as \\ufffd; None as null.

    replaced: s came through the extension's 'backslashreplace', so a
    "\\xNN" in it (NN from 80) stands for such a byte.  This reads it so;
    the rare text that really holds a backslash, an x and two such digits
    is written as U+FFFD too."""
    if s is None:
        return "null"
    if replaced and isinstance(s, str):
        s = _REPLACED_BYTE.sub(
            lambda m: chr(0xDC00 + int(m.group()[2:], 16)), s)
    out = ['"']
    for ch in _chars(s):
        c = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif c < 0x20:
            out.append("\\u%04x" % c)
        elif 0xDC80 <= c <= 0xDCFF:
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _bool(b):
    return "true" if b else "false"


def _ljust(s, width):
    """s padded to width bytes of UTF-8, as printf's %-Ns pads."""
    return s + " " * max(0, width - len(s.encode("utf-8", "surrogateescape")))


# ---- the host, as dicts -----------------------------------------------------

def _plugins():
    found = []
    for i in range(_backplane.plugin_count()):
        try:
            found.append(_backplane.plugin_info(i))
        except _backplane.Error:
            continue  # bp-info leaves out a plugin it cannot describe
    return found


def _ops():
    found = []
    for name in _backplane.op_names(True):
        try:
            op = _backplane.Op(name)
            found.append((name, op.info, op.kernels))
        except _backplane.Error:
            continue
    return found


def _type_name(device):
    """The device type's name in a label such as 'cpu:0'."""
    return device["device"].rpartition(":")[0]


def _device_lines(d):
    lines = ["  %s:%d  (code %d)  %s\n" % (
        termsafe(_type_name(d)), d["index"], d["type"], termsafe(d["name"]))]
    # Zero means "not reported" for each property.
    if d["total_memory"]:
        lines.append("      memory         %.1f GiB\n"
                     % (d["total_memory"] / (1 << 30)))
    if d["compute_units"]:
        lines.append("      compute units  %d\n" % d["compute_units"])
    if d["arch"][0]:
        lines.append("      architecture   %d.%d\n" % tuple(d["arch"]))
    return lines


# ---- text -------------------------------------------------------------------

def _text(env):
    major, minor = _backplane.abi_version()
    w = ["Backplane %s (ABI %d.%d)\n\n" % (_backplane.version(), major, minor),
         "Plugin search path:\n",
         "  BP_PLUGIN_PATH     %s\n" % (termsafe(env) if env else "(not set)"),
         "  installed          %s\n" % termsafe(_backplane.plugin_dir())]
    plugins = _plugins()
    w.append("\nPlugins: %d\n" % len(plugins))
    for p in plugins:
        w.append("  %s\n" % termsafe(p["path"]))
        w.append("      found by    %s\n" % p["origin"])
        w.append("      state       %s\n" % p["state"])
        if p["name"] is not None:
            w.append("      name        %s %s (%s), ABI %d.%d, op set %d\n" % (
                termsafe(p["name"]), termsafe(p["version"]),
                termsafe(p["vendor"]) if p["vendor"] else "no vendor",
                p["abi"][0], p["abi"][1], p["op_set_version"]))
        if p["state"] == "failed":
            w.append("      error       %s: %s\n" % (p["status"],
                                                     termsafe(p["error"])))
        elif p["error"]:
            w.append("      note        %s\n" % termsafe(p["error"]))
    w.append("\nDevices:\n")
    devices = _backplane.devices()
    for code, type_name, count in _backplane.device_types():
        if count == 0:
            w.append("  %s  (code %d)  no devices\n" % (termsafe(type_name),
                                                        code))
        for d in devices:
            if d["type"] == code:
                w.extend(_device_lines(d))
    ops = _ops()
    w.append("\nOperators: %d\n" % len(ops))
    for name, info, kernels in ops:
        w.append("  %s\n" % termsafe(info["schema"] or name))
        if not info["defined"]:
            w.append("      (not defined: its plugin was unloaded)\n")
        if info["doc"]:
            w.append("      %s\n" % termsafe(info["doc"]))
        w.append("      defined by %s; meta function: %s%s%s%s\n" % (
            termsafe(info["owner"]), "yes" if info["has_meta"] else "no",
            "; composite kernel" if info["has_composite"] else "",
            "; nondeterministic"
            if info["flags"] & OP_NONDETERMINISTIC else "",
            "; mixed devices" if info["flags"] & OP_MIXED_DEVICES else ""))
        for k in kernels:
            state = ("disabled" if not k["enabled"]
                     else "active" if k["active"] else "next in line")
            dtypes = ("all the op allows" if k["dtypes"] is None
                      else ", ".join(k["dtypes"]))
            w.append("      kernel %s %s from %s (priority %d, %s); "
                     "dtypes: %s\n" % (
                         _ljust(termsafe(k["device"]), 10),
                         _ljust(KIND_NAMES.get(k["kind"], "?"), 20),
                         termsafe(k["plugin"]), k["priority"], state, dtypes))
    return "".join(w)


# ---- JSON -------------------------------------------------------------------

def _json(env):
    major, minor = _backplane.abi_version()
    w = ['{\n  "version": %s' % json_str(_backplane.version()),
         ',\n  "abi": "%d.%d"' % (major, minor),
         ',\n  "plugin_path": %s' % json_str(env or b""),
         ',\n  "plugin_dir": %s' % json_str(_backplane.plugin_dir()),
         ',\n  "plugins": [']
    plugins = _plugins()
    for i, p in enumerate(plugins):
        w.append('%s\n    {"path": %s, "origin": "%s", "state": "%s"' % (
            "," if i else "", json_str(p["path"], True), p["origin"],
            p["state"]))
        w.append(', "name": %s, "vendor": %s, "version": %s' % (
            json_str(p["name"], True), json_str(p["vendor"], True),
            json_str(p["version"], True)))
        w.append(', "abi": "%d.%d", "op_set_version": %d, "status": "%s"' % (
            p["abi"][0], p["abi"][1], p["op_set_version"], p["status"]))
        w.append(', "error": %s, "crashed": false}'
                 % json_str(p["error"], True))
    w.append("%s]" % ("\n  " if plugins else ""))
    w.append(',\n  "devices": [')
    devices = _backplane.devices()
    for i, d in enumerate(devices):
        w.append('%s\n    {"type": %s, "code": %d, "index": %d, "name": %s'
                 % ("," if i else "", json_str(_type_name(d)), d["type"],
                    d["index"], json_str(d["name"], True)))
        w.append(', "total_memory": %d, "compute_units": %d, '
                 '"arch": "%d.%d"}' % (d["total_memory"], d["compute_units"],
                                       d["arch"][0], d["arch"][1]))
    w.append("%s]" % ("\n  " if devices else ""))
    w.append(',\n  "ops": [')
    ops = _ops()
    for i, (name, info, kernels) in enumerate(ops):
        w.append('%s\n    {"name": %s, "schema": %s, "owner": %s, '
                 '"doc": %s' % ("," if i else "", json_str(name),
                                json_str(info["schema"] or None),
                                json_str(info["owner"]),
                                json_str(info["doc"])))
        w.append(', "nondeterministic": %s, "mixed_devices": %s' % (
            _bool(info["flags"] & OP_NONDETERMINISTIC),
            _bool(info["flags"] & OP_MIXED_DEVICES)))
        w.append(', "defined": %s, "meta": %s, "composite": %s, '
                 '"kernels": [' % (_bool(info["defined"]),
                                   _bool(info["has_meta"]),
                                   _bool(info["has_composite"])))
        for j, k in enumerate(kernels):
            dtypes = ("null" if k["dtypes"] is None else "[%s]" % ", ".join(
                json_str(t) for t in k["dtypes"]))
            w.append('%s{"device": %s, "kind": "%s", "plugin": %s, '
                     '"enabled": %s, "priority": %d, "active": %s, '
                     '"dtypes": %s}' % (
                         ", " if j else "", json_str(k["device"]),
                         KIND_NAMES.get(k["kind"], "?"), json_str(k["plugin"]),
                         _bool(k["enabled"]), k["priority"],
                         _bool(k["active"]), dtypes))
        w.append("]}")
    w.append("%s]\n}\n" % ("\n  " if ops else ""))
    return "".join(w)


# ---- the command ------------------------------------------------------------

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
            return _usage_error("unknown option '%s'" % termsafe(a))
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
            sys.stderr.write("backplane: %s\n" % termsafe(str(e)))
            return 1
    # The variable's bytes, as the host reads them.
    env = os.environb.get(b"BP_PLUGIN_PATH") if os.name == "posix" else (
        os.environ.get("BP_PLUGIN_PATH"))
    text = _json(env) if as_json else _text(env)
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        # Quietly, as bp-info ends on SIGPIPE; no second error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
