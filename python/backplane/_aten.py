"""The table of backplane.torch.offload: torch's aten overloads as core ops.

Each entry takes an aten call's (args, kwargs) and returns its result,
computed by core ops (Op objects with torch=True, which read torch tensors
in place and return torch tensors), or raises Unsupported, after which
the caller runs torch's own kernel.  torch's views, factories and metadata
ops are not here: they stay torch's (offload.py tells them apart by their
schemas).  Operand dtypes are first brought to torch's result_type, so
that results have torch's dtype exactly, whatever core's promotion rules
say of 0-dim tensors and numbers.
"""

import torch

from backplane import _aten_backward
from backplane._aten_base import (
    Unsupported, _check_number, _exact, _floating, _in_int_range, _INT_RANGE,
    _like, _no_bool_sub, _number, _partial_overlap, _same, _to, core)


def _binary(name, a, b, dtype=None, **kw):
    """core::name(a, b) with both in dtype (default: torch's result_type);
    a number b goes to the .Scalar overload."""
    if not isinstance(a, torch.Tensor):
        raise Unsupported("the first operand is not a tensor")
    dtype = dtype or torch.result_type(a, b)
    if _number(b):
        _check_number(b, dtype)
        return _like(a, core(name + ".Scalar")(_to(a, dtype), b, **kw))
    r = core(name)(_to(a, dtype), _to(b, dtype), **kw)
    # torch lays the result out as the first operand of the result's
    # shape (one that is not broadcast)
    return _like(a if a.shape == r.shape else b, r)


def _alpha(kwargs, a, b):
    """alpha for core in the computation's dtype, torch.result_type(a, b)
    (worked out only for an alpha other than the int 1); torch's own rules
    (no bool alpha, no fraction for integers, its conversion) otherwise."""
    alpha = kwargs.get("alpha", 1)
    if type(alpha) is int and alpha == 1:
        return {}
    dtype = torch.result_type(a, b)
    if isinstance(alpha, bool) or not _number(alpha) or \
            not _exact(alpha, dtype) or \
            (isinstance(alpha, float) and not dtype.is_floating_point):
        raise Unsupported(f"alpha {alpha!r} in {dtype}")
    return {} if alpha == 1 else {"alpha": float(alpha)}


def _arith(name):
    def fn(args, kwargs):
        a, b = args[0], args[1]
        if name == "sub":
            _no_bool_sub(a, b)
        extra = {}
        if name in ("add", "sub"):
            if len(args) > 2:
                kwargs = {"alpha": args[2]}
            extra = _alpha(kwargs, a, b)
        return _binary(name, a, b, **extra)
    return fn


def _div(args, kwargs):
    if kwargs.get("rounding_mode") is not None:
        raise Unsupported("rounding_mode")
    dtype = torch.result_type(args[0], args[1])
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    return _binary("div", args[0], args[1], dtype)


def _compare(name):
    def fn(args, kwargs):
        return _binary(name, args[0], args[1])
    return fn


def _inplace(name):
    """self.name_(other): computed in self's dtype, which torch's result
    type must not exceed; returns self itself."""
    def fn(args, kwargs):
        self, other = args[0], args[1]
        if torch.result_type(self, other) != self.dtype:
            raise Unsupported("the result's dtype is not self's")
        if name == "sub":
            _no_bool_sub(self, other)
        if _partial_overlap(self, other):
            raise Unsupported("an input that partly overlaps self")
        if len(args) > 2:  # alpha, positional in add_.Scalar's schema
            kwargs = dict(kwargs, alpha=args[2])
        extra = _alpha(kwargs, self, other) if name in ("add", "sub") else {}
        if _number(other):
            _check_number(other, self.dtype)
            core(name + "_.Scalar")(self, other, **extra)
        else:
            core(name + "_")(self, _to(other, self.dtype), **extra)
        return self
    return fn


def _unary(name, floating=True, integers=True):
    """core::name of a tensor; floating: integers and bools are computed
    in the default float dtype, as torch does, unless `integers` is off
    (torch has no such kernel: gelu, silu)."""
    def fn(args, kwargs):
        a = args[0]
        if not (integers or a.is_floating_point()):
            raise Unsupported(f"{name} of {a.dtype}")
        return _like(a, core(name)(_floating(a) if floating else a))
    return fn


def _unary_(name):
    def fn(args, kwargs):
        if not args[0].is_floating_point():
            raise Unsupported("in place on an integer tensor")
        core(name + "_")(args[0])
        return args[0]
    return fn


def _gelu(args, kwargs):
    approximate = kwargs.get("approximate", args[1] if len(args) > 1
                             else "none")
    a = args[0]
    if not a.is_floating_point():
        raise Unsupported(f"gelu of {a.dtype}")  # torch has no such kernel
    return _like(a, core("gelu")(a, approximate=approximate))


def _pow(args, kwargs):
    a, b = args[0], args[1]
    dtype = torch.result_type(a, b)
    if dtype == torch.bool:
        raise Unsupported("pow of bools")
    if _number(b) and (not _exact(b, dtype) or
                       (not dtype.is_floating_point and b < 0)):
        # torch refuses these: an exponent out of the dtype's range, an
        # integer to a negative power
        raise Unsupported(f"the exponent {b!r} in {dtype}")
    return _binary("pow", a, b, dtype)


def _dims(dim, ndim):
    if dim is None:
        return []
    return [dim] if isinstance(dim, int) else list(dim)


def _sum(args, kwargs):
    a = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    dtype = kwargs.get("dtype")
    if dtype is not None and a.is_floating_point() and \
            not dtype.is_floating_point:
        raise Unsupported("a sum of floats in an integer dtype")
    if dtype is None and not (a.is_floating_point() or
                              a.dtype == torch.int64):
        dtype = torch.int64  # torch sums integers and bools in int64
    return core("sum")(a, _dims(dim, a.dim()), keepdim, dtype=dtype)


def _mean(args, kwargs):
    a = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if kwargs.get("dtype") is not None or not a.is_floating_point():
        raise Unsupported("mean with a dtype, or of integers")
    return core("mean")(a, _dims(dim, a.dim()), keepdim)


def _minmax(name):
    def fn(args, kwargs):
        a = args[0]
        dim = args[1] if len(args) > 1 else kwargs.get("dim", [])
        keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        return core(name)(a, _dims(dim, a.dim()), keepdim)
    return fn


def _argmax(args, kwargs):
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    return core("argmax")(args[0], dim, keepdim)


def _softmax(name):
    def fn(args, kwargs):
        if args[2]:
            raise Unsupported("half_to_float")
        return core(name)(args[0], args[1])
    return fn


def _matmul(args, kwargs):
    return core("matmul")(args[0], args[1])


def _mm(batched):
    """mm and bmm: core::matmul broadcasts, mm and bmm take matrices (a
    batch of them) of one dtype whose shapes agree exactly; anything else
    is left to torch, which says what is wrong."""
    rank = 3 if batched else 2

    def fn(args, kwargs):
        a, b = args[0], args[1]
        if a.dim() != rank or b.dim() != rank or a.dtype != b.dtype or \
                a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
            raise Unsupported(f"operands {tuple(a.shape)} {a.dtype} and "
                              f"{tuple(b.shape)} {b.dtype}")
        return core("matmul")(a, b)
    return fn


def _bias_fits(bias, shape):
    """Whether bias broadcasts to shape without growing it (addmm's and
    linear's rule; core broadcasts both ways)."""
    try:
        return tuple(torch.broadcast_shapes(bias.shape, shape)) == \
            tuple(shape)
    except RuntimeError:
        return False


def _addmm(args, kwargs):
    bias, m1, m2 = args[0], args[1], args[2]
    beta = kwargs.get("beta", args[3] if len(args) > 3 else 1)
    alpha = kwargs.get("alpha", args[4] if len(args) > 4 else 1)
    if beta != 1 or alpha != 1:
        raise Unsupported("beta or alpha other than 1")
    if not bias.dtype == m1.dtype == m2.dtype:
        raise Unsupported("operands of different dtypes")
    if m1.dim() != 2 or m2.dim() != 2 or m1.shape[1] != m2.shape[0] or \
            not _bias_fits(bias, (m1.shape[0], m2.shape[1])):
        raise Unsupported("operands whose shapes do not agree")
    if bias.dim() == 1 and bias.shape[0] == m2.shape[1]:
        return core("linear")(m1, m2.t(), bias)
    return _binary("add", core("matmul")(m1, m2), bias)


def _linear(args, kwargs):
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if w.dim() != 2 or x.dim() == 0 or x.shape[-1] != w.shape[1] or (
            bias is not None and
            not _bias_fits(bias, (*x.shape[:-1], w.shape[0]))):
        raise Unsupported("operands whose shapes do not agree")
    return core("linear")(x, w, bias)


def _layer_norm(args, kwargs):
    """native_layer_norm: (out, mean, rstd), mean and rstd [*, 1, ...] in
    the input's dtype, as torch returns them for backward."""
    x, shape, w, b, eps = args
    out = core("layer_norm")(x, list(shape), w, b, float(eps))
    dims = list(range(x.dim() - len(shape), x.dim()))
    mean = core("mean")(x, dims, True)
    d = core("sub")(x, mean)
    var = core("mean")(core("mul")(d, d), dims, True)
    rstd = core("rsqrt")(core("add.Scalar")(var, float(eps)))
    return out, mean, rstd


def _masked_fill(args, kwargs):
    self, mask, value = args
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise Unsupported("a value that is not 0-dim")
        value = value.item()
    if mask.dtype != torch.bool:
        raise Unsupported("a mask that is not bool")
    if not _exact(value, self.dtype):
        raise Unsupported(f"the value {value!r} in {self.dtype}")
    return core("masked_fill")(self, mask, value)


def _where(args, kwargs):
    cond, a, b = args
    dtype = torch.result_type(a, b)
    if _number(a) or _number(b):
        raise Unsupported("a number operand")
    return core("where")(cond, _to(a, dtype), _to(b, dtype))


def _index(args, kwargs):
    self, indices = args
    if (len(indices) != 1 or indices[0] is None
            or indices[0].dtype != torch.int64):
        # (torch 1.13 refuses int32 indices; later torch takes them)
        raise Unsupported("an index other than one int64 tensor")
    idx = indices[0]
    flat = core("index_select")(self, 0, idx.reshape(-1))
    return flat.view(tuple(idx.shape) + tuple(self.shape[1:]))


def _embedding(args, kwargs):
    weight, idx = args[0], args[1]
    padding_idx = args[2] if len(args) > 2 else kwargs.get("padding_idx", -1)
    return core("embedding")(weight, idx, padding_idx)


def _cat(args, kwargs):
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    return core("cat")(tensors, dim)


def _clone(args, kwargs):
    fmt = kwargs.get("memory_format")
    if fmt not in (None, torch.contiguous_format, torch.preserve_format):
        raise Unsupported(f"memory_format {fmt}")
    a = args[0]
    if fmt == torch.contiguous_format:
        out = torch.empty(a.shape, dtype=a.dtype, device=a.device)
    else:
        out = torch.empty_like(a)  # torch's layout for preserve_format
    core("copy_")(out, a)
    return out


def _copy_(args, kwargs):
    self, src = args[0], args[1]
    if self.device != src.device:
        raise Unsupported("a copy between devices")
    if _partial_overlap(self, src):
        raise Unsupported("a source that partly overlaps the destination")
    if src.is_floating_point() and self.dtype in _INT_RANGE and \
            not _in_int_range(src, self.dtype):
        raise Unsupported(f"a NaN, infinity or value out of {self.dtype}'s "
                          f"range copied from {src.dtype}")
    core("copy_")(self, src)
    return self


def _fill_(args, kwargs):
    value = args[1]
    if isinstance(value, torch.Tensor):
        value = value.item()
    if not _number(value) or not _exact(value, args[0].dtype):
        raise Unsupported(f"the value {value!r} in {args[0].dtype}")
    core("fill_")(args[0], float(value))
    return args[0]


def _zero_(args, kwargs):
    core("fill_")(args[0], 0.0)
    return args[0]


def _to_copy(args, kwargs):
    a = args[0]
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    if ((device is not None and torch.device(device) != a.device)
            or kwargs.get("memory_format") not in
            (None, torch.preserve_format)):
        raise Unsupported("a copy to another device or layout")
    if dtype is None or dtype == a.dtype:
        return _clone((a,), {})
    return _like(a, _to(a, dtype))


def _tri(lower):
    def fn(args, kwargs):
        a = args[0]
        k = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
        if a.dim() < 2:
            raise Unsupported("fewer than 2 dims")
        rows = torch.arange(a.shape[-2], device=a.device).view(-1, 1)
        cols = torch.arange(a.shape[-1], device=a.device)
        diff = core("sub")(cols, rows)  # column - row
        keep = core("le.Scalar" if lower else "ge.Scalar")(diff, k)
        zero = torch.zeros((), dtype=a.dtype, device=a.device)
        return core("where")(keep, a, zero)
    return fn


def _cumsum(args, kwargs):
    a, dtype = args[0], kwargs.get("dtype")
    if dtype is not None and (dtype == torch.bool or (
            a.is_floating_point() and not dtype.is_floating_point)):
        # torch refuses bool; it converts floats to integers its own way
        raise Unsupported(f"cumsum of {a.dtype} in {dtype}")
    return core("cumsum")(a, args[1], dtype=dtype)

def _topk(args, kwargs):
    """core's topk, unless equal values make the choice of indices: torch
    orders those by its selection algorithm, core by index (op-set.md), so
    such a call is left to torch."""
    values, indices = core("topk")(*args, **kwargs)
    self, k = args[0], args[1]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    if self.dim() == 0 or k == 0:
        return values, indices
    if k > 1 and _same(values.narrow(dim, 1, k - 1),
                       values.narrow(dim, 0, k - 1)).any():
        raise Unsupported("equal values among the k chosen")
    if (_same(self, values.narrow(dim, k - 1, 1)).sum(dim) > 1).any():
        raise Unsupported("values equal to the k-th outside the k chosen")
    return values, indices


def _convolution(args, kwargs):
    (x, w, bias, stride, padding, dilation, transposed, _out_padding,
     groups) = args
    if transposed or x.dim() != 4:
        raise Unsupported("a transposed or non-2-D convolution")
    if w.numel() == 0 or x.numel() == 0:
        raise Unsupported("an empty input or weight")  # torch's own rules
    return core("conv2d")(x, w, bias, list(stride), list(padding),
                          list(dilation), groups)


def _batch_norm(args, kwargs):
    x, w, b, mean, var, training, momentum, eps = args
    if training:
        raise Unsupported("batch_norm in training")
    out = core("batch_norm")(x, w, b, mean, var, False, float(momentum),
                             float(eps), False)
    empty = torch.empty(0, dtype=x.dtype, device=x.device)
    return out, empty, empty


def _avg_pool2d(args, kwargs):
    return core("avg_pool2d")(*args, **kwargs)


def _adaptive_avg_pool2d(args, kwargs):
    return core("adaptive_avg_pool2d")(args[0], list(args[1]))


def _index_select(args, kwargs):
    return core("index_select")(args[0], args[1], args[2])


def _stack(args, kwargs):
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    return core("stack")(list(args[0]), dim)


def _rsub(args, kwargs):
    """other - alpha * self."""
    self, other = args[0], args[1]
    if len(args) > 2:  # alpha is positional in rsub's schemas
        kwargs = dict(kwargs, alpha=args[2])
    _no_bool_sub(self, other)
    dtype = torch.result_type(self, other)
    _alpha(kwargs, self, other)  # torch's checks of alpha
    alpha = kwargs.get("alpha", 1)  # an int stays an int: exact in int64
    neg = _binary("mul", self, -alpha, dtype)
    return _binary("add", neg, other, dtype)


def _reciprocal(args, kwargs):
    x = _floating(args[0])
    return core("div")(torch.ones((), dtype=x.dtype, device=x.device), x)


def _bitwise_not(args, kwargs):
    if args[0].dtype != torch.bool:
        raise Unsupported("bitwise_not of integers")
    return core("logical_not")(args[0])


def _repeat_interleave(args, kwargs):
    """The indices repeat_interleave.Tensor makes of equal repeats (what
    x.repeat_interleave(r, dim) asks for): arange's values, each r times,
    made by a factory and views."""
    repeats = args[0]
    if repeats.dim() != 1 or repeats.numel() == 0:
        raise Unsupported("repeats that are not a non-empty 1-D tensor")
    r = int(repeats[0])
    if not bool((repeats == r).all()):
        raise Unsupported("unequal repeats")
    n = repeats.numel()
    idx = torch.arange(n, dtype=torch.int64, device=repeats.device)
    return idx.view(n, 1).expand(n, r).reshape(-1)


def _pair(v, default=None):
    v = list(v) if v is not None else []
    if not v:
        return default
    return v * 2 if len(v) == 1 else v


def _reaching(first, last, d, n, k):
    """The kernel positions i in range(k) whose input position start + i d
    lies in [0, n) for some window start in [first, last]."""
    lo = 0 if last >= 0 else -(last // d)
    hi = min(k - 1, (n - 1 - first) // d) if n - 1 - first >= 0 else -1
    return range(lo, hi + 1)


def _max_pool2d_with_indices(args, kwargs):
    """(max_pool2d, indices): the values by core::max_pool2d; each index
    (h W + w in the input) is torch's: the first window position, in its
    scan order, that holds the maximum.  One equality test per kernel
    position, last to first, over x padded with -inf (which never equals a
    maximum above -inf).  A window whose maximum is NaN (torch takes its
    last NaN) or -inf (torch takes its first position inside the input) is
    left to torch."""
    names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
    a = dict(zip(names, args[1:]), **kwargs)
    x = args[0]
    k = _pair(a["kernel_size"])
    st = _pair(a.get("stride"), k)
    pad = _pair(a.get("padding", [0]), [0, 0])
    dil = _pair(a.get("dilation", [1]), [1, 1])
    ceil = bool(a.get("ceil_mode", False))
    if not x.is_floating_point() or x.dim() not in (3, 4):
        raise Unsupported("an integer or not 3-/4-D input")
    out = core("max_pool2d")(x, k, st, pad, dil, ceil)
    if out.numel() == 0:
        return out, torch.empty(out.shape, dtype=torch.int64,
                                device=x.device)
    if not bool(core("gt.Scalar")(out, float("-inf")).all()):
        raise Unsupported("a window whose maximum is NaN or -inf")
    H, W = x.shape[-2], x.shape[-1]
    OH, OW = out.shape[-2], out.shape[-1]
    dev = x.device
    # Per dim: the kernel positions that reach the input from some window
    # (a kernel far wider than the input, with padding up to half of it,
    # reaches it from a few), and how far x must be padded with -inf
    # before (lead) and after (trail) for those positions to read.
    reach, lead, trail = [], [], []
    for i, n, size in ((0, OH, H), (1, OW, W)):
        r = _reaching(-pad[i], (n - 1) * st[i] - pad[i], dil[i], size, k[i])
        if not r:
            raise Unsupported("a window of padding alone")
        reach.append(r)
        lead.append(max(0, pad[i] - r[0] * dil[i]))
        trail.append(max(0, (n - 1) * st[i] - pad[i] + r[-1] * dil[i] -
                         (size - 1)))
    if len(reach[0]) * len(reach[1]) > 64:
        raise Unsupported("more than 64 kernel positions")  # torch's loop
    padded = x
    if any(lead) or any(trail):
        shape = x.shape[:-2] + (H + lead[0] + trail[0], W + lead[1] + trail[1])
        padded = torch.full(shape, float("-inf"), dtype=x.dtype, device=dev)
        core("copy_")(padded[..., lead[0]:lead[0] + H, lead[1]:lead[1] + W],
                      x)
    sh, sw = padded.stride(-2), padded.stride(-1)
    strides = padded.stride()[:-2] + (sh * st[0], sw * st[1])
    # the input index of each output's window origin (row 0, column 0)
    base = ((torch.arange(OH, device=dev) * st[0] - pad[0])[:, None] * W +
            (torch.arange(OW, device=dev) * st[1] - pad[1])[None, :])
    found = None
    for kh in reversed(reach[0]):
        for kw in reversed(reach[1]):
            # position (kh, kw) of window (0, 0), in padded
            row = lead[0] - pad[0] + kh * dil[0]
            col = lead[1] - pad[1] + kw * dil[1]
            view = padded.as_strided(
                out.shape, strides, padded.storage_offset() +
                row * sh + col * sw)
            here = core("add.Scalar")(base, kh * dil[0] * W + kw * dil[1])
            # the last hit taken is the first in scan order
            if found is None:
                found = core("contiguous")(here.expand(out.shape))
            else:
                found = core("where")(core("eq")(view, out), here, found)
    return out, found


TABLE = {
    "aten.add.Tensor": _arith("add"), "aten.add.Scalar": _arith("add"),
    "aten.sub.Tensor": _arith("sub"), "aten.sub.Scalar": _arith("sub"),
    "aten.mul.Tensor": _arith("mul"), "aten.mul.Scalar": _arith("mul"),
    "aten.div.Tensor": _div, "aten.div.Scalar": _div,
    "aten.div.Tensor_mode": _div,
    "aten.maximum.default": _arith("maximum"),
    "aten.minimum.default": _arith("minimum"),
    "aten.pow.Tensor_Scalar": _pow, "aten.pow.Tensor_Tensor": _pow,
    "aten.add_.Tensor": _inplace("add"), "aten.add_.Scalar": _inplace("add"),
    "aten.sub_.Tensor": _inplace("sub"), "aten.sub_.Scalar": _inplace("sub"),
    "aten.mul_.Tensor": _inplace("mul"), "aten.mul_.Scalar": _inplace("mul"),
    "aten.div_.Tensor": _inplace("div"), "aten.div_.Scalar": _inplace("div"),
    "aten.neg.default": _unary("neg", False),
    "aten.abs.default": _unary("abs", False),
    "aten.relu.default": _unary("relu", False),
    "aten.logical_not.default": _unary("logical_not", False),
    "aten.isnan.default": _unary("isnan", False),
    "aten.gelu.default": _gelu,
    "aten.sum.default": _sum, "aten.sum.dim_IntList": _sum,
    "aten.mean.default": _mean, "aten.mean.dim": _mean,
    "aten.amax.default": _minmax("amax"), "aten.amin.default": _minmax("amin"),
    "aten.argmax.default": _argmax,
    "aten._softmax.default": _softmax("softmax"),
    "aten._log_softmax.default": _softmax("log_softmax"),
    "aten.mm.default": _mm(False), "aten.bmm.default": _mm(True),
    "aten.matmul.default": _matmul, "aten.addmm.default": _addmm,
    "aten.linear.default": _linear,
    "aten.native_layer_norm.default": _layer_norm,
    "aten.masked_fill.Scalar": _masked_fill,
    "aten.masked_fill.Tensor": _masked_fill,
    "aten.where.self": _where,
    "aten.index.Tensor": _index,
    "aten.embedding.default": _embedding,
    "aten.cat.default": _cat,
    "aten.clone.default": _clone,
    "aten.copy_.default": _copy_,
    "aten.fill_.Scalar": _fill_, "aten.zero_.default": _zero_,
    "aten._to_copy.default": _to_copy,
    "aten.tril.default": _tri(True), "aten.triu.default": _tri(False),
    "aten.cumsum.default": _cumsum,
    "aten.topk.default": _topk,
    "aten.convolution.default": _convolution,
    "aten.native_batch_norm.default": _batch_norm,
    "aten.avg_pool2d.default": _avg_pool2d,
    "aten._adaptive_avg_pool2d.default": _adaptive_avg_pool2d,
    "aten.max_pool2d_with_indices.default": _max_pool2d_with_indices,
    "aten.index_select.default": _index_select,
    "aten.stack.default": _stack,
    "aten.rsub.Scalar": _rsub, "aten.rsub.Tensor": _rsub,
    "aten.reciprocal.default": _reciprocal,
    "aten.bitwise_not.default": _bitwise_not,
    "aten.repeat_interleave.Tensor": _repeat_interleave,
}
TABLE.update(_aten_backward.TABLE)
for _n in ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos",
           "erf", "silu"):
    TABLE[f"aten.{_n}.default"] = _unary(_n, integers=_n != "silu")
    TABLE[f"aten.{_n}_.default"] = _unary_(_n)
for _n in ("relu", "neg", "abs"):
    TABLE[f"aten.{_n}_.default"] = _unary_(_n)
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    TABLE[f"aten.{_n}.Tensor"] = _compare(_n)
    TABLE[f"aten.{_n}.Scalar"] = _compare(_n)
for _n in ("logical_and", "logical_or"):
    TABLE[f"aten.{_n}.default"] = _compare(_n)
