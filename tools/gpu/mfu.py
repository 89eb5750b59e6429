"""Training throughput and model FLOPs utilisation of the base model on a GPU.

On the device: the bf16 matrix-product peak measured first (square bf16 matmuls, the best of
`--peak-repeats`), then our training step (nmt/train/loop.py's: bf16 autocast, fused Adam, label
smoothing, padding never reaching the output layer) on the paper's base model (6 layers,
d_model 512, 8 heads, d_ff 2048) in bf16, eager and under `torch.compile`, on token batches of
`--max-tokens` target tokens (sentences of `--length` tokens both sides, random ids of a
`--vocab-size` vocabulary: the shape of a batch, not its data, sets the speed); then the largest
token batch that fits (doubling until the device runs out of memory).

FLOPs are counted from the shapes, the matrix products only, dense (the causal half of the
decoder's self-attention counted too, as PaLM's appendix B counts it): per sentence of S source
and T target tokens, d = d_model, f = d_ff, L layers, V target vocabulary, a forward pass is
  encoder  L (8 S d^2 + 4 S^2 d + 4 S d f)
  decoder  L (8 T d^2 + 4 T^2 d + 4 T d^2 + 4 S d^2 + 4 T S d + 4 T d f)
  output   2 T d V
and a training step three forward passes (the backward pass does twice the forward's products).
MFU = counted FLOPs per second / the measured peak.

    python -m tools.gpu.mfu [--max-tokens 25000 --length 32 --steps 30] [--smoke] [--out bench/results]

`--smoke` (any device, the CPU included): a tiny model and a few steps, the bench's steps, not
its figures. Writes `<out>/gpu_mfu.json` (`--out`; default bench/results, none for --smoke).
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import torch

from bench.common.record import RESULTS, write_result
from nmt.config.model import ModelConfig
from nmt.model.transformer import Transformer
from nmt.train.loop import all_positions
from nmt.train.loss import LabelSmoothingKL
from nmt.train.schedule import build_optimizer

ROOT = Path(__file__).resolve().parents[2]
BASE = ModelConfig(n_layers=6, d_model=512, n_heads=8, d_ff=2048, dropout=0.1, max_len=256)
TINY = ModelConfig(n_layers=1, d_model=32, n_heads=2, d_ff=64, dropout=0.1, max_len=64)


def step_flops(cfg: ModelConfig, sentences: int, s: int, t: int, vocab: int) -> float:
    """Matrix-product FLOPs of one training step (module docstring)."""
    d, f, L = cfg.d_model, cfg.d_ff, cfg.n_layers
    enc = L * (8 * s * d * d + 4 * s * s * d + 4 * s * d * f)
    dec = L * (8 * t * d * d + 4 * t * t * d + 4 * t * d * d + 4 * s * d * d + 4 * t * s * d + 4 * t * d * f)
    return 3.0 * sentences * (enc + dec + 2 * t * d * vocab)


def matmul_peak(device: torch.device, n: int, repeats: int) -> float:
    """Best bf16 (fp32 on a CPU) n x n matrix-product rate, FLOP/s."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        for _ in range(10):
            a @ b
        _sync(device)
        best = min(best, (time.perf_counter() - start) / 10)
    return 2.0 * n**3 / best


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def batch(sentences: int, length: int, vocab: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(4, vocab, (sentences, length), generator=gen)
    tgt = torch.randint(4, vocab, (sentences, length + 1), generator=gen)
    tgt[:, 0] = 2  # <s>
    return src.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device)


def throughput(cfg: ModelConfig, device: torch.device, sentences: int, length: int, vocab: int, steps: int,
               warmup: int, compiled: bool, loss_chunk: int = 0, profiler: Any = None) -> dict[str, Any]:
    """Target tokens/s of our training step (bf16 autocast on CUDA) over `steps` timed updates; with
    `loss_chunk`, output layer and loss together that many positions at a time (`train.loss_chunk`);
    `profiler` (a torch.profiler context) is entered for the timed updates only."""
    torch.manual_seed(0)
    model = Transformer(cfg, vocab, vocab).to(device).train()
    criterion = LabelSmoothingKL(vocab, 0.1)
    optimizer, scheduler = build_optimizer(model, cfg.d_model, warmup=4000, factor=1.0)
    net = torch.compile(model) if compiled else model
    src, tgt_in, tgt_out = batch(sentences, length, vocab, device)
    keep = torch.ones_like(tgt_out, dtype=torch.bool)
    every = all_positions("auto", device)  # as the training loop: every position on CUDA (no wait on the device)
    elapsed = 0.0
    with ExitStack() as stack:
        for i in range(warmup + steps):
            if i == warmup and profiler is not None:
                stack.enter_context(profiler)
            _sync(device)
            start = time.perf_counter()
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                if loss_chunk:
                    total, n = criterion.projected(net(src, tgt_in, None if every else keep, project=False),
                                                   model.generator.weight, tgt_out if every else tgt_out[keep],
                                                   loss_chunk)
                elif every:
                    total, n = criterion.masked(net(src, tgt_in), tgt_out)
                else:
                    total, n = criterion(net(src, tgt_in, keep), tgt_out[keep])
                (total / n).backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            _sync(device)
            if i >= warmup:
                elapsed += time.perf_counter() - start
    tokens = steps * sentences * length
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else None
    return {"compile": compiled, "loss_chunk": loss_chunk, "tokens_per_s": tokens / elapsed, "seconds": elapsed,
            "peak_mib": peak, "flops_per_s": steps * step_flops(cfg, sentences, length, length, vocab) / elapsed}


def profiled_step(cfg: ModelConfig, device: torch.device, sentences: int, length: int, vocab: int,
                  steps: int, top: int = 15) -> list[dict[str, Any]]:
    """torch.profiler over `steps` eager updates (after two unprofiled; building the model and its batch
    outside it): the top operators by device time (CPU time without a GPU), each with its share."""
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    prof = profile(activities=activities)
    throughput(cfg, device, sentences, length, vocab, steps=steps, warmup=2, compiled=False, profiler=prof)
    key = "self_device_time_total" if cuda else "self_cpu_time_total"
    events = sorted((e for e in prof.key_averages() if getattr(e, key, 0) > 0), key=lambda e: -getattr(e, key))
    total = sum(getattr(e, key) for e in events) or 1.0
    return [{"name": e.key, "calls": e.count, "self_ms": getattr(e, key) / 1e3, "share": getattr(e, key) / total}
            for e in events[:top]]


def largest_batch(cfg: ModelConfig, device: torch.device, length: int, vocab: int, start: int, limit: int) -> int:
    """The largest target-token batch (doubling from `start`, at most `limit`) whose step fits."""
    fits, tokens = 0, start
    while tokens <= limit:
        try:
            throughput(cfg, device, max(1, tokens // length), length, vocab, steps=1, warmup=0, compiled=False)
        except torch.OutOfMemoryError:
            break
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
        fits, tokens = tokens, tokens * 2
    return fits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-tokens", type=int, default=25000, help="target tokens per batch (paper: 25000 per GPU)")
    p.add_argument("--length", type=int, default=32, help="tokens per sentence, both sides (default 32)")
    p.add_argument("--vocab-size", type=int, default=8000, help="joint vocabulary size (default 8000)")
    p.add_argument("--steps", type=int, default=30, help="timed updates per variant (default 30)")
    p.add_argument("--warmup", type=int, default=10, help="untimed updates first (compilation among them)")
    p.add_argument("--peak-size", type=int, default=8192, help="matrix size of the peak measurement")
    p.add_argument("--peak-repeats", type=int, default=20)
    p.add_argument("--largest-limit", type=int, default=1_600_000, help="stop doubling the batch here (0: skip)")
    p.add_argument("--sweep", type=int, nargs="*", default=[50_000, 100_000],
                   help="more target-token batch sizes timed eager (--steps / 3 updates each)")
    p.add_argument("--loss-chunk", type=int, default=8192,
                   help="also time output layer and loss together this many positions at a time (0: skip)")
    p.add_argument("--profile-steps", type=int, default=5, help="eager updates profiled (0: no profile)")
    p.add_argument("--smoke", action="store_true", help="a tiny model, a few steps, any device")
    p.add_argument("--out", type=Path, default=None, help="write <out>/gpu_mfu.json (default: bench/results)")
    args = p.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfg = BASE
    if args.smoke:
        cfg, args.max_tokens, args.length, args.vocab_size = TINY, 256, 8, 50
        args.steps, args.warmup, args.peak_size, args.peak_repeats, args.largest_limit = 2, 1, 256, 2, 512
        args.sweep, args.profile_steps, args.loss_chunk = [512], 1, 64
    elif device.type != "cuda":
        raise SystemExit("no CUDA device here: run this on a lent GPU, or --smoke to try its steps")
    peak = matmul_peak(device, args.peak_size, args.peak_repeats)
    sentences = max(1, args.max_tokens // args.length)
    print(f"{torch.cuda.get_device_name() if device.type == 'cuda' else 'CPU'}: matmul peak {peak / 1e12:.1f} "
          f"TFLOP/s; {cfg.n_layers} x {cfg.d_model} model, {sentences} sentences x {args.length} tokens", flush=True)
    variants = []
    for compiled in (False, True):
        for chunk in (0, args.loss_chunk) if args.loss_chunk else (0,):
            if compiled and args.smoke:
                continue  # compiling a model on the CPU takes minutes: the GPU run measures it
            v = throughput(cfg, device, sentences, args.length, args.vocab_size, args.steps, args.warmup, compiled,
                           loss_chunk=chunk)
            v["mfu"] = v["flops_per_s"] / peak
            print(f"compile={compiled} loss_chunk={chunk}: {v['tokens_per_s']:.0f} target tokens/s, "
                  f"MFU {v['mfu']:.1%}, peak {v['peak_mib'] or 0:.0f} MiB", flush=True)
            variants.append(v)
    sweep = []
    for tokens in args.sweep:  # does a bigger batch fill the chip? (eager: no compilation per shape)
        v = throughput(cfg, device, max(1, tokens // args.length), args.length, args.vocab_size,
                       max(1, args.steps // 3), min(args.warmup, 3), False)
        v.update(target_tokens=tokens, mfu=v["flops_per_s"] / peak)
        print(f"eager, {tokens} target tokens: {v['tokens_per_s']:.0f} tokens/s, MFU {v['mfu']:.1%}", flush=True)
        sweep.append(v)
    top_ops = profiled_step(cfg, device, sentences, args.length, args.vocab_size, args.profile_steps) \
        if args.profile_steps else []
    for row in top_ops[:8]:
        print(f"  {row['share']:6.1%} {row['self_ms']:9.1f} ms  {row['name'][:70]}", flush=True)
    largest = largest_batch(cfg, device, args.length, args.vocab_size, args.max_tokens, args.largest_limit) \
        if args.largest_limit else None
    if largest is not None:
        print(f"largest target-token batch that fits (doubling from {args.max_tokens}): {largest}", flush=True)
    results = {"device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
               "torch": torch.__version__, "model": {k: getattr(cfg, k) for k in ("n_layers", "d_model", "n_heads",
                                                                                   "d_ff")},
               "sentences": sentences, "length": args.length, "vocab_size": args.vocab_size, "steps": args.steps,
               "peak_flops_per_s": peak, "peak_matrix": args.peak_size, "variants": variants, "sweep": sweep,
               "profile_top": top_ops, "profile_steps": args.profile_steps,
               "largest_batch_tokens": largest, "smoke": args.smoke,
               "criteria": {"mfu_at_least_0.3": max(v["mfu"] for v in variants + sweep) >= 0.3}}
    out = args.out if args.out is not None else (None if args.smoke else RESULTS)
    if out is not None:
        write_result("gpu_mfu", results, repeats=1, out_dir=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
