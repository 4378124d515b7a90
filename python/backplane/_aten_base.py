"""What the offload table shares: core ops by name, casts, and the checks
that leave a call to torch.

A call whose result core would compute otherwise than torch (a number
that the dtype cannot hold, a cast that torch wraps and core saturates, an
input that partly overlaps what an in-place op writes, ...) raises
Unsupported here, and offload runs torch's own kernel for it.
python.md lists these cases.
"""

import math

import torch

import backplane


class Unsupported(Exception):
    """This call cannot run on the plugin; the message says why."""


_ops = {}


def core(name):
    """core::name as an Op that takes and returns torch tensors."""
    op = _ops.get(name)
    if op is None:
        op = _ops[name] = backplane.Op("core::" + name, torch=True)
    return op


def _number(x):
    return isinstance(x, (bool, int, float))


# torch converts these to float16 and bfloat16 through float32 (c10's
# Half and BFloat16 are made from a float), rounding twice; core::cast
# rounds once.
_VIA_FLOAT = (torch.float64, torch.int32, torch.int64)


def _to(t, dtype):
    if t.dtype == dtype:
        return t
    if t.is_floating_point() and dtype in _INT_RANGE and \
            not _in_int_range(t, dtype):
        raise Unsupported(f"a NaN, infinity or value out of {dtype}'s range "
                          f"cast from {t.dtype}")
    if dtype in (torch.float16, torch.bfloat16) and t.dtype in _VIA_FLOAT:
        t = core("cast")(t, torch.float32)
    return core("cast")(t, dtype)


_INT_RANGE = {torch.uint8: (0, 2**8 - 1), torch.int8: (-2**7, 2**7 - 1),
              torch.int16: (-2**15, 2**15 - 1),
              torch.int32: (-2**31, 2**31 - 1),
              torch.int64: (-2**63, 2**63 - 1)}
_FLOAT_MAX = {torch.float16: 65504.0, torch.bfloat16: 3.3895313892515355e38,
              torch.float32: 3.4028234663852886e38}


def _in_int_range(t, dtype):
    """Whether every value of the float tensor t lies in integer dtype's
    range once truncated.  core::cast saturates NaN, infinities and values
    out of range; torch's conversion wraps them (C's undefined behaviour,
    in practice: -1.0 to uint8 is 255), so such a cast is left to torch."""
    if t.numel() == 0:
        return True
    lo, hi = _INT_RANGE[dtype]
    return bool(((t > float(lo) - 1) & (t < float(hi) + 1)).all())


def _exact(v, dtype):
    """Whether core, handed the number v (as a float64 or a Scalar), makes
    of it what torch does in dtype: a value in dtype's range that a float64
    holds exactly.  Any other (a negative for uint8, which torch wraps, a
    fraction for an integer dtype, which torch truncates, a value out of
    range, which torch refuses and core saturates, an integer past 2**53)
    is left to torch."""
    if isinstance(v, int) and abs(v) > 2**53:
        return False
    if dtype == torch.bool:
        return v in (0, 1)
    if dtype in _INT_RANGE:
        lo, hi = _INT_RANGE[dtype]
        return float(v).is_integer() and lo <= v <= hi
    if dtype in _FLOAT_MAX:
        return not math.isfinite(v) or abs(v) <= _FLOAT_MAX[dtype]
    return True


def _check_number(v, dtype):
    """A number operand: a float dtype takes any (torch computes in it as
    core does); an integer or bool dtype only one it holds exactly."""
    if not (dtype.is_floating_point or _exact(v, dtype)):
        raise Unsupported(f"the number {v!r} in {dtype}")


def _no_bool_sub(a, b):
    """torch refuses subtraction with a bool operand, tensor or number."""
    if any(x is True or x is False or
           (isinstance(x, torch.Tensor) and x.dtype == torch.bool)
           for x in (a, b)):
        raise Unsupported("subtraction with a bool operand")


def _span(t):
    """The bytes t's elements lie in: [first, end)."""
    lo = hi = t.data_ptr()
    size = t.element_size()
    for n, s in zip(t.shape, t.stride()):
        if s > 0:
            hi += (n - 1) * s * size
        else:
            lo += (n - 1) * s * size
    return lo, hi + size


def _partial_overlap(a, b):
    """Whether b's elements may lie among a's without b being a itself
    (the same bytes, shape and strides): torch refuses an in-place op whose
    input partly overlaps what it writes, and core reads the values from
    before the call, so such a call is left to torch."""
    if not isinstance(b, torch.Tensor) or a.numel() == 0 or b.numel() == 0:
        return False
    (alo, ahi), (blo, bhi) = _span(a), _span(b)
    if ahi <= blo or bhi <= alo:
        return False
    return not (alo == blo and a.shape == b.shape and
                a.stride() == b.stride() and a.dtype == b.dtype)


def _floating(t):
    """t in torch's default float dtype if it is not floating already (the
    dtype torch computes exp, sqrt, ... of integers in)."""
    return t if t.is_floating_point() else _to(t, torch.get_default_dtype())


def _same(a, b):
    """a == b elementwise, NaN equal to NaN."""
    eq = a == b
    return eq | (a.isnan() & b.isnan()) if a.is_floating_point() else eq


def _like(a, r):
    """r, computed from a (or from operands laid out as a), in the layout
    torch gives it: a's own strides where a is dense but not contiguous
    (a transposed or channels-last tensor), as torch.empty_like(a) does;
    core's results are contiguous."""
    if r.shape != a.shape or a.is_contiguous():
        return r
    out = torch.empty_like(a, dtype=r.dtype)
    if out.stride() == r.stride():
        return r
    core("copy_")(out, r)
    return out
