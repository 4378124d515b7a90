"""Autograd of the torch bridge's explicit ops: torch.autograd.gradcheck in
float64 of every core op with a derivative (backplane/_grads.py), with
broadcasting, reductions over several dims, batched and 1-D matmuls, and
Tensor[] arguments; an op without one still warns."""

import os
import warnings

import taplib as t

np, torch = t.require("numpy", "torch")

import backplane  # noqa: E402
import backplane._grads as grads  # noqa: E402
import backplane.torch as bt  # noqa: E402

backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
bt.register("core")
ops = torch.ops.bp_core
gen = torch.Generator().manual_seed(3)


def r(*shape, lo=-1.0, hi=1.0, away=0.0):
    """float64 values in [lo, hi], at least `away` from 0, that require
    grad."""
    x = torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo)
    x = x + lo
    if away:
        x = torch.where(x.abs() < away, torch.full_like(x, away), x)
    return x.requires_grad_()


CASES = {
    "add": [lambda: ((r(3, 4), r(4)), {"alpha": 2.5})],
    "sub": [lambda: ((r(2, 1, 4), r(3, 1)), {})],
    "mul": [lambda: ((r(3, 4), r(4)), {})],
    "div": [lambda: ((r(3, 4), r(3, 1, away=0.5)), {})],
    "maximum": [lambda: ((r(3, 4), r(4)), {})],
    "minimum": [lambda: ((r(3, 4), r(3, 4)), {})],
    "neg": [lambda: ((r(5),), {})],
    "abs": [lambda: ((r(5, away=0.1),), {})],
    "exp": [lambda: ((r(5),), {})],
    "log": [lambda: ((r(5, lo=0.2, hi=2),), {})],
    "sqrt": [lambda: ((r(5, lo=0.2, hi=2),), {})],
    "rsqrt": [lambda: ((r(5, lo=0.2, hi=2),), {})],
    "relu": [lambda: ((r(5, away=0.1),), {})],
    "sigmoid": [lambda: ((r(5),), {})],
    "tanh": [lambda: ((r(5),), {})],
    "sin": [lambda: ((r(5),), {})],
    "cos": [lambda: ((r(5),), {})],
    "erf": [lambda: ((r(5),), {})],
    "silu": [lambda: ((r(5),), {})],
    "sum": [lambda: ((r(2, 3, 4), [0, 2]), {}),
            lambda: ((r(2, 3), [1], True), {}),
            lambda: ((r(2, 3),), {})],
    "mean": [lambda: ((r(2, 3, 4), [-1]), {}),
             lambda: ((r(2, 3), [0, 1], True), {})],
    "matmul": [lambda: ((r(3, 4), r(4, 5)), {}),
               lambda: ((r(2, 3, 4), r(4, 5)), {}),
               lambda: ((r(4), r(4, 5)), {}),
               lambda: ((r(2, 3, 4), r(4)), {})],
    "linear": [lambda: ((r(2, 3, 4), r(5, 4), r(5)), {}),
               lambda: ((r(3, 4), r(5, 4)), {})],
    "softmax": [lambda: ((r(3, 5), 1), {})],
    "log_softmax": [lambda: ((r(3, 5), 0), {})],
    "layer_norm": [lambda: ((r(3, 4), [4], r(4), r(4)), {}),
                   lambda: ((r(2, 3, 4), [3, 4]), {})],
    "where": [lambda: ((torch.rand(3, 4, generator=gen) > 0.5, r(3, 4),
                        r(4)), {})],
    "masked_fill": [lambda: ((r(3, 4), torch.rand(3, 4, generator=gen) >
                              0.5, 2.0), {})],
    "clamp": [lambda: ((r(8), -0.5, 0.5), {}),
              lambda: ((r(8),), {"min": 0.25})],
    "cat": [lambda: (([r(2, 3), r(1, 3), r(4, 3)],), {}),
            lambda: (([r(2, 3), r(2, 1)], 1), {})],
    "contiguous": [lambda: ((r(4, 3).t(),), {})],
    "cast": [lambda: ((r(3), torch.float64), {})],
}

missing = sorted(set(grads.FORMULAS) - set(CASES))
t.ok(not missing, "every core op with a derivative has a gradcheck case",
     missing)
for name, makers in CASES.items():
    fails = []
    for make in makers:
        args, kwargs = make()
        inputs = [a for a in args if isinstance(a, torch.Tensor) and
                  a.requires_grad]
        for a in args:
            if isinstance(a, list):
                inputs += a

        def fn(*_, args=args, kwargs=kwargs):
            return getattr(ops, name)(*args, **kwargs)
        try:
            good = torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            good = False
            fails.append(f"{type(e).__name__}: {str(e)[:300]}")
        if not good and not fails:
            fails.append("gradcheck returned False")
    t.ok(not fails, f"gradcheck of bp_core.{name} ({len(makers)} cases)",
         "\n".join(fails))

x = r(3, 4)
y = ops.mul(ops.exp(x), 2.0 * torch.ones(4, dtype=torch.float64))
y.sum().backward()
t.ok(torch.allclose(x.grad, 2 * x.detach().exp()),
     "a chain of ops backpropagates through each op's formula")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    z = ops.cumsum(r(4), 0)
t.ok(not z.requires_grad and any("no derivative" in str(c.message)
                                 for c in caught),
     "an op without a formula (cumsum) still says it has no derivative")
with torch.no_grad():
    z = ops.mul(r(3), r(3))
t.ok(not z.requires_grad, "under no_grad the result does not require grad")

t.done()
