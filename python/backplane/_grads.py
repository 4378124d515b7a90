"""Derivatives of core ops, for the torch bridge's explicit ops
(torch.ops.bp_core.*): each formula takes the call's arguments (a list,
in schema order, defaults filled in), its result and the gradient of the
result, and returns one gradient per argument (None where there is none),
computed with core ops.  backplane/torch.py registers them as the ops'
Autograd kernels."""

import math

import torch

# The same Op cache and helpers as offload's table.
from backplane._aten_backward import _one_minus
from backplane._aten_base import core


def _mul(a, b):
    return core("mul")(a, b)


def _scale(a, s):
    return core("mul.Scalar")(a, float(s))


def _reduce_to(g, like):
    """g summed over the dims that broadcasting added or widened, so that
    it has like's shape (None when like is not a tensor)."""
    if not isinstance(like, torch.Tensor):
        return None
    shape = tuple(like.shape)
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape)
                                if n == 1 and g.shape[lead + i] != 1]
    if dims:
        g = core("sum")(g, dims, True)
        if lead:
            g = g.reshape(shape)
    return g


def _expand_back(g, x, dims, keepdim):
    """A reduction's gradient g spread back over x's shape."""
    if not keepdim:
        for d in sorted(d % x.dim() for d in dims):
            g = g.unsqueeze(d)
    return g.expand(x.shape)


def _reduced_dims(x, dims):
    return list(range(x.dim())) if not dims else [d % x.dim() for d in dims]


def _zero(like):
    return torch.zeros((), dtype=like.dtype, device=like.device)


def _binary(name):
    def grad(args, out, g):
        a, b = args[0], args[1]
        alpha = args[2] if len(args) > 2 else 1.0
        if name == "add":
            ga, gb = g, _scale(g, alpha)
        elif name == "sub":
            ga, gb = g, _scale(g, -alpha)
        elif name == "mul":
            ga, gb = _mul(g, b), _mul(g, a)
        elif name == "div":
            ga = core("div")(g, b)
            gb = _scale(core("div")(_mul(ga, a), b), -1)
        else:  # maximum, minimum: ties split the gradient, as torch's
            pick = core("gt" if name == "maximum" else "lt")(a, b)
            half = _scale(g, 0.5)
            tie = core("eq")(a, b)
            ga = core("where")(pick, g, core("where")(tie, half,
                                                      _zero(g)))
            gb = core("sub")(g, ga)
        return [_reduce_to(ga, a), _reduce_to(gb, b)]
    return grad


def _unary(fn):
    def grad(args, out, g):
        return [fn(args[0], out, g)]
    return grad


def _sign(x):
    one = torch.ones((), dtype=x.dtype, device=x.device)
    return core("where")(core("gt.Scalar")(x, 0.0), one,
                         core("where")(core("lt.Scalar")(x, 0.0),
                                       _scale(one, -1), _zero(x)))


UNARY = {
    "neg": lambda x, y, g: _scale(g, -1),
    "abs": lambda x, y, g: _mul(g, _sign(x)),
    "exp": lambda x, y, g: _mul(g, y),
    "log": lambda x, y, g: core("div")(g, x),
    "sqrt": lambda x, y, g: core("div")(g, _scale(y, 2)),
    "rsqrt": lambda x, y, g: _mul(g, _scale(_mul(y, _mul(y, y)), -0.5)),
    "relu": lambda x, y, g: core("where")(core("gt.Scalar")(x, 0.0), g,
                                          _zero(g)),
    "sigmoid": lambda x, y, g: _mul(g, _mul(y, _one_minus(y))),
    "tanh": lambda x, y, g: _mul(g, _one_minus(_mul(y, y))),
    "sin": lambda x, y, g: _mul(g, core("cos")(x)),
    "cos": lambda x, y, g: _scale(_mul(g, core("sin")(x)), -1),
    "erf": lambda x, y, g: _mul(g, _scale(core("exp")(_scale(_mul(x, x),
                                                             -1)),
                                          2 / math.sqrt(math.pi))),
    "silu": lambda x, y, g: _mul(g, _silu_d(x)),
}


def _silu_d(x):
    s = core("sigmoid")(x)
    return _mul(s, core("add.Scalar")(_mul(x, _one_minus(s)), 1.0))


def _sum(args, out, g):
    x, dims, keepdim = args[0], args[1], args[2]
    return [_expand_back(g, x, _reduced_dims(x, dims), keepdim)]


def _mean(args, out, g):
    x, dims, keepdim = args[0], args[1], args[2]
    dims = _reduced_dims(x, dims)
    count = 1
    for d in dims:
        count *= x.shape[d]
    return [_expand_back(_scale(g, 1.0 / max(count, 1)), x, dims, keepdim)]


def _matmul(args, out, g):
    a, b = args[0], args[1]
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g2 = g
    if a.dim() == 1:
        g2 = g2.unsqueeze(-2)
    if b.dim() == 1:
        g2 = g2.unsqueeze(-1)
    mm = core("matmul")
    ga = mm(g2, b2.transpose(-1, -2))
    gb = mm(a2.transpose(-1, -2), g2)
    ga = ga.squeeze(-2) if a.dim() == 1 else ga
    gb = gb.squeeze(-1) if b.dim() == 1 else gb
    return [_reduce_to(ga, a), _reduce_to(gb, b)]


def _linear(args, out, g):
    x, w, bias = args[0], args[1], args[2]
    gx = core("matmul")(g, w)
    g2, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])
    gw = core("matmul")(g2.t(), x2)
    gb = None if bias is None else core("sum")(g2, [0], False)
    return [gx, gw, gb]


def _softmax(args, out, g):
    dim = args[1]
    total = core("sum")(_mul(g, out), [dim], True)
    return [_mul(out, core("sub")(g, total)), None]


def _log_softmax(args, out, g):
    dim = args[1]
    total = core("sum")(g, [dim], True)
    return [core("sub")(g, _mul(core("exp")(out), total)), None]


def _layer_norm(args, out, g):
    x, shape, w, b, eps = args
    dims = list(range(x.dim() - len(shape), x.dim()))
    outer = list(range(x.dim() - len(shape)))
    mean = core("mean")(x, dims, True)
    d = core("sub")(x, mean)
    rstd = core("rsqrt")(core("add.Scalar")(
        core("mean")(_mul(d, d), dims, True), float(eps)))
    xhat = _mul(d, rstd)
    gw_in = _mul(g, w) if w is not None else g
    m = core("mean")
    gx = _mul(rstd, core("sub")(core("sub")(gw_in, m(gw_in, dims, True)),
                                _mul(xhat, m(_mul(gw_in, xhat), dims,
                                             True))))
    gw = None if w is None else core("sum")(_mul(g, xhat), outer, False)
    gb = None if b is None else core("sum")(g, outer, False)
    return [gx, None, gw, gb, None]


def _where(args, out, g):
    cond, a, b = args
    z = _zero(g)
    return [None, _reduce_to(core("where")(cond, g, z), a),
            _reduce_to(core("where")(cond, z, g), b)]


def _masked_fill(args, out, g):
    mask = args[1]
    return [core("where")(mask, _zero(g), g), None, None]


def _clamp(args, out, g):
    x, lo, hi = args
    keep = None
    if lo is not None:
        keep = core("ge.Scalar")(x, lo)
    if hi is not None:
        le = core("le.Scalar")(x, hi)
        keep = le if keep is None else core("logical_and")(keep, le)
    if keep is None:
        return [g, None, None]
    return [core("where")(keep, g, _zero(g)), None, None]


def _cat(args, out, g):
    tensors, dim = args[0], args[1]
    grads, at = [], 0
    for t in tensors:
        n = t.shape[dim] if t.dim() else 0
        grads.append(g.narrow(dim, at, n) if t.numel() else
                     torch.zeros_like(t))
        at += n
    return [grads, None]


def _cast(args, out, g):
    x = args[0]
    if not x.is_floating_point():
        return [None, None]
    return [core("cast")(g, x.dtype), None]


FORMULAS = {
    "contiguous": lambda args, out, g: [g],
    "cast": _cast,
    "sum": _sum, "mean": _mean,
    "matmul": _matmul, "linear": _linear,
    "softmax": _softmax, "log_softmax": _log_softmax,
    "layer_norm": _layer_norm,
    "where": _where, "masked_fill": _masked_fill, "clamp": _clamp,
    "cat": _cat,
}
for _n in ("add", "sub", "mul", "div", "maximum", "minimum"):
    FORMULAS[_n] = _binary(_n)
for _n, _f in UNARY.items():
    FORMULAS[_n] = _unary(_f)
