"""Training-step throughput and peak memory: ours vs torch.nn.Transformer vs a straightforward
implementation (manual attention, dense label-smoothing target), like for like.

Three models, each in fp32 and in bf16 autocast (`--precisions`):
- `ours`: the training step of nmt/train/loop.py (padding never reaches the output layer);
- `straightforward`: The Annotated Transformer's way: masked_fill + softmax attention with
  separate q/k/v projections, logits at every position, a dense (tokens x vocab) smoothed target
  and nn.KLDivLoss;
- `torch_nn_transformer`: torch.nn.Transformer with our embeddings, tied output and loss.
All three share the params.yaml `model` section: the same sizes, the same dropout on sub-layer
outputs and embeddings, and the same dropout on attention weights (`attn_dropout`, 0 in
params.yaml), post-norm or pre-norm as ours, and the same weights (the peers get a copy of ours).

Before anything is timed, an agreement check proves the three compute the same step: our
weights copied into each peer, fp32, dropout off, one batch; the loss per target token and the
norm of the gradient over all parameters must be within `TOLERANCE` (relative) of ours, or the
bench stops with a message naming the peer.

Ratios compare ours with a peer in the same precision ("like for like"), and, separately, the
"as shipped" row: ours in the precision `train.precision` picks on this device (auto: bf16 on
CUDA and on CPUs with native bf16 matmuls) against each peer in fp32, the peers' own default.

Each variant runs in its own process (so peak memory is its own), on the same Multi30k batches
from data/tokens + data/vocab (run `dvc repro vocab` first), with the same Adam + Noam optimiser,
`--steps` timed updates after `--warmup` untimed ones. The variants take turns, `--rounds` times,
and each keeps its best round (a 2-core machine swings by 15% from one round to the next).

    python -m bench.train_throughput [--steps 60 --rounds 3]

Results (`bench/results/train_throughput.json`, key `results`):
- `device`, `threads`: where the steps ran (torch device, torch intra-op threads);
- `model`: the ModelConfig fields used (n_layers, d_model, n_heads, d_ff, dropout, attn_dropout,
  norm_first, tie_output, tie_source, max_len); `vocab`: {src, tgt} sizes;
- `steps`, `warmup`, `rounds`, `max_tokens`: the measurement's settings;
- `train_precision`: params.yaml's train.precision; `shipped_precision`: what it resolves to here;
- `agreement`: {`tolerance`, `target_tokens` (of the checked batch), `ours`: {loss_per_token,
  grad_norm}, and per peer {loss_per_token, grad_norm, loss_per_token_rel_diff, grad_norm_rel_diff}};
- `variants`: per variant name (`<model>_<precision>`): {model, precision, tokens_per_s (best
  round; target tokens per second), tokens_per_s_rounds (every round), peak_mib (of the best
  round: CUDA max_memory_allocated, else the process's max RSS)};
- `comparisons`: a list of {kind ("like for like" | "as shipped"), ours, peer (variant names),
  ours_tokens_per_s, peer_tokens_per_s, ratio (ours / peer: "ours is ratio x faster")}.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from torch import Tensor, nn

from bench.common.peer_models import MODELS, PEERS, build
from bench.common.record import RESULTS, write_result
from nmt.config.loader import load_sections
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.model.transformer import Transformer, build_model
from nmt.text.vocab import PAD_ID
from nmt.text.vocabularies import Vocabularies, load_vocabularies
from nmt.train.batching import Batch, Pair, collate, load_pairs, make_batches
from nmt.train.loop import use_bf16
from nmt.train.schedule import build_optimizer

ROOT = Path(__file__).resolve().parents[1]
PRECISIONS = ("fp32", "bf16")
TOLERANCE = 1e-4  # relative difference allowed in the agreement check (fp32 summation order: ~1e-6)


@dataclass(frozen=True)
class BenchParams:
    """The params.yaml sections this bench reads."""

    model: ModelConfig
    train: TrainConfig


# ----------------------------------------------------------------------------------------------
# one training step, and the check that all three compute the same one


def loss_of(model: nn.Module, criterion: nn.Module, b: Batch) -> tuple[Tensor, Tensor]:
    """(summed loss, target tokens) of one batch."""
    if isinstance(model, Transformer):  # the step of nmt/train/loop.py: padding never reaches the output layer
        keep = b.tgt_out != PAD_ID
        return criterion(model(b.src, b.tgt_in, keep), b.tgt_out[keep])
    return criterion(model(b.src, b.tgt_in), b.tgt_out)


def step_figures(model: nn.Module, criterion: nn.Module, b: Batch) -> dict[str, float]:
    """Loss per target token and the gradient norm over all parameters: fp32, dropout off."""
    model.float().eval()
    model.zero_grad(set_to_none=True)
    total, n = loss_of(model, criterion, b)
    (total / n).backward()
    norm = torch.stack([p.grad.double().pow(2).sum() for p in model.parameters() if p.grad is not None]).sum().sqrt()
    model.zero_grad(set_to_none=True)
    return {"loss_per_token": float(total.detach()) / int(n), "grad_norm": float(norm)}


def agreement(ours: Transformer, b: Batch, smoothing: float) -> dict[str, dict[str, float]]:
    """Step figures of ours and of each peer holding a copy of ours' weights, with each peer's
    relative difference from ours (`<figure>_rel_diff`)."""
    figures = {name: step_figures(*build(name, ours, smoothing), b) for name in MODELS}
    ref = figures["ours"]
    for name in PEERS:
        for key in ("loss_per_token", "grad_norm"):
            figures[name][f"{key}_rel_diff"] = abs(figures[name][key] - ref[key]) / max(abs(ref[key]), 1e-12)
    return figures


def disagreements(figures: dict[str, dict[str, float]], tolerance: float = TOLERANCE) -> list[str]:
    """One message per peer figure that is off by more than `tolerance` (relative)."""
    ref = figures["ours"]
    return [f"{name}: {key} {f[key]:.6g} vs ours {ref[key]:.6g} (relative difference {f[key + '_rel_diff']:.2e} "
            f"> {tolerance:g})" for name, f in figures.items() if name != "ours"
            for key in ("loss_per_token", "grad_norm") if f[key + "_rel_diff"] > tolerance]


# ----------------------------------------------------------------------------------------------
# the measurement


def setup(args: argparse.Namespace) -> tuple[ModelConfig, TrainConfig, Vocabularies, list[Pair], list[list[int]]]:
    """Config (params.yaml with the command line's overrides), vocabularies, pairs and batches."""
    params = load_sections(args.params, BenchParams)
    sizes = {"n_layers": args.layers, "d_model": args.d_model, "n_heads": args.heads, "d_ff": args.d_ff}
    cfg = replace(params.model, **{k: v for k, v in sizes.items() if v is not None})
    train = params.train
    vocabs = load_vocabularies(args.vocab)
    pairs = load_pairs(args.tokens, "train", vocabs, train.max_len)
    max_tokens = args.max_tokens or train.max_tokens
    batches = make_batches(pairs, max_tokens, seed=0, epoch=0)[: args.warmup + args.steps]
    return cfg, train, vocabs, pairs, batches


def run_variant(model_name: str, precision: str, args: argparse.Namespace) -> dict:
    """Child process: `--warmup` + `--steps` updates of one variant; tokens/s and peak memory."""
    cfg, train, vocabs, pairs, batches = setup(args)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    ours = build_model(cfg, vocabs.src, vocabs.tgt)
    model, criterion = build(model_name, ours, train.label_smoothing)
    del ours  # a peer holds a copy of its weights; only the timed model stays in memory
    model.to(device).train()
    opt, sched = build_optimizer(model, cfg.d_model, train.warmup, train.lr_factor)
    bf16 = precision == "bf16"
    tokens, elapsed = 0, 0.0
    for i, idx in enumerate(batches):
        b = collate(pairs, idx).to(device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):  # as nmt/train/loop.py's update()
            total, n = loss_of(model, criterion, b)
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
    return {"model": model_name, "precision": precision, "tokens_per_s": tokens / elapsed, "peak_mib": peak,
            "device": str(device), "threads": torch.get_num_threads()}


def check_agreement(cfg: ModelConfig, train: TrainConfig, vocabs: Vocabularies, pairs: list[Pair],
                    batches: list[list[int]]) -> dict:
    """The agreement check on the first bench batch; exits non-zero if a peer disagrees."""
    torch.manual_seed(0)
    ours = build_model(cfg, vocabs.src, vocabs.tgt)
    b = collate(pairs, batches[0])
    figures = agreement(ours, b, train.label_smoothing)
    wrong = disagreements(figures)
    if wrong:
        raise SystemExit("agreement check failed: the peers do not compute our training step "
                         "(fp32, dropout off, same weights, same batch):\n  " + "\n  ".join(wrong))
    return {"tolerance": TOLERANCE, "target_tokens": b.n_tgt_tokens, **figures}


def comparisons(variants: dict[str, dict], shipped: str) -> list[dict]:
    rows = [("like for like", f"ours_{p}", f"{peer}_{p}") for p in PRECISIONS for peer in PEERS]
    rows += [("as shipped", f"ours_{shipped}", f"{peer}_fp32") for peer in PEERS]
    return [{"kind": kind, "ours": o, "peer": p, "ours_tokens_per_s": variants[o]["tokens_per_s"],
             "peer_tokens_per_s": variants[p]["tokens_per_s"],
             "ratio": variants[o]["tokens_per_s"] / variants[p]["tokens_per_s"]}
            for kind, o, p in rows if o in variants and p in variants]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60, help="timed updates per round (default: 60)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (default: 3)")
    p.add_argument("--rounds", type=int, default=3, help="turns per variant; each keeps its best (default: 3)")
    p.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS),
                   help="precisions to time each model in (default: fp32 bf16)")
    p.add_argument("--max-tokens", type=int, help="tokens per batch (default: params.yaml train.max_tokens)")
    p.add_argument("--d-model", type=int, help="default: params.yaml model.d_model")
    p.add_argument("--layers", type=int, help="default: params.yaml model.n_layers")
    p.add_argument("--heads", type=int, help="default: params.yaml model.n_heads")
    p.add_argument("--d-ff", type=int, help="default: params.yaml model.d_ff")
    p.add_argument("--params", type=Path, default=ROOT / "params.yaml",
                   help="the model and train sections (dropout, attn_dropout, norm_first, ...) come from here")
    p.add_argument("--vocab", type=Path, default=ROOT / "data/vocab", help="vocab stage output (default: data/vocab)")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens",
                   help="tokenize stage output (default: data/tokens)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"folder for train_throughput.json (default: {RESULTS})")
    p.add_argument("--variant", help=argparse.SUPPRESS)  # child process mode: <model>_<precision>
    args = p.parse_args()
    if args.variant:
        model_name, _, precision = args.variant.rpartition("_")
        print(json.dumps(run_variant(model_name, precision, args)))
        return

    cfg, train, vocabs, pairs, batches = setup(args)
    agree = check_agreement(cfg, train, vocabs, pairs, batches)
    del pairs, batches
    names = [f"{m}_{prec}" for prec in args.precisions for m in MODELS]
    rounds: dict[str, list[dict]] = {name: [] for name in names}
    for _ in range(args.rounds):
        for name in names:
            out = subprocess.run([sys.executable, "-m", "bench.train_throughput", *sys.argv[1:], "--variant", name],
                                 check=True, capture_output=True, text=True).stdout
            rounds[name].append(json.loads(out.strip().splitlines()[-1]))
    variants = {}
    for name, rows in rounds.items():
        best = max(rows, key=lambda r: r["tokens_per_s"])
        variants[name] = {"model": best["model"], "precision": best["precision"], "tokens_per_s": best["tokens_per_s"],
                          "tokens_per_s_rounds": [r["tokens_per_s"] for r in rows], "peak_mib": best["peak_mib"]}
    first = rounds[names[0]][0]
    device = torch.device(first["device"])
    shipped = "bf16" if use_bf16(train.precision, device) else "fp32"
    compared = comparisons(variants, shipped)
    max_tokens = args.max_tokens or train.max_tokens

    print(f"model d={cfg.d_model} N={cfg.n_layers} h={cfg.n_heads} d_ff={cfg.d_ff} dropout={cfg.dropout} "
          f"attn_dropout={cfg.attn_dropout} {'pre' if cfg.norm_first else 'post'}-norm, {args.steps} updates of "
          f"<= {max_tokens} tokens, best of {args.rounds} rounds, device {device}, {first['threads']} threads")
    print(f"agreement (fp32, dropout off, same weights, one batch of {agree['target_tokens']} target tokens): "
          f"ours loss/token {agree['ours']['loss_per_token']:.6f}, grad norm {agree['ours']['grad_norm']:.6f}")
    for peer in PEERS:
        print(f"  {peer:<22} relative difference: loss {agree[peer]['loss_per_token_rel_diff']:.1e}, "
              f"grad norm {agree[peer]['grad_norm_rel_diff']:.1e}  (<= {TOLERANCE:g})")
    print(f"\n{'variant':<28}{'target tok/s':>14}{'peak MiB':>10}   rounds")
    for name, v in variants.items():
        print(f"{name:<28}{v['tokens_per_s']:>14.0f}{v['peak_mib']:>10.0f}   "
              + " ".join(f"{t:.0f}" for t in v["tokens_per_s_rounds"]))
    print(f"\n{'comparison':<15}{'ours':<12}{'peer':<28}{'ours is':>9}")
    for c in compared:
        print(f"{c['kind']:<15}{c['ours']:<12}{c['peer']:<28}{c['ratio']:>8.2f}x")
    print(f"as shipped: train.precision {train.precision} -> {shipped} on {device}; peers in fp32, their default")
    print("peak memory: CUDA max_memory_allocated, or the process's max RSS on CPU")

    results = {"device": str(device), "threads": first["threads"],
               "model": {k: v for k, v in asdict(cfg).items()},
               "vocab": {"src": len(vocabs.src), "tgt": len(vocabs.tgt)},
               "steps": args.steps, "warmup": args.warmup, "rounds": args.rounds, "max_tokens": max_tokens,
               "train_precision": train.precision, "shipped_precision": shipped,
               "agreement": agree, "variants": variants, "comparisons": compared}
    write_result("train_throughput", results, args.rounds, args.out)


if __name__ == "__main__":
    main()
