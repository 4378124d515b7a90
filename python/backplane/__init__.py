"""Backplane from Python: load tensor-backend plugins and call their ops.

    import numpy as np
    import backplane

    backplane.load("/usr/local/lib/backplane/plugins/cpu.so")
    a = np.ones((2, 3), np.float32)
    r = backplane.ops.core.add(a, a, alpha=2.0)   # a backplane.Tensor
    r.numpy()                                    # shares r's memory

Ops take backplane Tensors, NumPy arrays, torch tensors and anything that
speaks DLPack, without copying them.  ``backplane.torch`` makes every
plugin op a torch op.  See docs/python.md.
"""

import inspect
import types
from collections import namedtuple

from backplane import _backplane
from backplane._backplane import (  # noqa: F401  (re-exported)
    AlreadyExistsError, BackendError, BusyError, DeviceError, DtypeError,
    Error, InternalError, InvalidArgumentError, LoadError, NotFoundError,
    Op, OutOfMemoryError, SchemaError, ShapeError, SizeOverflowError,
    Tensor, UnsupportedError, VersionError, abi_version, empty, from_dlpack,
    live_tensor_count, synchronize, version)

__version__ = version()

__all__ = [
    "AlreadyExistsError", "BackendError", "BusyError", "Device",
    "DeviceError", "DtypeError", "Error", "InternalError",
    "InvalidArgumentError", "LoadError", "NotFoundError", "Op",
    "OutOfMemoryError", "Plugin", "SchemaError", "ShapeError",
    "SizeOverflowError", "Tensor", "UnsupportedError", "VersionError",
    "abi_version", "devices", "discover", "empty", "from_dlpack",
    "live_tensor_count", "load", "ops", "plugins", "synchronize", "unload",
    "version",
]

Device = namedtuple(
    "Device", "device type index name total_memory compute_units arch")
Device.__doc__ = "A device: its label ('cpu:0'), codes and properties."


class Plugin:
    """A plugin the host knows: loaded, failed to load, or unloaded."""

    __slots__ = ("_index",)

    def __init__(self, index):
        self._index = index

    def info(self):
        """Everything the host records about the plugin, as a dict."""
        return _backplane.plugin_info(self._index)

    def __getattr__(self, key):
        if key.startswith("_"):  # (copy and pickle probe before __init__)
            raise AttributeError(key)
        info = _backplane.plugin_info(self._index)
        if key in info:
            return info[key]
        raise AttributeError(f"Plugin has no attribute {key!r}")

    @property
    def ops(self):
        """The names of the ops this plugin defines or has kernels for."""
        name = self.name
        found = []
        for n in _backplane.op_names():
            op = Op(n)
            if (op.info["owner"] == name
                    or any(k["plugin"] == name for k in op.kernels)):
                found.append(n)
        return found

    def __eq__(self, other):
        return isinstance(other, Plugin) and other._index == self._index

    def __hash__(self):
        return hash(self._index)

    def __repr__(self):
        info = self.info()
        return (f"<backplane.Plugin {info['name'] or '?'} {info['state']} "
                f"from {info['path']!r}>")


def load(path):
    """Loads the plugin at `path` (a str or os.PathLike); returns it.

    Loading a file that is already loaded returns the same Plugin.  A
    plugin that fails raises LoadError (or VersionError, ...) with the
    host's reason.
    """
    return Plugin(_backplane.load(path))


def discover():
    """Loads the plugins in BP_PLUGIN_PATH and the installed plugin
    directory; returns those this call loaded."""
    before = {p for p in plugins() if p.state == "loaded"}
    _backplane.discover()
    return [p for p in plugins() if p.state == "loaded" and p not in before]


def plugins():
    """Every plugin the host knows, in the order first seen."""
    return [Plugin(i) for i in range(_backplane.plugin_count())]


def unload(plugin):
    """Unloads a plugin (a Plugin, or a loaded plugin's name).

    Raises BusyError while tensors on its devices are alive.
    """
    if not isinstance(plugin, Plugin):
        found = [p for p in plugins()
                 if p.state == "loaded" and p.name == plugin]
        if not found:
            raise NotFoundError(f"unload: no loaded plugin named {plugin!r}")
        plugin = found[0]
    _backplane.unload(plugin._index)


def devices():
    """Every device of every registered device type."""
    return [Device(**d) for d in _backplane.devices()]


# ---- ops -------------------------------------------------------------------

def _op_doc(op):
    info = op.info
    text = info["schema"] or op.name
    if info["doc"]:
        text += "\n\n" + info["doc"]
    return text


def _op_signature(op):
    """The op's parameters as an inspect.Signature (annotations: the
    schema's types), for inspect.signature, help() and editors; None
    where the schema has no Python form (a parameter named by a keyword,
    say)."""
    arguments, returns = op.signature
    empty = inspect.Parameter.empty
    try:
        params = [inspect.Parameter(
            a["name"], inspect.Parameter.KEYWORD_ONLY if a["kwarg_only"]
            else inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=a["default"] if a["has_default"] else empty,
            annotation=a["type"]) for a in arguments]
        types_ = [r["type"] for r in returns]
        ret = (types_[0] if len(types_) == 1
               else f"({', '.join(types_)})")
        return inspect.Signature(params, return_annotation=ret)
    except (ValueError, TypeError):
        return None


class OpOverload(Op):
    """One overload of an operator, such as ``ops.core.add.out``."""

    __doc__ = property(_op_doc)
    __signature__ = property(_op_signature)

    @property
    def default(self):
        return self


class OpPacket(OpOverload):
    # An operator's default overload; its other overloads are attributes
    # (ops.core.add.out).  Its __doc__ is the op's schema and doc.

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        full = f"{self.name}.{overload}"
        try:
            op = OpOverload(full)
        except NotFoundError:
            raise AttributeError(
                f"operator {self.name} has no overload {overload!r} "
                f"(it has: {', '.join(self.overloads()) or 'none'})") from None
        self.__dict__[overload] = op
        return op

    def overloads(self):
        """The names of the op's overloads other than the default."""
        prefix = self.name + "."
        return [n[len(prefix):] for n in _backplane.op_names()
                if n.startswith(prefix)]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.overloads()))


OpPacket.__doc__ = property(_op_doc)


def _is_number(x):
    # A Python number, or a NumPy scalar (np.float32(1.5): not an array,
    # though it has a dtype).
    if isinstance(x, (bool, int, float)):
        return True
    t = type(x)
    return (t.__module__ == "numpy" and getattr(x, "ndim", None) == 0
            and not hasattr(t, "__array_function__"))


class _ScalarPacket(OpPacket):
    # An operator with a ``Scalar`` overload (``ops.core.mul.Scalar``): a
    # call whose second argument is a number goes to it, as PyTorch's
    # overload resolution sends ``mul(t, 2)`` to ``mul.Scalar``; with
    # ``out=``, to ``Scalar_out`` or ``out``.

    def _pick(self, args, kwargs):
        other = args[1] if len(args) > 1 else kwargs.get("other")
        number = _is_number(other)
        if "out" in kwargs:
            name = "Scalar_out" if number else "out"
            try:
                return getattr(self, name)
            except AttributeError:
                # (an in-place op, add_, has no out= form)
                raise TypeError(f"{self.name}() got an unexpected keyword "
                                f"argument 'out'") from None
        return self.Scalar if number else self.default

    # A call is routed in C (op.c): a Python number `other` to .Scalar, a
    # tensor to the op itself, the rest (out=, NumPy scalars) through
    # _route_scalar.  A __call__ here would cost 0.35-0.8 us a call.
    def __init__(self, name):
        self._set_scalar(OpOverload(name + ".Scalar"))

    def meta(*args, **kwargs):
        """meta(...) of the overload that a call with these arguments
        would take."""
        return args[0]._pick(args[1:], kwargs).meta(*args[1:], **kwargs)

    @property
    def default(self):
        # The default overload alone, which takes no number for `other`.
        op = self.__dict__.get("_default")
        if op is None:
            op = self.__dict__["_default"] = OpOverload(self.name)
        return op


# (its comment above is not a docstring: the op's doc is, as for OpPacket)
_ScalarPacket.__doc__ = property(_op_doc)


def _route_scalar(op, args, kwargs):
    return op._pick(args, kwargs or {})


try:
    import numpy as _np
    _backplane.set_scalar_routing(_route_scalar, _np.ndarray)
except ImportError:
    _backplane.set_scalar_routing(_route_scalar, None)


class _OverloadsOnly:
    """An operator that has overloads but no default overload."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        try:
            op = OpOverload(f"{self.name}.{overload}")
        except NotFoundError:
            raise AttributeError(
                f"operator {self.name} has no overload {overload!r}") from None
        setattr(self, overload, op)
        return op

    def __call__(self, *args, **kwargs):
        raise NotFoundError(
            f"{self.name} has no default overload; call one of its "
            f"overloads, such as ops.{self.name.replace('::', '.')}.<name>")


def _namespace(ns):
    """The ops of one namespace, ``ops.core``: a module object, so that an
    op once looked up is a plain attribute (module __getattr__, PEP 562,
    runs only for names not seen yet)."""
    space = types.ModuleType(f"backplane.ops.{ns}",
                             f"The operators of namespace {ns!r}.")

    def lookup(name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{ns}::{name}"
        names = _backplane.op_names()
        if full in names:
            scalar = full + ".Scalar" in names
            op = (_ScalarPacket if scalar else OpPacket)(full)
        elif any(n.startswith(full + ".") for n in names):
            op = _OverloadsOnly(full)
        else:
            raise AttributeError(f"no operator {full} (no loaded plugin "
                                 f"defines it)")
        setattr(space, name, op)
        return op

    def names():
        prefix = ns + "::"
        return sorted({n[len(prefix):].split(".")[0]
                       for n in _backplane.op_names() if n.startswith(prefix)})

    space.__getattr__ = lookup
    space.__dir__ = names
    return space


def _ops():
    """Every operator, by namespace: ``backplane.ops.core.add(a, b)``."""
    space = types.ModuleType("backplane.ops", _ops.__doc__)

    def lookup(ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        found = _namespace(ns)
        setattr(space, ns, found)
        return found

    space.__getattr__ = lookup
    space.__dir__ = lambda: sorted({n.split("::")[0]
                                    for n in _backplane.op_names()})
    return space


ops = _ops()
