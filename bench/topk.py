"""core::topk and core::sort on the CPU plugin against torch's own CPU
kernels, on sampling's shapes.

    python3 bench/topk.py PLUGIN.so [THREADS]

Both sides get the same threads (BP_CPU_THREADS, set before the plugin
loads, and torch.set_num_threads) and the same float32 inputs; each row is
the median of 9 calls after a warm-up, alternating the two sides, and the
ratio is torch's time over Backplane's (above 1: Backplane is faster).
Results are compared first: the values exactly.
"""

import os
import statistics
import sys
import time

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
os.environ["BP_CPU_THREADS"] = str(THREADS)

import backplane  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)
backplane.load(sys.argv[1])
core = backplane.ops.core
gen = torch.Generator().manual_seed(0)

ROWS = [
    ("topk k=50, [1, 50257]", (1, 50257), lambda x: core.topk(x, 50),
     lambda x: torch.topk(x, 50)),
    ("topk k=50, [8, 50257]", (8, 50257), lambda x: core.topk(x, 50),
     lambda x: torch.topk(x, 50)),
    ("topk k=1000, [8, 50257]", (8, 50257), lambda x: core.topk(x, 1000),
     lambda x: torch.topk(x, 1000)),
    ("sort, [8, 50257]", (8, 50257), lambda x: core.sort(x, -1, True),
     lambda x: torch.sort(x, descending=True, stable=True)),
    ("sort, [4096, 128]", (4096, 128), lambda x: core.sort(x),
     lambda x: torch.sort(x, stable=True)),
]


def timed(fn, x):
    t = time.perf_counter()
    fn(x)
    return time.perf_counter() - t


print(f"{'row':<26}{'backplane ms':>14}{'torch ms':>10}{'ratio':>8}")
for name, shape, ours, theirs in ROWS:
    x = torch.randn(*shape, generator=gen)
    got, want = ours(x)[0], theirs(x)[0]
    if not torch.equal(torch.from_dlpack(got), want):
        sys.exit(f"{name}: the values differ from torch's")
    tb, tt = [], []
    for _ in range(9):
        tb.append(timed(ours, x))
        tt.append(timed(theirs, x))
    mb, mt = statistics.median(tb), statistics.median(tt)
    print(f"{name:<26}{mb * 1e3:>14.3f}{mt * 1e3:>10.3f}{mt / mb:>8.2f}")
