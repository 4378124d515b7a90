"""backplane.torch.offload against torch on the edges of its table: each
expression gives, under offload, torch's own result (values bit for bit,
dtype and shape) or torch's refusal.  Where core's semantics differ from
torch's (a number out of a dtype's range, which core saturates and torch
refuses or wraps; an integer past 2**53; a negative into uint8; a bool
operand of a subtraction; an integer to a negative power; an int32 index;
an in-place input that partly overlaps what it writes; a cast to 16-bit
floats, which torch makes through float32; NaN or a value out of range
cast to an integer dtype, which torch wraps; topk among equal values),
the call must go to torch, not give core's answer.  In-range cases must
still run on the plugin."""

import os
import warnings

import taplib as t

torch = t.require("torch")

import backplane  # noqa: E402
import backplane.torch as bt  # noqa: E402

backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
F = torch.nn.functional
nan, inf = float("nan"), float("inf")


def _of(dtype):
    """A maker of 1-D tensors of dtype: i8(1, 2) is int8 [1, 2]."""
    return lambda *v: torch.tensor(v, dtype=dtype)


i8, u8, i64 = _of(torch.int8), _of(torch.uint8), _of(torch.int64)
f32, f64, bl = _of(torch.float32), _of(torch.float64), _of(torch.bool)


def pool(*row):
    return torch.tensor([[[list(row)]]])


EDGES = [
    # fill_: torch's conversion of the value, or its refusal
    "i8(0).fill_(300)", "u8(0).fill_(-1)", "u8(0).fill_(-256)",
    "i8(0).fill_(2.5)", "i8(0).fill_(nan)", "bl(False).fill_(2)",
    "torch.zeros(1, dtype=torch.float16).fill_(1e10)",
    "f32(0).fill_(1e300)", "i64(0).fill_(2**53 + 1)",
    "i64(0).fill_(-2**63)",
    # numbers out of range, and powers
    "i8(0) + 300", "u8(5) - 6", "i8(3) < 300", "i8(0) ** 300",
    "i8(2) ** -1", "torch.tensor([1.], dtype=torch.bfloat16) ** 1e300",
    "i8(1).add_(300)", "u8(1).sub_(2)", "i64(2**53) + (2**53 + 1)",
    # bool operands of a subtraction
    "bl(True) - i8(1)", "f32(1) - True", "f32(1) - bl(True)",
    "torch.rsub(bl(True), 1)",
    # alpha
    "torch.add(i8(1), i8(1), alpha=2.5)", "torch.add(i8(1), i8(1), alpha=200)",
    "torch.add(u8(5), u8(5), alpha=-1)", "torch.sub(u8(5), u8(1), alpha=-1)",
    "torch.add(i64(0), i64(1), alpha=2**53 + 1)",
    "i64(1).add_(i64(1), alpha=2**60 + 1)",
    # masked_fill's value
    "i8(1).masked_fill(bl(True), 300)", "u8(1).masked_fill(bl(True), -1)",
    "u8(1).masked_fill(bl(True), -129)", "i8(1).masked_fill(bl(True), 2.5)",
    # indices
    "f32(1, 2, 3)[torch.tensor([0, 2], dtype=torch.int32)]",
    # casts to 16-bit floats round through float32, as torch's do
    "f64(1 + 2**-8 + 2**-30).to(torch.bfloat16)",
    "f64(1 + 2**-11 + 2**-40).to(torch.float16)",
    "i64(2**24 + 1, 2**60 + 2**36 + 1).to(torch.bfloat16)",
    "torch.tensor([2**31 - 1], dtype=torch.int32).to(torch.float16)",
    # max_pool2d's indices: the first maximum, the last NaN
    "F.max_pool2d(pool(nan, 1.0, nan), (1, 3), return_indices=True)",
    "F.max_pool2d(pool(1.0, nan, 5.0, nan, 2.0), (1, 5), "
    "return_indices=True)",
    "F.max_pool2d(pool(nan, 3.0, 3.0, nan), (1, 2), return_indices=True)",
    "F.max_pool2d(pool(2.0, 7.0, 7.0, 1.0), (1, 3), 1, return_indices=True)",
    "F.max_pool2d(pool(-inf, -inf), (1, 2), return_indices=True)",
    # more than 64 kernel positions reach the input: torch's own loop
    "F.max_pool2d(torch.arange(400.0).view(1, 1, 20, 20) % 7, 9, 2, 4, "
    "return_indices=True)",
    # in place, with an input that overlaps what is written
    "(lambda y: y[1:].add_(y[:-1]))(f32(1, 2, 3, 4, 5))",
    "(lambda y: y[:2].mul_(y[1:]))(f32(1, 2, 3))",
    "(lambda y: y[::2].add_(y[1::2]))(f32(1, 2, 3, 4))",
    "(lambda y: y.add_(y))(f32(1, 2, 3))",
    "(lambda y: y[1:].copy_(y[:-1]))(i64(0, 1, 2, 3, 4, 5))",
    # floats to integers: NaN, infinities and values out of range wrap in
    # torch (core saturates them)
    "f32(-1.0, 300.0, 1e10).to(torch.uint8)",
    "f32(1e10, nan, inf).to(torch.int32)", "f32(nan).to(torch.int64)",
    "torch.zeros(2, dtype=torch.int32).copy_(f32(1e10, -1.0))",
    "f32(1.5e10).sum(0, dtype=torch.int32)",
    # integers past 2**53 and a positional alpha
    "-3 - i64(2**60 + 1)", "torch.rsub(i64(2**60 + 1), 5, alpha=3)",
    "torch.ops.aten.add_.Scalar(f32(0, 1), 2, 3)",
    "torch.ops.aten.sub_.Scalar(i64(2**60 + 1), 2, 3)",
    # relu's gradient at NaN (torch's test is x <= 0)
    "(lambda x: (F.relu(x).sum().backward(), x.grad)[1])"
    "(torch.tensor([nan, 1.0, -1.0], requires_grad=True))",
    # topk with equal values: torch's selection picks their indices
    "torch.topk(i64(1, 3, 3, 2, 3), 2)", "torch.topk(f32(4, 1, 4, 0), 1)",
    "torch.topk(f32(nan, 2, nan, 1), 3, largest=False)",
    # addmm's operands must share a dtype
    "torch.addmm(torch.ones(2, 3), torch.ones(2, 4, dtype=torch.bfloat16), "
    "torch.ones(4, 3, dtype=torch.bfloat16))",
    # mm, bmm, addmm and linear take exact shapes (core::matmul and
    # core::linear broadcast)
    "torch.mm(torch.ones(2, 3), torch.ones(3))",
    "torch.mm(torch.ones(2, 3, 3), torch.ones(3, 4))",
    "torch.mm(torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64))",
    "torch.bmm(torch.ones(2, 3), torch.ones(3, 4))",
    "torch.bmm(torch.ones(1, 2, 3), torch.ones(4, 3, 4))",
    "torch.addmm(torch.ones(4), torch.ones(2, 3, 3), torch.ones(3, 4))",
    "torch.addmm(torch.ones(2, 1, 4), torch.ones(2, 3), torch.ones(3, 4))",
    "torch.addmm(torch.ones(2), torch.ones(5, 3), torch.ones(3, 1))",
    "F.linear(torch.ones(5, 3), torch.ones(1, 3), torch.ones(2))",
    "F.linear(torch.ones(5, 3), torch.ones(2, 4))",
    # torch has no gelu or silu of integers or bools
    "F.gelu(i64(1, 2, 3))", "F.silu(bl(True, False))", "F.silu(i8(1))",
    # cumsum in bool, or of floats in an integer dtype (which wraps)
    "torch.cumsum(f32(1, 2), 0, dtype=torch.bool)",
    "torch.cumsum(f32(300, -1), 0, dtype=torch.uint8)",
    "torch.cumsum(f32(nan, 1), 0, dtype=torch.int32)",
    # an empty kernel, no output channels, no input channels
    "F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(4, 2, 0, 3))",
    "F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(0, 2, 3, 3))",
    "F.conv2d(torch.ones(1, 0, 5, 5), torch.ones(4, 0, 3, 3))",
]

# In range: these must run on the plugin, and give torch's result.
ON_PLUGIN = [
    ("i8(100) + 27", "aten.add.Tensor"),
    ("u8(5).fill_(255)", "aten.fill_.Scalar"),
    ("i64(0).fill_(2**53)", "aten.fill_.Scalar"),
    ("torch.add(i64(5), i64(2), alpha=-3)", "aten.add.Tensor"),
    ("u8(9).masked_fill(bl(True), 255)", "aten.masked_fill.Scalar"),
    ("i8(3) ** 2", "aten.pow.Tensor_Scalar"),
    ("f32(1.5).to(torch.bfloat16)", "aten._to_copy.default"),
    ("f32(1, 2, 3)[i64(0, 2)]", "aten.index.Tensor"),
    ("(lambda y: y.add_(y))(f32(1, 2, 3))", "aten.add_.Tensor"),
    ("(lambda y: y[:2].add_(y[2:]))(f32(1, 2, 3, 4))", "aten.add_.Tensor"),
    ("f32(1.7, -2.5, 255.9).to(torch.int16)", "aten._to_copy.default"),
    ("torch.rsub(i64(2**60 + 1), 5, alpha=3)", "aten.rsub.Scalar"),
    ("torch.topk(f32(1, 5, nan, 2), 2)", "aten.topk.default"),
    # max_pool2d's indices: the first of equal maxima, in and beside the
    # padding, with dilation, and between -0.0 and +0.0
    ("F.max_pool2d(pool(2.0, 7.0, 7.0, 1.0, 7.0), (1, 3), 1, (0, 1), "
     "return_indices=True)", "aten.max_pool2d_with_indices.default"),
    ("F.max_pool2d(pool(7.0, 1.0, 7.0, 7.0, 2.0), (1, 2), 1, dilation=2, "
     "ceil_mode=True, return_indices=True)",
     "aten.max_pool2d_with_indices.default"),
    ("F.max_pool2d(pool(-0.0, 0.0, 0.0, -0.0), (1, 2), 1, "
     "return_indices=True)", "aten.max_pool2d_with_indices.default"),
    # a kernel far wider than the input (padding half of it): only the
    # positions that reach the input are tried
    ("F.max_pool2d(pool(3.0, 5.0), 2**30, 1, 2**29, return_indices=True)",
     "aten.max_pool2d_with_indices.default"),
]


# Results laid out as torch lays them out (its preserve_format: a dense
# operand's strides, the first of the result's shape), on the plugin.
tr = torch.arange(12.0).view(3, 4).t()
cl = torch.arange(120.0).view(2, 3, 4, 5).to(
    memory_format=torch.channels_last)
LAYOUTS = [
    ("tr.clone()", "aten.clone.default"),
    ("cl.clone()", "aten.clone.default"),
    ("tr.to(torch.float64)", "aten._to_copy.default"),
    ("tr.exp()", "aten.exp.default"), ("torch.relu(cl)", "aten.relu.default"),
    ("tr * 2", "aten.mul.Tensor"), ("tr > 3", "aten.gt.Scalar"),
    ("tr + tr", "aten.add.Tensor"),
    ("tr * torch.ones(4, 3)", "aten.mul.Tensor"),
    ("torch.ones(4, 3) * tr", "aten.mul.Tensor"),
    ("torch.ones(3) - tr", "aten.sub.Tensor"),
    ("cl * torch.ones(3, 1, 1)", "aten.mul.Tensor"),
    ("tr[::2] + 1", "aten.add.Tensor"),
]


def run(expr, offload):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if offload:
                with bt.offload("core"):
                    return "ok", eval(expr)
            return "ok", eval(expr)
    except Exception as e:  # noqa: BLE001 - any refusal is compared
        return "error", type(e).__name__


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        a, b = a.double(), b.double()
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


for expr in EDGES:
    want, got = run(expr, False), run(expr, True)
    if want[0] == "error":
        t.is_eq(got[0], "error", f"{expr}: refused, as torch refuses it "
                f"({want[1]})")
    else:
        t.ok(got[0] == "ok" and same(got[1], want[1]),
             f"{expr}: torch's result", f"torch {want[1]!r}, got {got!r}")

for expr, aten in ON_PLUGIN:
    bt.report(reset=True)
    want, got = run(expr, False), run(expr, True)
    calls = bt.report(reset=True).get(aten, {})
    t.ok(want[0] == got[0] == "ok" and same(got[1], want[1]) and
         calls.get("plugin_calls", 0) >= 1 and not calls.get("fallback_calls"),
         f"{expr}: torch's result, from the plugin ({aten})",
         f"torch {want!r}, got {got!r}, report {calls!r}")



def pool_sweep(dtype, cases=150):
    """Seeded geometries (kernel, stride, padding, dilation, ceil_mode) on
    small integers, so that windows hold equal maxima: indices and values
    must be torch's, and every call must stay on the plugin except those
    with a window of padding alone (its maximum -inf), which go to
    torch."""
    g = torch.Generator().manual_seed(5)

    def draw(lo, hi):
        return int(torch.randint(lo, hi + 1, (1,), generator=g))

    wrong, ran, padding_alone = [], 0, 0
    bt.report(reset=True)
    while ran < cases:
        k = (draw(1, 4), draw(1, 4))
        geo = dict(kernel_size=k, stride=(draw(1, 3), draw(1, 3)),
                   padding=(draw(0, k[0] // 2), draw(0, k[1] // 2)),
                   dilation=(draw(1, 2), draw(1, 2)),
                   ceil_mode=bool(draw(0, 1)), return_indices=True)
        x = torch.randint(-3, 4, (draw(1, 2), draw(1, 3), draw(1, 9),
                                  draw(1, 9)), generator=g).to(dtype)
        if draw(0, 3) == 0:
            x = x.transpose(-1, -2)
        try:
            want = F.max_pool2d(x, **geo)
        except RuntimeError:
            continue  # a geometry torch refuses
        ran += 1
        padding_alone += bool((want[0] == -inf).any())
        with bt.offload("core"):
            got = F.max_pool2d(x, **geo)
        if not same(got, want):
            wrong.append((tuple(x.shape), geo))
    calls = bt.report(reset=True).get(
        "aten.max_pool2d_with_indices.default", {})
    t.ok(not wrong and 0 < padding_alone < cases / 4 and
         calls.get("plugin_calls") == cases - padding_alone and
         calls.get("fallback_calls", 0) == padding_alone,
         f"max_pool2d with indices, {cases} geometries with ties in {dtype}: "
         "torch's values and indices, on the plugin",
         f"{len(wrong)} differ, first {wrong[:3]}; report {calls!r}")


pool_sweep(torch.float32)
pool_sweep(torch.float64)
t.done()

for expr, aten in LAYOUTS:
    bt.report(reset=True)
    want, got = run(expr, False), run(expr, True)
    calls = bt.report(reset=True).get(aten, {})
    t.ok(want[0] == got[0] == "ok" and same(got[1], want[1]) and
         got[1].stride() == want[1].stride() and
         calls.get("plugin_calls", 0) >= 1,
         f"{expr}: torch's result and strides, from the plugin ({aten})",
         f"torch {want[1].stride()}, got {got!r}, report {calls!r}")
