"""NumPy arrays read in place (python/src/ndarray.c): the mirror of NumPy's
array layout is checked and used with this NumPy, every layout and dtype it
takes reads as NumPy says, what it leaves to the buffer protocol or DLPack
(byte-swapped, negative strides, other dtypes, subclasses) still converts
or fails as before, an unaligned array is refused, and a refused mirror
changes no result."""

import os

import taplib as t

np = t.require("numpy")

try:
    import backplane as bp
    from backplane import _backplane
except ImportError as e:
    t.bail_out(f"the backplane package does not import: {e}")

CPU = os.environ.get("BP_TEST_CPU_PLUGIN")
if not CPU:
    t.skip_all("BP_TEST_CPU_PLUGIN is not set")
bp.load(CPU)
core = bp.ops.core

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "longlong",
          "intc", "short", "float16", "float32", "float64"]


def strides_that_matter(shape, strides):
    # A dimension of one element has no stride to speak of: NumPy's own
    # exports (buffer protocol, DLPack) may give it any.
    return tuple(s if n > 1 else None for n, s in zip(shape, strides))


def meta(x):
    return (tuple(x.shape), strides_that_matter(x.shape, x.strides), x.dtype,
            x.data_ptr)


def np_meta(a):
    item = a.itemsize
    return (a.shape, strides_that_matter(a.shape, [s // item
                                                   for s in a.strides]),
            np.dtype(a.dtype).name, a.ctypes.data)


def views(a):
    """Views of a 3-d array a: every way NumPy lays one out."""
    return [("C order", a), ("Fortran order", np.asfortranarray(a)),
            ("transposed", a.transpose(2, 0, 1)),
            ("stepped", a[:, ::2, 1::3]), ("offset", a[1:, 1:, 2:]),
            ("0-dim", np.asarray(a[1, 2, 3])), ("one element", a[:1, :1, :1]),
            ("empty", a[:, :0]),
            ("broadcast", np.broadcast_to(a[0, 0], (3, 4))),
            ("16 dimensions", a.reshape((2, 3, 4) + (1,) * 13))]


def layouts():
    base = np.arange(24).reshape(2, 3, 4)
    for dt in DTYPES:
        a = base.astype(dt)
        for name, v in views(a):
            tv = bp.from_dlpack(v)
            want, got = np_meta(v), meta(tv)
            if name == "empty":  # no address or strides to speak of
                want, got = (want[0], want[2]), (got[0], got[2])
            t.is_eq(got, want, f"{dt} {name}: shape, strides, dtype and "
                    "address as NumPy has them")
            if dt == "bool":
                r = core.logical_not(v).numpy()
                exp = np.logical_not(v)
            else:
                r = core.add(v, v).numpy()
                exp = v + v
            t.ok(r.shape == exp.shape and np.array_equal(r, exp),
                 f"{dt} {name}: a result computed from it is NumPy's")
    deep = np.zeros((1,) * 17, np.float32)
    t.check_raises(bp.ShapeError, core.neg, deep, match="17",
                   desc="17 dimensions are refused with a ShapeError")


def writes():
    parent = np.zeros((4, 6), np.float32)
    view = parent[1:, ::2]
    t.ok(core.fill_(view, 5.0) is view, "fill_ of a strided view returns it")
    want = np.zeros((4, 6), np.float32)
    want[1:, ::2] = 5
    t.ok(np.array_equal(parent, want), "fill_ wrote exactly the view's "
         "elements of the parent", parent)
    ro = np.zeros(3)
    ro.flags.writeable = False
    t.check_raises(ValueError, core.fill_, ro, 1.0, match="read-only",
                   desc="a read-only array is not written")
    t.ok(np.all(ro == 0), "and stays as it was")
    t.ok(np.array_equal(core.neg(ro).numpy(), -ro),
         "a read-only array is read")


def left_to_other_ways():
    raw = bytearray(4 * 5 + 1)
    u = np.frombuffer(raw, dtype=np.float32, offset=1)
    u[:] = [1, 2, 3, 4, 5]
    t.ok(not u.flags.aligned, "the probe array is unaligned")
    t.check_raises(ValueError, core.add, u, u, match="not aligned",
                   desc="an unaligned array is refused (kernels load whole "
                   "elements), not read out of alignment")
    t.ok(np.array_equal(core.add(u.copy(), u.copy()).numpy(), u + u),
         "its copy, aligned, is taken")
    s = np.arange(4.0).byteswap().view(np.arange(4.0).dtype.newbyteorder())
    t.check_raises(bp.DtypeError, core.neg, s, match="no Backplane dtype|'>",
                   desc="a byte-swapped array is refused, naming its type")
    t.check_raises(bp.ShapeError, core.neg, np.arange(4.0)[::-1],
                   match="negative", desc="negative strides are refused")
    for dt in ["uint16", "uint32", "complex64", "datetime64[s]"]:
        t.check_raises(bp.DtypeError, core.neg, np.zeros(2, dt),
                       match="no Backplane dtype|has no Backplane dtype",
                       desc=f"{dt} is refused with a DtypeError")

    class Sub(np.ndarray):
        pass

    sub = np.arange(4.0).view(Sub)
    t.ok(np.array_equal(core.add(sub, sub).numpy(), 2 * np.arange(4.0)),
         "a subclass of ndarray converts")
    x, _ = np.broadcast_arrays(np.arange(3.0), np.zeros((2, 3)))
    t.ok(np.array_equal(core.add(x, x).numpy(), 2 * x),
         "a broadcast_arrays result (warn-on-write) is read")


def mirror():
    core.neg(np.zeros(2))
    t.ok(_backplane.ndarray_in_place(), "this NumPy's arrays are read in "
         "place (the mirror of its layout checked out)")

    class Other(np.ndarray):
        pass

    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    o = a.view(Other)
    try:
        # The type taken for numpy.ndarray is one whose probes do not
        # check out: the mirror is refused, and arrays of that type go
        # through the buffer protocol.
        _backplane.set_scalar_routing(bp._route_scalar, Other)
        t.ok(not _backplane.ndarray_in_place(), "a type whose arrays fail "
             "the check is not read in place")
        t.is_eq(meta(bp.from_dlpack(o)), np_meta(a), "an array of it reads "
                "the same through the buffer protocol")
        t.ok(np.array_equal(core.add(o, a).numpy(), 2 * a),
             "and computes the same")
    finally:
        _backplane.set_scalar_routing(bp._route_scalar, np.ndarray)
    t.ok(_backplane.ndarray_in_place(), "numpy.ndarray given again: "
         "checked again, and read in place")


layouts()
writes()
left_to_other_ways()
mirror()
t.done()
