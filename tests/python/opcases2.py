"""The test cases of op set 2's comparisons, logical ops, Scalar
overloads and gathers, for test-ops.py: each against a NumPy reference."""

import numpy as np

from opref import F64, FLOATS, bin_ref, promote, vals

CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less,
       "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def weak(dt, v):
    """The dtype in which a tensor of dt meets the Python number v."""
    if isinstance(v, bool):
        return dt
    if isinstance(v, int):
        return "int64" if dt == "bool" else dt
    return dt if dt in FLOATS else "float32"


def special(dt, shape):
    """Values with NaN, infinities, signed zeros and ties for floats."""
    x = vals(dt, shape, -3, 3)
    if dt in FLOATS:
        x.flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    return x


def comparisons(case, refuses, core, bp):
    pairs = [("float32", "float32"), ("float16", "float64"), ("int8", "uint8"),
             ("int64", "float16"), ("bool", "bool"), ("bool", "int32"),
             ("int32", "int32"), ("float64", "float64")]
    for name, fn in CMP.items():
        op = getattr(core, name)
        for da, db in pairs:
            res = promote(da, db)
            x, y = special(da, (4, 6)), special(db, (6,))
            y[:2] = x[0, :2] if da == db else y[:2]  # equal elements
            case(op, (x, y), fn(x.astype(res), y.astype(res)), "bool",
                 desc=f"{da}, {db}")
        x, y = special("float32", (7, 5)), special("float32", (14,))
        case(op, (x.T[1:], y[::2]), fn(x.T[1:], y[::2]), "bool",
             desc="strided views, broadcast")
        case(op, (x[:0], x[0]), np.zeros((0, 5), bool), "bool", desc="empty")
        for dt, v in [("float32", 0.5), ("int32", 2), ("int32", 2.5),
                      ("uint8", 300), ("bool", True), ("float16", 0.1),
                      ("int8", -1)]:
            x = special(dt, (9,)) if dt != "int32" else np.arange(-4, 5,
                                                                  dtype=dt)
            res = weak(dt, v)
            want = fn(x.astype(res), np.array(v).astype(res))
            case(op, (x, v), want, "bool", desc=f"{dt} with {v!r}")
        x = vals("float64", (3,))
        case(op.Scalar, (x, np.float32(0.25)), fn(x, 0.25), "bool",
             desc="a NumPy scalar")
    refuses(bp.ShapeError, core.lt, vals("float32", (2, 3)),
            vals("float32", (4,)), match="broadcast")


def logical(case, refuses, core, bp):
    for dt in ("float32", "int16", "bool", "float16"):
        x = special(dt, (3, 4))
        x.flat[-3:] = 0
        y = special(dt, (4,))
        case(core.logical_not, (x,), np.logical_not(x), "bool", desc=dt)
        case(core.isnan, (x,), np.isnan(x) if dt in FLOATS else
             np.zeros(x.shape, bool), "bool", desc=dt)
        case(core.logical_and, (x, y), np.logical_and(x, y), "bool",
             desc=dt)
        case(core.logical_or, (x, y), np.logical_or(x, y), "bool", desc=dt)
    a, b = vals("int8", (2, 1)), special("float64", (3,))
    case(core.logical_and, (a, b), np.logical_and(a, b), "bool",
         desc="int8, float64 broadcast")


def masked_fill(case, refuses, core, bp):
    for dt, v in [("float32", -np.inf), ("float16", 2.5), ("int64", 7),
                  ("uint8", 255), ("bool", True), ("int32", 2.9),
                  ("float64", np.nan)]:
        x, m = vals(dt, (3, 5)), vals("bool", (5,))
        want = np.where(m, np.array(v).astype(dt), x)
        case(core.masked_fill, (x, m, v), want, dt, desc=f"{dt} with {v!r}")
    x, m = vals("float32", (4,)), vals("bool", (2, 1))
    case(core.masked_fill, (x, m, 0.0), np.where(m, F64(0), x), "float32",
         desc="mask broadcasts self")
    refuses(bp.InvalidArgumentError, core.masked_fill, vals("uint8", (3,)),
            vals("bool", (3,)), 256, match="without overflow")
    refuses(bp.DtypeError, core.masked_fill, vals("float32", (3,)),
            vals("uint8", (3,)), 1.0, match="expected bool")


def clamp(case, refuses, core, bp):
    for dt, lo, hi in [("float32", -1.0, 1.0), ("float32", None, 0.5),
                       ("float16", 0.5, None), ("int32", -2, 2),
                       ("int32", 0, 2.5), ("float64", 2.0, -1.0),
                       ("uint8", 10, 100), ("float32", np.nan, 1.0)]:
        x = special(dt, (5, 7)) if dt in FLOATS else vals(dt, (5, 7), 0, 200)
        res = weak(weak(dt, lo if lo is not None else True),
                   hi if hi is not None else True)
        w = x.astype(res).astype(F64) if res in FLOATS else x.astype(res)
        if lo is not None:
            w = np.maximum(w, np.array(lo).astype(res))
        if hi is not None:
            w = np.minimum(w, np.array(hi).astype(res))
        case(core.clamp, (x, lo, hi), w, res, desc=f"{dt}, {lo}, {hi}")
    refuses(bp.InvalidArgumentError, core.clamp, vals("float32", (3,)),
            match="at least one")
    refuses(bp.DtypeError, core.clamp, vals("bool", (3,)), True,
            match="not bool")


def arith_scalar(case, refuses, core, bp):
    for name in ("add", "sub", "mul", "div", "pow"):
        op = getattr(core, name)
        for dt, v in [("float32", 2.5), ("bfloat16", 2.5), ("float16", 3),
                      ("int8", 300), ("int32", 1.5), ("bool", 1),
                      ("int64", -2), ("uint8", True), ("float64", -0.5)]:
            if dt == "bfloat16":
                continue  # through torch tensors: test-torch.py
            res = weak(dt, v)
            if name == "div" and res not in FLOATS:
                res = "float32"
            if (name in ("sub", "pow") and res == "bool") or (
                    name == "pow" and isinstance(v, int) and v < 0):
                continue
            lo = 0.5 if name == "pow" else -3
            x = vals(dt, (3, 4), lo=lo, hi=4)
            want = bin_ref(name, x, np.array(v).astype(res), res)
            mode = "ulp" if name == "pow" else "exact"
            case(op.Scalar, (x, v), want, res, mode, desc=f"{dt} with {v!r}")
        # A number as `other` picks the Scalar overload.
        x = vals("float32", (4,))
        case(op, (x, 2), bin_ref(name, x, np.float32(2), "float32"), "float32",
             "ulp" if name == "pow" else "exact", desc="ops.core.NAME(x, 2)")
    x = vals("float32", (5,))
    case(core.add.Scalar, (x, 2), x.astype(F64) + 2 * 3, "float32", "close",
         desc="alpha=3", kw={"alpha": 3.0}, n=2)
    refuses(bp.DtypeError, core.sub, vals("bool", (3,)), True, match="bool")


def gather_ref(x, dim, idx):
    """torch.gather: index may be smaller than x off dim (no broadcast)."""
    pos = list(np.indices(idx.shape))
    pos[dim] = idx
    return x[tuple(pos)]


def gathers(case, refuses, core, bp):
    for dt in ("float32", "float16", "int64", "bool", "uint8", "float64"):
        x = special(dt, (5, 6))
        for dim, idx in [(0, [4, 0, 0, 2]), (1, [5]), (-1, []), (0, [3])]:
            for it in ("int64", "int32"):
                ix = np.array(idx, dtype=it)
                case(core.index_select, (x, dim, ix), np.take(x, ix, axis=dim),
                     dt, desc=f"{dt} dim {dim} {len(idx)} {it} indices")
        ig = np.array([[4, 0, 1, 1, 3, 2], [0, 0, 0, 4, 4, 4]])
        case(core.gather, (x, 0, ig), gather_ref(x, 0, ig), dt,
             desc=f"{dt} along 0")
        ig = np.array([[4, 0], [1, 1], [2, 3]])
        case(core.gather, (x.T, 1, ig), gather_ref(x.T, 1, ig), dt,
             desc=f"{dt} transposed self along 1")
        ie = np.array([[4, 0], [2, 2], [1, 3]], dtype="int32")
        case(core.embedding, (x, ie), x[ie], dt, desc=f"{dt} [3, 2] ids")
    w = vals("float32", (50, 8))
    case(core.embedding, (w, np.array(7), 0), w[7], "float32",
         desc="a 0-dim index, padding_idx 0")
    case(core.index_select, (w[::2], 0, np.array([24, 0])),
         w[::2][[24, 0]], "float32", desc="a strided table")
    for op, args, what in [
            (core.index_select, (w, 0, np.array([50])), "index 50"),
            (core.index_select, (w, 1, np.array([0, -1])), "index -1"),
            (core.gather, (w, 1, np.array([[8]])), "index 8"),
            (core.embedding, (w, np.array([[3, 99]])), "'indices': index 99")]:
        refuses(bp.InvalidArgumentError, op, *args, match=what)
    refuses(bp.DtypeError, core.index_select, w, 0, np.array([0.0]),
            match="int64 or int32")
    refuses(bp.ShapeError, core.index_select, w, 0, np.zeros((2, 2), int),
            match="1 dimension")
    refuses(bp.ShapeError, core.gather, w, 0, np.zeros((2,), int),
            match="dimensions")
    refuses(bp.InvalidArgumentError, core.embedding, w, np.array([1]), 50,
            match="padding_idx")


def cumsum(case, refuses, core, bp):
    for dt in ("float32", "float64", "float16", "int32", "int8", "bool",
               "uint8"):
        x = special(dt, (4, 7)) if dt in FLOATS else vals(dt, (4, 7), 0, 120)
        res = dt if dt in FLOATS else "int64"
        acc = F64 if res in FLOATS else res
        for dim in (0, 1, -1):
            want = np.cumsum(x.astype(acc), axis=dim)
            case(core.cumsum, (x, dim), want, res, "close", f"{dt} dim {dim}",
                 n=x.shape[dim], asum=True)
        case(core.cumsum, (x.T, 0), np.cumsum(x.T.astype(acc), 0), res,
             "close", f"{dt} transposed", n=7, asum=True)
    x = vals("int8", (300,), 100, 127)
    case(core.cumsum, (x, 0), np.cumsum(x.astype("int8"), dtype="int8"),
         "int8", desc="dtype=int8 wraps", kw={"dtype": "int8"})
    x = vals("int32", (5,))
    case(core.cumsum, (x, 0), np.cumsum(x.astype(F64)), "float32", "close",
         "dtype=float32", kw={"dtype": "float32"}, n=5, asum=True)
    case(core.cumsum, (np.float32(2.5) * np.ones(()), 0), np.array(2.5),
         "float64", desc="0-dim")
    refuses(bp.InvalidArgumentError, core.cumsum, vals("float32", (2, 3)), 2,
            match="out of range")


class _Part:
    """One result of a two-result op, as `case` checks an op's one result
    (its meta is that result's)."""

    def __init__(self, op, k):
        self.op, self.k, self.name = op, k, op.name

    def __call__(self, *args, **kw):
        return self.op(*args, **kw)[self.k]

    def meta(self, *args, **kw):
        return [self.op.meta(*args, **kw)[self.k]]


def stable_order(x, axis, descending):
    """The stable order along axis: NaN above every number, ties (0.0 and
    -0.0 among them) by index."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    xf = x.astype(F64)
    nan = np.isnan(xf)
    return np.lexsort((np.where(nan, 0.0, -xf), ~nan), axis=axis)


def topk_sort(case, refuses, core, bp):
    for dt in ("float32", "float64", "float16", "int64", "int32", "int8",
               "uint8"):
        if dt in FLOATS:
            x = vals(dt, (4, 37), -2, 2).round()
            x.flat[::5] = np.nan
            x.flat[1::7] = -0.0
        else:
            x = vals(dt, (4, 37), 0, 5)
        for dim in (1, 0, -1):
            for desc in (False, True):
                order = stable_order(x, dim, desc)
                want_v = np.take_along_axis(x, order, dim)
                way = "descending" if desc else "ascending"
                what = f"{dt} dim {dim} {way}"
                case(_Part(core.sort, 0), (x, dim, desc), want_v, dt,
                     desc=what)
                case(_Part(core.sort, 1), (x, dim, desc), order, "int64",
                     desc=what + " (indices)")
                n = x.shape[dim]
                for k in sorted({0, 1, min(5, n), n}):
                    sl = [slice(None)] * 2
                    sl[dim] = slice(0, k)
                    kw = {"dim": dim, "largest": desc}
                    what = f"{dt} k={k} dim {dim} largest={desc}"
                    case(_Part(core.topk, 0), (x, k), want_v[tuple(sl)], dt,
                         desc=what, kw=kw)
                    case(_Part(core.topk, 1), (x, k), order[tuple(sl)],
                         "int64", desc=what + " (indices)", kw=kw)
    x = vals("float32", (5, 6))
    order = stable_order(x.T, 0, True)
    case(_Part(core.topk, 1), (x.T, 3), order[:3], "int64",
         desc="transposed self", kw={"dim": 0})
    case(_Part(core.topk, 0), (np.array(1.5, np.float32), 0),
         np.array(1.5, np.float32), "float32",
         desc="0-dim self, k 0: its element (as PyTorch)")
    refuses(bp.InvalidArgumentError, core.topk, x, 7, match="'k' is 7")
    refuses(bp.InvalidArgumentError, core.topk, x, -1, match="'k' is -1")
    refuses(bp.DtypeError, core.topk, vals("bool", (3,)), 1, match="bool")
    refuses(bp.InvalidArgumentError, core.sort, x, 2, match="out of range")


def softmax(x):
    e = np.exp(x - np.max(x, -1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layers(case, refuses, core, bp):
    a, b = vals("float32", (2, 3)), vals("float16", (4, 3))
    case(core.cat, ([a, b], 0), np.concatenate([a, b.astype("float32")]),
         "float32", desc="float32 and float16")
    case(core.cat, ([a.T, a.T[:, :1]], 1),
         np.concatenate([a.T, a.T[:, :1]], 1), "float32",
         desc="views along dim 1")
    i8 = vals("int8", (3,))
    case(core.cat, ([np.zeros(0, "int64"), i8], 0), i8.astype("int64"),
         "int64", desc="skips a 1-D empty tensor, promotes with it")
    case(core.stack, ([a, a * 2, a], -1), np.stack([a, a * 2, a], -1),
         "float32", desc="dim -1")
    refuses(bp.ShapeError, core.cat, [a, b.T], 0, match="tensor #1")
    refuses(bp.ShapeError, core.stack, [a, a.T], 0, match="tensor #1")
    refuses(bp.ShapeError, core.cat, [np.float32(1) * np.ones(()), a], 0,
            match="0-dimensional")
    x, w, bias = vals("float64", (2, 5, 4)), vals("float64", (3, 4)), \
        vals("float64", (3,))
    case(core.linear, (x, w, bias), x @ w.T + bias, "float64", "close",
         desc="with bias", n=4)
    case(core.linear, (x[0, 0], w), x[0, 0] @ w.T, "float64", "close",
         desc="1-D input, no bias", n=4)
    refuses(bp.ShapeError, core.linear, x, w.T, match="in_features")
    r = vals("float32", (3, 6))
    ms = (r.astype(F64) ** 2).mean(-1, keepdims=True)
    eps = float(np.finfo(np.float32).eps)
    case(core.rms_norm, (r, [6], r[0]), r / np.sqrt(ms + eps) * r[0],
         "float32", "close", desc="weight, default eps", n=6)
    refuses(bp.ShapeError, core.rms_norm, r, [5], match="normalized_shape")
    xb, st = vals("float32", (2, 3, 4)), vals("float32", (3,), 0.5, 2)
    want = (xb - st[:, None]) / np.sqrt(st[:, None] + 1e-5) * st[:, None]
    case(core.batch_norm, (xb, st, None, st, st, False, 0.1, 1e-5, False),
         want, "float32", "close", desc="weight, no bias", n=4)
    refuses(bp.InvalidArgumentError, core.batch_norm, xb, None, None, None,
            st, False, 0.1, 1e-5, False, match="running")
    q, k, v = (vals("float64", s) for s in ((2, 4, 3, 8), (2, 2, 5, 8),
                                            (2, 2, 5, 2)))
    kk, vv = np.repeat(k, 2, -3), np.repeat(v, 2, -3)
    sc = q @ np.swapaxes(kk, -1, -2) / np.sqrt(8)
    case(core.scaled_dot_product_attention, (q, k, v), softmax(sc) @ vv,
         "float64", "close", desc="grouped-query heads", n=8)
    causal = np.triu(np.ones((3, 5), bool), 1)
    case(core.scaled_dot_product_attention, (q, k, v, None, 0.0, True),
         softmax(np.where(causal, -np.inf, sc)) @ vv, "float64", "close",
         desc="is_causal, L != S", n=8)
    refuses(bp.InvalidArgumentError, core.scaled_dot_product_attention, q, k,
            v, dropout_p=0.5, match="dropout_p")


def windows(x, k, s, p, d, fill):
    """[N, C, OH, OW, KH, KW] windows of x padded with fill."""
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    span = d * (k - 1) + 1
    w = np.lib.stride_tricks.sliding_window_view(xp, (span, span), (2, 3))
    return w[:, :, ::s, ::s, ::d, ::d]


def conv_pool(case, refuses, core, bp):
    x = vals("float64", (2, 4, 9, 8))
    for s, p, d, g in [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 4), (3, 1, 1, 1)]:
        w, b = vals("float64", (8, 4 // g, 3, 3)), vals("float64", (8,))
        win = windows(x, 3, s, p, d, 0.0)
        want = np.concatenate([np.einsum(
            "nchwij,ocij->nohw", win[:, i * 4 // g:(i + 1) * 4 // g],
            w[i * 8 // g:(i + 1) * 8 // g]) for i in range(g)], 1)
        case(core.conv2d, (x, w, b, s, p, d, g), want + b[:, None, None],
             "float64", "close", desc=f"stride {s} padding {p} dilation {d} "
             f"groups {g}", n=36)
    case(core.max_pool2d, (x, 3, 2, 1), windows(x, 3, 2, 1, 1, -np.inf).max(
        (-2, -1)), "float64", desc="3x3, stride 2, padding 1")
    case(core.avg_pool2d, (x, 2), windows(x, 2, 2, 0, 1, 0.0).mean((-2, -1)),
         "float64", "close", desc="2x2", n=4)
    case(core.adaptive_avg_pool2d, (x, 1), x.mean((-2, -1), keepdims=True),
         "float64", "close", desc="global", n=72)
    refuses(bp.ShapeError, core.conv2d, x, vals("float64", (8, 3, 3, 3)),
            match="input channels per group")
    refuses(bp.ShapeError, core.max_pool2d, x, 10, match="output would be")


INPLACE1 = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu", "sigmoid",
            "tanh", "sin", "cos", "erf", "silu", "gelu"]


def inplace(case, refuses, core, bp):
    """Each op_ writes op's result into self and returns self."""
    def check(name, x, *args, **kw):
        want = getattr(core, name)(x.copy(), *args, **kw).numpy()
        mode = "exact" if name in ("neg", "abs", "relu") else "ulp"
        op = getattr(core, name + "_")
        if args and not isinstance(args[0], np.ndarray) and \
                hasattr(op, "Scalar"):
            op = op.Scalar
        got = bp.from_dlpack(x.copy())
        r = op(got, *args, **kw)
        same = r.data_ptr == got.data_ptr and got.numpy().tobytes() == \
            r.numpy().tobytes()
        case(op, (bp.from_dlpack(x.copy()),) + args, want, x.dtype.name,
             mode, kw=kw, desc=f"{x.dtype.name}: self written and returned"
             if same else "DID NOT WRITE AND RETURN SELF")
    x = vals("float32", (3, 4), 0.25, 3)
    for name in INPLACE1:
        check(name, x)
    check("gelu", x, approximate="tanh")
    for name in ("add", "sub", "mul", "div"):
        check(name, x, vals("float32", (4,)))
        check(name, x, 2)
        check(name, vals("int32", (3,)), vals("int8", (3,))) if name != "div" \
            else None
    check("add", x, x.T[:4, :3].T.copy(), alpha=-0.5)
    check("masked_fill", x, vals("bool", (4,)), -np.inf)
    check("clamp", x, 0.5, 2.0)
    refuses(bp.DtypeError, core.add_, vals("int32", (3,)), 0.5,
            match="cannot be written")
    refuses(bp.ShapeError, core.mul_, vals("float32", (3,)),
            vals("float32", (2, 3)), match="does not broadcast self")
    e = vals("float32", (3,))
    stride0 = np.lib.stride_tricks.as_strided(e, (2, 3), (0, 4))
    refuses(bp.InvalidArgumentError, core.relu_, stride0, match="stride 0")


def run(case, refuses, core, bp):
    comparisons(case, refuses, core, bp)
    logical(case, refuses, core, bp)
    masked_fill(case, refuses, core, bp)
    clamp(case, refuses, core, bp)
    arith_scalar(case, refuses, core, bp)
    gathers(case, refuses, core, bp)
    cumsum(case, refuses, core, bp)
    topk_sort(case, refuses, core, bp)
    layers(case, refuses, core, bp)
    inplace(case, refuses, core, bp)
    conv_pool(case, refuses, core, bp)
