"""Every op of the core op set through backplane.ops with NumPy inputs,
against float64 NumPy references within docs/op-set.md's tolerances; each
case also checks the result's metadata against op.meta() and that the
same call on backplane Tensors gives the same bits."""

import os

import taplib as t

np = t.require("numpy")
from opref import (F64, FLOATS, TOL, UNARY, bin_ref,  # noqa: E402
                   cast_ref, compare, gelu_ref, layer_norm_ref, promote,
                   softmax_ref, vals)

import opcases2  # noqa: E402

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
seen = set()


def to_np(r):
    return np.empty(r.shape, r.dtype) if r.numel == 0 else r.numpy()


def as_tensors(xs):
    return [bp.from_dlpack(x) if isinstance(x, np.ndarray) else x for x in xs]


def case(op, args, want, dtype, mode="exact", desc="", kw=None, todo=None,
         **cmp):
    """One test point: op(*args, **kw) against the reference `want`."""
    kw = kw or {}
    seen.add(op.name)
    name = f"{op.name} {desc}".strip()
    try:
        r = op(*args, **kw)
        meta = op.meta(*args, **kw)[0]
        why = []
        if (r.dtype, r.shape, r.strides, r.device) != meta:
            why.append(f"metadata {(r.dtype, r.shape, r.strides, r.device)}"
                       f" != meta {meta}")
        if not r.is_contiguous:
            why.append(f"result not contiguous: strides {r.strides}")
        got = to_np(r)
        why.append(compare(got, want, dtype, mode, **cmp))
        tkw = dict(zip(kw, as_tensors(kw.values())))
        r2 = to_np(op(*as_tensors(args), **tkw))
        if r2.tobytes() != got.tobytes():
            why.append("backplane Tensor inputs give other bits")
        why.append(check_out_form(op, args, kw, r, got))
        why = [w for w in why if w]
        return t.ok(not why, name, "\n".join(why), todo)
    except Exception as e:  # noqa: BLE001 (reported as a failure)
        return t.ok(False, name, f"{type(e).__name__}: {e}", todo)


def out_form(op):
    """The .out form of op (core::X.out, core::X.Y_out), if it has one."""
    base, _, ovl = op.name[6:].partition(".")
    packet = getattr(core, base, None)
    name = f"{ovl}_out" if ovl else "out"
    if base.endswith("_") or ovl.endswith("out") or packet is None:
        return None
    return getattr(packet, name) if name in packet.overloads() else None


def check_out_form(op, args, kw, r, got):
    """The .out form gives op's bits into an out of the result's shape and
    into an empty one, which it resizes (add.out, of op set 1, does not)."""
    pick = getattr(op, "_pick", None)  # a packet that picks by argument
    if op.name[6:].split(".")[0].endswith("_"):
        return None
    out_op = pick(args, dict(kw, out=None)) if pick else out_form(op)
    if out_op is None:
        return None
    seen.add(out_op.name)
    outs = [bp.empty(r.shape, dtype=r.dtype)]
    if out_op.name != "core::add.out":
        outs.append(bp.empty((0,), dtype=r.dtype))
    for out in outs:
        res = out_op(*args, **kw, out=out)
        if res is not out:
            return f"{out_op.name} did not return out"
        if out.shape != r.shape or to_np(out).tobytes() != got.tobytes():
            return f"{out_op.name} gives other bits or shape {out.shape}"
    return None


def refuses(exc, op, *args, match=None, **kw):
    seen.add(op.name)
    t.check_raises(exc, op, *args, match=match, **kw,
                   desc=f"{op.name} refuses: {match}")


# ---- elementwise binary -----------------------------------------------------

PAIRS = [("float32", "float32"), ("float64", "float64"),
         ("float16", "float16"), ("int32", "int32"), ("int8", "uint8"),
         ("int64", "float16"), ("uint8", "uint8"), ("bool", "bool"),
         ("int16", "float32")]


def shapes(da="float32", db="float32"):
    """(x, y, desc) operand pairs: broadcasting, 0-dim, empty, views."""
    base, other = vals(da, (4, 6)), vals(db, (4, 6))
    return [((2, 3), (2, 3), "same shape"), ((4, 1), (1, 5), "broadcast"),
            ((2, 3), (3,), "broadcast rank"), ((), (3,), "0-dim"),
            ((0, 3), (3,), "empty"),
            (base[::2, 1::2], other.T[:3, :3][1:], "strided views")]


def binary():
    for name in ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]:
        op = getattr(core, name)
        for i, (da, db) in enumerate(PAIRS):
            res = promote(da, db)
            if res == "bool" and name in ("sub", "pow", "div"):
                continue
            res = "float32" if name == "div" and res not in FLOATS else res
            cases = shapes(da, db)
            cases = cases if da == db == "float32" else [cases[i % 5]]
            for sa, sb, how in cases:
                lo = 0.25 if name == "pow" else -3
                x = vals(da, sa, lo=lo) if isinstance(sa, tuple) else sa
                y = vals(db, sb) if isinstance(sb, tuple) else sb
                if name == "pow" and isinstance(sb, tuple):
                    y = vals(db, sb, lo=-2, hi=5)
                mode = "ulp" if name == "pow" else "exact"
                zsign = name not in ("maximum", "minimum")
                case(op, (x, y), bin_ref(name, x, y, res), res, mode,
                     f"{da}, {db}: {how}", zsign=zsign)
    refuses(bp.DtypeError, core.sub, vals("bool", 3), vals("bool", 3),
            match="bool")
    x, y = vals("float32", (3, 4)), vals("float32", (4,))
    case(core.mul, (), bin_ref("mul", x, y, "float32"), "float32",
         desc="every argument by keyword", kw={"other": y, "self": x})
    for alpha in (2.5, -0.5):
        case(core.add, (x, y), bin_ref("add", x, y, "float32", alpha),
             "float32", "close", f"alpha={alpha}", kw={"alpha": alpha}, n=2)
        case(core.sub, (x, y), bin_ref("sub", x, y, "float32", alpha),
             "float32", "close", f"alpha={alpha}", kw={"alpha": alpha}, n=2)
    xi, yi = vals("int16", (5,), -300, 300), vals("int16", (5,), -300, 300)
    case(core.add, (xi, yi), xi + 3 * yi, "int16", desc="int16 alpha=3",
         kw={"alpha": 3.0})
    u = vals("uint8", (4,), 0, 255)
    case(core.add, (u, u), u, "uint8", desc="uint8 alpha=-1 saturates to 0",
         kw={"alpha": -1.0})
    refuses(bp.DtypeError, core.add, xi, yi, alpha=0.5, match="integral")
    a, b = vals("float32", (2, 3)), vals("float64", (3,))
    case(core.muladd, (a, b, 1.5), a.astype(F64) * b + 1.5, "float64",
         "close", "float32, float64", n=2)
    h = vals("float16", (4, 1))
    case(core.muladd, (h, h.T), h.astype(F64) * h.T - 2.0, "float16", "close",
         "float16 broadcast", kw={"c": -2.0}, n=2)
    refuses(bp.DtypeError, core.muladd, xi, yi, 1.0, match="floating")


def add_out():
    op = core.add.out
    seen.add(op.name)
    x, y = vals("float32", (3, 4)), vals("int8", (4,))
    out = np.full((3, 8), -1.0, np.float32)[:, ::2]
    r = op(x, y, out=out, alpha=2.0)
    t.ok(r is out and compare(out, x.astype(F64) + 2.0 * y, "float32",
                              "close", n=2) is None
         and np.all(out.base[:, 1::2] == -1), "add.out into a strided view "
         "with alpha, returning it")
    refuses(bp.DtypeError, op, x, y, out=np.zeros((3, 4), np.float64),
            match="out")
    refuses(bp.ShapeError, op, x, y, out=np.zeros((4,), np.float32),
            match="out")
    t.ok(core.add.default.name == "core::add"
         and sorted(core.add.overloads()) == ["Scalar", "Scalar_out", "out"]
         and "out" in dir(core.add) and core.add.out.name == "core::add.out",
         "ops.core.add's overloads: default and out")


# ---- unary, where, cast -----------------------------------------------------

def unary():
    for name, (fn, mode) in UNARY.items():
        op = getattr(core, name)
        for dt in ["float32", "float64", "float16", "int32", "int8", "uint8",
                   "int64", "bool"]:
            same = name in ("neg", "abs", "relu")
            if same and dt == "bool":
                refuses(bp.DtypeError, op, vals(dt, 3), match="bool")
                continue
            x = vals(dt, (3, 4), lo=-60, hi=60, special=True).T
            res = dt if same or dt in FLOATS else "float32"
            want = fn(x) if same and dt not in FLOATS else fn(
                x.astype(res).astype(F64))
            atol = TOL[res][1] if name == "gelu" else 0.0
            case(op, (x,), want, res, mode, f"{dt} (transposed)", atol=atol)
    for dt, x in [("float32", [-87.0, -88.5, -89.0, -90.0, -100.0]),
                  ("float64", [-700.0, -720.0, -740.0])]:
        x = np.array(x, dt)
        case(core.sigmoid, (x,), UNARY["sigmoid"][0](x.astype(F64)), dt, "ulp",
             f"{dt} subnormal results")
    # silu's product underflows later than sigmoid does.
    for dt, x in [("float32", [-87.0, -90.0, -100.0, -103.0, -104.0]),
                  ("float64", [-700.0, -720.0, -740.0])]:
        x = np.array(x, dt)
        case(core.silu, (x,), UNARY["silu"][0](x.astype(F64)), dt, "ulp",
             f"{dt} subnormal results")
    x = vals("float32", (2, 5), special=True)
    case(core.gelu, (x,), gelu_ref(x.astype(F64), "tanh"), "float32", "ulp",
         "approximate='tanh'", kw={"approximate": "tanh"}, atol=1e-5)
    c, a, b = vals("bool", (3, 1)), vals("float32", (3, 4)), vals("int32", 4)
    case(core.where, (c, a, b), np.where(c, a, b.astype("float32")),
         "float32", desc="bool, float32, int32 broadcast")
    h = vals("float16", (2, 3))
    case(core.where, (c[:2].T, h.T, h[0, 0]), np.where(c[:2].T, h.T, h[0, 0]),
         "float16", desc="0-dim other, transposed")
    refuses(bp.DtypeError, core.where, a, a, a, match="bool")


def cast():
    src = np.concatenate([vals("float64", 12, -1e3, 1e3, special=True),
                          [1e20, -1e20, 2.5, -2.5, 255.9, -128.7, 65504.0,
                           65520.0, 1 + 2.0 ** -11]])
    for from_dt in ["float64", "float32", "int64", "int8", "bool"]:
        x = src.astype(from_dt) if from_dt in FLOATS else vals(from_dt, 21,
                                                               -1000, 1000)
        for dt in ["bool", "int8", "int16", "int32", "int64", "uint8",
                   "float16", "float32", "float64"]:
            d = {"int16": np.int16, "float16": np.dtype("float16")}.get(dt, dt)
            case(core.cast, (x, d), cast_ref(x, dt), dt,
                 desc=f"{from_dt} -> {dt}")


# ---- reductions, matmul, nn ops ---------------------------------------------

def reductions():
    x = vals("float32", (4, 5, 6))
    for dim, keep in [([], False), ([1], False), ([0, -1], True), (2, True)]:
        d = tuple(np.atleast_1d(dim)) or None
        n = x.size if d is None else int(np.prod([x.shape[i] for i in d]))
        kw = {"dim": dim, "keepdim": keep}
        x64 = x.astype(F64)
        case(core.sum, (x,), x64.sum(d, keepdims=keep), "float32", "close",
             f"dim={dim} keepdim={keep}", kw=kw, n=n, asum=True)
        case(core.mean, (x.T,), x64.T.mean(d, keepdims=keep), "float32",
             "close", f"transposed dim={dim}", kw=kw, n=n)
        for name, fn in [("amax", np.max), ("amin", np.min)]:
            case(getattr(core, name), (x,), fn(x, d, keepdims=keep), "float32",
                 desc=f"dim={dim}", kw=kw, zsign=False)
    for dt, res in [("int32", "int64"), ("bool", "int64"), ("uint8", "int64"),
                    ("float16", "float16"), ("float64", "float64")]:
        y = vals(dt, (3, 7), -50, 50)
        want = y.astype(res if res != "float16" else F64).sum(1)
        mode = "close" if res in FLOATS else "exact"
        case(core.sum, (y, 1), want, res, mode, f"{dt} positional dim", n=7,
             asum=True)
        if dt != "bool":
            case(core.argmax, (y,), np.argmax(y), "int64", desc=f"{dt} flat")
    y = vals("int8", (3, 4))
    case(core.sum, (y,), y.astype(F64).sum(), "float64", desc="dtype=float64",
         kw={"dtype": "float64"})
    z = np.array([[1.0, np.nan, 5.0, np.nan], [3.0, 2.0, 3.0, -1.0]])
    case(core.amax, (z, [1]), [np.nan, 3.0], "float64", desc="NaN propagates")
    case(core.argmax, (z,), [[1], [0]], "int64", desc="first NaN, first max",
         kw={"dim": 1, "keepdim": True})
    case(core.argmax, (z, None, True), [[1]], "int64", desc="dim=None keepdim")
    e = np.zeros((0, 2), np.float32)
    case(core.sum, (e,), np.float32(0), "float32", desc="empty is 0")
    case(core.mean, (e, [0]), [np.nan, np.nan], "float32", desc="empty: NaN")
    case(core.argmax, (e, 1), np.zeros(0), "int64", desc="empty result")
    refuses(bp.ShapeError, core.amax, e, match="amax")
    refuses(bp.InvalidArgumentError, core.sum, x, [1, -2], match="dim")
    refuses(bp.DtypeError, core.mean, vals("int32", 3), match="floating")
    refuses(bp.DtypeError, core.argmax, vals("bool", 3), match="bool")


def matmul():
    for dt in FLOATS:
        for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)),
                       ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2)),
                       ((2, 0), (0, 3))]:
            a = vals(dt, sa, -0.5, 0.5)
            b = vals(dt, sb[::-1], -0.5, 0.5).T  # transposed: not contiguous
            case(core.matmul, (a, b), np.matmul(a.astype(F64), b), dt,
                 "close", f"{dt} {sa} @ {sb}", n=sa[-1])
    refuses(bp.ShapeError, core.matmul, vals("float32", (2, 3)),
            vals("float32", (4, 2)), match="shape")
    refuses(bp.DtypeError, core.matmul, vals("int32", (2, 2)),
            vals("int32", (2, 2)), match="matmul")


def nn():
    for dt in FLOATS:
        x = vals(dt, (3, 4, 5), -4, 4)
        for dim in (0, -1):
            for name, log in (("softmax", False), ("log_softmax", True)):
                case(getattr(core, name), (x, dim),
                     softmax_ref(x.astype(F64), dim, log), dt, "close",
                     f"{dt} dim={dim}", n=x.shape[dim])
        w, b = vals(dt, (4, 5)), vals(dt, (4, 5))
        case(core.layer_norm, (x, [4, 5], w, b),
             layer_norm_ref(x.astype(F64), (4, 5), w, b), dt, "close",
             f"{dt} weight, bias", n=20)
    x = vals("float32", (6, 8)).T
    case(core.layer_norm, (x,), layer_norm_ref(x.astype(F64), (6,), eps=0.5),
         "float32", "close", "keywords, eps=0.5, transposed",
         kw={"normalized_shape": [6], "eps": 0.5}, n=6)
    refuses(bp.ShapeError, core.layer_norm, x, [5], match="normalized_shape")
    refuses(bp.InvalidArgumentError, core.softmax, x, 2, match="out of range")
    if torch is None:
        t.skip("torch agrees with the references", t.not_importable("torch"))
        return
    y = vals("float64", (3, 8), -4, 4)
    ty = torch.from_numpy(y)
    F = torch.nn.functional
    diffs = [compare(to_np(core.gelu(y)), F.gelu(ty).numpy(), "float64",
                     "ulp", atol=1e-7),
             compare(to_np(core.gelu(y, approximate="tanh")),
                     F.gelu(ty, approximate="tanh").numpy(), "float64", "ulp",
                     atol=1e-7),
             compare(to_np(core.softmax(y, 1)), F.softmax(ty, 1).numpy(),
                     "float64", "close", n=8),
             compare(to_np(core.layer_norm(y, [8])),
                     F.layer_norm(ty, [8]).numpy(), "float64", "close", n=8)]
    t.ok(not any(diffs), "gelu, softmax, layer_norm agree with torch", diffs)


# ---- memory ops -------------------------------------------------------------

def memory():
    x = vals("float32", (3, 4))
    r = core.contiguous(x)
    t.ok(bp.from_dlpack(r).data_ptr == x.ctypes.data, "contiguous of a "
         "contiguous array is that memory")
    case(core.contiguous, (x.T,), x.T, "float32", desc="of a transposed view")
    seen.add("core::fill_")
    for dt in ["bool", "int8", "uint8", "int64", "float16", "float64"]:
        a = np.zeros((2, 3), dt)[:, ::2]
        for v in (2.7, -1.0, 1e6):
            r = core.fill_(a, v)
            want = cast_ref(np.full(a.shape, v), dt)
            t.ok(r is a and compare(a, want, dt) is None,
                 f"fill_ {dt} view with {v} converts as cast", a)
    z = np.lib.stride_tricks.as_strided(np.zeros(1), (3,), (0,),
                                        writeable=True)
    t.ok(core.fill_(z, 4.0) is z and z[2] == 4.0, "fill_ of a stride-0 view")
    seen.add("core::copy_")
    dst = np.zeros((2, 3), np.int16)
    src = np.array([1.9, -2.9, 70000.0])
    t.ok(core.copy_(dst, src) is dst and np.array_equal(
        dst, np.broadcast_to(cast_ref(src, "int16"), (2, 3))),
        "copy_ broadcasts and converts as cast", dst)
    a = np.arange(8.0)
    core.copy_(a[1:], a[:-1])
    t.is_eq(a.tolist(), [0.0] + list(range(7)), "copy_ overlapping: as if "
            "src were copied first")
    refuses(bp.ShapeError, core.copy_, dst, np.zeros(4), match="copy_")
    refuses(bp.InvalidArgumentError, core.copy_, z, np.arange(3.0),
            match="stride")


def bfloat16():
    if torch is None:
        t.skip("bfloat16 through torch tensors", t.not_importable("torch"))
        return
    x, y = torch.randn(4, 5).bfloat16(), torch.randn(5).bfloat16()
    r = torch.from_dlpack(core.mul(x, y))
    t.ok(r.dtype == torch.bfloat16 and torch.equal(r, x * y),
         "bfloat16 mul of torch tensors matches torch")
    z = torch.randn(9, dtype=torch.float64) * 100
    c = torch.from_dlpack(core.cast(z, "bfloat16"))
    t.ok(torch.equal(c, z.bfloat16()), "cast to bfloat16 rounds as torch")
    try:
        c = torch.from_dlpack(core.cast(z, torch.bfloat16))
        got = c.dtype
    except TypeError as e:
        got = str(e)
    t.is_eq(got, torch.bfloat16, "a torch dtype names a ScalarType")


def coverage():
    names = {n for n in bp._backplane.op_names() if n.startswith("core::")}
    t.is_eq(dir(core), sorted({n[6:].split(".")[0] for n in names}),
            "dir(ops.core) lists every op")
    t.ok(len(names) >= 33, f"the core op set has {len(names)} ops")
    for name in sorted(names):
        t.ok(name in seen, f"{name} has a test case")


def signatures():
    """inspect.signature of every op: its schema's parameters, in order,
    with defaults and keyword-only markers."""
    import inspect
    sig = inspect.signature(core.add.out)
    t.is_eq([(p.name, p.kind.name, p.default) for p in
             sig.parameters.values()],
            [("self", "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty),
             ("other", "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty),
             ("alpha", "KEYWORD_ONLY", 1.0),
             ("out", "KEYWORD_ONLY", inspect.Parameter.empty)],
            "inspect.signature(core.add.out): the schema's parameters")
    t.is_eq(sig.return_annotation, "Tensor(a!)", "and its result's type")
    bad = []
    for name in bp._backplane.op_names():
        op = bp.OpOverload(name)
        s = inspect.signature(op)
        if [p.name for p in s.parameters.values()] != \
                [a["name"] for a in op.signature[0]]:
            bad.append(name)
    t.ok(not bad, "every op's signature lists its schema's parameters", bad)


signatures()
binary()
add_out()
unary()
cast()
reductions()
matmul()
nn()
memory()
bfloat16()
opcases2.run(case, refuses, core, bp)
coverage()
t.done()
