"""A tiny TAP producer for the Python tests.

    import taplib as t
    t.ok(1 + 1 == 2, "addition")
    t.is_eq(len("ab"), 2, "len")
    t.check_raises(ValueError, int, "x", match="invalid literal")
    np = t.require("numpy")   # or skips the file: "1..0 # SKIP numpy is ..."
    t.done()            # prints the plan; exits 1 if anything failed

A test point may carry `todo="why"`: it is reported `# TODO why`, and its
failure does not fail the file (the TAP driver counts it as expected).
"""

import os
import re
import sys
import traceback

_count = 0
_failed = 0


def diag(msg):
    """Writes a diagnostic: '# ' before each line."""
    for line in str(msg).splitlines() or [""]:
        print("# " + line)
    sys.stdout.flush()


def ok(cond, desc, diagnostic=None, todo=None):
    """Reports one test point; returns bool(cond)."""
    global _count, _failed
    _count += 1
    desc = str(desc).replace("#", "\\#").replace("\n", " ")
    line = f"{'ok' if cond else 'not ok'} {_count} - {desc}"
    if todo:
        line += f" # TODO {todo}"
    print(line)
    if not cond:
        if not todo:
            _failed += 1
        if diagnostic is not None:
            diag(diagnostic)
    sys.stdout.flush()
    return bool(cond)


def is_eq(got, want, desc, todo=None):
    """ok(got == want) that shows both values when they differ."""
    return ok(got == want, desc, f"got:  {got!r}\nwant: {want!r}", todo)


def skip(desc, reason):
    """Reports a test point that was not run, and why."""
    global _count
    _count += 1
    print(f"ok {_count} - {desc} # SKIP {reason}")
    sys.stdout.flush()


def child_env():
    """The environment for a Python child process that imports backplane:
    under ThreadSanitizer the runtime must be preloaded into it too
    (tests/python/run.sh keeps LD_PRELOAD out of the test's environment,
    because the shells of libtool wrappers do not survive it)."""
    env = dict(os.environ)
    preload = env.get("BP_TEST_PRELOAD")
    if preload and "LD_PRELOAD" not in env:
        env["LD_PRELOAD"] = preload
    return env


def bail_out(reason):
    """Stops the file as a failure (TAP "Bail out!")."""
    print(f"Bail out! {reason}")
    sys.exit(1)


def skip_all(reason):
    """Skips the whole file: only valid before any test point."""
    print(f"1..0 # SKIP {reason}")
    sys.exit(0)


def importable(name):
    """The module `name` if this interpreter can import it, else None: the
    one test every Python test makes for an optional dependency."""
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def not_importable(name):
    """Why a test needing module `name` does not run."""
    return f"{name} is not importable by {sys.executable}"


def require(*names):
    """Imports each module of `names` and returns the first; the first one
    that does not import skips the whole file (only valid before any test
    point): `1..0 # SKIP numpy is not importable by /usr/bin/python3`."""
    mods = []
    for name in names:
        mod = importable(name)
        if mod is None:
            skip_all(not_importable(name))
        mods.append(mod)
    return mods[0] if len(mods) == 1 else tuple(mods)


def check_raises(exc_type, fn, *args, match=None, desc=None, todo=None,
                 **kwargs):
    """Calls fn(*args, **kwargs); passes when it raises exc_type (exactly
    that class or a subclass) whose message matches the regex `match`
    (re.search).  Returns the exception, or None."""
    desc = desc or f"{getattr(fn, '__name__', fn)} raises {exc_type.__name__}"
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        msg = str(e)
        good = match is None or re.search(match, msg) is not None
        ok(good, desc, f"message {msg!r} does not match {match!r}", todo)
        return e
    except Exception as e:  # noqa: BLE001 (reported, not swallowed)
        ok(False, desc, f"raised {type(e).__name__}: {e}\n"
           + traceback.format_exc(), todo)
        return None
    ok(False, desc, f"no exception; expected {exc_type.__name__}", todo)
    return None


def done():
    """Prints the plan and exits: status 1 when a test point failed."""
    print(f"1..{_count}")
    sys.stdout.flush()
    sys.exit(1 if _failed else 0)
