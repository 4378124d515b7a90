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

def gate_call(x, timeout_ms):
    """Calls sig::gate(x, ...) in a second Python thread while this one
    waits for the call to say it is running and then answers it; returns
    whether the answer reached the call.  No clock decides anything: this
    thread can run (read the pipe's byte and write its answer) while the
    call is in flight only if the call released the GIL; if it did not,
    the answer comes only after the call has given up waiting."""
    inside_r, inside_w = os.pipe()
    answer_r, answer_w = os.pipe()
    result = {}

    def call():
        result["came"] = bp.ops.sig.gate(x, inside_w, answer_r, timeout_ms)

    th = threading.Thread(target=call)
    th.start()
    os.read(inside_r, 1)    # the call is running
    os.write(answer_w, b"a")
    th.join()
    for fd in (inside_r, inside_w, answer_r, answer_w):
        os.close(fd)
    return result.get("came")


def gil_released():
    sig = os.path.join(os.environ["BP_TEST_PLUGIN_DIR"], "sig.so")
    bp.load(sig)
    big = np.zeros(4096, np.float32)      # the size from which calls
    small = np.zeros(16, np.float32)      # release the GIL (python.md)
    t.ok(gate_call(big, 600_000) is True, "during a call on 4096 elements "
         "another Python thread runs (the GIL is released)")
    t.ok(gate_call(small, 200) is False, "the control: a call on 16 "
         "elements keeps the GIL, and the other thread waits for it")
    t.is_eq(live(), 0, "live_tensor_count is back to its start value")


many_threads()
tensors_across_threads()
gil_released()
t.done()
