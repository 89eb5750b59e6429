"""How long `make repro` takes on this host: the default pipeline's stages from download through train,
timed in a scratch project, and the full run's length estimated from them.

A full repro is 20 epochs of training, 95% of its time or more; timing one would hold both cores for
half an hour on the fastest host here and over 90 minutes on the slowest. So, as bench/repro_compare.py
does for two commits, each stage of this checkout's dvc.yaml runs in order (its own command and
params.yaml) with the train stage cut to `--updates` updates, then train again cut to 1 update; the
time of one update is (t(N) - t(1)) / (N - 1), and the estimate is the measured stages plus the rest
of a full run's updates (`--full-updates`, the committed run's) at that pace, plus its 20 validations
at the measured validation time. The stages after train (evaluate, export, ctranslate2, profile,
publish) are not run: on a model cut to a few hundred updates their decoding is not what a trained
model's is. The result, one file per CPU, is docs/pipeline.md's `repro-hosts` table and the README's
line.

    python -m bench.repro_time [--updates 300]
"""

from __future__ import annotations

import argparse
import json
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


def estimate(stages: dict[str, float], train_1: float, val_s: float, updates: int, full_updates: int) -> float:
    """The measured stages, plus a full run's remaining updates at the measured pace, plus its validations."""
    per_update = (stages["train"] - train_1) / (updates - 1)
    return sum(stages.values()) + (full_updates - updates) * per_update + (EPOCHS - 1) * val_s


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
        live = json.loads((work / "reports" / "train" / "live" / "metrics.json").read_text(encoding="utf-8"))
    stages = {k: v for k, v in run.items() if k not in ("tokens_per_s", "train_1")}
    val_s = float(live.get("val_s", 0.0))
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
