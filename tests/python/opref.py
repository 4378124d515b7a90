"""Float64 NumPy references for the core ops, and the comparison of a
result with one within docs/op-set.md's "Tolerances"."""

import math

import numpy as np

np.seterr(all="ignore")
rng = np.random.default_rng(7)
F64 = np.float64
FLOATS = ("float16", "float32", "float64")
TOL = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5),
       "float64": (1e-7, 1e-7)}
ULPS = {"float16": 1, "float32": 4, "float64": 4}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -20.0, 20.0, 0.5]


def vals(dtype, shape, lo=-3.0, hi=3.0, special=False):
    """Random values of a dtype; floats may start with SPECIAL."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        a = rng.uniform(lo, hi, shape)
        if special and a.size >= len(SPECIAL):
            a.flat[:len(SPECIAL)] = SPECIAL
        return a.astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, lo), min(info.max, hi) + 1,
                        shape).astype(dtype)


def promote(a, b):
    """Torch's promotion of two dtype names (op-set.md, Common rules)."""
    fa, fb = a in FLOATS, b in FLOATS
    if fa != fb:
        return a if fa else b
    return np.result_type(a, b).name


def compare(got, want, dtype, mode="exact", n=1, zsign=True, atol=0.0,
            asum=False):
    """None when `got` (the result) matches the float64 reference `want`
    rounded once to `dtype` as op-set.md's Tolerances say; else why not.
    Modes: "exact" (bit for bit; zsign: the sign of zero counts), "ulp"
    (ULPS, plus `atol`), "close" (TOL, rtol scaled by sqrt(n), and atol
    by n when `asum`)."""
    want = np.asarray(want)
    if got.dtype.name != dtype or got.shape != want.shape:
        return f"got {got.dtype}{got.shape}, want {dtype}{want.shape}"
    if dtype not in FLOATS:
        bad = got != want.astype(dtype)
    else:
        g, w = got.astype(F64), want.astype(F64)
        wr = w.astype(dtype).astype(F64)
        fin = ~np.isnan(w)
        bad = np.isnan(g) == fin
        if mode == "exact":
            bad |= fin & (g != wr)
            if zsign:
                bad |= fin & (wr == 0) & (np.signbit(g) != np.signbit(wr))
        else:
            if mode == "ulp":
                tol = ULPS[dtype] * np.spacing(np.abs(wr.astype(dtype)))
                tol = tol.astype(F64) + atol
            else:  # "close": assert_close's rtol, atol, scaled by n
                rtol, at = TOL[dtype]
                tol = at * (n if asum else 1) + rtol * math.sqrt(n) * np.abs(w)
            inf = np.isinf(wr)
            bad |= fin & ((inf & (g != wr)) | (~inf & ~(np.abs(g - w) <= tol)))
    if not np.any(bad):
        return None
    i = tuple(np.argwhere(bad)[0])
    return (f"{np.count_nonzero(bad)} bad of {bad.size}; at {i}: got "
            f"{got[i]!r}, want {want[i]!r}")


def bin_ref(name, x, y, res, alpha=1.0):
    if res == "bool":
        return {"add": x | y, "mul": x & y, "maximum": x | y,
                "minimum": x & y}[name]
    if res not in FLOATS:
        xi, yi = x.astype(res), y.astype(res)
        return {"add": lambda: xi + np.array(alpha).astype(res) * yi,
                "sub": lambda: xi - np.array(alpha).astype(res) * yi,
                "mul": lambda: xi * yi, "maximum": lambda: np.maximum(xi, yi),
                "minimum": lambda: np.minimum(xi, yi),
                "pow": lambda: int_pow(xi, yi)}[name]()
    xf, yf = x.astype(res).astype(F64), y.astype(res).astype(F64)
    return {"add": lambda: xf + alpha * yf, "sub": lambda: xf - alpha * yf,
            "mul": lambda: xf * yf, "div": lambda: xf / yf,
            "maximum": lambda: np.maximum(xf, yf),
            "minimum": lambda: np.minimum(xf, yf),
            "pow": lambda: np.power(xf, yf)}[name]()


def int_pow(x, e):
    x, e = np.broadcast_arrays(x, e)
    r = np.power(x, np.maximum(e, 0).astype(x.dtype))
    neg = e < 0
    r[neg & (x != 1) & (x != -1)] = 0
    if x.dtype.kind == "i":
        r[neg & (x == -1)] = np.where(e[neg & (x == -1)] % 2, -1, 1)
    return r


def gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return x / 2 * (1 + np.tanh(math.sqrt(2 / math.pi)
                                    * (x + 0.044715 * x ** 3)))
    return x / 2 * (1 + np.vectorize(math.erf, otypes=[F64])(x / math.sqrt(2)))


def silu_ref(x):
    # Below -80, sigmoid(x) is e^x to a relative 1e-34 (and e^-x would
    # overflow below -709).
    with np.errstate(over="ignore"):
        return np.where(x < -80, x * np.exp(np.minimum(x, 0)),
                        x / (1 + np.exp(-np.maximum(x, -80))))


UNARY = {"neg": (np.negative, "exact"), "abs": (np.abs, "exact"),
         "relu": (lambda x: np.where(np.isnan(x), x, np.where(x > 0, x, 0)),
                  "exact"),
         "exp": (np.exp, "ulp"), "log": (np.log, "ulp"),
         "sqrt": (np.sqrt, "exact"),
         "rsqrt": (lambda x: 1 / np.sqrt(x), "ulp"),
         "sigmoid": (lambda x: np.where(x < 0, np.exp(x) / (1 + np.exp(x)),
                                        1 / (1 + np.exp(-x))), "ulp"),
         "tanh": (np.tanh, "ulp"), "gelu": (gelu_ref, "ulp"),
         # op set 2
         "sin": (np.sin, "ulp"), "cos": (np.cos, "ulp"),
         "erf": (np.vectorize(math.erf, otypes=[F64]), "ulp"),
         "silu": (lambda x: silu_ref(x), "ulp")}


def cast_ref(x, dt):
    if dt == "bool" or dt in FLOATS or x.dtype.kind != "f":
        return x.astype(dt)
    info = np.iinfo(dt)
    y = np.trunc(np.nan_to_num(x.astype(F64), nan=0.0, posinf=info.max,
                               neginf=info.min))
    r = np.clip(y, info.min, info.max).astype(dt)
    r[y >= 2.0 ** 63] = info.max
    return r


def softmax_ref(x, dim, log=False):
    s = x - x.max(dim, keepdims=True)
    lse = np.log(np.exp(s).sum(dim, keepdims=True))
    return s - lse if log else np.exp(s - lse)


def layer_norm_ref(x, shape, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(
        x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)
