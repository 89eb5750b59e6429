"""Training time of every language direction beside the default's (de-en), side by side in one run.

Issue 65 asks for per-direction training within the default's time on this CPU. The train stage's own
records (`reports/pairs/<direction>/train/live/`) come from runs on different days, some of them beside
test runs; this bench measures every direction on one host in one run, each in its own process:

- each direction's data, parameters and vocabulary are those its train stage reads: the default's from
  dvc.yaml's `train` command, the others' from pairs/dvc.yaml's `train` entries (their `--params`,
  `--vocab`, `--tokens`, `--bin`), so run the binarize stages first (`dvc repro binarize` and
  `make repro-pairs` up to binarize);
- a child process builds the run exactly as the train stage does (`nmt.train.loop.setup`: model, Adam +
  Noam, loss, bf16 as `train.precision` picks here), takes epoch 1's batches, makes `--warmup` untimed
  updates, then times updates on `--fraction` of the epoch's batches, evenly spaced over it (the batches
  are shuffled length buckets: an even sample has the epoch's mix of lengths), and then the epoch's
  validation as the loop runs it (`end_of_epoch`: validation loss, greedy BLEU on `val_bleu_sentences`);
- one epoch is estimated as the timed updates scaled to the epoch's batches plus the validation, and the
  training as `train.epochs` such epochs; the directions take turns, `--rounds` times, and each keeps its
  fastest round (a 2-core machine swings from one round to the next).

    python -m bench.pairs_train_time [--fraction 0.15 --rounds 3]

Results (`bench/results/pairs_train_time.json`, key `results`):
- `default`: the direction every ratio is taken against ("de-en");
- `fraction`, `warmup`, `rounds`: the measurement's settings; `device`, `threads`, `bf16`: where it ran;
- `directions`: per direction {params, bin (the folders the child read), epochs (train.epochs),
  batches (epoch 1's), updates (per epoch), target_tokens (per epoch), timed_batches, update_s (the timed
  updates, fastest round), update_s_rounds, val_s (of that round), epoch_s (estimated: updates scaled
  to the epoch + validation), training_min (epochs x epoch_s / 60), ratio (epoch_s / the default's)}.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
import yaml

from bench.common.record import RESULTS, ROOT, write_result
from nmt.config.loader import load_sections
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.train.loop import end_of_epoch, epoch_batches, run_epoch, setup
from nmt.train.run import attention_kernels
from nmt.train.stop import GracefulStop

DEFAULT = "de-en"
FLAGS = ("--params", "--vocab", "--tokens", "--bin")  # what a train stage's command names that the child reads


@dataclass(frozen=True)
class BenchParams:
    """The params file sections a direction's train stage reads."""

    model: ModelConfig
    train: TrainConfig


def stage_args(cmd: str) -> dict[str, str]:
    """The train stage's `--params`, `--vocab`, `--tokens`, `--bin` (params.yaml when it names none)."""
    words = shlex.split(cmd)
    found = {flag: words[i + 1] for i, flag in enumerate(words[:-1]) if flag in FLAGS}
    missing = [f for f in FLAGS[1:] if f not in found]
    if missing:
        raise SystemExit(f"a train command names no {', '.join(missing)}: {cmd}")
    return {"params": "params.yaml", **{k.removeprefix("--"): v for k, v in found.items()}}


def directions(root: Path) -> dict[str, dict[str, str]]:
    """Every trained direction -> its train stage's arguments: the default's (dvc.yaml), then pairs/dvc.yaml's."""
    found = {DEFAULT: stage_args(yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8"))
                                 ["stages"]["train"]["cmd"])}
    train = yaml.safe_load((root / "pairs" / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["train"]
    for key, item in train["foreach"].items():
        cmd = train["do"]["cmd"].replace("${key}", key)
        for name, value in item.items():
            cmd = cmd.replace(f"${{item.{name}}}", str(value))
        found[key] = stage_args(cmd)
    return found


def even_sample(n: int, fraction: float) -> np.ndarray:
    """`fraction` of n batch positions (at least one), evenly spaced over them, first and last included."""
    k = min(n, max(1, round(n * fraction)))
    return np.unique(np.linspace(0, n - 1, k).round().astype(np.int64))


def time_direction(args: dict[str, str], fraction: float, warmup: int) -> dict:
    """Child process: one direction's timed updates and validation, built as its train stage builds them."""
    params = load_sections(ROOT / args["params"], BenchParams)
    cfg = replace(params.train, save_every=0, max_steps=None)  # no checkpoint inside the timed updates
    with tempfile.TemporaryDirectory(prefix="nmt-pairs-train-time-") as ckpt:
        run, prog = setup(params.model, cfg, ROOT / args["vocab"], ROOT / args["tokens"], Path(ckpt), None,
                          ROOT / args["bin"])
        epoch = epoch_batches(run, prog)
        picked = even_sample(len(epoch.batches), fraction)
        rest = np.setdiff1d(np.arange(len(epoch.batches)), picked)[:warmup]
        with GracefulStop() as stop, attention_kernels(run.device, cfg.cudnn_attention):
            run_epoch(run, prog, epoch._replace(batches=[epoch.batches[i] for i in rest]), stop)  # untimed
            prog.batch = 0
            seconds = run_epoch(run, prog, epoch._replace(batches=[epoch.batches[i] for i in picked]), stop)
            end_of_epoch(run, prog, epoch.waste, seconds)
    return {"epochs": cfg.epochs, "batches": len(epoch.batches), "updates": -(-len(epoch.batches) // cfg.accum_steps),
            "target_tokens": int(epoch.pairs.tgt_lens[np.concatenate(epoch.batches)].sum()),
            "timed_batches": len(picked),
            "update_s": seconds, "val_s": prog.history[-1]["val_s"], "device": str(run.device),
            "threads": torch.get_num_threads(), "bf16": run.bf16}


def estimate(row: dict) -> dict:
    """Epoch and training time from a round's timed updates: scaled to the epoch's batches, plus validation."""
    epoch_s = row["update_s"] * row["batches"] / row["timed_batches"] + row["val_s"]
    return {"epoch_s": epoch_s, "training_min": row["epochs"] * epoch_s / 60}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fraction", type=float, default=0.15,
                   help="share of epoch 1's batches timed, evenly spaced (default: 0.15)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (default: 3)")
    p.add_argument("--rounds", type=int, default=3, help="turns per direction; each keeps its fastest (default: 3)")
    p.add_argument("--directions", nargs="+", help="a subset, the default's included (default: every direction)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"folder for pairs_train_time.json (default: {RESULTS})")
    p.add_argument("--child", help=argparse.SUPPRESS)  # child process mode: one direction
    args = p.parse_args()
    if not 0 < args.fraction <= 1 or args.rounds < 1 or args.warmup < 0:
        p.error("--fraction must be in (0, 1], --rounds at least 1, --warmup at least 0")
    known = directions(ROOT)
    if args.child:
        print(json.dumps(time_direction(known[args.child], args.fraction, args.warmup)))
        return

    chosen = args.directions or list(known)
    unknown = sorted(set(chosen) - set(known))
    if unknown or DEFAULT not in chosen:
        p.error(f"directions must include {DEFAULT} and be among {', '.join(known)} (got {' '.join(chosen)})")
    for name in chosen:
        missing = [known[name][k] for k in ("vocab", "bin") if not (ROOT / known[name][k]).is_dir()]
        if missing:
            p.error(f"{name}: {', '.join(missing)} missing; run its binarize stage first (`dvc repro binarize`, "
                    "`make repro-pairs`)")
    rounds: dict[str, list[dict]] = {name: [] for name in chosen}
    for r in range(args.rounds):
        for name in chosen:
            cmd = [sys.executable, "-m", "bench.pairs_train_time", "--fraction", str(args.fraction),
                   "--warmup", str(args.warmup), "--child", name]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{name}: the child failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rounds[name].append({**row, **estimate(row)})
            print(f"round {r + 1} {name:<6} {rounds[name][-1]['epoch_s']:7.1f} s an epoch", flush=True)

    best = {name: min(rows, key=lambda row: row["epoch_s"]) for name, rows in rounds.items()}
    base = best[DEFAULT]["epoch_s"]
    table = {}
    for name, row in best.items():
        table[name] = {"params": known[name]["params"], "bin": known[name]["bin"],
                       **{k: row[k] for k in ("epochs", "batches", "updates", "target_tokens", "timed_batches",
                                              "update_s", "val_s", "epoch_s", "training_min")},
                       "update_s_rounds": [x["update_s"] for x in rounds[name]], "ratio": row["epoch_s"] / base}
    first = best[DEFAULT]
    print(f"\n{'direction':<10}{'updates':>8}{'target tokens':>15}{'epoch, s':>10}{'training, min':>15}"
          f"{'vs ' + DEFAULT:>9}")
    for name, row in table.items():
        print(f"{name:<10}{row['updates']:>8}{row['target_tokens']:>15,}{row['epoch_s']:>10.1f}"
              f"{row['training_min']:>15.1f}{row['ratio']:>8.3f}x")
    print(f"{first['device']}, {first['threads']} threads, bf16 {first['bf16']}; {args.fraction:g} of each epoch's "
          f"batches timed after {args.warmup} untimed, fastest of {args.rounds} rounds")
    results = {"default": DEFAULT, "fraction": args.fraction, "warmup": args.warmup, "rounds": args.rounds,
               "device": first["device"], "threads": first["threads"], "bf16": first["bf16"], "directions": table}
    write_result("pairs_train_time", results, args.rounds, args.out)


if __name__ == "__main__":
    main()
