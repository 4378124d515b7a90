"""backplane.Tensor and the conversions of NumPy arrays, torch tensors and
DLPack capsules: zero copy both ways, metadata, read-only arrays,
lifetimes and the live tensor count."""

import copy
import gc
import os
import sys

import taplib as t

np = t.require("numpy")

try:
    import backplane as bp
except ImportError as e:
    t.bail_out(f"the backplane package does not import: {e}")
torch = t.importable("torch")

CPU = os.environ.get("BP_TEST_CPU_PLUGIN")
if not CPU:
    t.skip_all("BP_TEST_CPU_PLUGIN is not set")
bp.load(CPU)
core = bp.ops.core
NO_TORCH = t.not_importable("torch")
BASE = bp.live_tensor_count()


def live():
    gc.collect()
    return bp.live_tensor_count() - BASE


def meta_of(x):
    return (x.shape, x.strides, x.dtype, x.device, x.ndim, x.numel,
            x.itemsize, x.nbytes, x.data_ptr, x.is_contiguous)


def np_meta(a):
    item = a.itemsize
    return (a.shape, tuple(s // item for s in a.strides), a.dtype.name,
            "cpu:0", a.ndim, a.size, item, a.size * item, a.ctypes.data,
            a.flags.c_contiguous)


def zero_copy_numpy_in():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros((2, 3), np.float32)
    r = core.add.out(a, a, out=out)
    t.ok(r is out, "add.out returns the very NumPy array given as out=")
    t.ok(np.array_equal(out, 2 * a), "add.out wrote into the array's memory")
    # A strided view as out=: only the viewed elements of the parent change.
    parent = np.full((2, 6), -1.0, np.float32)
    view = parent[:, ::2]
    r = core.add.out(a, a, out=view)
    t.ok(r is view, "add.out returns the strided view object itself")
    t.ok(np.array_equal(parent[:, ::2], 2 * a)
         and np.all(parent[:, 1::2] == -1), "a strided out= is written in "
         "place, its gaps untouched", parent)
    r = core.add.out(a, a, out=a)
    t.ok(r is a and np.array_equal(a, [[0, 2, 4], [6, 8, 10]]),
         "out= may be one of the inputs")
    f = np.zeros(5, np.int16)
    t.ok(core.fill_(f, 7.0) is f and np.all(f == 7),
         "fill_ writes an int16 array in place and returns it")
    x = np.arange(6.0)
    tx = bp.from_dlpack(x)
    t.is_eq(tx.data_ptr, x.ctypes.data, "from_dlpack(array).data_ptr is the "
            "array's address")
    v = x.reshape(2, 3)[1:, ::2]
    t.is_eq(bp.from_dlpack(v).data_ptr, v.ctypes.data,
            "from_dlpack of a sliced view points into the array")
    core.fill_(tx, 3.0)
    t.ok(np.all(x == 3.0), "writing the Tensor writes the array")


def zero_copy_out():
    r = core.add(np.ones(4, np.float32), np.ones(4, np.float32))
    n = r.numpy()
    t.is_eq(n.ctypes.data, r.data_ptr, "Tensor.numpy() is at data_ptr")
    t.ok(np.shares_memory(n, np.asarray(r)), "np.asarray shares it too")
    core.fill_(r, 5.0)
    t.ok(np.all(n == 5.0), "a write through the Tensor shows in numpy()")
    n[0] = -1
    t.is_eq(float(core.sum(r).numpy()), 14.0, "a write through the NumPy "
            "array shows in the Tensor")
    m = np.from_dlpack(r)
    t.is_eq(m.ctypes.data, r.data_ptr, "numpy.from_dlpack(tensor) shares")
    bt = bp.from_dlpack(np.array([True, False, True]))
    nb = bt.numpy()
    t.ok(nb.dtype == np.bool_ and nb.ctypes.data == bt.data_ptr
         and nb.tolist() == [True, False, True], "a bool Tensor's numpy()")
    tr = bp.from_dlpack(np.arange(6.0).reshape(2, 3).T)
    t.is_eq((tr.numpy().strides, tr.numpy().ctypes.data),
            ((8, 24), tr.data_ptr), "numpy() of a transposed Tensor keeps "
            "its strides")
    for shape in [(0,), (0, 3)]:
        e = bp.empty(shape)
        try:
            got = e.numpy().shape
        except Exception as ex:  # noqa: BLE001
            got = f"{type(ex).__name__}: {ex}"
        t.is_eq(got, shape, f"numpy() of an empty {shape} Tensor")
    if torch is None:
        for _ in range(4):
            t.skip("torch.from_dlpack", NO_TORCH)
        return
    tt = torch.from_dlpack(r)
    t.is_eq(tt.data_ptr(), r.data_ptr, "torch.from_dlpack(tensor) shares")
    x = torch.zeros(4)
    t.ok(core.fill_(x, 2.0) is x and x.tolist() == [2.0] * 4,
         "fill_ writes a torch tensor in place and returns it")
    y = torch.arange(6.0).reshape(2, 3).t()
    t.ok(torch.equal(torch.from_dlpack(core.neg(y)), -y),
         "a transposed torch tensor reads correctly")
    cond = torch.tensor([True, False])
    try:
        got = core.where(cond, np.ones(2), np.zeros(2)).numpy().tolist()
    except Exception as ex:  # noqa: BLE001
        got = f"{type(ex).__name__}: {ex}"
    t.is_eq(got, [1.0, 0.0], "a torch bool tensor is taken as a condition")


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16",
          "float32", "float64"]


def metadata():
    base = np.arange(24).reshape(2, 3, 4)
    for dt in DTYPES:
        a = base.astype(dt)
        views = [("contiguous", a), ("transposed", a.transpose(2, 0, 1)),
                 ("stepped", a[:, ::2, 1::3]),
                 ("0-dim", np.asarray(a[1, 2, 3])),
                 ("empty", a[:, :0]),
                 ("broadcast", np.broadcast_to(a[0, 0], (3, 4)))]
        for name, v in views:
            tv = bp.from_dlpack(v)
            want = np_meta(v)
            got = meta_of(tv)
            if name == "empty":  # no address or strides to speak of
                want, got = want[:1] + want[2:8], got[:1] + got[2:8]
            if name != "broadcast" or dt == "float32":
                t.is_eq(got, want, f"{dt} {name}: shape, strides, dtype, "
                        "device, sizes and pointer")
    t.is_eq((bp.from_dlpack(np.array(2.5)).shape,
             bp.from_dlpack(np.array(2.5)).ndim), ((), 0), "0-dim array")
    t.check_raises(bp.ShapeError, bp.from_dlpack, np.arange(4.0)[::-1],
                   match="negative", desc="negative strides are refused")
    t.check_raises(bp.DtypeError, bp.from_dlpack, np.zeros(2, np.uint16),
                   match="no Backplane dtype", desc="uint16 is refused")
    t.check_raises(bp.DtypeError, core.neg, np.zeros(2, ">f4"), match="'>f4'",
                   desc="non-native byte order is refused, naming it")


def read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    t.ok(np.array_equal(core.neg(a).numpy(), -np.arange(4.0)),
         "a read-only array is accepted as an input")
    b = np.broadcast_to(np.arange(3.0), (2, 3))
    t.ok(np.array_equal(core.add(b, b).numpy(), 2 * b), "a read-only "
         "broadcast view (stride 0) reads correctly")
    out = np.zeros(4)
    out.flags.writeable = False
    t.check_raises(ValueError, core.add.out, a, a, out=out,
                   match=r"core::add.out.*'out'.*read-only",
                   desc="a read-only out= is refused, naming op and argument")
    t.check_raises(ValueError, core.fill_, out, 1.0, match="read-only",
                   desc="fill_ of a read-only array is refused")
    t.ok(np.all(out == 0), "the read-only array was not written")
    # wrapped by from_dlpack, it stays read-only
    w = bp.from_dlpack(out)
    for desc, f in (("fill_", lambda: core.fill_(w, 7.0)),
                    ("add_", lambda: core.add_(w, 1.0)),
                    ("copy_", lambda: core.copy_(w, a)),
                    ("an out=", lambda: core.neg.out(a, out=w))):
        t.check_raises(ValueError, f, match="read-only",
                       desc=f"{desc} of a Tensor over a read-only array is "
                       f"refused")
    t.ok(np.all(out == 0), "the wrapped read-only array was not written")
    t.ok(np.array_equal(core.neg(w).numpy(), -out),
         "a Tensor over a read-only array is read")
    t.ok(not w.numpy().flags.writeable and
         not bp.from_dlpack(b).numpy().flags.writeable,
         "NumPy sees a Tensor over a read-only array (or a broadcast view) "
         "read-only")
    t.ok(core.contiguous(w).numpy().flags.writeable is False,
         "a view of it is read-only too")
    c = np.zeros(2)
    core.fill_(bp.from_dlpack(c), 3.0)
    t.ok(np.all(c == 3.0) and bp.from_dlpack(c).numpy().flags.writeable,
         "a writable array wraps writable")


def lifetimes():
    t.is_eq(live(), 0, "no tensors alive at the start")
    a = np.arange(1000.0)
    b = np.full(1000, 2.0)
    ta = bp.from_dlpack(a)
    r = core.add(a, b)
    t.is_eq(live(), 2, "a wrapped array and a result: 2 tensors")
    del a, b
    junk = [np.full(1000, -7.0) for _ in range(20)]  # reuse freed memory
    t.ok(np.array_equal(r.numpy(), np.arange(1000.0) + 2)
         and np.array_equal(ta.numpy(), np.arange(1000.0)),
         "results and wrapped arrays outlive the source names")
    del junk
    n = r.numpy()
    del r
    t.is_eq(live(), 2, "numpy() keeps the result's tensor alive")
    t.is_eq(float(n.sum()), 501500.0, "and its data is intact")
    del n, ta
    t.is_eq(live(), 0, "all dropped: back to the start")
    arr = np.arange(5.0)
    refs = sys.getrefcount(arr)
    tx = bp.from_dlpack(arr)
    t.ok(sys.getrefcount(arr) > refs, "a Tensor holds a reference to the "
         "array it wraps")
    ro = np.arange(5.0)
    ro.flags.writeable = False
    ro_refs = sys.getrefcount(ro)
    tro = bp.from_dlpack(ro)
    t.ok(sys.getrefcount(ro) > ro_refs, "also through __array_interface__")
    del tx, tro
    t.is_eq((sys.getrefcount(arr), sys.getrefcount(ro)), (refs, ro_refs),
            "dropping the Tensors drops those references")
    for _ in range(50):
        core.add(arr, ro)
        core.add.out(arr, ro, out=arr)
        try:
            core.add(arr, np.ones(3))
        except bp.ShapeError:
            pass
    t.is_eq((live(), sys.getrefcount(arr)), (0, refs),
            "calls, including failing ones, leak no tensor and no reference")


def capsules():
    r = core.neg(np.ones(3))
    cap = r.__dlpack__()
    t.is_eq(live(), 1, "an unconsumed capsule adds no tensor handle")
    del cap
    t.is_eq(live(), 1, "dropping it leaves the tensor")
    del r
    t.is_eq(live(), 0, "an unconsumed capsule leaks nothing")
    r = core.neg(np.ones(3))
    cap = r.__dlpack__()
    x = bp.from_dlpack(cap)
    t.ok(x.data_ptr == r.data_ptr and live() == 2, "a consumed capsule "
         "gives a second handle on the same memory")
    t.check_raises(ValueError, bp.from_dlpack, cap, match="consumed once",
                   desc="a capsule consumed twice is refused")
    del r, cap
    t.ok(np.all(x.numpy() == -1), "the import outlives the exporter")
    del x
    t.is_eq(live(), 0, "all capsule tensors released")
    r = core.neg(np.ones(3))
    c = bp.from_dlpack(r.__dlpack__(copy=True))
    t.ok(c.data_ptr != r.data_ptr and np.all(c.numpy() == -1),
         "__dlpack__(copy=True) exports a copy")
    t.check_raises(BufferError, r.__dlpack__, dl_device=(2, 0),
                   desc="__dlpack__ to another device is refused")
    del c
    if torch is None:
        t.skip("torch consumes and releases a capsule", NO_TORCH)
        del r
    else:
        tt = torch.from_dlpack(r)
        del r
        t.ok(tt.tolist() == [-1.0] * 3 and live() == 1,
             "a torch import keeps the tensor alive after the Tensor dies")
        del tt
    t.is_eq(live(), 0, "back to the start after the torch import dies")


def interfaces():
    """What __array_interface__ and device tuples may not get wrong."""
    buf = np.arange(6, dtype=np.float32)

    def face(**kw):
        d = {"version": 3, "typestr": "<f4", "shape": (2, 3),
             "data": (buf.ctypes.data, False)}
        d.update(kw)
        return type("A", (), {"__array_interface__": d})()

    t.check_raises(bp.ShapeError, bp.from_dlpack, face(strides=(12,)),
                   match="1 strides for 2 dimensions",
                   desc="__array_interface__ with fewer strides than "
                   "dimensions is refused (never read past them)")
    t.check_raises(bp.ShapeError, bp.from_dlpack, face(strides=()),
                   match="0 strides for 2 dimensions",
                   desc="and with none")
    t.is_eq(bp.from_dlpack(face(strides=(4, 8))).strides, (1, 2),
            "with one stride a dimension it is taken")
    t.check_raises(TypeError, bp.from_dlpack, face(typestr=4),
                   match="typestr is not a str",
                   desc="a typestr that is not a str is named")
    # A NumPy scalar's interface points into a temporary array that only
    # the interface dict holds: the tensor must keep it.
    s = bp.from_dlpack(np.float64(5.0))
    churn = [np.full((), float(i)) for i in range(200)]
    t.is_eq(float(s.numpy()), 5.0, "a tensor of a NumPy scalar keeps its "
            "value while NumPy reuses memory")
    del churn
    t.is_eq(float(core.sub(np.float64(10.0), np.float64(3.0)).numpy()), 7.0,
            "NumPy scalars as both operands give the right result")
    for dev in [(1, 2**32), (2**32 + 1, 0), (1, -1)]:
        t.check_raises(bp.DeviceError, bp.empty, (2,), device=dev,
                       match="out of range",
                       desc=f"device {dev} is refused, not truncated")
    plugin = bp.plugins()[0]
    t.is_eq(copy.copy(plugin).name, plugin.name, "copy.copy of a Plugin names "
            "the same plugin (no recursion)")
    t.ok(core.add.__doc__ and "add" in core.add.__doc__ and
         core.relu.__doc__ and "relu" in core.relu.__doc__,
         "ops with and without a Scalar overload have their schema as "
         "__doc__", (core.add.__doc__, core.relu.__doc__))


def misc():
    x = core.neg(np.ones((2, 3), np.float32))
    t.ok(x.to("cpu") is x and x.to("cpu:0") is x, "to('cpu') returns self")
    t.ok(bp.from_dlpack(x) is x, "from_dlpack(Tensor) returns it")
    t.is_eq(x.__dlpack_device__(), (1, 0), "__dlpack_device__ is (kDLCPU, 0)")
    t.is_eq(repr(x), "backplane.Tensor(shape=(2, 3), dtype='float32', "
            "device='cpu:0')", "repr")
    e = bp.empty((2, 3))
    t.is_eq((e.shape, e.strides, e.dtype, e.device, e.is_contiguous),
            ((2, 3), (3, 1), "float32", "cpu:0", True), "empty() defaults")
    e = bp.empty([4], dtype=np.int16, device="cpu")
    t.is_eq((e.dtype, e.nbytes), ("int16", 8), "empty() with a NumPy dtype")
    e = bp.empty((), "float64")
    t.is_eq((e.shape, e.numel, e.nbytes), ((), 1, 8), "empty(()) is 0-dim")
    t.check_raises(TypeError, bp.Tensor, desc="Tensor() cannot be called")
    t.check_raises(bp.DtypeError, bp.empty, (2,), "complex64",
                   match="complex64", desc="empty() of an unknown dtype")
    t.check_raises(bp.DeviceError, bp.empty, (2,), "float32", "nodev:0",
                   match="nodev", desc="empty() on an unknown device type")
    bf16 = core.cast(np.ones(2), "bfloat16")
    t.check_raises(TypeError, bf16.numpy, match="bfloat16",
                   desc="numpy() of bfloat16 says why not")
    t.check_raises(TypeError, np.asarray, bf16, match="bfloat16",
                   desc="np.asarray() of bfloat16 says why not")
    del bf16
    del x, e
    t.is_eq(live(), 0, "live_tensor_count back to its start value")


zero_copy_numpy_in()
zero_copy_out()
metadata()
read_only()
lifetimes()
capsules()
misc()
interfaces()
t.done()
