"""The torch bridge: every core op as a torch op, against torch's own
results and against backplane.ops; meta tensors, jit.trace, aliasing,
zero copy, lifetimes, errors, and every kind of schema (the sig plugin)."""

import gc
import os
import subprocess
import sys

import taplib

np, torch = taplib.require("numpy", "torch")

import backplane  # noqa: E402
import backplane.torch as bt  # noqa: E402

failed = 0
count = 0


def ok(cond, desc, diag=""):
    global failed, count
    count += 1
    print(f"{'ok' if cond else 'not ok'} {count} - {desc}")
    if not cond:
        failed += 1
        for line in str(diag).splitlines():
            print(f"# {line}")


def raises(exc, fn, match=""):
    try:
        fn()
    except exc as e:
        return match in str(e)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        print(f"# raised {type(e).__name__}: {e}")
        return False
    return False


# ---- without torch --------------------------------------------------------
probe = ("import sys; sys.modules['torch'] = None\n"
         "import backplane\n"
         "try:\n"
         "    import backplane.torch\n"
         "except ImportError as e:\n"
         "    print('ImportError:', e)\n"
         "import os, numpy\n"
         "backplane.load(os.environ['BP_TEST_CPU_PLUGIN'])\n"
         "neg = backplane.Op('core::neg', torch=True)\n"
         "try:\n"
         "    neg(numpy.ones(2, numpy.float32))\n"
         "except RuntimeError as e:\n"
         "    print('RuntimeError:', e)\n")
child = dict(os.environ)
if os.environ.get("BP_TEST_PRELOAD") and "LD_PRELOAD" not in child:
    child["LD_PRELOAD"] = os.environ["BP_TEST_PRELOAD"]  # ThreadSanitizer
out = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                     text=True, env=child)
ok(out.returncode == 0 and "ImportError: backplane.torch needs PyTorch"
   in out.stdout, "without torch, backplane imports and backplane.torch "
   "raises a clear ImportError", out.stdout + out.stderr)
ok("RuntimeError: an Op made with torch=True returns torch tensors, but "
   "torch is not imported" in out.stdout, "without torch, an Op that would "
   "return torch tensors says so", out.stdout + out.stderr)

# ---- registration ---------------------------------------------------------
cpu = backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
names = bt.register(cpu)
composites = [n for n in backplane._backplane.op_names()
              if n.startswith("core::") and n not in cpu.ops
              and backplane.Op(n).info["has_composite"]]
ok(sorted(names) == sorted("bp_" + n for n in cpu.ops + composites)
   and "bp_core::mul.Scalar" in names,
   "register(plugin) defines every op of the plugin and the host's "
   "composites over them", names)
ok(bt.register(cpu) == [], "registering again defines nothing")
ok(raises(ValueError, lambda: bt.register(cpu, prefix="no-way")),
   "a prefix that is not an identifier is refused")
ok(raises(backplane.NotFoundError, lambda: bt.register("nosuch")),
   "an unknown plugin or namespace raises NotFoundError")
bad = []
for tname, bname in bt.registered().items():
    ns, rest = tname.split("::")
    name, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, ns), name)
    schema = str(getattr(packet, overload or "default")._schema)
    # Both printed by torch, which spells numbers its own way (1. for 1.0).
    ours = str(torch._C.parse_schema("bp_" + backplane.Op(bname).schema))
    if schema != ours:
        bad.append((schema, ours))
ok(not bad, "torch's schema of each op is the op's own schema text", bad)

# ---- every core op against torch ------------------------------------------
gen = torch.Generator().manual_seed(7)


def rand(*shape, lo=-2.0, hi=2.0, dtype=torch.float32):
    return (torch.rand(*shape, generator=gen) * (hi - lo) + lo).to(dtype)


x, y = rand(3, 5), rand(5)
pos = rand(3, 5, lo=0.1, hi=3.0)
w, b = rand(5), rand(5)
F = torch.nn.functional
CASES = {
    "add": ((x, y), {"alpha": 2.0}, lambda: torch.add(x, y, alpha=2.0)),
    "sub": ((x, y), {"alpha": 0.5}, lambda: torch.sub(x, y, alpha=0.5)),
    "mul": ((x, y), {}, lambda: x * y),
    "div": ((x, pos), {}, lambda: x / pos),
    "maximum": ((x, y), {}, lambda: torch.maximum(x, y)),
    "minimum": ((x, y), {}, lambda: torch.minimum(x, y)),
    "pow": ((pos, y), {}, lambda: torch.pow(pos, y)),
    "muladd": ((x, y, 0.25), {}, lambda: x * y + 0.25),
    "neg": ((x,), {}, lambda: -x),
    "abs": ((x,), {}, lambda: x.abs()),
    "exp": ((x,), {}, lambda: x.exp()),
    "log": ((pos,), {}, lambda: pos.log()),
    "sqrt": ((pos,), {}, lambda: pos.sqrt()),
    "rsqrt": ((pos,), {}, lambda: pos.rsqrt()),
    "relu": ((x,), {}, lambda: F.relu(x)),
    "sigmoid": ((x,), {}, lambda: x.sigmoid()),
    "tanh": ((x,), {}, lambda: x.tanh()),
    "sin": ((x,), {}, lambda: x.sin()),
    "cos": ((x,), {}, lambda: x.cos()),
    "erf": ((x,), {}, lambda: torch.erf(x)),
    "silu": ((x,), {}, lambda: F.silu(x)),
    "gelu": ((x,), {"approximate": "tanh"},
             lambda: F.gelu(x, approximate="tanh")),
    "where": ((x > 0, x, y), {}, lambda: torch.where(x > 0, x, y)),
    "sum": ((x, [1]), {"keepdim": True}, lambda: x.sum(1, keepdim=True)),
    "mean": ((x,), {}, lambda: x.mean()),
    "amax": ((x, [0]), {}, lambda: x.amax(0)),
    "amin": ((x, [0, 1]), {}, lambda: x.amin((0, 1))),
    "argmax": ((x,), {"dim": 1}, lambda: x.argmax(1)),
    "matmul": ((x, rand(5, 4)), {}, None),
    "softmax": ((x, 1), {}, lambda: x.softmax(1)),
    "log_softmax": ((x, 0), {}, lambda: x.log_softmax(0)),
    "layer_norm": ((x, [5], w, b, 1e-5), {},
                   lambda: F.layer_norm(x, [5], w, b, 1e-5)),
    "cast": ((x, torch.int32), {}, lambda: x.to(torch.int32)),
    "contiguous": ((x.t(),), {}, lambda: x.t().contiguous()),
}
# Comparisons on values with NaN, infinities, signed zeros and ties.
nanx = torch.tensor([[float("nan"), float("inf"), -float("inf"), 0.0, -0.0,
                      1.0], [2.0, -1.5, 1.0, 0.5, float("nan"), 3.0]])
nany = torch.tensor([float("nan"), 1.0, -float("inf"), -0.0, 0.0, 3.0])
for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    CASES[cmp] = ((nanx, nany), {},
                  lambda cmp=cmp: getattr(torch, cmp)(nanx, nany))
# Gathers: repeated indices, the last valid one, int32 and int64 indices.
table = rand(50, 6)
ids = torch.tensor([[49, 0, 0], [7, 7, 49]])
sel = torch.tensor([49, 3, 3], dtype=torch.int32)
CASES["index_select"] = ((table, 0, sel), {},
                         lambda: torch.index_select(table, 0, sel.long()))
CASES["cumsum"] = ((table, 0), {"dtype": torch.float64},
                   lambda: torch.cumsum(table, 0, dtype=torch.float64))
CASES["gather"] = ((table.T, 1, ids.repeat(2, 1)), {},
                   lambda: torch.gather(table.T, 1, ids.repeat(2, 1)))
# conv2d: groups, strides, padding and a bias (test-conv.py covers it all)
convx, convw, convb = rand(2, 4, 7, 6), rand(6, 2, 3, 3), rand(6)
CASES["conv2d"] = ((convx, convw, convb, [2, 1], 1, 1, 2), {},
                   lambda: F.conv2d(convx, convw, convb, (2, 1), 1, 1, 2))
# max_pool2d: padding, dilation and ceil_mode (test-pool.py covers it all)
CASES["max_pool2d"] = ((convx, [3, 2], [2, 1], 1, [1, 2], True), {},
                       lambda: F.max_pool2d(convx, (3, 2), (2, 1), 1, (1, 2),
                                            True))
CASES["matmul"] = (CASES["matmul"][0], {},
                   lambda: CASES["matmul"][0][0] @ CASES["matmul"][0][1])
# ops with an out= or in-place form, and the two-result ops, are checked
# below
MUTATING = {"add.out", "fill_", "copy_", "topk", "sort",
            "scaled_dot_product_attention"}
missing = [n for n in cpu.ops
           if n.split("::")[1] not in set(CASES) | MUTATING]
ok(not missing, "every op of the CPU plugin has a case here", missing)


def close(actual, expected):
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return False
    if not actual.dtype.is_floating_point:
        return torch.equal(actual, expected)
    return torch.allclose(actual, expected, rtol=1e-5, atol=1e-5)


for name, (args, kwargs, ref) in CASES.items():
    got = getattr(torch.ops.bp_core, name)(*args, **kwargs)
    expected = ref()
    np_args = [a.numpy() if isinstance(a, torch.Tensor) else
               backplane._backplane.dtype_code(str(a)[6:])
               if isinstance(a, torch.dtype) else a for a in args]
    direct = getattr(backplane.ops.core, name)(*np_args, **kwargs) \
        if name != "where" else None
    # torch 1.13 does not import DLPack's bool (kDLBool): through NumPy.
    direct = None if direct is None else torch.from_numpy(direct.numpy()) \
        if direct.dtype == "bool" else torch.from_dlpack(direct)
    same = direct is None or torch.equal(got, direct)
    ok(isinstance(got, torch.Tensor) and close(got, expected) and same,
       f"bp_core.{name} matches torch and backplane.ops",
       f"got {got}\nexpected {expected}\ndirect {direct}")

# ---- topk and sort: two results, in the stable order -----------------------
# torch.sort(stable=True) is the order: NaN above every number, equal
# values (0.0 and -0.0 among them) by index.  torch's own topk orders ties
# as its selection algorithm leaves them, which its docs leave open: its
# values are compared, and the indices with the stable sort's.
tie = torch.tensor([[1.0, 2.0, 2.0, float("nan"), 2.0, -0.0, 0.0, 1.0],
                    [3.0, 3.0, 3.0, 3.0, -1.0, -1.0, 0.0, 0.0]])
ties32 = torch.randint(0, 4, (3, 200), generator=gen).to(torch.int64)
TWO = [
    ("topk", (tie, 3), {}, (tie, 1, True, 3)),
    ("topk", (tie, 5), {"largest": False}, (tie, 1, False, 5)),
    ("topk", (ties32, 50), {"dim": 1}, (ties32, 1, True, 50)),
    ("topk", (ties32, 2), {"dim": 0, "largest": False}, (ties32, 0, False, 2)),
    ("topk", (tie.t(), 8), {"dim": 0}, (tie.t(), 0, True, 8)),
    ("sort", (tie,), {}, (tie, 1, False, None)),
    ("sort", (tie, 0, True), {}, (tie, 0, True, None)),
    ("sort", (ties32,), {"descending": True}, (ties32, 1, True, None)),
]
for name, args, kwargs, (src, dim, desc, kk) in TWO:
    values, indices = getattr(torch.ops.bp_core, name)(*args, **kwargs)
    sv, si = torch.sort(src, stable=True, dim=dim, descending=desc)
    if kk is not None:
        sv, si = sv.narrow(dim, 0, kk), si.narrow(dim, 0, kk)
        tv = torch.topk(src, kk, dim, largest=desc).values
    else:
        tv = torch.sort(src, dim, descending=desc).values
    same = (torch.equal(indices, si) and
            torch.equal(values.nan_to_num(7.5), sv.nan_to_num(7.5)) and
            torch.equal(values.nan_to_num(7.5), tv.nan_to_num(7.5)) and
            torch.equal(values.signbit(), sv.signbit()))
    shapes = tuple(tuple(a.shape) if hasattr(a, "shape") else a for a in args)
    ok(same, f"bp_core.{name}{shapes} {kwargs}: torch's values, the stable "
       "order's indices",
       f"got {values} {indices}\nwant {sv} {si}")
ok(raises(Exception, lambda: torch.ops.bp_core.topk(tie, 9), "'k' is 9"),
   "bp_core.topk refuses a k above the dim's size, naming k")

# ---- op set 2's composites: Scalar overloads, logical ops ------------------
# Served by the host's composites over the plugin's kernels; compared with
# torch's results and dtypes (a Python number is weak in both).
bf = rand(3, 5, dtype=torch.bfloat16)
i8 = torch.tensor([-128, -1, 0, 5, 127], dtype=torch.int8)
mask = torch.tensor([True, False, True, False, True])
COMPOSITES = [
    ("mul.Scalar", (bf, 2.5), lambda: bf * 2.5),
    ("add.Scalar", (i8, 300), lambda: i8 + 300),
    ("mul.Scalar", (i8, 1.5), lambda: i8 * 1.5),
    ("div.Scalar", (i8, 2), lambda: i8 / 2),
    ("sub.Scalar", (x, 1), lambda: x - 1),
    ("pow.Scalar", (pos, 3), lambda: pos ** 3),
    ("lt.Scalar", (nanx, 1.0), lambda: nanx < 1.0),
    ("ne.Scalar", (i8, 300), lambda: i8 != 300),
    ("ge.Scalar", (i8, 2.5), lambda: i8 >= 2.5),
    ("eq.Scalar", (nanx, float("nan")), lambda: nanx == float("nan")),
    ("logical_not", (nanx,), lambda: torch.logical_not(nanx)),
    ("logical_and", (nanx, i8[:1]), lambda: torch.logical_and(nanx, i8[:1])),
    ("logical_or", (nanx, nany), lambda: torch.logical_or(nanx, nany)),
    ("isnan", (nanx,), lambda: torch.isnan(nanx)),
    ("masked_fill", (x, mask, -float("inf")),
     lambda: x.masked_fill(mask, -float("inf"))),
    ("masked_fill", (i8, mask, 7), lambda: i8.masked_fill(mask, 7)),
    ("clamp", (nanx, -1.0, 2.0), lambda: torch.clamp(nanx, -1.0, 2.0)),
    ("clamp", (i8, None, 3), lambda: torch.clamp(i8, max=3)),
    ("clamp", (i8, 0.5, None), lambda: torch.clamp(i8, min=0.5)),
    ("embedding", (table, ids), lambda: F.embedding(ids, table)),
    ("embedding", (table, ids, 0), lambda: F.embedding(ids, table, 0)),
]
# Layers: torch 1.13 has no rms_norm and no scaled_dot_product_attention,
# so those are compared with their torch compositions.
lx, lw, lb = rand(2, 5, 8), rand(6, 8), rand(6)
bx, bm, bv = rand(2, 3, 4, 4), rand(3), rand(3, lo=0.5, hi=2.0)
q, k, v = rand(2, 4, 5, 8), rand(2, 2, 7, 8), rand(2, 2, 7, 3)


def sdpa_ref(q, k, v, mask=None, causal=False, scale=None):
    g = q.shape[-3] // k.shape[-3]
    k, v = k.repeat_interleave(g, -3), v.repeat_interleave(g, -3)
    s = q @ k.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2]).tril().bool()
    if mask is not None and mask.dtype == torch.bool:
        s = s.masked_fill(~mask, -float("inf"))
    elif mask is not None:
        s = s + mask
    return s.softmax(-1) @ v


bmask = torch.rand(5, 7, generator=gen) > 0.3
bmask[2] = False  # a row that masks every key: NaN, as in torch
fmask = rand(5, 7)
cx, cw, cb = rand(2, 6, 9, 11), rand(12, 3, 3, 3), rand(12)
COMPOSITES += [
    ("conv2d", (cx, cw, cb, 2, 1, 1, 2),
     lambda: F.conv2d(cx, cw, cb, 2, 1, 1, 2)),
    ("conv2d", (cx[0], cw[:, :2].repeat(1, 3, 1, 1), None, 1, 3, 2),
     lambda: F.conv2d(cx[0], cw[:, :2].repeat(1, 3, 1, 1), None, 1, 3, 2)),
    ("max_pool2d", (cx, 3, 2, 1, 1, True),
     lambda: F.max_pool2d(cx, 3, 2, 1, 1, True)),
    ("avg_pool2d", (cx, 3, 2, 1, True, False),
     lambda: F.avg_pool2d(cx, 3, 2, 1, True, False)),
    # ceil_mode on an input shorter than the kernel: one window, cut short
    ("max_pool2d", (cx[:, :, :1, :7], [2, 3], [], 0, 1, True),
     lambda: F.max_pool2d(cx[:, :, :1, :7], (2, 3), ceil_mode=True)),
    ("avg_pool2d", (cx[:, :, :1, :7], [2, 3], [], 0, True),
     lambda: F.avg_pool2d(cx[:, :, :1, :7], (2, 3), ceil_mode=True)),
    ("adaptive_avg_pool2d", (cx, [4, 5]),
     lambda: F.adaptive_avg_pool2d(cx, (4, 5))),
    ("cat", ([lx, lx[:1].double()], 0),
     lambda: torch.cat([lx, lx[:1].double()], 0)),
    ("cat", ([lx, torch.zeros(0), lx], -1),
     lambda: torch.cat([lx, lx], -1)),
    ("stack", ([lw, lw * 2, lw], 1), lambda: torch.stack([lw, lw * 2, lw], 1)),
    ("linear", (lx, lw, lb), lambda: F.linear(lx, lw, lb)),
    ("linear", (lx[0, 0], lw), lambda: F.linear(lx[0, 0], lw)),
    ("rms_norm", (lx, [8], lw[0]), lambda: lx * torch.rsqrt(
        lx.pow(2).mean(-1, keepdim=True) + torch.finfo(lx.dtype).eps) * lw[0]),
    ("rms_norm", (lx.bfloat16(), [5, 8], None, 1e-3), lambda: (
        lx * torch.rsqrt(lx.pow(2).mean((-2, -1), keepdim=True) + 1e-3)
    ).bfloat16()),
    ("batch_norm", (bx, bm, bv, bm, bv, False, 0.1, 1e-5, False),
     lambda: F.batch_norm(bx, bm, bv, bm, bv, False, 0.1, 1e-5)),
    ("scaled_dot_product_attention", (q, k, v), lambda: sdpa_ref(q, k, v)),
    ("scaled_dot_product_attention", (q, k, v, None, 0.0, True),
     lambda: sdpa_ref(q, k, v, causal=True)),
    ("scaled_dot_product_attention", (q, k, v, bmask),
     lambda: sdpa_ref(q, k, v, bmask)),
    ("scaled_dot_product_attention", (q, k, v, fmask),
     lambda: sdpa_ref(q, k, v, fmask)),
]
for name, args, ref in COMPOSITES:
    op = torch.ops.bp_core
    for part in name.split("."):
        op = getattr(op, part)
    got, expected = op(*args), ref()
    if name == "scaled_dot_product_attention" and len(args) == 4:
        # scale= by keyword, with the float mask
        got2 = op(*args, scale=0.25)
        exp2 = sdpa_ref(*args, scale=0.25)
        ok(torch.allclose(got2, exp2, atol=1e-5, equal_nan=True),
           "bp_core.scaled_dot_product_attention(scale=0.25) matches")
    same = (isinstance(got, torch.Tensor) and got.dtype == expected.dtype
            and got.shape == expected.shape
            and (torch.equal(got, expected) if not got.is_floating_point()
                 else torch.allclose(got.double(), expected.double(),
                                     rtol=1e-2 if got.dtype == torch.bfloat16
                                     else 1e-5, atol=1e-5, equal_nan=True)))
    shown = tuple(a.dtype if isinstance(a, torch.Tensor) else
                  "list" if isinstance(a, list) else a for a in args)
    ok(same, f"bp_core.{name}{shown} matches torch",
       f"got {got}\nexpected {expected}")

# The CPU plugin's fused attention (float32), past its blocks of 64: the
# composition in float64 is the reference.  Grouped-query and broadcast
# batch dims, masks that broadcast, causal with L < S and L > S, rows that
# remove every key (NaN), E != Ev, strided inputs; float16 takes the
# host's composite.
sdpa = torch.ops.bp_core.scaled_dot_product_attention
ATTN = []
for L, S in ((70, 130), (130, 70), (64, 64), (1, 200)):
    qa, ka = rand(2, 4, L, 16), rand(1, 2, S, 16)
    va = rand(1, 2, S, 24)
    bm = torch.rand(L, S, generator=gen) > 0.4
    bm[min(L - 1, 3)] = False
    fm = rand(4, 1, S)
    ATTN += [((qa, ka, va), {}, {}),
             ((qa, ka, va), {"is_causal": True}, {"causal": True}),
             ((qa, ka, va, bm), {}, {}),
             ((qa, ka, va, fm), {"scale": 0.3}, {"scale": 0.3})]
qt = rand(2, 3, 16, 90).transpose(-1, -2)  # a strided query
ATTN.append(((qt, rand(2, 3, 90, 16), rand(2, 3, 90, 8)), {"is_causal": True},
             {"causal": True}))
for args, kw, refkw in ATTN:
    got = sdpa(*args, **kw)
    d = [a.double() if a.is_floating_point() else a for a in args]
    want = sdpa_ref(*d, **refkw).float()
    shapes = [tuple(a.shape) for a in args]
    ok(torch.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True) and
       torch.equal(got.isnan(), want.isnan()),
       f"fused attention {shapes} {kw} matches the composition",
       f"max diff {(got - want).abs().nan_to_num(0).max()}")
h = rand(1, 2, 70, 16).half()
got = sdpa(h, h, h, is_causal=True)
want = sdpa_ref(h.double(), h.double(), h.double(), causal=True).half()
ok(got.dtype == torch.float16 and torch.allclose(got.float(), want.float(),
                                                 atol=2e-3),
   "float16 attention (the host's composite) matches the composition")

# In-place forms: torch's tensor is written and returned.
ip = rand(3, 5)
want = torch.relu(ip * 2 + y)
r = torch.ops.bp_core.add_(torch.ops.bp_core.mul_.Scalar(ip, 2), y)
ok(r is ip and torch.equal(torch.ops.bp_core.relu_(ip), want) and
   torch.equal(ip, want), "mul_.Scalar, add_ and relu_ write the torch "
   "tensor and return it")

# ---- mutation, aliasing and zero copy -------------------------------------
out = torch.zeros(3, 5)
r = torch.ops.bp_core.add.out(x, y, out=out)
ok(r is out and torch.allclose(out, x + y),
   "add.out writes into out= and returns that very tensor")
z = torch.empty(4)
ok(torch.ops.bp_core.fill_(z, 3.0) is z and bool((z == 3).all()),
   "fill_ fills in place and returns self")
ok(torch.ops.bp_core.copy_(z, torch.arange(4.0)) is z
   and torch.equal(z, torch.arange(4.0)), "copy_ copies in place")
c = x.contiguous()
ok(torch.ops.bp_core.contiguous(c) is c,
   "contiguous of a contiguous tensor is that tensor")

sig = backplane.load(os.path.join(os.environ["BP_TEST_PLUGIN_DIR"], "sig.so"))
bt.register(sig)
m = torch.arange(6.0).reshape(2, 3)
f = torch.ops.bp_sig.flip(m)
ok(f.data_ptr() == m.data_ptr() and f.shape == (3, 2)
   and f.stride() == (1, 3), "a view result shares the argument's memory")
g = backplane.ops.sig.flip(m)
ok(g.data_ptr == m.data_ptr(), "backplane.ops reads a torch tensor without "
   "copying it (same data pointer)")
a = np.arange(6, dtype=np.float32).reshape(2, 3)
ok(backplane.ops.sig.flip(a).data_ptr == a.ctypes.data,
   "backplane.ops reads a NumPy array without copying it")
res = torch.ops.bp_core.neg(x)
ok(backplane.from_dlpack(res).data_ptr == res.data_ptr(),
   "a bridge result is memory Backplane allocated, handed over as is")

# ---- every kind of schema through torch -----------------------------------
s = torch.ops.bp_sig
v = torch.zeros(3)
ok(s.scalars(1, 2.0, True, "abc", torch.float32, torch.device("cpu"))[:3]
   == (4, 4.0, False), "int, float, bool, str, ScalarType and Device "
   "arguments; several scalar results; an op without tensors")
ok(torch.equal(s.defaults(v), torch.full((3,), 17.25)),
   "every default is applied")
ok(torch.equal(s.defaults(v, 1, 1.0, False, "", [], [0, 0], k=0),
               torch.zeros(3) + 2), "positional arguments override defaults")
ok(torch.equal(s.defaults(v, h=5, g=torch.int8, k=0),
               torch.full((3,), 115.25)), "keyword and optional arguments")
ok(tuple(s.kinds(1, 2.0)) == (1202, 5.5)
   and tuple(s.kinds(-3.0, 7, 0.25, 4)) == (2121, 8.25),
   "Scalar arguments through torch: a Python int and float keep their kind")
# torch's own dispatcher hands a bool Scalar on as an int (torch 1.13).
ok(tuple(backplane.ops.sig.kinds(True, 2.0, False)) == (3232, 5.5),
   "Scalar arguments: a Python bool keeps its kind in backplane.ops")
ok(tuple(backplane.ops.sig.kinds(np.int32(2), np.float32(0.5),
                                 np.bool_(True))) == (1232, 6.0),
   "Scalar arguments from NumPy scalars keep their kind")
ok(tuple(backplane.ops.sig.kinds(7, torch.tensor(1.5).item())) == (1202, 11.0)
   and backplane.ops.sig.kinds.schema.endswith(
       "kinds(Scalar a, Scalar b, Scalar? c=None, Scalar d=2.5) -> "
       "(int, float)"),
   "a Scalar? left out is None, and the schema says Scalar")
ok(torch.equal(s.lists([v, v + 1], [1, 2], [0.5]), torch.full((3,), 13.5)),
   "Tensor[], int[2] and float[] arguments")
ok(torch.equal(s.maybe(None, v + 1), v + 1)
   and torch.equal(s.maybe(v + 1, v + 1), v + 2), "Tensor? as None and given")
lo, hi = torch.zeros(3), torch.zeros(3)
pair = s.split.out(v + 1, lo=lo, hi=hi)
ok(pair[0] is lo and pair[1] is hi and torch.equal(hi, v + 2),
   "two written results are the out= tensors themselves")
ok(s.stats(v + 1) == (3, 3.0, True), "named int, float and bool results")

# ---- meta tensors and tracing ---------------------------------------------
meta_bad = []
for name, (args, kwargs, _) in CASES.items():
    margs = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in args]
    real = getattr(torch.ops.bp_core, name)(*args, **kwargs)
    mres = getattr(torch.ops.bp_core, name)(*margs, **kwargs)
    if (mres.device.type != "meta" or mres.shape != real.shape
            or mres.dtype != real.dtype or mres.stride() != real.stride()):
        meta_bad.append((name, mres, real.shape, real.stride()))
ok(not meta_bad, "every op on meta tensors gives the real result's shape, "
   "dtype and strides without running a kernel", meta_bad)
mz = torch.empty(4, device="meta")
ok(torch.ops.bp_core.fill_(mz, 1.0) is mz, "a mutating op on a meta tensor "
   "returns that tensor")
mo = torch.empty(3, 5, device="meta")
ok(torch.ops.bp_core.add.out(x.to("meta"), y.to("meta"), out=mo) is mo,
   "an out= op on meta tensors returns out")


def block(p, q):
    return torch.ops.bp_core.relu(torch.ops.bp_core.add(p, q, alpha=0.5))


traced = torch.jit.trace(block, (x, x))
graph = str(traced.graph)
ok("bp_core::add" in graph and "bp_core::relu" in graph
   and torch.equal(traced(y, y), block(y, y)),
   "torch.jit.trace records the ops, and the trace runs them", graph)

# ---- autograd ---------------------------------------------------------------
import warnings  # noqa: E402

# pow has no derivative in backplane/_grads.py (test-grad.py checks those
# that do)
needs = torch.ones(3, requires_grad=True)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    prod = torch.ops.bp_core.pow(needs, needs)
    with torch.no_grad():
        torch.ops.bp_core.pow(needs, needs)
    torch.ops.bp_core.pow(needs.detach(), needs)
fallback = hasattr(torch._C, "_set_autograd_fallback_mode")
texts = [str(w.message) for w in seen]
if fallback:
    ok(not texts, "torch has an autograd fallback: the bridge adds no "
       "warning", texts)
else:
    ok(len(texts) == 2 and "core::pow has no derivative" in texts[0]
       and not prod.requires_grad, "without torch's autograd fallback, an "
       "input that requires grad gets a warning, except under no_grad",
       texts)
prod = torch.ops.bp_core.mul(needs, needs)
ok(prod.requires_grad and prod.grad_fn is not None,
   "an op with a derivative (mul) gives a result that requires grad")

# ---- errors and lifetimes -------------------------------------------------
ok(raises(backplane.ShapeError,
          lambda: torch.ops.bp_core.add(torch.ones(2), torch.ones(3)),
          "cannot be broadcast"), "a host error reaches torch's caller as "
   "the backplane exception, with the host's message")
ok(raises(backplane.DtypeError, lambda: torch.ops.bp_core.neg(
    torch.ones(2, dtype=torch.complex64)), "complex64"),
   "a torch dtype Backplane lacks is refused by name")
gc.collect()
base = backplane.live_tensor_count()
held = torch.ops.bp_core.exp(torch.ones(1000))
during = backplane.live_tensor_count()
del held
gc.collect()
ok(during == base + 1 and backplane.live_tensor_count() == base,
   "a torch result holds its Backplane tensor until torch frees it",
   (base, during, backplane.live_tensor_count()))
src = torch.arange(5.0)
view = backplane.ops.sig.flip(src)
del src
gc.collect()
ok(torch.equal(torch.from_dlpack(view), torch.arange(5.0)),
   "a result stays valid after its torch source is deleted")
del view
gc.collect()
ok(backplane.live_tensor_count() == base, "nothing leaks",
   (base, backplane.live_tensor_count()))

print(f"1..{count}")
sys.exit(1 if failed else 0)
