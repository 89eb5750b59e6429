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
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.common.checkout import short_commit, worktree
from bench.common.record import RESULTS, write_result
from bench.common.repro import FULL_UPDATES, ROOT, run_side, scratch, stages_to_train


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
