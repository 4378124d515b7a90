"""What the torch bridge and the package refuse, as torch's own ops do:
tensors on two devices (a meta tensor beside CPU ones), a leaf that
requires grad written in place, a backward pass through a tensor an op
overwrote (version counters), arrays whose data pointer is NULL, too many
dimensions; and messages that name no C function."""

import os
import warnings

import taplib as t

np, torch = t.require("numpy", "torch")

import backplane  # noqa: E402
import backplane.torch as bt  # noqa: E402

backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
bt.register("core")
ops = torch.ops.bp_core


def raises(exc, fn, *words):
    """The exception fn raises if it is an exc whose message holds every
    word, else None (and a diagnostic)."""
    try:
        fn()
    except exc as e:
        if all(w in str(e) for w in words):
            return e
        t.diag(f"message: {e}")
        return None
    except Exception as e:  # noqa: BLE001 - reported as a failure
        t.diag(f"raised {type(e).__name__}: {e}")
        return None
    t.diag("raised nothing")
    return None


# ---- devices ---------------------------------------------------------------
meta = torch.empty(4, device="meta")
t.ok(raises(RuntimeError, lambda: ops.add(torch.full((4,), 7.0), meta),
            "two devices", "meta", "cpu"),
     "add of a CPU and a meta tensor is refused, as torch refuses it")
t.ok(raises(RuntimeError, lambda: ops.mul(meta, torch.ones(4)),
            "two devices"),
     "mul of a meta and a CPU tensor is refused")
r = ops.add(torch.tensor(7.0), meta)
t.ok(r.is_meta and tuple(r.shape) == (4,),
     "a 0-dim CPU tensor beside a meta tensor is a scalar, as in torch")
r = ops.add(meta, meta)
t.ok(r.is_meta, "meta tensors alone give a meta result")

# ---- in-place ops and autograd ---------------------------------------------
x = torch.randn(3, requires_grad=True)
h = torch.ones(3)
loss = (x * h).sum()
v0 = h._version
ops.fill_(h, 5.0)
t.ok(h._version > v0, "fill_ through the bridge bumps the version counter")
t.ok(raises(RuntimeError, loss.backward, "modified by an inplace"),
     "backward through a tensor fill_ overwrote is refused, not wrong")

out = torch.empty(3)
v0 = out._version
r = ops.add.out(torch.ones(3), torch.ones(3), out=out)
t.ok(r is out and out._version > v0 and bool((out == 2).all()),
     "add.out returns out, written, with its version bumped")

leaf = torch.randn(3, requires_grad=True)
t.ok(raises(RuntimeError, lambda: ops.fill_(leaf, 1.0), "leaf", "self"),
     "fill_ of a leaf that requires grad is refused")
t.ok(bool((leaf != 1.0).all()), "and the leaf is left as it was")
with torch.no_grad():
    ops.fill_(leaf, 1.0)
t.ok(bool((leaf == 1.0).all()), "under no_grad the leaf is written")
y = torch.randn(3, requires_grad=True) * 2
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t.ok(ops.fill_(y, 3.0) is y and bool((y == 3.0).all()),
         "fill_ of a non-leaf writes it and returns it")


# ---- NULL data pointers ----------------------------------------------------
class NullArray:
    __array_interface__ = {"typestr": "<f4", "data": (0, False),
                           "shape": (64,), "version": 3}


class NullEmpty:
    __array_interface__ = {"typestr": "<f4", "data": (0, False),
                           "shape": (0, 3), "version": 3}


t.ok(raises(backplane.InvalidArgumentError,
            lambda: backplane.ops.core.fill_(NullArray(), 1.0),
            "NULL", "64 elements"),
     "an array of 64 elements at address 0 is refused (it was written)")
r = backplane.ops.core.neg(NullEmpty())
t.is_eq(tuple(r.shape), (0, 3), "an empty array may have no data pointer")

# ---- dimensions and messages -----------------------------------------------
deep = (1,) * (backplane.MAX_NDIM + 1) if hasattr(backplane, "MAX_NDIM") \
    else (1,) * 17
for name, x in (("NumPy", np.zeros(deep, np.float32)),
                ("torch", torch.zeros(deep))):
    t.ok(raises(backplane.ShapeError, lambda x=x: backplane.ops.core.neg(x),
                str(len(deep))),
         f"a {name} array of too many dimensions raises ShapeError")
e = raises(backplane.NotFoundError, lambda: backplane.Op("core::nope"),
           "core::nope")
t.ok(e is not None and "bp_" not in str(e),
     "an unknown op's error names no C function", e)


class ComplexDLPack:
    """Only DLPack, of a dtype Backplane lacks: the host refuses it."""
    a = np.ones(3, np.complex64)

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


e = raises(backplane.DtypeError,
           lambda: backplane.ops.core.neg(ComplexDLPack()), "DLPack")
t.ok(e is not None and "bp_" not in str(e),
     "the host's DLPack error names no C function", e)

# ---- bool tensors to torch -------------------------------------------------
b = backplane.ops.core.lt(np.arange(4, dtype=np.float32), 2.0)
tb = bt.to_torch(b)
t.ok(tb.dtype == torch.bool and tb.tolist() == [True, True, False, False],
     "to_torch gives a bool tensor (torch 1.13 takes no bool through DLPack)")
tb[3] = True
t.ok(bool(b.numpy()[3]), "and shares its memory")
f = bt.to_torch(backplane.ops.core.neg(np.ones(2, np.float32)))
t.ok(f.dtype == torch.float32 and f.tolist() == [-1.0, -1.0],
     "to_torch of a float32 tensor")
t.ok(raises(TypeError, lambda: bt.to_torch(np.ones(2)), "backplane.Tensor"),
     "to_torch of something else is a TypeError")

t.done()
