"""A pre-norm transformer block whose ops run in a Backplane plugin.

    python3 transformer_block.py [PLUGIN.so]

The plugin comes from the command line, else from $BP_TEST_CPU_PLUGIN,
else from discovery (BP_PLUGIN_PATH and the installed plugin directory).
backplane.torch.register() makes the plugin's ops torch ops
(torch.ops.bp_core.matmul, ...).  The block is written once, over a table
of six ops, and run twice with the same weights: with Backplane's ops and
with torch's own.  Reshapes and transposes are torch views in both runs:
Backplane's ops take strided tensors, so no copy is made for them.
The script prints the largest differences and exits with status 1 when
the two disagree by more than the tolerance derived below.
"""

import math
import os
import sys
from types import SimpleNamespace

import torch

import backplane
import backplane.torch

BATCH, SEQ, DIM, HEADS, HIDDEN = 2, 16, 64, 4, 256
EPS = 1e-5

# The tolerance (docs/op-set.md, "Tolerances").  In float32 an op that
# accumulates n terms is within rtol = 1.3e-6 * sqrt(n) and atol = 1e-5 of
# the exact result; elementwise ops (add, mul, gelu) are far tighter.  A
# value of the output goes through nine accumulating ops: layer_norm (n =
# DIM), the q/k/v projection (DIM), q @ k^T (DIM / HEADS), softmax (SEQ),
# attention @ v (SEQ), the output projection (DIM), layer_norm (DIM), the
# MLP's two matmuls (DIM, HIDDEN).  An error carried into the next op is
# not amplified: the weights are scaled by 1/sqrt(fan-in) and layer_norm
# sees values of standard deviation about 1.  So each of torch and
# Backplane is within the sum of the ops' bounds, and they are within
# twice that of each other.
ACCUMULATIONS = [DIM, DIM, DIM // HEADS, SEQ, SEQ, DIM, DIM, DIM, HIDDEN]
RTOL = 2 * sum(1.3e-6 * math.sqrt(n) for n in ACCUMULATIONS)
ATOL = 2 * len(ACCUMULATIONS) * 1e-5

BACKPLANE_OPS = SimpleNamespace(
    matmul=lambda a, b: torch.ops.bp_core.matmul(a, b),
    add=lambda a, b: torch.ops.bp_core.add(a, b),
    mul=lambda a, b: torch.ops.bp_core.mul(a, b),
    softmax=lambda x, dim: torch.ops.bp_core.softmax(x, dim),
    layer_norm=lambda x, w, b: torch.ops.bp_core.layer_norm(
        x, [x.shape[-1]], w, b, EPS),
    gelu=lambda x: torch.ops.bp_core.gelu(x))

TORCH_OPS = SimpleNamespace(
    matmul=torch.matmul,
    add=torch.add,
    mul=torch.mul,
    softmax=torch.softmax,
    layer_norm=lambda x, w, b: torch.nn.functional.layer_norm(
        x, [x.shape[-1]], w, b, EPS),
    gelu=torch.nn.functional.gelu)


def load_plugin():
    """The plugin to run the block in, as described at the top."""
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "BP_TEST_CPU_PLUGIN")
    if path:
        return backplane.load(path)
    backplane.discover()
    loaded = [p for p in backplane.plugins() if p.state == "loaded"]
    if not loaded:
        sys.exit("no plugin: pass a plugin's path, or install Backplane")
    return next((p for p in loaded if p.name == "cpu"), loaded[0])


def make_weights(seed=0):
    """Random weights, scaled so that activations stay near unit size."""
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape, scale=1.0):
        return torch.randn(*shape, generator=gen) * scale

    return SimpleNamespace(
        ln1_w=1 + rand(DIM, scale=0.1), ln1_b=rand(DIM, scale=0.1),
        qkv_w=rand(DIM, 3 * DIM, scale=DIM ** -0.5), qkv_b=rand(3 * DIM),
        out_w=rand(DIM, DIM, scale=DIM ** -0.5), out_b=rand(DIM, scale=0.1),
        ln2_w=1 + rand(DIM, scale=0.1), ln2_b=rand(DIM, scale=0.1),
        fc1_w=rand(DIM, HIDDEN, scale=DIM ** -0.5), fc1_b=rand(HIDDEN),
        fc2_w=rand(HIDDEN, DIM, scale=HIDDEN ** -0.5),
        fc2_b=rand(DIM, scale=0.1))


def block(x, w, ops):
    """x + attention(ln1(x)), then that + mlp(ln2(that)); x is [B, T, D]."""
    b, t, d = x.shape
    dh = d // HEADS
    h = ops.layer_norm(x, w.ln1_w, w.ln1_b)
    qkv = ops.add(ops.matmul(h, w.qkv_w), w.qkv_b)              # [B, T, 3D]
    # [B, T, 3, H, Dh] -> three [B, H, T, Dh] views: no copies.
    q, k, v = qkv.view(b, t, 3, HEADS, dh).permute(2, 0, 3, 1, 4)
    scale = torch.tensor(dh ** -0.5)
    scores = ops.mul(ops.matmul(q, k.transpose(-2, -1)), scale)  # [B,H,T,T]
    attn = ops.matmul(ops.softmax(scores, -1), v)               # [B,H,T,Dh]
    attn = attn.transpose(1, 2).reshape(b, t, d)
    x = ops.add(x, ops.add(ops.matmul(attn, w.out_w), w.out_b))
    h = ops.layer_norm(x, w.ln2_w, w.ln2_b)
    h = ops.gelu(ops.add(ops.matmul(h, w.fc1_w), w.fc1_b))
    return ops.add(x, ops.add(ops.matmul(h, w.fc2_w), w.fc2_b))


def main():
    plugin = load_plugin()
    backplane.torch.register(plugin)
    weights = make_weights()
    x = torch.randn(BATCH, SEQ, DIM,
                    generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        got = block(x, weights, BACKPLANE_OPS)
        want = block(x, weights, TORCH_OPS)
    diff = (got - want).abs()
    bound = ATOL + RTOL * want.abs()
    print(f"plugin: {plugin.name} ({plugin.path})")
    print(f"output {tuple(got.shape)} {got.dtype}, max |torch| "
          f"{want.abs().max().item():.3f}")
    print(f"max abs difference: {diff.max().item():.3g}")
    print(f"max rel difference: {(diff / want.abs()).max().item():.3g}")
    print(f"tolerance: atol {ATOL:.3g} + rtol {RTOL:.3g} * |torch|")
    worst = (diff / bound).max().item()
    if worst > 1:
        print(f"FAIL: {worst:.2f} times the tolerance")
        return 1
    print(f"PASS: the largest difference is {worst:.2f} of the tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
