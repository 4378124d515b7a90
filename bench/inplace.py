"""The in-place and .out forms against the op followed by copy_, the path
they took before a structured kernel could fill the written tensor.

    python3 bench/inplace.py PLUGIN.so [ELEMENTS]

For each form, the median of 9 timed calls (after a warm-up call) of the
form and of its baseline, measured alternately in the same run on the
same float32 inputs (ELEMENTS each, 4M by default); the ratio is
baseline / form (above 1: the form is faster).
"""

import statistics
import sys
import time

import numpy as np

import backplane

backplane.load(sys.argv[1])
core = backplane.ops.core
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 22
rng = np.random.default_rng(0)
x = backplane.from_dlpack(rng.standard_normal(N, dtype=np.float32))
y = backplane.from_dlpack(rng.standard_normal(N, dtype=np.float32))
out = backplane.empty((N,), dtype="float32")


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


CASES = [
    ("add_(x, y)", lambda: core.add_(x, y),
     lambda: core.copy_(x, core.add(x, y))),
    ("mul_(x, 0.5)", lambda: core.mul_(x, 0.5),
     lambda: core.copy_(x, core.mul(x, 0.5))),
    ("relu.out(y, out=o)", lambda: core.relu.out(y, out=out),
     lambda: core.copy_(out, core.relu(y))),
    ("sigmoid_(x)", lambda: core.sigmoid_(x),
     lambda: core.copy_(x, core.sigmoid(x))),
]

print(f"{'form':<22}{'form ms':>10}{'op+copy_ ms':>14}{'ratio':>8}")
for name, form, base in CASES:
    form()
    base()
    tf, tb = [], []
    for _ in range(9):
        tf.append(timed(form))
        tb.append(timed(base))
    mf, mb = statistics.median(tf), statistics.median(tb)
    print(f"{name:<22}{mf * 1e3:>10.3f}{mb * 1e3:>14.3f}{mb / mf:>8.2f}")
