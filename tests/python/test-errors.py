"""Errors: binding errors name the op and the argument; host errors raise
the class of their bp_status, with `status`, `status_name` and the host's
message; every bp_status of abi.h has exactly one class."""

import gc
import os
import re

import taplib as t

np = t.require("numpy")

try:
    import backplane as bp
except ImportError as e:
    t.bail_out(f"the backplane package does not import: {e}")

CPU = os.environ.get("BP_TEST_CPU_PLUGIN")
PLUGINS = os.environ.get("BP_TEST_PLUGIN_DIR")
SRCDIR = os.environ.get("BP_TEST_SRCDIR")
if not CPU or not PLUGINS or not SRCDIR:
    t.skip_all("BP_TEST_CPU_PLUGIN, BP_TEST_PLUGIN_DIR or BP_TEST_SRCDIR "
               "is not set")
bp.load(CPU)
# sig defines ops with every kind of argument, T[N] lists included.
bp.load(os.path.join(PLUGINS, "sig.so"))
core = bp.ops.core
BASE = bp.live_tensor_count()
A = np.arange(6, dtype=np.float32).reshape(2, 3)


def plugin(name):
    return os.path.join(PLUGINS, name + ".so")


def binding():
    cr = t.check_raises
    cr(TypeError, core.add, A, A, 2.0, match=r"^core::add\(\) takes 2 "
       "positional arguments but 3 were given$", desc="too many positional")
    cr(TypeError, core.sum, A, [0], True, "float64", match=r"core::sum\(\) "
       "takes 3 positional", desc="kwarg-only dtype given positionally")
    cr(TypeError, core.add, A, A, beta=1.0, match=r"^core::add\(\) got an "
       "unexpected keyword argument 'beta'$", desc="unknown keyword")
    cr(TypeError, core.add, A, self=A, match=r"^core::add\(\) got multiple "
       "values for argument 'self'$", desc="duplicate argument")
    cr(TypeError, core.add, A, match=r"^core::add\(\) missing required "
       r"argument 'other' \(#1, Tensor\)$", desc="missing argument")
    cr(TypeError, core.add.out, A, A, match=r"core::add\.out\(\) missing "
       "required argument 'out'", desc="missing kwarg-only out")
    for op, args, kw, arg in [
            (core.add, (None, A), {}, "self"),
            (core.softmax, (A, None), {}, "dim"),
            (core.add, (A, A), {"alpha": None}, "alpha"),
            (core.add.out, (A, A), {"out": None}, "out")]:
        cr(TypeError, op, *args, **kw, match=rf"^{re.escape(op.name)}\(\): "
           f"argument '{arg}' .*None given, but the argument is not optional",
           desc=f"None for {op.name}'s non-optional '{arg}'")
    r = core.layer_norm(A, [3], None, None)
    t.ok(r.shape == (2, 3), "None for Tensor? arguments is accepted")
    del r
    wrong = [
        ("int", core.softmax, (A, 0.5), {}, "dim", "expected an int"),
        ("int", core.softmax, (A, "0"), {}, "dim", "str"),
        ("float", core.add, (A, A), {"alpha": "2"}, "alpha",
         "expected a float, got a str"),
        ("float", core.add, (A, A), {"alpha": [1.0]}, "alpha", "list"),
        ("bool", core.sum, (A,), {"keepdim": 1}, "keepdim", "expected a bool"),
        ("str", core.gelu, (A,), {"approximate": 1}, "approximate",
         "expected a str"),
        ("str", core.gelu, (A,), {"approximate": b"tanh"}, "approximate",
         "expected a str"),
        ("int[]", core.sum, (A,), {"dim": object()}, "dim",
         "expected a list of ints"),
        ("int[]", core.sum, (A,), {"dim": [0.5]}, "dim", "expected an int"),
        ("Tensor", core.neg, ("abc",), {}, "self", "expected a tensor.*str"),
        ("Tensor", core.neg, ([1.0, 2.0],), {}, "self",
         "expected a tensor.*list"),
        ("Tensor", core.add, (A, "3.0"), {}, "other",
         "expected a tensor.*str"),
        ("Tensor", core.add.default, (A, 3.0), {}, "other",
         "expected a tensor.*float"),
        ("ScalarType", core.cast, (A, 3.5), {}, "dtype", "expected a dtype"),
        ("Scalar", bp.ops.sig.kinds, ("1", 2), {}, "a",
         "expected a number .*got a str"),
        ("Scalar", bp.ops.sig.kinds, (1, [2]), {}, "b", "expected a number"),
        ("Scalar", bp.ops.sig.kinds, (1, A), {}, "b", "expected a number"),
    ]
    for kind, op, args, kw, arg, msg in wrong:
        cr(TypeError, op, *args, **kw,
           match=rf"^{re.escape(op.name)}\(\): argument '{arg}' .*{msg}",
           desc=f"wrong Python type for {kind} '{arg}' of {op.name}")
    # Mistakes that Python's int() would let through.
    cr(TypeError, core.softmax, A, True, match=r"'dim'",
       desc="a bool is not an int (softmax(a, True))")
    cr(TypeError, core.sum, A, dim="", match=r"'dim'",
       desc="a str is not an int[] (sum(a, dim=''))")
    try:
        got = core.sum(A, dim=np.array([0, 1])).numpy().tolist()
    except Exception as e:  # noqa: BLE001
        got = f"{type(e).__name__}: {e}"
    t.is_eq(got, 15.0, "a NumPy int array is an int[]")
    cr(ValueError, core.gelu, A, approximate="no\0ne",
       match=r"core::gelu\(\): argument 'approximate'.*NUL",
       desc="a str with a NUL is refused")
    cr(ValueError, core.add.out, A, A, out=_read_only((2, 3)),
       match=r"core::add\.out\(\): argument 'out'.*read-only",
       desc="a read-only out= array")
    # an exception whose class takes more than a message goes through as
    # it was raised (it cannot be rebuilt with the argument's name)
    e = cr(UnicodeEncodeError, core.gelu, A, approximate="\ud800",
           match="surrogates", desc="a str that UTF-8 cannot encode")
    t.ok(isinstance(e, UnicodeEncodeError) and e.start == 0,
         "its UnicodeEncodeError is the codec's own")

    class TwoArgs(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    class Raising:
        def __dlpack__(self, stream=None):
            raise TwoArgs(1, 2)

        def __dlpack_device__(self):
            return (1, 0)

    e = cr(TwoArgs, core.neg, Raising(),
           desc="__dlpack__'s own exception, of a class that takes 2 "
           "arguments, goes through")
    t.ok(e is not None and e.args == (1, 2), "with its arguments")
    cr(TypeError, core.cat, [A, "x"],
       match=r"core::cat\(\): argument 'tensors'.*element 1: expected a "
       r"tensor", desc="a list element that is not a tensor is named")
    cr(bp.DtypeError, core.cast, A, "float32\0x", match="NUL",
       desc="a dtype name with a NUL is refused, not read up to it")
    cr(bp.DeviceError, bp.empty, (2,), device="cpu\0x", match="NUL",
       desc="a device name with a NUL is refused")
    ints = np.ones(3, np.int32)
    for alpha in (float("inf"), float("nan"), 1e30):
        cr(bp.DtypeError, core.add, ints, ints, alpha=alpha,
           match="'alpha'.*integral value within int64's range",
           desc=f"alpha {alpha} for an integer result is refused")
    for other in (2.0, A):
        cr(TypeError, core.mul_, A.copy(), other, out=A.copy(),
           match=r"core::mul_\(\) got an unexpected keyword argument 'out'",
           desc=f"out= of an in-place op with a Scalar overload (other "
           f"{type(other).__name__}) is a TypeError")
    fixed = list(_fixed_list_args())
    t.ok(fixed, "the loaded ops have a fixed-size list argument to test")
    for op, (name, n, kind) in fixed:
        value = [A] * (n + 1) if kind == "Tensor" else [1] * (n + 1)
        others = _required(op, name)
        cr(bp.InvalidArgumentError, op, **others, **{name: value},
           match=rf"{re.escape(op.name)}\(\): argument '{name}'.*expected "
           f"{n} ", desc=f"{op.name}'s {name} with {n + 1} elements")
    t.is_eq(bp.live_tensor_count(), BASE, "no tensor leaked by the errors")


_SAMPLE = {"Tensor": A, "Tensor[]": [A], "int": 1, "float": 1.0,
           "bool": True, "str": "x", "int[]": [1], "float[]": [1.0],
           "ScalarType": "float32", "Device": "cpu", "Scalar": 1}


def _required(op, but):
    """A valid value for each argument of op without a default, but one."""
    return {a["name"]: _SAMPLE[a["tag"]] for a in op.signature[0]
            if not a["has_default"] and a["name"] != but}


def _read_only(shape):
    a = np.zeros(shape, np.float32)
    a.flags.writeable = False
    return a


def _fixed_list_args():
    """(op, (arg name, N, element type)) for every `T[N]` argument."""
    for name in bp._backplane.op_names():
        op = bp.Op(name)
        for m in re.finditer(r"(\w+)\[(\d+)\]\??\s+(\w+)", op.schema):
            yield op, (m.group(3), int(m.group(2)), m.group(1))


STATUS_NAMES = {
    bp.InvalidArgumentError: "BP_ERR_INVALID_ARGUMENT",
    bp.DtypeError: "BP_ERR_TYPE", bp.ShapeError: "BP_ERR_SHAPE",
    bp.DeviceError: "BP_ERR_DEVICE", bp.NotFoundError: "BP_ERR_NOT_FOUND",
    bp.AlreadyExistsError: "BP_ERR_ALREADY_EXISTS",
    bp.UnsupportedError: "BP_ERR_UNSUPPORTED",
    bp.OutOfMemoryError: "BP_ERR_OUT_OF_MEMORY",
    bp.SizeOverflowError: "BP_ERR_OVERFLOW", bp.VersionError: "BP_ERR_VERSION",
    bp.SchemaError: "BP_ERR_SCHEMA", bp.LoadError: "BP_ERR_LOAD",
    bp.BusyError: "BP_ERR_BUSY", bp.BackendError: "BP_ERR_BACKEND",
    bp.InternalError: "BP_ERR_INTERNAL",
}


def check_error(fn, cls, builtin, message, desc):
    try:
        fn()
    except bp.Error as e:
        name = STATUS_NAMES[cls]
        good = (type(e) is cls and isinstance(e, bp.Error)
                and (builtin is None or isinstance(e, builtin))
                and e.status == cls.status and e.status_name == name
                and re.search(message, str(e)) is not None)
        t.ok(good, desc, f"{type(e).__name__} status={e.status} "
             f"status_name={e.status_name}: {e}\nwant {cls.__name__} "
             f"({name}) matching {message!r}")
        return e
    except Exception as e:  # noqa: BLE001
        t.ok(False, desc, f"{type(e).__name__}: {e}")
        return None
    t.ok(False, desc, f"no error; expected {cls.__name__}")
    return None


def host_errors():
    ce = check_error
    ce(lambda: core.add(A, np.ones(4, np.float32)), bp.ShapeError, ValueError,
       r"^core::add: argument #1 'other' with shape \[4\] cannot be "
       r"broadcast with argument #0 'self' with shape \[2, 3\]",
       "shape mismatch: ShapeError with the host's message")
    ce(lambda: core.mean(np.ones(3, np.int32)), bp.DtypeError, TypeError,
       r"^core::mean: argument #0 'self': expected a floating-point dtype, "
       "got int32$", "int32 mean: DtypeError")
    ce(lambda: core.softmax(A, 3), bp.InvalidArgumentError, ValueError,
       r"^core::softmax: argument #1 'dim': dimension 3 is out of range",
       "dim out of range: InvalidArgumentError")
    ce(lambda: bp.Op("core::no_such_op"), bp.NotFoundError, LookupError,
       "no op 'core::no_such_op'", "unknown op: NotFoundError")
    ce(lambda: bp.empty((2 ** 62,)), bp.SizeOverflowError, OverflowError,
       "overflow", "a size past int64 bytes: SizeOverflowError")
    ce(lambda: core.add.out(A, A, out=np.empty(0, np.float32)),
       bp.ShapeError, ValueError, r"^core::add\.out: argument #3 'out' has "
       r"shape \[0\], expected \[2, 3\] \(op set 1's add\.out does not "
       "resize", "add.out's empty out: the message says why it is refused")
    m = 2 ** 63 - 1
    x4 = np.ones((1, 1, 3, 3), np.float32)
    ce(lambda: core.conv2d(x4, np.ones((1, 1, 2, 2), np.float32), None,
                           [1, 1], [0, 0], [m, 1]),
       bp.SizeOverflowError, OverflowError, r"^core::conv2d: the window "
       r"geometry of the height overflows int64 \(input 3, kernel_size 2, "
       r"stride 1, padding 0, dilation 9223372036854775807\)$",
       "a window geometry past int64 is refused, not wrapped")
    t.is_eq(core.max_pool2d(x4, [2, 1], [m, 1], [1, 0], ceil_mode=True).shape,
            (1, 1, 1, 3), "ceil_mode with a stride near int64's limit")
    ce(lambda: core.scaled_dot_product_attention(
        np.ones(3, np.float32), A, A), bp.ShapeError, ValueError,
       r"^core::scaled_dot_product_attention: argument #0 'query' has shape "
       r"\[3\]; expected at least 2 dimensions", "attention's 1-D query")
    ce(lambda: core.add.out(A[:, :2], A[:, :2], out=A[:, 1:]),
       bp.InvalidArgumentError, ValueError, r"^core::add\.out: argument #3 "
       r"'out': overlaps argument #0 'self' in memory",
       "add.out's overlap names both arguments")
    # A result too large to allocate names the op, whichever path
    # allocates it (the host for a structured kernel, a composite).
    z = np.zeros(1, np.float32)
    huge = np.lib.stride_tricks.as_strided(z, (2 ** 40,), (0,))
    tall = np.lib.stride_tricks.as_strided(z, (2 ** 40, 1), (0, 0))
    ce(lambda: core.mul(huge, tall), bp.SizeOverflowError, OverflowError,
       r"^core::mul: result #0 could not be allocated: .*overflows",
       "a broadcast result past int64 elements names the op")
    desc = "a composite's result too large to allocate names the op"
    san = os.environ.get("BP_SANITIZER", "no")
    if san != "no":
        t.skip(desc, f"the {san} sanitizer aborts on an allocation it "
               "cannot make")
    else:
        ce(lambda: core.cat([huge] * 8, 0), bp.OutOfMemoryError, MemoryError,
           r"^core::cat: its result could not be allocated: cpu: cannot "
           "allocate", desc)
    ce(lambda: bp.load("/nonexistent/dir/x.so"), bp.LoadError, ImportError,
       "/nonexistent/dir/x.so.*cannot open", "unknown path: LoadError")
    ce(lambda: bp.load(plugin("no_entry")), bp.LoadError, ImportError,
       "does not export 'bp_plugin_init'", "not a plugin: LoadError")
    ce(lambda: bp.load(plugin("init_fails")), bp.LoadError, ImportError,
       "needs a widget", "a refusing plugin: LoadError with its reason")
    ce(lambda: bp.load(plugin("major_plus")), bp.VersionError, None,
       r"ABI 2\.0", "a plugin of ABI 2.0: VersionError")
    ce(lambda: bp.load(plugin("setup_fails")), bp.BackendError, None,
       "firmware did not answer", "a failing setup: BackendError")
    ce(lambda: bp.load(plugin("conflict")), bp.AlreadyExistsError, None,
       "plugin 'conflict'", "a conflicting registration: AlreadyExistsError")
    failed = [p for p in bp.plugins() if p.state == "failed"]
    t.is_eq(len(failed), 6, "each failed load is recorded as failed")
    bp.load(plugin("good"))
    good = bp.ops.good
    ce(lambda: good.fail(A[0]), bp.ShapeError, ValueError,
       r"^good::fail: argument 'a': expected 3 dims, got 1$",
       "a kernel's own error and message")
    ce(lambda: good.fail_silent(A[0]), bp.UnsupportedError,
       NotImplementedError, "failed with BP_ERR_UNSUPPORTED and gave no "
       "message", "a kernel's silent failure: UnsupportedError")
    ce(lambda: good.weird_status(A[0]), bp.InternalError, None, "977",
       "a status no ABI has: InternalError")
    ce(lambda: good.bad_result(A[0]), bp.InternalError, None,
       "returned int for result #0, expected Tensor",
       "a broken result: InternalError")
    ce(lambda: bp.empty((2,), "float32", "mutedev"), bp.OutOfMemoryError,
       MemoryError, "mutedev: alloc", "a failing allocation: "
       "OutOfMemoryError")
    vendor = bp.load(plugin("vendor_a"))
    npu = [bp.empty((3,), "float32", "npu_a")]
    ce(lambda: core.add(npu[0], np.ones(3, np.float32)), bp.DeviceError, None,
       "is on cpu:0 but argument #0 'self' is on npu_a:0",
       "mixed devices: DeviceError")
    offset = bp.ops.vendor_a.offset
    ce(lambda: bp.unload("vendor_a"), bp.BusyError, None,
       "plugin 'vendor_a': 1 tensor is on its device type 'npu_a' still alive",
       "unload with a live tensor: BusyError")
    npu.clear()
    gc.collect()
    bp.unload("vendor_a")
    t.is_eq(vendor.state, "unloaded", "unload succeeds once the tensor is "
            "gone")
    ce(lambda: offset(np.ones(2, np.float32)), bp.NotFoundError, LookupError,
       "vendor_a::offset: the operator is not defined now",
       "an op of an unloaded plugin: NotFoundError")
    t.check_raises(bp.NotFoundError, bp.unload, "vendor_a",
                   match="no loaded plugin named 'vendor_a'",
                   desc="unload of an unknown name: NotFoundError")
    ce(lambda: bp.load(plugin("bad_schema")), bp.SchemaError, None,
       re.escape("setup failed: def in 'bad_schema': schema 'scale(Tensor "
                 "self, float factor=fast) -> Tensor': column 33: expected "
                 "a float"),
       "a plugin that defines a bad schema: SchemaError")


def status_classes():
    path = os.path.join(SRCDIR, "sdk", "include", "backplane", "abi.h")
    with open(path, encoding="utf-8") as f:
        header = f.read()
    codes = {int(v): "BP_ERR_" + n
             for n, v in re.findall(r"\bBP_ERR_(\w+)\s*=\s*(\d+)", header)}
    count = re.search(r"#define\s+BP_STATUS_COUNT\s+(\d+)", header)
    t.ok(codes and count and sorted(codes) == list(range(1, int(
        count.group(1)))), "abi.h lists BP_ERR_1 .. BP_STATUS_COUNT-1",
        sorted(codes))
    classes = [c for c in vars(bp).values() if isinstance(c, type)
               and issubclass(c, bp.Error) and c is not bp.Error]
    for code, name in sorted(codes.items()):
        mine = [c for c in classes if getattr(c, "status", None) == code]
        t.ok(len(mine) == 1 and mine[0].status_name == name
             and mine[0].__name__ in bp.__all__,
             f"{name} ({code}) has exactly one exported class",
             [(c.__name__, c.status_name) for c in mine])
    strays = [c.__name__ for c in classes if c.status not in codes]
    t.is_eq(strays, [], "no class for a status abi.h does not have")
    bases = {bp.InvalidArgumentError: ValueError, bp.DtypeError: TypeError,
             bp.ShapeError: ValueError, bp.NotFoundError: LookupError,
             bp.UnsupportedError: NotImplementedError,
             bp.OutOfMemoryError: MemoryError,
             bp.SizeOverflowError: OverflowError, bp.LoadError: ImportError}
    t.ok(all(issubclass(c, b) and issubclass(c, bp.Error)
             for c, b in bases.items()), "the builtin bases")
    t.ok(issubclass(bp.Error, Exception) and not issubclass(
        bp.Error, (ValueError, TypeError)), "Error is an Exception of its own")
    e = bp.ShapeError("x")
    t.is_eq((e.status, e.status_name, str(e)), (3, "BP_ERR_SHAPE", "x"),
            "status and status_name are class attributes")


binding()
host_errors()
status_classes()
gc.collect()
t.is_eq(bp.live_tensor_count(), BASE, "live_tensor_count back to the start")
t.done()
