"""backplane.torch.offload: unmodified torch code on the CPU plugin.  A
GPT-2-shaped model (examples/gpt2-c/make_weights.py: 2 layers, real dims)
generates torch's greedy tokens with no fallback; a small CNN (conv,
batch norm, ReLU, pools, linear), a transformer layer and the models of
models.py (Llama-style, BERT, ViT, ResNet-18) agree with torch, in
bfloat16 too;
ops the table lacks fall back to torch with one warning each and are
counted; fallback="error" and dtypes= work; a training step's gradients
match torch's."""

import itertools
import math
import os
import sys
import warnings

import taplib as t

np, torch = t.require("numpy", "torch")

import backplane  # noqa: E402
import backplane.torch as bt  # noqa: E402

backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
srcdir = os.environ.get("BP_TEST_SRCDIR", ".")
sys.path.insert(0, os.path.join(srcdir, "examples", "gpt2-c"))
import make_weights as gpt2  # noqa: E402

F = torch.nn.functional
torch.manual_seed(0)


def fallbacks(rep):
    return {k: v["fallback_calls"] for k, v in rep.items()
            if v["fallback_calls"]}


def on_plugin(rep):
    return sum(v["plugin_calls"] for v in rep.values())


def close(a, b, tol=1e-4):
    return a.shape == b.shape and a.dtype == b.dtype and \
        bool(torch.allclose(a, b, rtol=tol, atol=tol))


# ---- GPT-2: torch's tokens, nothing left to torch --------------------------
w = gpt2.weights(0)
g = torch.Generator().manual_seed(1000)
prompt = torch.randint(0, gpt2.VOCAB, (8,), generator=g).tolist()
with torch.no_grad():
    want, margin, _ = gpt2.generate(w, prompt)
    bt.report(reset=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with bt.offload("core"):
            got, _, _ = gpt2.generate(w, prompt)
rep = bt.report(reset=True)
t.is_eq(got, want, "GPT-2 (2 layers, 768 wide) generates torch's 16 tokens")
t.is_eq(fallbacks(rep), {}, "with no op left to torch")
t.ok(not caught, "and no warning", [str(c.message) for c in caught])
t.ok(rep["aten.addmm.default"]["plugin_calls"] > 0 and
     rep["aten.native_layer_norm.default"]["plugin_calls"] > 0,
     "its linear layers and layer norms ran on the plugin")


# ---- a small CNN and a transformer layer -----------------------------------
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = F.avg_pool2d(x, 2)
        x = torch.sigmoid(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x).log_softmax(-1)


net = Net().eval()
with torch.no_grad():
    net.bn.running_mean.uniform_(-0.5, 0.5)
    net.bn.running_var.uniform_(0.5, 2)
x = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    want = net(x)
    with bt.offload():
        got = net(x)
rep = bt.report(reset=True)
t.ok(close(got, want), "a CNN (conv, batch norm, pools, linear) agrees",
     f"{got}\n{want}")
t.is_eq(fallbacks(rep), {}, "with no op left to torch")

layer = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True,
                                         dropout=0.0).eval()
tokens = torch.randn(2, 6, 32)
mask = torch.triu(torch.full((6, 6), -math.inf), 1)
with torch.no_grad():
    want = layer(tokens, src_mask=mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with bt.offload():
            got = layer(tokens, src_mask=mask)
rep = bt.report(reset=True)
t.ok(close(got, want), "a transformer encoder layer agrees",
     f"{(got - want).abs().max()}")
t.ok(on_plugin(rep) > 0, "and ran ops on the plugin",
     {k: v for k, v in rep.items() if v["fallback_calls"]})

# ---- the models of models.py ------------------------------------------------
sys.path.insert(0, os.path.join(srcdir, "tests", "python"))
import models  # noqa: E402


def offloaded(model, inputs, dtype=torch.float32):
    """model(*inputs) by torch and under offload, in dtype; the two first
    results and the report."""
    model = model.eval().to(dtype)
    inputs = [i.to(dtype) if i.is_floating_point() else i for i in inputs]
    with torch.no_grad():
        want = model(*inputs)
        bt.report(reset=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with bt.offload():
                got = model(*inputs)
    if isinstance(want, tuple):
        want, got = want[0], got[0]
    return got, want, bt.report(reset=True)


CASES = [
    ("a Llama-style layer (RMSNorm, rotary, SwiGLU, grouped-query "
     "attention)", models.LlamaLayer(), [torch.randn(2, 7, 256)], {}),
    ("a BERT layer with a padding mask", models.BertLayer(),
     [torch.randn(2, 9, 256), torch.tensor([[1] * 9, [1] * 5 + [0] * 4])],
     {}),
    ("a ViT block (patches by conv, multi-head attention)",
     models.ViTBlock(), [torch.randn(2, 3, 64, 64)], {}),
    ("ResNet-18", models.randomize_norms(models.ResNet18()),
     [torch.randn(1, 3, 64, 64)], {}),
]
for name, model, inputs, expected in CASES:
    got, want, rep = offloaded(model, inputs)
    t.ok(close(got, want, 1e-4), f"{name} agrees with torch",
         f"largest difference {(got - want).abs().max()}")
    t.is_eq(fallbacks(rep), expected, f"{name}: fallbacks")

# bfloat16: the plugin accumulates in float32 as torch does; results within
# bfloat16's rounding of the largest value
for name, model, inputs in [("Llama-style layer", models.LlamaLayer(),
                             [torch.randn(1, 5, 256)]),
                            ("BERT layer", models.BertLayer(),
                             [torch.randn(1, 6, 256), torch.ones(1, 6)])]:
    got, want, rep = offloaded(model, inputs, torch.bfloat16)
    err = (got.float() - want.float()).abs().max().item()
    t.ok(got.dtype == torch.bfloat16 and
         err <= 0.05 * want.float().abs().max().item(),
         f"a {name} in bfloat16 agrees with torch's bfloat16", err)
    t.is_eq(fallbacks(rep), {}, f"a {name} in bfloat16: no fallback")
wb = {k: v.to(torch.bfloat16) for k, v in w.items()}
with torch.no_grad():
    want = gpt2.step(wb, torch.tensor(prompt), 0, [None] * gpt2.LAYERS)
    with bt.offload():
        got = gpt2.step(wb, torch.tensor(prompt), 0, [None] * gpt2.LAYERS)
rep = bt.report(reset=True)
err = (got.float() - want.float()).abs().max().item()
t.ok(got.dtype == torch.bfloat16 and
     err <= 0.05 * want.float().abs().max().item(),
     "GPT-2's logits in bfloat16 agree with torch's", err)
t.is_eq(fallbacks(rep), {}, "GPT-2 in bfloat16: no fallback")

# max pool's indices (torch's CPU max pool returns them): torch's, ties
# included, for every geometry up to 3, on the plugin; an input with NaN
# and -inf too, whose calls with a window whose maximum is NaN or -inf go
# to torch (its index there comes from its scan)
bad, n, to_torch = [], 0, 0
for k, s, p, d, ceil in itertools.product((1, 2, 3), (1, 2, 3), (0, 1),
                                          (1, 2), (False, True)):
    if p > k // 2 or (k - 1) * d + 1 > 9 + 2 * p:
        continue
    x = torch.randn(2, 3, 11, 9)
    x[1, 1, 4:6, 4:6] = 1.0
    y = x.clone()
    y[0, 0, 2, 3] = float("nan")
    y[1, 2, :3, :3] = -float("inf")
    for v in (x, y):
        want = F.max_pool2d(v, k, s, p, d, ceil, return_indices=True)
        with bt.offload():
            got = F.max_pool2d(v, k, s, p, d, ceil, return_indices=True)
        n += 1
        to_torch += bool((want[0].isnan() |
                          (want[0] == -float("inf"))).any())
        if not (torch.equal(got[1], want[1]) and
                torch.allclose(got[0], want[0], equal_nan=True)):
            bad.append((k, s, p, d, ceil, v is y))
calls = bt.report(reset=True)["aten.max_pool2d_with_indices.default"]
t.ok(n > 80 and not bad and n / 2 < n - to_torch < n and
     calls["plugin_calls"] == n - to_torch and
     calls["fallback_calls"] == to_torch,
     f"max_pool2d's values and indices equal torch's in {n} calls, "
     f"{n - to_torch} of them on the plugin", (bad, calls))

# ---- fallbacks -------------------------------------------------------------
a = torch.randn(4, 5)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with bt.offload():
        r1 = torch.flip(a, [0])
        r2 = torch.flip(a, [1])
rep = bt.report(reset=True)
t.ok(torch.equal(r1, torch.flip(a, [0])) and torch.equal(r2, a.flip(1)),
     "an op without a core op runs on torch")
t.is_eq(rep.get("aten.flip.default", {}).get("fallback_calls"), 2,
        "and each call is counted")
t.is_eq(len([c for c in caught if "aten.flip" in str(c.message)]), 1,
        "with one warning for the op")
try:
    with bt.offload(fallback="error"):
        torch.flip(a, [0])
    t.ok(False, "fallback='error' raises for an op without a core op")
except backplane.UnsupportedError as e:
    t.ok("aten.flip" in str(e), "fallback='error' raises for an op without "
         "a core op", e)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with bt.offload(dtypes={torch.float64}):
        r = a + a
rep = bt.report(reset=True)
t.ok(torch.equal(r, a + a) and
     rep["aten.add.Tensor"]["fallback_calls"] == 1,
     "dtypes= leaves other dtypes to torch")
for bad, kw, want in [
        (5, {}, "expected a backplane.Plugin, a plugin name or 'core', "
         "got int"),
        ("core", {"dtypes": 5}, "dtypes must be None or a collection of "
         "torch dtypes, got int"),
        ("core", {"dtypes": {"float32"}}, "dtypes holds 'float32', which "
         "is not a torch dtype")]:
    t.check_raises(TypeError, bt.offload, bad, **kw, match=want,
                   desc=f"offload({bad!r}, **{kw!r}) names the bad argument")
t.ok(bt.offload(dtypes=torch.float32).dtypes == {torch.float32},
     "dtypes= takes a single torch dtype as well")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with bt.offload(), bt.offload():
        r = (a + 2).add(a, alpha=2) * 3
rep = bt.report(reset=True)
t.ok(torch.equal(r, ((a + 2).add(a, alpha=2)) * 3) and not caught and
     not any(s["fallback_calls"] for s in rep.values()),
     "nested offloads: torch's result, no fallback and no warning",
     f"warnings {[str(c.message) for c in caught]}, report {rep}")
c = torch.randn(3, dtype=torch.complex64)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with bt.offload():
        r = c + c
rep = bt.report(reset=True)
t.ok(torch.equal(r, c + c) and rep["aten.add.Tensor"]["fallback_calls"] == 1,
     "a dtype the plugin lacks (complex64) falls back")


@bt.offload()
def scaled(z):
    return z * 3 + 1


i = torch.arange(6, dtype=torch.int32)
r = scaled(i)
rep = bt.report(reset=True)
t.ok(torch.equal(r, i * 3 + 1) and r.dtype == torch.int32 and
     rep["aten.mul.Tensor"]["plugin_calls"] == 1,
     "the decorator form; int32 times a number stays int32, as in torch")
h = torch.tensor([1, 2], dtype=torch.int64)
with bt.offload():
    r = h / 2
    s = torch.tensor(2.5) * torch.ones(3, dtype=torch.float16)
t.ok(r.dtype == torch.float32 and r.tolist() == [0.5, 1.0],
     "int64 / int gives float32, as torch's true division")
t.ok(s.dtype == torch.float16,
     "a 0-dim float32 tensor times float16 stays float16 (torch's rule)")
bt.report(reset=True)

# ---- training --------------------------------------------------------------
mlp = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(),
                          torch.nn.Linear(16, 3))
xb, yb = torch.randn(8, 6), torch.randint(0, 3, (8,))
loss = F.cross_entropy(mlp(xb), yb)
want = torch.autograd.grad(loss, list(mlp.parameters()))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with bt.offload():
        loss = F.cross_entropy(mlp(xb), yb)
        got = torch.autograd.grad(loss, list(mlp.parameters()))
rep = bt.report(reset=True)
t.ok(all(close(g1, g2, 1e-5) for g1, g2 in zip(got, want)),
     "a training step's gradients under offload equal torch's")
t.ok(rep["aten.addmm.default"]["plugin_calls"] == 2 and
     rep["aten.mm.default"]["plugin_calls"] == 3 and
     rep["aten.tanh_backward.default"]["plugin_calls"] == 1 and
     rep["aten._log_softmax_backward_data.default"]["plugin_calls"] == 1,
     "its forward and backward matmuls, tanh and log_softmax backward ran "
     "on the plugin", rep)
relu_net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 1), torch.nn.Sigmoid())
want = torch.autograd.grad(relu_net(xb).softmax(0).sum() * 3,
                           list(relu_net.parameters()))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with bt.offload():
        got = torch.autograd.grad(relu_net(xb).softmax(0).sum() * 3,
                                  list(relu_net.parameters()))
rep = bt.report(reset=True)
t.ok(all(close(g1, g2, 1e-5) for g1, g2 in zip(got, want)) and
     rep["aten.threshold_backward.default"]["plugin_calls"] == 1 and
     rep["aten.sigmoid_backward.default"]["plugin_calls"] == 1 and
     rep["aten._softmax_backward_data.default"]["plugin_calls"] == 1,
     "ReLU, sigmoid and softmax backward on the plugin give torch's "
     "gradients", rep)

# backward formulas: gelu (both forms), layer norm (with and without its
# affine parameters), nll_loss (every reduction, class weights,
# ignore_index, one sample)
cases = []
for approx in ("none", "tanh"):
    cases.append((f"gelu_backward ({approx})",
                  lambda z, a=approx: F.gelu(z * 3, approximate=a).sum()))
ln_w = torch.randn(5, requires_grad=True)
ln_b = torch.randn(5, requires_grad=True)
cases.append(("native_layer_norm_backward",
              lambda z: (F.layer_norm(z, [5], ln_w, ln_b) ** 2).sum()))
cases.append(("native_layer_norm_backward without weight",
              lambda z: (F.layer_norm(z, [4, 5]) ** 3).sum()))
tgt = torch.tensor([1, 4, 0, 2, 2, 3])
cw = torch.rand(5) + 0.5
for red in ("none", "mean", "sum"):
    for wt in (None, cw):
        cases.append((f"nll_loss {red}, weight {wt is not None}",
                      lambda z, r=red, w_=wt: F.nll_loss(
                          z.log_softmax(-1), tgt, w_, ignore_index=2,
                          reduction=r).sum()))
cases.append(("nll_loss of one sample (and select_backward)",
              lambda z: F.nll_loss(z[0].log_softmax(-1), tgt[0])))
cases.append(("slice_backward",
              lambda z: (z[1:5:2, 1:] * z[1:5:2, 1:]).sum()))
bad = []
warnings.simplefilter("error")  # offload warns of no gradient here
for name, fn in cases:
    z = torch.randn(6, 4, 5, requires_grad=True) if "without" in name \
        else torch.randn(6, 5, requires_grad=True)
    params = [z] + ([ln_w, ln_b] if "weight" not in name and "layer" in name
                    else [])
    want = torch.autograd.grad(fn(z), params)
    with bt.offload(fallback="error"):
        got = torch.autograd.grad(fn(z), params)
    if not all(close(a, b, 1e-5) for a, b in zip(got, want)):
        bad.append(name)
warnings.resetwarnings()
bt.report(reset=True)
t.ok(not bad, f"{len(cases)} backward formulas give torch's gradients, "
     "with nothing left to torch", bad)

t.done()
