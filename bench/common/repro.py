"""The default pipeline's stages through train, timed in a scratch project with the train stage cut to a
few updates (bench/repro_compare.py, two commits side by side; bench/repro_time.py, this host)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FULL_UPDATES = 10860  # updates of the committed Multi30k run (20 epochs; reports/train/live)


def stages_to_train(checkout: Path) -> dict[str, str]:
    """The stage commands of `checkout`'s dvc.yaml, in order, from the first through `train`."""
    stages = yaml.safe_load((checkout / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    out: dict[str, str] = {}
    for name, stage in stages.items():
        out[name] = " ".join(stage["cmd"].split())
        if name == "train":
            return out
    raise SystemExit(f"{checkout}/dvc.yaml has no train stage")


def write_params(checkout: Path, work: Path, updates: int) -> None:
    """`checkout`'s params.yaml with train cut to `updates` (no validation BLEU); a fresh run."""
    params = yaml.safe_load((checkout / "params.yaml").read_text(encoding="utf-8"))
    params["train"].update(max_steps=updates, val_bleu_sentences=0, early_stop_metric="val_loss",
                           max_val_loss=1e9, log_every=updates, keep_last=1, average_last=1)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    shutil.rmtree(work / "models" / "checkpoints", ignore_errors=True)


def scratch(checkout: Path, work: Path, updates: int) -> None:
    """A scratch project for `checkout`: its params.yaml with train cut to `updates`, a git commit."""
    work.mkdir(parents=True)
    write_params(checkout, work, updates)
    for git in (["init", "-q"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q",
                                 "--allow-empty", "-m", "repro bench"]):  # DVCLive wants a commit
        subprocess.run(["git", *git], cwd=work, check=True)


def run_side(checkout: Path, work: Path, commands: dict[str, str], mirror: Path) -> dict[str, float]:
    """Every stage in order in `work` with `checkout`'s nmt, then train again cut to 1 update:
    {stage: seconds, "train_1": seconds, "tokens_per_s": of the first train run}."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "NMT_DATA_MIRROR": str(mirror),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    where = subprocess.run([sys.executable, "-c", "import nmt; print(nmt.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not where.startswith(str(checkout)):
        raise SystemExit(f"the scratch project imports nmt from {where}, not from {checkout}")
    out: dict[str, float] = {}
    for name, cmd in commands.items():
        start = time.perf_counter()
        proc = subprocess.run(cmd, shell=True, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{checkout.name}: `{cmd}` failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        out[name] = round(time.perf_counter() - start, 2)
    live = json.loads((work / "reports" / "train" / "live" / "metrics.json").read_text(encoding="utf-8"))
    out["tokens_per_s"] = round(live["tokens_per_s"], 1)
    write_params(checkout, work, 1)
    start = time.perf_counter()
    subprocess.run(commands["train"], shell=True, cwd=work, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    out["train_1"] = round(time.perf_counter() - start, 2)
    return out
