"""Which model size fits the general configuration's training budget: short pilot runs on dev.

Each candidate (depth and width; the rest of general/params.yaml as it is) trains from scratch
for the same number of updates (`--updates`) on the general mix's de-en data (the general
pipeline's binarized data, vocabulary and tokens: `make repro-general` first), with the
train stage's own command in a scratch folder. Per candidate: the loss on the dev sets (the
general val: Multi30k val, newstest2013 and the held-out Tatoeba slice), the seconds per update
on this machine, and the minutes the configured schedule (`train.epochs` x the updates of an
epoch) would take at that rate. The choice: the lowest dev loss among the candidates whose
schedule fits `--budget-min` (90). After so few updates a bigger model's dev loss understates
what it reaches later; the projection says whether it could get there in time. Written to
bench/results/pilots.json.

    python -m bench.pilots [--updates 1500] [--budget-min 90]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common.record import write_result
from nmt import ranking

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = {  # name: model section overrides (Vaswani et al. 2017, Table 3: base 6 / 512 / 8 / 2048)
    "3x256": {"n_layers": 3, "d_model": 256, "n_heads": 8, "d_ff": 1024},
    "6x256": {"n_layers": 6, "d_model": 256, "n_heads": 8, "d_ff": 1024},
    "3x512": {"n_layers": 3, "d_model": 512, "n_heads": 8, "d_ff": 2048},
}
TRAIN = ("python -m nmt.train.stage --params params.yaml --vocab {data}/vocab --tokens {data}/tokens "
         "--bin {data}/de-en/bin --checkpoints ckpt --model model.pt --reports reports --train-reports train")


def candidate_params(model: dict[str, int], updates: int) -> dict[str, Any]:
    params = yaml.safe_load((ROOT / "general" / "params.yaml").read_text(encoding="utf-8"))
    params["model"].update(model)
    params["train"].update(max_steps=updates, epochs=1, val_bleu_sentences=0, keep_last=1, average_last=1,
                           patience=1)
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=1500, help="training updates per candidate")
    parser.add_argument("--budget-min", type=float, default=90.0, help="minutes a direction may train")
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "general", help="the general pipeline's data")
    parser.add_argument("--only", nargs="+", choices=list(CANDIDATES), help="candidates to run (default: all)")
    args = parser.parse_args()
    general = yaml.safe_load((ROOT / "general" / "params.yaml").read_text(encoding="utf-8"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    rows: dict[str, Any] = {}
    for name in args.only or CANDIDATES:
        with tempfile.TemporaryDirectory(prefix=f"pilot-{name}-") as tmp:
            work = Path(tmp)
            (work / "params.yaml").write_text(yaml.safe_dump(candidate_params(CANDIDATES[name], args.updates)),
                                              encoding="utf-8")
            start = time.perf_counter()
            proc = subprocess.run(TRAIN.format(data=args.data.resolve()), shell=True, cwd=work, env=env,
                                  capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                raise SystemExit(f"pilot {name} failed:\n{proc.stderr[-3000:]}")
            stats = json.loads((work / "reports" / "train.json").read_text(encoding="utf-8"))["stats"]
        per_update = seconds / stats["updates"]
        rows[name] = {**CANDIDATES[name], "updates": stats["updates"], "dev_loss": round(stats["val_loss"], 4),
                      "seconds": round(seconds, 1), "seconds_per_update": round(per_update, 4)}
        print(f"{name}: dev loss {stats['val_loss']:.4f} after {stats['updates']} updates, "
              f"{per_update * 1000:.0f} ms an update", flush=True)
    epochs = general["train"]["epochs"]
    updates_per_epoch = _updates_per_epoch()
    for row in rows.values():
        row["schedule_minutes"] = round(epochs * updates_per_epoch * row["seconds_per_update"] / 60, 1)
        row["fits"] = row["schedule_minutes"] <= args.budget_min
    fitting = [n for n, r in rows.items() if r["fits"]]
    choice = ranking.best(fitting, lambda n: rows[n]["dev_loss"], higher=False) if fitting else None
    print(f"chosen: {choice} (lowest dev loss among those whose {epochs}-epoch schedule fits {args.budget_min:g} min)")
    write_result("pilots", {"candidates": rows, "choice": choice, "updates": args.updates, "epochs": epochs,
                            "updates_per_epoch": updates_per_epoch, "budget_min": args.budget_min,
                            "dev": "general val: Multi30k val, newstest2013, the held-out Tatoeba slice"}, repeats=1)


def _updates_per_epoch() -> int:
    """An epoch's updates, as the committed general training run counted them."""
    stats = json.loads((ROOT / "reports" / "general" / "de-en" / "validation" / "train.json").read_text())["stats"]
    return stats["updates"] // stats["epochs"]


if __name__ == "__main__":
    main()
