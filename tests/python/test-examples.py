"""The Python examples (examples/python/) run and say PASS.

Each example runs in its own interpreter (sys.executable), with this
process's environment: PYTHONPATH, LD_LIBRARY_PATH and BP_TEST_CPU_PLUGIN,
which the examples read, come from tests/python/run.sh.  numpy_only.py
runs a second time with torch made unimportable, which proves that it
needs NumPy alone.
"""

import os
import re
import subprocess
import sys

import taplib as t

SRCDIR = os.environ.get("BP_TEST_SRCDIR", ".")
EXAMPLES = os.path.join(SRCDIR, "examples", "python")
TIMEOUT = 300

# Runs a script with `import torch` failing, as where torch is missing.
NO_TORCH = """
import runpy, sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked by test-examples.py")
sys.meta_path.insert(0, NoTorch())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run(args):
    proc = subprocess.run([sys.executable] + args, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False,
                          env=t.child_env())
    return proc.returncode, proc.stdout, proc.stdout + proc.stderr


def check_example(name, verdict, prefix_args=()):
    path = os.path.join(EXAMPLES, name)
    rc, out, both = run(list(prefix_args) + [path])
    what = name + (" without torch" if prefix_args else "")
    t.ok(rc == 0, f"{what} exits with status 0", f"status {rc}\n{both}")
    lines = out.splitlines()
    good = bool(lines) and lines[-1].startswith(verdict) and not any(
        line.startswith("FAIL") for line in lines)
    t.ok(good, f"{what} prints '{verdict}' and no FAIL", both)
    return out


def main():
    if not os.environ.get("BP_TEST_CPU_PLUGIN"):
        t.skip_all("BP_TEST_CPU_PLUGIN is not set")
    if t.importable("numpy") is None:
        t.skip("numpy_only.py", t.not_importable("numpy"))
    else:
        check_example("numpy_only.py", "PASS: the MLP's output matches")
        check_example("numpy_only.py", "PASS", ["-c", NO_TORCH])
    if t.importable("torch") is None:
        t.skip("transformer_block.py", t.not_importable("torch"))
    else:
        out = check_example("transformer_block.py", "PASS: the largest")
        diff = re.search(r"^max abs difference: (\S+)$", out, re.M)
        tol = re.search(r"^tolerance: atol (\S+) ", out, re.M)
        t.ok(diff is not None and tol is not None
             and float(diff.group(1)) <= float(tol.group(1)),
             "transformer_block.py's largest difference is within atol", out)
    t.done()


if __name__ == "__main__":
    main()
