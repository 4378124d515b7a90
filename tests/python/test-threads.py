"""Threads: ops called from 8 Python threads at once give correct results,
a long op lets other Python threads run (the GIL is released around the
kernel), and every tensor is released afterwards."""

import gc
import os
import sys
import threading
import time

import taplib as t

np = t.require("numpy")

try:
    import backplane as bp
except ImportError as e:
    t.bail_out(f"the backplane package does not import: {e}")

CPU = os.environ.get("BP_TEST_CPU_PLUGIN")
if not CPU:
    t.skip_all("BP_TEST_CPU_PLUGIN is not set")
bp.load(CPU)
core = bp.ops.core
BASE = bp.live_tensor_count()
NTHREADS = 8
ROUNDS = 100
rng = np.random.default_rng(3)


def live():
    gc.collect()
    return bp.live_tensor_count() - BASE


# ---- many threads at once ---------------------------------------------------

BIG = rng.uniform(-1, 1, (64, 128)).astype(np.float32)   # 8192 elements
BIG2 = rng.uniform(-1, 1, (128,)).astype(np.float32)
MAT = rng.uniform(-0.5, 0.5, (64, 64))                   # 4096 elements
SMALL = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
WANT = {
    "add": BIG.astype(np.float64) + BIG2,
    "sum": BIG.astype(np.float64).sum(1),
    "matmul": MAT @ MAT,
    "mul": SMALL.astype(np.float64) * SMALL,
    "softmax": np.exp(SMALL) / np.exp(SMALL).sum(1, keepdims=True),
}


def one_round(out):
    """One of each kind of call; returns the names of wrong results."""
    bad = []
    r = core.add(BIG, BIG2)                     # large: GIL released
    if not np.array_equal(r.numpy(), WANT["add"].astype(np.float32)):
        bad.append("add")
    if core.add.out(BIG, BIG2, out=out) is not out or not np.array_equal(
            out, WANT["add"].astype(np.float32)):
        bad.append("add.out")
    if not np.allclose(core.sum(BIG, [1]).numpy(), WANT["sum"], 1e-5, 1e-4):
        bad.append("sum")
    if not np.allclose(core.matmul(MAT, MAT.T.T).numpy(), WANT["matmul"],
                       1e-12, 1e-12):
        bad.append("matmul")
    r = core.mul(SMALL, SMALL)                  # small: GIL held
    if not np.array_equal(r.numpy(), WANT["mul"].astype(np.float32)):
        bad.append("mul")
    if not np.allclose(core.softmax(SMALL, 1).numpy(), WANT["softmax"],
                       1e-5, 1e-6):
        bad.append("softmax")
    mine = np.full(5000, 2.0)                   # a wrapper made and dropped
    if float(core.sum(bp.from_dlpack(mine)).numpy()) != 10000.0:
        bad.append("from_dlpack")
    return bad


def many_threads():
    barrier = threading.Barrier(NTHREADS)
    wrong, errors, done = [], [], []
    lock = threading.Lock()

    def worker(i):
        out = np.empty_like(BIG)
        try:
            barrier.wait()
            for k in range(ROUNDS):
                bad = one_round(out)
                if bad:
                    with lock:
                        wrong.append((i, k, bad))
            with lock:
                done.append(i)
        except Exception as e:  # noqa: BLE001 (reported below)
            with lock:
                errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(i,))
               for i in range(NTHREADS)]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    elapsed = time.perf_counter() - start
    t.diag(f"{NTHREADS} threads x {ROUNDS} rounds of 7 calls: "
           f"{elapsed:.2f} s")
    t.ok(not any(th.is_alive() for th in threads), "every thread finished")
    t.is_eq(errors, [], "no thread raised")
    t.is_eq(sorted(done), list(range(NTHREADS)), "every thread ran its rounds")
    t.is_eq(wrong[:5], [], f"every result of {NTHREADS * ROUNDS * 7} calls "
            "is right")
    t.is_eq(live(), 0, "live_tensor_count is back to its start value")


def tensors_across_threads():
    arr = np.arange(6000.0)
    refs = sys.getrefcount(arr)
    made = []
    th = threading.Thread(target=lambda: made.extend(
        [bp.from_dlpack(arr), core.neg(arr), core.contiguous(arr)]))
    th.start()
    th.join()
    t.ok(len(made) == 3 and np.array_equal(made[1].numpy(), -arr),
         "tensors made in a thread are usable in another")
    del made[:]
    t.is_eq((live(), sys.getrefcount(arr)), (0, refs),
            "and are released there, with the array's reference")


# ---- the GIL is released during a long op ----------------------------------

def stall_during(fn):
    """Runs fn() while a second Python thread counts; returns (seconds fn
    took, the longest stretch of it in which the counter did not move, the
    counts made meanwhile)."""
    state = {"stop": False, "count": 0, "gaps": []}
    ready = threading.Event()

    def spin():
        last = time.perf_counter()
        ready.set()
        while not state["stop"]:
            now = time.perf_counter()
            if now - last > 0.002:
                state["gaps"].append((last, now))
            last = now
            state["count"] += 1

    th = threading.Thread(target=spin)
    th.start()
    ready.wait()
    time.sleep(0.01)
    c0, t0 = state["count"], time.perf_counter()
    fn()
    t1, c1 = time.perf_counter(), state["count"]
    state["stop"] = True
    th.join()
    longest = max([min(e, t1) - max(s, t0) for s, e in state["gaps"]
                   if e > t0 and s < t1] + [0.0])
    return t1 - t0, longest, c1 - c0


def long_matmul():
    """A matmul that takes 0.15 s or more here (None if none does)."""
    n = 256
    while n <= 4096:
        a = np.ones((n, n), np.float32)
        start = time.perf_counter()
        core.matmul(a, a)
        if time.perf_counter() - start >= 0.15:
            return a
        n *= 2
    return None


def gil_released():
    a = long_matmul()
    if a is None:
        t.skip("a long op lets another thread run", "no matmul is slow here")
        return
    t.diag(f"a {a.shape[0]} x {a.shape[0]} matmul")
    # Control: sum(range(...)) runs in C holding the GIL, as a kernel would
    # if the GIL were held: the counter must stand still for most of it.
    n = 10 ** 6
    while stall_during(lambda: sum(range(n)))[0] < 0.15:
        n *= 2
    results = []
    for attempt in range(3):  # a loaded machine may stall the counter
        took, longest, count = stall_during(lambda: core.matmul(a, a))
        held, held_longest, _ = stall_during(lambda: sum(range(n)))
        results.append((took, longest, count, held, held_longest))
        if longest < took / 2 and count > 0 and held_longest > held / 2:
            break
    for took, longest, count, held, held_longest in results:
        t.diag(f"matmul {took * 1e3:.0f} ms: counter stalled at most "
               f"{longest * 1e3:.0f} ms, {count} counts; sum(range) "
               f"{held * 1e3:.0f} ms: stalled {held_longest * 1e3:.0f} ms")
    took, longest, count, held, held_longest = results[-1]
    t.ok(held_longest > held / 2, "the control: a call holding the GIL "
         "stops the counting thread")
    t.ok(longest < took / 2 and count > 0, "during a long op, another "
         "Python thread keeps running (the GIL is released)")
    t.is_eq(live(), 0, "live_tensor_count is back to its start value")


many_threads()
tensors_across_threads()
gil_released()
t.done()
