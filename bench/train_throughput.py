"""Training-step throughput and peak memory: ours vs torch.nn.Transformer vs a straightforward
implementation (manual attention, dense label-smoothing target), side by side, same batches.

`ours` is the training step as `dvc repro train` runs it (`train.precision: auto`: bf16
autocast on CUDA and on CPUs with native bf16 matmuls, else fp32); `ours_fp32` is the same
step in fp32. The peers run in fp32 on CPU (the seed-style step), and `straightforward_bf16`
shows what bf16 autocast alone gives the straightforward model. On CUDA every variant runs
in bf16 autocast.

Each variant runs in its own process (so peak memory is its own), on the same Multi30k
batches from data/tokens + data/vocab (run `dvc repro vocab` first), with the same model
size, the same Adam + Noam optimiser, and `--steps` timed updates after `--warmup` untimed.
The variants take turns, `--rounds` times, and each keeps its best round (a 2-core machine
swings by 15% from one round to the next).

    python bench/train_throughput.py [--steps 60 --rounds 3 --max-tokens 1024]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt.config.model import ModelConfig  # noqa: E402
from nmt.model.layers import sinusoidal_table
from nmt.model.transformer import build_model  # noqa: E402
from nmt.text.vocab import PAD_ID  # noqa: E402
from nmt.text.vocabularies import load_vocabularies  # noqa: E402
from nmt.train.batching import collate, load_pairs, make_batches  # noqa: E402
from nmt.train.loop import use_bf16  # noqa: E402
from nmt.train.loss import LabelSmoothingKL  # noqa: E402
from nmt.train.schedule import build_optimizer  # noqa: E402

VARIANTS = ("ours", "ours_fp32", "torch_nn_transformer", "straightforward", "straightforward_bf16")


class DenseLabelSmoothing(nn.Module):
    """The textbook construction: a full (tokens x vocab) smoothed target and nn.KLDivLoss."""

    def __init__(self, vocab_size: int, eps: float = 0.1) -> None:
        super().__init__()
        self.V, self.eps, self.kl = vocab_size, eps, nn.KLDivLoss(reduction="sum")

    def forward(self, logits, target):
        logp = torch.log_softmax(logits.reshape(-1, self.V), dim=-1)
        t = target.reshape(-1)
        dist = torch.full_like(logp, self.eps / (self.V - 2))
        dist.scatter_(1, t[:, None], 1.0 - self.eps)
        dist[:, PAD_ID] = 0
        dist[t == PAD_ID] = 0
        return self.kl(logp, dist), (t != PAD_ID).sum()


class ManualAttention(nn.Module):
    def __init__(self, d: int, h: int, p: float) -> None:
        super().__init__()
        self.h, self.dk = h, d // h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.drop = nn.Dropout(p)

    def forward(self, x, mem, mask):
        B = x.shape[0]
        q, k, v = (f(t).view(B, -1, self.h, self.dk).transpose(1, 2) for f, t in ((self.q, x), (self.k, mem), (self.v, mem)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        scores = scores.masked_fill(~mask, -1e9)
        y = self.drop(scores.softmax(-1)) @ v
        return self.o(y.transpose(1, 2).reshape(B, -1, self.h * self.dk))


class Embedded(nn.Module):
    """Scaled embeddings + sinusoidal positions, and the tied output layer, as in ours."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__()
        d, self.d = cfg.d_model, cfg.d_model
        self.se, self.te = nn.Embedding(vs, d), nn.Embedding(vt, d)
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, d))
        self.drop = nn.Dropout(cfg.dropout)
        self.gen = nn.Linear(d, vt, bias=False)
        self.gen.weight = self.te.weight

    def embed(self, table: nn.Embedding, ids):
        return self.drop(table(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]])


class StraightforwardTransformer(Embedded):
    """The Annotated-Transformer style: masked_fill + softmax attention, post-norm layers."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__(cfg, vs, vt)
        d = cfg.d_model

        def block(n_attn):
            return nn.ModuleDict({"attn": nn.ModuleList(ManualAttention(d, cfg.n_heads, cfg.dropout) for _ in range(n_attn)),
                                  "norms": nn.ModuleList(nn.LayerNorm(d) for _ in range(n_attn + 1)),
                                  "ff": nn.Sequential(nn.Linear(d, cfg.d_ff), nn.ReLU(), nn.Linear(cfg.d_ff, d))})
        self.enc = nn.ModuleList(block(1) for _ in range(cfg.n_layers))
        self.dec = nn.ModuleList(block(2) for _ in range(cfg.n_layers))

    def forward(self, src, tgt):
        smask = (src != PAD_ID)[:, None, None, :]
        T = tgt.shape[1]
        tmask = (tgt != PAD_ID)[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()
        x = self.embed(self.se, src)
        for b in self.enc:
            x = b["norms"][0](x + self.drop(b["attn"][0](x, x, smask)))
            x = b["norms"][1](x + self.drop(b["ff"](x)))
        y = self.embed(self.te, tgt)
        for b in self.dec:
            y = b["norms"][0](y + self.drop(b["attn"][0](y, y, tmask)))
            y = b["norms"][1](y + self.drop(b["attn"][1](y, x, smask)))
            y = b["norms"][2](y + self.drop(b["ff"](y)))
        return self.gen(y)


class TorchTransformer(Embedded):
    """torch.nn.Transformer of the same size, with the same embeddings and tied output."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__(cfg, vs, vt)
        self.tf = nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.n_layers, cfg.d_ff, cfg.dropout,
                                 batch_first=True)

    def forward(self, src, tgt):
        T = tgt.shape[1]
        x, y = self.embed(self.se, src), self.embed(self.te, tgt)
        causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.bool)
        out = self.tf(x, y, tgt_mask=causal, tgt_is_causal=True, src_key_padding_mask=src == PAD_ID,
                      memory_key_padding_mask=src == PAD_ID, tgt_key_padding_mask=tgt == PAD_ID)
        return self.gen(out)


def run_variant(name: str, args: argparse.Namespace) -> dict:
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocabs = load_vocabularies(args.vocab)
    pairs = load_pairs(args.tokens, "train", vocabs, 128)
    batches = make_batches(pairs, args.max_tokens, seed=0, epoch=0)[: args.warmup + args.steps]
    cfg = ModelConfig(n_layers=args.layers, d_model=args.d_model, n_heads=args.heads, d_ff=args.d_ff)
    vs, vt = len(vocabs.src), len(vocabs.tgt)
    bf16 = device.type == "cuda" or name == "straightforward_bf16" or (name == "ours" and use_bf16("auto", device))
    if name.startswith("ours"):
        model, loss = build_model(cfg, vocabs.src, vocabs.tgt), LabelSmoothingKL(vt)
    elif name == "torch_nn_transformer":
        model, loss = TorchTransformer(cfg, vs, vt), LabelSmoothingKL(vt)
    else:
        model, loss = StraightforwardTransformer(cfg, vs, vt), DenseLabelSmoothing(vt)
    model.to(device).train()
    opt, sched = build_optimizer(model, cfg.d_model, 4000, 1.0)
    tokens, elapsed = 0, 0.0
    for i, idx in enumerate(batches):
        b = collate(pairs, idx).to(device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            if name.startswith("ours"):  # the training step of nmt/train/loop.py: padding never reaches the output layer
                keep = b.tgt_out != PAD_ID
                logits, target = model(b.src, b.tgt_in, keep), b.tgt_out[keep]
            else:
                logits, target = model(b.src, b.tgt_in), b.tgt_out
        total, n = loss(logits, target)
        (total / n).backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i >= args.warmup:
            elapsed += time.perf_counter() - start
            tokens += int(n)
    peak = (torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {"variant": name, "tokens_per_s": tokens / elapsed, "peak_mib": peak, "device": str(device),
            "precision": "bf16 autocast" if bf16 else "fp32"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60, help="timed updates per round")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first")
    p.add_argument("--rounds", type=int, default=3, help="turns per variant; each keeps its best")
    p.add_argument("--max-tokens", type=int, default=1024, help="tokens per batch (params.yaml: train.max_tokens)")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--vocab", type=Path, default=ROOT / "data/vocab")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens")
    p.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # child process mode
    args = p.parse_args()
    if args.variant:
        print(json.dumps(run_variant(args.variant, args)))
        return
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name in VARIANTS:
            out = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--variant", name],
                                 check=True, capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            if name not in best or row["tokens_per_s"] > best[name]["tokens_per_s"]:
                best[name] = row
    rows = [best[name] for name in VARIANTS]
    ours = rows[0]
    print(f"model d={args.d_model} N={args.layers} h={args.heads} d_ff={args.d_ff}, {args.steps} updates of "
          f"<= {args.max_tokens} tokens, best of {args.rounds} rounds, device {ours['device']}")
    print(f"{'variant':<24}{'precision':<15}{'target tok/s':>14}{'peak MiB':>10}{'ours is':>12}")
    for r in rows:
        print(f"{r['variant']:<24}{r['precision']:<15}{r['tokens_per_s']:>14.0f}{r['peak_mib']:>10.0f}"
              f"{ours['tokens_per_s'] / r['tokens_per_s']:>11.2f}x")
    print("peak memory: CUDA max_memory_allocated, or the process's max RSS on CPU")


if __name__ == "__main__":
    main()
