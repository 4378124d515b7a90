"""core::conv2d on the CPU plugin against torch's own CPU convolution
(oneDNN) on every distinct convolution of ResNet-18, batch 1 and 8, and
core::max_pool2d against torch's on ResNet-18's max pool.

    python3 bench/resnet_conv.py PLUGIN.so [THREADS]

Both sides get the same number of threads (torch.set_num_threads, and
BP_CPU_THREADS for the plugin, which must be set before the plugin loads:
the script sets it), the same float32 inputs, and are timed as the median
of 5 calls after a warm-up call; results are compared (allclose) first.
Prints one row per shape and the geometric mean of the ratios.
"""

import math
import os
import statistics
import sys
import time

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
os.environ["BP_CPU_THREADS"] = str(THREADS)

import backplane  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(THREADS)
F = torch.nn.functional
backplane.load(sys.argv[1])
conv = backplane.ops.core.conv2d
pool = backplane.ops.core.max_pool2d

# (in, out, kernel, stride, padding, input size)
SHAPES = [(3, 64, 7, 2, 3, 224), (64, 64, 3, 1, 1, 56), (64, 128, 3, 2, 1, 56),
          (128, 128, 3, 1, 1, 28), (64, 128, 1, 2, 0, 56),
          (128, 256, 3, 2, 1, 28), (256, 256, 3, 1, 1, 14),
          (128, 256, 1, 2, 0, 28), (256, 512, 3, 2, 1, 14),
          (512, 512, 3, 1, 1, 7), (256, 512, 1, 2, 0, 14)]


def median_ms(f, reps=5):
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    print(f"ResNet-18 convolutions, float32, {THREADS} threads each side, "
          "median of 5 (ms)")
    print(f"  {'batch':>5} {'in':>4} {'out':>4} {'k':>2} {'s':>2} "
          f"{'size':>4} {'torch':>9} {'backplane':>10} {'x torch':>8}")
    logs = []
    g = torch.Generator().manual_seed(0)
    for batch in (1, 8):
        for cin, cout, k, s, p, hw in SHAPES:
            x = torch.randn(batch, cin, hw, hw, generator=g)
            w = torch.randn(cout, cin, k, k, generator=g) * 0.05
            ours = torch.from_dlpack(conv(x, w, None, s, p))
            if not torch.allclose(ours, F.conv2d(x, w, None, s, p),
                                  rtol=1e-3, atol=1e-3):
                sys.exit(f"conv2d {cin}->{cout} k{k} differs from torch")
            t = median_ms(lambda: F.conv2d(x, w, None, s, p))
            b = median_ms(lambda: conv(x, w, None, s, p))
            logs.append(math.log(t / b))
            print(f"  {batch:>5} {cin:>4} {cout:>4} {k:>2} {s:>2} {hw:>4} "
                  f"{t:9.2f} {b:10.2f} {t / b:8.2f}")
    print(f"geometric mean: {math.exp(sum(logs) / len(logs)):.2f}x torch's "
          "speed (above 1: faster)")
    print("ResNet-18's max pool, 3x3, stride 2, padding 1 (ms)")
    for batch in (1, 8):
        x = torch.randn(batch, 64, 112, 112, generator=g)
        if not torch.equal(torch.from_dlpack(pool(x, 3, 2, 1)),
                           F.max_pool2d(x, 3, 2, 1)):
            sys.exit("max_pool2d differs from torch")
        t = median_ms(lambda: F.max_pool2d(x, 3, 2, 1))
        b = median_ms(lambda: pool(x, 3, 2, 1))
        print(f"  batch {batch}: torch {t:.2f}, backplane {b:.2f}, "
              f"{t / b:.2f}x torch's speed")


if __name__ == "__main__":
    main()
