"""bench/offload.py: unmodified models under backplane.torch.offload against
torch's own kernels, in the same run.

    python3 bench/offload.py PLUGIN.so [THREADS]

The models of tests/python/models.py and the GPT-2-shaped model of
examples/gpt2-c (one forward of 64 tokens), float32, at batch sizes where
compute dominates; both sides on the same number of threads (torch's
set_num_threads, BP_CPU_THREADS for the plugin).  Each figure is the
median of 5 forwards after a warm-up, the two sides taking turns.  Prints
per model: torch's ms, offload's ms, their ratio (target <= 1.25), the
share of offload's op time spent on the plugin, and the fallbacks.
"""

import os
import statistics
import sys
import time
import warnings

THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
os.environ["BP_CPU_THREADS"] = str(THREADS)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2-c"))

import torch  # noqa: E402

import backplane  # noqa: E402
import backplane.torch as bt  # noqa: E402
import make_weights as gpt2  # noqa: E402
import models  # noqa: E402

torch.set_num_threads(THREADS)
backplane.load(sys.argv[1])
torch.manual_seed(0)


class GPT2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = gpt2.weights(0)

    def forward(self, tokens):
        return gpt2.step(self.w, tokens, 0, [None] * gpt2.LAYERS)


MODELS = [
    ("GPT-2 (2 layers, 64 tokens)", GPT2(),
     [torch.randint(0, gpt2.VOCAB, (64,))]),
    ("Llama-style layer [8, 128, 256]", models.LlamaLayer(),
     [torch.randn(8, 128, 256)]),
    ("BERT layer [8, 128, 256]", models.BertLayer(),
     [torch.randn(8, 128, 256), torch.ones(8, 128)]),
    ("ViT block [16, 3, 64, 64]", models.ViTBlock(),
     [torch.randn(16, 3, 64, 64)]),
    ("ResNet-18 [8, 3, 224, 224]",
     models.randomize_norms(models.ResNet18()),
     [torch.randn(8, 3, 224, 224)]),
]


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    print(f"offload against torch {torch.__version__}, float32, {THREADS} "
          "threads each side, median of 5 forwards (ms)\n")
    print("| model | torch | offload | ratio | on the plugin | fallbacks |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    mode = bt.offload()
    for name, model, inputs in MODELS:
        model.eval()

        def plain():
            return model(*inputs)

        def offloaded():
            with mode:
                return model(*inputs)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain()
            offloaded()
            bt.report(reset=True)
            ts, to = [], []
            for _ in range(5):
                ts.append(timed(plain))
                to.append(timed(offloaded))
        rep = bt.report(reset=True)
        on = sum(v["plugin_ms"] for v in rep.values())
        off = sum(v["fallback_ms"] for v in rep.values())
        fb = sorted(k for k, v in rep.items() if v["fallback_calls"])
        t, o = statistics.median(ts) * 1e3, statistics.median(to) * 1e3
        print(f"| {name} | {t:.1f} | {o:.1f} | {o / t:.2f} | "
              f"{100 * on / max(on + off, 1e-12):.1f}% | "
              f"{', '.join(fb) or 'none'} |")


if __name__ == "__main__":
    main()
