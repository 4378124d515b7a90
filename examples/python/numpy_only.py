"""Backplane from NumPy alone: a small MLP's forward pass, no torch.

    python3 numpy_only.py [PLUGIN.so]

The plugin comes from the command line, else from $BP_TEST_CPU_PLUGIN,
else from discovery.  Ops take NumPy arrays as they are (no copy), return
backplane.Tensor objects that NumPy reads in place, can write into an
array given as `out`, and raise exceptions that name the op and argument.
Each check prints a line; the script exits with status 1 if one fails.
"""

import math
import os
import sys

import numpy as np

import backplane

# docs/op-set.md: float32 ops that accumulate n terms are within
# rtol 1.3e-6 * sqrt(n) and atol 1e-5; three of them (two matmuls, n <= 64,
# and softmax) lie on each value's path, so their bounds add up.
RTOL, ATOL = 3 * 1.3e-6 * math.sqrt(64), 3 * 1e-5

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def load_plugin():
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "BP_TEST_CPU_PLUGIN")
    if path:
        return backplane.load(path)
    if not backplane.discover():
        sys.exit("no plugin: pass a plugin's path, or install Backplane")


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def main():
    load_plugin()
    core = backplane.ops.core
    rng = np.random.default_rng(0)
    x, w1, b1, w2, b2 = (rng.standard_normal(shape, np.float32) for shape
                         in [(8, 32), (32, 64), 64, (64, 10), 10])
    w1, w2 = w1 / np.float32(32 ** 0.5), w2 / np.float32(8)

    # The forward pass: NumPy arrays in, backplane.Tensor objects out.
    h = core.gelu(core.add(core.matmul(x, w1), b1), approximate="tanh")
    probs = core.softmax(core.add(core.matmul(h, w2), b2), -1)

    # The same in float64 NumPy.
    f = [a.astype(np.float64) for a in (x, w1, b1, w2, b2)]
    logits = gelu_tanh(f[0] @ f[1] + f[2]) @ f[3] + f[4]
    e = np.exp(logits - logits.max(-1, keepdims=True))
    ref = e / e.sum(-1, keepdims=True)

    p = probs.numpy()                       # a view of the result, no copy
    check(p.ctypes.data == probs.data_ptr, ".numpy() shares the result")
    err = np.abs(p - ref).max()
    check(np.allclose(p, ref, rtol=RTOL, atol=ATOL),
          f"probabilities match NumPy (max abs difference {err:.2g})")

    # out=: the result is written into an existing array, which comes back.
    out = np.zeros((8, 10), np.float32)
    got = core.add.out(core.matmul(h, w2), b2, out=out)
    check(got is out, "add.out returns the very array given as out")
    check(np.allclose(out, logits, rtol=RTOL, atol=ATOL), "out holds x@w+b")
    # A contiguous array passes through untouched: contiguous() returns it.
    check(core.contiguous(x) is x, "contiguous(x) is x (same memory)")

    # Errors: one class per status, and a Python built-in base as well.
    try:
        core.matmul(x, w2)                  # [8, 32] @ [64, 10]
        check(False, "a shape mismatch raises")
    except backplane.ShapeError as exc:
        check(isinstance(exc, ValueError), f"ShapeError: {exc}")
    try:
        core.softmax(x, 2)                  # x has dims 0 and 1
        check(False, "a bad dim raises")
    except backplane.InvalidArgumentError as exc:
        print(f"ok:   InvalidArgumentError: {exc}")

    if failures:
        print(f"FAIL: {len(failures)} check(s) failed")
        return 1
    print("PASS: the MLP's output matches NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
