"""backplane.torch: every Backplane op as a torch op.

    import torch, backplane, backplane.torch
    cpu = backplane.load(".../cpu.so")
    backplane.torch.register(cpu)          # defines torch.ops.bp_core.*
    y = torch.ops.bp_core.layer_norm(x, [512], w, b, 1e-5)

Each op is defined in torch with its own schema text (Backplane's schema
grammar is a subset of torch's, alias and mutation annotations included),
through ``torch.library.Library.define`` and ``impl``, which exist from
torch 1.13 on.  An op gets:

- a CPU implementation, and a CUDA one when a plugin has CUDA kernels for
  it: the C extension reads torch tensors by their data pointers, calls
  the op, and hands the results to torch through DLPack, without copies;
- a Meta implementation computed by the op's meta function (bp_op_meta),
  so that meta tensors, ``torch.jit.trace`` and, on torch 2.x, fake tensors
  and ``torch.compile`` work without running a kernel.  Where torch has
  ``torch.library.register_fake`` (2.4+) or ``impl_abstract`` (2.2, 2.3)
  the same function is registered there too.
"""

try:
    import torch
    import torch.library
except ImportError as exc:  # pragma: no cover - depends on the machine
    raise ImportError(
        "backplane.torch needs PyTorch with torch.library (1.13 or later), "
        "which is not installed; backplane itself works without it"
    ) from exc

if not hasattr(torch.library, "Library"):  # pragma: no cover
    raise ImportError(
        f"backplane.torch needs torch.library.Library (torch 1.13 or "
        f"later); this torch is {torch.__version__}")

import backplane
from backplane import _backplane, _grads

__all__ = ["offload", "register", "registered", "report", "to_torch"]

_TORCH_DTYPES = {
    torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8",
    torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.float32: "float32", torch.float64: "float64",
}
_BY_NAME = {name: dt for dt, name in _TORCH_DTYPES.items()}


def _from_dlpack():
    # torch._C._from_dlpack takes a capsule without the checks that
    # torch.utils.dlpack.from_dlpack makes in Python first.
    return getattr(torch._C, "_from_dlpack", torch.utils.dlpack.from_dlpack)


# Before 2.1 torch has no autograd fallback: an op without a derivative
# silently gives results that do not require grad, so the bridge warns.
_backplane.set_torch(
    torch.Tensor,
    {dt: _backplane.dtype_code(name) for dt, name in _TORCH_DTYPES.items()},
    _from_dlpack(),
    None if hasattr(torch._C, "_set_autograd_fallback_mode")
    else torch.is_grad_enabled)

# torch namespace -> torch.library.Library("DEF") (one per namespace, as
# torch allows), and the ops registered so far.
_libraries = {}
_registered = {}  # torch op name ("bp_core::add.out") -> backplane op name
_keep = []        # the implementations torch holds, kept alive here too

_register_fake = (getattr(torch.library, "register_fake", None)
                  or getattr(torch.library, "impl_abstract", None))


def to_torch(tensor):
    """A backplane.Tensor as a torch.Tensor that shares its memory, bool
    included: torch before 2.1 refuses DLPack's bool, so
    torch.from_dlpack(t) fails for a bool tensor where this does not."""
    return _backplane.to_torch(tensor)


def registered():
    """{torch op name: Backplane op name} of every op registered so far."""
    return dict(_registered)


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (e for e in a if isinstance(e, torch.Tensor))


def _is_fake(t):
    return t.is_meta or type(t).__name__ == "FakeTensor"


def _meta_device(args, kwargs):
    """The device of a Meta call's results: its meta (or fake) tensors'.
    torch dispatches a call with any meta tensor to the Meta kernel, real
    tensors among them too; as torch's own ops do, those are refused, but
    for 0-dim CPU tensors (scalars)."""
    device, other = None, None
    for t in _tensors(args, kwargs):
        if _is_fake(t):
            device = device or t.device
        elif not (t.dim() == 0 and t.device.type == "cpu"):
            other = other or t.device
    device = device or torch.device("meta")
    if other is not None:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at "
            f"least two devices, {device.type} and {other}!")
    return device


def _tensor_device(args, kwargs):
    first = next(_tensors(args, kwargs), None)
    return torch.device("meta") if first is None else first.device


def _meta_impl(op):
    """The Meta (and fake) implementation of `op`: results made by
    torch.empty_strided from what bp_op_meta says; a result in a written
    alias set (`Tensor(a!)`) is that argument, as torch requires, and so is
    a `Tensor(a)` result with the argument's own geometry."""
    arguments, returns = op.signature
    position = {a["name"]: i for i, a in enumerate(arguments)}

    def source(alias, args, kwargs):
        if alias is None:
            return None
        for a in arguments:
            if a["alias_set"] == alias:
                i = position[a["name"]]
                return args[i] if i < len(args) else kwargs.get(a["name"])
        return None

    def meta(*args, **kwargs):
        device = _meta_device(args, kwargs)
        outs = op.meta(*args, **kwargs)
        results = []
        for ret, (dtype, sizes, strides, _) in zip(returns, outs):
            src = source(ret["alias_set"], args, kwargs)
            if isinstance(src, torch.Tensor) and (
                    ret["written"] or (tuple(src.shape) == tuple(sizes)
                                       and src.stride() == tuple(strides))):
                results.append(src)
            else:
                results.append(torch.empty_strided(
                    sizes, strides, dtype=_BY_NAME[dtype], device=device))
        return results[0] if len(results) == 1 else tuple(results)

    meta.__name__ = op.name.replace("::", "_").replace(".", "_") + "_meta"
    return meta


def _meta_capable(op):
    returns = op.signature[1]
    return (op.info["has_meta"] and returns
            and all(r["tag"] == "Tensor" for r in returns))


def _below_autograd_impl(torch_name):
    """For AutogradMeta where torch has no fallthrough there (1.13): the
    call continues below autograd, to the Meta kernel."""
    ns, rest = torch_name.split("::", 1)
    name, _, overload = rest.partition(".")
    target = getattr(getattr(getattr(torch.ops, ns), name),
                     overload or "default")

    def below_autograd(*args, **kwargs):
        # In 1.13 the guard is active while the object lives.
        guard = torch._C._AutoDispatchBelowAutograd()
        try:
            return target(*args, **kwargs)
        finally:
            del guard

    return below_autograd


def _needs_autograd_meta(torch_name):
    dump = getattr(torch._C, "_dispatch_dump", None)
    return (dump is not None and "AutogradMeta" not in dump(torch_name)
            and hasattr(torch._C, "_AutoDispatchBelowAutograd"))


def _written_impl(op, fn):
    """For an op that writes arguments (`Tensor(a!)`): what torch's own
    in-place ops do around the kernel `fn`.  A leaf that requires grad is
    refused while grad mode is on, and each written tensor's version
    counter is bumped, so that autograd refuses a backward pass through a
    value the op overwrote.  (torch 1.13 has no call that only bumps the
    counter: an as_strided_ to the tensor's own geometry, under no_grad,
    changes nothing else.)"""
    arguments = op.signature[0]
    written = [(i, a["name"]) for i, a in enumerate(arguments)
               if a["written"]]

    def targets(args, kwargs):
        for i, name in written:
            t = args[i] if i < len(args) else kwargs.get(name)
            if isinstance(t, torch.Tensor):
                yield name, t

    def impl(*args, **kwargs):
        if torch.is_grad_enabled():
            for name, t in targets(args, kwargs):
                if t.requires_grad and t.is_leaf:
                    raise RuntimeError(
                        f"{op.name}: argument '{name}' is a leaf tensor "
                        "that requires grad, and the op writes it in "
                        "place (a leaf Variable that requires grad is "
                        "being used in an in-place operation)")
        result = fn(*args, **kwargs)
        with torch.no_grad():
            for _, t in targets(args, kwargs):
                t.as_strided_(t.size(), t.stride(), t.storage_offset())
        return result

    impl.__name__ = op.name.replace("::", "_").replace(".", "_")
    return impl


def _needs_grad(values):
    for v in values:
        if isinstance(v, torch.Tensor):
            if v.requires_grad:
                return True
        elif isinstance(v, (list, tuple)):
            if any(isinstance(e, torch.Tensor) and e.requires_grad
                   for e in v):
                return True
    return False


def _autograd_impl(op, torch_name, formula, direct=None):
    """The Autograd kernel of an op with a derivative in _grads.py: a
    torch.autograd.Function whose forward calls the op below autograd and
    whose backward is the formula, in core ops.  Tensor[] arguments are
    passed to it element by element, so that autograd sees each tensor.
    A call with nothing to differentiate goes straight to `direct` (the
    CPU kernel, for AutogradCPU: no second trip through the dispatcher),
    else below autograd."""
    grad_enabled, needs_grad = torch.is_grad_enabled, _needs_grad
    arguments = op.signature[0]
    names = [a["name"] for a in arguments]
    npos = sum(1 for a in arguments if not a["kwarg_only"])
    ns, rest = torch_name.split("::", 1)
    name, _, overload = rest.partition(".")
    target = getattr(getattr(getattr(torch.ops, ns), name),
                     overload or "default")

    def bind(args, kwargs):
        full = list(args)
        for a in arguments[len(args):]:
            if a["name"] in kwargs:
                full.append(kwargs[a["name"]])
            elif a["has_default"]:
                full.append(a["default"])
            else:
                raise TypeError(f"{op.name}() missing argument "
                                f"'{a['name']}'")
        return full

    def pack(full):
        """The arguments with each tensor replaced by its place in a flat
        list of tensors, and that list."""
        tensors, packed = [], []
        for v in full:
            if isinstance(v, torch.Tensor):
                packed.append(len(tensors))
                tensors.append(v)
            elif isinstance(v, (list, tuple)) and v and \
                    all(isinstance(e, torch.Tensor) for e in v):
                packed.append([len(tensors) + i for i in range(len(v))])
                tensors.extend(v)
            else:
                packed.append(("value", v))
        return packed, tensors

    def unpack(packed, tensors):
        return [tensors[p] if isinstance(p, int) else
                [tensors[i] for i in p] if isinstance(p, list) else p[1]
                for p in packed]

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, packed, *tensors):
            full = unpack(packed, tensors)
            kw = {n: v for n, v in zip(names[npos:], full[npos:])}
            guard = torch._C._AutoDispatchBelowAutograd()
            try:
                out = target(*full[:npos], **kw)
            finally:
                del guard
            ctx.packed = packed
            ctx.save_for_backward(*tensors, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            *tensors, out = ctx.saved_tensors
            grads = formula(unpack(ctx.packed, tensors), out, grad)
            flat = [None] * len(tensors)
            for p, gr in zip(ctx.packed, grads):
                if isinstance(p, int):
                    flat[p] = gr
                elif isinstance(p, list):
                    for i, gi in zip(p, gr or [None] * len(p)):
                        flat[i] = gi
            return (None, *flat)

    def impl(*args, **kwargs):
        if grad_enabled() and (needs_grad(args) or
                               (kwargs and needs_grad(kwargs.values()))):
            unknown = set(kwargs) - set(names)
            if unknown:
                raise TypeError(f"{op.name}() got an unexpected keyword "
                                f"argument '{sorted(unknown)[0]}'")
            packed, tensors = pack(bind(args, kwargs))
            return Fn.apply(packed, *tensors)
        # nothing to differentiate: the op itself, results as they are
        # (contiguous of a contiguous tensor is that tensor)
        if direct is not None:
            return direct(*args, **kwargs)
        guard = torch._C._AutoDispatchBelowAutograd()
        try:
            return target(*args, **kwargs)
        finally:
            del guard

    impl.__name__ = op.name.replace("::", "_").replace(".", "_") + "_grad"
    return impl


def _has_device_kernel(op, device):
    return any(k["device"] == device and k["enabled"] for k in op.kernels)


def _cuda_impl(op):
    """CUDA calls run on the plugin's current stream.  The ABI has no way
    to hand a plugin torch's stream, so when torch's current stream is not
    the default one, its queued work is waited for before the call and the
    device's after it: ordering is kept, at the cost of a wait."""

    def cuda(*args, **kwargs):
        stream = torch.cuda.current_stream()
        if stream.cuda_stream == 0:
            return op(*args, **kwargs)
        stream.synchronize()
        result = op(*args, **kwargs)
        _backplane.synchronize(str(_tensor_device(args, kwargs)))
        return result

    return cuda


def _with_composites(ops):
    # A plugin's ops, and the host's composites of the namespaces it
    # implements (core::mul.Scalar over core::mul, ...): they run wherever
    # the ops they call have kernels.
    spaces = {n.split("::", 1)[0] for n in ops}
    extra = [n for n in _backplane.op_names()
             if n.split("::", 1)[0] in spaces and n not in ops
             and backplane.Op(n).info["has_composite"]]
    return list(ops) + extra


def _ops_of(what):
    names = _backplane.op_names()
    if isinstance(what, backplane.Plugin):
        return _with_composites(what.ops)
    if isinstance(what, str):
        found = [n for n in names if n.startswith(what + "::")]
        if not found:
            loaded = [p for p in backplane.plugins()
                      if p.state == "loaded" and p.name == what]
            if loaded:
                return _with_composites(loaded[0].ops)
            raise backplane.NotFoundError(
                f"register: no loaded plugin and no op namespace named "
                f"{what!r}")
        return found
    raise TypeError(f"register: expected a backplane.Plugin, a plugin name "
                    f"or an op namespace, got {type(what).__name__}")


def register(plugin_or_namespace, *, prefix="bp_"):
    """Defines ops in torch: every op of a plugin (a backplane.Plugin or a
    loaded plugin's name) or of an op namespace ("core").

    Backplane's namespace `ns` becomes torch's `prefix + ns`, so that
    core::add is torch.ops.bp_core.add.  Registering an op again does
    nothing.  Returns the torch names of the ops this call defined.
    """
    if not isinstance(prefix, str) or not prefix.isidentifier():
        raise ValueError(f"register: prefix must be an identifier, got "
                         f"{prefix!r}")
    defined = []
    for name in _ops_of(plugin_or_namespace):
        ns, rest = name.split("::", 1)
        torch_ns = prefix + ns
        torch_name = f"{torch_ns}::{rest}"
        if torch_name in _registered:
            continue
        op = backplane.Op(name, torch=True)
        cpu_op = backplane.Op(name, torch_cpu=True)
        info = op.info
        if not info["defined"]:
            continue
        lib = _libraries.get(torch_ns)
        if lib is None:
            lib = torch.library.Library(torch_ns, "DEF")
            _libraries[torch_ns] = lib
        lib.define(info["schema"].split("::", 1)[1])
        arguments = op.signature[0]
        if any(a["tag"] in ("Tensor", "Tensor[]") for a in arguments):
            impls = [("CPU", cpu_op)]
        else:
            # No tensor to dispatch on: torch calls the catch-all kernel.
            impls = [("CompositeExplicitAutograd", op)]
        if _has_device_kernel(op, "cuda") or info["has_composite"]:
            impls.append(("CUDA", _cuda_impl(op)))
        if any(a["written"] for a in arguments):
            impls = [(key, _written_impl(op, fn)) for key, fn in impls]
        has_meta = _meta_capable(op)
        if has_meta:
            impls.append(("Meta", _meta_impl(op)))
        for key, fn in impls:
            lib.impl(rest, fn, key)
            _keep.append(fn)
        if has_meta and _needs_autograd_meta(torch_name):
            fn = _below_autograd_impl(torch_name)
            lib.impl(rest, fn, "AutogradMeta")
            _keep.append(fn)
        if has_meta and _register_fake is not None:
            try:
                _register_fake(torch_name, impls[-1][1], lib=lib)
            except (RuntimeError, TypeError):
                pass  # the Meta kernel serves fake tensors as well
        formula = _grads.FORMULAS.get(rest) if ns == "core" else None
        if formula is not None and not any(a["written"] for a in arguments):
            for key, direct in (("AutogradCPU", cpu_op), ("Autograd", None)):
                fn = _autograd_impl(op, torch_name, formula, direct)
                lib.impl(rest, fn, key)
                _keep.append(fn)
        _registered[torch_name] = name
        defined.append(torch_name)
    return defined


# Last: offload's table calls Ops that return torch tensors, which needs
# set_torch above.
from backplane.offload import offload, report  # noqa: E402,F401
