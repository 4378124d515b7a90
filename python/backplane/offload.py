"""backplane.torch.offload: an unmodified model's aten ops on a plugin.

    with backplane.torch.offload("cpu"):       # a loaded plugin, by name
        y = model(x)
    print(backplane.torch.report())

A TorchDispatchMode sees every aten op that torch runs below autograd,
forward and backward.  An op in the table of _aten.py runs as core ops;
torch's views, factories and metadata ops stay torch's; anything else, or
a call the table cannot take (a dtype, device or argument the plugin
lacks), falls back to torch's own kernel with one warning per op (or
raises UnsupportedError with fallback="error").  Each call is counted and
timed for report().
"""

import collections
import time
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import backplane
from backplane import _aten

_stats = collections.defaultdict(lambda: [0, 0.0, 0, 0.0, ""])
_warned = set()
_plan = {}  # aten overload -> (stays torch's, its name, its table entry)


def report(reset=False):
    """{aten op: {"plugin_calls", "plugin_ms", "fallback_calls",
    "fallback_ms", "reason"}} of every op run under offload since the last
    reset; torch's views and factories are not listed."""
    out = {name: {"plugin_calls": s[0], "plugin_ms": s[1] * 1e3,
                  "fallback_calls": s[2], "fallback_ms": s[3] * 1e3,
                  "reason": s[4]}
           for name, s in sorted(_stats.items())}
    if reset:
        _stats.clear()
    return out


def _torch_own(func):
    """Whether func stays torch's: a view or other alias of an input, a
    factory (no tensor argument), or an op on metadata only."""
    schema = func._schema
    if any(r.alias_info is not None and not r.alias_info.is_write
           for r in schema.returns):
        return True  # a view (as_strided, view, transpose, split, ...)
    tensors = [a for a in schema.arguments
               if "Tensor" in str(a.type)]
    if not tensors:
        return True  # a factory (empty, ones, arange, scalar_tensor, ...)
    name = func._schema.name
    return name in ("aten::lift_fresh", "aten::detach", "aten::alias",
                    "aten::_unsafe_view", "aten::_reshape_alias",
                    "aten::squeeze_", "aten::unsqueeze_", "aten::t_",
                    "aten::transpose_", "aten::as_strided_",
                    "aten::swapdims_", "aten::resize_as_",
                    "aten::_local_scalar_dense", "aten::set_",
                    "aten::resize_", "aten::empty_like", "aten::zeros_like",
                    "aten::ones_like", "aten::full_like", "aten::new_empty",
                    "aten::new_zeros", "aten::new_ones", "aten::new_full",
                    "aten::new_empty_strided", "aten::is_same_size",
                    "aten::result_type",
                    "aten::_has_compatible_shallow_copy_type")


def _dtype_set(dtypes):
    """offload's dtypes= as a set of torch dtypes (None: every dtype)."""
    if dtypes is None:
        return None
    if isinstance(dtypes, torch.dtype):
        return {dtypes}
    try:
        out = set(dtypes)
    except TypeError:
        raise TypeError(f"offload: dtypes must be None or a collection of "
                        f"torch dtypes, got {type(dtypes).__name__}") from None
    for d in out:
        if not isinstance(d, torch.dtype):
            raise TypeError(f"offload: dtypes holds {d!r}, which is not a "
                            f"torch dtype")
    return out


def _dtypes_of(args, kwargs):
    found = set()
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            found.add(a.dtype)
        elif isinstance(a, (list, tuple)):
            found.update(e.dtype for e in a if isinstance(e, torch.Tensor))
    return found


class offload(TorchDispatchMode):
    """Runs the aten ops of the code in its scope on a plugin's kernels.

    offload(plugin_or_namespace="core", *, fallback="cpu", dtypes=None):
    the target is a backplane.Plugin or a loaded plugin's name (its
    kernels, and the host's composites over them), or an op namespace
    ("core": whichever plugin has the kernel).  fallback="cpu" runs what
    the plugin lacks with torch's kernels, warning once per op;
    fallback="error" raises UnsupportedError instead.  dtypes, a set of
    torch dtypes, limits the plugin to calls of those dtypes.  Usable as
    a context manager or a decorator.
    """

    def __init__(self, plugin_or_namespace="core", *, fallback="cpu",
                 dtypes=None):
        super().__init__()
        if fallback not in ("cpu", "error"):
            raise ValueError(f"offload: fallback must be 'cpu' or 'error', "
                             f"got {fallback!r}")
        target = plugin_or_namespace
        if isinstance(target, str) and target != "core":
            loaded = [p for p in backplane.plugins()
                      if p.state == "loaded" and p.name == target]
            if not loaded:
                raise backplane.NotFoundError(
                    f"offload: no loaded plugin named {target!r} (load one, "
                    f"or give the op namespace 'core')")
            target = loaded[0]
        elif not isinstance(target, (str, backplane.Plugin)):
            raise TypeError(f"offload: expected a backplane.Plugin, a plugin "
                            f"name or 'core', got "
                            f"{type(target).__name__}")
        self.plugin = target if isinstance(target, backplane.Plugin) else None
        self.fallback = fallback
        self.dtypes = _dtype_set(dtypes)

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        wrapped.__name__ = getattr(fn, "__name__", "offloaded")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped

    def _why_not(self, func, args, kwargs):
        """Why this call cannot go to the plugin, or None."""
        if self.dtypes is not None:
            other = _dtypes_of(args, kwargs) - self.dtypes
            if other:
                return f"dtype {sorted(map(str, other))[0]} not offloaded"
        return None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        known = _plan.get(func)
        if known is None:  # once per aten overload
            known = _plan[func] = (_torch_own(func), str(func),
                                   _aten.TABLE.get(str(func)))
        own, name, entry = known
        if own:
            return func(*args, **kwargs)
        reason = self._why_not(func, args, kwargs) if entry else \
            "no core op for it"
        stats = _stats[name]
        if reason is None:
            start = time.perf_counter()
            # Below autograd, which torch runs above this mode: grad mode
            # off, so that the bridge does not warn of inputs that require
            # grad.
            grad = torch.is_grad_enabled()
            torch._C._set_grad_enabled(False)
            try:
                result = entry(args, kwargs)
                stats[0] += 1
                stats[1] += time.perf_counter() - start
                return result
            except _aten.Unsupported as e:
                reason = str(e)
            except backplane.Error as e:
                reason = f"{type(e).__name__}: {e}"
            finally:
                torch._C._set_grad_enabled(grad)
        if self.fallback == "error":
            raise backplane.UnsupportedError(
                f"offload: {name} cannot run on the plugin ({reason})")
        if name not in _warned:
            _warned.add(name)
            warnings.warn(f"backplane.torch.offload: {name} falls back to "
                          f"torch ({reason})", stacklevel=2)
        stats[4] = reason
        start = time.perf_counter()
        result = func(*args, **kwargs)
        stats[2] += 1
        stats[3] += time.perf_counter() - start
        return result
