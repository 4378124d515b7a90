"""core::conv2d on the CPU plugin against torch's convolution in float64:
every stride, padding, dilation and group count up to 3 with 1x1, 2x3, 3x3
and 7x7 kernels; the blocks of the plugin's implicit GEMM (more than 256
rows of weights, of input columns and of output columns); strided, channels-
last, offset and unbatched inputs; bias or none; NaN and infinities; the
.out form; float64 (the host's composite); the direct path's partial tiles
and blocks.  Then the same, and matmul, whose micro-kernels conv2d shares,
with each path (BP_CONV_PATH=gemm, direct) and each narrower micro-kernel
(BP_CPU_GEMM_ISA=avx2, baseline) in child processes."""

import itertools
import math
import os
import subprocess
import sys

import taplib as t

np, torch = t.require("numpy", "torch")

import backplane  # noqa: E402

os.environ["BP_MATMUL_PATH"] = "portable"
backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
conv = backplane.ops.core.conv2d
F = torch.nn.functional
EPS32 = 2.0 ** -24


def ours(*args):
    return torch.from_dlpack(conv(*args))


def check(x, w, b, s, p, d, g, desc=None):
    """Compares conv2d(x, w, b, s, p, d, g) with torch's in float64, within
    the op set's tolerance: the error of a sum of K products grows with
    sqrt(K) times the sum of their magnitudes.  Returns an error string, or
    None."""
    got = ours(x, w, b, s, p, d, g)
    x64, w64 = x.double(), w.double()
    b64 = None if b is None else b.double()
    want = F.conv2d(x64, w64, b64, s, p, d, g)
    if tuple(got.shape) != tuple(want.shape):
        return f"shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if got.dtype != x.dtype:
        return f"dtype {got.dtype}, expected {x.dtype}"
    k = w.shape[1] * w.shape[2] * w.shape[3]
    ax = x64.abs().nan_to_num(0, 0, 0)
    scale = F.conv2d(ax, w64.abs(), None, s, p, d, g)
    if b64 is not None:
        scale = scale + b64.abs().view(-1, 1, 1)
    eps = EPS32 if x.dtype == torch.float32 else 2.0 ** -53
    tol = 16 * eps * math.sqrt(k) * scale + 1e-30
    g64 = got.double()
    bad = ~((g64 - want).abs() <= tol)
    bad &= ~(torch.isnan(g64) & torch.isnan(want))
    bad &= ~(g64 == want)  # infinities of the same sign
    if bad.any():
        i = tuple(bad.nonzero()[0].tolist())
        return (f"{desc or ''} at {i}: got {g64[i].item()!r}, expected "
                f"{want[i].item()!r} (tolerance {tol[i].item():.3g})")
    return None


gen = torch.Generator().manual_seed(7)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


# ---- every geometry up to 3 ------------------------------------------------
for kh, kw in [(1, 1), (2, 3), (3, 3), (7, 7)]:
    errors, cases = [], 0
    for s, p, d, g in itertools.product((1, 2, 3), (0, 1, 2, 3), (1, 2),
                                        (1, 2, 3)):
        sizes = (2, 6, 13, 11)
        if (sizes[2] + 2 * p - d * (kh - 1) - 1 < 0
                or sizes[3] + 2 * p - d * (kw - 1) - 1 < 0):
            continue
        x = rand(*sizes)
        w = rand(6, 6 // g, kh, kw)
        b = rand(6) if (s + p) % 2 else None
        cases += 1
        e = check(x, w, b, (s, s + 1 if d == 2 else s), (p, p // 2 + p % 2),
                  d, g, f"stride {s} padding {p} dilation {d} groups {g}")
        if e:
            errors.append(e)
    t.ok(not errors and cases > 50,
         f"conv2d {kh}x{kw}: {cases} strides, paddings, dilations and groups",
         "\n".join(errors[:5]))

# ---- the GEMM's blocks -----------------------------------------------------
# K = 33 * 9 = 297 > 256 rows per block; 17 * 17 = 289 > 256 output columns
# per block; 264 > 256 weight rows, not a multiple of the micro-kernel's.
x = rand(3, 33, 17, 17)
w = rand(264, 33, 3, 3)
t.ok(check(x, w, rand(264), 1, 1, 1, 1) is None,
     "conv2d past every block of the implicit GEMM",
     check(x, w, rand(264), 1, 1, 1, 1))
x = rand(1, 512, 7, 7)
w = rand(512, 512, 3, 3) * 0.05
t.ok(check(x, w, None, 1, 1, 1, 1) is None,
     "conv2d 512 -> 512 channels at 7x7")
x = rand(2, 3, 64, 64)
w = rand(16, 3, 7, 7)
t.ok(check(x, w, rand(16), 2, 3, 1, 1) is None,
     "conv2d 7x7 stride 2 padding 3 (ResNet's first layer)")
x = rand(2, 24, 20, 20)
w = rand(24, 1, 3, 3)
t.ok(check(x, w, rand(24), 1, 1, 1, 24) is None,
     "conv2d depthwise (groups 24)")

# ---- the direct path's tiles -----------------------------------------------
# Tiles of two runs of 7 output pixels by 32 (AVX-512), 8 or 4 channels:
# rows of 20 end in a run of 6; 3 images of 5 rows of 3 runs leave the last
# tile one run; 40 channels a group leave a block of 8 (AVX-512); K = 70 x 9
# = 630 per group passes a block of 512 steps; 3 x 26 rows of 4 runs make
# 156 tiles, several blocks of them.
x = rand(3, 140, 5, 20)
w = rand(80, 70, 3, 3) * 0.1
e = check(x, w, rand(80), 1, 1, 1, 2)
t.ok(e is None, "conv2d: short runs, a half tile, channels past a block, "
     "groups, steps past a block", e)
x = rand(3, 8, 52, 52)
w = rand(16, 8, 3, 3)
e = check(x, w, None, 2, 1, 1, 1)
t.ok(e is None, "conv2d: many tile blocks, stride 2", e)

# ---- layouts ---------------------------------------------------------------
base = rand(2, 8, 12, 10)
w = rand(6, 4, 3, 3)
layouts = {
    "channels-last": base.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    "every other column": rand(2, 8, 12, 20)[:, :, :, ::2],
    "an offset slice": rand(3, 9, 13, 11)[1:, 1:, 1:, 1:],
    "transposed spatial dims": rand(2, 8, 10, 12).transpose(2, 3),
    "a broadcast batch": rand(1, 8, 12, 10).expand(3, 8, 12, 10),
}
for name, x in layouts.items():
    e = check(x, w, rand(6), (1, 2), 1, 1, 2)
    t.ok(e is None, f"conv2d of an input with {name}", e)
t.ok(check(base[0], w, None, 1, 2, 2, 2) is None, "conv2d unbatched [C, H, W]")
wt = rand(4, 6, 3, 3).transpose(0, 1)
t.ok(check(base, wt, rand(12)[::2], 1, 1, 1, 2) is None,
     "conv2d with a transposed weight and a strided bias")

# ---- values ----------------------------------------------------------------
x = rand(1, 4, 9, 9)
x[0, 1, 4, 4] = float("nan")
x[0, 2, 0, 0] = float("inf")
x[0, 3, 8, 8] = -float("inf")
w = rand(5, 4, 3, 3).abs() + 0.5
e = check(x, w, rand(5), 1, 1, 1, 1, "NaN and infinities")
t.ok(e is None, "conv2d propagates NaN and infinities as torch does", e)
y = ours(x, w, None, 1, 1, 1, 1)
t.ok(bool(torch.isnan(y[0, :, 3:6, 3:6]).all()) and
     not bool(torch.isnan(y[0, :, 0, 6]).any()),
     "conv2d: NaN reaches exactly the windows that hold it")

# ---- empty and .out --------------------------------------------------------
y = ours(rand(0, 4, 9, 9), rand(5, 4, 3, 3), None, 1, 0, 1, 1)
t.is_eq(tuple(y.shape), (0, 5, 7, 7), "conv2d of an empty batch")
out = torch.full((2, 6, 12, 10), -1.0)
x = rand(2, 8, 12, 10)
w = rand(6, 8, 3, 3)
conv_out = backplane.ops.core.conv2d.out
r = conv_out(x, w, None, 1, 1, 1, 1, out=out)
t.ok(torch.allclose(out, F.conv2d(x, w, None, 1, 1), rtol=1e-4, atol=1e-4),
     "conv2d.out fills the given tensor")

# ---- float64: the host's composite ----------------------------------------
x = rand(2, 6, 9, 8, dtype=torch.float64)
w = rand(6, 3, 3, 2, dtype=torch.float64)
e = check(x, w, rand(6, dtype=torch.float64), 2, 1, 2, 2)
t.ok(e is None, "conv2d float64 (the host's composite)", e)

# ---- matmul, which shares the micro-kernels --------------------------------
# (past 128^3 multiply-adds, so BP_MATMUL_PATH=portable gives them the
# plugin's own kernel rather than a BLAS)
for m, k, n in [(130, 300, 71), (257, 129, 65)]:
    a, b = rand(m, k), rand(k, n)
    got = torch.from_dlpack(backplane.ops.core.matmul(a, b))
    got = got.double()
    want = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    t.ok(bool(((got - want).abs() <= 16 * EPS32 * math.sqrt(k) * scale).all()),
         f"matmul [{m}, {k}] x [{k}, {n}]")

# ---- both paths, each micro-kernel ------------------------------------------
# BP_CONV_PATH makes every call take the implicit GEMM or the direct path
# (above, each shape took the one the plugin chose); BP_CPU_GEMM_ISA caps
# the micro-kernels of both and of matmul.
isa, path = os.environ.get("BP_CPU_GEMM_ISA"), os.environ.get("BP_CONV_PATH")
if isa or path:
    t.diag(f"micro-kernels capped to {isa or 'none'}, path {path or 'chosen'}")
else:
    for cap, path in itertools.product((None, "avx2", "baseline"),
                                       ("gemm", "direct")):
        env = dict(os.environ, BP_CONV_PATH=path)
        if cap:
            env["BP_CPU_GEMM_ISA"] = cap
        if os.environ.get("BP_TEST_PRELOAD") and "LD_PRELOAD" not in env:
            env["LD_PRELOAD"] = os.environ["BP_TEST_PRELOAD"]  # TSan
        r = subprocess.run([sys.executable, __file__], capture_output=True,
                           text=True, env=env)
        t.ok(r.returncode == 0 and "not ok" not in r.stdout,
             f"every check above with BP_CONV_PATH={path}"
             + (f" BP_CPU_GEMM_ISA={cap}" if cap else ""),
             r.stdout[-2000:] + r.stderr[-2000:])

t.done()
