"""torch.distributed under backplane.torch.offload: two processes (gloo on
localhost) train a small transformer with DistributedDataParallel for
three steps, once under offload and once without; the parameters agree.
Each rank runs in a child process of this test."""

import os
import socket
import subprocess
import sys
import tempfile

import taplib as t

np, torch = t.require("numpy", "torch")
if not torch.distributed.is_available() or \
        not torch.distributed.is_gloo_available():
    print("1..0 # SKIP torch.distributed with gloo is not available")
    sys.exit(0)

RANK = r'''
import os, sys, warnings
import torch
import torch.distributed as dist
import backplane, backplane.torch as bt

rank, world, port, offload, out = (int(sys.argv[1]), int(sys.argv[2]),
                                   sys.argv[3], sys.argv[4] == "1",
                                   sys.argv[5])
backplane.load(os.environ["BP_TEST_CPU_PLUGIN"])
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
dist.init_process_group("gloo", rank=rank, world_size=world)
torch.manual_seed(0)  # the same initial weights on every rank
model = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                         batch_first=True)
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
g = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
for step in range(3):
    x = torch.randn(4, 6, 32, generator=g)
    y = torch.randn(4, 6, 32, generator=g)
    opt.zero_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if offload:
            with bt.offload():
                loss = torch.nn.functional.mse_loss(ddp(x), y)
                loss.backward()
        else:
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
    opt.step()
rep = bt.report()
on = sum(v["plugin_calls"] for v in rep.values())
torch.save({"params": [p.detach() for p in model.parameters()],
            "plugin_calls": on}, out)
dist.destroy_process_group()
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def train(offload, tmp):
    port = free_port()
    script = os.path.join(tmp, "rank.py")
    with open(script, "w") as f:
        f.write(RANK)
    outs = [os.path.join(tmp, f"r{r}-{offload}.pt") for r in range(2)]
    procs = [subprocess.Popen([sys.executable, script, str(r), "2", port,
                               "1" if offload else "0", outs[r]],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for r in range(2)]
    logs = [p.communicate(timeout=300)[0] for p in procs]
    if any(p.returncode for p in procs):
        return None, "\n".join(logs)
    return [torch.load(o) for o in outs], ""


with tempfile.TemporaryDirectory() as tmp:
    base, log = train(False, tmp)
    t.ok(base is not None, "DDP training of 2 ranks without offload", log)
    off, log = train(True, tmp)
    t.ok(off is not None, "DDP training of 2 ranks under offload", log)
    if base is not None and off is not None:
        same_ranks = all(torch.equal(a, b) for a, b in
                         zip(off[0]["params"], off[1]["params"]))
        t.ok(same_ranks, "the ranks end with equal parameters (DDP "
             "averaged their gradients)")
        worst = max((a - b).abs().max().item() for a, b in
                    zip(off[0]["params"], base[0]["params"]))
        t.ok(worst < 1e-5, "the parameters equal those of training without "
             "offload", f"largest difference {worst}")
        t.ok(all(r["plugin_calls"] > 50 for r in off),
             "each rank ran its ops on the plugin",
             [r["plugin_calls"] for r in off])
t.done()
