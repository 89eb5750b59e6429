"""How long `make repro` takes on this host: the default pipeline's stages from download through train,
timed in a scratch project, and the full run's length estimated from them.

A full repro is 20 epochs of training, 95% of its time or more; timing one would hold both cores for
half an hour to an hour and a half, by host. So, as bench/repro_compare.py does for two commits, each
stage of this checkout's dvc.yaml runs in order (its own command and params.yaml) with the train stage
cut to `--updates` updates, then train again cut to 1 update; the time of one update is
(t(N) - t(1)) / (N - 1), and the estimate is the measured stages plus the rest of a full run's updates
(`--full-updates`, the committed run's) at that pace, plus its 20 validations at the time of one
(`time_validation`). The stages after train (evaluate, export, ctranslate2, profile, publish) are not
run: on a model cut to a few hundred updates their decoding is not what a trained model's is. The
result, one file per CPU, is docs/pipeline.md's `how-long` table and the README's line.

    python -m bench.repro_time [--updates 300]
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, cpu, write_result
from bench.common.repro import FULL_UPDATES, ROOT, run_side, scratch, stages_to_train

FOLDER = "repro_hosts"
EPOCHS = 20  # validations of the committed run (one an epoch)


def this_cpu() -> dict[str, Any]:
    """bench.common.record's CPU description with its vendor (GenuineIntel, AuthenticAMD), as host records have."""
    info = Path("/proc/cpuinfo")
    vendor = next((line.split(":", 1)[1].strip() for line in info.read_text().splitlines()
                   if line.startswith("vendor_id")), None) if info.is_file() else None
    return {**cpu(), "vendor": vendor}


def host_name(c: dict[str, Any]) -> str:
    """The record's file name: vendor, family, model number and model, e.g. genuineintel-6-207-intel-xeon."""
    return re.sub(r"[^a-z0-9]+", "-", f"{c.get('vendor') or 'cpu'} {c.get('family') or ''} "
                                      f"{c.get('model_number') or ''} {c['model']}".lower()).strip("-")


def time_validation(work: Path) -> float:
    """Seconds of one end-of-epoch validation as the train stage runs it (loss over the val split, greedy
    BLEU on its first `train.val_bleu_sentences`), with the project's params and the model the scratch
    project holds last (the 1-update run's). The cut runs end before an epoch does, so they never
    validated; an untrained model's greedy outputs run longer than a trained one's, so this errs long."""
    import time

    import torch
    import yaml

    from nmt.config.loader import from_dict
    from nmt.config.train import TrainConfig
    from nmt.model import checkpoint
    from nmt.model.transformer import build_model
    from nmt.text.vocabularies import load_vocabularies
    from nmt.train.loop import use_bf16
    from nmt.train.loss import LabelSmoothingKL
    from nmt.train.monitor import greedy_bleu, validation_loss
    from nmt.train.pairs import bin_direction, open_split

    cfg = from_dict(TrainConfig, yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["train"],
                    key="train", source="params.yaml")
    torch.set_num_threads(cfg.num_threads or os.cpu_count() or 1)
    state = checkpoint.load(work / "models" / "model.pt")
    vocabs = load_vocabularies(work / "data" / "vocab", bin_direction(work / "data" / "bin"))
    model = build_model(checkpoint.model_config_of(state), vocabs.src, vocabs.tgt)
    model.load_state_dict(state["model"])
    pairs, device = open_split(work / "data" / "bin", "val", vocabs), torch.device("cpu")
    started = time.perf_counter()
    validation_loss(model, pairs, LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing), cfg.max_tokens, device,
                    use_bf16(cfg.precision, device))
    if cfg.val_bleu_sentences:
        greedy_bleu(model, pairs[: cfg.val_bleu_sentences], vocabs, device)
    return time.perf_counter() - started


def estimate(stages: dict[str, float], train_1: float, val_s: float, updates: int, full_updates: int) -> float:
    """The measured stages, plus a full run's remaining updates at the measured pace, plus its 20 validations."""
    per_update = (stages["train"] - train_1) / (updates - 1)
    return sum(stages.values()) + (full_updates - updates) * per_update + EPOCHS * val_s  # the cut run validated none


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--updates", type=int, default=300, help="updates of the cut train stage")
    p.add_argument("--full-updates", type=int, default=FULL_UPDATES, help="updates of a full run, for the estimate")
    p.add_argument("--mirror", type=Path, default=os.environ.get("NMT_DATA_MIRROR"),
                   help="Multi30k's files for the download stage (default: env NMT_DATA_MIRROR)")
    p.add_argument("--out", type=Path, default=RESULTS / FOLDER, help="folder for the host's record")
    args = p.parse_args(argv)
    if args.mirror is None or not (Path(args.mirror) / "train.de.gz").is_file():
        p.error("needs Multi30k's files: pass --mirror DIR or set NMT_DATA_MIRROR")
    if args.updates < 2:
        p.error("--updates: at least 2 (one update's time is the difference of two runs)")
    commands = stages_to_train(ROOT)
    with tempfile.TemporaryDirectory(prefix="repro-time-") as tmp:
        work = Path(tmp) / "project"
        scratch(ROOT, work, args.updates)
        run = run_side(ROOT, work, commands, Path(args.mirror))
        val_s = time_validation(work)
    stages = {k: v for k, v in run.items() if k not in ("tokens_per_s", "train_1")}
    full = estimate(stages, run["train_1"], val_s, args.updates, args.full_updates)
    per_update = (stages["train"] - run["train_1"]) / (args.updates - 1)
    results = {"cpu": this_cpu(), "updates": args.updates, "full_updates": args.full_updates, "stages": stages,
               "tokens_per_s": run["tokens_per_s"], "train_1_update_s": run["train_1"],
               "per_update_s": round(per_update, 4), "val_s": round(val_s, 2),
               "epoch_estimate_s": round(per_update * args.full_updates / EPOCHS + val_s, 1),
               "full_estimate_s": round(full, 1)}
    print(f"download..train with {args.updates} updates: {sum(stages.values()):.0f} s; one update "
          f"{per_update:.3f} s; an epoch ~{results['epoch_estimate_s']:.0f} s; make repro through train "
          f"~{full / 60:.0f} min", flush=True)
    write_result(host_name(results["cpu"]), results, repeats=1, out_dir=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
