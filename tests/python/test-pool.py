"""core::max_pool2d on the CPU plugin against torch's, bit for bit: every
kernel up to 4x4 with strides up to 3, padding up to half the kernel,
dilation 1 and 2, and ceil_mode; inputs with equal maxima, -0.0 beside
+0.0 (the first in the window's scan order is kept), NaN (it propagates)
and infinities; strided, transposed, offset and unbatched inputs; float32
and float64 (the plugin's kernel) and float16 (the host's composite);
a kernel far wider than the input."""

import itertools
import os

import taplib as t

np, torch = t.require("numpy", "torch")

import backplane  # noqa: E402

backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
pool = backplane.ops.core.max_pool2d
F = torch.nn.functional
gen = torch.Generator().manual_seed(11)


def specials(shape, dtype):
    """Small integers (many equal maxima) with -0.0, NaN and +-inf here
    and there."""
    x = torch.randint(-2, 3, shape, generator=gen).to(torch.float64)
    pick = torch.rand(shape, generator=gen, dtype=torch.float64)
    x[pick < 0.15] = -0.0
    x[(pick > 0.15) & (pick < 0.17)] = float("nan")
    x[(pick > 0.17) & (pick < 0.18)] = float("inf")
    x[(pick > 0.18) & (pick < 0.19)] = float("-inf")
    return x.to(dtype)


def differs(x, k, s, p, d, ceil):
    """None if core's max_pool2d is torch's bit for bit (NaN where torch
    has NaN), else what differs."""
    want = F.max_pool2d(x.float() if x.dtype == torch.float16 else x,
                        k, s, p, d, ceil).to(x.dtype)
    got = torch.from_dlpack(pool(x, k, s, p, d, ceil))
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)}, expected " \
               f"{want.dtype}{list(want.shape)}"
    nan = want.isnan()
    same = (got == want) & (got.signbit() == want.signbit()) | \
        (nan & got.isnan())
    if bool(same.all()):
        return None
    i = tuple(int(v) for v in (~same).nonzero()[0])
    return f"at {i}: {got[i].item()!r}, expected {want[i].item()!r}"


def geometries():
    for kh, kw, sh, sw in itertools.product((1, 2, 3, 4), (1, 2, 3, 4),
                                            (1, 2, 3), (1, 3)):
        for ph, pw, dil, ceil in itertools.product(
                range(kh // 2 + 1), range(kw // 2 + 1), (1, 2),
                (False, True)):
            yield (kh, kw), (sh, sw), (ph, pw), (dil, dil), ceil


def sweep(dtype, shape, layout=lambda x: x, step=1):
    bad, n = [], 0
    for i, (k, s, p, d, ceil) in enumerate(geometries()):
        if i % step:
            continue
        x = layout(specials(shape, dtype))
        try:
            F.max_pool2d(x.double(), k, s, p, d, ceil)
        except RuntimeError:
            continue  # an output torch finds empty
        n += 1
        why = differs(x, k, s, p, d, ceil)
        if why:
            bad.append(f"k={k} s={s} p={p} d={d} ceil={ceil}: {why}")
    return n, bad


def check(desc, dtype, shape, layout=lambda x: x, step=1):
    n, bad = sweep(dtype, shape, layout, step)
    t.ok(n > 20 and not bad, f"{desc}: {n} geometries, torch's bits",
         "\n".join(bad[:5]))


check("float32 [2, 3, 9, 11]", torch.float32, (2, 3, 9, 11))
check("float64 [2, 3, 9, 11]", torch.float64, (2, 3, 9, 11))
check("float32 unbatched [3, 10, 7]", torch.float32, (3, 10, 7))
check("float32 transposed", torch.float32, (2, 3, 11, 9),
      lambda x: x.transpose(-1, -2), step=3)
check("float32 strided and offset", torch.float32, (2, 4, 20, 23),
      lambda x: x[:, 1::2, 1::2, 2::2], step=3)
check("float32 channels last", torch.float32, (2, 3, 9, 11),
      lambda x: x.contiguous(memory_format=torch.channels_last), step=3)
check("float16 (the host's composite)", torch.float16, (1, 2, 8, 9),
      step=5)

# A large pool, split over the plugin's threads by output rows.
x = torch.randn(2, 64, 112, 112, generator=gen)
t.ok(differs(x, 3, 2, 1, 1, False) is None,
     "ResNet's stem pool [2, 64, 112, 112], 3x3 stride 2 padding 1")
# A window that dilation leaves with padding alone gives -inf, as torch.
x = torch.ones(1, 1, 1, 1)
got = torch.from_dlpack(pool(x, [1, 2], [1, 1], [0, 1], [1, 2], False))
t.ok(torch.equal(got, F.max_pool2d(x, (1, 2), 1, (0, 1), (1, 2))) and
     got.shape == (1, 1, 1, 1) and got.item() == float("-inf"),
     "a window of padding alone: -inf", repr(got))
# A kernel far wider than the input, with padding half of it: the kernel
# walks the positions that reach the input only (2**61 would take years
# otherwise), as torch's does.
x = torch.tensor([[[[3.0, 5.0]]]])
got = torch.from_dlpack(pool(x, [2**61, 2**61], [1, 1], [2**60, 2**60],
                             [1, 1], False))
t.ok(torch.equal(got, F.max_pool2d(x, 2**20, 1, 2**19)),
     "a kernel of 2**61 with padding 2**60 on [1, 1, 1, 2]", repr(got))
# On the host's composite (float16), which pads the input, such a
# geometry fails and names the op and the padded size.
try:
    pool(x.half(), [2**40, 2**40], [1, 1], [2**39, 2**39], [1, 1], False)
    t.ok(False, "the composite refuses a padded input past int64")
except backplane.SizeOverflowError as e:
    t.ok("core::max_pool2d: the input padded to [1, 1, 1099511627777, "
         "1099511627778] could not be allocated" in str(e),
         "the composite refuses a padded input past int64, naming it",
         str(e))
# An empty stride is the kernel, an empty dilation 1 (the kernel read a
# dilation of two values from an empty list: SIGFPE).
x = torch.arange(32.0).view(1, 2, 4, 4)
for dtype in (torch.float32, torch.float64, torch.float16):
    got = torch.from_dlpack(pool(x.to(dtype), [2, 2], [], [0, 0], [],
                                 False))
    t.ok(torch.equal(got.float(), F.max_pool2d(x, 2)),
         f"{dtype}: stride [] and dilation [] are the kernel and 1",
         repr(got))
t.done()
