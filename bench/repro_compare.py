"""`make repro`'s stages up to training, this checkout against an earlier commit, side by side on one host.

Whether the pipeline's later stages (binarize, the memory-mapped training set) left `make repro`
on Multi30k within 10% of its wall time before them. A full repro is ~40 minutes a
side on 2 cores, nearly all of it training updates; so this bench runs, for each checkout, every
stage of its own `dvc.yaml` from `download` to `train` (its own commands, its own params.yaml),
with the train stage cut to `--updates` updates (no validation BLEU), in a scratch project with
`PYTHONPATH` at that checkout (so its own `nmt` runs). The two sides alternate, `--repeats`
times, and each stage's best wall time counts. It writes each stage's seconds, the train
stage's training tokens/s (its DVCLive record), and the full-length estimate: the data stages
and the train stage as measured, plus the remaining updates of a full run at the measured rate
(`--full-updates`: the updates of the committed run), the time of one update taken from a second
train run cut to 1 update: (t(N) - t(1)) / (N - 1). The stages after train (evaluate,
export, ctranslate2, publish) did not change with those stages and are not run.

    python -m bench.repro_compare --against e14e234^ [--updates 300] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common.checkout import short_commit, worktree
from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--against", required=True, help="the earlier commit (e.g. e14e234^: before binarize)")
    p.add_argument("--updates", type=int, default=300, help="updates of the cut train stage")
    p.add_argument("--repeats", type=int, default=2, help="runs per side, alternating; the best counts")
    p.add_argument("--full-updates", type=int, default=FULL_UPDATES, help="updates of a full run, for the estimate")
    p.add_argument("--mirror", type=Path, default=os.environ.get("NMT_DATA_MIRROR"),
                   help="Multi30k's files for the download stage (default: env NMT_DATA_MIRROR)")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for repro_compare.json")
    args = p.parse_args()
    if args.mirror is None or not (Path(args.mirror) / "train.de.gz").is_file():
        raise SystemExit("bench/repro_compare.py needs Multi30k's files: pass --mirror DIR or set NMT_DATA_MIRROR")
    commit = short_commit(args.against)
    with tempfile.TemporaryDirectory(prefix="repro-compare-") as tmp, worktree(commit, Path(tmp)) as old:
        sides = {"before": old, "now": ROOT}
        commands = {side: stages_to_train(path) for side, path in sides.items()}
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
        for r in range(args.repeats):
            for side, checkout in sides.items():
                work = Path(tmp) / f"{side}-{r}"
                scratch(checkout, work, args.updates)
                runs[side].append(run_side(checkout, work, commands[side], Path(args.mirror)))
                print(f"run {r + 1} {side:<6} " + ", ".join(f"{k} {v}" for k, v in runs[side][-1].items()),
                      flush=True)
                shutil.rmtree(work)
    results: dict[str, Any] = {"against": commit, "updates": args.updates, "full_updates": args.full_updates,
                               "sides": {}}
    for side, rs in runs.items():
        best = {k: (max if k == "tokens_per_s" else min)(r[k] for r in rs) for k in rs[0]}
        stages = {k: v for k, v in best.items() if k not in ("tokens_per_s", "train_1")}
        measured = sum(stages.values())
        per_update = (best["train"] - best["train_1"]) / (args.updates - 1)
        results["sides"][side] = {"stages": stages, "tokens_per_s": best["tokens_per_s"], "runs": rs,
                                  "train_1_update_s": best["train_1"], "per_update_s": round(per_update, 4),
                                  "measured_s": round(measured, 1),
                                  "full_estimate_s": round(
                                      measured + (args.full_updates - args.updates) * per_update, 1)}
    before, now = results["sides"]["before"], results["sides"]["now"]
    results["ratio_measured"] = round(now["measured_s"] / before["measured_s"], 3)
    results["ratio_tokens_per_s"] = round(now["tokens_per_s"] / before["tokens_per_s"], 3)
    results["ratio_full_estimate"] = round(now["full_estimate_s"] / before["full_estimate_s"], 3)
    print(f"download..train with {args.updates} updates: now {now['measured_s']} s, before ({commit}) "
          f"{before['measured_s']} s: x{results['ratio_measured']}; "
          f"training tokens/s x{results['ratio_tokens_per_s']}; "
          f"full-length estimate x{results['ratio_full_estimate']}")
    write_result("repro_compare", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
