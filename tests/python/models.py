"""Small models in plain torch, with random weights, for the offload tests
and bench/: a Llama-style decoder layer (RMSNorm, rotary embeddings,
SwiGLU, grouped-query attention, a KV cache), a BERT encoder layer with an
attention mask, ResNet-18 and a ViT block.  Nothing here knows Backplane."""

import math

import torch

F = torch.nn.functional


# ---- Llama-style decoder layer ---------------------------------------------
class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * r * self.weight


def rotary(x, pos, base=10000.0):
    """Rotary embeddings of x [..., T, D] at positions pos [T]."""
    d = x.shape[-1]
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = pos[:, None].float() * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos],
                       -1).flatten(-2)


class LlamaLayer(torch.nn.Module):
    def __init__(self, d=256, heads=8, kv_heads=2, hidden=688):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.gate = torch.nn.Linear(d, hidden, bias=False)
        self.up = torch.nn.Linear(d, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, d, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)

    def forward(self, x, cache=None):
        """x [B, T, d]; cache (k, v) of earlier positions, or None.
        Returns the output and the grown cache."""
        b, t, _ = x.shape
        start = 0 if cache is None else cache[0].shape[2]
        pos = torch.arange(start, start + t)
        a = self.n1(x)
        q = self.q(a).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k(a).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v(a).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rotary(q, pos), rotary(k, pos)
        if cache is not None:
            k = torch.cat([cache[0], k], 2)
            v = torch.cat([cache[1], v], 2)
        cache = (k, v)
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, 1)
        v = v.repeat_interleave(rep, 1)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        total = k.shape[2]
        causal = torch.ones(t, total, dtype=torch.bool).tril(total - t)
        s = s.masked_fill(~causal, float("-inf"))
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o(o)
        m = self.n2(x)
        return x + self.down(F.silu(self.gate(m)) * self.up(m)), cache


# ---- BERT encoder layer ----------------------------------------------------
class BertLayer(torch.nn.Module):
    def __init__(self, d=256, heads=4, hidden=1024):
        super().__init__()
        self.h = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.o = torch.nn.Linear(d, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, hidden)
        self.fc2 = torch.nn.Linear(hidden, d)
        self.ln2 = torch.nn.LayerNorm(d)

    def forward(self, x, attention_mask):
        """x [B, T, d]; attention_mask [B, T], 1 for tokens, 0 for padding."""
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, -1)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2)
                   for z in (q, k, v))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.h) + bias
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.o(o))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


# ---- ResNet-18 -------------------------------------------------------------
class Block(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(cout)
        self.c2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(torch.nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn = torch.nn.BatchNorm2d(64)
        chans, blocks, cin = (64, 128, 256, 512), [], 64
        for i, c in enumerate(chans):
            blocks += [Block(cin, c, 1 if i == 0 else 2), Block(c, c, 1)]
            cin = c
        self.blocks = torch.nn.Sequential(*blocks)
        self.fc = torch.nn.Linear(512, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.stem(x))), 3, 2, 1)
        x = self.blocks(x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def randomize_norms(model):
    """Running statistics that are not the identity, so that batch norm's
    arithmetic is tested."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model


# ---- ViT block -------------------------------------------------------------
class ViTBlock(torch.nn.Module):
    def __init__(self, d=192, heads=3, patch=16, image=64):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, d, patch, patch)
        n = (image // patch) ** 2
        self.cls = torch.nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = torch.nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        self.ln1 = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d),
                                       torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        a = self.ln1(x)
        x = x + self.attn(a, a, a, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))
