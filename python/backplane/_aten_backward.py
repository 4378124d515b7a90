"""The offload table's backward ops (and nll_loss's forward), as
formulas in core ops.  _aten.py merges TABLE into its own."""

import math

import torch

from backplane._aten_base import Unsupported, _to, core


def _one_minus(y):
    return core("add.Scalar")(core("mul.Scalar")(y, -1.0), 1.0)


def _tanh_backward(args, kwargs):
    grad, out = args
    return core("mul")(grad, _one_minus(core("mul")(out, out)))


def _sigmoid_backward(args, kwargs):
    grad, out = args
    return core("mul")(grad, core("mul")(out, _one_minus(out)))


def _threshold_backward(args, kwargs):
    grad, x, threshold = args
    zero = torch.zeros((), dtype=grad.dtype, device=grad.device)
    # torch's test is x <= threshold: a NaN keeps its gradient
    return core("where")(core("le.Scalar")(x, threshold), zero, grad)


def _softmax_backward(log):
    def fn(args, kwargs):
        grad, out, dim, input_dtype = args
        if input_dtype != grad.dtype:
            raise Unsupported("an input dtype other than the gradient's")
        if log:  # grad - exp(out) * sum(grad)
            total = core("sum")(grad, [dim], True)
            return core("sub")(grad, core("mul")(core("exp")(out), total))
        total = core("sum")(core("mul")(grad, out), [dim], True)
        return core("mul")(out, core("sub")(grad, total))
    return fn


def _gelu_backward(args, kwargs):
    grad, x = args[0], args[1]
    approximate = kwargs.get("approximate", args[2] if len(args) > 2
                             else "none")
    mul, add = core("mul"), core("add")
    muls, adds = core("mul.Scalar"), core("add.Scalar")
    if approximate == "tanh":  # torch's formula, term by term
        beta, kappa = math.sqrt(2 / math.pi), 0.044715
        x2 = mul(x, x)
        inner = muls(add(x, muls(mul(x2, x), kappa)), beta)
        th = core("tanh")(inner)
        left_d = muls(adds(th, 1.0), 0.5)
        right_d = mul(mul(muls(x, 0.5), _one_minus(mul(th, th))),
                      muls(adds(muls(x2, 3 * kappa), 1.0), beta))
        return mul(grad, add(left_d, right_d))
    if approximate != "none":
        raise Unsupported(f"approximate={approximate!r}")
    # Phi(x) + x phi(x)
    cdf = muls(adds(core("erf")(muls(x, 1 / math.sqrt(2))), 1.0), 0.5)
    pdf = muls(core("exp")(muls(mul(x, x), -0.5)), 1 / math.sqrt(2 * math.pi))
    return mul(grad, add(cdf, mul(x, pdf)))


def _layer_norm_backward(args, kwargs):
    grad, x, shape, mean, rstd, weight, bias, mask = args
    n = len(shape)
    dims = list(range(x.dim() - n, x.dim()))
    outer = list(range(x.dim() - n))
    mul, sub, cmean = core("mul"), core("sub"), core("mean")
    xhat = mul(sub(x, mean), rstd)
    g = mul(grad, weight) if weight is not None else grad
    gi = gw = gb = None
    if mask[0]:
        gi = mul(rstd, sub(sub(g, cmean(g, dims, True)),
                           mul(xhat, cmean(mul(g, xhat), dims, True))))
    if mask[1] and weight is not None:
        gw = core("sum")(mul(grad, xhat), outer, False)
    if mask[2] and bias is not None:
        gb = core("sum")(grad, outer, False)
    return gi, gw, gb


def _nll_weights(target, weight, ignore_index, dtype):
    """Each target's class weight (0 where ignored), and the targets with
    the ignored ones made 0 (a valid index)."""
    valid = core("ne.Scalar")(target, ignore_index)
    zero = torch.zeros((), dtype=target.dtype, device=target.device)
    safe = core("where")(valid, target, zero)
    w = _to(valid, dtype)
    if weight is not None:
        w = core("mul")(w, core("index_select")(weight, 0, safe))
    return w, safe


def _nll_loss(args, kwargs):
    x, target, weight, reduction, ignore_index = args
    if x.dim() not in (1, 2) or target.dtype != torch.int64:
        raise Unsupported("an input that is not [C] or [N, C]")
    x2 = x if x.dim() == 2 else x.view(1, -1)
    t1 = target.reshape(-1)
    w, safe = _nll_weights(t1, weight, ignore_index, x.dtype)
    picked = core("gather")(x2, 1, safe.view(-1, 1)).view(-1)
    losses = core("mul.Scalar")(core("mul")(picked, w), -1.0)
    total = core("sum")(w, [], False)
    if reduction == 0:
        return (losses if x.dim() == 2 else losses.view(())), total
    out = core("sum")(losses, [], False)
    if reduction == 1:
        out = core("div")(out, total)
    return out, total


def _nll_loss_backward(args, kwargs):
    grad, x, target, weight, reduction, ignore_index, total = args
    if x.dim() not in (1, 2):
        raise Unsupported("an input that is not [C] or [N, C]")
    x2 = x if x.dim() == 2 else x.view(1, -1)
    t1 = target.reshape(-1)
    w, safe = _nll_weights(t1, weight, ignore_index, x.dtype)
    g = grad.reshape(-1) if reduction == 0 else grad
    if reduction == 1:
        g = core("div")(g, total)
    scale = core("mul.Scalar")(core("mul")(w, g), -1.0).view(-1, 1)
    classes = torch.arange(x2.shape[1], device=x.device).view(1, -1)
    hit = core("eq")(classes, safe.view(-1, 1))
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    out = core("where")(hit, scale, zero)
    return out if x.dim() == 2 else out.view(-1)


def _select_backward(args, kwargs):
    grad, sizes, dim, index = args
    out = torch.zeros(sizes, dtype=grad.dtype, device=grad.device)
    core("copy_")(out.select(dim, index), grad)
    return out


def _slice_backward(args, kwargs):
    grad, sizes, dim, start, end, step = args
    out = torch.zeros(sizes, dtype=grad.dtype, device=grad.device)
    view = out.narrow(dim, 0, out.shape[dim])[
        (slice(None),) * (dim % out.dim()) + (slice(start, end, step),)]
    core("copy_")(view, grad)
    return out


TABLE = {
    "aten.gelu_backward.default": _gelu_backward,
    "aten.native_layer_norm_backward.default": _layer_norm_backward,
    "aten.nll_loss_forward.default": _nll_loss,
    "aten.nll_loss_backward.default": _nll_loss_backward,
    "aten.select_backward.default": _select_backward,
    "aten.slice_backward.default": _slice_backward,
    "aten.tanh_backward.default": _tanh_backward,
    "aten.sigmoid_backward.default": _sigmoid_backward,
    "aten.threshold_backward.default": _threshold_backward,
    "aten._softmax_backward_data.default": _softmax_backward(False),
    "aten._log_softmax_backward_data.default": _softmax_backward(True),
}
