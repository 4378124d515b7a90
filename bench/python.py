"""bench/python.py: what a Backplane call costs from Python and from torch.

    python3 bench/python.py [--plugin CPU.so] [--add BUILD/bench/add]
                            [--rounds R] [--large N]

`import backplane` must work (PYTHONPATH and LD_LIBRARY_PATH, as for the
tests); the plugin comes from --plugin, else $BP_TEST_CPU_PLUGIN.  --add
names the C program bench/add (`make bench/add`), else $BP_BENCH_ADD, else
./bench/add; without it the comparisons with C are left out.

Two measurements in one run, printed as Markdown tables:

- the time of one call on 1-element float32 tensors: torch.add,
  torch.ops.aten.add, a torch.library op whose Python implementation does
  nothing, np.add, a DLPack round trip of a torch tensor,
  backplane.ops.core.add on NumPy arrays (and on backplane.Tensors), the
  torch bridge's torch.ops.bp_core.add, torch.add under
  backplane.torch.offload and under a TorchDispatchMode that does nothing
  (torch's floor for any such mode), and bp_call from C (bench/add);
- the throughput of core::add at N elements (16M by default): from NumPy
  arrays, through the bridge, and from C (bench/add, run once per round).

Every figure is the best of many timings (timeit, min), each a batch of
calls that lasts at least 5 ms.  The machines are shared and noisy, so
the variants take turns: each round times every variant 3 times, in an
order that rotates from round to round.
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import timeit

import numpy as np

import backplane

try:
    import torch
    import torch.utils.dlpack

    import backplane.torch
except ImportError:
    torch = None

# One timing is a batch of calls, doubled until it lasts this long (as in
# bench/add): a single call for large tensors.
BATCH_S = 0.005
# Timings per variant per round (bench/add makes as many in one process).
PER_ROUND = 3


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", default=os.environ.get("BP_TEST_CPU_PLUGIN"),
                    help="the CPU plugin (default: $BP_TEST_CPU_PLUGIN)")
    default_add = os.environ.get("BP_BENCH_ADD") or (
        "bench/add" if os.path.exists("bench/add") else None)
    ap.add_argument("--add", default=default_add,
                    help="the C benchmark bench/add (default: "
                         "$BP_BENCH_ADD, else ./bench/add)")
    ap.add_argument("--rounds", type=int, default=15,
                    help="rounds of timings (default 15)")
    ap.add_argument("--large", type=int, default=16 * 1024 * 1024,
                    help="elements of the throughput test (default 16M)")
    args = ap.parse_args()
    if not args.plugin:
        ap.error("no plugin: give --plugin or set BP_TEST_CPU_PLUGIN")
    return args


def run_c_add(path, plugin, n, repeats):
    """bench/add's best time per call, in seconds."""
    out = subprocess.run([path, plugin, str(n), str(repeats)], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^add N=\d+ .*best_ns=(\S+)", out, re.M)
    if not m:
        raise RuntimeError(f"{path}: unexpected output:\n{out}")
    return float(m.group(1)) * 1e-9


class Variant:
    """One way of making a call: a statement timed by timeit, or a
    function that returns its own best time (the C program)."""

    def __init__(self, name, stmt=None, env=None, measure=None, calls=1):
        self.name, self.best = name, float("inf")
        self.measure = measure
        self.calls = calls  # calls per execution of stmt
        if stmt is not None:
            self.timer = timeit.Timer(stmt, globals=env)
            self.timer.timeit(10)  # warm up: caches, lazy set-up
        self.number = 1

    def calibrate(self, target_s):
        if self.measure is None:
            n = 1
            while self.timer.timeit(n) < target_s and n < 1 << 22:
                n *= 2
            self.number = n

    def time_round(self):
        if self.measure is not None:
            t = self.measure()
        else:
            t = min(self.timer.repeat(PER_ROUND, self.number)) / (
                self.number * self.calls)
        self.best = min(self.best, t)


def run_rounds(variants, rounds, target_s):
    for v in variants:
        v.calibrate(target_s)
    for r in range(rounds):
        k = r % len(variants)
        for v in variants[k:] + variants[:k]:
            v.time_round()


def small_variants(args):
    a = np.ones(1, np.float32)
    b = np.full(1, 2, np.float32)
    core = backplane.ops.core
    vs = []
    if torch is not None:
        ta, tb = torch.ones(1), torch.full((1,), 2.0)
        lib = torch.library.Library("bpbench", "DEF")
        lib.define("noop(Tensor self, Tensor other) -> Tensor")
        lib.impl("noop", lambda self, other: self, "CPU")
        small_variants.keep = lib  # torch drops the op with its Library
        env = {"a": ta, "b": tb, "f": None, "g": None}
        vs += [Variant("torch.add", "f(a, b)", dict(env, f=torch.add)),
               Variant("torch.ops.aten.add", "f(a, b)",
                       dict(env, f=torch.ops.aten.add)),
               Variant("torch.library op, Python impl that does nothing",
                       "f(a, b)", dict(env, f=torch.ops.bpbench.noop))]
    vs.append(Variant("np.add", "f(a, b)", {"f": np.add, "a": a, "b": b}))
    if torch is not None:
        vs.append(Variant(
            "torch.from_dlpack(to_dlpack(t)) round trip", "f(g(a))",
            {"f": torch.from_dlpack, "g": torch.utils.dlpack.to_dlpack,
             "a": ta}))
    vs.append(Variant("backplane.ops.core.add, NumPy arrays", "f(a, b)",
                      {"f": core.add, "a": a, "b": b}))
    vs.append(Variant("backplane.ops.core.add, backplane.Tensors", "f(a, b)",
                      {"f": core.add, "a": backplane.from_dlpack(a),
                       "b": backplane.from_dlpack(b)}))
    if torch is not None:
        vs.append(Variant("torch.ops.bp_core.add (the bridge)", "f(a, b)",
                          {"f": torch.ops.bp_core.add, "a": ta, "b": tb}))
    if torch is not None:
        # offload's cost per op: torch.add inside the mode, 100 calls per
        # entry of the mode, against a mode that does nothing but call the
        # op (torch's own floor for any TorchDispatchMode)
        from torch.utils._python_dispatch import TorchDispatchMode

        class Noop(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        loop = "with m:\n    for _ in r:\n        f(a, b)"
        for name, mode in (("a TorchDispatchMode that does nothing",
                            Noop()),
                           ("backplane.torch.offload",
                            backplane.torch.offload())):
            vs.append(Variant(f"torch.add under {name}", loop,
                              {"m": mode, "r": range(100), "f": torch.add,
                               "a": ta, "b": tb}, calls=100))
    if args.add:
        vs.append(Variant("bp_call from C (bench/add)", measure=lambda: (
            run_c_add(args.add, args.plugin, 1, PER_ROUND))))
    return vs


def large_variants(args):
    n = args.large
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    core = backplane.ops.core
    r = core.add(a, b).numpy()
    if not np.array_equal(r, a + b):
        sys.exit("core.add gave a wrong sum")
    vs = [Variant("backplane.ops.core.add, NumPy arrays", "f(a, b)",
                  {"f": core.add, "a": a, "b": b})]
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        vs.append(Variant("torch.ops.bp_core.add (the bridge)", "f(a, b)",
                          {"f": torch.ops.bp_core.add, "a": ta, "b": tb}))
        vs.append(Variant("torch.add (for reference)", "f(a, b)",
                          {"f": torch.add, "a": ta, "b": tb}))
    vs.append(Variant("np.add (for reference)", "f(a, b)",
                      {"f": np.add, "a": a, "b": b}))
    if args.add:
        vs.append(Variant("bp_call from C (bench/add)", measure=lambda: (
            run_c_add(args.add, args.plugin, n, PER_ROUND))))
    return vs


def best_of(variants, prefix):
    return next((v.best for v in variants if v.name.startswith(prefix)),
                None)


def ratio_row(name, num, den, target, higher_is_better=False):
    if num is None or den is None:
        return f"| {name} | n/a | {target} | not measured |"
    r = num / den
    limit = float(target.split()[-1])
    met = r >= limit if higher_is_better else r <= limit
    return f"| {name} | {r:.2f} | {target} | {'met' if met else 'missed'} |"


def main():
    args = parse_args()
    plugin = backplane.load(args.plugin)
    if torch is not None:
        backplane.torch.register(plugin)
    small = small_variants(args)
    large = large_variants(args)
    run_rounds(small, args.rounds, BATCH_S)
    run_rounds(large, args.rounds, BATCH_S)

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'not installed'}"
          f"{f' ({torch.get_num_threads()} threads)' if torch else ''}, "
          f"Backplane {backplane.version()}; {os.cpu_count()} CPUs ({cpu}); "
          f"best of {args.rounds} rounds of {PER_ROUND} timings\n")
    print("| 1-element float32 call | ns per call |")
    print("| --- | ---: |")
    for v in small:
        print(f"| {v.name} | {v.best * 1e9:.0f} |")
    nbytes = 3 * 4 * args.large
    print(f"\n| core::add of {args.large:,} float32 | ms per call | GB/s |")
    print("| --- | ---: | ---: |")
    for v in large:
        print(f"| {v.name} | {v.best * 1e3:.2f} | "
              f"{nbytes / v.best * 1e-9:.1f} |")
    c_large = best_of(large, "bp_call from C")
    print("\n| ratio | measured | target | |")
    print("| --- | ---: | --- | --- |")
    print(ratio_row("backplane.ops.core.add / np.add, 1 element",
                    best_of(small, "backplane.ops.core.add, NumPy"),
                    best_of(small, "np.add"), "<= 1.5"))
    print(ratio_row("bridge / torch.add, 1 element",
                    best_of(small, "torch.ops.bp_core"),
                    best_of(small, "torch.add"), "<= 2"))
    add = best_of(small, "torch.add")
    noop = best_of(small, "torch.add under a TorchDispatchMode")
    off = best_of(small, "torch.add under backplane.torch.offload")
    if add and noop and off:
        print(f"| offload's added cost per op, 1 element | "
              f"{(off - add) * 1e9:.0f} ns over torch.add, "
              f"{(off - noop) * 1e9:.0f} ns over a do-nothing mode | | |")
    # Throughput ratios: C's time over the Python call's.
    print(ratio_row(f"backplane.ops.core.add / C, GB/s at {args.large:,}",
                    c_large, best_of(large, "backplane.ops.core.add"),
                    ">= 0.95", True))
    print(ratio_row(f"bridge / C, GB/s at {args.large:,}",
                    c_large, best_of(large, "torch.ops.bp_core"),
                    ">= 0.95", True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
